//! A plan's signature: a hash of its shape, every node's operator, links, metadata and short
//! representation, and nothing of its execution statistics, so that two executions of the same
//! plan share it and a plan that changed does not.
//!
//! The hash is FNV-1a (`crate::fnv`), so that signatures stored in reports stay the same across
//! Rust releases.

use std::fmt::Write as _;

use super::model::QueryPlan;
use crate::fnv;

/// The signature of `plan`, as 16 lowercase hex digits.
pub fn signature(plan: &QueryPlan) -> String {
    let mut hash = fnv::OFFSET_BASIS;
    let mut text = String::new();
    for node in plan.nodes() {
        text.clear();
        // Each field ends with a byte that cannot occur in JSON text or names, so that
        // ("ab", "c") and ("a", "bc") differ.
        let _ = write!(
            text,
            "{}\u{1}{}\u{1}{}\u{1}{}\u{1}",
            node.index,
            node.kind.as_str(),
            node.display_name,
            node.description.as_deref().unwrap_or("\u{2}")
        );
        for link in &node.links {
            let _ = write!(
                text,
                "{}\u{3}{}\u{3}{}\u{1}",
                link.child, link.kind, link.variable
            );
        }
        for (name, child) in &node.subqueries {
            let _ = write!(text, "{name}\u{4}{child}\u{1}");
        }
        for (key, value) in &node.metadata {
            let _ = write!(text, "{key}\u{5}{value}\u{1}");
        }
        text.push('\u{6}');
        hash = fnv::continued(hash, text.as_bytes());
    }
    format!("{hash:016x}")
}
