//! One HTTP/1.1 POST of a form, its answer read with a bound: how a token is asked for. hyper
//! keeps the head bounded (about 400 KiB); the body is refused as soon as it passes `limit`,
//! whether its `Content-Length` says so up front or its bytes do as they come (an endless answer
//! took 4 GB through gcp_auth's reader, which has no bound). The caller holds the whole exchange
//! to its time limit.

use std::sync::{Arc, OnceLock};

use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::Bytes;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST};
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::task::AbortHandle;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

/// An answer: its status and its whole body.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The body, at most the limit asked for.
    pub body: Bytes,
}

/// Why a POST got no answer.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    /// The URI is not an `http://` or `https://` URI with a host.
    #[error("it is not an http:// or https:// URI with a host")]
    BadUri,
    /// The connection (TCP or TLS) could not be made.
    #[error("{0}")]
    Connect(std::io::Error),
    /// The TLS configuration could not be made.
    #[error("no TLS configuration: {0}")]
    Tls(String),
    /// The exchange failed (a broken connection, a malformed answer, a head too large).
    #[error("{0}")]
    Http(String),
    /// The body passed the limit.
    #[error("the answer is larger than {0} bytes")]
    TooLarge(usize),
}

/// Where a POST goes.
struct Target {
    tls: bool,
    host: String,
    port: u16,
    authority: String,
    path: String,
}

impl Target {
    fn parse(uri: &str) -> Result<Target, PostError> {
        let uri: Uri = uri.parse().map_err(|_| PostError::BadUri)?;
        let tls = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => return Err(PostError::BadUri),
        };
        let authority = uri.authority().ok_or(PostError::BadUri)?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        if host.is_empty() {
            return Err(PostError::BadUri);
        }
        Ok(Target {
            tls,
            port: authority.port_u16().unwrap_or(if tls { 443 } else { 80 }),
            authority: authority.as_str().to_owned(),
            path: uri
                .path_and_query()
                .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned()),
            host,
        })
    }
}

/// POSTs `form` (`application/x-www-form-urlencoded`) to `uri` over HTTP/1.1 (TLS for
/// `https://`, trusting the system's and Mozilla's roots) and reads the answer, refusing a body
/// larger than `limit` bytes before more of it is read.
pub async fn post_form(uri: &str, form: String, limit: usize) -> Result<Answer, PostError> {
    let target = Target::parse(uri)?;
    let tcp = TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(PostError::Connect)?;
    let _ = tcp.set_nodelay(true);
    if !target.tls {
        return exchange(TokioIo::new(tcp), &target, form, limit).await;
    }
    let name = ServerName::try_from(target.host.clone()).map_err(|_| PostError::BadUri)?;
    let tls = tokio_rustls::TlsConnector::from(tls_config()?)
        .connect(name, tcp)
        .await
        .map_err(PostError::Connect)?;
    exchange(TokioIo::new(tls), &target, form, limit).await
}

/// Aborts the connection's task when the exchange ends (or is dropped at its time limit).
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn exchange<T>(
    io: T,
    target: &Target,
    form: String,
    limit: usize,
) -> Result<Answer, PostError>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let http = |e: hyper::Error| PostError::Http(crate::client::error_chain(&e));
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(http)?;
    let _connection = AbortOnDrop(tokio::spawn(connection).abort_handle());
    let request = Request::post(target.path.as_str())
        .header(HOST, target.authority.as_str())
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Full::new(Bytes::from(form)))
        .map_err(|e| PostError::Http(e.to_string()))?;
    let response = sender.send_request(request).await.map_err(http)?;
    let declared = response
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(PostError::TooLarge(limit));
    }
    let status = response.status().as_u16();
    let body = Limited::new(response.into_body(), limit)
        .collect()
        .await
        .map_err(|e| {
            if e.is::<LengthLimitError>() {
                PostError::TooLarge(limit)
            } else {
                PostError::Http(crate::client::error_chain(e.as_ref()))
            }
        })?
        .to_bytes();
    Ok(Answer { status, body })
}

/// The TLS configuration of token requests, made once: the system's roots and Mozilla's, ALPN
/// `http/1.1`.
fn tls_config() -> Result<Arc<ClientConfig>, PostError> {
    static CONFIG: OnceLock<Result<Arc<ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = RootCertStore::empty();
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let mut config = ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .with_root_certificates(roots)
                .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Ok(Arc::new(config))
        })
        .clone()
        .map_err(PostError::Tls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_uris_are_read_as_their_parts() {
        let t = Target::parse("https://oauth2.googleapis.com/token").expect("a URI");
        assert!(t.tls);
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("oauth2.googleapis.com", 443, "/token")
        );
        let t = Target::parse("http://127.0.0.1:8080/a/token?x=1").expect("a URI");
        assert!(!t.tls);
        assert_eq!(
            (t.authority.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1:8080", 8080, "/a/token?x=1")
        );
        let t = Target::parse("http://[::1]:9/t").expect("a URI");
        assert_eq!(t.host, "::1");
        for bad in ["", "x", "ftp://h/t", "http:///t", "/token"] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }
}
