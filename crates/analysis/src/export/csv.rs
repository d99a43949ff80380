//! CSV: one row per iteration of every run, warm-ups and failures included.

use crate::part::Part;
use crate::report::{Check, IterationRecord, RunReport, SessionKind};

use super::{ExportError, Exporter};

/// The columns that say which iteration a row is, and its total.
const BEFORE_PARTS: [&str; 6] = [
    "run",
    "iteration",
    "warmup",
    "status",
    "started_at",
    "total_ms",
];

/// The columns after the parts: the overlap beside them and how the wait was split, what the
/// iteration got back and carried, then the raw measurements the parts were derived from, each
/// named for what it measured (no raw figure takes a part's name: the whole wait on the stream is
/// `stream_wait_ms`, split into the parts `server_ms` and `network_ms`). A measurement that is
/// itself a part (a cold start's steps, a partitioned read's PartitionQuery, a resume's back-off,
/// the time off the CPU, a client program's phases but its transfer) is its part's column.
const AFTER_PARTS: [&str; 32] = [
    "overlap_ms",
    "split",
    "ttfb_ms",
    "rows",
    "server_rows",
    "messages",
    "chunked_values",
    "wire_bytes",
    "resumes",
    "error",
    "seq",
    "check",
    "session_kind",
    "request_id",
    "trace_id",
    "rpc_attempts",
    "attempt_ms",
    "operation_ms",
    "gfe_ms",
    "afe_ms",
    "stream_wait_ms",
    "server_elapsed_ms",
    "server_cpu_ms",
    "server_client_wait_ms",
    "server_queue_ms",
    "server_lock_wait_ms",
    "wire_decode_wall_ms",
    "wire_decode_cpu_ms",
    "row_decode_wall_ms",
    "row_decode_cpu_ms",
    "client_work_wall_ms",
    "client_work_cpu_ms",
];

/// The last columns: what no part or raw column above holds.
const LAST: [&str; 4] = [
    "outside_wait_and_decode_ms",
    "transfer_ms",
    "transaction_attempts",
    "aborts",
];

const WIDTH: usize = BEFORE_PARTS.len() + Part::ALL.len() + AFTER_PARTS.len() + LAST.len();

/// The CSV header: the columns that say which iteration a row is and its `total_ms`, every part
/// as `<key>_ms` in [`Part::ALL`] order (empty where an iteration did not have the part; the
/// parts of a row add up to its `total_ms`), then the columns after them.
pub const COLUMNS: [&str; WIDTH] = {
    let mut out = [""; WIDTH];
    let mut i = 0;
    while i < BEFORE_PARTS.len() {
        out[i] = BEFORE_PARTS[i];
        i += 1;
    }
    let mut p = 0;
    while p < Part::ALL.len() {
        out[i] = Part::ALL[p].column();
        i += 1;
        p += 1;
    }
    let mut a = 0;
    while a < AFTER_PARTS.len() {
        out[i] = AFTER_PARTS[a];
        i += 1;
        a += 1;
    }
    let mut l = 0;
    while l < LAST.len() {
        out[i] = LAST[l];
        i += 1;
        l += 1;
    }
    out
};

/// CSV with a header of [`COLUMNS`]: times in milliseconds with three decimals, empty where a
/// value is unknown; `warmup` is `true`/`false`, `status` is `ok`/`error`/`cancelled`. Rows come
/// in the order the iterations ran: by `started_at`, and within one profile by `seq`, so the
/// interleaved variants of a profile alternate as they did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Csv;

impl Exporter for Csv {
    fn extension(&self) -> &'static str {
        "csv"
    }

    fn export(&self, reports: &[RunReport]) -> Result<Vec<u8>, ExportError> {
        let mut writer = ::csv::Writer::from_writer(Vec::new());
        writer.write_record(COLUMNS)?;
        for record in in_the_order_they_ran(reports) {
            writer.write_record(row(record))?;
        }
        writer
            .into_inner()
            .map_err(|error| ExportError::Csv(error.into_error().into()))
    }
}

/// Every iteration of `reports`, run by run; the runs of one profile (consecutive reports that
/// started together, every iteration numbered in its schedule) merged in the order they ran.
fn in_the_order_they_ran(reports: &[RunReport]) -> Vec<&IterationRecord> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < reports.len() {
        let end = start
            + reports[start..]
                .iter()
                .take_while(|r| r.started_at == reports[start].started_at)
                .count();
        let mut profile: Vec<&IterationRecord> = reports[start..end]
            .iter()
            .flat_map(|r| &r.iterations)
            .collect();
        if end - start > 1 && profile.iter().all(|r| r.seq.is_some()) {
            profile.sort_by_key(|r| r.seq);
        }
        out.extend(profile);
        start = end;
    }
    out
}

/// The fields of `record` in [`COLUMNS`] order.
fn row(record: &IterationRecord) -> Vec<String> {
    let accounting = record.accounting();
    let mut row = Vec::with_capacity(WIDTH);
    row.extend([
        record.run.clone(),
        record.iteration.to_string(),
        record.warmup.to_string(),
        record.status().as_str().to_owned(),
        record.started_at.clone(),
        ms(record.total_ms),
    ]);
    row.extend(
        Part::ALL
            .iter()
            .map(|&part| optional_ms(accounting.parts.get(part))),
    );
    row.push(optional_ms(accounting.overlap_ms));
    // A row without a wait (a failed iteration) has nothing split.
    row.push(
        if record.query.stream_wait_ms.is_some() || record.transaction.is_some() {
            accounting.split.as_str().to_owned()
        } else {
            String::new()
        },
    );
    row.extend(carried(record));
    row.extend(raw(record));
    row
}

/// What the iteration got back and carried, `ttfb_ms` to `afe_ms` of [`AFTER_PARTS`].
fn carried(record: &IterationRecord) -> [String; 18] {
    let subject = record.subject.as_ref();
    [
        optional_ms(record.query.ttfb_ms),
        record.answer.rows.to_string(),
        optional(record.answer.server_rows),
        record.answer.messages.to_string(),
        record.answer.chunked_values.to_string(),
        record.answer.wire_bytes.to_string(),
        record.answer.resumes.to_string(),
        record.error().unwrap_or_default().to_owned(),
        optional(record.seq.map(u64::from)),
        subject
            .and_then(|s| s.check)
            .map_or("", Check::as_str)
            .to_owned(),
        record
            .session_kind
            .map_or("", SessionKind::as_str)
            .to_owned(),
        record.ids.request_id.clone().unwrap_or_default(),
        record.ids.trace_id.clone().unwrap_or_default(),
        optional(record.google.attempts.map(u64::from)),
        // Each attempt's time, `;`-separated (the JSON report has them as an array).
        record
            .google
            .attempt_ms
            .iter()
            .map(|&v| ms(v))
            .collect::<Vec<_>>()
            .join(";"),
        optional_ms(record.google.operation_ms),
        optional_ms(record.google.gfe_ms),
        optional_ms(record.google.afe_ms),
    ]
}

/// The raw measurements, `stream_wait_ms` to `transfer_ms`, then a read-write transaction's
/// attempts and how many of them aborted.
fn raw(record: &IterationRecord) -> [String; 16] {
    let transaction = record.transaction.as_ref();
    let subject = record.subject.as_ref();
    [
        optional_ms(record.query.stream_wait_ms),
        optional_ms(record.query.server_elapsed_ms),
        optional_ms(record.query.server_cpu_ms),
        optional_ms(record.query.server_client_wait_ms),
        optional_ms(record.query.server_queue_ms),
        optional_ms(record.query.server_lock_wait_ms),
        optional_ms(record.query.wire_decode_wall_ms),
        optional_ms(record.query.wire_decode_cpu_ms),
        optional_ms(record.query.row_decode_wall_ms),
        optional_ms(record.query.row_decode_cpu_ms),
        optional_ms(record.query.client_work_wall_ms),
        optional_ms(record.query.client_work_cpu_ms),
        optional_ms(record.query.outside_wait_and_decode_ms),
        optional_ms(subject.and_then(|s| s.transfer_ms)),
        optional(transaction.map(|t| t.attempts.len() as u64)),
        optional(transaction.map(|t| t.aborted().count() as u64)),
    ]
}

fn ms(value: f64) -> String {
    format!("{value:.3}")
}

fn optional_ms(value: Option<f64>) -> String {
    value.map(ms).unwrap_or_default()
}

fn optional(value: Option<u64>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::fixture::{ERROR_MESSAGE, reports};

    const GOLDEN: &str = "\
run,iteration,warmup,status,started_at,total_ms,dns_ms,tcp_ms,tls_ms,http2_ms,token_ms,session_ms,partition_query_ms,aborted_ms,begin_ms,lock_wait_ms,server_ms,network_ms,backoff_ms,wire_decode_ms,row_decode_ms,client_work_ms,descheduled_ms,batch_dml_ms,think_ms,commit_ms,untimed_ms,startup_ms,first_byte_ms,streaming_ms,blocked_ms,tail_ms,overlap_ms,split,ttfb_ms,rows,server_rows,messages,chunked_values,wire_bytes,resumes,error,seq,check,session_kind,request_id,trace_id,rpc_attempts,attempt_ms,operation_ms,gfe_ms,afe_ms,stream_wait_ms,server_elapsed_ms,server_cpu_ms,server_client_wait_ms,server_queue_ms,server_lock_wait_ms,wire_decode_wall_ms,wire_decode_cpu_ms,row_decode_wall_ms,row_decode_cpu_ms,client_work_wall_ms,client_work_cpu_ms,outside_wait_and_decode_ms,transfer_ms,transaction_attempts,aborts
\"fast, cached\",1,true,ok,2026-03-01T10:00:00.000Z,40.000,,,,,,,,,,,,,,5.000,3.000,,,,,,32.000,,,,,,,,30.000,100,100,2,0,4096,0,,,,,,,,,,26.000,,,25.000,20.000,,,,5.000,,3.000,,,,2.000,,,
\"fast, cached\",2,false,ok,2026-03-01T10:00:00.100Z,10.000,,,,,,,,,,,1.250,0.000,,1.500,1.000,,,,,,6.250,,,,,,3.750,estimated,6.500,100,100,2,1,4096,0,,,,,1.0123456789abcdef.1.1.2.1,4bf92f3577b34da6a3ce929d0e0e4736,1,9.500,9.500,5.500,0.500,1.250,5.000,4.000,,,,1.500,,1.000,,,,1.250,,,
\"fast, cached\",3,false,ok,2026-03-01T10:00:00.200Z,12.000,,,,,,,,,,,,,,2.000,1.500,,,,,,8.500,,,,,,,,7.000,100,,2,1,4096,1,,,,,,,,,,,,,6.000,,,,,2.000,,1.500,,,,2.500,,,
\"fast, cached\",4,false,error,2026-03-01T10:00:00.300Z,3.250,,,,,,,,,,,,,,,,,,,,,3.250,,,,,,,,,0,,0,0,0,0,\"bad value, \"\"x\"\"
at row 7\",,,,,,,,,,,,,,,,,,,,,,,,,,
slow,1,false,ok,2026-03-01T11:00:00Z,100.000,,,,,,,,,,,,,,,,,,,,,100.000,,,,,,,,,1,,1,0,12,0,,,,,,,,,,,,,,,,,,,,,,,,,,,
slow,2,false,cancelled,2026-03-01T11:00:01Z,0.125,,,,,,,,,,,,,,,,,,,,,0.125,,,,,,,,,0,,0,0,0,0,cancelled by user,,,,,,,,,,,,,,,,,,,,,,,,,,
";

    #[test]
    fn golden() -> Result<(), ExportError> {
        let bytes = Csv.export(&reports())?;
        assert_eq!(String::from_utf8_lossy(&bytes), GOLDEN);
        Ok(())
    }

    #[test]
    fn header_starts_with_the_iteration_then_its_parts() {
        let fixed = "run,iteration,warmup,status,started_at,total_ms,dns_ms,tcp_ms,tls_ms,\
                     http2_ms,token_ms,session_ms,partition_query_ms,aborted_ms,begin_ms,\
                     lock_wait_ms,server_ms,network_ms,backoff_ms,wire_decode_ms,row_decode_ms,\
                     client_work_ms,descheduled_ms,batch_dml_ms,think_ms,commit_ms,untimed_ms";
        assert!(COLUMNS.join(",").starts_with(&format!("{fixed},")));
    }

    #[test]
    fn parses_back_with_every_row_and_column() -> Result<(), Box<dyn std::error::Error>> {
        let reports = reports();
        let bytes = Csv.export(&reports)?;
        let mut reader = ::csv::Reader::from_reader(bytes.as_slice());
        assert_eq!(reader.headers()?.iter().collect::<Vec<_>>(), COLUMNS);
        let rows = reader.records().collect::<Result<Vec<_>, _>>()?;
        let iterations: usize = reports.iter().map(|r| r.iterations.len()).sum();
        assert_eq!(rows.len(), iterations);
        assert!(rows.iter().all(|row| row.len() == COLUMNS.len()));

        let error_column = COLUMNS.iter().position(|&c| c == "error");
        let failed = &rows[3];
        assert_eq!(failed.get(3), Some("error"));
        assert_eq!(
            error_column.and_then(|i| failed.get(i)),
            Some(ERROR_MESSAGE)
        );
        assert_eq!(failed.get(0), Some("fast, cached"));
        Ok(())
    }

    #[test]
    fn a_subject_profile_carries_the_server_s_phases_and_the_check()
    -> Result<(), Box<dyn std::error::Error>> {
        let bytes = Csv.export(&[crate::export::fixture::subject_report()])?;
        let mut reader = ::csv::Reader::from_reader(bytes.as_slice());
        let row = reader.records().next().ok_or("a row")??;
        let cell = |name: &str| {
            COLUMNS
                .iter()
                .position(|&c| c == name)
                .and_then(|i| row.get(i))
                .map(str::to_owned)
        };
        let phases = [
            "startup_ms",
            "first_byte_ms",
            "transfer_ms",
            "blocked_ms",
            "tail_ms",
        ];
        let got: Vec<Option<String>> = phases.iter().map(|p| cell(p)).collect();
        let want = ["950.250", "3.500", "700.000", "640.125", "246.000"];
        assert_eq!(got, want.map(|w| Some(w.to_owned())));
        assert_eq!(cell("check").as_deref(), Some("values"));
        Ok(())
    }

    #[test]
    fn each_column_name_is_used_once_and_only_a_part_s_column_has_a_part_s_name() {
        let mut names = COLUMNS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COLUMNS.len(), "every name once");
        for (i, column) in COLUMNS.iter().enumerate() {
            // A raw figure named `<part>_ms`, or `part_<part>_ms` beside it, would be a
            // second column a reader could take for the part.
            for part in Part::ALL {
                let is_the_part = i == BEFORE_PARTS.len() + part.index();
                let named_for_it =
                    *column == part.column() || column.strip_prefix("part_") == Some(part.column());
                assert_eq!(named_for_it, is_the_part, "{column} at {i}");
            }
        }
    }

    #[test]
    fn the_part_columns_of_every_row_add_up_to_its_total() -> Result<(), Box<dyn std::error::Error>>
    {
        let mut reports = reports();
        reports.push(crate::export::fixture::subject_report());
        let bytes = Csv.export(&reports)?;
        let mut reader = ::csv::Reader::from_reader(bytes.as_slice());
        let header = reader.headers()?.clone();
        let number = |row: &::csv::StringRecord, name: &str| -> Result<f64, String> {
            let i = header.iter().position(|h| h == name).ok_or(name)?;
            let cell = row.get(i).ok_or(name)?;
            Ok(if cell.is_empty() {
                0.0
            } else {
                cell.parse().map_err(|_| name)?
            })
        };
        let mut rows = 0;
        for row in reader.records() {
            let row = row?;
            let mut sum = 0.0;
            for part in Part::ALL {
                sum += number(&row, part.column())?;
            }
            let total = number(&row, "total_ms")?;
            assert!((sum - total).abs() < 1e-6, "{sum} against {total}: {row:?}");
            rows += 1;
        }
        assert_eq!(
            rows,
            reports.iter().map(|r| r.iterations.len()).sum::<usize>()
        );
        Ok(())
    }

    #[test]
    fn the_user_guide_s_table_has_every_column_in_order() -> std::io::Result<()> {
        let guide = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/exports.md"
        ))?;
        let table = guide
            .split("| column | unit | what it is |")
            .nth(1)
            .unwrap_or_default();
        let names: Vec<&str> = table
            .lines()
            .skip(2)
            .map_while(|line| line.strip_prefix("| `"))
            .filter_map(|line| line.split('`').next())
            .collect();
        assert_eq!(names, COLUMNS);
        Ok(())
    }

    #[test]
    fn no_reports_is_just_the_header() -> Result<(), ExportError> {
        let bytes = Csv.export(&[])?;
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            format!("{}\n", COLUMNS.join(","))
        );
        Ok(())
    }
}
