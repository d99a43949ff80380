//! The client against endpoints that misbehave, and the command line against careless input: an
//! endpoint that takes the connection and says nothing, one that is not a
//! gRPC server, a query that never streams; ports out of range, labels with control characters, a
//! comparison with nothing to compare, and a stream file read as it arrives. Each gets a clear
//! error within its limit, never a wait without end.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use spanprof::export::{Exporter as _, Json};
use spanprof::report::{IterationRecord, RunConfig, RunReport, Status};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use crate::standin::{Behaviour, Queries, StandIn};
use crate::support::vector;

/// Longer than any limit the tests set: a command still running then is a client that hangs.
const HANG: Duration = Duration::from_secs(60);

/// Runs `spanprof args` with `env`, killing it (and failing the test) if it runs past [`HANG`].
async fn spanprof(args: &[&str], env: &[(&str, &str)]) -> (Output, Duration) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(args)
        .env_remove("SPANNER_EMULATOR_HOST")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let started = Instant::now();
    let child = command.spawn().expect("spanprof starts");
    let pid = child.id();
    let waiting = tokio::task::spawn_blocking(move || child.wait_with_output());
    match tokio::time::timeout(HANG, waiting).await {
        Ok(output) => (
            output.expect("joins").expect("spanprof runs"),
            started.elapsed(),
        ),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("spanprof {args:?} was still waiting after {HANG:?}: the client hangs");
        }
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A loopback endpoint that accepts connections and never sends a byte.
async fn silent_endpoint() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let address = listener.local_addr().expect("bound").to_string();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    address
}

/// A loopback HTTP/1 server: whatever it is sent, it answers 400 and closes.
async fn http1_endpoint() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let address = listener.local_addr().expect("bound").to_string();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 1024];
                let _ = socket.read(&mut request).await;
                let _ = socket
                    .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    address
}

const SEED: &[&str] = &[
    "seed",
    "--project",
    "test-project",
    "--instance",
    "test-instance",
    "--database",
    "test-db",
    "--rows",
    "10",
];

/// `args` of `profile`, `record` and `seed` against `endpoint`, with `extra` after each.
fn every_client_command(endpoint: &str, extra: &[&str]) -> Vec<Vec<String>> {
    let owned = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    let out = std::env::temp_dir().join(format!("spanprof-hostile-{}.bin", std::process::id()));
    let out = out.to_string_lossy().into_owned();
    let mut commands = vec![
        owned(&["profile", "--sql", "SELECT 1", "--iterations", "1"]),
        owned(&["record", "--sql", "SELECT 1", "--out", &out]),
        owned(SEED),
    ];
    for command in &mut commands {
        command.extend(owned(&["--endpoint", endpoint]));
        command.extend(owned(extra));
    }
    commands
}

/// `profile`, `record` and `seed` against an endpoint that accepts connections and never
/// answers printed nothing and were still waiting after 7 minutes; now each names it within the
/// call limit.
#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_that_never_answers_is_named_within_the_call_limit() {
    let endpoint = silent_endpoint().await;
    for command in every_client_command(&endpoint, &["--call-timeout", "300ms"]) {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        let (output, took) = spanprof(&args, &[]).await;
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {text}");
        assert!(took < Duration::from_secs(20), "{args:?} took {took:?}");
        let named = if args[0] == "seed" {
            text.contains("GetInstance") && text.contains("did not answer in time")
        } else {
            text.contains(&format!(
                "{endpoint} accepted the connection but did not answer CreateSession within 300 ms"
            ))
        };
        assert!(named, "{args:?}: {text}");
    }
}

/// An HTTP/1 endpoint gave "operation was canceled" (or "transport error", or "h2 protocol
/// error", depending on timing); now it is named as no gRPC server.
#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_that_is_no_grpc_server_is_named_as_such() {
    let endpoint = http1_endpoint().await;
    for command in every_client_command(&endpoint, &[]) {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        let (output, _) = spanprof(&args, &[]).await;
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {text}");
        assert!(
            text.contains(&format!(
                "{endpoint} does not speak gRPC (it answers in HTTP/1, not HTTP/2: \"HTTP/1.1 400 Bad Request\")"
            )),
            "{args:?}: {text}"
        );
    }
}

/// A query whose server never sends a message waited for ever; now the first response and
/// the whole iteration have limits, and the server is told the deadline.
#[tokio::test(flavor = "multi_thread")]
async fn a_query_that_never_streams_fails_at_its_limits_and_the_server_is_told_the_deadline() {
    let standin = StandIn::start(Behaviour::answering(Queries::Stall)).await;
    let endpoint = standin.host().to_owned();
    let profile = |limits: &'static [&'static str]| {
        let mut args = vec![
            "profile",
            "--endpoint",
            &endpoint,
            "--sql",
            "SELECT 1",
            "--iterations",
            "1",
            "--warmup",
            "0",
        ];
        args.extend(limits);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    for (limits, said) in [
        (
            &["--first-response-timeout", "300ms"][..],
            "iteration 0: no answer within 300 ms of the request",
        ),
        (
            &["--timeout", "400ms"][..],
            "iteration 0: the iteration did not finish within 400 ms",
        ),
    ] {
        let args = profile(limits);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (output, took) = spanprof(&args, &[]).await;
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(3), "an iteration failed: {text}");
        assert!(text.contains(said), "{limits:?}: {text}");
        assert!(took < Duration::from_secs(20), "{limits:?} took {took:?}");
    }
    let seen = standin.calls();
    let deadlines: Vec<&str> = seen
        .iter()
        .filter(|(method, _)| *method == "ExecuteStreamingSql")
        .map(|(_, headers)| {
            headers
                .get("grpc-timeout")
                .and_then(|v| v.to_str().ok())
                .expect("ExecuteStreamingSql carries grpc-timeout")
        })
        .collect();
    assert_eq!(deadlines.len(), 2);
    let millis = |header: &str| -> f64 {
        let (number, unit) = header.split_at(header.len() - 1);
        let n: f64 = number.parse().expect("a number");
        match unit {
            "H" => n * 3.6e6,
            "M" => n * 6e4,
            "S" => n * 1e3,
            "m" => n,
            "u" => n / 1e3,
            "n" => n / 1e6,
            other => panic!("unit {other}"),
        }
    };
    assert!(
        millis(deadlines[0]) > 590_000.0,
        "the 10 min default: {deadlines:?}"
    );
    assert!(
        (300.0..=400.0).contains(&millis(deadlines[1])),
        "the 400 ms limit: {deadlines:?}"
    );
}

/// `--endpoint 127.0.0.1:99999` connected to port 80; now a port out of range is refused.
#[tokio::test(flavor = "multi_thread")]
async fn a_port_out_of_range_is_refused_from_the_flag_and_from_the_environment() {
    let (output, _) = spanprof(
        &[
            "profile",
            "--endpoint",
            "127.0.0.1:99999",
            "--sql",
            "SELECT 1",
        ],
        &[],
    )
    .await;
    assert_eq!(output.status.code(), Some(2), "a usage error");
    assert!(stderr(&output).contains("is not host:port: the port is not a number from 1 to 65535"));
    let (output, _) = spanprof(
        &["profile", "--sql", "SELECT 1"],
        &[("SPANNER_EMULATOR_HOST", "127.0.0.1:99999")],
    )
    .await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("\"127.0.0.1:99999\" is not host:port"));
}

/// A report of one run whose iterations all ended as `status`.
fn report(label: &str, status: Status) -> RunReport {
    RunReport {
        config: RunConfig {
            label: label.to_owned(),
            target: "local".into(),
            sql: "SELECT 1".into(),
            params: vec![],
            query_mode: spanprof::kind::QueryMode::WithStats,
            iterations: 3,
            warmup: 0,
            decoder: spanprof::kind::Reader::Fast,
            ..Default::default()
        },
        started_at: "2026-12-01T00:00:00Z".into(),
        iterations: (0..3)
            .map(|i| {
                let mut r = IterationRecord::new(label, i, false, "2026-12-01T00:00:00Z");
                r.outcome = spanprof::report::Outcome::from_stored(
                    status,
                    (status != Status::Ok).then(|| "boom".to_owned()),
                    None,
                );
                r.total_ms = 10.0 + f64::from(i);
                r
            })
            .collect(),
        plans: Default::default(),
        stopped: None,
    }
}

fn write_report(dir: &tempfile::TempDir, name: &str, run: &RunReport) -> String {
    let path = dir.path().join(name);
    let bytes = Json.export(std::slice::from_ref(run)).expect("serialises");
    std::fs::write(&path, bytes).expect("writes");
    path.to_string_lossy().into_owned()
}

/// `compare` exited 0 with "no successful iterations to compare"; now that is an error.
#[tokio::test(flavor = "multi_thread")]
async fn comparing_a_run_without_a_successful_iteration_is_an_error() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let good = write_report(&dir, "good.json", &report("good", Status::Ok));
    let failed = write_report(&dir, "failed.json", &report("failed", Status::Error));
    let (output, _) = spanprof(&["compare", &good, &failed], &[]).await;
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("failed.json (failed) has no successful timed iteration"),
        "{}",
        stderr(&output)
    );
}

/// Control characters in a label were printed raw (an escape sequence could clear the
/// terminal or recolour what follows); now they never reach the terminal.
#[tokio::test(flavor = "multi_thread")]
async fn control_characters_in_labels_never_reach_the_terminal() {
    let (output, _) = spanprof(
        &["profile", "--sql", "SELECT 1", "--label", "x\u{1b}[2J"],
        &[],
    )
    .await;
    assert_eq!(output.status.code(), Some(1));
    assert!(
        !output.stderr.contains(&0x1b),
        "no raw escape: {:?}",
        output.stderr
    );
    assert!(stderr(&output).contains("x\\u{1b}[2J\" holds control characters"));

    let dir = tempfile::tempdir().expect("a temporary directory");
    let a = write_report(&dir, "a.json", &report("plain", Status::Ok));
    let b = write_report(&dir, "b.json", &report("evil\u{1b}[31m\u{7}", Status::Ok));
    let (output, _) = spanprof(&["compare", &a, &b], &[]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!output.stdout.contains(&0x1b) && !output.stdout.contains(&0x07));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("evil\\u{1b}[31m\\u{7}"), "{stdout}");
}

/// `decode` read a whole file (or `/dev/zero`) before decoding the first frame. Now the
/// first rows come out while the rest of the stream has not even been written.
#[tokio::test(flavor = "multi_thread")]
async fn decode_prints_the_first_rows_before_the_stream_has_ended() {
    let file = std::fs::read(vector("seed23_100_16k.bin")).expect("the vector");
    let first_frame = 4 + u32::from_be_bytes(file[..4].try_into().expect("a prefix")) as usize;
    let mut child = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(["decode", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spanprof starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(&file[..first_frame]).expect("writes");
    stdin.flush().expect("flushes");
    let stdout = child.stdout.take().expect("stdout");
    let first_line = tokio::task::spawn_blocking(move || {
        let mut lines = BufReader::new(stdout);
        let mut line = String::new();
        lines.read_line(&mut line).map(|_| (line, lines))
    });
    let (line, mut rest) = tokio::time::timeout(Duration::from_secs(30), first_line)
        .await
        .expect("a first row while the stream is still open")
        .expect("joins")
        .expect("reads");
    assert!(line.starts_with("[\"1\","), "{line}");
    stdin
        .write_all(&file[first_frame..])
        .expect("writes the rest");
    drop(stdin);
    let mut tail = String::new();
    rest.read_to_string(&mut tail).expect("reads the rest");
    assert!(child.wait().expect("exits").success());
    assert_eq!(1 + tail.lines().count(), 100, "every row");
}

/// `decode --repeat` of a device read it for ever; now it is refused.
#[tokio::test(flavor = "multi_thread")]
async fn decode_repeat_refuses_what_is_not_a_regular_file() {
    let (output, _) = spanprof(&["decode", "/dev/zero", "--repeat", "3"], &[]).await;
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("--repeat needs a regular file"));
    // A device is not read as a stream at all (a stream is a regular file or a FIFO).
    let (output, _) = spanprof(&["decode", "/dev/zero"], &[]).await;
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("/dev/zero is a character device, not a regular file or a FIFO"),
        "{}",
        stderr(&output)
    );
}
