//! meta responses: see `mcbench_fuzz::check_responses`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mcbench_fuzz::check_responses(mcbench_proto::Protocol::Meta, data);
});
