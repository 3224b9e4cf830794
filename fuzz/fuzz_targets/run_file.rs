//! The TOML run file (`--config`): never panics; what it accepts is flags,
//! each a `--name`, and every refusal names the file.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match mcbench::config::run_file_flags(text, "f.toml") {
        Ok(args) => {
            if let Some(first) = args.first() {
                assert!(first.starts_with("--"), "{args:?}");
            }
        }
        Err(e) => assert!(e.to_string().starts_with("f.toml"), "{e}"),
    }
});
