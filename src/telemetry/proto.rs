//! The Prometheus protobuf exposition (`io.prometheus.client`'s
//! `MetricFamily`, length-delimited): the only format that carries native
//! histograms, which a Prometheus with them on asks for first.
//!
//! The messages are declared here with prost's derive, the fields a scrape
//! needs and their numbers from client_model's `metrics.proto` (proto2):
//! one small schema is clearer here than a vendored `.proto` and a build
//! step for it.

use super::family::{Family, Kind, Value};
use super::histogram::{Buckets, SCHEMA, ZERO_THRESHOLD};
use prost::Message;

/// The `Content-Type` of `render`'s bytes, as Prometheus asks for it.
pub const CONTENT_TYPE: &str =
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";

#[derive(Clone, PartialEq, Message)]
struct LabelPair {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(string, optional, tag = "2")]
    value: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
struct Number {
    #[prost(double, optional, tag = "1")]
    value: Option<f64>,
}

#[derive(Clone, PartialEq, Message)]
struct Bucket {
    #[prost(uint64, optional, tag = "1")]
    cumulative_count: Option<u64>,
    #[prost(double, optional, tag = "2")]
    upper_bound: Option<f64>,
}

#[derive(Clone, PartialEq, Message)]
struct BucketSpan {
    #[prost(sint32, optional, tag = "1")]
    offset: Option<i32>,
    #[prost(uint32, optional, tag = "2")]
    length: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
struct Histogram {
    #[prost(uint64, optional, tag = "1")]
    sample_count: Option<u64>,
    #[prost(double, optional, tag = "2")]
    sample_sum: Option<f64>,
    #[prost(message, repeated, tag = "3")]
    bucket: Vec<Bucket>,
    #[prost(sint32, optional, tag = "5")]
    schema: Option<i32>,
    #[prost(double, optional, tag = "6")]
    zero_threshold: Option<f64>,
    #[prost(uint64, optional, tag = "7")]
    zero_count: Option<u64>,
    #[prost(message, repeated, tag = "12")]
    positive_span: Vec<BucketSpan>,
    #[prost(sint64, repeated, packed = "false", tag = "13")]
    positive_delta: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
struct Metric {
    #[prost(message, repeated, tag = "1")]
    label: Vec<LabelPair>,
    #[prost(message, optional, tag = "2")]
    gauge: Option<Number>,
    #[prost(message, optional, tag = "3")]
    counter: Option<Number>,
    #[prost(message, optional, tag = "7")]
    histogram: Option<Histogram>,
}

#[derive(Clone, PartialEq, Message)]
struct MetricFamily {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(string, optional, tag = "2")]
    help: Option<String>,
    /// client_model's MetricType: COUNTER 0, GAUGE 1, HISTOGRAM 4.
    #[prost(int32, optional, tag = "3")]
    r#type: Option<i32>,
    #[prost(message, repeated, tag = "4")]
    metric: Vec<Metric>,
}

/// Every family with samples, each length-delimited.
pub fn render(families: &[Family]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in families.iter().filter(|f| !f.samples.is_empty()) {
        let family = MetricFamily {
            name: Some(f.name.to_owned()),
            help: Some(f.help.to_owned()),
            r#type: Some(match f.kind {
                Kind::Counter => 0,
                Kind::Gauge => 1,
                Kind::Histogram => 4,
            }),
            metric: f
                .samples
                .iter()
                .map(|s| metric(f.kind, &s.labels, &s.value))
                .collect(),
        };
        family
            .encode_length_delimited(&mut out)
            .expect("a Vec grows as needed");
    }
    out
}

fn metric(kind: Kind, labels: &[(&str, String)], value: &Value) -> Metric {
    let label = labels
        .iter()
        .map(|(k, v)| LabelPair {
            name: Some((*k).to_owned()),
            value: Some(v.clone()),
        })
        .collect();
    let mut m = Metric {
        label,
        gauge: None,
        counter: None,
        histogram: None,
    };
    match (kind, value) {
        (Kind::Counter, Value::Number(v)) => m.counter = Some(Number { value: Some(*v) }),
        (_, Value::Number(v)) => m.gauge = Some(Number { value: Some(*v) }),
        (_, Value::Histogram(b, bounds)) => m.histogram = Some(histogram(b, bounds)),
    }
    m
}

/// Classic buckets and native spans in one message, as client_golang
/// writes them: a Prometheus reads the native part where it has native
/// histograms on, the classic buckets elsewhere.
fn histogram(b: &Buckets, bounds: &[f64]) -> Histogram {
    let bucket = bounds
        .iter()
        .zip(b.cumulative())
        .map(|(bound, n)| Bucket {
            cumulative_count: Some(n),
            upper_bound: Some(*bound),
        })
        .collect();
    let (spans, deltas) = b.native_spans();
    let positive_span = if spans.is_empty() {
        // A no-op span marks a native histogram with no observations yet.
        vec![BucketSpan {
            offset: Some(0),
            length: Some(0),
        }]
    } else {
        spans
            .iter()
            .map(|(offset, length)| BucketSpan {
                offset: Some(*offset),
                length: Some(*length),
            })
            .collect()
    };
    Histogram {
        sample_count: Some(b.count()),
        sample_sum: Some(b.sum()),
        bucket,
        schema: Some(SCHEMA),
        zero_threshold: Some(ZERO_THRESHOLD),
        zero_count: Some(b.zero_count()),
        positive_span,
        positive_delta: deltas,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_decode_back_with_their_native_buckets() {
        let mut b = Buckets::new(1);
        let mut h = crate::stats::new_histogram();
        for v in [1_005_000_000u64, 1_030_000_000, 1_030_000_000] {
            h.record(v).unwrap();
        }
        b.add_ns(&h, &[1.0]);
        let bounds = [1.0];
        let mut f = Family::new("lat_seconds", Kind::Histogram, "L.");
        f.push(vec![("op", "get".into())], Value::Histogram(&b, &bounds));
        let mut c = Family::new("n_total", Kind::Counter, "N.");
        c.push(vec![], Value::Number(7.0));
        let bytes = render(&[f, c]);
        let mut rest = &bytes[..];
        let first = MetricFamily::decode_length_delimited(&mut rest).unwrap();
        let second = MetricFamily::decode_length_delimited(&mut rest).unwrap();
        assert!(rest.is_empty());
        let hist = first.metric[0].histogram.as_ref().unwrap();
        assert_eq!(hist.sample_count, Some(3));
        assert_eq!(hist.schema, Some(5));
        assert_eq!(hist.bucket[0].cumulative_count, Some(0));
        assert_eq!(
            hist.positive_span,
            [BucketSpan {
                offset: Some(1),
                length: Some(2)
            }]
        );
        assert_eq!(hist.positive_delta, [1, 1]);
        assert_eq!(second.r#type, Some(0));
        assert_eq!(second.metric[0].counter, Some(Number { value: Some(7.0) }));
    }
}
