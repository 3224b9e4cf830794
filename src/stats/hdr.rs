//! Histograms as results keep them: the standard HdrHistogram V2
//! compressed encoding (what Java's, Go's and Python's HdrHistogram read),
//! base64 in JSON. A kept histogram is a few hundred bytes to a few KB,
//! where a decoded one of our range is ~270 KB, so results hold them
//! encoded and decode on demand.

use super::recorder::new_histogram;
use super::StatsError;
use crate::untrusted::V2_COMPRESSED_COOKIE;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// One histogram of ns values, V2 compressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hdr(Vec<u8>);

impl Hdr {
    /// The encoded bytes (V2 compressed), as the agents' API carries them.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// Bytes received as a V2 compressed histogram: checked by decoding.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Hdr, StatsError> {
        let hdr = Hdr(bytes);
        hdr.decode()?;
        Ok(hdr)
    }

    pub fn encode(h: &Histogram<u64>) -> Hdr {
        thread_local! {
            static ENCODER: std::cell::RefCell<Encoder> = std::cell::RefCell::new(Encoder::new());
        }
        Hdr(ENCODER.with_borrow_mut(|e| e.encode(h)))
    }

    /// The histogram, with the recorder's range so that it merges with
    /// any other of the run.
    pub fn decode(&self) -> Result<Histogram<u64>, StatsError> {
        self.decode_into(new_histogram())
    }

    /// A batch's histogram (`batches::new_batch_histogram`'s layout,
    /// whatever the layout it was written in).
    pub fn decode_batch(&self) -> Result<Histogram<u64>, StatsError> {
        self.decode_into(super::batches::new_batch_histogram())
    }

    /// The histogram added into `into` (empty, of the layout wanted).
    fn decode_into(&self, mut into: Histogram<u64>) -> Result<Histogram<u64>, StatsError> {
        // Checked (and inflated) first: the bytes may come from a file or
        // an agent.
        let raw = crate::untrusted::inflate_v2(&self.0)?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut raw.as_slice())
            .map_err(StatsError::Decode)?;
        into.add(&h).map_err(StatsError::Range)?;
        Ok(into)
    }

    /// How many values it holds, read from its bytes (checked: no sum
    /// past `u64::MAX`), without decoding it.
    pub fn count(&self) -> Result<u64, StatsError> {
        Ok(crate::untrusted::count_v2(&self.0)?)
    }

    /// The empty batch histogram.
    pub fn empty_batch() -> Hdr {
        thread_local! {
            static EMPTY: Hdr = Hdr::encode(&super::batches::new_batch_histogram());
        }
        EMPTY.with(Hdr::clone)
    }

    /// The empty histogram.
    pub fn empty() -> Hdr {
        Hdr::encode(&new_histogram())
    }

    pub fn to_base64(&self) -> String {
        BASE64.encode(&self.0)
    }

    /// Reads the base64 text, and checks it as `untrusted::inflate_v2`
    /// does, so that a saved result with a bad histogram is refused as it
    /// is read; decoding waits until a report needs it (an hour's results
    /// hold ~25k histograms: each is decoded once, not twice).
    pub fn from_base64(text: &str) -> Result<Hdr, StatsError> {
        let bytes = BASE64.decode(text.trim()).map_err(StatsError::NotBase64)?;
        crate::untrusted::inflate_v2(&bytes)?;
        Ok(Hdr(bytes))
    }

    /// Adds every `hdrs` into one histogram.
    pub fn sum<'a>(hdrs: impl IntoIterator<Item = &'a Hdr>) -> Result<Histogram<u64>, StatsError> {
        let mut all = new_histogram();
        for h in hdrs {
            all.add(h.decode()?).expect("same bounds");
        }
        Ok(all)
    }
}

impl Serialize for Hdr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_base64())
    }
}

impl<'de> Deserialize<'de> for Hdr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Hdr::from_base64(&text).map_err(serde::de::Error::custom)
    }
}

/// The V2 compressed encoding, as hdrhistogram's `V2DeflateSerializer`
/// writes it (cookie, length, zlib stream of the V2 encoding), but with
/// its buffers and compressor kept across histograms and zlib's fastest
/// level. A fresh serializer allocates and zero-fills ~0.7 MB per
/// histogram and compresses at level 6: each interval encodes several,
/// on the collecting thread, which may share a CPU with a worker whose
/// sends then waited milliseconds. One per thread (`Hdr::encode`).
struct Encoder {
    v2: V2Serializer,
    raw: Vec<u8>,
    zlib: flate2::Compress,
}

impl Encoder {
    fn new() -> Encoder {
        Encoder {
            v2: V2Serializer::new(),
            raw: Vec::new(),
            zlib: flate2::Compress::new(flate2::Compression::fast(), true),
        }
    }

    fn encode(&mut self, h: &Histogram<u64>) -> Vec<u8> {
        self.raw.clear();
        self.v2
            .serialize(h, &mut self.raw)
            .expect("a histogram of u64 counts always encodes into memory");
        let mut out = Vec::with_capacity(self.raw.len() / 2 + 64);
        out.extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
        out.extend_from_slice(&[0; 4]);
        self.zlib.reset();
        loop {
            let read = self.zlib.total_in() as usize;
            let status = self
                .zlib
                .compress_vec(&self.raw[read..], &mut out, flate2::FlushCompress::Finish)
                .expect("zlib compresses into memory");
            if status == flate2::Status::StreamEnd {
                break;
            }
            out.reserve(out.capacity().max(64));
        }
        let len = (out.len() - 8) as u32;
        out[4..8].copy_from_slice(&len.to_be_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_every_count() {
        let mut h = new_histogram();
        for v in [1u64, 999, 1_000, 123_456, 9_999_999, 3_000_000_000_000] {
            h.record_n(v, v % 7 + 1).unwrap();
        }
        let back = Hdr::from_base64(&Hdr::encode(&h).to_base64())
            .unwrap()
            .decode()
            .unwrap();
        assert_eq!(back, h);
        assert_eq!(back.len(), h.len());
        assert_eq!(back.value_at_quantile(0.9), h.value_at_quantile(0.9));
    }

    /// The reused encoder's bytes decode to each histogram in turn, as
    /// the crate's own serializer's do, whatever came before: a dense
    /// one (whose stream outgrows the first guess of its size), an empty
    /// one, a sparse one.
    #[test]
    fn a_reused_encoder_writes_what_the_crate_reads() {
        use hdrhistogram::serialization::V2DeflateSerializer;
        let mut dense = new_histogram();
        let mut x = 88_172_645_463_325_252u64;
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            dense.record(1 + x % 3_600_000_000_000).unwrap();
        }
        let mut sparse = new_histogram();
        sparse.record_n(42_000, 7).unwrap();
        for h in [dense, new_histogram(), sparse] {
            let ours = Hdr::encode(&h).decode().unwrap();
            let mut theirs = Vec::new();
            V2DeflateSerializer::new()
                .serialize(&h, &mut theirs)
                .unwrap();
            let theirs = Hdr::from_bytes(theirs).unwrap().decode().unwrap();
            assert_eq!(ours, h);
            assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn garbage_is_refused() {
        assert!(Hdr::from_base64("bm90IGEgaGlzdG9ncmFt").is_err());
        assert!(Hdr::from_base64("%%%").is_err());
        // The right cookie, then garbage: refused as it is read, and as
        // bytes from an agent.
        let garbage = [0x1c, 0x84, 0x93, 0x14, 1, 2, 3];
        assert!(Hdr::from_base64(&BASE64.encode(garbage)).is_err());
        assert!(Hdr::from_bytes(garbage.to_vec()).is_err());
    }
}
