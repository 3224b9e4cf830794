//! `mcbench route`: the server each key goes to under a distribution, for
//! checking a placement against a client library or a proxy.

use super::AppError;
use crate::cli::RouteArgs;
use crate::error::exit;
use crate::placement::{Router, Scheme};
use crate::spec::servers;
use std::io::{BufRead, Write};

pub fn route(args: &RouteArgs) -> i32 {
    let (router, names) = match build(args) {
        Ok(built) => built,
        Err(e) => {
            crate::stderr_line!("mcbench: error: {e}");
            return exit::USAGE;
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut place = |key: &[u8]| {
        let s = router.server_of(key);
        out.write_all(key)
            .and_then(|()| writeln!(out, "\t{s}\t{}", names[s]))
    };
    let written = if args.keys.is_empty() {
        std::io::stdin().lock().split(b'\n').try_for_each(|line| {
            let mut key = line?;
            if key.last() == Some(&b'\r') {
                key.pop();
            }
            place(&key)
        })
    } else {
        args.keys.iter().try_for_each(|k| place(k.as_bytes()))
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            crate::stderr_line!("mcbench: error: {e}");
            exit::FAILED
        }
    }
}

/// The router and the servers' addresses, from the flags.
fn build(args: &RouteArgs) -> Result<(Router, Vec<String>), AppError> {
    let scheme = Scheme::parse(&args.distribution, args.hash)?;
    if !scheme.places_keys() {
        return Err(AppError::NoPlacement);
    }
    let (addrs, weights) = servers::expand(&args.servers)?;
    servers::check_weights(&weights, scheme)?;
    let router = Router::new(scheme, &servers::placement_list(&addrs, &weights));
    Ok((router, addrs.iter().map(ToString::to_string).collect()))
}
