//! The local instance's knobs: message size, faults, delays and bandwidth, changeable while it runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The smallest maximum message size allowed: room for any single unsplittable value and its framing.
pub const MIN_MESSAGE_BYTES: u64 = 256;

/// The settings that shape how the local instance streams, as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KnobSettings {
    /// Largest PartialResultSet to send, in bytes (values are split to fit). Default 1 MiB.
    pub max_message_bytes: u64,
    /// Fail the stream with UNAVAILABLE after every K-th message (0: never). Each resume point fails once.
    pub fail_every: u64,
    /// Wait this long before the first message of a response.
    pub first_byte_delay_ms: u64,
    /// Wait this long before each message.
    pub message_delay_ms: u64,
    /// Cap the sending rate at this many bytes per second (0: no cap).
    pub bandwidth_bytes_per_s: u64,
}

impl Default for KnobSettings {
    fn default() -> Self {
        KnobSettings {
            max_message_bytes: 1 << 20,
            fail_every: 0,
            first_byte_delay_ms: 0,
            message_delay_ms: 0,
            bandwidth_bytes_per_s: 0,
        }
    }
}

/// The live knobs, shared between the server and whoever turns them. Each is read once per response
/// (message size) or once per message (faults, delays, bandwidth).
#[derive(Debug, Default)]
pub struct Knobs {
    max_message_bytes: AtomicU64,
    fail_every: AtomicU64,
    first_byte_delay_ms: AtomicU64,
    message_delay_ms: AtomicU64,
    bandwidth_bytes_per_s: AtomicU64,
}

impl Knobs {
    /// Knobs set to `settings`.
    pub fn new(settings: KnobSettings) -> Self {
        let knobs = Knobs::default();
        knobs.set(settings);
        knobs
    }

    /// Changes every knob at once; the maximum message size is raised to [`MIN_MESSAGE_BYTES`] if lower.
    pub fn set(&self, s: KnobSettings) {
        let max = s.max_message_bytes.max(MIN_MESSAGE_BYTES);
        self.max_message_bytes.store(max, Ordering::Relaxed);
        self.fail_every.store(s.fail_every, Ordering::Relaxed);
        self.first_byte_delay_ms
            .store(s.first_byte_delay_ms, Ordering::Relaxed);
        self.message_delay_ms
            .store(s.message_delay_ms, Ordering::Relaxed);
        self.bandwidth_bytes_per_s
            .store(s.bandwidth_bytes_per_s, Ordering::Relaxed);
    }

    /// The current settings.
    pub fn get(&self) -> KnobSettings {
        KnobSettings {
            max_message_bytes: self.max_message_bytes.load(Ordering::Relaxed),
            fail_every: self.fail_every.load(Ordering::Relaxed),
            first_byte_delay_ms: self.first_byte_delay_ms.load(Ordering::Relaxed),
            message_delay_ms: self.message_delay_ms.load(Ordering::Relaxed),
            bandwidth_bytes_per_s: self.bandwidth_bytes_per_s.load(Ordering::Relaxed),
        }
    }
}

impl KnobSettings {
    /// The delay before the first message.
    pub fn first_byte_delay(&self) -> Duration {
        Duration::from_millis(self.first_byte_delay_ms)
    }

    /// How long to wait before sending a message of `bytes` bytes: the per-message delay plus the time
    /// the bandwidth cap needs for it.
    pub fn pace(&self, bytes: usize) -> Duration {
        let mut wait = Duration::from_millis(self.message_delay_ms);
        if self.bandwidth_bytes_per_s > 0 {
            wait += Duration::from_secs_f64(bytes as f64 / self.bandwidth_bytes_per_s as f64);
        }
        wait
    }

    /// Whether to fail right after message `seq` (0-based) of a stream that resumed after message
    /// `resumed_after` (`None` for a fresh stream). Never after the final message.
    pub fn fails_after(&self, seq: u64, resumed_after: Option<u64>, is_final: bool) -> bool {
        let due = self.fail_every > 0 && (seq + 1).is_multiple_of(self.fail_every);
        due && !is_final && resumed_after.is_none_or(|r| seq > r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_fire_every_k_messages_once_per_resume_point() {
        let s = KnobSettings {
            fail_every: 3,
            ..KnobSettings::default()
        };
        let fresh: Vec<u64> = (0..10).filter(|&q| s.fails_after(q, None, false)).collect();
        assert_eq!(fresh, [2, 5, 8]);
        // Resumed after message 2 (where it failed): the next fault is after message 5.
        assert!(!s.fails_after(2, Some(2), false));
        assert!(s.fails_after(5, Some(2), false));
        assert!(
            !s.fails_after(5, None, true),
            "never after the final message"
        );
        assert!(!KnobSettings::default().fails_after(2, None, false));
    }

    #[test]
    fn message_size_has_a_floor_and_pace_adds_bandwidth_time() {
        let knobs = Knobs::new(KnobSettings {
            max_message_bytes: 10,
            bandwidth_bytes_per_s: 1000,
            message_delay_ms: 5,
            ..KnobSettings::default()
        });
        let s = knobs.get();
        assert_eq!(s.max_message_bytes, MIN_MESSAGE_BYTES);
        assert_eq!(s.pace(500), Duration::from_millis(505));
    }
}
