//! What the last message of an answer reports, by query mode, and the `ResultSetStats` it builds
//! from a finished query's totals: `query_stats` (`query_stats.rs`) and the plan (`plan_nodes.rs`).

use super::optimizer::Optimizer;
use super::plan_nodes::plan_nodes;
use super::query_stats::{format_duration, query_stats, string};
use super::totals::QueryTotals;
use crate::proto::google::spanner::v1 as pb;
use crate::wire::result_stats::{CLIENT_WAIT_TIME, QUEUE_WAIT_TIME};

/// What the last message of an answer reports, by query mode: statistics (WITH_STATS, PROFILE,
/// WITH_PLAN_AND_STATS), a plan (PLAN, PROFILE, WITH_PLAN_AND_STATS), or nothing (NORMAL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The query's text, which the statistics quote.
    pub sql: String,
    /// Whether `query_stats` is returned.
    pub with_stats: bool,
    /// Whether the plan is returned.
    pub explain: bool,
    /// Whether the plan carries execution statistics (PROFILE).
    pub profile: bool,
    /// The optimizer the query asked for.
    pub optimizer: Optimizer,
    /// Whether the query is a partition read with Data Boost.
    pub data_boost: bool,
}

/// The local instance's own waits inside a query's elapsed time, reported beside Spanner's
/// statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Waits {
    /// A streamed query's wait for its client to read.
    pub client: Option<std::time::Duration>,
    /// Its wait in the queue model for a query thread (when the model is on).
    pub queue: Option<std::time::Duration>,
}

impl Report {
    /// The statistics of a finished query that started at `started` and returned `bytes`, with
    /// the local instance's own waits inside its elapsed time.
    pub fn stats(
        &self,
        totals: &QueryTotals,
        started: std::time::Instant,
        bytes: u64,
        waits: Waits,
    ) -> Option<pb::ResultSetStats> {
        if !self.with_stats && !self.explain {
            return None;
        }
        let elapsed = started.elapsed();
        Some(pb::ResultSetStats {
            query_plan: totals.plan.as_ref().map(|steps| {
                plan_nodes(
                    steps,
                    totals.program,
                    &totals.targets,
                    self.profile.then_some(totals),
                )
            }),
            query_stats: self.with_stats.then(|| {
                let mut stats = query_stats(&self.sql, totals, elapsed, bytes);
                // Not Spanner figures: the local instance's wait on the client, so that a
                // profiler can tell its own work from a slow reader, and its queue's, so that
                // queueing is told from work.
                for (key, waited) in [
                    (CLIENT_WAIT_TIME, waits.client),
                    (QUEUE_WAIT_TIME, waits.queue),
                ] {
                    if let Some(waited) = waited {
                        let waited = format_duration(waited.min(elapsed));
                        stats.fields.insert(key.to_owned(), string(waited));
                    }
                }
                self.name_the_optimizer(&mut stats);
                stats
            }),
            row_count: None,
        })
    }
}

impl Report {
    /// The optimizer version that ran and the statistics package it used, as production's
    /// `query_stats` name them; and Data Boost, when a partition read used it.
    fn name_the_optimizer(&self, stats: &mut prost_types::Struct) {
        let mut set = |key: &str, value: &str| {
            stats.fields.insert(key.to_owned(), string(value));
        };
        set("optimizer_version", &self.optimizer.version);
        if let Some(package) = &self.optimizer.statistics_package {
            set("optimizer_statistics_package", package);
        }
        if self.data_boost {
            set("data_boost_enabled", "true");
        }
    }
}
