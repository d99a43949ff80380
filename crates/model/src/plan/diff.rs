//! Two plans matched operator by operator: which operators were added, removed or changed, and
//! how the self time, rows and scanned rows of each matched operator moved.
//!
//! Matching goes down both trees together from the roots (always paired). Among two matched
//! operators' children, those with the same title (name and target) are paired in order (the
//! longest common subsequence of titles); between two such anchors, an operator that only wraps
//! one of the kind found on the other side (a "Filter Scan" put over a scan, whatever the scan
//! reads) is reported added or removed and its child paired; what is left is paired by position and reported
//! changed, and the surplus added or removed with its whole subtree. A pair is "changed" when the
//! titles, the link, the metadata that says how the operator runs ([`TRAIT_KEYS`]) or its
//! conditions differ.
//!
//! [`TRAIT_KEYS`]: super::operators::TRAIT_KEYS

use super::operators::{Figures, Operator, OperatorTree};

/// How an operator of one plan relates to the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffKind {
    /// In both, run the same way.
    Same,
    /// In both places, but another operator or run another way.
    Changed,
    /// Only in the second plan.
    Added,
    /// Only in the first plan.
    Removed,
}

impl DiffKind {
    /// `same`, `changed`, `added` or `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            DiffKind::Same => "same",
            DiffKind::Changed => "changed",
            DiffKind::Added => "added",
            DiffKind::Removed => "removed",
        }
    }
}

/// One side of an entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// The operator's title.
    pub title: String,
    /// Its plan node index.
    pub node: usize,
    /// Its figures.
    pub figures: Figures,
}

/// One line of a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffEntry {
    /// Depth in the merged tree.
    pub depth: usize,
    /// What happened to the operator.
    pub kind: DiffKind,
    /// The operator in the first plan.
    pub a: Option<Side>,
    /// The operator in the second plan.
    pub b: Option<Side>,
    /// For a changed pair: what differs (`scan_type=TableScan -> scan_type=IndexScan`...).
    pub changes: Vec<String>,
}

impl DiffEntry {
    /// The title to show: the second plan's when it has the operator.
    pub fn title(&self) -> &str {
        self.b
            .as_ref()
            .or(self.a.as_ref())
            .map_or("", |s| s.title.as_str())
    }

    /// Self time in the second plan minus the first, ms.
    pub fn self_delta_ms(&self) -> Option<f64> {
        delta(self, |f| f.self_ms)
    }

    /// Rows in the second plan minus the first.
    pub fn rows_delta(&self) -> Option<f64> {
        delta(self, |f| f.rows)
    }

    /// Scanned rows in the second plan minus the first.
    pub fn scanned_delta(&self) -> Option<f64> {
        delta(self, |f| f.scanned_rows)
    }

    /// The entry in words: "Table Scan (Albums) -> Index Scan (AlbumsByTitle)", "Filter Scan
    /// added", "Table Scan (Albums) changed: Full scan=true -> (none)".
    pub fn describe(&self) -> String {
        let title = |s: &Option<Side>| s.as_ref().map_or("", |s| s.title.as_str()).to_owned();
        match self.kind {
            DiffKind::Same => format!("{} unchanged", self.title()),
            DiffKind::Added => format!("{} added", title(&self.b)),
            DiffKind::Removed => format!("{} removed", title(&self.a)),
            DiffKind::Changed => {
                let (a, b) = (title(&self.a), title(&self.b));
                let mut text = if a == b {
                    format!("{a} changed")
                } else {
                    format!("{a} -> {b}")
                };
                let details: Vec<&str> = self
                    .changes
                    .iter()
                    .map(String::as_str)
                    .filter(|c| !c.starts_with("operator "))
                    .collect();
                if !details.is_empty() {
                    text.push_str(&format!(" ({})", details.join(", ")));
                }
                text
            }
        }
    }
}

fn delta(e: &DiffEntry, f: fn(&Figures) -> Option<f64>) -> Option<f64> {
    Some(f(&e.b.as_ref()?.figures)? - f(&e.a.as_ref()?.figures)?)
}

/// The diff of two operator trees, in the merged tree's pre-order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanDiff {
    /// Every operator of either plan, once.
    pub entries: Vec<DiffEntry>,
}

impl PlanDiff {
    /// Whether the two plans have the same operators, run the same way.
    pub fn is_same_plan(&self) -> bool {
        self.entries.iter().all(|e| e.kind == DiffKind::Same)
    }

    /// The entries that are not [`DiffKind::Same`].
    pub fn differences(&self) -> impl Iterator<Item = &DiffEntry> {
        self.entries.iter().filter(|e| e.kind != DiffKind::Same)
    }
}

/// Matches `b` against `a`.
pub fn diff(a: &OperatorTree, b: &OperatorTree) -> PlanDiff {
    let mut out = PlanDiff::default();
    if let (Some(_), Some(_)) = (a.root(), b.root()) {
        // (position in a, position in b, depth), explicit stack: deep plans do not recurse.
        let mut work: Vec<Work> = vec![Work::Pair(0, 0, 0)];
        while let Some(item) = work.pop() {
            match item {
                Work::Pair(x, y, depth) => {
                    let (oa, ob) = (&a.operators[x], &b.operators[y]);
                    let changes = changes(oa, ob);
                    out.entries.push(DiffEntry {
                        depth,
                        kind: if changes.is_empty() {
                            DiffKind::Same
                        } else {
                            DiffKind::Changed
                        },
                        a: Some(side(oa)),
                        b: Some(side(ob)),
                        changes,
                    });
                    let mut next = match_children(a, b, oa, ob, depth + 1);
                    next.reverse();
                    work.extend(next);
                }
                Work::Only(tree, position, depth, wrapper) => {
                    let (t, kind) = if tree == 0 {
                        (a, DiffKind::Removed)
                    } else {
                        (b, DiffKind::Added)
                    };
                    let op = &t.operators[position];
                    let s = Some(side(op));
                    out.entries.push(DiffEntry {
                        depth,
                        kind,
                        a: if tree == 0 { s.clone() } else { None },
                        b: if tree == 0 { None } else { s },
                        changes: Vec::new(),
                    });
                    if !wrapper {
                        for &child in op.children.iter().rev() {
                            work.push(Work::Only(tree, child, depth + 1, false));
                        }
                    }
                }
            }
        }
    } else {
        for (tree, t) in [(0u8, a), (1u8, b)] {
            for op in &t.operators {
                let s = Some(side(op));
                out.entries.push(DiffEntry {
                    depth: op.depth,
                    kind: if tree == 0 {
                        DiffKind::Removed
                    } else {
                        DiffKind::Added
                    },
                    a: if tree == 0 { s.clone() } else { None },
                    b: if tree == 0 { None } else { s },
                    changes: Vec::new(),
                });
            }
        }
    }
    out
}

/// What is left to emit.
enum Work {
    /// A matched pair (position in a, position in b, depth).
    Pair(usize, usize, usize),
    /// An operator of one tree only (0 = a, 1 = b); a wrapper is emitted without its children
    /// (its child was paired on its own).
    Only(u8, usize, usize, bool),
}

fn side(op: &Operator) -> Side {
    Side {
        title: op.title(),
        node: op.node,
        figures: op.figures,
    }
}

fn key(op: &Operator) -> String {
    op.title()
}

/// What kind of operator it is, looser than its title: every scan is a scan, whatever it reads.
fn family(op: &Operator) -> &str {
    if op.target.is_some() {
        "scan"
    } else {
        &op.name
    }
}

/// What differs between two paired operators.
fn changes(a: &Operator, b: &Operator) -> Vec<String> {
    let mut out = Vec::new();
    if a.title() != b.title() {
        out.push(format!("operator {} -> {}", a.title(), b.title()));
    }
    if a.link != b.link {
        out.push(format!("link {:?} -> {:?}", a.link, b.link));
    }
    let none = "(none)".to_owned();
    for t in a.traits.iter().filter(|t| !b.traits.contains(t)) {
        let name = t.split('=').next().unwrap_or_default();
        let other = b
            .traits
            .iter()
            .find(|u| u.split('=').next() == Some(name))
            .unwrap_or(&none);
        out.push(format!("{t} -> {other}"));
    }
    for t in b.traits.iter().filter(|t| !a.traits.contains(t)) {
        let name = t.split('=').next().unwrap_or_default();
        if !a.traits.iter().any(|u| u.split('=').next() == Some(name)) {
            out.push(format!("(none) -> {t}"));
        }
    }
    if a.conditions != b.conditions {
        let show = |c: &[(String, String)]| {
            if c.is_empty() {
                "no condition".to_owned()
            } else {
                c.iter()
                    .map(|(kind, expr)| format!("{kind} {expr}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        out.push(format!(
            "{} -> {}",
            show(&a.conditions),
            show(&b.conditions)
        ));
    }
    out
}

/// The work for the children of a matched pair, in order.
fn match_children(
    a: &OperatorTree,
    b: &OperatorTree,
    oa: &Operator,
    ob: &Operator,
    depth: usize,
) -> Vec<Work> {
    let (ca, cb) = (&oa.children, &ob.children);
    let ka: Vec<String> = ca.iter().map(|&i| key(&a.operators[i])).collect();
    let kb: Vec<String> = cb.iter().map(|&i| key(&b.operators[i])).collect();
    let anchors = lcs(&ka, &kb);
    let mut work = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (ai, bj) in anchors
        .into_iter()
        .chain(std::iter::once((ca.len(), cb.len())))
    {
        gap(a, b, &ca[i..ai], &cb[j..bj], depth, &mut work);
        if ai < ca.len() && bj < cb.len() {
            work.push(Work::Pair(ca[ai], cb[bj], depth));
        }
        (i, j) = (ai + 1, bj + 1);
    }
    work
}

/// Pairs what lies between two anchors: wrappers first, then by position; the surplus alone.
fn gap(
    a: &OperatorTree,
    b: &OperatorTree,
    ga: &[usize],
    gb: &[usize],
    depth: usize,
    work: &mut Vec<Work>,
) {
    let mut ga: Vec<usize> = ga.to_vec();
    let mut gb: Vec<usize> = gb.to_vec();
    // A wrapper: an operator of one side whose only child has the title of one on the other.
    let only_child = |t: &OperatorTree, p: usize| match t.operators[p].children.as_slice() {
        [c] => Some(*c),
        _ => None,
    };
    let mut k = 0;
    while k < ga.len() {
        let x = ga[k];
        let hit = only_child(a, x).and_then(|c| {
            gb.iter()
                .position(|&y| {
                    family(&a.operators[c]) == family(&b.operators[y])
                        && family(&a.operators[x]) != family(&b.operators[y])
                })
                .map(|at| (c, at))
        });
        if let Some((c, at)) = hit {
            work.push(Work::Only(0, x, depth, true));
            work.push(Work::Pair(c, gb.remove(at), depth + 1));
            ga.remove(k);
        } else {
            k += 1;
        }
    }
    let mut k = 0;
    while k < gb.len() {
        let y = gb[k];
        let hit = only_child(b, y).and_then(|c| {
            ga.iter()
                .position(|&x| {
                    family(&a.operators[x]) == family(&b.operators[c])
                        && family(&a.operators[x]) != family(&b.operators[y])
                })
                .map(|at| (c, at))
        });
        if let Some((c, at)) = hit {
            work.push(Work::Only(1, y, depth, true));
            work.push(Work::Pair(ga.remove(at), c, depth + 1));
            gb.remove(k);
        } else {
            k += 1;
        }
    }
    let paired = ga.len().min(gb.len());
    for n in 0..paired {
        work.push(Work::Pair(ga[n], gb[n], depth));
    }
    for &x in &ga[paired..] {
        work.push(Work::Only(0, x, depth, false));
    }
    for &y in &gb[paired..] {
        work.push(Work::Only(1, y, depth, false));
    }
}

/// The largest table [`lcs`] fills (children of one operator, squared).
const MAX_LCS_CELLS: usize = 1 << 20;

/// The index pairs of a longest common subsequence of `a` and `b`, in order. Quadratic in the
/// children of one operator, which are few.
fn lcs(a: &[String], b: &[String]) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > MAX_LCS_CELLS {
        // Too many children to align by title: they are paired by position.
        return Vec::new();
    }
    let mut table = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i][j] = if a[i] == b[j] {
                table[i + 1][j + 1] + 1
            } else {
                table[i + 1][j].max(table[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n && j < m {
        if a[i] == b[j] {
            out.push((i, j));
            i += 1;
            j += 1;
        } else if table[i + 1][j] >= table[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}
