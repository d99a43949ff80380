//! JSON: every run in full, each iteration with its parts, and a summary of the total and of
//! each part, in a document that can be read back.

use serde::{Deserialize, Serialize, Serializer};

use crate::analysis::{PartStats, RunConflicts};
use crate::plan::PlanHistory;
use crate::report::{IterationRecord, RunConfig, RunReport};
use crate::stats::Summary;

use super::{ExportError, Exporter};

/// The format version written in the `spanprof_report` field, and the only one [`read_json`]
/// reads.
pub const FORMAT_VERSION: u64 = 1;

/// A pretty-printed JSON document:
/// `{"spanprof_report": 1, "runs": [{"config", "started_at", "iterations", "summary"}]}`. Each
/// iteration carries its measurements and, derived from them, `parts` ({part: ms}, the parts it
/// had, adding up to its `total_ms`), `overlap_ms` (the server's work beside the client's, not a
/// part) and `split` (how its wait was split: `measured`, `estimated` or `none`). `summary` maps
/// `total` and each part's key to its count, mean, median, std_dev, min, max, p90 and p99 in
/// milliseconds (a part an iteration did not have counts as 0, so the parts' means add up to the
/// total's). A read-write run whose target named lock waits or wounds (the local instance's lock
/// table, a model of Spanner's locking) has `conflicts`: the keys waited on most and who blocked
/// whom ([`RunConflicts`]). Derived data is ignored by [`read_json`], which derives it again.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

impl Exporter for Json {
    fn extension(&self) -> &'static str {
        "json"
    }

    fn export(&self, reports: &[RunReport]) -> Result<Vec<u8>, ExportError> {
        let mut bytes = serde_json::to_vec_pretty(&document(reports))?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

impl Json {
    /// The same document without its indentation and line breaks (about half the size), for a
    /// copy no person reads: the one an HTML report embeds.
    pub fn compact(reports: &[RunReport]) -> Result<Vec<u8>, ExportError> {
        Ok(serde_json::to_vec(&document(reports))?)
    }
}

fn document(reports: &[RunReport]) -> DocumentOut<'_> {
    DocumentOut {
        spanprof_report: FORMAT_VERSION,
        runs: reports.iter().map(RunOut::of).collect(),
    }
}

/// Reads back the runs of a document [`Json`] wrote.
///
/// Fails with [`ExportError::UnsupportedVersion`] for another format version, and with
/// [`ExportError::Json`] for anything that is not such a document.
pub fn read_json(bytes: &[u8]) -> Result<Vec<RunReport>, ExportError> {
    let header: Header = serde_json::from_slice(bytes)?;
    if header.spanprof_report != FORMAT_VERSION {
        return Err(ExportError::UnsupportedVersion {
            found: header.spanprof_report,
        });
    }
    // The plans' metadata is read as JSON values: all of them within one budget.
    let document: DocumentIn =
        crate::wire::bounded_json::within(crate::wire::bounded_json::BUDGET, || {
            serde_json::from_slice(bytes)
        })?;
    Ok(document.runs)
}

/// Just the version, read first so that a document of another version is reported as such
/// rather than as whatever field it lacks.
#[derive(Deserialize)]
struct Header {
    spanprof_report: u64,
}

#[derive(Deserialize)]
struct DocumentIn {
    runs: Vec<RunReport>,
}

#[derive(Serialize)]
struct DocumentOut<'a> {
    spanprof_report: u64,
    runs: Vec<RunOut<'a>>,
}

#[derive(Serialize)]
struct RunOut<'a> {
    config: &'a RunConfig,
    started_at: &'a str,
    iterations: Vec<IterationOut<'a>>,
    #[serde(skip_serializing_if = "PlanHistory::is_empty")]
    plans: &'a PlanHistory,
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped: Option<&'a str>,
    summary: Summaries,
    #[serde(skip_serializing_if = "Option::is_none")]
    conflicts: Option<RunConflicts>,
}

impl<'a> RunOut<'a> {
    fn of(report: &'a RunReport) -> Self {
        RunOut {
            config: &report.config,
            started_at: &report.started_at,
            iterations: report.iterations.iter().map(IterationOut::of).collect(),
            plans: &report.plans,
            stopped: report.stopped.as_deref(),
            summary: Summaries(PartStats::of_run(report)),
            conflicts: RunConflicts::of(report),
        }
    }
}

/// An iteration as recorded, and its accounting.
#[derive(Serialize)]
struct IterationOut<'a> {
    #[serde(flatten)]
    record: &'a IterationRecord,
    parts: PartsOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    overlap_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    split: Option<&'static str>,
}

impl<'a> IterationOut<'a> {
    fn of(record: &'a IterationRecord) -> Self {
        let accounting = record.accounting();
        IterationOut {
            record,
            parts: PartsOut(accounting.parts),
            overlap_ms: accounting.overlap_ms,
            split: record
                .query
                .stream_wait_ms
                .is_some()
                .then(|| accounting.split.as_str()),
        }
    }
}

/// An iteration's parts as a JSON object keyed by part, in [`Part::ALL`](crate::part::Part::ALL)
/// order.
struct PartsOut(crate::report::Parts);

impl Serialize for PartsOut {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(part, ms)| (part.key(), ms)))
    }
}

/// The total's and each part's summary as a JSON object keyed `total` and by part key, in
/// [`Part::ALL`](crate::part::Part::ALL) order after the total.
struct Summaries(Option<PartStats>);

impl Serialize for Summaries {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some(stats) = &self.0 else {
            return serializer.collect_map(std::iter::empty::<(&str, SummaryOut)>());
        };
        serializer.collect_map(
            std::iter::once(("total", SummaryOut::from(&stats.total))).chain(
                stats
                    .parts
                    .iter()
                    .map(|p| (p.part.key(), SummaryOut::from(&p.summary))),
            ),
        )
    }
}

/// The fields of a [`Summary`], which is not itself serialisable.
#[derive(Serialize)]
struct SummaryOut {
    count: usize,
    mean: f64,
    median: f64,
    std_dev: f64,
    min: f64,
    max: f64,
    p90: f64,
    p99: f64,
}

impl From<&Summary> for SummaryOut {
    fn from(s: &Summary) -> Self {
        SummaryOut {
            count: s.count,
            mean: s.mean,
            median: s.median,
            std_dev: s.std_dev,
            min: s.min,
            max: s.max,
            p90: s.p90,
            p99: s.p99,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::fixture::reports;

    #[test]
    fn golden() -> Result<(), ExportError> {
        let bytes = Json.export(&reports())?;
        assert_eq!(String::from_utf8_lossy(&bytes), GOLDEN);
        Ok(())
    }

    #[test]
    fn a_report_s_plan_nodes_are_read_within_one_budget() -> Result<(), ExportError> {
        // A plan node's metadata is read as JSON values, which cost far more than their
        // text; a report holding 500,000 small objects there (5,000,000 units) is refused.
        let node = |objects: usize| crate::wire::PlanNode {
            index: 0,
            kind: "RELATIONAL".into(),
            display_name: "Scan".into(),
            child_links: Vec::new(),
            short_representation: None,
            subqueries: Default::default(),
            metadata: serde_json::Value::Array(vec![serde_json::json!({"a": 1}); objects]),
            execution_stats: serde_json::Value::Null,
        };
        let mut reports = reports();
        reports[0].plans.plans.push(crate::plan::StoredPlan {
            signature: "f".into(),
            nodes: vec![node(500_000)],
        });
        reports[0]
            .plans
            .iterations
            .push(crate::plan::IterationPlan {
                iteration: 2,
                signature: Some("f".into()),
                error: None,
                operators: Vec::new(),
            });
        let error = read_json(&Json.export(&reports)?).expect_err("past the budget");
        assert!(
            error.to_string().contains("more JSON values than"),
            "{error}"
        );
        reports[0].plans.plans[0].nodes = vec![node(1_000)];
        assert_eq!(read_json(&Json.export(&reports)?)?, reports);
        Ok(())
    }

    #[test]
    fn a_read_write_run_s_conflicts_say_who_blocked_whom_and_read_back_as_the_run()
    -> Result<(), ExportError> {
        let report = crate::export::fixture::conflicted_report();
        let bytes = Json.export(std::slice::from_ref(&report))?;
        let doc: serde_json::Value = serde_json::from_slice(&bytes)?;
        let conflicts = &doc["runs"][0]["conflicts"];
        assert_eq!(conflicts["waits"], 2, "{conflicts}");
        assert_eq!(conflicts["wounds"], 1, "{conflicts}");
        assert_eq!(conflicts["keys"][0]["key"], "accounts(1)");
        assert_eq!(conflicts["keys"][0]["columns"][0], "balance");
        let first = &conflicts["pairs"][0];
        assert_eq!(first["attempt"]["iteration"], 1);
        assert_eq!(first["what"], "wait");
        assert_eq!(first["ms"], 4.5);
        assert_eq!(first["behind"][0]["attempt"]["iteration"], 0);
        assert_eq!(conflicts["pairs"][1]["what"], "wound");
        assert_eq!(
            conflicts["pairs"][1]["behind"][0]["attempt"]["iteration"],
            2
        );
        assert_eq!(
            conflicts["pairs"][2]["behind"][0]["other"],
            "ffeeddccbbaa99887766"
        );
        assert!(
            conflicts["source"]
                .as_str()
                .is_some_and(|s| s.contains("a model of Spanner's locking"))
        );
        assert_eq!(read_json(&bytes)?, vec![report]);
        // A run of queries has none.
        let plain: serde_json::Value = serde_json::from_slice(&Json.export(&reports())?)?;
        assert!(plain["runs"][0].get("conflicts").is_none());
        Ok(())
    }

    #[test]
    fn round_trips() -> Result<(), ExportError> {
        let reports = reports();
        assert_eq!(read_json(&Json.export(&reports)?)?, reports);
        assert_eq!(read_json(&Json.export(&[])?)?, vec![]);
        Ok(())
    }

    #[test]
    fn a_subject_profile_carries_the_server_s_phases_the_command_and_the_shape()
    -> Result<(), ExportError> {
        let report = crate::export::fixture::subject_report();
        let bytes = Json.export(std::slice::from_ref(&report))?;
        let text = String::from_utf8_lossy(&bytes);
        for key in [
            r#""startup_ms": 950.25"#,
            r#""first_byte_ms": 3.5"#,
            r#""transfer_ms": 700.0"#,
            r#""blocked_ms": 640.125"#,
            r#""tail_ms": 246.0"#,
            r#""check": "values""#,
            r#""command": ["#,
            r#""emulator""#,
        ] {
            assert!(text.contains(key), "{key} in {text}");
        }
        assert_eq!(read_json(&bytes)?, vec![report]);
        Ok(())
    }

    #[test]
    fn plans_round_trip_and_reports_written_before_plans_read_back_without_them()
    -> Result<(), ExportError> {
        // The golden document predates plans: it has no `plans` key, and reads back empty.
        let old = read_json(GOLDEN.as_bytes())?;
        assert!(old.iter().all(|r| r.plans.is_empty()));
        assert!(!GOLDEN.contains("\"plans\""));
        // A run that kept a plan writes it and reads it back whole.
        let mut reports = reports();
        let node =
            |index: i32, name: &str, links: Vec<(i32, String, String)>| crate::wire::PlanNode {
                index,
                kind: "RELATIONAL".into(),
                display_name: name.into(),
                child_links: links,
                short_representation: None,
                subqueries: Default::default(),
                metadata: serde_json::json!({ "scan_type": "TableScan", "scan_target": "Singers" }),
                execution_stats: serde_json::json!({
                    "latency": { "total": "1.50", "unit": "msecs" },
                    "rows": { "total": "5", "unit": "rows" },
                }),
            };
        let nodes = vec![
            node(
                0,
                "Serialize Result",
                vec![(1, String::new(), String::new())],
            ),
            node(1, "Scan", Vec::new()),
        ];
        reports[0].plans.record(2, &nodes);
        let bytes = Json.export(&reports)?;
        assert!(String::from_utf8_lossy(&bytes).contains("\"plans\""));
        let back = read_json(&bytes)?;
        assert_eq!(back, reports);
        assert_eq!(back[0].plans.iterations[0].operators.len(), 2);
        assert!(back[1].plans.is_empty());
        Ok(())
    }

    /// The raw measurements' names of reports written before they were renamed, and their
    /// names now: the same figures.
    const EARLIER_NAMES: [(&str, &str); 6] = [
        ("network_ms", "stream_wait_ms"),
        ("server_ms", "server_elapsed_ms"),
        ("wire_decode_ms", "wire_decode_wall_ms"),
        ("row_decode_ms", "row_decode_wall_ms"),
        ("other_ms", "outside_wait_and_decode_ms"),
        ("client_work_ms", "client_work_wall_ms"),
    ];

    #[test]
    fn a_report_with_the_earlier_names_of_the_raw_measurements_reads_back_the_same()
    -> Result<(), ExportError> {
        let mut reports = reports();
        reports[0].iterations[1].query.client_work_wall_ms = Some(0.75);
        let now = String::from_utf8_lossy(&Json.export(&reports)?).into_owned();
        let mut earlier = now.clone();
        for (old, new) in EARLIER_NAMES {
            assert!(now.contains(&format!("\"{new}\":")), "{new} written");
            assert!(!now.contains(&format!("\"{old}\":")), "{old} not written");
            earlier = earlier.replace(&format!("\"{new}\":"), &format!("\"{old}\":"));
        }
        assert_ne!(earlier, now);
        assert_eq!(read_json(earlier.as_bytes())?, reports);
        Ok(())
    }

    #[test]
    fn a_raw_measurement_named_for_a_part_holds_that_part() -> Result<(), ExportError> {
        // `network_ms` was the whole wait while `parts.network` was its network part: a name
        // `<part>_ms` in an iteration is that part (as measured, before the parts are closed).
        let mut reports = reports();
        reports.push(crate::export::fixture::subject_report());
        let document: serde_json::Value = serde_json::from_slice(&Json.export(&reports)?)?;
        let mut checked = 0;
        for run in document["runs"].as_array().into_iter().flatten() {
            for it in run["iterations"].as_array().into_iter().flatten() {
                for part in crate::part::Part::ALL {
                    let (Some(raw), Some(part_ms)) = (
                        it.get(part.column()).and_then(serde_json::Value::as_f64),
                        it["parts"]
                            .get(part.key())
                            .and_then(serde_json::Value::as_f64),
                    ) else {
                        continue;
                    };
                    assert!(
                        (raw - part_ms).abs() < 1e-6,
                        "{}: {raw} against {part_ms}",
                        part.key()
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked >= 4, "{checked} figures checked");
        Ok(())
    }

    #[test]
    fn rejects_other_versions_and_other_documents() {
        let other = br#"{"spanprof_report": 2, "something": "else"}"#;
        let error = read_json(other).err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("spanprof JSON report version 2 is not supported (this build reads 1)")
        );
        assert!(matches!(
            read_json(b"{\"runs\": []}"),
            Err(ExportError::Json(_))
        ));
        assert!(matches!(read_json(b"not json"), Err(ExportError::Json(_))));
    }

    const GOLDEN: &str = r#"{
  "spanprof_report": 1,
  "runs": [
    {
      "config": {
        "label": "fast, cached",
        "target": "local",
        "sql": "SELECT * FROM Singers WHERE SingerId = @id",
        "params": [
          [
            "id",
            "7"
          ]
        ],
        "query_mode": "profile",
        "iterations": 3,
        "warmup": 1,
        "decoder": "spanprof"
      },
      "started_at": "2026-03-01T10:00:00Z",
      "iterations": [
        {
          "run": "fast, cached",
          "iteration": 1,
          "warmup": true,
          "status": "ok",
          "started_at": "2026-03-01T10:00:00.000Z",
          "total_ms": 40.0,
          "ttfb_ms": 30.0,
          "stream_wait_ms": null,
          "server_elapsed_ms": 25.0,
          "server_cpu_ms": 20.0,
          "gfe_ms": 26.0,
          "afe_ms": null,
          "wire_decode_wall_ms": 5.0,
          "row_decode_wall_ms": 3.0,
          "outside_wait_and_decode_ms": 2.0,
          "rows": 100,
          "server_rows": 100,
          "messages": 2,
          "chunked_values": 0,
          "wire_bytes": 4096,
          "resumes": 0,
          "error": null,
          "parts": {
            "wire_decode": 5.0,
            "row_decode": 3.0,
            "untimed": 32.0
          }
        },
        {
          "run": "fast, cached",
          "iteration": 2,
          "warmup": false,
          "status": "ok",
          "started_at": "2026-03-01T10:00:00.100Z",
          "total_ms": 10.0,
          "ttfb_ms": 6.5,
          "stream_wait_ms": 1.25,
          "server_elapsed_ms": 5.0,
          "server_cpu_ms": 4.0,
          "gfe_ms": 5.5,
          "afe_ms": 0.5,
          "wire_decode_wall_ms": 1.5,
          "row_decode_wall_ms": 1.0,
          "outside_wait_and_decode_ms": 1.25,
          "rows": 100,
          "server_rows": 100,
          "messages": 2,
          "chunked_values": 1,
          "wire_bytes": 4096,
          "resumes": 0,
          "error": null,
          "request_id": "1.0123456789abcdef.1.1.2.1",
          "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
          "operation_ms": 9.5,
          "rpc_attempts": 1,
          "attempt_ms": [
            9.5
          ],
          "parts": {
            "server": 1.25,
            "network": 0.0,
            "wire_decode": 1.5,
            "row_decode": 1.0,
            "untimed": 6.25
          },
          "overlap_ms": 3.75,
          "split": "estimated"
        },
        {
          "run": "fast, cached",
          "iteration": 3,
          "warmup": false,
          "status": "ok",
          "started_at": "2026-03-01T10:00:00.200Z",
          "total_ms": 12.0,
          "ttfb_ms": 7.0,
          "stream_wait_ms": null,
          "server_elapsed_ms": 6.0,
          "server_cpu_ms": null,
          "gfe_ms": null,
          "afe_ms": null,
          "wire_decode_wall_ms": 2.0,
          "row_decode_wall_ms": 1.5,
          "outside_wait_and_decode_ms": 2.5,
          "rows": 100,
          "server_rows": null,
          "messages": 2,
          "chunked_values": 1,
          "wire_bytes": 4096,
          "resumes": 1,
          "error": null,
          "parts": {
            "wire_decode": 2.0,
            "row_decode": 1.5,
            "untimed": 8.5
          }
        },
        {
          "run": "fast, cached",
          "iteration": 4,
          "warmup": false,
          "status": "error",
          "started_at": "2026-03-01T10:00:00.300Z",
          "total_ms": 3.25,
          "ttfb_ms": null,
          "stream_wait_ms": null,
          "server_elapsed_ms": null,
          "server_cpu_ms": null,
          "gfe_ms": null,
          "afe_ms": null,
          "wire_decode_wall_ms": null,
          "row_decode_wall_ms": null,
          "outside_wait_and_decode_ms": null,
          "rows": 0,
          "server_rows": null,
          "messages": 0,
          "chunked_values": 0,
          "wire_bytes": 0,
          "resumes": 0,
          "error": "bad value, \"x\"\nat row 7",
          "parts": {
            "untimed": 3.25
          }
        }
      ],
      "summary": {
        "total": {
          "count": 2,
          "mean": 11.0,
          "median": 11.0,
          "std_dev": 1.4142135623730951,
          "min": 10.0,
          "max": 12.0,
          "p90": 11.8,
          "p99": 11.98
        },
        "server": {
          "count": 2,
          "mean": 0.625,
          "median": 0.625,
          "std_dev": 0.8838834764831844,
          "min": 0.0,
          "max": 1.25,
          "p90": 1.125,
          "p99": 1.2375
        },
        "network": {
          "count": 2,
          "mean": 0.0,
          "median": 0.0,
          "std_dev": 0.0,
          "min": 0.0,
          "max": 0.0,
          "p90": 0.0,
          "p99": 0.0
        },
        "wire_decode": {
          "count": 2,
          "mean": 1.75,
          "median": 1.75,
          "std_dev": 0.3535533905932738,
          "min": 1.5,
          "max": 2.0,
          "p90": 1.95,
          "p99": 1.995
        },
        "row_decode": {
          "count": 2,
          "mean": 1.25,
          "median": 1.25,
          "std_dev": 0.3535533905932738,
          "min": 1.0,
          "max": 1.5,
          "p90": 1.45,
          "p99": 1.495
        },
        "untimed": {
          "count": 2,
          "mean": 7.375,
          "median": 7.375,
          "std_dev": 1.590990257669732,
          "min": 6.25,
          "max": 8.5,
          "p90": 8.275,
          "p99": 8.4775
        }
      }
    },
    {
      "config": {
        "label": "slow",
        "target": "emulator 127.0.0.1:9010",
        "sql": "SELECT * FROM Singers WHERE SingerId = @id",
        "params": [
          [
            "id",
            "7"
          ]
        ],
        "query_mode": "profile",
        "iterations": 2,
        "warmup": 0,
        "decoder": "spanprof"
      },
      "started_at": "2026-03-01T11:00:00Z",
      "iterations": [
        {
          "run": "slow",
          "iteration": 1,
          "warmup": false,
          "status": "ok",
          "started_at": "2026-03-01T11:00:00Z",
          "total_ms": 100.0,
          "ttfb_ms": null,
          "stream_wait_ms": null,
          "server_elapsed_ms": null,
          "server_cpu_ms": null,
          "gfe_ms": null,
          "afe_ms": null,
          "wire_decode_wall_ms": null,
          "row_decode_wall_ms": null,
          "outside_wait_and_decode_ms": null,
          "rows": 1,
          "server_rows": null,
          "messages": 1,
          "chunked_values": 0,
          "wire_bytes": 12,
          "resumes": 0,
          "error": null,
          "parts": {
            "untimed": 100.0
          }
        },
        {
          "run": "slow",
          "iteration": 2,
          "warmup": false,
          "status": "cancelled",
          "started_at": "2026-03-01T11:00:01Z",
          "total_ms": 0.125,
          "ttfb_ms": null,
          "stream_wait_ms": null,
          "server_elapsed_ms": null,
          "server_cpu_ms": null,
          "gfe_ms": null,
          "afe_ms": null,
          "wire_decode_wall_ms": null,
          "row_decode_wall_ms": null,
          "outside_wait_and_decode_ms": null,
          "rows": 0,
          "server_rows": null,
          "messages": 0,
          "chunked_values": 0,
          "wire_bytes": 0,
          "resumes": 0,
          "error": "cancelled by user",
          "parts": {
            "untimed": 0.125
          }
        }
      ],
      "summary": {
        "total": {
          "count": 1,
          "mean": 100.0,
          "median": 100.0,
          "std_dev": 0.0,
          "min": 100.0,
          "max": 100.0,
          "p90": 100.0,
          "p99": 100.0
        },
        "untimed": {
          "count": 1,
          "mean": 100.0,
          "median": 100.0,
          "std_dev": 0.0,
          "min": 100.0,
          "max": 100.0,
          "p90": 100.0,
          "p99": 100.0
        }
      }
    }
  ]
}
"#;
}
