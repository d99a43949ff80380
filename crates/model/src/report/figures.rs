//! The figures beside the parts: times that are not parts of the client's time because they
//! overlap them or were measured elsewhere. The time to the first byte; the overlap (the server's
//! work beside the client's own); what the server reports (its elapsed time, Google's "query
//! latency", its CPU time, and the local instance's wait on the client); and Google's latency
//! points in the names of the official clients' built-in metrics (`shared/SPANNER_WIRE.md`,
//! "Headers"): the operation (the whole call, resumes included), each attempt, the Google front
//! end's and the API front end's `server-timing` entries.

use serde::{Deserialize, Serialize};

use super::{IterationRecord, RunReport};
use crate::stats::{self, Summary};

/// A figure beside the parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// From sending the request to the first response bytes.
    TimeToFirstByte,
    /// The server's work that ran beside the client's decode and own work.
    Overlap,
    /// The query latency: the server's elapsed time from the query statistics.
    ServerElapsed,
    /// The server's CPU time from the query statistics.
    ServerCpu,
    /// Of the server's elapsed time, its wait on the client to read (the local instance).
    ServerWaitOnClient,
    /// Of the server's elapsed time, its wait in its queue for a query thread (the local
    /// instance's queue model).
    ServerQueue,
    /// `operation_latencies`: the first request sent to the last byte of the last response.
    Operation,
    /// `attempt_latencies`: one RPC attempt (every attempt of every iteration is a sample).
    Attempt,
    /// `gfe_latencies`: the `gfet4t7` server-timing entry.
    Gfe,
    /// `afe_latencies`: the `afe` server-timing entry (only sent to calls that opt in).
    Afe,
}

impl Figure {
    /// Every figure, in the order reports show them.
    pub const ALL: [Figure; 10] = [
        Figure::TimeToFirstByte,
        Figure::Overlap,
        Figure::ServerElapsed,
        Figure::ServerCpu,
        Figure::ServerWaitOnClient,
        Figure::ServerQueue,
        Figure::Operation,
        Figure::Attempt,
        Figure::Gfe,
        Figure::Afe,
    ];

    /// Its name: Google's metric names for its latency points, words for the rest.
    pub fn name(self) -> &'static str {
        match self {
            Figure::TimeToFirstByte => "time to first byte",
            Figure::Overlap => "overlap (server beside client)",
            Figure::ServerElapsed => "server elapsed (query latency)",
            Figure::ServerCpu => "server CPU",
            Figure::ServerWaitOnClient => "server's wait on the client",
            Figure::ServerQueue => "server's queue (of its elapsed time)",
            Figure::Operation => "operation_latencies",
            Figure::Attempt => "attempt_latencies",
            Figure::Gfe => "gfe_latencies",
            Figure::Afe => "afe_latencies",
        }
    }

    /// Whether it is one of Google's latency points (the official clients' metrics).
    pub fn is_google_point(self) -> bool {
        matches!(
            self,
            Figure::Operation | Figure::Attempt | Figure::Gfe | Figure::Afe | Figure::ServerElapsed
        )
    }

    /// Its samples in one iteration, in milliseconds (an attempt's: one per attempt).
    pub fn samples(self, record: &IterationRecord) -> Vec<f64> {
        match self {
            Figure::TimeToFirstByte => record.query.ttfb_ms.into_iter().collect(),
            Figure::Overlap => record.accounting().overlap_ms.into_iter().collect(),
            Figure::ServerElapsed => record.query.server_elapsed_ms.into_iter().collect(),
            Figure::ServerCpu => record.query.server_cpu_ms.into_iter().collect(),
            Figure::ServerWaitOnClient => record.query.server_client_wait_ms.into_iter().collect(),
            Figure::ServerQueue => record.query.server_queue_ms.into_iter().collect(),
            Figure::Operation => record.google.operation_ms.into_iter().collect(),
            Figure::Attempt => record.google.attempt_ms.clone(),
            Figure::Gfe => record.google.gfe_ms.into_iter().collect(),
            Figure::Afe => record.google.afe_ms.into_iter().collect(),
        }
    }
}

/// A summary of each figure over `records`, in [`Figure::ALL`] order, leaving out figures
/// without a measurement.
pub fn figure_summaries(records: &[&IterationRecord]) -> Vec<(Figure, Summary)> {
    Figure::ALL
        .into_iter()
        .filter_map(|point| {
            let samples: Vec<f64> = records.iter().flat_map(|r| point.samples(r)).collect();
            Some((point, stats::summarize(&samples)?))
        })
        .collect()
}

impl RunReport {
    /// [`figure_summaries`] over the timed iterations.
    pub fn figures(&self) -> Vec<(Figure, Summary)> {
        figure_summaries(&self.timed().collect::<Vec<_>>())
    }

    /// Google's attempt count over the timed iterations that counted their attempts: (attempts,
    /// operations); `None` when none did (older reports).
    pub fn attempt_count(&self) -> Option<(u64, u64)> {
        let counted: Vec<u32> = self.timed().filter_map(|r| r.google.attempts).collect();
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
    fn every_attempt_is_a_sample_and_unmeasured_figures_are_left_out() {
        let mut report = RunReport::with_totals("r", &[10.0, 20.0]);
        report.iterations[0].google.operation_ms = Some(9.0);
        report.iterations[0].google.attempts = Some(2);
        report.iterations[0].google.attempt_ms = vec![3.0, 6.0];
        report.iterations[1].google.operation_ms = Some(19.0);
        report.iterations[1].google.attempts = Some(1);
        report.iterations[1].google.attempt_ms = vec![19.0];
        report.iterations[1].google.afe_ms = Some(1.5);
        let points = report.figures();
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
