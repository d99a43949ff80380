//! The query plan the local instance returns, in production's format.
//!
//! The plan is SQLite's own (`EXPLAIN QUERY PLAN`, and the statement's bytecode for what that
//! leaves out: aggregates, LIMIT) with its operators named as Spanner names them, and the
//! metadata production carries:
//!
//! - the root is "Serialize Result"; each SELECT's table accesses hang under a "Distributed
//!   Union" (`call_type: Local`: the local instance has one split);
//! - a loop over a table is a "Scan" with `scan_type: TableScan` and `scan_target` (its primary
//!   key's index counts as the table), over another index `scan_type: IndexScan` with the index
//!   as `scan_target`; a full scan says `Full scan: true`; a loop that seeks (SQLite's SEARCH)
//!   has a "Filter Scan" over it whose "Seek Condition" is SQLite's key condition;
//! - nested loops are "Cross Apply" (`Input`: the outer loop, `Map`: the inner one);
//! - a temporary b-tree for GROUP BY is a "Sort" under a stream "Aggregate"; aggregate functions
//!   without one are a stream "Aggregate"; ORDER BY is a "Sort" ("Sort Limit" with a LIMIT), a
//!   LIMIT alone a "Limit"; DISTINCT a hash "Aggregate"; a subquery is a scalar "Subquery" node
//!   over its own operators; a compound SELECT a "Union All".
//!
//! PLAN mode (and WITH_PLAN_AND_STATS) return that tree without statistics. PROFILE mode adds
//! each operator's `execution_stats`, measured, not estimated: SQLite counts per loop how many
//! times it ran (`num_executions`) and the rows it visited (`scanned_rows`); the rows a loop
//! passes on are the runs of the loop inside it (or, for the innermost, the rows the sorter took
//! or the query returned) and the rest are `filtered_rows`. Time comes from SQLite's cycle
//! counters: each loop and sorter is charged the cycles of its own instructions, scaled to the
//! time the query thread measured inside SQLite; the instructions that belong to no loop
//! (expressions, filters, aggregate steps, result rows) are charged to the aggregate when there
//! is one, else to Serialize Result, which also has the time spent encoding and handing over
//! rows. An operator's latency is its own time plus its children's, so the self times add up to
//! the root's latency, the time from the first step to the last row. "Filter Scan" carries no
//! statistics (as in production); Distributed Union, Cross Apply, Limit and Sort Limit's
//! bookkeeping have no instructions of their own and report what their children did.

use std::collections::{BTreeMap, HashMap};

use super::query_stats::{nested, object, string};
use super::totals::{Measured, ProgramTraits, QueryTotals, ScanTarget};
use crate::proto::google::spanner::v1 as pb;
use crate::server::sqlite::scanstatus::Element;
use crate::server::sqlite::statement::PlanLine;

/// Subquery levels followed at most: deeper ones are left out of the plan.
const MAX_DEPTH: usize = 64;
/// Plan steps turned into operators at most.
const MAX_STEPS: usize = 10_000;

/// The query plan of `steps` (SQLite's `EXPLAIN QUERY PLAN`) and `program`, with PROFILE's
/// statistics when `profile` gives the query's totals.
pub fn plan_nodes(
    steps: &[PlanLine],
    program: ProgramTraits,
    targets: &BTreeMap<i64, ScanTarget>,
    profile: Option<&QueryTotals>,
) -> pb::QueryPlan {
    let measured = profile.and_then(|t| t.measured.as_ref());
    // A statement can have many steps (every subquery of a long WHERE); past the bound the plan
    // leaves the rest out rather than cost the server more than the query did.
    let steps = &steps[..steps.len().min(MAX_STEPS)];
    let mut children: HashMap<i64, Vec<usize>> = HashMap::new();
    for (i, step) in steps.iter().enumerate() {
        children.entry(step.parent).or_default().push(i);
    }
    let mut b = Builder {
        steps,
        children,
        program,
        targets,
        ops: Vec::new(),
        counters: measured.and_then(Counters::of),
        rows_returned: profile.map(|t| t.rows),
        remainder_to: None,
    };
    let root = b.push(Op::relational("Serialize Result"));
    if let Some(top) = b.level(0, 0) {
        b.link(root, top, "", "");
    }
    if let Some(totals) = profile {
        b.finish_profile(root, totals, measured);
    }
    b.into_plan()
}

/// An operator (or expression) being built.
#[derive(Debug, Default)]
struct Op {
    name: &'static str,
    scalar: bool,
    metadata: Vec<(&'static str, String)>,
    description: Option<String>,
    links: Vec<(usize, &'static str, String)>,
    /// Whether it reports statistics in PROFILE mode (a Filter Scan does not, as in production).
    reports: bool,
    self_ms: f64,
    rows: Option<u64>,
    scanned: Option<u64>,
    executions: Option<u64>,
    cpu_ms: Option<f64>,
}

impl Op {
    fn relational(name: &'static str) -> Op {
        Op {
            name,
            reports: true,
            metadata: vec![("execution_method", "Row".into())],
            ..Op::default()
        }
    }
}

/// SQLite's counters by plan step id, and how to turn cycles into milliseconds.
struct Counters {
    by_id: BTreeMap<i64, Element>,
    /// Milliseconds per cycle charged to an element (scaled down where elements overlap).
    ms_per_cycle: f64,
    /// Cycles of the statement no element accounts for, in milliseconds.
    remainder_ms: f64,
}

impl Counters {
    fn of(measured: &Measured) -> Option<Counters> {
        let scan = measured.scan.as_ref()?;
        if scan.total_cycles == 0 {
            return None;
        }
        let by_id: BTreeMap<i64, Element> =
            scan.elements.iter().map(|e| (e.id, e.clone())).collect();
        let stepping_ms = measured.stepping.as_secs_f64() * 1e3;
        let ms_per_cycle = stepping_ms / scan.total_cycles as f64;
        let charged: u64 = by_id.values().filter_map(|e| e.cycles).sum();
        let total = scan.total_cycles as f64;
        // Ranges can overlap (a sorter's range holds instructions on a loop's cursor): then the
        // elements share the statement's total in proportion.
        let fit = if charged as f64 > total {
            total / charged as f64
        } else {
            1.0
        };
        Some(Counters {
            by_id,
            ms_per_cycle: ms_per_cycle * fit,
            remainder_ms: (total - charged as f64 * fit).max(0.0) * ms_per_cycle,
        })
    }

    fn ms(&self, id: i64) -> f64 {
        self.by_id
            .get(&id)
            .and_then(|e| e.cycles)
            .map_or(0.0, |c| c as f64 * self.ms_per_cycle)
    }

    fn loops(&self, id: i64) -> Option<u64> {
        self.by_id.get(&id).and_then(|e| e.loops)
    }

    fn visited(&self, id: i64) -> Option<u64> {
        self.by_id.get(&id).and_then(|e| e.visited)
    }
}

struct Builder<'a> {
    steps: &'a [PlanLine],
    /// Each step's children, by the parent's id (positions in `steps`).
    children: HashMap<i64, Vec<usize>>,
    program: ProgramTraits,
    targets: &'a BTreeMap<i64, ScanTarget>,
    ops: Vec<Op>,
    counters: Option<Counters>,
    rows_returned: Option<u64>,
    /// The operator charged with the instructions of no loop (the top level's aggregate).
    remainder_to: Option<usize>,
}

/// What a SELECT's step lines say.
#[derive(Default)]
struct Level<'a> {
    loops: Vec<&'a PlanLine>,
    group_by: Option<&'a PlanLine>,
    order_by: Option<&'a PlanLine>,
    distinct: Option<&'a PlanLine>,
    compound: Option<&'a PlanLine>,
    subqueries: Vec<&'a PlanLine>,
}

fn is_loop(detail: &str) -> bool {
    (detail.starts_with("SCAN ") || detail.starts_with("SEARCH ")) && detail != "SCAN CONSTANT ROW"
}

impl<'a> Builder<'a> {
    fn push(&mut self, op: Op) -> usize {
        self.ops.push(op);
        self.ops.len() - 1
    }

    fn link(&mut self, parent: usize, child: usize, kind: &'static str, variable: &str) {
        self.ops[parent]
            .links
            .push((child, kind, variable.to_owned()));
    }

    /// The steps directly under `parent`, in order.
    fn children(&self, parent: i64) -> Vec<&'a PlanLine> {
        let steps: &'a [PlanLine] = self.steps;
        self.children
            .get(&parent)
            .map_or_else(Vec::new, |positions| {
                positions
                    .iter()
                    .map(|&i| &steps[i])
                    .filter(|s| s.id != parent)
                    .collect()
            })
    }

    fn classify(&self, parent: i64) -> Level<'a> {
        let mut level = Level::default();
        for step in self.children(parent) {
            let d = step.detail.as_str();
            if is_loop(d) {
                level.loops.push(step);
            } else if d.starts_with("USE TEMP B-TREE FOR GROUP BY") {
                level.group_by = Some(step);
            } else if d.starts_with("USE TEMP B-TREE FOR") && d.ends_with("ORDER BY") {
                level.order_by = Some(step);
            } else if d.starts_with("USE TEMP B-TREE FOR DISTINCT") {
                level.distinct = Some(step);
            } else if d.starts_with("COMPOUND") {
                level.compound = Some(step);
            } else if self.children.contains_key(&step.id) {
                level.subqueries.push(step);
            }
        }
        level
    }

    /// The operators of the SELECT whose steps hang under `parent`; its top operator.
    fn level(&mut self, parent: i64, depth: usize) -> Option<usize> {
        if depth > MAX_DEPTH {
            return None;
        }
        let level = self.classify(parent);
        let mut top = if let Some(compound) = level.compound {
            let union = self.push(Op::relational("Union All"));
            let parts: Vec<i64> = self.children(compound.id).iter().map(|s| s.id).collect();
            for part in parts {
                if let Some(child) = self.level(part, depth + 1) {
                    self.link(union, child, "", "");
                }
            }
            union
        } else if level.loops.is_empty() {
            let unit = self.push(Op::relational("Unit Relation"));
            self.ops[unit].rows = Some(1);
            self.ops[unit].executions = Some(1);
            unit
        } else {
            let data = self.loops(&level, parent == 0);
            let union = self.push(Op::relational("Distributed Union"));
            self.ops[union].metadata.push(("call_type", "Local".into()));
            self.ops[union].executions = Some(1);
            self.ops[union].rows = self.ops[data].rows;
            self.link(union, data, "", "");
            union
        };
        let mut aggregated = false;
        if let Some(group) = level.group_by {
            let (own, rows) = (self.own_ms(group.id), self.visited(group.id));
            let sort = self.push(Op::relational("Sort"));
            self.ops[sort].self_ms = own;
            self.ops[sort].rows = rows;
            self.ops[sort].executions = Some(1);
            self.link(sort, top, "", "");
            top = self.aggregate(sort, "Stream");
            aggregated = true;
        } else if parent == 0 && self.program.aggregate {
            top = self.aggregate(top, "Stream");
            aggregated = true;
        }
        if aggregated && parent == 0 {
            self.remainder_to = Some(top);
        }
        if let Some(distinct) = level.distinct {
            let own = self.own_ms(distinct.id);
            let dedupe = self.aggregate(top, "Hash");
            self.ops[dedupe].self_ms += own;
            top = dedupe;
        }
        if let Some(order) = level.order_by {
            let name = if self.program.limit && parent == 0 {
                "Sort Limit"
            } else {
                "Sort"
            };
            let (own, input) = (self.own_ms(order.id), self.visited(order.id));
            let sort = self.push(Op::relational(name));
            self.ops[sort].self_ms = own;
            self.ops[sort].executions = Some(1);
            // What the sort took in is what its input passed on.
            if let Some(input) = input {
                self.ops[top].rows = Some(input);
            }
            self.link(sort, top, "", "");
            top = sort;
        } else if self.program.limit && parent == 0 {
            let limit = self.push(Op::relational("Limit"));
            self.ops[limit].executions = Some(1);
            self.link(limit, top, "", "");
            top = limit;
        }
        if parent == 0 {
            self.ops[top].rows = self.rows_returned;
        }
        for sub in level.subqueries {
            let Some(child) = self.level(sub.id, depth + 1) else {
                continue;
            };
            let expr = self.push(Op {
                name: "Subquery",
                scalar: true,
                description: Some(sub.detail.clone()),
                ..Op::default()
            });
            self.link(expr, child, "", "");
            self.link(top, expr, "Scalar", "");
        }
        Some(top)
    }

    /// Rows SQLite's element `id` visited, when counted.
    fn visited(&self, id: i64) -> Option<u64> {
        self.counters.as_ref().and_then(|c| c.visited(id))
    }

    /// The time charged to SQLite's element `id` itself.
    fn own_ms(&self, id: i64) -> f64 {
        self.counters.as_ref().map_or(0.0, |c| c.ms(id))
    }

    fn aggregate(&mut self, input: usize, iterator: &'static str) -> usize {
        let mut op = Op::relational("Aggregate");
        op.metadata.push(("iterator_type", iterator.into()));
        op.metadata.push(("call_type", "Global".into()));
        op.executions = Some(1);
        let aggregate = self.push(op);
        self.link(aggregate, input, "", "");
        aggregate
    }

    /// The nested loops of one SELECT, outermost first, as Cross Applies; the top operator.
    fn loops(&mut self, level: &Level<'a>, top_level: bool) -> usize {
        let counters = self.counters.as_ref();
        // The rows each loop passes on: the runs of the loop inside it; for the innermost, the
        // rows the sorter took, or (at the top, with nothing in between) the rows returned.
        let mut passed: Vec<Option<u64>> = level
            .loops
            .windows(2)
            .map(|w| counters.and_then(|c| c.loops(w[1].id)))
            .collect();
        let sorter = level.group_by.or(level.distinct).or(level.order_by);
        passed.push(match sorter {
            Some(s) => counters.and_then(|c| c.visited(s.id)),
            None if top_level && !self.program.aggregate && self.counters.is_some() => {
                self.rows_returned
            }
            None => None,
        });
        let mut acc: Option<usize> = None;
        for (step, rows) in level.loops.iter().zip(passed) {
            let scan = self.scan(step, rows);
            acc = Some(match acc {
                None => scan,
                Some(outer) => {
                    let apply = self.push(Op::relational("Cross Apply"));
                    self.ops[apply].executions = Some(1);
                    self.ops[apply].rows = rows;
                    self.link(apply, outer, "Input", "");
                    self.link(apply, scan, "Map", "");
                    apply
                }
            });
        }
        // `level.loops` is not empty here.
        acc.unwrap_or_default()
    }

    /// One loop: a Scan, under a Filter Scan with its seek condition when SQLite seeks.
    fn scan(&mut self, step: &PlanLine, rows: Option<u64>) -> usize {
        let mut shape = ScanShape::of(&step.detail);
        // SQLite's own names for what the loop reads (the plan's text has the query's aliases).
        if let Some(target) = self.targets.get(&step.id) {
            match &target.index {
                Some(index) => {
                    shape.scan_type = "IndexScan";
                    shape.target = index.clone();
                }
                None => {
                    shape.scan_type = "TableScan";
                    shape.target = target.table.clone();
                }
            }
        }
        let mut op = Op::relational("Scan");
        op.metadata.push(("scan_type", shape.scan_type.into()));
        op.metadata.push(("scan_target", shape.target.clone()));
        op.metadata.push(("scan_method", "Row".into()));
        if shape.condition.is_none() {
            op.metadata.push(("Full scan", "true".into()));
        }
        if let Some(c) = &self.counters {
            op.self_ms = c.ms(step.id);
            op.executions = c.loops(step.id);
            op.scanned = c.visited(step.id);
        }
        op.rows = rows;
        let scan = self.push(op);
        let Some(condition) = shape.condition else {
            return scan;
        };
        let mut filter = Op::relational("Filter Scan");
        filter.reports = false;
        filter
            .metadata
            .push(("seekable_key_size", shape.key_size.to_string()));
        let filter = self.push(filter);
        self.link(filter, scan, "", "");
        let expr = self.push(Op {
            name: "Function",
            scalar: true,
            description: Some(condition),
            ..Op::default()
        });
        self.link(filter, expr, "Seek Condition", "");
        filter
    }

    /// Puts the root's figures, the remainder's time, and every latency (own time plus the
    /// children's, bottom up).
    fn finish_profile(&mut self, root: usize, totals: &QueryTotals, measured: Option<&Measured>) {
        let root_op = &mut self.ops[root];
        root_op.rows = Some(totals.rows);
        root_op.executions = Some(1);
        root_op.cpu_ms = Some(totals.cpu_time.as_secs_f64() * 1e3);
        let Some(measured) = measured else {
            return;
        };
        let outside_sqlite = measured.execution.saturating_sub(measured.stepping);
        root_op.self_ms = outside_sqlite.as_secs_f64() * 1e3;
        match &self.counters {
            Some(c) => {
                let to = self.remainder_to.unwrap_or(root);
                self.ops[to].self_ms += c.remainder_ms;
            }
            // No counters: SQLite's whole time is the root's, and no operator below reports.
            None => {
                self.ops[root].self_ms += measured.stepping.as_secs_f64() * 1e3;
                for op in self.ops.iter_mut().skip(1) {
                    op.reports = false;
                }
            }
        }
    }

    /// Latency of `op`: its own time and its relational children's.
    fn latency_ms(&self, totals: &mut [Option<f64>], op: usize) -> f64 {
        if let Some(t) = totals[op] {
            return t;
        }
        let mut total = self.ops[op].self_ms;
        for &(child, _, _) in &self.ops[op].links {
            if !self.ops[child].scalar {
                total += self.latency_ms(totals, child);
            }
        }
        totals[op] = Some(total);
        total
    }

    fn into_plan(self) -> pb::QueryPlan {
        let profile = self.rows_returned.is_some();
        let mut totals = vec![None; self.ops.len()];
        for op in 0..self.ops.len() {
            self.latency_ms(&mut totals, op);
        }
        // Numbered in pre-order from the root, as production numbers its plans.
        let mut order = Vec::with_capacity(self.ops.len());
        let mut seen = vec![false; self.ops.len()];
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            order.push(i);
            stack.extend(self.ops[i].links.iter().rev().map(|(child, _, _)| *child));
        }
        let mut number = vec![0i32; self.ops.len()];
        for (n, &i) in order.iter().enumerate() {
            number[i] = n as i32;
        }
        let nodes = order
            .iter()
            .map(|&i| {
                let op = &self.ops[i];
                let stats = (profile && op.reports && !op.scalar)
                    .then(|| execution_stats(op, totals[i].unwrap_or(op.self_ms)));
                pb::PlanNode {
                    index: number[i],
                    kind: if op.scalar {
                        pb::plan_node::Kind::Scalar
                    } else {
                        pb::plan_node::Kind::Relational
                    } as i32,
                    display_name: op.name.into(),
                    child_links: op
                        .links
                        .iter()
                        .map(|(child, kind, variable)| pb::plan_node::ChildLink {
                            child_index: number[*child],
                            r#type: (*kind).into(),
                            variable: variable.clone(),
                        })
                        .collect(),
                    short_representation: op.description.as_ref().map(|d| {
                        pb::plan_node::ShortRepresentation {
                            description: d.clone(),
                            subqueries: Default::default(),
                        }
                    }),
                    metadata: (!op.metadata.is_empty())
                        .then(|| object(op.metadata.iter().map(|(k, v)| (*k, string(v.clone()))))),
                    execution_stats: stats,
                }
            })
            .collect();
        pb::QueryPlan { plan_nodes: nodes }
    }
}

/// `execution_stats` as production writes them: each figure a struct of strings.
fn execution_stats(op: &Op, latency_ms: f64) -> prost_types::Struct {
    let figure = |total: String, unit: &str| {
        nested(object([("total", string(total)), ("unit", string(unit))]))
    };
    let mut entries = vec![
        ("latency", figure(format!("{latency_ms:.4}"), "msecs")),
        (
            "execution_summary",
            nested(object(
                op.executions
                    .map(|n| ("num_executions", string(n.to_string()))),
            )),
        ),
    ];
    if let Some(rows) = op.rows {
        entries.push(("rows", figure(rows.to_string(), "rows")));
    }
    if let Some(scanned) = op.scanned {
        entries.push(("scanned_rows", figure(scanned.to_string(), "rows")));
        if let Some(rows) = op.rows {
            entries.push((
                "filtered_rows",
                figure(scanned.saturating_sub(rows).to_string(), "rows"),
            ));
        }
    }
    if let Some(cpu) = op.cpu_ms {
        entries.push(("cpu_time", figure(format!("{cpu:.4}"), "msecs")));
    }
    object(entries)
}

/// What a SCAN or SEARCH line says: the table or index, and the seek condition.
#[derive(Debug, PartialEq)]
struct ScanShape {
    scan_type: &'static str,
    target: String,
    condition: Option<String>,
    key_size: usize,
}

impl ScanShape {
    fn of(detail: &str) -> ScanShape {
        let mut words = detail.split_whitespace();
        let _verb = words.next();
        let table = words.next().unwrap_or_default().to_owned();
        // "USING INDEX i", "USING COVERING INDEX i"; the primary key's own index is the table.
        let index = detail
            .split_once(" INDEX ")
            .filter(|_| detail.contains(" USING "))
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .filter(|name| !name.starts_with("sqlite_autoindex_"))
            .map(str::to_owned);
        let condition = detail
            .starts_with("SEARCH ")
            .then(|| {
                let open = detail.find('(')?;
                let close = detail.rfind(')')?;
                (close > open).then(|| detail[open..=close].to_owned())
            })
            .flatten();
        let key_size = condition.as_deref().map_or(0, |c| c.matches('?').count());
        match index {
            Some(index) => ScanShape {
                scan_type: "IndexScan",
                target: index,
                condition,
                key_size,
            },
            None => ScanShape {
                scan_type: "TableScan",
                target: table,
                condition,
                key_size,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn step(id: i64, parent: i64, detail: &str) -> PlanLine {
        PlanLine {
            id,
            parent,
            detail: detail.into(),
        }
    }

    fn names(plan: &pb::QueryPlan) -> Vec<&str> {
        plan.plan_nodes
            .iter()
            .map(|n| n.display_name.as_str())
            .collect()
    }

    #[test]
    fn scan_lines_name_their_table_index_and_seek_condition() {
        let shape = ScanShape::of("SEARCH a USING INDEX sqlite_autoindex_Albums_1 (SingerId=?)");
        assert_eq!(
            shape,
            ScanShape {
                scan_type: "TableScan",
                target: "a".into(),
                condition: Some("(SingerId=?)".into()),
                key_size: 1,
            }
        );
        let by_index =
            ScanShape::of("SEARCH Albums USING COVERING INDEX ByTitle (Title>? AND Title<?)");
        assert_eq!(
            (
                by_index.scan_type,
                by_index.target.as_str(),
                by_index.key_size
            ),
            ("IndexScan", "ByTitle", 2)
        );
        let full = ScanShape::of("SCAN Seed23 VIRTUAL TABLE INDEX 0:");
        assert_eq!(
            (full.scan_type, full.target.as_str(), full.condition),
            ("TableScan", "Seed23", None)
        );
    }

    #[test]
    fn a_plan_of_very_many_or_very_deep_steps_stays_bounded() {
        // A long WHERE of subqueries: 20,000 of them at one level.
        let mut wide = vec![step(1, 0, "SCAN Albums")];
        for k in 0..20_000 {
            let id = 10 + 2 * k;
            wide.push(step(id, 0, "LIST SUBQUERY"));
            wide.push(step(id + 1, id, "SCAN Singers"));
        }
        let started = std::time::Instant::now();
        let plan = plan_nodes(&wide, ProgramTraits::default(), &BTreeMap::new(), None);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert!(
            plan.plan_nodes.len() <= 4 * MAX_STEPS,
            "{}",
            plan.plan_nodes.len()
        );
        assert!(
            plan.plan_nodes.len() > MAX_STEPS,
            "the first steps are all there"
        );
        // Subqueries nested 500 deep: followed to MAX_DEPTH levels.
        let deep: Vec<PlanLine> = (1..=500)
            .map(|i| step(i, i - 1, "CORRELATED SCALAR SUBQUERY 1"))
            .chain(std::iter::once(step(501, 500, "SCAN Albums")))
            .collect();
        let plan = plan_nodes(&deep, ProgramTraits::default(), &BTreeMap::new(), None);
        let subqueries = plan
            .plan_nodes
            .iter()
            .filter(|n| n.display_name == "Subquery")
            .count();
        assert_eq!(subqueries, MAX_DEPTH);
    }

    #[test]
    fn a_join_with_a_grouping_becomes_cross_apply_under_an_aggregate() {
        let steps = [
            step(3, 0, "SCAN s"),
            step(
                6,
                0,
                "SEARCH a USING INDEX sqlite_autoindex_Albums_1 (SingerId=?)",
            ),
            step(9, 0, "USE TEMP B-TREE FOR GROUP BY"),
        ];
        let traits = ProgramTraits {
            aggregate: true,
            limit: false,
        };
        let plan = plan_nodes(&steps, traits, &BTreeMap::new(), None);
        assert_eq!(
            names(&plan),
            [
                "Serialize Result",
                "Aggregate",
                "Sort",
                "Distributed Union",
                "Cross Apply",
                "Scan",
                "Filter Scan",
                "Scan",
                "Function"
            ]
        );
        let children = |i: usize| -> Vec<(i32, &str)> {
            plan.plan_nodes[i]
                .child_links
                .iter()
                .map(|l| (l.child_index, l.r#type.as_str()))
                .collect()
        };
        assert_eq!(children(0), [(1, "")]);
        assert_eq!(children(4), [(5, "Input"), (6, "Map")]);
        assert_eq!(children(6), [(7, ""), (8, "Seek Condition")]);
        assert!(
            plan.plan_nodes
                .iter()
                .enumerate()
                .all(|(i, n)| n.index == i as i32)
        );
        assert!(plan.plan_nodes.iter().all(|n| n.execution_stats.is_none()));
    }
}
