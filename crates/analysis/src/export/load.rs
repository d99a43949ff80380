//! A load run's exports, bytes out: its JSON report, a CSV row per step, and the HDR interval
//! log of its latencies from the intended start, in HdrHistogram's standard format (a line per
//! step: start and length in seconds from the run's start, its largest value, and its histogram,
//! V2-encoded with deflate in base64), which HdrHistogram's own tools read.

use std::time::Duration;

use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;

use super::ExportError;
use crate::load::{Latencies, LoadReport, StepResult};
use crate::part::Part;

/// The JSON report, pretty-printed.
pub fn load_json(report: &LoadReport) -> Result<Vec<u8>, ExportError> {
    let mut bytes = serde_json::to_vec_pretty(report).map_err(ExportError::Json)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The CSV's columns before the parts.
pub const LOAD_COLUMNS: [&str; 30] = [
    "target_rate",
    "concurrency",
    "started_s",
    "duration_s",
    "achieved_rate",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "p999_ms",
    "max_ms",
    "p50_uncorrected_ms",
    "p90_uncorrected_ms",
    "p99_uncorrected_ms",
    "over_100ms_share",
    "over_100ms_share_uncorrected",
    "count",
    "errors",
    "errors_by_status",
    "late",
    "dropped",
    "unfinished",
    "generator_lag_p99_ms",
    "generator_cpu_ms",
    "process_cpu_ms",
    "rows",
    "bytes",
    "rows_per_s",
    "bytes_per_s",
    "decode_cpu_ms_per_query",
    "client_cpu_ms_per_query",
];

/// A read-write step's columns, after `server_queue_ms` (empty for a query run's step):
/// `attempts` and `aborts_at` are `;`-separated `key=count` pairs, as `errors_by_status` is.
pub const LOAD_TRANSACTION_COLUMNS: [&str; 10] = [
    "committed",
    "committed_per_s",
    "attempts_per_s",
    "aborts_per_transaction",
    "attempts",
    "aborts_at",
    "lock_waits",
    "lock_wait_ms",
    "wounds",
    "hottest_key",
];

/// A mix's columns per script, after every other: `script_<name>_<field>`, in the mix's order.
pub const LOAD_SCRIPT_FIELDS: [&str; 8] = [
    "requests",
    "committed",
    "errors",
    "committed_per_s",
    "aborts_per_transaction",
    "p50_ms",
    "p90_ms",
    "p99_ms",
];

/// The scripts of a mix run, in the mix's order (none for a run of one script or query).
fn script_names(report: &LoadReport) -> Vec<String> {
    report
        .steps
        .iter()
        .find(|s| !s.scripts.is_empty())
        .map(|s| s.scripts.iter().map(|x| x.script.clone()).collect())
        .unwrap_or_default()
}

/// A step's columns for each of `names` (empty where the step has no such script).
fn script_cells(s: &StepResult, names: &[String]) -> Vec<String> {
    names
        .iter()
        .flat_map(|name| match s.scripts.iter().find(|x| &x.script == name) {
            Some(x) => vec![
                x.requests.to_string(),
                x.committed.to_string(),
                x.errors.to_string(),
                x.committed_per_s.to_string(),
                opt(x.aborts_per_transaction),
                opt(x.p50_ms),
                opt(x.p90_ms),
                opt(x.p99_ms),
            ],
            None => vec![String::new(); LOAD_SCRIPT_FIELDS.len()],
        })
        .collect()
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// `key=count` pairs joined by `;`: `1=217;2=12`.
fn pairs<K: std::fmt::Display>(map: impl IntoIterator<Item = (K, u64)>) -> String {
    map.into_iter()
        .map(|(k, n)| format!("{k}={n}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// A transaction's parts that a query has not, in the order they stack: their columns follow
/// [`LOAD_TRANSACTION_COLUMNS`] (a part both have is in the query's columns).
fn transaction_parts() -> impl Iterator<Item = Part> {
    Part::TRANSACTION
        .into_iter()
        .filter(|p| !Part::QUERY.contains(p))
}

fn row(s: &StepResult) -> Vec<String> {
    let mut row = vec![
        opt(s.target_rate),
        opt(s.concurrency),
        s.started_s.to_string(),
        s.duration_s.to_string(),
        s.achieved_rate.to_string(),
        opt(s.p50_ms),
        opt(s.p90_ms),
        opt(s.p99_ms),
        opt(s.p999_ms),
        opt(s.max_ms),
        opt(s.p50_uncorrected_ms),
        opt(s.p90_uncorrected_ms),
        opt(s.p99_uncorrected_ms),
        opt(s.over_100ms_share),
        opt(s.over_100ms_share_uncorrected),
        s.count.to_string(),
        s.errors.to_string(),
        pairs(s.errors_by_status.iter().map(|(code, n)| (code, *n))),
        s.late.to_string(),
        s.dropped.to_string(),
        s.unfinished.to_string(),
        opt(s.generator_lag_p99_ms),
        opt(s.generator_cpu_ms),
        s.process_cpu_ms.to_string(),
        s.rows.to_string(),
        s.bytes.to_string(),
        s.rows_per_s.to_string(),
        s.bytes_per_s.to_string(),
        opt(s.decode_cpu_ms_per_query),
        opt(s.client_cpu_ms_per_query),
    ];
    row.extend(Part::QUERY.iter().map(|p| opt(s.parts.get(p.key()))));
    row.push(opt(s.server_queue_ms));
    let read_write = s.committed.is_some();
    row.extend([
        opt(s.committed),
        opt(s.committed_per_s),
        opt(s.attempts_per_s),
        opt(s.aborts_per_transaction),
        pairs(s.attempts.iter().map(|(n, t)| (n, *t))),
        pairs(s.aborts_at.iter().map(|(at, n)| (at, *n))),
    ]);
    // Who blocked whom, where the target named it (the local instance's model of Spanner's
    // locking); empty where it named nothing, never an invented 0.
    let c = s.conflicts.as_ref();
    row.extend([
        opt(c.map(|c| c.waits)),
        opt(c.map(|c| c.wait_ms)),
        opt(c.map(|c| c.wounds)),
        c.and_then(|c| c.keys.first())
            .map_or(String::new(), |k| k.key.clone()),
    ]);
    // A read-write step's part it did not spend time in is 0; a query's has none of them.
    row.extend(transaction_parts().map(|p| match s.parts.get(p.key()) {
        Some(ms) => ms.to_string(),
        None if read_write => "0".to_owned(),
        None => String::new(),
    }));
    row
}

/// A CSV row per step: [`LOAD_COLUMNS`], then each query part's mean per request as
/// `part_<key>_ms` (a mean per request, not a run CSV's per-iteration `<key>_ms`), then
/// `server_queue_ms`: of the server's part, its wait in its queue (not a part of its own); then a
/// read-write step's [`LOAD_TRANSACTION_COLUMNS`] and the parts a transaction has and a query has not
/// (`part_aborted_ms`, `part_begin_ms`, ..., `part_commit_ms`), all empty for a query run's step;
/// last, for a mix of scripts, [`LOAD_SCRIPT_FIELDS`] per script (`script_<name>_committed`...).
pub fn load_csv(report: &LoadReport) -> Result<Vec<u8>, ExportError> {
    let (header, rows) = load_csv_table(report);
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(header)?;
    for cells in rows {
        w.write_record(cells)?;
    }
    w.into_inner()
        .map_err(|e| ExportError::Csv(::csv::Error::from(e.into_error())))
}

/// [`load_csv`]'s header and rows, cells as text.
pub(super) fn load_csv_table(report: &LoadReport) -> (Vec<String>, Vec<Vec<String>>) {
    let header = LOAD_COLUMNS
        .iter()
        .map(|c| (*c).to_owned())
        .chain(Part::QUERY.iter().map(|p| format!("part_{}_ms", p.key())))
        .chain(std::iter::once("server_queue_ms".to_owned()))
        .chain(LOAD_TRANSACTION_COLUMNS.iter().map(|c| (*c).to_owned()))
        .chain(transaction_parts().map(|p| format!("part_{}_ms", p.key())));
    let names = script_names(report);
    let scripts = names.iter().flat_map(|name| {
        LOAD_SCRIPT_FIELDS
            .iter()
            .map(move |f| format!("script_{name}_{f}"))
    });
    let rows = report
        .steps
        .iter()
        .map(|step| {
            let mut cells = row(step);
            cells.extend(script_cells(step, &names));
            cells
        })
        .collect();
    (header.chain(scripts).collect(), rows)
}

/// The HDR interval log: a line per step with its latencies from the intended start.
pub fn load_hdr_log(report: &LoadReport) -> Result<Vec<u8>, ExportError> {
    let mut bytes = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let comment = format!(
        "spanprof load: {} ({} model); latencies from the intended start, in microseconds",
        crate::text::printable(&report.label),
        match report.model {
            crate::load::Model::Open => "open",
            crate::load::Model::Closed => "closed",
        }
    );
    let broken = ExportError::Hdr;
    {
        let mut log = IntervalLogWriterBuilder::new()
            .add_comment(&comment)
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut bytes, &mut serializer)
            .map_err(|e| broken(e.to_string()))?;
        log.write_comment("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"")
            .map_err(|e| broken(e.to_string()))?;
        for step in &report.steps {
            let h = Latencies::decode(&step.histogram).map_err(|e| broken(e.to_string()))?;
            let start = Duration::try_from_secs_f64(step.started_s).unwrap_or_default();
            let length = Duration::try_from_secs_f64(step.duration_s).unwrap_or_default();
            log.write_histogram(h.histogram(), start, length, None)
                .map_err(|e| broken(format!("{e:?}")))?;
        }
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use super::*;
    use crate::load::{LoadSteps, Model, StepCpu, StepLevel, StepTally};

    fn plan(levels: Vec<StepLevel>) -> LoadSteps {
        LoadSteps {
            model: Model::Closed,
            levels,
            step_duration: Duration::from_secs(1),
            max_in_flight: 4,
            drain: Duration::from_secs(1),
        }
    }

    /// The CSV read back: each row as column name to cell.
    fn rows(report: &LoadReport) -> Vec<BTreeMap<String, String>> {
        let bytes = load_csv(report).expect("a CSV");
        let mut reader = ::csv::Reader::from_reader(bytes.as_slice());
        let header: Vec<String> = reader
            .headers()
            .expect("a header")
            .iter()
            .map(str::to_owned)
            .collect();
        reader
            .records()
            .map(|r| {
                let r = r.expect("a row");
                assert_eq!(r.len(), header.len(), "every row as wide as the header");
                header
                    .iter()
                    .cloned()
                    .zip(r.iter().map(str::to_owned))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_mix_adds_each_script_s_columns_after_every_other_and_a_run_without_one_has_none() {
        let mut tally = StepTally::read_write(StepLevel::Concurrency(2))
            .with_scripts(&["transfer".to_owned(), "audit".to_owned()]);
        tally.script_ended(0, Some(Duration::from_millis(4)), None);
        tally.script_ended(0, None, None);
        tally.script_ended(1, Some(Duration::from_millis(2)), None);
        let step = tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default());
        let report = LoadReport::new(
            Default::default(),
            &plan(vec![StepLevel::Concurrency(2)]),
            vec![step.clone()],
        );
        let bytes = load_csv(&report).expect("a CSV");
        let text = String::from_utf8(bytes).expect("UTF-8");
        let header = text.lines().next().expect("a header");
        assert!(
            header.ends_with(
                "script_audit_requests,script_audit_committed,script_audit_errors,\
                 script_audit_committed_per_s,script_audit_aborts_per_transaction,\
                 script_audit_p50_ms,script_audit_p90_ms,script_audit_p99_ms"
            ),
            "{header}"
        );
        let row = &rows(&report)[0];
        assert_eq!(row["script_transfer_requests"], "2");
        assert_eq!(row["script_transfer_committed"], "1");
        assert_eq!(row["script_transfer_errors"], "1");
        assert_eq!(row["script_audit_committed"], "1");
        assert!(row["script_audit_p50_ms"].starts_with('2'), "{row:?}");
        let alone = LoadReport::new(
            Default::default(),
            &plan(vec![StepLevel::Concurrency(2)]),
            vec![StepResult {
                scripts: Vec::new(),
                ..step
            }],
        );
        assert!(rows(&alone)[0].keys().all(|k| !k.starts_with("script_")));
    }

    #[test]
    fn a_read_write_step_s_row_carries_its_named_lock_waits_and_its_hottest_key() {
        use crate::report::{Conflicts, KeyConflicts};
        let mut step = StepTally::read_write(StepLevel::Concurrency(4)).finish(
            Duration::ZERO,
            Duration::from_secs(1),
            StepCpu::default(),
        );
        step.committed = Some(80);
        step.conflicts = Some(Conflicts {
            waits: 181,
            wait_ms: 49.5,
            wounds: 409,
            keys: vec![
                KeyConflicts {
                    key: "accounts(1)".into(),
                    columns: vec!["balance".into()],
                    waits: 180,
                    wait_ms: 49.0,
                    wounds: 409,
                },
                KeyConflicts {
                    key: "accounts(2)".into(),
                    waits: 1,
                    wait_ms: 0.5,
                    ..KeyConflicts::default()
                },
            ],
        });
        let report = LoadReport::new(
            Default::default(),
            &plan(vec![StepLevel::Concurrency(4)]),
            vec![step],
        );
        let row = &rows(&report)[0];
        assert_eq!(row["lock_waits"], "181");
        assert_eq!(row["lock_wait_ms"], "49.5");
        assert_eq!(row["wounds"], "409");
        assert_eq!(row["hottest_key"], "accounts(1)");
    }

    #[test]
    fn a_read_write_step_s_row_carries_goodput_attempts_and_aborts_and_a_query_s_leaves_them_empty()
    {
        let mut step = StepTally::read_write(StepLevel::Concurrency(2)).finish(
            Duration::ZERO,
            Duration::from_secs(1),
            StepCpu::default(),
        );
        step.committed = Some(243);
        step.committed_per_s = Some(240.6);
        step.attempts_per_s = Some(303.0);
        step.aborts_per_transaction = Some(0.26);
        step.attempts = BTreeMap::from([(1, 217), (2, 12), (3, 7)]);
        step.aborts_at = BTreeMap::from([("commit".into(), 42), ("dml".into(), 21)]);
        step.parts = BTreeMap::from([
            ("aborted".into(), 1.51),
            ("commit".into(), 1.25),
            ("server".into(), 0.85),
        ]);
        let report = LoadReport::new(
            Default::default(),
            &plan(vec![StepLevel::Concurrency(2)]),
            vec![step],
        );
        let row = &rows(&report)[0];
        assert_eq!(row["committed"], "243");
        assert_eq!(row["committed_per_s"], "240.6");
        assert_eq!(row["attempts_per_s"], "303");
        assert_eq!(row["aborts_per_transaction"], "0.26");
        assert_eq!(row["attempts"], "1=217;2=12;3=7");
        assert_eq!(row["aborts_at"], "commit=42;dml=21");
        assert_eq!(row["part_aborted_ms"], "1.51");
        assert_eq!(row["part_commit_ms"], "1.25");
        assert_eq!(row["part_lock_wait_ms"], "0", "a part it spent nothing in");
        assert_eq!(row["part_server_ms"], "0.85", "a part a query has too");
        for column in ["lock_waits", "lock_wait_ms", "wounds", "hottest_key"] {
            assert_eq!(
                row[column], "",
                "the target named no wait: {column} is empty, not 0"
            );
        }

        let query = StepTally::new(StepLevel::Rate(50.0)).finish(
            Duration::ZERO,
            Duration::from_secs(1),
            StepCpu::default(),
        );
        let report = LoadReport::new(
            Default::default(),
            &plan(vec![StepLevel::Rate(50.0)]),
            vec![query],
        );
        let row = &rows(&report)[0];
        let transaction_only = transaction_parts().map(|p| format!("part_{}_ms", p.key()));
        for column in LOAD_TRANSACTION_COLUMNS
            .iter()
            .map(|c| (*c).to_owned())
            .chain(transaction_only)
        {
            assert_eq!(row[&column], "", "{column} of a query's step");
        }
        // The columns before them kept their places.
        let header = String::from_utf8(load_csv(&report).expect("a CSV")).expect("UTF-8");
        let first = header.lines().next().unwrap_or_default();
        assert!(
            first.contains("part_untimed_ms,server_queue_ms,committed,"),
            "{first}"
        );
    }
}
