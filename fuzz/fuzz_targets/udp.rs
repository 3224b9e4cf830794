//! UDP reassembly: datagrams (each 2-byte length-prefixed) pushed into one
//! `Reassembly`. It never panics, holds no payload until complete, and a
//! complete payload is exactly the distinct datagrams' payloads.
#![no_main]

use mcbench_proto::udp::{parse_header, Fed, Reassembly};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut r = Reassembly::new();
    let mut seen = std::collections::BTreeMap::new();
    let mut rest = data;
    let mut started = None;
    while let Some((len, tail)) = rest.split_first_chunk::<2>() {
        let len = usize::from(u16::from_be_bytes(*len)).min(tail.len());
        let (datagram, next) = tail.split_at(len);
        rest = next;
        let Ok((header, payload)) = parse_header(datagram) else {
            assert!(r.push(datagram).is_err());
            continue;
        };
        if started != Some(header.request_id) {
            r.start(header.request_id);
            started = Some(header.request_id);
            seen.clear();
        }
        match r.push(datagram) {
            Ok(Fed::Partial) | Ok(Fed::Complete) => {
                assert!(
                    seen.insert(header.seq, payload.to_vec()).is_none(),
                    "a datagram taken twice"
                );
            }
            Ok(Fed::Duplicate) => assert!(seen.contains_key(&header.seq)),
            Ok(Fed::Stray(id)) => assert_ne!(id, header.request_id),
            Err(_) => {}
        }
        if r.is_complete() {
            let want: Vec<u8> = seen.values().flatten().copied().collect();
            assert_eq!(
                r.payload(),
                &want[..],
                "the payload is the datagrams in order"
            );
        } else {
            assert!(
                r.payload().is_empty(),
                "a payload before the reply is whole"
            );
        }
    }
});
