//! The checks of what the wire can carry: the protocol's commands,
//! noreply's quiet forms, UDP's datagrams and memaslap's facebook test.

use super::SpecError;

use super::{LoadMode, RunSpec, Schedule, MAX_UDP_REQUEST};
use mcbench_proto::udp::HEADER_LEN as UDP_HEADER;
use mcbench_proto::Protocol;

impl RunSpec {
    /// `--noreply` must quiet some command the run measures: a text
    /// protocol `get` has no quiet form, so `--mix get=1 --noreply` would
    /// change nothing but the preload.
    fn validate_noreply(&self) -> Result<(), SpecError> {
        use crate::workload::OpKind;
        if !self.request.noreply {
            return Ok(());
        }
        let p = self.target.protocol;
        if p == Protocol::Resp {
            return Err(SpecError::Refused("--noreply: RESP has no quiet mode; drop it, or use --protocol ascii, meta or binary"));
        }
        let preload_only = |op: OpKind| {
            op == OpKind::Set
                && self.workload.mix.share_of(OpKind::Set) == 0.0
                && self.key_space.preload != LoadMode::LoadOnly
        };
        let quiet = self
            .ops_sent()
            .into_iter()
            .any(|op| !preload_only(op) && p.supports_noreply(op.cmd()));
        if !quiet {
            return Err(SpecError::Invalid(format!(
                "--noreply: no command the run measures has a quiet form in the {} protocol",
                p.name()
            )));
        }
        Ok(())
    }

    /// The protocol must carry every op the run can send.
    pub(super) fn validate_protocol(&self) -> Result<(), SpecError> {
        let p = self.target.protocol;
        for op in self.ops_sent() {
            if !p.supports(op.cmd()) {
                return Err(SpecError::Invalid(format!(
                    "--protocol {} has no '{}' command; ops it can send: {}",
                    p.name(),
                    op.name(),
                    crate::workload::OpKind::ALL
                        .iter()
                        .filter(|o| p.supports(o.cmd()) && **o != crate::workload::OpKind::Fill)
                        .map(|o| o.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        if self.target.servers.is_empty() && p == Protocol::Resp {
            return Err(SpecError::NeedsServer {
                flag: "--protocol resp",
                why: "the embedded server is memcached",
            });
        }
        if self.request.meta_flags.is_some() && p != Protocol::Meta {
            return Err(SpecError::Invalid(format!(
                "--meta-flags are for --protocol meta, not {}",
                p.name()
            )));
        }
        let (_, key_max) = self.key_space.key_size.support();
        if self.meta_options()?.base64_keys && key_max > 186.0 {
            return Err(SpecError::Refused(
                "--meta-flags b: a base64 key must fit memcached's 250 bytes, so keys of at most \
                 186 bytes (see --key-size)",
            ));
        }
        self.validate_noreply()?;
        if crate::spec::ServerAddr::first_udp(&self.target.servers).is_some() {
            self.validate_udp(true)?;
        }
        self.validate_facebook()?;
        if self.target.user.is_some() != self.target.password.is_some() {
            return Err(SpecError::Refused("--user and --password go together"));
        }
        if self.target.user.is_some() && self.target.servers.is_empty() {
            return Err(SpecError::Refused("--user/--password need --server: the embedded memcached runs without authentication"));
        }
        Ok(())
    }

    /// What memcached's UDP transport can carry: one request per datagram,
    /// text or binary, no authentication.
    /// Requests over UDP must fit a datagram; `stores` says whether
    /// storage commands go over UDP too (not with `--facebook`).
    fn validate_udp(&self, stores: bool) -> Result<(), SpecError> {
        if self.target.protocol == Protocol::Resp {
            return Err(SpecError::Refused("RESP does not run over UDP"));
        }
        if self.target.user.is_some() {
            return Err(SpecError::Refused(
                "memcached has no authentication over UDP",
            ));
        }
        // The largest requests the run can send, measured by encoding them:
        // every protocol frames them differently.
        let ops = self.ops_sent();
        let (_, key_max) = self.key_space.key_size.support();
        let key = vec![b'k'; key_max.min(250.0) as usize];
        if ops.contains(&crate::workload::OpKind::Mget) {
            let keys = vec![key.as_slice(); self.workload.multiget.keys as usize].join(&b' ');
            let size = self.largest_udp_request(mcbench_proto::Request::new(
                mcbench_proto::Cmd::Gats,
                &keys,
            ))?;
            if size > MAX_UDP_REQUEST {
                return Err(SpecError::Invalid(format!(
                    "over UDP a request must fit one {MAX_UDP_REQUEST}-byte datagram, but a \
                     multiget of {} keys of up to {} bytes takes {size} \
                     (--multiget or --getq-size set the keys)",
                    self.workload.multiget.keys,
                    key.len()
                )));
            }
        }
        if stores && ops.iter().any(|op| op.writes()) {
            let value = vec![b'0'; self.max_value_len()];
            let store = mcbench_proto::Request {
                value: &value,
                ..mcbench_proto::Request::new(mcbench_proto::Cmd::Cas, &key)
            };
            let size = self.largest_udp_request(store)?;
            if size > MAX_UDP_REQUEST {
                return Err(SpecError::Invalid(format!(
                    "over UDP a request must fit one {MAX_UDP_REQUEST}-byte datagram, but a \
                     store of a {}-byte value under a {}-byte key takes {size} (see --value-size)",
                    value.len(),
                    key.len()
                )));
            }
        }
        Ok(())
    }

    /// The meta flags, parsed.
    pub fn meta_options(&self) -> Result<mcbench_proto::meta::Options, SpecError> {
        self.request
            .meta_flags
            .as_deref()
            .map_or(Ok(Default::default()), |flags| {
                flags
                    .parse()
                    .map_err(|e| SpecError::Invalid(format!("--meta-flags: {e}")))
            })
    }

    /// The bytes of `req` as one UDP datagram of this run, with every
    /// number at its widest.
    fn largest_udp_request(&self, req: mcbench_proto::Request) -> Result<usize, SpecError> {
        let req = mcbench_proto::Request {
            flags: u32::MAX,
            exptime: u32::MAX,
            cas: u64::MAX,
            delta: u64::MAX,
            opaque: u32::MAX,
            noreply: self.request.noreply,
            ..req
        };
        let mut out = Vec::new();
        self.target
            .protocol
            .encode_with(&mut out, &req, self.meta_options()?);
        Ok(UDP_HEADER + out.len())
    }

    /// memaslap's facebook test: retrievals over UDP, the rest over TCP,
    /// one closed-loop group of sockets per connection.
    fn validate_facebook(&self) -> Result<(), SpecError> {
        if !self.conns.facebook {
            return if self.conns.conn_sock == 1 {
                Ok(())
            } else {
                Err(SpecError::Refused("--conn-sock sets the TCP connections of each --facebook connection: give --facebook"))
            };
        }
        if self.conns.conn_sock == 0 || self.conns.conn_sock > 10_000 {
            return Err(SpecError::between(
                "--conn-sock",
                1,
                10000,
                self.conns.conn_sock,
            ));
        }
        if self.target.servers.is_empty() {
            return Err(SpecError::NeedsServer {
                flag: "--facebook",
                why: "the embedded memcached listens on TCP only",
            });
        }
        if let Some(s) = self.target.servers.iter().find(|s| !s.is_tcp()) {
            return Err(SpecError::Invalid(format!("--facebook reaches each server over both TCP and UDP at HOST:PORT; '{s}' names one transport")));
        }
        let refuse = |what: &str| {
            Err(SpecError::NotWith {
                flag: "--facebook",
                what: what.to_string(),
            })
        };
        match self.load.schedule {
            Schedule::Closed => {}
            Schedule::Open(_) => {
                return refuse(
                    "--rate: it runs each group of sockets closed loop, as memaslap does",
                )
            }
            Schedule::Churn(_) => return refuse("--num-conns"),
        }
        if self.conns.reconnect {
            return refuse("--reconnect: a group that lost its sockets is done");
        }
        self.validate_udp(false)
    }
}
