//! Load from several machines: `mcbench agent` serves the gRPC API of
//! `proto/mcbench/agent/v1/agent.proto`, and `mcbench run --agent ...`
//! (the master) hands each agent its share of one run, starts them at one
//! instant and merges their histograms exactly.
//!
//! Not here: measuring (each agent runs the same engine as `mcbench run`)
//! and the merge's maths (`result::merge`).

mod collect;
mod door;
mod error;
mod live;
mod master;
mod policy;
mod server;
mod share;
mod tls;
mod token;
mod vet;
mod wire;

pub use error::{AgentDataError, AgentError};
pub use master::{run_with_agents, AgentLoss, Control};
pub use policy::Limits;
pub use server::{serve, Serve};

/// The API's generated types and stubs.
#[allow(clippy::all, clippy::pedantic)]
pub mod pb {
    tonic::include_proto!("mcbench.agent.v1");
}

/// Bumped when master and agent would no longer understand each other;
/// a master refuses agents of another version before any traffic.
/// 3: the spec carries `stamp_sample`, which an agent of 2 would ignore.
pub const PROTOCOL_VERSION: u32 = 3;

/// The wall clock, ns since the Unix epoch: the clock start instants and
/// offsets are in (0 before 1970).
fn unix_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// The port agents listen on unless told otherwise (mutilate's 5556).
pub const DEFAULT_PORT: u16 = 5556;

/// A tokio runtime for the control plane: two threads, whatever the
/// machine, so that the engine's own threads keep their cores.
fn runtime() -> Result<tokio::runtime::Runtime, AgentError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("mcbench-grpc")
        .build()
        .map_err(AgentError::Runtime)
}
