//! Statements in a read-write transaction: ExecuteSql and ExecuteStreamingSql whose selector
//! begins one (inline begin) or names one, and ExecuteBatchDml. Each statement runs on the
//! read-write connection after its transaction's earlier DML (`sqlite/write.rs`), one at a time
//! per transaction. A DML's `seqno` names it: the same request with a seqno already handled gets
//! the same answer again without running, and another DML reusing that seqno is refused (0 is a
//! seqno like any other: protobuf cannot tell it from none, and the official Python client starts
//! there). A DML's answer carries `stats.row_count_exact` (in the last
//! PartialResultSet of a stream); an inline begin's transaction id is in the first message's
//! `metadata.transaction`.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use tokio::sync::mpsc;
use tonic::Status;

use super::commit::{is_read_write, retry_delay, write_bounds};
use super::request::{params, query_key, request_key};
use super::{LocalSpanner, caller};
use crate::proto::google::spanner::v1 as pb;
use crate::server::encoded::{EncodedPartialResultSet, EncodedResultSet, ResultSetWriter};
use crate::server::knobs::KnobSettings;
use crate::server::sqlite::write::{Answer, TxnStatement};
use crate::server::stream::budget::SendBudget;
use crate::server::stream::builder::{self, MessageBuilder, TokenStamp};
use crate::server::stream::live;
use crate::server::txn::aborted::with_retry_info;
use crate::server::txn::store::{Ended, Handled, ReadWrite, State};

/// The read-write transaction a request's statement runs in, and whether the request began it.
pub(super) struct InTxn {
    txn: Arc<ReadWrite>,
    began: bool,
}

impl InTxn {
    /// The transaction to report in the answer's first metadata: the one the request began.
    fn reported(&self) -> Option<pb::Transaction> {
        self.began.then(|| pb::Transaction {
            id: self.txn.id.clone(),
            ..Default::default()
        })
    }
}

impl LocalSpanner {
    /// The read-write transaction `selector` begins or names in `session`, if it is one (else
    /// the request takes the read-only path). Cheap for every other selector: a begin's mode is
    /// looked at, an id looked up.
    pub(super) fn read_write_selected(
        &self,
        session: &str,
        selector: Option<&pb::TransactionSelector>,
        via: Option<&Arc<crate::server::link::Link>>,
        knobs: &KnobSettings,
    ) -> Result<Option<InTxn>, Status> {
        use pb::transaction_selector::Selector;
        match selector.and_then(|s| s.selector.as_ref()) {
            Some(Selector::Begin(options)) if is_read_write(options) => {
                let session = self.sessions.touch(session, via, knobs)?;
                let txn = self.begin_read_write(&session, options, knobs)?;
                Ok(Some(InTxn { txn, began: true }))
            }
            Some(Selector::Id(id)) if !id.is_empty() => match self.txns.get(id) {
                Some(_) => {
                    self.sessions.touch(session, via, knobs)?;
                    let txn = self.read_write(session, id)?;
                    Ok(Some(InTxn { txn, began: false }))
                }
                None => Ok(None),
            },
            _ => Ok(None),
        }
    }
}

/// ExecuteSql in a read-write transaction: the answer as one ResultSet.
pub(super) async fn execute_sql(
    spanner: &LocalSpanner,
    request: &pb::ExecuteSqlRequest,
    in_txn: InTxn,
    knobs: &KnobSettings,
) -> Result<EncodedResultSet, Status> {
    let answer = run_request(spanner, request, &in_txn, knobs).await?;
    let metadata = builder::metadata(&answer.columns, in_txn.reported());
    let mut writer = ResultSetWriter::new(&metadata, answer.columns.len());
    for value in &answer.values {
        writer.push_value(value);
    }
    Ok(writer.finish(stats(&answer).as_ref()))
}

/// ExecuteStreamingSql in a read-write transaction: the whole answer is known before the first
/// message (the statement ran under the write lock, which is not held while a client reads),
/// cut into PartialResultSets as a query's are, its statistics in the last.
pub(super) async fn execute_streaming_sql(
    spanner: &LocalSpanner,
    request: &pb::ExecuteSqlRequest,
    in_txn: InTxn,
    (knobs, deadline): (&KnobSettings, Option<Instant>),
) -> Result<live::Response, Status> {
    let answer = run_request(spanner, request, &in_txn, knobs).await?;
    let stamp = TokenStamp {
        max_bytes: u32::try_from(knobs.max_message_bytes).unwrap_or(u32::MAX),
        request_key: request_key(request),
        stream: spanner.unique(),
        shape: knobs.shape,
    };
    let messages = messages(&answer, in_txn.reported(), stamp);
    let (tx, rx) = mpsc::channel(messages.len().max(1));
    for message in messages {
        // The channel holds them all: nothing can be refused.
        let _ = tx.try_send(Ok(EncodedPartialResultSet(message)));
    }
    let budget = Arc::new(SendBudget::new(usize::MAX));
    Ok(live::Response::new(rx, deadline, None, budget))
}

/// The answer's PartialResultSets: values cut as a query's, statistics last (first in the
/// emulator's shape).
fn messages(
    answer: &Answer,
    transaction: Option<pb::Transaction>,
    stamp: TokenStamp,
) -> Vec<Bytes> {
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
    let stats = stats(answer);
    if stamp.shape.stats_first() {
        out.extend(builder.finish(None));
        if let (Some(stats), Some(first)) = (stats, out.first_mut()) {
            let mut message = first.to_vec();
            builder::append_stats(&mut message, &stats);
            *first = Bytes::from(message);
        }
    } else {
        out.extend(builder.finish(stats));
    }
    out
}

/// A DML's statistics: the rows it changed, exactly. A query's answer has none.
fn stats(answer: &Answer) -> Option<pb::ResultSetStats> {
    answer.dml.then(|| pb::ResultSetStats {
        row_count: Some(pb::result_set_stats::RowCount::RowCountExact(
            answer.row_count,
        )),
        ..Default::default()
    })
}

/// Runs one ExecuteSql request's statement in its transaction, or answers its replay.
async fn run_request(
    spanner: &LocalSpanner,
    request: &pb::ExecuteSqlRequest,
    in_txn: &InTxn,
    knobs: &KnobSettings,
) -> Result<Answer, Status> {
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
        return answer;
    }
    let seqno = Some((request.seqno, key));
    let result = run_statement(spanner, txn, &mut state, statement, seqno, knobs).await;
    state.touch();
    if in_txn.began && result.is_err() {
        // Its id never reached the client: nobody could end it.
        spanner.txns.end(txn, &mut state, Ended::RolledBack);
    }
    result
}

/// Runs one statement of `txn` (whose state the caller holds) and records it: a DML is kept for
/// the commit's replay (and, with its request's `seqno` and key, its answer for the request's
/// replay), and what it touched joins the transaction's footprint. An abort ends the transaction.
async fn run_statement(
    spanner: &LocalSpanner,
    txn: &ReadWrite,
    state: &mut State,
    statement: TxnStatement,
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
    let writer = Arc::clone(&spanner.writer);
    let (footprint, earlier) = (state.footprint.clone(), state.statements.clone());
    let bounds = write_bounds(knobs);
    let kept = statement.clone();
    let ran = tokio::task::spawn_blocking(move || writer.run(&footprint, &earlier, &kept, bounds))
        .await
        .unwrap_or_else(|e| {
            Err(Status::internal(format!(
                "the statement's thread failed: {e}"
            )))
        });
    match ran {
        Ok(answer) => {
            if answer.dml {
                if let Some((seqno, key)) = seqno {
                    state.check_seqno(seqno, key)?;
                    state.keep(seqno, key, Handled::Statement(Ok(answer.clone())));
                }
                state.statements.push(statement);
                state.dml_rows += u64::try_from(answer.row_count).unwrap_or(0);
            }
            state.footprint.add(answer.since, &answer.touched);
            Ok(answer)
        }
        Err(status) if status.code() == tonic::Code::Aborted => {
            spanner
                .txns
                .end(txn, state, Ended::Aborted(status.message().to_owned()));
            Err(with_retry_info(status, retry_delay(knobs)))
        }
        Err(status) => Err(status),
    }
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
    let Some(in_txn) =
        spanner.read_write_selected(&r.session, r.transaction.as_ref(), via.as_ref(), &knobs)?
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
    let result_sets = answers
        .iter()
        .enumerate()
        .map(|(i, answer)| pb::ResultSet {
            metadata: Some(builder::metadata(
                &answer.columns,
                if i == 0 { in_txn.reported() } else { None },
            )),
            rows: Vec::new(),
            stats: stats(answer),
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
        precommit_token: None,
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
        match run_statement(spanner, txn, state, statement, None, knobs).await {
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
