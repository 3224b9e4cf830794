//! A reply whose value is longer than the caller's `Expect::max_value` is
//! refused from its header, in every protocol, before its bytes are
//! awaited; one within the limit parses.

use mcbench_proto::{Cmd, ParseError, Progress, Protocol, Request};

fn parse(p: Protocol, wire: &[u8], max: u32) -> Result<Option<usize>, ParseError> {
    let expect = Request::new(Cmd::Get, b"k").expect().with_max_value(max);
    p.parse(wire, &mut Progress::default(), expect, &[])
        .map(|r| r.map(|(_, used)| used))
}

/// A binary GET response header with a `value`-byte value (4 bytes of
/// extras), and no body yet.
fn binary_header(value: u32) -> Vec<u8> {
    let mut h = vec![0x81, 0x00, 0, 0, 4, 0, 0, 0];
    h.extend_from_slice(&(value + 4).to_be_bytes());
    h.extend_from_slice(&[0; 12]);
    h
}

#[test]
fn every_protocol_refuses_a_value_beyond_the_limit_from_its_header() {
    let cases: [(Protocol, Vec<u8>); 4] = [
        (Protocol::Ascii, b"VALUE k 0 2000\r\n".to_vec()),
        (Protocol::Meta, b"VA 2000\r\n".to_vec()),
        (Protocol::Binary, binary_header(2000)),
        (Protocol::Resp, b"$2000\r\n".to_vec()),
    ];
    for (p, head) in cases {
        assert_eq!(
            parse(p, &head, 1999),
            Err(ParseError::ValueTooLong),
            "{p:?}"
        );
        // Within the limit, the same header waits for its value.
        assert_eq!(parse(p, &head, 2000), Ok(None), "{p:?}");
    }
}

#[test]
fn a_value_at_the_limit_parses() {
    let mut wire = b"VALUE k 0 3\r\nabc\r\nEND\r\n".to_vec();
    assert_eq!(parse(Protocol::Ascii, &wire, 3), Ok(Some(wire.len())));
    wire = b"$3\r\nabc\r\n".to_vec();
    assert_eq!(parse(Protocol::Resp, &wire, 3), Ok(Some(wire.len())));
}
