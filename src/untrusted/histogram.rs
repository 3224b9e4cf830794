//! HdrHistogram V2 compressed bytes from a saved result or an agent,
//! checked before hdrhistogram's decoder sees them: that decoder sizes its
//! buffer from the payload length and its counts from the bounds the bytes
//! declare, so 56 hostile bytes can make it allocate 4 GiB.

/// The cookies of the V2 encoding, compressed (as results keep it:
/// `stats::Hdr` writes it) and not.
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
pub fn inflate_v2(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let word = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    if word(bytes, 0) != Some(V2_COMPRESSED_COOKIE) {
        return Err("a histogram is not in the HdrHistogram V2 compressed encoding".into());
    }
    let declared = word(bytes, 4).ok_or("a histogram ends inside its header")? as usize;
    let stream = &bytes[8..];
    if declared != stream.len() {
        return Err(format!(
            "a histogram declares {declared} compressed bytes and holds {} (compressed length)",
            stream.len()
        ));
    }
    let raw = inflate_bounded(stream, V2_HEADER + MAX_V2_PAYLOAD)?;
    check_header(&raw)?;
    Ok(raw)
}

/// Inflates the zlib `stream` into at most `max` bytes; refuses a stream
/// that inflates to more or that does not end.
fn inflate_bounded(stream: &[u8], max: usize) -> Result<Vec<u8>, String> {
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
            .map_err(|e| format!("a histogram does not inflate: {e}"))?;
        if status == flate2::Status::StreamEnd {
            return Ok(out);
        }
        if out.len() >= max {
            return Err(format!(
                "a histogram inflates to more than {max} bytes, more than any of ours holds (payload)"
            ));
        }
        if (z.total_in(), z.total_out()) == before && out.len() < out.capacity() {
            return Err("a histogram is cut short (its compressed stream does not end)".into());
        }
        if out.len() == out.capacity() {
            out.reserve((out.capacity()).min(max - out.len()).max(64));
        }
    }
}

/// The V2 header of `raw`, checked field by field.
fn check_header(raw: &[u8]) -> Result<(), String> {
    let u32_at = |at: usize| u32::from_be_bytes(raw[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_be_bytes(raw[at..at + 8].try_into().expect("8 bytes"));
    if raw.len() < V2_HEADER {
        return Err("a histogram ends inside its V2 header".into());
    }
    if u32_at(0) != V2_COOKIE {
        return Err("a histogram's inner cookie is not V2's".into());
    }
    let payload = u32_at(4) as usize;
    if payload != raw.len() - V2_HEADER {
        return Err(format!(
            "a histogram declares a payload of {payload} bytes and holds {} (payload length)",
            raw.len() - V2_HEADER
        ));
    }
    let (digits, lowest, highest) = (u32_at(12), u64_at(16), u64_at(24));
    if digits > MAX_DIGITS {
        return Err(format!(
            "a histogram declares {digits} significant digits, more than ours ({MAX_DIGITS})"
        ));
    }
    if lowest == 0 || highest > MAX_HIGHEST || highest < 2 * lowest {
        return Err(format!(
            "a histogram declares the range {lowest}..{highest}, outside ours (1..{MAX_HIGHEST})"
        ));
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
    }
}
