//! A 1,000,000-row answer streams through `spanprof serve` with flat server memory: the server holds
//! a few batches and messages, never the answer. The window's memory is bounded by what it shows:
//! runs out of view keep their figures and leave their timelines to the history, read back when
//! opened, and an export still writes them whole; its runs share one local instance, whose
//! database is built once, not once a run.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use spanprof::app::{AppOptions, Format, RECORDS_HELD, SpanprofApp, Tab};
use spanprof::client::{connect_plaintext, execute_streaming_sql_raw};
use spanprof::history::Location;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_client::SpannerClient;
use spanprof::report::Timeline;
use spanprof::wire::StreamDecoder;

use crate::app::{run_to_end, set_query, step_until};

/// Kills the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `spanprof serve` on a free port and returns it with its `host:port`.
fn serve(args: &[&str]) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .arg("serve")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spanprof serve starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let server = Server(child);
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let host = lines
        .find_map(|l| l.strip_prefix("SPANNER_EMULATOR_HOST=").map(str::to_owned))
        .expect("serve prints SPANNER_EMULATOR_HOST");
    // Keep reading what it prints, so its stdout never closes under it.
    std::thread::spawn(move || lines.for_each(drop));
    (server, host)
}

/// Resident memory of a process, in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("a VmRSS line")
        * 1024
}

#[tokio::test(flavor = "multi_thread")]
async fn a_million_rows_stream_with_flat_server_memory() {
    const ROWS: u64 = 1_000_000;
    let (server, host) = serve(&["--rows", "1000000", "--max-message-bytes", "65536"]);
    let pid = server.0.id();
    let channel = connect_plaintext(&host).await.expect("connects");
    let session = SpannerClient::new(channel.clone())
        .create_session(pb::CreateSessionRequest {
            database: crate::client::DATABASE.into(),
            session: None,
        })
        .await
        .expect("a session")
        .into_inner()
        .name;
    let request = pb::ExecuteSqlRequest {
        session,
        sql: "SELECT Id, Name, Email, Country, Age, Score, Active, BirthDate FROM Seed23".into(),
        ..Default::default()
    };
    let mut stream = execute_streaming_sql_raw(channel, tonic::Request::new(request))
        .await
        .expect("streams")
        .into_inner();
    let idle = rss(pid);
    let mut decoder = StreamDecoder::new();
    let mut rows = Vec::new();
    let (mut count, mut at_100k, mut peak, mut bytes) = (0u64, None, 0u64, 0u64);
    let mut next_sample = 0;
    while let Some(message) = stream.message().await.expect("a message") {
        bytes += message.len() as u64;
        decoder.feed_bytes(&message, &mut rows).expect("decodes");
        count += rows.len() as u64;
        rows.clear();
        if count >= next_sample {
            let now = rss(pid);
            peak = peak.max(now);
            if count >= 100_000 && at_100k.is_none() {
                at_100k = Some(now);
            }
            next_sample += 25_000;
        }
    }
    decoder.finish().expect("the stream ends cleanly");
    assert_eq!(count, ROWS);
    let at_100k = at_100k.expect("sampled at 100k rows");
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    eprintln!(
        "server RSS: idle {:.1} MiB, after 100k rows {:.1} MiB, peak over 1M rows {:.1} MiB ({:.0} MB streamed)",
        mib(idle),
        mib(at_100k),
        mib(peak),
        bytes as f64 / 1e6
    );
    // Flat: the last 900,000 rows add (almost) nothing to what the first 100,000 needed.
    assert!(
        peak <= at_100k + (16 << 20),
        "server memory grew from {:.1} MiB to {:.1} MiB",
        mib(at_100k),
        mib(peak)
    );
}

/// Each iteration's total and timeline of the run labelled `label`.
fn records(app: &SpanprofApp, label: &str) -> Vec<(f64, Option<Timeline>)> {
    let run = app.runs().iter().find(|r| r.report.config.label == label);
    let run = run.expect("the run is listed");
    let records = run.report.iterations.iter();
    records.map(|r| (r.total_ms, r.timeline.clone())).collect()
}

#[test]
fn runs_out_of_view_leave_their_timelines_to_the_history_and_get_them_back_when_opened() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("history.sqlite");
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(move |cc| {
            let options = AppOptions {
                history: Location::File(path.clone()),
                ..AppOptions::in_memory(2_000)
            };
            SpanprofApp::new(cc, options)
        });
    let runs = RECORDS_HELD + 2;
    let mut whole = Vec::new();
    for n in 1..=runs {
        let label = format!("m{n}");
        set_query(&mut h, "SELECT * FROM Seed23 LIMIT 1000", 2, &label);
        run_to_end(&mut h);
        whole.push(records(h.state(), &label));
        assert!(whole[n - 1].iter().all(|(_, t)| t.is_some()), "timed");
    }
    step_until(&mut h, "the history to save every run", |app| {
        app.runs().iter().all(|r| r.saved_as.is_some())
    });
    // The newest, shown, and the three before it hold their records whole; the two oldest
    // keep every figure, their timelines left to the history.
    let evicted: Vec<bool> = h.state().runs().iter().map(|r| r.evicted).collect();
    assert_eq!(evicted, [true, true, false, false, false, false]);
    for n in [1, 2] {
        let kept = records(h.state(), &format!("m{n}"));
        let totals: Vec<f64> = whole[n - 1].iter().map(|(t, _)| *t).collect();
        assert_eq!(kept.iter().map(|(t, _)| *t).collect::<Vec<_>>(), totals);
        assert!(kept.iter().all(|(_, t)| t.is_none()));
    }

    // An export of an evicted run writes its iterations whole, read back from the history.
    h.state_mut().set_tab(Tab::Compare);
    h.run_steps(2);
    h.get_by_label("export m2").click();
    h.run_steps(2);
    let file = dir.path().join("m2.json");
    h.state()
        .export_selected(Format::Json, &file)
        .expect("exports");
    let written =
        spanprof::export::read_json(&std::fs::read(&file).expect("the export")).expect("a report");
    let m2 = written.iter().find(|r| r.config.label == "m2");
    let m2 = m2.expect("m2 is written");
    let m2: Vec<(f64, Option<Timeline>)> = m2
        .iterations
        .iter()
        .map(|r| (r.total_ms, r.timeline.clone()))
        .collect();
    assert_eq!(m2, whole[1]);

    // Picked in Compare, m1 is in view: its timelines come back from the history.
    h.get_by_label("m1").click();
    step_until(&mut h, "m1 read back", |app| !app.runs()[0].evicted);
    assert_eq!(records(h.state(), "m1"), whole[0]);
    assert!(
        h.state().log().entries().is_empty(),
        "{:?}",
        h.state().log().entries()
    );
}

/// The window keeps the built-in instance serving from one run to the next (a run built its
/// database anew, and the C allocator kept a share of each: 20 runs grew the window by 100 MB
/// and more), and starts it again when a knob changes what it serves.
#[test]
fn the_window_s_runs_share_one_local_instance_until_a_knob_changes() {
    let mut h = crate::app::app();
    assert_eq!(
        h.state().kept_instance(),
        None,
        "nothing started before a run"
    );
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 10", 2, "first");
    run_to_end(&mut h);
    let first = h.state().kept_instance().expect("the first run started it");
    set_query(&mut h, "SELECT * FROM Seed23 LIMIT 20", 2, "second");
    run_to_end(&mut h);
    assert_eq!(h.state().kept_instance(), Some(first), "the same instance");
    let runs = h.state().runs();
    assert_eq!(runs.len(), 2);
    for run in runs {
        assert_eq!(
            run.report.config.target, "local",
            "{}",
            run.report.config.label
        );
        assert!(run.report.timed().all(|it| it.answer.rows > 0));
    }
    // Fewer rows in Seed23: another database, so another instance.
    h.state_mut().settings_mut().connection.local.seed23_rows = 5_000;
    set_query(&mut h, "SELECT COUNT(*) FROM Seed23", 1, "third");
    run_to_end(&mut h);
    let third = h.state().kept_instance().expect("serving");
    assert_ne!(third, first, "started again for the new rows");
}
