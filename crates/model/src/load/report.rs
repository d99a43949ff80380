//! A load run's report: what ran, each step's figures, the knee by its stated rule, and the
//! client's CPU per request with its decode capacity. Plain data, serialised as the `--json`
//! output and read back by [`LoadReport::from_json`].

use std::time::Duration;

use super::knee::{Knee, KneeRule, SATURATED, client_saturates, find_knee_on};
use super::step::StepResult;
use super::{LoadSteps, MAX_STEP, MAX_STEPS, Model};

/// The version of the JSON a load report is written in.
pub const LOAD_REPORT_VERSION: u32 = 1;
/// The largest figure a load report read back may hold (a rate, a duration in ms or s, a byte
/// rate): far past any real one, small enough that sums of a thousand steps of many merged runs
/// stay finite.
pub const MAX_FIGURE: f64 = 1e15;

/// A finished (or cancelled) load run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LoadReport {
    /// [`LOAD_REPORT_VERSION`].
    pub version: u32,
    /// Its label.
    pub label: String,
    /// The query.
    pub sql: String,
    /// Where it ran.
    pub target: String,
    /// The database's name (without host or port); empty in reports written before it was kept.
    #[serde(default)]
    pub database: String,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// Open or closed.
    pub model: Model,
    /// Seconds each step generated requests.
    pub step_duration_s: f64,
    /// The open model's bound on requests in flight.
    pub max_in_flight: u32,
    /// The decoder.
    pub decoder: String,
    /// Each step run, in order (a cancelled run's last one partial).
    pub steps: Vec<StepResult>,
    /// The knee's level (a rate or a concurrency), or null.
    pub knee: Option<f64>,
    /// The knee in words, or why there is none.
    pub knee_words: String,
    /// The rule the knee was found by.
    pub knee_rule: String,
    /// The client's CPU time per request at the first step (decode and own work), in ms.
    pub client_cpu_ms_per_query: Option<f64>,
    /// Requests one core decodes a second: 1 / the decoders' CPU time per request at the first
    /// step (the least loaded).
    pub decode_capacity_per_core: Option<f64>,
    /// The step where the client's CPU reaches 80% of the cores the run had, if one did.
    pub client_saturated_at: Option<f64>,
    /// Cores the process could use.
    pub cores: usize,
    /// Whether the run was cancelled (Ctrl-C) before its last step ended.
    pub cancelled: bool,
    /// What was adjusted or noticed (a capped rate, a refused knob).
    pub notices: Vec<String>,
    /// What its requests drew (the seed, the parameters, a mix): enough to draw the same again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draws: Option<super::draw::Draws>,
    /// What the target's own lock and transaction statistics said of the run
    /// (`--server-stats`), or why it said nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stats: Option<super::server_stats::ServerStats>,
}

/// What a report says of its run besides the steps.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// Its label.
    pub label: String,
    /// The query.
    pub sql: String,
    /// Where it ran.
    pub target: String,
    /// The database's name.
    pub database: String,
    /// When it started.
    pub started_at: String,
    /// The decoder.
    pub decoder: String,
    /// Notices.
    pub notices: Vec<String>,
    /// Cores the process could use.
    pub cores: usize,
    /// Whether it was cancelled.
    pub cancelled: bool,
}

impl LoadReport {
    /// The report of `steps` run by `plan`, the knee found by the default rule.
    pub fn new(facts: RunFacts, plan: &LoadSteps, steps: Vec<StepResult>) -> LoadReport {
        let rule = KneeRule::DEFAULT;
        let cores = facts.cores.max(1);
        let knee: Option<Knee> = find_knee_on(&steps, &rule, cores);
        let first = steps.first();
        let saturated =
            client_saturates(&steps, cores, SATURATED).map(|i| steps[i].level().value());
        LoadReport {
            version: LOAD_REPORT_VERSION,
            label: facts.label,
            sql: facts.sql,
            target: facts.target,
            database: facts.database,
            started_at: facts.started_at,
            model: plan.model,
            step_duration_s: plan.step_duration.as_secs_f64(),
            max_in_flight: plan.max_in_flight,
            decoder: facts.decoder,
            knee: knee.as_ref().map(|k| k.level.value()),
            knee_words: knee.map_or_else(
                || {
                    if steps.len() < 2 {
                        "no knee: a knee needs two steps or more".to_owned()
                    } else {
                        "no knee: every step kept the first one's behaviour".to_owned()
                    }
                },
                |k| k.words,
            ),
            knee_rule: rule.describe(),
            client_cpu_ms_per_query: first.and_then(|s| s.client_cpu_ms_per_query),
            decode_capacity_per_core: first
                .and_then(|s| s.decode_cpu_ms_per_query)
                .filter(|&ms| ms > 0.0)
                .map(|ms| 1e3 / ms),
            client_saturated_at: saturated,
            cores,
            cancelled: facts.cancelled,
            notices: facts.notices,
            steps,
            draws: None,
            server_stats: None,
        }
    }

    /// Reads a report written by `--json`, refusing what spanprof would not have written (see
    /// [`LoadReport::check`]) as a JSON error that says why.
    pub fn from_json(bytes: &[u8]) -> Result<LoadReport, serde_json::Error> {
        let report: LoadReport = serde_json::from_slice(bytes)?;
        report
            .check()
            .map_err(<serde_json::Error as serde::de::Error>::custom)?;
        Ok(report)
    }

    /// Whether this is a report spanprof could have written: its version, at most
    /// [`MAX_STEPS`] steps, a step duration within [`MAX_STEP`], and every figure a finite
    /// number no larger than [`MAX_FIGURE`] either way (so that sums over steps and over merged
    /// runs stay finite). A merged report passes as a run of one process does.
    pub fn check(&self) -> Result<(), String> {
        if self.version != LOAD_REPORT_VERSION {
            return Err(format!(
                "load report version {} is not supported (this build reads {LOAD_REPORT_VERSION})",
                self.version
            ));
        }
        if self.steps.len() > MAX_STEPS {
            return Err(format!(
                "{} steps: a load run has at most {MAX_STEPS}",
                self.steps.len()
            ));
        }
        if !(0.0..=MAX_STEP.as_secs_f64()).contains(&self.step_duration_s) {
            return Err(format!(
                "a step duration of {} s: a step lasts at most {} s",
                self.step_duration_s,
                MAX_STEP.as_secs()
            ));
        }
        if let Some(stats) = &self.server_stats {
            stats.check()?;
        }
        let run = [
            ("knee", self.knee),
            ("client_cpu_ms_per_query", self.client_cpu_ms_per_query),
            ("decode_capacity_per_core", self.decode_capacity_per_core),
            ("client_saturated_at", self.client_saturated_at),
        ];
        let run = run.into_iter().filter_map(|(k, v)| Some((0, k, v?)));
        let steps = self
            .steps
            .iter()
            .enumerate()
            .flat_map(|(i, step)| step.figures().into_iter().map(move |(k, v)| (i + 1, k, v)));
        for (step, name, value) in run.chain(steps) {
            if value.is_nan() || value.abs() > MAX_FIGURE {
                let at = if step == 0 {
                    String::new()
                } else {
                    format!("step {step}'s ")
                };
                return Err(format!(
                    "{at}{name} is {value}: a figure is a finite number, at most {MAX_FIGURE:e}"
                ));
            }
        }
        Ok(())
    }

    /// The step duration.
    pub fn step_duration(&self) -> Duration {
        Duration::try_from_secs_f64(self.step_duration_s).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::StepLevel;
    use crate::load::step::{StepCpu, StepTally};

    #[test]
    fn a_report_names_its_knee_and_reads_back() {
        let plan = LoadSteps {
            model: Model::Open,
            levels: vec![StepLevel::Rate(50.0), StepLevel::Rate(100.0)],
            step_duration: Duration::from_secs(2),
            max_in_flight: 100,
            drain: Duration::from_secs(5),
        };
        let steps: Vec<StepResult> = [(50.0, 50.0), (100.0, 60.0)]
            .into_iter()
            .map(|(rate, achieved)| {
                let mut s = StepTally::new(StepLevel::Rate(rate)).finish(
                    Duration::ZERO,
                    Duration::from_secs(2),
                    StepCpu::default(),
                );
                s.achieved_rate = achieved;
                s.decode_cpu_ms_per_query = Some(0.25);
                s
            })
            .collect();
        let report = LoadReport::new(RunFacts::default(), &plan, steps);
        assert_eq!(report.knee, Some(100.0));
        assert!(
            report.knee_words.contains("short of what was asked"),
            "{}",
            report.knee_words
        );
        assert_eq!(report.decode_capacity_per_core, Some(4000.0));
        let json = serde_json::to_vec(&report).expect("serialises");
        let text = String::from_utf8_lossy(&json);
        assert!(text.contains("\"target_rate\":50.0"), "{text}");
        assert!(!text.contains("\"concurrency\""), "{text}");
        assert_eq!(LoadReport::from_json(&json).expect("reads back"), report);
        assert_eq!(StepLevel::Rate(50.0).describe(), "50 req/s");
        assert_eq!(StepLevel::Rate(0.5).describe(), "0.5 req/s");
    }
}
