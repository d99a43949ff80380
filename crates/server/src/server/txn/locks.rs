//! The lock table: a model of Spanner's locking for the local instance's read-write transactions,
//! with a [`Journal`] of everything it did. It is a pure module: the server tells it when an
//! attempt begins ([`LockTable::begin`]), asks for locks as reads and writes run
//! ([`LockTable::acquire`]), checks before a commit ([`LockTable::check`]) and ends the attempt
//! ([`LockTable::release_all`]); the table never touches the database.
//!
//! **Modes.** Spanner's four ([`LockMode`], whose doc holds the conflict matrix and its reasons):
//! a pessimistic read takes ReaderShared, a blind write WriterShared at commit, a read then a write
//! of one cell Exclusive (a transaction holding ReaderShared that asks WriterShared is upgraded to
//! Exclusive, [`LockMode::combined_with`]), a write of a commit-timestamp column
//! WriterSharedTimestamp. A lock covers a cell, a row (every column) or a range `[start, end)` of a
//! table's key space ([`LockKey`]); a point conflicts with a range covering it when their modes
//! conflict.
//!
//! **Wound-wait.** Each transaction has an [`Age`] (its first read, query or commit; a retry passes
//! its aborted attempt's). When a request conflicts with locks other transactions hold, each
//! younger holder is wounded (an older requester never waits on a younger transaction for long:
//! the holder is to be aborted; if it is waiting it wakes at once with [`LockError::Wounded`], if
//! it is running its next request or [`LockTable::check`] fails so; its locks go when the server
//! ends it), and the requester waits until every conflicting holder has released. A requester
//! therefore only ever waits for a lock an older transaction holds, or one a wounded transaction
//! holds until it ends: a cycle of waits would need a transaction older than itself, so there is
//! no deadlock. When locks are released, the waiters are tried again oldest first (the same rule:
//! a waiter that now conflicts with a younger holder wounds it), so the oldest is served first.
//! A request does not queue behind older waiters for locks it does not conflict with.
//!
//! **Waits** end when granted, when the waiting transaction is wounded, at the caller's deadline
//! ([`LockError::DeadlineExceeded`], which the caller answers with ABORTED as Spanner aborts long
//! lock waits), or when the waiting future is dropped: it is cancel-safe, leaving no waiter and no
//! lock of its (a grant it had not yet seen is given back).
//!
//! **Bounds** ([`LockBounds`]): locks per transaction, lock entries in all, range entries in all,
//! waiters and transactions; a request over one fails [`LockError::Exhausted`]
//! (RESOURCE_EXHAUSTED). An upgrade takes no new entry, a whole-table range is one entry. Ranges are
//! kept as a list per table (their count is bounded apart for that reason).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::Instant;

use super::held::Held;
use super::journal::{AbortCause, EventKind, Holder, JOURNAL_EVENTS, Journal, WaitEnd, WaitId};
use super::lock_key::{Age, LockKey, LockMode, Rows, TxnId};

mod errors;
#[cfg(test)]
mod tests;

pub use errors::{Limit, LockError, LockWaitDeadline, Wounded};

/// The bounds of one lock table (the server faces hostile clients).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockBounds {
    /// Locks one transaction may hold.
    pub locks_per_txn: usize,
    /// Lock entries of every transaction together.
    pub entries: usize,
    /// Range entries of every transaction together (each request scans a table's ranges).
    pub ranges: usize,
    /// Requests waiting at once.
    pub waiters: usize,
    /// Transactions begun and not ended.
    pub transactions: usize,
    /// Events the journal keeps.
    pub journal_events: usize,
}

impl Default for LockBounds {
    fn default() -> Self {
        LockBounds {
            locks_per_txn: 100_000,
            entries: 1_000_000,
            ranges: 100_000,
            waiters: 10_000,
            transactions: 100_000,
            journal_events: JOURNAL_EVENTS,
        }
    }
}

/// An attempt that begins to lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnInfo {
    /// The attempt.
    pub id: TxnId,
    /// The aborted attempt it retries, if it is a retry.
    pub previous: Option<TxnId>,
    /// Its age: for a retry, the aborted attempt's.
    pub age: Age,
    /// Its session.
    pub session: Arc<str>,
    /// Its transaction tag (empty without one).
    pub tag: Arc<str>,
    /// Whether it reads optimistically (no read locks; SPANNER_SYS keeps nothing of it).
    pub optimistic: bool,
}

/// How a transaction ended, for [`LockTable::release_all`] and its journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnEnd {
    /// It committed, at the caller's timestamp.
    Committed {
        /// The commit timestamp (the caller's representation, e.g. microseconds).
        timestamp: i64,
    },
    /// It was aborted.
    Aborted {
        /// Why.
        cause: AbortCause,
        /// The caller's words (may be empty).
        detail: String,
    },
    /// It was rolled back, or ended otherwise.
    RolledBack,
}

/// A wait a granted request went through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitInfo {
    /// The wait, as the journal names it.
    pub wait: WaitId,
    /// How long it lasted.
    pub duration: Duration,
    /// Whom it waited on (when it began to wait).
    pub holders: Vec<Holder>,
}

/// A granted request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acquired {
    /// The mode now held on the key (Exclusive after an upgrade).
    pub mode: LockMode,
    /// The wait, if it waited.
    pub wait: Option<WaitInfo>,
}

impl Acquired {
    /// How long it waited (zero when granted at once).
    pub fn waited(&self) -> Duration {
        self.wait.as_ref().map_or(Duration::ZERO, |w| w.duration)
    }
}

/// The lock table: its state behind one mutex, never held across an await.
#[derive(Debug)]
pub struct LockTable {
    state: Mutex<State>,
}

/// A waiter's place: oldest transaction first, then by wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct WaitOrder {
    age: Age,
    txn: TxnId,
    wait: WaitId,
}

#[derive(Debug)]
struct TxnState {
    age: Age,
    tag: Arc<str>,
    wounded: Option<Wounded>,
    waits: Vec<WaitOrder>,
}

/// How to give back a grant nobody saw.
#[derive(Debug, Clone, Copy)]
enum Undo {
    Added,
    Upgraded(LockMode),
}

#[derive(Debug)]
struct Waiter {
    key: LockKey,
    mode: LockMode,
    started: Instant,
    holders: Vec<Holder>,
    notify: Arc<Notify>,
    outcome: Option<Result<Acquired, LockError>>,
    /// How long it had waited when its outcome was decided, as journalled.
    waited: Duration,
    undo: Option<Undo>,
}

/// What trying a request found.
enum Verdict {
    /// Granted in `mode`; `undo` None when it was held already.
    Granted { mode: LockMode, undo: Option<Undo> },
    /// These holders conflict (the younger ones now wounded).
    Blocked(Vec<Holder>),
}

#[derive(Debug)]
struct State {
    start: Instant,
    bounds: LockBounds,
    txns: HashMap<TxnId, TxnState>,
    held: Held,
    waiters: BTreeMap<WaitOrder, Waiter>,
    next_wait: u64,
    journal: Journal,
    /// Where each wound is told, once, for the server to end the victim at once.
    wounds: Option<UnboundedSender<TxnId>>,
}

/// What [`LockTable::request`] leaves to wait for.
struct Ticket {
    order: WaitOrder,
    notify: Arc<Notify>,
}

impl LockTable {
    /// An empty table whose clock starts now.
    pub fn new(bounds: LockBounds) -> LockTable {
        LockTable {
            state: Mutex::new(State {
                start: Instant::now(),
                bounds,
                txns: HashMap::new(),
                held: Held::default(),
                waiters: BTreeMap::new(),
                next_wait: 0,
                journal: Journal::new(bounds.journal_events),
                wounds: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The table's clock: the time since it started.
    pub fn now(&self) -> Duration {
        self.lock().since_start()
    }

    /// The age of a transaction whose first read, query or commit is now.
    pub fn age_now(&self) -> Age {
        Age(self.now())
    }

    /// Registers an attempt (journalled as begun).
    pub fn begin(&self, info: TxnInfo) -> Result<(), LockError> {
        let mut state = self.lock();
        if state.txns.contains_key(&info.id) {
            return Err(LockError::AlreadyBegun(info.id));
        }
        if state.txns.len() >= state.bounds.transactions {
            return Err(LockError::Exhausted {
                what: Limit::Transactions,
                limit: state.bounds.transactions,
            });
        }
        state.txns.insert(
            info.id,
            TxnState {
                age: info.age,
                tag: info.tag.clone(),
                wounded: None,
                waits: Vec::new(),
            },
        );
        state.record(EventKind::Begun {
            txn: info.id,
            previous: info.previous,
            age: info.age,
            session: info.session,
            tag: info.tag,
            optimistic: info.optimistic,
        });
        Ok(())
    }

    /// Asks for `key` in `mode` for `txn`, waiting until `deadline` at most (see the module doc
    /// for who waits and who wounds). Cancel-safe: dropping the future leaves no waiter and no
    /// lock of its.
    pub async fn acquire(
        &self,
        txn: TxnId,
        key: LockKey,
        mode: LockMode,
        deadline: Instant,
    ) -> Result<Acquired, LockError> {
        self.acquire_waited(txn, key, mode, deadline)
            .await
            .map_err(|(e, _)| e)
    }

    /// [`LockTable::acquire`], a failure with how long it waited before it failed (None: it
    /// failed without waiting), as the journal counts that wait: what a request that ends in an
    /// abort tells its client of the wait LOCK_STATS count.
    pub async fn acquire_waited(
        &self,
        txn: TxnId,
        key: LockKey,
        mode: LockMode,
        deadline: Instant,
    ) -> Result<Acquired, (LockError, Option<Duration>)> {
        let ticket = match self.request(txn, key, mode).map_err(|e| (e, None))? {
            Ok(acquired) => return Ok(acquired),
            Err(ticket) => ticket,
        };
        // A failure says how long the journal has the wait lasting (to its decision, not to when
        // this future woke to it), so that what a client is told adds up to LOCK_STATS.
        let waited = |(outcome, waited): (Result<Acquired, LockError>, Duration)| {
            outcome.map_err(|e| (e, Some(waited)))
        };
        let mut guard = WaitGuard {
            table: self,
            order: ticket.order,
            armed: true,
        };
        loop {
            if let Some(outcome) = self.lock().take_outcome(ticket.order) {
                guard.armed = false;
                return waited(outcome);
            }
            if tokio::time::timeout_at(deadline, ticket.notify.notified())
                .await
                .is_err()
            {
                guard.armed = false;
                return waited(self.lock().expire(ticket.order));
            }
        }
    }

    /// Fails when `txn` was wounded (the commit calls it before it applies anything) or is not
    /// known.
    pub fn check(&self, txn: TxnId) -> Result<(), LockError> {
        let state = self.lock();
        let txn_state = state
            .txns
            .get(&txn)
            .ok_or(LockError::UnknownTransaction(txn))?;
        match &txn_state.wounded {
            Some(wounded) => Err(LockError::Wounded(wounded.clone())),
            None => Ok(()),
        }
    }

    /// Ends `txn`: journals how, fails its waits still going ([`LockError::Ended`]), frees its
    /// locks and tries the waiters again, oldest first. Ending an unknown transaction does
    /// nothing.
    pub fn release_all(&self, txn: TxnId, end: TxnEnd) {
        self.lock().release_all(txn, end);
    }

    /// The locks `txn` holds (entries; an upgrade is still one).
    pub fn locks_of(&self, txn: TxnId) -> usize {
        self.lock().held.count_of(txn)
    }

    /// Lock entries held in all.
    pub fn entries(&self) -> usize {
        self.lock().held.entries()
    }

    /// Requests waiting now (not yet granted or failed).
    pub fn waiting(&self) -> usize {
        self.lock()
            .waiters
            .values()
            .filter(|w| w.outcome.is_none())
            .count()
    }

    /// Each transaction wounded from now on, told once (the last caller's receiver only), so that
    /// the server can end a victim that is between calls and free its locks at once, as Spanner
    /// aborts a wounded transaction rather than waiting for its next request.
    pub fn watch_wounds(&self) -> UnboundedReceiver<TxnId> {
        let (tx, rx) = unbounded_channel();
        self.lock().wounds = Some(tx);
        rx
    }

    /// Reads the journal.
    pub fn journal<R>(&self, read: impl FnOnce(&Journal) -> R) -> R {
        read(&self.lock().journal)
    }

    /// Grants at once, or registers a waiter (`Ok(Err(ticket))`).
    fn request(
        &self,
        txn: TxnId,
        key: LockKey,
        mode: LockMode,
    ) -> Result<Result<Acquired, Ticket>, LockError> {
        let mut state = self.lock();
        let age = {
            let txn_state = state
                .txns
                .get(&txn)
                .ok_or(LockError::UnknownTransaction(txn))?;
            if let Some(wounded) = &txn_state.wounded {
                return Err(LockError::Wounded(wounded.clone()));
            }
            txn_state.age
        };
        match state.try_grant(txn, &key, mode)? {
            Verdict::Granted { mode, .. } => {
                state.record(EventKind::Granted {
                    txn,
                    key,
                    mode,
                    waited: None,
                });
                Ok(Ok(Acquired { mode, wait: None }))
            }
            Verdict::Blocked(holders) => {
                if state.waiters.len() >= state.bounds.waiters {
                    return Err(LockError::Exhausted {
                        what: Limit::Waiters,
                        limit: state.bounds.waiters,
                    });
                }
                Ok(Err(state.enqueue(txn, age, key, mode, holders)))
            }
        }
    }
}

/// Cancels a wait whose future is dropped before it ended.
struct WaitGuard<'a> {
    table: &'a LockTable,
    order: WaitOrder,
    armed: bool,
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.table.lock().cancel(self.order);
        }
    }
}

impl State {
    fn since_start(&self) -> Duration {
        Instant::now().saturating_duration_since(self.start)
    }

    fn record(&mut self, kind: EventKind) {
        let at = self.since_start();
        self.journal.record(at, kind);
    }

    fn holder(&self, txn: TxnId, key: LockKey, mode: LockMode) -> Holder {
        let (age, tag) = self
            .txns
            .get(&txn)
            .map_or((Age::default(), Arc::from("")), |t| (t.age, t.tag.clone()));
        Holder {
            txn,
            age,
            tag,
            key,
            mode,
        }
    }

    /// The other transactions' locks that conflict with `txn` asking `key` in `mode`.
    fn conflicting(&self, txn: TxnId, key: &LockKey, mode: LockMode) -> Vec<Holder> {
        self.held
            .conflicting(txn, key, mode)
            .into_iter()
            .map(|h| self.holder(h.txn, h.key, h.mode))
            .collect()
    }

    /// Tries `txn`'s request: grants it, or wounds the younger conflicting holders and reports
    /// every conflicting one. Fails only on a bound.
    fn try_grant(
        &mut self,
        txn: TxnId,
        key: &LockKey,
        mode: LockMode,
    ) -> Result<Verdict, LockError> {
        let own = self.held.mode_of(txn, key);
        let wanted = own.map_or(mode, |held| held.combined_with(mode));
        if own == Some(wanted) {
            return Ok(Verdict::Granted {
                mode: wanted,
                undo: None,
            });
        }
        if own.is_none() {
            self.check_room(txn, key)?;
        }
        let holders = self.conflicting(txn, key, wanted);
        if holders.is_empty() {
            let undo = match own {
                Some(previous) => {
                    self.held.set_mode(txn, key, wanted);
                    Undo::Upgraded(previous)
                }
                None => {
                    self.held.add(txn, key, wanted);
                    Undo::Added
                }
            };
            return Ok(Verdict::Granted {
                mode: wanted,
                undo: Some(undo),
            });
        }
        let me = self.txns.get(&txn).map(|t| (t.age, txn));
        let mut wounded = HashSet::new();
        for holder in &holders {
            if me.is_some_and(|me| me < (holder.age, holder.txn)) && wounded.insert(holder.txn) {
                self.wound(holder.txn, txn, key, wanted);
            }
        }
        Ok(Verdict::Blocked(holders))
    }

    /// Fails when one more entry for `txn` on `key` would pass a bound.
    fn check_room(&self, txn: TxnId, key: &LockKey) -> Result<(), LockError> {
        let bounds = self.bounds;
        let over = if self.held.count_of(txn) >= bounds.locks_per_txn {
            Some((Limit::LocksPerTxn, bounds.locks_per_txn))
        } else if self.held.entries() >= bounds.entries {
            Some((Limit::Entries, bounds.entries))
        } else if matches!(key.rows, Rows::Range(_)) && self.held.ranges() >= bounds.ranges {
            Some((Limit::Ranges, bounds.ranges))
        } else {
            None
        };
        match over {
            Some((what, limit)) => Err(LockError::Exhausted { what, limit }),
            None => Ok(()),
        }
    }

    /// Wounds `victim` (once): journals it, and wakes its waits with the error.
    fn wound(&mut self, victim: TxnId, by: TxnId, key: &LockKey, mode: LockMode) {
        let Some(victim_state) = self.txns.get_mut(&victim) else {
            return;
        };
        if victim_state.wounded.is_some() {
            return;
        }
        let wounded = Wounded {
            by,
            key: key.clone(),
            mode,
        };
        victim_state.wounded = Some(wounded.clone());
        let waits = victim_state.waits.clone();
        if let Some(wounds) = &self.wounds {
            // A receiver gone (the server stopping) leaves the victim to its next request.
            let _ = wounds.send(victim);
        }
        self.record(EventKind::Wound {
            by,
            victim,
            key: key.clone(),
            mode,
        });
        for order in waits {
            self.decide(
                order,
                Err(LockError::Wounded(wounded.clone())),
                WaitEnd::Wounded,
            );
        }
    }

    /// Ends a wait still going with `outcome`: journals it and wakes its future.
    fn decide(&mut self, order: WaitOrder, outcome: Result<Acquired, LockError>, how: WaitEnd) {
        let now = Instant::now();
        let Some(waiter) = self.waiters.get_mut(&order) else {
            return;
        };
        if waiter.outcome.is_some() {
            return;
        }
        let waited = now.saturating_duration_since(waiter.started);
        waiter.outcome = Some(outcome);
        waiter.waited = waited;
        waiter.notify.notify_one();
        self.record(EventKind::WaitEnded {
            wait: order.wait,
            txn: order.txn,
            how,
            waited,
        });
    }

    fn enqueue(
        &mut self,
        txn: TxnId,
        age: Age,
        key: LockKey,
        mode: LockMode,
        holders: Vec<Holder>,
    ) -> Ticket {
        let wait = WaitId(self.next_wait);
        self.next_wait += 1;
        let order = WaitOrder { age, txn, wait };
        let notify = Arc::new(Notify::new());
        self.record(EventKind::WaitStarted {
            wait,
            txn,
            key: key.clone(),
            mode,
            holders: holders.clone(),
        });
        self.waiters.insert(
            order,
            Waiter {
                key,
                mode,
                started: Instant::now(),
                holders,
                notify: notify.clone(),
                outcome: None,
                waited: Duration::ZERO,
                undo: None,
            },
        );
        if let Some(t) = self.txns.get_mut(&txn) {
            t.waits.push(order);
        }
        Ticket { order, notify }
    }

    /// Forgets a wait that ended, from its transaction's list.
    fn forget(&mut self, order: WaitOrder) -> Option<Waiter> {
        if let Some(t) = self.txns.get_mut(&order.txn) {
            t.waits.retain(|o| *o != order);
        }
        self.waiters.remove(&order)
    }

    /// A decided wait's outcome, with how long it had waited then; the wait is forgotten.
    fn take_outcome(
        &mut self,
        order: WaitOrder,
    ) -> Option<(Result<Acquired, LockError>, Duration)> {
        self.waiters.get(&order)?.outcome.as_ref()?;
        let waiter = self.forget(order)?;
        Some((waiter.outcome?, waiter.waited))
    }

    /// The deadline passed: the outcome if one came first, else the wait ends here.
    fn expire(&mut self, order: WaitOrder) -> (Result<Acquired, LockError>, Duration) {
        if let Some(outcome) = self.take_outcome(order) {
            return outcome;
        }
        let Some(waiter) = self.waiters.get(&order) else {
            return (Err(LockError::Ended(order.txn)), Duration::ZERO);
        };
        let error = LockError::DeadlineExceeded(Box::new(LockWaitDeadline {
            key: waiter.key.clone(),
            mode: waiter.mode,
            waited: Instant::now().saturating_duration_since(waiter.started),
            holders: waiter.holders.clone(),
        }));
        self.decide(order, Err(error), WaitEnd::Deadline);
        self.take_outcome(order)
            .unwrap_or((Err(LockError::Ended(order.txn)), Duration::ZERO))
    }

    /// The waiting future was dropped: the wait ends, and a grant it had not seen goes back.
    fn cancel(&mut self, order: WaitOrder) {
        let Some(waiter) = self.forget(order) else {
            return;
        };
        match (&waiter.outcome, waiter.undo) {
            (None, _) => {
                let waited = Instant::now().saturating_duration_since(waiter.started);
                self.record(EventKind::WaitEnded {
                    wait: order.wait,
                    txn: order.txn,
                    how: WaitEnd::Cancelled,
                    waited,
                });
            }
            (Some(Ok(_)), Some(undo)) if self.txns.contains_key(&order.txn) => {
                match undo {
                    Undo::Added => self.held.remove(order.txn, &waiter.key),
                    Undo::Upgraded(previous) => {
                        self.held.set_mode(order.txn, &waiter.key, previous);
                    }
                }
                self.record(EventKind::Returned {
                    txn: order.txn,
                    key: waiter.key,
                });
                self.grant_waiters();
            }
            _ => {}
        }
    }

    /// Tries every wait still going again, oldest transaction first.
    fn grant_waiters(&mut self) {
        let pending: Vec<WaitOrder> = self
            .waiters
            .iter()
            .filter(|(_, w)| w.outcome.is_none())
            .map(|(order, _)| *order)
            .collect();
        for order in pending {
            let Some(waiter) = self.waiters.get(&order) else {
                continue;
            };
            if waiter.outcome.is_some() {
                continue;
            }
            let (key, mode, started) = (waiter.key.clone(), waiter.mode, waiter.started);
            let holders = waiter.holders.clone();
            match self.try_grant(order.txn, &key, mode) {
                Ok(Verdict::Blocked(_)) => {}
                Ok(Verdict::Granted { mode, undo }) => {
                    let duration = Instant::now().saturating_duration_since(started);
                    let acquired = Acquired {
                        mode,
                        wait: Some(WaitInfo {
                            wait: order.wait,
                            duration,
                            holders,
                        }),
                    };
                    if let Some(w) = self.waiters.get_mut(&order) {
                        w.undo = undo;
                    }
                    self.decide(order, Ok(acquired), WaitEnd::Granted);
                    self.record(EventKind::Granted {
                        txn: order.txn,
                        key,
                        mode,
                        waited: Some(duration),
                    });
                }
                Err(error) => self.decide(order, Err(error), WaitEnd::Cancelled),
            }
        }
    }

    fn release_all(&mut self, txn: TxnId, end: TxnEnd) {
        let Some(waits) = self.txns.get(&txn).map(|t| t.waits.clone()) else {
            return;
        };
        self.record(match end {
            TxnEnd::Committed { timestamp } => EventKind::Committed { txn, timestamp },
            TxnEnd::Aborted { cause, detail } => EventKind::Aborted {
                txn,
                cause,
                detail: if detail.is_empty() {
                    cause.describe().to_owned()
                } else {
                    format!("{}: {detail}", cause.describe())
                },
            },
            TxnEnd::RolledBack => EventKind::RolledBack { txn },
        });
        for order in waits {
            self.decide(order, Err(LockError::Ended(txn)), WaitEnd::Cancelled);
        }
        self.txns.remove(&txn);
        self.held.release(txn);
        self.grant_waiters();
    }
}
