//! A read-write load run's section on the target's own statistics (`load --server-stats`), beside
//! the hottest keys: each figure of the run next to LOCK_STATS' and TXN_STATS', said agreeing or
//! not, with why they may differ; or the sentence that the target serves none (no figure made
//! up). Computed by `analysis::server_stats`, as the summary's block is.

use std::fmt::Write as _;

use super::markup::{Cell, Table, clipped, esc};
use crate::analysis::server_stats::{StatsView, server_stats_view};
use crate::load::LoadReport;

/// The section, or nothing when the run did not ask for the target's statistics.
pub fn section(report: &LoadReport) -> String {
    let Some(view) = server_stats_view(report) else {
        return String::new();
    };
    let mut html = String::from("<h3>The target's own statistics</h3>");
    let c = match view {
        StatsView::NotServed(words) | StatsView::NotRead(words) | StatsView::NotCounted(words) => {
            let _ = write!(html, "<p class=\"note\">{}</p>", clipped(&words));
            return html;
        }
        StatsView::Compared(c) => c,
    };
    let _ = write!(
        html,
        "<p>SPANNER_SYS.LOCK_STATS_TOP_MINUTE and TXN_STATS_TOP_MINUTE for the tag {}, {} \
         interval(s) read after the run.</p>",
        clipped(&c.tag),
        c.intervals
    );
    let mut table = Table::new(
        "stats",
        &["figure", "the run", "the target", "", "in words"],
    );
    for line in &c.lines {
        let verdict = line.verdict();
        table.row(
            "",
            vec![
                Cell::text(line.what),
                Cell::text(&line.run),
                Cell::text(&line.target),
                Cell::text(verdict),
                Cell::text(&line.words),
            ],
        );
    }
    let _ = write!(html, "<div class=\"wide\">{}</div>", table.finish());
    for notice in &c.notices {
        let _ = write!(html, "<p class=\"alert\">{}</p>", clipped(notice));
    }
    html.push_str("<p class=\"note\">Why they may differ:</p><ul>");
    for caveat in &c.caveats {
        let _ = write!(html, "<li>{}</li>", esc(caveat));
    }
    html.push_str("</ul>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::server_stats::{ServedStats, ServerStats, StatsRead, TxnStatsRow};
    use crate::load::{LoadSteps, Model, RunFacts, StepLevel};

    fn report(read: StatsRead) -> LoadReport {
        let plan = LoadSteps {
            model: Model::Closed,
            levels: vec![StepLevel::Concurrency(1)],
            step_duration: std::time::Duration::from_secs(1),
            max_in_flight: 1,
            drain: std::time::Duration::from_secs(1),
        };
        let mut r = LoadReport::new(RunFacts::default(), &plan, Vec::new());
        r.server_stats = Some(ServerStats {
            tag: "<tag>".into(),
            run_from: String::new(),
            run_to: String::new(),
            read,
            lock_free: false,
        });
        r
    }

    #[test]
    fn a_target_without_statistics_gets_its_sentence_and_no_table() {
        let html = section(&report(StatsRead::NotServed {
            why: "NOT_FOUND: <b>no such table</b>".into(),
        }));
        assert!(html.contains("no lock statistics on this target"), "{html}");
        assert!(
            html.contains("&lt;b&gt;"),
            "the server's words are escaped: {html}"
        );
        assert!(!html.contains("<table"), "{html}");
    }

    #[test]
    fn served_statistics_are_a_table_beside_the_runs_figures() {
        let served = ServedStats {
            intervals: vec!["2026-12-05T18:31:00Z".into()],
            txn_rows: vec![TxnStatsRow {
                interval_end: "2026-12-05T18:31:00Z".into(),
                tag: "<tag>".into(),
                attempt_count: 3,
                commit_attempt_count: 3,
                commit_abort_count: 1,
                commit_retry_count: 1,
                avg_total_latency_seconds: None,
            }],
            ..ServedStats::default()
        };
        let html = section(&report(StatsRead::Served(served)));
        assert!(html.contains("<table class=\"stats\">"), "{html}");
        assert!(
            html.contains("&lt;tag&gt;") && !html.contains("<tag>"),
            "{html}"
        );
        assert!(html.contains("Why they may differ"), "{html}");
        assert_eq!(
            section(&LoadReport {
                server_stats: None,
                ..report(StatsRead::NotRead { why: String::new() })
            }),
            ""
        );
    }
}
