//! The Cloud Spanner path, offline: a service-account key made here, a local token endpoint, and a
//! stand-in gRPC server that records the headers it was sent (`standin.rs`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rsa::pkcs8::{EncodePrivateKey, LineEnding};
use spanprof::client::auth::{AuthError, Credentials, TokenSource};
use spanprof::client::cloud::{CloudTarget, REQUEST_PARAMS_HEADER, RESOURCE_PREFIX_HEADER};
use spanprof::client::{DatabasePath, Decoding, Endpoint, Query, ResumePolicy, Session};
use spanprof::engine::{Engine, EngineEvent, Job, ProfileSpec, Target};
use spanprof::wire::DecoderKind;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tonic::metadata::MetadataMap;

use crate::standin::{Behaviour, StandIn};

pub const PROJECT: &str = "test-project";
pub const INSTANCE: &str = "test-instance";
pub const DATABASE: &str = "test-db";

/// A PEM PKCS#8 RSA key, made once per test run (2048 bits takes a moment).
fn private_key_pem() -> &'static str {
    static KEY: OnceLock<String> = OnceLock::new();
    KEY.get_or_init(|| {
        let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048)
            .expect("an RSA key can be generated");
        key.to_pkcs8_pem(LineEnding::LF)
            .expect("an RSA key encodes as PKCS#8")
            .to_string()
    })
}

/// A token unlike any other run's.
pub(crate) fn random_token() -> String {
    use std::hash::{BuildHasher, RandomState};
    let a = RandomState::new().hash_one(std::process::id());
    let b = RandomState::new().hash_one(std::time::SystemTime::now());
    format!("spanprof-test-token-{a:016x}{b:016x}")
}

/// A token endpoint answering every POST with `status` (and a token when 200), counting requests.
pub struct TokenEndpoint {
    pub uri: String,
    pub token: String,
    requests: Arc<AtomicUsize>,
}

impl TokenEndpoint {
    pub async fn start(status: u16) -> TokenEndpoint {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port is free");
        let port = listener.local_addr().expect("a bound address").port();
        let token = random_token();
        let requests = Arc::new(AtomicUsize::new(0));
        let (served_token, counter) = (token.clone(), requests.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (token, counter) = (served_token.clone(), counter.clone());
                tokio::spawn(serve_token(stream, status, token, counter));
            }
        });
        TokenEndpoint {
            uri: format!("http://127.0.0.1:{port}/token"),
            token,
            requests,
        }
    }

    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Serves one HTTP/1.1 request and closes the connection.
async fn serve_token(mut stream: TcpStream, status: u16, token: String, counter: Arc<AtomicUsize>) {
    let Some((head, body)) = read_http_request(&mut stream).await else {
        return;
    };
    counter.fetch_add(1, Ordering::SeqCst);
    let ok = head.starts_with("POST /token ")
        && body.contains("grant_type=")
        && body.contains("assertion=");
    let (status, reason, body) = if status == 200 && ok {
        (
            200,
            "OK",
            format!(r#"{{"access_token":"{token}","expires_in":3600,"token_type":"Bearer"}}"#),
        )
    } else if status == 200 {
        (
            400,
            "Bad Request",
            r#"{"error":"invalid_request"}"#.to_owned(),
        )
    } else {
        (
            status,
            "Unauthorized",
            r#"{"error":"invalid_grant","error_description":"secret-detail"}"#.to_owned(),
        )
    };
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The request's head and body, read by hand (the body by `content-length`).
pub(crate) async fn read_http_request(stream: &mut TcpStream) -> Option<(String, String)> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).into_owned();
            let length = head
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            while data.len() < end + 4 + length {
                let n = stream.read(&mut buf).await.ok()?;
                if n == 0 {
                    return None;
                }
                data.extend_from_slice(&buf[..n]);
            }
            let body = String::from_utf8_lossy(&data[end + 4..end + 4 + length]).into_owned();
            return Some((head, body));
        }
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    }
}

/// Writes a service-account key file for `token_uri` and returns its path.
pub fn write_key_file(dir: &Path, token_uri: &str) -> PathBuf {
    let key = serde_json::json!({
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": "0123456789abcdef",
        "private_key": private_key_pem(),
        "client_email": "spanprof-test@test-project.iam.gserviceaccount.com",
        "client_id": "1234567890",
        "token_uri": token_uri,
    });
    let path = dir.join("service-account.json");
    std::fs::write(&path, key.to_string()).expect("the key file can be written");
    path
}

fn target(endpoint: String, key: PathBuf) -> CloudTarget {
    CloudTarget {
        endpoint,
        credentials: Credentials::ServiceAccountFile(key),
        ..CloudTarget::new(PROJECT, INSTANCE, DATABASE)
    }
}

fn header<'a>(metadata: &'a MetadataMap, name: &str) -> Option<&'a str> {
    metadata.get(name).and_then(|v| v.to_str().ok())
}

/// Every call of one session (create, execute, delete) carries the token and both headers: the
/// client layer attaches them in one place.
#[tokio::test(flavor = "multi_thread")]
async fn requests_carry_token_and_routing_headers() {
    let tokens_endpoint = TokenEndpoint::start(200).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &tokens_endpoint.uri);
    let standin = StandIn::start(Behaviour::default()).await;
    let target = target(standin.endpoint.clone(), key.clone());
    let database = DatabasePath {
        project: PROJECT.into(),
        instance: INSTANCE.into(),
        database: DATABASE.into(),
    };
    let session = Session::open(
        &Endpoint::Cloud(target),
        &database,
        spanprof::client::Timeouts::DEFAULT,
    )
    .await
    .expect("CreateSession succeeds");
    let query = session
        .prepare(&Query {
            sql: "SELECT 1".into(),
            ..Query::default()
        })
        .expect("a plain query");
    // The answer has no metadata: the call is made, its decoding fails.
    let outcome = session
        .execute(
            &query,
            ResumePolicy::default(),
            Decoding::new(DecoderKind::Fast, &mut |_, _| {}),
        )
        .await;
    assert!(outcome.is_err(), "a stream with no metadata is an error");
    assert!(
        session
            .close(Duration::from_secs(5))
            .await
            .expect("deleted"),
        "DeleteSession answered"
    );

    let seen = standin.calls();
    let methods: Vec<_> = seen.iter().map(|(m, _)| *m).collect();
    assert_eq!(
        methods,
        ["CreateSession", "ExecuteStreamingSql", "DeleteSession"]
    );
    assert_every_call_carries_the_headers(&seen, &tokens_endpoint.token);
    assert_eq!(tokens_endpoint.requests(), 1, "the token is cached");

    // The token source itself: one fetch, cached, never shown.
    let tokens = TokenSource::new(Credentials::ServiceAccountFile(key)).expect("a valid key");
    tokens.authorization().await.expect("a token");
    assert_eq!(tokens_endpoint.requests(), 2, "a new source fetches once");
    assert_eq!(tokens.fetches().await, 1);
    let left = tokens.expires_in().await.expect("a cached token");
    assert!(left.as_secs() > 3500 && left.as_secs() <= 3600, "{left:?}");

    let debug = format!("{tokens:?}");
    assert!(!debug.contains(&tokens_endpoint.token), "{debug}");
    assert!(!debug.contains("BEGIN PRIVATE KEY"), "{debug}");
    let header = tokens.authorization().await.expect("cached");
    assert!(header.is_sensitive());
    assert!(!format!("{header:?}").contains(&tokens_endpoint.token));

    tokens.refresh().await.expect("a forced refresh");
    assert_eq!(tokens_endpoint.requests(), 3, "refresh fetches a new token");
}

/// Asserts that every recorded call carried `Bearer <token>`, the resource prefix and the routing
/// header of the test database.
fn assert_every_call_carries_the_headers(seen: &[(&'static str, MetadataMap)], token: &str) {
    let bearer = format!("Bearer {token}");
    for (method, metadata) in seen {
        assert_eq!(
            header(metadata, "authorization"),
            Some(bearer.as_str()),
            "{method}"
        );
        assert_eq!(
            header(metadata, RESOURCE_PREFIX_HEADER),
            Some("projects/test-project/instances/test-instance/databases/test-db"),
            "{method}"
        );
        assert_eq!(
            header(metadata, REQUEST_PARAMS_HEADER),
            Some(
                "database=projects%2Ftest-project%2Finstances%2Ftest-instance%2Fdatabases%2Ftest-db"
            ),
            "{method}"
        );
    }
}

/// A whole cloud run through the engine: create, every iteration and the deletion at the end carry
/// the token, the resource prefix and the routing header (DeleteSession once went without them, and
/// Cloud Spanner would have refused it, leaving every run's session behind).
#[tokio::test(flavor = "multi_thread")]
async fn every_call_of_a_cloud_run_carries_the_headers() {
    let tokens_endpoint = TokenEndpoint::start(200).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &tokens_endpoint.uri);
    let standin = StandIn::start(Behaviour::default()).await;
    let target = target(standin.endpoint.clone(), key);
    let spec = ProfileSpec {
        variants: vec![spanprof::engine::Variant::new("run", "SELECT 1")],
        iterations: 2,
        warmup: 1,
        ..ProfileSpec::default()
    };
    let events = tokio::task::spawn_blocking(move || {
        let engine = Engine::start(Job::Profile(Target::Cloud(target), spec), Arc::new(|| {}))
            .expect("starts");
        engine.profile_events().collect::<Vec<_>>()
    })
    .await
    .expect("joins");
    assert!(
        matches!(events.last(), Some(EngineEvent::Finished(_)))
            && spanprof::engine::collect_reports(&events)
                .is_some_and(|r| r[0].iterations.len() == 3),
        "{events:?}"
    );
    let seen = standin.calls();
    let methods: Vec<_> = seen.iter().map(|(m, _)| *m).collect();
    assert_eq!(
        methods,
        [
            "CreateSession",
            "ExecuteStreamingSql",
            "ExecuteStreamingSql",
            "ExecuteStreamingSql",
            "DeleteSession"
        ]
    );
    assert_every_call_carries_the_headers(&seen, &tokens_endpoint.token);
}

/// Asserts an error's Display and Debug mention `wanted` and contain none of `secrets`.
fn assert_clean(error: &AuthError, wanted: &str, secrets: &[&str]) {
    let (display, debug) = (error.to_string(), format!("{error:?}"));
    assert!(display.contains(wanted), "{display}");
    for secret in secrets {
        assert!(!display.contains(secret), "{display}");
        assert!(!debug.contains(secret), "{debug}");
    }
}

#[test]
fn a_missing_key_file_is_named() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("no-such-key.json");
    let error = TokenSource::new(Credentials::ServiceAccountFile(path.clone()))
        .expect_err("the file is missing");
    assert!(matches!(error, AuthError::MissingFile { .. }), "{error:?}");
    assert_clean(&error, &path.display().to_string(), &[]);
    assert!(error.to_string().contains("does not exist"));
}

#[test]
fn a_malformed_key_file_is_not_quoted() {
    const MARKER: &str = "SPANPROF-SECRET-MARKER-7f3a";
    let dir = tempfile::tempdir().expect("a temp dir");
    let cases = [
        ("not-json", format!("this is not json {MARKER}")),
        (
            "bad-types",
            format!(r#"{{"private_key": 5, "client_email": "{MARKER}"}}"#),
        ),
        (
            "no-private-key",
            format!(r#"{{"type":"service_account","client_email":"{MARKER}","token_uri":"x"}}"#),
        ),
        (
            "bad-key",
            format!(
                r#"{{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\n{MARKER}\n",
                "client_email":"{MARKER}","token_uri":"http://127.0.0.1:1/token"}}"#
            ),
        ),
        (
            "user-credentials",
            format!(r#"{{"type":"authorized_user","refresh_token":"{MARKER}"}}"#),
        ),
    ];
    for (name, contents) in cases {
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, contents).expect("written");
        let error = TokenSource::new(Credentials::ServiceAccountFile(path.clone()))
            .expect_err("the file is malformed");
        assert!(
            matches!(error, AuthError::Malformed { .. }),
            "{name}: {error:?}"
        );
        assert_clean(&error, "is not a service-account JSON key file", &[MARKER]);
        assert!(error.to_string().contains(&path.display().to_string()));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refusing_token_endpoint_gives_a_clear_error() {
    let endpoint = TokenEndpoint::start(401).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &endpoint.uri);
    let tokens = TokenSource::new(Credentials::ServiceAccountFile(key)).expect("a valid key");
    let error = tokens
        .authorization()
        .await
        .expect_err("the endpoint refuses");
    assert!(matches!(error, AuthError::Refused { .. }), "{error:?}");
    assert_clean(
        &error,
        &endpoint.uri,
        &["secret-detail", "BEGIN PRIVATE KEY", &endpoint.token],
    );
    assert!(error.to_string().contains("refused"), "{error}");
    assert!(endpoint.requests() >= 1);
    let debug = format!("{tokens:?}");
    assert!(!debug.contains("BEGIN PRIVATE KEY"), "{debug}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_token_endpoint_is_named() {
    // A port held bound but not listening: nothing answers there, and nothing else can take it.
    let closed = crate::support::ClosedPort::new();
    let uri = format!("http://127.0.0.1:{}/token", closed.port);
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &uri);
    let tokens = TokenSource::new(Credentials::ServiceAccountFile(key)).expect("a valid key");
    let error = tokens.authorization().await.expect_err("nothing listens");
    assert!(matches!(error, AuthError::Unreachable { .. }), "{error:?}");
    assert_clean(&error, &uri, &["BEGIN PRIVATE KEY"]);
}

/// A whole `spanprof profile --cloud` run against a local API endpoint: the token was used, and neither
/// it nor the key file's secret appears in anything the run wrote (stdout, stderr, CSV, JSON,
/// Markdown), errors included.
#[tokio::test(flavor = "multi_thread")]
async fn tokens_and_keys_never_appear_in_what_a_run_writes() {
    let tokens = TokenEndpoint::start(200).await;
    let standin = StandIn::start(Behaviour::default()).await;
    let endpoint = standin.endpoint.clone();
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &tokens.uri);
    let (csv, json, md) = (
        dir.path().join("r.csv"),
        dir.path().join("r.json"),
        dir.path().join("r.md"),
    );
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args([
            "profile",
            "--cloud",
            "--cloud-endpoint",
            &endpoint,
            "--credentials",
        ])
        .arg(&key)
        .args([
            "--project",
            PROJECT,
            "--instance",
            INSTANCE,
            "--database",
            DATABASE,
        ])
        .args(["--sql", "SELECT 1", "--iterations", "2", "--warmup", "0"])
        .arg("--csv")
        .arg(&csv)
        .arg("--json")
        .arg(&json)
        .arg("--markdown")
        .arg(&md);
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("joins")
        .expect("spanprof runs");
    // The answer has no metadata, so the iterations fail: the error path is part of what is checked.
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = standin.calls();
    let bearer = format!("Bearer {}", tokens.token);
    assert!(
        calls
            .iter()
            .any(|(_, m)| header(m, "authorization") == Some(bearer.as_str())),
        "the token was not used"
    );
    let key_text = std::fs::read_to_string(&key).expect("the key file");
    let secret_line = private_key_pem()
        .lines()
        .nth(5)
        .expect("a line from the middle of the key");
    assert!(
        key_text.contains(secret_line),
        "the marker is really in the key file"
    );
    let mut written = vec![
        ("stdout", String::from_utf8_lossy(&out.stdout).into_owned()),
        ("stderr", String::from_utf8_lossy(&out.stderr).into_owned()),
    ];
    for path in [&csv, &json, &md] {
        written.push((
            "a file",
            std::fs::read_to_string(path).expect("the export exists"),
        ));
    }
    for (what, text) in &written {
        assert!(
            !text.contains(&tokens.token),
            "the token is in {what}: {text}"
        );
        assert!(!text.contains(secret_line), "the key is in {what}");
    }
    assert!(
        written[1].1.contains("no metadata"),
        "the error is reported: {}",
        written[1].1
    );
}

/// Application default credentials: the binary, with no --credentials, finds the key through
/// GOOGLE_APPLICATION_CREDENTIALS (set for the child process only) and uses its token.
#[tokio::test(flavor = "multi_thread")]
async fn application_default_credentials_come_from_the_environment() {
    let tokens = TokenEndpoint::start(200).await;
    let standin = StandIn::start(Behaviour::default()).await;
    let endpoint = standin.endpoint.clone();
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &tokens.uri);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(["profile", "--cloud", "--cloud-endpoint", &endpoint])
        .args([
            "--project",
            PROJECT,
            "--instance",
            INSTANCE,
            "--database",
            DATABASE,
        ])
        .args(["--sql", "SELECT 1", "--iterations", "1", "--warmup", "0"])
        .env("GOOGLE_APPLICATION_CREDENTIALS", &key);
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("joins")
        .expect("spanprof runs");
    let bearer = format!("Bearer {}", tokens.token);
    let calls = standin.calls();
    assert!(
        calls
            .iter()
            .any(|(m, h)| *m == "CreateSession"
                && header(h, "authorization") == Some(bearer.as_str())),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(tokens.requests() >= 1);
}

/// A key file whose `token_uri` is `http://` to a host that is not loopback would send the signed
/// assertion (good for an hour's tokens) across the network in clear: it was taken, and the
/// assertion sent. Now the key file is refused when it is read, naming the field and the rule,
/// before anything is sent; `0.0.0.0` reaches this machine's endpoint but is not loopback by name,
/// and names that merely begin like a loopback host are names like any other. Loopback hosts
/// keep working.
#[tokio::test(flavor = "multi_thread")]
async fn a_token_uri_in_clear_to_a_host_that_is_not_loopback_is_refused() {
    let tokens = TokenEndpoint::start(200).await;
    let port = tokens.uri.rsplit_once(':').expect("a port").1;
    let port = port.trim_end_matches("/token");
    let dir = tempfile::tempdir().expect("a temp dir");
    for uri in [
        format!("http://0.0.0.0:{port}/token"),
        format!("http://localhost.evil.com:{port}/token"),
        format!("http://127.0.0.1.nip.io:{port}/token"),
        "http://oauth2.googleapis.com/token".to_owned(),
    ] {
        let key = write_key_file(dir.path(), &uri);
        let error = match TokenSource::new(Credentials::ServiceAccountFile(key.clone())) {
            Err(error) => error,
            Ok(source) => {
                // What was refused before: a token asked for over plain HTTP.
                if uri.contains("0.0.0.0") {
                    let _ = source.authorization().await;
                }
                panic!(
                    "{uri} was taken ({} token requests sent in clear)",
                    tokens.requests()
                )
            }
        };
        assert!(
            matches!(error, AuthError::TokenUriInClear { .. }),
            "{error:?}"
        );
        let text = error.to_string();
        for wanted in [
            key.display().to_string(),
            uri.clone(),
            "\"token_uri\"".to_owned(),
            "must be https://, except to a loopback host (127.0.0.1, ::1 or localhost)".to_owned(),
        ] {
            assert!(text.contains(&wanted), "{wanted:?} in {text}");
        }
    }
    assert_eq!(tokens.requests(), 0, "nothing was sent");
    for uri in [
        format!("http://localhost:{port}/token"),
        format!("http://[::1]:{port}/token"),
        "https://oauth2.googleapis.com/token".to_owned(),
    ] {
        let key = write_key_file(dir.path(), &uri);
        TokenSource::new(Credentials::ServiceAccountFile(key)).expect("a loopback or https URI");
    }
    let key = write_key_file(dir.path(), &tokens.uri);
    let source = TokenSource::new(Credentials::ServiceAccountFile(key)).expect("loopback");
    source.authorization().await.expect("a token over loopback");
    assert_eq!(tokens.requests(), 1);
}

/// `--cloud-endpoint http://` to a host that is not loopback sent every call's bearer token in
/// clear: `0.0.0.0` reaches the stand-in here, and it was sent CreateSession with the token. Now
/// the run is refused before a token is fetched, naming the option and the rule; `http://` to a
/// loopback host is still taken (every other test here runs on one).
#[tokio::test(flavor = "multi_thread")]
async fn a_cloud_endpoint_in_clear_to_a_host_that_is_not_loopback_is_refused() {
    let tokens = TokenEndpoint::start(200).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &tokens.uri);
    let standin = StandIn::start(Behaviour::default()).await;
    let loopback = &standin.endpoint;
    let port = loopback.rsplit_once(':').expect("a port").1.to_owned();
    let endpoint = format!("http://0.0.0.0:{port}");
    let database = DatabasePath {
        project: PROJECT.into(),
        instance: INSTANCE.into(),
        database: DATABASE.into(),
    };
    let opened = Session::open(
        &Endpoint::Cloud(target(endpoint.clone(), key.clone())),
        &database,
        spanprof::client::Timeouts::DEFAULT,
    )
    .await;
    let wanted = [
        endpoint.as_str(),
        "(--cloud-endpoint) is http:// to a host that is not loopback",
        "It must be https://, except to a loopback host (127.0.0.1, ::1 or localhost)",
    ];
    match opened {
        Ok(_) => panic!(
            "{endpoint} was taken: {:?} sent with a token",
            standin.calls().iter().map(|(m, _)| *m).collect::<Vec<_>>()
        ),
        Err(error) => {
            let text = error.to_string();
            for w in wanted {
                assert!(text.contains(w), "{w:?} in {text}");
            }
        }
    }

    // The same through the command line, cold starts included.
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(["profile", "--cloud", "--cloud-endpoint", &endpoint])
        .arg("--credentials")
        .arg(&key)
        .args(["--sql", "SELECT 1", "--iterations", "2", "--no-history"])
        .arg("--cold")
        .env_remove("GOOGLE_APPLICATION_CREDENTIALS");
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("joins")
        .expect("spanprof runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for w in wanted {
        assert!(stderr.contains(w), "{w:?} in {stderr}");
    }
    assert!(standin.calls().is_empty(), "no call");
    assert_eq!(tokens.requests(), 0, "no token was fetched for it");

    for good in [
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ] {
        target(good.clone(), key.clone())
            .check_endpoint()
            .unwrap_or_else(|e| panic!("{good}: {e}"));
    }
    for bad in [
        format!("http://localhost.evil.com:{port}"),
        format!("http://127.0.0.1.nip.io:{port}"),
    ] {
        let error = target(bad.clone(), key.clone())
            .check_endpoint()
            .expect_err("not loopback");
        assert!(error.to_string().contains("not loopback"), "{bad}: {error}");
    }
}
