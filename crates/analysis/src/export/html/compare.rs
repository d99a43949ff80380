//! The comparisons at the top of the page: for each pair, the verdict (a bootstrap confidence
//! interval on the ratio of the medians) and each part's change of mean, which add up to the
//! total's; then what changed in the plan when both runs returned one.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::markup::{Cell, Table, clipped, esc, hex, num};
use crate::analysis::PartComparison;
use crate::analysis::{
    BootstrapSettings, PairNames, RunIdentity, compare_runs_named, run_names_utc,
};
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

/// The names of `a` and `b` on the page: told apart (by the time each started, in UTC) when
/// their labels are alike.
fn names(a: &RunReport, b: &RunReport) -> [String; 2] {
    fn identity(run: &RunReport) -> RunIdentity<'_> {
        RunIdentity {
            label: &run.config.label,
            started_at: &run.started_at,
            source: None,
        }
    }
    let mut names = run_names_utc(&[identity(a), identity(b)]).into_iter();
    let mut next = || names.next().unwrap_or_default();
    [next(), next()]
}

fn pair(a: &RunReport, b: &RunReport) -> String {
    let [a_name, b_name] = names(a, b);
    let names = PairNames {
        a: &a_name,
        b: &b_name,
    };
    let comparison = compare_runs_named(a, b, names, BootstrapSettings::DEFAULT);
    let mut html = format!("<h3>{} against {}</h3>", clipped(&b_name), clipped(&a_name));
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
        html.push_str(&deltas(parts));
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

/// Each part's change as a bar from zero (slower to the right, faster to the left), on one scale.
fn deltas(parts: &PartComparison) -> String {
    const WIDTH: f64 = 720.0;
    const LABEL: f64 = 110.0;
    const ROW: f64 = 18.0;
    let largest = parts
        .parts
        .iter()
        .map(|p| p.change().abs())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    if largest <= 0.0 {
        return String::new();
    }
    // Room for a figure on either side of the longest bars.
    let half = (WIDTH - LABEL - 160.0) / 2.0;
    let zero = LABEL + 80.0 + half;
    let height = ROW * parts.parts.len() as f64 + 8.0;
    let mut svg = format!(
        "<svg class=\"deltas\" viewBox=\"0 0 {WIDTH} {}\" role=\"img\" \
         aria-label=\"each part's change\"><line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"0\" \
         y2=\"{}\"/>",
        num(height),
        num(zero),
        num(zero),
        num(height)
    );
    for (i, p) in parts.parts.iter().enumerate() {
        let change = p.change();
        let w = if change.is_finite() {
            half * change.abs() / largest
        } else {
            0.0
        };
        let x = if change < 0.0 { zero - w } else { zero };
        let y = 4.0 + ROW * i as f64;
        let (tx, anchor) = if change < 0.0 {
            (x - 4.0, "end")
        } else {
            (x + w + 4.0, "start")
        };
        let _ = write!(
            svg,
            "<text class=\"axis\" x=\"0\" y=\"{}\">{}</text><rect x=\"{}\" y=\"{}\" \
             width=\"{}\" height=\"{}\" fill=\"{}\"/><text class=\"axis\" x=\"{}\" y=\"{}\" \
             text-anchor=\"{anchor}\">{}</text>",
            num(y + 12.0),
            esc(p.part.label()),
            num(x),
            num(y + 2.0),
            num(w.max(0.5)),
            num(ROW - 6.0),
            hex(p.part.colour()),
            num(tx),
            num(y + 12.0),
            esc(&signed_ms(change))
        );
    }
    svg.push_str("</svg>");
    svg
}
