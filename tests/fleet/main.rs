//! Agents and a master: the fleet's runs, its merged results and its trust.
//!
//! One test binary for the area: it links once (see `.ci/run`).

#[path = "../support/mod.rs"]
mod support;

#[cfg(feature = "agents")]
mod agent_trust;
mod agents;
mod agents_netns;
mod telemetry;
