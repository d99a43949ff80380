//! How the read-write transactions take their locks in the lock table (`locks.rs`): an attempt
//! begins to lock at its first read, query or commit, with that moment as its age, or with the
//! age of the aborted attempt it retries ([`start`]); a pessimistic serializable statement takes
//! ReaderShared on the rows it will read before it reads them, and a commit takes WriterShared
//! on what it writes (Exclusive where it had read) before it applies anything ([`take`]). A lock
//! error that aborts ends the attempt (its locks go, its waits end) and answers ABORTED with
//! RetryInfo ([`failure`]); a bound answers RESOURCE_EXHAUSTED.
//!
//! A wounded attempt is ended at once when it is between calls ([`watch_wounds`]), as Spanner
//! aborts a wounded transaction, so that the older transaction does not wait for the younger's
//! next request; a call running when it is wounded finds out at its next lock request, or when it
//! ends ([`check`]).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;
use tonic::Status;
use tonic::metadata::MetadataValue;

use super::aborted::{aborted, retry_delay_for, with_wound};
use super::journal::AbortCause;
use super::lock_key::{LockKey, LockMode, TxnId};
use super::locks::{LockError, TxnInfo, WaitInfo};
use super::store::{Ended, ReadWrite, State, Transactions};
use crate::report::{LockWaitSeen, MAX_HOLDERS_SENT, MAX_WAITS_SENT, WoundSeen};
use crate::server::knobs::KnobSettings;
use crate::wire::result_stats::{COMMIT_LOCK_WAIT_HEADER, COMMIT_LOCK_WAITS_HEADER};

/// Begins `txn` in the lock table unless it has begun: its age is now, or its previous attempt's.
pub fn start(txns: &Transactions, txn: &ReadWrite) -> Result<(), Status> {
    if txn.age.get().is_some() {
        return Ok(());
    }
    let locks = txns.locks();
    let age = txn
        .previous
        .and_then(|p| p.age)
        .unwrap_or_else(|| locks.age_now());
    let info = TxnInfo {
        id: txn.lock_id(),
        previous: txn.previous.map(|p| p.txn),
        age,
        session: Arc::from(txn.session.as_str()),
        tag: Arc::from(txn.options.transaction_tag.as_str()),
        optimistic: txn.options.lock_free_reads(),
    };
    match locks.begin(info) {
        Ok(()) | Err(LockError::AlreadyBegun(_)) => {
            let _ = txn.age.set(age);
            Ok(())
        }
        Err(e) => Err(Status::resource_exhausted(format!(
            "the local instance's lock table cannot take another transaction: {e}"
        ))),
    }
}

/// What taking a request's locks went through: its wait in all, and each wait named (at most
/// [`MAX_WAITS_SENT`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Taken {
    /// The time waited in all.
    pub waited: Duration,
    /// The waits, each on a key behind some transactions.
    pub waits: Vec<LockWaitSeen>,
}

/// Takes each of `keys` in `mode` for `txn` (begun), one after another, each wait bounded by the
/// idle timeout: what it waited for. On a failure that aborts, `txn` is ended aborted.
pub async fn take(
    txns: &Transactions,
    txn: &ReadWrite,
    state: &mut State,
    keys: impl IntoIterator<Item = LockKey>,
    mode: LockMode,
    knobs: &KnobSettings,
) -> Result<Taken, Status> {
    let limit = Duration::from_millis(knobs.transaction_idle_timeout_ms);
    let mut taken = Taken::default();
    for key in keys {
        let deadline = tokio::time::Instant::now() + limit;
        let asked = (key.clone(), mode);
        match txns
            .locks()
            .acquire_waited(txn.lock_id(), key, mode, deadline)
            .await
        {
            Ok(acquired) => {
                taken.waited += acquired.waited();
                if let Some(wait) = acquired.wait.filter(|_| taken.waits.len() < MAX_WAITS_SENT) {
                    taken.waits.push(seen(&asked.0, asked.1, &wait));
                }
            }
            Err((e, waited)) => {
                if let Some(waited) = waited {
                    taken.waited += waited;
                    if taken.waits.len() < MAX_WAITS_SENT {
                        taken.waits.push(LockWaitSeen {
                            key: asked.0.rows_in_words(),
                            column: asked.0.column.as_deref().map(str::to_owned),
                            mode: asked.1.to_string(),
                            ms: waited.as_secs_f64() * 1e3,
                            holders: Vec::new(),
                        });
                    }
                }
                return Err(with_waits(fail(txns, txn, state, &e, knobs), &taken));
            }
        }
    }
    Ok(taken)
}

/// `status` (a request's failure while it took its locks) with the waits it went through in the
/// trailers a commit's answer carries them in (`spanprof-lock-wait-us`, `spanprof-lock-waits`):
/// a wait that ended in an abort is one LOCK_STATS count, and the client is told of it too.
fn with_waits(mut status: Status, taken: &Taken) -> Status {
    put_waits(status.metadata_mut(), taken.waited, &taken.waits);
    status
}

/// Puts a request's wait for locks, `waited` in all and `waits` named, in `headers` (an aborted
/// request's trailers, the headers of a statement's answer that carries no query statistics):
/// `spanprof-lock-wait-us` and `spanprof-lock-waits` ([`write_waits`]). Nothing when it did not
/// wait.
pub fn put_waits(
    headers: &mut tonic::metadata::MetadataMap,
    waited: Duration,
    waits: &[LockWaitSeen],
) {
    if waited.is_zero() && waits.is_empty() {
        return;
    }
    write_waits(headers, waited, waits);
}

/// [`put_waits`], a zero wait said too: a commit's answer always says how long it waited.
pub fn write_waits(
    headers: &mut tonic::metadata::MetadataMap,
    waited: Duration,
    waits: &[LockWaitSeen],
) {
    if let Ok(value) = MetadataValue::try_from(waited.as_micros().to_string()) {
        headers.insert(COMMIT_LOCK_WAIT_HEADER, value);
    }
    let named = (!waits.is_empty())
        .then(|| serde_json::to_string(waits).ok())
        .flatten();
    if let Some(value) = named.and_then(|w| MetadataValue::try_from(w).ok()) {
        headers.insert(COMMIT_LOCK_WAITS_HEADER, value);
    }
}

/// A wait as the client is told it: the key and mode asked, how long, behind whom.
fn seen(key: &LockKey, mode: LockMode, wait: &WaitInfo) -> LockWaitSeen {
    let mut holders: Vec<String> = Vec::new();
    for holder in &wait.holders {
        let id = hex_id(holder.txn);
        if holders.len() < MAX_HOLDERS_SENT && !holders.contains(&id) {
            holders.push(id);
        }
    }
    LockWaitSeen {
        key: key.rows_in_words(),
        column: key.column.as_deref().map(str::to_owned),
        mode: mode.to_string(),
        ms: wait.duration.as_secs_f64() * 1e3,
        holders,
    }
}

/// A transaction's id as the client knows it: its eight bytes in hex.
pub fn hex_id(txn: TxnId) -> String {
    format!("{:016x}", txn.0)
}

/// The wound an error names, as the client is told it.
fn wound_seen(e: &LockError) -> Option<WoundSeen> {
    match e {
        LockError::Wounded(w) => Some(WoundSeen {
            by: hex_id(w.by),
            key: w.key.rows_in_words(),
            column: w.key.column.as_deref().map(str::to_owned),
            mode: w.mode.to_string(),
        }),
        _ => None,
    }
}

/// Fails with ABORTED, ending `txn`, when an older transaction has wounded it: what each call of
/// a read-write transaction checks when it is done, and a commit before it applies anything.
pub fn check(
    txns: &Transactions,
    txn: &ReadWrite,
    state: &mut State,
    knobs: &KnobSettings,
) -> Result<(), Status> {
    if txn.age.get().is_none() {
        return Ok(());
    }
    match txns.locks().check(txn.lock_id()) {
        Ok(()) => Ok(()),
        Err(e) => Err(fail(txns, txn, state, &e, knobs)),
    }
}

/// Ends `txn` as the lock error `e` says (when it aborts) and answers it.
fn fail(
    txns: &Transactions,
    txn: &ReadWrite,
    state: &mut State,
    e: &LockError,
    knobs: &KnobSettings,
) -> Status {
    let (status, cause) = failure(e, knobs);
    if state.ended.is_none() {
        state.wounded_by = wound_seen(e);
    }
    if let Some(cause) = cause {
        txns.end(
            txn,
            state,
            Ended::Aborted(cause, status.message().to_owned()),
        );
    }
    if state.ended.is_some() && cause.is_none() {
        // Ended meanwhile (wounded and reaped, or idle): its own answer.
        if let Err(ended) = txns.usable(txn, state, knobs) {
            return ended;
        }
    }
    status
}

/// The answer to a lock error, and the cause when it aborts the transaction.
pub fn failure(e: &LockError, knobs: &KnobSettings) -> (Status, Option<AbortCause>) {
    // Every abort here is a conflict's, and asks the same short delay.
    let delay = retry_delay_for(AbortCause::Wounded, knobs);
    match e {
        LockError::Wounded(w) => {
            let status = aborted(
                &format!(
                    "Transaction was aborted: wounded by an older transaction ({}) that asked for \
                     a {} lock on {} (the local instance's locking is a model of Spanner's \
                     wound-wait)",
                    hex_id(w.by),
                    w.mode,
                    w.key
                ),
                delay,
            );
            let wound = wound_seen(e);
            (
                with_wound(status, wound.as_ref()),
                Some(AbortCause::Wounded),
            )
        }
        LockError::DeadlineExceeded(d) => (
            aborted(
                &format!(
                    "Transaction was aborted: it waited {} ms for a {} lock on {}, held by {} \
                     other transaction(s), longer than the local instance lets a lock wait \
                     (transaction_idle_timeout_ms)",
                    d.waited.as_millis(),
                    d.mode,
                    d.key,
                    d.holders.len()
                ),
                delay,
            ),
            Some(AbortCause::LockWaitDeadline),
        ),
        LockError::Exhausted { .. } => (
            Status::resource_exhausted(format!(
                "the local instance's lock table is full for this request ({e}): commit or roll \
                 back transactions that hold many locks, or read fewer rows per transaction"
            )),
            None,
        ),
        LockError::UnknownTransaction(_) | LockError::AlreadyBegun(_) | LockError::Ended(_) => (
            aborted(
                "Transaction was aborted: it ended while it waited for a lock",
                delay,
            ),
            None,
        ),
    }
}

/// Ends each wounded transaction as soon as no call of its runs (a running call's end checks it
/// too), so that its locks go at once. Runs until the lock table's sender is gone.
pub fn watch_wounds(txns: Arc<Transactions>, mut wounds: UnboundedReceiver<TxnId>) {
    tokio::spawn(async move {
        while let Some(victim) = wounds.recv().await {
            let Some(txn) = txns.by_lock_id(victim) else {
                continue;
            };
            let txns = Arc::clone(&txns);
            tokio::spawn(async move {
                let mut state = txn.state.lock().await;
                if state.ended.is_some() {
                    return;
                }
                if let Err(e) = txns.locks().check(victim) {
                    state.wounded_by = wound_seen(&e);
                    let (status, cause) = failure(&e, &KnobSettings::default());
                    let cause = cause.unwrap_or(AbortCause::Wounded);
                    txns.end(
                        &txn,
                        &mut state,
                        Ended::Aborted(cause, status.message().to_owned()),
                    );
                }
            });
        }
    });
}
