//! What bounds and stops a query: its slot among the queries running at once, and its interrupt, set
//! when its client goes away, its deadline (`grpc-timeout`) passes or the server shuts down.
//!
//! The query thread hands SQLite a progress handler that looks at the interrupt every
//! [`PROGRESS_OPS`] virtual-machine instructions, so a statement that computes for ever without
//! producing a row stops all the same; the thread also stops at its next send once the stream is gone.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tonic::Status;

/// SQLite instructions between two looks at the interrupt: tens of microseconds of work, so a
/// departed client's query stops well within a millisecond, at a cost too small to measure.
pub const PROGRESS_OPS: i32 = 1000;

/// Why a query must stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Its client went away: nobody is left to tell.
    ClientGone,
    /// Its deadline passed.
    Deadline,
    /// The server is shutting down.
    Shutdown,
}

impl Stop {
    /// The status a client still listening gets.
    pub fn status(self) -> Status {
        match self {
            Stop::ClientGone => Status::cancelled("the client went away"),
            Stop::Deadline => {
                Status::deadline_exceeded("the query's deadline (grpc-timeout) passed")
            }
            Stop::Shutdown => Status::unavailable("the local instance is shutting down"),
        }
    }
}

/// When one query must stop; shared by its stream, its thread and SQLite's progress handler.
#[derive(Debug)]
pub struct Interrupt {
    gone: AtomicBool,
    /// The deadline in nanoseconds after `base` (`u64::MAX`: none); a resumed stream moves it.
    deadline: AtomicU64,
    base: Instant,
    shutdown: Arc<AtomicBool>,
}

const NO_DEADLINE: u64 = u64::MAX;

impl Interrupt {
    /// An interrupt for a query due by `deadline`, that also stops when `shutdown` is set.
    pub fn new(deadline: Option<Instant>, shutdown: Arc<AtomicBool>) -> Arc<Self> {
        let interrupt = Interrupt {
            gone: AtomicBool::new(false),
            deadline: AtomicU64::new(NO_DEADLINE),
            base: Instant::now(),
            shutdown,
        };
        interrupt.set_deadline(deadline);
        Arc::new(interrupt)
    }

    /// Moves the deadline (a resumed stream's request brings its own).
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        let nanos = deadline.map_or(NO_DEADLINE, |at| {
            let after = at.saturating_duration_since(self.base).as_nanos();
            u64::try_from(after).unwrap_or(NO_DEADLINE - 1)
        });
        self.deadline.store(nanos, Ordering::Relaxed);
    }

    /// An interrupt that only its client's departure sets (tests, tools).
    pub fn unbounded() -> Arc<Self> {
        Interrupt::new(None, Arc::default())
    }

    /// The client went away.
    pub fn client_gone(&self) {
        self.gone.store(true, Ordering::Relaxed);
    }

    /// The query's deadline, if it has one.
    pub fn deadline(&self) -> Option<Instant> {
        match self.deadline.load(Ordering::Relaxed) {
            NO_DEADLINE => None,
            nanos => Some(self.base + Duration::from_nanos(nanos)),
        }
    }

    /// Why the query must stop now, if it must. Reads the clock only when there is a deadline.
    pub fn check(&self) -> Option<Stop> {
        if self.gone.load(Ordering::Relaxed) {
            Some(Stop::ClientGone)
        } else if self.shutdown.load(Ordering::Relaxed) {
            Some(Stop::Shutdown)
        } else if self.deadline().is_some_and(|d| Instant::now() >= d) {
            Some(Stop::Deadline)
        } else {
            None
        }
    }
}

/// Marks the client gone when dropped: held by whatever stands for the client (the response stream,
/// the unary call's future), so that however it ends, the query learns of it.
#[derive(Debug)]
pub struct GoneOnDrop(pub Arc<Interrupt>);

impl Drop for GoneOnDrop {
    fn drop(&mut self) {
        self.0.client_gone();
    }
}

/// The queries running at once, against a cap read when each starts.
#[derive(Debug, Default)]
pub struct Slots {
    running: Arc<AtomicUsize>,
}

/// One running query's place; freed when dropped (when its thread ends, or while it waits on a
/// client that does not read: [`Slot::vacate`]).
#[derive(Debug)]
pub struct Slot {
    running: Arc<AtomicUsize>,
    max: usize,
}

/// A place given back while its query waits; [`Vacated::retake`] asks for one again under the cap
/// it was taken under.
#[derive(Debug)]
pub struct Vacated {
    running: Arc<AtomicUsize>,
    max: usize,
}

fn take_under(running: &Arc<AtomicUsize>, max: usize) -> Option<Slot> {
    running
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < max).then_some(n + 1)
        })
        .ok()
        .map(|_| Slot {
            running: Arc::clone(running),
            max,
        })
}

impl Slot {
    /// Gives the place back for as long as the query has nothing to do.
    pub fn vacate(self) -> Vacated {
        let vacated = Vacated {
            running: Arc::clone(&self.running),
            max: self.max,
        };
        drop(self);
        vacated
    }
}

impl Vacated {
    /// The place again, unless the cap is reached.
    pub fn retake(&self) -> Option<Slot> {
        take_under(&self.running, self.max)
    }
}

impl Slots {
    /// A place for one more query, unless `max` are running.
    pub fn take(&self, max: u64) -> Option<Slot> {
        take_under(&self.running, usize::try_from(max).unwrap_or(usize::MAX))
    }

    /// Queries running now.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::Acquire)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.running.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The deadline a request's `grpc-timeout` header sets, if it has a valid one: at most eight digits
/// and a unit (H, M, S, m, u, n), as the gRPC protocol writes it.
pub fn grpc_timeout(metadata: &tonic::metadata::MetadataMap) -> Option<Duration> {
    let text = metadata.get("grpc-timeout")?.to_str().ok()?;
    let unit = text.chars().last()?;
    let digits = text.get(..text.len() - unit.len_utf8())?;
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        'H' => Duration::from_secs(n * 3600),
        'M' => Duration::from_secs(n * 60),
        'S' => Duration::from_secs(n),
        'm' => Duration::from_millis(n),
        'u' => Duration::from_micros(n),
        'n' => Duration::from_nanos(n),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeout(value: &str) -> Option<Duration> {
        let mut metadata = tonic::metadata::MetadataMap::new();
        metadata.insert("grpc-timeout", value.parse().expect("ASCII"));
        grpc_timeout(&metadata)
    }

    #[test]
    fn grpc_timeouts_are_read_in_every_unit_and_garbage_is_ignored() {
        assert_eq!(timeout("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(timeout("3M"), Some(Duration::from_secs(180)));
        assert_eq!(timeout("99999999S"), Some(Duration::from_secs(99_999_999)));
        assert_eq!(timeout("250m"), Some(Duration::from_millis(250)));
        assert_eq!(timeout("7u"), Some(Duration::from_micros(7)));
        assert_eq!(timeout("5n"), Some(Duration::from_nanos(5)));
        for bad in ["", "S", "123456789S", "12x", "-1S", "1.5S", "+1S"] {
            assert_eq!(timeout(bad), None, "{bad:?}");
        }
        assert_eq!(grpc_timeout(&tonic::metadata::MetadataMap::new()), None);
    }

    #[test]
    fn an_interrupt_names_why_the_query_stops() {
        let shutdown = Arc::new(AtomicBool::new(false));
        let far = Interrupt::new(
            Some(Instant::now() + Duration::from_secs(60)),
            shutdown.clone(),
        );
        assert_eq!(far.check(), None);
        shutdown.store(true, Ordering::Relaxed);
        assert_eq!(far.check(), Some(Stop::Shutdown));
        drop(GoneOnDrop(Arc::clone(&far)));
        assert_eq!(far.check(), Some(Stop::ClientGone));
        let past = Interrupt::new(Some(Instant::now()), Arc::default());
        assert_eq!(past.check(), Some(Stop::Deadline));
        past.set_deadline(Some(Instant::now() + Duration::from_secs(60)));
        assert_eq!(past.check(), None, "a resume moved the deadline");
        past.set_deadline(None);
        assert_eq!((past.check(), past.deadline()), (None, None));
        assert_eq!(Interrupt::unbounded().check(), None);
    }

    #[test]
    fn slots_stop_at_the_cap_and_come_back_when_dropped() {
        let slots = Slots::default();
        let a = slots.take(2).expect("first");
        let b = slots.take(2).expect("second");
        assert!(slots.take(2).is_none(), "the cap");
        assert_eq!(slots.running(), 2);
        drop(a);
        let c = slots.take(2).expect("freed");
        drop((b, c));
        assert_eq!(slots.running(), 0);
        assert!(slots.take(0).is_none());
        let d = slots.take(1).expect("one");
        let away = d.vacate();
        assert_eq!(slots.running(), 0, "vacated");
        let e = slots.take(1).expect("the vacated place");
        assert!(away.retake().is_none(), "taken meanwhile");
        drop(e);
        let back = away.retake().expect("free again");
        assert_eq!(slots.running(), 1);
        drop(back);
    }
}
