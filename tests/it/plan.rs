//! The plan model on plans in production's format: PROFILE plans written here from the field
//! names and formats Spanner documents and sends (the REST JSON the Cloud console downloads:
//! camelCase keys, `index` left out for node 0, every figure a struct of strings), with
//! multi-execution nodes, histograms, odd units and keys this reader does not know; scalar
//! subtrees holding subqueries; and malformed plans, which must be clear errors, never panics.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use spanprof::plan::model::Extra;
use spanprof::plan::{
    DiffKind, NodeKind, OperatorTree, PlanError, PlanHistory, QueryPlan, SelfTime, diff, signature,
};
use spanprof::wire::PlanNode;

fn figure(total: &str, unit: &str) -> Value {
    json!({ "total": total, "unit": unit })
}

/// `SELECT s.FirstName, COUNT(*) FROM Singers s JOIN Albums a USING (SingerId) WHERE
/// a.MarketingBudget > 1000 GROUP BY s.FirstName` as a production PROFILE might return it: a
/// root Distributed Union, a hash aggregate, a Distributed Cross Apply whose Map side runs a
/// Local Distributed Union five times (one per batch row) over a Filter Scan without statistics
/// and a table scan whose latency is written in microseconds.
fn join_profile() -> Value {
    json!({
      "stats": {
        "queryPlan": {
          "planNodes": [
            {
              "childLinks": [{ "childIndex": 1 }, { "childIndex": 17, "type": "Split Range" }],
              "displayName": "Distributed Union",
              "kind": "RELATIONAL",
              "metadata": { "execution_method": "Row", "subquery_cluster_node": "1" },
              "executionStats": {
                "latency": figure("6.10", "msecs"),
                "cpu_time": figure("2.00", "msecs"),
                "rows": figure("4", "rows"),
                "remote_calls": figure("0", "calls"),
                "execution_summary": {
                  "execution_start_timestamp": "1767225600.100000",
                  "execution_end_timestamp": "1767225600.106100",
                  "num_executions": "1"
                }
              }
            },
            {
              "childLinks": [{ "childIndex": 2 }, { "childIndex": 16 }],
              "displayName": "Serialize Result",
              "index": 1,
              "kind": "RELATIONAL",
              "metadata": { "execution_method": "Row" },
              "executionStats": {
                "latency": figure("6.00", "msecs"),
                "rows": figure("4", "rows"),
                "execution_summary": { "num_executions": "1" }
              }
            },
            {
              "childLinks": [{ "childIndex": 3 }],
              "displayName": "Aggregate",
              "index": 2,
              "kind": "RELATIONAL",
              "metadata": { "call_type": "Global", "execution_method": "Row", "iterator_type": "Hash" },
              "executionStats": {
                "latency": figure("5.50", "msecs"),
                "rows": figure("4", "rows"),
                "execution_summary": { "num_executions": "1" }
              }
            },
            {
              "childLinks": [
                { "childIndex": 4 },
                { "childIndex": 8, "type": "Map" },
                { "childIndex": 15, "type": "Split Range" }
              ],
              "displayName": "Distributed Cross Apply",
              "index": 3,
              "kind": "RELATIONAL",
              "metadata": { "execution_method": "Row", "subquery_cluster_node": "8" },
              "executionStats": {
                "latency": figure("5.00", "msecs"),
                "rows": figure("9", "rows"),
                "Number of Batches": figure("1", "batches"),
                "execution_summary": { "num_executions": "1" }
              }
            },
            {
              "childLinks": [{ "childIndex": 5 }, { "childIndex": 7, "variable": "v1.Batch" }],
              "displayName": "Create Batch",
              "index": 4,
              "kind": "RELATIONAL",
              "metadata": { "execution_method": "Row" }
            },
            {
              "childLinks": [{ "childIndex": 6 }],
              "displayName": "Distributed Union",
              "index": 5,
              "kind": "RELATIONAL",
              "metadata": { "call_type": "Local", "execution_method": "Row", "subquery_cluster_node": "6" },
              "executionStats": {
                "latency": figure("1.00", "msecs"),
                "rows": figure("5", "rows"),
                "execution_summary": { "checkpoint_time": "0.01 msecs", "num_checkpoints": 1, "num_executions": "1" }
              }
            },
            {
              "displayName": "Scan",
              "index": 6,
              "kind": "RELATIONAL",
              "metadata": {
                "Full scan": "true",
                "execution_method": "Row",
                "scan_method": "Automatic",
                "scan_target": "Singers",
                "scan_type": "TableScan"
              },
              "executionStats": {
                "latency": figure("0.90", "msecs"),
                "rows": figure("5", "rows"),
                "scanned_rows": figure("5", "rows"),
                "deleted_rows": figure("0", "rows"),
                "filesystem_delay_seconds": figure("0.20", "msecs"),
                "execution_summary": { "num_executions": "1" }
              }
            },
            {
              "displayName": "Reference",
              "index": 7,
              "kind": "SCALAR",
              "shortRepresentation": { "description": "$v1" }
            },
            {
              "childLinks": [{ "childIndex": 9 }, { "childIndex": 11, "type": "Map" }],
              "displayName": "Cross Apply",
              "index": 8,
              "kind": "RELATIONAL",
              "metadata": { "execution_method": "Row" },
              "executionStats": {
                "latency": figure("3.70", "msecs"),
                "rows": figure("9", "rows"),
                "execution_summary": { "num_executions": "1" }
              }
            },
            {
              "childLinks": [{ "childIndex": 10, "variable": "batched_SingerId" }],
              "displayName": "Scan",
              "index": 9,
              "kind": "RELATIONAL",
              "metadata": { "execution_method": "Row", "scan_method": "Row", "scan_target": "$v1", "scan_type": "BatchScan" },
              "executionStats": {
                "latency": figure("0.05", "msecs"),
                "rows": figure("5", "rows"),
                "execution_summary": { "num_executions": "1" }
              }
            },
            {
              "displayName": "Reference",
              "index": 10,
              "kind": "SCALAR",
              "shortRepresentation": { "description": "SingerId" }
            },
            {
              "childLinks": [{ "childIndex": 12 }],
              "displayName": "Distributed Union",
              "index": 11,
              "kind": "RELATIONAL",
              "metadata": { "call_type": "Local", "execution_method": "Row", "subquery_cluster_node": "12" },
              "executionStats": {
                "latency": {
                  "total": "3.50", "unit": "msecs", "mean": "0.70", "std_deviation": "0.10",
                  "histogram": [
                    { "count": "4", "lower_bound": "0", "percentage": "80", "upper_bound": "1" },
                    { "count": "1", "lower_bound": "1", "percentage": "20", "upper_bound": "2" }
                  ]
                },
                "rows": { "total": "9", "unit": "rows", "mean": "1.8", "std_deviation": "0.75" },
                "execution_summary": { "num_executions": "5" }
              }
            },
            {
              "childLinks": [{ "childIndex": 13 }, { "childIndex": 14, "type": "Residual Condition" }],
              "displayName": "Filter Scan",
              "index": 12,
              "kind": "RELATIONAL",
              "metadata": { "execution_method": "Row", "seekable_key_size": "0" }
            },
            {
              "displayName": "Scan",
              "index": 13,
              "kind": "RELATIONAL",
              "metadata": { "execution_method": "Row", "scan_method": "Row", "scan_target": "Albums", "scan_type": "TableScan" },
              "executionStats": {
                "latency": { "total": "3200", "unit": "usecs", "mean": "640", "std_deviation": "90" },
                "cpu_time": { "total": "2.1", "unit": "msecs" },
                "rows": { "total": "9", "unit": "rows", "mean": "1.8", "std_deviation": "0.75" },
                "scanned_rows": { "total": "11", "unit": "rows", "mean": "2.2", "std_deviation": "0.4" },
                "filtered_rows": figure("2", "rows"),
                "execution_summary": { "num_executions": "5" }
              }
            },
            {
              "displayName": "Function",
              "index": 14,
              "kind": "SCALAR",
              "shortRepresentation": { "description": "($MarketingBudget > 1000)" }
            },
            {
              "displayName": "Function",
              "index": 15,
              "kind": "SCALAR",
              "shortRepresentation": { "description": "($SingerId = $batched_SingerId)" }
            },
            {
              "displayName": "Reference",
              "index": 16,
              "kind": "SCALAR",
              "shortRepresentation": { "description": "$FirstName" }
            },
            {
              "displayName": "Constant",
              "index": 17,
              "kind": "SCALAR",
              "shortRepresentation": { "description": "true" }
            }
          ]
        },
        "queryStats": { "elapsed_time": "6.50 msecs", "rows_returned": "4" }
      }
    })
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn a_production_profile_parses_into_operators_with_self_and_total_time() {
    let plan = QueryPlan::from_json(&join_profile()).expect("a valid plan");
    assert_eq!(plan.nodes().len(), 18);
    assert!(plan.has_stats());
    assert_eq!(plan.root().display_name, "Distributed Union");
    assert_eq!(plan.nodes()[7].kind, NodeKind::Scalar);

    let tree = OperatorTree::of(&plan);
    let titles: Vec<String> = tree
        .operators
        .iter()
        .map(|o| format!("{}{}", "  ".repeat(o.depth), o.title()))
        .collect();
    assert_eq!(
        titles,
        [
            "Distributed Union",
            "  Serialize Result",
            "    Hash Aggregate",
            "      Distributed Cross Apply",
            "        Create Batch",
            "          Local Distributed Union",
            "            Table Scan (Singers)",
            "        Cross Apply",
            "          Batch Scan ($v1)",
            "          Local Distributed Union",
            "            Filter Scan",
            "              Table Scan (Albums)",
        ]
    );
    let by_title = |t: &str| {
        tree.operators
            .iter()
            .find(|o| o.title().trim() == t)
            .unwrap_or_else(|| panic!("no {t}"))
    };
    // 3200 usecs is 3.2 ms; the Filter Scan above it reports nothing and passes it through.
    let albums = by_title("Table Scan (Albums)");
    assert!(close(albums.figures.total_ms.unwrap_or_default(), 3.2));
    assert!(close(albums.figures.self_ms.unwrap_or_default(), 3.2));
    assert_eq!(albums.figures.executions, Some(5));
    assert_eq!(
        (albums.figures.rows, albums.figures.scanned_rows),
        (Some(9.0), Some(11.0))
    );
    assert!(close(albums.figures.cpu_ms.unwrap_or_default(), 2.1));
    let filter = by_title("Filter Scan");
    assert_eq!(filter.figures.self_ms, None, "no latency, no self time");
    assert!(close(filter.figures.total_ms.unwrap_or_default(), 3.2));
    assert_eq!(
        filter.conditions,
        [(
            "Residual Condition".to_owned(),
            "($MarketingBudget > 1000)".to_owned()
        )]
    );
    // The multi-execution union: 3.5 ms over five runs, less the 3.2 ms of what it ran.
    let map_union = &tree.operators[9];
    assert_eq!(map_union.figures.executions, Some(5));
    assert!(close(map_union.figures.self_ms.unwrap_or_default(), 0.3));
    // Cross Apply 3.7 - (0.05 + 3.5).
    assert!(close(
        by_title("Cross Apply").figures.self_ms.unwrap_or_default(),
        0.15
    ));
    // The Create Batch has no latency: its child's 1.0 ms stands for it under the DCA, whose
    // self time (5.0 - 1.0 - 3.7) is marked: it is distributed and not local.
    let dca = by_title("Distributed Cross Apply");
    assert!(close(dca.figures.self_ms.unwrap_or_default(), 0.3));
    assert_eq!(dca.figures.self_time, SelfTime::Overlapping);
    assert_eq!(tree.operators[0].figures.self_time, SelfTime::Overlapping);
    assert_eq!(by_title("Cross Apply").figures.self_time, SelfTime::Exact);
    // Self times add up to the root's total.
    let self_sum: f64 = tree
        .operators
        .iter()
        .filter_map(|o| o.figures.self_ms)
        .sum();
    assert!(close(self_sum, 6.1), "{self_sum}");
    assert_eq!(tree.root_total_ms(), Some(6.1));
    // Hottest first: the Albums scan.
    let hottest = tree.hottest();
    assert_eq!(tree.operators[hottest[0]].title(), "Table Scan (Albums)");
    assert!(close(
        tree.share(hottest[0]).unwrap_or_default(),
        3.2 / 6.1 * 100.0
    ));
}

#[test]
fn multi_execution_figures_keep_their_spread_and_unknown_keys_are_kept() {
    let plan = QueryPlan::from_json(&join_profile()).expect("a valid plan");
    let union = &plan.nodes()[11];
    let latency = union
        .stats
        .as_ref()
        .and_then(|s| s.latency.as_ref())
        .expect("a latency");
    assert_eq!(
        (latency.mean, latency.std_deviation),
        (Some(0.7), Some(0.1))
    );
    assert_eq!(latency.histogram.len(), 2);
    assert_eq!(latency.histogram[0].count, 4.0);
    assert_eq!(latency.histogram[1].upper_bound, 2.0);
    assert_eq!(latency.histogram[1].percentage, 20.0);
    // Keys this reader does not interpret stay, figures parsed as figures.
    let dca = plan.nodes()[3].stats.as_ref().expect("stats");
    assert!(matches!(
        dca.other.get("Number of Batches"),
        Some(Extra::Figure(f)) if f.total == 1.0 && f.unit == "batches"
    ));
    let singers_union = plan.nodes()[5].stats.as_ref().expect("stats");
    assert_eq!(singers_union.summary.other["checkpoint_time"], "0.01 msecs");
    assert_eq!(singers_union.summary.other["num_checkpoints"], 1);
    let root = plan.root().stats.as_ref().expect("stats");
    assert_eq!(root.summary.start, Some(1_767_225_600.1));
    assert!(matches!(root.other.get("remote_calls"), Some(Extra::Figure(f)) if f.unit == "calls"));
    assert_eq!(
        plan.nodes()[6].meta("scan_method").as_deref(),
        Some("Automatic")
    );
    assert_eq!(plan.nodes()[6].meta("Full scan").as_deref(), Some("true"));
}

#[test]
fn odd_units_are_understood_and_unknown_ones_refused() {
    for (unit, total, ms) in [
        ("secs", "0.25", 250.0),
        ("usecs", "250", 0.25),
        ("msec", "4", 4.0),
        ("nsecs", "1000000", 1.0),
    ] {
        let mut doc = join_profile();
        doc["stats"]["queryPlan"]["planNodes"][13]["executionStats"]["latency"] =
            figure(total, unit);
        let plan = QueryPlan::from_json(&doc).expect("parses");
        let got = plan.nodes()[13].stats.as_ref().and_then(|s| s.latency_ms());
        assert!(close(got.unwrap_or_default(), ms), "{unit}: {got:?}");
    }
    let mut doc = join_profile();
    doc["stats"]["queryPlan"]["planNodes"][13]["executionStats"]["latency"] =
        figure("3", "parsecs");
    let error = QueryPlan::from_json(&doc).expect_err("not a unit of time");
    assert_eq!(
        error.to_string(),
        "plan node 13: execution_stats.latency: \"parsecs\" is not a unit of time"
    );
}

/// `SELECT (SELECT COUNT(*) FROM Albums) + 1`: the subquery's operators hang below a scalar
/// function that names it in its `subqueries`.
fn scalar_subquery() -> Value {
    json!({
      "planNodes": [
        {
          "childLinks": [{ "childIndex": 1 }, { "childIndex": 2 }],
          "displayName": "Serialize Result",
          "kind": "RELATIONAL",
          "executionStats": { "latency": figure("2.0", "msecs"), "rows": figure("1", "rows") }
        },
        { "displayName": "Unit Relation", "index": 1, "kind": "RELATIONAL",
          "executionStats": { "latency": figure("0.1", "msecs"), "rows": figure("1", "rows") } },
        {
          "childLinks": [{ "childIndex": 3 }, { "childIndex": 7 }],
          "displayName": "Function",
          "index": 2,
          "kind": "SCALAR",
          "shortRepresentation": { "description": "($sq_1 + 1)", "subqueries": { "sq_1": 3 } }
        },
        {
          "childLinks": [{ "childIndex": 4 }],
          "displayName": "Scalar Subquery",
          "index": 3,
          "kind": "SCALAR",
          "shortRepresentation": { "description": "<Scalar Subquery>" }
        },
        {
          "childLinks": [{ "childIndex": 5 }],
          "displayName": "Aggregate",
          "index": 4,
          "kind": "RELATIONAL",
          "metadata": { "iterator_type": "Stream", "call_type": "Global" },
          "executionStats": { "latency": figure("1.5", "msecs"), "rows": figure("1", "rows") }
        },
        {
          "childLinks": [{ "childIndex": 6 }],
          "displayName": "Distributed Union",
          "index": 5,
          "kind": "RELATIONAL",
          "metadata": { "call_type": "Local" },
          "executionStats": { "latency": figure("1.2", "msecs"), "rows": figure("11", "rows") }
        },
        {
          "displayName": "Scan",
          "index": 6,
          "kind": "RELATIONAL",
          "metadata": { "scan_type": "TableScan", "scan_target": "Albums", "Full scan": "true" },
          "executionStats": { "latency": figure("1.1", "msecs"), "rows": figure("11", "rows"),
                              "scanned_rows": figure("11", "rows") }
        },
        { "displayName": "Constant", "index": 7, "kind": "SCALAR",
          "shortRepresentation": { "description": "1" } }
      ]
    })
}

#[test]
fn relational_operators_under_a_scalar_subtree_are_children_of_the_operator_evaluating_it() {
    let plan = QueryPlan::from_json(&scalar_subquery()).expect("a valid plan");
    assert_eq!(plan.nodes()[2].subqueries.get("sq_1"), Some(&3));
    let tree = OperatorTree::of(&plan);
    let shape: Vec<(usize, String)> = tree
        .operators
        .iter()
        .map(|o| (o.depth, o.title()))
        .collect();
    assert_eq!(
        shape,
        [
            (0, "Serialize Result".to_owned()),
            (1, "Unit Relation".to_owned()),
            (1, "Stream Aggregate".to_owned()),
            (2, "Local Distributed Union".to_owned()),
            (3, "Table Scan (Albums)".to_owned()),
        ]
    );
    // Serialize Result's own time excludes the subquery's: 2.0 - 0.1 - 1.5.
    assert!(close(
        tree.operators[0].figures.self_ms.unwrap_or_default(),
        0.4
    ));
    assert!(close(
        tree.operators[2].figures.self_ms.unwrap_or_default(),
        0.3
    ));
}

/// A change made to a plan document.
type Mutation = Box<dyn Fn(&mut Value)>;

/// Every way a plan can be broken that the reader checks, each with the error it must give.
#[test]
fn malformed_plans_are_clear_errors() {
    let base = join_profile();
    fn nodes(doc: &mut Value) -> &mut Value {
        &mut doc["stats"]["queryPlan"]["planNodes"]
    }
    let cases: Vec<(Mutation, &str)> = vec![
        (Box::new(|d| *nodes(d) = json!([])), "the plan has no node"),
        (
            Box::new(|d| nodes(d)[3]["index"] = json!(4)),
            "plan node 3 says it is node 4",
        ),
        (
            Box::new(|d| nodes(d)[8]["childLinks"][1]["childIndex"] = json!(99)),
            "plan node 8 links to child 99, but the plan has 18 nodes",
        ),
        (
            Box::new(|d| nodes(d)[8]["childLinks"][1]["childIndex"] = json!(-1)),
            "plan node 8 links to child -1, but the plan has 18 nodes",
        ),
        (
            Box::new(|d| nodes(d)[13]["childLinks"] = json!([{ "childIndex": 11 }])),
            "plan node 11 is its own descendant: the plan is not a tree",
        ),
        (
            Box::new(|d| nodes(d)[0]["kind"] = json!("SCALAR")),
            "the plan's root (node 0) is a SCALAR node, not a relational operator",
        ),
        (
            Box::new(|d| nodes(d)[6]["executionStats"]["latency"]["total"] = json!("fast")),
            "plan node 6: execution_stats.latency: total \"fast\" is not a finite number",
        ),
        (
            Box::new(|d| nodes(d)[6]["executionStats"]["rows"]["total"] = json!("NaN")),
            "plan node 6: execution_stats.rows: total \"NaN\" is not a finite number",
        ),
        (
            Box::new(|d| nodes(d)[6]["executionStats"]["latency"] = figure("-2", "msecs")),
            "plan node 6: execution_stats.latency: a negative total (-2)",
        ),
        (
            Box::new(|d| nodes(d)[6]["executionStats"]["rows"] = json!("5")),
            "plan node 6: execution_stats.rows: expected {total, unit}, found \"5\"",
        ),
        (
            Box::new(|d| {
                nodes(d)[6]["executionStats"]["execution_summary"]["num_executions"] = json!("1.5")
            }),
            "plan node 6: execution_stats.execution_summary: num_executions \"1.5\" is not a count",
        ),
        (
            Box::new(|d| nodes(d)[11]["executionStats"]["latency"]["histogram"] = json!("wide")),
            "plan node 11: execution_stats.latency: histogram \"wide\" is not a list",
        ),
        (
            Box::new(|d| nodes(d)[11]["executionStats"]["latency"]["mean"] = json!("soon")),
            "plan node 11: execution_stats.latency: mean \"soon\" is not a finite number",
        ),
        (
            Box::new(|d| *d = json!({ "rows": [] })),
            "not a query plan: no planNodes (nor stats.queryPlan.planNodes) in the document",
        ),
    ];
    for (break_it, want) in cases {
        let mut doc = base.clone();
        break_it(&mut doc);
        let error = QueryPlan::from_json(&doc).expect_err(want);
        assert_eq!(error.to_string(), want);
    }
    assert!(matches!(QueryPlan::from_nodes(&[]), Err(PlanError::Empty)));
}

/// Values that a server (or a file) could put anywhere, for the fuzz-ish test.
fn junk() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(-1),
        json!(1e308),
        json!(i64::MAX),
        json!("x"),
        json!("-0"),
        json!("Infinity"),
        json!([]),
        json!([{ "childIndex": 2_147_483_647 }]),
        json!({}),
        json!({ "total": "1", "unit": [] }),
        json!({ "total": {}, "histogram": [{}] }),
    ]
}

#[test]
fn no_mutation_of_a_plan_panics_the_reader_or_the_operator_tree() {
    // Every key of every node (and of every figure) replaced by every kind of junk: each result
    // is a plan or an error, and every plan yields an operator tree, a signature and a diff.
    let base = join_profile();
    let reference = OperatorTree::of(&QueryPlan::from_json(&base).expect("valid"));
    let count = base["stats"]["queryPlan"]["planNodes"]
        .as_array()
        .map_or(0, Vec::len);
    let mut tried = 0;
    for node in 0..count {
        let keys: Vec<String> = base["stats"]["queryPlan"]["planNodes"][node]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let stat_keys: Vec<String> =
            base["stats"]["queryPlan"]["planNodes"][node]["executionStats"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
        for value in junk() {
            let mut paths: Vec<Vec<String>> = keys.iter().map(|k| vec![k.clone()]).collect();
            paths.extend(
                stat_keys
                    .iter()
                    .map(|k| vec!["executionStats".to_owned(), k.clone()]),
            );
            for field in ["total", "unit", "mean", "histogram"] {
                paths.extend(
                    stat_keys
                        .iter()
                        .map(|k| vec!["executionStats".into(), k.clone(), field.into()]),
                );
            }
            for path in paths {
                let mut doc = base.clone();
                let mut at = &mut doc["stats"]["queryPlan"]["planNodes"][node];
                for key in &path {
                    at = &mut at[key.as_str()];
                }
                *at = value.clone();
                tried += 1;
                if let Ok(plan) = QueryPlan::from_json(&doc) {
                    let tree = OperatorTree::of(&plan);
                    let _ = signature(&plan);
                    let _ = diff(&reference, &tree);
                    let _ = spanprof::plan::render::tree_text(&tree);
                    let _ = spanprof::plan::render::tree_dot(&tree);
                }
            }
        }
    }
    assert!(tried > 2000, "{tried} mutations");
}

/// The plan as the wire's plain data (what the engine records).
fn wire_nodes(doc: &Value) -> Vec<PlanNode> {
    let plan = QueryPlan::from_json(doc).expect("valid");
    plan.nodes()
        .iter()
        .map(|n| PlanNode {
            index: n.index as i32,
            kind: n.kind.as_str().into(),
            display_name: n.display_name.clone(),
            child_links: n
                .links
                .iter()
                .map(|l| (l.child as i32, l.kind.clone(), l.variable.clone()))
                .collect(),
            short_representation: n.description.clone(),
            subqueries: n
                .subqueries
                .iter()
                .map(|(k, v)| (k.clone(), *v as i32))
                .collect(),
            metadata: Value::Object(n.metadata.clone().into_iter().collect()),
            execution_stats: doc["stats"]["queryPlan"]["planNodes"][n.index]["executionStats"]
                .clone(),
        })
        .collect()
}

#[test]
fn iterations_with_the_same_plan_aggregate_and_a_changed_plan_is_a_finding() {
    let mut history = PlanHistory::default();
    // Iterations 0-3 run the join with the Albums scan taking 3.2, 1.2, 2.2 and 9.2 ms...
    for (i, extra) in [0.0, -2.0, -1.0, 6.0].into_iter().enumerate() {
        let mut doc = join_profile();
        let albums = &mut doc["stats"]["queryPlan"]["planNodes"];
        albums[13]["executionStats"]["latency"] =
            figure(&format!("{}", 3200.0 + extra * 1000.0), "usecs");
        for n in [11, 8, 3, 2, 1, 0] {
            let old: f64 = albums[n]["executionStats"]["latency"]["total"]
                .as_str()
                .and_then(|t| t.parse().ok())
                .unwrap_or_default();
            albums[n]["executionStats"]["latency"]["total"] = json!(format!("{}", old + extra));
        }
        history.record(i as u32, &wire_nodes(&doc));
    }
    // ... then iteration 4 seeks Albums by an index instead.
    let mut changed = join_profile();
    let albums = &mut changed["stats"]["queryPlan"]["planNodes"][13]["metadata"];
    albums["scan_type"] = json!("IndexScan");
    albums["scan_target"] = json!("AlbumsByBudget");
    history.record(4, &wire_nodes(&changed));

    assert_eq!(history.plans.len(), 2, "two distinct plans kept");
    assert!(
        history
            .plans
            .iter()
            .all(|p| p.nodes.iter().all(|n| n.execution_stats.is_null()))
    );
    let changes = history.changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].iteration, 4);
    assert_eq!(
        changes[0].text(),
        "the plan changed at iteration 4: Table Scan (Albums) -> Index Scan (AlbumsByBudget) \
         (scan_type=TableScan -> scan_type=IndexScan, scan_target=Albums -> scan_target=AlbumsByBudget)"
    );

    let aggregates = history.aggregate(&BTreeSet::from([0, 1, 2, 3, 4]));
    assert_eq!(aggregates.len(), 2);
    let main = &aggregates[0];
    assert_eq!(main.iterations, [0, 1, 2, 3]);
    let albums = main
        .tree
        .operators
        .iter()
        .position(|o| o.title() == "Table Scan (Albums)")
        .expect("the scan");
    let spread = main.spreads[albums].self_ms.expect("self times");
    // 1.2, 2.2, 3.2, 9.2: median 2.7, p90 by linear interpolation 7.2.
    assert!(close(spread.median, 2.7), "{spread:?}");
    assert!(close(spread.p90, 7.4), "{spread:?}");
    assert_eq!(spread.count, 4);
    assert_eq!(
        main.tree.operators[albums].figures.self_ms,
        Some(spread.median)
    );
    assert_eq!(
        main.spreads[albums].scanned_rows.map(|s| s.median),
        Some(11.0)
    );
    // Only the chosen iterations count.
    let one = history.aggregate(&BTreeSet::from([1]));
    assert_eq!(one.len(), 1);
    assert!(close(
        one[0].spreads[albums].self_ms.map_or(0.0, |s| s.median),
        1.2
    ));
}

#[test]
fn a_plan_that_cannot_be_read_is_recorded_as_such_without_a_fingerprint() {
    let mut history = PlanHistory::default();
    let mut nodes = wire_nodes(&join_profile());
    nodes[3]
        .child_links
        .push((500, String::new(), String::new()));
    history.record(0, &nodes);
    assert_eq!(history.iterations.len(), 1);
    assert_eq!(history.iterations[0].signature, None);
    assert!(
        history.iterations[0]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("links to child 500"))
    );
    assert!(history.plans.is_empty() && history.changes().is_empty());
}

#[test]
fn the_same_plan_has_one_fingerprint_whatever_its_statistics_and_another_plan_another() {
    let profile = QueryPlan::from_json(&join_profile()).expect("valid");
    let mut stripped = join_profile();
    for node in stripped["stats"]["queryPlan"]["planNodes"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        if let Some(map) = node.as_object_mut() {
            map.remove("executionStats");
        }
    }
    let plan_only = QueryPlan::from_json(&stripped).expect("valid");
    assert!(!plan_only.has_stats());
    assert_eq!(signature(&profile), signature(&plan_only));
    let mut other = stripped.clone();
    other["stats"]["queryPlan"]["planNodes"][14]["shortRepresentation"]["description"] =
        json!("($MarketingBudget > 2000)");
    assert_ne!(
        signature(&plan_only),
        signature(&QueryPlan::from_json(&other).expect("valid"))
    );
}

#[test]
fn a_diff_marks_a_wrapping_operator_added_and_names_the_changed_scan() {
    let a = OperatorTree::of(&QueryPlan::from_json(&join_profile()).expect("valid"));
    // The second plan seeks Albums through an index, without the Filter Scan.
    let mut doc = join_profile();
    let nodes = &mut doc["stats"]["queryPlan"]["planNodes"];
    nodes[11]["childLinks"] = json!([{ "childIndex": 13 }]);
    nodes[13]["metadata"]["scan_type"] = json!("IndexScan");
    nodes[13]["metadata"]["scan_target"] = json!("AlbumsBySinger");
    nodes[13]["executionStats"]["latency"] = figure("0.4", "msecs");
    nodes[13]["executionStats"]["scanned_rows"] = figure("9", "rows");
    let b = OperatorTree::of(&QueryPlan::from_json(&doc).expect("valid"));
    let d = diff(&a, &b);
    let differences: Vec<(DiffKind, String)> =
        d.differences().map(|e| (e.kind, e.describe())).collect();
    assert_eq!(
        differences,
        [
            (DiffKind::Removed, "Filter Scan removed".to_owned()),
            (
                DiffKind::Changed,
                "Table Scan (Albums) -> Index Scan (AlbumsBySinger) (scan_type=TableScan -> \
                 scan_type=IndexScan, scan_target=Albums -> scan_target=AlbumsBySinger)"
                    .to_owned()
            ),
        ]
    );
    let scan = d
        .entries
        .iter()
        .find(|e| e.kind == DiffKind::Changed)
        .expect("the scan");
    assert!(close(scan.self_delta_ms().unwrap_or_default(), 0.4 - 3.2));
    assert_eq!(scan.scanned_delta(), Some(-2.0));
    assert_eq!(scan.rows_delta(), Some(0.0));
    assert_eq!(d.entries.len(), 12, "every operator of either plan once");
    assert!(diff(&a, &a).is_same_plan());
}
