//! What `profile` and `compare` print beyond the per-run tables, as text: a run's findings, every
//! variant against the reference with the phases the difference is in, a sweep's table and cost
//! models, and a gate's decision. Everything here prints what [`analysis`](crate::analysis)
//! computed; labels go through [`printable`].

use std::fmt::Write as _;
use std::io::Write;

use crate::analysis::conflicts;
use crate::analysis::{
    self, BootstrapSettings, Findings, Gate, IterationCauses, RunComparison, compare_runs,
    gate_named,
};
use crate::part::Measure;
use crate::report::{RunReport, printable};
use crate::text::{ms, signed_ms};

/// Query statistics that did not come, a slow first (cold) iteration, a busy machine or window,
/// and outlying iterations, as [`Findings`] found them; empty when there is nothing to say.
pub fn findings(report: &RunReport) -> String {
    let found = Findings::of(report);
    let mut text = String::new();
    if let Some(message) = report.iterations.first().and_then(|r| r.error())
        && report.stopped.is_some()
    {
        text.push_str(&underlined(&report.config.sql, message));
    }
    if let Some(transactions) = &found.transactions {
        let _ = writeln!(text, "\n{transactions}.");
    }
    blocked(&mut text, report);
    if let Some(missing) = &found.missing_statistics {
        let _ = writeln!(text, "\n{missing}");
    }
    if let Some(first) = &found.first {
        let _ = writeln!(text, "\n{first}");
    }
    for line in found
        .busy
        .as_ref()
        .map(ToString::to_string)
        .into_iter()
        .chain(found.window.as_ref().map(ToString::to_string))
        .chain(found.untimed_words())
        .chain(found.outlier_words())
    {
        let _ = writeln!(text, "{line}");
    }
    // Why each outlier was slow, from the timelines (older reports have none).
    if let Ok(explained) = analysis::explain(report) {
        for it in explained
            .iterations
            .iter()
            .filter(|it| found.outliers.iter().any(|o| o.iteration == it.iteration))
        {
            text.push_str(&iteration_text(it));
        }
    }
    text
}

/// Who blocked whom in a read-write run, when the target named its waits or wounds: the totals and
/// the hottest keys, said to come from the local instance's model of Spanner's locking.
fn blocked(text: &mut String, report: &RunReport) {
    let Some(c) = crate::analysis::RunConflicts::of(report) else {
        return;
    };
    let _ = writeln!(
        text,
        "\nwho blocked whom ({}): {}",
        c.source,
        c.totals_words()
    );
    for k in c.tally.keys.iter().take(conflicts::KEYS_PRINTED) {
        let _ = writeln!(text, "  {}", printable(&conflicts::key_line(k)));
    }
}

/// The SQL with the span the server's `message` points at underlined, when it points at one (a
/// query of one line, not too long to read at a terminal).
fn underlined(sql: &str, message: &str) -> String {
    let Some(span) = analysis::sql_span(message, sql) else {
        return String::new();
    };
    if sql.chars().any(char::is_control) || sql.chars().count() > 200 {
        return String::new();
    }
    let before = sql[..span.start].chars().count();
    let width = sql[span].chars().count().max(1);
    format!(
        "\n    {}\n    {}{}\n",
        printable(sql),
        " ".repeat(before),
        "^".repeat(width)
    )
}

/// Every run but the reference against the reference (the run labelled `reference`): the verdict
/// and the phases the difference is in, then their plans matched operator by operator (where both
/// kept one). Empty with one run.
pub fn against_reference(reports: &[RunReport], reference: &str) -> String {
    let Some(base) = reports.iter().find(|r| r.config.label == reference) else {
        return String::new();
    };
    let mut text = String::new();
    for other in reports.iter().filter(|r| r.config.label != reference) {
        let comparison = compare_runs(base, other, BootstrapSettings::DEFAULT);
        let line = comparison.verdict_with_deltas().unwrap_or_else(|| {
            format!(
                "{} cannot be compared with {}: one of them has no successful timed iteration",
                comparison.b_name, comparison.a_name
            )
        });
        if text.is_empty() {
            let _ = writeln!(text, "\nagainst {}:", printable(reference));
        }
        let _ = writeln!(text, "{}", printable(&line));
    }
    // Then each variant's plan against the reference's, where both kept one.
    for other in reports.iter().filter(|r| r.config.label != reference) {
        let names = analysis::PairNames::labels(base, other);
        text.push_str(&super::plan::plan_diff_text(base, other, names));
    }
    text
}

/// The mean of the total and of each part in both runs with the change, as a Markdown table: the
/// parts' changes add up to the total's.
pub fn part_table(comparison: &RunComparison) -> String {
    let Some(parts) = &comparison.parts else {
        return String::new();
    };
    let mut text = String::new();
    let _ = writeln!(
        text,
        "| part | {} mean | {} mean | change |",
        printable(&comparison.a_name),
        printable(&comparison.b_name)
    );
    let _ = writeln!(text, "| --- | ---: | ---: | ---: |");
    let _ = writeln!(
        text,
        "| **total** | {} | {} | {} |",
        ms(parts.a_mean),
        ms(parts.b_mean),
        signed_ms(parts.total_change())
    );
    for c in &parts.parts {
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} |",
            c.part.label(),
            ms(c.a_mean),
            ms(c.b_mean),
            signed_ms(c.change())
        );
    }
    let _ = writeln!(
        text,
        "\nThe parts' changes add up to the change of the mean total."
    );
    text
}

/// A sweep's table (one row per value: rows, MB, the median and p10–p90 of each phase) and its
/// cost models; `None` when the runs are not a sweep.
pub fn sweep(reports: &[RunReport]) -> Option<String> {
    let sweep = analysis::sweep(&reports.iter().collect::<Vec<_>>())?;
    let measures: Vec<Measure> = sweep
        .models
        .iter()
        .map(|m| m.measure)
        .filter(|m| sweep.rows.iter().all(|r| r.band(*m).is_some()))
        .collect();
    let mut text = String::new();
    let _ = writeln!(text, "\nsweep of @{}:\n", printable(&sweep.param));
    let mut header = format!("| @{} | rows | bytes |", printable(&sweep.param));
    let mut rule = "| ---: | ---: | ---: |".to_owned();
    for m in &measures {
        let _ = write!(header, " {} (p10–p90) |", m.label());
        rule.push_str(" ---: |");
    }
    let _ = writeln!(text, "{header}\n{rule}");
    for row in &sweep.rows {
        let _ = write!(
            text,
            "| {} | {} | {} |",
            printable(&row.value),
            crate::text::count(row.rows as u64),
            crate::text::bytes(row.wire_bytes as u64)
        );
        for m in &measures {
            if let Some(b) = row.band(*m) {
                let _ = write!(text, " {} ({}–{}) |", ms(b.median), ms(b.p10), ms(b.p90));
            }
        }
        text.push('\n');
    }
    let _ = writeln!(
        text,
        "\ncost model of the total and each part (least squares over every timed iteration):\n"
    );
    let _ = writeln!(
        text,
        "| part | fixed | per 1,000 rows | MB/s | R² |\n| --- | ---: | ---: | ---: | ---: |"
    );
    for m in &sweep.models {
        let mb = m
            .mb_per_s
            .map_or_else(|| "–".to_owned(), |mb| format!("{mb:.1}"));
        let _ = writeln!(
            text,
            "| {} | {} | {} | {mb} | {:.3} |",
            m.measure.label(),
            ms(m.fixed_ms),
            ms(m.ms_per_1000_rows),
            m.r_squared
        );
    }
    Some(text)
}

/// The runs of `new` paired with the runs of `base` they are gated against: by label, or the one
/// run of each when both have one.
pub fn pairs<'a>(
    base: &'a [RunReport],
    new: &'a [RunReport],
) -> Vec<(&'a RunReport, &'a RunReport)> {
    if let ([b], [n]) = (base, new) {
        return vec![(b, n)];
    }
    new.iter()
        .filter_map(|n| {
            base.iter()
                .find(|b| b.config.label == n.config.label)
                .map(|b| (b, n))
        })
        .collect()
}

/// Gates each run of `new` against its baseline in `base`, printing each decision on `out`;
/// returns whether any regressed. A run that cannot be gated is an error.
pub fn gate(
    out: &mut impl Write,
    base: &[RunReport],
    new: &[RunReport],
    gate: Gate,
) -> anyhow::Result<bool> {
    let pairs = pairs(base, new);
    anyhow::ensure!(
        !pairs.is_empty(),
        "the baseline has no run labelled like this run's ({}): label them alike",
        new.iter()
            .map(|r| format!("\"{}\"", printable(&r.config.label)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut regressed = false;
    for (b, n) in pairs {
        // The baseline is usually labelled as this run: called by the time each started, and
        // where that is alike too, by which is which.
        let sources = [Some("baseline".to_owned()), Some("this run".to_owned())];
        let [base_name, new_name] = super::names::pair_names([b, n], sources);
        let names = analysis::PairNames {
            a: &base_name,
            b: &new_name,
        };
        let outcome = gate_named(b, n, names, gate, BootstrapSettings::DEFAULT)?;
        regressed |= outcome.failed;
        writeln!(out, "\ngate: {}", printable(&outcome.reason))?;
    }
    Ok(regressed)
}

/// One iteration and its causes, indented.
pub fn iteration_text(it: &IterationCauses) -> String {
    let mut text = format!(
        "#{:<4} {:>10}  {:>10}\n",
        it.iteration,
        ms(it.total_ms),
        signed_ms(it.extra_ms)
    );
    for c in &it.causes {
        text.push_str(&cause_line(c));
    }
    text
}

/// One cause as a line: its part, its change, where it happened, and the detail.
pub fn cause_line(c: &crate::analysis::Cause) -> String {
    let at = c
        .location
        .map_or(String::new(), |l| format!(" {}", l.words()));
    format!(
        "    {:<12} {:>10}{at}  {}\n",
        c.kind.label(),
        signed_ms(c.ms),
        printable(&c.detail)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_write_run_says_who_blocked_whom_and_on_which_key() {
        use crate::report::{
            Action, ActionKind, Attempt, AttemptOutcome, LockWaitSeen, TransactionRecord,
        };
        let mut report = RunReport::with_totals("r", &[10.0, 11.0]);
        assert!(!findings(&report).contains("who blocked whom"));
        let mut waited = Attempt::new(AttemptOutcome::Committed);
        waited.actions.push(Action {
            kind: Some(ActionKind::Commit),
            ms: 9.0,
            lock_waits: vec![LockWaitSeen {
                key: "accounts(1)".into(),
                column: Some("balance".into()),
                mode: "Exclusive".into(),
                ms: 4.5,
                holders: vec!["aa01".into()],
            }],
            ..Action::default()
        });
        report.iterations[1].transaction = Some(TransactionRecord {
            attempts: vec![waited],
            ..TransactionRecord::default()
        });
        let text = findings(&report);
        assert!(
            text.contains(
                "who blocked whom (the local instance's lock table, a model of Spanner's \
                 locking): 1 waits (4.5 ms) and 0 wounds"
            ),
            "{text}"
        );
        assert!(
            text.contains("  accounts(1) (balance): 1 waits (4.5 ms), 0 wounds"),
            "{text}"
        );
    }

    #[test]
    fn a_run_measured_beside_a_busy_window_says_so() {
        let mut report = RunReport::with_totals("r", &[10.0, 11.0, 12.0]);
        assert!(!findings(&report).contains("window"));
        report.config.window_cpu = Some(crate::report::WindowCpu {
            cpu_s: 0.28,
            wall_s: 0.7,
        });
        assert!(
            findings(&report).contains(
                "the window used 0.4 of a core while this run was measured; the local instance \
                 shares this process"
            ),
            "{}",
            findings(&report)
        );
    }
}
