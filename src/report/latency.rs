//! Google's latency points beside spanprof's phases, in the names of the official clients'
//! built-in metrics (`shared/SPANNER_WIRE.md`, "Headers"): the operation (the whole call, resumes
//! included), each attempt, the Google front end's and the API front end's `server-timing`
//! entries, and the query latency the server reports.

use serde::{Deserialize, Serialize};

use super::{IterationRecord, RunReport};
use crate::stats::{self, Summary};

/// One of Google's latency points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencyPoint {
    /// `operation_latencies`: the first request sent to the last byte of the last response.
    Operation,
    /// `attempt_latencies`: one RPC attempt (every attempt of every iteration is a sample).
    Attempt,
    /// `gfe_latencies`: the `gfet4t7` server-timing entry.
    Gfe,
    /// `afe_latencies`: the `afe` server-timing entry (only sent to calls that opt in).
    Afe,
    /// The query latency: the server's elapsed time from the query statistics.
    Query,
}

impl LatencyPoint {
    /// Every point, in the order reports show them.
    pub const ALL: [LatencyPoint; 5] = [
        LatencyPoint::Operation,
        LatencyPoint::Attempt,
        LatencyPoint::Gfe,
        LatencyPoint::Afe,
        LatencyPoint::Query,
    ];

    /// Its name as Google's metrics and docs spell it.
    pub fn name(self) -> &'static str {
        match self {
            LatencyPoint::Operation => "operation_latencies",
            LatencyPoint::Attempt => "attempt_latencies",
            LatencyPoint::Gfe => "gfe_latencies",
            LatencyPoint::Afe => "afe_latencies",
            LatencyPoint::Query => "query latency (server)",
        }
    }

    /// Its samples in one iteration, in milliseconds (an attempt's: one per attempt).
    pub fn samples(self, record: &IterationRecord) -> Vec<f64> {
        match self {
            LatencyPoint::Operation => record.operation_ms.into_iter().collect(),
            LatencyPoint::Attempt => record.attempt_ms.clone(),
            LatencyPoint::Gfe => record.gfe_ms.into_iter().collect(),
            LatencyPoint::Afe => record.afe_ms.into_iter().collect(),
            LatencyPoint::Query => record.server_ms.into_iter().collect(),
        }
    }
}

/// A summary of each latency point over `records`, in [`LatencyPoint::ALL`] order, leaving out
/// points without a measurement.
pub fn latency_summaries(records: &[&IterationRecord]) -> Vec<(LatencyPoint, Summary)> {
    LatencyPoint::ALL
        .into_iter()
        .filter_map(|point| {
            let samples: Vec<f64> = records.iter().flat_map(|r| point.samples(r)).collect();
            Some((point, stats::summarize(&samples)?))
        })
        .collect()
}

impl RunReport {
    /// [`latency_summaries`] over the timed iterations.
    pub fn latency_points(&self) -> Vec<(LatencyPoint, Summary)> {
        latency_summaries(&self.timed().collect::<Vec<_>>())
    }

    /// Google's attempt count over the timed iterations that counted their attempts: (attempts,
    /// operations); `None` when none did (older reports).
    pub fn attempt_count(&self) -> Option<(u64, u64)> {
        let counted: Vec<u32> = self.timed().filter_map(|r| r.attempts).collect();
        (!counted.is_empty()).then(|| {
            (
                counted.iter().map(|&n| u64::from(n)).sum(),
                counted.len() as u64,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_attempt_is_a_sample_and_unmeasured_points_are_left_out() {
        let mut report = RunReport::with_totals("r", &[10.0, 20.0]);
        report.iterations[0].operation_ms = Some(9.0);
        report.iterations[0].attempts = Some(2);
        report.iterations[0].attempt_ms = vec![3.0, 6.0];
        report.iterations[1].operation_ms = Some(19.0);
        report.iterations[1].attempts = Some(1);
        report.iterations[1].attempt_ms = vec![19.0];
        report.iterations[1].afe_ms = Some(1.5);
        let points = report.latency_points();
        let names: Vec<&str> = points.iter().map(|(p, _)| p.name()).collect();
        assert_eq!(
            names,
            ["operation_latencies", "attempt_latencies", "afe_latencies"]
        );
        assert_eq!(points[1].1.count, 3);
        assert_eq!(points[1].1.max, 19.0);
        assert_eq!(report.attempt_count(), Some((3, 2)));
        assert_eq!(RunReport::with_totals("old", &[1.0]).attempt_count(), None);
    }
}
