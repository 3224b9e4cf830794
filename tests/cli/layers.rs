//! The top-level modules of `src/` form layers: each names (`crate::X`)
//! only modules of the layers below its own, so there is no circle among
//! them and no arrow running up. `cargo test --test cli layers:: -- --nocapture`
//! prints every module's arrows. Code under `#[cfg(test)]` and comments
//! are left out: a test may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first. A module may use those of earlier layers
/// only (and, within its layer, none).
const LAYERS: &[&[&str]] = &[
    // Facts with no knowledge of a run.
    &["error", "warnings", "untrusted", "placement", "os"],
    &["embedded", "workload"],
    &["stats", "trace"],
    // How far the numbers can be trusted.
    &["precision"],
    // What a run is.
    &["spec"],
    // Reaching a server, then the load engine and the sampler beside it.
    &["net"],
    &["server_stats"],
    &["engine"],
    // What a run measured, shown.
    &["result"],
    &["report", "run", "telemetry"],
    // Runs spread over machines.
    &["agent"],
    // The command line, run files, and the commands.
    &["cli"],
    &["config"],
    &["app"],
    // The seed tools' own command lines and layouts, over the commands.
    &["personality"],
];

/// Every `crate::NAME` a module's files name outside tests and comments.
fn arrows(src: &Path, module: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut files = Vec::new();
    let dir = src.join(module);
    if dir.is_dir() {
        collect_rs(&dir, &mut files);
    } else {
        files.push(src.join(format!("{module}.rs")));
    }
    let mut to = BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if name != module && modules.contains(&name) {
                    to.insert(name);
                }
            }
        }
    }
    to
}

fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        // A module's `tests/` folder or `tests.rs` holds its unit tests
        // (`#[cfg(test)] mod tests;`), which may build what they test from
        // any layer.
        let unit_tests = match path.is_dir() {
            true => path.file_name().is_some_and(|n| n == "tests"),
            false => path.file_name().is_some_and(|n| n == "tests.rs"),
        };
        if unit_tests {
            continue;
        }
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_top_level_modules_form_layers_with_no_arrow_running_up() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(move |m| (*m, i)))
        .collect();
    let unplaced: Vec<&String> = modules
        .iter()
        .filter(|m| !layer_of.contains_key(m.as_str()))
        .collect();
    assert!(unplaced.is_empty(), "modules in no layer: {unplaced:?}");
    let mut up = Vec::new();
    for m in &modules {
        let to = arrows(&src, m, &modules);
        println!(
            "{m} -> {}",
            to.iter().cloned().collect::<Vec<_>>().join(", ")
        );
        for t in &to {
            if layer_of[t.as_str()] >= layer_of[m.as_str()] {
                up.push(format!("{m} -> {t}"));
            }
        }
    }
    assert!(up.is_empty(), "arrows within a layer or running up: {up:?}");
}
