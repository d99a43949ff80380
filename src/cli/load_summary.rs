//! A load run in words: a line per step as it ends, and the summary `load`, `load merge` and
//! `history show` print (both sets of percentiles, where the time went, the knee, the client's
//! CPU).

use std::fmt::Write as _;

use crate::analysis::conflicts;

use crate::load::{LoadReport, Model, StepLevel, StepResult};
use crate::part::Part;
use crate::report::printable;
use crate::text::{maybe_ms, ms};

fn share(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), |s| format!("{:.1}%", s * 100.0))
}

/// One step in a line, as it ends (a read-write step's goodput, attempts and aborts after it).
pub(super) fn step_line(s: &StepResult) -> String {
    let line = format!(
        "{}: {:.1}/s achieved, {} ok, {} errors, {} unfinished, {} late, {} dropped; p50 {} p99 {} (uncorrected p99 {})",
        s.level().describe(),
        s.achieved_rate,
        s.count,
        s.errors,
        s.unfinished,
        s.late,
        s.dropped,
        maybe_ms(s.p50_ms),
        maybe_ms(s.p99_ms),
        maybe_ms(s.p99_uncorrected_ms)
    );
    match transactions_words(s) {
        Some(words) => format!("{line}; {words}"),
        None => line,
    }
}

/// A read-write step's transactions in words: goodput against attempts per second, aborts per
/// transaction and where they aborted; `None` for a query's step.
fn transactions_words(s: &StepResult) -> Option<String> {
    let committed = s.committed?;
    let mut words = format!(
        "{committed} committed, {:.1}/s goodput of {:.1} attempts/s, {:.2} aborts per transaction",
        s.committed_per_s.unwrap_or(0.0),
        s.attempts_per_s.unwrap_or(0.0),
        s.aborts_per_transaction.unwrap_or(0.0)
    );
    if !s.aborts_at.is_empty() {
        let at: Vec<String> = s
            .aborts_at
            .iter()
            .map(|(action, n)| format!("{n} at {action}"))
            .collect();
        let _ = write!(words, " ({})", at.join(", "));
    }
    Some(words)
}

/// A read-write run's transactions, step by step: goodput against attempts, aborts per
/// transaction, how many attempts the transactions took.
fn transactions_table(t: &mut String, r: &LoadReport) {
    if r.steps.iter().all(|s| s.committed.is_none()) {
        return;
    }
    let _ = writeln!(
        t,
        "
transactions (each request one read-write transaction, every attempt and back-off)"
    );
    let _ = writeln!(
        t,
        "{:>16} {:>9} {:>11} {:>11} {:>13}  attempts: transactions",
        "step", "committed", "goodput", "attempts", "aborts/txn"
    );
    for s in &r.steps {
        let attempts: Vec<String> = s
            .attempts
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect();
        let _ = writeln!(
            t,
            "{:>16} {:>9} {:>9.1}/s {:>9.1}/s {:>13.2}  {}",
            s.level().describe(),
            s.committed.unwrap_or(0),
            s.committed_per_s.unwrap_or(0.0),
            s.attempts_per_s.unwrap_or(0.0),
            s.aborts_per_transaction.unwrap_or(0.0),
            attempts.join(", ")
        );
        for x in &s.scripts {
            let _ = writeln!(
                t,
                "{:>16} {:>9} {:>9.1}/s {:>11} {:>13.2}  {} failed; p50 {} p99 {}",
                format!("↳ {}", printable(&x.script)),
                x.committed,
                x.committed_per_s,
                "",
                x.aborts_per_transaction.unwrap_or(0.0),
                x.errors,
                maybe_ms(x.p50_ms),
                maybe_ms(x.p99_ms)
            );
        }
    }
}

/// Who blocked whom in a read-write run, step by step: the waits and wounds the target named and
/// the hottest keys (the local instance's lock table is a model of Spanner's locking); nothing for
/// a run of queries or a target that named none.
fn blocked(t: &mut String, r: &LoadReport) {
    if r.steps.iter().all(|s| s.conflicts.is_none()) {
        return;
    }
    let _ = writeln!(t, "\nwho blocked whom ({})", conflicts::SOURCE);
    for s in r.steps.iter().filter(|s| s.committed.is_some()) {
        let Some(c) = &s.conflicts else {
            let _ = writeln!(
                t,
                "{:>16}  the target named no lock waits",
                s.level().describe()
            );
            continue;
        };
        let _ = writeln!(
            t,
            "{:>16}  {} waits ({:.1} ms) and {} wounds",
            s.level().describe(),
            c.waits,
            c.wait_ms,
            c.wounds
        );
        for k in c.keys.iter().take(conflicts::KEYS_PRINTED) {
            let _ = writeln!(t, "{:>16}  {}", "", printable(&conflicts::key_line(k)));
        }
    }
}

/// The summary: the steps with both sets of percentiles, where their time went, the knee, the
/// client's CPU.
pub fn summary(r: &LoadReport) -> String {
    let mut t = String::new();
    let model = match r.model {
        Model::Open => format!("open model, at most {} in flight", r.max_in_flight),
        Model::Closed => "closed model".to_owned(),
    };
    let _ = writeln!(
        t,
        "load \"{}\": {} on {}, {model}, {} steps{}",
        printable(&r.label),
        printable(&crate::text::excerpt(&r.sql, 80)),
        printable(&r.target),
        ms(r.step_duration_s * 1e3),
        if r.cancelled {
            " (cancelled: the last step is partial)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        t,
        "\nlatency from the intended start (corrected for coordinated omission) | from the actual start"
    );
    let _ = writeln!(
        t,
        "{:>16} {:>9} {:>7} {:>6} {:>10} {:>6} {:>7} {:>9} {:>9} {:>9} {:>7} | {:>9} {:>9} {:>7} | {:>9}",
        "step",
        "achieved",
        "ok",
        "errors",
        "unfinished",
        "late",
        "dropped",
        "p50",
        "p90",
        "p99",
        ">100ms",
        "p50",
        "p99",
        ">100ms",
        "gen lag99"
    );
    for s in &r.steps {
        let _ = writeln!(
            t,
            "{:>16} {:>7.1}/s {:>7} {:>6} {:>10} {:>6} {:>7} {:>9} {:>9} {:>9} {:>7} | {:>9} {:>9} {:>7} | {:>9}",
            s.level().describe(),
            s.achieved_rate,
            s.count,
            s.errors,
            s.unfinished,
            s.late,
            s.dropped,
            maybe_ms(s.p50_ms),
            maybe_ms(s.p90_ms),
            maybe_ms(s.p99_ms),
            share(s.over_100ms_share),
            maybe_ms(s.p50_uncorrected_ms),
            maybe_ms(s.p99_uncorrected_ms),
            share(s.over_100ms_share_uncorrected),
            maybe_ms(s.generator_lag_p99_ms),
        );
    }
    for s in r.steps.iter().filter(|s| !s.errors_by_status.is_empty()) {
        let codes: Vec<String> = s
            .errors_by_status
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        let _ = writeln!(
            t,
            "errors at {}: {}",
            s.level().describe(),
            codes.join(", ")
        );
    }
    transactions_table(&mut t, r);
    blocked(&mut t, r);
    parts_table(&mut t, r);
    processes(&mut t, r);
    let _ = writeln!(t, "\nknee: {}", r.knee_words);
    let _ = writeln!(t, "  (rule: {})", r.knee_rule);
    client_cpu(&mut t, r);
    super::target_stats::block(&mut t, r);
    for notice in &r.notices {
        let _ = writeln!(t, "note: {notice}");
    }
    t
}

/// A merged run's processes, step by step: each one's level, achieved rate and generator lag,
/// kept apart.
fn processes(t: &mut String, r: &LoadReport) {
    if r.steps.iter().all(|s| s.processes.is_empty()) {
        return;
    }
    let _ = writeln!(t, "\neach process's generator (merged run)");
    for s in &r.steps {
        for p in &s.processes {
            let _ = writeln!(
                t,
                "{:>16}  {}: {} asked, {:.1}/s achieved, {} ok, generator lag p99 {}, max {}",
                s.level().describe(),
                printable(&crate::text::excerpt(&p.run, 60)),
                crate::text::trimmed(p.level, 3),
                p.achieved_rate,
                p.count,
                maybe_ms(p.generator_lag_p99_ms),
                maybe_ms(p.generator_lag_max_ms),
            );
        }
    }
}

/// Where each step's time went: the accounting's parts, each its mean per request (a read-write
/// run's: the transaction's parts, per committed transaction).
fn parts_table(t: &mut String, r: &LoadReport) {
    let read_write = r.steps.iter().any(|s| s.committed.is_some());
    let parts: &[Part] = if read_write {
        &Part::TRANSACTION
    } else {
        &Part::QUERY
    };
    let shown: Vec<Part> = parts
        .iter()
        .copied()
        .filter(|p| r.steps.iter().any(|s| s.part_ms(*p) > 0.0))
        .collect();
    if shown.is_empty() {
        return;
    }
    let _ = writeln!(
        t,
        "\nwhere the time went (mean per {}, from the actual start)",
        if read_write {
            "committed transaction"
        } else {
            "request"
        }
    );
    let _ = write!(t, "{:>16}", "step");
    for p in &shown {
        let _ = write!(t, " {:>11}", p.label());
    }
    let _ = writeln!(t);
    for s in &r.steps {
        let _ = write!(t, "{:>16}", s.level().describe());
        for p in &shown {
            let _ = write!(t, " {:>11}", ms(s.part_ms(*p)));
        }
        let _ = writeln!(t);
    }
    let queued: Vec<&StepResult> = r
        .steps
        .iter()
        .filter(|s| s.server_queue_ms.is_some())
        .collect();
    if !queued.is_empty() {
        let _ = writeln!(
            t,
            "of the server's part, the wait in its queue for a query thread (as it reports it):"
        );
        for s in queued {
            let _ = writeln!(
                t,
                "{:>16}  {} of {}",
                s.level().describe(),
                maybe_ms(s.server_queue_ms),
                ms(s.part_ms(Part::Server))
            );
        }
    }
}

/// The client's CPU per request, its decode capacity, and where it saturated.
fn client_cpu(t: &mut String, r: &LoadReport) {
    if let Some(cpu) = r.client_cpu_ms_per_query {
        let _ = writeln!(
            t,
            "client CPU per request: {} (decode and its own work, at the first step)",
            ms(cpu)
        );
    }
    if let Some(n) = r.decode_capacity_per_core {
        let _ = writeln!(
            t,
            "one core decodes about {} of these per second",
            crate::text::count(n.round() as u64)
        );
    }
    if let Some(at) = r.client_saturated_at {
        let level = match r.model {
            Model::Open => StepLevel::Rate(at),
            Model::Closed => StepLevel::Concurrency(at as u32),
        };
        let _ = writeln!(
            t,
            "the client's CPU saturates at {}: its decode and own work ran on, or waited for, 80% \
             of the {} cores (or were most of this process's 80%)",
            level.describe(),
            r.cores
        );
    }
}
