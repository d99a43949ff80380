//! Where a session goes: an endpoint (a plaintext `host:port`, such as the local instance the
//! engine started or the emulator, or Cloud Spanner), the database, and the query mode. Plain
//! data; resource names are spelled by [`names`](super::names). What runs behind an endpoint is
//! not the client's business: the engine starts the local instance and hands over its endpoint.

use super::cloud::CloudTarget;
use super::names::database_name;

/// Where a session connects.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A plaintext gRPC endpoint (`host:port`), such as the local instance or the Cloud Spanner
    /// emulator, with how it is described (`local instance HOST:PORT`, `endpoint HOST:PORT`).
    Plaintext {
        /// `host:port`.
        host_port: String,
        /// What runs there, in words.
        description: String,
    },
    /// Cloud Spanner: TLS, OAuth tokens, resource and routing headers.
    Cloud(CloudTarget),
}

impl Endpoint {
    /// The plaintext endpoint `host_port`, described as `endpoint HOST:PORT`.
    pub fn plaintext(host_port: impl Into<String>) -> Self {
        let host_port = host_port.into();
        Endpoint::Plaintext {
            description: format!("endpoint {host_port}"),
            host_port,
        }
    }

    /// The local instance listening at `host_port`, described as `local instance HOST:PORT`.
    pub fn local(host_port: impl Into<String>) -> Self {
        let host_port = host_port.into();
        Endpoint::Plaintext {
            description: format!("local instance {host_port}"),
            host_port,
        }
    }

    /// What runs there, in words (`local instance …`, `endpoint …`, `Cloud Spanner …`).
    pub fn description(&self) -> String {
        match self {
            Endpoint::Plaintext { description, .. } => description.clone(),
            Endpoint::Cloud(c) => format!("Cloud Spanner {}", c.endpoint),
        }
    }
}

/// Why a text is not a `host:port` ([`check_host_port`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not host:port: {why}")]
pub struct EndpointError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// Checks that `text` is a `host:port` a plaintext channel can be opened to: a host (a name, an
/// IPv4 address, or an IPv6 address in brackets) and a port from 1 to 65535. An out-of-range port
/// would otherwise be dropped by the URI parser, leaving the default port 80.
pub fn check_host_port(text: &str) -> Result<(), EndpointError> {
    let bad = |why: &'static str| {
        Err(EndpointError {
            text: text.to_owned(),
            why,
        })
    };
    let Some((host, port)) = text.rsplit_once(':') else {
        return bad("it has no port (write it like 127.0.0.1:9010)");
    };
    let host_ok = if let Some(inner) = host.strip_prefix('[') {
        inner
            .strip_suffix(']')
            .is_some_and(|v6| v6.parse::<std::net::Ipv6Addr>().is_ok())
    } else {
        !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_')
    };
    if !host_ok {
        return bad("the host is not a name or an address");
    }
    match port.parse::<u16>() {
        Ok(0) | Err(_) => bad("the port is not a number from 1 to 65535"),
        Ok(_) => Ok(()),
    }
}

/// The database a run reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabasePath {
    /// Project id.
    pub project: String,
    /// Instance id.
    pub instance: String,
    /// Database id.
    pub database: String,
}

impl DatabasePath {
    /// `projects/P/instances/I/databases/D`.
    pub fn name(&self) -> String {
        database_name(&self.project, &self.instance, &self.database)
    }
}

impl Default for DatabasePath {
    fn default() -> Self {
        DatabasePath {
            project: "test-project".into(),
            instance: "test-instance".into(),
            database: "test-db".into(),
        }
    }
}

pub use crate::kind::QueryMode;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::names::instance_name;

    #[test]
    fn only_a_host_and_a_port_in_range_make_an_endpoint() {
        for good in [
            "127.0.0.1:9010",
            "localhost:1",
            "[::1]:65535",
            "spanner-emu.local:9010",
        ] {
            assert_eq!(check_host_port(good), Ok(()), "{good}");
        }
        for bad in [
            "127.0.0.1:99999",
            "127.0.0.1:0",
            "127.0.0.1",
            ":9010",
            "127.0.0.1:",
            "::1:9010",
            "http://127.0.0.1:9010",
            "host name:1",
            "127.0.0.1:-1",
        ] {
            let error = check_host_port(bad).expect_err(bad).to_string();
            assert!(error.contains("is not host:port"), "{error}");
        }
    }

    #[test]
    fn resource_names_are_spelled_once() {
        let path = DatabasePath::default();
        assert_eq!(
            path.name(),
            "projects/test-project/instances/test-instance/databases/test-db"
        );
        assert_eq!(instance_name("p", "i"), "projects/p/instances/i");
        assert_eq!(
            Endpoint::plaintext("127.0.0.1:9010").description(),
            "endpoint 127.0.0.1:9010"
        );
        assert_eq!(
            Endpoint::local("127.0.0.1:9010").description(),
            "local instance 127.0.0.1:9010"
        );
    }
}
