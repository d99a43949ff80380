//! How far a stream's query may run ahead of its client: the bytes of finished messages between the
//! query thread and the transport (in the query's channel, the live stream, the response) are counted
//! against a limit. The thread waits at the limit, so a client that does not read pauses its query
//! instead of making the server buffer the answer; while it waits the query gives its place among
//! the running queries back, and takes one again before it goes on. The transport's own buffer
//! (hyper's, at most 400 KiB and one message per stream) comes on top. A query waiting here is
//! counted among the server's unread streams (`unread.rs`), which bounds how many may wait.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use std::sync::Arc;

use super::unread::WaitsOn;
use crate::server::control::{Interrupt, Slot, Stop, Vacated};

/// How often a waiting query looks at its interrupt.
const LOOK: Duration = Duration::from_millis(20);

/// One stream's count of bytes in flight, shared by its query thread and its responses.
#[derive(Debug)]
pub struct SendBudget {
    limit: usize,
    state: Mutex<State>,
    room: Condvar,
    /// Where its waits are counted, if anywhere.
    waits: Option<WaitsOn>,
    /// Nanoseconds its stream waited, a message ready, for room in the transport's queue: the
    /// server's wait on a client that was not reading (the statistics' `client_wait_time`).
    client_wait_ns: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    held: usize,
    slot: Place,
    /// What stops the waiting query.
    interrupt: Option<Arc<Interrupt>>,
}

/// The query's place among the running queries, as the budget keeps it for the thread.
#[derive(Debug, Default)]
enum Place {
    #[default]
    None,
    Held(Slot),
    Vacated(Vacated),
}

impl SendBudget {
    /// A budget of `limit` bytes (a message larger than it still goes, alone).
    pub fn new(limit: usize) -> Self {
        SendBudget {
            limit: limit.max(1),
            state: Mutex::default(),
            room: Condvar::new(),
            waits: None,
            client_wait_ns: AtomicU64::new(0),
        }
    }

    /// A message waited `waited`, ready, for room in the transport's queue.
    pub fn waited_on_client(&self, waited: Duration) {
        let ns = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
        self.client_wait_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// How long its messages have waited, ready, for room in the transport's queue so far.
    pub fn client_wait(&self) -> Duration {
        Duration::from_nanos(self.client_wait_ns.load(Ordering::Relaxed))
    }

    /// The same budget, its waits counted in `waits`.
    pub fn counted(self, waits: WaitsOn) -> Self {
        SendBudget {
            waits: Some(waits),
            ..self
        }
    }

    fn begin_wait(&self, interrupt: &Arc<Interrupt>) -> Option<super::unread::Wait<'_>> {
        let waits = self.waits.as_ref()?;
        let held = self.held();
        Some(waits.unread.begin(waits, held, Arc::clone(interrupt)))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Counts only: a panic elsewhere cannot leave them half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps the query thread's place (if it has one), to give back while it waits, and what
    /// stops it waiting.
    pub fn hold(&self, slot: Option<Slot>, interrupt: Arc<Interrupt>) {
        let mut state = self.lock();
        state.slot = slot.map_or(Place::None, Place::Held);
        state.interrupt = Some(interrupt);
    }

    /// The thread ends: its place goes with it.
    pub fn end(&self) {
        self.lock().slot = Place::None;
    }

    /// Bytes counted now.
    pub fn held(&self) -> usize {
        self.lock().held
    }

    fn fits(&self, state: &State, bytes: usize) -> bool {
        state.held == 0 || state.held.saturating_add(bytes) <= self.limit
    }

    /// Counts `bytes` about to be sent, waiting (on the query thread) while they do not fit; the
    /// query's place is given back while it waits and taken again before it returns. `Err` when
    /// the query must stop instead.
    pub fn acquire(&self, bytes: usize) -> Result<(), Stop> {
        let mut state = self.lock();
        if self.fits(&state, bytes) {
            state.held += bytes;
            return Ok(());
        }
        let interrupt = state.interrupt.clone().unwrap_or_else(Interrupt::unbounded);
        vacate(&mut state);
        drop(state);
        let wait = self.begin_wait(&interrupt);
        let mut state = self.lock();
        while !self.fits(&state, bytes) {
            state = self
                .room
                .wait_timeout(state, LOOK)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            if let Some(stop) = interrupt.check() {
                return Err(stop);
            }
            if let Some(wait) = &wait {
                drop(state);
                wait.look();
                state = self.lock();
            }
        }
        state.held += bytes;
        drop((state, wait));
        self.retake(&interrupt)
    }

    /// Runs `send` (a send the stream is not ready for) with the query's place given back; if it
    /// went, takes a place again. Whether the query goes on: not when the send failed (its stream
    /// is gone, so it quits without a place) or it was stopped waiting for one.
    pub fn paused(&self, send: impl FnOnce() -> bool) -> bool {
        let interrupt = {
            let mut state = self.lock();
            vacate(&mut state);
            state.interrupt.clone().unwrap_or_else(Interrupt::unbounded)
        };
        // Counted but not looked at again: it blocks on its channel, and a stream closed for it
        // unblocks it (the channel's receiver goes with the connection).
        let counted = self.begin_wait(&interrupt);
        let sent = send();
        drop(counted);
        sent && self.retake(&interrupt).is_ok()
    }

    /// Takes the vacated place again, waiting while every place is taken.
    fn retake(&self, interrupt: &Interrupt) -> Result<(), Stop> {
        let mut state = self.lock();
        while let Place::Vacated(vacated) = &state.slot {
            match vacated.retake() {
                Some(slot) => state.slot = Place::Held(slot),
                None => {
                    drop(state);
                    std::thread::sleep(LOOK);
                    if let Some(stop) = interrupt.check() {
                        return Err(stop);
                    }
                    state = self.lock();
                }
            }
        }
        Ok(())
    }

    /// Counts `bytes` without waiting (the last messages, cut after the query thread is done).
    pub fn charge(&self, bytes: usize) {
        self.lock().held += bytes;
    }

    /// `bytes` reached the transport (or will never be sent).
    pub fn release(&self, bytes: usize) {
        let mut state = self.lock();
        state.held = state.held.saturating_sub(bytes);
        drop(state);
        self.room.notify_one();
    }
}

/// Gives the held place back, if there is one; a place already given back stays so.
fn vacate(state: &mut State) {
    state.slot = match std::mem::take(&mut state.slot) {
        Place::Held(slot) => Place::Vacated(slot.vacate()),
        kept => kept,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::control::Slots;

    #[test]
    fn a_full_budget_waits_without_its_slot_until_bytes_are_released() {
        let slots = Slots::default();
        let budget = Arc::new(SendBudget::new(100));
        budget.hold(slots.take(1), Interrupt::unbounded());
        budget.acquire(500).expect("alone, a large message goes");
        assert_eq!(budget.held(), 500);
        let waiter = {
            let budget = Arc::clone(&budget);
            std::thread::spawn(move || budget.acquire(10))
        };
        let gave_back = (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(5));
            slots.running() == 0
        });
        assert!(gave_back, "a waiting query holds no place");
        let other = slots.take(1).expect("another query runs meanwhile");
        budget.release(500);
        std::thread::sleep(Duration::from_millis(60));
        assert!(!waiter.is_finished(), "no place yet: it waits for one");
        drop(other);
        assert_eq!(waiter.join().expect("joins"), Ok(()));
        assert_eq!((budget.held(), slots.running()), (10, 1));
        budget.end();
        assert_eq!(slots.running(), 0);
    }

    /// A stream released while its query waited to send (a parked one at its limit) closes the
    /// channel: the query quits without taking a place again, so the server never counts a
    /// running query for a stream that is gone.
    #[test]
    fn a_paused_send_that_fails_quits_without_taking_a_place_again() {
        let slots = Slots::default();
        let budget = SendBudget::new(100);
        budget.hold(slots.take(1), Interrupt::unbounded());
        assert_eq!(slots.running(), 1);
        let mut running_while_sending = None;
        let goes_on = budget.paused(|| {
            running_while_sending = Some(slots.running());
            false
        });
        assert!(!goes_on, "its stream is gone");
        assert_eq!(running_while_sending, Some(0), "no place while it waits");
        assert_eq!(slots.running(), 0, "no place taken again to quit");
        assert!(budget.paused(|| true), "a send that went goes on");
        assert_eq!(slots.running(), 1, "with a place again");
        budget.end();
        assert_eq!(slots.running(), 0);
    }

    #[test]
    fn a_waiting_query_stops_when_its_client_leaves() {
        let budget = Arc::new(SendBudget::new(10));
        let interrupt = Interrupt::unbounded();
        budget.hold(None, Arc::clone(&interrupt));
        budget.acquire(10).expect("fits");
        let waiter = {
            let budget = Arc::clone(&budget);
            std::thread::spawn(move || budget.acquire(1))
        };
        std::thread::sleep(Duration::from_millis(30));
        interrupt.client_gone();
        assert_eq!(waiter.join().expect("joins"), Err(Stop::ClientGone));
        budget.charge(5);
        budget.release(100);
        assert_eq!(budget.held(), 0, "never below zero");
    }
}
