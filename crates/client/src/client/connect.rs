//! A connection made step by step, each step timed: the name resolved (DNS), the TCP connection,
//! the TLS handshake (with ALPN `h2`, for `https`), then the HTTP/2 handshake, timed as the channel's
//! first ready (the preface and settings sent). tonic's own connector does the same work but hides
//! the steps; this one is handed to `Endpoint::connect_with_connector`, so the channel is tonic's
//! as everywhere else. A step that fails or outlives the connect timeout is named in the error.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};
use tonic::codegen::http::Uri;
use tonic::transport::{Channel, Endpoint};

use super::timeouts::Readable;
use super::{CONNECTION_WINDOW, STREAM_WINDOW};
use crate::report::{ColdStep, ColdSteps};

/// Why a timed connection could not be made.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConnectError {
    /// The endpoint is not `host:port` or an `http(s)://host[:port]` URI.
    #[error("cannot connect to {endpoint:?}: {why}")]
    BadEndpoint {
        /// The endpoint as given.
        endpoint: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The extra CA certificate file could not be used.
    #[error("the CA certificate file {}: {why}", path.display())]
    BadCa {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A step did not finish within the connect timeout.
    #[error("{endpoint}: {} did not finish within {}", step.describe(), Readable(*after))]
    TimedOut {
        /// The endpoint.
        endpoint: String,
        /// The step that was running.
        step: ColdStep,
        /// The limit.
        after: Duration,
    },
    /// A step failed.
    #[error("{endpoint}: {} failed: {reason}", step.describe())]
    Failed {
        /// The endpoint.
        endpoint: String,
        /// The step that failed.
        step: ColdStep,
        /// Why, on one line.
        reason: String,
    },
}

/// Where to connect and how: the host and port, and for TLS the client configuration (roots, ALPN
/// `h2`) and the name the certificate must carry. Made once per run; each [`Dialer::connect`] is a
/// new connection.
#[derive(Debug, Clone)]
pub struct Dialer {
    host: String,
    port: u16,
    tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
    endpoint: String,
}

impl Dialer {
    /// A dialer for `endpoint`: `host:port` or `http://host:port` (plaintext), or
    /// `https://host[:port]` (TLS, port 443 by default, trusting the system's roots, Mozilla's and
    /// the certificates in the PEM file `extra_ca`, when given).
    pub fn new(endpoint: &str, extra_ca: Option<&Path>) -> Result<Dialer, ConnectError> {
        let bad = |why| ConnectError::BadEndpoint {
            endpoint: endpoint.to_owned(),
            why,
        };
        let (tls, rest) = if let Some(rest) = endpoint.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = endpoint.strip_prefix("http://") {
            (false, rest)
        } else {
            (false, endpoint)
        };
        let authority = rest.trim_end_matches('/');
        if authority.is_empty() || authority.contains('/') {
            return Err(bad("it is not host:port or an http(s)://host[:port] URI"));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => (
                host,
                port.parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or_else(|| bad("the port is not a number from 1 to 65535"))?,
            ),
            _ if tls => (authority, 443),
            _ => return Err(bad("a plaintext endpoint needs a port")),
        };
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        if host.is_empty() {
            return Err(bad("it has no host"));
        }
        let tls = if tls {
            let name = ServerName::try_from(host.clone())
                .map_err(|_| bad("the host is not a DNS name or an IP address"))?;
            Some((Arc::new(client_config(extra_ca)?), name))
        } else {
            None
        };
        Ok(Dialer {
            host,
            port,
            tls,
            endpoint: endpoint.to_owned(),
        })
    }

    /// The endpoint as given.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Whether connections are TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// A new connection, each step timed, all of them within `within`.
    pub async fn connect(&self, within: Duration) -> Result<(Channel, ColdSteps), ConnectError> {
        let marks = Arc::new(Mutex::new(Marks::default()));
        let connector = StepConnector {
            dialer: self.clone(),
            marks: Arc::clone(&marks),
        };
        let scheme = if self.is_tls() { "https" } else { "http" };
        let authority = if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        };
        let bad = |_| ConnectError::BadEndpoint {
            endpoint: self.endpoint.clone(),
            why: "it does not make a URI",
        };
        // tonic sees a plaintext URI (the TLS is ours); requests carry the real scheme.
        let origin: Uri = format!("{scheme}://{authority}").parse().map_err(bad)?;
        let builder = Endpoint::from_shared(format!("http://{authority}"))
            .map_err(|_| ConnectError::BadEndpoint {
                endpoint: self.endpoint.clone(),
                why: "it does not make a URI",
            })?
            .origin(origin)
            .initial_stream_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .http2_max_header_list_size(super::MAX_RESPONSE_HEADER_BYTES);
        let started = Instant::now();
        let lock = |m: &Mutex<Marks>| *m.lock().unwrap_or_else(PoisonError::into_inner);
        let channel =
            match tokio::time::timeout(within, builder.connect_with_connector(connector)).await {
                Err(_) => {
                    return Err(ConnectError::TimedOut {
                        endpoint: self.endpoint.clone(),
                        step: lock(&marks).running(),
                        after: within,
                    });
                }
                Ok(Err(e)) => {
                    let m = lock(&marks);
                    return Err(ConnectError::Failed {
                        endpoint: self.endpoint.clone(),
                        step: m.failed.unwrap_or(m.running()),
                        reason: super::error_chain(&e),
                    });
                }
                Ok(Ok(channel)) => channel,
            };
        let ready = Instant::now();
        let m = lock(&marks);
        let at = |mark: Option<Instant>| mark.unwrap_or(ready);
        let (dns, tcp, tls) = (at(m.dns), at(m.tcp), at(m.tls));
        let took =
            |from: Instant, to: Instant| to.saturating_duration_since(from).as_secs_f64() * 1e3;
        let mut steps = ColdSteps::default();
        steps.set(ColdStep::Dns, took(started, dns));
        steps.set(ColdStep::Tcp, took(dns, tcp));
        steps.set(ColdStep::Tls, took(tcp, tls));
        steps.set(ColdStep::Http2, took(tls, ready));
        Ok((channel, steps))
    }
}

/// The trust roots of a TLS connection: the system's, Mozilla's (webpki-roots) and `extra_ca`'s;
/// ALPN `h2`, as gRPC asks.
fn client_config(extra_ca: Option<&Path>) -> Result<ClientConfig, ConnectError> {
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    // Certificates of the system store that do not parse are left out, as tonic leaves them out.
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if let Some(path) = extra_ca {
        let bad = |why: String| ConnectError::BadCa {
            path: path.to_owned(),
            why,
        };
        let pem = crate::files::read_regular(path, super::cloud::MAX_CA_FILE_BYTES)
            .map_err(|e| bad(format!("cannot be read: {e}")))?;
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|_| bad("is not PEM certificates".to_owned()))?;
            roots.add(cert).map_err(|e| {
                bad(format!(
                    "holds a certificate that cannot be a trust anchor: {e}"
                ))
            })?;
            added += 1;
        }
        if added == 0 {
            return Err(bad("holds no PEM certificate".to_owned()));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ConnectError::BadCa {
            path: extra_ca.map(Path::to_owned).unwrap_or_default(),
            why: format!("no TLS configuration: {e}"),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}

/// When each step of the connector ended, and which failed.
#[derive(Debug, Clone, Copy, Default)]
struct Marks {
    dns: Option<Instant>,
    tcp: Option<Instant>,
    tls: Option<Instant>,
    failed: Option<ColdStep>,
}

impl Marks {
    /// The step running now: the first that has not ended.
    fn running(&self) -> ColdStep {
        match (self.dns, self.tcp, self.tls) {
            (None, _, _) => ColdStep::Dns,
            (Some(_), None, _) => ColdStep::Tcp,
            (Some(_), Some(_), None) => ColdStep::Tls,
            _ => ColdStep::Http2,
        }
    }
}

/// A byte stream tonic can run HTTP/2 over: the TCP connection or the TLS stream on it.
trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// The connector handed to tonic: resolves, connects and shakes hands, marking when each step ends.
#[derive(Clone)]
struct StepConnector {
    dialer: Dialer,
    marks: Arc<Mutex<Marks>>,
}

type Connecting = Pin<Box<dyn Future<Output = Result<TokioIo<Box<dyn Io>>, StepError>> + Send>>;

/// A connector step's failure, as tonic carries it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct StepError(String);

impl tower_service::Service<Uri> for StepConnector {
    type Response = TokioIo<Box<dyn Io>>;
    type Error = StepError;
    type Future = Connecting;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Uri) -> Self::Future {
        let (dialer, marks) = (self.dialer.clone(), Arc::clone(&self.marks));
        Box::pin(async move {
            let mark = |set: fn(&mut Marks, Instant)| {
                set(
                    &mut marks.lock().unwrap_or_else(PoisonError::into_inner),
                    Instant::now(),
                );
            };
            let fail = |step: ColdStep, reason: String| {
                marks.lock().unwrap_or_else(PoisonError::into_inner).failed = Some(step);
                StepError(reason)
            };
            let addresses: Vec<_> = tokio::net::lookup_host((dialer.host.as_str(), dialer.port))
                .await
                .map_err(|e| fail(ColdStep::Dns, e.to_string()))?
                .collect();
            mark(|m, t| m.dns = Some(t));
            let tcp = super::tcp::connect_first(&addresses)
                .await
                .map_err(|e| fail(ColdStep::Tcp, e))?;
            mark(|m, t| m.tcp = Some(t));
            let io: Box<dyn Io> = match &dialer.tls {
                None => {
                    // No handshake: the TLS step ends where the TCP one did (0 in plaintext).
                    let mut m = marks.lock().unwrap_or_else(PoisonError::into_inner);
                    m.tls = m.tcp;
                    drop(m);
                    Box::new(tcp)
                }
                Some((config, name)) => {
                    let tls = tokio_rustls::TlsConnector::from(Arc::clone(config))
                        .connect(name.clone(), tcp)
                        .await
                        .map_err(|e| fail(ColdStep::Tls, e.to_string()))?;
                    Box::new(tls)
                }
            };
            mark(|m, t| {
                m.tls.get_or_insert(t);
            });
            Ok(TokioIo::new(io))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_read_as_host_port_or_uris() {
        let plain = Dialer::new("127.0.0.1:9010", None).expect("host:port");
        assert_eq!(
            (plain.host.as_str(), plain.port, plain.is_tls()),
            ("127.0.0.1", 9010, false)
        );
        let http = Dialer::new("http://localhost:1/", None).expect("http");
        assert_eq!(
            (http.host.as_str(), http.port, http.is_tls()),
            ("localhost", 1, false)
        );
        let https = Dialer::new("https://spanner.googleapis.com", None).expect("https");
        assert_eq!((https.port, https.is_tls()), (443, true));
        let v6 = Dialer::new("http://[::1]:9010", None).expect("v6");
        assert_eq!(v6.host, "::1");
        for bad in [
            "localhost",
            "http://h:0",
            "http://h:x",
            "https://h/path",
            "",
            "http://:1",
        ] {
            assert!(Dialer::new(bad, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_ca_file_that_holds_no_certificate_is_named() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, "not a certificate").expect("written");
        let error = Dialer::new("https://h:1", Some(&path)).expect_err("no certificate");
        assert!(
            error.to_string().contains("holds no PEM certificate"),
            "{error}"
        );
        let missing =
            Dialer::new("https://h:1", Some(&dir.path().join("none.pem"))).expect_err("missing");
        assert!(missing.to_string().contains("cannot be read"), "{missing}");
    }

    #[tokio::test]
    async fn a_silent_server_times_out_in_the_step_it_stalls() {
        // TCP is accepted, the TLS handshake never answered.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bound");
        let port = listener.local_addr().expect("address").port();
        let held = tokio::spawn(async move {
            let mut kept = Vec::new();
            while let Ok((s, _)) = listener.accept().await {
                kept.push(s);
            }
        });
        let dialer = Dialer::new(&format!("https://127.0.0.1:{port}"), None).expect("valid");
        let error = dialer
            .connect(Duration::from_millis(300))
            .await
            .expect_err("no handshake");
        assert!(
            matches!(
                error,
                ConnectError::TimedOut {
                    step: ColdStep::Tls,
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("the TLS handshake (tls)"),
            "{error}"
        );
        held.abort();
    }
}
