//! `mcbench run`'s flags under "Agents".

use clap::Args;
use std::path::PathBuf;

/// Agents (`mcbench agent`) that take a share of the load.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Agents")]
pub struct FleetArgs {
    /// An agent (`mcbench agent`) to offer a share of the load from, HOST:PORT;
    /// repeat for several.
    ///
    /// Each gets its share of connections, rate, requests and keys; their
    /// histograms are merged exactly.
    #[arg(long = "agent", value_name = "HOST:PORT")]
    pub agents: Vec<String>,

    /// The file holding the agents' shared token (its first line).
    #[arg(long, value_name = "FILE", requires = "agents")]
    pub token_file: Option<PathBuf>,

    /// When an agent drops out: fail the run, or continue with the others.
    ///
    /// When an agent drops out: fail the run (exit 1, what was measured
    /// kept), or continue with the others and say so.
    #[arg(
        long,
        value_enum,
        default_value = "fail",
        value_name = "fail|continue",
        requires = "agents"
    )]
    pub on_agent_loss: crate::agent::AgentLoss,

    /// Reach the agents over TLS, trusting this PEM certificate
    ///
    /// Reach the agents over TLS, trusting this certificate (PEM: the CA
    /// that signed the agents' certificates, or an agent's own). The
    /// cache's own TLS is --tls and --tls-ca.
    #[arg(long, value_name = "FILE", requires = "agents")]
    pub agent_tls_ca: Option<PathBuf>,

    /// The name the agents' certificates must carry (default: each
    /// --agent's HOST).
    #[arg(
        hide_short_help = true,
        long,
        value_name = "NAME",
        requires = "agent_tls_ca"
    )]
    pub agent_tls_domain: Option<String>,
}
