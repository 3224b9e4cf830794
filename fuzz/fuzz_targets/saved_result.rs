//! A saved result's text as `report`, `compare` and merges read it: no
//! panic and bounded memory; every histogram of an accepted result decodes
//! and holds its op's count (`result::checked`).
#![no_main]

use mcbench::result::RunResult;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(r) = RunResult::parse(text) {
        let total = r.total.latency_hdr.decode().expect("a read histogram decodes");
        assert_eq!(total.len(), r.total.count, "an accepted result adds up");
        for op in r.ops.values() {
            assert_eq!(op.latency_hdr.decode().unwrap().len(), op.count);
        }
    }
});
