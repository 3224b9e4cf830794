//! What every response parser promises, checked on arbitrary bytes by the
//! fuzz targets: no panic; a reply's length is judged against the bytes
//! there are (never trusted); and a parse resumed after a partial read
//! gives what one parse of the whole gives.

use mcbench_proto::{Cmd, Expect, ParseError, Progress, Protocol, Response};

type Parsed = Result<Option<(Response, usize)>, ParseError>;

/// An `Expect` drawn from the first 4 bytes (command, keys, quiet, opaque,
/// value limit, hash field): every shape of request the engine sends.
pub fn expect_from(head: &[u8; 4]) -> Expect {
    let cmd = Cmd::ALL[usize::from(head[0]) % Cmd::ALL.len()];
    let keys = u32::from(head[1] % 5).max(1);
    let max_value = match head[3] & 3 {
        0 => u32::MAX,
        1 => 0,
        2 => 8,
        _ => 4096,
    };
    let mut e = mcbench_proto::Request::new(cmd, b"k").expect();
    e.keys = if cmd.is_retrieval() { keys } else { 1 };
    e.noreply = head[2] & 1 == 1;
    // A text quiet request sent without its own fence.
    e.unfenced = e.noreply && head[3] & 16 != 0;
    e.opaque = u32::from(head[2] >> 1);
    // RESP: a get or set sent to a hash field (`--assoc`).
    e.hash = head[3] & 4 != 0;
    e.with_max_value(max_value)
}

/// The keys a request of `expect` asked for (`k0`, `k1`, ...), or none
/// given (unchecked) when `head`'s bit 3 says so.
pub fn asked_for(expect: Expect, head: u8) -> &'static [u8] {
    const KEYS: &[u8] = b"k0 k1 k2 k3";
    if head & 8 != 0 {
        return &[];
    }
    let n = expect.keys.clamp(1, 4) as usize;
    &KEYS[..3 * n - 1]
}

/// The parser's promises for `protocol` on `data`: first 4 bytes pick the
/// request, the 5th where a read is cut, the rest is the server's stream.
pub fn check_responses(protocol: Protocol, data: &[u8]) {
    let Some((head, rest)) = data.split_first_chunk::<5>() else {
        return;
    };
    let expect = expect_from(&[head[0], head[1], head[2], head[3]]);
    let asked = asked_for(expect, head[3]);
    let whole = protocol.parse(rest, &mut Progress::default(), expect, asked);
    judge_lengths(&whole, rest.len(), expect);
    // The same reply, read in two pieces.
    let cut = usize::from(head[4]).min(rest.len());
    let mut progress = Progress::default();
    let first = protocol.parse(&rest[..cut], &mut progress, expect, asked);
    judge_lengths(&first, cut, expect);
    match first {
        Ok(None) => {
            let resumed = protocol.parse(rest, &mut progress, expect, asked);
            assert_eq!(resumed, whole, "{protocol:?}: a resumed parse differs");
        }
        Ok(Some(done)) => assert_eq!(
            Ok(Some(done)),
            whole,
            "{protocol:?}: a prefix's reply differs"
        ),
        Err(_) => assert!(
            whole.is_err(),
            "{protocol:?}: a prefix fails, the whole does not"
        ),
    }
}

/// A reply takes bytes that are there, and at least one, but for an
/// unfenced quiet request's: the next reply tells it done, untaken.
fn judge_lengths(parsed: &Parsed, len: usize, expect: Expect) {
    if let Ok(Some((_, used))) = parsed {
        let least = usize::from(!expect.unfenced);
        assert!(*used >= least && *used <= len, "used {used} of {len} bytes");
    }
}
