//! Who blocked whom on the page, from the waits and wounds the target named (the local
//! instance's lock table, a model of Spanner's locking): a read-write run's hottest keys and then
//! each wait and wound with the attempt it happened to and whom it was behind, as
//! [`RunConflicts`] found them; and a read-write load run's hottest keys, step by step.

use std::fmt::Write as _;

use super::markup::{Cell, Table, esc};
use crate::analysis::conflicts::{ConflictKind, RunConflicts, SOURCE};
use crate::load::StepResult;
use crate::report::{IterationRecord, KeyConflicts, RunReport};
use crate::text::count;

/// The keys listed for a load step at most (its report keeps up to 20).
const LOAD_KEYS_SHOWN: usize = 5;

/// The sentence every conflict table stands under.
fn source_note() -> String {
    format!(
        "<p class=\"note\">These figures come from {}: what Cloud Spanner would make of the same \
         transactions may differ.</p>",
        esc(SOURCE)
    )
}

/// A table of keys: key, the columns asked for one by one, waits, their time, wounds.
fn keys_table(keys: &[KeyConflicts], first: Option<&str>) -> Table {
    let mut headings = vec!["key", "columns", "waits", "wait", "wounds"];
    if let Some(first) = first {
        headings.insert(0, first);
    }
    let mut table = Table::new("sortable conflicts-keys", &headings);
    for k in keys {
        table.row("", key_cells(k));
    }
    table
}

fn key_cells(k: &KeyConflicts) -> Vec<Cell> {
    vec![
        Cell::text(&k.key),
        Cell::text(&if k.columns.is_empty() {
            "–".to_owned()
        } else {
            k.columns.join(", ")
        }),
        Cell::figure(&count(k.waits), k.waits as f64),
        Cell::ms(k.wait_ms),
        Cell::figure(&count(k.wounds), k.wounds as f64),
    ]
}

/// A read-write run's "Who blocked whom" section, empty when the target named no wait or wound:
/// the totals, the hottest keys, each wait and wound (at most `max_rows`; the embedded report
/// holds every one), and the transaction that waited longest, attempt by attempt.
pub fn run_section(
    report: &RunReport,
    conflicts: Option<&RunConflicts>,
    max_rows: usize,
) -> String {
    let Some(c) = conflicts else {
        return String::new();
    };
    let mut html = format!(
        "<h3 id=\"who-blocked-whom\">Who blocked whom</h3><p>{}, named by the target.</p>{}\
         <h4>The hottest keys</h4>{}",
        esc(&c.totals_words()),
        source_note(),
        keys_table(&c.tally.keys, None).finish()
    );
    let mut pairs = Table::new(
        "sortable conflicts-pairs",
        &["attempt", "what", "at", "key", "mode", "wait", "behind"],
    );
    for p in c.pairs.iter().take(max_rows) {
        let (what, at, wait) = match p.kind {
            ConflictKind::Wait { action, ms } => {
                ("waited", action.map_or("–", |a| a.as_str()), Cell::ms(ms))
            }
            ConflictKind::Wound => ("wounded", "–", Cell::text("–")),
        };
        pairs.row(
            if p.kind == ConflictKind::Wound {
                "failed"
            } else {
                ""
            },
            vec![
                Cell::text(&p.attempt.words()),
                Cell::text(what),
                Cell::text(at),
                Cell::text(&p.key_words()),
                Cell::text(&p.mode),
                wait,
                Cell::text(&p.behind_words()),
            ],
        );
    }
    let _ = write!(
        html,
        "<h4>Each wait and wound</h4><div class=\"wide\">{}</div><p class=\"note\">An attempt \
         waits behind the transactions that held the lock; a wounded attempt was aborted for an \
         older transaction that asked for the lock it held (wound-wait). A transaction no \
         attempt of this run had is another client's.</p>",
        pairs.finish()
    );
    let left = c.pairs.len().saturating_sub(max_rows) + c.pairs_left_out;
    if left > 0 {
        let _ = write!(
            html,
            "<p class=\"note\">{} more not listed.</p>",
            count(left as u64)
        );
    }
    if let Some(record) = longest_waiting(report) {
        html.push_str("<h4>The transaction that waited longest for locks</h4>");
        html.push_str(&super::attempt_lanes::picture(record, Some(c)));
    }
    html
}

/// The iteration whose attempts waited longest for locks, summed (the first of equals).
fn longest_waiting(report: &RunReport) -> Option<&IterationRecord> {
    let waited = |r: &IterationRecord| -> f64 {
        r.transaction.as_ref().map_or(0.0, |t| {
            t.attempts
                .iter()
                .flat_map(|a| &a.actions)
                .flat_map(|s| &s.lock_waits)
                .map(|w| w.ms)
                .sum()
        })
    };
    report
        .iterations
        .iter()
        .map(|r| (r, waited(r)))
        .filter(|(_, ms)| *ms > 0.0)
        .fold(
            None,
            |best: Option<(&IterationRecord, f64)>, (r, ms)| match best {
                Some((_, most)) if most >= ms => best,
                _ => Some((r, ms)),
            },
        )
        .map(|(r, _)| r)
}

/// A read-write load run's hottest keys, a few rows per step (for steps that named some), or
/// the sentence that the target named none; empty for a run of queries.
pub fn load_section(steps: &[&StepResult]) -> String {
    if steps.is_empty() {
        return String::new();
    }
    let named: Vec<&&StepResult> = steps.iter().filter(|s| s.conflicts.is_some()).collect();
    let mut html = String::from("<h3>The hottest keys</h3>");
    if named.is_empty() {
        html.push_str(
            "<p class=\"note\">The target named no lock waits for these read-write steps (the \
             local instance names them; other targets do not).</p>",
        );
        return html;
    }
    let mut table = keys_table(&[], Some("step"));
    for s in steps {
        let Some(c) = &s.conflicts else {
            none_named_row(&mut table, s);
            continue;
        };
        for k in c.keys.iter().take(LOAD_KEYS_SHOWN) {
            let mut cells = vec![Cell::figure(&s.level().describe(), s.level().value())];
            cells.extend(key_cells(k));
            table.row("", cells);
        }
    }
    let _ = write!(
        html,
        "<div class=\"wide\">{}</div><p class=\"note\">A step's keys waited on most (at most {} \
         of a step here; the report's JSON keeps more): the waits for a lock on each, their time and the \
         attempts wounded over it.</p>{}",
        table.finish(),
        LOAD_KEYS_SHOWN,
        source_note()
    );
    html
}

/// A read-write step that named no wait: one row saying so, its figures left empty (none is
/// invented).
fn none_named_row(table: &mut Table, s: &StepResult) {
    let mut cells = vec![
        Cell::figure(&s.level().describe(), s.level().value()),
        Cell::text("the target named no lock waits"),
    ];
    cells.extend((0..4).map(|_| Cell::text("–")));
    table.row("", cells);
}
