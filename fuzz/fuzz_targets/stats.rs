//! `stats` replies: no panic; a complete reply takes at least one byte and
//! no more than there are; a reply found in a prefix is the whole's; read
//! in two parts it is the same; its pairs come from `STAT` lines only.
#![no_main]

use mcbench_proto::stats::{pairs, parse, parse_from, Reply};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let whole = parse(data);
    // Read in two parts, the second resuming where the first stopped:
    // the same answer.
    let mut checked = 0;
    let half = parse_from(&data[..data.len() / 2], &mut checked);
    if half == Ok(None) {
        assert!(checked <= data.len() / 2);
        assert_eq!(parse_from(data, &mut checked), whole);
    }
    if let Ok(Some(reply)) = whole {
        let len = match reply {
            Reply::Stats(len) | Reply::Refused(_, len) => len,
        };
        assert!(len >= 1 && len <= data.len());
        // A prefix that holds the whole reply parses to it; a shorter one
        // waits or fails, never finds another.
        assert_eq!(parse(&data[..len]), whole);
        for cut in 0..len {
            assert!(!matches!(parse(&data[..cut]), Ok(Some(_))));
        }
        if let Reply::Stats(len) = reply {
            for (name, _) in pairs(&data[..len]) {
                assert!(!name.is_empty() && !name.contains(&b' '));
            }
        }
    }
});
