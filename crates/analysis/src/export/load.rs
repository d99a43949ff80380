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

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn row(s: &StepResult) -> Vec<String> {
    let errors: Vec<String> = s
        .errors_by_status
        .iter()
        .map(|(code, n)| format!("{code}={n}"))
        .collect();
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
        errors.join(";"),
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
    row
}

/// A CSV row per step: [`LOAD_COLUMNS`], then each query part's mean per request as
/// `part_<key>_ms` (a mean per request, not a run CSV's per-iteration `<key>_ms`), then
/// `server_queue_ms`: of the server's part, its wait in its queue (not a part of its own).
pub fn load_csv(report: &LoadReport) -> Result<Vec<u8>, ExportError> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let header = LOAD_COLUMNS
        .iter()
        .map(|c| (*c).to_owned())
        .chain(Part::QUERY.iter().map(|p| format!("part_{}_ms", p.key())))
        .chain(std::iter::once("server_queue_ms".to_owned()));
    w.write_record(header)?;
    for step in &report.steps {
        w.write_record(row(step))?;
    }
    w.into_inner()
        .map_err(|e| ExportError::Csv(::csv::Error::from(e.into_error())))
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
