//! A histogram's bytes as a saved result or an agent brings them: no
//! panic, and no allocation beyond the bound (`-malloc_limit_mb`); what is
//! accepted decodes, encodes back to what decodes the same, and holds as
//! many values as its counts, summed from its bytes, say (or refuses to
//! count a sum past 2^64, which the decoder can only saturate).
#![no_main]

use mcbench::stats::Hdr;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(hdr) = Hdr::from_bytes(data.to_vec()) {
        let h = hdr.decode().expect("accepted bytes decode");
        assert_eq!(Hdr::encode(&h).decode().unwrap(), h);
        match hdr.count() {
            Ok(n) => assert_eq!(n, h.len(), "the counts' sum is the histogram's"),
            Err(_) => assert_eq!(h.len(), u64::MAX, "only a saturated total is uncounted"),
        }
    }
});
