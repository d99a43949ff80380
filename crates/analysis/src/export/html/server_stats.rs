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
        StatsView::NotServed(words) | StatsView::NotRead(words) => {
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
        let verdict = match line.agree {
            Some(true) => "agree",
            Some(false) => "differ",
            None => "–",
        };
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
