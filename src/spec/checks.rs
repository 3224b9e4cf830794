//! The checks of `RunSpec::validate` that bound what the machine must
//! hold: servers as written, sizes, threads, descriptors, the key space
//! per server. Run before anything starts, so a run that cannot be done is
//! a usage error (exit 2), never a failure half-way.

use super::SpecError;

use super::RunSpec;

/// The longest `--label`, in characters: a legend's width.
pub const MAX_LABEL: usize = 64;

/// The shortest of each timeout.
const MIN_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(1);
/// Worker threads at most: each holds ~7 MB of recorders.
pub const MAX_THREADS: usize = 256;
/// The largest value memcached can store (`-I` up to 1 GiB).
pub const MAX_VALUE_SIZE: usize = 1 << 30;
/// Keys at most: ids up to twice the key space (planned misses) must fit
/// a u64 with room to spare.
pub const MAX_KEYS: u64 = 1 << 62;

impl RunSpec {
    pub(super) fn validate_bounds(&self) -> Result<(), SpecError> {
        if self.load.threads > MAX_THREADS {
            return Err(SpecError::at_most(
                "--threads",
                MAX_THREADS,
                self.load.threads,
            ));
        }
        if self.key_space.max_value_size == 0 || self.key_space.max_value_size > MAX_VALUE_SIZE {
            return Err(SpecError::Invalid(format!(
                "--max-value-size must be between 1 byte and 1 GiB (memcached's largest -I), got {}",
                self.key_space.max_value_size
            )));
        }
        if self.key_space.keys > MAX_KEYS {
            return Err(SpecError::at_most("--keys", "2^62", self.key_space.keys));
        }
        // Below a millisecond a connect on loopback already times out:
        // every server would look unreachable.
        let timeouts = [
            ("--request-timeout", self.load.timeout),
            ("--connect-timeout", self.connect_timeout()),
            ("--drain-timeout", self.drain_timeout()),
        ];
        if let Some((flag, t)) = timeouts.iter().find(|(_, t)| *t < MIN_TIMEOUT) {
            return Err(SpecError::Invalid(format!(
                "{flag} (or --timeout) must be at least 1 ms (below it every connect and answer times out), got {t:?}"
            )));
        }
        Ok(())
    }

    /// How long a connect, and the exchanges that open a connection
    /// (authentication), may take.
    pub fn connect_timeout(&self) -> std::time::Duration {
        self.load.connect_timeout.unwrap_or(self.load.timeout)
    }

    /// How long answers in flight are waited for once sending stops.
    pub fn drain_timeout(&self) -> std::time::Duration {
        self.load.drain_timeout.unwrap_or(self.load.timeout)
    }

    /// The longest any one step may wait on a server: what a watcher of
    /// the run (the master of agents) allows beyond its schedule.
    pub fn longest_timeout(&self) -> std::time::Duration {
        self.load
            .timeout
            .max(self.connect_timeout())
            .max(self.drain_timeout())
    }

    /// File descriptors the run needs, and those a connection schedule may
    /// want on top (it may hold up to all its connections at once when
    /// calls are slower than openings; past what the hard limit allows, a
    /// failed socket() is counted as `fd-unavail`, as twemperf counts it).
    /// Needed: one per connection, one epoll per worker, the embedded
    /// memcached's (it inherits this process's limit), and headroom for
    /// stdio, the output files, the embedded server's pipes.
    pub fn fds_needed(&self) -> (u64, u64) {
        let nservers = self.target.servers.len().max(1);
        let total_conns = self.total_connections(nservers);
        let measure = self.measure.map_or(0, |m| m.connections * nservers + 1);
        let mut needed = (total_conns + measure + self.load.threads + 64) as u64;
        if self.target.servers.is_empty() {
            needed = needed.max(crate::embedded::max_conns(self.load.connections) as u64 + 64);
        }
        (needed, self.churn().map_or(0, |c| c.conns))
    }

    /// What the run needs of each server: connections for every thread,
    /// a key on every server.
    pub(super) fn validate_resources(&self) -> Result<(), SpecError> {
        let nservers = self.target.servers.len().max(1);
        let total_conns = self.total_connections(nservers);
        if self.load.connections * nservers < self.load.threads {
            return Err(SpecError::Invalid(format!(
                "--threads {} needs at least as many connections, but the run has {total_conns} \
                 ({} per server × {nservers} server(s))",
                self.load.threads, self.load.connections
            )));
        }
        // Sizes and prefix against the key count (placement is not needed).
        self.key_space(crate::placement::Router::Single)?;
        Ok(())
    }

    /// What this host must allow to make the run itself: its file
    /// descriptors. Read only: the limit is raised where the run starts
    /// (`os::claim_fds`).
    pub fn validate_host(&self) -> Result<(), SpecError> {
        Ok(crate::os::fd_limit_allows(self.fds_needed().0)?)
    }

    /// What reports show of a saved result's spec, checked as a run
    /// checks it (a result file is untrusted): its label and its SLO.
    pub fn validate_reported(&self) -> Result<(), SpecError> {
        self.validate_label()?;
        self.validate_decide()
    }

    /// `--label`: printable, one line, 1 to `MAX_LABEL` characters (a
    /// saved result's is checked again when read).
    pub(super) fn validate_label(&self) -> Result<(), SpecError> {
        let Some(label) = &self.recording.label else {
            return Ok(());
        };
        if label.trim().is_empty() || label.chars().count() > MAX_LABEL {
            return Err(SpecError::Invalid(format!(
                "--label takes 1 to {MAX_LABEL} characters; got {:?}",
                label
            )));
        }
        if label.chars().any(char::is_control) {
            return Err(SpecError::Invalid(format!(
                "--label is one printable line; got {label:?}"
            )));
        }
        Ok(())
    }
}
