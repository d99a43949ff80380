//! A FIFO named as a report, a baseline, a workload, a plan file or a
//! recorded stream blocked spanprof forever (`open(2)` of a FIFO waits for a writer);
//! only `--credentials` was refused. Now every file read whole must be a regular file, refused at
//! once, and a recorded stream may be a FIFO, read as it comes, empty without a writer.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::history::text;

/// Runs spanprof with `args` for at most 10 s (killed past it): its exit code (`None` when it had
/// to be killed), its stderr, and how long it took.
fn within_ten_seconds(dir: &Path, args: &[&str]) -> (Option<i32>, String, Duration) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(args)
        .current_dir(dir)
        .env("SPANPROF_HISTORY", dir.join("h.sqlite"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    loop {
        if let Some(status) = child.try_wait().expect("waits") {
            let out = child.wait_with_output().expect("its stderr");
            return (status.code(), text(&out.stderr), started.elapsed());
        }
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let out = child.wait_with_output().expect("reaped");
            return (None, text(&out.stderr), started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Against main (ef0cf4c) each of these hung until killed at 10 s. Now each ends at once, saying
/// what the file is; a stream from a FIFO without a writer is an empty stream. (`--cloud-ca` reads
/// through the same `files::read_regular`, tested in `src/files.rs`: it is read after the
/// credentials, which this machine has none of.)
#[test]
fn a_fifo_named_as_any_file_never_blocks() {
    let dir = tempfile::tempdir().expect("a directory");
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    let f = fifo.to_str().expect("a UTF-8 path");
    let profile = |extra: &[&'static str]| {
        let mut args = vec![
            "profile",
            "--local",
            "--rows",
            "10",
            "--sql",
            "SELECT 1",
            "--iterations",
            "1",
        ];
        args.extend_from_slice(extra);
        args
    };
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("compare", vec!["compare", f, f]),
        ("plan", vec!["plan", f]),
        ("explain", vec!["explain", f]),
        ("baseline", {
            let mut a = profile(&["--fail-if-slower", "10%"]);
            a.extend(["--baseline", f]);
            a
        }),
        (
            "workload",
            vec!["profile", "--local", "--rows", "10", "--workload", f],
        ),
        ("decode", vec!["decode", f]),
    ];
    let mut hung = Vec::new();
    for (name, args) in cases {
        let (code, stderr, took) = within_ten_seconds(dir.path(), &args);
        eprintln!(
            "{name}: exit {code:?} after {took:.1?}: {}",
            stderr.lines().last().unwrap_or("")
        );
        if code.is_none() {
            hung.push(name);
        }
    }
    assert!(hung.is_empty(), "blocked on the FIFO: {hung:?}");
}
