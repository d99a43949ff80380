//! One run's section of the page: what ran and where, its headline and parts, the bars, its
//! findings, a read-write run's attempts and who blocked whom, the slowest iteration's timeline,
//! its plan per operator, and every iteration with the ids support finds a call by.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::markup::{Cell, Table, clipped, esc};
use super::{attempts, bars, conflicts, timeline};
use crate::analysis::{Findings, PartStats, RunConflicts};
use crate::report::{RunReport, Status};
use crate::stats::Summary;
use crate::text::{bytes, capitalised, count};

/// Iterations listed one by one at most; the embedded report holds the rest.
pub const MAX_TABLE_ROWS: usize = 2_000;

/// Iterations past which their table starts folded.
const OPEN_TABLE_ROWS: usize = 200;

/// The section of `report`, numbered `index` on the page (its anchor is `run-<index>`).
pub fn section(index: usize, report: &RunReport) -> String {
    let mut html = format!(
        "<section id=\"run-{index}\"><h2>{}</h2>",
        clipped(&report.config.label)
    );
    html.push_str(&facts(report));
    if let Some(stopped) = &report.stopped {
        let _ = write!(html, "<p class=\"alert\">{}</p>", clipped(stopped));
    }
    match PartStats::of_run(report) {
        Some(stats) => {
            let _ = write!(
                html,
                "<p class=\"headline\">{}</p>",
                esc(&stats.headline().to_string())
            );
            html.push_str(&parts_table(&stats));
            html.push_str(&figures_beside(report));
            html.push_str("<h3>Iterations, part by part</h3>");
            html.push_str(&bars::legend(stats.parts.iter().map(|p| p.part)));
            html.push_str(&bars::stacked_bars(report));
        }
        None => html.push_str("<p class=\"alert\">No successful iteration to summarise.</p>"),
    }
    html.push_str(&findings(report));
    html.push_str(&attempts::section(report, MAX_TABLE_ROWS));
    let conflicts = RunConflicts::of(report);
    html.push_str(&conflicts::run_section(
        report,
        conflicts.as_ref(),
        MAX_TABLE_ROWS,
    ));
    html.push_str("<h3>The slowest iteration against the median one</h3>");
    html.push_str(&timeline::section(report, conflicts.as_ref()));
    html.push_str(&plans(report));
    html.push_str(&iterations(report));
    html.push_str("</section>");
    html
}

/// What ran and where: a definition list of the run's configuration.
fn facts(report: &RunReport) -> String {
    let c = &report.config;
    let mut rows: Vec<(&str, String)> = vec![
        ("target", c.target.clone()),
        ("started", report.started_at.clone()),
        ("query mode", c.query_mode.as_str().to_owned()),
        ("reader", c.decoder.to_string()),
        (
            "iterations",
            format!("{} timed after {} warm-up", c.iterations, c.warmup),
        ),
    ];
    if !c.client_host.is_empty() {
        rows.push(("client host", c.client_host.clone()));
    }
    if let Some(session) = c.session {
        let granted = c.session_granted.map_or(String::new(), |g| {
            format!(" (the server granted a {g} one)")
        });
        rows.push(("session", format!("{session}{granted}")));
    }
    if let Some(read_write) = &c.read_write {
        rows.push(("read-write transaction", read_write.clone()));
    }
    if c.cold {
        rows.push((
            "cold starts",
            "a new connection, token and session each iteration".into(),
        ));
    }
    for (list, name) in [
        (&c.options, "request options"),
        (&c.timeouts, "timeouts"),
        (&c.stream, "stream"),
    ] {
        if !list.is_empty() {
            let pairs: Vec<String> = list.iter().map(|(k, v)| format!("{k} {v}")).collect();
            rows.push((name, pairs.join(", ")));
        }
    }
    if !c.params.is_empty() {
        let pairs: Vec<String> = c
            .params
            .iter()
            .map(|(k, v)| format!("@{k} = {v}"))
            .collect();
        rows.push(("parameters", pairs.join(", ")));
    }
    if let Some(point) = &c.sweep {
        rows.push(("sweep", format!("@{} = {}", point.param, point.value)));
    }
    if !c.order.is_empty() {
        rows.push(("order", c.order.clone()));
    }
    if !c.command.is_empty() {
        rows.push(("subject", c.command.join(" ")));
    }
    let mut html = String::from("<dl class=\"facts\">");
    for (name, value) in rows {
        let _ = write!(html, "<dt>{}</dt><dd>{}</dd>", esc(name), clipped(&value));
    }
    html.push_str("</dl>");
    if !c.sql.is_empty() {
        let _ = write!(html, "<pre class=\"sql\">{}</pre>", clipped(&c.sql));
    }
    html
}

fn summary_cells(s: &Summary) -> Vec<Cell> {
    [s.mean, s.median, s.std_dev, s.min, s.max, s.p90, s.p99]
        .into_iter()
        .map(Cell::ms)
        .collect()
}

const SUMMARY_HEADINGS: [&str; 7] = ["mean", "median", "σ", "min", "max", "p90", "p99"];

/// The total and its parts, with what a reader needs to add them up.
fn parts_table(stats: &PartStats) -> String {
    let mut headings = vec!["part"];
    headings.extend(SUMMARY_HEADINGS);
    headings.push("share");
    let mut table = Table::new("parts", &headings);
    let mut cells = vec![Cell::markup("<b>total</b>".into())];
    cells.extend(summary_cells(&stats.total));
    cells.push(Cell::figure("100%", 1.0));
    table.row("total", cells);
    for p in &stats.parts {
        let swatch = format!(
            "<span class=\"swatch\" style=\"background:{}\"></span>{}",
            super::markup::hex(p.part.colour()),
            esc(p.part.label())
        );
        let mut cells = vec![Cell::markup(swatch)];
        cells.extend(summary_cells(&p.summary));
        cells.push(Cell::figure(&format!("{:.0}%", p.share * 100.0), p.share));
        table.row("", cells);
    }
    let mut html = table.finish();
    let _ = write!(
        html,
        "<p class=\"note\">The parts don't overlap: their means add up to the mean total (their \
         medians and percentiles do not). {}.</p>",
        esc(stats.split.note())
    );
    if stats.client_work_untimed > 0 {
        html.push_str(
            "<p class=\"note\">An older report: the client's own work was not timed, and is in \
             untimed.</p>",
        );
    }
    html
}

/// The figures beside the parts (overlapping them, or measured elsewhere).
fn figures_beside(report: &RunReport) -> String {
    let points = report.figures();
    if points.is_empty() {
        return String::new();
    }
    let mut headings = vec!["figure"];
    headings.extend(SUMMARY_HEADINGS);
    let mut table = Table::new("figures", &headings);
    for (figure, s) in points {
        let mut cells = vec![Cell::text(figure.name())];
        cells.extend(summary_cells(&s));
        table.row("", cells);
    }
    let mut html = String::from(
        "<h3>Beside the parts</h3><p class=\"note\">These overlap the parts or were measured \
         elsewhere: they are never added to them.</p>",
    );
    html.push_str(&table.finish());
    if let Some((attempts, operations)) = report.attempt_count() {
        let _ = write!(
            html,
            "<p class=\"note\">attempt_count: {attempts} in {operations} operations</p>"
        );
    }
    html
}

/// What a reader should notice, as [`Findings`] found it.
fn findings(report: &RunReport) -> String {
    let items: Vec<String> = Findings::of(report)
        .sentences()
        .iter()
        .map(|sentence| esc(sentence))
        .collect();
    if items.is_empty() {
        return "<h3>Findings</h3><p>Nothing stands out: no slow first iteration, no outliers, \
                every statistic asked for came back.</p>"
            .to_owned();
    }
    let mut html = String::from("<h3>Findings</h3><ul class=\"findings\">");
    for item in items {
        let _ = write!(html, "<li>{}.</li>", capitalised(&item));
    }
    html.push_str("</ul>");
    html
}

/// The plan per operator (medians over the iterations that ran it), sortable, and what changed
/// when the run had two plans.
fn plans(report: &RunReport) -> String {
    let aggregates = report.plan_aggregates(&BTreeSet::new());
    let Some(first) = aggregates.first() else {
        return String::new();
    };
    let mut html = format!(
        "<h3>Plan per operator</h3><p class=\"note\">Medians over {} iteration{} that ran plan \
         {}; click a heading to sort.</p>",
        first.iterations.len(),
        if first.iterations.len() == 1 { "" } else { "s" },
        esc(&first.signature)
    );
    let mut table = Table::new(
        "sortable plan",
        &[
            "operator",
            "self time",
            "total time",
            "rows",
            "rows scanned",
            "executions",
        ],
    );
    for op in &first.tree.operators {
        let indent = format!(
            "<span class=\"indent\" style=\"padding-left:{}em\">{}</span>",
            op.depth.min(40),
            clipped(&op.title())
        );
        let f = &op.figures;
        let count_cell = |v: Option<f64>| {
            v.map_or_else(
                || Cell::text("–"),
                |v| Cell::figure(&count(v.max(0.0).round() as u64), v),
            )
        };
        table.row(
            "",
            vec![
                Cell::markup(indent),
                Cell::opt_ms(f.self_ms),
                Cell::opt_ms(f.total_ms),
                count_cell(f.rows),
                count_cell(f.scanned_rows),
                count_cell(f.executions.map(|e| e as f64)),
            ],
        );
    }
    html.push_str(&table.finish());
    if let Some(second) = aggregates.get(1) {
        let diff = crate::plan::diff(&first.tree, &second.tree);
        let _ = write!(
            html,
            "<p>Iterations {} ran another plan ({}); against the first:</p><ul class=\"diff\">",
            esc(&numbers(&second.iterations)),
            esc(&second.signature)
        );
        for entry in diff.differences() {
            let _ = write!(html, "<li>{}</li>", clipped(&entry.describe()));
        }
        html.push_str("</ul>");
    }
    html
}

/// `#1, #2, #3` (the first twenty, then how many more).
fn numbers(iterations: &[u32]) -> String {
    let mut shown: Vec<String> = iterations
        .iter()
        .take(20)
        .map(|n| format!("#{n}"))
        .collect();
    if iterations.len() > 20 {
        shown.push(format!("and {} more", iterations.len() - 20));
    }
    shown.join(", ")
}

/// Every iteration (up to [`MAX_TABLE_ROWS`]) with its status, figures and ids.
fn iterations(report: &RunReport) -> String {
    let mut table = Table::new(
        "sortable iterations",
        &[
            "#",
            "status",
            "total",
            "first byte",
            "rows",
            "messages",
            "bytes",
            "resumes",
            "request id",
            "trace id",
            "error",
        ],
    );
    for r in report.iterations.iter().take(MAX_TABLE_ROWS) {
        let status = if r.warmup {
            format!("{} (warm-up)", r.status().as_str())
        } else {
            r.status().as_str().to_owned()
        };
        let class = match (r.warmup, r.status()) {
            (_, Status::Ok) if r.warmup => "warmup",
            (_, Status::Ok) => "",
            _ => "failed",
        };
        table.row(
            class,
            vec![
                Cell::figure(&r.iteration.to_string(), f64::from(r.iteration)),
                Cell::text(&status),
                Cell::ms(r.total_ms),
                Cell::opt_ms(r.query.ttfb_ms),
                Cell::figure(&count(r.answer.rows), r.answer.rows as f64),
                Cell::figure(&count(r.answer.messages), r.answer.messages as f64),
                Cell::figure(&bytes(r.answer.wire_bytes), r.answer.wire_bytes as f64),
                Cell::figure(&r.answer.resumes.to_string(), f64::from(r.answer.resumes)),
                Cell::markup(format!(
                    "<code>{}</code>",
                    clipped(r.ids.request_id.as_deref().unwrap_or(""))
                )),
                Cell::markup(format!(
                    "<code>{}</code>",
                    clipped(r.ids.trace_id.as_deref().unwrap_or(""))
                )),
                Cell::text(r.error().unwrap_or("")),
            ],
        );
    }
    // A long table stays folded until asked for: laying out thousands of rows is most of the
    // time a browser takes to show a long run's page.
    let open = if report.iterations.len() <= OPEN_TABLE_ROWS {
        " open"
    } else {
        ""
    };
    let mut html = format!(
        "<details class=\"iterations\"{open}><summary>Every iteration ({}): status, figures, \
         request and trace ids</summary>",
        count(report.iterations.len() as u64)
    );
    html.push_str(&table.finish());
    html.push_str("</details>");
    if report.iterations.len() > MAX_TABLE_ROWS {
        let _ = write!(
            html,
            "<p class=\"note\">The first {} of {} iterations; all of them are in the report \
             embedded in this file (open it with spanprof).</p>",
            count(MAX_TABLE_ROWS as u64),
            count(report.iterations.len() as u64)
        );
    }
    html
}
