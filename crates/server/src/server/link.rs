//! A hand on one accepted connection ([`Link`]) that its calls keep: to close it from the server's
//! side, and to see what it is doing (requests in flight, when a response on it was last taken by
//! the transport), which is what the caps choose their victims by.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::task::Waker;
use std::time::Duration;

/// A hand on one connection that its calls can keep: [`Link::close`] ends it, with every stream
/// on it, and so frees what the transport holds for them. It also knows what the connection is
/// doing: its requests in flight, and when the transport last took a piece of a response on it.
#[derive(Debug, Default)]
pub struct Link {
    /// Which connection it is (0 for links made without one, in tests).
    id: u64,
    closed: AtomicBool,
    /// The task reading the connection, to wake when it is closed.
    reader: Mutex<Option<Waker>>,
    /// When the transport last took a piece of a response on it (`stream/drain.rs`).
    drained: Stamp,
    /// Requests begun on it so far.
    requests: AtomicU64,
    /// Requests whose response has not ended.
    in_flight: AtomicUsize,
    /// When its last request ended (never, if none has).
    idle_since: Stamp,
}

/// One request in flight on a connection, counted until dropped.
#[derive(Debug)]
pub struct Busy(Arc<Link>);

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle_since.set_now();
        }
    }
}

impl Link {
    /// The link of connection `id`, accepted now: idle, having asked nothing, since now.
    pub fn accepted(id: u64) -> Self {
        Link {
            id,
            idle_since: Stamp::now(),
            ..Link::default()
        }
    }

    /// Which connection it is.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// How long it has had no request in flight; `None` if it has one, or was never idle.
    pub fn idle_for(&self) -> Option<Duration> {
        if self.in_flight() > 0 {
            return None;
        }
        self.idle_since.age()
    }

    /// A request begins on the connection; it is in flight until the guard is dropped.
    pub fn begin_request(self: &Arc<Self>) -> Busy {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(self))
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Whether it ever sent a request.
    pub fn ever_asked(&self) -> bool {
        self.requests.load(Ordering::Relaxed) > 0
    }

    /// The transport took a piece of a response on it: its client granted window.
    pub fn drained(&self) {
        self.drained.set_now();
    }

    /// Whether the transport took a piece of a response on it within `grace`.
    pub fn drained_within(&self, grace: Duration) -> bool {
        self.drained.within(grace)
    }

    /// Closes the connection: its next read fails, and the server drops it.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let reader = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(waker) = reader {
            waker.wake();
        }
    }

    /// Whether [`Link::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Wakes `waker` (the task reading the connection) when it is closed.
    pub(super) fn wake_on_close(&self, waker: &Waker) {
        let mut reader = self.reader.lock().unwrap_or_else(PoisonError::into_inner);
        if !reader.as_ref().is_some_and(|w| w.will_wake(waker)) {
            *reader = Some(waker.clone());
        }
    }
}

/// An instant kept in an atomic, so that hot paths stamp it without a lock: milliseconds since
/// the process's first stamp, or never.
#[derive(Debug, Default)]
pub struct Stamp(AtomicU64);

/// The instant stamps count from.
fn epoch() -> std::time::Instant {
    static EPOCH: OnceLock<std::time::Instant> = OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// Milliseconds since the epoch, plus one (0 is never).
fn stamp_now() -> u64 {
    u64::try_from(epoch().elapsed().as_millis())
        .unwrap_or(u64::MAX - 1)
        .saturating_add(1)
}

impl Stamp {
    /// A stamp of now.
    pub fn now() -> Self {
        Stamp(AtomicU64::new(stamp_now()))
    }

    /// Stamps it now.
    pub fn set_now(&self) {
        self.0.store(stamp_now(), Ordering::Relaxed);
    }

    /// How long ago it was stamped; `None` if never.
    pub fn age(&self) -> Option<Duration> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            at => Some(Duration::from_millis(stamp_now().saturating_sub(at))),
        }
    }

    /// Whether it was stamped within `window`.
    pub fn within(&self, window: Duration) -> bool {
        self.age().is_some_and(|age| age < window)
    }
}
