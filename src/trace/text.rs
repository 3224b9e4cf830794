//! The text formats: one record per line, comma-separated, no quoting.

use super::{Record, RecordError, TraceOp};
use crate::workload::{OpKind, MAX_KEY_LEN};

/// The most requests one Meta KV record may stand for.
const MAX_OP_COUNT: u32 = 1_000_000;

/// The fields of one line, without its line end.
fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.split(|&b| b == b',')
}

/// A decimal field.
fn number(field: &[u8], what: &'static str) -> Result<u64, RecordError> {
    if field.is_empty() || field.len() > 19 || !field.iter().all(u8::is_ascii_digit) {
        return Err(RecordError::NotNumber {
            what,
            field: String::from_utf8_lossy(field).into(),
        });
    }
    Ok(field
        .iter()
        .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')))
}

fn number_u32(field: &[u8], what: &'static str) -> Result<u32, RecordError> {
    u32::try_from(number(field, what)?).map_err(|_| RecordError::TooLarge(what))
}

/// Keys go on the wire as they are: no space, control byte or DEL.
fn check_key(key: &[u8]) -> Result<(), RecordError> {
    if key.is_empty() {
        return Err(RecordError::EmptyKey);
    }
    if let Some(b) = key.iter().find(|&&b| b <= b' ' || b == 0x7f) {
        return Err(RecordError::KeyByte(*b));
    }
    Ok(())
}

/// Sets `rec.key` to `key` cut or padded (with `_`) to `size` bytes (0:
/// as given), at most `MAX_KEY_LEN`.
fn set_key(rec: &mut Record, key: &[u8], size: u64) -> Result<(), RecordError> {
    check_key(key)?;
    let want = match size {
        0 => key.len(),
        n => usize::try_from(n).unwrap_or(MAX_KEY_LEN),
    }
    .min(MAX_KEY_LEN);
    rec.key.extend_from_slice(&key[..key.len().min(want)]);
    rec.key.resize(want, b'_');
    Ok(())
}

fn expect_fields<'a>(
    line: &'a [u8],
    n: usize,
    what: &'static str,
) -> Result<Vec<&'a [u8]>, RecordError> {
    let f: Vec<&[u8]> = fields(line).collect();
    if f.len() != n {
        return Err(RecordError::FieldCount {
            what,
            want: n,
            got: f.len(),
        });
    }
    Ok(f)
}

/// Twitter's `timestamp,key,key size,value size,client id,op,TTL`. A get
/// whose value size is 0 is a miss of the traced cache (cacheMon's note):
/// its size is not known (`None`: a fill takes `--value-size`).
pub fn twitter(line: &[u8], rec: &mut Record) -> Result<(), RecordError> {
    let f = expect_fields(line, 7, "a Twitter trace line")?;
    rec.time_s = Some(number(f[0], "the timestamp")?);
    set_key(rec, f[1], number(f[2], "the key size")?)?;
    let value = number_u32(f[3], "the value size")?;
    rec.value_len = Some(value);
    rec.client = number_u32(f[4], "the client id")?;
    rec.op = TraceOp::Op(twitter_op(f[5])?);
    rec.ttl = number_u32(f[6], "the TTL")?;
    if rec.op == TraceOp::Op(OpKind::Get) || rec.op == TraceOp::Op(OpKind::Gets) {
        rec.hits = Some(u32::from(value > 0));
        if value == 0 {
            rec.value_len = None;
        }
    }
    Ok(())
}

fn twitter_op(op: &[u8]) -> Result<OpKind, RecordError> {
    Ok(match op {
        b"get" => OpKind::Get,
        b"gets" => OpKind::Gets,
        b"set" => OpKind::Set,
        b"add" => OpKind::Add,
        b"replace" => OpKind::Replace,
        // The trace holds no cas unique: the set it is when it wins.
        b"cas" => OpKind::Set,
        b"append" => OpKind::Append,
        b"prepend" => OpKind::Prepend,
        b"delete" => OpKind::Delete,
        b"incr" => OpKind::Incr,
        b"decr" => OpKind::Decr,
        _ => return Err(RecordError::TwitterOp(String::from_utf8_lossy(op).into())),
    })
}

/// Whether `line` is the header row of a Meta KV CSV.
pub fn meta_header(line: &[u8]) -> bool {
    let f: Vec<&[u8]> = fields(line).collect();
    f.first() == Some(&&b"op_time"[..]) || f.get(1) == Some(&&b"op"[..])
}

/// Meta's KV cache CSV: 2022's `key,op,size,op_count,key_size`, or 2024's
/// `op_time,key,key_size,op,op_count,size,cache_hits,ttl,usecase,sub_usecase`.
pub fn meta_kv(line: &[u8], rec: &mut Record) -> Result<(), RecordError> {
    let f: Vec<&[u8]> = fields(line).collect();
    let (key, key_size, op, count, size) = match f.len() {
        5 => (f[0], f[4], f[1], f[3], f[2]),
        10 => {
            rec.time_s = Some(number(f[0], "op_time")?);
            rec.ttl = number_u32(f[7], "the ttl")?;
            (f[1], f[2], f[3], f[4], f[5])
        }
        n => return Err(RecordError::MetaFields(n)),
    };
    set_key(rec, key, number(key_size, "key_size")?)?;
    rec.op = TraceOp::Op(match op {
        b"GET" | b"GET_LEASE" => OpKind::Get,
        b"SET" => OpKind::Set,
        b"DELETE" => OpKind::Delete,
        _ => return Err(RecordError::MetaOp(String::from_utf8_lossy(op).into())),
    });
    rec.repeat = number_u32(count, "op_count")?.max(1);
    if rec.repeat > MAX_OP_COUNT {
        return Err(RecordError::OpCount {
            count: rec.repeat,
            max: MAX_OP_COUNT,
        });
    }
    rec.value_len = Some(number_u32(size, "the size")?);
    if f.len() == 10 && rec.op == TraceOp::Op(OpKind::Get) {
        rec.hits = Some(number_u32(f[6], "cache_hits")?.min(rec.repeat));
    }
    Ok(())
}

/// `--read-file`: `key`, `key,value size`, or the mutilate fork's
/// `time,app,req,key,value size` (req 1 is a get, 2 a set).
pub fn keys(line: &[u8], rec: &mut Record) -> Result<(), RecordError> {
    let f: Vec<&[u8]> = fields(line).collect();
    match f.len() {
        1 | 2 => {
            set_key(rec, f[0], 0)?;
            rec.op = TraceOp::Mix;
            if let Some(v) = f.get(1) {
                rec.value_len = Some(number_u32(v, "the value size")?);
            }
        }
        5 => {
            rec.client = number_u32(f[1], "the app")?;
            rec.op = TraceOp::Op(match f[2] {
                b"1" => OpKind::Get,
                b"2" => OpKind::Set,
                other => return Err(RecordError::Req(String::from_utf8_lossy(other).into())),
            });
            set_key(rec, f[3], 0)?;
            rec.value_len = Some(number_u32(f[4], "the value size")?);
        }
        n => return Err(RecordError::KeyFields(n)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec() -> Record {
        let mut r = Record::default();
        r.clear();
        r
    }

    #[test]
    fn twitter_lines_are_read_with_their_key_cut_or_padded() {
        let mut r = rec();
        twitter(b"12,nz:u:abc,8,455,3,get,0\n", &mut r).unwrap();
        assert_eq!(r.key, b"nz:u:abc");
        assert_eq!((r.time_s, r.value_len, r.client), (Some(12), Some(455), 3));
        assert_eq!((r.op, r.hits), (TraceOp::Op(OpKind::Get), Some(1)));
        let mut r = rec();
        twitter(b"1,abcdef,4,0,1,get,0", &mut r).unwrap();
        assert_eq!((r.key.as_slice(), r.hits), (&b"abcd"[..], Some(0)));
        let mut r = rec();
        twitter(b"1,ab,5,10,1,set,60\r\n", &mut r).unwrap();
        assert_eq!((r.key.as_slice(), r.ttl), (&b"ab___"[..], 60));
        assert_eq!(r.hits, None);
    }

    #[test]
    fn malformed_lines_say_why() {
        let mut r = rec();
        let e = twitter(b"1,ab,5,10,1,set", &mut r).unwrap_err();
        assert!(e.to_string().contains("7 comma-separated fields"), "{e}");
        let e = twitter(b"1,ab,5,ten,1,set,0", &mut r.clone()).unwrap_err();
        assert!(e.to_string().contains("value size"), "{e}");
        let e = twitter(b"1,a b,5,1,1,set,0", &mut rec()).unwrap_err();
        assert!(e.to_string().contains("0x20"), "{e}");
        let e = twitter(b"1,ab,5,1,1,frob,0", &mut rec()).unwrap_err();
        assert!(e.to_string().contains("frob"), "{e}");
    }

    #[test]
    fn meta_kv_both_years() {
        let mut r = rec();
        meta_kv(b"k1,GET,100,3,6", &mut r).unwrap();
        assert_eq!((r.key.as_slice(), r.repeat), (&b"k1____"[..], 3));
        assert_eq!((r.value_len, r.time_s, r.hits), (Some(100), None, None));
        let mut r = rec();
        meta_kv(b"17,k2,2,GET_LEASE,4,50,3,600,u,s", &mut r).unwrap();
        assert_eq!((r.time_s, r.repeat, r.hits), (Some(17), 4, Some(3)));
        assert!(meta_header(b"key,op,size,op_count,key_size"));
        assert!(meta_header(
            b"op_time,key,key_size,op,op_count,size,cache_hits,ttl,usecase,sub_usecase"
        ));
        assert!(!meta_header(b"k1,GET,100,3,6"));
    }

    #[test]
    fn key_files_in_each_form() {
        let mut r = rec();
        keys(b"alpha", &mut r).unwrap();
        assert_eq!((r.op, r.value_len), (TraceOp::Mix, None));
        let mut r = rec();
        keys(b"alpha,300", &mut r).unwrap();
        assert_eq!(r.value_len, Some(300));
        let mut r = rec();
        keys(b"5,2,2,beta,70", &mut r).unwrap();
        assert_eq!(
            (r.op, r.key.as_slice()),
            (TraceOp::Op(OpKind::Set), &b"beta"[..])
        );
        assert!(keys(b"5,2,7,beta,70", &mut rec()).is_err());
        assert!(keys(b"a,b,c", &mut rec()).is_err());
    }
}
