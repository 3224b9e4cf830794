//! The run's TLS session cache, and whether the ClientHello being made
//! offered a session to resume (a server may refuse a resumed handshake:
//! memcached does under client verification).

use rustls::pki_types::ServerName;

/// `make()`'s value (a `ClientConnection::new`, which makes the
/// ClientHello on this thread), and whether that ClientHello offered a
/// session from `Sessions`.
pub(super) fn offered<T>(make: impl FnOnce() -> T) -> (T, bool) {
    OFFERED.set(false);
    let made = make();
    (made, OFFERED.replace(false))
}

thread_local! {
    /// Set by `Sessions` when the ClientHello being made on this thread
    /// offers a session (rustls makes it inside `ClientConnection::new`,
    /// and says nowhere else whether it offered one).
    static OFFERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The run's session cache (rustls's own, 256 server names), noting
/// each session it hands out to resume.
#[derive(Debug)]
pub(super) struct Sessions(rustls::client::ClientSessionMemoryCache);

impl Default for Sessions {
    fn default() -> Self {
        Sessions(rustls::client::ClientSessionMemoryCache::new(256))
    }
}

impl rustls::client::ClientSessionStore for Sessions {
    fn set_kx_hint(&self, name: ServerName<'static>, group: rustls::NamedGroup) {
        self.0.set_kx_hint(name, group)
    }
    fn kx_hint(&self, name: &ServerName<'_>) -> Option<rustls::NamedGroup> {
        self.0.kx_hint(name)
    }
    fn set_tls12_session(
        &self,
        name: ServerName<'static>,
        value: rustls::client::Tls12ClientSessionValue,
    ) {
        self.0.set_tls12_session(name, value)
    }
    fn tls12_session(
        &self,
        name: &ServerName<'_>,
    ) -> Option<rustls::client::Tls12ClientSessionValue> {
        let session = self.0.tls12_session(name);
        OFFERED.set(OFFERED.get() || session.is_some());
        session
    }
    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.0.remove_tls12_session(name)
    }
    fn insert_tls13_ticket(
        &self,
        name: ServerName<'static>,
        value: rustls::client::Tls13ClientSessionValue,
    ) {
        self.0.insert_tls13_ticket(name, value)
    }
    fn take_tls13_ticket(
        &self,
        name: &ServerName<'static>,
    ) -> Option<rustls::client::Tls13ClientSessionValue> {
        let ticket = self.0.take_tls13_ticket(name);
        OFFERED.set(OFFERED.get() || ticket.is_some());
        ticket
    }
}
