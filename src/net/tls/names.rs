//! TLS's facts in words: version names as memcached writes them, alerts
//! as RFC 8446 names them, and why a handshake failed.

/// `TLSv1_3` as OpenSSL and memcached write it, `TLSv1.3`.
pub(super) fn version_name(v: rustls::ProtocolVersion) -> String {
    format!("{v:?}").replace('_', ".")
}

/// Why a handshake or a record failed, in words, naming the alert;
/// `with_cert`: the client offered a certificate (`--tls-cert`).
pub fn describe(e: &rustls::Error, with_cert: bool) -> String {
    use rustls::{CertificateError, Error};
    match e {
        Error::AlertReceived(alert) if with_cert => format!(
            "the server refused the TLS handshake with the alert {} (the client certificate given, --tls-cert, is not one it trusts?)",
            alert_name(alert)
        ),
        Error::AlertReceived(alert) => format!(
            "the server refused the TLS handshake with the alert {} (a client certificate it wants? --tls-cert/--tls-key)",
            alert_name(alert)
        ),
        Error::InvalidCertificate(CertificateError::UnknownIssuer) => "the server's certificate is not signed by a certificate this client trusts (--tls-ca)".into(),
        Error::InvalidCertificate(CertificateError::NotValidForName)
        | Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. }) => format!(
            "the server's certificate is not valid for the name checked (--tls-server-name): {e}"
        ),
        Error::InvalidCertificate(_) if format!("{e:?}").contains("CaUsedAsEndEntity") => format!(
            "the server's certificate is a CA's (basicConstraints CA:TRUE, openssl req -x509's default): rustls takes a server's only with CA:FALSE, signed by the CA given to --tls-ca: {e}"
        ),
        Error::InvalidCertificate(_) => format!(
            "the server's certificate was refused (is it signed by a certificate this client trusts? --tls-ca): {e}"
        ),
        other => format!("TLS: {other}"),
    }
}

/// `CertificateRequired` → `certificate_required`, the alert's name in
/// RFC 8446.
pub fn alert_name(alert: &rustls::AlertDescription) -> String {
    let mut out = String::new();
    let mut after_lower = false;
    for ch in format!("{alert:?}").chars() {
        if ch.is_ascii_uppercase() && after_lower {
            out.push('_');
        }
        after_lower = ch.is_ascii_lowercase();
        out.push(ch.to_ascii_lowercase());
    }
    out
}
