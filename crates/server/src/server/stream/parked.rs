//! Streams that stopped at an injected fault, held for their client's resume: at most so many, each
//! for at most so long. The oldest is released first when the table is full, and each is released
//! at its time limit by a timer of its own (cancelled when the stream is resumed), whether or not
//! anything else happens meanwhile.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Held streams by stream id.
#[derive(Debug)]
pub struct Parked<T> {
    streams: Mutex<HashMap<u64, Held<T>>>,
}

#[derive(Debug)]
struct Held<T> {
    until: Instant,
    /// Tells this hold from a later one of the same stream.
    generation: u64,
    /// The task that releases it at its limit.
    timer: tokio::task::AbortHandle,
    stream: T,
}

impl<T> Default for Parked<T> {
    fn default() -> Self {
        Parked {
            streams: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Send + 'static> Parked<T> {
    /// Holds `stream` under `id` for `ttl`, releasing the oldest first if `max` are held; a timer
    /// releases it at its limit. Must be called within a tokio runtime.
    pub fn park(self: &Arc<Self>, id: u64, stream: T, max: u64, ttl: Duration) {
        static GENERATIONS: AtomicU64 = AtomicU64::new(0);
        let generation = GENERATIONS.fetch_add(1, Ordering::Relaxed);
        let until = Instant::now() + ttl;
        let parked = Arc::clone(self);
        let timer = tokio::spawn(async move {
            tokio::time::sleep_until(until.into()).await;
            let expired = parked.remove(id, |held| held.generation == generation);
            drop(expired);
        })
        .abort_handle();
        let held = Held {
            until,
            generation,
            timer,
            stream,
        };
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        let mut released = Vec::new();
        {
            let mut streams = self.lock();
            while !streams.is_empty() && streams.len() >= max {
                let oldest = streams
                    .iter()
                    .min_by_key(|(_, h)| h.until)
                    .map(|(id, _)| *id);
                released.extend(oldest.and_then(|oldest| streams.remove(&oldest)));
            }
            if max > 0 {
                released.extend(streams.insert(id, held));
            } else {
                released.push(held);
            }
        }
        // Released outside the lock: releasing a stream stops its query.
        for held in released {
            held.timer.abort();
        }
    }

    /// Takes the stream held under `id` if `fits` says it is the one wanted; its timer is cancelled.
    pub fn take(&self, id: u64, fits: impl FnOnce(&T) -> bool) -> Option<T> {
        let held = self.remove(id, |held| fits(&held.stream))?;
        held.timer.abort();
        Some(held.stream)
    }

    fn remove(&self, id: u64, fits: impl FnOnce(&Held<T>) -> bool) -> Option<Held<T>> {
        let mut streams = self.lock();
        if streams.get(&id).is_some_and(fits) {
            streams.remove(&id)
        } else {
            None
        }
    }

    /// Streams held now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Held<T>>> {
        // Every update is one map operation: a panic cannot leave the map half-updated.
        self.streams.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// Counts its drops: a released stream is a dropped one.
    struct Tracked(Arc<AtomicUsize>);

    impl Drop for Tracked {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn count(dropped: &AtomicUsize) -> usize {
        dropped.load(Ordering::Relaxed)
    }

    #[tokio::test]
    async fn a_held_stream_is_released_at_its_limit_with_nothing_else_happening() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let parked = Arc::new(Parked::default());
        parked.park(
            1,
            Tracked(Arc::clone(&dropped)),
            8,
            Duration::from_millis(300),
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!((parked.len(), count(&dropped)), (1, 0));
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(parked.is_empty(), "released at its limit");
        assert_eq!(count(&dropped), 1);
    }

    #[tokio::test]
    async fn the_oldest_goes_first_and_a_taken_stream_is_not_released_later() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let parked = Arc::new(Parked::default());
        let ttl = Duration::from_millis(400);
        parked.park(1, Tracked(Arc::clone(&dropped)), 2, ttl);
        tokio::time::sleep(Duration::from_millis(2)).await;
        parked.park(2, Tracked(Arc::clone(&dropped)), 2, ttl);
        parked.park(3, Tracked(Arc::clone(&dropped)), 2, ttl);
        assert_eq!(count(&dropped), 1, "one released to make room");
        assert!(parked.take(1, |_| true).is_none(), "1 was the oldest");
        assert!(parked.take(2, |_| false).is_none(), "not the one wanted");
        let two = parked.take(2, |_| true).expect("held");
        // Held again under the same id: the first hold's timer must not release the second.
        tokio::time::sleep(Duration::from_millis(200)).await;
        parked.park(2, two, 2, ttl);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(parked.take(3, |_| true).is_none(), "3 reached its limit");
        assert!(
            parked.take(2, |_| true).is_some(),
            "2 has not reached its new limit"
        );
        assert!(parked.take(0, |_| true).is_none());
        let none = Arc::new(Parked::default());
        none.park(9, Tracked(Arc::clone(&dropped)), 0, ttl);
        assert!(none.is_empty(), "a table of size 0 holds nothing");
    }
}
