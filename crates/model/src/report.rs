//! The record of a profile: what was run, and where the time of each iteration went.
//!
//! Plain data at the boundary between the engine (which fills it in), the statistics and the
//! exporters (which only read it). Times are milliseconds as `f64`; a figure that could not be
//! measured for an iteration is `None`, never a made-up zero.

use serde::{Deserialize, Serialize};

use std::collections::BTreeSet;

use crate::plan::{PlanAggregate, PlanHistory};

pub use crate::text::printable;

mod accounting;
mod conflicts;
mod figures;
mod id;
mod outcome;
mod query_timings;
mod record;
mod timeline;
mod transaction;

pub use crate::kind::{QueryMode, Reader, SessionKind};
pub use crate::part::{ColdStep, Measure, Part, Split};
pub use accounting::{Accounting, Parts};
pub use conflicts::{
    ConflictTally, Conflicts, KeyConflicts, LockWaitSeen, MAX_HOLDERS_SENT, MAX_WAITS_SENT,
    WoundSeen, waits_from_text,
};
pub use outcome::{Code, Failure, Outcome, Status};
pub use query_timings::QueryTimings;
pub use record::{
    Answer, Check, ColdSteps, GoogleFigures, IterationRecord, RequestIds, SubjectTimings,
};

pub use figures::{Figure, figure_summaries};
pub use id::RunId;
pub use timeline::{
    Between, Bucket, Lane, MAX_BUCKETS, Message, RUN_MESSAGE_LIMIT, Resume, SetupStep, Span,
    Timeline,
};
pub use transaction::{
    Action, ActionKind, Attempt, AttemptOutcome, StoredTimings, TransactionRecord,
};

impl IterationRecord {
    /// This iteration's time in `measure`, in milliseconds: its total, or one of its parts (0
    /// when it did not have it), from its [accounting](IterationRecord::accounting).
    pub fn measure_ms(&self, measure: Measure) -> f64 {
        match measure {
            Measure::Total => self.total_ms,
            Measure::Part(part) => self.accounting().parts.ms(part),
        }
    }
}

/// What a run was asked to do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunConfig {
    /// The run's label, shown in every export and copied into each of its iterations.
    pub label: String,
    /// Where the query ran: `local`, `endpoint 127.0.0.1:9010` (the emulator, or any plaintext
    /// endpoint), or `cloud projects/p/instances/i/databases/d`.
    pub target: String,
    /// The database it ran against, by name (`projects/p/instances/i/databases/d`, the local
    /// instance's and the emulator's too), as the run was started: what the history keeps the run
    /// under. Empty in older reports.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub database: String,
    /// The SQL text of the query.
    pub sql: String,
    /// The query parameters as (`name:TYPE`, value) pairs, values as the user wrote them.
    pub params: Vec<(String, String)>,
    /// The query mode requested (written `normal`, `with-stats` or `profile`).
    #[serde(with = "crate::kind::mode_text")]
    pub query_mode: QueryMode,
    /// How many timed iterations were asked for.
    pub iterations: u32,
    /// How many warm-up iterations were asked for before them.
    pub warmup: u32,
    /// What read the answer: one of spanprof's decoders, the wire floor, or another program.
    pub decoder: Reader,
    /// The request options set, as (name, value) in the command line's spelling
    /// (`priority`, `low`); empty for a plain request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<(String, String)>,
    /// When the run is one point of a parameter sweep: the parameter and its value here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepPoint>,
    /// How the profile ordered its variants' iterations (`interleaved`, `blocked`, `shuffled (seed
    /// N)`), when it had several; empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub order: String,
    /// The command whose client was profiled (`spanprof client`), program first; empty for a
    /// query's run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// How the local instance streamed to the client (`shape`, `fail-every`,
    /// `max-message-bytes`...), as (name, value) in the command line's spelling; empty when not
    /// said.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stream: Vec<(String, String)>,
    /// Whether every iteration was a cold start (`--cold`): a new connection, token source and
    /// session before the query.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cold: bool,
    /// The name of the machine the client ran on; empty in older reports.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub client_host: String,
    /// The client's time limits, as (name, value) (`connect`, `5 s`); empty in older reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeouts: Vec<(String, String)>,
    /// The kind of session asked for; `None` in older reports.
    #[serde(
        default,
        with = "crate::kind::session_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub session: Option<SessionKind>,
    /// The kind the server granted when it differs from the one asked for (the emulator grants a
    /// regular session to a multiplexed request); `None` when it granted what was asked.
    #[serde(
        default,
        with = "crate::kind::session_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub session_granted: Option<SessionKind>,
    /// The CPU the window's own threads took while the run was measured, when it ran in the
    /// window (not asked for, but said beside what was: the window and the local instance share
    /// one process and its cores); `None` for the command line's runs and in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_cpu: Option<WindowCpu>,
    /// How a read-write transaction ran (`profile --read-write`): isolation, lock mode, begin,
    /// commit options, tag and retry policy, in words. `None` for a query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_write: Option<String>,
}

/// The CPU the window took while a run was measured: every thread of its process outside the
/// engine and the local instance, from the run's start to its end.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct WindowCpu {
    /// CPU seconds its threads used, user and system.
    pub cpu_s: f64,
    /// The run's wall time over which they were counted, seconds.
    pub wall_s: f64,
}

impl WindowCpu {
    /// How many cores the window kept busy on average (`cpu_s / wall_s`); 0 over no time.
    pub fn cores(&self) -> f64 {
        if self.wall_s > 0.0 && self.cpu_s.is_finite() {
            self.cpu_s / self.wall_s
        } else {
            0.0
        }
    }
}

/// One value of a swept query parameter: a sweep of `@n` over 100, 1000, 10000 makes three runs,
/// each holding its point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The parameter, without `@`.
    pub param: String,
    /// Its Spanner type name.
    pub type_name: String,
    /// Its value in this run, as written.
    pub value: String,
}

impl SweepPoint {
    /// The value as a number, when it is one (the x axis of a sweep's curve).
    pub fn number(&self) -> Option<f64> {
        self.value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
    }
}

/// A whole run: its configuration and every iteration, warm-ups and failures included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// What the run was asked to do.
    pub config: RunConfig,
    /// When the run started, RFC 3339 in UTC.
    pub started_at: String,
    /// Every iteration in the order it ran.
    pub iterations: Vec<IterationRecord>,
    /// The query plans the iterations returned (PROFILE and PLAN modes): each distinct plan and
    /// each iteration's per-operator figures. Empty, and left out of the JSON, for runs without
    /// plans; reports written before plans were kept read back with it empty.
    #[serde(default, skip_serializing_if = "PlanHistory::is_empty")]
    pub plans: PlanHistory,
    /// Why the run stopped before its iterations were done, which it says: its first iteration
    /// failed with an error no retry can fix ([`IterationRecord::failed_for_good`]), or a few
    /// iterations in a row could not get an access token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// What a run's report holds besides its records: the configuration, the start, the plans and
/// why it stopped early. The engine's `Finished` event carries one per variant, its records having
/// crossed one by one before it; [`ReportHead::with_records`] makes the report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportHead {
    /// What the run was asked to do.
    pub config: RunConfig,
    /// When the run started, RFC 3339 in UTC.
    pub started_at: String,
    /// The query plans its iterations returned ([`RunReport::plans`]).
    pub plans: PlanHistory,
    /// Why the run stopped before its iterations were done ([`RunReport::stopped`]).
    pub stopped: Option<String>,
}

impl ReportHead {
    /// A run of `config` started at `started_at`, no plan yet, not stopped.
    pub fn new(config: RunConfig, started_at: String) -> Self {
        ReportHead {
            config,
            started_at,
            plans: PlanHistory::default(),
            stopped: None,
        }
    }

    /// The report: this, and `iterations`, its records in the order they ran.
    pub fn with_records(self, iterations: Vec<IterationRecord>) -> RunReport {
        RunReport {
            config: self.config,
            started_at: self.started_at,
            iterations,
            plans: self.plans,
            stopped: self.stopped,
        }
    }
}

impl RunReport {
    /// The iterations its plan aggregates cover: `selection` when it is not empty, else the
    /// timed iterations (not warm-ups, ended ok); when none of those returned a plan, every
    /// iteration that did (a run of warm-ups only still shows its plan).
    pub fn plan_iterations(&self, selection: &BTreeSet<u32>) -> BTreeSet<u32> {
        if !selection.is_empty() {
            return selection.clone();
        }
        let with_plan: BTreeSet<u32> = self.plans.iterations.iter().map(|i| i.iteration).collect();
        let timed: BTreeSet<u32> = self
            .timed()
            .map(|r| r.iteration)
            .filter(|i| with_plan.contains(i))
            .collect();
        if timed.is_empty() { with_plan } else { timed }
    }

    /// The aggregates of its plans over [`RunReport::plan_iterations`], most iterations first.
    pub fn plan_aggregates(&self, selection: &BTreeSet<u32>) -> Vec<PlanAggregate> {
        self.plans.aggregate(&self.plan_iterations(selection))
    }

    /// The iterations the statistics are computed over: not warm-ups, and ended `Ok`.
    pub fn timed(&self) -> impl Iterator<Item = &IterationRecord> {
        self.iterations.iter().filter(|record| record.is_timed())
    }

    /// The times of `measure` over the timed iterations, in run order.
    pub fn samples(&self, measure: Measure) -> Vec<f64> {
        self.timed()
            .map(|record| record.measure_ms(measure))
            .collect()
    }
}

// For tests here and in the floors above (their dev-dependency turns on `test-support`).
#[cfg(any(test, feature = "test-support"))]
impl RunReport {
    /// A run labelled `label` whose iterations all ended ok, timed, with these totals (tests).
    pub fn with_totals(label: &str, totals: &[f64]) -> RunReport {
        RunReport {
            config: RunConfig {
                label: label.into(),
                target: "local".into(),
                sql: "SELECT 1".into(),
                params: vec![],
                query_mode: QueryMode::Normal,
                iterations: totals.len() as u32,
                warmup: 0,
                decoder: Reader::Fast,
                ..Default::default()
            },
            started_at: "2026-01-02T03:04:05Z".into(),
            iterations: (0u32..)
                .zip(totals)
                .map(|(i, &total_ms)| IterationRecord {
                    total_ms,
                    ..IterationRecord::new(label, i, false, "2026-01-02T03:04:05Z")
                })
                .collect(),
            plans: PlanHistory::default(),
            stopped: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(iteration: u32, warmup: bool, status: Status, total_ms: f64) -> IterationRecord {
        IterationRecord {
            total_ms,
            outcome: match status {
                Status::Ok => Outcome::Ok,
                Status::Error => Outcome::failed("failed", None),
                Status::Cancelled => Outcome::cancelled(),
            },
            ..IterationRecord::new("r", iteration, warmup, "2026-01-02T03:04:05Z")
        }
    }

    fn report(iterations: Vec<IterationRecord>) -> RunReport {
        RunReport {
            config: RunConfig {
                label: "r".into(),
                target: "local".into(),
                sql: "SELECT 1".into(),
                params: vec![],
                query_mode: QueryMode::Normal,
                iterations: 3,
                warmup: 1,
                decoder: Reader::Named("spanprof".into()),
                ..Default::default()
            },
            started_at: "2026-01-02T03:04:05Z".into(),
            iterations,
            plans: PlanHistory::default(),
            stopped: None,
        }
    }

    #[test]
    fn control_characters_print_as_escapes() {
        assert_eq!(printable("narrow"), "narrow");
        assert_eq!(printable("a\u{1b}[31mred\u{7}"), "a\\u{1b}[31mred\\u{7}");
        assert_eq!(printable("two\nlines"), "two\\u{a}lines");
        assert_eq!(printable("東京 ok"), "東京 ok");
    }

    #[test]
    fn timed_leaves_out_warmups_and_failures() {
        let report = report(vec![
            record(1, true, Status::Ok, 50.0),
            record(2, false, Status::Ok, 10.0),
            record(3, false, Status::Error, 1.0),
            record(4, false, Status::Cancelled, 2.0),
            record(5, false, Status::Ok, 20.0),
        ]);
        let timed: Vec<u32> = report.timed().map(|r| r.iteration).collect();
        assert_eq!(timed, vec![2, 5]);
        assert_eq!(report.samples(Measure::Total), vec![10.0, 20.0]);
    }

    #[test]
    fn samples_of_a_part_count_it_as_zero_where_an_iteration_did_not_have_it() {
        let mut first = record(1, false, Status::Ok, 10.0);
        first.query.stream_wait_ms = Some(6.0);
        first.query.server_elapsed_ms = Some(4.0);
        let second = record(2, false, Status::Ok, 12.0);
        let report = report(vec![first, second]);
        assert_eq!(report.samples(Measure::Part(Part::Server)), vec![4.0, 0.0]);
        assert_eq!(
            report.samples(Measure::Part(Part::Untimed)),
            vec![4.0, 12.0]
        );
    }

    #[test]
    fn the_window_cpu_round_trips_and_is_absent_from_other_reports() -> Result<(), serde_json::Error>
    {
        let mut config = report(vec![]).config;
        let plain = serde_json::to_string(&config)?;
        assert!(!plain.contains("window_cpu"), "{plain}");
        // A report written before the field (this one) reads back without it.
        assert_eq!(serde_json::from_str::<RunConfig>(&plain)?.window_cpu, None);
        config.window_cpu = Some(WindowCpu {
            cpu_s: 0.25,
            wall_s: 0.5,
        });
        let json = serde_json::to_string(&config)?;
        assert!(
            json.contains(r#""window_cpu":{"cpu_s":0.25,"wall_s":0.5}"#),
            "{json}"
        );
        let back = serde_json::from_str::<RunConfig>(&json)?;
        assert_eq!(back, config);
        assert_eq!(back.window_cpu.map(|w| w.cores()), Some(0.5));
        assert_eq!(WindowCpu::default().cores(), 0.0);
        Ok(())
    }
}
