//! A read-write load run's transactions on its page: each step's goodput (transactions committed
//! a second) against its attempts a second, as two lines against the level and as a table with
//! the aborts per transaction and where the server aborted them; then how many attempts each
//! step's transactions took, a histogram per step; and the keys the steps' transactions waited
//! on most, where the target named them. Nothing for a run of queries.

use std::collections::BTreeSet;

use super::markup::{Cell, Table};
use super::plot::{BOTTOM, HEIGHT, LEFT, Mark, TOP, WIDTH, axes, level_marks, lines_with_legend};
use crate::load::{LoadReport, Model, StepResult};
use crate::text::{count, trimmed};

/// The chart's lines: name, colour, dashed. Goodput solid; the attempts, the work asked of the
/// server, dashed above it: the gap between the two is the work aborted.
pub const LINES: [(&str, &str, bool); 2] = [
    ("committed a second (goodput)", "#1e8449", false),
    (
        "attempts a second (the aborted ones included)",
        "#d35400",
        true,
    ),
];

/// The most columns the attempts' histogram has: past them, one column holds the rest.
const MOST_ATTEMPT_COLUMNS: usize = 10;

/// The section, empty unless some step ran read-write transactions.
pub fn section(report: &LoadReport) -> String {
    let steps: Vec<&StepResult> = report
        .steps
        .iter()
        .filter(|s| s.committed.is_some())
        .collect();
    if steps.is_empty() {
        return String::new();
    }
    let mut html = String::from(
        "<h3>Goodput against attempts</h3><p class=\"note\">Each request is one read-write \
         transaction: every attempt and back-off until it commits, fails or gives up. Goodput \
         is the transactions committed a second; the attempts a second count the aborted ones \
         too, the work the server was asked for. Where the two lines part, aborts take the \
         work.</p>",
    );
    html.push_str(&chart(report.model, &steps));
    html.push_str(&rates_table(&steps));
    html.push_str(&attempts_table(&steps));
    html.push_str(&super::conflicts::load_section(&steps));
    html
}

/// Goodput and attempts a second against each step's level, from 0.
fn chart(model: Model, steps: &[&StepResult]) -> String {
    let series = |f: fn(&StepResult) -> Option<f64>| -> Vec<(f64, f64)> {
        steps
            .iter()
            .filter_map(|s| Some((s.level().value(), f(s).filter(|v| v.is_finite())?)))
            .collect()
    };
    let lines = [series(|s| s.committed_per_s), series(|s| s.attempts_per_s)];
    let highest = |values: &mut dyn Iterator<Item = f64>| values.fold(0.0, f64::max);
    let levels = level_marks(
        highest(&mut steps.iter().map(|s| s.level().value())),
        model == Model::Closed,
    );
    let rates = level_marks(highest(&mut lines.iter().flatten().map(|p| p.1)), false);
    let x_top = levels.last().copied().unwrap_or(1.0);
    let y_top = rates.last().copied().unwrap_or(1.0);
    let (pw, ph) = (WIDTH - LEFT - 16.0, HEIGHT - TOP - BOTTOM);
    let x = move |v: f64| LEFT + pw * v / x_top;
    let y = move |v: f64| TOP + ph - ph * v / y_top;
    let mut svg = format!(
        "<svg class=\"goodput\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
         aria-label=\"goodput against attempts a second\">"
    );
    let (x_label, unit) = match model {
        Model::Open => ("requests a second asked", "/s"),
        Model::Closed => ("clients, each with one transaction in flight", ""),
    };
    let x_marks: Vec<Mark> = levels
        .iter()
        .map(|&v| (v / x_top, format!("{}{unit}", trimmed(v, 2))))
        .collect();
    let y_marks: Vec<Mark> = rates
        .iter()
        .map(|&v| (v / y_top, format!("{}/s", trimmed(v, 2))))
        .collect();
    axes(&mut svg, &x_marks, &y_marks, x_label);
    let mut legend = lines_with_legend(&mut svg, &LINES, &lines, &x, &y);
    svg.push_str("</svg>");
    legend.push_str("</ul>");
    svg + &legend
}

/// A step's level as its table's first cell.
fn level_cell(s: &StepResult) -> Cell {
    Cell::figure(&s.level().describe(), s.level().value())
}

/// A per-second figure, `–` without one.
fn per_s(v: Option<f64>) -> Cell {
    v.map_or_else(
        || Cell::text("–"),
        |v| Cell::figure(&format!("{v:.1}/s"), v),
    )
}

/// A row per step: committed, goodput, attempts a second, aborts per transaction, where the
/// server aborted them, and the transactions that failed or were given up.
fn rates_table(steps: &[&StepResult]) -> String {
    let mut table = Table::new(
        "sortable goodput",
        &[
            "step",
            "committed",
            "goodput",
            "attempts",
            "aborts per transaction",
            "aborted at",
            "failed or given up",
        ],
    );
    for s in steps {
        let committed = s.committed.unwrap_or(s.count);
        let at: Vec<String> = s
            .aborts_at
            .iter()
            .map(|(action, n)| format!("{action} {}", count(*n)))
            .collect();
        table.row(
            if s.errors > 0 { "failed" } else { "" },
            vec![
                level_cell(s),
                Cell::figure(&count(committed), committed as f64),
                per_s(s.committed_per_s),
                per_s(s.attempts_per_s),
                s.aborts_per_transaction
                    .map_or_else(|| Cell::text("–"), |v| Cell::figure(&trimmed(v, 3), v)),
                Cell::text(&if at.is_empty() {
                    "–".to_owned()
                } else {
                    at.join(", ")
                }),
                Cell::figure(&count(s.errors), s.errors as f64),
            ],
        );
    }
    format!(
        "<div class=\"wide\">{}</div><p class=\"note\">Goodput and attempts are a second of the \
         step; aborts per transaction are the aborted attempts over the transactions that made \
         one, committed or not; aborted at: the action the server aborted them at.</p>",
        table.finish()
    )
}

/// The attempts' histogram's columns: each number of attempts some step's transactions took,
/// the last one holding every number from it on when there are more than
/// [`MOST_ATTEMPT_COLUMNS`].
fn attempt_columns(steps: &[&StepResult]) -> (Vec<u32>, bool) {
    let taken: BTreeSet<u32> = steps
        .iter()
        .flat_map(|s| s.attempts.keys().copied())
        .collect();
    let mut columns: Vec<u32> = taken.into_iter().collect();
    let rest = columns.len() > MOST_ATTEMPT_COLUMNS;
    columns.truncate(MOST_ATTEMPT_COLUMNS);
    (columns, rest)
}

/// A row per step: how many of its transactions took each number of attempts, and their share.
fn attempts_table(steps: &[&StepResult]) -> String {
    let (columns, rest) = attempt_columns(steps);
    if columns.is_empty() {
        return String::new();
    }
    let mut headings: Vec<String> = vec!["step".into()];
    for (i, n) in columns.iter().enumerate() {
        headings.push(match (n, rest && i + 1 == columns.len()) {
            (n, true) => format!("{n} or more"),
            (1, false) => "1 attempt".into(),
            (n, false) => n.to_string(),
        });
    }
    let headings: Vec<&str> = headings.iter().map(String::as_str).collect();
    let mut table = Table::new("sortable attempts-histogram", &headings);
    for s in steps {
        let total: u64 = s.attempts.values().sum();
        let mut cells = vec![level_cell(s)];
        for (i, &n) in columns.iter().enumerate() {
            let last = rest && i + 1 == columns.len();
            let taken: u64 = if last {
                s.attempts.range(n..).map(|(_, t)| t).sum()
            } else {
                s.attempts.get(&n).copied().unwrap_or(0)
            };
            let shown = match (taken, total) {
                (0, _) | (_, 0) => count(taken),
                _ => format!(
                    "{} ({}%)",
                    count(taken),
                    trimmed(taken as f64 * 100.0 / total as f64, 1)
                ),
            };
            cells.push(Cell::figure(&shown, taken as f64));
        }
        table.row("", cells);
    }
    format!(
        "<h3>How many attempts each transaction took</h3><div class=\"wide\">{}</div>\
         <p class=\"note\">Transactions by the attempts they made, the first included: a step's \
         row sums to its transactions that made an attempt, committed or failed.</p>",
        table.finish()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(clients: u32, attempts: &[(u32, u64)]) -> StepResult {
        let mut s =
            crate::load::StepTally::read_write(crate::load::StepLevel::Concurrency(clients))
                .finish(
                    std::time::Duration::ZERO,
                    std::time::Duration::from_secs(1),
                    crate::load::StepCpu::default(),
                );
        s.attempts = attempts.iter().copied().collect();
        s
    }

    #[test]
    fn more_attempt_counts_than_columns_end_in_one_that_holds_the_rest() {
        let many: Vec<(u32, u64)> = (1..=14).map(|n| (n, 1)).collect();
        let steps = [step(1, &[(1, 5), (3, 1)]), step(2, &many)];
        let refs: Vec<&StepResult> = steps.iter().collect();
        let (columns, rest) = attempt_columns(&refs);
        assert_eq!(columns.len(), MOST_ATTEMPT_COLUMNS);
        assert!(rest);
        let html = attempts_table(&refs);
        assert!(html.contains("<th>10 or more</th>"), "{html}");
        // 10 to 14 attempts: five transactions in the last column.
        assert!(html.contains("5 (35.7%)"), "{html}");
        assert_eq!(
            attempt_columns(&refs[..1]),
            (vec![1, 3], false),
            "only the counts taken"
        );
        assert!(
            attempts_table(&[&step(1, &[])]).is_empty(),
            "no histogram where no transaction made an attempt"
        );
    }
}
