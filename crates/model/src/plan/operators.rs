//! The operator tree of a plan: its relational nodes only, each with its figures, and its **self**
//! time beside the total Spanner reports.
//!
//! A node's `latency` is its own time with its children's included (over all its executions). Its
//! self time is that total minus the totals of its relational children, clamped at zero. A child
//! that reports no latency (production leaves it out for a "Filter Scan" or a "Create Batch") is
//! transparent: its own children's totals count in its place. Relational nodes below a scalar
//! node (a scalar subquery, an `IN` subquery) are children of the operator that evaluates that
//! expression. The subtraction is exact only when children run inside their parent, one after
//! another: a distributed operator whose children run remotely or in parallel (a "Distributed
//! Union" or "Distributed Cross Apply" that is not `call_type: Local`) may spend less than its
//! children's sum, so its self time is marked [`SelfTime::Overlapping`]; a self time clamped at
//! zero is marked [`SelfTime::Clamped`].

use super::model::{Node, NodeKind, QueryPlan};

/// How far a self time can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelfTime {
    /// Total minus children, as reported.
    #[default]
    Exact,
    /// The children's totals exceeded the operator's: clamped at zero.
    Clamped,
    /// Children run remotely or in parallel: the difference is not all the operator's own work.
    Overlapping,
}

/// An operator's figures, in milliseconds and rows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    /// Its total time, children included (its latency; without one, its children's sum).
    pub total_ms: Option<f64>,
    /// Its own time: total minus its relational children's totals, clamped at zero.
    pub self_ms: Option<f64>,
    /// Its CPU time, as reported.
    pub cpu_ms: Option<f64>,
    /// Rows it produced.
    pub rows: Option<f64>,
    /// Rows it read (scans).
    pub scanned_rows: Option<f64>,
    /// How many times it ran.
    pub executions: Option<u64>,
    /// How far `self_ms` can be trusted.
    pub self_time: SelfTime,
}

/// One relational operator of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Operator {
    /// Its plan node's index.
    pub node: usize,
    /// Its parent's position in [`OperatorTree::operators`] (`None` for the root).
    pub parent: Option<usize>,
    /// Its depth below the root (the root is 0).
    pub depth: usize,
    /// The type of the link from its parent ("", "Input", "Map"...).
    pub link: String,
    /// Its title ("Table Scan", "Stream Aggregate", "Local Distributed Union"...).
    pub name: String,
    /// What it reads (`scan_target`), if it is a scan.
    pub target: Option<String>,
    /// The metadata that distinguishes one way of running it from another (`scan_type`,
    /// `scan_target`, `Full scan`, `iterator_type`, `call_type`, `execution_method`,
    /// `seekable_key_size`...), as `key=value`, sorted.
    pub traits: Vec<String>,
    /// Its conditions: (link type, expression) of each scalar child with a typed link
    /// ("Seek Condition", "Residual Condition", "Split Range"...).
    pub conditions: Vec<(String, String)>,
    /// Its children's positions in [`OperatorTree::operators`], in link order.
    pub children: Vec<usize>,
    /// Its figures.
    pub figures: Figures,
}

impl Operator {
    /// `name (target)`, or the name alone.
    pub fn title(&self) -> String {
        match &self.target {
            Some(target) => format!("{} ({target})", self.name),
            None => self.name.clone(),
        }
    }
}

/// The relational operators of a plan, root first, each before its children (pre-order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OperatorTree {
    /// The operators.
    pub operators: Vec<Operator>,
}

/// Metadata keys that say how an operator runs, compared by plan diffs and signatures.
pub const TRAIT_KEYS: [&str; 9] = [
    "scan_type",
    "scan_target",
    "scan_method",
    "Full scan",
    "seekable_key_size",
    "iterator_type",
    "call_type",
    "execution_method",
    "join_type",
];

impl OperatorTree {
    /// The operator tree of `plan`, with its figures.
    pub fn of(plan: &QueryPlan) -> OperatorTree {
        let mut tree = OperatorTree::default();
        let mut seen = vec![false; plan.nodes().len()];
        // (node, parent position, link type), depth-first in link order.
        let mut stack: Vec<(usize, Option<usize>, String)> = vec![(0, None, String::new())];
        seen[0] = true;
        while let Some((index, parent, link)) = stack.pop() {
            let Some(node) = plan.node(index) else {
                continue;
            };
            let position = tree.operators.len();
            let depth = parent.map_or(0, |p| tree.operators[p].depth + 1);
            if let Some(p) = parent {
                tree.operators[p].children.push(position);
            }
            tree.operators
                .push(operator(plan, node, parent, depth, link));
            let children = relational_children(plan, index, &mut seen);
            for (child, link) in children.into_iter().rev() {
                stack.push((child, Some(position), link));
            }
        }
        tree.compute_self();
        tree
    }

    /// The root, if the tree has one.
    pub fn root(&self) -> Option<&Operator> {
        self.operators.first()
    }

    /// The root's total: the server's time on the query, as the plan reports it.
    pub fn root_total_ms(&self) -> Option<f64> {
        self.root().and_then(|r| r.figures.total_ms)
    }

    /// Operator positions, hottest (most self time) first; operators without a self time last,
    /// in tree order.
    pub fn hottest(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.operators.len()).collect();
        order.sort_by(|&a, &b| {
            let key = |i: usize| {
                self.operators[i]
                    .figures
                    .self_ms
                    .unwrap_or(f64::NEG_INFINITY)
            };
            key(b).total_cmp(&key(a)).then(a.cmp(&b))
        });
        order
    }

    /// `self_ms` as a share of the root's total, in percent.
    pub fn share(&self, position: usize) -> Option<f64> {
        let root = self.root_total_ms().filter(|t| *t > 0.0)?;
        let own = self.operators.get(position)?.figures.self_ms?;
        Some(own / root * 100.0)
    }

    /// Fills in totals for operators without a latency and self times, children before
    /// parents.
    fn compute_self(&mut self) {
        for position in (0..self.operators.len()).rev() {
            let children: Vec<Option<f64>> = self.operators[position]
                .children
                .iter()
                .map(|&c| self.operators[c].figures.total_ms)
                .collect();
            let known: Vec<f64> = children.iter().flatten().copied().collect();
            let children_ms = known.iter().sum::<f64>();
            let op = &mut self.operators[position];
            match op.figures.total_ms {
                Some(total) => {
                    let own = total - children_ms;
                    op.figures.self_ms = Some(own.max(0.0));
                    if own < 0.0 && op.figures.self_time == SelfTime::Exact {
                        op.figures.self_time = SelfTime::Clamped;
                    }
                }
                None if !known.is_empty() => op.figures.total_ms = Some(children_ms),
                None => {}
            }
        }
    }
}

/// The relational nodes a node's links reach, directly or through scalar nodes, with the link
/// type they hang by; each node once.
fn relational_children(plan: &QueryPlan, index: usize, seen: &mut [bool]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut pending: Vec<(usize, String)> = plan
        .node(index)
        .map(|n| {
            n.links
                .iter()
                .rev()
                .map(|l| (l.child, l.kind.clone()))
                .collect()
        })
        .unwrap_or_default();
    while let Some((child, kind)) = pending.pop() {
        if seen[child] {
            continue;
        }
        seen[child] = true;
        let Some(node) = plan.node(child) else {
            continue;
        };
        if node.kind == NodeKind::Scalar {
            // Look through the expression for subqueries; they hang by the expression's link.
            for link in node.links.iter().rev() {
                pending.push((link.child, kind.clone()));
            }
        } else {
            found.push((child, kind));
        }
    }
    found
}

fn operator(
    plan: &QueryPlan,
    node: &Node,
    parent: Option<usize>,
    depth: usize,
    link: String,
) -> Operator {
    let stats = node.stats.as_ref();
    let distributed = node.display_name.starts_with("Distributed")
        && node.meta("call_type").as_deref() != Some("Local");
    let figures = Figures {
        total_ms: stats.and_then(|s| s.latency_ms()),
        self_ms: None,
        cpu_ms: stats.and_then(|s| s.cpu_ms()),
        rows: stats.and_then(|s| s.rows.as_ref()).map(|f| f.total),
        scanned_rows: stats.and_then(|s| s.scanned_rows.as_ref()).map(|f| f.total),
        executions: stats.and_then(|s| s.summary.num_executions),
        self_time: if distributed {
            SelfTime::Overlapping
        } else {
            SelfTime::Exact
        },
    };
    let traits = TRAIT_KEYS
        .iter()
        .filter_map(|key| node.meta(key).map(|v| format!("{key}={v}")))
        .collect();
    let conditions = node
        .links
        .iter()
        .filter(|l| !l.kind.is_empty())
        .filter_map(|l| {
            let child = plan.node(l.child)?;
            (child.kind == NodeKind::Scalar).then(|| {
                (
                    l.kind.clone(),
                    child.description.clone().unwrap_or_default(),
                )
            })
        })
        .collect();
    Operator {
        node: node.index,
        parent,
        depth,
        link,
        name: node.title(),
        target: node.meta("scan_target"),
        traits,
        conditions,
        children: Vec::new(),
        figures,
    }
}
