//! Operator trees and plan diffs as text (the command line), JSON (machines) and Graphviz DOT.
//! Pure: strings out, nothing printed.

use std::fmt::Write as _;

use serde::Serialize;

use super::diff::{DiffKind, PlanDiff};
use super::history::OperatorSpread;
use super::operators::{OperatorTree, SelfTime};
use crate::text::printable;

fn ms(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"))
}

fn count(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{}", v.round()))
}

/// "server 1.234 ms; hottest: Table Scan (Albums) 61.2%, Stream Aggregate 20.0%, ..." (up to
/// `top` operators with a self time).
pub fn summary_line(tree: &OperatorTree, top: usize) -> String {
    let hot: Vec<String> = tree
        .hottest()
        .into_iter()
        .filter(|&p| tree.operators[p].figures.self_ms.is_some())
        .take(top)
        .map(|p| {
            let op = &tree.operators[p];
            match tree.share(p) {
                Some(share) => format!("{} {share:.1}%", printable(&op.title())),
                None => format!("{} {} ms", printable(&op.title()), ms(op.figures.self_ms)),
            }
        })
        .collect();
    let total = tree.root_total_ms().map_or_else(
        || "server time unknown".to_owned(),
        |t| format!("server {t:.3} ms"),
    );
    if hot.is_empty() {
        format!("{total}; no operator reports its time (a PLAN, not a PROFILE)")
    } else {
        format!("{total}; hottest: {}", hot.join(", "))
    }
}

/// The operator tree as a table: self ms, total ms, share of the root's total, rows, scanned
/// rows, executions, then the operator indented by depth. Self times marked `*` were clamped at
/// zero, `~` overlap their children's (remote or parallel).
pub fn tree_text(tree: &OperatorTree) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>10} {:>10} {:>7} {:>10} {:>10} {:>6}  operator",
        "self ms", "total ms", "share", "rows", "scanned", "execs"
    );
    for (position, op) in tree.operators.iter().enumerate() {
        let f = &op.figures;
        let mark = match f.self_time {
            SelfTime::Exact => ' ',
            SelfTime::Clamped => '*',
            SelfTime::Overlapping => '~',
        };
        let share = tree
            .share(position)
            .map_or_else(|| "-".to_owned(), |s| format!("{s:.1}%"));
        let link = if op.link.is_empty() {
            String::new()
        } else {
            format!("[{}] ", printable(&op.link))
        };
        let _ = writeln!(
            out,
            "{:>9}{mark} {:>10} {:>7} {:>10} {:>10} {:>6}  {}{link}{}",
            ms(f.self_ms),
            ms(f.total_ms),
            share,
            count(f.rows),
            count(f.scanned_rows),
            f.executions
                .map_or_else(|| "-".to_owned(), |e| e.to_string()),
            indent(op.depth),
            printable(&op.title())
        );
    }
    out
}

/// Levels of a tree drawn as indentation; deeper operators say their depth instead, so a plan of a
/// long chain prints in lines of bounded width (100,000 nested operators once took gigabytes).
const MAX_INDENT: usize = 32;

/// The indentation of an operator at `depth`.
fn indent(depth: usize) -> String {
    if depth <= MAX_INDENT {
        "  ".repeat(depth)
    } else {
        format!("{}(depth {depth}) ", "  ".repeat(MAX_INDENT))
    }
}

/// One operator as [`tree_json`] writes it.
#[derive(Debug, Serialize)]
struct OperatorOut<'a> {
    node: usize,
    parent: Option<usize>,
    depth: usize,
    link: &'a str,
    name: &'a str,
    target: Option<&'a str>,
    self_ms: Option<f64>,
    total_ms: Option<f64>,
    share_percent: Option<f64>,
    cpu_ms: Option<f64>,
    rows: Option<f64>,
    scanned_rows: Option<f64>,
    executions: Option<u64>,
    self_time: SelfTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    self_ms_p90: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_ms_p90: Option<f64>,
    traits: &'a [String],
}

/// The operators as JSON values (root first), with each one's p90s when `spreads` has them.
pub fn tree_json(tree: &OperatorTree, spreads: &[OperatorSpread]) -> serde_json::Value {
    let operators: Vec<OperatorOut<'_>> = tree
        .operators
        .iter()
        .enumerate()
        .map(|(p, op)| {
            let spread = spreads.get(p);
            OperatorOut {
                node: op.node,
                parent: op.parent.map(|q| tree.operators[q].node),
                depth: op.depth,
                link: &op.link,
                name: &op.name,
                target: op.target.as_deref(),
                self_ms: op.figures.self_ms,
                total_ms: op.figures.total_ms,
                share_percent: tree.share(p),
                cpu_ms: op.figures.cpu_ms,
                rows: op.figures.rows,
                scanned_rows: op.figures.scanned_rows,
                executions: op.figures.executions,
                self_time: op.figures.self_time,
                self_ms_p90: spread.and_then(|s| s.self_ms).map(|s| s.p90),
                total_ms_p90: spread.and_then(|s| s.total_ms).map(|s| s.p90),
                traits: &op.traits,
            }
        })
        .collect();
    serde_json::to_value(operators).unwrap_or_default()
}

/// A DOT string literal's body: backslashes and quotes escaped, control characters dropped.
fn dot_text(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            _ => vec![c],
        })
        .collect()
}

/// The operator tree for Graphviz: a box per operator with its figures, filled darker the more
/// of the server's time it spends itself; edges labelled with their link type.
pub fn tree_dot(tree: &OperatorTree) -> String {
    let mut out = String::from(
        "digraph plan {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n",
    );
    for (p, op) in tree.operators.iter().enumerate() {
        let share = tree.share(p).unwrap_or(0.0).clamp(0.0, 100.0);
        // From white to a strong orange with the share of self time.
        let (r, g, b) = (255.0, 255.0 - 1.1 * share, 255.0 - 2.3 * share);
        let colour = format!(
            "#{:02x}{:02x}{:02x}",
            r as u8,
            g.max(0.0) as u8,
            b.max(0.0) as u8
        );
        let f = &op.figures;
        let _ = writeln!(
            out,
            "  n{} [label=\"{}\\nself {} ms · total {} ms\\nrows {} · scanned {} · execs {}\", fillcolor=\"{colour}\"];",
            op.node,
            dot_text(&op.title()),
            ms(f.self_ms),
            ms(f.total_ms),
            count(f.rows),
            count(f.scanned_rows),
            f.executions
                .map_or_else(|| "-".to_owned(), |e| e.to_string()),
        );
        if let Some(parent) = op.parent {
            let _ = writeln!(
                out,
                "  n{} -> n{} [label=\"{}\"];",
                tree.operators[parent].node,
                op.node,
                dot_text(&op.link)
            );
        }
    }
    out.push_str("}\n");
    out
}

/// A plan diff as text: one line per operator of either plan, marked `=` same, `~` changed,
/// `+` added, `-` removed, with the change in self time, rows and scanned rows.
pub fn diff_text(d: &PlanDiff, a_label: &str, b_label: &str) -> String {
    let mut out = String::new();
    let changed = d.differences().count();
    if changed == 0 {
        let _ = writeln!(
            out,
            "{} and {} ran the same plan",
            printable(a_label),
            printable(b_label)
        );
    } else {
        let _ = writeln!(
            out,
            "{} operators differ between {} and {}:",
            changed,
            printable(a_label),
            printable(b_label)
        );
    }
    let signed = |x: Option<f64>, precise: bool| match x {
        Some(v) if precise => format!("{v:+.3}"),
        Some(v) => format!("{:+}", v.round()),
        None => "-".to_owned(),
    };
    let _ = writeln!(
        out,
        "  {:>12} {:>10} {:>10}  operator",
        "Δ self ms", "Δ rows", "Δ scanned"
    );
    for e in &d.entries {
        let mark = match e.kind {
            DiffKind::Same => '=',
            DiffKind::Changed => '~',
            DiffKind::Added => '+',
            DiffKind::Removed => '-',
        };
        let what = match e.kind {
            DiffKind::Same => printable(e.title()).into_owned(),
            _ => printable(&e.describe()).into_owned(),
        };
        let _ = writeln!(
            out,
            "{mark} {:>12} {:>10} {:>10}  {}{what}",
            signed(e.self_delta_ms(), true),
            signed(e.rows_delta(), false),
            signed(e.scanned_delta(), false),
            indent(e.depth),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_operators_are_indented_within_a_bound() {
        assert_eq!(indent(0), "");
        assert_eq!(indent(2), "    ");
        assert_eq!(indent(MAX_INDENT).len(), 2 * MAX_INDENT);
        let deep = indent(99_999);
        assert!(deep.len() < 2 * MAX_INDENT + 20, "{}", deep.len());
        assert!(deep.ends_with("(depth 99999) "), "{deep}");
    }
}
