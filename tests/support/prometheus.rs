//! A real Prometheus (Debian's `prometheus`) on a free loopback port,
//! scraping given targets every second, and its HTTP API's answers.

use super::{free_port, wait_until_listening};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Prometheus {
    child: Child,
    pub addr: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Scrapes `targets` (HOST:PORT) every second; `native` turns native
    /// histograms on (Prometheus then asks for the protobuf format).
    pub fn start(targets: &[String], native: bool) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let listed: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: mcbench\n    static_configs:\n      - targets: [{}]\n",
            listed.join(", ")
        );
        let file = dir.path().join("prometheus.yml");
        std::fs::write(&file, config).unwrap();
        let addr = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new("prometheus");
        cmd.arg(format!("--config.file={}", file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if native {
            cmd.arg("--enable-feature=native-histograms");
        }
        let child = cmd
            .spawn()
            .expect("prometheus (apt-get install prometheus)");
        let p = Prometheus {
            child,
            addr,
            _dir: dir,
        };
        wait_until_listening("prometheus", || {
            http_get(&p.addr, "/-/ready", "").is_some_and(|(status, _)| status == 200)
        });
        p
    }

    /// Waits (at most 30 s) for the first scrape of its targets, up or
    /// down: Prometheus applies its targets a few seconds after it starts.
    pub fn wait_scraping(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.query("up").as_array().is_none_or(|a| a.is_empty()) {
            assert!(Instant::now() < deadline, "prometheus never scraped");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// An instant query's `data.result`, now.
    pub fn query(&self, promql: &str) -> Value {
        self.query_at(promql, None)
    }

    /// An instant query's `data.result`, at `t` (s since the epoch) if given.
    pub fn query_at(&self, promql: &str, t: Option<f64>) -> Value {
        let mut path = format!("/api/v1/query?query={}", percent_encoded(promql));
        if let Some(t) = t {
            path.push_str(&format!("&time={t}"));
        }
        let (status, body) = http_get(&self.addr, &path, "").expect("prometheus answers");
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(status, 200, "{promql}: {v}");
        v["data"]["result"].clone()
    }

    /// The time of the last sample of `series` within 5 minutes, s since
    /// the epoch: once a target is gone its series are marked stale, so
    /// what it served last is read at this instant (`number_at`).
    pub fn last_sample_at(&self, series: &str) -> Option<f64> {
        let r = self.query(&format!("{series}[5m]"));
        let values = r.as_array()?.first()?["values"].as_array()?.clone();
        values.last()?[0].as_f64()
    }

    /// The one number an instant query at `t` gives, if it gives one.
    pub fn number_at(&self, promql: &str, t: f64) -> Option<f64> {
        let r = self.query_at(promql, Some(t));
        let rows = r.as_array()?;
        assert!(rows.len() <= 1, "{promql}: {r}");
        rows.first()?["value"][1].as_str()?.parse().ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` over HTTP/1.0 with `accept` (none if empty): the status and
/// body, or None when nothing answers. Reads at most 64 MiB, for 5 s.
pub fn http_get(addr: &str, path: &str, accept: &str) -> Option<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let accept = if accept.is_empty() {
        String::new()
    } else {
        format!("Accept: {accept}\r\n")
    };
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n{accept}\r\n").ok()?;
    let mut all = Vec::new();
    s.take(64 << 20).read_to_end(&mut all).ok()?;
    let end = all.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&all[..end]).ok()?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, all[end + 4..].to_vec()))
}

/// The text of `/metrics` once the run says it is done, polled over at
/// most 30 s (the run holds its endpoint until a scrape has read that).
pub fn text_when_done(addr: &str, run: &str) -> String {
    text_when_done_as(addr, run, "")
}

/// OpenMetrics 1.0.0 as Prometheus asks for it without native histograms.
pub const OPENMETRICS: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/// `text_when_done`, asked with `accept`.
pub fn text_when_done_as(addr: &str, run: &str, accept: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    let of_run = format!("mcbench_phase{{run=\"{run}\",");
    loop {
        if let Some((200, body)) = http_get(addr, "/metrics", accept) {
            let text = String::from_utf8(body).unwrap();
            let done = |l: &&str| l.starts_with(&of_run) && l.contains("phase=\"done\"} 1");
            if text.lines().any(|l| done(&l)) {
                return text;
            }
        }
        assert!(Instant::now() < deadline, "the endpoint never said done");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// OpenMetrics text as the Prometheus client library's parser reads it
/// (it refuses a text that breaks the format: a counter family named
/// with `_total`, buckets not cumulative, a count other than `+Inf`'s, no
/// `# EOF`): `[family, type, [[sample, labels, value], ...]]` per family.
pub fn openmetrics_parsed(text: &str) -> Value {
    let script = "import sys, json\n\
        from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse\n\
        out = [[f.name, f.type, [[s.name, s.labels, s.value] for s in f.samples]]\n\
               for f in parse(open(sys.argv[1]).read())]\n\
        print(json.dumps(out))";
    // A file, not an argument: the text outgrows one argument's 128 KiB.
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    let path = file.path().to_str().unwrap();
    serde_json::from_slice(&super::python_at("/usr/bin/python3", script, &[path])).unwrap()
}

/// The value of every sample line of `name` whose labels hold each of
/// `with` and none of `without`.
pub fn samples(text: &str, name: &str, with: &[&str], without: &[&str]) -> Vec<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .filter(|l| with.iter().all(|w| l.contains(w)) && !without.iter().any(|w| l.contains(w)))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse().unwrap())
        .collect()
}

fn percent_encoded(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Every query of the Grafana dashboard (`deploy/grafana/mcbench.json`)
/// with its panel's title, its variables set: `run` for `$run`, any
/// agent, a rate window of a minute (the whole of a test's run, however
/// a loaded machine spaced its scrapes).
pub fn dashboard_queries(run: &str) -> Vec<(String, String)> {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/grafana/mcbench.json");
    let dash: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut out = Vec::new();
    for panel in dash["panels"].as_array().unwrap() {
        let title = panel["title"].as_str().unwrap();
        for t in panel["targets"].as_array().into_iter().flatten() {
            let expr = t["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "1m")
                .replace("$run", run)
                .replace("$agent", ".+");
            out.push((title.to_owned(), expr));
        }
    }
    out
}
