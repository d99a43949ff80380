//! Load variants' comparison on a page (`load --vary --html`): a table of every run's figures
//! at each step level, and the comparison's words, each variant against the first; each run's own
//! load section follows it on the page.

use std::fmt::Write as _;

use super::markup::{Cell, Table, clipped, esc};
use crate::analysis::conflicts::SOURCE;
use crate::export::LoadVariants;

/// A figure, or `–` without one.
fn figure(value: Option<f64>, decimals: usize) -> Cell {
    value.map_or_else(
        || Cell::text("–"),
        |v| Cell::figure(&crate::text::trimmed(v, decimals), v),
    )
}

/// The comparison's section: the setting, the words, the table, and where the lock figures
/// came from when the target named its locks (the local instance).
pub fn section(doc: &LoadVariants) -> String {
    let mut html = format!(
        "<section id=\"variants\"><h2>Variants: {}</h2><p>{} whole load runs of one workload, \
         one per value ({}), in turn; each one set against the first.</p>",
        esc(&doc.setting),
        doc.runs.len(),
        clipped(&doc.values.join(", "))
    );
    for words in &doc.comparison.words {
        let _ = write!(html, "<p class=\"headline\">{}</p>", clipped(words));
    }
    let mut table = Table::new(
        "sortable variants",
        &[
            "step",
            "variant",
            "goodput /s",
            "attempts /s",
            "aborts /txn",
            "at commit /txn",
            "lock wait",
            "p50",
            "p99",
        ],
    );
    for row in &doc.comparison.rows {
        table.row(
            "",
            vec![
                Cell::figure(&row.level_words, row.level),
                Cell::text(&row.value),
                figure(Some(row.goodput_per_s), 1),
                figure(row.attempts_per_s, 1),
                figure(row.aborts_per_transaction, 2),
                figure(row.commit_aborts_per_transaction, 2),
                Cell::opt_ms(row.lock_wait_ms),
                Cell::opt_ms(row.p50_ms),
                Cell::opt_ms(row.p99_ms),
            ],
        );
    }
    let _ = write!(html, "<div class=\"wide\">{}</div>", table.finish());
    html.push_str(
        "<p class=\"note\">Goodput is transactions committed a second; aborts and those at \
         commit are per transaction that made an attempt; the lock wait is per committed \
         transaction, as its step's parts give it.</p>",
    );
    let named = doc
        .runs
        .iter()
        .flat_map(|r| &r.steps)
        .any(|s| s.conflicts.is_some());
    if named {
        let _ = write!(
            html,
            "<p class=\"note\">The locks waited for and the aborts are {}: each run started \
             its own instance, from the same data.</p>",
            esc(SOURCE)
        );
    }
    html.push_str("</section>");
    html
}
