//! What the local instance saw of its clients' read-write transactions while someone watches
//! (`spanprof client --read-write`): every request that begins or names a read-write transaction
//! (BeginTransaction, a statement, a batch of DML, a read, Commit, Rollback), with its session,
//! the transaction it named or began (and, for a begin, the previous transaction it named and the
//! one whose age the instance let it keep), its transaction tag, a commit's precommit token
//! against the latest its attempt was handed, the status it was answered with and the RetryInfo
//! delay that status asked, and when it arrived and was answered. The retry check
//! (`analysis::retry_check`) reads these against SPANNER_WIRE's "a correct retry".
//!
//! Off unless switched on ([`RwTap::watch`]): then the service's dispatch pays one atomic load
//! per call (the read-only query path included) and nothing else. On, it keeps at most
//! [`MAX_CALLS`] calls, beyond which it counts and says so ([`RwSeen::overflow`]).

use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use prost::Message as _;
use tonic::Status;

use crate::proto::google::rpc;
use crate::proto::google::spanner::v1 as pb;
use crate::server::txn::aborted::RETRY_INFO_TYPE;
use crate::server::txn::store::{ReadWrite, Transactions};

/// Calls kept, at most.
pub const MAX_CALLS: usize = 50_000;

/// The read-write tap: off, or watching.
#[derive(Debug, Default)]
pub struct RwTap {
    on: AtomicBool,
    seen: Mutex<RwSeen>,
}

/// What was seen since the tap was last read.
#[derive(Debug, Clone, Default)]
pub struct RwSeen {
    /// The calls, in the order they were answered.
    pub calls: Vec<RwCall>,
    /// Whether more calls came than it keeps.
    pub overflow: bool,
}

/// The RPC of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwRpc {
    /// BeginTransaction.
    Begin,
    /// ExecuteSql.
    ExecuteSql,
    /// ExecuteStreamingSql.
    ExecuteStreamingSql,
    /// ExecuteBatchDml.
    ExecuteBatchDml,
    /// Read or StreamingRead.
    Read,
    /// Commit.
    Commit,
    /// Rollback.
    Rollback,
}

/// A transaction a call began (BeginTransaction, or a statement's inline begin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Began {
    /// The transaction (its id as the lock table names it).
    pub txn: u64,
    /// Whether its session is multiplexed.
    pub multiplexed: bool,
    /// The transaction its begin named in `multiplexed_session_previous_transaction_id`.
    pub previous_named: Option<u64>,
    /// The aborted attempt whose age the instance let it keep (the session's last aborted one on
    /// a regular session, the one it named on a multiplexed session).
    pub previous_kept: Option<u64>,
}

/// One call of a read-write transaction, as the instance saw it.
#[derive(Debug, Clone)]
pub struct RwCall {
    /// Its RPC.
    pub rpc: RwRpc,
    /// The session it came on.
    pub session: String,
    /// The transaction it named by id (none for a begin).
    pub named: Option<u64>,
    /// The transaction it began, if it began one.
    pub began: Option<Began>,
    /// Its `request_options.transaction_tag`.
    pub tag: String,
    /// A commit's precommit token's sequence number (none when it sent none).
    pub token_sent: Option<i32>,
    /// At a commit: the sequence number of the latest precommit token its transaction had
    /// handed out (0: none), when the transaction was known and free to look at.
    pub token_latest: Option<i32>,
    /// The gRPC code it was answered with (0: OK).
    pub code: i32,
    /// The delay the answer's RetryInfo asked for.
    pub retry_delay: Option<Duration>,
    /// When it arrived.
    pub arrived: Instant,
    /// When its answer (or its stream's start) left the handler.
    pub answered: Instant,
}

/// A call being watched, before its answer.
#[derive(Debug)]
pub struct Pending {
    call: RwCall,
}

tokio::task_local! {
    /// The transaction the call in this task began, set by [`began`].
    static BEGAN: Cell<Option<Began>>;
}

/// `txn`'s id as the lock table names it.
fn id_of(bytes: &[u8]) -> u64 {
    match <[u8; 8]>::try_from(bytes) {
        Ok(b) => u64::from_be_bytes(b),
        Err(_) => crate::fnv::of_parts(&[bytes]),
    }
}

/// The call in this task began `txn` (a no-op unless the call is watched).
pub fn began(txn: &ReadWrite) {
    let seen = Began {
        txn: txn.lock_id().0,
        multiplexed: txn.multiplexed,
        previous_named: (!txn.options.previous_transaction_id.is_empty())
            .then(|| id_of(&txn.options.previous_transaction_id)),
        previous_kept: txn.previous.map(|p| p.txn.0),
    };
    let _ = BEGAN.try_with(|cell| cell.set(Some(seen)));
}

fn tag_of(options: Option<&pb::RequestOptions>) -> String {
    options
        .map(|o| o.transaction_tag.clone())
        .unwrap_or_default()
}

impl RwTap {
    /// Starts watching, forgetting anything seen before.
    pub fn watch(&self) {
        *self.lock() = RwSeen::default();
        self.on.store(true, Ordering::Release);
    }

    /// Stops watching.
    pub fn stop(&self) {
        self.on.store(false, Ordering::Release);
    }

    /// Whether it is watching.
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Acquire)
    }

    /// What was seen since the last take (or `watch`), leaving it empty.
    pub fn take(&self) -> RwSeen {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> MutexGuard<'_, RwSeen> {
        // Each update is one push; a panic cannot leave worse than a call missing.
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn pending(&self, rpc: RwRpc, session: &str, named: Option<u64>, tag: String) -> Pending {
        Pending {
            call: RwCall {
                rpc,
                session: session.to_owned(),
                named,
                began: None,
                tag,
                token_sent: None,
                token_latest: None,
                code: 0,
                retry_delay: None,
                arrived: Instant::now(),
                answered: Instant::now(),
            },
        }
    }

    /// A statement or read's call, if watching and its selector begins a read-write transaction
    /// or names one.
    pub(super) fn statement(
        &self,
        rpc: RwRpc,
        (session, selector, options): (
            &str,
            Option<&pb::TransactionSelector>,
            Option<&pb::RequestOptions>,
        ),
        txns: &Transactions,
    ) -> Option<Pending> {
        use pb::transaction_selector::Selector;
        if !self.is_on() {
            return None;
        }
        let named = match selector.and_then(|s| s.selector.as_ref()) {
            Some(Selector::Begin(o)) if is_read_write(o) => None,
            Some(Selector::Id(id)) if txns.get(id).is_some() => Some(id_of(id)),
            _ => return None,
        };
        Some(self.pending(rpc, session, named, tag_of(options)))
    }

    /// A BeginTransaction's call, if watching and it begins a read-write transaction.
    pub(super) fn begin(&self, r: &pb::BeginTransactionRequest) -> Option<Pending> {
        if !self.is_on() || !r.options.as_ref().is_some_and(is_read_write) {
            return None;
        }
        let tag = tag_of(r.request_options.as_ref());
        Some(self.pending(RwRpc::Begin, &r.session, None, tag))
    }

    /// A Commit's call, if watching and it names a read-write transaction: with the token it
    /// sent and the latest its transaction handed out.
    pub(super) fn commit(&self, r: &pb::CommitRequest, txns: &Transactions) -> Option<Pending> {
        use pb::commit_request::Transaction;
        if !self.is_on() {
            return None;
        }
        let Some(Transaction::TransactionId(id)) = &r.transaction else {
            return None;
        };
        let txn = txns.get(id)?;
        let tag = tag_of(r.request_options.as_ref());
        let mut pending = self.pending(RwRpc::Commit, &r.session, Some(id_of(id)), tag);
        pending.call.token_sent = r.precommit_token.as_ref().map(|t| t.seq_num);
        pending.call.token_latest = txn.state.try_lock().ok().map(|s| s.precommit_seq());
        Some(pending)
    }

    /// A Rollback's call, if watching and it names a read-write transaction.
    pub(super) fn rollback(&self, r: &pb::RollbackRequest, txns: &Transactions) -> Option<Pending> {
        if !self.is_on() || txns.get(&r.transaction_id).is_none() {
            return None;
        }
        let named = Some(id_of(&r.transaction_id));
        Some(self.pending(RwRpc::Rollback, &r.session, named, String::new()))
    }

    fn record(&self, mut call: RwCall, status: Option<&Status>) {
        call.answered = Instant::now();
        if let Some(status) = status {
            call.code = status.code() as i32;
            call.retry_delay = retry_delay(status);
        }
        let mut seen = self.lock();
        if seen.calls.len() < MAX_CALLS {
            seen.calls.push(call);
        } else {
            seen.overflow = true;
        }
    }
}

fn is_read_write(options: &pb::TransactionOptions) -> bool {
    matches!(
        options.mode,
        Some(pb::transaction_options::Mode::ReadWrite(_))
    )
}

/// The delay a status's RetryInfo asks for (in its details).
fn retry_delay(status: &Status) -> Option<Duration> {
    let details = rpc::Status::decode(status.details()).ok()?;
    let any = details
        .details
        .iter()
        .find(|a| a.type_url == RETRY_INFO_TYPE)?;
    let delay = rpc::RetryInfo::decode(any.value.as_slice())
        .ok()?
        .retry_delay?;
    let secs = u64::try_from(delay.seconds).ok()?;
    let nanos = u32::try_from(delay.nanos).ok()?;
    Some(Duration::new(secs, nanos.min(999_999_999)))
}

/// Runs `call`, recording it (with the transaction it began) if it is watched.
pub(super) async fn watched<T>(
    tap: &RwTap,
    pending: Option<Pending>,
    call: impl Future<Output = Result<T, Status>>,
) -> Result<T, Status> {
    let Some(Pending { call: mut seen }) = pending else {
        return call.await;
    };
    let (answer, began) = BEGAN
        .scope(Cell::new(None), async {
            let answer = call.await;
            (answer, BEGAN.with(Cell::get))
        })
        .await;
    seen.began = began;
    tap.record(seen, answer.as_ref().err());
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::txn::aborted::aborted;

    #[test]
    fn a_retry_delay_is_read_back_from_the_status_details() {
        let status = aborted("wounded", Duration::from_millis(250));
        assert_eq!(retry_delay(&status), Some(Duration::from_millis(250)));
        assert_eq!(retry_delay(&Status::internal("x")), None);
    }

    #[tokio::test]
    async fn it_records_only_while_watching_and_within_its_bound() {
        let tap = RwTap::default();
        let r = pb::BeginTransactionRequest {
            session: "s".into(),
            options: Some(pb::TransactionOptions {
                mode: Some(pb::transaction_options::Mode::ReadWrite(Default::default())),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(tap.begin(&r).is_none(), "off: nothing watched");
        tap.watch();
        let answer: Result<(), Status> = watched(&tap, tap.begin(&r), async {
            Err(aborted("a", Duration::from_millis(5)))
        })
        .await;
        assert!(answer.is_err());
        let seen = tap.take();
        assert_eq!(seen.calls.len(), 1);
        assert_eq!(seen.calls[0].code, tonic::Code::Aborted as i32);
        assert_eq!(seen.calls[0].retry_delay, Some(Duration::from_millis(5)));
        for _ in 0..=MAX_CALLS {
            let _ = watched(&tap, tap.begin(&r), async { Ok::<_, Status>(()) }).await;
        }
        let seen = tap.take();
        assert_eq!(seen.calls.len(), MAX_CALLS);
        assert!(seen.overflow);
    }
}
