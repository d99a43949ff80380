//! CSV: one row per iteration of every run, warm-ups and failures included.

use crate::part::Part;
use crate::report::{IterationRecord, RunReport};

use super::{ExportError, Exporter};

/// The columns before the parts. The first twenty are fixed; columns added later go at the end,
/// so scripts that read columns by position keep working. `network_ms` (the whole wait, now the
/// parts `server` and `network`) and `other_ms` (now `client_work`, `descheduled`, `untimed` and a
/// cold start's steps) stay for one release.
const BEFORE_PARTS: [&str; 44] = [
    "run",
    "iteration",
    "warmup",
    "status",
    "started_at",
    "total_ms",
    "ttfb_ms",
    "network_ms",
    "server_ms",
    "gfe_ms",
    "wire_decode_ms",
    "row_decode_ms",
    "other_ms",
    "rows",
    "server_rows",
    "messages",
    "chunked_values",
    "wire_bytes",
    "resumes",
    "error",
    "server_cpu_ms",
    "afe_ms",
    "seq",
    "startup_ms",
    "first_byte_ms",
    "transfer_ms",
    "blocked_ms",
    "tail_ms",
    "check",
    "wire_decode_cpu_ms",
    "row_decode_cpu_ms",
    "descheduled_ms",
    "dns_ms",
    "tcp_ms",
    "tls_ms",
    "http2_ms",
    "token_ms",
    "session_ms",
    "session_kind",
    "request_id",
    "trace_id",
    "operation_ms",
    "attempts",
    "attempt_ms",
];

/// The columns after the parts: the overlap beside them, how the wait was split, and the raw
/// figures the parts were derived from that no other column holds.
const AFTER_PARTS: [&str; 7] = [
    "overlap_ms",
    "split",
    "server_client_wait_ms",
    "client_work_ms",
    "client_work_cpu_ms",
    "backoff_ms",
    "partition_query_ms",
];

const WIDTH: usize = BEFORE_PARTS.len() + Part::ALL.len() + AFTER_PARTS.len();

/// The CSV header: the columns before the parts, every part as `part_<key>_ms` in [`Part::ALL`]
/// order (empty where an iteration did not have the part; the parts of a row add up to its
/// `total_ms`), then the columns after them.
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
    row.extend(before_parts(record));
    row.extend(
        Part::ALL
            .iter()
            .map(|&part| optional_ms(accounting.parts.get(part))),
    );
    row.extend([
        optional_ms(accounting.overlap_ms),
        // A row without a wait (a failed iteration) has nothing split.
        if record.network_ms.is_some() {
            accounting.split.as_str().to_owned()
        } else {
            String::new()
        },
        optional_ms(record.server_client_wait_ms),
        optional_ms(record.client_work_ms),
        optional_ms(record.client_work_cpu_ms),
        optional_ms(record.backoff_ms),
        optional_ms(record.partition_query_ms),
    ]);
    row
}

/// The fields of `record` in [`BEFORE_PARTS`] order.
fn before_parts(record: &IterationRecord) -> [String; BEFORE_PARTS.len()] {
    [
        record.run.clone(),
        record.iteration.to_string(),
        record.warmup.to_string(),
        record.status.as_str().to_owned(),
        record.started_at.clone(),
        ms(record.total_ms),
        optional_ms(record.ttfb_ms),
        optional_ms(record.network_ms),
        optional_ms(record.server_ms),
        optional_ms(record.gfe_ms),
        optional_ms(record.wire_decode_ms),
        optional_ms(record.row_decode_ms),
        optional_ms(record.other_ms),
        record.rows.to_string(),
        optional(record.server_rows),
        record.messages.to_string(),
        record.chunked_values.to_string(),
        record.wire_bytes.to_string(),
        record.resumes.to_string(),
        record.error.clone().unwrap_or_default(),
        optional_ms(record.server_cpu_ms),
        optional_ms(record.afe_ms),
        optional(record.seq.map(u64::from)),
        optional_ms(record.startup_ms),
        optional_ms(record.first_byte_ms),
        optional_ms(record.transfer_ms),
        optional_ms(record.blocked_ms),
        optional_ms(record.tail_ms),
        record.check.clone().unwrap_or_default(),
        optional_ms(record.wire_decode_cpu_ms),
        optional_ms(record.row_decode_cpu_ms),
        optional_ms(record.descheduled_ms),
        optional_ms(record.dns_ms),
        optional_ms(record.tcp_ms),
        optional_ms(record.tls_ms),
        optional_ms(record.http2_ms),
        optional_ms(record.token_ms),
        optional_ms(record.session_ms),
        record.session_kind.clone().unwrap_or_default(),
        record.request_id.clone().unwrap_or_default(),
        record.trace_id.clone().unwrap_or_default(),
        optional_ms(record.operation_ms),
        optional(record.attempts.map(u64::from)),
        // Each attempt's time, `;`-separated (the JSON report has them as an array).
        record
            .attempt_ms
            .iter()
            .map(|&v| ms(v))
            .collect::<Vec<_>>()
            .join(";"),
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
run,iteration,warmup,status,started_at,total_ms,ttfb_ms,network_ms,server_ms,gfe_ms,wire_decode_ms,row_decode_ms,other_ms,rows,server_rows,messages,chunked_values,wire_bytes,resumes,error,server_cpu_ms,afe_ms,seq,startup_ms,first_byte_ms,transfer_ms,blocked_ms,tail_ms,check,wire_decode_cpu_ms,row_decode_cpu_ms,descheduled_ms,dns_ms,tcp_ms,tls_ms,http2_ms,token_ms,session_ms,session_kind,request_id,trace_id,operation_ms,attempts,attempt_ms,part_dns_ms,part_tcp_ms,part_tls_ms,part_http2_ms,part_token_ms,part_session_ms,part_partition_query_ms,part_server_ms,part_network_ms,part_backoff_ms,part_wire_decode_ms,part_row_decode_ms,part_client_work_ms,part_descheduled_ms,part_untimed_ms,part_startup_ms,part_first_byte_ms,part_streaming_ms,part_blocked_ms,part_tail_ms,overlap_ms,split,server_client_wait_ms,client_work_ms,client_work_cpu_ms,backoff_ms,partition_query_ms
\"fast, cached\",1,true,ok,2026-03-01T10:00:00.000Z,40.000,30.000,,25.000,26.000,5.000,3.000,2.000,100,100,2,0,4096,0,,20.000,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,5.000,3.000,,,32.000,,,,,,,,,,,,
\"fast, cached\",2,false,ok,2026-03-01T10:00:00.100Z,10.000,6.500,1.250,5.000,5.500,1.500,1.000,1.250,100,100,2,1,4096,0,,4.000,0.500,,,,,,,,,,,,,,,,,,1.0123456789abcdef.1.1.2.1,4bf92f3577b34da6a3ce929d0e0e4736,9.500,1,9.500,,,,,,,,1.250,0.000,,1.500,1.000,,,6.250,,,,,,3.750,estimated,,,,,
\"fast, cached\",3,false,ok,2026-03-01T10:00:00.200Z,12.000,7.000,,6.000,,2.000,1.500,2.500,100,,2,1,4096,1,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,2.000,1.500,,,8.500,,,,,,,,,,,,
\"fast, cached\",4,false,error,2026-03-01T10:00:00.300Z,3.250,,,,,,,,0,,0,0,0,0,\"bad value, \"\"x\"\"
at row 7\",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,3.250,,,,,,,,,,,,
slow,1,false,ok,2026-03-01T11:00:00Z,100.000,,,,,,,,1,,1,0,12,0,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,100.000,,,,,,,,,,,,
slow,2,false,cancelled,2026-03-01T11:00:01Z,0.125,,,,,,,,0,,0,0,0,0,cancelled by user,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,0.125,,,,,,,,,,,,
";

    #[test]
    fn golden() -> Result<(), ExportError> {
        let bytes = Csv.export(&reports())?;
        assert_eq!(String::from_utf8_lossy(&bytes), GOLDEN);
        Ok(())
    }

    #[test]
    fn header_starts_with_the_fixed_columns() {
        let fixed = "run,iteration,warmup,status,started_at,total_ms,ttfb_ms,network_ms,server_ms,\
                     gfe_ms,wire_decode_ms,row_decode_ms,other_ms,rows,server_rows,messages,\
                     chunked_values,wire_bytes,resumes,error";
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
    fn no_reports_is_just_the_header() -> Result<(), ExportError> {
        let bytes = Csv.export(&[])?;
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            format!("{}\n", COLUMNS.join(","))
        );
        Ok(())
    }
}
