//! The local instance as a known queue, so that a load test has answers to check against: a
//! query waits for one of `query_threads` query threads (first come, first served), which is
//! busy with it for `service_ms` from the moment it takes it (the query's own start included);
//! and every `freeze_every_ms` all answers pause for
//! `freeze_ms` (an answer whose service ends inside a freeze waits for its end, still holding
//! its thread, as a server paused for a collection would). With `query_threads` threads and a
//! fixed service time `D`, the instance serves at most `query_threads / D` queries a second, and
//! a query arriving at a busy instance waits in line: the queue a load test's knee is about.
//!
//! The threads are a schedule, not a pool: each keeps the time it is next free, and a query
//! arriving takes the one free soonest, from then (or from its arrival) for `service_ms`. So the
//! instance's capacity is exactly `query_threads / service_ms` however late its tasks wake (a
//! late wake-up lengthens that query's answer, never the next one's wait); a query whose client
//! left still spends its thread's time, as a real server's would.
//!
//! All four are off by default (0). A query waits for its thread before it takes its slot among
//! the concurrent queries (so waiting in line is never refused for the slots; a query in service
//! holds one), and all of it counts in the server's reported elapsed time (a stream's time is
//! measured from its request's arrival).

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use tonic::Status;

use super::knobs::KnobSettings;

/// The most query threads the queue model takes (tokio's semaphore holds far more; a bound keeps
/// a typo from meaning "no queue").
pub const MAX_QUERY_THREADS: u64 = 100_000;

/// The query threads of the queue model and the clock its freezes keep.
#[derive(Debug)]
pub struct Queue {
    /// Freezes are counted from here (the instance's start).
    epoch: Instant,
    /// When each query thread is next free (as many as `query_threads` last asked for).
    free_at: Mutex<Vec<Instant>>,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            epoch: Instant::now(),
            free_at: Mutex::new(Vec::new()),
        }
    }
}

/// How long an answer ready `since` the instance started waits for a freeze to end: freezes
/// last `freeze_ms` and begin every `freeze_every_ms`, the first one `freeze_every_ms` after the
/// start. Zero when either is 0 or `since` falls outside a freeze.
pub fn freeze_left(knobs: &KnobSettings, since: Duration) -> Duration {
    if knobs.freeze_every_ms == 0 || knobs.freeze_ms == 0 {
        return Duration::ZERO;
    }
    let every = u128::from(knobs.freeze_every_ms) * 1_000_000;
    let length = u128::from(knobs.freeze_ms.min(knobs.freeze_every_ms)) * 1_000_000;
    let at = since.as_nanos();
    if at < every {
        return Duration::ZERO;
    }
    let phase = at % every;
    if phase < length {
        Duration::from_nanos(u64::try_from(length - phase).unwrap_or(u64::MAX))
    } else {
        Duration::ZERO
    }
}

impl Queue {
    /// Whether any of the queue's knobs is on.
    pub fn is_on(knobs: &KnobSettings) -> bool {
        knobs.query_threads > 0 || knobs.service_ms > 0 || knobs.freeze_ms > 0
    }

    /// Books the query thread free soonest for `service`, from `now` at the earliest: when its
    /// service starts and ends. Without a bound on threads it starts at once.
    fn book(&self, threads: u64, service: Duration, now: Instant) -> (Instant, Instant) {
        if threads == 0 {
            return (now, now + service);
        }
        let mut free_at = self.free_at.lock().unwrap_or_else(PoisonError::into_inner);
        let threads = usize::try_from(threads.min(MAX_QUERY_THREADS)).unwrap_or(usize::MAX);
        free_at.resize(threads, now);
        let soonest = free_at
            .iter_mut()
            .min()
            .expect("at least one thread: threads > 0");
        let start = (*soonest).max(now);
        *soonest = start + service;
        (start, start + service)
    }

    /// A query's turn in line: books a query thread (when `query_threads` is set) and waits for
    /// its service to start; fails with DEADLINE_EXCEEDED, without waiting, when it would start
    /// past `deadline`. `None` when the queue is off. The [`Turn`] it returns ends the service
    /// with [`Turn::serve`].
    pub async fn admit(
        &self,
        knobs: &KnobSettings,
        deadline: Option<Instant>,
    ) -> Result<Option<Turn>, Status> {
        if !Queue::is_on(knobs) {
            return Ok(None);
        }
        let service = Duration::from_millis(knobs.service_ms);
        let now = Instant::now();
        if deadline.is_some_and(|at| at <= now) {
            return Err(past_deadline());
        }
        let (start, served_at) = self.book(knobs.query_threads, service, now);
        if deadline.is_some_and(|at| at <= start) {
            return Err(past_deadline());
        }
        if start > now {
            tokio::time::sleep_until(start.into()).await;
        }
        Ok(Some(Turn {
            queued: start.saturating_duration_since(now),
            served_at,
            knobs: *knobs,
            epoch: self.epoch,
        }))
    }
}

fn past_deadline() -> Status {
    Status::deadline_exceeded(
        "the query's deadline (grpc-timeout) passes before a query thread is free for it \
         (query_threads, service_ms)",
    )
}

/// The query threads few enough that each in service may sleep on a blocking thread of its own
/// (`std::thread::sleep`, a tenth of a millisecond late where tokio's timer rounds up to the next
/// millisecond); more share tokio's timer.
const PRECISE_THREADS: u64 = 64;

/// A query's place on a query thread, from [`Queue::admit`].
#[derive(Debug)]
pub struct Turn {
    /// How long it waited for its thread, from its admission to its start.
    pub queued: Duration,
    served_at: Instant,
    knobs: KnobSettings,
    epoch: Instant,
}

impl Turn {
    /// Ends the query's service: waits until `service_ms` after it took its thread, then out any
    /// freeze.
    pub async fn serve(self) {
        let left = self.served_at.saturating_duration_since(Instant::now());
        if !left.is_zero() {
            let precise = (1..=PRECISE_THREADS).contains(&self.knobs.query_threads);
            let slept = precise
                && tokio::task::spawn_blocking(move || std::thread::sleep(left))
                    .await
                    .is_ok();
            if !slept {
                tokio::time::sleep_until(self.served_at.into()).await;
            }
        }
        let frozen = freeze_left(&self.knobs, self.epoch.elapsed());
        if !frozen.is_zero() {
            tokio::time::sleep(frozen).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs(threads: u64, service_ms: u64, every: u64, freeze: u64) -> KnobSettings {
        KnobSettings {
            query_threads: threads,
            service_ms,
            freeze_every_ms: every,
            freeze_ms: freeze,
            ..KnobSettings::default()
        }
    }

    #[test]
    fn a_freeze_holds_answers_from_each_period_start_for_its_length() {
        let k = knobs(0, 0, 2000, 200);
        let ms = Duration::from_millis;
        assert_eq!(freeze_left(&k, ms(100)), Duration::ZERO, "none before 2 s");
        assert_eq!(freeze_left(&k, ms(2000)), ms(200));
        assert_eq!(freeze_left(&k, ms(2150)), ms(50));
        assert_eq!(freeze_left(&k, ms(2200)), Duration::ZERO);
        assert_eq!(freeze_left(&k, ms(3999)), Duration::ZERO);
        assert_eq!(freeze_left(&k, ms(6010)), ms(190));
        let frozen = (0..20_000u64)
            .filter(|&t| !freeze_left(&k, ms(t)).is_zero())
            .count();
        assert_eq!(
            frozen,
            9 * 200,
            "nine freezes in 20 s, 10% of the time after the first 2 s"
        );
        assert_eq!(freeze_left(&knobs(0, 0, 0, 200), ms(5000)), Duration::ZERO);
        assert_eq!(
            freeze_left(&knobs(0, 0, 100, 500), ms(150)),
            ms(50),
            "a freeze longer than its period lasts the period"
        );
    }

    #[tokio::test]
    async fn two_threads_serve_four_queries_in_two_rounds() {
        let queue = std::sync::Arc::new(Queue::default());
        let k = knobs(2, 50, 0, 0);
        let start = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..4 {
            let queue = std::sync::Arc::clone(&queue);
            tasks.spawn(async move {
                let turn = queue.admit(&k, None).await.expect("no deadline");
                let turn = turn.expect("the queue is on");
                let queued = turn.queued;
                turn.serve().await;
                (start.elapsed(), queued)
            });
        }
        let mut ends = Vec::new();
        while let Some(done) = tasks.join_next().await {
            ends.push(done.expect("no panic"));
        }
        ends.sort();
        let (waits, queued): (Vec<Duration>, Vec<Duration>) = ends.into_iter().unzip();
        // The first two took a thread at once; the others waited a service for theirs, and
        // say so (what the statistics report as the query's queue wait).
        assert!(queued[0] < Duration::from_millis(5), "{queued:?}");
        assert!(queued[1] < Duration::from_millis(5), "{queued:?}");
        assert!(queued[2] >= Duration::from_millis(45), "{queued:?}");
        let ms = Duration::from_millis;
        // Two at once: the second is served beside the first (one thread would make it 100 ms);
        // the third and fourth wait for a thread, so they cannot end before 100 ms.
        assert!(waits[0] >= ms(50), "{waits:?}");
        assert!(waits[1] < ms(100), "{waits:?}");
        assert!(waits[2] >= ms(100), "{waits:?}");
    }

    #[tokio::test]
    async fn a_query_past_its_deadline_in_line_is_told_so_at_once() {
        let queue = Queue::default();
        let k = knobs(1, 500, 0, 0);
        let first = queue.admit(&k, None).await.expect("a free thread");
        assert!(first.is_some());
        let deadline = Instant::now() + Duration::from_millis(20);
        let asked = Instant::now();
        let status = queue
            .admit(&k, Some(deadline))
            .await
            .expect_err("the only thread is busy past a 20 ms deadline");
        assert_eq!(status.code(), tonic::Code::DeadlineExceeded);
        assert!(
            asked.elapsed() < Duration::from_millis(500),
            "told without waiting"
        );
        assert!(
            queue
                .admit(&KnobSettings::default(), None)
                .await
                .expect("off")
                .is_none()
        );
    }

    #[test]
    fn the_schedule_books_the_thread_free_soonest() {
        let queue = Queue::default();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let booked: Vec<(Duration, Duration)> = (0..5)
            .map(|_| queue.book(2, ms(10), t0))
            .map(|(start, end)| (start - t0, end - t0))
            .collect();
        assert_eq!(
            booked,
            [
                (ms(0), ms(10)),
                (ms(0), ms(10)),
                (ms(10), ms(20)),
                (ms(10), ms(20)),
                (ms(20), ms(30))
            ]
        );
        // Arriving after the threads are free again: served at once.
        assert_eq!(queue.book(2, ms(10), t0 + ms(100)).0, t0 + ms(100));
        assert_eq!(
            queue.book(0, ms(10), t0).0,
            t0,
            "no bound on threads: no wait"
        );
    }
}
