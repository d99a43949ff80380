//! The streams whose queries wait on clients that read none of what was sent, counted server-wide.
//!
//! A paused stream costs the server a constant whatever its answer's size (its thread and SQLite
//! connection, its budget, the message the transport holds: about 7 MiB with 1 MiB messages), so a
//! cap on their number bounds the memory that clients who never read can make the server hold.
//! Past the cap, the connection of the stream that has waited longest is closed: that frees its
//! query and everything the transport buffered for its streams, which nothing short of closing the
//! connection can (HTTP/2 holds a stream's data until its client grants the window). A stream only
//! counts as unread after it has waited [`GRACE`]: a client that reads, however slowly, makes its
//! query wait for moments at a time and is never the one closed.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::server::control::Interrupt;
use crate::server::listener::Link;

/// How long a stream's query must have waited on its client before the stream may be closed.
pub const GRACE: Duration = Duration::from_secs(1);

/// The waiting streams of the whole server.
#[derive(Debug)]
pub struct Unread {
    max: usize,
    grace: Duration,
    state: Mutex<Waiters>,
    closed: AtomicU64,
}

#[derive(Debug, Default)]
struct Waiters {
    next: u64,
    /// By the order they began to wait: the first has waited longest.
    by_age: BTreeMap<u64, Waiter>,
}

#[derive(Debug)]
struct Waiter {
    since: Instant,
    /// The stream's connection (`None` for streams served without one, in tests).
    link: Option<Arc<Link>>,
    interrupt: Arc<Interrupt>,
}

/// Where a stream's waits are counted: the server's [`Unread`] and its connection.
#[derive(Debug, Clone)]
pub struct WaitsOn {
    /// The server's count.
    pub unread: Arc<Unread>,
    /// The stream's connection.
    pub link: Option<Arc<Link>>,
}

/// One wait of one stream's query, counted until dropped.
#[derive(Debug)]
pub struct Wait<'a> {
    unread: &'a Unread,
    key: u64,
}

impl Unread {
    /// At most `max` streams waiting on their clients for longer than `grace`.
    pub fn new(max: u64, grace: Duration) -> Self {
        Unread {
            max: usize::try_from(max).unwrap_or(usize::MAX),
            grace,
            state: Mutex::default(),
            closed: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Waiters> {
        // A map of plain entries: a panic elsewhere cannot leave it half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A query begins to wait on its client.
    pub fn begin(&self, link: Option<Arc<Link>>, interrupt: Arc<Interrupt>) -> Wait<'_> {
        let mut state = self.lock();
        let key = state.next;
        state.next += 1;
        state.by_age.insert(
            key,
            Waiter {
                since: Instant::now(),
                link,
                interrupt,
            },
        );
        let over = self.over_cap(&mut state);
        drop(state);
        self.close(over);
        Wait { unread: self, key }
    }

    /// Closes the connections of the streams that have waited longest, while more than the cap
    /// wait and the longest has waited its grace.
    fn enforce(&self) {
        let over = self.over_cap(&mut self.lock());
        self.close(over);
    }

    /// Takes out the waiters past the cap that have waited their grace, the longest first.
    fn over_cap(&self, state: &mut Waiters) -> Vec<Waiter> {
        let mut over = Vec::new();
        while state.by_age.len() > self.max {
            let Some(entry) = state.by_age.first_entry() else {
                break;
            };
            if entry.get().since.elapsed() < self.grace {
                break;
            }
            over.push(entry.remove());
        }
        over
    }

    /// Closes what `over_cap` took out (outside the lock: closing wakes a connection's task).
    fn close(&self, over: Vec<Waiter>) {
        for waiter in over {
            self.closed.fetch_add(1, Ordering::Relaxed);
            match waiter.link {
                Some(link) => link.close(),
                None => waiter.interrupt.client_gone(),
            }
        }
    }

    /// Streams waiting now.
    pub fn waiting(&self) -> usize {
        self.lock().by_age.len()
    }

    /// Streams whose connection was closed (or query stopped) for waiting too long past the cap.
    pub fn closed(&self) -> u64 {
        self.closed.load(Ordering::Relaxed)
    }
}

impl Wait<'_> {
    /// Looks again while the query waits: the cap is enforced as the streams age.
    pub fn look(&self) {
        self.unread.enforce();
    }
}

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        self.unread.lock().by_age.remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::control::Stop;

    #[test]
    fn past_the_cap_the_longest_waiting_stream_is_stopped_once_its_grace_is_over() {
        let unread = Unread::new(2, Duration::from_millis(50));
        let interrupts: Vec<_> = (0..4).map(|_| Interrupt::unbounded()).collect();
        let first = unread.begin(None, Arc::clone(&interrupts[0]));
        let link = Arc::new(Link::default());
        let second = unread.begin(Some(Arc::clone(&link)), Arc::clone(&interrupts[1]));
        let third = unread.begin(None, Arc::clone(&interrupts[2]));
        assert_eq!(
            unread.waiting(),
            3,
            "over the cap, but nobody has waited its grace"
        );
        assert!(interrupts.iter().all(|i| i.check().is_none()));
        std::thread::sleep(Duration::from_millis(60));
        third.look();
        assert_eq!(unread.waiting(), 2);
        assert_eq!(interrupts[0].check(), Some(Stop::ClientGone), "the oldest");
        assert!(interrupts[1].check().is_none() && !link.is_closed());
        drop(first);
        let fourth = unread.begin(None, Arc::clone(&interrupts[3]));
        assert!(
            link.is_closed(),
            "the second is now the oldest past its grace: its connection"
        );
        assert_eq!((unread.waiting(), unread.closed()), (2, 2));
        assert!(
            interrupts[1].check().is_none(),
            "its stream learns of it from its connection"
        );
        drop((second, third, fourth));
        assert_eq!(unread.waiting(), 0);
    }

    #[test]
    fn a_query_that_waits_for_moments_at_a_time_is_never_stopped() {
        let unread = Unread::new(0, Duration::from_millis(200));
        let interrupt = Interrupt::unbounded();
        for _ in 0..20 {
            let wait = unread.begin(None, Arc::clone(&interrupt));
            std::thread::sleep(Duration::from_millis(5));
            wait.look();
        }
        assert_eq!((interrupt.check(), unread.closed()), (None, 0));
    }
}
