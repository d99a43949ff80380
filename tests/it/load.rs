//! What `spanprof load` must show, through the binary: the built-in instance as a known
//! queue (2 query threads, 10 ms of service) and its knee; a periodic freeze measured from the
//! intended and from the actual start; bad input refused or capped with a message; a refusing
//! server counted while the run goes on; Ctrl-C keeping what was measured; the HDR interval log
//! read back by HdrHistogram's own Python package.
//!
//! Durations: the queue's steps last 2 s each (no length is prescribed; 2 s is 100 to 800
//! requests a step), the freeze runs the prescribed 20 s at 50 req/s.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};

/// `spanprof load ARGS`, saving nothing in any run history unless ARGS name one.
pub(crate) fn load(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_spanprof"));
    command
        .arg("load")
        .args(args)
        .env_remove("SPANNER_EMULATOR_HOST")
        .env_remove("SPANPROF_HISTORY");
    if args.first() != Some(&"merge") && !args.contains(&"--history") {
        command.arg("--no-history");
    }
    command.output().expect("spanprof runs")
}

fn ok_load(args: &[&str], json: &Path) -> (Value, String) {
    let out = load(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "spanprof load {args:?}: {stderr}");
    let report = std::fs::read(json).expect("the JSON report is written");
    let report: Value = serde_json::from_slice(&report).expect("JSON");
    (report, String::from_utf8_lossy(&out.stdout).into_owned())
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is a number in {v}"))
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is a count in {v}"))
}

fn steps(report: &Value) -> &Vec<Value> {
    report["steps"].as_array().expect("steps")
}

/// The p50 of `SELECT 1` on the built-in instance with no queue at each of the rates below the
/// queue's capacity: what a request costs the instance and the client besides any service time at
/// that rate (a few milliseconds in a debug build on a busy machine, more as the rate rises).
fn unqueued_p50_ms(dir: &Path) -> Vec<(f64, f64)> {
    let json = dir.join("unqueued.json");
    let (report, _) = ok_load(
        &[
            "--local",
            "--sql",
            "SELECT 1",
            "--rate",
            "50,100,150,200",
            "--step-duration",
            "2s",
            "--json",
            json.to_str().expect("utf-8"),
        ],
        &json,
    );
    steps(&report)
        .iter()
        .map(|s| (f(s, "target_rate"), f(s, "p50_ms")))
        .collect()
}

#[test]
fn a_known_queue_flattens_at_its_capacity_and_the_knee_is_marked_there() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let unqueued = unqueued_p50_ms(dir.path());
    let json = dir.path().join("queue.json");
    let csv = dir.path().join("queue.csv");
    let (report, stdout) = ok_load(
        &[
            "--local",
            "--query-threads",
            "2",
            "--service-ms",
            "10",
            "--sql",
            "SELECT 1",
            "--rate",
            "50,100,150,200,250,300,400",
            "--step-duration",
            "2s",
            "--drain",
            "20s",
            "--json",
            json.to_str().expect("utf-8"),
            "--csv",
            csv.to_str().expect("utf-8"),
        ],
        &json,
    );
    let steps = steps(&report);
    assert_eq!(steps.len(), 7);
    let summary: Vec<String> = steps
        .iter()
        .map(|s| {
            format!(
                "{}: achieved {:.1} p50 {:?} p99 {:?}",
                s["target_rate"], s["achieved_rate"], s["p50_ms"], s["p99_ms"]
            )
        })
        .collect();
    let said = summary.join("\n");
    // Past 200/s, two threads of 10 ms serve at most 200 a second: the rate flattens there.
    for s in steps.iter().filter(|s| f(s, "target_rate") >= 250.0) {
        let achieved = f(s, "achieved_rate");
        assert!(
            (180.0..=220.0).contains(&achieved),
            "achieved {achieved} at {}: not within 10% of 200/s\n{said}",
            s["target_rate"]
        );
    }
    let knee = report["knee"]
        .as_f64()
        .unwrap_or_else(|| panic!("a knee\n{said}"));
    assert!(
        [150.0, 200.0, 250.0].contains(&knee),
        "the knee at {knee} is not within one step of 200\n{said}"
    );
    // Below the knee a request is served at once: its median is the 10 ms of service on top of
    // what the instance and the client cost a request unqueued at the same rate (the query's own
    // start counts in the service, so that cost is an upper bound of what comes on top).
    // At the capacity itself (200/s, utilisation 1) any jitter queues and nothing drains it, so
    // the steps checked are those below both the knee and the capacity.
    for s in steps
        .iter()
        .filter(|s| f(s, "target_rate") < knee.min(200.0))
    {
        let (p50, rate) = (f(s, "p50_ms"), f(s, "target_rate"));
        let (_, unqueued) = *unqueued
            .iter()
            .find(|(r, _)| *r == rate)
            .unwrap_or_else(|| panic!("an unqueued step at {rate}"));
        assert!(
            (8.0..=12.0 + unqueued).contains(&p50),
            "p50 {p50} ms at {rate} is not within 20% of 10 ms (+ {unqueued} ms unqueued)\n{said}"
        );
        assert_eq!(u(s, "errors"), 0, "{s}");
    }
    let words = report["knee_words"].as_str().expect("words");
    assert!(words.contains("server"), "{words}");
    assert!(stdout.contains("knee: "), "{stdout}");
    assert!(stdout.contains("from the actual start"), "{stdout}");
    // Where the time went: at the knee and past it, the server's part (its queue) dominates.
    let last = steps.last().expect("a step");
    let server = last["parts"]["server"].as_f64().unwrap_or(0.0);
    assert!(
        server > 50.0,
        "the queue is the server's time: {}",
        last["parts"]
    );
    let csv = std::fs::read_to_string(&csv).expect("the CSV is written");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 8, "a header and a row per step:\n{csv}");
    assert!(
        lines[0].starts_with("target_rate,concurrency,"),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("part_server_ms"), "{}", lines[0]);
}

/// `spanprof load --endpoint` at 300 req/s against `serve --query-threads 2 --service-ms 10` (a
/// 200/s server): the requests wait in the server's queue, and that is the server's time. Before,
/// one connection carried every request and a connection takes 100 streams at once: the rest
/// waited in the client's HTTP/2 layer, before the server saw them, and that wait was counted as
/// network (2,650 ms of network against 481 ms of server per request). Now the run opens a
/// connection per hundred requests it may keep in flight, and the server says how long each
/// waited in its queue, shown under its part.
/// `--stop-at-knee`, the window's "Find the knee" on the command line: one query thread of 5 ms
/// serves 200 a second, so a doubling ramp departs at 400 or 800 and the steps above the one that
/// confirms the knee are not run, which the report says.
#[test]
fn stop_at_knee_ends_the_ramp_one_step_past_the_knee_and_says_so() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("knee.json");
    let (report, stdout) = ok_load(
        &[
            "--local",
            "--query-threads",
            "1",
            "--service-ms",
            "5",
            "--sql",
            "SELECT 1",
            "--rate",
            "50,100,200,400,800,1600,3200,6400",
            "--step-duration",
            "0.5s",
            "--drain",
            "5s",
            "--stop-at-knee",
            "--json",
            json.to_str().expect("utf-8"),
        ],
        &json,
    );
    let steps = steps(&report);
    let knee = report["knee"].as_f64().expect("a knee");
    let at = steps
        .iter()
        .position(|s| f(s, "target_rate") == knee)
        .expect("the knee's step");
    assert_eq!(
        steps.len(),
        at + 2,
        "the knee and one step past it: {stdout}"
    );
    assert!(steps.len() < 8, "{stdout}");
    let notices = report["notices"].to_string();
    assert!(
        notices.contains("the ramp stopped at the knee"),
        "{notices}"
    );
}

#[test]
fn queueing_at_a_saturated_server_is_the_server_s_time_not_the_network_s() {
    let server =
        crate::serve_process::ServeProcess::start(&["--query-threads", "2", "--service-ms", "10"]);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("queue.json");
    let csv = dir.path().join("queue.csv");
    let (report, stdout) = ok_load(
        &[
            "--endpoint",
            &server.host,
            "--sql",
            "SELECT 1",
            "--rate",
            "300",
            "--step-duration",
            "4s",
            "--drain",
            "20s",
            "--json",
            json.to_str().expect("utf-8"),
            "--csv",
            csv.to_str().expect("utf-8"),
        ],
        &json,
    );
    let step = &steps(&report)[0];
    let parts = step["parts"].as_object().expect("parts");
    let mean: f64 = parts.values().filter_map(Value::as_f64).sum();
    let network = parts["network"].as_f64().unwrap_or(0.0);
    assert!(
        network <= 0.05 * mean,
        "network {network} ms of {mean} ms per request: {}",
        step["parts"]
    );
    let server = parts["server"].as_f64().unwrap_or(0.0);
    let queue = f(step, "server_queue_ms");
    assert!(
        queue > 0.5 * server && queue <= server,
        "the queue's wait ({queue} ms) is most of the server's part ({server} ms)"
    );
    assert!(
        stdout.contains("the wait in its queue for a query thread"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(&csv).expect("the CSV is written");
    // The queue's column ends a query run's columns; a read-write run's follow it, empty here.
    assert!(
        csv.lines()
            .next()
            .is_some_and(|h| h.contains(",part_untimed_ms,server_queue_ms,committed,")),
        "{csv}"
    );
}

#[test]
fn a_periodic_freeze_shows_in_the_corrected_latencies_and_hides_from_the_uncorrected() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("freeze.json");
    let (report, stdout) = ok_load(
        &[
            "--local",
            "--freeze-every-ms",
            "2000",
            "--freeze-ms",
            "200",
            "--sql",
            "SELECT 1",
            "--rate",
            "50",
            "--max-in-flight",
            "2",
            "--step-duration",
            "20s",
            "--json",
            json.to_str().expect("utf-8"),
        ],
        &json,
    );
    let step = &steps(&report)[0];
    let corrected = f(step, "over_100ms_share");
    let uncorrected = f(step, "over_100ms_share_uncorrected");
    assert!(
        (0.03..=0.08).contains(&corrected),
        "from the intended start {:.2}% over 100 ms, not 3-8%: {step}",
        corrected * 100.0
    );
    assert!(
        uncorrected <= 0.025,
        "from the actual start {:.2}% over 100 ms, more than 2.5%: {step}",
        uncorrected * 100.0
    );
    assert!(uncorrected < corrected, "{step}");
    // Each freeze holds back the starts behind the two in flight: about 8 per freeze.
    assert!(u(step, "late") >= 30, "late starts are counted: {step}");
    assert!(u(step, "count") >= 950, "{step}");
    // Never shorter; not strictly longer at p99: about ten freezes put their first start, on
    // time and held for the whole freeze, at the top of both sets, and the 1% tail is those.
    assert!(
        f(step, "p99_ms") >= f(step, "p99_uncorrected_ms"),
        "the corrected p99 is never the shorter: {step}"
    );
    assert!(
        f(step, "max_ms") >= 150.0,
        "a start held for a whole freeze is the longest: {step}"
    );
    assert!(step["generator_lag_p99_ms"].is_number(), "{step}");
    // Both sets of percentiles printed.
    assert!(stdout.contains("from the intended start"), "{stdout}");
    assert!(stdout.contains("from the actual start"), "{stdout}");
}

#[test]
fn bad_rates_and_durations_are_refused_with_a_message_and_an_absurd_rate_capped() {
    let sql = ["--sql", "SELECT 1"];
    for (args, said) in [
        (vec!["--rate", "0"], "is not a rate"),
        (vec!["--rate=-5"], "is not a rate"),
        (vec!["--rate", "fast"], "is not a rate"),
        (
            vec!["--rate", "10", "--step-duration", "99999999999999h"],
            "longer than 100 days",
        ),
        (
            vec!["--rate", "10", "--step-duration", "25h"],
            "at most 24 h",
        ),
        (vec!["--concurrency", "0"], "is not a concurrency"),
        (
            vec!["--rate", "10", "--max-in-flight", "0"],
            "max-in-flight",
        ),
    ] {
        let all: Vec<&str> = ["--local"].into_iter().chain(sql).chain(args).collect();
        let out = load(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{all:?} is refused");
        assert!(stderr.contains(said), "{all:?}: {stderr}");
        assert!(
            stderr.lines().count() <= 6,
            "a clear message, not a dump: {stderr}"
        );
    }
    let out = load(&["--local", "--rate", "10"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("one --sql"));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("capped.json");
    let out = load(&[
        "--local",
        "--sql",
        "SELECT 1",
        "--rate",
        "1e9",
        "--step-duration",
        "10ms",
        "--json",
        json.to_str().expect("utf-8"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("capped at 20000"), "{stderr}");
    let report: Value =
        serde_json::from_slice(&std::fs::read(&json).expect("written")).expect("JSON");
    let step = &steps(&report)[0];
    assert_eq!(f(step, "target_rate"), 20_000.0);
    let issued = u(step, "count") + u(step, "errors") + u(step, "dropped") + u(step, "unfinished");
    assert_eq!(issued, 200, "20,000/s for 10 ms: {step}");
    assert!(
        report["notices"].to_string().contains("capped"),
        "{}",
        report["notices"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusing_server_is_counted_by_status_and_the_run_goes_on() {
    // One query at a time, each held 30 ms by its delay: four clients at once are mostly refused.
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 100,
        knobs: KnobSettings {
            max_concurrent_queries: 1,
            first_byte_delay_ms: 30,
            ..KnobSettings::default()
        },
        connections: Default::default(),
    })
    .await
    .expect("the local instance starts");
    let host = instance.host_port();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("refused.json");
    let json_arg = json.to_str().expect("utf-8").to_owned();
    let out = tokio::task::spawn_blocking(move || {
        load(&[
            "--endpoint",
            &host,
            "--query-mode",
            "normal",
            "--sql",
            "SELECT 1",
            "--concurrency",
            "1,4",
            "--step-duration",
            "1s",
            "--json",
            &json_arg,
        ])
    })
    .await
    .expect("joins");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: Value =
        serde_json::from_slice(&std::fs::read(&json).expect("written")).expect("JSON");
    let steps = steps(&report);
    assert_eq!(steps.len(), 2, "both steps ran: {report}");
    assert_eq!(u(&steps[0], "errors"), 0, "one client alone is served");
    let refused = steps[1]["errors_by_status"]["RESOURCE_EXHAUSTED"]
        .as_u64()
        .unwrap_or(0);
    assert!(refused > 0, "refusals counted by status: {}", steps[1]);
    assert_eq!(u(&steps[1], "errors"), refused);
    assert!(u(&steps[1], "count") > 0, "and the served ones measured");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("RESOURCE_EXHAUSTED"), "{stdout}");
    instance.stop(Duration::from_secs(2)).await;
}

#[test]
fn ctrl_c_keeps_what_was_measured() {
    a_signal_keeps_what_was_measured("INT");
}

/// SIGHUP is how an ended SSH session or a closed terminal stops a long test. Before, it ended
/// the process with nothing printed, written or saved.
#[test]
fn a_hangup_keeps_what_was_measured_as_ctrl_c_does() {
    a_signal_keeps_what_was_measured("HUP");
}

/// `spanprof load --local` of `SELECT 1` at `rates`, a minute a step, with `extra` arguments,
/// started with its output piped.
fn minute_steps(rates: &str, extra: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(["load", "--local", "--sql", "SELECT 1", "--rate", rates])
        .args(["--step-duration", "60s"])
        .args(extra)
        .env_remove("SPANNER_EMULATOR_HOST")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spanprof load starts")
}

/// Sends `signal` (`INT`, `HUP`...) to `child`.
fn send(child: &std::process::Child, signal: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status();
    assert!(sent.is_ok_and(|s| s.success()), "SIG{signal} sent");
}

/// `spanprof load` (two steps of a minute) sent `signal` after 4 s: it ends soon, with the
/// report of the first step written and the run said to be cancelled.
fn a_signal_keeps_what_was_measured(signal: &str) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("cut.json");
    let child = minute_steps("20,40", &["--json", json.to_str().expect("utf-8")]);
    std::thread::sleep(Duration::from_secs(4));
    send(&child, signal);
    let began = Instant::now();
    let out = child.wait_with_output().expect("it ends");
    assert!(
        began.elapsed() < Duration::from_secs(20),
        "it stops soon after SIG{signal}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "SIG{signal}: {:?} {stderr}",
        out.status
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&json).expect("written"))
        .expect("the report of what was measured");
    assert_eq!(report["cancelled"], true);
    let steps = steps(&report);
    assert_eq!(steps.len(), 1, "the second step never began: {report}");
    assert!(
        u(&steps[0], "count") >= 20,
        "about 3 s at 20/s measured: {}",
        steps[0]
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("cancelled"));
}

/// After the first Ctrl-C, the run ends and saves what it measured; a second one ends the process
/// at once, even while the save waits for the history's lock (15 s at most), which another
/// process holds here. Before, the second was ignored and the process waited out the lock.
#[test]
fn a_second_signal_ends_at_once_while_the_history_lock_is_awaited() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = dir.path().join("h.sqlite");
    let locker = rusqlite::Connection::open(&store).expect("a history file");
    locker
        .execute_batch("CREATE TABLE held (x); BEGIN EXCLUSIVE; INSERT INTO held VALUES (1);")
        .expect("the whole file locked");
    let child = minute_steps("20", &["--history", store.to_str().expect("utf-8")]);
    std::thread::sleep(Duration::from_secs(3));
    let interrupt = || send(&child, "INT");
    interrupt();
    // The step ends, the summary is printed, and the save waits for the lock.
    std::thread::sleep(Duration::from_secs(3));
    interrupt();
    let began = Instant::now();
    let out = child.wait_with_output().expect("it ends");
    let waited = began.elapsed();
    drop(locker);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        waited < Duration::from_secs(6),
        "ended {waited:?} after the second signal: {stderr}"
    );
    assert_eq!(out.status.code(), Some(130), "SIGINT's status: {stderr}");
    assert!(stderr.contains("a second signal"), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("cancelled"),
        "the summary was printed before"
    );
}

fn python() -> String {
    match std::env::var("SPANPROF_PYTHON") {
        Ok(p) if !p.is_empty() => p,
        _ => panic!(
            "SPANPROF_PYTHON is not set: run ./scripts/test, which installs HdrHistogram's Python \
             package (hdrhistogram) in its virtual environment and points SPANPROF_PYTHON at it"
        ),
    }
}

#[test]
#[ignore = "needs HdrHistogram's Python package: scripts/test installs it"]
fn the_hdr_log_reads_back_in_hdrhistograms_own_python_package() {
    let python = python();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("log.json");
    let log = dir.path().join("log.hlog");
    let (report, _) = ok_load(
        &[
            "--local",
            "--sql",
            "SELECT * FROM Seed23 LIMIT 10",
            "--rate",
            "100,200",
            "--step-duration",
            "1s",
            "--json",
            json.to_str().expect("utf-8"),
            "--hdr-log",
            log.to_str().expect("utf-8"),
        ],
        &json,
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/read_hdr_log.py");
    let out = Command::new(python)
        .arg(script)
        .arg(&log)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let intervals: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON lines");
    let steps = steps(&report);
    assert_eq!(intervals.len(), steps.len());
    for (interval, step) in intervals.iter().zip(steps) {
        assert_eq!(u(interval, "count"), u(step, "count"), "{interval} {step}");
        let p99_ms = f(interval, "p99_us") / 1e3;
        assert_eq!(p99_ms, f(step, "p99_ms"), "{interval} {step}");
    }
}

/// Two `spanprof load` processes against one server at the same time, merged: each step's count
/// is the sum of theirs exactly, its percentiles are those of one histogram of every sample, its
/// level the load asked of the server, and each process's generator is kept apart.
#[test]
fn two_processes_at_once_merge_into_one_run_exactly() {
    let server =
        crate::serve_process::ServeProcess::start(&["--query-threads", "2", "--service-ms", "2"]);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let paths: Vec<String> = ["a.json", "b.json"]
        .iter()
        .map(|name| dir.path().join(name).to_str().expect("utf-8").to_owned())
        .collect();
    // A run of `sql` at 20 then 40 req/s against the server, its report to `json`.
    let run_of = |sql: &'static str, json: String| {
        let host = server.host.clone();
        move || {
            load(&[
                "--endpoint",
                &host,
                "--query-mode",
                "normal",
                "--sql",
                sql,
                "--rate",
                "20,40",
                "--step-duration",
                "1s",
                "--json",
                &json,
            ])
        }
    };
    let runs: Vec<_> = paths
        .iter()
        .map(|json| std::thread::spawn(run_of("SELECT 1", json.clone())))
        .collect();
    for run in runs {
        let out = run.join().expect("joins");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let merged_path = dir.path().join("merged.json");
    let html_path = dir.path().join("merged.html");
    let out = load(&[
        "merge",
        &paths[0],
        &paths[1],
        "--json",
        merged_path.to_str().expect("utf-8"),
        "--html",
        html_path.to_str().expect("utf-8"),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("each process's generator"), "{stdout}");

    let read = |path: &str| {
        spanprof::load::LoadReport::from_json(&std::fs::read(path).expect("written"))
            .expect("a load report")
    };
    let (a, b) = (read(&paths[0]), read(&paths[1]));
    let merged = read(merged_path.to_str().expect("utf-8"));
    assert_merged_exactly(&[a, b], &merged, &[40.0, 80.0]);
    // The merged run's HTML report reads back as the merged run.
    let html = std::fs::read(&html_path).expect("the HTML report");
    assert_eq!(
        spanprof::export::read_load_report(&html).expect("embedded"),
        merged
    );

    // Runs of different queries are refused by name.
    let other = dir.path().join("other.json");
    let out = run_of("SELECT 2", other.to_str().expect("utf-8").to_owned())();
    assert!(out.status.success());
    let refused = load(&["merge", &paths[0], other.to_str().expect("utf-8")]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("another query"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

/// `merged` is `runs` merged exactly, step by step: each count the sum of theirs, each percentile
/// that of one histogram of all their samples, each level the sum (`levels`), each process's
/// generator lag its own.
pub(crate) fn assert_merged_exactly(
    runs: &[spanprof::load::LoadReport],
    merged: &spanprof::load::LoadReport,
    levels: &[f64],
) {
    assert_eq!(merged.steps.len(), levels.len());
    for (k, step) in merged.steps.iter().enumerate() {
        let counts: u64 = runs.iter().map(|r| r.steps[k].count).sum();
        assert_eq!(step.count, counts, "step {k}");
        assert!(step.count > 0);
        assert_eq!(step.target_rate, Some(levels[k]), "the load all asked");
        let mut all = spanprof::load::Latencies::decode(&runs[0].steps[k].histogram).expect("0's");
        for run in &runs[1..] {
            all.add(&spanprof::load::Latencies::decode(&run.steps[k].histogram).expect("its"));
        }
        assert_eq!(all.count(), step.count);
        for (q, got) in [
            (0.5, step.p50_ms),
            (0.9, step.p90_ms),
            (0.99, step.p99_ms),
            (0.999, step.p999_ms),
        ] {
            assert_eq!(got, all.quantile_ms(q), "step {k}, quantile {q}");
        }
        assert_eq!(step.processes.len(), runs.len());
        for (process, run) in step.processes.iter().zip(runs) {
            assert_eq!(
                process.generator_lag_p99_ms,
                run.steps[k].generator_lag_p99_ms
            );
        }
    }
}
