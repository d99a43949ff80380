//! ExecuteSql, and what every query request goes through: its checks, cheapest and most hostile
//! first (SQL size, session, resume token, then parameters), its start on a query thread against
//! the concurrency cap, and a unary answer built as bytes within its size limit.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;
use tonic::{Request, Response, Status};

use super::commit::transaction_tag;
use super::request::{params, request_key};
use super::{LocalSpanner, caller, deadline_of, dml};
use crate::proto::google::spanner::v1 as pb;
use crate::server::control::{GoneOnDrop, Interrupt};
use crate::server::encoded::{EncodedResultSet, ResultSetWriter};
use crate::server::knobs::KnobSettings;
use crate::server::link::Link;
use crate::server::query::{self, QuerySpec};
use crate::server::result_stats::{Optimizer, Report, Waits};
use crate::server::sqlite::sys_tables::{self, SysTables};
use crate::server::stream::builder::{self, ResumePoint, TokenStamp};
use crate::server::stream::live;
use crate::server::stream::sink::{Output, QueryEvent};
use crate::server::txn::sys_stats::{self, Window};
use crate::wire::Field;

pub(super) async fn execute_sql(
    spanner: &LocalSpanner,
    request: Request<pb::ExecuteSqlRequest>,
) -> Result<Response<EncodedResultSet>, Status> {
    let begun = Instant::now();
    if let Some(tap) = spanner.watching() {
        tap.request(begun, false);
    }
    let knobs = spanner.knobs.get();
    let deadline = deadline_of(&request);
    let r = request.get_ref();
    if let Some(in_txn) = spanner.read_write_selected(
        &r.session,
        (
            r.transaction.as_ref(),
            transaction_tag(r.request_options.as_ref()),
        ),
        caller(&request).as_ref(),
        &knobs,
    )? {
        let in_txn = in_txn.hinted(request.extensions());
        return dml::execute_sql(spanner, r, in_txn, &knobs).await;
    }
    let prepared = spanner.prepare(request.get_ref(), caller(&request).as_ref(), &knobs)?;
    let started = spanner
        .start_query(prepared.spec.clone(), &knobs, deadline)
        .await?;
    spanner
        .collect(started, &prepared, knobs.max_unary_result_bytes, begun)
        .await
        .map(Response::new)
}

impl LocalSpanner {
    /// Everything a query request needs checked before it runs, cheapest and most hostile first:
    /// the SQL's size, the session, the resume token, then the parameters.
    pub(super) fn prepare(
        &self,
        request: &pb::ExecuteSqlRequest,
        via: Option<&Arc<Link>>,
        knobs: &KnobSettings,
    ) -> Result<Prepared, Status> {
        use pb::execute_sql_request::QueryMode;
        if request.sql.len() as u64 > knobs.max_sql_bytes {
            return Err(Status::invalid_argument(format!(
                "the SQL text is {} bytes, more than the {} allowed (max_sql_bytes)",
                request.sql.len(),
                knobs.max_sql_bytes
            )));
        }
        self.sessions.touch(&request.session, via, knobs)?;
        let resume = if request.resume_token.is_empty() {
            None
        } else {
            let point = ResumePoint::decode(&request.resume_token)
                .map_err(|e| Status::invalid_argument(e.to_string()))?;
            Some(point)
        };
        let transaction = self.transaction_for_query(request, knobs)?;
        let mode = QueryMode::try_from(request.query_mode).map_err(|_| {
            Status::invalid_argument(format!("unknown query mode {}", request.query_mode))
        })?;
        let request_key = request_key(request);
        if resume.is_some_and(|point| point.stamp.request_key != request_key) {
            return Err(Status::invalid_argument(
                "the resume token belongs to another query",
            ));
        }
        let partition = self.partition_of(request)?;
        if partition.is_some() && mode != QueryMode::Normal {
            return Err(Status::invalid_argument(
                "Query modes returning query plan and profile information cannot be used with \
                 partitioned queries.",
            ));
        }
        let optimizer = Optimizer::of(request.query_options.as_ref())?;
        let spec = QuerySpec {
            sql: request.sql.clone(),
            params: params(request.params.as_ref(), &request.param_types)?,
            limits: knobs.sql_limits(),
            execute: mode != QueryMode::Plan,
            explain: matches!(
                mode,
                QueryMode::Plan | QueryMode::Profile | QueryMode::WithPlanAndStats
            ),
            profile: mode == QueryMode::Profile,
            plain_scans: true,
            output: Output::Values,
            partition,
            sys: self.sys_tables(&request.sql, knobs),
        };
        let stamp = TokenStamp {
            max_bytes: resume.map_or_else(
                || u32::try_from(knobs.max_message_bytes).unwrap_or(u32::MAX),
                |r| r.stamp.max_bytes,
            ),
            request_key,
            stream: self.unique(),
            shape: resume.map_or(knobs.shape, |r| r.stamp.shape),
        };
        let report = Report {
            sql: spec.sql.clone(),
            with_stats: mode != QueryMode::Normal,
            explain: spec.explain,
            // Operator-level statistics are PROFILE's alone; WITH_PLAN_AND_STATS returns the plan
            // and the overall statistics, as production does.
            profile: mode == QueryMode::Profile,
            optimizer,
            data_boost: request.data_boost_enabled && !request.partition_token.is_empty(),
        };
        Ok(Prepared {
            spec,
            transaction,
            report,
            resume,
            stamp,
        })
    }

    /// Starts the query, after its wait for a thread in the queue model (when on), if a slot is
    /// free, and waits for its columns (or its error, which is then the call's status) and the
    /// end of its service. Dropping what it returns, or this future, tells the query its client
    /// left.
    pub(super) async fn start_query(
        &self,
        spec: QuerySpec,
        knobs: &KnobSettings,
        deadline: Option<Instant>,
    ) -> Result<Started, Status> {
        // The queue model's line comes first: a query waiting for a thread holds no slot.
        let turn = self.queue.admit(knobs, deadline).await?;
        let queued = turn.as_ref().map(|t| t.queued);
        let slot = self
            .slots
            .take(knobs.max_concurrent_queries)
            .ok_or_else(|| {
                Status::resource_exhausted(format!(
                    "the local instance is running {} queries, its limit (max_concurrent_queries): \
                 try again when one has finished",
                    self.slots.running()
                ))
            })?;
        let interrupt = Interrupt::new(deadline, Arc::clone(&self.shutdown));
        let gone = GoneOnDrop(Arc::clone(&interrupt));
        let (tx, mut events) = mpsc::channel(8);
        query::spawn(Arc::clone(&self.db), spec, tx, interrupt, Some(slot))
            .map_err(|e| Status::resource_exhausted(format!("cannot start a query thread: {e}")))?;
        let first = events.recv().await;
        if let Some(turn) = turn {
            // Its service: the query's own start counts in it.
            turn.serve().await;
        }
        match first {
            Some(Ok(QueryEvent::Columns(columns))) => Ok(Started {
                columns,
                events,
                gone,
                queued,
            }),
            Some(Err(status)) => Err(status),
            Some(Ok(_)) | None => Err(Status::internal(
                "the query ended before naming its columns",
            )),
        }
    }

    /// Collects a unary answer as bytes, as its rows arrive, refusing it (and stopping its query)
    /// as soon as its values pass the unary size limit.
    async fn collect(
        &self,
        started: Started,
        prepared: &Prepared,
        max_bytes: u64,
        begun: Instant,
    ) -> Result<EncodedResultSet, Status> {
        let Started {
            columns,
            mut events,
            gone: _gone,
            queued,
        } = started;
        let mut answer = ResultSetWriter::new(&prepared.metadata(&columns), columns.len());
        let mut bytes = 0u64;
        loop {
            match events.recv().await {
                Some(Ok(QueryEvent::Rows(values))) => {
                    for body in values.iter() {
                        bytes += body.len() as u64;
                        if bytes > max_bytes {
                            return Err(too_large(max_bytes));
                        }
                        answer.push_value(body);
                    }
                }
                Some(Ok(QueryEvent::Done(totals))) => {
                    let waits = Waits {
                        client: None,
                        queue: queued,
                    };
                    let stats = prepared.report.stats(&totals, begun, bytes, waits);
                    return Ok(answer.finish(stats.as_ref()));
                }
                // Values were asked for: nothing else comes.
                Some(Ok(
                    QueryEvent::Columns(_) | QueryEvent::Messages(_) | QueryEvent::Built(_),
                )) => {}
                Some(Err(status)) => return Err(status),
                None => return Err(Status::internal("the query stopped without finishing")),
            }
        }
    }

    /// SPANNER_SYS's statistics tables for a query whose SQL names SPANNER_SYS, from the lock
    /// journal now (None, and nothing computed, for any other query).
    fn sys_tables(&self, sql: &str, knobs: &KnobSettings) -> Option<Arc<SysTables>> {
        if !sys_tables::mentioned(sql) {
            return None;
        }
        let schema = self.db.schema();
        let spelled = |lower: &str| {
            schema
                .table(lower)
                .map_or_else(|| lower.to_owned(), |t| t.name.clone())
        };
        // Read before the journal: the lock table's clock takes the lock the journal's read holds.
        let window = Window::read(self.locks.now(), knobs.stats_interval());
        let tables = self
            .locks
            .journal(|journal| sys_stats::sys_tables(sql, journal, window, &spelled));
        Some(Arc::new(tables))
    }
}

/// A query that has named its columns.
pub(super) struct Started {
    pub(super) columns: Vec<Field>,
    pub(super) events: live::Events,
    pub(super) gone: GoneOnDrop,
    /// Its wait in the queue model for a query thread, when the model is on.
    pub(super) queued: Option<std::time::Duration>,
}

/// A checked query request.
pub(super) struct Prepared {
    pub(super) spec: QuerySpec,
    pub(super) transaction: Option<pb::Transaction>,
    pub(super) report: Report,
    pub(super) resume: Option<ResumePoint>,
    pub(super) stamp: TokenStamp,
}

impl Prepared {
    fn metadata(&self, columns: &[Field]) -> pb::ResultSetMetadata {
        builder::metadata(columns, self.transaction.clone())
    }
}

fn too_large(max_bytes: u64) -> Status {
    Status::failed_precondition(format!(
        "Result set too large. Result sets larger than {max_bytes} bytes can only be yielded \
         through the streaming API (ExecuteStreamingSql); see max_unary_result_bytes"
    ))
}
