//! HdrHistogram V2 compressed bytes from a saved result or an agent,
//! checked before hdrhistogram's decoder sees them: that decoder sizes its
//! buffer from the payload length and its counts from the bounds the bytes
//! declare, so 56 hostile bytes can make it allocate 4 GiB.

/// The cookies of the V2 encoding, compressed (as results keep it:
/// `stats::Hdr` writes it) and not.
use super::HistogramError;

pub const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
const V2_COOKIE: u32 = 0x1c84_9313;
/// The V2 header: cookie, payload length, normalizing offset, digits,
/// lowest, highest, conversion ratio.
const V2_HEADER: usize = 40;
/// The most payload a histogram of ours can need: each of the counts of
/// the widest recorder (1 ns..1 h, 3 digits: 33,792 counts; 40,960 with
/// room) as a 9-byte varint.
const MAX_V2_PAYLOAD: usize = 40_960 * 9;
/// Bounds a histogram of ours may declare: at most our recorders' range
/// and precision, so that the counts it allocates are no more than ours.
const MAX_HIGHEST: u64 = 3_600_000_000_000;
const MAX_DIGITS: u32 = 3;

/// The uncompressed V2 encoding inside `bytes` (cookie, length, zlib), with
/// its header checked: the payload no longer than `MAX_V2_PAYLOAD` and
/// exactly as long as declared, bounds within our recorders'. A message
/// naming the field otherwise, before anything of its size is allocated.
pub fn inflate_v2(bytes: &[u8]) -> Result<Vec<u8>, HistogramError> {
    let word = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    if word(bytes, 0) != Some(V2_COMPRESSED_COOKIE) {
        return Err(HistogramError::NotV2);
    }
    let declared = word(bytes, 4).ok_or(HistogramError::HeaderCut)? as usize;
    let stream = &bytes[8..];
    if declared != stream.len() {
        return Err(HistogramError::CompressedLength {
            declared,
            held: stream.len(),
        });
    }
    let raw = inflate_bounded(stream, V2_HEADER + MAX_V2_PAYLOAD)?;
    check_header(&raw)?;
    Ok(raw)
}

/// How many values the V2 compressed histogram `bytes` holds: its counts
/// summed from the encoding itself (ZigZag LEB128 varints, a negative one a
/// run of empty counts), without building the histogram. A sum past
/// `u64::MAX`, or a varint that runs off the payload, is refused: no
/// histogram of ours holds one (the decoder would wrap it silently).
pub fn count_v2(bytes: &[u8]) -> Result<u64, HistogramError> {
    let raw = inflate_v2(bytes)?;
    let mut payload = &raw[V2_HEADER..];
    let mut total = 0u64;
    while !payload.is_empty() {
        let (value, used) = varint(payload)?;
        payload = &payload[used..];
        // ZigZag: even values are counts, odd ones runs of zeros.
        if value & 1 == 0 {
            total = total
                .checked_add(value >> 1)
                .ok_or(HistogramError::CountOverflow)?;
        }
    }
    Ok(total)
}

/// One LEB128 varint of at most 9 bytes (the ninth holds 8 bits whole),
/// and the bytes it took.
fn varint(bytes: &[u8]) -> Result<(u64, usize), HistogramError> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(9) {
        if i == 8 {
            return Ok((value | u64::from(b) << 56, 9));
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(HistogramError::NumberCut)
}

/// Inflates the zlib `stream` into at most `max` bytes; refuses a stream
/// that inflates to more or that does not end.
fn inflate_bounded(stream: &[u8], max: usize) -> Result<Vec<u8>, HistogramError> {
    let mut z = flate2::Decompress::new(true);
    let mut out = Vec::with_capacity(max.min(stream.len().saturating_mul(8)).max(V2_HEADER));
    loop {
        let before = (z.total_in(), z.total_out());
        let status = z
            .decompress_vec(
                &stream[z.total_in() as usize..],
                &mut out,
                flate2::FlushDecompress::None,
            )
            .map_err(|e| HistogramError::Inflate(e.to_string()))?;
        if status == flate2::Status::StreamEnd {
            return Ok(out);
        }
        if out.len() >= max {
            return Err(HistogramError::TooLarge { max });
        }
        if (z.total_in(), z.total_out()) == before && out.len() < out.capacity() {
            return Err(HistogramError::CutShort);
        }
        if out.len() == out.capacity() {
            out.reserve((out.capacity()).min(max - out.len()).max(64));
        }
    }
}

/// The V2 header of `raw`, checked field by field.
fn check_header(raw: &[u8]) -> Result<(), HistogramError> {
    let u32_at = |at: usize| u32::from_be_bytes(raw[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_be_bytes(raw[at..at + 8].try_into().expect("8 bytes"));
    if raw.len() < V2_HEADER {
        return Err(HistogramError::V2HeaderCut);
    }
    if u32_at(0) != V2_COOKIE {
        return Err(HistogramError::InnerCookie);
    }
    let payload = u32_at(4) as usize;
    if payload != raw.len() - V2_HEADER {
        return Err(HistogramError::PayloadLength {
            declared: payload,
            held: raw.len() - V2_HEADER,
        });
    }
    let (digits, lowest, highest) = (u32_at(12), u64_at(16), u64_at(24));
    if digits > MAX_DIGITS {
        return Err(HistogramError::Digits {
            digits,
            max: MAX_DIGITS,
        });
    }
    if lowest == 0 || highest > MAX_HIGHEST || highest < 2 * lowest {
        return Err(HistogramError::Range {
            lowest,
            highest,
            max: MAX_HIGHEST,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every recorder of ours fits the bounds, with every count as large
    /// as a varint gets.
    #[test]
    fn our_widest_recorder_fits_the_bound() {
        let widest = crate::stats::new_histogram();
        assert!(widest.distinct_values() * 9 <= MAX_V2_PAYLOAD);
        assert_eq!(widest.high(), MAX_HIGHEST);
        let mut full = widest.clone();
        for v in (1..MAX_HIGHEST).step_by(1 << 20).take(30_000) {
            full.record_n(v, u64::MAX >> 8).unwrap();
        }
        let hdr = crate::stats::Hdr::encode(&full);
        assert_eq!(hdr.decode().unwrap(), full);
        // Its counts add up past 2^64 (the crate saturates its total): no
        // result holds it.
        assert!(count_v2(hdr.bytes()).is_err());
    }

    #[test]
    fn counts_are_summed_from_the_bytes_and_an_overflow_is_refused() {
        let mut h = crate::stats::new_histogram();
        for (v, n) in [(1u64, 3u64), (1_000, 70_000), (3_000_000, 1 << 40)] {
            h.record_n(v, n).unwrap();
        }
        assert_eq!(count_v2(crate::stats::Hdr::encode(&h).bytes()), Ok(h.len()));
        // Four counts of 2^62: their sum is 2^64 (the crate's own total
        // saturates, and its quantiles are then nonsense).
        let mut big = crate::stats::new_histogram();
        for v in [10, 1_000, 100_000, 10_000_000] {
            big.record_n(v, 1 << 62).unwrap();
        }
        let err = count_v2(crate::stats::Hdr::encode(&big).bytes()).unwrap_err();
        assert_eq!(err, HistogramError::CountOverflow);
    }
}
