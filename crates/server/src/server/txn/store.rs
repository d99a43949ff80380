//! The local instance's read-write transactions: each one's options, its DML kept for replay and
//! what it touched (`write.rs` replays and validates them), the answers of the requests it
//! handled by `seqno` (a replayed request gets the same answer, not a second run), and how it
//! ended. Bounded: open transactions per session and in all, and the ended ones remembered (so a
//! late Commit or Rollback gets the right answer) are the latest [`ENDED_KEPT`].
//!
//! On a multiplexed session a transaction hands out precommit tokens, one with each answer, their
//! sequence numbers growing ([`State::next_token`]); its commit must carry the latest
//! ([`State::token_check`]).
//!
//! Aborts are scripted exactly (`abort_every`): every N-th *new* read-write transaction is doomed
//! to abort at its commit. A retry is not new: on a regular session, a transaction begun after the
//! session's last read-write transaction aborted (and before a later one committed); on a
//! multiplexed session, one whose `multiplexed_session_previous_transaction_id` names an aborted
//! transaction.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use tonic::Status;

use crate::proto::google::spanner::v1 as pb;
use crate::report::WoundSeen;
use crate::server::knobs::KnobSettings;
use crate::server::sqlite::mutation::Mutation;
use crate::server::txn::aborted::{aborted, retry_delay_for, with_wound};
use crate::server::txn::journal::AbortCause;
use crate::server::txn::lock_key::{Age, TxnId};
use crate::server::txn::locks::{LockBounds, LockTable, TxnEnd};
use crate::server::txn::write::{Answer, Footprint, TxnStatement, Validation};

/// Ended transactions remembered, the latest; older ones are forgotten (NOT_FOUND).
pub const ENDED_KEPT: usize = 10_000;
/// Bytes of answers one transaction keeps for replays by `seqno`; past it the oldest go.
pub const KEPT_ANSWER_BYTES: usize = 16 << 20;
/// Sessions whose last read-write outcome is remembered (for retries), at most.
const SESSIONS_KEPT: usize = 20_000;
/// Idle transactions are looked for at most this often.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// A read-write transaction's options, as its begin gave them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RwOptions {
    /// `read_lock_mode` (0 unspecified, 1 pessimistic, 2 optimistic).
    pub read_lock_mode: i32,
    /// `isolation_level` (0 unspecified, 1 serializable, 2 repeatable read).
    pub isolation_level: i32,
    /// `multiplexed_session_previous_transaction_id`.
    pub previous_transaction_id: Vec<u8>,
    /// The transaction tag of the request that began it (empty without one).
    pub transaction_tag: String,
}

impl RwOptions {
    /// Whether its reads take no locks: optimistic, or repeatable read (reads at a snapshot,
    /// validated at commit).
    pub fn lock_free_reads(&self) -> bool {
        self.read_lock_mode == 2 || self.isolation_level == 2
    }

    /// What it validates: nothing when its reads are locked, its reads when optimistic, its
    /// writes under repeatable read.
    pub fn validation(&self) -> Validation {
        match (self.lock_free_reads(), self.isolation_level) {
            (false, _) => Validation::None,
            (true, 2) => Validation::Writes,
            (true, _) => Validation::Reads,
        }
    }
}

/// The aborted attempt a retry carries on from: its lock priority (age) goes with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Previous {
    /// The aborted attempt.
    pub txn: TxnId,
    /// Its age, if it had begun to lock.
    pub age: Option<Age>,
}

/// One read-write transaction.
#[derive(Debug)]
pub struct ReadWrite {
    /// Its id.
    pub id: Vec<u8>,
    /// The session it was begun in.
    pub session: String,
    /// Whether that session is multiplexed (its answers carry precommit tokens).
    pub multiplexed: bool,
    /// Its options.
    pub options: RwOptions,
    /// Whether it is a retry of an aborted transaction (`abort_every` does not count it).
    pub retry: bool,
    /// The aborted attempt it retries, whose age it keeps: on a regular session the session's
    /// last read-write transaction when that one aborted, on a multiplexed session the one its
    /// begin named. None for a new transaction, and for a retry that named none.
    pub previous: Option<Previous>,
    /// Its age in the lock table, set when it first read, queried or committed.
    pub age: OnceLock<Age>,
    /// Whether `abort_every` chose it: it aborts at its commit.
    pub doomed: bool,
    /// Whether it ended aborted (read without its state's lock, to tell retries).
    aborted: AtomicBool,
    /// Whether it has ended (read without its state's lock, by the idle sweep).
    ended: AtomicBool,
    /// Its state; a call in it holds the lock while it runs, so its calls run one at a time.
    pub state: tokio::sync::Mutex<State>,
}

impl ReadWrite {
    /// Its id in the lock table: its id's eight bytes (the local instance's ids are eight).
    pub fn lock_id(&self) -> TxnId {
        match <[u8; 8]>::try_from(self.id.as_slice()) {
            Ok(bytes) => TxnId(u64::from_be_bytes(bytes)),
            Err(_) => TxnId(crate::fnv::of_parts(&[&self.id])),
        }
    }
}

/// How a transaction ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Committed.
    Committed(CommittedAs),
    /// Rolled back, or failed at its commit with an error other than ABORTED.
    RolledBack,
    /// Aborted, for this cause, in these words.
    Aborted(AbortCause, String),
}

/// What a commit applied, kept so that the same Commit sent again (after its answer was lost)
/// gets the same answer, as Spanner and the emulator give it: a transaction commits once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommittedAs {
    /// Its commit timestamp.
    pub timestamp: prost_types::Timestamp,
    /// Its mutations as Spanner counts them (the commit statistics' figure).
    pub mutation_count: i64,
}

/// What a DML request with a `seqno` answered, kept for its replay.
#[derive(Debug, Clone)]
pub enum Handled {
    /// An ExecuteSql or ExecuteStreamingSql.
    Statement(Box<Result<Answer, Status>>),
    /// An ExecuteBatchDml: the answers of the statements that ran, and the first failure.
    Batch(Vec<Answer>, Option<Status>),
}

impl Handled {
    fn bytes(&self) -> usize {
        let answer = |a: &Answer| a.values.iter().map(Vec::len).sum::<usize>() + 64;
        match self {
            Handled::Statement(handled) => match handled.as_ref() {
                Ok(a) => answer(a),
                Err(_) => 64,
            },
            Handled::Batch(answers, _) => answers.iter().map(answer).sum::<usize>() + 64,
        }
    }
}

/// A transaction's state.
#[derive(Debug)]
pub struct State {
    /// How it ended, once it has.
    pub ended: Option<Ended>,
    /// Its DML, in order, for replay and the commit.
    pub statements: Vec<TxnStatement>,
    /// The rows its DML changed, for its commit statistics.
    pub dml_rows: u64,
    /// What its statements touched.
    pub footprint: Footprint,
    /// The mutations of a commit answered with a retry reply (a multiplexed session's commit
    /// without the latest precommit token), applied by the commit that follows if it sends none.
    pub held: Option<HeldMutations>,
    /// Whether its begin named a mutation key (a multiplexed session's mutation-only transaction).
    pub keyed: bool,
    /// The older transaction that wounded it, once one has (told with its abort).
    pub wounded_by: Option<WoundSeen>,
    /// The sequence number of the last precommit token it handed out (0: none yet).
    precommit_seq: i32,
    answers: VecDeque<Kept>,
    answer_bytes: usize,
    last_used: Instant,
}

/// The mutations of a commit that was answered with a retry reply, checked and counted.
#[derive(Debug, Clone, Default)]
pub struct HeldMutations {
    /// The mutations, typed.
    pub mutations: Vec<Mutation>,
    /// What they lock at the commit.
    pub keys: Vec<crate::server::txn::lock_key::LockKey>,
    /// Spanner's count of them (each column of each row written, each key and range deleted).
    pub count: u64,
    /// Their encoded bytes.
    pub bytes: usize,
}

/// What a commit's precommit token is to its transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenCheck {
    /// The latest the transaction handed out: the commit goes ahead.
    Latest,
    /// One of the transaction's, but not the latest.
    Stale,
    /// None was sent.
    Missing,
    /// Not one the transaction handed out.
    Foreign,
}

/// The precommit token `seq` of `txn`.
fn token(txn: &ReadWrite, seq: i32) -> pb::MultiplexedSessionPrecommitToken {
    let mut bytes = txn.id.clone();
    bytes.extend_from_slice(&seq.to_be_bytes());
    pb::MultiplexedSessionPrecommitToken {
        precommit_token: bytes,
        seq_num: seq,
    }
}

/// A request's answer kept for its replay: its seqno, and its statements hashed.
#[derive(Debug)]
struct Kept {
    seqno: i64,
    key: u64,
    handled: Handled,
}

impl State {
    fn new() -> Self {
        State {
            ended: None,
            statements: Vec::new(),
            dml_rows: 0,
            footprint: Footprint::default(),
            held: None,
            keyed: false,
            wounded_by: None,
            precommit_seq: 0,
            answers: VecDeque::new(),
            answer_bytes: 0,
            last_used: Instant::now(),
        }
    }

    /// What the request with `seqno` answered before, if that request was this one (`key`: its
    /// statements and parameters hashed): a replay, answered without running again.
    pub fn replayed(&self, seqno: i64, key: u64) -> Option<Handled> {
        self.answers
            .iter()
            .find(|kept| kept.seqno == seqno && kept.key == key)
            .map(|kept| kept.handled.clone())
    }

    /// INVALID_ARGUMENT when `seqno` answered another request: a DML must not reuse one (a
    /// seqno of 0 is a seqno like any other: the official Python client starts there, and
    /// protobuf cannot tell it from none).
    pub fn check_seqno(&self, seqno: i64, key: u64) -> Result<(), Status> {
        match self.answers.iter().find(|kept| kept.seqno == seqno) {
            Some(kept) if kept.key != key => Err(Status::invalid_argument(format!(
                "seqno {seqno} already answered another statement of this transaction: each DML \
                 request needs a seqno of its own (ExecuteSqlRequest.seqno)"
            ))),
            _ => Ok(()),
        }
    }

    /// Keeps what the request `key` with `seqno` answered, for its replay (the oldest answers go
    /// past [`KEPT_ANSWER_BYTES`]).
    pub fn keep(&mut self, seqno: i64, key: u64, handled: Handled) {
        self.answer_bytes += handled.bytes();
        self.answers.push_back(Kept {
            seqno,
            key,
            handled,
        });
        while self.answer_bytes > KEPT_ANSWER_BYTES && self.answers.len() > 1 {
            if let Some(old) = self.answers.pop_front() {
                self.answer_bytes = self.answer_bytes.saturating_sub(old.handled.bytes());
            }
        }
    }

    /// The precommit token of `txn`'s next answer, on a multiplexed session (none on a regular
    /// one): its sequence number one past the last one handed out, its bytes the transaction's id
    /// and that number, so that a commit's token can be told from another transaction's.
    pub fn next_token(&mut self, txn: &ReadWrite) -> Option<pb::MultiplexedSessionPrecommitToken> {
        if !txn.multiplexed {
            return None;
        }
        self.precommit_seq = self.precommit_seq.saturating_add(1);
        Some(token(txn, self.precommit_seq))
    }

    /// The sequence number of the last precommit token it handed out (0: none yet).
    pub fn precommit_seq(&self) -> i32 {
        self.precommit_seq
    }

    /// Whether it has handed out a precommit token.
    pub fn has_tokens(&self) -> bool {
        self.precommit_seq > 0
    }

    /// What a commit's precommit token is to `txn`.
    pub fn token_check(
        &self,
        txn: &ReadWrite,
        sent: Option<&pb::MultiplexedSessionPrecommitToken>,
    ) -> TokenCheck {
        match sent {
            None => TokenCheck::Missing,
            Some(sent) if *sent != token(txn, sent.seq_num) || sent.seq_num < 1 => {
                TokenCheck::Foreign
            }
            Some(sent) if sent.seq_num < self.precommit_seq => TokenCheck::Stale,
            Some(sent) if sent.seq_num > self.precommit_seq => TokenCheck::Foreign,
            Some(_) => TokenCheck::Latest,
        }
    }

    /// Marks it used now (at the end of each call in it).
    pub fn touch(&mut self) {
        self.last_used = Instant::now();
    }

    /// Whether it has been idle, nothing outstanding, for `idle` or longer.
    fn idle_for(&self, idle: Duration) -> bool {
        self.ended.is_none() && self.last_used.elapsed() >= idle
    }
}

/// The open and recently ended read-write transactions.
#[derive(Debug)]
pub struct Transactions {
    inner: Mutex<Inner>,
    /// The lock table their attempts lock in; an ending transaction's locks go here.
    locks: Arc<LockTable>,
}

#[derive(Debug)]
struct Inner {
    by_id: HashMap<Vec<u8>, Arc<ReadWrite>>,
    ended: VecDeque<Vec<u8>>,
    sessions: HashMap<String, PerSession>,
    open: u64,
    /// New (not retried) read-write transactions begun so far.
    new_ones: u64,
    /// Commits of read-write transactions applied (for `lose_commit_answer_every`).
    applied: u64,
    swept: Instant,
}

#[derive(Debug, Default, Clone, Copy)]
struct PerSession {
    open: u64,
    /// The session's last read-write transaction to end, when it ended aborted.
    last_aborted: Option<Previous>,
}

impl Default for Transactions {
    fn default() -> Self {
        Transactions::new(Arc::new(LockTable::new(LockBounds::default())))
    }
}

impl Transactions {
    /// No transactions yet; their attempts lock in `locks`.
    pub fn new(locks: Arc<LockTable>) -> Self {
        Transactions {
            locks,
            inner: Mutex::new(Inner {
                by_id: HashMap::new(),
                ended: VecDeque::new(),
                sessions: HashMap::new(),
                open: 0,
                new_ones: 0,
                applied: 0,
                swept: Instant::now(),
            }),
        }
    }

    /// The lock table.
    pub fn locks(&self) -> &Arc<LockTable> {
        &self.locks
    }

    /// The transaction whose lock-table id is `id`, open or recently ended.
    pub fn by_lock_id(&self, id: TxnId) -> Option<Arc<ReadWrite>> {
        self.get(&id.0.to_be_bytes())
    }
}

/// Where a transaction begins: its session and whether that session is multiplexed.
#[derive(Debug, Clone, Copy)]
pub struct BeginIn<'a> {
    /// The session's name.
    pub session: &'a str,
    /// Whether it is multiplexed.
    pub multiplexed: bool,
}

impl Transactions {
    /// Begins a read-write transaction `id` in `at` with `options`: refused with
    /// RESOURCE_EXHAUSTED past the open transactions allowed per session or in all; a retry or a
    /// new one, doomed or not by `abort_every`.
    pub fn begin(
        &self,
        at: BeginIn<'_>,
        id: Vec<u8>,
        options: RwOptions,
        knobs: &KnobSettings,
    ) -> Result<Arc<ReadWrite>, Status> {
        self.sweep(knobs);
        let mut inner = self.lock();
        let session = inner.sessions.get(at.session).copied().unwrap_or_default();
        if session.open >= knobs.max_transactions_per_session {
            return Err(Status::resource_exhausted(format!(
                "the session holds {} open read-write transactions, the local instance's limit \
                 per session (max_transactions_per_session): commit or roll back some first",
                session.open
            )));
        }
        if inner.open >= knobs.max_read_write_transactions {
            return Err(Status::resource_exhausted(format!(
                "the local instance holds {} open read-write transactions, its limit \
                 (max_read_write_transactions): try again when some have ended",
                inner.open
            )));
        }
        let previous = if at.multiplexed {
            inner
                .by_id
                .get(&options.previous_transaction_id)
                .filter(|t| t.aborted.load(Ordering::Relaxed))
                .map(|t| Previous {
                    txn: t.lock_id(),
                    age: t.age.get().copied(),
                })
        } else {
            session.last_aborted
        };
        let retry = previous.is_some();
        let doomed = !retry && {
            inner.new_ones += 1;
            knobs.abort_every > 0 && inner.new_ones.is_multiple_of(knobs.abort_every)
        };
        let txn = Arc::new(ReadWrite {
            id: id.clone(),
            session: at.session.to_owned(),
            multiplexed: at.multiplexed,
            options,
            retry,
            previous,
            age: OnceLock::new(),
            doomed,
            aborted: AtomicBool::new(false),
            ended: AtomicBool::new(false),
            state: tokio::sync::Mutex::new(State::new()),
        });
        inner.by_id.insert(id, Arc::clone(&txn));
        inner.open += 1;
        if inner.sessions.len() >= SESSIONS_KEPT {
            inner.sessions.retain(|_, s| s.open > 0);
        }
        inner
            .sessions
            .entry(at.session.to_owned())
            .or_default()
            .open += 1;
        Ok(txn)
    }

    /// The transaction `id`, open or recently ended.
    pub fn get(&self, id: &[u8]) -> Option<Arc<ReadWrite>> {
        self.lock().by_id.get(id).cloned()
    }

    /// Counts one applied commit; whether `every` (the `lose_commit_answer_every` knob) says
    /// its answer is lost.
    pub fn lose_this_answer(&self, every: u64) -> bool {
        let mut inner = self.lock();
        inner.applied += 1;
        every > 0 && inner.applied.is_multiple_of(every)
    }

    /// Read-write transactions open now.
    pub fn open(&self) -> u64 {
        self.lock().open
    }

    /// Ends `txn` (whose state the caller holds) as `how`: its statements go, its session's count
    /// drops, and an abort makes the session's next transaction a retry, a commit a new one.
    pub fn end(&self, txn: &ReadWrite, state: &mut State, how: Ended) {
        if state.ended.is_some() {
            return;
        }
        let aborted = matches!(how, Ended::Aborted(..));
        txn.aborted.store(aborted, Ordering::Relaxed);
        txn.ended.store(true, Ordering::Relaxed);
        state.ended = Some(how.clone());
        state.statements = Vec::new();
        state.held = None;
        state.answers.clear();
        state.answer_bytes = 0;
        self.locks.release_all(txn.lock_id(), lock_end(&how));
        let mut inner = self.lock();
        inner.open = inner.open.saturating_sub(1);
        if let Some(session) = inner.sessions.get_mut(&txn.session) {
            session.open = session.open.saturating_sub(1);
            match how {
                Ended::Aborted(..) => {
                    session.last_aborted = Some(Previous {
                        txn: txn.lock_id(),
                        age: txn.age.get().copied(),
                    });
                }
                Ended::Committed(_) => session.last_aborted = None,
                Ended::RolledBack => {}
            }
        }
        inner.ended.push_back(txn.id.clone());
        while inner.ended.len() > ENDED_KEPT {
            if let Some(old) = inner.ended.pop_front() {
                inner.by_id.remove(&old);
            }
        }
    }

    /// The state of `txn` if it can take a call: ABORTED (with the reason) when it aborted or sat
    /// idle too long (then it aborts now), FAILED_PRECONDITION when it committed or was rolled
    /// back.
    pub fn usable(
        &self,
        txn: &ReadWrite,
        state: &mut State,
        knobs: &KnobSettings,
    ) -> Result<(), Status> {
        let idle = Duration::from_millis(knobs.transaction_idle_timeout_ms);
        if state.idle_for(idle) {
            self.end(
                txn,
                state,
                Ended::Aborted(AbortCause::Idle, idle_reason(idle)),
            );
        }
        match &state.ended {
            None => Ok(()),
            Some(Ended::Aborted(cause, why)) => {
                let status = aborted(why, retry_delay_for(*cause, knobs));
                Err(with_wound(status, state.wounded_by.as_ref()))
            }
            Some(Ended::Committed(_)) => Err(Status::failed_precondition(
                "Transaction has already been committed: a read-write transaction commits once",
            )),
            Some(Ended::RolledBack) => Err(Status::failed_precondition(
                "Transaction has been rolled back (or failed at its commit): begin another",
            )),
        }
    }

    /// Aborts the transactions idle for the idle timeout with nothing outstanding, at most once a
    /// second, so that they stop counting against their session's limit.
    fn sweep(&self, knobs: &KnobSettings) {
        let candidates: Vec<Arc<ReadWrite>> = {
            let mut inner = self.lock();
            if inner.swept.elapsed() < SWEEP_EVERY {
                return;
            }
            inner.swept = Instant::now();
            inner
                .by_id
                .values()
                .filter(|t| !t.ended.load(Ordering::Relaxed))
                .cloned()
                .collect()
        };
        let idle = Duration::from_millis(knobs.transaction_idle_timeout_ms);
        for txn in candidates {
            // A transaction with a call running is not idle.
            if let Ok(mut state) = txn.state.try_lock()
                && state.idle_for(idle)
            {
                self.end(
                    &txn,
                    &mut state,
                    Ended::Aborted(AbortCause::Idle, idle_reason(idle)),
                );
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every update leaves the maps whole between statements.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// How an ended transaction is journalled in the lock table.
fn lock_end(how: &Ended) -> TxnEnd {
    match how {
        Ended::Committed(applied) => TxnEnd::Committed {
            timestamp: applied
                .timestamp
                .seconds
                .saturating_mul(1_000_000)
                .saturating_add(i64::from(applied.timestamp.nanos / 1_000)),
        },
        Ended::Aborted(cause, detail) => TxnEnd::Aborted {
            cause: *cause,
            detail: detail.clone(),
        },
        Ended::RolledBack => TxnEnd::RolledBack,
    }
}

fn idle_reason(idle: Duration) -> String {
    format!(
        "Transaction was aborted: it was idle for {} s with nothing outstanding \
         (transaction_idle_timeout_ms)",
        idle.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs(abort_every: u64) -> KnobSettings {
        KnobSettings {
            abort_every,
            ..KnobSettings::default()
        }
    }

    #[tokio::test]
    async fn every_third_new_transaction_is_doomed_and_retries_are_not_counted() {
        let store = Transactions::default();
        let at = BeginIn {
            session: "s",
            multiplexed: false,
        };
        let mut doomed = Vec::new();
        for n in 1..=9u8 {
            let txn = store
                .begin(at, vec![n], RwOptions::default(), &knobs(3))
                .expect("begins");
            let mut state = txn.state.lock().await;
            if txn.doomed {
                doomed.push(n);
                store.end(
                    &txn,
                    &mut state,
                    Ended::Aborted(AbortCause::Scripted, "knob".into()),
                );
                drop(state);
                let retry = store
                    .begin(at, vec![n, 0], RwOptions::default(), &knobs(3))
                    .expect("begins");
                assert!(retry.retry && !retry.doomed, "{n}'s retry");
                let mut state = retry.state.lock().await;
                store.end(&retry, &mut state, Ended::Committed(Default::default()));
            } else {
                assert!(!txn.retry);
                store.end(&txn, &mut state, Ended::Committed(Default::default()));
            }
        }
        assert_eq!(doomed, [3, 6, 9]);
        assert_eq!(store.open(), 0);
    }

    #[tokio::test]
    async fn a_session_holds_at_most_its_share_and_a_seqno_is_answered_once() {
        let store = Transactions::default();
        let limits = KnobSettings {
            max_transactions_per_session: 2,
            ..KnobSettings::default()
        };
        let at = BeginIn {
            session: "s",
            multiplexed: true,
        };
        store
            .begin(at, vec![1], RwOptions::default(), &limits)
            .expect("one");
        let two = store
            .begin(at, vec![2], RwOptions::default(), &limits)
            .expect("two");
        let refused = store.begin(at, vec![3], RwOptions::default(), &limits);
        let refused = refused.map(|_| ()).expect_err("past the share");
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        let mut state = two.state.lock().await;
        assert!(state.replayed(4, 40).is_none());
        let failed = Box::new(Err(Status::not_found("x")));
        state.keep(4, 40, Handled::Statement(failed));
        assert!(matches!(
            state.replayed(4, 40),
            Some(Handled::Statement(handled)) if handled.is_err()
        ));
        assert!(state.replayed(4, 41).is_none(), "another statement");
        assert!(state.check_seqno(4, 41).is_err(), "reuses the seqno");
        assert!(state.check_seqno(5, 41).is_ok());
        store.end(&two, &mut state, Ended::RolledBack);
        drop(state);
        store
            .begin(at, vec![3], RwOptions::default(), &limits)
            .expect("room again");
    }

    #[tokio::test]
    async fn idle_transactions_are_swept_out_of_their_sessions_share() {
        let store = Transactions::default();
        let knobs = KnobSettings {
            max_transactions_per_session: 1,
            transaction_idle_timeout_ms: 50,
            ..KnobSettings::default()
        };
        let at = BeginIn {
            session: "s",
            multiplexed: false,
        };
        let idle = store
            .begin(at, vec![1], RwOptions::default(), &knobs)
            .expect("one");
        assert!(
            store
                .begin(at, vec![2], RwOptions::default(), &knobs)
                .is_err()
        );
        tokio::time::sleep(SWEEP_EVERY + Duration::from_millis(100)).await;
        let next = store
            .begin(at, vec![2], RwOptions::default(), &knobs)
            .expect("swept");
        assert!(next.retry, "the idle one aborted: the next is its retry");
        let mut state = idle.state.lock().await;
        let status = store
            .usable(&idle, &mut state, &knobs)
            .expect_err("aborted");
        assert_eq!(status.code(), tonic::Code::Aborted);
    }

    #[tokio::test]
    async fn the_instance_holds_at_most_its_open_transactions_in_all() {
        let store = Transactions::default();
        let knobs = KnobSettings {
            max_read_write_transactions: 2,
            ..KnobSettings::default()
        };
        let session = |name| BeginIn {
            session: name,
            multiplexed: false,
        };
        let first = store
            .begin(session("a"), vec![1], RwOptions::default(), &knobs)
            .expect("one");
        store
            .begin(session("b"), vec![2], RwOptions::default(), &knobs)
            .expect("two");
        let refused = store
            .begin(session("c"), vec![3], RwOptions::default(), &knobs)
            .map(|_| ())
            .expect_err("a third, in any session");
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        let mut state = first.state.lock().await;
        store.end(&first, &mut state, Ended::Committed(Default::default()));
        drop(state);
        assert_eq!(store.open(), 1);
        store
            .begin(session("c"), vec![3], RwOptions::default(), &knobs)
            .expect("room again");
    }
}
