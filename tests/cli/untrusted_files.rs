//! Files from outside are not believed: a hostile histogram in a saved
//! result, a device or FIFO where a file is named, a result far larger
//! than any run writes. Each is a usage error (exit 2) with a clear
//! message, within 64 MiB of memory and without hanging.

use crate::support;

use base64::Engine;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::*;

/// Peak memory any probe may take, KiB.
const MAX_RSS_KIB: u64 = 64 << 10;

/// Address space a probe may map, bytes: a reader that allocates what a
/// hostile length says fails here, even where untouched pages would not
/// show in its resident memory.
const MAX_ADDRESS_SPACE: u64 = 2 << 30;

/// Runs mcbench `args` under `/usr/bin/time`, bounded in time and address
/// space: its output and its peak resident memory, KiB.
fn probe(dir: &Path, args: &[&str]) -> (std::process::Output, u64) {
    let rss = dir.join("rss");
    let mut cmd = Command::new("/usr/bin/time");
    with_rlimit(&mut cmd, libc::RLIMIT_AS, MAX_ADDRESS_SPACE);
    let child = cmd
        .args(["-f", "%M", "-o", rss.to_str().unwrap(), BIN])
        .args(args)
        .env("HOME", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("/usr/bin/time (apt-get install time)");
    let out = wait_bounded(child, Duration::from_secs(20));
    let text = std::fs::read_to_string(&rss).unwrap();
    // `time` writes "Command exited with non-zero status N" first.
    let kib = text.lines().last().unwrap().trim().parse().unwrap();
    (out, kib)
}

/// `args` fails with exit `code`, saying `needle`, within the memory bound.
fn refused(dir: &Path, args: &[&str], code: i32, needle: &str) {
    let (out, kib) = probe(dir, args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(kib < MAX_RSS_KIB, "{args:?} took {kib} KiB");
}

/// V2 compressed histogram bytes around the V2 `header` and `payload`.
fn v2(header: [u64; 6], payload: &[u8]) -> String {
    use std::io::Write;
    let [cookie, len, offset, digits, low, high] = header;
    let mut raw = Vec::new();
    for w in [cookie, len, offset, digits] {
        raw.extend_from_slice(&(w as u32).to_be_bytes());
    }
    raw.extend_from_slice(&low.to_be_bytes());
    raw.extend_from_slice(&high.to_be_bytes());
    raw.extend_from_slice(&1.0f64.to_be_bytes());
    raw.extend_from_slice(payload);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(&raw).unwrap();
    let z = z.finish().unwrap();
    let mut out = 0x1c84_9314u32.to_be_bytes().to_vec();
    out.extend_from_slice(&(z.len() as u32).to_be_bytes());
    out.extend_from_slice(&z);
    base64::engine::general_purpose::STANDARD.encode(out)
}

/// `good` with its total latency histogram replaced by `hdr`, at `name`.
fn with_histogram(dir: &Path, good: &str, hdr: &str, name: &str) -> String {
    let text = std::fs::read_to_string(good).unwrap();
    let j: serde_json::Value = serde_json::from_str(&text).unwrap();
    let old = j["total"]["latency_hdr"].as_str().unwrap();
    let path = path_in(dir, name);
    std::fs::write(&path, text.replace(old, hdr)).unwrap();
    path
}

#[test]
fn hostile_histograms_are_refused_without_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = quick_result(d, "good.json", &[]);
    const V2: u64 = 0x1c84_9313;
    let hour = 3_600_000_000_000;
    for (header, payload, field) in [
        // 56 bytes declaring a 4 GiB payload.
        ([V2, 0xFFFF_FFF0, 0, 3, 1, hour], &[][..], "payload length"),
        // Bounds whose counts alone would take gigabytes.
        (
            [V2, 0, 0, 5, 1, u64::MAX / 4],
            &[][..],
            "significant digits",
        ),
        ([V2, 0, 0, 3, 1, u64::MAX / 4], &[][..], "outside ours"),
        // Cut short: the payload ends before it says.
        ([V2, 10, 0, 3, 1, hour], &[2, 2][..], "payload length"),
    ] {
        let bad = with_histogram(d, &good, &v2(header, payload), "bad.json");
        refused(d, &["report", &bad], 2, field);
        refused(d, &["compare", &good, &bad], 2, field);
        refused(d, &["report", "--merge", &good, &bad], 2, field);
        let csv = path_in(d, "out.csv");
        refused(d, &["report", &bad, "--csv", &csv], 2, field);
    }
    // A histogram whose compressed stream is cut short.
    let text = std::fs::read_to_string(&good).unwrap();
    let j: serde_json::Value = serde_json::from_str(&text).unwrap();
    let whole = j["total"]["latency_hdr"].as_str().unwrap();
    let mut bytes = base64::engine::general_purpose::STANDARD
        .decode(whole)
        .unwrap();
    bytes.truncate(bytes.len() - 6);
    let cut = base64::engine::general_purpose::STANDARD.encode(bytes);
    let bad = with_histogram(d, &good, &cut, "cut.json");
    refused(d, &["report", &bad], 2, "compressed length");
    // The file unchanged still reads.
    let (out, _) = probe(d, &["report", &good]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn devices_fifos_and_huge_files_are_refused_without_reading() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let fifo = fifo.to_str().unwrap();
    for file in ["/dev/zero", "/dev/urandom", fifo] {
        refused(
            d,
            &["memaslap", "-s", "127.0.0.1:1", "-F", file],
            2,
            "not a regular file",
        );
        refused(d, &["trace-stat", file], 2, "not a regular file");
        refused(d, &["agent", "--token-file", file], 2, "not a regular file");
        refused(d, &["report", file], 2, "not a regular file");
    }
    let token = secret_file(d, "token", "0123456789abcdef0123\n");
    // Only the header is looked at before the key is read.
    let cert = path_in(d, "cert.pem");
    std::fs::write(
        &cert,
        "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    for (cert, key) in [("/dev/zero", cert.as_str()), (cert.as_str(), "/dev/zero")] {
        let args = [
            "agent",
            "--token-file",
            &token,
            "--tls-cert",
            cert,
            "--tls-key",
            key,
        ];
        refused(d, &args, 2, "/dev/zero is not a regular file");
    }
    // A saved result of 900 MB (sparse): refused by its size, unread.
    let huge = d.join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(900 << 20)
        .unwrap();
    refused(
        d,
        &["report", huge.to_str().unwrap()],
        2,
        "larger than 64 MiB",
    );
}

/// What the HTML page draws of a saved result is checked as the run
/// checked it: a negative CPU time, an SLO bound past the longest latency
/// recorded (an axis to infinity), an error class mcbench does not have,
/// a label that is not one printable line; a figure no axis can hold is
/// left off its chart.
#[test]
fn figures_no_run_records_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = quick_result(d, "good.json", &["--kernel-stamps", "on"]);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    assert!(!j["intervals"].as_array().unwrap().is_empty());
    type Spoil = fn(&mut serde_json::Value);
    let hostile: [(&str, Spoil); 6] = [
        ("CPU time", |j| {
            j["intervals"][0]["client_cpu_s"] = (-1.0).into()
        }),
        ("error class \"made_up\"", |j| {
            j["intervals"][0]["error_classes"] = serde_json::json!({"made_up": 1})
        }),
        (
            "cannot decide",
            |j| j["spec"]["decide"] = serde_json::json!({"percentile": 99.0, "bound_us": 1e308}),
        ),
        ("--label", |j| j["spec"]["label"] = "\u{1b}[2Jgone".into()),
        // Parts whose sums no latency in their band could make.
        ("latency parts: band", |j| {
            j["total"]["latency_parts"]["bands"][0]["sums_ns"][0] = u64::MAX.into()
        }),
        ("latency parts: 1 histograms", |j| {
            let ops = &mut j["intervals"][0]["ops"]["total"];
            ops["parts_hdr"] = serde_json::json!([ops["latency_hdr"].clone()])
        }),
    ];
    let html = path_in(d, "out.html");
    for (needle, spoil) in hostile {
        let mut bad = j.clone();
        spoil(&mut bad);
        let path = path_in(d, "bad.json");
        std::fs::write(&path, bad.to_string()).unwrap();
        refused(d, &["report", &path, "--html", &html], 2, needle);
        refused(d, &["compare", &good, &path], 2, needle);
    }
    let (out, _) = probe(d, &["report", &good, "--html", &html]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A figure too large for any axis (1e308 s of CPU, infinite per
    // second) is left off its chart; the page is still drawn, in time.
    let mut huge = j.clone();
    huge["intervals"][0]["client_cpu_s"] = 1e308.into();
    let path = path_in(d, "huge.json");
    std::fs::write(&path, huge.to_string()).unwrap();
    let (out, kib) = probe(d, &["report", &path, "--html", &html]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(kib < MAX_RSS_KIB, "{kib} KiB");
}

/// A kept histogram's count in base64, as a result keeps it.
fn encoded(h: &hdrhistogram::Histogram<u64>) -> String {
    let hdr = mcbench::stats::Hdr::encode(h);
    base64::engine::general_purpose::STANDARD.encode(hdr.bytes())
}

/// Results whose figures do not add up: counts no histogram holds, a
/// histogram of 2^64 values, figures edited by hand, keys no request
/// asked for. Each is refused (exit 2, naming the field and the rule) by
/// every command that reads results; the result they were made from
/// still loads.
#[test]
fn results_that_do_not_add_up_are_refused_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = quick_result(d, "good.json", &[]);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    // Four counts of 2^62: the decoder's own total saturates, and every
    // percentile read from it would be 0.
    let mut wrapping = mcbench::stats::new_histogram();
    for v in [10_000, 20_000, 40_000, 80_000] {
        wrapping.record_n(v, 1 << 62).unwrap();
    }
    let wrapping = encoded(&wrapping);
    type Spoil = Box<dyn Fn(&mut serde_json::Value)>;
    let hostile: Vec<(&str, Spoil)> = vec![
        (
            "past 2^64",
            Box::new(move |j| j["total"]["latency_hdr"] = wrapping.clone().into()),
        ),
        (
            "get: latency_hdr holds",
            Box::new(|j| {
                // One more get, in the total too: only its histogram says no.
                for path in ["/ops/get/count", "/total/count"] {
                    let at = j.pointer_mut(path).unwrap();
                    *at = (at.as_u64().unwrap() + 1).into();
                }
            }),
        ),
        (
            "latency_us.p99 says",
            Box::new(|j| j["total"]["latency_us"]["p99"] = 0.5.into()),
        ),
        (
            "rate says",
            Box::new(|j| j["ops"]["get"]["rate"] = 1e12.into()),
        ),
        (
            "hits and",
            Box::new(|j| j["intervals"][0]["hits"] = 1_000_000_000_000_000u64.into()),
        ),
        (
            "where its ops count",
            Box::new(|j| {
                let n = j["ops"]["get"]["count"].as_u64().unwrap();
                // The get histogram and count agree, the total no longer.
                j["ops"]["get"]["latency_hdr"] = j["ops"]["set"]["latency_hdr"].clone();
                j["ops"]["get"]["service_time_hdr"] = j["ops"]["set"]["service_time_hdr"].clone();
                j["ops"]["get"]["count"] = j["ops"]["set"]["count"].clone();
                assert_ne!(n, j["ops"]["set"]["count"].as_u64().unwrap());
            }),
        ),
    ];
    let (html, csv) = (path_in(d, "out.html"), path_in(d, "out.csv"));
    for (needle, spoil) in &hostile {
        let mut bad = j.clone();
        spoil(&mut bad);
        let path = path_in(d, "bad.json");
        std::fs::write(&path, bad.to_string()).unwrap();
        refused(d, &["report", &path], 2, needle);
        refused(d, &["report", &path, "--html", &html], 2, needle);
        refused(d, &["report", &path, "--csv", &csv], 2, needle);
        refused(d, &["report", "--merge", &good, &path], 2, needle);
        refused(d, &["compare", &good, &path], 2, needle);
    }
    let twin = path_in(d, "twin.json");
    std::fs::copy(&good, &twin).unwrap();
    for args in [
        vec!["report", good.as_str(), "--html", html.as_str()],
        vec!["report", "--merge", good.as_str(), twin.as_str()],
        vec!["compare", good.as_str(), twin.as_str()],
    ] {
        let (out, _) = probe(d, &args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
}

/// A result that is mostly one field mcbench does not know is read within
/// the memory bound: the field is skipped, never built as a document tree.
#[test]
fn an_unknown_field_of_a_large_result_costs_no_memory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = quick_result(d, "good.json", &[]);
    let mut j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    let filler: Vec<u32> = (0..4_000_000).collect();
    j["made_up"] = serde_json::json!(filler);
    let path = path_in(d, "big.json");
    std::fs::write(&path, j.to_string()).unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() > 20 << 20);
    let (out, kib) = probe(d, &["report", &path]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(kib < MAX_RSS_KIB, "{kib} KiB");
}

/// A result of thousands of intervals (a long run's) is rendered again
/// within a few times its size: the intervals' histograms are decoded one
/// at a time, never all held at once (20 times the file's size before).
#[test]
fn a_result_of_many_intervals_is_read_within_a_few_times_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = quick_result(d, "good.json", &["-i", "100ms"]);
    let mut j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    let one = j["intervals"][0].clone();
    let many: Vec<serde_json::Value> = (1..=2_000u64)
        .map(|i| {
            let mut interval = one.clone();
            interval["index"] = i.into();
            interval["time_s"] = (i as f64 * 0.1).into();
            interval["duration_s"] = 0.1.into();
            interval
        })
        .collect();
    j["intervals"] = many.into();
    let path = path_in(d, "long.json");
    std::fs::write(&path, j.to_string()).unwrap();
    let size_kib = std::fs::metadata(&path).unwrap().len() >> 10;
    let (out, kib) = probe(d, &["report", "--details", &path]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("stationarity: 2000 intervals"), "{text}");
    assert!(
        kib < 4 * size_kib + (16 << 10),
        "{kib} KiB for {size_kib} KiB"
    );
}

/// A private key others may read is refused, as a token file is: for the
/// agent's control plane and for a client certificate to the cache.
#[test]
fn a_private_key_others_may_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (cert, key) = self_signed(d);
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let token = secret_file(d, "token", "an-agent-token-of-enough-length-0123456789\n");
    let agent = [
        "agent",
        "--token-file",
        &token,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ];
    refused(d, &agent, 2, "chmod 600");
    let run = [
        "run",
        "-s",
        "localhost:1",
        "--tls",
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "-t",
        "1s",
    ];
    refused(d, &run, 2, "chmod 600");
}
