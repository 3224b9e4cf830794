//! The distribution syntax (`-K`, `-V`, `--arrival`): parsing never panics;
//! what parses prints back to text that parses to the same thing; its
//! support is ordered, and samples are finite and within it.
#![no_main]

use mcbench::workload::Distribution;
use rand::SeedableRng;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(d) = text.parse::<Distribution>() else {
        return;
    };
    let again: Distribution = d.to_string().parse().expect("its own text parses");
    assert_eq!(again.to_string(), d.to_string());
    let (lo, hi) = d.support();
    assert!(lo <= hi, "support {lo}..{hi}");
    let _ = d.mean();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    for _ in 0..16 {
        let x = d.sample(&mut rng);
        if x.is_finite() {
            assert!(
                x >= lo - 1e-6 * lo.abs().max(1.0) && x <= hi + 1e-6 * hi.abs().max(1.0),
                "{x} outside {lo}..{hi} for {d}"
            );
        }
    }
});
