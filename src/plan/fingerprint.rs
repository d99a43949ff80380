//! A plan's fingerprint: a hash of its shape, every node's operator, links, metadata and short
//! representation, and nothing of its execution statistics, so that two executions of the same
//! plan share it and a plan that changed does not.
//!
//! The hash is FNV-1a (64 bits, Fowler, Noll and Vo; the offset basis and prime of the published
//! specification), written out here so that fingerprints stored in reports stay the same across
//! Rust releases (the standard library's hasher makes no such promise).

use std::fmt::Write as _;

use super::model::QueryPlan;

/// FNV-1a's 64-bit offset basis (the hash of nothing).
pub const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over `bytes`, continuing from `hash` (start from [`OFFSET_BASIS`]); also the run
/// history's query fingerprint.
pub fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(PRIME);
    }
    hash
}

/// The fingerprint of `plan`, as 16 lowercase hex digits.
pub fn fingerprint(plan: &QueryPlan) -> String {
    let mut hash = OFFSET_BASIS;
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
        hash = fnv1a(hash, text.as_bytes());
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        // From the FNV reference test suite: "" and "a" and "foobar" under 64-bit FNV-1a.
        assert_eq!(fnv1a(OFFSET_BASIS, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(OFFSET_BASIS, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(OFFSET_BASIS, b"foobar"), 0x8594_4171_f739_67e8);
    }
}
