//! A read-write transaction's attempts on the page, one lane each on the iteration's time axis
//! (each attempt starting where the one before ended plus the back-off slept after it): its
//! actions, the waits for locks inside them (the wait's share of the action, drawn from its start:
//! the server takes a statement's or a commit's locks before it runs it), where it aborted, and
//! the back-off. Each mark's `<title>` says its figures: a wait's key, column, mode, time and whom
//! it waited behind, a wounded attempt's abort the older transaction that wounded it, as
//! [`RunConflicts`] names them.

use std::fmt::Write as _;

use super::markup::{esc, num};
use crate::analysis::RunConflicts;
use crate::report::{ActionKind, Attempt, AttemptOutcome, IterationRecord};
use crate::text::ms;

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 150.0;
const ROW: f64 = 22.0;
/// The lanes drawn at most: a transaction of more attempts shows its last ones.
const MAX_LANES: usize = 40;

/// An action's fill.
fn fill(kind: Option<ActionKind>) -> &'static str {
    match kind {
        Some(ActionKind::Commit) => "#2e7d32",
        Some(ActionKind::Begin) => "#7f8c8d",
        Some(ActionKind::Think) => "#d0d4d9",
        Some(ActionKind::BatchDml) => "#6c5ce7",
        _ => "#8c96a8",
    }
}

/// The colour of a wait for a lock, inside its action.
pub const WAIT: &str = "#e67e22";
/// The colour of where an attempt aborted.
const ABORT: &str = "#c0392b";
/// The colour of a back-off.
const BACKOFF: &str = "#f5cba7";

/// Where each attempt of `attempts` starts, in ms from the iteration's start.
fn starts(attempts: &[Attempt]) -> Vec<f64> {
    let mut at = 0.0f64;
    attempts
        .iter()
        .map(|a| {
            let start = at;
            at += a.total_ms.max(0.0) + a.backoff_ms.unwrap_or(0.0).max(0.0);
            start
        })
        .collect()
}

/// The lanes of `record`'s transaction as an SVG with its legend; empty for a query's iteration.
pub fn picture(record: &IterationRecord, conflicts: Option<&RunConflicts>) -> String {
    let Some(t) = &record.transaction else {
        return String::new();
    };
    let starts = starts(&t.attempts);
    let end = t
        .attempts
        .iter()
        .zip(&starts)
        .map(|(a, s)| s + a.total_ms.max(0.0) + a.backoff_ms.unwrap_or(0.0).max(0.0))
        .fold(record.total_ms.max(0.0), f64::max)
        .max(1e-3);
    let scale = (WIDTH - LEFT - 10.0) / end;
    let skip = t.attempts.len().saturating_sub(MAX_LANES);
    let mut body = String::new();
    let mut y = 4.0;
    for (k, (a, start)) in t.attempts.iter().zip(&starts).enumerate().skip(skip) {
        let _ = write!(
            body,
            "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">attempt {}</text>\
             <g class=\"lane\" transform=\"translate(0 {})\">{}</g>",
            num(LEFT - 6.0),
            num(y + ROW - 8.0),
            k + 1,
            num(y),
            lane(a, *start, scale, conflicts)
        );
        y += ROW;
    }
    let height = y + 18.0;
    let mut html = format!(
        "<p>#{}, attempt by attempt{}:</p><svg class=\"attempt-lanes\" viewBox=\"0 0 {WIDTH} {}\" \
         role=\"img\" aria-label=\"the transaction's attempts, a lane each\">{body}",
        record.iteration,
        if skip > 0 {
            format!(" (the first {skip} attempts not drawn)")
        } else {
            String::new()
        },
        num(height)
    );
    for i in 0..=4 {
        let x = LEFT + (WIDTH - LEFT - 10.0) * f64::from(i) / 4.0;
        let _ = write!(
            html,
            "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"{}\">{}</text>",
            num(x),
            num(height - 4.0),
            if i == 4 { "end" } else { "middle" },
            esc(&ms(end * f64::from(i) / 4.0))
        );
    }
    html.push_str("</svg>");
    let _ = write!(
        html,
        "<ul class=\"legend\"><li><span class=\"swatch\" style=\"background:{WAIT}\"></span>\
         waiting for a lock (its share of the action, from its start; the key, mode and whom it \
         waited behind on hover)</li><li><span class=\"swatch\" style=\"background:{ABORT}\">\
         </span>where an attempt aborted</li><li><span class=\"swatch\" \
         style=\"background:{BACKOFF}\"></span>back-off</li></ul>"
    );
    html
}

/// One attempt's marks, on a lane whose top is 0.
fn lane(a: &Attempt, start: f64, scale: f64, conflicts: Option<&RunConflicts>) -> String {
    let x = |ms: f64| LEFT + ms * scale;
    let h = ROW - 6.0;
    let mut svg = String::new();
    for action in a.actions.iter().filter(|s| s.kind.is_some()) {
        let from = start + action.at_ms.max(0.0);
        let width = (action.ms.max(0.0) * scale).max(0.6);
        let name = action
            .kind
            .map_or("action", |k| k.as_str())
            .replace('_', " ");
        let mut title = format!("{name}: {}", ms(action.ms));
        for wait in &action.lock_waits {
            let words = match conflicts {
                Some(c) => c.wait_words(wait),
                None => format!("waited {:.1} ms for {}", wait.ms, wait.key),
            };
            let _ = write!(title, "\n{words}");
        }
        let _ = write!(
            svg,
            "<g><title>{}</title><rect x=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
            esc(&title),
            num(x(from)),
            num(width),
            num(h),
            fill(action.kind)
        );
        // The waits, one after another from the action's start, within it.
        let mut waited = 0.0f64;
        for wait in &action.lock_waits {
            let share = wait.ms.max(0.0).min((action.ms - waited).max(0.0));
            if share > 0.0 {
                let _ = write!(
                    svg,
                    "<rect class=\"lock-wait\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
                     fill=\"{WAIT}\"/>",
                    num(x(from + waited)),
                    num(h * 0.25),
                    num((share * scale).max(0.6)),
                    num(h * 0.5)
                );
            }
            waited += share;
        }
        svg.push_str("</g>");
    }
    let end = start + a.total_ms.max(0.0);
    if a.outcome != AttemptOutcome::Committed {
        let mut title = format!(
            "{} at {}",
            a.outcome.as_str(),
            a.ended_at.map_or("an unknown action", |k| k.as_str())
        );
        if let Some(wound) = &a.wounded_by {
            let words = match conflicts {
                Some(c) => c.wound_words(wound),
                None => format!("wounded by transaction {}", wound.by),
            };
            let _ = write!(title, ": {words}");
        }
        let _ = write!(
            svg,
            "<g class=\"abort\"><title>{}</title><rect x=\"{}\" y=\"-2\" width=\"3\" height=\"{}\" \
             fill=\"{ABORT}\"/></g>",
            esc(&title),
            num(x(end) - 1.5),
            num(h + 4.0)
        );
    }
    if let Some(b) = a.backoff_ms.filter(|b| *b > 0.0) {
        let _ = write!(
            svg,
            "<g><title>back-off {}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
             fill=\"{BACKOFF}\"/></g>",
            esc(&ms(b)),
            num(x(end)),
            num(h * 0.3),
            num((b * scale).max(0.6)),
            num(h * 0.4)
        );
    }
    svg
}
