//! Read-write transactions' begin, Commit and Rollback. A commit is checked (its delay, its
//! mutations' tables, columns, types, count and bytes), then applied by a task of its own that
//! holds the transaction until it has ended, so a client that leaves mid-commit cannot make it
//! apply twice: a second Commit waits for the first and finds it committed. On a multiplexed
//! session a commit must carry its transaction's latest precommit token: without it the answer
//! is the retry reply (a token, nothing committed), as production's.

use std::sync::Arc;
use std::time::Duration;

use prost::Message;
use tonic::{Response, Status};

use super::{LocalSpanner, mutations};
use crate::proto::google::spanner::v1 as pb;
use crate::server::knobs::KnobSettings;
use crate::server::txn::aborted::{aborted, retry_delay_for, with_retry_info};
use crate::server::txn::batch::{Batches, MAX_COMMIT_DELAY};
use crate::server::txn::journal::AbortCause;
use crate::server::txn::lock_key::{LockKey, LockMode};
use crate::server::txn::locking::{self, Taken};
use crate::server::txn::mutation_keys::mutation_lock_keys;
use crate::server::txn::store::{
    BeginIn, CommittedAs, Ended, HeldMutations, ReadWrite, RwOptions, State, TokenCheck,
    Transactions,
};
use crate::server::txn::write::{CommitWork, WriteBounds, Writer, abort_cause};

impl LocalSpanner {
    /// Begins a read-write transaction in `session` with `options` (whose mode is read-write),
    /// tagged `tag` (its begin's transaction tag).
    pub(super) fn begin_read_write(
        &self,
        session: &pb::Session,
        options: &pb::TransactionOptions,
        tag: &str,
        knobs: &KnobSettings,
    ) -> Result<Arc<ReadWrite>, Status> {
        use pb::transaction_options::Mode;
        let Some(Mode::ReadWrite(rw)) = &options.mode else {
            return Err(Status::internal("not a read-write transaction's options"));
        };
        if !(0..=2).contains(&rw.read_lock_mode) {
            return Err(Status::invalid_argument(format!(
                "unknown read_lock_mode {}",
                rw.read_lock_mode
            )));
        }
        if !(0..=2).contains(&options.isolation_level) {
            return Err(Status::invalid_argument(format!(
                "unknown isolation_level {}",
                options.isolation_level
            )));
        }
        let at = BeginIn {
            session: &session.name,
            multiplexed: session.multiplexed,
        };
        let rw_options = RwOptions {
            read_lock_mode: rw.read_lock_mode,
            isolation_level: options.isolation_level,
            previous_transaction_id: rw.multiplexed_session_previous_transaction_id.clone(),
            transaction_tag: tag.to_owned(),
        };
        let id = self.unique().to_be_bytes().to_vec();
        let txn = self.txns.begin(at, id, rw_options, knobs)?;
        super::rw_tap::began(&txn);
        Ok(txn)
    }

    /// The read-write transaction `id` of `session`: NOT_FOUND when there is none.
    pub(super) fn read_write(&self, session: &str, id: &[u8]) -> Result<Arc<ReadWrite>, Status> {
        self.txns
            .get(id)
            .filter(|t| t.session == session)
            .ok_or_else(|| Status::not_found("Transaction not found"))
    }
}

/// Whether `options` ask for a read-write transaction.
pub(super) fn is_read_write(options: &pb::TransactionOptions) -> bool {
    matches!(
        options.mode,
        Some(pb::transaction_options::Mode::ReadWrite(_))
    )
}

/// The transaction tag of a request's options (empty without one).
pub(super) fn transaction_tag(options: Option<&pb::RequestOptions>) -> &str {
    options.map_or("", |o| o.transaction_tag.as_str())
}

/// The bounds a transaction's statements and commit run under.
pub(super) fn write_bounds(knobs: &KnobSettings) -> WriteBounds {
    WriteBounds {
        limits: knobs.sql_limits(),
        max_result_bytes: knobs.max_unary_result_bytes,
        max_database_bytes: knobs.max_database_bytes,
    }
}

/// The retry delay the local instance's aborts ask for.
pub(super) fn retry_delay(knobs: &KnobSettings) -> Duration {
    Duration::from_millis(knobs.abort_retry_delay_ms)
}

/// BeginTransaction with read-write options in `session`. On a multiplexed session a mutation key
/// (checked as a mutation is, INVALID_ARGUMENT otherwise, as production says) marks a
/// mutation-only transaction, and the answer carries its first precommit token; without one the
/// first token comes with the first statement's answer, as production hands them out.
pub(super) async fn begin(
    spanner: &LocalSpanner,
    session: &pb::Session,
    (options, tag): (&pb::TransactionOptions, &str),
    mutation_key: Option<&pb::Mutation>,
    knobs: &KnobSettings,
) -> Result<pb::Transaction, Status> {
    let keyed = match mutation_key {
        Some(key) if session.multiplexed => {
            mutations::convert(&spanner.db.schema(), std::slice::from_ref(key)).map_err(|e| {
                Status::invalid_argument(format!(
                    "Failed to initialize transaction due to invalid mutation key: {}",
                    e.message()
                ))
            })?;
            true
        }
        _ => false,
    };
    let txn = spanner.begin_read_write(session, options, tag, knobs)?;
    let mut state = txn.state.lock().await;
    state.keyed = keyed;
    let precommit_token = if keyed { state.next_token(&txn) } else { None };
    Ok(pb::Transaction {
        id: txn.id.clone(),
        read_timestamp: None,
        precommit_token,
    })
}

/// Commits a read-write transaction (by id, or single-use with its mutations) in `session`.
/// The answer carries the commit's wait for locks in its `spanprof-lock-wait-us` header.
pub(super) async fn commit(
    spanner: &LocalSpanner,
    session: &pb::Session,
    r: pb::CommitRequest,
    knobs: &KnobSettings,
) -> Result<Response<pb::CommitResponse>, Status> {
    use pb::commit_request::Transaction;
    let delay = commit_delay(r.max_commit_delay.as_ref())?;
    let mutations = mutations::convert(&spanner.db.schema(), &r.mutations)?;
    let count: u64 = mutations.iter().map(|m| m.count()).sum();
    if count > knobs.max_mutations_per_commit {
        return Err(Status::invalid_argument(format!(
            "The transaction contains too many mutations: {count}, more than the {} allowed \
             (max_mutations_per_commit; a write counts each column of each row, a delete each key \
             and range)",
            knobs.max_mutations_per_commit
        )));
    }
    let bytes: usize = r.mutations.iter().map(Message::encoded_len).sum();
    let keys = mutation_lock_keys(&spanner.db.schema(), &mutations);
    let (txn, single_use) = match &r.transaction {
        Some(Transaction::TransactionId(id)) => (spanner.read_write(&session.name, id)?, false),
        Some(Transaction::SingleUseTransaction(options)) => {
            let tag = transaction_tag(r.request_options.as_ref());
            (
                spanner.begin_read_write(session, options, tag, knobs)?,
                true,
            )
        }
        None => return Err(Status::invalid_argument("Commit needs a transaction")),
    };
    let call = CommitCall {
        // A single-use commit has no earlier answer to have carried a token.
        needs_token: txn.multiplexed && !single_use,
        txn,
        mutations: HeldMutations {
            mutations,
            keys,
            count,
            bytes,
        },
        delay,
        precommit_token: r.precommit_token,
        return_commit_stats: r.return_commit_stats,
    };
    let parts = Writing {
        txns: Arc::clone(&spanner.txns),
        batches: Arc::clone(&spanner.batches),
        writer: Arc::clone(&spanner.writer),
    };
    let task = tokio::spawn(parts.commit(call, *knobs));
    let (answer, taken) = task
        .await
        .unwrap_or_else(|e| Err(Status::internal(format!("the commit's task failed: {e}"))))?;
    let mut response = Response::new(answer);
    locking::write_waits(response.metadata_mut(), taken.waited, &taken.waits);
    Ok(response)
}

/// One Commit call, checked.
struct CommitCall {
    txn: Arc<ReadWrite>,
    mutations: HeldMutations,
    delay: Duration,
    /// Whether it must carry its transaction's latest precommit token (a multiplexed session's).
    needs_token: bool,
    precommit_token: Option<pb::MultiplexedSessionPrecommitToken>,
    return_commit_stats: bool,
}

/// What a commit's task writes with.
struct Writing {
    txns: Arc<Transactions>,
    batches: Arc<Batches>,
    writer: Arc<Writer>,
}

/// What a commit without its transaction's latest precommit token gets instead.
enum NotYet {
    /// The retry reply: nothing committed; commit again with this token.
    Retry(pb::CommitResponse),
    /// Refused.
    Refused(Status),
}

impl Writing {
    /// Applies one commit, holding its transaction until it has ended.
    async fn commit(
        self,
        call: CommitCall,
        knobs: KnobSettings,
    ) -> Result<(pb::CommitResponse, Taken), Status> {
        let (txns, txn) = (&self.txns, &call.txn);
        let mut state = txn.state.lock().await;
        // The same Commit sent again (its answer was lost on the way) gets the answer it would
        // have had, as Spanner and the emulator give it: nothing is applied twice.
        if let Some(Ended::Committed(applied)) = &state.ended {
            return Ok((
                committed(applied, call.return_commit_stats),
                Taken::default(),
            ));
        }
        txns.usable(txn, &mut state, &knobs)
            .map_err(|s| with_retry_info(s, retry_delay(&knobs)))?;
        let mut held = call.mutations;
        if call.needs_token {
            match self.precommit(txn, &mut state, call.precommit_token.as_ref(), held) {
                Ok(mutations) => held = mutations,
                Err(NotYet::Retry(reply)) => return Ok((reply, Taken::default())),
                Err(NotYet::Refused(status)) => return Err(status),
            }
        }
        let statement_bytes: usize = state.statements.iter().map(|s| s.sql.len() + 64).sum();
        let bytes = (held.bytes + statement_bytes) as u64;
        if bytes > knobs.max_commit_bytes {
            txns.end(txn, &mut state, Ended::RolledBack);
            return Err(Status::invalid_argument(format!(
                "The transaction is too large: {bytes} bytes of mutations and DML, more than the \
                 {} allowed (max_commit_bytes)",
                knobs.max_commit_bytes
            )));
        }
        if txn.doomed {
            let why = format!(
                "Transaction aborted by the local instance's abort_every knob (every {} new \
                 read-write transactions abort at their commit); retry it",
                knobs.abort_every
            );
            txns.end(
                txn,
                &mut state,
                Ended::Aborted(AbortCause::Scripted, why.clone()),
            );
            return Err(aborted(&why, retry_delay(&knobs)));
        }
        locking::start(txns, txn)?;
        let writes = state.footprint.writes.iter().chain(&held.keys).cloned();
        let writes: Vec<LockKey> = writes.collect();
        let mode = LockMode::WriterShared;
        let taken = locking::take(txns, txn, &mut state, writes, mode, &knobs).await?;
        locking::check(txns, txn, &mut state, &knobs)?;
        let work = CommitWork {
            statements: state.statements.clone(),
            mutations: held.mutations,
            footprint: state.footprint.clone(),
            validation: txn.options.validation(),
        };
        let outcome = self
            .batches
            .commit(&self.writer, work, call.delay, write_bounds(&knobs))
            .await;
        match outcome {
            Ok(timestamp) => {
                let applied = CommittedAs {
                    timestamp,
                    mutation_count: i64::try_from(held.count + state.dml_rows).unwrap_or(i64::MAX),
                };
                let answer = committed(&applied, call.return_commit_stats);
                txns.end(txn, &mut state, Ended::Committed(applied));
                if txns.lose_this_answer(knobs.lose_commit_answer_every) {
                    return Err(Status::unavailable(
                        "the connection broke before the commit's answer was sent (the local \
                         instance's lose_commit_answer_every knob)",
                    ));
                }
                Ok((answer, taken))
            }
            Err(status) if status.code() == tonic::Code::Aborted => {
                let cause = abort_cause(&status);
                let why = status.message().to_owned();
                txns.end(txn, &mut state, Ended::Aborted(cause, why));
                Err(with_retry_info(status, retry_delay_for(cause, &knobs)))
            }
            Err(status) => {
                txns.end(txn, &mut state, Ended::RolledBack);
                Err(status)
            }
        }
    }

    /// A multiplexed session's commit, checked against its transaction's precommit tokens: with
    /// the latest it goes ahead (with its mutations, or those a retry reply held when it sends
    /// none, as the official clients do); without it, or with an earlier one, it gets the retry
    /// reply (its mutations held) and commits nothing; a token the transaction never handed out
    /// is refused, and so is a mutation-only transaction begun without a mutation key.
    fn precommit(
        &self,
        txn: &ReadWrite,
        state: &mut State,
        sent: Option<&pb::MultiplexedSessionPrecommitToken>,
        mutations: HeldMutations,
    ) -> Result<HeldMutations, NotYet> {
        match state.token_check(txn, sent) {
            TokenCheck::Latest if mutations.mutations.is_empty() => {
                Ok(state.held.take().unwrap_or(mutations))
            }
            TokenCheck::Latest => Ok(mutations),
            TokenCheck::Foreign => Err(NotYet::Refused(Status::invalid_argument(
                "the commit's precommit token is not one this transaction handed out",
            ))),
            TokenCheck::Missing | TokenCheck::Stale
                if !state.has_tokens() && !mutations.mutations.is_empty() =>
            {
                self.txns.end(txn, state, Ended::RolledBack);
                Err(NotYet::Refused(Status::failed_precondition(
                    "A read-write transaction on a multiplexed session that only writes \
                     mutations must name one of them in BeginTransaction's mutation_key: nothing \
                     else gave it a precommit token to commit with",
                )))
            }
            TokenCheck::Missing | TokenCheck::Stale => {
                if !mutations.mutations.is_empty() {
                    state.held = Some(mutations);
                }
                let token = state.next_token(txn);
                state.touch();
                Err(NotYet::Retry(pb::CommitResponse {
                    multiplexed_session_retry: token
                        .map(pb::commit_response::MultiplexedSessionRetry::PrecommitToken),
                    ..Default::default()
                }))
            }
        }
    }
}

/// The answer to a commit that applied `applied`, with its statistics when asked.
fn committed(applied: &CommittedAs, stats: bool) -> pb::CommitResponse {
    pb::CommitResponse {
        commit_timestamp: Some(applied.timestamp),
        commit_stats: stats.then_some(pb::commit_response::CommitStats {
            mutation_count: applied.mutation_count,
        }),
        ..Default::default()
    }
}

/// Rolls back the read-write transaction `txn`; never ABORTED, and a transaction that already
/// ended stays as it ended.
pub(super) async fn rollback(spanner: &LocalSpanner, txn: &ReadWrite) {
    let mut state = txn.state.lock().await;
    spanner.txns.end(txn, &mut state, Ended::RolledBack);
}

/// `max_commit_delay`, checked: 0 to 500 ms (none is zero).
fn commit_delay(delay: Option<&prost_types::Duration>) -> Result<Duration, Status> {
    let Some(d) = delay else {
        return Ok(Duration::ZERO);
    };
    let nanos = i128::from(d.seconds) * 1_000_000_000 + i128::from(d.nanos);
    if !(0..=MAX_COMMIT_DELAY.as_nanos() as i128).contains(&nanos) {
        return Err(Status::invalid_argument(format!(
            "max_commit_delay must be between 0 and 500 ms, not {} ns",
            nanos
        )));
    }
    Ok(Duration::from_nanos(u64::try_from(nanos).unwrap_or(0)))
}
