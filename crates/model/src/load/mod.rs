//! A load test's plain side: what it runs (an open model's arrival rates or a closed model's
//! concurrencies, a step each), what each step measured (HDR histograms of latency from the
//! intended and from the actual start, late and dropped starts, errors by status, the
//! accounting's parts summed), the knee by a stated rule, and the run's report. No I/O, no
//! clocks: the engine (`engine::load`) feeds it, the command line and the exports read it.

pub mod draw;
pub mod histogram;
pub mod knee;
pub mod merge;
pub mod report;
pub mod scripts;
pub mod server_stats;
pub mod step;

use std::time::Duration;

pub use draw::{Dist, DrawError, Drawer, Drawn, Draws, MixEntry, ParamDraw};
pub use histogram::{HistogramError, Latencies};
pub use knee::{Knee, KneeRule, find_knee, find_knee_on};
pub use merge::{MergeError, merge};
pub use report::{LoadReport, RunFacts};
pub use scripts::{MAX_MIX_SCRIPTS, ScriptShare, ScriptTally};
pub use server_stats::{ServedStats, ServerStats, StatsRead};
pub use step::{Ended, ProcessStep, StepCpu, StepResult, StepTally};

/// The highest arrival rate a step may ask for, per second; a higher one is capped with a notice
/// (one generator thread cannot start requests faster than a few tens of microseconds apart).
pub const MAX_RATE: f64 = 20_000.0;
/// The lowest arrival rate: one request every 1,000 s.
pub const MIN_RATE: f64 = 0.001;
/// The most requests a closed-model step keeps in flight.
pub const MAX_CONCURRENCY: u32 = 10_000;
/// The most requests in flight an open model may allow.
pub const MAX_IN_FLIGHT: u32 = 100_000;
/// The longest step.
pub const MAX_STEP: Duration = Duration::from_secs(24 * 3600);
/// The most steps in one run.
pub const MAX_STEPS: usize = 1_000;
/// A start this much after its intended time is late.
pub const LATE_AFTER: Duration = Duration::from_millis(2);

/// A step's level: an open model's rate or a closed model's concurrency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepLevel {
    /// Requests a second.
    Rate(f64),
    /// Requests in flight.
    Concurrency(u32),
}

impl StepLevel {
    /// `200 req/s` or `concurrency 4`.
    pub fn describe(&self) -> String {
        match *self {
            StepLevel::Rate(r) => format!("{} req/s", crate::text::trimmed(r, 3)),
            StepLevel::Concurrency(c) => format!("concurrency {c}"),
        }
    }

    /// The level as a number (the knee's value in JSON).
    pub fn value(&self) -> f64 {
        match *self {
            StepLevel::Rate(r) => r,
            StepLevel::Concurrency(c) => f64::from(c),
        }
    }
}

/// How requests arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    /// At a fixed rate, whatever the answers do (wrk2, k6's arrival-rate executors).
    Open,
    /// A fixed number of clients, each starting its next request when its last one ended.
    Closed,
}

/// A load test's steps and how they run.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSteps {
    /// Open or closed.
    pub model: Model,
    /// Each step's level: a rate per second (open) or a concurrency (closed).
    pub levels: Vec<StepLevel>,
    /// How long each step generates requests.
    pub step_duration: Duration,
    /// Requests in flight at most (open model); a start past it waits (and is late).
    pub max_in_flight: u32,
    /// How long a step's requests still in flight may take to end once it stops generating;
    /// those left are counted unfinished and abandoned.
    pub drain: Duration,
}

/// Steps that cannot run as given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StepsError {
    /// A rate that is not a positive number.
    #[error("`{0}` is not a rate: a positive number of requests a second, e.g. 50 or 50/s")]
    BadRate(String),
    /// A concurrency that is not a positive whole number within bounds.
    #[error("`{0}` is not a concurrency: a whole number from 1 to {MAX_CONCURRENCY}")]
    BadConcurrency(String),
    /// No step at all.
    #[error("no step: give at least one rate or concurrency")]
    NoSteps,
    /// Too many steps.
    #[error("{0} steps: a run has at most {MAX_STEPS}")]
    TooManySteps(usize),
    /// A step duration of zero or past the bound.
    #[error("a step lasts more than zero and at most 24 h, not {0:?}")]
    BadStepDuration(Duration),
    /// A max-in-flight of zero or past the bound.
    #[error("--max-in-flight takes 1 to {MAX_IN_FLIGHT}, not {0}")]
    BadMaxInFlight(u64),
    /// A ramp that is not `FROM..TO` or `FROM..TO:STEP` with FROM at most TO and STEP positive.
    #[error(
        "`{0}` is not a ramp: FROM..TO (in steps of FROM) or FROM..TO:STEP, FROM at most TO, \
         e.g. 50..400:50"
    )]
    BadRamp(String),
}

/// The words of a list of levels with each ramp (`50..400:50`, `1..8`) written out as its
/// levels (`50, 100, ..., 400`); other words as they are. A ramp steps by STEP, or by FROM
/// without one, and ends at TO or the last level below it.
fn expand_ramps(text: &str) -> Result<Vec<String>, StepsError> {
    let mut words = Vec::new();
    for word in text.split(',').map(str::trim) {
        let Some((from, rest)) = word.split_once("..") else {
            words.push(word.to_owned());
            continue;
        };
        let bad = || StepsError::BadRamp(crate::text::excerpt(word, 40));
        let (to, step) = rest.split_once(':').unwrap_or((rest, from));
        let number = |t: &str| -> Result<f64, StepsError> {
            let t = t.trim();
            t.strip_suffix("/s")
                .unwrap_or(t)
                .trim()
                .parse::<f64>()
                .map_err(|_| bad())
        };
        let (from, to, step) = (number(from)?, number(to)?, number(step)?);
        if !(from.is_finite() && to.is_finite() && step.is_finite()) || step <= 0.0 || from > to {
            return Err(bad());
        }
        let count = ((to - from) / step + 1e-9).floor() + 1.0;
        if count + words.len() as f64 > MAX_STEPS as f64 {
            return Err(StepsError::TooManySteps(count as usize + words.len()));
        }
        for i in 0..count as usize {
            // Written as the shortest decimal that reads back: 0.1 steps stay 0.1, 0.2, 0.3.
            let level = ((from + step * i as f64) * 1e9).round() / 1e9;
            words.push(level.to_string());
        }
    }
    Ok(words)
}

/// Parses `--rate 50,100,200` (each may end in `/s`; a ramp `50..400:50` stands for its levels):
/// the rates, and a notice for each one capped at [`MAX_RATE`].
pub fn parse_rates(text: &str) -> Result<(Vec<f64>, Vec<String>), StepsError> {
    let mut rates = Vec::new();
    let mut notices = Vec::new();
    for word in expand_ramps(text)? {
        let word = word.as_str();
        let number = word.strip_suffix("/s").unwrap_or(word).trim();
        let rate: f64 = number
            .parse()
            .map_err(|_| StepsError::BadRate(crate::text::excerpt(word, 40)))?;
        if !rate.is_finite() || rate < MIN_RATE {
            return Err(StepsError::BadRate(crate::text::excerpt(word, 40)));
        }
        if rate > MAX_RATE {
            notices.push(format!(
                "a rate of {} a second is more than one generator can start; capped at {MAX_RATE}",
                crate::text::excerpt(number, 40)
            ));
            rates.push(MAX_RATE);
        } else {
            rates.push(rate);
        }
        if rates.len() > MAX_STEPS {
            return Err(StepsError::TooManySteps(text.split(',').count()));
        }
    }
    Ok((rates, notices))
}

/// Parses `--concurrency 1,2,4` (a ramp `1..8` stands for its levels).
pub fn parse_concurrencies(text: &str) -> Result<Vec<u32>, StepsError> {
    let mut levels = Vec::new();
    for word in expand_ramps(text)? {
        let word = word.as_str();
        let bad = || StepsError::BadConcurrency(crate::text::excerpt(word, 40));
        let n: u32 = word.parse().map_err(|_| bad())?;
        if n == 0 || n > MAX_CONCURRENCY {
            return Err(bad());
        }
        levels.push(n);
        if levels.len() > MAX_STEPS {
            return Err(StepsError::TooManySteps(text.split(',').count()));
        }
    }
    Ok(levels)
}

impl LoadSteps {
    /// Checks the bounds a plan keeps.
    pub fn check(&self) -> Result<(), StepsError> {
        if self.levels.is_empty() {
            return Err(StepsError::NoSteps);
        }
        if self.levels.len() > MAX_STEPS {
            return Err(StepsError::TooManySteps(self.levels.len()));
        }
        if self.step_duration.is_zero() || self.step_duration > MAX_STEP {
            return Err(StepsError::BadStepDuration(self.step_duration));
        }
        if self.max_in_flight == 0 || self.max_in_flight > MAX_IN_FLIGHT {
            return Err(StepsError::BadMaxInFlight(u64::from(self.max_in_flight)));
        }
        Ok(())
    }
}

/// The intended starts of an open-model step at `rate` a second over `duration`: at least one.
pub fn intended_starts(rate: f64, duration: Duration) -> u64 {
    // Both are bounded (MAX_RATE, MAX_STEP): at most 1.7e9, well inside u64.
    ((rate * duration.as_secs_f64()).floor() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_read_with_or_without_a_unit_and_absurd_ones_capped_with_a_notice() {
        let (rates, notices) = parse_rates("50, 100/s,0.5").expect("valid");
        assert_eq!(rates, [50.0, 100.0, 0.5]);
        assert!(notices.is_empty());
        let (rates, notices) = parse_rates("10,1e9").expect("capped, not refused");
        assert_eq!(rates, [10.0, MAX_RATE]);
        assert_eq!(notices.len(), 1);
        assert!(notices[0].contains("capped at 20000"), "{}", notices[0]);
        for bad in ["0", "-5", "abc", "", "50,", "inf", "NaN", "1e400"] {
            assert!(
                matches!(parse_rates(bad), Err(StepsError::BadRate(_))),
                "{bad} is refused"
            );
        }
        let many = vec!["1"; MAX_STEPS + 1].join(",");
        assert!(matches!(
            parse_rates(&many),
            Err(StepsError::TooManySteps(_))
        ));
    }

    #[test]
    fn concurrencies_are_whole_numbers_within_bounds() {
        assert_eq!(parse_concurrencies("1,2, 4"), Ok(vec![1, 2, 4]));
        for bad in ["0", "-1", "1.5", "10001", "99999999999999999999"] {
            assert!(parse_concurrencies(bad).is_err(), "{bad} is refused");
        }
    }

    #[test]
    fn ramps_stand_for_their_levels_and_bad_ones_are_refused() {
        assert_eq!(
            parse_rates("50..200:50").map(|(r, _)| r),
            Ok(vec![50.0, 100.0, 150.0, 200.0])
        );
        assert_eq!(
            parse_rates("10, 100..300, 1000/s").map(|(r, _)| r),
            Ok(vec![10.0, 100.0, 200.0, 300.0, 1000.0]),
            "a ramp without a step steps by its start, beside plain rates"
        );
        assert_eq!(
            parse_rates("0.1..0.3:0.1").map(|(r, _)| r),
            Ok(vec![0.1, 0.2, 0.3])
        );
        assert_eq!(
            parse_rates("50..120:50").map(|(r, _)| r),
            Ok(vec![50.0, 100.0])
        );
        assert_eq!(parse_concurrencies("1..4:1"), Ok(vec![1, 2, 3, 4]));
        for bad in [
            "400..50",
            "50..400:0",
            "50..400:-5",
            "a..b",
            "50..",
            "..50",
            "50..inf",
        ] {
            assert!(
                matches!(parse_rates(bad), Err(StepsError::BadRamp(_))),
                "{bad} is refused as a ramp"
            );
        }
        assert!(matches!(
            parse_rates("1..1000000:1"),
            Err(StepsError::TooManySteps(1_000_000))
        ));
        assert!(
            parse_rates("0..100:50").is_err(),
            "a ramp from 0 holds a rate of 0"
        );
    }

    #[test]
    fn a_plan_keeps_its_bounds() {
        let plan = LoadSteps {
            model: Model::Open,
            levels: vec![StepLevel::Rate(50.0)],
            step_duration: Duration::from_secs(5),
            max_in_flight: 10,
            drain: Duration::from_secs(10),
        };
        assert_eq!(plan.check(), Ok(()));
        let long = LoadSteps {
            step_duration: Duration::from_secs(25 * 3600),
            ..plan.clone()
        };
        assert!(matches!(long.check(), Err(StepsError::BadStepDuration(_))));
        let none = LoadSteps {
            levels: vec![],
            ..plan.clone()
        };
        assert_eq!(none.check(), Err(StepsError::NoSteps));
        let zero = LoadSteps {
            max_in_flight: 0,
            ..plan
        };
        assert_eq!(zero.check(), Err(StepsError::BadMaxInFlight(0)));
        assert_eq!(intended_starts(50.0, Duration::from_secs(20)), 1000);
        assert_eq!(intended_starts(0.001, Duration::from_secs(1)), 1);
        assert_eq!(
            intended_starts(MAX_RATE, MAX_STEP),
            1_728_000_000,
            "the largest step's count fits"
        );
    }
}
