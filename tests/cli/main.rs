//! The command line as a user meets it: usage errors, help, man pages, docs and the guide, the tools beside `run`, the outputs and the saved results, reports and the house's layers.
//!
//! One test binary for the area: it links once (see `.ci/run`).

#[path = "../support/mod.rs"]
mod support;

mod curve;
mod docs;
mod exports;
mod guide;
mod html;
mod layers;
mod output_failures;
mod repeat;
mod saved;
mod text_report;
mod tools;
mod untrusted_files;
mod usage;
