//! Trace files (`--trace`, `--read-file`): never panics; every record it
//! yields is one the wire can carry (a key of 1-250 bytes with no space or
//! control byte, hits within the requests it stands for); a refusal names
//! the line or record it stopped at.
#![no_main]

use mcbench::trace::{Record, TraceFormat, TraceReader};

const FORMATS: [Option<TraceFormat>; 7] = [
    None,
    Some(TraceFormat::Twitter),
    Some(TraceFormat::OracleGeneral),
    Some(TraceFormat::OracleGeneralOpns),
    Some(TraceFormat::Lcs),
    Some(TraceFormat::MetaKv),
    Some(TraceFormat::Keys),
];

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, file)) = data.split_first() else {
        return;
    };
    let format = FORMATS[usize::from(pick) % FORMATS.len()];
    let input = Box::new(std::io::Cursor::new(file.to_vec()));
    let Ok(mut reader) = TraceReader::from_read(input, std::path::Path::new("f"), format) else {
        return;
    };
    let mut rec = Record::default();
    let mut read = 0u64;
    loop {
        match reader.next(&mut rec) {
            Ok(true) => {
                read += 1;
                assert!(!rec.key.is_empty() && rec.key.len() <= 250, "{rec:?}");
                assert!(rec.key.iter().all(|&b| b > b' ' && b != 0x7f), "{rec:?}");
                assert!(rec.repeat >= 1, "{rec:?}");
                assert!(rec.hits.is_none_or(|h| h <= rec.repeat), "{rec:?}");
            }
            Ok(false) => break,
            Err(e) => {
                assert!(e.at >= 1 && e.at >= read, "{e}");
                break;
            }
        }
    }
});
