//! A histogram's bytes as a saved result or an agent brings them: no
//! panic, and no allocation beyond the bound (`-malloc_limit_mb`); what is
//! accepted decodes, and encodes back to what decodes the same.
#![no_main]

use mcbench::stats::Hdr;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(hdr) = Hdr::from_bytes(data.to_vec()) {
        let h = hdr.decode().expect("accepted bytes decode");
        assert_eq!(Hdr::encode(&h).decode().unwrap(), h);
    }
});
