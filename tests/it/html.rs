//! The HTML report as a person meets it: headless Chromium opens a real run's file
//! with every request sent to a proxy of ours, and none arrives (a page that does ask for
//! something is caught the same way, so the check can fail); hostile labels, SQL and errors
//! render inert (a marker an injected script or handler would set never appears, while our own
//! script's does); `compare a.html a.json` finds the two the same run; and with `--redact` none of
//! a query's literals is anywhere in the file's bytes.

use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use spanprof::export::{Exporter, Html, read_json, read_reports};
use spanprof::report::RunReport;

fn spanprof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(args)
        .env_remove("SPANNER_EMULATOR_HOST")
        .output()
        .expect("spanprof runs")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Debian's headless Chromium (`chromium-headless-shell`, or `chromium`); `None` (a loud failure
/// under CI) without it.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium-headless-shell", "chromium"]
        .into_iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        });
    if found.is_none() {
        assert!(
            !on_ci(),
            "CI: headless Chromium is missing (apt-get install chromium-headless-shell)"
        );
        eprintln!("skipped: headless Chromium is not installed");
    }
    found
}

/// A proxy that only counts the connections made to it.
struct CountingProxy {
    port: u16,
    connections: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl CountingProxy {
    fn start() -> CountingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        listener.set_nonblocking(true).expect("non-blocking");
        let port = listener.local_addr().expect("its address").port();
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, done) = (connections.clone(), stop.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((mut stream, _)) => {
                        count.fetch_add(1, Ordering::SeqCst);
                        let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
                        let _ = stream.read(&mut [0u8; 4096]);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        CountingProxy {
            port,
            connections,
            stop,
        }
    }

    fn count(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The page's DOM after its scripts ran, every request of it sent to `proxy` (loopback too).
fn dump_dom(chromium: &Path, page: &Path, proxy: &CountingProxy) -> String {
    let profile = tempfile::tempdir().expect("a profile dir");
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.path().display()),
            &format!("--proxy-server=http://127.0.0.1:{}", proxy.port),
            "--proxy-bypass-list=<-loopback>",
            "--virtual-time-budget=3000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A connection may land just after the dump: give it a moment to be counted.
    std::thread::sleep(Duration::from_millis(300));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs headless Chromium (scripts/test installs it)"]
fn a_real_run_s_report_opens_offline_and_asks_the_network_for_nothing() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().expect("a temp dir");
    let (json, html) = (dir.path().join("a.json"), dir.path().join("a.html"));
    ok(&spanprof(&[
        "profile",
        "--no-history",
        "--sql",
        "SELECT * FROM Seed23 LIMIT 2000",
        "--iterations",
        "6",
        "--warmup",
        "1",
        "--query-mode",
        "profile",
        "--json",
        json.to_str().expect("utf-8"),
        "--html",
        html.to_str().expect("utf-8"),
    ]));
    let proxy = CountingProxy::start();
    let dom = dump_dom(&chromium, &html, &proxy);
    assert_eq!(
        proxy.count(),
        0,
        "the report asked the network for something"
    );
    assert!(dom.contains("data-ready=\"1\""), "our script did not run");
    for section in [
        "Time (mean ± σ)",
        "Iterations, part by part",
        "The slowest iteration against the median one",
        "Plan per operator",
        "Every iteration",
        "client host",
        "<svg class=\"bars\"",
        "<svg class=\"timeline\"",
        "Where its extra time went",
    ] {
        assert!(dom.contains(section), "no {section:?} on the page");
    }

    // Every iteration's request id, as support would look it up.
    let runs = read_json(&std::fs::read(&json).expect("the JSON report")).expect("a report");
    for record in &runs[0].iterations {
        let id = record.ids.request_id.as_deref().expect("a request id");
        assert!(dom.contains(id), "no request id {id} on the page");
    }

    // The control: a page that does ask for something is caught by the same proxy.
    let asking = dir.path().join("asking.html");
    std::fs::write(
        &asking,
        "<!DOCTYPE html><html><body><img src=\"http://spanprof-control.invalid/x.png\"></body></html>",
    )
    .expect("the control page");
    let control = CountingProxy::start();
    dump_dom(&chromium, &asking, &control);
    assert!(
        control.count() > 0,
        "the proxy saw no request from a page that made one"
    );
}

/// Text that would run script if it were markup.
const HOSTILE: &str = "</script><script>document.body.setAttribute('data-pwned','1')</script>\
    <img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">\"'&";

#[test]
#[ignore = "needs headless Chromium (scripts/test installs it)"]
fn hostile_labels_sql_and_errors_render_inert() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().expect("a temp dir");
    // A report as a hostile file would bring it: spanprof's own run, its texts replaced.
    let json = dir.path().join("a.json");
    ok(&spanprof(&[
        "profile",
        "--no-history",
        "--sql",
        "SELECT * FROM Seed23 LIMIT 10",
        "--iterations",
        "3",
        "--warmup",
        "0",
        "--json",
        json.to_str().expect("utf-8"),
    ]));
    let mut runs = read_json(&std::fs::read(&json).expect("the report")).expect("a report");
    let run = &mut runs[0];
    run.config.label = HOSTILE.into();
    run.config.sql = format!("SELECT '{HOSTILE}' -- {}", "z".repeat(10_000_000));
    run.config.params = vec![(HOSTILE.into(), HOSTILE.into())];
    run.iterations[1].outcome = spanprof::report::Outcome::failed(HOSTILE, None);
    run.iterations[2].ids.request_id = Some(HOSTILE.into());
    run.stopped = Some(HOSTILE.into());
    let hostile = runs;
    let bytes = Html::default().export(&hostile).expect("an HTML report");
    let page = dir.path().join("hostile.html");
    std::fs::write(&page, &bytes).expect("written");

    let proxy = CountingProxy::start();
    let dom = dump_dom(&chromium, &page, &proxy);
    assert!(dom.contains("data-ready=\"1\""), "our script did not run");
    // The marker as an attribute (the data's own text, shown, names it too).
    assert!(
        !dom.contains("data-pwned=\"1\""),
        "a script from the data ran"
    );
    assert_eq!(
        proxy.count(),
        0,
        "the hostile page asked the network for something"
    );
    // The 10 MB of SQL is cut on the page and kept whole in the embedded report.
    let back = read_reports(&bytes).expect("read back");
    assert_eq!(back[0].config.sql.len(), hostile[0].config.sql.len());
    let shown = dom
        .split("<script type=\"application/json\"")
        .next()
        .unwrap_or("");
    assert!(
        shown.len() < 200_000,
        "the page shows {} bytes of it",
        shown.len()
    );

    // The control: the marker is seen when a page does run such a script.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><html><body><script>document.body.setAttribute('data-pwned','1')</script></body></html>",
    )
    .expect("the control page");
    let seen = dump_dom(&chromium, &control, &proxy);
    assert!(
        seen.contains("data-pwned=\"1\""),
        "the marker check cannot see a marker"
    );
}

#[test]
fn compare_finds_the_html_and_the_json_of_one_run_the_same() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (json, html) = (dir.path().join("a.json"), dir.path().join("a.html"));
    let (json, html) = (json.to_str().expect("utf-8"), html.to_str().expect("utf-8"));
    ok(&spanprof(&[
        "profile",
        "--no-history",
        "--sql",
        "SELECT * FROM Seed23 LIMIT 500",
        "--iterations",
        "8",
        "--warmup",
        "1",
        "--json",
        json,
        "--html",
        html,
    ]));
    let from_json = read_json(&std::fs::read(json).expect("json")).expect("a report");
    let from_html: Vec<RunReport> =
        read_reports(&std::fs::read(html).expect("html")).expect("the embedded report");
    assert_eq!(from_html, from_json);
    let out = ok(&spanprof(&["compare", html, json, "--json"]));
    let verdict: serde_json::Value = serde_json::from_str(&out).expect("compare's JSON");
    let c = &verdict["comparisons"][0];
    assert_eq!(c["total_change_ms"], serde_json::json!(0.0), "{c}");
    assert_eq!(c["significant"], serde_json::json!(false), "{c}");
    for (part, change) in c["part_changes"].as_object().expect("part changes") {
        assert_eq!(change, &serde_json::json!(0.0), "{part} changed");
    }
    // explain reads the HTML file too, and writes one of its own.
    let explained = dir.path().join("e.html");
    ok(&spanprof(&[
        "explain",
        html,
        "--html",
        explained.to_str().expect("utf-8"),
    ]));
    assert!(std::fs::metadata(&explained).expect("written").len() > 1000);
}

/// `profile --query-mode profile --html FILE` of a query with string, number and date literals
/// and a parameter, with `extra` arguments; the file's text.
fn literal_run(dir: &Path, name: &str, extra: &[&str]) -> String {
    let html = dir.join(name);
    let mut args = vec![
        "profile",
        "--no-history",
        "--sql",
        "SELECT Id, Name FROM Seed23 WHERE Name != 'Zanzibar' AND Id > 987654 \
         AND Id < @top AND CAST(Id AS STRING) != '1987-06-05' LIMIT 20",
        "--param",
        "top:INT64=4242424242",
        "--iterations",
        "2",
        "--warmup",
        "0",
        "--query-mode",
        "profile",
        "--html",
        html.to_str().expect("utf-8"),
    ];
    args.extend(extra);
    ok(&spanprof(&args));
    String::from_utf8_lossy(&std::fs::read(&html).expect("the report")).into_owned()
}

#[test]
fn with_redact_none_of_the_query_s_literals_is_in_the_file() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let literals = ["Zanzibar", "987654", "1987-06-05", "4242424242"];
    // Unredacted, the file carries every one of them: the check below can fail.
    let plain = literal_run(dir.path(), "plain.html", &[]);
    for literal in literals {
        assert!(
            plain.contains(literal),
            "{literal} is not in the plain file"
        );
    }
    let text = literal_run(dir.path(), "redacted.html", &["--redact"]);
    for literal in literals {
        assert!(!text.contains(literal), "{literal} is in the redacted file");
    }
    assert!(
        text.contains("Redacted:"),
        "the file says what was redacted"
    );
    assert!(
        text.contains("top:INT64"),
        "the parameter's name and type are kept"
    );
    assert!(
        text.contains("Plan per operator"),
        "the run returned its plan"
    );
    // What spanprof reads back of it is redacted too.
    let back = read_reports(text.as_bytes()).expect("read back");
    assert!(
        back[0].config.sql.contains("Name != '?'"),
        "{}",
        back[0].config.sql
    );
}

#[test]
fn a_run_from_the_history_exports_as_html_and_reads_back() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let history = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_spanprof"))
            .args(args)
            .env("XDG_DATA_HOME", dir.path())
            .env_remove("SPANPROF_HISTORY")
            .env_remove("SPANNER_EMULATOR_HOST")
            .output()
            .expect("spanprof runs")
    };
    ok(&history(&[
        "profile",
        "--sql",
        "SELECT Id FROM Seed23 WHERE Name != 'Zanzibar' LIMIT 50",
        "--iterations",
        "3",
        "--warmup",
        "0",
    ]));
    let listed: serde_json::Value =
        serde_json::from_str(&ok(&history(&["history", "--json"]))).expect("the list as JSON");
    let id = listed["runs"][0]["id"]
        .as_str()
        .expect("a run's id")
        .to_owned();
    let (by_out, by_flag) = (dir.path().join("a.html"), dir.path().join("b.html"));
    ok(&history(&[
        "history",
        "export",
        &id,
        "-o",
        by_out.to_str().expect("utf-8"),
    ]));
    ok(&history(&[
        "history",
        "export",
        &id,
        "--html",
        by_flag.to_str().expect("utf-8"),
        "--redact",
    ]));
    let plain = std::fs::read(&by_out).expect("written");
    let back = read_reports(&plain).expect("the embedded report");
    assert_eq!(
        back[0].config.sql,
        "SELECT Id FROM Seed23 WHERE Name != 'Zanzibar' LIMIT 50"
    );
    let redacted = String::from_utf8(std::fs::read(&by_flag).expect("written")).expect("utf-8");
    assert!(!redacted.contains("Zanzibar") && redacted.contains("Redacted:"));
    // --redact on a JSON export is refused rather than ignored.
    let json = dir.path().join("c.json");
    let refused = history(&[
        "history",
        "export",
        &id,
        "-o",
        json.to_str().expect("utf-8"),
        "--redact",
    ]);
    assert!(!refused.status.success() && !json.exists());
}

#[test]
fn variants_are_compared_with_the_reference_on_the_page() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let html = dir.path().join("v.html");
    ok(&spanprof(&[
        "profile",
        "--no-history",
        "--sql",
        "SELECT 1",
        "--label",
        "one",
        "--sql",
        "SELECT 2",
        "--label",
        "two",
        "--sql",
        "SELECT 3",
        "--label",
        "three",
        "--reference",
        "two",
        "--iterations",
        "3",
        "--warmup",
        "0",
        "--html",
        html.to_str().expect("utf-8"),
    ]));
    let page = std::fs::read_to_string(&html).expect("written");
    assert!(
        page.contains("<h3>one against two</h3>"),
        "one is set against the reference"
    );
    assert!(page.contains("<h3>three against two</h3>"));
    assert!(
        !page.contains("against one</h3>"),
        "the first variant is no reference"
    );
}
