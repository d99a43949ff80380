//! The comparisons at the top of the page: for each pair, the verdict (a bootstrap confidence
//! interval on the ratio of the medians) and each part's change of mean, which add up to the
//! total's; then what changed in the plan when both runs returned one.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::markup::{Cell, Table, clipped, esc, hex};
use crate::analysis::{BootstrapSettings, compare_runs};
use crate::report::RunReport;
use crate::text::signed_ms;

/// The section comparing `pairs` of `reports` (positions; pairs out of range are skipped).
pub fn section(reports: &[RunReport], pairs: &[(usize, usize)]) -> String {
    let mut html = String::from("<section id=\"comparison\"><h2>Comparison</h2>");
    for &(a, b) in pairs {
        let (Some(a), Some(b)) = (reports.get(a), reports.get(b)) else {
            continue;
        };
        html.push_str(&pair(a, b));
    }
    html.push_str("</section>");
    html
}

fn pair(a: &RunReport, b: &RunReport) -> String {
    let comparison = compare_runs(a, b, BootstrapSettings::DEFAULT);
    let mut html = format!(
        "<h3>{} against {}</h3>",
        clipped(&b.config.label),
        clipped(&a.config.label)
    );
    match comparison.verdict_with_deltas() {
        Some(verdict) => {
            let _ = write!(html, "<p class=\"headline\">{}</p>", clipped(&verdict));
        }
        None => html.push_str(
            "<p class=\"alert\">These runs cannot be compared: one has no successful timed \
             iteration with a positive median.</p>",
        ),
    }
    if let Some(parts) = &comparison.parts {
        let mut table = Table::new("changes", &["part", "mean before", "mean after", "change"]);
        let mut row = |label: String, before: f64, after: f64, class: &str| {
            let change = after - before;
            let mut cell = Cell::figure(&signed_ms(change), change);
            if change.abs() >= 0.005 {
                cell = Cell::markup(format!(
                    "<span class=\"{}\">{}</span>",
                    if change > 0.0 { "up" } else { "down" },
                    esc(&signed_ms(change))
                ));
            }
            table.row(
                class,
                vec![Cell::markup(label), Cell::ms(before), Cell::ms(after), cell],
            );
        };
        row("<b>total</b>".into(), parts.a_mean, parts.b_mean, "total");
        for p in &parts.parts {
            row(
                format!(
                    "<span class=\"swatch\" style=\"background:{}\"></span>{}",
                    hex(p.part.colour()),
                    esc(p.part.label())
                ),
                p.a_mean,
                p.b_mean,
                "",
            );
        }
        html.push_str(&table.finish());
        html.push_str(
            "<p class=\"note\">The parts' changes add up to the total's (means; the verdict \
             compares medians).</p>",
        );
    }
    let (plans_a, plans_b) = (
        a.plan_aggregates(&BTreeSet::new()),
        b.plan_aggregates(&BTreeSet::new()),
    );
    if let (Some(pa), Some(pb)) = (plans_a.first(), plans_b.first()) {
        let diff = crate::plan::diff(&pa.tree, &pb.tree);
        if diff.is_same_plan() {
            html.push_str("<p>Both ran the same plan.</p>");
        } else {
            html.push_str("<p>The plans differ:</p><ul class=\"diff\">");
            for entry in diff.differences() {
                let _ = write!(html, "<li>{}</li>", clipped(&entry.describe()));
            }
            html.push_str("</ul>");
        }
    }
    html
}
