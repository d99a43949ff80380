//! Queries whose stream broke at an injected fault and that a client may run again from the start,
//! without a resume token: the emulator's shape has none to give, and some clients restart anyway.
//! Faults fire once per resume point, so such a restart must not fail again where its query already
//! failed, or a client could never finish. What is remembered, per session and query, is how far the
//! broken stream had got; bounded in count and time.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Broken queries remembered at most; the oldest is forgotten first.
pub const MAX_REMEMBERED: usize = 1024;

/// Broken queries by key (session and query key).
#[derive(Debug, Default)]
pub struct Restarts {
    broken: Mutex<HashMap<u64, Broken>>,
}

#[derive(Debug, Clone, Copy)]
struct Broken {
    /// The message after which it failed.
    seq: u64,
    until: Instant,
}

impl Restarts {
    /// The stream of query `key` failed after message `seq`; remembered for `ttl`.
    pub fn remember(&self, key: u64, seq: u64, ttl: Duration) {
        let now = Instant::now();
        let mut broken = self.lock();
        broken.retain(|_, b| b.until > now);
        if broken.len() >= MAX_REMEMBERED && !broken.contains_key(&key) {
            let oldest = broken.iter().min_by_key(|(_, b)| b.until).map(|(k, _)| *k);
            if let Some(oldest) = oldest {
                broken.remove(&oldest);
            }
        }
        let seq = broken.get(&key).map_or(seq, |b| b.seq.max(seq));
        broken.insert(
            key,
            Broken {
                seq,
                until: now + ttl,
            },
        );
    }

    /// How far query `key`'s broken stream had got, if it broke and was not finished since.
    pub fn recall(&self, key: u64) -> Option<u64> {
        let broken = self.lock();
        broken
            .get(&key)
            .filter(|b| b.until > Instant::now())
            .map(|b| b.seq)
    }

    /// Query `key` was answered to its end.
    pub fn forget(&self, key: u64) {
        self.lock().remove(&key);
    }

    /// Queries remembered now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Broken>> {
        // Every update is one map operation or a retain: a panic leaves a usable map.
        self.broken.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_query_is_remembered_until_finished_expired_or_crowded_out() {
        let restarts = Restarts::default();
        let long = Duration::from_secs(60);
        restarts.remember(1, 2, long);
        restarts.remember(1, 5, long);
        restarts.remember(1, 3, long);
        assert_eq!(
            restarts.recall(1),
            Some(5),
            "the furthest point it failed at"
        );
        restarts.forget(1);
        assert_eq!(restarts.recall(1), None);
        restarts.remember(2, 2, Duration::ZERO);
        assert_eq!(restarts.recall(2), None, "expired");
        for key in 0..(MAX_REMEMBERED as u64 + 10) {
            restarts.remember(key, 0, long);
        }
        assert_eq!(restarts.len(), MAX_REMEMBERED, "bounded");
    }
}
