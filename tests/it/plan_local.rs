//! Operator-level profiles from the built-in local instance, through the real `spanprof` binary:
//! `profile --query-mode profile` of a join with a filter and an aggregate, the report's plans
//! read back with the same parser as production's, `spanprof plan` on the report and on a
//! recorded stream, PLAN mode's tree without statistics, and `compare` of two variants whose
//! plans differ.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use spanprof::export::read_json;
use spanprof::plan::{self, OperatorTree, QueryPlan};
use spanprof::report::RunReport;

/// The demo tables' sizes (`demo::music`).
const SINGERS: f64 = 5.0;
const ALBUMS: f64 = 11.0;

/// A join with a filter and an aggregate over Singers and Albums: every album's singer, but
/// Lea's, with the albums and budget per first name.
const JOIN: &str = "SELECT s.FirstName, COUNT(*) AS albums, SUM(a.MarketingBudget) AS budget \
                    FROM Albums a JOIN Singers s ON s.SingerId = a.SingerId \
                    WHERE s.FirstName <> 'Lea' GROUP BY s.FirstName ORDER BY budget DESC";

fn spanprof(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(args)
        .env_remove("SPANNER_EMULATOR_HOST")
        .output()
        .expect("the spanprof binary runs");
    assert!(
        out.status.success(),
        "spanprof {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A file in a fresh temporary directory, removed with it.
struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Self {
        Scratch(tempfile::tempdir().expect("a temporary directory"))
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

/// Profiles `sql` in PROFILE mode into a JSON report; the report and what was printed.
fn profile(sql: &str, label: &str, report: &Path) -> (RunReport, String) {
    let out = spanprof(&[
        "profile",
        "--local",
        "--rows",
        "100",
        "--query-mode",
        "profile",
        "--iterations",
        "5",
        "--warmup",
        "1",
        "--label",
        label,
        "--sql",
        sql,
        "--json",
        report.to_str().expect("a UTF-8 path"),
    ]);
    let bytes = std::fs::read(report).expect("the report was written");
    let mut runs = read_json(&bytes).expect("a report");
    (runs.remove(0), stdout(&out))
}

fn main_tree(report: &RunReport) -> (plan::PlanAggregate, OperatorTree) {
    let aggregate = report
        .plan_aggregates(&Default::default())
        .into_iter()
        .next()
        .expect("the report kept the plan");
    let tree = aggregate.tree.clone();
    (aggregate, tree)
}

#[test]
fn a_profiled_join_reports_every_operator_with_rows_and_time_and_self_times_add_up() {
    let scratch = Scratch::new();
    let (report, printed) = profile(JOIN, "join", &scratch.path("join.json"));
    assert_eq!(
        report.plans.iterations.len(),
        6,
        "warm-up and five timed iterations"
    );
    assert_eq!(report.plans.plans.len(), 1, "one plan, every iteration");
    assert!(report.plans.changes().is_empty());

    // Each iteration's plan, straight from the report: rows and times, self times adding up.
    for it in &report.plans.iterations {
        let with_both: Vec<_> = it
            .operators
            .iter()
            .filter(|o| o.rows.is_some() && o.total_ms.is_some())
            .collect();
        assert!(
            with_both.len() >= 4,
            "iteration {}: {with_both:?}",
            it.iteration
        );
        let root = it.operators.iter().find(|o| o.node == 0).expect("the root");
        let root_total = root.total_ms.expect("the root's latency");
        assert!(root_total > 0.0);
        let self_sum: f64 = it.operators.iter().filter_map(|o| o.self_ms).sum();
        assert!(
            (self_sum - root_total).abs() <= 0.05 * root_total,
            "iteration {}: self times {self_sum} ms against the root's {root_total} ms",
            it.iteration
        );
    }

    let (aggregate, tree) = main_tree(&report);
    assert_eq!(
        aggregate.iterations,
        [1, 2, 3, 4, 5],
        "the timed iterations"
    );
    let names: Vec<String> = tree.operators.iter().map(|o| o.title()).collect();
    for wanted in [
        "Serialize Result",
        "Stream Aggregate",
        "Cross Apply",
        "Local Distributed Union",
    ] {
        assert!(names.iter().any(|n| n == wanted), "{wanted} in {names:?}");
    }
    // SQLite scans Albums and seeks each album's singer by its key.
    let albums = tree
        .operators
        .iter()
        .find(|o| o.title() == "Table Scan (Albums)")
        .expect("a scan of Albums");
    assert!(
        albums.traits.iter().any(|t| t == "Full scan=true"),
        "{albums:?}"
    );
    assert_eq!(albums.figures.executions, Some(1));
    assert_eq!(albums.figures.scanned_rows, Some(ALBUMS), "{albums:?}");
    assert_eq!(
        albums.figures.rows,
        Some(ALBUMS),
        "every album is passed on: {albums:?}"
    );
    let singers = tree
        .operators
        .iter()
        .find(|o| o.title() == "Table Scan (Singers)")
        .expect("a scan of Singers");
    assert_eq!(
        singers.figures.executions,
        Some(ALBUMS as u64),
        "once per album"
    );
    assert_eq!(
        singers.figures.scanned_rows,
        Some(ALBUMS),
        "one singer per album"
    );
    // Lea's one album is filtered out; the other ten are grouped by the four other names.
    assert_eq!(singers.figures.rows, Some(ALBUMS - 1.0));
    let seek = &tree.operators[singers.parent.expect("under its Filter Scan")];
    assert_eq!(seek.name, "Filter Scan");
    assert_eq!(seek.conditions[0].0, "Seek Condition");
    let root = &tree.operators[0];
    assert_eq!(root.figures.rows, Some(SINGERS - 1.0));
    for op in &tree.operators {
        if op.name != "Filter Scan" {
            assert!(op.figures.self_ms.is_some_and(|s| s >= 0.0), "{op:?}");
            assert!(op.figures.rows.is_some(), "{op:?}");
        }
    }

    // `profile` printed the top operators under its summary.
    assert!(
        printed.contains(&format!(
            "plan {} (median over 5 iterations)",
            aggregate.signature
        )),
        "{printed}"
    );
    assert!(printed.contains("hottest: "), "{printed}");
    let hottest = tree.operators[tree.hottest()[0]].title();
    assert!(printed.contains(&hottest), "{printed}");
}

#[test]
fn spanprof_plan_reads_the_report_and_a_recorded_stream_with_the_same_parser() {
    let scratch = Scratch::new();
    let report_path = scratch.path("join.json");
    let (report, _) = profile(JOIN, "join", &report_path);
    let (aggregate, _) = main_tree(&report);
    let report_arg = report_path.to_str().expect("a UTF-8 path");

    let text = stdout(&spanprof(&["plan", report_arg]));
    assert!(
        text.starts_with(&format!("run join, plan {}", aggregate.signature)),
        "{text}"
    );
    for column in [
        "self ms", "total ms", "share", "rows", "scanned", "execs", "operator",
    ] {
        assert!(text.contains(column), "{column}: {text}");
    }
    assert!(text.contains("Table Scan ("), "{text}");

    let json: serde_json::Value =
        serde_json::from_slice(&spanprof(&["plan", report_arg, "--json"]).stdout).expect("JSON");
    let operators = json["plans"][0]["operators"].as_array().expect("operators");
    assert_eq!(operators.len(), aggregate.tree.operators.len());
    assert_eq!(operators[0]["name"], "Serialize Result");
    assert!(
        operators
            .iter()
            .all(|o| o.get("self_ms").is_some() && o.get("share_percent").is_some())
    );

    let dot = stdout(&spanprof(&["plan", report_arg, "--dot"]));
    assert!(
        dot.starts_with("digraph plan {") && dot.trim_end().ends_with('}'),
        "{dot}"
    );
    assert_eq!(
        dot.matches(" -> ").count(),
        aggregate.tree.operators.len() - 1,
        "{dot}"
    );

    // A recorded PROFILE stream carries the same plan; `spanprof plan` reads it from the file.
    let stream = scratch.path("join.bin");
    let stream_arg = stream.to_str().expect("a UTF-8 path");
    spanprof(&[
        "record",
        "--local",
        "--rows",
        "100",
        "--query-mode",
        "profile",
        "--sql",
        JOIN,
        "--out",
        stream_arg,
    ]);
    let recorded = stdout(&spanprof(&["plan", stream_arg]));
    assert!(
        recorded.starts_with(&format!(
            "a recorded execution (4 rows), plan {}",
            aggregate.signature
        )),
        "{recorded}"
    );
    let decoded = spanprof::wire::decode_stream_file(&std::fs::read(&stream).expect("the file"))
        .expect("decodes");
    let nodes = decoded.stats.and_then(|s| s.plan).expect("a plan");
    let parsed = QueryPlan::from_nodes(&nodes).expect("the local instance's plan parses");
    assert_eq!(plan::signature(&parsed), aggregate.signature);
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_mode_returns_the_same_tree_without_statistics() {
    use spanprof::proto::google::spanner::v1 as pb;
    use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 10,
        knobs: KnobSettings::default(),
        connections: Default::default(),
    })
    .await
    .expect("starts");
    let channel = spanprof::client::connect_plaintext(&instance.host_port())
        .await
        .expect("connects");
    let mut client = pb::spanner_client::SpannerClient::new(channel);
    let session = client
        .create_session(pb::CreateSessionRequest {
            database: "projects/p/instances/i/databases/d".into(),
            session: None,
        })
        .await
        .expect("a session")
        .into_inner();
    let mut plan_of = async |mode: pb::execute_sql_request::QueryMode| {
        let answer = client
            .execute_sql(pb::ExecuteSqlRequest {
                session: session.name.clone(),
                sql: JOIN.into(),
                query_mode: mode as i32,
                ..Default::default()
            })
            .await
            .expect("answers")
            .into_inner();
        let stats = spanprof::wire::ResultStats::from(answer.stats.expect("stats"));
        QueryPlan::from_nodes(&stats.plan.expect("a plan")).expect("parses")
    };
    let profile = plan_of(pb::execute_sql_request::QueryMode::Profile).await;
    let plan_only = plan_of(pb::execute_sql_request::QueryMode::Plan).await;
    let with_plan = plan_of(pb::execute_sql_request::QueryMode::WithPlanAndStats).await;
    assert!(profile.has_stats());
    assert!(!plan_only.has_stats() && !with_plan.has_stats());
    assert_eq!(plan::signature(&profile), plan::signature(&plan_only));
    assert_eq!(plan::signature(&profile), plan::signature(&with_plan));
    // Spanner's metadata keys on the scans.
    let scan = profile
        .nodes()
        .iter()
        .find(|n| n.display_name == "Scan")
        .expect("a scan");
    for key in [
        "scan_type",
        "scan_target",
        "scan_method",
        "execution_method",
    ] {
        assert!(scan.meta(key).is_some(), "{key} in {:?}", scan.metadata);
    }
}

#[test]
fn two_variants_whose_plans_differ_are_diffed_operator_by_operator() {
    let scratch = Scratch::new();
    // The primary key's first column: SQLite seeks Albums by its key...
    let (seek, _) = profile(
        "SELECT AlbumTitle FROM Albums WHERE SingerId = 2",
        "by key",
        &scratch.path("seek.json"),
    );
    // ... where a filter on a column without an index must scan the whole table.
    let (scan, _) = profile(
        "SELECT AlbumTitle FROM Albums WHERE MarketingBudget > 100000",
        "by budget",
        &scratch.path("scan.json"),
    );
    let (_, a) = main_tree(&seek);
    let (_, b) = main_tree(&scan);
    let d = plan::diff(&a, &b);
    let differences: Vec<String> = d.differences().map(|e| e.describe()).collect();
    assert!(!differences.is_empty());
    assert!(
        differences.iter().any(|e| e == "Filter Scan removed"),
        "{differences:?}"
    );
    let scan_change = d
        .differences()
        .find(|e| e.title() == "Table Scan (Albums)")
        .expect("the Albums scan changed");
    assert!(
        scan_change.describe().contains("(none) -> Full scan=true"),
        "{}",
        scan_change.describe()
    );
    // The whole table against singer 2's three albums.
    assert_eq!(scan_change.scanned_delta(), Some(ALBUMS - 3.0));

    // `spanprof compare` prints the same diff after its verdict.
    let text = stdout(&spanprof(&[
        "compare",
        scratch.path("seek.json").to_str().expect("UTF-8"),
        scratch.path("scan.json").to_str().expect("UTF-8"),
    ]));
    assert!(
        text.contains("operators differ between by key and by budget"),
        "{text}"
    );
    assert!(text.contains("- "), "{text}");
    assert!(text.contains("Filter Scan removed"), "{text}");
    assert!(text.contains("Table Scan (Albums) changed ("), "{text}");

    // And one profile of both as variants prints it under their verdict.
    let text = stdout(&spanprof(&[
        "profile",
        "--local",
        "--rows",
        "100",
        "--query-mode",
        "profile",
        "--iterations",
        "3",
        "--sql",
        "SELECT AlbumTitle FROM Albums WHERE SingerId = 2",
        "--label",
        "by key",
        "--sql",
        "SELECT AlbumTitle FROM Albums WHERE MarketingBudget > 100000",
        "--label",
        "by budget",
    ]));
    let verdict = text.find("against by key:").expect("the verdict");
    let diff = text
        .find("operators differ between by key and by budget")
        .expect("the plan diff");
    assert!(verdict < diff, "{text}");
    assert!(text[diff..].contains("Filter Scan removed"), "{text}");
}
