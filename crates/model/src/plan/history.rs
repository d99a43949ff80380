//! The plans of a run, as its report keeps them: each distinct plan once (its structure, without
//! statistics), and each iteration's plan signature with its per-operator figures; the
//! aggregate per operator over iterations that ran the same plan (median and p90 of self and
//! total time, rows and scanned rows); and where the plan changed between iterations.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::diff::{DiffKind, diff};
use super::model::{PlanError, QueryPlan};
use super::operators::{Figures, OperatorTree, SelfTime};
use super::signature::signature;
use crate::stats;
use crate::wire::PlanNode;

/// Distinct plans a report keeps, at most: a server that answers with a new plan every
/// iteration still leaves a report of bounded size (later ones keep their signature only).
pub const MAX_DISTINCT_PLANS: usize = 32;

/// Every plan a run saw. Empty for runs without plans (and reports written before plans were
/// kept, which read back as empty).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanHistory {
    /// Each distinct plan, in the order first seen.
    #[serde(default)]
    pub plans: Vec<StoredPlan>,
    /// Each iteration that returned a plan, in run order.
    #[serde(default)]
    pub iterations: Vec<IterationPlan>,
}

/// One distinct plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredPlan {
    /// Its [signature](super::signature()); reports say `fingerprint`.
    #[serde(rename = "fingerprint")]
    pub signature: String,
    /// Its nodes as the server sent them, without execution statistics.
    pub nodes: Vec<PlanNode>,
}

/// The plan of one iteration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationPlan {
    /// The iteration's number.
    pub iteration: u32,
    /// Its plan's signature; `None` if the plan could not be read.
    #[serde(default, rename = "fingerprint")]
    pub signature: Option<String>,
    /// Why the plan could not be read, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The figures of each operator that has any, by plan node.
    #[serde(default)]
    pub operators: Vec<OperatorSample>,
}

/// One operator's figures in one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OperatorSample {
    /// Its plan node's index.
    pub node: usize,
    /// Total time, children included, in milliseconds.
    #[serde(default)]
    pub total_ms: Option<f64>,
    /// Self time, in milliseconds.
    #[serde(default)]
    pub self_ms: Option<f64>,
    /// CPU time, in milliseconds.
    #[serde(default)]
    pub cpu_ms: Option<f64>,
    /// Rows produced.
    #[serde(default)]
    pub rows: Option<f64>,
    /// Rows read.
    #[serde(default)]
    pub scanned_rows: Option<f64>,
    /// Executions.
    #[serde(default)]
    pub executions: Option<u64>,
}

impl PlanHistory {
    /// Whether no iteration returned a plan.
    pub fn is_empty(&self) -> bool {
        self.iterations.is_empty()
    }

    /// Records iteration `iteration`'s plan nodes (as the server sent them).
    pub fn record(&mut self, iteration: u32, nodes: &[PlanNode]) {
        let plan = match QueryPlan::from_nodes(nodes) {
            Ok(plan) => plan,
            Err(e) => {
                self.iterations.push(IterationPlan {
                    iteration,
                    signature: None,
                    error: Some(e.to_string()),
                    operators: Vec::new(),
                });
                return;
            }
        };
        let print = signature(&plan);
        if !self.plans.iter().any(|p| p.signature == print) && self.plans.len() < MAX_DISTINCT_PLANS
        {
            self.plans.push(StoredPlan {
                signature: print.clone(),
                nodes: nodes
                    .iter()
                    .map(|n| PlanNode {
                        execution_stats: serde_json::Value::Null,
                        ..n.clone()
                    })
                    .collect(),
            });
        }
        let tree = OperatorTree::of(&plan);
        let operators = tree
            .operators
            .iter()
            .filter(|op| op.figures != Figures::default())
            .map(|op| OperatorSample {
                node: op.node,
                total_ms: op.figures.total_ms,
                self_ms: op.figures.self_ms,
                cpu_ms: op.figures.cpu_ms,
                rows: op.figures.rows,
                scanned_rows: op.figures.scanned_rows,
                executions: op.figures.executions,
            })
            .collect();
        self.iterations.push(IterationPlan {
            iteration,
            signature: Some(print),
            error: None,
            operators,
        });
    }

    /// The stored plan with signature `print`, parsed.
    pub fn plan(&self, print: &str) -> Option<Result<QueryPlan, PlanError>> {
        self.plans
            .iter()
            .find(|p| p.signature == print)
            .map(|p| QueryPlan::from_nodes(&p.nodes))
    }

    /// Per distinct plan, the aggregate over the iterations in `chosen` that ran it, most
    /// iterations first (ties: the plan seen first). Plans not stored (past
    /// [`MAX_DISTINCT_PLANS`]) or unreadable are left out.
    pub fn aggregate(&self, chosen: &BTreeSet<u32>) -> Vec<PlanAggregate> {
        let mut groups: Vec<(String, Vec<&IterationPlan>)> = Vec::new();
        for it in self
            .iterations
            .iter()
            .filter(|i| chosen.contains(&i.iteration))
        {
            let Some(print) = &it.signature else {
                continue;
            };
            match groups.iter_mut().find(|(p, _)| p == print) {
                Some((_, members)) => members.push(it),
                None => groups.push((print.clone(), vec![it])),
            }
        }
        let mut out: Vec<PlanAggregate> = groups
            .into_iter()
            .filter_map(|(print, members)| {
                let plan = self.plan(&print)?.ok()?;
                Some(PlanAggregate::over(print, &plan, &members))
            })
            .collect();
        out.sort_by_key(|a| std::cmp::Reverse(a.iterations.len()));
        out
    }

    /// Every iteration whose plan differs from the previous iteration's (both readable), in
    /// run order.
    pub fn changes(&self) -> Vec<PlanChange> {
        let mut out = Vec::new();
        let readable = self
            .iterations
            .iter()
            .filter_map(|i| Some((i.iteration, i.signature.as_deref()?)));
        let mut previous: Option<(u32, &str)> = None;
        for (iteration, print) in readable {
            if let Some((_, before)) = previous
                && before != print
            {
                out.push(PlanChange {
                    iteration,
                    from: before.to_owned(),
                    to: print.to_owned(),
                    summary: self.change_summary(before, print),
                });
            }
            previous = Some((iteration, print));
        }
        out
    }

    /// The operators that differ between two stored plans, in words.
    fn change_summary(&self, from: &str, to: &str) -> String {
        let (Some(Ok(a)), Some(Ok(b))) = (self.plan(from), self.plan(to)) else {
            return format!("plan {from} -> plan {to}");
        };
        let d = diff(&OperatorTree::of(&a), &OperatorTree::of(&b));
        let parts: Vec<String> = d
            .entries
            .iter()
            .filter(|e| e.kind != DiffKind::Same)
            .map(|e| e.describe())
            .take(3)
            .collect();
        if parts.is_empty() {
            format!("plan {from} -> plan {to} (the same operators)")
        } else {
            parts.join("; ")
        }
    }
}

/// Where a run's plan changed.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanChange {
    /// The first iteration that ran the new plan.
    pub iteration: u32,
    /// The signature before.
    pub from: String,
    /// The signature after.
    pub to: String,
    /// What changed, in words ("Table Scan (Albums) -> Index Scan (AlbumsByTitle)").
    pub summary: String,
}

impl PlanChange {
    /// The finding in words: "the plan changed at iteration 4: ...".
    pub fn text(&self) -> String {
        format!(
            "the plan changed at iteration {}: {}",
            self.iteration, self.summary
        )
    }
}

/// The median and 90th percentile of one figure over iterations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The median.
    pub median: f64,
    /// The 90th percentile.
    pub p90: f64,
    /// How many iterations had the figure.
    pub count: usize,
}

impl Spread {
    fn of(samples: &[f64]) -> Option<Spread> {
        let s = stats::summarize(samples)?;
        Some(Spread {
            median: s.median,
            p90: s.p90,
            count: s.count,
        })
    }
}

/// One operator's figures over the iterations that ran its plan.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OperatorSpread {
    /// Self time, milliseconds.
    pub self_ms: Option<Spread>,
    /// Total time, milliseconds.
    pub total_ms: Option<Spread>,
    /// Rows produced.
    pub rows: Option<Spread>,
    /// Rows read.
    pub scanned_rows: Option<Spread>,
    /// Executions.
    pub executions: Option<Spread>,
}

/// One plan aggregated over the iterations that ran it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanAggregate {
    /// Its signature.
    pub signature: String,
    /// The iterations aggregated, in run order.
    pub iterations: Vec<u32>,
    /// The operator tree, each operator's figures the medians over those iterations.
    pub tree: OperatorTree,
    /// Each operator's spread, by position in `tree`.
    pub spreads: Vec<OperatorSpread>,
}

impl PlanAggregate {
    fn over(signature: String, plan: &QueryPlan, members: &[&IterationPlan]) -> PlanAggregate {
        let mut tree = OperatorTree::of(plan);
        let mut spreads = Vec::with_capacity(tree.operators.len());
        // Each member's samples by plan node, looked up once per operator.
        let by_node: Vec<std::collections::HashMap<usize, &OperatorSample>> = members
            .iter()
            .map(|m| m.operators.iter().map(|s| (s.node, s)).collect())
            .collect();
        for op in &mut tree.operators {
            let samples: Vec<&OperatorSample> = by_node
                .iter()
                .filter_map(|m| m.get(&op.node).copied())
                .collect();
            let series = |f: fn(&OperatorSample) -> Option<f64>| -> Option<Spread> {
                Spread::of(&samples.iter().filter_map(|s| f(s)).collect::<Vec<_>>())
            };
            let spread = OperatorSpread {
                self_ms: series(|s| s.self_ms),
                total_ms: series(|s| s.total_ms),
                rows: series(|s| s.rows),
                scanned_rows: series(|s| s.scanned_rows),
                executions: series(|s| s.executions.map(|e| e as f64)),
            };
            let clamped = op.figures.self_time;
            op.figures = Figures {
                total_ms: spread.total_ms.map(|s| s.median),
                self_ms: spread.self_ms.map(|s| s.median),
                cpu_ms: Spread::of(&samples.iter().filter_map(|s| s.cpu_ms).collect::<Vec<_>>())
                    .map(|s| s.median),
                rows: spread.rows.map(|s| s.median),
                scanned_rows: spread.scanned_rows.map(|s| s.median),
                executions: spread.executions.map(|s| s.median.round() as u64),
                self_time: if clamped == SelfTime::Overlapping {
                    SelfTime::Overlapping
                } else {
                    SelfTime::Exact
                },
            };
            spreads.push(spread);
        }
        PlanAggregate {
            signature,
            iterations: members.iter().map(|m| m.iteration).collect(),
            tree,
            spreads,
        }
    }
}
