//! The headers the official clients send, as `spanprof profile --cloud` sends them to a TLS
//! stand-in (`standin.rs`) that returns `afe` only to requests that opted in and breaks each
//! query's first attempt after five messages: the AFE opt-in on every call and `afe_ms` in the
//! CSV, a request id on every call (the resume keeping its request number, attempt + 1), end-to-end
//! tracing's two headers on every query with the CSV's `trace_id` equal to the `traceparent`'s,
//! and Google's latency points (operation, attempts) in the CSV.

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;

use spanprof::client::headers::{
    AFE_SERVER_TIMING_HEADER, API_CLIENT_HEADER, END_TO_END_TRACING_HEADER, REQUEST_ID_HEADER,
    TRACEPARENT_HEADER,
};
use spanprof::client::{
    DatabasePath, Decoding, Endpoint, Partitioned, Query, QueryMode, RequestOptions, ResumePolicy,
    Session, Timeouts,
};
use spanprof::wire::DecoderKind;
use tonic::Code;
use tonic::metadata::MetadataMap;

use crate::cloud::{DATABASE, INSTANCE, PROJECT, TokenEndpoint, write_key_file};
use crate::standin::{AFE_MS, Behaviour, GFE_MS, MESSAGES, Queries, StandIn, Timing};

/// The Cloud Spanner these tests profile: over TLS, ten one-row messages a query whose first
/// attempt breaks after five, and `server-timing` with `afe` only to requests that opted in.
const CLOUD: Behaviour = Behaviour {
    tls: true,
    timing: Timing::Measured,
    ..Behaviour::answering(Queries::Resumable)
};

fn header<'a>(metadata: &'a MetadataMap, name: &str) -> Option<&'a str> {
    metadata.get(name).and_then(|v| v.to_str().ok())
}

/// What a profile run left: its output and its CSV's rows, each as column → cell.
struct Run {
    output: Output,
    rows: Vec<HashMap<String, String>>,
}

impl Run {
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
}

/// `spanprof profile --cloud` against `standin` (trusting its certificate), two iterations and no
/// warm-up, with `extra` arguments.
async fn profile(standin: &StandIn, extra: &[&str]) -> Run {
    let tokens = TokenEndpoint::start(200).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &tokens.uri);
    let csv = dir.path().join("run.csv");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .args(["profile", "--cloud", "--cloud-endpoint", &standin.endpoint])
        .arg("--credentials")
        .arg(&key)
        .args(["--project", PROJECT, "--instance", INSTANCE])
        .args(["--database", DATABASE, "--sql", "SELECT n FROM Numbers"])
        .args(["--iterations", "2", "--warmup", "0", "--timeout", "30s"])
        .arg("--csv")
        .arg(&csv)
        .args(extra);
    if let Some(certificate) = &standin.certificate {
        let path = dir.path().join("standin.pem");
        std::fs::write(&path, certificate).expect("the certificate can be written");
        command.arg("--cloud-ca").arg(path);
    }
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("joins")
        .expect("spanprof runs");
    let rows = read_csv(&csv);
    Run { output, rows }
}

fn read_csv(path: &Path) -> Vec<HashMap<String, String>> {
    let Ok(mut reader) = csv::Reader::from_path(path) else {
        return Vec::new();
    };
    let columns: Vec<String> = reader
        .headers()
        .expect("a header")
        .iter()
        .map(str::to_owned)
        .collect();
    reader
        .records()
        .map(|row| {
            let row = row.expect("a CSV row");
            columns
                .iter()
                .cloned()
                .zip(row.iter().map(str::to_owned))
                .collect()
        })
        .collect()
}

/// A request id's six parts: `1.<process>.<client>.<channel>.<request>.<attempt>`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RequestId {
    process: String,
    client: u32,
    channel: u32,
    request: u32,
    attempt: u32,
}

fn request_id(text: &str) -> RequestId {
    let parts: Vec<&str> = text.split('.').collect();
    assert_eq!(parts.len(), 6, "{text}");
    assert_eq!(parts[0], "1", "version 1: {text}");
    let hex = |s: &str| s.len() == 16 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    assert!(hex(parts[1]), "16 lowercase hex digits: {text}");
    let number = |s: &str| s.parse::<u32>().expect("a counter");
    RequestId {
        process: parts[1].to_owned(),
        client: number(parts[2]),
        channel: number(parts[3]),
        request: number(parts[4]),
        attempt: number(parts[5]),
    }
}

/// Every call's request id, checked to come from one process, client and channel; with the
/// methods.
fn request_ids(calls: &[(&'static str, MetadataMap)]) -> Vec<(&'static str, RequestId)> {
    let ids: Vec<(&'static str, RequestId)> = calls
        .iter()
        .map(|(method, headers)| {
            let id = header(headers, REQUEST_ID_HEADER)
                .unwrap_or_else(|| panic!("{method} carries no request id"));
            (*method, request_id(id))
        })
        .collect();
    let first = &ids[0].1;
    for (method, id) in &ids {
        assert_eq!(
            (&id.process, id.client, id.channel),
            (&first.process, first.client, first.channel),
            "{method}"
        );
    }
    ids
}

const METHODS: [&str; 6] = [
    "CreateSession",
    "ExecuteStreamingSql",
    "ExecuteStreamingSql",
    "ExecuteStreamingSql",
    "ExecuteStreamingSql",
    "DeleteSession",
];

#[tokio::test(flavor = "multi_thread")]
async fn over_tls_every_call_carries_a_request_id_and_the_afe_opt_in() {
    let standin = StandIn::start(CLOUD).await;
    let run = profile(&standin, &[]).await;
    assert!(run.output.status.success(), "{}", run.stderr());
    let calls = standin.calls();
    let methods: Vec<&str> = calls.iter().map(|(m, _)| *m).collect();
    assert_eq!(methods, METHODS, "each query resumed once");
    for (method, headers) in &calls {
        assert_eq!(
            header(headers, AFE_SERVER_TIMING_HEADER),
            Some("true"),
            "{method}"
        );
        let client = header(headers, API_CLIENT_HEADER).unwrap_or_default();
        assert!(client.contains("spanprof/"), "{method}: {client:?}");
        assert!(header(headers, TRACEPARENT_HEADER).is_none(), "not asked");
        assert!(
            header(headers, END_TO_END_TRACING_HEADER).is_none(),
            "not asked"
        );
    }
    let ids = request_ids(&calls);
    let numbers: Vec<(u32, u32)> = ids.iter().map(|(_, id)| (id.request, id.attempt)).collect();
    assert_eq!(
        numbers,
        [(1, 1), (2, 1), (2, 2), (3, 1), (3, 2), (4, 1)],
        "a resume keeps its request number and counts its attempt up"
    );
    assert_eq!(
        standin.multiplexed_asked(),
        [true],
        "a read-only profile asks for a multiplexed session"
    );
    assert_eq!(run.rows.len(), 2, "{}", run.stderr());
    for (row, call) in run.rows.iter().zip([1, 3]) {
        assert_eq!(row["status"], "ok", "{row:?}");
        assert_eq!(row["rows"], MESSAGES.to_string());
        assert_eq!(row["resumes"], "1");
        assert_eq!(
            row["messages"],
            MESSAGES.to_string(),
            "none lost or repeated"
        );
        assert_eq!(
            row["afe_ms"],
            format!("{AFE_MS}.000"),
            "afe came: it was asked for"
        );
        assert_eq!(row["gfe_ms"], format!("{GFE_MS}.000"));
        assert_eq!(row["server_elapsed_ms"], "1.250", "the query latency");
        let (_, first_attempt) = &calls[call];
        assert_eq!(
            Some(row["request_id"].as_str()),
            header(first_attempt, REQUEST_ID_HEADER),
            "the CSV keeps the first attempt's id"
        );
        assert_eq!(row["rpc_attempts"], "2");
        let attempts: Vec<f64> = row["attempt_ms"]
            .split(';')
            .map(|ms| ms.parse().expect("a time"))
            .collect();
        assert_eq!(attempts.len(), 2, "{row:?}");
        let operation: f64 = row["operation_ms"].parse().expect("a time");
        let total: f64 = row["total_ms"].parse().expect("a time");
        let sum: f64 = attempts.iter().sum();
        assert!(
            attempts.iter().all(|&a| a > 0.0)
                && sum <= operation + 0.01
                && operation <= total + 0.01,
            "attempts {attempts:?} within the operation {operation} within the total {total}"
        );
    }
    let stdout = String::from_utf8_lossy(&run.output.stdout);
    assert!(stdout.contains("attempt_latencies"), "{stdout}");
    assert!(stdout.contains("afe_latencies"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn end_to_end_tracing_sends_both_headers_and_keeps_each_iteration_s_trace_id() {
    let standin = StandIn::start(CLOUD).await;
    let run = profile(&standin, &["--end-to-end-tracing"]).await;
    assert!(run.output.status.success(), "{}", run.stderr());
    let calls = standin.calls();
    let queries: Vec<&MetadataMap> = calls
        .iter()
        .filter(|(m, _)| *m == "ExecuteStreamingSql")
        .map(|(_, h)| h)
        .collect();
    assert_eq!(queries.len(), 4);
    let mut trace_ids = Vec::new();
    for headers in &queries {
        assert_eq!(header(headers, END_TO_END_TRACING_HEADER), Some("true"));
        let parent = header(headers, TRACEPARENT_HEADER).expect("a traceparent");
        let parts: Vec<&str> = parent.split('-').collect();
        assert_eq!(parts.len(), 4, "{parent}");
        assert_eq!((parts[0], parts[3]), ("00", "01"), "{parent}");
        assert_eq!((parts[1].len(), parts[2].len()), (32, 16), "{parent}");
        trace_ids.push(parts[1].to_owned());
    }
    assert_eq!(
        trace_ids[0], trace_ids[1],
        "a resume is the same iteration's trace"
    );
    assert_eq!(trace_ids[2], trace_ids[3]);
    assert_ne!(trace_ids[0], trace_ids[2], "a new trace per iteration");
    let in_csv: Vec<&str> = run.rows.iter().map(|r| r["trace_id"].as_str()).collect();
    assert_eq!(in_csv, [trace_ids[0].as_str(), trace_ids[2].as_str()]);
    let stdout = String::from_utf8_lossy(&run.output.stdout);
    for trace in [&trace_ids[0], &trace_ids[2]] {
        assert!(stdout.contains(&format!("trace {trace}")), "{stdout}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_afe_timing_leaves_the_opt_in_out_and_afe_ms_empty() {
    let standin = StandIn::start(CLOUD).await;
    let run = profile(&standin, &["--no-afe-timing"]).await;
    assert!(run.output.status.success(), "{}", run.stderr());
    let calls = standin.calls();
    assert_eq!(calls.len(), METHODS.len());
    for (method, headers) in &calls {
        assert!(
            header(headers, AFE_SERVER_TIMING_HEADER).is_none(),
            "{method}"
        );
        assert!(header(headers, REQUEST_ID_HEADER).is_some(), "{method}");
    }
    assert_eq!(run.rows.len(), 2);
    for row in &run.rows {
        assert_eq!(row["status"], "ok");
        assert_eq!(row["afe_ms"], "", "not asked, not sent");
        assert_eq!(row["gfe_ms"], format!("{GFE_MS}.000"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_server_timing_and_request_id_echo_do_not_break_the_run() {
    let answers = Behaviour {
        timing: Timing::Malformed,
        ..CLOUD
    };
    let standin = StandIn::start(answers).await;
    let run = profile(&standin, &[]).await;
    assert!(run.output.status.success(), "{}", run.stderr());
    assert_eq!(run.rows.len(), 2);
    for row in &run.rows {
        assert_eq!(row["status"], "ok", "{row:?}");
        assert_eq!(row["rows"], MESSAGES.to_string());
        assert_eq!((row["gfe_ms"].as_str(), row["afe_ms"].as_str()), ("", ""));
        assert_eq!(request_id(&row["request_id"]).attempt, 1);
    }
}

/// `server-timing: gfet4t7; dur=1e300` (or `afe`) panicked the engine thread
/// ("cannot convert float seconds to Duration"): exit 1, no report. Now the run finishes, exit 0,
/// with the figure absent.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_timing_past_any_duration_is_left_out_and_the_run_finishes() {
    for timing in ["gfet4t7; dur=1e300", "afe; dur=1e300, gfet4t7; dur=2"] {
        let answers = Behaviour {
            timing: Timing::Fixed(timing),
            ..CLOUD
        };
        let standin = StandIn::start(answers).await;
        let run = profile(&standin, &[]).await;
        assert!(run.output.status.success(), "{timing}: {}", run.stderr());
        assert_eq!(run.rows.len(), 2, "{timing}");
        for row in &run.rows {
            assert_eq!(row["status"], "ok", "{row:?}");
            assert_eq!(row["afe_ms"], "", "{timing}");
        }
        let gfe: Vec<&str> = run.rows.iter().map(|r| r["gfe_ms"].as_str()).collect();
        let wanted = if timing.starts_with("afe") {
            "2.000"
        } else {
            ""
        };
        assert_eq!(gfe, [wanted, wanted], "{timing}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_iteration_keeps_its_request_id_and_trace_id() {
    let answers = Behaviour {
        queries: Queries::Refuse(Code::InvalidArgument, "the stand-in refuses this query"),
        ..CLOUD
    };
    let standin = StandIn::start(answers).await;
    let run = profile(&standin, &["--end-to-end-tracing"]).await;
    assert_eq!(run.output.status.code(), Some(3), "{}", run.stderr());
    let queries: Vec<MetadataMap> = standin
        .calls()
        .into_iter()
        .filter(|(m, _)| *m == "ExecuteStreamingSql")
        .map(|(_, h)| h)
        .collect();
    // An invalid argument no retry can fix: the run stops after its first iteration (not one
    // error per iteration), and that iteration was not resumed.
    assert_eq!(
        (queries.len(), run.rows.len()),
        (1, 1),
        "one iteration, not resumed: refused"
    );
    for (row, headers) in run.rows.iter().zip(&queries) {
        assert_eq!(row["status"], "error", "{row:?}");
        assert!(row["error"].contains("refuses"), "{row:?}");
        assert_eq!(
            Some(row["request_id"].as_str()),
            header(headers, REQUEST_ID_HEADER)
        );
        let parent = header(headers, TRACEPARENT_HEADER).unwrap_or_default();
        assert!(
            !row["trace_id"].is_empty() && parent.contains(&row["trace_id"]),
            "{row:?} {parent}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tls_endpoint_is_trusted_only_with_its_certificate() {
    let standin = StandIn::start(CLOUD).await;
    let untrusted = StandIn {
        certificate: None,
        ..standin.clone()
    };
    let run = profile(&untrusted, &[]).await;
    assert!(
        !run.output.status.success(),
        "a self-signed certificate is not trusted"
    );
    assert!(standin.calls().is_empty(), "no call got through");
    let dir = tempfile::tempdir().expect("a temp dir");
    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "just text").expect("written");
    let run = profile(
        &untrusted,
        &["--cloud-ca", not_pem.to_str().expect("utf-8")],
    )
    .await;
    assert!(!run.output.status.success());
    assert!(
        run.stderr().contains("--cloud-ca") && run.stderr().contains("no PEM certificate"),
        "{}",
        run.stderr()
    );
}

/// A partitioned read's calls each have a request number of their own: PartitionQuery first (the
/// iteration's `request_id`), then every partition's stream; its attempts are PartitionQuery's and
/// the partitions'.
#[tokio::test(flavor = "multi_thread")]
async fn a_partitioned_read_numbers_its_partition_query_and_each_partition() {
    let standin = StandIn::start(Behaviour::answering(Queries::OneRow)).await;
    let endpoint = Endpoint::plaintext(standin.host());
    let session = Session::open(&endpoint, &DatabasePath::default(), Timeouts::DEFAULT)
        .await
        .expect("a session");
    let options = RequestOptions {
        partitioned: Some(Partitioned {
            data_boost: false,
            max_partitions: None,
        }),
        ..RequestOptions::default()
    };
    let query = Query {
        sql: "SELECT n FROM Numbers".into(),
        mode: QueryMode::Normal,
        options,
        ..Query::default()
    };
    let prepared = session.prepare(&query).expect("prepares");
    let timing = session
        .execute(
            &prepared,
            ResumePolicy::default(),
            Decoding::new(DecoderKind::Fast, &mut |_, _| {}),
        )
        .await
        .expect("the two partitions are read");
    let calls = standin.calls();
    let ids = request_ids(&calls);
    let mut numbers: Vec<(&str, u32, u32)> = ids
        .iter()
        .map(|(method, id)| (*method, id.request, id.attempt))
        .collect();
    numbers[2..].sort();
    assert_eq!(
        numbers,
        [
            ("CreateSession", 1, 1),
            ("PartitionQuery", 2, 1),
            ("ExecuteStreamingSql", 3, 1),
            ("ExecuteStreamingSql", 4, 1),
        ]
    );
    assert_eq!(
        timing.request_id.map(|id| id.to_string()).as_deref(),
        header(&calls[1].1, REQUEST_ID_HEADER),
        "the iteration is known by its PartitionQuery"
    );
    assert_eq!(timing.attempts.len(), 3, "{:?}", timing.attempts);
    let operation = timing.operation.expect("an operation time");
    assert!(
        operation <= timing.total,
        "{operation:?} {:?}",
        timing.total
    );
}

/// The window's Headers menu: end-to-end tracing on and the AFE opt-in off, persisted; each
/// iteration of the run gets its own trace id and a request id, and Details shows the last one's
/// with a Copy button for each.
#[test]
fn the_window_s_headers_menu_traces_a_run_and_details_shows_its_ids() {
    use egui_kittest::kittest::Queryable as _;
    let mut h = crate::app::app();
    crate::app::set_query(&mut h, "SELECT Id FROM Seed23 LIMIT 10", 2, "traced");
    h.get_by_label("Headers").click();
    h.run_steps(2);
    h.get_by_label("End-to-end tracing").click();
    h.run_steps(2);
    // A click in the menu closes it: open it again for the other box.
    if h.query_by_label("AFE server timing").is_none() {
        h.get_by_label("Headers").click();
        h.run_steps(2);
    }
    h.get_by_label("AFE server timing").click();
    h.run_steps(2);
    let headers = h.state().settings().connection.headers;
    assert!(
        headers.end_to_end_tracing && !headers.afe_timing,
        "{headers:?}"
    );
    if h.query_by_label("AFE server timing").is_some() {
        h.get_by_label("Headers").click();
        h.run_steps(2);
    }
    crate::app::run_to_end(&mut h);
    let run = h.state().runs()[0].report.clone();
    let traces: Vec<&str> = run
        .iterations
        .iter()
        .map(|r| r.ids.trace_id.as_deref().expect("a trace id"))
        .collect();
    assert_eq!(traces.len(), 2);
    assert_ne!(traces[0], traces[1], "a trace per iteration");
    assert!(traces.iter().all(|t| t.len() == 32));
    assert!(
        h.query_by_label("operation_latencies").is_some(),
        "the summary has Google's latency points"
    );
    let last = run.iterations[1]
        .ids
        .request_id
        .clone()
        .expect("a request id");
    request_id(&last);
    h.state_mut().set_tab(spanprof::app::Tab::Details);
    h.run_steps(2);
    h.get_by_label("Stats & timing").click();
    h.run_steps(2);
    assert!(h.query_by_label(&last).is_some(), "the request id is shown");
    assert!(
        h.query_by_label(traces[1]).is_some(),
        "the trace id is shown"
    );
    assert_eq!(h.query_all_by_label("Copy").count(), 2);
    let saved = serde_json::to_string(h.state().settings()).expect("the settings serialise");
    let back: spanprof::app::Settings = serde_json::from_str(&saved).expect("they read back");
    assert_eq!(back.connection.headers, headers);
    let older: spanprof::app::Settings =
        serde_json::from_str(r#"{"connection":{"kind":"Local"}}"#).expect("an old save reads");
    assert_eq!(
        older.connection.headers,
        spanprof::client::HeaderOptions::default()
    );
}
