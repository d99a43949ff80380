//! Markdown: a line on each run and a table of its phase summaries, for pasting into an issue.

use std::fmt::Write as _;

use crate::report::{RunReport, Status};
use crate::stats::Summary;

use super::{ExportError, Exporter};

/// For each run, a line with its label, target, iteration counts and failures, then a table of
/// the median, mean, standard deviation (σ), extremes and percentiles of each measured phase, in
/// milliseconds with two decimals.
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

/// One run's line and table, ending with a newline.
fn section(report: &RunReport) -> String {
    let not_warmup = || report.iterations.iter().filter(|r| !r.warmup);
    let iterations = not_warmup().count();
    let failed = not_warmup().filter(|r| r.status != Status::Ok).count();
    let warmups = report.iterations.len() - iterations;
    let mut out = format!(
        "**{}** on {}: iterations {iterations}, warm-up {warmups}, failed {failed}{}\n\n",
        escape(&report.config.label),
        escape(&report.config.target),
        connection_note(report),
    );
    let summary = report.summary();
    if summary.is_empty() {
        out.push_str("No successful iterations to summarise.\n");
        return out;
    }
    out.push_str("| phase | median | mean | σ | min | max | p90 | p99 |\n");
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (phase, s) in summary {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "| {} | {} |", phase.label(), cells(&s).join(" | "));
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
    if !config.session.is_empty() {
        let _ = write!(note, "; session {}", escape(&config.session));
        if !config.session_granted.is_empty() {
            let _ = write!(
                note,
                " asked for, the server granted a {} one",
                escape(&config.session_granted)
            );
        }
    }
    note
}

fn cells(s: &Summary) -> [String; 7] {
    [s.median, s.mean, s.std_dev, s.min, s.max, s.p90, s.p99].map(|ms| format!("{ms:.2}"))
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

| phase | median | mean | σ | min | max | p90 | p99 |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| total | 11.00 | 11.00 | 1.41 | 10.00 | 12.00 | 11.80 | 11.98 |
| time to first byte | 6.75 | 6.75 | 0.35 | 6.50 | 7.00 | 6.95 | 7.00 |
| network | 1.25 | 1.25 | 0.00 | 1.25 | 1.25 | 1.25 | 1.25 |
| server | 5.50 | 5.50 | 0.71 | 5.00 | 6.00 | 5.90 | 5.99 |
| wire decode | 1.75 | 1.75 | 0.35 | 1.50 | 2.00 | 1.95 | 2.00 |
| row decode | 1.25 | 1.25 | 0.35 | 1.00 | 1.50 | 1.45 | 1.50 |
| other | 1.88 | 1.88 | 0.88 | 1.25 | 2.50 | 2.38 | 2.49 |

**slow** on emulator 127.0.0.1:9010: iterations 2, warm-up 0, failed 1

| phase | median | mean | σ | min | max | p90 | p99 |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| total | 100.00 | 100.00 | 0.00 | 100.00 | 100.00 | 100.00 | 100.00 |
"#;
}
