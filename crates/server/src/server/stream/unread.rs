//! The streams whose queries wait on clients that read none of what was sent, counted server-wide.
//!
//! A paused stream costs the server a constant whatever its answer's size (its thread and SQLite
//! connection, its budget, the message the transport holds: about 7 MiB with 1 MiB messages), so a
//! cap on their number bounds the memory that clients who never read can make the server hold.
//! Past the cap a connection is closed: that frees its queries and everything the transport
//! buffered for its streams, which nothing short of closing the connection can (HTTP/2 holds a
//! stream's data until its client grants the window).
//!
//! A stream counts as unread only once its query has waited [`GRACE`] and the transport has taken
//! none of its response for as long (`drain.rs`): a client that reads, however slowly, grants
//! window as it reads, and is never counted nor closed. The victim is chosen by what it holds:
//! the connection whose unread streams hold the most bytes, then the one that has waited longest;
//! a connection on which some stream is being read is closed only when no other would do.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::drain::Drain;
use crate::server::control::Interrupt;
use crate::server::link::Link;

/// How long a stream's query must have waited on its client, the transport taking nothing, before
/// the stream counts as unread.
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
    /// When the waiters were last looked over (at most every `grace / 20`).
    looked: Option<Instant>,
}

#[derive(Debug)]
struct Waiter {
    since: Instant,
    /// The bytes its budget held when it began to wait.
    held: usize,
    /// The stream's connection (`None` for streams served without one, in tests).
    link: Option<Arc<Link>>,
    /// Its response's way out (`None` in tests).
    drain: Option<Arc<Drain>>,
    interrupt: Arc<Interrupt>,
}

impl Waiter {
    /// Waited its grace, and the transport took nothing of its response meanwhile.
    fn unread(&self, grace: Duration) -> bool {
        self.since.elapsed() >= grace && !self.drain.as_ref().is_some_and(|d| d.taken_within(grace))
    }

    /// What it is closed by: its connection, else its own query.
    fn owner(&self, key: u64) -> Owner {
        match &self.link {
            Some(link) => Owner::Link(Arc::as_ptr(link) as usize),
            None => Owner::Alone(key),
        }
    }
}

/// Whose waiters go together when one is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Owner {
    Link(usize),
    Alone(u64),
}

/// What one owner's unread streams hold, to choose a victim by.
#[derive(Debug)]
struct Holding {
    owner: Owner,
    unread: usize,
    bytes: usize,
    oldest: Instant,
    /// Some stream on its connection is being read.
    reading: bool,
}

/// Where a stream's waits are counted: the server's [`Unread`], its connection and its way out.
#[derive(Debug, Clone)]
pub struct WaitsOn {
    /// The server's count.
    pub unread: Arc<Unread>,
    /// The stream's connection.
    pub link: Option<Arc<Link>>,
    /// The stream's response on its way out.
    pub drain: Option<Arc<Drain>>,
}

/// One wait of one stream's query, counted until dropped.
#[derive(Debug)]
pub struct Wait<'a> {
    unread: &'a Unread,
    key: u64,
}

impl Unread {
    /// At most `max` streams unread, each having waited `grace` with nothing taken.
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

    /// A stream's query begins to wait on its client (`on`), its budget holding `held` bytes.
    pub fn begin(&self, on: &WaitsOn, held: usize, interrupt: Arc<Interrupt>) -> Wait<'_> {
        let mut state = self.lock();
        let key = state.next;
        state.next += 1;
        state.by_age.insert(
            key,
            Waiter {
                since: Instant::now(),
                held,
                link: on.link.clone(),
                drain: on.drain.clone(),
                interrupt,
            },
        );
        let over = self.over_cap(&mut state);
        drop(state);
        self.close(over);
        Wait { unread: self, key }
    }

    /// Closes connections while more than the cap are unread.
    fn enforce(&self) {
        let over = self.over_cap(&mut self.lock());
        self.close(over);
    }

    /// Takes out the waiters of the owners to close, while more than the cap are unread.
    fn over_cap(&self, state: &mut Waiters) -> Vec<Waiter> {
        if state.by_age.len() <= self.max
            || state
                .looked
                .is_some_and(|at| at.elapsed() < self.grace / 20)
        {
            return Vec::new();
        }
        state.looked = Some(Instant::now());
        let holdings = self.holdings(state);
        let unread: usize = holdings.iter().map(|h| h.unread).sum();
        let mut excess = unread.saturating_sub(self.max);
        let mut over = Vec::new();
        for holding in victims(holdings) {
            if excess == 0 {
                break;
            }
            excess = excess.saturating_sub(holding.unread);
            let keys: Vec<u64> = state
                .by_age
                .iter()
                .filter(|(key, w)| w.owner(**key) == holding.owner)
                .map(|(key, _)| *key)
                .collect();
            over.extend(keys.iter().filter_map(|key| state.by_age.remove(key)));
        }
        over
    }

    /// What each owner's unread streams hold.
    fn holdings(&self, state: &Waiters) -> Vec<Holding> {
        let mut by_owner: HashMap<Owner, Holding> = HashMap::new();
        for (key, waiter) in state.by_age.iter() {
            if !waiter.unread(self.grace) {
                continue;
            }
            let owner = waiter.owner(*key);
            let holding = by_owner.entry(owner).or_insert_with(|| Holding {
                owner,
                unread: 0,
                bytes: 0,
                oldest: waiter.since,
                reading: waiter
                    .link
                    .as_ref()
                    .is_some_and(|link| link.drained_within(self.grace)),
            });
            holding.unread += 1;
            holding.bytes = holding.bytes.saturating_add(waiter.held);
            holding.oldest = holding.oldest.min(waiter.since);
        }
        by_owner.into_values().collect()
    }

    /// Closes what `over_cap` took out (outside the lock: closing wakes a connection's task).
    fn close(&self, over: Vec<Waiter>) {
        let mut links_closed = Vec::new();
        for waiter in over {
            match waiter.link {
                Some(link) => {
                    if !links_closed.iter().any(|l| Arc::ptr_eq(l, &link)) {
                        self.closed.fetch_add(1, Ordering::Relaxed);
                        link.close();
                        links_closed.push(link);
                    }
                }
                None => {
                    self.closed.fetch_add(1, Ordering::Relaxed);
                    waiter.interrupt.client_gone();
                }
            }
        }
    }

    /// Streams waiting now (unread or not yet).
    pub fn waiting(&self) -> usize {
        self.lock().by_age.len()
    }

    /// Connections closed (or, without one, queries stopped) for holding unread streams past the cap.
    pub fn closed(&self) -> u64 {
        self.closed.load(Ordering::Relaxed)
    }
}

/// The order victims are chosen in: connections on which nothing is being read first, then the
/// most bytes held unread, then the longest wait.
fn victims(mut holdings: Vec<Holding>) -> Vec<Holding> {
    holdings.sort_by(|a, b| {
        a.reading
            .cmp(&b.reading)
            .then(b.bytes.cmp(&a.bytes))
            .then(a.oldest.cmp(&b.oldest))
    });
    holdings
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

    const GRACE: Duration = Duration::from_millis(50);

    fn on(unread: &Arc<Unread>, link: Option<&Arc<Link>>, drain: Option<&Arc<Drain>>) -> WaitsOn {
        WaitsOn {
            unread: Arc::clone(unread),
            link: link.cloned(),
            drain: drain.cloned(),
        }
    }

    /// Past the grace and with the looks spaced out, the cap is enforced at the next look.
    fn after_grace(wait: &Wait<'_>) {
        std::thread::sleep(GRACE + GRACE / 5);
        wait.look();
    }

    #[test]
    fn past_the_cap_the_connection_holding_the_most_unread_bytes_is_closed_after_its_grace() {
        let unread = Arc::new(Unread::new(2, GRACE));
        let interrupts: Vec<_> = (0..4).map(|_| Interrupt::unbounded()).collect();
        let (small, large) = (Arc::new(Link::default()), Arc::new(Link::default()));
        let first = unread.begin(
            &on(&unread, Some(&small), None),
            100,
            Arc::clone(&interrupts[0]),
        );
        let second = unread.begin(
            &on(&unread, Some(&large), None),
            600,
            Arc::clone(&interrupts[1]),
        );
        let third = unread.begin(&on(&unread, None, None), 300, Arc::clone(&interrupts[2]));
        assert_eq!(
            unread.waiting(),
            3,
            "over the cap, but nobody has waited its grace"
        );
        assert!(!small.is_closed() && !large.is_closed());
        after_grace(&third);
        assert!(
            large.is_closed(),
            "the most bytes, though not the longest wait"
        );
        assert!(!small.is_closed() && interrupts[2].check().is_none());
        assert_eq!((unread.waiting(), unread.closed()), (2, 1));
        assert!(
            interrupts[1].check().is_none(),
            "its stream learns of it from its connection"
        );
        drop(second);
        let fourth = unread.begin(&on(&unread, None, None), 100, Arc::clone(&interrupts[3]));
        after_grace(&fourth);
        assert_eq!(
            interrupts[2].check(),
            Some(Stop::ClientGone),
            "300 bytes held, with no connection: its query is stopped"
        );
        assert!(!small.is_closed(), "100 bytes, waiting longest: kept");
        drop((first, third, fourth));
        assert_eq!(unread.waiting(), 0);
    }

    #[test]
    fn a_stream_whose_response_was_taken_within_the_grace_is_never_closed() {
        let unread = Arc::new(Unread::new(1, GRACE));
        let links: Vec<_> = (0..3).map(|_| Arc::new(Link::default())).collect();
        let drain = Arc::new(Drain::new(Some(Arc::clone(&links[0]))));
        // The reader holds the most and has waited longest: by holdings alone it would go first.
        let read = unread.begin(
            &on(&unread, Some(&links[0]), Some(&drain)),
            1000,
            Interrupt::unbounded(),
        );
        let never = unread.begin(
            &on(&unread, Some(&links[1]), None),
            10,
            Interrupt::unbounded(),
        );
        let mut other = None;
        for _ in 0..8 {
            std::thread::sleep(GRACE / 4);
            // The transport takes a piece: the client granted window.
            drain.taken();
            other.get_or_insert_with(|| {
                unread.begin(
                    &on(&unread, Some(&links[2]), None),
                    10,
                    Interrupt::unbounded(),
                )
            });
            read.look();
        }
        assert!(!links[0].is_closed(), "read, however slowly: never closed");
        assert!(
            links[1].is_closed(),
            "never read, the same bytes as the third, waited longer"
        );
        assert!(!links[2].is_closed());
        drop((read, never, other));
    }

    #[test]
    fn a_connection_where_a_stream_is_read_is_closed_only_when_no_other_would_do() {
        let unread = Arc::new(Unread::new(1, GRACE));
        let (mixed, idle) = (Arc::new(Link::default()), Arc::new(Link::default()));
        let a = unread.begin(
            &on(&unread, Some(&mixed), None),
            5000,
            Interrupt::unbounded(),
        );
        let b = unread.begin(&on(&unread, Some(&idle), None), 10, Interrupt::unbounded());
        let c = unread.begin(&on(&unread, Some(&idle), None), 10, Interrupt::unbounded());
        std::thread::sleep(GRACE + GRACE / 5);
        // Another stream of `mixed`'s, not waiting, is being read.
        mixed.drained();
        c.look();
        assert!(idle.is_closed() && !mixed.is_closed());
        drop((a, b, c));
    }

    #[test]
    fn a_query_that_waits_for_moments_at_a_time_is_never_stopped() {
        let unread = Arc::new(Unread::new(0, Duration::from_millis(200)));
        let interrupt = Interrupt::unbounded();
        for _ in 0..20 {
            let wait = unread.begin(&on(&unread, None, None), 10, Arc::clone(&interrupt));
            std::thread::sleep(Duration::from_millis(5));
            wait.look();
        }
        assert_eq!((interrupt.check(), unread.closed()), (None, 0));
    }
}
