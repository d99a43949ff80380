//! Markdown: for each run a line, its headline, a table of its parts and a table of the figures
//! beside them, for pasting into an issue (and what `profile` prints).

use std::fmt::Write as _;

use crate::analysis::PartStats;
use crate::report::{RunReport, Status, figure_summaries};
use crate::stats::Summary;
use crate::text::{capitalised, ms};

use super::{ExportError, Exporter};

/// For each run, a line with its label, target, iteration counts and failures; the headline
/// (mean ± σ, range, the largest parts); a table of the total and its parts (mean, median, σ,
/// extremes, p90, p99 and each part's share of the mean total), which says that the means add up
/// and the medians do not, and how the wait was split; then the figures beside the parts (time to
/// first byte, the overlap, what the server reported, Google's latency points, the attempt count)
/// when any was measured. Figures are scaled to the unit a person reads them in.
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

impl Exporter for Markdown {
    fn extension(&self) -> &'static str {
        "md"
    }

    fn export(&self, reports: &[RunReport]) -> Result<Vec<u8>, ExportError> {
        let sections: Vec<String> = reports.iter().map(section).collect();
        Ok(sections.join("\n").into_bytes())
    }
}

/// One run's line and tables, ending with a newline.
fn section(report: &RunReport) -> String {
    let not_warmup = || report.iterations.iter().filter(|r| !r.warmup);
    let iterations = not_warmup().count();
    let failed = not_warmup().filter(|r| r.status() != Status::Ok).count();
    let warmups = report.iterations.len() - iterations;
    let mut out = format!(
        "**{}** on {}: iterations {iterations}, warm-up {warmups}, failed {failed}{}\n\n",
        escape(&report.config.label),
        escape(&report.config.target),
        connection_note(report),
    );
    if let Some(stopped) = &report.stopped {
        let _ = writeln!(out, "**{}**\n", escape(&capitalised(stopped)));
    }
    let Some(stats) = PartStats::of_run(report) else {
        out.push_str("No successful iterations to summarise.\n");
        return out;
    };
    let _ = writeln!(out, "{}\n", stats.headline());
    out.push_str(&parts_table(&stats));
    out.push_str(&figures(report));
    out
}

/// The total and its parts, with the notes a reader needs to add them up.
fn parts_table(stats: &PartStats) -> String {
    let mut out = String::from("| part | mean | median | σ | min | max | p90 | p99 | share |\n");
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    let _ = writeln!(
        out,
        "| **total** | {} | 100% |",
        cells(&stats.total).join(" | ")
    );
    for p in &stats.parts {
        let _ = writeln!(
            out,
            "| {} | {} | {:.0}% |",
            p.part.label(),
            cells(&p.summary).join(" | "),
            p.share * 100.0
        );
    }
    let _ = writeln!(
        out,
        "\nThe parts' means add up to the mean total; their medians and percentiles do not. {}.",
        stats.split.note()
    );
    if stats.client_work_untimed > 0 {
        out.push_str("An older report: the client's own work was not timed, and is in untimed.\n");
    }
    if !stats.untimed_notable.is_empty() {
        let _ = writeln!(
            out,
            "Untimed was more than max(1 ms, 3%) of {} of {} iterations.",
            stats.untimed_notable.len(),
            stats.total.count
        );
    }
    out
}

/// The figures beside the parts and the attempt count; empty when none was measured.
fn figures(report: &RunReport) -> String {
    let points = figure_summaries(&report.timed().collect::<Vec<_>>());
    if points.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nBeside the parts (overlapping them, or measured elsewhere; never added to them):\n\n",
    );
    out.push_str("| figure | mean | median | σ | min | max | p90 | p99 |\n");
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (figure, s) in points {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "| {} | {} |", figure.name(), cells(&s).join(" | "));
    }
    if let Some((attempts, operations)) = report.attempt_count() {
        let _ = writeln!(
            out,
            "\nattempt_count: {attempts} in {operations} operations"
        );
    }
    out
}

/// How the run connected, when said: `; cold starts`, `; session multiplexed` and, when the server
/// granted another kind, which.
fn connection_note(report: &RunReport) -> String {
    let config = &report.config;
    let mut note = String::new();
    if config.cold {
        note.push_str("; cold starts (a new connection, token and session each iteration)");
    }
    if let Some(session) = config.session {
        let _ = write!(note, "; session {session}");
        if let Some(granted) = config.session_granted {
            let _ = write!(note, " asked for, the server granted a {} one", granted);
        }
    }
    note
}

fn cells(s: &Summary) -> [String; 7] {
    [s.mean, s.median, s.std_dev, s.min, s.max, s.p90, s.p99].map(ms)
}

/// `text` with Markdown's inline markup characters escaped and line breaks made spaces, so a
/// label shows as written and cannot break the table or the line.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => {
                out.push_str(&crate::report::printable(c.encode_utf8(&mut [0; 4])))
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::fixture::reports;

    #[test]
    fn golden() -> Result<(), ExportError> {
        let bytes = Markdown.export(&reports())?;
        assert_eq!(String::from_utf8_lossy(&bytes), GOLDEN);
        Ok(())
    }

    #[test]
    fn a_run_without_successes_says_so() -> Result<(), ExportError> {
        let mut report = reports().remove(1);
        report.iterations.remove(0);
        let text = String::from_utf8_lossy(&Markdown.export(&[report])?).into_owned();
        assert_eq!(
            text,
            "**slow** on emulator 127.0.0.1:9010: iterations 1, warm-up 0, failed 1\n\n\
             No successful iterations to summarise.\n"
        );
        Ok(())
    }

    #[test]
    fn escapes_markup_in_labels() {
        assert_eq!(escape("a|b *c*\nd_e"), "a\\|b \\*c\\* d\\_e");
    }

    #[test]
    fn control_characters_in_labels_print_as_escapes() {
        assert_eq!(escape("a\u{1b}[31m\u{7}"), "a\\u{1b}\\[31m\\u{7}");
    }

    const GOLDEN: &str = r#"**fast, cached** on local: iterations 3, warm-up 1, failed 1

Time (mean ± σ): 11.0 ms ± 1.41 ms [10.0 ms … 12.0 ms], 2 iterations; untimed 67%, wire decode 16%, row decode 11%

| part | mean | median | σ | min | max | p90 | p99 | share |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| **total** | 11.0 ms | 11.0 ms | 1.41 ms | 10.0 ms | 12.0 ms | 11.8 ms | 12.0 ms | 100% |
| server | 625 µs | 625 µs | 884 µs | 0 ms | 1.25 ms | 1.12 ms | 1.24 ms | 6% |
| network | 0 ms | 0 ms | 0 ms | 0 ms | 0 ms | 0 ms | 0 ms | 0% |
| wire decode | 1.75 ms | 1.75 ms | 354 µs | 1.50 ms | 2.00 ms | 1.95 ms | 2.00 ms | 16% |
| row decode | 1.25 ms | 1.25 ms | 354 µs | 1.00 ms | 1.50 ms | 1.45 ms | 1.50 ms | 11% |
| untimed | 7.38 ms | 7.38 ms | 1.59 ms | 6.25 ms | 8.50 ms | 8.28 ms | 8.48 ms | 67% |

The parts' means add up to the mean total; their medians and percentiles do not. server and network: an estimate from the server's elapsed time, which may include time it waited on the client.
An older report: the client's own work was not timed, and is in untimed.
Untimed was more than max(1 ms, 3%) of 2 of 2 iterations.

Beside the parts (overlapping them, or measured elsewhere; never added to them):

| figure | mean | median | σ | min | max | p90 | p99 |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| time to first byte | 6.75 ms | 6.75 ms | 354 µs | 6.50 ms | 7.00 ms | 6.95 ms | 7.00 ms |
| overlap (server beside client) | 3.75 ms | 3.75 ms | 0 ms | 3.75 ms | 3.75 ms | 3.75 ms | 3.75 ms |
| server elapsed (query latency) | 5.50 ms | 5.50 ms | 707 µs | 5.00 ms | 6.00 ms | 5.90 ms | 5.99 ms |
| server CPU | 4.00 ms | 4.00 ms | 0 ms | 4.00 ms | 4.00 ms | 4.00 ms | 4.00 ms |
| operation_latencies | 9.50 ms | 9.50 ms | 0 ms | 9.50 ms | 9.50 ms | 9.50 ms | 9.50 ms |
| attempt_latencies | 9.50 ms | 9.50 ms | 0 ms | 9.50 ms | 9.50 ms | 9.50 ms | 9.50 ms |
| gfe_latencies | 5.50 ms | 5.50 ms | 0 ms | 5.50 ms | 5.50 ms | 5.50 ms | 5.50 ms |
| afe_latencies | 500 µs | 500 µs | 0 ms | 500 µs | 500 µs | 500 µs | 500 µs |

attempt_count: 1 in 1 operations

**slow** on emulator 127.0.0.1:9010: iterations 2, warm-up 0, failed 1

Time (mean ± σ): 100 ms ± 0 ms [100 ms … 100 ms], 1 iteration; untimed 100%

| part | mean | median | σ | min | max | p90 | p99 | share |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| **total** | 100 ms | 100 ms | 0 ms | 100 ms | 100 ms | 100 ms | 100 ms | 100% |
| untimed | 100 ms | 100 ms | 0 ms | 100 ms | 100 ms | 100 ms | 100 ms | 100% |

The parts' means add up to the mean total; their medians and percentiles do not. the wait is not split: no server time came back, so all of it is network.
Untimed was more than max(1 ms, 3%) of 1 of 1 iterations.
"#;
}
