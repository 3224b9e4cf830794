//! The exposition's model, rendered by both formats (`text`, `proto`):
//! metric families of labelled samples, in the order they are served.

use super::histogram::Buckets;

/// What a family's samples are, as Prometheus types them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// One sample's value: a number, or a histogram with its classic bounds
/// (seconds).
#[derive(Debug)]
pub enum Value<'a> {
    Number(f64),
    Histogram(&'a Buckets, &'a [f64]),
}

/// One labelled sample of a family.
#[derive(Debug)]
pub struct Sample<'a> {
    pub labels: Vec<(&'static str, String)>,
    pub value: Value<'a>,
}

/// A metric family: its name (a counter's with `_total`), help and kind,
/// and every sample of it.
#[derive(Debug)]
pub struct Family<'a> {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    pub samples: Vec<Sample<'a>>,
}

impl<'a> Family<'a> {
    pub fn new(name: &'static str, kind: Kind, help: &'static str) -> Self {
        Family {
            name,
            help,
            kind,
            samples: Vec::new(),
        }
    }

    pub fn push(&mut self, labels: Vec<(&'static str, String)>, value: Value<'a>) {
        self.samples.push(Sample { labels, value });
    }
}
