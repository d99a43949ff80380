//! The bytes of unfinished request bodies, server-wide: each body's share, and when its last bytes
//! came.
//!
//! When a body past its first bytes would take the total past the cap, the bodies that have sent
//! nothing for [`STALLED`] make room first, the one holding the most bytes first: each is failed
//! (woken to find it out) and its bytes no longer count. A client that keeps sending is never the
//! one dropped; when dropping every stalled body would not make room, none is, and the body that
//! asked is refused.
//! Before, bodies re-sent unfinished every few seconds kept the cap full and refused nearly every
//! legitimate large request.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::Waker;
use std::time::{Duration, Instant};

/// How long a body must have sent nothing before it may be dropped to make room.
pub const STALLED: Duration = Duration::from_secs(1);

/// The unfinished bodies of the whole server.
#[derive(Debug)]
pub struct Pending {
    stalled: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Bytes counted in every body.
    total: u64,
    next: u64,
    bodies: HashMap<u64, Body>,
}

#[derive(Debug)]
struct Body {
    bytes: u64,
    last: Instant,
    /// Dropped to make room: it fails at its next poll.
    dropped: bool,
    /// The task that polls it, to wake when it is dropped.
    waker: Option<Waker>,
}

/// Whether a body's new bytes were counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// Within the cap, or made room for, or among the body's first `small` bytes.
    Passed,
    /// Past the cap with no stalled body to drop: the body is to be refused.
    Refused,
}

impl Default for Pending {
    fn default() -> Self {
        Pending::new(STALLED)
    }
}

impl Pending {
    /// Unfinished bodies, those silent for `stalled` dropped first to make room.
    pub fn new(stalled: Duration) -> Self {
        Pending {
            stalled,
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Counts only: a panic elsewhere cannot leave them half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A body begins: its id.
    pub fn open(&self) -> u64 {
        let mut state = self.lock();
        let id = state.next;
        state.next += 1;
        state.bodies.insert(
            id,
            Body {
                bytes: 0,
                last: Instant::now(),
                dropped: false,
                waker: None,
            },
        );
        id
    }

    /// Counts `bytes` more of body `id`. Past `cap`, once the body holds more than `small`,
    /// stalled bodies are dropped to make room; `Refused` when that is not enough.
    pub fn count(&self, id: u64, bytes: u64, cap: u64, small: u64) -> Counted {
        let mut state = self.lock();
        state.total = state.total.saturating_add(bytes);
        let held = match state.bodies.get_mut(&id) {
            Some(body) => {
                body.bytes = body.bytes.saturating_add(bytes);
                body.last = Instant::now();
                body.bytes
            }
            None => return Counted::Refused,
        };
        if state.total <= cap || held <= small {
            return Counted::Passed;
        }
        let mut stalled: Vec<(u64, u64)> = state
            .bodies
            .iter()
            .filter(|(other, b)| **other != id && !b.dropped && b.bytes > 0)
            .filter(|(_, b)| b.last.elapsed() >= self.stalled)
            .map(|(other, b)| (*other, b.bytes))
            .collect();
        let droppable: u64 = stalled.iter().map(|(_, bytes)| bytes).sum();
        if state.total.saturating_sub(droppable) > cap {
            // Dropping every stalled body would not be enough: none is.
            return Counted::Refused;
        }
        stalled.sort_unstable_by_key(|b| std::cmp::Reverse(b.1));
        for (other, _) in stalled {
            if state.total <= cap {
                break;
            }
            state.drop_body(other);
        }
        if state.total <= cap {
            Counted::Passed
        } else {
            Counted::Refused
        }
    }

    /// Whether body `id` was dropped to make room; if not, `waker` is woken when it is.
    pub fn dropped(&self, id: u64, waker: &Waker) -> bool {
        let mut state = self.lock();
        match state.bodies.get_mut(&id) {
            Some(body) if body.dropped => true,
            Some(body) => {
                if !body.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
                    body.waker = Some(waker.clone());
                }
                false
            }
            None => false,
        }
    }

    /// Body `id` ended (or was refused or dropped): its bytes no longer count.
    pub fn close(&self, id: u64) {
        let mut state = self.lock();
        if let Some(body) = state.bodies.remove(&id) {
            state.total = state.total.saturating_sub(body.bytes);
        }
    }

    /// Bytes counted now.
    pub fn total(&self) -> u64 {
        self.lock().total
    }
}

impl State {
    /// Drops body `id` to make room: its bytes stop counting now, and its task is woken to fail it.
    fn drop_body(&mut self, id: u64) {
        let Some(body) = self.bodies.get_mut(&id) else {
            return;
        };
        let bytes = std::mem::take(&mut body.bytes);
        body.dropped = true;
        if let Some(waker) = body.waker.take() {
            waker.wake();
        }
        self.total = self.total.saturating_sub(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalled_bodies_make_room_the_largest_first_and_a_sending_one_never_does() {
        let pending = Pending::new(Duration::from_millis(40));
        let waker = Waker::noop();
        let (small, large) = (pending.open(), pending.open());
        assert_eq!(pending.count(small, 20, 100, 10), Counted::Passed);
        assert_eq!(pending.count(large, 60, 100, 10), Counted::Passed);
        assert!(!pending.dropped(large, waker));
        std::thread::sleep(Duration::from_millis(50));
        let fresh = pending.open();
        assert_eq!(
            pending.count(fresh, 50, 100, 10),
            Counted::Passed,
            "room made"
        );
        assert!(
            pending.dropped(large, waker),
            "the stalled body holding most"
        );
        assert!(!pending.dropped(small, waker), "enough room without it");
        assert_eq!(pending.total(), 70);
        // Nothing stalled now but the small one: not room enough for 60 more, so refused, and
        // nobody dropped for nothing.
        let another = pending.open();
        assert_eq!(pending.count(another, 60, 100, 10), Counted::Refused);
        assert!(
            !pending.dropped(fresh, waker),
            "it is sending: never dropped"
        );
        assert!(!pending.dropped(small, waker));
        pending.close(another);
        pending.close(large);
        assert_eq!(pending.total(), 70);
        // Its first bytes always pass.
        let tiny = pending.open();
        assert_eq!(pending.count(tiny, 10, 50, 10), Counted::Passed);
        for id in [small, fresh, tiny] {
            pending.close(id);
        }
        assert_eq!(pending.total(), 0);
    }
}
