//! What the local instance saw of its clients' queries while someone watches (`spanprof client`):
//! when the first query request came, when the transport took the first and the last message,
//! how long the streams waited for a client that was not reading (HTTP/2 flow control), and the
//! messages themselves, so that the rows a client printed can be checked against the rows sent.
//!
//! Off unless switched on ([`Tap::watch`]); then everything it keeps is bounded: at most
//! [`MAX_KEPT_BYTES`] of messages over at most [`MAX_QUERIES`] queries, beyond which it only counts
//! and says so ([`Observed::overflow`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use prost::bytes::Bytes;

/// Bytes of messages kept for the row check, at most.
pub const MAX_KEPT_BYTES: usize = 256 << 20;
/// Queries (a fresh request and its resumes) whose messages are kept, at most.
pub const MAX_QUERIES: usize = 64;

/// The instance's tap: off, or watching.
#[derive(Debug, Default)]
pub struct Tap {
    on: AtomicBool,
    seen: Mutex<Observed>,
}

/// What was seen since the tap was last read.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// When the first query request (ExecuteStreamingSql or ExecuteSql) arrived.
    pub first_request: Option<Instant>,
    /// Query requests, resumes included.
    pub requests: u32,
    /// Of those, resumes (a request with a resume token).
    pub resumes: u32,
    /// When the transport took the first message of a stream.
    pub first_byte: Option<Instant>,
    /// When the transport took the last message of a stream.
    pub last_byte: Option<Instant>,
    /// How long streams waited, a message ready, for the transport to take it: the client was not
    /// reading, and HTTP/2 flow control held the server back.
    pub blocked: Duration,
    /// Messages the transport took.
    pub messages: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Faults injected.
    pub faults: u32,
    /// Whether more was sent than the tap keeps: the answer cannot be checked.
    pub overflow: bool,
    queries: Vec<TappedQuery>,
    /// Which query each stream belongs to (a stream run again for a resume gets a new id).
    streams: HashMap<u64, usize>,
    kept: usize,
}

#[derive(Debug, Clone, Default)]
struct TappedQuery {
    messages: BTreeMap<u64, Bytes>,
    complete: bool,
}

impl Tap {
    /// Starts watching, forgetting anything seen before.
    pub fn watch(&self) {
        *self.lock() = Observed::default();
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
    pub fn take(&self) -> Observed {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> MutexGuard<'_, Observed> {
        // Each update is a few field writes; a panic cannot leave worse than a partial count.
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A query request arrived (`resumed`: with a resume token).
    pub(crate) fn request(&self, at: Instant, resumed: bool) {
        if !self.is_on() {
            return;
        }
        let mut seen = self.lock();
        seen.first_request.get_or_insert(at);
        seen.requests = seen.requests.saturating_add(1);
        seen.resumes = seen.resumes.saturating_add(u32::from(resumed));
    }

    /// Stream `id` starts a response: a fresh query, or (`continues`) the stream a resume token
    /// named.
    pub(crate) fn stream(&self, id: u64, continues: Option<u64>) {
        let mut seen = self.lock();
        let known = continues.and_then(|c| seen.streams.get(&c).copied());
        let query = match known {
            Some(q) => q,
            None if seen.queries.len() < MAX_QUERIES => {
                seen.queries.push(TappedQuery::default());
                seen.queries.len() - 1
            }
            None => {
                seen.overflow = true;
                return;
            }
        };
        if seen.streams.len() < 4 * MAX_QUERIES {
            seen.streams.insert(id, query);
        } else {
            seen.overflow = true;
        }
    }

    /// Stream `id` is about to send message `seq`.
    pub(crate) fn message(&self, id: u64, seq: u64, message: &Bytes) {
        let mut seen = self.lock();
        let seen = &mut *seen;
        let Some(&q) = seen.streams.get(&id) else {
            return;
        };
        if seen.kept + message.len() > MAX_KEPT_BYTES {
            seen.overflow = true;
            return;
        }
        if let Some(query) = seen.queries.get_mut(q)
            && !query.messages.contains_key(&seq)
        {
            seen.kept += message.len();
            query.messages.insert(seq, message.clone());
        }
    }

    /// Stream `id` sent its last message.
    pub(crate) fn finished(&self, id: u64) {
        let mut seen = self.lock();
        if let Some(&q) = seen.streams.get(&id)
            && let Some(query) = seen.queries.get_mut(q)
        {
            query.complete = true;
        }
    }

    /// A stream waited `waited` for the transport to take a message.
    pub(crate) fn blocked(&self, waited: Duration) {
        let mut seen = self.lock();
        seen.blocked += waited;
    }

    /// A fault was injected.
    pub(crate) fn fault(&self) {
        let mut seen = self.lock();
        seen.faults = seen.faults.saturating_add(1);
    }

    /// The transport took a message of `bytes` bytes at `at`.
    pub(crate) fn taken(&self, at: Instant, bytes: usize) {
        let mut seen = self.lock();
        seen.first_byte.get_or_insert(at);
        seen.last_byte = Some(at);
        seen.messages += 1;
        seen.bytes += bytes as u64;
    }
}

impl Observed {
    /// Fresh queries run (a resume is part of the query it resumes; a restart without a token is a
    /// query of its own).
    pub fn queries(&self) -> usize {
        self.queries.len()
    }

    /// The messages of the first query that was sent to its end, in order, each once: the answer
    /// a client should have read. `None` if no query finished.
    pub fn answer(&self) -> Option<Vec<Bytes>> {
        self.queries
            .iter()
            .find(|q| q.complete)
            .map(|q| q.messages.values().cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_sees_nothing_until_watching_and_keeps_each_message_once() {
        let tap = Tap::default();
        let now = Instant::now();
        tap.request(now, false);
        assert_eq!(tap.take().requests, 0, "off: nothing counted");
        tap.watch();
        tap.request(now, false);
        tap.stream(1, None);
        tap.message(1, 0, &Bytes::from_static(b"a"));
        tap.message(1, 1, &Bytes::from_static(b"b"));
        // A resume ran the stream again under a new id: the messages it repeats are kept once.
        tap.request(now, true);
        tap.stream(2, Some(1));
        tap.message(2, 1, &Bytes::from_static(b"b"));
        tap.message(2, 2, &Bytes::from_static(b"c"));
        tap.finished(2);
        let seen = tap.take();
        assert_eq!((seen.requests, seen.resumes, seen.queries()), (2, 1, 1));
        let answer = seen.answer().expect("finished");
        assert_eq!(answer, [&b"a"[..], b"b", b"c"]);
        assert!(tap.take().answer().is_none(), "taken: empty again");
    }

    #[test]
    fn what_it_keeps_is_bounded() {
        let tap = Tap::default();
        tap.watch();
        for id in 0..(MAX_QUERIES as u64 + 5) {
            tap.stream(id, None);
        }
        assert!(tap.take().overflow);
        tap.stream(1, None);
        let big = Bytes::from(vec![0u8; MAX_KEPT_BYTES / 2 + 1]);
        tap.message(1, 0, &big);
        tap.message(1, 1, &big);
        let seen = tap.take();
        assert!(seen.overflow, "more than it keeps");
        assert_eq!(seen.kept, big.len());
    }
}
