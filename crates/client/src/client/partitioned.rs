//! One iteration of a partitioned read: PartitionQuery in a read-only transaction that outlives the
//! call, then every partition streamed at once over the session's channel, each with its own decoder,
//! resumes and row-count check.
//!
//! The partitions are polled by one task, so their messages are decoded one at a time and the
//! iteration's parts add up as for a single stream: wire and row decode and the client's own work
//! are the sums over the partitions, the PartitionQuery call is a part of its own, and the wait is
//! the rest of the wall time (when no partition had a message to decode, the client was waiting on
//! the transport; a partition's back-off ran beside the others' waits, so it is in the wait).

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use tonic::transport::Channel;

use super::headers::{IterationHeaders, RequestId};
use super::iteration::{Decoding, run_iteration};
use super::options::{Partitioned, Staleness};
use super::resume::ResumePolicy;
use super::timeouts::Timeouts;
use super::timing::{IterationError, IterationTiming, PartitionTiming};
use super::transaction::read_only;
use super::{ClientError, answered};
use crate::proto::google::spanner::v1 as pb;
use crate::proto::google::spanner::v1::spanner_client::SpannerClient;
use crate::report::Lane;
use crate::wire::{QueryStats, ResultStats, RowsView, StreamCounters};
use futures_util::StreamExt as _;

/// Partitions streamed at once, at most; the others wait for one of them to end.
pub const CONCURRENT_PARTITIONS: usize = 64;
/// Partitions a read takes from the server, at most (a server that returns more is refused).
pub const MAX_PARTITIONS: usize = 10_000;

/// The channel, headers and limits a partitioned iteration's calls use.
#[derive(Debug)]
pub struct PartitionCall<'a> {
    /// The session's channel.
    pub channel: Channel,
    /// The endpoint, for errors.
    pub endpoint: &'a str,
    /// The headers of every call (a request id each).
    pub headers: &'a IterationHeaders<'a>,
    /// The limits.
    pub timeouts: Timeouts,
}

/// Runs `template` (a prepared query) as a partitioned read and times it.
/// The partitions' transaction reads at `staleness` (strong when `None`).
pub async fn run(
    call: PartitionCall<'_>,
    template: &pb::ExecuteSqlRequest,
    (partitioned, staleness): (Partitioned, Option<Staleness>),
    policy: ResumePolicy,
    decoding: Decoding<'_>,
) -> Result<IterationTiming, IterationError> {
    if decoding.recording.is_some() {
        return Err(IterationError::Unsupported(
            "a partitioned read is several streams; record the plain query instead",
        ));
    }
    let started = Instant::now();
    let staleness = staleness.unwrap_or(Staleness::Strong);
    let (transaction, tokens, partition_id) =
        partition(&call, template, partitioned, staleness).await?;
    let partition_call = started.elapsed();
    let requests: Vec<pb::ExecuteSqlRequest> = tokens
        .into_iter()
        .map(|partition_token| pb::ExecuteSqlRequest {
            transaction: Some(pb::TransactionSelector {
                selector: Some(pb::transaction_selector::Selector::Id(transaction.clone())),
            }),
            partition_token,
            data_boost_enabled: partitioned.data_boost,
            ..template.clone()
        })
        .collect();
    let Decoding {
        decoder,
        on_rows,
        kept_messages,
        ..
    } = decoding;
    let kept_each = kept_messages / requests.len().max(1);
    // A mutex, not a RefCell: the rows' callback is `Send`, so a load test's requests can run on
    // any worker. The partitions are polled by one task, so it is never contended.
    let shared = Mutex::new(on_rows);
    let mut sinks: Vec<_> = requests
        .iter()
        .map(|_| {
            |rows: RowsView<'_>, bytes: usize| {
                (shared.lock().unwrap_or_else(PoisonError::into_inner))(rows, bytes)
            }
        })
        .collect();
    let deadline = started + call.timeouts.iteration;
    let ended = tokio::sync::Notify::new();
    // Collected before they are awaited: a future that held the mapping closure across the await
    // could not be proved `Send` (the compiler's higher-ranked lifetimes), and a load test spawns
    // its requests on a multi-threaded runtime.
    let streams: Vec<_> = requests
        .iter()
        .zip(sinks.iter_mut())
        .map(|(request, sink)| {
            let stream = OnePartition {
                call: &call,
                request,
                policy,
                deadline,
                decoder,
                kept_messages: kept_each,
            };
            stream.read(sink, &ended)
        })
        .collect();
    let results: Vec<_> = futures_util::stream::iter(streams)
        .buffered(CONCURRENT_PARTITIONS)
        .collect()
        .await;
    let of = results.len();
    let mut timings = Vec::with_capacity(of);
    for (index, result) in results.into_iter().enumerate() {
        timings.push(result.map_err(|error| IterationError::Partition {
            index,
            of,
            error: Box::new(error),
        })?);
    }
    let mut out = combine(started.elapsed(), partition_call, timings);
    out.began = Some(started);
    out.request_id = Some(partition_id);
    Ok(out)
}

/// The longest a partition refused for want of room waits before it asks again (unless another
/// partition ends first).
const MOST_BACK_OFF: Duration = Duration::from_secs(1);

/// One partition's stream, as the iteration reads it.
struct OnePartition<'a> {
    call: &'a PartitionCall<'a>,
    request: &'a pb::ExecuteSqlRequest,
    policy: ResumePolicy,
    deadline: Instant,
    decoder: crate::wire::DecoderKind,
    kept_messages: usize,
}

impl OnePartition<'_> {
    /// Streams the partition into `sink`. A server runs so many queries at once (the local
    /// instance 32) and refuses the next with RESOURCE_EXHAUSTED: a partition refused before a
    /// single message came asks again once another partition has `ended` (or after a back-off),
    /// within the iteration's limit, so a read of more partitions than the server runs at once
    /// takes its turns instead of failing.
    async fn read(
        self,
        sink: &mut (dyn FnMut(RowsView<'_>, usize) + Send),
        ended: &tokio::sync::Notify,
    ) -> Result<IterationTiming, IterationError> {
        let mut back_off = Duration::from_millis(20);
        loop {
            let mut heard = false;
            let mut counting = |rows: RowsView<'_>, bytes: usize| {
                heard = true;
                sink(rows, bytes);
            };
            // A partition started late gets what is left of the iteration's limit.
            let left = self.deadline.saturating_duration_since(Instant::now());
            let timeouts = Timeouts {
                iteration: left,
                ..self.call.timeouts
            };
            let result = run_iteration(
                self.call.channel.clone(),
                self.request,
                self.call.headers.next_call(),
                self.policy,
                timeouts,
                Decoding {
                    kept_messages: self.kept_messages,
                    ..Decoding::new(self.decoder, &mut counting)
                },
            )
            .await;
            let refused = matches!(&result, Err(IterationError::Status(s))
                if s.code() == tonic::Code::ResourceExhausted);
            if !refused || heard || left <= back_off {
                ended.notify_waiters();
                return result;
            }
            let _ = tokio::time::timeout(back_off, ended.notified()).await;
            back_off = (back_off * 2).min(MOST_BACK_OFF);
        }
    }
}

/// PartitionQuery in a new read-only transaction at `staleness`: the transaction's id, the
/// partitions' tokens and the call's request id.
async fn partition(
    call: &PartitionCall<'_>,
    template: &pb::ExecuteSqlRequest,
    partitioned: Partitioned,
    staleness: Staleness,
) -> Result<(Vec<u8>, Vec<Vec<u8>>, RequestId), IterationError> {
    let request = pb::PartitionQueryRequest {
        session: template.session.clone(),
        transaction: Some(pb::TransactionSelector {
            selector: Some(pb::transaction_selector::Selector::Begin(read_only(
                staleness,
            ))),
        }),
        sql: template.sql.clone(),
        params: template.params.clone(),
        param_types: template.param_types.clone(),
        partition_options: Some(pb::PartitionOptions {
            partition_size_bytes: 0,
            max_partitions: partitioned.max_partitions.map_or(0, i64::from),
        }),
    };
    let mut message = tonic::Request::new(request);
    let headers = call.headers.next_call();
    *message.metadata_mut() = headers.attempt(1);
    let mut client = SpannerClient::new(call.channel.clone());
    let response = answered(
        call.endpoint,
        "PartitionQuery",
        call.timeouts.call,
        client.partition_query(message),
    )
    .await?
    .map_err(IterationError::Status)?
    .into_inner();
    let transaction = response
        .transaction
        .map(|t| t.id)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            IterationError::Client(ClientError::Unexpected {
                call: "PartitionQuery",
                detail: "no transaction in the answer".into(),
            })
        })?;
    if response.partitions.is_empty() || response.partitions.len() > MAX_PARTITIONS {
        return Err(IterationError::Client(ClientError::Unexpected {
            call: "PartitionQuery",
            detail: format!(
                "{} partitions in the answer (1 to {MAX_PARTITIONS} are read)",
                response.partitions.len()
            ),
        }));
    }
    Ok((
        transaction,
        response
            .partitions
            .into_iter()
            .map(|p| p.partition_token)
            .collect(),
        headers.id(),
    ))
}

/// The partitions' wait on the client as one figure beside their longest elapsed time: that
/// elapsed time less the longest work of any partition (each one's elapsed less its wait), so
/// that the read's work is its longest partition's; `None` unless every partition reported both.
fn combined_client_wait(each: &[&QueryStats]) -> Option<Duration> {
    let elapsed = each.iter().map(|s| s.elapsed).collect::<Option<Vec<_>>>()?;
    let work = each
        .iter()
        .map(|s| Some(s.elapsed?.saturating_sub(s.client_wait?)))
        .collect::<Option<Vec<_>>>()?;
    let longest = elapsed.into_iter().max()?;
    Some(longest.saturating_sub(work.into_iter().max()?))
}

/// The iteration's figures from its partitions'.
fn combine(
    total: Duration,
    partition_call: Duration,
    timings: Vec<IterationTiming>,
) -> IterationTiming {
    let mut out = IterationTiming {
        total,
        ..IterationTiming::default()
    };
    let mut counters = StreamCounters::default();
    let origin = timings.iter().filter_map(|t| t.began).min();
    out.attempts.push(partition_call);
    for (number, t) in (1u32..).zip(&timings) {
        out.wire_decode += t.wire_decode;
        out.row_decode += t.row_decode;
        out.wire_decode_cpu += t.wire_decode_cpu;
        out.row_decode_cpu += t.row_decode_cpu;
        out.descheduled += t.descheduled;
        out.client_work += t.client_work;
        out.client_work_cpu += t.client_work_cpu;
        // Each lane's offsets count from its own start; its origin places it in the iteration,
        // which began with the PartitionQuery call.
        let lane_origin = match (origin, t.began) {
            (Some(first), Some(began)) => partition_call + began.saturating_duration_since(first),
            _ => partition_call,
        };
        out.lanes.extend(t.lanes.iter().map(|lane| Lane {
            name: format!("partition {number}"),
            origin_us: u64::try_from(lane_origin.as_micros()).unwrap_or(u64::MAX),
            ..lane.clone()
        }));
        out.attempts.extend(&t.attempts);
        if let Some(operation) = t.operation {
            let ended = lane_origin + operation;
            out.operation = Some(
                out.operation
                    .map_or(ended, |seen: Duration| seen.max(ended)),
            );
        }
        out.rows += t.rows;
        out.resumes += t.resumes;
        let c = t.counters;
        counters.messages += c.messages;
        counters.values += c.values;
        counters.chunked_values += c.chunked_values;
        counters.wire_bytes += c.wire_bytes;
        counters.rows += c.rows;
        counters.resume_tokens += c.resume_tokens;
        if let Some(first) = t.ttfb {
            let at = partition_call + first;
            out.ttfb = Some(out.ttfb.map_or(at, |seen: Duration| seen.min(at)));
        }
        if out.columns.is_none() {
            out.columns.clone_from(&t.columns);
        }
    }
    // The statistics of the whole read, when every partition returned its own: the partitions ran
    // at once, so the elapsed time is the longest one's; CPU time and rows add up. A total from
    // some partitions only would be a wrong total, so any gap leaves the figure unknown.
    let each: Option<Vec<&QueryStats>> = timings
        .iter()
        .map(|t| t.stats.as_ref().map(|s| &s.query_stats))
        .collect();
    let stats = each.map(|each| {
        // Counts from the network: a sum past u64 is unknown, not an overflow.
        let all = |f: &dyn Fn(&QueryStats) -> Option<u64>| -> Option<u64> {
            each.iter().try_fold(0u64, |sum, s| sum.checked_add(f(s)?))
        };
        let durations = || each.iter().map(|s| s.elapsed).collect::<Option<Vec<_>>>();
        QueryStats {
            elapsed: durations().and_then(|d| d.into_iter().max()),
            client_wait: combined_client_wait(&each),
            cpu_time: each.iter().map(|s| s.cpu_time).sum(),
            rows_returned: all(&|s| s.rows_returned),
            rows_scanned: all(&|s| s.rows_scanned),
            optimizer_version: each.first().and_then(|s| s.optimizer_version.clone()),
            ..QueryStats::default()
        }
    });
    out.server_timing = timings.first().map(|t| t.server_timing).unwrap_or_default();
    out.counters = counters;
    out.stats = stats.map(|query_stats| ResultStats {
        query_stats,
        ..ResultStats::default()
    });
    out.partition_query = Some(partition_call);
    out.network =
        total.saturating_sub(out.wire_decode + out.row_decode + out.client_work + partition_call);
    out.partitions = timings
        .iter()
        .map(|t| PartitionTiming {
            total: t.total,
            rows: t.rows,
            messages: t.counters.messages,
            wire_bytes: t.counters.wire_bytes,
            resumes: t.resumes,
            server: t.stats.as_ref().and_then(|s| s.query_stats.elapsed),
        })
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two partitions' row counts from the network that add past u64 once
    /// panicked (an overflow in debug builds); the sum is unknown instead.
    #[test]
    fn partition_counts_that_add_past_u64_are_unknown() {
        let with_rows = |rows: u64| IterationTiming {
            stats: Some(ResultStats {
                query_stats: QueryStats {
                    rows_returned: Some(rows),
                    rows_scanned: Some(2),
                    ..QueryStats::default()
                },
                ..ResultStats::default()
            }),
            ..IterationTiming::default()
        };
        let out = combine(
            Duration::from_millis(3),
            Duration::from_millis(1),
            vec![with_rows(u64::MAX), with_rows(1)],
        );
        let stats = out.stats.expect("both partitions returned statistics");
        assert_eq!(stats.query_stats.rows_returned, None);
        assert_eq!(stats.query_stats.rows_scanned, Some(4));
    }
}
