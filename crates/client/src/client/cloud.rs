//! Cloud Spanner as a target: the database's name, a channel (TLS for `https`, plaintext for
//! `http` to a loopback host only, so tests can stand in a local server), and the names of the
//! headers every request carries ([`CallHeaders::cloud`](super::CallHeaders::cloud) attaches
//! them).

use std::fmt::Write as _;
use std::path::PathBuf;

use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

use super::auth::in_clear::{Carriage, LOOPBACK_HOSTS, carriage};
use super::auth::{AuthError, Credentials, TokenSource};
use super::{CONNECTION_WINDOW, STREAM_WINDOW};

/// Cloud Spanner's public endpoint.
pub const DEFAULT_ENDPOINT: &str = "https://spanner.googleapis.com";

/// The header naming the database a request is for.
pub const RESOURCE_PREFIX_HEADER: &str = "google-cloud-resource-prefix";
/// Spanner's routing header: `database=<url-encoded database name>`.
pub const REQUEST_PARAMS_HEADER: &str = "x-goog-request-params";

/// A Cloud Spanner database and how to reach and authenticate to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudTarget {
    /// The project ID.
    pub project: String,
    /// The instance ID.
    pub instance: String,
    /// The database ID.
    pub database: String,
    /// `https://host[:port]` (TLS) or `http://host:port` (plaintext, to a loopback host only);
    /// default [`DEFAULT_ENDPOINT`].
    pub endpoint: String,
    /// Where tokens come from.
    pub credentials: Credentials,
    /// A PEM file of certificates to trust besides the system's and Mozilla's roots for an
    /// `https` endpoint (`--cloud-ca`): a local TLS stand-in's self-signed certificate, or a
    /// proxy's CA.
    pub ca_file: Option<PathBuf>,
}

/// The largest certificate file read for [`CloudTarget::ca_file`].
pub const MAX_CA_FILE_BYTES: u64 = 1 << 20;

/// Why a Cloud target could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CloudError {
    /// The endpoint is not an `http` or `https` URI.
    #[error("the endpoint {endpoint:?} is not an http:// or https:// URI")]
    BadEndpoint {
        /// The endpoint as given.
        endpoint: String,
    },
    /// The endpoint is `http://` to a host that is not loopback: every call's bearer token would
    /// cross the network in clear.
    #[error(
        "the Cloud Spanner endpoint {endpoint} (--cloud-endpoint) is http:// to a host that is not \
         loopback: every call's access token would cross the network in clear. It must be \
         https://, except to a loopback host ({LOOPBACK_HOSTS})"
    )]
    EndpointInClear {
        /// The endpoint as given.
        endpoint: String,
    },
    /// The extra certificate file could not be read.
    #[error("cannot read the certificates {path} (--cloud-ca): {reason}")]
    CaFile {
        /// The file.
        path: PathBuf,
        /// Why not.
        reason: String,
    },
    /// The channel could not be set up or connected.
    #[error("cannot connect to {endpoint}: {source}")]
    Connect {
        /// The endpoint as given.
        endpoint: String,
        /// What the transport said.
        source: tonic::transport::Error,
    },
}

impl CloudTarget {
    /// A target at the default endpoint with application-default credentials.
    pub fn new(
        project: impl Into<String>,
        instance: impl Into<String>,
        database: impl Into<String>,
    ) -> Self {
        CloudTarget {
            project: project.into(),
            instance: instance.into(),
            database: database.into(),
            endpoint: DEFAULT_ENDPOINT.to_owned(),
            credentials: Credentials::ApplicationDefault,
            ca_file: None,
        }
    }

    /// `projects/P/instances/I/databases/D`.
    pub fn database_name(&self) -> String {
        super::names::database_name(&self.project, &self.instance, &self.database)
    }

    /// A token source for this target's credentials (reads and checks a key file now), each of
    /// its fetches held to `limit` (the call limit).
    pub fn token_source(&self, limit: std::time::Duration) -> Result<TokenSource, AuthError> {
        Ok(TokenSource::new(self.credentials.clone())?.within(limit))
    }

    /// Whether the endpoint may carry this target's tokens: `https://`, or `http://` to a loopback
    /// host only (see [`in_clear`](super::auth::in_clear)). Checked before a token is fetched
    /// for it and again when it is connected to.
    pub fn check_endpoint(&self) -> Result<(), CloudError> {
        let endpoint = self.endpoint.clone();
        match carriage(&self.endpoint) {
            Carriage::Tls | Carriage::Loopback => Ok(()),
            Carriage::Clear => Err(CloudError::EndpointInClear { endpoint }),
            Carriage::NotHttp => Err(CloudError::BadEndpoint { endpoint }),
        }
    }

    /// Connects to the endpoint: TLS with the system's and Mozilla's roots (and the certificates
    /// of [`CloudTarget::ca_file`]) for `https`, plaintext for `http` to a loopback host.
    pub async fn connect(&self) -> Result<Channel, CloudError> {
        self.check_endpoint()?;
        let endpoint = &self.endpoint;
        let connect_error = |source| CloudError::Connect {
            endpoint: endpoint.clone(),
            source,
        };
        let mut builder = Endpoint::from_shared(endpoint.clone())
            .map_err(connect_error)?
            .initial_stream_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .http2_max_header_list_size(super::MAX_RESPONSE_HEADER_BYTES)
            .tcp_nodelay(true);
        match builder.uri().scheme_str() {
            Some("https") => {
                let mut tls = ClientTlsConfig::new().with_enabled_roots();
                if let Some(path) = &self.ca_file {
                    tls = tls.ca_certificate(read_certificates(path)?);
                }
                builder = builder.tls_config(tls).map_err(connect_error)?;
            }
            Some("http") => {}
            _ => {
                return Err(CloudError::BadEndpoint {
                    endpoint: endpoint.clone(),
                });
            }
        }
        builder.connect().await.map_err(connect_error)
    }
}

/// The PEM certificates in `path`, read whole (at most [`MAX_CA_FILE_BYTES`]).
fn read_certificates(path: &std::path::Path) -> Result<Certificate, CloudError> {
    let error = |reason: String| CloudError::CaFile {
        path: path.to_owned(),
        reason,
    };
    // A regular file only, never blocking on a FIFO, read up to the bound.
    let bytes =
        crate::files::read_regular(path, MAX_CA_FILE_BYTES).map_err(|e| error(e.to_string()))?;
    if !bytes.windows(11).any(|w| w == b"-----BEGIN ") {
        return Err(error(
            "it holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
        ));
    }
    Ok(Certificate::from_pem(bytes))
}

/// Percent-encodes everything but RFC 3986's unreserved characters (as Go's `url.QueryEscape`
/// does for these names: `/` becomes `%2F`).
pub fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_url_encoded_for_the_routing_header() {
        let target = CloudTarget::new("p-1", "i", "d");
        assert_eq!(
            target.database_name(),
            "projects/p-1/instances/i/databases/d"
        );
        assert_eq!(
            url_encode(&target.database_name()),
            "projects%2Fp-1%2Finstances%2Fi%2Fdatabases%2Fd"
        );
        assert_eq!(url_encode("a b~c"), "a%20b~c");
    }
}
