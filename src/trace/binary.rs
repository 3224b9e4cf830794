//! libCacheSim's binary formats: packed little-endian records.

use super::{op_of_code, Record, RecordError};

/// lcs: the header's first and last eight bytes.
pub const LCS_MAGIC: u64 = 0x1234_5678_9abc_def0;
/// lcs: the header's length, bytes (`lcs_trace_header_t`).
pub const LCS_HEADER_LEN: usize = 8192;
/// oracleGeneral's record length, bytes.
pub const ORACLE_LEN: usize = 24;
/// oracleGeneralOpNS's record length, bytes.
pub const OPNS_LEN: usize = 27;

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The key of object `id`: its 16 hex digits.
fn set_id(rec: &mut Record, id: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..16).rev() {
        rec.key.push(HEX[((id >> (shift * 4)) & 0xf) as usize]);
    }
}

fn set_size(rec: &mut Record, size: u64) {
    rec.value_len = Some(u32::try_from(size).unwrap_or(u32::MAX));
}

/// `u32 clock_time, u64 obj_id, u32 obj_size, i64 next_access_vtime`.
pub fn oracle(b: &[u8], rec: &mut Record) {
    rec.time_s = Some(u64::from(u32_at(b, 0)));
    set_id(rec, u64_at(b, 4));
    set_size(rec, u64::from(u32_at(b, 12)));
}

/// oracleGeneral with `u8 op, u16 namespace` before the next access.
pub fn opns(b: &[u8], rec: &mut Record) -> Result<(), RecordError> {
    oracle(b, rec);
    rec.op = op_of_code(b[16])?;
    rec.client = u32::from(u16::from_le_bytes([b[17], b[18]]));
    Ok(())
}

/// An lcs trace's record length for header `version` (v1–v8).
pub fn lcs_record_len(version: u64) -> Result<usize, RecordError> {
    const FEATURES: [usize; 9] = [0, 0, 0, 0, 1, 2, 4, 8, 16];
    match version {
        1 => Ok(24),
        2 => Ok(28),
        3..=8 => Ok(36 + 4 * FEATURES[version as usize]),
        v => Err(RecordError::LcsVersion(v)),
    }
}

/// Checks an lcs header; returns its version.
pub fn lcs_header(h: &[u8]) -> Result<u64, RecordError> {
    if h.len() < LCS_HEADER_LEN {
        return Err(RecordError::LcsShort {
            want: LCS_HEADER_LEN,
            got: h.len(),
        });
    }
    if u64_at(h, 0) != LCS_MAGIC || u64_at(h, LCS_HEADER_LEN - 8) != LCS_MAGIC {
        return Err(RecordError::LcsMagic);
    }
    let version = u64_at(h, 8);
    lcs_record_len(version)?;
    Ok(version)
}

/// One lcs record of `version`.
pub fn lcs(b: &[u8], version: u64, rec: &mut Record) -> Result<(), RecordError> {
    rec.time_s = Some(u64::from(u32_at(b, 0)));
    set_id(rec, u64_at(b, 4));
    match version {
        1 => set_size(rec, u64::from(u32_at(b, 12))),
        2 => {
            set_size(rec, u64::from(u32_at(b, 12)));
            lcs_op_tenant(rec, u32_at(b, 16))?;
        }
        _ => {
            let size = i64::from_le_bytes(b[12..20].try_into().expect("8 bytes"));
            set_size(rec, size.max(0) as u64);
            lcs_op_tenant(rec, u32_at(b, 20))?;
            rec.ttl = u32_at(b, 24);
        }
    }
    Ok(())
}

/// `op:8 | tenant:24`, as a little-endian bit field.
fn lcs_op_tenant(rec: &mut Record, word: u32) -> Result<(), RecordError> {
    rec.op = op_of_code((word & 0xff) as u8)?;
    rec.client = word >> 8;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceOp;
    use crate::workload::OpKind;

    fn oracle_bytes(time: u32, id: u64, size: u32) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&time.to_le_bytes());
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&size.to_le_bytes());
        b.extend_from_slice(&(-1i64).to_le_bytes());
        b
    }

    #[test]
    fn oracle_general_ids_become_hex_keys() {
        let mut r = Record::default();
        oracle(&oracle_bytes(7, 0xdead_beef, 300), &mut r);
        assert_eq!(r.key, b"00000000deadbeef");
        assert_eq!(
            (r.time_s, r.value_len, r.op),
            (Some(7), Some(300), TraceOp::Access)
        );
    }

    #[test]
    fn opns_and_lcs_carry_ops() {
        let mut b = oracle_bytes(1, 2, 3);
        b.truncate(16);
        b.extend_from_slice(&[9, 5, 0]);
        b.extend_from_slice(&(-1i64).to_le_bytes());
        assert_eq!(b.len(), OPNS_LEN);
        let mut r = Record::default();
        opns(&b, &mut r).unwrap();
        assert_eq!((r.op, r.client), (TraceOp::Op(OpKind::Delete), 5));
        let mut v3 = oracle_bytes(1, 2, 0);
        v3.truncate(12);
        v3.extend_from_slice(&70i64.to_le_bytes());
        v3.extend_from_slice(&(3u32 | (4 << 8)).to_le_bytes());
        v3.extend_from_slice(&90u32.to_le_bytes());
        v3.extend_from_slice(&(-1i64).to_le_bytes());
        assert_eq!(v3.len(), lcs_record_len(3).unwrap());
        let mut r = Record::default();
        lcs(&v3, 3, &mut r).unwrap();
        assert_eq!((r.op, r.client, r.ttl), (TraceOp::Op(OpKind::Set), 4, 90));
        assert_eq!(r.value_len, Some(70));
        assert_eq!(lcs_record_len(8).unwrap(), 100);
        assert!(lcs_record_len(9).is_err());
    }
}
