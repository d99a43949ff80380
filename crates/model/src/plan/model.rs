//! The `QueryPlan` tree as Spanner sends it, parsed and checked: nodes (relational and scalar),
//! child links with their type and variable, metadata, short representations, and each node's
//! `execution_stats` as PROFILE mode writes them.
//!
//! Production writes every figure as a struct of strings: `latency: {total: "1.23", unit:
//! "msecs"}`, with `mean`, `std_deviation` and a `histogram` of `{lower_bound, upper_bound,
//! count, percentage}` buckets when the operator ran several times; `rows`, `cpu_time`,
//! `scanned_rows`, `filtered_rows`, `remote_calls` and others the same way; and an
//! `execution_summary` of `num_executions`, `execution_start_timestamp`,
//! `execution_end_timestamp`, `checkpoint_time`, `num_checkpoints` (sometimes a number, not a
//! string). Time figures come in `msecs`, and are read in `usecs`, `secs` and the rest too.
//!
//! What the server sent is data from the network: a plan that is not a tree of in-range indices,
//! or a figure this module relies on (latency, CPU time, rows, scanned rows, executions) that is
//! not a finite, non-negative number in a known unit, is a [`PlanError`] naming the node and the
//! field, never a panic. Keys this module does not know are kept as they came.

use std::collections::BTreeMap;

use serde_json::Value as Json;
use thiserror::Error;

use crate::wire::PlanNode;

/// The most nodes a plan may have. Production's largest plans have a few thousand.
pub const MAX_NODES: usize = 100_000;

/// Why a plan could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlanError {
    /// The plan has no node.
    #[error("the plan has no node")]
    Empty,
    /// More nodes than [`MAX_NODES`].
    #[error("the plan has {0} nodes, more than the {MAX_NODES} this reader accepts")]
    TooLarge(usize),
    /// A node's `index` is not its position in the list, as Spanner numbers them.
    #[error("plan node {position} says it is node {index}")]
    Misnumbered {
        /// Its position in `plan_nodes`.
        position: usize,
        /// The index it claims.
        index: i64,
    },
    /// A child link points outside the plan.
    #[error("plan node {node} links to child {child}, but the plan has {len} nodes")]
    BadChild {
        /// The node with the link.
        node: usize,
        /// The child index it names.
        child: i64,
        /// How many nodes there are.
        len: usize,
    },
    /// Following child links leads back to a node on the way.
    #[error("plan node {node} is its own descendant: the plan is not a tree")]
    Cycle {
        /// A node on the cycle.
        node: usize,
    },
    /// The root (node 0) is not a relational operator.
    #[error("the plan's root (node 0) is a {0} node, not a relational operator")]
    ScalarRoot(String),
    /// A figure this module reads is malformed.
    #[error("plan node {node}: execution_stats.{key}: {reason}")]
    BadFigure {
        /// The node.
        node: usize,
        /// The figure's key (`latency`, `rows.total`...).
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The document is not a query plan at all (when reading JSON).
    #[error("not a query plan: {0}")]
    NotAPlan(String),
}

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// An operator that produces rows (a scan, a join, an aggregate...).
    Relational,
    /// An expression (a function, a reference, a constant, a subquery).
    Scalar,
    /// Neither said.
    Unspecified,
}

impl NodeKind {
    fn from_name(name: &str) -> NodeKind {
        match name {
            "RELATIONAL" => NodeKind::Relational,
            "SCALAR" => NodeKind::Scalar,
            _ => NodeKind::Unspecified,
        }
    }

    /// The name Spanner gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Relational => "RELATIONAL",
            NodeKind::Scalar => "SCALAR",
            NodeKind::Unspecified => "KIND_UNSPECIFIED",
        }
    }
}

/// A link from a node to one of its children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildLink {
    /// The child's index.
    pub child: usize,
    /// What the child is to its parent: "" (an input), "Input", "Map", "Split Range",
    /// "Seek Condition", "Residual Condition"...
    pub kind: String,
    /// The variable the child's value is bound to, if any.
    pub variable: String,
}

/// One figure of `execution_stats`: its total and, for a node run several times, the spread.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The total over every execution, in `unit`.
    pub total: f64,
    /// The unit as written (`msecs`, `rows`, `calls`...).
    pub unit: String,
    /// The mean per execution, when given.
    pub mean: Option<f64>,
    /// The standard deviation per execution, when given.
    pub std_deviation: Option<f64>,
    /// The histogram of the executions, when given.
    pub histogram: Vec<Bucket>,
}

impl Figure {
    /// The total in milliseconds, if the unit is one of time.
    pub fn total_ms(&self) -> Option<f64> {
        unit_ms(&self.unit).map(|scale| self.total * scale)
    }
}

/// One bucket of a figure's histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    /// Lower bound, in the figure's unit.
    pub lower_bound: f64,
    /// Upper bound, in the figure's unit.
    pub upper_bound: f64,
    /// Executions that fell in the bucket.
    pub count: f64,
    /// Their share of all executions, in percent.
    pub percentage: f64,
}

/// `execution_summary`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecutionSummary {
    /// `num_executions`: how many times the operator ran.
    pub num_executions: Option<u64>,
    /// `execution_start_timestamp`, seconds since the Unix epoch.
    pub start: Option<f64>,
    /// `execution_end_timestamp`, seconds since the Unix epoch.
    pub end: Option<f64>,
    /// Every other key, as sent (`checkpoint_time`, `num_checkpoints`...).
    pub other: BTreeMap<String, Json>,
}

/// A node's `execution_stats` (PROFILE mode).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecutionStats {
    /// `latency`: the operator's time, its children's included, over all its executions.
    pub latency: Option<Figure>,
    /// `cpu_time`.
    pub cpu_time: Option<Figure>,
    /// `rows`: rows the operator produced.
    pub rows: Option<Figure>,
    /// `scanned_rows`: rows a scan read.
    pub scanned_rows: Option<Figure>,
    /// `execution_summary`.
    pub summary: ExecutionSummary,
    /// Every other key: a figure when it has a figure's shape and parses as one, else as sent.
    pub other: BTreeMap<String, Extra>,
}

/// An `execution_stats` entry this module does not interpret.
#[derive(Debug, Clone, PartialEq)]
pub enum Extra {
    /// Shaped like a figure (`filtered_rows`, `remote_calls`, `Number of Batches`...).
    Figure(Figure),
    /// Anything else, as sent.
    Raw(Json),
}

impl ExecutionStats {
    /// The latency in milliseconds.
    pub fn latency_ms(&self) -> Option<f64> {
        self.latency.as_ref().and_then(Figure::total_ms)
    }

    /// The CPU time in milliseconds.
    pub fn cpu_ms(&self) -> Option<f64> {
        self.cpu_time.as_ref().and_then(Figure::total_ms)
    }
}

/// One node of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Its index (its position in the plan).
    pub index: usize,
    /// Relational or scalar.
    pub kind: NodeKind,
    /// The operator's name as sent ("Distributed Union", "Scan", "Aggregate", "Function"...).
    pub display_name: String,
    /// Its children.
    pub links: Vec<ChildLink>,
    /// `short_representation.description`, for scalar nodes.
    pub description: Option<String>,
    /// `short_representation.subqueries`: subquery name to node index.
    pub subqueries: BTreeMap<String, usize>,
    /// `metadata`, every key as sent.
    pub metadata: BTreeMap<String, Json>,
    /// `execution_stats`, in PROFILE mode.
    pub stats: Option<ExecutionStats>,
}

impl Node {
    /// A metadata value as text (strings as they are, other values as JSON).
    pub fn meta(&self, key: &str) -> Option<String> {
        self.metadata.get(key).map(|v| match v {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    /// The name people know the operator by, as the Cloud console and the Spanner CLIs title
    /// it: "Scan" becomes "Table Scan", "Index Scan" or "Batch Scan" by its `scan_type`;
    /// "Aggregate" becomes "Stream Aggregate" or "Hash Aggregate" by its `iterator_type`; a
    /// "Distributed Union" or "Sort Limit" with a `call_type` gets it in front ("Local
    /// Distributed Union"). Anything else keeps its display name.
    pub fn title(&self) -> String {
        let name = self.display_name.as_str();
        match name {
            "Scan" => match self.meta("scan_type").as_deref() {
                Some("TableScan") => "Table Scan".into(),
                Some("IndexScan") => "Index Scan".into(),
                Some("BatchScan") => "Batch Scan".into(),
                _ => name.into(),
            },
            "Aggregate" => match self.meta("iterator_type") {
                Some(kind) if !kind.is_empty() => format!("{kind} Aggregate"),
                _ => name.into(),
            },
            "Distributed Union" | "Sort Limit" => match self.meta("call_type") {
                Some(call) if !call.is_empty() => format!("{call} {name}"),
                _ => name.into(),
            },
            _ => name.into(),
        }
    }
}

/// A whole plan, checked: node 0 is a relational root, every link in range, no cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryPlan {
    nodes: Vec<Node>,
}

impl QueryPlan {
    /// Parses and checks the plan nodes of a `ResultSetStats` (from the wire, or stored in a
    /// report).
    pub fn from_nodes(nodes: &[PlanNode]) -> Result<QueryPlan, PlanError> {
        if nodes.is_empty() {
            return Err(PlanError::Empty);
        }
        if nodes.len() > MAX_NODES {
            return Err(PlanError::TooLarge(nodes.len()));
        }
        let len = nodes.len();
        let parsed = nodes
            .iter()
            .enumerate()
            .map(|(position, node)| parse_node(position, node, len))
            .collect::<Result<Vec<_>, _>>()?;
        let plan = QueryPlan { nodes: parsed };
        plan.check_tree()?;
        Ok(plan)
    }

    /// Parses a plan in the JSON Spanner's REST API, the Cloud console's download and
    /// `gcloud spanner databases execute-sql --format=json` write: a `ResultSet`, its `stats`,
    /// a `ResultSetStats` or a `QueryPlan` (`planNodes`, with camelCase or snake_case keys).
    pub fn from_json(document: &Json) -> Result<QueryPlan, PlanError> {
        let nodes = rest_plan_nodes(document)?;
        QueryPlan::from_nodes(&nodes)
    }

    /// Every node, by index.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The node at `index`. Indices from this plan's links are always in range.
    pub fn node(&self, index: usize) -> Option<&Node> {
        self.nodes.get(index)
    }

    /// The root (node 0).
    pub fn root(&self) -> &Node {
        // `from_nodes` refuses an empty plan.
        &self.nodes[0]
    }

    /// Whether any node carries execution statistics (a PROFILE plan).
    pub fn has_stats(&self) -> bool {
        self.nodes.iter().any(|n| n.stats.is_some())
    }

    /// Refuses a scalar root and cycles, walking iteratively (a deep plan cannot overflow the
    /// stack).
    fn check_tree(&self) -> Result<(), PlanError> {
        if self.nodes[0].kind == NodeKind::Scalar {
            return Err(PlanError::ScalarRoot(self.nodes[0].kind.as_str().into()));
        }
        // 0 = not seen, 1 = on the current path, 2 = done.
        let mut state = vec![0u8; self.nodes.len()];
        for start in 0..self.nodes.len() {
            if state[start] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            state[start] = 1;
            while let Some(top) = stack.len().checked_sub(1) {
                let (node, next) = stack[top];
                let links = &self.nodes[node].links;
                if next < links.len() {
                    let child = links[next].child;
                    stack[top].1 += 1;
                    match state[child] {
                        0 => {
                            state[child] = 1;
                            stack.push((child, 0));
                        }
                        1 => return Err(PlanError::Cycle { node: child }),
                        _ => {}
                    }
                } else {
                    state[node] = 2;
                    stack.pop();
                }
            }
        }
        Ok(())
    }
}

fn parse_node(position: usize, node: &PlanNode, len: usize) -> Result<Node, PlanError> {
    if usize::try_from(node.index).ok() != Some(position) {
        return Err(PlanError::Misnumbered {
            position,
            index: i64::from(node.index),
        });
    }
    let in_range = |child: i64| -> Result<usize, PlanError> {
        usize::try_from(child)
            .ok()
            .filter(|&c| c < len)
            .ok_or(PlanError::BadChild {
                node: position,
                child,
                len,
            })
    };
    let links = node
        .child_links
        .iter()
        .map(|(child, kind, variable)| {
            Ok(ChildLink {
                child: in_range(i64::from(*child))?,
                kind: kind.clone(),
                variable: variable.clone(),
            })
        })
        .collect::<Result<Vec<_>, PlanError>>()?;
    let subqueries = node
        .subqueries
        .iter()
        .map(|(name, &child)| Ok((name.clone(), in_range(i64::from(child))?)))
        .collect::<Result<BTreeMap<_, _>, PlanError>>()?;
    let metadata = match &node.metadata {
        Json::Object(map) => map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        _ => BTreeMap::new(),
    };
    let stats = match &node.execution_stats {
        Json::Object(map) if !map.is_empty() => Some(parse_stats(position, map)?),
        _ => None,
    };
    Ok(Node {
        index: position,
        kind: NodeKind::from_name(&node.kind),
        display_name: node.display_name.clone(),
        links,
        description: node.short_representation.clone(),
        subqueries,
        metadata,
        stats,
    })
}

/// Milliseconds per `unit`, for units of time ([`TIME_UNITS`](crate::units::TIME_UNITS)).
pub fn unit_ms(unit: &str) -> Option<f64> {
    crate::units::nanos_per(unit).map(|nanos| nanos as f64 / 1e6)
}

/// A number sent as a string (production) or as a JSON number (some keys, other tools).
fn number(value: &Json) -> Option<f64> {
    let x = match value {
        Json::String(s) => s.trim().parse::<f64>().ok()?,
        Json::Number(n) => n.as_f64()?,
        _ => return None,
    };
    x.is_finite().then_some(x)
}

/// The figures whose meaning this module relies on, and whether each is a time.
const KNOWN: [(&str, bool); 4] = [
    ("latency", true),
    ("cpu_time", true),
    ("rows", false),
    ("scanned_rows", false),
];

fn parse_stats(
    node: usize,
    map: &serde_json::Map<String, Json>,
) -> Result<ExecutionStats, PlanError> {
    let bad = |key: &str, reason: String| PlanError::BadFigure {
        node,
        key: key.into(),
        reason,
    };
    let mut stats = ExecutionStats::default();
    for (key, value) in map {
        if let Some(&(_, time)) = KNOWN.iter().find(|(k, _)| *k == key.as_str()) {
            let figure = figure(value).map_err(|reason| bad(key, reason))?;
            if figure.total < 0.0 {
                return Err(bad(key, format!("a negative total ({})", figure.total)));
            }
            if time && unit_ms(&figure.unit).is_none() {
                return Err(bad(
                    key,
                    format!("\"{}\" is not a unit of time", figure.unit),
                ));
            }
            let slot = match key.as_str() {
                "latency" => &mut stats.latency,
                "cpu_time" => &mut stats.cpu_time,
                "rows" => &mut stats.rows,
                _ => &mut stats.scanned_rows,
            };
            *slot = Some(figure);
        } else if key == "execution_summary" {
            stats.summary = summary(value).map_err(|reason| bad(key, reason))?;
        } else {
            let extra = match figure(value) {
                Ok(f) => Extra::Figure(f),
                Err(_) => Extra::Raw(value.clone()),
            };
            stats.other.insert(key.clone(), extra);
        }
    }
    Ok(stats)
}

/// A figure: `{total, unit, mean?, std_deviation?, histogram?}`.
fn figure(value: &Json) -> Result<Figure, String> {
    let Json::Object(map) = value else {
        return Err(format!("expected {{total, unit}}, found {value}"));
    };
    let total = map.get("total").ok_or("no total")?;
    let total = number(total).ok_or_else(|| format!("total {total} is not a finite number"))?;
    let unit = match map.get("unit") {
        Some(Json::String(unit)) => unit.clone(),
        None => String::new(),
        Some(other) => return Err(format!("unit {other} is not text")),
    };
    let optional = |key: &str| -> Result<Option<f64>, String> {
        match map.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => number(v)
                .map(Some)
                .ok_or_else(|| format!("{key} {v} is not a finite number")),
        }
    };
    let histogram = match map.get("histogram") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(buckets)) => buckets.iter().map(bucket).collect::<Result<Vec<_>, _>>()?,
        Some(other) => return Err(format!("histogram {other} is not a list")),
    };
    Ok(Figure {
        total,
        unit,
        mean: optional("mean")?,
        std_deviation: optional("std_deviation")?,
        histogram,
    })
}

fn bucket(value: &Json) -> Result<Bucket, String> {
    let field = |key: &str| {
        value
            .get(key)
            .and_then(number)
            .ok_or_else(|| format!("histogram bucket {value} has no numeric {key}"))
    };
    Ok(Bucket {
        lower_bound: field("lower_bound")?,
        upper_bound: field("upper_bound")?,
        count: field("count")?,
        percentage: value.get("percentage").and_then(number).unwrap_or(0.0),
    })
}

fn summary(value: &Json) -> Result<ExecutionSummary, String> {
    let Json::Object(map) = value else {
        return Err(format!("expected an object, found {value}"));
    };
    let mut summary = ExecutionSummary::default();
    for (key, v) in map {
        match key.as_str() {
            "num_executions" => {
                let n = number(v)
                    .filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n < u64::MAX as f64)
                    .ok_or_else(|| format!("num_executions {v} is not a count"))?;
                summary.num_executions = Some(n as u64);
            }
            "execution_start_timestamp" => summary.start = number(v),
            "execution_end_timestamp" => summary.end = number(v),
            _ => {
                summary.other.insert(key.clone(), v.clone());
            }
        }
    }
    Ok(summary)
}

/// The plan nodes of a REST-style JSON document, as the wire's plain data.
fn rest_plan_nodes(document: &Json) -> Result<Vec<PlanNode>, PlanError> {
    fn get<'a>(v: &'a Json, camel: &str, snake: &str) -> Option<&'a Json> {
        v.get(camel).or_else(|| v.get(snake))
    }
    let mut at = document;
    for (camel, snake) in [("stats", "stats"), ("queryPlan", "query_plan")] {
        if let Some(inner) = get(at, camel, snake) {
            at = inner;
        }
    }
    let Some(Json::Array(nodes)) = get(at, "planNodes", "plan_nodes") else {
        return Err(PlanError::NotAPlan(
            "no planNodes (nor stats.queryPlan.planNodes) in the document".into(),
        ));
    };
    nodes
        .iter()
        .enumerate()
        .map(|(position, node)| rest_node(position, node))
        .collect()
}

fn rest_node(position: usize, node: &Json) -> Result<PlanNode, PlanError> {
    let not = |what: &str| PlanError::NotAPlan(format!("plan node {position}: {what}"));
    if !node.is_object() {
        return Err(not("not an object"));
    }
    let get = |camel: &str, snake: &str| node.get(camel).or_else(|| node.get(snake));
    // proto3 JSON leaves out zero values: a missing index is 0.
    let index = match get("index", "index") {
        None => 0,
        Some(v) => number(v)
            .filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n <= f64::from(i32::MAX))
            .ok_or_else(|| not("index is not a node number"))? as i32,
    };
    let text = |v: Option<&Json>| v.and_then(Json::as_str).unwrap_or_default().to_owned();
    let links = match get("childLinks", "child_links") {
        None => Vec::new(),
        Some(Json::Array(links)) => links
            .iter()
            .map(|link| {
                let child = link
                    .get("childIndex")
                    .or_else(|| link.get("child_index"))
                    .map_or(Some(0.0), number)
                    .filter(|n| n.fract() == 0.0 && n.abs() <= f64::from(i32::MAX))
                    .ok_or_else(|| not("a child link without a childIndex"))?;
                Ok((
                    child as i32,
                    text(link.get("type")),
                    text(link.get("variable")),
                ))
            })
            .collect::<Result<Vec<_>, PlanError>>()?,
        Some(_) => return Err(not("childLinks is not a list")),
    };
    let short = get("shortRepresentation", "short_representation");
    let mut subqueries = BTreeMap::new();
    if let Some(Json::Object(map)) = short.and_then(|s| s.get("subqueries")) {
        for (name, child) in map {
            let child = number(child)
                .filter(|n| n.fract() == 0.0 && n.abs() <= f64::from(i32::MAX))
                .ok_or_else(|| not("a subquery without a node index"))?;
            subqueries.insert(name.clone(), child as i32);
        }
    }
    Ok(PlanNode {
        index,
        kind: text(get("kind", "kind")),
        display_name: text(get("displayName", "display_name")),
        child_links: links,
        short_representation: short
            .and_then(|s| s.get("description"))
            .and_then(Json::as_str)
            .map(str::to_owned),
        metadata: get("metadata", "metadata").cloned().unwrap_or_default(),
        execution_stats: get("executionStats", "execution_stats")
            .cloned()
            .unwrap_or_default(),
        subqueries,
    })
}
