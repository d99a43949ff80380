//! Why a lock request or check failed, and which bound a request went over.

use std::time::Duration;

use super::super::journal::Holder;
use super::super::lock_key::{LockKey, LockMode, TxnId};

/// Which bound a request went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// [`super::LockBounds::locks_per_txn`].
    LocksPerTxn,
    /// [`super::LockBounds::entries`].
    Entries,
    /// [`super::LockBounds::ranges`].
    Ranges,
    /// [`super::LockBounds::waiters`].
    Waiters,
    /// [`super::LockBounds::transactions`].
    Transactions,
}

/// What wounded a transaction: the older transaction, and what it asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wounded {
    /// The older transaction.
    pub by: TxnId,
    /// What it asked for.
    pub key: LockKey,
    /// In which mode.
    pub mode: LockMode,
}

/// A wait that passed its deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockWaitDeadline {
    /// What was asked for.
    pub key: LockKey,
    /// In which mode.
    pub mode: LockMode,
    /// How long it waited.
    pub waited: Duration,
    /// Whom it waited on (when it began to wait).
    pub holders: Vec<Holder>,
}

/// Why a request or check failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockError {
    /// An older transaction wounded this one: ABORTED.
    #[error("wounded by the older {by} asking {mode} on {key:?}", by = .0.by, mode = .0.mode, key = .0.key)]
    Wounded(Wounded),
    /// The wait passed the caller's deadline: ABORTED.
    #[error("a {mode} lock wait passed its deadline after {waited:?}", mode = .0.mode, waited = .0.waited)]
    DeadlineExceeded(Box<LockWaitDeadline>),
    /// A bound was reached: RESOURCE_EXHAUSTED.
    #[error("too many locks: {what:?} is at its bound of {limit}")]
    Exhausted {
        /// The bound.
        what: Limit,
        /// Its value.
        limit: usize,
    },
    /// The transaction was not begun, or has ended.
    #[error("{0} is not a transaction the lock table knows")]
    UnknownTransaction(TxnId),
    /// The transaction was begun already.
    #[error("{0} began already")]
    AlreadyBegun(TxnId),
    /// The transaction ended while the request waited.
    #[error("{0} ended while it waited for a lock")]
    Ended(TxnId),
}

impl LockError {
    /// Whether the transaction is to be aborted (ABORTED, retried by the client as a whole).
    pub fn is_abort(&self) -> bool {
        matches!(self, LockError::Wounded(_) | LockError::DeadlineExceeded(_))
    }
}
