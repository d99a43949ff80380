//! Building an iteration's timeline as it runs ([`TimelineBuilder`]), cheaply: per message one push
//! of plain figures (or an addition to the last bucket once the kept messages reach their limit),
//! and per decode span two readings of the thread's CPU clock beside the wall clock.
//!
//! The CPU clock is `CLOCK_THREAD_CPUTIME_ID` (the `cpu-time` crate). A decode span never awaits,
//! so both readings come from the one thread that ran it.

use std::time::{Duration, Instant};

use crate::report::{Bucket, Lane, MAX_BUCKETS, Message, Resume, Span};

/// Messages an iteration keeps one by one unless told otherwise.
pub const DEFAULT_KEPT_MESSAGES: usize = 4_096;

/// The thread's CPU time so far, when the clock answers.
fn thread_cpu() -> Option<Duration> {
    cpu_time::ThreadTime::try_now()
        .ok()
        .map(|t| t.as_duration())
}

/// A span being timed: its wall and CPU start.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Stopwatch {
    /// Starts timing now.
    pub fn start() -> Self {
        Stopwatch {
            wall: Instant::now(),
            cpu: thread_cpu(),
        }
    }

    /// Stops it: the wall time and the CPU time it took.
    pub fn stop(self) -> Timed {
        let end = Instant::now();
        let to = thread_cpu();
        let cpu = match (self.cpu, to) {
            (Some(from), Some(to)) => Some(to.saturating_sub(from)),
            _ => None,
        };
        Timed {
            start: self.wall,
            wall: end.saturating_duration_since(self.wall),
            cpu,
            end: Stopwatch { wall: end, cpu: to },
        }
    }

    /// When it started.
    pub fn at(&self) -> Instant {
        self.wall
    }

    /// The stretch from `earlier` to this start: its wall time and its thread's CPU time (none
    /// when a clock did not answer). Both readings must come from one thread, no await between.
    pub fn since(&self, earlier: &Stopwatch) -> (Duration, Option<Duration>) {
        let wall = self.wall.saturating_duration_since(earlier.wall);
        let cpu = match (earlier.cpu, self.cpu) {
            (Some(from), Some(to)) => Some(to.saturating_sub(from).min(wall)),
            _ => None,
        };
        (wall, cpu)
    }
}

/// A finished span.
#[derive(Debug, Clone, Copy)]
pub struct Timed {
    /// When it began.
    pub start: Instant,
    /// Its wall time.
    pub wall: Duration,
    /// Its thread's CPU time, when the clock answered.
    pub cpu: Option<Duration>,
    /// Its end, where the client's next stretch of work begins.
    pub end: Stopwatch,
}

impl Timed {
    /// Its CPU time, or its wall time when the CPU clock did not answer.
    pub fn cpu_or_wall(&self) -> Duration {
        self.cpu.unwrap_or(self.wall).min(self.wall)
    }
}

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// What a message carried, as its decoder counted it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fed {
    /// Rows it completed.
    pub rows: u64,
    /// Values in it.
    pub values: u64,
    /// Whether its last value was chunked.
    pub chunked: bool,
}

/// One lane's timeline, built as the stream runs.
#[derive(Debug)]
pub struct TimelineBuilder {
    origin: Instant,
    keep: usize,
    lane: Lane,
    arrivals: u32,
}

impl TimelineBuilder {
    /// A lane whose offsets count from `origin`, keeping `keep` messages one by one.
    pub fn new(origin: Instant, keep: usize) -> Self {
        TimelineBuilder {
            origin,
            keep,
            lane: Lane {
                name: "stream".into(),
                ..Lane::default()
            },
            arrivals: 0,
        }
    }

    fn at(&self, t: Instant) -> u64 {
        us(t.saturating_duration_since(self.origin))
    }

    fn span(&self, t: &Timed) -> Span {
        Span {
            start_us: self.at(t.start),
            wall_us: us(t.wall),
            cpu_us: t.cpu.map(us),
        }
    }

    /// A request was sent at `at`.
    pub fn request_sent(&mut self, at: Instant) {
        self.lane.requests_us.push(self.at(at));
    }

    /// The response headers came at `at` (only the first attempt's are kept).
    pub fn headers(&mut self, at: Instant) {
        if self.lane.headers_us.is_none() {
            self.lane.headers_us = Some(self.at(at));
        }
    }

    /// A message of `bytes` arrived at `arrived` (waited for since `waited_from`) and was
    /// wire-decoded in `wire`. Returns its number.
    pub fn arrived(
        &mut self,
        (waited_from, arrived): (Instant, Instant),
        bytes: usize,
        resume_token: bool,
        wire: &Timed,
    ) -> u32 {
        self.arrivals = self.arrivals.saturating_add(1);
        let number = self.arrivals;
        let (waited_from_us, arrived_us) = (self.at(waited_from), self.at(arrived));
        let wire = self.span(wire);
        if self.lane.messages.len() < self.keep {
            self.lane.messages.push(Message {
                number,
                waited_from_us,
                arrived_us,
                bytes: bytes as u64,
                resume_token,
                wire,
                ..Message::default()
            });
            return number;
        }
        let wait = arrived_us.saturating_sub(waited_from_us);
        self.bucket(Bucket {
            first: number,
            last: number,
            from_us: waited_from_us,
            to_us: wire.end_us(),
            bytes: bytes as u64,
            resume_tokens: u32::from(resume_token),
            wait_us: wait,
            max_wait_us: wait,
            max_wait_at: number,
            wire_wall_us: wire.wall_us,
            wire_cpu_us: wire.cpu_us.unwrap_or(wire.wall_us),
            ..Bucket::default()
        });
        number
    }

    /// Adds one message's bucket: a new bucket while there is room (each holding as many messages
    /// as the last one), otherwise into the last.
    fn bucket(&mut self, one: Bucket) {
        let buckets = &mut self.lane.buckets;
        let width = buckets.first().map_or(1, |b| b.last - b.first + 1);
        match buckets.last_mut() {
            Some(last) if last.last - last.first + 1 < width => last.absorb(&one),
            _ => buckets.push(one),
        }
        if buckets.len() > MAX_BUCKETS {
            let merged: Vec<Bucket> = buckets
                .chunks(2)
                .map(|pair| {
                    let mut b = pair[0].clone();
                    if let Some(next) = pair.get(1) {
                        b.absorb(next);
                    }
                    b
                })
                .collect();
            *buckets = merged;
        }
    }

    /// Message `number` was row-decoded in `row`.
    pub fn fed(&mut self, number: u32, row: &Timed, fed: Fed) {
        let span = self.span(row);
        let kept = &mut self.lane.messages;
        // Held messages are the latest: a kept one is near the end, a later one in a bucket.
        let in_kept = kept.last().is_some_and(|m| m.number >= number);
        if let Some(m) = kept
            .iter_mut()
            .rev()
            .take_while(|_| in_kept)
            .find(|m| m.number == number)
        {
            m.row = Some(span);
            m.rows = fed.rows;
            m.values = fed.values;
            m.chunked = fed.chunked;
            return;
        }
        if let Some(b) = self
            .lane
            .buckets
            .iter_mut()
            .rev()
            .find(|b| (b.first..=b.last).contains(&number))
        {
            b.to_us = b.to_us.max(span.end_us());
            b.rows = b.rows.saturating_add(fed.rows);
            b.values = b.values.saturating_add(fed.values);
            b.chunked = b.chunked.saturating_add(u32::from(fed.chunked));
            b.row_wall_us = b.row_wall_us.saturating_add(span.wall_us);
            b.row_cpu_us = b
                .row_cpu_us
                .saturating_add(span.cpu_us.unwrap_or(span.wall_us));
        }
    }

    /// The stream broke at `at` with `status`; `dropped` messages of `dropped_bytes` were let
    /// go, and after `backoff` the request went again at `resent`.
    pub fn resumed(
        &mut self,
        at: Instant,
        status: String,
        (dropped, dropped_bytes): (u32, u64),
        backoff: Duration,
        resent: Instant,
    ) {
        let resume = Resume {
            at_us: self.at(at),
            status,
            dropped_messages: dropped,
            dropped_bytes,
            backoff_us: us(backoff),
            resent_us: self.at(resent),
        };
        self.lane.resumes.push(resume);
    }

    /// The client worked `wall` between its spans, its thread on the CPU for `cpu` of it.
    pub fn between(&mut self, wall: Duration, cpu: Option<Duration>) {
        self.lane.between.add(us(wall), us(cpu.unwrap_or(wall)));
    }

    /// The decoder's end-of-stream check ran in `finish`.
    pub fn finished(&mut self, finish: &Timed) {
        self.lane.finish = Some(self.span(finish));
    }

    /// The lane, ended at `at`.
    pub fn end(mut self, at: Instant) -> Lane {
        self.lane.end_us = self.at(at);
        self.lane
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(start: Instant, wall_us: u64) -> Timed {
        Timed {
            start,
            wall: Duration::from_micros(wall_us),
            cpu: Some(Duration::from_micros(wall_us / 2)),
            end: Stopwatch::start(),
        }
    }

    #[test]
    fn messages_past_the_limit_go_to_a_bounded_number_of_buckets_losing_no_count() {
        let origin = Instant::now();
        let mut timeline = TimelineBuilder::new(origin, 3);
        let total = 10_000u32;
        for i in 0..total {
            let at = origin + Duration::from_micros(u64::from(i) * 10);
            let wait = if i == 5_000 { 9 } else { 1 };
            let number = timeline.arrived(
                (at - Duration::from_micros(wait), at),
                100,
                i % 2 == 0,
                &timed(at, 4),
            );
            assert_eq!(number, i + 1);
            let fed = Fed {
                rows: 2,
                values: 3,
                chunked: false,
            };
            timeline.fed(number, &timed(at, 2), fed);
        }
        let lane = timeline.end(origin + Duration::from_secs(1));
        assert_eq!(lane.messages.len(), 3);
        assert!(lane.buckets.len() <= MAX_BUCKETS);
        let in_buckets: u32 = lane.buckets.iter().map(|b| b.last - b.first + 1).sum();
        assert_eq!(in_buckets, total - 3);
        let rows: u64 = lane.messages.iter().map(|m| m.rows).sum::<u64>()
            + lane.buckets.iter().map(|b| b.rows).sum::<u64>();
        assert_eq!(rows, 2 * u64::from(total));
        let longest = lane
            .waits()
            .filter(|(n, _)| n.is_some())
            .max_by_key(|(_, w)| *w);
        assert_eq!(longest, Some((Some(5_001), 9)));
        let [wire_wall, wire_cpu, row_wall, row_cpu] = lane.decode_us();
        assert_eq!((wire_wall, wire_cpu), (4 * 10_000, 2 * 10_000));
        assert_eq!((row_wall, row_cpu), (2 * 10_000, 10_000));
        assert_eq!(lane.end_us, 1_000_000);
    }

    #[test]
    fn the_stretch_between_two_spans_is_timed_on_both_clocks() {
        let first = Stopwatch::start().stop();
        let mut x = 0u64;
        for i in 0..200_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let next = Stopwatch::start();
        let (wall, cpu) = next.since(&first.end);
        let cpu = cpu.expect("Linux has a thread CPU clock");
        assert!(cpu > Duration::ZERO && cpu <= wall, "{cpu:?} of {wall:?}");
        let mut timeline = TimelineBuilder::new(first.start, 1);
        timeline.between(wall, Some(cpu));
        timeline.between(Duration::from_micros(10), None);
        let lane = timeline.end(next.at());
        assert_eq!(lane.between.wall_us, us(wall) + 10);
        assert_eq!(
            lane.between.cpu_us,
            us(cpu) + 10,
            "no CPU clock: all on the CPU"
        );
    }

    #[test]
    fn a_stopwatch_reads_the_thread_cpu_clock_beside_the_wall_clock() {
        let watch = Stopwatch::start();
        let mut x = 0u64;
        for i in 0..200_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let t = watch.stop();
        let cpu = t.cpu.expect("Linux has a thread CPU clock");
        assert!(cpu > Duration::ZERO, "a busy loop takes CPU time");
        assert!(t.cpu_or_wall() <= t.wall);
    }
}
