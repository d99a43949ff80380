//! Whether a URI would carry a secret in clear: the signed assertion POSTed to a key file's
//! `token_uri`, the bearer token sent with every call to `--cloud-endpoint`. `https://` goes
//! anywhere; `http://` only to a loopback host, where the bytes never leave the machine (the local
//! stand-ins that tests and developers run). A loopback host is an IP address in 127.0.0.0/8,
//! `::1` (or `::ffff:127.x.y.z`), or the name `localhost` itself. A name is judged as written,
//! never resolved and never by its prefix: `localhost.example.com` and `127.0.0.1.nip.io` are
//! names anyone can point anywhere, so they are not loopback.

use std::net::IpAddr;

use hyper::Uri;

/// The hosts taken as loopback, in words, for errors.
pub const LOOPBACK_HOSTS: &str = "127.0.0.1, ::1 or localhost";

/// How a URI would carry what is sent to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carriage {
    /// `https://`: encrypted.
    Tls,
    /// `http://` to a loopback host: in clear, but never off the machine.
    Loopback,
    /// `http://` to any other host: in clear across the network.
    Clear,
    /// Not an `http://` or `https://` URI with a host.
    NotHttp,
}

impl Carriage {
    /// Whether a secret may be sent this way: over TLS, or in clear to a loopback host.
    pub fn may_carry_secrets(self) -> bool {
        matches!(self, Carriage::Tls | Carriage::Loopback)
    }
}

/// How `uri` would carry what is sent to it. The host is the one an HTTP client connects to
/// (after any `user@`), read as `hyper` reads it, the scheme case-insensitively.
pub fn carriage(uri: &str) -> Carriage {
    let Ok(uri) = uri.parse::<Uri>() else {
        return Carriage::NotHttp;
    };
    let Some(host) = uri.host().filter(|h| !h.is_empty()) else {
        return Carriage::NotHttp;
    };
    match uri.scheme_str() {
        Some("https") => Carriage::Tls,
        Some("http") if is_loopback(host) => Carriage::Loopback,
        Some("http") => Carriage::Clear,
        _ => Carriage::NotHttp,
    }
}

/// Whether `host` (a URI's host, an IPv6 address with or without its brackets) is a loopback
/// address, or the name `localhost`.
pub fn is_loopback(host: &str) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    match bare.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.is_loopback(),
        Ok(IpAddr::V6(v6)) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => bare.eq_ignore_ascii_case("localhost"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_carries_secrets_only_to_a_loopback_host() {
        for uri in [
            "https://oauth2.googleapis.com/token",
            "HTTPS://spanner.googleapis.com",
            "https://10.0.0.1:8443/token",
        ] {
            assert_eq!(carriage(uri), Carriage::Tls, "{uri}");
        }
        for uri in [
            "http://127.0.0.1:8080/token",
            "http://127.1.2.3:1",
            "http://[::1]:9010",
            "http://[::ffff:127.0.0.1]:9010",
            "http://localhost:9010/token",
            "HTTP://LocalHost:1",
        ] {
            assert_eq!(carriage(uri), Carriage::Loopback, "{uri}");
        }
        for uri in [
            "http://oauth2.googleapis.com/token",
            "http://10.0.0.1:8080/token",
            "http://[::2]:1",
            "http://0.0.0.0:1",
            "http://localhost.evil.com/token",
            "http://localhost.:1",
            "http://127.0.0.1.nip.io:8080/token",
            "http://127.0.0.1@evil.com:80/token",
            "http://2130706433:80",
            "http://127.1:80",
            "http://sub.localhost:1",
        ] {
            assert_eq!(carriage(uri), Carriage::Clear, "{uri}");
        }
        for uri in [
            "",
            "x",
            "127.0.0.1:9010",
            "ftp://127.0.0.1/t",
            "/token",
            "http:///t",
        ] {
            assert_eq!(carriage(uri), Carriage::NotHttp, "{uri}");
        }
    }
}
