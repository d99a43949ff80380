//! The local instance's knobs, changeable while it runs: how it streams (message size, faults, delays,
//! bandwidth) and the bounds it keeps against careless or hostile clients (concurrent queries, result
//! and value sizes, held faulted streams, sessions, name lengths, unfinished requests), each with a
//! production-like default; the queue model's threads, service time and freezes (off by default);
//! and read-write transactions' scripted aborts (off) and bounds (production's where it has one).

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::shape::Shape;
use super::sqlite::sandbox::SqlLimits;

/// The smallest maximum message size allowed: room for any single unsplittable value and its framing.
pub const MIN_MESSAGE_BYTES: u64 = 256;
/// The largest maximum message size allowed (the app's limit too).
pub const MAX_MESSAGE_BYTES: u64 = 64 << 20;

/// The settings that shape how the local instance streams and what it bounds, as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
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
    /// Every N-th streaming query (counted from the server's start, resumes not counted) stalls
    /// before one of its messages (0: none), so an explanation of the tail can be checked.
    pub stall_every: u64,
    /// How long a stalled query waits, in milliseconds.
    pub stall_ms: u64,
    /// The message it waits before, from 1.
    pub stall_at_message: u64,
    /// Queries running at once, each on its own thread (a faulted stream held for its resume counts);
    /// past it a query is refused with RESOURCE_EXHAUSTED. Default 32.
    pub max_concurrent_queries: u64,
    /// Largest answer of a unary ExecuteSql, in bytes of values; past it the query fails with
    /// FAILED_PRECONDITION, as production's does (10 MiB there too): stream larger answers.
    pub max_unary_result_bytes: u64,
    /// Bytes of a stream's finished messages that may wait between its query and the transport
    /// (hyper's own buffer, at most 400 KiB and a message, comes on top); a client that does not
    /// read pauses its query there, which gives its concurrency slot back meanwhile. Default 1 MiB.
    pub max_stream_buffer_bytes: u64,
    /// Largest string or blob a query may make or read (SQLite's length limit), in bytes. Default
    /// 10 MiB, production's limit on a cell.
    pub max_value_bytes: u64,
    /// Longest SQL text, in bytes. Default 1 MiB.
    pub max_sql_bytes: u64,
    /// Faulted streams held for their resume at once; the oldest is released first. Default 64.
    pub max_parked_streams: u64,
    /// How long a faulted stream is held for its resume before its query is released, in
    /// milliseconds. Default 60 s.
    pub park_timeout_ms: u64,
    /// Sessions open at once; past it a session whose connections have closed, or one of the
    /// connection that created the most, makes room, else CreateSession is refused with
    /// RESOURCE_EXHAUSTED. Default 10,000 (production's limit per node).
    pub max_sessions: u64,
    /// A session unused for this long is deleted, in milliseconds (later calls get NOT_FOUND, as in
    /// production, which deletes sessions idle for an hour). Default one hour.
    pub session_idle_timeout_ms: u64,
    /// Longest database or session name, and longest session label key or value, in bytes.
    /// Default 256 (production's names are at most about 200 bytes, its labels 63).
    pub max_name_bytes: u64,
    /// Bytes of request bodies still arriving, server-wide; past it, bodies silent for a second
    /// make room (the largest first), else the request that would pass it is refused with
    /// RESOURCE_EXHAUSTED and its bytes dropped. Default 256 MiB (16 requests of the largest size).
    pub max_pending_request_bytes: u64,
    /// How long a request body may take to arrive whole, in milliseconds; past it the request
    /// fails with DEADLINE_EXCEEDED. Default 10 s.
    pub request_timeout_ms: u64,
    /// How answers are cut into messages: as production does (the default), as the emulator
    /// does, or every legal way ([`Shape`]).
    pub shape: Shape,
    /// The queue model ([`super::queue`]): query threads a query waits for, first come first
    /// served (0: none, no queue).
    pub query_threads: u64,
    /// The queue model: how long a query thread holds each query before it runs, in
    /// milliseconds (0: none).
    pub service_ms: u64,
    /// The queue model: every this many milliseconds all answers pause (0: never).
    pub freeze_every_ms: u64,
    /// The queue model: how long each pause lasts, in milliseconds (0: none).
    pub freeze_ms: u64,
    /// Every N-th new read-write transaction (counted from the server's start; a retry of an
    /// aborted one is not new) aborts at its commit with ABORTED and RetryInfo (0: none).
    pub abort_every: u64,
    /// The retry delay an abort asks for in its RetryInfo, in milliseconds. Default 10 ms.
    pub abort_retry_delay_ms: u64,
    /// The retry delay an abort by the lock table asks for (wounded, a lock wait too long, a
    /// lock-free read written since): the conflict is over once the abort has freed its locks, so
    /// the retry may come at once. Default 1 ms.
    pub conflict_retry_delay_ms: u64,
    /// Every N-th applied commit of a read-write transaction (counted from the server's start)
    /// loses its answer: the commit is applied and the client gets UNAVAILABLE instead of the
    /// commit timestamp, as when a connection breaks at that moment (0: none). The same Commit sent
    /// again gets the answer.
    pub lose_commit_answer_every: u64,
    /// Mutations one commit may apply, counted as Spanner counts them; past it the commit is
    /// refused with INVALID_ARGUMENT. Default 80,000, production's limit.
    pub max_mutations_per_commit: u64,
    /// Bytes of mutations and DML one commit may apply (their encoded size); past it the commit
    /// is refused with INVALID_ARGUMENT. Default 100 MB, production's limit.
    pub max_commit_bytes: u64,
    /// Read-write transactions open at once in one session; past it BeginTransaction is refused
    /// with RESOURCE_EXHAUSTED. Default 100.
    pub max_transactions_per_session: u64,
    /// Read-write transactions open at once in the whole instance. Default 10,000.
    pub max_read_write_transactions: u64,
    /// DML statements one read-write transaction keeps (each later statement replays them);
    /// past it a statement is refused with RESOURCE_EXHAUSTED. Default 1,000.
    pub max_statements_per_transaction: u64,
    /// Bytes the database may grow to through writes (SQLite's pages); a statement or commit
    /// that would pass it is refused with RESOURCE_EXHAUSTED. Default 512 MiB.
    pub max_database_bytes: u64,
    /// A read-write transaction with nothing outstanding for this long is aborted, in
    /// milliseconds (production's 10 s).
    pub transaction_idle_timeout_ms: u64,
    /// The interval of SPANNER_SYS's `_MINUTE` statistics tables, in milliseconds (the 10-minute
    /// and hour tables' are 10 and 60 of it); at least a second. Default one minute, production's;
    /// tests shorten it so as not to wait for a minute to close.
    pub stats_interval_ms: u64,
}

impl Default for KnobSettings {
    fn default() -> Self {
        KnobSettings::DEFAULT
    }
}

impl KnobSettings {
    /// The defaults, as a constant (command-line defaults read it).
    pub const DEFAULT: KnobSettings = KnobSettings {
        max_message_bytes: 1 << 20,
        fail_every: 0,
        first_byte_delay_ms: 0,
        message_delay_ms: 0,
        bandwidth_bytes_per_s: 0,
        stall_every: 0,
        stall_ms: 0,
        stall_at_message: 1,
        max_concurrent_queries: 32,
        max_unary_result_bytes: 10 << 20,
        max_stream_buffer_bytes: 1 << 20,
        max_value_bytes: 10 << 20,
        max_sql_bytes: 1 << 20,
        max_parked_streams: 64,
        park_timeout_ms: 60_000,
        max_sessions: 10_000,
        session_idle_timeout_ms: 3_600_000,
        max_name_bytes: 256,
        max_pending_request_bytes: 256 << 20,
        request_timeout_ms: 10_000,
        shape: Shape::Production,
        query_threads: 0,
        service_ms: 0,
        freeze_every_ms: 0,
        freeze_ms: 0,
        abort_every: 0,
        abort_retry_delay_ms: 10,
        conflict_retry_delay_ms: 1,
        lose_commit_answer_every: 0,
        max_mutations_per_commit: 80_000,
        max_commit_bytes: 100_000_000,
        max_transactions_per_session: 100,
        max_read_write_transactions: 10_000,
        max_statements_per_transaction: 1_000,
        max_database_bytes: 512 << 20,
        transaction_idle_timeout_ms: 10_000,
        stats_interval_ms: 60_000,
    };
}

/// The live knobs, shared between the server and whoever turns them. Read once per response
/// (message size, bounds) or once per message (faults, delays, bandwidth).
#[derive(Debug, Default)]
pub struct Knobs {
    settings: Mutex<KnobSettings>,
}

impl Knobs {
    /// Knobs set to `settings`.
    pub fn new(settings: KnobSettings) -> Self {
        let knobs = Knobs::default();
        knobs.set(settings);
        knobs
    }

    /// Changes every knob at once; the maximum message size is brought into
    /// [`MIN_MESSAGE_BYTES`]..=[`MAX_MESSAGE_BYTES`].
    pub fn set(&self, mut s: KnobSettings) {
        s.max_message_bytes = s
            .max_message_bytes
            .clamp(MIN_MESSAGE_BYTES, MAX_MESSAGE_BYTES);
        *self.lock() = s;
    }

    /// The current settings.
    pub fn get(&self) -> KnobSettings {
        *self.lock()
    }

    fn lock(&self) -> MutexGuard<'_, KnobSettings> {
        // Settings are replaced whole: a panic elsewhere cannot leave them half-written.
        self.settings.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl KnobSettings {
    /// The limits a query's SQLite connection runs under.
    pub fn sql_limits(&self) -> SqlLimits {
        SqlLimits {
            max_value_bytes: self.max_value_bytes,
            max_sql_bytes: self.max_sql_bytes,
        }
    }

    /// The interval of SPANNER_SYS's `_MINUTE` tables (at least a second).
    pub fn stats_interval(&self) -> Duration {
        Duration::from_millis(self.stats_interval_ms.max(1000))
    }

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

    /// The stall before message `seq` (0-based) of the `query`-th streaming query (from 1):
    /// `stall_ms` when `query` is a multiple of `stall_every` and `seq` is message
    /// `stall_at_message`, otherwise none.
    pub fn stall(&self, query: u64, seq: u64) -> Duration {
        let due = self.stall_every > 0
            && query.is_multiple_of(self.stall_every)
            && seq.saturating_add(1) == self.stall_at_message.max(1);
        if due {
            Duration::from_millis(self.stall_ms)
        } else {
            Duration::ZERO
        }
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
    fn every_nth_query_stalls_before_its_kth_message_only() {
        let s = KnobSettings {
            stall_every: 3,
            stall_ms: 80,
            stall_at_message: 4,
            ..KnobSettings::default()
        };
        let stalled: Vec<(u64, u64)> = (1..=9)
            .flat_map(|q| (0..10).map(move |seq| (q, seq)))
            .filter(|&(q, seq)| !s.stall(q, seq).is_zero())
            .collect();
        assert_eq!(stalled, [(3, 3), (6, 3), (9, 3)]);
        assert_eq!(s.stall(6, 3), Duration::from_millis(80));
        assert!(
            KnobSettings::default().stall(3, 0).is_zero(),
            "off by default"
        );
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
        knobs.set(KnobSettings {
            max_message_bytes: u64::MAX,
            ..s
        });
        assert_eq!(knobs.get().max_message_bytes, MAX_MESSAGE_BYTES);
        assert_eq!(s.pace(500), Duration::from_millis(505));
    }
}
