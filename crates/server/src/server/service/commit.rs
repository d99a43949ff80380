//! Read-write transactions' begin, Commit and Rollback. A commit is checked (its delay, its
//! mutations' tables, columns, types, count and bytes), then applied by a task of its own that
//! holds the transaction until it has ended, so a client that leaves mid-commit cannot make it
//! apply twice: a second Commit waits for the first and finds it committed.

use std::sync::Arc;
use std::time::Duration;

use prost::Message;
use tonic::Status;

use super::{LocalSpanner, mutations};
use crate::proto::google::spanner::v1 as pb;
use crate::server::knobs::KnobSettings;
use crate::server::sqlite::write::{CommitWork, WriteBounds};
use crate::server::txn::aborted::{aborted, with_retry_info};
use crate::server::txn::batch::MAX_COMMIT_DELAY;
use crate::server::txn::store::{BeginIn, Ended, ReadWrite, RwOptions};

impl LocalSpanner {
    /// Begins a read-write transaction in `session` with `options` (whose mode is read-write).
    pub(super) fn begin_read_write(
        &self,
        session: &pb::Session,
        options: &pb::TransactionOptions,
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
        };
        let id = self.unique().to_be_bytes().to_vec();
        self.txns.begin(at, id, rw_options, knobs)
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

/// Commits a read-write transaction (by id, or single-use with its mutations) in `session`.
pub(super) async fn commit(
    spanner: &LocalSpanner,
    session: &pb::Session,
    r: pb::CommitRequest,
    knobs: &KnobSettings,
) -> Result<pb::CommitResponse, Status> {
    use pb::commit_request::Transaction;
    let delay = commit_delay(r.max_commit_delay.as_ref())?;
    let mutations = mutations::convert(&r.mutations)?;
    let count: u64 = mutations.iter().map(|m| m.count()).sum();
    if count > knobs.max_mutations_per_commit {
        return Err(Status::invalid_argument(format!(
            "The transaction contains too many mutations: {count}, more than the {} allowed \
             (max_mutations_per_commit; a write counts each column of each row, a delete each key \
             and range)",
            knobs.max_mutations_per_commit
        )));
    }
    let mutation_bytes: usize = r.mutations.iter().map(Message::encoded_len).sum();
    let txn = match &r.transaction {
        Some(Transaction::TransactionId(id)) => spanner.read_write(&session.name, id)?,
        Some(Transaction::SingleUseTransaction(options)) => {
            spanner.begin_read_write(session, options, knobs)?
        }
        None => return Err(Status::invalid_argument("Commit needs a transaction")),
    };
    let (txns, batches, writer) = (
        Arc::clone(&spanner.txns),
        Arc::clone(&spanner.batches),
        Arc::clone(&spanner.writer),
    );
    let knobs = *knobs;
    let task = tokio::spawn(async move {
        let mut state = txn.state.lock().await;
        txns.usable(&txn, &mut state, &knobs)
            .map_err(|s| with_retry_info(s, retry_delay(&knobs)))?;
        let statement_bytes: usize = state.statements.iter().map(|s| s.sql.len() + 64).sum();
        let bytes = (mutation_bytes + statement_bytes) as u64;
        if bytes > knobs.max_commit_bytes {
            txns.end(&txn, &mut state, Ended::RolledBack);
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
            txns.end(&txn, &mut state, Ended::Aborted(why.clone()));
            return Err(aborted(&why, retry_delay(&knobs)));
        }
        let work = CommitWork {
            statements: state.statements.clone(),
            mutations,
            footprint: state.footprint.clone(),
        };
        let outcome = batches
            .commit(&writer, work, delay, write_bounds(&knobs))
            .await;
        match outcome {
            Ok(timestamp) => {
                let dml_rows = state.dml_rows;
                txns.end(&txn, &mut state, Ended::Committed(timestamp));
                Ok(pb::CommitResponse {
                    commit_timestamp: Some(timestamp),
                    commit_stats: r.return_commit_stats.then_some(
                        pb::commit_response::CommitStats {
                            mutation_count: i64::try_from(count + dml_rows).unwrap_or(i64::MAX),
                        },
                    ),
                    ..Default::default()
                })
            }
            Err(status) if status.code() == tonic::Code::Aborted => {
                txns.end(
                    &txn,
                    &mut state,
                    Ended::Aborted(status.message().to_owned()),
                );
                Err(with_retry_info(status, retry_delay(&knobs)))
            }
            Err(status) => {
                txns.end(&txn, &mut state, Ended::RolledBack);
                Err(status)
            }
        }
    });
    task.await
        .unwrap_or_else(|e| Err(Status::internal(format!("the commit's task failed: {e}"))))
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
