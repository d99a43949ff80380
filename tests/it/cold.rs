//! The first query taken apart (`profile --cold`) and the kinds of session: cold iterations against
//! a TLS endpoint (a TLS terminator made here, with a self-signed certificate, in front of the
//! stand-in of `standin.rs`) with a service-account key whose token endpoint is local; a server
//! that grants another kind of session than asked; a token endpoint that stalls during a cold
//! start; and the real emulator's answer to a multiplexed request.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use spanprof::client::auth::Credentials;
use spanprof::client::cloud::CloudTarget;
use spanprof::engine::{
    Engine, EngineEvent, Job, ProfileSpec, SessionKind, Target, Timeouts, Variant,
};
use spanprof::export::{Exporter, Markdown};
use spanprof::report::{ColdStep, RunReport, Status};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;

use crate::cloud::{TokenEndpoint, write_key_file};
use crate::standin::{Behaviour, Queries, StandIn};

/// A TLS endpoint in front of `backend` (a plaintext gRPC server's `host:port`): a self-signed
/// certificate for 127.0.0.1 made now, ALPN `h2`, every connection's bytes copied through. Returns
/// its `https://` URI, the certificate's PEM and a count of the connections it accepted.
async fn tls_in_front_of(backend: String) -> (String, String, Arc<AtomicUsize>) {
    tls_in_front_of_stalling_after(backend, usize::MAX).await
}

/// [`tls_in_front_of`], but the connections after the first `shaken` are held without a TLS
/// handshake.
async fn tls_in_front_of_stalling_after(
    backend: String,
    shaken: usize,
) -> (String, String, Arc<AtomicUsize>) {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()])
        .expect("a self-signed certificate");
    let pem = certified.cert.pem();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![certified.cert.der().clone()], key)
        .expect("a server configuration");
    config.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let port = listener.local_addr().expect("an address").port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            if counter.fetch_add(1, Ordering::SeqCst) >= shaken {
                held.push(socket);
                continue;
            }
            let (acceptor, backend) = (acceptor.clone(), backend.clone());
            tokio::spawn(async move {
                // Without it each new connection's first small writes wait for a delayed ACK.
                let _ = socket.set_nodelay(true);
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                let Ok(mut plain) = TcpStream::connect(&backend).await else {
                    return;
                };
                let _ = plain.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    (format!("https://127.0.0.1:{port}"), pem, accepted)
}

/// A token endpoint whose first `answered` connections reach `real` and the later ones are held
/// open, never answered.
async fn stalling_after(answered: usize, real: &str) -> String {
    let real = real
        .trim_start_matches("http://")
        .trim_end_matches("/token")
        .to_owned();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let port = listener.local_addr().expect("an address").port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        let mut n = 0;
        while let Ok((mut socket, _)) = listener.accept().await {
            n += 1;
            if n > answered {
                held.push(socket);
                continue;
            }
            let real = real.clone();
            tokio::spawn(async move {
                if let Ok(mut upstream) = TcpStream::connect(&real).await {
                    let _ = tokio::io::copy_bidirectional(&mut socket, &mut upstream).await;
                }
            });
        }
    });
    format!("http://127.0.0.1:{port}/token")
}

/// Runs `spec` against `target` to its end; the events in order.
async fn run(target: Target, spec: ProfileSpec) -> Vec<EngineEvent> {
    tokio::task::spawn_blocking(move || {
        let engine = Engine::start(Job::Profile(target, spec), Arc::new(|| {})).expect("starts");
        engine.profile_events().collect::<Vec<_>>()
    })
    .await
    .expect("joins")
}

fn reports(events: &[EngineEvent]) -> Vec<RunReport> {
    match events.last() {
        Some(EngineEvent::Finished(_)) => {
            spanprof::engine::collect_reports(events).expect("a Finished event")
        }
        other => panic!("the run did not finish: {other:?}"),
    }
}

fn cloud(endpoint: String, key: std::path::PathBuf, ca: Option<std::path::PathBuf>) -> Target {
    Target::Cloud(CloudTarget {
        endpoint,
        credentials: Credentials::ServiceAccountFile(key),
        ca_file: ca,
        ..CloudTarget::new("test-project", "test-instance", "test-db")
    })
}

fn answering() -> Behaviour {
    Behaviour::answering(Queries::OneRow)
}

/// The first query taken apart end to end: `profile --cold-and-warm` through the binary, over TLS
/// with a key whose token endpoint is local. Every cold iteration has tcp, tls, token and session
/// above 0 (dns and http2 measured too), a connection and a token of its own, and its phases add up
/// to its total within 1 ms; the warm iterations of the same query have none of them.
#[tokio::test(flavor = "multi_thread")]
async fn cold_iterations_over_tls_take_the_first_query_apart() {
    let tokens = TokenEndpoint::start(200).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &tokens.uri);
    let backend = StandIn::start(answering()).await;
    let (endpoint, pem, connections) = tls_in_front_of(backend.host().to_owned()).await;
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, pem).expect("the certificate is written");
    let csv = dir.path().join("run.csv");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(["profile", "--cloud", "--cloud-endpoint", &endpoint])
        .arg("--cloud-ca")
        .arg(&ca)
        .arg("--credentials")
        .arg(&key)
        .args(["--sql", "SELECT 1", "--cold-and-warm"])
        .args(["--iterations", "3", "--warmup", "0", "--csv"])
        .arg(&csv);
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("joins")
        .expect("spanprof runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The summary, for a reader of the test's output (`-- --nocapture`).
    eprintln!("{stdout}");
    let mut reader = csv::Reader::from_path(&csv).expect("the CSV");
    let headers = reader.headers().expect("a header").clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let ms = |row: &csv::StringRecord, name: &str| -> Option<f64> {
        let cell = row.get(column(name)).expect("a cell");
        (!cell.is_empty()).then(|| cell.parse().expect("a number"))
    };
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("a row")).collect();
    assert_eq!(rows.len(), 6, "3 warm and 3 cold iterations");
    let steps = [
        "dns_ms",
        "tcp_ms",
        "tls_ms",
        "http2_ms",
        "token_ms",
        "session_ms",
    ];
    let mut cold = 0;
    for row in &rows {
        let run = row.get(column("run")).expect("a run");
        assert_eq!(row.get(column("status")), Some("ok"), "{row:?}");
        if run == "warm" {
            for step in steps {
                assert_eq!(
                    ms(row, step),
                    None,
                    "a warm iteration has no {step}: {row:?}"
                );
            }
            continue;
        }
        assert_eq!(run, "cold");
        cold += 1;
        for step in ["tcp_ms", "tls_ms", "token_ms", "session_ms"] {
            let value = ms(row, step).unwrap_or_else(|| panic!("{step} measured: {row:?}"));
            assert!(value > 0.0, "{step} = {value}: {row:?}");
        }
        assert!(ms(row, "dns_ms").is_some() && ms(row, "http2_ms").is_some());
        // The steps are parts: with the query's, they add up to the total.
        let sum: f64 = spanprof::part::Part::ALL
            .iter()
            .map(|p| ms(row, p.column()).unwrap_or(0.0))
            .sum();
        let total = ms(row, "total_ms").expect("a total");
        assert!(
            (sum - total).abs() <= 0.011,
            "{sum} against {total}: {row:?}"
        );
    }
    assert_eq!(cold, 3);
    assert_eq!(
        tokens.requests(),
        1 + 3,
        "the warm session's token, then one per cold iteration"
    );
    assert_eq!(
        connections.load(Ordering::SeqCst),
        1 + 3,
        "the warm connection, then one per cold iteration"
    );
    assert!(
        stdout.contains("| tls |"),
        "the summary has the tls phase: {stdout}"
    );
    assert!(stdout.contains("cold starts"), "{stdout}");
}

/// Bad input: a server that grants a regular session to a multiplexed request (the stand-in, as
/// the emulator does). Reported, never an error: the run's config says what was asked and what
/// was granted, each iteration the kind it ran on, and the summary says so; a cold iteration on a
/// plaintext endpoint without auth has tls and token at 0.
#[tokio::test(flavor = "multi_thread")]
async fn a_session_of_another_kind_is_reported_not_refused() {
    let standin = StandIn::start(answering()).await;
    let host = standin.host().to_owned();
    let spec = ProfileSpec {
        variants: vec![
            Variant::new("warm", "SELECT 1"),
            Variant {
                cold: true,
                ..Variant::new("cold", "SELECT 1")
            },
        ],
        iterations: 2,
        warmup: 0,
        ..ProfileSpec::default()
    };
    let events = run(Target::Endpoint(host), spec).await;
    let runs = &reports(&events);
    for report in runs {
        assert_eq!(
            report.config.session,
            Some(SessionKind::Multiplexed),
            "asked by default"
        );
        assert_eq!(report.config.session_granted, Some(SessionKind::Regular));
        for it in &report.iterations {
            assert_eq!(it.status(), Status::Ok, "{it:?}");
            assert_eq!(it.session_kind.map(|k| k.as_str()), Some("regular"));
        }
    }
    let cold = &runs[1].iterations[0];
    let steps = cold.cold.expect("a cold start's steps");
    assert_eq!(
        (steps.ms(ColdStep::Tls), steps.ms(ColdStep::Token)),
        (0.0, 0.0)
    );
    assert!(steps.ms(ColdStep::Tcp) > 0.0, "{cold:?}");
    let timeline = cold.timeline.as_ref().expect("a timeline");
    let names: Vec<&str> = timeline.setup.iter().map(|s| s.step.key()).collect();
    assert_eq!(names, ["dns", "tcp", "tls", "http2", "token", "session"]);
    assert!(timeline.lanes[0].origin_us >= timeline.setup_end_us());
    let text = String::from_utf8(Markdown.export(runs).expect("exports")).expect("UTF-8");
    assert!(
        text.contains("session multiplexed asked for, the server granted a regular one"),
        "{text}"
    );
    let explained = spanprof::analysis::explain(&runs[1]).expect("explained");
    assert!(!explained.iterations.is_empty());
}

/// Bad input: the token endpoint answers the warm session's token, then stalls. The cold
/// iteration's token is waited for at most the call limit, and its error names the step; the run
/// goes on and ends.
#[tokio::test(flavor = "multi_thread")]
async fn a_token_endpoint_that_stalls_during_a_cold_start_is_named() {
    let tokens = TokenEndpoint::start(200).await;
    let stalling = stalling_after(1, &tokens.uri).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &stalling);
    let endpoint = StandIn::start(answering()).await.endpoint;
    let spec = ProfileSpec {
        variants: vec![Variant {
            cold: true,
            session: Some(SessionKind::Regular),
            ..Variant::new("cold", "SELECT 1")
        }],
        iterations: 1,
        warmup: 0,
        timeouts: Timeouts {
            call: Duration::from_millis(700),
            ..Timeouts::DEFAULT
        },
        ..ProfileSpec::default()
    };
    let started = Instant::now();
    let events = run(cloud(endpoint, key, None), spec).await;
    let runs = &reports(&events);
    let it = &runs[0].iterations[0];
    assert_eq!(it.status(), Status::Error, "{it:?}");
    let error = it.error().unwrap_or_default();
    assert!(
        error.contains("fetching an access token (token) did not finish within 700 ms"),
        "{error}"
    );
    assert!(error.contains(&stalling), "names the endpoint: {error}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the limit held"
    );
    assert_eq!(
        tokens.requests(),
        1,
        "only the warm session's token was answered"
    );
}

/// The local instance serves multiplexed sessions: both kinds of one run granted as asked (the
/// second kind on the same instance), and a cold iteration reads from it too.
#[tokio::test(flavor = "multi_thread")]
async fn the_local_instance_grants_both_kinds_in_one_run() {
    let target = Target::Local(spanprof::server::ServerConfig {
        port: 0,
        seed23_rows: 1000,
        knobs: spanprof::server::KnobSettings::default(),
        connections: Default::default(),
    });
    let variant = |label: &str, kind, cold| Variant {
        session: Some(kind),
        cold,
        ..Variant::new(label, "SELECT * FROM Seed23 LIMIT 100")
    };
    let spec = ProfileSpec {
        variants: vec![
            variant("multiplexed", SessionKind::Multiplexed, false),
            variant("regular", SessionKind::Regular, false),
            variant("cold regular", SessionKind::Regular, true),
        ],
        iterations: 2,
        warmup: 0,
        ..ProfileSpec::default()
    };
    let events = run(target, spec).await;
    let runs = &reports(&events);
    let spelled = |k: Option<SessionKind>| k.map_or("", SessionKind::as_str);
    let kinds: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| (spelled(r.config.session), spelled(r.config.session_granted)))
        .collect();
    assert_eq!(
        kinds,
        [("multiplexed", ""), ("regular", ""), ("regular", "")],
        "granted as asked"
    );
    for (report, kind) in runs.iter().zip(["multiplexed", "regular", "regular"]) {
        for it in &report.iterations {
            assert_eq!(it.status(), Status::Ok, "{it:?}");
            assert_eq!(it.answer.rows, 100);
            assert_eq!(it.session_kind.map(|k| k.as_str()), Some(kind));
        }
    }
    assert!(runs[2].iterations.iter().all(|it| it.cold.is_some()));
}

/// Bad input: the TLS endpoint takes the warm connection, then holds later ones without a
/// handshake. The cold iteration's connection is waited for at most the connect limit, and its
/// error names the TLS step.
#[tokio::test(flavor = "multi_thread")]
async fn a_tls_handshake_that_stalls_during_a_cold_start_is_named() {
    let tokens = TokenEndpoint::start(200).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &tokens.uri);
    let backend = StandIn::start(answering()).await;
    let (endpoint, pem, _) = tls_in_front_of_stalling_after(backend.host().to_owned(), 1).await;
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, pem).expect("the certificate is written");
    let spec = ProfileSpec {
        variants: vec![Variant {
            cold: true,
            ..Variant::new("cold", "SELECT 1")
        }],
        iterations: 1,
        warmup: 0,
        timeouts: Timeouts {
            connect: Duration::from_millis(700),
            ..Timeouts::DEFAULT
        },
        ..ProfileSpec::default()
    };
    let started = Instant::now();
    let events = run(cloud(endpoint.clone(), key, Some(ca)), spec).await;
    let runs = &reports(&events);
    let it = &runs[0].iterations[0];
    assert_eq!(it.status(), Status::Error, "{it:?}");
    let error = it.error().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "{endpoint}: the TLS handshake (tls) did not finish within 700 ms"
        )),
        "{error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the limit held"
    );
}

/// Sessions against the real emulator: it accepts a multiplexed request and grants a regular
/// session, which the report says; regular and multiplexed variants of one run (and a cold one)
/// all read.
#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn the_emulator_grants_a_regular_session_to_a_multiplexed_request() {
    let emulator = spanprof::emulator::Emulator::start("127.0.0.1:0").expect("the emulator starts");
    spanprof::emulator::seed_blocking(&spanprof::emulator::SeedTarget {
        endpoint: emulator.address().to_owned(),
        project: "test-project".into(),
        instance: "test-instance".into(),
        database: "test-db".into(),
        seed23_rows: 100,
        timeouts: Timeouts::DEFAULT,
    })
    .expect("seeded");
    let variant = |label: &str, kind, cold| Variant {
        session: Some(kind),
        cold,
        ..Variant::new(label, "SELECT Id FROM Seed23")
    };
    let spec = ProfileSpec {
        variants: vec![
            variant("regular", SessionKind::Regular, false),
            variant("multiplexed", SessionKind::Multiplexed, false),
            variant("cold multiplexed", SessionKind::Multiplexed, true),
        ],
        iterations: 2,
        warmup: 0,
        ..ProfileSpec::default()
    };
    let target = Target::Endpoint(emulator.address().to_owned());
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let events = rt.block_on(run(target, spec));
    let runs = &reports(&events);
    assert_eq!(runs[0].config.session, Some(SessionKind::Regular));
    assert_eq!(runs[0].config.session_granted, None, "granted as asked");
    for report in &runs[1..] {
        assert_eq!(report.config.session, Some(SessionKind::Multiplexed));
        assert_eq!(
            report.config.session_granted,
            Some(SessionKind::Regular),
            "the emulator's answer"
        );
    }
    for it in runs.iter().flat_map(|r| &r.iterations) {
        assert_eq!(it.status(), Status::Ok, "{it:?}");
        assert_eq!(it.answer.rows, 100);
        assert_eq!(it.session_kind.map(|k| k.as_str()), Some("regular"));
    }
}
