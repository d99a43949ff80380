//! BeginTransaction, Commit and Rollback, and read-only transactions: the transaction a query's
//! selector names (single-use, begun, or by id), and the read timestamp a bound implies. A
//! read-write transaction's begin, commit and rollback are `commit.rs`'s.

use std::time::{SystemTime, UNIX_EPOCH};

use tonic::{Request, Response, Status};

use super::{LocalSpanner, caller, commit};
use crate::proto::google::spanner::v1 as pb;
use crate::server::knobs::KnobSettings;

pub(super) async fn begin(
    spanner: &LocalSpanner,
    request: Request<pb::BeginTransactionRequest>,
) -> Result<Response<pb::Transaction>, Status> {
    let via = caller(&request);
    let r = request.into_inner();
    let knobs = spanner.knobs.get();
    let session = spanner.sessions.touch(&r.session, via.as_ref(), &knobs)?;
    let options = r.options.unwrap_or_default();
    if commit::is_read_write(&options) {
        let tag = commit::transaction_tag(r.request_options.as_ref());
        let begun = (&options, tag);
        return commit::begin(spanner, &session, begun, r.mutation_key.as_ref(), &knobs)
            .await
            .map(Response::new);
    }
    spanner
        .begin_read_only(&r.session, &options, &knobs)
        .map(Response::new)
}

pub(super) async fn commit(
    spanner: &LocalSpanner,
    request: Request<pb::CommitRequest>,
) -> Result<Response<pb::CommitResponse>, Status> {
    use pb::commit_request::Transaction;
    let via = caller(&request);
    let r = request.into_inner();
    let knobs = spanner.knobs.get();
    let session = spanner.sessions.touch(&r.session, via.as_ref(), &knobs)?;
    let read_write = match &r.transaction {
        Some(Transaction::TransactionId(id)) => spanner.txns.get(id).is_some(),
        Some(Transaction::SingleUseTransaction(options)) => commit::is_read_write(options),
        None => false,
    };
    if read_write {
        return commit::commit(spanner, &session, r, &knobs).await;
    }
    if !r.mutations.is_empty() {
        return Err(Status::failed_precondition(
            "Mutations need a read-write transaction: commit them in one (by its id, or              single-use with read_write options)",
        ));
    }
    match r.transaction {
        Some(Transaction::TransactionId(id)) => {
            if !spanner
                .sessions
                .has_transaction(&r.session, &id, true, &knobs)?
            {
                return Err(Status::not_found("Transaction not found"));
            }
        }
        Some(Transaction::SingleUseTransaction(options)) => read_only_mode(&options)?,
        None => return Err(Status::invalid_argument("Commit needs a transaction")),
    }
    Ok(Response::new(pb::CommitResponse {
        commit_timestamp: Some(now()),
        ..Default::default()
    }))
}

pub(super) async fn rollback(
    spanner: &LocalSpanner,
    request: Request<pb::RollbackRequest>,
) -> Result<Response<()>, Status> {
    let r = request.into_inner();
    let knobs = spanner.knobs.get();
    if let Ok(txn) = spanner.read_write(&r.session, &r.transaction_id) {
        spanner.sessions.touch(&r.session, None, &knobs)?;
        commit::rollback(spanner, &txn).await;
        return Ok(Response::new(()));
    }
    spanner
        .sessions
        .has_transaction(&r.session, &r.transaction_id, true, &knobs)?;
    Ok(Response::new(()))
}

impl LocalSpanner {
    /// Begins a read-only transaction in `session`, as `options` bound it.
    pub(super) fn begin_read_only(
        &self,
        session: &str,
        options: &pb::TransactionOptions,
        knobs: &KnobSettings,
    ) -> Result<pb::Transaction, Status> {
        read_only_mode(options)?;
        let read_timestamp = read_timestamp(options, false)?;
        let id = self.unique().to_be_bytes().to_vec();
        self.sessions.add_transaction(session, id.clone(), knobs)?;
        Ok(pb::Transaction {
            id,
            read_timestamp: Some(read_timestamp),
            precommit_token: None,
        })
    }

    /// Checks the transaction selector and returns the transaction to report in the metadata, if any.
    pub(super) fn transaction_for_query(
        &self,
        request: &pb::ExecuteSqlRequest,
        knobs: &KnobSettings,
    ) -> Result<Option<pb::Transaction>, Status> {
        use pb::transaction_options::Mode;
        use pb::transaction_selector::Selector;
        let selector = request.transaction.as_ref();
        match selector.and_then(|s| s.selector.as_ref()) {
            None => Ok(None),
            Some(Selector::SingleUse(options)) => {
                read_only_mode(options)?;
                let read_timestamp = read_timestamp(options, true)?;
                Ok(match &options.mode {
                    Some(Mode::ReadOnly(ro)) if ro.return_read_timestamp => Some(pb::Transaction {
                        read_timestamp: Some(read_timestamp),
                        ..Default::default()
                    }),
                    _ => None,
                })
            }
            Some(Selector::Begin(options)) => self
                .begin_read_only(&request.session, options, knobs)
                .map(Some),
            // No transaction has an empty id. The official Node client (8.13) sends one when it
            // resumes or restarts a single-use read: it echoes the first message's
            // `metadata.transaction` (a read timestamp, no id) back as the transaction's id. The
            // request stands for the single-use read it continues, and is served as one.
            Some(Selector::Id(id)) if id.is_empty() => Ok(None),
            Some(Selector::Id(id)) => {
                if self
                    .sessions
                    .has_transaction(&request.session, id, false, knobs)?
                {
                    Ok(None)
                } else {
                    Err(Status::not_found("Transaction not found"))
                }
            }
        }
    }
}

/// Refuses the modes a read-only path cannot serve: partitioned DML (not served), and a
/// single-use read-write transaction for a query (production refuses it too: DML may not run in a
/// single-use transaction; begin one).
pub(super) fn read_only_mode(options: &pb::TransactionOptions) -> Result<(), Status> {
    use pb::transaction_options::Mode;
    match &options.mode {
        Some(Mode::ReadOnly(_)) | None => Ok(()),
        Some(Mode::PartitionedDml(_)) => Err(Status::unimplemented(
            "the built-in local instance does not serve partitioned DML",
        )),
        Some(Mode::ReadWrite(_)) => Err(Status::invalid_argument(
            "DML statements may not be performed in single-use transactions, to avoid replay:              begin a read-write transaction",
        )),
    }
}

fn now() -> prost_types::Timestamp {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    prost_types::Timestamp {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

/// The read timestamp a read-only transaction's bound implies: now for a strong read (and for max
/// staleness, which the server may serve as fresh as it likes), now less the staleness for exact
/// staleness, the timestamp itself for a read timestamp, and the later of it and now for a minimum
/// read timestamp. Max staleness and a minimum read timestamp are refused outside a single-use read,
/// as production refuses them.
fn read_timestamp(
    options: &pb::TransactionOptions,
    single_use: bool,
) -> Result<prost_types::Timestamp, Status> {
    use pb::transaction_options::Mode;
    use pb::transaction_options::read_only::TimestampBound;
    let Some(Mode::ReadOnly(read_only)) = &options.mode else {
        return Ok(now());
    };
    let now_nanos = timestamp_nanos(&now());
    let nanos = match &read_only.timestamp_bound {
        None | Some(TimestampBound::Strong(_)) => now_nanos,
        Some(TimestampBound::ExactStaleness(d)) => now_nanos - duration_nanos(d)?,
        Some(TimestampBound::MaxStaleness(d)) if single_use => {
            duration_nanos(d)?;
            now_nanos
        }
        Some(TimestampBound::ReadTimestamp(t)) => timestamp_nanos(t),
        Some(TimestampBound::MinReadTimestamp(t)) if single_use => {
            timestamp_nanos(t).max(now_nanos)
        }
        Some(_) => {
            return Err(Status::invalid_argument(
                "max_staleness and min_read_timestamp are only for single-use read-only transactions",
            ));
        }
    };
    Ok(prost_types::Timestamp {
        seconds: nanos.div_euclid(1_000_000_000) as i64,
        nanos: nanos.rem_euclid(1_000_000_000) as i32,
    })
}

fn timestamp_nanos(t: &prost_types::Timestamp) -> i128 {
    i128::from(t.seconds) * 1_000_000_000 + i128::from(t.nanos)
}

fn duration_nanos(d: &prost_types::Duration) -> Result<i128, Status> {
    let nanos = i128::from(d.seconds) * 1_000_000_000 + i128::from(d.nanos);
    if nanos < 0 {
        return Err(Status::invalid_argument("a staleness must not be negative"));
    }
    Ok(nanos)
}
