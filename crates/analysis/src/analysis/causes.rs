//! Why an iteration was slower (or faster) than the median one, in the words of its parts: each
//! cause is one part of the accounting (`IterationRecord::accounting`: server, network, wire
//! decode, row decode, client work, descheduled, untimed, back-off, a cold start's steps) with
//! its change against the median iteration (the timed iteration whose total is the median's, the
//! lower one of an even count). The causes are the same figures as the parts, so they add up to
//! the difference of the totals (less the changes under 10 µs, left out).
//!
//! One line per part, so that lines of one part never cancel each other; the parts that moved in
//! the direction asked come first, largest first (a slower iteration: the parts that grew). The
//! median iteration is not explained against itself: it has no causes.
//!
//! The timeline says where a part moved, as a [`Location`]: the wait that differs most from the
//! median iteration's in the direction asked (a message's wait against the median iteration's for
//! the same message, or its typical wait where it had no such message), by the larger of 1 ms and
//! five typical waits, is put on the wait part (server or network) that moved the most that way;
//! a longer (or shorter) stretch after the last message, by 1 ms, on the client's own work,
//! descheduled or untimed, likewise. A part's line is the sum of its changes, so where it says
//! where, its detail gives that stretch's own figures beside the median iteration's.
//!
//! A read-write transaction keeps no timeline (its attempts hold its actions): it is explained by
//! its parts alone, its aborted attempts and back-off in words of their own (at which step each
//! aborted, what RetryInfo asked).
//!
//! Every figure is integer microseconds read with saturating arithmetic, so a hostile report gets
//! absurd but finite answers, never a panic.

use serde::{Deserialize, Serialize};

use crate::part::Part;
use crate::report::{Bucket, IterationRecord, Lane, Parts, RunReport, Timeline};
use crate::text::micros;

/// Where in an iteration a cause happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    /// Before the first message came.
    BeforeFirstMessage,
    /// In the wait before message N (from 2).
    BeforeMessage(u32),
    /// After the last message, to the iteration's end.
    AfterLastMessage,
}

impl Location {
    /// The message it names, if any (the first message is 1).
    pub fn message(self) -> Option<u32> {
        match self {
            Location::BeforeFirstMessage => Some(1),
            Location::BeforeMessage(n) => Some(n),
            Location::AfterLastMessage => None,
        }
    }

    /// In words: "before the first message", "before message 4", "after the last message".
    pub fn words(self) -> String {
        match self {
            Location::BeforeFirstMessage => "before the first message".to_owned(),
            Location::BeforeMessage(n) => format!("before message {n}"),
            Location::AfterLastMessage => "after the last message".to_owned(),
        }
    }
}

/// One cause of an iteration's difference from the median one: a part's change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    /// The part (its key in JSON: `server`, `network`, `wire_decode`...).
    pub kind: Part,
    /// Its milliseconds (negative where this iteration spent less in that part).
    pub ms: f64,
    /// Where most of it happened, when one place stands out.
    #[serde(default)]
    pub location: Option<Location>,
    /// The message of [`Cause::location`], when it names one (the first message is 1).
    pub at_message: Option<u32>,
    /// What and where, in words.
    pub detail: String,
}

/// One iteration set against the median one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationCauses {
    /// Its number, as in the CSV.
    pub iteration: u32,
    /// Its total.
    pub total_ms: f64,
    /// Its total less the median iteration's.
    pub extra_ms: f64,
    /// The causes, the parts that moved in the direction of `extra_ms` first, largest first;
    /// none for the median iteration.
    pub causes: Vec<Cause>,
}

/// What the slower iterations had in common.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunCauses {
    /// Each part's growth summed over the iterations slower than the median one, largest first.
    pub causes: Vec<Cause>,
}

/// A run's iterations explained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// The iteration the others are set against.
    pub median_iteration: u32,
    /// Every timed iteration with a timeline, in run order.
    pub iterations: Vec<IterationCauses>,
    /// The slower ones together.
    pub run: RunCauses,
}

/// Why a run cannot be explained.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExplainError {
    /// Written before timelines were kept (or by a run whose iterations failed).
    #[error("run {0:?} has no timelines (an older report?): nothing to explain")]
    NoTimelines(String),
    /// An iteration asked for is not there.
    #[error("run {run:?} has no timed iteration {iteration} with a timeline")]
    NoSuchIteration {
        /// The run.
        run: String,
        /// The iteration.
        iteration: u32,
    },
}

/// A part's change smaller than this (microseconds) is left out.
const NOTABLE_US: i128 = 10;

/// What one iteration's accounting and timeline say, in microseconds.
#[derive(Debug, Clone, Default)]
struct Side {
    /// Its parts, as every view reads them.
    parts: Parts,
    /// The query's wait for its first message, from its own start (after a cold start's steps).
    first_wait: u64,
    /// The waits for the later messages, outside resumes: (number, wait).
    waits: Vec<(Option<u32>, u64)>,
    /// From the end of the lane that ended last to the iteration's end.
    after_last: u64,
    /// Messages over every lane.
    messages: u64,
    /// The server's reported elapsed time.
    elapsed: Option<u64>,
    /// The server's reported CPU time.
    cpu: Option<u64>,
    /// A read-write transaction's aborted attempts: the step each aborted at.
    aborted_at: Vec<&'static str>,
    /// The retry delays its aborts asked for (RetryInfo), summed, in microseconds.
    asked_us: u64,
}

/// Milliseconds as whole microseconds: a non-finite or negative figure is none.
fn whole_us(ms: f64) -> Option<u64> {
    (ms.is_finite() && ms > 0.0).then(|| (ms * 1000.0).round() as u64)
}

impl Side {
    fn of(record: &IterationRecord, timeline: &Timeline) -> Side {
        let mut side = Side {
            parts: record.accounting().parts,
            elapsed: record.query.server_elapsed_ms.and_then(whole_us),
            cpu: record.query.server_cpu_ms.and_then(whole_us),
            ..Side::default()
        };
        if let Some(t) = &record.transaction {
            side.aborted_at = t
                .aborted()
                .map(|a| a.ended_at.map_or("an unknown step", |k| k.as_str()))
                .collect();
            side.asked_us = t
                .aborted()
                .filter_map(|a| a.retry_delay_ms.and_then(whole_us))
                .sum();
        }
        for lane in &timeline.lanes {
            side.messages = side
                .messages
                .saturating_add(lane.messages.len() as u64)
                .saturating_add(lane.buckets.iter().map(bucket_len).sum::<u64>());
        }
        if timeline.lanes.is_empty() {
            // A read-write transaction keeps no lanes: its statements' messages, summed.
            side.messages = record.answer.messages;
        }
        // The lane that ended last carries the iteration's waits.
        let critical = timeline
            .lanes
            .iter()
            .max_by_key(|l| l.origin_us.saturating_add(l.end_us));
        if let Some(lane) = critical {
            let end = lane.origin_us.saturating_add(lane.end_us);
            side.first_wait = lane
                .origin_us
                .saturating_add(lane.first_arrival_us().unwrap_or(lane.end_us))
                .saturating_sub(timeline.setup_end_us());
            side.waits = later_waits(lane);
            side.after_last = timeline.total_us.saturating_sub(end);
        }
        side
    }

    /// A part's whole microseconds (0 when the iteration did not have it).
    fn us(&self, part: Part) -> u64 {
        whole_us(self.parts.ms(part)).unwrap_or(0)
    }
}

/// A lane's waits after its first message, leaving out the first message after each re-sent
/// request (its wait began before the request did).
fn later_waits(lane: &Lane) -> Vec<(Option<u32>, u64)> {
    let mut resumes = lane.resumes.iter().peekable();
    let mut waits = Vec::new();
    for m in lane.messages.iter().filter(|m| m.number != 1) {
        if resumes
            .next_if(|r| m.waited_from_us >= r.resent_us)
            .is_some()
        {
            continue;
        }
        waits.push((Some(m.number), m.wait_us()));
    }
    for b in &lane.buckets {
        waits.push((Some(b.max_wait_at), b.max_wait_us));
        waits.push((None, b.wait_us.saturating_sub(b.max_wait_us)));
    }
    waits
}

fn bucket_len(b: &Bucket) -> u64 {
    u64::from(b.last.saturating_sub(b.first)) + 1
}

fn ms(us: i128) -> f64 {
    us as f64 / 1000.0
}

fn diff(a: u64, b: u64) -> i128 {
    i128::from(a) - i128::from(b)
}

/// The median of `values` (the lower middle one), 0 when empty.
fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values
        .get(values.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0)
}

/// Explains every timed iteration of `report` that kept a timeline against its median one.
pub fn explain(report: &RunReport) -> Result<Explanation, ExplainError> {
    explain_records(&report.config.label, &report.iterations)
}

/// [`explain`] over the records of run `label` (a run in flight has no report yet).
pub fn explain_records(
    label: &str,
    records: &[IterationRecord],
) -> Result<Explanation, ExplainError> {
    // A read-write transaction keeps no timeline of its own (its attempts hold its actions): it
    // is explained by its parts alone.
    static NO_TIMELINE: Timeline = Timeline {
        lanes: Vec::new(),
        total_us: 0,
        setup: Vec::new(),
    };
    let timed: Vec<(&IterationRecord, &Timeline)> = records
        .iter()
        .filter(|r| r.is_timed())
        .filter(|r| r.total_ms.is_finite())
        .filter_map(|r| match (&r.timeline, &r.transaction) {
            (Some(timeline), _) => Some((r, timeline)),
            (None, Some(_)) => Some((r, &NO_TIMELINE)),
            (None, None) => None,
        })
        .collect();
    let mut by_total: Vec<usize> = (0..timed.len()).collect();
    by_total.sort_by(|&a, &b| timed[a].0.total_ms.total_cmp(&timed[b].0.total_ms));
    let Some(&middle) = by_total.get(timed.len().saturating_sub(1) / 2) else {
        return Err(ExplainError::NoTimelines(label.to_owned()));
    };
    let (median_record, median_timeline) = timed[middle];
    let base = Side::of(median_record, median_timeline);
    let typical_wait = median(base.waits.iter().map(|(_, w)| *w).collect());
    let iterations: Vec<IterationCauses> = timed
        .iter()
        .enumerate()
        .map(|(index, (record, timeline))| {
            let extra_ms = record.total_ms - median_record.total_ms;
            // The median iteration is not explained against itself.
            let causes = if index == middle {
                Vec::new()
            } else {
                causes(&Side::of(record, timeline), &base, typical_wait, extra_ms)
            };
            IterationCauses {
                iteration: record.iteration,
                total_ms: record.total_ms,
                extra_ms,
                causes,
            }
        })
        .collect();
    Ok(Explanation {
        median_iteration: median_record.iteration,
        run: run_causes(&iterations),
        iterations,
    })
}

/// Only `iteration` of `explanation`.
pub fn only(
    mut explanation: Explanation,
    run: &str,
    iteration: u32,
) -> Result<Explanation, ExplainError> {
    explanation.iterations.retain(|i| i.iteration == iteration);
    if explanation.iterations.is_empty() {
        return Err(ExplainError::NoSuchIteration {
            run: run.to_owned(),
            iteration,
        });
    }
    Ok(explanation)
}

/// A stretch of an iteration much longer (or shorter) than the median iteration's: where it was,
/// how long it took, what it is set against (the median iteration's, or its typical wait), and
/// by how much it differs from that, in microseconds.
#[derive(Debug, Clone, Copy)]
struct Stretch {
    location: Location,
    took: u64,
    against: u64,
    typical: bool,
    excess: i128,
}

impl Stretch {
    fn new(location: Location, took: u64, against: u64) -> Stretch {
        Stretch {
            location,
            took,
            against,
            typical: false,
            excess: diff(took, against),
        }
    }

    fn words(&self) -> String {
        let against = if self.typical {
            "typically"
        } else {
            "the median iteration"
        };
        let what = match self.location {
            Location::AfterLastMessage => "took",
            _ => "waited",
        };
        format!(
            "; the stretch that changed most was {} ({what} {}, {against} {})",
            self.location.words(),
            micros(self.took),
            micros(self.against)
        )
    }
}

/// The wait of `it` that differs most from the median iteration's in the direction `sign` (a
/// message's wait against the median's for the same message, or its typical wait where the
/// median had no such message), by the larger of 1 ms and five typical waits.
fn longest_wait(it: &Side, base: &Side, typical_wait: u64, sign: i128) -> Option<Stretch> {
    let threshold = i128::from(typical_wait.saturating_mul(5).max(1_000));
    let first = Stretch::new(Location::BeforeFirstMessage, it.first_wait, base.first_wait);
    let later = it.waits.iter().filter_map(|&(n, w)| {
        let n = n?;
        let median = base
            .waits
            .iter()
            .find(|(m, _)| *m == Some(n))
            .map(|(_, w)| *w);
        Some(Stretch {
            typical: median.is_none(),
            ..Stretch::new(
                Location::BeforeMessage(n),
                w,
                median.unwrap_or(typical_wait),
            )
        })
    });
    std::iter::once(first)
        .chain(later)
        .filter(|s| s.excess * sign >= threshold)
        .max_by_key(|s| (s.excess * sign, std::cmp::Reverse(s.location)))
}

/// Puts `stretch` on the cause among `parts` that moved the most in the direction `sign`.
fn place(causes: &mut [Cause], stretch: Stretch, parts: &[Part], sign: f64) {
    let moved = causes
        .iter_mut()
        .filter(|c| parts.contains(&c.kind) && c.ms * sign > 0.0)
        .max_by(|a, b| (a.ms * sign).total_cmp(&(b.ms * sign)));
    if let Some(c) = moved {
        c.location = Some(stretch.location);
        c.at_message = stretch.location.message();
        c.detail.push_str(&stretch.words());
    }
}

/// What a part was in `it` against `base`, in words.
fn detail(part: Part, it: &Side, base: &Side) -> String {
    let (a, b) = (micros(it.us(part)), micros(base.us(part)));
    let figure = |us: Option<u64>| us.map_or("–".to_owned(), micros);
    match part {
        Part::Server => format!(
            "the client waited {a} on the server's work (the median iteration {b}); the server \
             reported {} elapsed and {} of CPU (the median iteration {} and {})",
            figure(it.elapsed),
            figure(it.cpu),
            figure(base.elapsed),
            figure(base.cpu),
        ),
        Part::Network => format!(
            "the client waited {a} on the network over {} messages (the median iteration {b} \
             over {})",
            it.messages, base.messages
        ),
        Part::WireDecode | Part::RowDecode => format!(
            "{a} of {} CPU over {} messages (the median iteration {b} over {})",
            part.label(),
            it.messages,
            base.messages
        ),
        Part::ClientWork => format!(
            "the client's own work between its waits and decodes took {a} of CPU (the median \
             iteration {b})"
        ),
        Part::Descheduled => format!(
            "the client's thread was off the CPU for {a} of its timed work (the median \
             iteration {b})"
        ),
        Part::Untimed => format!("{a} that no measurement covers (the median iteration {b})"),
        Part::Aborted => format!(
            "{} aborted attempt{} ({}) took {a} (the median iteration {b}, {} aborted)",
            it.aborted_at.len(),
            if it.aborted_at.len() == 1 { "" } else { "s" },
            if it.aborted_at.is_empty() {
                "none".to_owned()
            } else {
                format!("at {}", it.aborted_at.join(", "))
            },
            base.aborted_at.len()
        ),
        Part::Backoff if !it.aborted_at.is_empty() || !base.aborted_at.is_empty() => format!(
            "the client slept {a} before retrying (the server's RetryInfo asked {}; the median \
             iteration {b})",
            micros(it.asked_us)
        ),
        _ => format!("{}: {a} (the median iteration {b})", part.description()),
    }
}

/// `it`'s parts against `base`'s, one cause per part that changed by 10 µs or more: those that
/// moved in the direction of `extra_ms` first, largest first.
fn causes(it: &Side, base: &Side, typical_wait: u64, extra_ms: f64) -> Vec<Cause> {
    let mut out: Vec<Cause> = Part::ALL
        .into_iter()
        .filter(|&part| it.parts.has(part) || base.parts.has(part))
        .filter_map(|part| {
            let us = diff(it.us(part), base.us(part));
            (us.abs() >= NOTABLE_US).then(|| Cause {
                kind: part,
                ms: ms(us),
                location: None,
                at_message: None,
                detail: detail(part, it, base),
            })
        })
        .collect();
    let sign = if extra_ms < 0.0 { -1 } else { 1 };
    if let Some(wait) = longest_wait(it, base, typical_wait, sign) {
        place(&mut out, wait, &[Part::Server, Part::Network], sign as f64);
    }
    let tail = Stretch::new(Location::AfterLastMessage, it.after_last, base.after_last);
    if tail.excess * sign >= 1_000 {
        let own = [Part::ClientWork, Part::Descheduled, Part::Untimed];
        place(&mut out, tail, &own, sign as f64);
    }
    let sign = sign as f64;
    out.sort_by(|a, b| {
        (b.ms * sign)
            .total_cmp(&(a.ms * sign))
            .then(a.kind.cmp(&b.kind))
    });
    out
}

/// The growth of each part summed over the iterations slower than the median one, with where it
/// happened most often.
fn run_causes(iterations: &[IterationCauses]) -> RunCauses {
    let slower: Vec<&IterationCauses> = iterations.iter().filter(|i| i.extra_ms > 0.0).collect();
    let mut sums: Vec<(Part, f64, Vec<Location>)> = Vec::new();
    for i in &slower {
        for c in i.causes.iter().filter(|c| c.ms > 0.0) {
            match sums.iter_mut().find(|(k, _, _)| *k == c.kind) {
                Some((_, ms, at)) => {
                    *ms += c.ms;
                    at.extend(c.location);
                }
                None => sums.push((c.kind, c.ms, c.location.into_iter().collect())),
            }
        }
    }
    let mut causes: Vec<Cause> = sums
        .into_iter()
        .map(|(kind, ms, at)| {
            let common = most_common(&at);
            let where_ = common.map_or(String::new(), |(at, times)| {
                format!(", {times} of them {}", at.words())
            });
            Cause {
                kind,
                ms,
                location: common.map(|(at, _)| at),
                at_message: common.and_then(|(at, _)| at.message()),
                detail: format!("over {} slower iterations{where_}", slower.len()),
            }
        })
        .collect();
    causes.sort_by(|a, b| b.ms.total_cmp(&a.ms).then(a.kind.cmp(&b.kind)));
    RunCauses { causes }
}

/// The most frequent value of `values` with its count (the smallest of a tie).
fn most_common<T: Ord + Copy>(values: &[T]) -> Option<(T, usize)> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let mut best: Option<(T, usize)> = None;
    for chunk in sorted.chunk_by(|a, b| a == b) {
        if best.is_none_or(|(_, n)| chunk.len() > n) {
            best = Some((chunk[0], chunk.len()));
        }
    }
    best
}

#[cfg(test)]
#[path = "causes/tests.rs"]
mod tests;
