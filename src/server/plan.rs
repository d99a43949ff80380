//! The statistics and query plan the local instance returns, in production's formats.

use std::collections::BTreeMap;
use std::time::Duration;

use prost_types::value::Kind;

use super::query::{PlanStep, QueryTotals};
use crate::proto::google::spanner::v1 as pb;

/// What the last message of an answer reports, by query mode: statistics (WITH_STATS, PROFILE,
/// WITH_PLAN_AND_STATS), a plan (PLAN, PROFILE, WITH_PLAN_AND_STATS), or nothing (NORMAL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The query's text, which the statistics quote.
    pub sql: String,
    /// Whether `query_stats` is returned.
    pub with_stats: bool,
    /// Whether the plan is returned.
    pub explain: bool,
    /// Whether the plan carries execution statistics.
    pub profile: bool,
    /// The optimizer the query asked for.
    pub optimizer: super::service::Optimizer,
    /// Whether the query is a partition read with Data Boost.
    pub data_boost: bool,
}

impl Report {
    /// The statistics of a finished query that started at `started` and returned `bytes`.
    pub fn stats(
        &self,
        totals: &QueryTotals,
        started: std::time::Instant,
        bytes: u64,
    ) -> Option<pb::ResultSetStats> {
        if !self.with_stats && !self.explain {
            return None;
        }
        let elapsed = started.elapsed();
        Some(pb::ResultSetStats {
            query_plan: totals
                .plan
                .as_ref()
                .map(|steps| plan_nodes(steps, self.profile.then_some((totals, elapsed)))),
            query_stats: self.with_stats.then(|| {
                let mut stats = query_stats(&self.sql, totals, elapsed, bytes);
                self.name_the_optimizer(&mut stats);
                stats
            }),
            row_count: None,
        })
    }
}

impl Report {
    /// The optimizer version that ran and the statistics package it used, as production's
    /// `query_stats` name them; and Data Boost, when a partition read used it.
    fn name_the_optimizer(&self, stats: &mut prost_types::Struct) {
        let mut set = |key: &str, value: &str| {
            stats.fields.insert(key.to_owned(), string(value));
        };
        set("optimizer_version", &self.optimizer.version);
        if let Some(package) = &self.optimizer.statistics_package {
            set("optimizer_statistics_package", package);
        }
        if self.data_boost {
            set("data_boost_enabled", "true");
        }
    }
}

/// A duration as production writes it: "1.23 msecs" below a second, "1.23 secs" above.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 1000.0 {
        format!("{ms:.2} msecs")
    } else {
        format!("{:.2} secs", ms / 1e3)
    }
}

fn string(s: impl Into<String>) -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::StringValue(s.into())),
    }
}

fn object(
    entries: impl IntoIterator<Item = (&'static str, prost_types::Value)>,
) -> prost_types::Struct {
    prost_types::Struct {
        fields: entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<BTreeMap<_, _>>(),
    }
}

fn nested(s: prost_types::Struct) -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::StructValue(s)),
    }
}

/// `query_stats`: every value a string, as production sends them.
pub fn query_stats(
    sql: &str,
    totals: &QueryTotals,
    elapsed: Duration,
    bytes: u64,
) -> prost_types::Struct {
    object([
        ("elapsed_time", string(format_duration(elapsed))),
        ("cpu_time", string(format_duration(totals.cpu_time))),
        (
            "query_plan_creation_time",
            string(format_duration(totals.plan_time)),
        ),
        ("rows_returned", string(totals.rows.to_string())),
        ("rows_scanned", string(totals.rows_scanned.to_string())),
        ("bytes_returned", string(bytes.to_string())),
        ("query_text", string(sql)),
        // Not a Spanner figure: whether the local instance served a plain scan from its row cache.
        ("plain_scan", string(totals.plain_scan.to_string())),
        ("optimizer_version", string("1")),
        ("remote_server_calls", string("0/0")),
        (
            "runtime_creation_time",
            string(format_duration(Duration::ZERO)),
        ),
    ])
}

/// The query plan: a "Serialize Result" root over SQLite's plan steps. With `profile`, the root carries
/// execution statistics (rows, latency, CPU time) as PROFILE mode returns them.
pub fn plan_nodes(steps: &[PlanStep], profile: Option<(&QueryTotals, Duration)>) -> pb::QueryPlan {
    let mut nodes = vec![pb::PlanNode {
        index: 0,
        kind: pb::plan_node::Kind::Relational as i32,
        display_name: "Serialize Result".into(),
        execution_stats: profile.map(|(totals, elapsed)| {
            let figure = |total: String, unit: &str| {
                nested(object([("total", string(total)), ("unit", string(unit))]))
            };
            object([
                ("rows", figure(totals.rows.to_string(), "rows")),
                (
                    "latency",
                    figure(format!("{:.2}", elapsed.as_secs_f64() * 1e3), "msecs"),
                ),
                (
                    "cpu_time",
                    figure(
                        format!("{:.2}", totals.cpu_time.as_secs_f64() * 1e3),
                        "msecs",
                    ),
                ),
                (
                    "execution_summary",
                    nested(object([("num_executions", string("1"))])),
                ),
            ])
        }),
        ..Default::default()
    }];
    // Node i+1 is step i; a step's parent is another step's id, or 0 for the root.
    let index_of = |id: i64| steps.iter().position(|s| s.id == id).map(|i| i as i32 + 1);
    for (i, step) in steps.iter().enumerate() {
        nodes.push(pb::PlanNode {
            index: i as i32 + 1,
            kind: pb::plan_node::Kind::Relational as i32,
            display_name: operator_name(&step.detail).into(),
            metadata: Some(object([("sqlite_detail", string(step.detail.clone()))])),
            ..Default::default()
        });
        let parent = index_of(step.parent).unwrap_or(0) as usize;
        nodes[parent].child_links.push(pb::plan_node::ChildLink {
            child_index: i as i32 + 1,
            ..Default::default()
        });
    }
    pb::QueryPlan { plan_nodes: nodes }
}

/// A Spanner-like operator name for an SQLite plan step.
fn operator_name(detail: &str) -> &'static str {
    let first = detail.split_whitespace().next().unwrap_or("");
    match first {
        "SCAN" if detail.contains("VIRTUAL TABLE") => "Table Scan",
        "SCAN" => "Scan",
        "SEARCH" => "Index Seek",
        "USE" if detail.contains("ORDER BY") => "Sort",
        "USE" if detail.contains("GROUP BY") => "Aggregate",
        "USE" if detail.contains("DISTINCT") => "Distinct",
        "CO-ROUTINE" | "MATERIALIZE" => "Subquery",
        "COMPOUND" | "UNION" | "LEFT-MOST" => "Union All",
        "CORRELATED" | "SCALAR" | "LIST" => "Scalar Subquery",
        _ => "Operator",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::stats::parse_duration;

    #[test]
    fn durations_use_production_units_and_parse_back() {
        assert_eq!(format_duration(Duration::from_micros(1230)), "1.23 msecs");
        assert_eq!(format_duration(Duration::from_millis(2500)), "2.50 secs");
        assert_eq!(
            parse_duration(&format_duration(Duration::from_micros(1230))),
            Some(Duration::from_micros(1230))
        );
    }

    #[test]
    fn plan_steps_hang_under_their_parents() {
        let steps = vec![
            PlanStep {
                id: 2,
                parent: 0,
                detail: "SCAN Seed23 VIRTUAL TABLE INDEX 0:".into(),
            },
            PlanStep {
                id: 5,
                parent: 0,
                detail: "USE TEMP B-TREE FOR ORDER BY".into(),
            },
            PlanStep {
                id: 7,
                parent: 2,
                detail: "SEARCH Albums USING INDEX x".into(),
            },
        ];
        let plan = plan_nodes(&steps, None);
        assert_eq!(plan.plan_nodes.len(), 4);
        let children = |i: usize| -> Vec<i32> {
            plan.plan_nodes[i]
                .child_links
                .iter()
                .map(|l| l.child_index)
                .collect()
        };
        assert_eq!(children(0), [1, 2]);
        assert_eq!(children(1), [3]);
        assert_eq!(plan.plan_nodes[1].display_name, "Table Scan");
        assert_eq!(plan.plan_nodes[2].display_name, "Sort");
        assert!(plan.plan_nodes[0].execution_stats.is_none());
    }
}
