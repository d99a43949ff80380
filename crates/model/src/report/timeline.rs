//! The timeline of one iteration, as plain data: what happened when, in microseconds from the
//! iteration's start (a monotonic clock), so the tail can be explained and drawn.
//!
//! A lane is one stream: a plain read has one, a partitioned read one per partition (each with its
//! own `origin_us`). Every message is kept one by one up to a per-run limit (the engine's
//! [`RUN_MESSAGE_LIMIT`]); later ones are summed into at most [`MAX_BUCKETS`] buckets of
//! consecutive messages per lane (two neighbours merged when a new one would not fit), so a lane's
//! size is bounded whatever the answer's length: at most the limit's messages (about 130 bytes
//! each in memory) plus the buckets.
//!
//! Spans carry the wall time and, beside it, the CPU time of the thread that ran them; their
//! difference is time that thread spent off the CPU (descheduled).

use serde::{Deserialize, Serialize};

use crate::part::ColdStep;

/// Messages kept one by one over a whole run (all its iterations and lanes), at most; the rest are
/// kept as buckets.
pub const RUN_MESSAGE_LIMIT: usize = 20_000;

/// Buckets of a lane, at most.
pub const MAX_BUCKETS: usize = 64;

/// What one iteration's streams did, and when.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Timeline {
    /// One lane per stream: one for a plain read, one per partition.
    pub lanes: Vec<Lane>,
    /// The whole iteration's length (the record's total), microseconds.
    pub total_us: u64,
    /// A cold iteration's steps before its query (dns, tcp, tls, http2, token, session), in the
    /// order they ran from the iteration's start; its lanes begin after them. Empty when warm.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<SetupStep>,
}

/// One step of a cold start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupStep {
    /// Which step (written `dns`, `tcp`, `tls`, `http2`, `token` or `session`).
    pub step: ColdStep,
    /// When it began.
    pub start_us: u64,
    /// How long it took.
    pub wall_us: u64,
}

impl Timeline {
    /// Where the setup steps ended (0 without any): the query's start.
    pub fn setup_end_us(&self) -> u64 {
        self.setup
            .iter()
            .map(|s| s.start_us.saturating_add(s.wall_us))
            .max()
            .unwrap_or(0)
    }

    /// The microseconds of the setup steps of `step`.
    pub fn setup_us(&self, step: ColdStep) -> u64 {
        self.setup
            .iter()
            .filter(|s| s.step == step)
            .fold(0u64, |sum, s| sum.saturating_add(s.wall_us))
    }
}

/// A span of the client's own work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Span {
    /// When it began.
    pub start_us: u64,
    /// How long it took on the wall clock.
    pub wall_us: u64,
    /// The CPU time its thread got meanwhile; `None` where the clock is unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us: Option<u64>,
}

impl Span {
    /// Where it ended.
    pub fn end_us(&self) -> u64 {
        self.start_us.saturating_add(self.wall_us)
    }

    /// Its wall time off the CPU (zero without a CPU time).
    pub fn off_cpu_us(&self) -> u64 {
        self.cpu_us
            .map_or(0, |cpu| self.wall_us.saturating_sub(cpu))
    }
}

/// One stream's events.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Lane {
    /// `stream`, or `partition N` (from 1).
    pub name: String,
    /// Where the lane began, from the iteration's start (0 for a plain read).
    #[serde(default)]
    pub origin_us: u64,
    /// When each request was sent: the first, and again after each resume.
    pub requests_us: Vec<u64>,
    /// When the response headers came (the first attempt's), if they did.
    #[serde(default)]
    pub headers_us: Option<u64>,
    /// The messages kept one by one, in arrival order.
    pub messages: Vec<Message>,
    /// The later messages, summed, in arrival order.
    #[serde(default)]
    pub buckets: Vec<Bucket>,
    /// Every resume.
    #[serde(default)]
    pub resumes: Vec<Resume>,
    /// The decoder's end-of-stream check.
    #[serde(default)]
    pub finish: Option<Span>,
    /// The client's own work between its waits and decode spans (the rows' callback, the
    /// timeline's and the resume's bookkeeping), summed: its wall time and, beside it, the CPU
    /// time its thread got (the difference was spent off the CPU). Part of the record's `other`.
    #[serde(default)]
    pub between: Between,
    /// When the lane ended.
    pub end_us: u64,
}

/// One message's arrival and decoding.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Message {
    /// Its number in the lane, from 1, counting every arrival (also those a resume dropped).
    pub number: u32,
    /// When the client began waiting for it.
    pub waited_from_us: u64,
    /// When its bytes arrived.
    pub arrived_us: u64,
    /// Its serialized size.
    pub bytes: u64,
    /// Values in it (each piece of a chunked value counted).
    pub values: u64,
    /// Rows it completed.
    pub rows: u64,
    /// Whether it carried a resume token.
    pub resume_token: bool,
    /// Whether its last value continues in the next message.
    pub chunked: bool,
    /// Its wire decode.
    pub wire: Span,
    /// Its row decode (later than its wire decode when it waited for a token); `None` when a
    /// resume dropped it.
    pub row: Option<Span>,
}

impl Message {
    /// How long the client waited for it.
    pub fn wait_us(&self) -> u64 {
        self.arrived_us.saturating_sub(self.waited_from_us)
    }
}

/// Consecutive messages summed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Bucket {
    /// The first message's number.
    pub first: u32,
    /// The last message's number.
    pub last: u32,
    /// When the client began waiting for the first.
    pub from_us: u64,
    /// When the last one's work ended.
    pub to_us: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Their values.
    pub values: u64,
    /// The rows they completed.
    pub rows: u64,
    /// How many carried a resume token.
    pub resume_tokens: u32,
    /// How many ended in a chunked value.
    pub chunked: u32,
    /// The client's waits for them, summed.
    pub wait_us: u64,
    /// The longest of those waits.
    pub max_wait_us: u64,
    /// The number of the message that waited longest.
    pub max_wait_at: u32,
    /// Their wire decodes' wall time.
    pub wire_wall_us: u64,
    /// Their wire decodes' CPU time.
    pub wire_cpu_us: u64,
    /// Their row decodes' wall time.
    pub row_wall_us: u64,
    /// Their row decodes' CPU time.
    pub row_cpu_us: u64,
}

impl Bucket {
    /// Adds `other` (the messages right after these) to this bucket.
    pub fn absorb(&mut self, other: &Bucket) {
        if other.max_wait_us > self.max_wait_us {
            self.max_wait_us = other.max_wait_us;
            self.max_wait_at = other.max_wait_at;
        }
        self.last = other.last;
        self.to_us = self.to_us.max(other.to_us);
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.values = self.values.saturating_add(other.values);
        self.rows = self.rows.saturating_add(other.rows);
        self.resume_tokens = self.resume_tokens.saturating_add(other.resume_tokens);
        self.chunked = self.chunked.saturating_add(other.chunked);
        self.wait_us = self.wait_us.saturating_add(other.wait_us);
        self.wire_wall_us = self.wire_wall_us.saturating_add(other.wire_wall_us);
        self.wire_cpu_us = self.wire_cpu_us.saturating_add(other.wire_cpu_us);
        self.row_wall_us = self.row_wall_us.saturating_add(other.row_wall_us);
        self.row_cpu_us = self.row_cpu_us.saturating_add(other.row_cpu_us);
    }
}

/// Stretches of the client's own work, summed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Between {
    /// Their wall time.
    pub wall_us: u64,
    /// The CPU time their thread got.
    pub cpu_us: u64,
}

impl Between {
    /// Adds one stretch.
    pub fn add(&mut self, wall_us: u64, cpu_us: u64) {
        self.wall_us = self.wall_us.saturating_add(wall_us);
        self.cpu_us = self.cpu_us.saturating_add(cpu_us.min(wall_us));
    }

    /// Their wall time off the CPU.
    pub fn off_cpu_us(&self) -> u64 {
        self.wall_us.saturating_sub(self.cpu_us)
    }
}

/// A stream that broke and was asked for again.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Resume {
    /// When the break was seen.
    pub at_us: u64,
    /// The status it broke with (`UNAVAILABLE: ...`).
    pub status: String,
    /// Messages received since the last resume token, dropped to come again.
    pub dropped_messages: u32,
    /// Their bytes.
    pub dropped_bytes: u64,
    /// The back-off before asking again.
    pub backoff_us: u64,
    /// When the request was sent again.
    pub resent_us: u64,
}

impl Lane {
    /// Every message's wait with its number: the kept ones, then each bucket's longest (with its
    /// bucket's other waits as one remainder, numbered `None`).
    pub fn waits(&self) -> impl Iterator<Item = (Option<u32>, u64)> + '_ {
        let kept = self.messages.iter().map(|m| (Some(m.number), m.wait_us()));
        let buckets = self.buckets.iter().flat_map(|b| {
            [
                (Some(b.max_wait_at), b.max_wait_us),
                (None, b.wait_us.saturating_sub(b.max_wait_us)),
            ]
        });
        kept.chain(buckets)
    }

    /// The decode spans' wall and CPU time, summed: (wire wall, wire CPU, row wall, row CPU),
    /// the end-of-stream check counted as row decode. A span without CPU time counts its wall
    /// time as CPU (nothing known off the CPU).
    pub fn decode_us(&self) -> [u64; 4] {
        let mut out = [0u64; 4];
        let mut add = |i: usize, span: &Span| {
            out[i] = out[i].saturating_add(span.wall_us);
            out[i + 1] = out[i + 1].saturating_add(span.cpu_us.unwrap_or(span.wall_us));
        };
        for m in &self.messages {
            add(0, &m.wire);
            if let Some(row) = &m.row {
                add(2, row);
            }
        }
        if let Some(finish) = &self.finish {
            add(2, finish);
        }
        for b in &self.buckets {
            out[0] = out[0].saturating_add(b.wire_wall_us);
            out[1] = out[1].saturating_add(b.wire_cpu_us);
            out[2] = out[2].saturating_add(b.row_wall_us);
            out[3] = out[3].saturating_add(b.row_cpu_us);
        }
        out
    }

    /// When the first message arrived, from the lane's origin.
    pub fn first_arrival_us(&self) -> Option<u64> {
        self.messages.first().map(|m| m.arrived_us).or_else(|| {
            self.buckets
                .first()
                .map(|b| b.from_us.saturating_add(b.max_wait_us))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_absorbs_its_neighbour_keeping_the_longest_wait() {
        let mut a = Bucket {
            first: 1,
            last: 2,
            wait_us: 30,
            max_wait_us: 20,
            max_wait_at: 2,
            bytes: 10,
            ..Bucket::default()
        };
        let b = Bucket {
            first: 3,
            last: 5,
            to_us: 900,
            wait_us: 100,
            max_wait_us: 90,
            max_wait_at: 4,
            bytes: 5,
            ..Bucket::default()
        };
        a.absorb(&b);
        assert_eq!((a.first, a.last, a.to_us, a.bytes), (1, 5, 900, 15));
        assert_eq!((a.wait_us, a.max_wait_us, a.max_wait_at), (130, 90, 4));
    }

    #[test]
    fn a_span_without_cpu_time_is_never_off_the_cpu_and_absurd_figures_saturate() {
        let span = Span {
            start_us: u64::MAX,
            wall_us: 5,
            cpu_us: None,
        };
        assert_eq!(span.end_us(), u64::MAX);
        assert_eq!(span.off_cpu_us(), 0);
        let busy = Span {
            cpu_us: Some(2),
            ..span
        };
        assert_eq!(busy.off_cpu_us(), 3);
    }
}
