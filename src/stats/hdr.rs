//! Histograms as results keep them: the standard HdrHistogram V2
//! compressed encoding (what Java's, Go's and Python's HdrHistogram read),
//! base64 in JSON. A kept histogram is a few hundred bytes to a few KB,
//! where a decoded one of our range is ~270 KB, so results hold them
//! encoded and decode on demand.

use super::recorder::new_histogram;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The first four bytes of a V2 compressed histogram.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;

/// One histogram of ns values, V2 compressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hdr(Vec<u8>);

impl Hdr {
    /// The encoded bytes (V2 compressed), as the agents' API carries them.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// Bytes received as a V2 compressed histogram: checked by decoding.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Hdr, String> {
        let hdr = Hdr(bytes);
        hdr.decode()?;
        Ok(hdr)
    }

    pub fn encode(h: &Histogram<u64>) -> Hdr {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(h, &mut bytes)
            .expect("a histogram of u64 counts always encodes into memory");
        Hdr(bytes)
    }

    /// The histogram, with the recorder's range so that it merges with
    /// any other of the run.
    pub fn decode(&self) -> Result<Histogram<u64>, String> {
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut self.0.as_slice())
            .map_err(|e| format!("a kept histogram does not decode: {e:?}"))?;
        let mut full = new_histogram();
        full.add(&h)
            .map_err(|e| format!("a kept histogram is out of range: {e:?}"))?;
        Ok(full)
    }

    /// The empty histogram.
    pub fn empty() -> Hdr {
        Hdr::encode(&new_histogram())
    }

    pub fn to_base64(&self) -> String {
        BASE64.encode(&self.0)
    }

    /// Reads the base64 text; checks the V2 compressed cookie, and leaves
    /// the rest to `decode` (an hour's results hold ~25k histograms: each
    /// is decoded when a report needs it, not twice).
    pub fn from_base64(text: &str) -> Result<Hdr, String> {
        let bytes = BASE64
            .decode(text.trim())
            .map_err(|e| format!("a histogram is not base64: {e}"))?;
        if bytes.get(..4) != Some(&V2_COMPRESSED_COOKIE.to_be_bytes()[..]) {
            return Err("a histogram is not in the HdrHistogram V2 compressed encoding".into());
        }
        Ok(Hdr(bytes))
    }

    /// Adds every `hdrs` into one histogram.
    pub fn sum<'a>(hdrs: impl IntoIterator<Item = &'a Hdr>) -> Result<Histogram<u64>, String> {
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

    #[test]
    fn garbage_is_refused() {
        assert!(Hdr::from_base64("bm90IGEgaGlzdG9ncmFt").is_err());
        assert!(Hdr::from_base64("%%%").is_err());
        // The right cookie, then garbage: refused when decoded.
        let hdr = Hdr::from_base64(&BASE64.encode([0x1c, 0x84, 0x93, 0x14, 1, 2, 3])).unwrap();
        assert!(hdr.decode().is_err());
    }
}
