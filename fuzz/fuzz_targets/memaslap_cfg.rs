//! memaslap's configuration file (`-F`): never panics; what it accepts is
//! flags, each a `--name` followed by its value (the size tables as
//! distributions mcbench reads), and every refusal names the file.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    use mcbench::config::Reading;
    // Read as it means (`mcbench run -F`) and as memaslap reads it (the
    // personality): the same promises.
    for reading in [Reading::Sane, Reading::AsMemaslap] {
        check(mcbench::config::memaslap_flags(text, "f.cnf", reading));
    }
});

fn check(read: Result<mcbench::config::MemaslapConfig, mcbench::config::ConfigError>) {
    match read {
        Ok(cfg) => {
            let args = cfg.args;
            assert!(cfg.skipped.iter().all(|l| l.starts_with("f.cnf")), "{:?}", cfg.skipped);
            assert!(args.len() % 2 == 0, "{args:?}");
            for pair in args.chunks(2) {
                assert!(pair[0].starts_with("--"), "{args:?}");
                // The sizes it writes are distributions mcbench reads.
                if pair[0].ends_with("-size") {
                    let parsed = pair[1].parse::<mcbench::workload::Distribution>();
                    assert!(parsed.is_ok(), "{}: {parsed:?}", pair[1]);
                }
            }
        }
        Err(e) => assert!(e.to_string().starts_with("f.cnf"), "{e}"),
    }
}
