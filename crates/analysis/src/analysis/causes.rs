//! Why an iteration was slower (or faster) than the median one: the difference of their totals
//! split into causes, each with its milliseconds and where it happened, from their timelines.
//!
//! An iteration's total is its time to the first message, the client's waits for each later
//! message, its decode spans (CPU time plus time off the CPU), the resumes (back-off, and the
//! waits for what came again), and what none of those covers. Each part is set against the same
//! part of the median iteration (the timed iteration whose total is the median's, the lower one of
//! an even count):
//!
//! - `server`: the server worked longer while the client waited: the change of the `server`
//!   part of their accountings (the client's waits while the server was still working), set
//!   against the server's reported elapsed and CPU time, and taken out of the waits before they
//!   are split into a first byte and stream gaps (first out of the gaps it explains, and then
//!   named at the message of the largest of them);
//! - `first_byte`: the first message came later (queueing, the network);
//! - `stream_gap`: a longer wait before one message than the median iteration's typical wait
//!   (`at_message`, from 1), named when it exceeds the larger of 1 ms and five typical waits; the
//!   rest of the waits' difference as one cause without a message;
//! - `decode`: more decode CPU (more or larger messages);
//! - `descheduled`: more of the client's own work (its decode spans, and what it did between
//!   them) off the CPU (a busy machine);
//! - `resume`: more time in resumes;
//! - `other`: the rest: the CPU time of the client's own work between its spans (the rows'
//!   callback, bookkeeping; the lane's `between`), named in its detail, and whatever no span or
//!   stretch covers.
//!
//! The kinds `connect`, `tls`, `token` and `session` belong to cold iterations that time their
//! connection steps; timelines without those steps never name them.
//!
//! Every figure is integer microseconds read with saturating arithmetic, so a hostile report gets
//! absurd but finite answers, never a panic.

use serde::{Deserialize, Serialize};

use crate::part::Part;
use crate::report::{Bucket, IterationRecord, Lane, RunReport, Timeline};
use crate::text::micros;

/// What made an iteration's time differ from the median iteration's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// The server worked longer while the client waited.
    Server,
    /// The first message came later.
    FirstByte,
    /// A longer wait before one message.
    StreamGap,
    /// More decode CPU.
    Decode,
    /// More of the client's work off the CPU.
    Descheduled,
    /// More time resuming.
    Resume,
    /// Connecting.
    Connect,
    /// The TLS handshake.
    Tls,
    /// Fetching a token.
    Token,
    /// Creating a session.
    Session,
    /// What no other cause covers.
    Other,
}

impl CauseKind {
    /// The name in the JSON and in the text (`first_byte`, `stream_gap`...).
    pub fn as_str(self) -> &'static str {
        match self {
            CauseKind::Server => "server",
            CauseKind::FirstByte => "first_byte",
            CauseKind::StreamGap => "stream_gap",
            CauseKind::Decode => "decode",
            CauseKind::Descheduled => "descheduled",
            CauseKind::Resume => "resume",
            CauseKind::Connect => "connect",
            CauseKind::Tls => "tls",
            CauseKind::Token => "token",
            CauseKind::Session => "session",
            CauseKind::Other => "other",
        }
    }
}

/// One cause of an iteration's extra time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    /// What it was.
    pub kind: CauseKind,
    /// Its milliseconds (negative where this iteration was faster in that part).
    pub ms: f64,
    /// For a stream gap, the message that came late (from 1); for the server, the message
    /// before which most of its extra work was waited for, when one stands out.
    pub at_message: Option<u32>,
    /// Where and what, in words.
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
    /// The causes, largest first.
    pub causes: Vec<Cause>,
}

/// What the slower iterations had in common.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunCauses {
    /// Each kind's positive milliseconds summed over the iterations slower than the median one,
    /// largest first.
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

/// Named stream gaps per iteration, at most (the rest go into one unnamed gap).
const NAMED_GAPS: usize = 3;

/// What the server reported and how much of the client's waits it accounts for, microseconds.
#[derive(Debug, Clone, Copy, Default)]
struct Server {
    /// The `server` part of the iteration's accounting.
    part: u64,
    /// Its reported elapsed time.
    elapsed: Option<u64>,
    /// Its reported CPU time.
    cpu: Option<u64>,
}

impl Server {
    fn of(record: &IterationRecord) -> Server {
        let us = |ms: f64| (ms.is_finite() && ms > 0.0).then(|| (ms * 1000.0).round() as u64);
        let part = record.accounting().parts.ms(Part::Server);
        Server {
            part: us(part).unwrap_or(0),
            elapsed: record.server_ms.and_then(us),
            cpu: record.server_cpu_ms.and_then(us),
        }
    }
}

/// What an iteration's timeline adds up to, in microseconds.
#[derive(Debug, Clone, Default)]
struct Spent {
    first_byte: u64,
    /// Waits for the messages after the first, outside resumes: (number, wait).
    waits: Vec<(Option<u32>, u64)>,
    decode_cpu: u64,
    descheduled: u64,
    resume: u64,
    messages: u64,
    /// CPU time of the client's own work between its spans.
    between_cpu: u64,
    /// A cold start's steps: connecting (dns, tcp, http2), tls, token, session.
    setup: [u64; 4],
    /// What the server reported (from the record, not the timeline).
    server: Server,
}

/// The cause kinds of a cold start's steps, and the steps each covers.
const SETUP: [(CauseKind, &[&str]); 4] = [
    (CauseKind::Connect, &["dns", "tcp", "http2"]),
    (CauseKind::Tls, &["tls"]),
    (CauseKind::Token, &["token"]),
    (CauseKind::Session, &["session"]),
];

impl Spent {
    fn of(record: &IterationRecord, timeline: &Timeline) -> Spent {
        let mut parts = Spent {
            server: Server::of(record),
            ..Spent::default()
        };
        // The lane that ended last carries the iteration's waits.
        let critical = timeline
            .lanes
            .iter()
            .max_by_key(|l| l.origin_us.saturating_add(l.end_us));
        for lane in &timeline.lanes {
            let [wire_wall, wire_cpu, row_wall, row_cpu] = lane.decode_us();
            let cpu = wire_cpu
                .min(wire_wall)
                .saturating_add(row_cpu.min(row_wall));
            parts.decode_cpu = parts.decode_cpu.saturating_add(cpu);
            let off = wire_wall.saturating_add(row_wall).saturating_sub(cpu);
            parts.descheduled = parts
                .descheduled
                .saturating_add(off)
                .saturating_add(lane.between.off_cpu_us());
            parts.between_cpu = parts.between_cpu.saturating_add(lane.between.cpu_us);
            parts.messages = parts
                .messages
                .saturating_add(lane.messages.len() as u64)
                .saturating_add(lane.buckets.iter().map(bucket_len).sum::<u64>());
        }
        for (slot, (_, steps)) in parts.setup.iter_mut().zip(SETUP) {
            *slot = steps.iter().fold(0u64, |sum, step| {
                sum.saturating_add(timeline.setup_us(step))
            });
        }
        if let Some(lane) = critical {
            // The query's first byte, from its own start (after a cold start's steps).
            parts.first_byte = lane
                .origin_us
                .saturating_add(lane.first_arrival_us().unwrap_or(lane.end_us))
                .saturating_sub(timeline.setup_end_us());
            let (waits, resume) = waits_and_resumes(lane);
            parts.waits = waits;
            parts.resume = resume;
        }
        parts
    }

    fn waits_total(&self) -> u64 {
        self.waits
            .iter()
            .fold(0u64, |sum, (_, w)| sum.saturating_add(*w))
    }
}

/// A lane's waits after its first message, and its resumes' time: from each break to the first
/// message after the request re-sent (whose wait is then not among the waits).
fn waits_and_resumes(lane: &Lane) -> (Vec<(Option<u32>, u64)>, u64) {
    let mut resume = 0u64;
    let mut resumes = lane.resumes.iter().peekable();
    let mut waits = Vec::new();
    for m in lane.messages.iter().filter(|m| m.number != 1) {
        if let Some(r) = resumes.next_if(|r| m.waited_from_us >= r.resent_us) {
            resume = resume.saturating_add(m.arrived_us.saturating_sub(r.at_us));
            continue;
        }
        waits.push((Some(m.number), m.wait_us()));
    }
    for r in resumes {
        resume = resume.saturating_add(r.resent_us.saturating_sub(r.at_us));
    }
    for b in &lane.buckets {
        waits.push((Some(b.max_wait_at), b.max_wait_us));
        waits.push((None, b.wait_us.saturating_sub(b.max_wait_us)));
    }
    (waits, resume)
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
    let timed: Vec<(&IterationRecord, &Timeline)> = records
        .iter()
        .filter(|r| r.is_timed())
        .filter(|r| r.total_ms.is_finite())
        .filter_map(|r| Some((r, r.timeline.as_ref()?)))
        .collect();
    let mut by_total: Vec<usize> = (0..timed.len()).collect();
    by_total.sort_by(|&a, &b| timed[a].0.total_ms.total_cmp(&timed[b].0.total_ms));
    let Some(&middle) = by_total.get(timed.len().saturating_sub(1) / 2) else {
        return Err(ExplainError::NoTimelines(label.to_owned()));
    };
    let (median_record, median_timeline) = timed[middle];
    let base = Spent::of(median_record, median_timeline);
    let typical_wait = median(base.waits.iter().map(|(_, w)| *w).collect());
    let iterations: Vec<IterationCauses> = timed
        .iter()
        .map(|(record, timeline)| {
            let extra_ms = record.total_ms - median_record.total_ms;
            let causes = causes(&Spent::of(record, timeline), &base, typical_wait, extra_ms);
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

fn cause(kind: CauseKind, us: i128, at_message: Option<u32>, detail: String) -> Cause {
    Cause {
        kind,
        ms: ms(us),
        at_message,
        detail,
    }
}

/// Where the server's extra work was waited for: the message, its wait, and how much of the
/// server's share it held, in microseconds.
#[derive(Debug, Clone, Copy)]
struct Stall {
    number: u32,
    wait: u64,
    taken: u64,
}

/// A wait much longer than the median iteration's typical one.
struct Gap {
    number: u32,
    wait: u64,
    /// Its excess over the typical wait, less what another cause took of it.
    excess: i128,
}

/// The longest waits of `it` that exceed the typical one by the larger of 1 ms and five typical
/// waits, longest first, at most [`NAMED_GAPS`].
fn named_gaps(it: &Spent, typical_wait: u64) -> Vec<Gap> {
    let threshold = typical_wait.saturating_mul(5).max(1_000);
    let mut gaps: Vec<(u32, u64)> = it
        .waits
        .iter()
        .filter_map(|&(n, w)| Some((n?, w)))
        .filter(|&(_, w)| w.saturating_sub(typical_wait) >= threshold)
        .collect();
    gaps.sort_by_key(|&(n, w)| (std::cmp::Reverse(w), n));
    gaps.truncate(NAMED_GAPS);
    gaps.into_iter()
        .map(|(number, wait)| Gap {
            number,
            wait,
            excess: diff(wait, typical_wait),
        })
        .collect()
}

/// The server cause in words: what it reported against the median iteration, and where the
/// client waited for it.
fn server_detail(it: &Spent, base: &Spent, stall: Option<Stall>, typical_wait: u64) -> String {
    let figure = |us: Option<u64>| us.map_or("–".to_owned(), micros);
    let mut text = format!(
        "the client waited {} on the server's work (the median iteration {}); the server reported {} elapsed and {} of CPU (the median iteration {} and {})",
        micros(it.server.part),
        micros(base.server.part),
        figure(it.server.elapsed),
        figure(it.server.cpu),
        figure(base.server.elapsed),
        figure(base.server.cpu),
    );
    if let Some(s) = stall {
        text.push_str(&format!(
            "; {} of it in the wait before message {} (waited {}, typically {})",
            micros(s.taken),
            s.number,
            micros(s.wait),
            micros(typical_wait)
        ));
    }
    text
}

/// How the waits of an iteration changed against the median one's: the first byte, the named
/// gaps and the rest, each in microseconds.
struct WaitChange {
    first: i128,
    gaps: Vec<Gap>,
    spread: i128,
}

impl WaitChange {
    fn of(it: &Spent, base: &Spent, typical_wait: u64) -> WaitChange {
        let gaps = named_gaps(it, typical_wait);
        let spread = diff(it.waits_total(), base.waits_total())
            - gaps.iter().map(|g| g.excess).sum::<i128>();
        WaitChange {
            first: diff(it.first_byte, base.first_byte),
            gaps,
            spread,
        }
    }

    fn total(&self) -> i128 {
        self.first + self.spread + self.gaps.iter().map(|g| g.excess).sum::<i128>()
    }

    /// Takes `share` out of the waits: a longer wait out of the named gaps first (the largest
    /// first), then the first byte, then the rest. Returns the largest gap it took a notable part
    /// of the share from (a tenth, and 5 ms): where the server stalled (its message, its wait,
    /// and how much of the share it was).
    fn take(&mut self, share: i128) -> Option<Stall> {
        let mut left = share;
        let mut at_message = None;
        for gap in self.gaps.iter_mut().filter(|_| share > 0) {
            let taken = left.min(gap.excess).max(0);
            let notable = taken * 10 >= share && taken >= 5_000;
            if notable && at_message.is_none() {
                at_message = Some(Stall {
                    number: gap.number,
                    wait: gap.wait,
                    taken: u64::try_from(taken).unwrap_or(0),
                });
            }
            gap.excess -= taken;
            left -= taken;
        }
        for slot in [&mut self.first, &mut self.spread] {
            let taken = if share > 0 {
                left.min(*slot).max(0)
            } else {
                left.max(*slot).min(0)
            };
            *slot -= taken;
            left -= taken;
        }
        self.spread -= left;
        at_message
    }

    /// The first byte, each named gap and the rest as causes.
    fn causes(&self, it: &Spent, base: &Spent, typical_wait: u64, out: &mut Vec<Cause>) {
        out.push(cause(
            CauseKind::FirstByte,
            self.first,
            None,
            format!(
                "first message after {} (the median iteration's after {})",
                micros(it.first_byte),
                micros(base.first_byte)
            ),
        ));
        for gap in &self.gaps {
            out.push(cause(
                CauseKind::StreamGap,
                gap.excess,
                Some(gap.number),
                format!(
                    "waited {} before message {} (typically {})",
                    micros(gap.wait),
                    gap.number,
                    micros(typical_wait)
                ),
            ));
        }
        out.push(cause(
            CauseKind::StreamGap,
            self.spread,
            None,
            format!("the other waits, over {} messages", it.waits.len()),
        ));
    }
}

/// `it`'s parts against `base`'s, as causes of `extra_ms`, largest first; parts that differ by
/// less than 10 µs are left out.
fn causes(it: &Spent, base: &Spent, typical_wait: u64, extra_ms: f64) -> Vec<Cause> {
    let mut out = Vec::new();
    let mut waits = WaitChange::of(it, base, typical_wait);
    // The server's share of the waits' change comes out of them first.
    let changed = waits.total();
    let server = diff(it.server.part, base.server.part);
    let share = if server.signum() == changed.signum() {
        server.abs().min(changed.abs()) * server.signum()
    } else {
        0
    };
    if share != 0 {
        let stall = waits.take(share);
        out.push(cause(
            CauseKind::Server,
            share,
            stall.map(|s| s.number),
            server_detail(it, base, stall, typical_wait),
        ));
    }
    waits.causes(it, base, typical_wait, &mut out);
    let decode = diff(it.decode_cpu, base.decode_cpu);
    out.push(cause(
        CauseKind::Decode,
        decode,
        None,
        format!(
            "{} of decode CPU over {} messages (the median iteration's {} over {})",
            micros(it.decode_cpu),
            it.messages,
            micros(base.decode_cpu),
            base.messages
        ),
    ));
    out.push(cause(
        CauseKind::Descheduled,
        diff(it.descheduled, base.descheduled),
        None,
        format!(
            "the client's thread was off the CPU for {} of its decode and its work between (the median iteration's {})",
            micros(it.descheduled),
            micros(base.descheduled)
        ),
    ));
    out.push(cause(
        CauseKind::Resume,
        diff(it.resume, base.resume),
        None,
        format!(
            "{} in back-offs and first messages after re-sent requests",
            micros(it.resume)
        ),
    ));
    for (i, (kind, steps)) in SETUP.iter().enumerate() {
        out.push(cause(
            *kind,
            diff(it.setup[i], base.setup[i]),
            None,
            format!(
                "{} took {} before the query (the median iteration's {})",
                steps.join(" + "),
                micros(it.setup[i]),
                micros(base.setup[i])
            ),
        ));
    }
    let named_ms: f64 = out.iter().map(|c| c.ms).sum();
    out.push(Cause {
        kind: CauseKind::Other,
        ms: extra_ms - named_ms,
        at_message: None,
        detail: format!(
            "the client's own work between its spans took {} of CPU (the median iteration's {}); the rest is untimed",
            micros(it.between_cpu),
            micros(base.between_cpu)
        ),
    });
    out.retain(|c| c.ms.is_finite() && c.ms.abs() >= 0.01);
    out.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    out
}

/// The positive part of each kind summed over the iterations slower than the median one.
fn run_causes(iterations: &[IterationCauses]) -> RunCauses {
    let slower: Vec<&IterationCauses> = iterations.iter().filter(|i| i.extra_ms > 0.0).collect();
    let mut sums: Vec<(CauseKind, f64, Vec<u32>)> = Vec::new();
    for i in &slower {
        for c in i.causes.iter().filter(|c| c.ms > 0.0) {
            match sums.iter_mut().find(|(k, _, _)| *k == c.kind) {
                Some((_, ms, at)) => {
                    *ms += c.ms;
                    at.extend(c.at_message);
                }
                None => sums.push((c.kind, c.ms, c.at_message.into_iter().collect())),
            }
        }
    }
    let mut causes: Vec<Cause> = sums
        .into_iter()
        .map(|(kind, ms, at)| {
            let common = most_common(&at);
            let where_ = common.map_or(String::new(), |(n, times)| {
                format!(", {times} of them at message {n}")
            });
            Cause {
                kind,
                ms,
                at_message: common.map(|(n, _)| n),
                detail: format!("over {} slower iterations{where_}", slower.len()),
            }
        })
        .collect();
    causes.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    RunCauses { causes }
}

/// The most frequent value of `values` with its count (the smallest of a tie).
fn most_common(values: &[u32]) -> Option<(u32, usize)> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let mut best: Option<(u32, usize)> = None;
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
