//! Statements in a read-write transaction: ExecuteSql and ExecuteStreamingSql whose selector
//! begins one (inline begin) or names one, and ExecuteBatchDml. Each statement runs on the
//! read-write connection after its transaction's earlier DML (`txn/write.rs`), one at a time
//! per transaction. A DML's `seqno` names it: the same request with a seqno already handled gets
//! the same answer again without running, and another DML reusing that seqno is refused (0 is a
//! seqno like any other: protobuf cannot tell it from none, and the official Python client starts
//! there). A DML's answer carries `stats.row_count_exact` (in the last
//! PartialResultSet of a stream), and in WITH_STATS and PROFILE modes any statement's answer
//! carries `query_stats` measured on the read-write connection, its wait for the write lock as
//! `lock_wait_time` (PLAN is refused). On a multiplexed session every answer carries the
//! transaction's next precommit token (the last PartialResultSet's, ResultSet's and
//! ExecuteBatchDmlResponse's). An inline begin's transaction id is in the first message's
//! `metadata.transaction`.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use prost::Message as _;
use tokio::sync::mpsc;
use tonic::{Response, Status};

use super::commit::{is_read_write, retry_delay, transaction_tag, write_bounds};
use super::request::{params, query_key, request_key};
use super::{LocalSpanner, caller};
use crate::proto::google::spanner::v1 as pb;
use crate::server::encoded::{EncodedPartialResultSet, EncodedResultSet, ResultSetWriter};
use crate::server::knobs::KnobSettings;
use crate::server::result_stats::query_stats::{StatementFigures, statement_stats};
use crate::server::stream::budget::SendBudget;
use crate::server::stream::builder::{self, MessageBuilder, TokenStamp};
use crate::server::stream::live;
use crate::server::txn::aborted::{retry_delay_for, with_retry_info};
use crate::server::txn::lock_key::LockMode;
use crate::server::txn::locking::{self, Taken};
use crate::server::txn::store::{Ended, Handled, ReadWrite, State};
use crate::server::txn::write::{Answer, TxnStatement, abort_cause};

/// The read-write transaction a request's statement runs in, whether the request began it, and
/// the mode its pessimistic reads lock in.
pub(super) struct InTxn {
    txn: Arc<ReadWrite>,
    began: bool,
    read_mode: LockMode,
}

/// Marks a query request that is a Read with lock hint EXCLUSIVE (`read.rs` puts it in the
/// request's extensions): in a pessimistic read-write transaction its rows are locked Exclusive
/// rather than ReaderShared. A query without it reads as every statement does.
#[derive(Debug, Clone, Copy)]
pub(super) struct ExclusiveRead;

impl InTxn {
    /// The same, its pessimistic reads locking Exclusive when `extensions` mark the request an
    /// [`ExclusiveRead`] (ignored where reads are lock-free).
    pub(super) fn hinted(mut self, extensions: &tonic::Extensions) -> InTxn {
        if extensions.get::<ExclusiveRead>().is_some() {
            self.read_mode = LockMode::Exclusive;
        }
        self
    }

    /// The transaction to report in the answer's first metadata: the one the request began.
    fn reported(&self) -> Option<pb::Transaction> {
        self.began.then(|| pb::Transaction {
            id: self.txn.id.clone(),
            ..Default::default()
        })
    }
}

impl LocalSpanner {
    /// The read-write transaction `selector` begins (tagged `tag`) or names in `session`, if it
    /// is one (else the request takes the read-only path). Cheap for every other selector: a begin's mode is
    /// looked at, an id looked up.
    pub(super) fn read_write_selected(
        &self,
        session: &str,
        (selector, tag): (Option<&pb::TransactionSelector>, &str),
        via: Option<&Arc<crate::server::link::Link>>,
        knobs: &KnobSettings,
    ) -> Result<Option<InTxn>, Status> {
        use pb::transaction_selector::Selector;
        match selector.and_then(|s| s.selector.as_ref()) {
            Some(Selector::Begin(options)) if is_read_write(options) => {
                let session = self.sessions.touch(session, via, knobs)?;
                let txn = self.begin_read_write(&session, options, tag, knobs)?;
                Ok(Some(InTxn {
                    txn,
                    began: true,
                    read_mode: LockMode::ReaderShared,
                }))
            }
            Some(Selector::Id(id)) if !id.is_empty() => match self.txns.get(id) {
                Some(_) => {
                    self.sessions.touch(session, via, knobs)?;
                    let txn = self.read_write(session, id)?;
                    Ok(Some(InTxn {
                        txn,
                        began: false,
                        read_mode: LockMode::ReaderShared,
                    }))
                }
                None => Ok(None),
            },
            _ => Ok(None),
        }
    }
}

/// `ResultSet.precommit_token` (5), after its statistics.
const RESULT_SET_PRECOMMIT_TOKEN: u32 = 5;

/// ExecuteSql in a read-write transaction: the answer as one ResultSet, its precommit token
/// last on a multiplexed session.
pub(super) async fn execute_sql(
    spanner: &LocalSpanner,
    request: &pb::ExecuteSqlRequest,
    in_txn: InTxn,
    knobs: &KnobSettings,
) -> Result<Response<EncodedResultSet>, Status> {
    let begun = Instant::now();
    let ran = run_request(spanner, request, &in_txn, knobs).await?;
    let answer = &ran.answer;
    let metadata = builder::metadata(&answer.columns, in_txn.reported());
    let mut writer = ResultSetWriter::new(&metadata, answer.columns.len());
    for value in &answer.values {
        writer.push_value(value);
    }
    let stats = stats(&ran, request, begun);
    let mut result = writer.finish(stats.as_ref());
    if let Some(token) = &ran.token {
        let mut tail = Vec::with_capacity(token.encoded_len() + 4);
        prost::encoding::message::encode(RESULT_SET_PRECOMMIT_TOKEN, token, &mut tail);
        result.0.push(Bytes::from(tail));
    }
    Ok(with_waits(
        Response::new(result),
        &ran,
        has_query_stats(&stats),
    ))
}

/// Whether `stats` hold query statistics, where a statement's wait for locks is said; a
/// NORMAL-mode DML's hold only its row count.
fn has_query_stats(stats: &Option<pb::ResultSetStats>) -> bool {
    stats.as_ref().is_some_and(|s| s.query_stats.is_some())
}

/// `response` with the statement's wait for locks in its headers (`locking::put_waits`) when its
/// answer carries no query statistics to say it in (a Read's, a NORMAL-mode statement's, a
/// NORMAL-mode DML's with its row count only) and it waited.
fn with_waits<T>(mut response: Response<T>, ran: &Ran, stats: bool) -> Response<T> {
    if !stats && !ran.replayed {
        let answer = &ran.answer;
        locking::put_waits(
            response.metadata_mut(),
            answer.cost.lock_wait,
            &answer.lock_waits,
        );
    }
    response
}

/// ExecuteStreamingSql in a read-write transaction: the whole answer is known before the first
/// message (the statement ran under the write lock, which is not held while a client reads),
/// cut into PartialResultSets as a query's are, its statistics in the last.
pub(super) async fn execute_streaming_sql(
    spanner: &LocalSpanner,
    request: &pb::ExecuteSqlRequest,
    in_txn: InTxn,
    (knobs, deadline): (&KnobSettings, Option<Instant>),
) -> Result<Response<live::Response>, Status> {
    let begun = Instant::now();
    let ran = run_request(spanner, request, &in_txn, knobs).await?;
    let stamp = TokenStamp {
        max_bytes: u32::try_from(knobs.max_message_bytes).unwrap_or(u32::MAX),
        request_key: request_key(request),
        stream: spanner.unique(),
        shape: knobs.shape,
    };
    let stats = stats(&ran, request, begun);
    let with_stats = has_query_stats(&stats);
    let messages = messages(&ran, stats, in_txn.reported(), stamp);
    let (tx, rx) = mpsc::channel(messages.len().max(1));
    for message in messages {
        // The channel holds them all: nothing can be refused.
        let _ = tx.try_send(Ok(EncodedPartialResultSet(message)));
    }
    let budget = Arc::new(SendBudget::new(usize::MAX));
    let response = Response::new(live::Response::new(rx, deadline, None, budget));
    Ok(with_waits(response, &ran, with_stats))
}

/// The answer's PartialResultSets: values cut as a query's, statistics last (first in the
/// emulator's shape), and the precommit token in the last (a multiplexed session's).
fn messages(
    ran: &Ran,
    stats: Option<pb::ResultSetStats>,
    transaction: Option<pb::Transaction>,
    stamp: TokenStamp,
) -> Vec<Bytes> {
    let answer = &ran.answer;
    let metadata = builder::metadata(&answer.columns, transaction);
    let mut builder = MessageBuilder::new(metadata, stamp);
    let mut out = Vec::new();
    let width = answer.columns.len();
    if width > 0 {
        for row in answer.values.chunks(width) {
            for value in row {
                builder.push_encoded(value);
            }
            builder.end_row();
            out.extend(std::iter::from_fn(|| builder.pop()));
        }
    }
    if stamp.shape.stats_first() {
        out.extend(builder.finish(None));
        with_token(&mut out, ran.token.as_ref());
        if let (Some(stats), Some(first)) = (stats, out.first_mut()) {
            let mut message = first.to_vec();
            builder::append_stats(&mut message, &stats);
            *first = Bytes::from(message);
        }
    } else {
        out.extend(builder.finish(stats));
        with_token(&mut out, ran.token.as_ref());
    }
    out
}

/// Puts `token` in the last of `messages`, just finished (so ending with its `last` field),
/// before `last`, in field order; the builder itself, the read-only path's, is left alone.
fn with_token(messages: &mut [Bytes], token: Option<&pb::MultiplexedSessionPrecommitToken>) {
    use crate::wire::fields::{key, partial_result_set as field, wire_type};
    let (Some(token), Some(message)) = (token, messages.last_mut()) else {
        return;
    };
    let last = [key(field::LAST, wire_type::VARINT), 1];
    let mut bytes = Vec::with_capacity(message.len() + token.encoded_len() + 4);
    let body = message.strip_suffix(&last[..]);
    bytes.extend_from_slice(body.unwrap_or(message));
    prost::encoding::message::encode(field::PRECOMMIT_TOKEN, token, &mut bytes);
    if body.is_some() {
        bytes.extend_from_slice(&last);
    }
    *message = Bytes::from(bytes);
}

/// What a statement's answer reports: a DML's rows changed, exactly (in every mode), and in
/// WITH_STATS, PROFILE and WITH_PLAN_AND_STATS its `query_stats`: elapsed from its request's
/// arrival, its CPU and its wait for the write lock on the read-write connection (none for a
/// replay, which ran nothing), the rows and bytes it returned. No plan.
fn stats(ran: &Ran, request: &pb::ExecuteSqlRequest, begun: Instant) -> Option<pb::ResultSetStats> {
    use pb::execute_sql_request::QueryMode;
    let answer = &ran.answer;
    let with_stats = request.query_mode != QueryMode::Normal as i32;
    if !answer.dml && !with_stats {
        return None;
    }
    let width = answer.columns.len();
    let cost = (!ran.replayed).then_some(answer.cost);
    let figures = StatementFigures {
        elapsed: begun.elapsed(),
        cpu: cost.map(|c| c.cpu).unwrap_or_default(),
        rows: (answer.values.len().checked_div(width).unwrap_or(0)) as u64,
        bytes: answer.values.iter().map(|v| v.len() as u64).sum(),
        lock_wait: cost.map(|c| c.lock_wait),
        queue_wait: cost.map(|c| c.connection_wait),
    };
    Some(pb::ResultSetStats {
        query_plan: None,
        query_stats: with_stats.then(|| {
            let waits = if ran.replayed {
                &[][..]
            } else {
                &answer.lock_waits
            };
            statement_stats(&request.sql, &figures, waits)
        }),
        row_count: answer
            .dml
            .then_some(pb::result_set_stats::RowCount::RowCountExact(
                answer.row_count,
            )),
    })
}

/// A batch's statement's statistics: the rows it changed, exactly, as production's.
fn batch_stats(answer: &Answer) -> Option<pb::ResultSetStats> {
    answer.dml.then(|| pb::ResultSetStats {
        row_count: Some(pb::result_set_stats::RowCount::RowCountExact(
            answer.row_count,
        )),
        ..Default::default()
    })
}

/// A statement's answer, with what its request's answer carries besides.
struct Ran {
    answer: Answer,
    /// Whether the request was a replay, answered without running.
    replayed: bool,
    /// Its transaction's next precommit token (a multiplexed session's).
    token: Option<pb::MultiplexedSessionPrecommitToken>,
}

/// PLAN mode is refused: the local instance plans no statement of a read-write transaction
/// without running it.
fn served_mode(request: &pb::ExecuteSqlRequest) -> Result<(), Status> {
    use pb::execute_sql_request::QueryMode;
    match QueryMode::try_from(request.query_mode) {
        Ok(QueryMode::Plan) => Err(Status::invalid_argument(
            "PLAN mode is not served in a read-write transaction by the built-in local instance \
             (it would have to run the statement): use NORMAL, WITH_STATS or PROFILE",
        )),
        Ok(_) => Ok(()),
        Err(_) => Err(Status::invalid_argument(format!(
            "unknown query mode {}",
            request.query_mode
        ))),
    }
}

/// Runs one ExecuteSql request's statement in its transaction, or answers its replay.
async fn run_request(
    spanner: &LocalSpanner,
    request: &pb::ExecuteSqlRequest,
    in_txn: &InTxn,
    knobs: &KnobSettings,
) -> Result<Ran, Status> {
    if request.sql.len() as u64 > knobs.max_sql_bytes {
        return Err(Status::invalid_argument(format!(
            "the SQL text is {} bytes, more than the {} allowed (max_sql_bytes)",
            request.sql.len(),
            knobs.max_sql_bytes
        )));
    }
    let statement = TxnStatement {
        sql: request.sql.clone(),
        params: params(request.params.as_ref(), &request.param_types)?,
    };
    let txn = &in_txn.txn;
    let mut state = txn.state.lock().await;
    spanner
        .txns
        .usable(txn, &mut state, knobs)
        .map_err(|s| with_retry_info(s, retry_delay(knobs)))?;
    let key = request_key(request);
    if let Some(Handled::Statement(answer)) = state.replayed(request.seqno, key) {
        let answer = (*answer)?;
        return Ok(Ran {
            answer,
            replayed: true,
            token: state.next_token(txn),
        });
    }
    let seqno = Some((request.seqno, key));
    let result = match served_mode(request) {
        Ok(()) => {
            let mode = in_txn.read_mode;
            run_statement(spanner, txn, &mut state, (statement, mode), seqno, knobs).await
        }
        Err(status) => Err(status),
    };
    state.touch();
    if in_txn.began && result.is_err() {
        // Its id never reached the client: nobody could end it.
        spanner.txns.end(txn, &mut state, Ended::RolledBack);
    }
    let answer = result?;
    Ok(Ran {
        answer,
        replayed: false,
        token: state.next_token(txn),
    })
}

/// Runs one statement of `txn` (whose state the caller holds), its reads locked in `read_mode`
/// when they lock (ReaderShared, or Exclusive for a Read hinted so), and records it: a DML is kept
/// for the commit's replay (and, with its request's `seqno` and key, its answer for the request's
/// replay), and what it touched joins the transaction's footprint. An abort ends the transaction.
async fn run_statement(
    spanner: &LocalSpanner,
    txn: &ReadWrite,
    state: &mut State,
    (statement, read_mode): (TxnStatement, LockMode),
    seqno: Option<(i64, u64)>,
    knobs: &KnobSettings,
) -> Result<Answer, Status> {
    if state.statements.len() as u64 >= knobs.max_statements_per_transaction {
        return Err(Status::resource_exhausted(format!(
            "the transaction holds {} DML statements, the most the local instance keeps for one \
             (max_statements_per_transaction): commit it",
            state.statements.len()
        )));
    }
    let txns = &spanner.txns;
    locking::start(txns, txn)?;
    let bounds = write_bounds(knobs);
    let lock_free = txn.options.lock_free_reads();
    // A pessimistic statement's reads are named, and locked, before it runs; a lock-free one's
    // are named as it runs, for its commit's validation. Either way once.
    let (taken, reads) = if lock_free {
        (Taken::default(), None)
    } else {
        let writer = Arc::clone(&spanner.writer);
        let kept = statement.clone();
        let reads = on_writer(move || writer.reads(&kept, bounds)).await?;
        let taken = locking::take(txns, txn, state, reads.clone(), read_mode, knobs).await?;
        (taken, Some(reads))
    };
    let writer = Arc::clone(&spanner.writer);
    let (footprint, earlier) = (state.footprint.clone(), state.statements.clone());
    let kept = statement.clone();
    let ran = on_writer(move || writer.run(&footprint, &earlier, (&kept, reads), bounds)).await;
    let ran = ran.and_then(|mut answer| {
        locking::check(txns, txn, state, knobs)?;
        answer.cost.lock_wait = taken.waited;
        answer.lock_waits = taken.waits;
        Ok(answer)
    });
    match ran {
        Ok(mut answer) => {
            // The keys go to the footprint; the answer kept for a replay needs none.
            let reads = std::mem::take(&mut answer.reads);
            let writes = std::mem::take(&mut answer.writes);
            if answer.dml {
                if let Some((seqno, key)) = seqno {
                    state.check_seqno(seqno, key)?;
                    state.keep(seqno, key, Handled::Statement(Box::new(Ok(answer.clone()))));
                }
                state.statements.push(statement);
                state.dml_rows += u64::try_from(answer.row_count).unwrap_or(0);
            }
            let tables = answer.touched.read.iter().chain(&answer.touched.written);
            let footprint = &mut state.footprint;
            footprint.add(answer.since, tables.cloned(), &reads, &writes, lock_free);
            Ok(answer)
        }
        Err(status) if status.code() == tonic::Code::Aborted => {
            let cause = abort_cause(&status);
            if state.ended.is_none() {
                let why = status.message().to_owned();
                txns.end(txn, state, Ended::Aborted(cause, why));
            }
            Err(with_retry_info(status, retry_delay_for(cause, knobs)))
        }
        Err(status) => Err(status),
    }
}

/// Runs `work` on a blocking thread (the read-write connection is synchronous).
async fn on_writer<R: Send + 'static>(
    work: impl FnOnce() -> Result<R, Status> + Send + 'static,
) -> Result<R, Status> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(Status::internal(format!(
            "the statement's thread failed: {e}"
        )))
    })
}

/// ExecuteBatchDml: the statements in order, one ResultSet each with its row count, stopped at
/// the first failure, which is returned in `status` (the call itself succeeds; an abort fails it).
pub(super) async fn execute_batch_dml(
    spanner: &LocalSpanner,
    request: tonic::Request<pb::ExecuteBatchDmlRequest>,
) -> Result<pb::ExecuteBatchDmlResponse, Status> {
    let via = caller(&request);
    let r = request.into_inner();
    let knobs = spanner.knobs.get();
    spanner.sessions.touch(&r.session, via.as_ref(), &knobs)?;
    if r.statements.is_empty() {
        return Err(Status::invalid_argument(
            "No statements in batch DML request",
        ));
    }
    let selector = (
        r.transaction.as_ref(),
        transaction_tag(r.request_options.as_ref()),
    );
    let Some(in_txn) = spanner.read_write_selected(&r.session, selector, via.as_ref(), &knobs)?
    else {
        return Err(Status::invalid_argument(
            "ExecuteBatchDml needs a read-write transaction: begin one, or name one by its id \
             (single-use and read-only transactions cannot run DML)",
        ));
    };
    let txn = &in_txn.txn;
    let mut state = txn.state.lock().await;
    spanner
        .txns
        .usable(txn, &mut state, &knobs)
        .map_err(|s| with_retry_info(s, retry_delay(&knobs)))?;
    let key = batch_key(&r);
    let (answers, failure) = match state.replayed(r.seqno, key) {
        Some(Handled::Batch(answers, failure)) => (answers, failure),
        _ => {
            state.check_seqno(r.seqno, key)?;
            let (answers, failure) = run_batch(spanner, txn, &mut state, &r, &knobs).await?;
            let handled = Handled::Batch(answers.clone(), failure.clone());
            state.keep(r.seqno, key, handled);
            (answers, failure)
        }
    };
    state.touch();
    if in_txn.began && answers.is_empty() {
        spanner.txns.end(txn, &mut state, Ended::RolledBack);
    }
    // A batch that began its transaction and ran nothing ended it: no token for it.
    let precommit_token = if state.ended.is_none() {
        state.next_token(txn)
    } else {
        None
    };
    let result_sets = answers
        .iter()
        .enumerate()
        .map(|(i, answer)| pb::ResultSet {
            metadata: Some(builder::metadata(
                &answer.columns,
                if i == 0 { in_txn.reported() } else { None },
            )),
            rows: Vec::new(),
            stats: batch_stats(answer),
            precommit_token: None,
        })
        .collect();
    Ok(pb::ExecuteBatchDmlResponse {
        result_sets,
        status: failure.map(|s| crate::proto::google::rpc::Status {
            code: s.code() as i32,
            message: s.message().to_owned(),
            details: Vec::new(),
        }),
        precommit_token,
    })
}

/// What makes a batch the same request: its statements, parameters and their types.
fn batch_key(r: &pb::ExecuteBatchDmlRequest) -> u64 {
    let keys: Vec<[u8; 8]> = r
        .statements
        .iter()
        .map(|s| query_key(&s.sql, s.params.as_ref(), &s.param_types).to_le_bytes())
        .collect();
    let parts: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    crate::fnv::of_parts(&parts)
}

/// The batch's statements, run in order until one fails (its status returned beside the
/// answers of those before it). An abort fails the whole call.
async fn run_batch(
    spanner: &LocalSpanner,
    txn: &ReadWrite,
    state: &mut State,
    r: &pb::ExecuteBatchDmlRequest,
    knobs: &KnobSettings,
) -> Result<(Vec<Answer>, Option<Status>), Status> {
    let mut answers = Vec::with_capacity(r.statements.len());
    for (i, s) in r.statements.iter().enumerate() {
        let statement = match params(s.params.as_ref(), &s.param_types) {
            Ok(params) => TxnStatement {
                sql: s.sql.clone(),
                params,
            },
            Err(status) => return Ok((answers, Some(status))),
        };
        if s.sql.len() as u64 > knobs.max_sql_bytes {
            let too_long = Status::invalid_argument(format!(
                "statement {i}'s SQL text is longer than the {} bytes allowed (max_sql_bytes)",
                knobs.max_sql_bytes
            ));
            return Ok((answers, Some(too_long)));
        }
        let shared = (statement, LockMode::ReaderShared);
        match run_statement(spanner, txn, state, shared, None, knobs).await {
            Ok(answer) if !answer.dml => {
                let query = Status::invalid_argument(format!(
                    "statement {i} is not DML: ExecuteBatchDml runs INSERT, UPDATE and DELETE only"
                ));
                return Ok((answers, Some(query)));
            }
            Ok(answer) => answers.push(answer),
            Err(status) if status.code() == tonic::Code::Aborted => return Err(status),
            Err(status) => return Ok((answers, Some(status))),
        }
    }
    Ok((answers, None))
}
