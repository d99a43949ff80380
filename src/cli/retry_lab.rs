//! `spanprof client --read-write [KNOBS] -- CMD`: the retry lab. Runs the program once against the
//! local instance, its read-write transactions aborted as the knobs script (`--abort-every`,
//! `--abort-retry-delay`), and prints what the retry check made of what the instance saw: a
//! verdict per rule of a correct retry (pass, fail with its first evidence, not exercised), the
//! amplification, and the transactions that starved; `--json` writes the same.

use std::io::Write;

use anyhow::Context as _;
use serde::Serialize;

use super::subject::SubjectArgs;
use crate::engine::retry_lab;
use crate::engine::{RetryLabRun, retry_lab_run};
use crate::export::{Format, write_atomically};
use crate::report::printable;
use crate::retry_lab::{RetryCheck, Verdict};

/// The JSON export: the program's run and the check.
#[derive(Debug, Serialize)]
struct Exported<'a> {
    command: &'a str,
    exit: &'a str,
    success: bool,
    elapsed_ms: f64,
    #[serde(flatten)]
    check: &'a RetryCheck,
}

/// Runs the retry lab; prints the verdicts; writes `--json`. Returns whether the program exited
/// 0, no rule failed and nothing starved.
pub fn run_retry_lab(args: &SubjectArgs, mut out: impl Write) -> anyhow::Result<bool> {
    let mut spec = args.spec()?;
    if args.sql == crate::engine::DEFAULT_SUBJECT_SQL {
        spec.sql = retry_lab::DEFAULT_READ_WRITE_SQL.to_owned();
    }
    eprintln!("retry lab: {}", printable(&spec.command.display()));
    let run = retry_lab_run(&spec).context("the retry lab")?;
    let check = crate::analysis::retry_check(&run.requests, run.overflow);
    out.write_all(summary(&run, &check).as_bytes())?;
    if let Some(path) = args.out.path(Format::Json) {
        let exported = Exported {
            command: &run.command,
            exit: &run.exit,
            success: run.success,
            elapsed_ms: run.elapsed.as_secs_f64() * 1e3,
            check: &check,
        };
        let mut bytes = serde_json::to_vec_pretty(&exported)?;
        bytes.push(b'\n');
        write_atomically(path, &bytes)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(run.success && check.passed())
}

/// The printed summary: the program's exit, a line per rule, the amplification, the starved.
pub fn summary(run: &RetryLabRun, check: &RetryCheck) -> String {
    let mut text = format!(
        "{} ({}, {:.1} s): {} read-write requests\n",
        printable(&run.command),
        run.exit,
        run.elapsed.as_secs_f64(),
        check.requests
    );
    if !run.success {
        text.push_str(&crate::subject::command::stderr_note(&run.stderr_tail));
        text.push('\n');
    }
    if check.overflow {
        text.push_str("more requests came than the instance keeps: the verdicts cover the first\n");
    }
    for rule in &check.rules {
        let line = match &rule.verdict {
            Verdict::Pass { checked } => format!("pass ({checked} checked)"),
            Verdict::NotExercised { why } => format!("not exercised ({why})"),
            Verdict::Fail {
                checked,
                evidence: e,
            } => format!(
                "FAIL ({checked} checked): transaction {}, attempt {}, {}: expected {}, saw {}",
                e.transaction,
                e.attempt,
                e.request,
                e.expected,
                printable(&e.seen)
            ),
        };
        text.push_str(&format!("{:<86} {line}\n", rule.rule.text()));
    }
    let a = &check.amplification;
    text.push_str(&format!(
        "amplification: {} attempts for {} transactions ({:.2} per transaction), {} committed ({})\n",
        a.attempts,
        a.transactions,
        a.attempts_per_transaction,
        a.committed,
        a.attempts_per_commit
            .map_or("no commit".to_owned(), |p| format!("{p:.2} attempts per commit")),
    ));
    for s in &check.starved {
        let end = if s.committed {
            "committed at last"
        } else {
            "never committed"
        };
        let tag = match s.tag.as_str() {
            "" => String::new(),
            tag => format!(" (tag {})", printable(tag)),
        };
        text.push_str(&format!(
            "transaction {}{tag}: {} ({end})\n",
            s.transaction, s.note
        ));
    }
    text
}
