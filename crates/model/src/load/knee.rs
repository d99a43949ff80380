//! The knee of a sweep: the first step that departs from the unloaded behaviour, by a stated
//! rule ([`KneeRule`]), and what its time went to, in words.
//!
//! The rule: a step is the knee when its achieved rate falls more than `shortfall` (10%) short of
//! what was asked (the open model's target; for the closed model, the first step's rate scaled by
//! the concurrency), or when its latency from the intended start leaves the first step's: its p50
//! past `p50_factor` (2) times the first step's, or its p99 past `p99_factor` (4) times the first
//! step's, each by more than `floor_ms` too (5 ms, so that sub-millisecond jitter is no knee; the
//! p50 is there because a busy machine's noise moves a short step's p99 but hardly its median);
//! and every later step departs too (a knee is where the behaviour changes for good: one step
//! disturbed by the machine, its neighbours fine, is no knee).

use super::StepLevel;
use super::step::StepResult;
use crate::part::Part;

/// The rule's thresholds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KneeRule {
    /// How far short of the expected rate the achieved one may fall (0.1: 10%).
    pub shortfall: f64,
    /// How many times the first step's p50 a step's may reach.
    pub p50_factor: f64,
    /// How many times the first step's p99 a step's may reach.
    pub p99_factor: f64,
    /// How far above the first step's p50 or p99 a step's must be, too, in milliseconds.
    pub floor_ms: f64,
}

impl KneeRule {
    /// 10% short, or p50 over 2x or p99 over 4x the first step's (and 5 ms more).
    pub const DEFAULT: KneeRule = KneeRule {
        shortfall: 0.10,
        p50_factor: 2.0,
        p99_factor: 4.0,
        floor_ms: 5.0,
    };

    /// The rule in words, as reports state it.
    pub fn describe(&self) -> String {
        format!(
            "the first step whose achieved rate falls more than {:.0}% short of the rate asked \
             (closed model: the first step's rate times the concurrency over the first's), or whose \
             p50 from the intended start exceeds {}x the first step's or whose p99 exceeds {}x the \
             first step's, by more than {} ms too, every later step departing too",
            self.shortfall * 100.0,
            self.p50_factor,
            self.p99_factor,
            self.floor_ms
        )
    }
}

impl Default for KneeRule {
    fn default() -> Self {
        KneeRule::DEFAULT
    }
}

/// The step the rule found, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Knee {
    /// Its index among the steps.
    pub index: usize,
    /// Its level.
    pub level: StepLevel,
    /// Whether its rate fell short.
    pub short: bool,
    /// Whether its p99 rose past the rule.
    pub tail: bool,
    /// The knee in words, with what its time went to.
    pub words: String,
}

/// The rate a step was expected to reach unloaded.
fn expected_rate(first: &StepResult, step: &StepResult) -> Option<f64> {
    match (step.level(), first.level()) {
        (StepLevel::Rate(r), _) => Some(r),
        (StepLevel::Concurrency(c), StepLevel::Concurrency(c0)) if c0 > 0 => {
            Some(first.achieved_rate * f64::from(c) / f64::from(c0))
        }
        _ => None,
    }
}

/// Whether step `index` departs from the first one's behaviour by `rule`: (short, tail).
fn departs(steps: &[StepResult], index: usize, rule: &KneeRule) -> (bool, bool) {
    let (first, step) = (&steps[0], &steps[index]);
    let short = expected_rate(first, step)
        .filter(|_| index > 0 || matches!(step.level(), StepLevel::Rate(_)))
        .is_some_and(|want| want > 0.0 && step.achieved_rate < want * (1.0 - rule.shortfall));
    let past = |base: Option<f64>, now: Option<f64>, factor: f64| match (base, now) {
        (Some(base), Some(now)) => now > base * factor && now - base > rule.floor_ms,
        _ => false,
    };
    let tail = index > 0
        && (past(first.p50_ms, step.p50_ms, rule.p50_factor)
            || past(first.p99_ms, step.p99_ms, rule.p99_factor));
    (short, tail)
}

/// The first step that departs from the first one's behaviour by `rule` with every later step
/// departing too, if any.
pub fn find_knee(steps: &[StepResult], rule: &KneeRule) -> Option<Knee> {
    knee_of(steps, rule, None)
}

/// [`find_knee`] for a run on `cores` cores: a knee at or past the step where the client's CPU
/// saturates ([`client_saturates`]) is put down to the client's CPU.
pub fn find_knee_on(steps: &[StepResult], rule: &KneeRule, cores: usize) -> Option<Knee> {
    knee_of(steps, rule, Some(cores))
}

fn knee_of(steps: &[StepResult], rule: &KneeRule, cores: Option<usize>) -> Option<Knee> {
    let departed: Vec<(bool, bool)> = (0..steps.len()).map(|i| departs(steps, i, rule)).collect();
    // The start of the run of departing steps that reaches the last one.
    let index = departed
        .iter()
        .rposition(|&(short, tail)| !(short || tail))
        .map_or(0, |calm| calm + 1);
    let (short, tail) = *departed.get(index)?;
    let saturated = cores.and_then(|cores| {
        client_saturates(steps, cores, SATURATED)
            .filter(|&at| at <= index)
            .map(|_| cores)
    });
    let cause = match saturated {
        Some(cores) => saturation_cause(&steps[index], cores),
        None => cause(&steps[index]),
    };
    Some(Knee {
        index,
        level: steps[index].level(),
        short,
        tail,
        words: format!("{}: {cause}", words(steps, index, short, tail, rule)),
    })
}

/// The share of the cores at which a client's CPU counts as saturated.
pub const SATURATED: f64 = 0.8;

/// One of a step's figures (its p50, its p99).
type Figure = fn(&StepResult) -> Option<f64>;

fn words(steps: &[StepResult], index: usize, short: bool, tail: bool, rule: &KneeRule) -> String {
    let step = &steps[index];
    let level = step.level().describe();
    let mut said = Vec::new();
    if tail {
        // The measure that departed by the rule (the p99 when both did), against the first
        // step's, as the rule compares; the step before the knee besides.
        let first = &steps[0];
        let p99_departed = match (first.p99_ms, step.p99_ms) {
            (Some(base), Some(now)) => now > base * rule.p99_factor && now - base > rule.floor_ms,
            _ => false,
        };
        let p99: Figure = |s| s.p99_ms;
        let p50: Figure = |s| s.p50_ms;
        let (name, pick, other, unpick) = if p99_departed {
            ("p99", p99, "p50", p50)
        } else {
            ("p50", p50, "p99", p99)
        };
        let at = |s: &StepResult, f: Figure| {
            format!(
                "{} at {}",
                crate::text::maybe_ms(f(s)),
                s.level().describe()
            )
        };
        let (base, now) = (pick(first).unwrap_or(0.0), pick(step).unwrap_or(0.0));
        let times = if base > 0.0 {
            now / base
        } else {
            f64::INFINITY
        };
        let mut path = vec![at(first, pick)];
        if index > 1 {
            path.push(at(&steps[index - 1], pick));
        }
        path.push(at(step, pick));
        said.push(format!(
            "{name} rises to {times:.1}x the first step's ({}; {other} {} to {})",
            path.join(", "),
            crate::text::maybe_ms(unpick(first)),
            crate::text::maybe_ms(unpick(step)),
        ));
    }
    let achieved = format!("achieved {:.0}/s at {level}", step.achieved_rate);
    if short {
        said.push(format!("{achieved}, short of what was asked"));
    } else {
        said.push(achieved);
    }
    said.join("; ")
}

/// What a step's client asked of the CPU, in cores (by Little's law: the rate times each
/// request's time): how many its decode and own work ran on, how many more it waited for while
/// ready to run (the `descheduled` part), and how many the whole process used.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CoresUsed {
    ran: f64,
    waited: f64,
    process: f64,
}

fn cores_used(step: &StepResult) -> CoresUsed {
    let per_s = |ms: f64| ms / 1e3 * step.achieved_rate;
    CoresUsed {
        ran: step.client_cpu_ms_per_query.map_or(0.0, per_s),
        waited: per_s(step.part_ms(Part::Descheduled)),
        process: if step.duration_s > 0.0 {
            step.process_cpu_ms / 1e3 / step.duration_s
        } else {
            0.0
        },
    }
}

/// A knee at a step where the client's CPU is saturated, in words.
fn saturation_cause(step: &StepResult, cores: usize) -> String {
    let used = cores_used(step);
    let mut words = format!(
        "the client's CPU saturates: its decode and own work ran on {:.1} of the {cores} cores",
        used.ran
    );
    if used.waited >= 0.05 {
        words.push_str(&format!(
            " and waited, ready to run, for {:.1} more",
            used.waited
        ));
    }
    if used.process > used.ran {
        words.push_str(&format!(" (this process used {:.1})", used.process));
    }
    if let Some(lag) = step.generator_lag_p99_ms.filter(|&lag| lag > 10.0) {
        words.push_str(&format!(
            "; the generator lagged too (p99 {})",
            crate::text::ms(lag)
        ));
    }
    words
}

/// What a step's time went to, in words: requests that never ended, when they were as many as
/// those that did (a server that answers nothing keeps the generator waiting for room in flight,
/// which is no fault of this machine); the generator, when it could not keep its schedule; or the
/// largest of the server's part (its queue included), the transport, the client's decode CPU and
/// its descheduling, and for a read-write run the aborted attempts with their back-off, the wait
/// for locks and the commit.
pub fn cause(step: &StepResult) -> String {
    let ended = step.count.saturating_add(step.errors);
    if step.unfinished > 0 && step.unfinished >= ended {
        return format!(
            "the server did not answer: {} requests were still in flight when the step's drain \
             ran out (abandoned, counted unfinished), {ended} ended",
            step.unfinished
        );
    }
    if let Some(lag) = step.generator_lag_p99_ms.filter(|&lag| lag > 10.0) {
        return format!(
            "the generator itself lagged (p99 {}): this machine may be the limit, not the server",
            crate::text::ms(lag)
        );
    }
    let contention = format!(
        "most of the time went to aborted attempts and the back-off before their retries: the \
         transactions contend ({} aborts per transaction)",
        crate::text::trimmed(step.aborts_per_transaction.unwrap_or(0.0), 3)
    );
    let groups = [
        (
            step.part_ms(Part::Aborted) + step.part_ms(Part::Backoff),
            contention.as_str(),
        ),
        (
            step.part_ms(Part::LockWait),
            "most of the time is the wait for locks other transactions hold",
        ),
        (step.part_ms(Part::Commit), "most of the time is the commit"),
        (
            step.part_ms(Part::Server),
            "most of the time is the server's (its queue included): the server is saturated",
        ),
        (
            step.part_ms(Part::Network),
            "most of the time is the wait for the transport (latency and transfer)",
        ),
        (
            step.part_ms(Part::WireDecode) + step.part_ms(Part::RowDecode),
            "most of the time is the client's decode CPU: the client saturates first",
        ),
        (
            step.part_ms(Part::Descheduled) + step.part_ms(Part::ClientWork),
            "most of the time the client's threads waited for a CPU or did their own work: the \
             client machine is saturated",
        ),
    ];
    groups
        .into_iter()
        .filter(|(ms, _)| *ms > 0.0)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or_else(
            || "no part of the time was measured".to_owned(),
            |(_, words)| words.to_owned(),
        )
}

/// Where the client's CPU saturates: the first step whose client (decode and own work) ran on, or
/// waited ready to run for, `share` (e.g. 0.8) of `cores` or more; or where this process took
/// `share` of the cores and the client's CPU was the most of it (a server in the same process
/// takes the rest). Either way a faster decode is what would lift the rate: the client is the
/// limit. On a machine shared with other programs the waiting is what shows it.
pub fn client_saturates(steps: &[StepResult], cores: usize, share: f64) -> Option<usize> {
    let cores = cores.max(1) as f64;
    steps.iter().position(|s| {
        let used = cores_used(s);
        used.ran + used.waited >= share * cores
            || (used.process >= share * cores && used.ran >= 0.5 * used.process)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::step::StepTally;
    use std::collections::BTreeMap;
    use std::time::Duration;

    fn step(level: StepLevel, achieved: f64, p99: f64) -> StepResult {
        let mut r = StepTally::new(level).finish(
            Duration::ZERO,
            Duration::from_secs(1),
            Default::default(),
        );
        r.achieved_rate = achieved;
        r.p99_ms = Some(p99);
        r.parts = BTreeMap::from([("server".to_owned(), 9.0), ("network".to_owned(), 1.0)]);
        r
    }

    #[test]
    fn a_server_that_answers_nothing_is_blamed_not_the_generator() {
        let mut silent = step(StepLevel::Rate(200.0), 0.0, 0.0);
        silent.p99_ms = None;
        silent.parts.clear();
        silent.unfinished = 96_324;
        silent.generator_lag_p99_ms = Some(250.0);
        let words = cause(&silent);
        assert!(
            words.contains("did not answer") && words.contains("96324 requests"),
            "{words}"
        );
        assert!(!words.contains("this machine"), "{words}");
        // A few abandoned among many answered: the usual causes.
        silent.count = 10_000;
        silent.unfinished = 3;
        assert!(cause(&silent).contains("generator"), "{}", cause(&silent));
    }

    #[test]
    fn the_knee_is_the_first_step_short_of_its_rate_or_with_a_tail() {
        let rate = |r, a, p| step(StepLevel::Rate(r), a, p);
        let steps = [
            rate(50.0, 50.0, 11.0),
            rate(100.0, 99.5, 11.5),
            rate(150.0, 149.0, 12.0),
            rate(200.0, 191.0, 240.0),
            rate(250.0, 192.0, 900.0),
        ];
        let knee = find_knee(&steps, &KneeRule::DEFAULT).expect("a knee");
        assert_eq!(knee.index, 3);
        assert_eq!(knee.level, StepLevel::Rate(200.0));
        assert!(knee.tail && !knee.short, "191 is within 10% of 200");
        assert!(
            knee.words.contains(
                "p99 rises to 21.8x the first step's (11.0 ms at 50 req/s, 12.0 ms at 150 req/s, \
                 240 ms at 200 req/s;"
            ),
            "{}",
            knee.words
        );
        assert!(
            knee.words.contains("the server is saturated"),
            "{}",
            knee.words
        );
        // The p50 departs while the p99 falls (a busy machine's first steps): said as such, not
        // as "p99 rises 0.7x".
        let with_p50 = |r, p50, p99| StepResult {
            p50_ms: Some(p50),
            ..rate(r, r, p99)
        };
        let steps = [
            with_p50(50.0, 8.48, 263.0),
            with_p50(100.0, 7.46, 304.0),
            with_p50(200.0, 17.0, 209.0),
        ];
        let knee = find_knee(&steps, &KneeRule::DEFAULT).expect("a knee at 200");
        assert!(
            knee.words.starts_with(
                "p50 rises to 2.0x the first step's (8.48 ms at 50 req/s, 7.46 ms at 100 req/s, \
                 17.0 ms at 200 req/s; p99 263 ms to 209 ms)"
            ),
            "{}",
            knee.words
        );
        let flat = [rate(50.0, 50.0, 11.0), rate(100.0, 99.0, 12.0)];
        assert_eq!(find_knee(&flat, &KneeRule::DEFAULT), None);
        let short = [rate(50.0, 50.0, 11.0), rate(100.0, 80.0, 12.0)];
        let knee = find_knee(&short, &KneeRule::DEFAULT).expect("20% short");
        assert!(knee.short && !knee.tail);
        let blip = [
            rate(50.0, 50.0, 11.0),
            rate(100.0, 100.0, 600.0),
            rate(150.0, 149.0, 12.0),
            rate(200.0, 150.0, 300.0),
        ];
        let knee = find_knee(&blip, &KneeRule::DEFAULT).expect("a knee at 200");
        assert_eq!(
            knee.index, 3,
            "one disturbed step with calm ones after it is no knee"
        );
        let jitter = [rate(50.0, 50.0, 0.4), rate(100.0, 100.0, 3.0)];
        assert_eq!(
            find_knee(&jitter, &KneeRule::DEFAULT),
            None,
            "under the 5 ms floor"
        );
    }

    #[test]
    fn a_closed_sweep_expects_its_rate_to_grow_with_concurrency() {
        let c = |n, a, p| step(StepLevel::Concurrency(n), a, p);
        let steps = [c(1, 95.0, 11.0), c(2, 190.0, 11.0), c(4, 195.0, 21.0)];
        let knee = find_knee(&steps, &KneeRule::DEFAULT).expect("a knee at 4");
        assert_eq!(knee.index, 2);
        assert!(knee.short);
    }

    #[test]
    fn contending_transactions_are_named_by_their_aborts() {
        let mut s = step(StepLevel::Concurrency(4), 230.0, 80.0);
        s.aborts_per_transaction = Some(0.763);
        s.parts = BTreeMap::from([
            ("aborted".to_owned(), 4.0),
            ("backoff".to_owned(), 7.0),
            ("server".to_owned(), 2.0),
            ("network".to_owned(), 3.0),
            ("commit".to_owned(), 1.5),
        ]);
        let words = cause(&s);
        assert!(
            words.contains("aborted attempts and the back-off")
                && words.contains("(0.763 aborts per transaction)"),
            "{words}"
        );
        s.parts.insert("lock_wait".to_owned(), 20.0);
        assert!(cause(&s).contains("wait for locks"), "{}", cause(&s));
    }

    #[test]
    fn a_saturated_client_and_a_lagging_generator_are_named() {
        let mut s = step(StepLevel::Rate(100.0), 100.0, 20.0);
        s.parts = BTreeMap::from([("wire_decode".to_owned(), 6.0), ("server".to_owned(), 1.0)]);
        assert!(cause(&s).contains("decode CPU"), "{}", cause(&s));
        s.generator_lag_p99_ms = Some(30.0);
        assert!(
            cause(&s).contains("generator itself lagged"),
            "{}",
            cause(&s)
        );
        let mut busy = step(StepLevel::Rate(400.0), 390.0, 20.0);
        busy.client_cpu_ms_per_query = Some(4.5);
        let idle = StepResult {
            client_cpu_ms_per_query: Some(4.5),
            ..step(StepLevel::Rate(100.0), 100.0, 10.0)
        };
        assert_eq!(client_saturates(&[idle.clone(), busy], 2, 0.8), Some(1));

        // The process took 1.8 of 2 cores, 1.2 of them the client's: saturated, the knee says so.
        let mut shared = step(StepLevel::Rate(200.0), 150.0, 400.0);
        shared.client_cpu_ms_per_query = Some(8.0);
        shared.process_cpu_ms = 1800.0;
        shared.generator_lag_p99_ms = Some(30.0);
        let mut calm = step(StepLevel::Rate(50.0), 50.0, 20.0);
        calm.client_cpu_ms_per_query = Some(8.0);
        calm.process_cpu_ms = 500.0;
        let steps = [calm, shared.clone()];
        assert_eq!(client_saturates(&steps, 2, SATURATED), Some(1));
        let knee = find_knee_on(&steps, &KneeRule::DEFAULT, 2).expect("a knee");
        assert!(
            knee.words.contains(
                "the client's CPU saturates: its decode and own work ran on 1.2 of the 2 cores \
                 (this process used 1.8)"
            ) && knee.words.contains("the generator lagged too"),
            "{}",
            knee.words
        );
        let plain = find_knee(&steps, &KneeRule::DEFAULT).expect("a knee");
        assert!(
            plain.words.contains("generator itself lagged"),
            "{}",
            plain.words
        );
        // The process as busy, but mostly the server's: not the client's saturation.
        shared.client_cpu_ms_per_query = Some(4.0);
        assert_eq!(
            client_saturates(&[idle.clone(), shared.clone()], 2, SATURATED),
            None
        );
        // Other programs take the cores: the client ran on 0.6 and waited for 1.2 more.
        shared.process_cpu_ms = 700.0;
        shared.parts.insert("descheduled".into(), 8.0);
        assert_eq!(
            client_saturates(&[idle, shared.clone()], 2, SATURATED),
            Some(1)
        );
        assert!(
            saturation_cause(&shared, 2).contains("waited, ready to run, for 1.2 more"),
            "{}",
            saturation_cause(&shared, 2)
        );
    }
}
