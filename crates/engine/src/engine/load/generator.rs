//! Where a step's requests come from. The open model's generator is a named thread of its own
//! that sleeps until each intended start (`std::thread::sleep`, tens of microseconds late on an
//! idle Linux machine, where tokio's timer wheel rounds to the millisecond), waits for room in
//! flight when `max_in_flight` are out, and hands each request to the runtime; its own lag and
//! CPU time are measured, so a saturated generator is never mistaken for a slow server. The
//! closed model is `concurrency` tasks, each starting its next request when its last one ended.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::runtime::Handle;

use super::request::{self, Shared, behind};
use super::sink::StepSink;
use crate::load::intended_starts;

/// The requests in flight, counted: the generator thread waits for room, each request gives its
/// place back when it ends (or is dropped).
#[derive(Debug, Default)]
pub(super) struct InFlight {
    count: Mutex<u32>,
    freed: Condvar,
}

/// A place in flight, given back when dropped.
pub(super) struct Place(Arc<InFlight>);

impl Drop for Place {
    fn drop(&mut self) {
        let mut n = self.0.count.lock().unwrap_or_else(PoisonError::into_inner);
        *n = n.saturating_sub(1);
        self.0.freed.notify_one();
    }
}

impl InFlight {
    /// How many are in flight.
    pub(super) fn current(&self) -> u32 {
        *self.count.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place if one is free now.
    fn try_take(self: &Arc<Self>, max: u32) -> Option<Place> {
        let mut n = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        (*n < max).then(|| {
            *n += 1;
            Place(Arc::clone(self))
        })
    }

    /// Waits for a place until `until` (or the run is cancelled): `None` then.
    fn take_until(
        self: &Arc<Self>,
        max: u32,
        until: Instant,
        cancel: &AtomicBool,
    ) -> Option<Place> {
        let mut n = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if *n < max {
                *n += 1;
                return Some(Place(Arc::clone(self)));
            }
            let now = Instant::now();
            if now >= until || cancel.load(Ordering::Relaxed) {
                return None;
            }
            // Woken by each place given back; a short bound so that a cancel is seen soon.
            let wait = (until - now).min(Duration::from_millis(50));
            n = self
                .freed
                .wait_timeout(n, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// An open-model step: its rate, how long it generates, its bound in flight.
#[derive(Debug, Clone, Copy)]
pub(super) struct OpenStep {
    pub(super) rate: f64,
    pub(super) duration: Duration,
    pub(super) max_in_flight: u32,
}

/// What the generator thread needs besides the step.
pub(super) struct Generator {
    pub(super) shared: Arc<Shared>,
    pub(super) sink: Arc<StepSink>,
    pub(super) runtime: Handle,
    pub(super) in_flight: Arc<InFlight>,
    pub(super) cancel: Arc<AtomicBool>,
}

/// Runs the open model's schedule on the calling thread (the generator's own); returns that
/// thread's CPU time.
pub(super) fn generate(step: OpenStep, g: &Generator) -> Duration {
    let cpu = cpu_time::ThreadTime::try_now().ok();
    let began = g.sink.began;
    let end = began + step.duration;
    let n = intended_starts(step.rate, step.duration);
    // Set when a start had to wait for room in flight: later starts are behind because of the
    // bound, not the generator, until it catches up and sleeps again.
    let mut held_back = false;
    for i in 0..n {
        if g.cancel.load(Ordering::Relaxed) {
            break;
        }
        let intended = began + Duration::from_secs_f64(i as f64 / step.rate);
        if Instant::now() < intended {
            sleep_until(intended, &g.cancel);
            held_back = false;
        }
        let woke = Instant::now();
        if !held_back {
            g.sink.lock().lag(behind(intended, woke));
        }
        let place = match g.in_flight.try_take(step.max_in_flight) {
            Some(place) => place,
            None => {
                held_back = true;
                match g.in_flight.take_until(step.max_in_flight, end, &g.cancel) {
                    Some(place) => place,
                    None => {
                        if !g.cancel.load(Ordering::Relaxed) {
                            g.sink.lock().dropped(n - i);
                        }
                        break;
                    }
                }
            }
        };
        let started = Instant::now();
        g.sink.lock().started(behind(intended, started));
        let (shared, sink) = (Arc::clone(&g.shared), Arc::clone(&g.sink));
        g.runtime.spawn(async move {
            let _place = place;
            if !request::run(shared, Arc::clone(&sink), intended, started).await {
                sink.lock().unfinished(1);
            }
        });
    }
    cpu.and_then(|t| t.try_elapsed().ok()).unwrap_or_default()
}

/// Sleeps until `at`, in pieces of at most 50 ms so that a cancel is seen (a slow rate's starts
/// may be minutes apart).
fn sleep_until(at: Instant, cancel: &AtomicBool) {
    loop {
        let now = Instant::now();
        if now >= at || cancel.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep((at - now).min(Duration::from_millis(50)));
    }
}

/// A closed-model step: `concurrency` clients until `duration` has passed, each starting its
/// next request as its last one ends. Returns when every client has stopped.
pub(super) async fn closed(
    concurrency: u32,
    duration: Duration,
    shared: Arc<Shared>,
    sink: Arc<StepSink>,
    cancel: Arc<AtomicBool>,
) {
    let end = sink.began + duration;
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (shared, sink, cancel) = (Arc::clone(&shared), Arc::clone(&sink), Arc::clone(&cancel));
        clients.spawn(async move {
            while Instant::now() < end && !cancel.load(Ordering::Relaxed) {
                let started = Instant::now();
                sink.lock().started(Duration::ZERO);
                if !request::run(Arc::clone(&shared), Arc::clone(&sink), started, started).await {
                    sink.lock().unfinished(1);
                    break;
                }
            }
        });
    }
    while clients.join_next().await.is_some() {}
}
