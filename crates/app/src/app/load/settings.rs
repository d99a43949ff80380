//! What the Load tab persists ([`LoadSettings`]: the model and its levels, the step's length, the
//! open model's bound on requests in flight, the built-in instance's queue, the parameters each
//! request draws and their seed, and whether a read-write run reads the target's own statistics),
//! and the plan and the draws the engine runs made from them, or what is wrong with them in words.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::Param;
use crate::engine::load::{LoadDraws, LoadParams};
use crate::load::draw::DEFAULT_SEED;
use crate::load::{Draws, LoadSteps, MAX_STEP, Model, StepLevel, StepsError};
use crate::server::KnobSettings;

/// How long a step's requests still in flight may take to end once it stops generating (the
/// command line's `--drain` default).
pub const DRAIN: Duration = Duration::from_secs(30);

/// How requests arrive, as the Load tab offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LoadModel {
    /// A steady arrival rate per step, whatever the answers do.
    #[default]
    Open,
    /// A fixed number of clients per step, each starting its next request when its last ended.
    Closed,
}

impl LoadModel {
    /// The engine's model.
    pub fn model(self) -> Model {
        match self {
            LoadModel::Open => Model::Open,
            LoadModel::Closed => Model::Closed,
        }
    }
}

/// The built-in instance as a known queue (the command line's `--query-threads`, `--service-ms`,
/// `--freeze-every-ms`, `--freeze-ms`): all off by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct QueueSettings {
    /// Query threads a query waits for, first come first served (0: no queue).
    pub query_threads: u64,
    /// How long a query thread holds each query, in milliseconds.
    pub service_ms: u64,
    /// Every this many milliseconds all answers pause for `freeze_ms` (0: never).
    pub freeze_every_ms: u64,
    /// How long each pause lasts, in milliseconds.
    pub freeze_ms: u64,
}

impl QueueSettings {
    /// Whether any of the queue's knobs is on.
    pub fn is_set(&self) -> bool {
        self.query_threads > 0 || self.service_ms > 0 || self.freeze_ms > 0
    }

    /// `knobs` with this queue.
    pub fn apply(&self, knobs: KnobSettings) -> KnobSettings {
        KnobSettings {
            query_threads: self.query_threads,
            service_ms: self.service_ms,
            freeze_every_ms: self.freeze_every_ms,
            freeze_ms: self.freeze_ms,
            ..knobs
        }
    }
}

/// Everything the Load tab persists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadSettings {
    /// Open or closed.
    pub model: LoadModel,
    /// The open model's rates, a step each: `50,100,200` (each may end in `/s`).
    pub rates: String,
    /// The closed model's concurrencies, a step each: `1,2,4,8`.
    pub concurrencies: String,
    /// How long each step generates requests, in seconds.
    pub step_seconds: f64,
    /// The open model's bound on requests in flight.
    pub max_in_flight: u32,
    /// The built-in instance's queue.
    pub queue: QueueSettings,
    /// Whether the ramp stops at the knee (two steps in a row past the knee's rule).
    pub stop_at_knee: bool,
    /// The parameters each request draws, as `load --param` takes them (`id=zipf:1..100`), one a
    /// line or separated by commas; empty: none.
    pub params: String,
    /// The seed the draws are fixed by.
    pub seed: u64,
    /// The target's own statistics after a read-write run.
    pub target_stats: TargetStatsSettings,
}

/// Whether a read-write run reads the target's own lock and transaction statistics after its last
/// step (`load --server-stats`), and the built-in instance's interval (`--stats-interval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TargetStatsSettings {
    /// Whether to read them (a read-write run only).
    pub read: bool,
    /// The built-in instance's statistics interval, in seconds (production's is a minute).
    pub interval_s: u64,
}

impl TargetStatsSettings {
    /// The longest interval offered: production's minute (a longer one would outlast the wait).
    pub const MAX_INTERVAL_S: u64 = 60;

    /// The built-in instance's interval, within 1 s and [`Self::MAX_INTERVAL_S`].
    pub fn interval(&self) -> Duration {
        Duration::from_secs(self.interval_s.clamp(1, Self::MAX_INTERVAL_S))
    }
}

impl Default for TargetStatsSettings {
    fn default() -> Self {
        TargetStatsSettings {
            read: false,
            interval_s: Self::MAX_INTERVAL_S,
        }
    }
}

/// What the draw settings give a run: the constants typed (`NAME:TYPE=VALUE`) and the draws.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Drawing {
    /// The constants, bound as the query panel's parameters are.
    pub typed: Vec<Param>,
    /// The draws (none when the field is empty).
    pub draws: LoadDraws,
}

impl Default for LoadSettings {
    fn default() -> Self {
        LoadSettings {
            model: LoadModel::Open,
            rates: "50,100,200".to_owned(),
            concurrencies: "1,2,4,8".to_owned(),
            step_seconds: 5.0,
            max_in_flight: 1000,
            queue: QueueSettings::default(),
            stop_at_knee: false,
            params: String::new(),
            seed: DEFAULT_SEED,
            target_stats: TargetStatsSettings::default(),
        }
    }
}

impl LoadSettings {
    /// How long each step of the "find the knee" ramp lasts, in seconds: enough requests at the
    /// lowest rate for a p99 that is not just the slowest one.
    pub const KNEE_STEP_SECONDS: f64 = 3.0;

    /// The "find the knee" ramp: doubling from a rate any target serves unloaded to one past
    /// what the built-in instance serves on a laptop's cores (`local`), or, on a target elsewhere
    /// (the emulator, a shared instance), to a gentler top.
    pub fn knee_ramp(local: bool) -> &'static str {
        if local {
            "50,100,200,400,800,1600,3200,6400"
        } else {
            "10,20,40,80,160,320,640"
        }
    }

    /// The "find the knee" preset: the open model, a doubling ramp, steps of
    /// [`Self::KNEE_STEP_SECONDS`], stopping at the knee. The queue and the cap in flight stay.
    pub fn find_the_knee(&mut self, local: bool) {
        self.model = LoadModel::Open;
        self.rates = Self::knee_ramp(local).to_owned();
        self.step_seconds = Self::KNEE_STEP_SECONDS;
        self.stop_at_knee = true;
    }

    /// What each request draws, or what is wrong with the parameters in words.
    pub fn drawing(&self) -> Result<Drawing, String> {
        let params = LoadParams::parse_list(&self.params).map_err(|e| {
            // The field is `--param`'s text; the window names the field, not the flag.
            let words = e.to_string();
            let words = words.strip_prefix("--param ").unwrap_or(&words).to_owned();
            format!("Draw parameters: {words}")
        })?;
        let draws = (!params.drawn.is_empty()).then(|| Draws {
            seed: self.seed,
            params: params.drawn,
            mix: Vec::new(),
        });
        Ok(Drawing {
            typed: params.typed,
            draws: LoadDraws {
                draws,
                scripts: Vec::new(),
            },
        })
    }

    /// The plan these settings describe, and what was adjusted on the way (a capped rate); or
    /// what is wrong with them, in words.
    pub fn plan(&self) -> Result<(LoadSteps, Vec<String>), String> {
        let mut notices = Vec::new();
        let levels = match self.model {
            LoadModel::Open => {
                if self.rates.trim().is_empty() {
                    return Err(StepsError::NoSteps.to_string());
                }
                let (rates, capped) =
                    crate::load::parse_rates(&self.rates).map_err(|e| e.to_string())?;
                notices.extend(capped);
                rates.into_iter().map(StepLevel::Rate).collect()
            }
            LoadModel::Closed => {
                if self.concurrencies.trim().is_empty() {
                    return Err(StepsError::NoSteps.to_string());
                }
                crate::load::parse_concurrencies(&self.concurrencies)
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .map(StepLevel::Concurrency)
                    .collect()
            }
        };
        let step_duration = Duration::try_from_secs_f64(self.step_seconds)
            .ok()
            .filter(|d| !d.is_zero() && *d <= MAX_STEP)
            .ok_or_else(|| {
                format!(
                    "a step lasts more than zero and at most 24 h, not {} s",
                    self.step_seconds
                )
            })?;
        let plan = LoadSteps {
            model: self.model.model(),
            levels,
            step_duration,
            max_in_flight: self.max_in_flight,
            drain: DRAIN,
        };
        plan.check().map_err(|e| match e {
            StepsError::BadMaxInFlight(n) => format!(
                "max in flight takes 1 to {}, not {n}",
                crate::load::MAX_IN_FLIGHT
            ),
            other => other.to_string(),
        })?;
        Ok((plan, notices))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_become_an_open_plan_and_absurd_ones_are_capped_with_a_notice() {
        let settings = LoadSettings {
            rates: "100, 200/s,1e9".into(),
            step_seconds: 1.5,
            ..LoadSettings::default()
        };
        let (plan, notices) = settings.plan().expect("a plan");
        assert_eq!(plan.model, Model::Open);
        assert_eq!(
            plan.levels,
            [
                StepLevel::Rate(100.0),
                StepLevel::Rate(200.0),
                StepLevel::Rate(crate::load::MAX_RATE)
            ]
        );
        assert_eq!(plan.step_duration, Duration::from_millis(1500));
        assert_eq!(plan.drain, DRAIN);
        assert_eq!(notices.len(), 1, "{notices:?}");
    }

    #[test]
    fn the_knee_preset_is_an_open_doubling_ramp_that_stops_at_the_knee() {
        let mut settings = LoadSettings {
            model: LoadModel::Closed,
            ..LoadSettings::default()
        };
        settings.find_the_knee(true);
        assert!(settings.stop_at_knee);
        let (plan, notices) = settings.plan().expect("a plan");
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(plan.model, Model::Open);
        let rates: Vec<f64> = plan.levels.iter().map(StepLevel::value).collect();
        assert_eq!(rates.len(), 8);
        assert!(rates.windows(2).all(|w| w[1] == 2.0 * w[0]), "{rates:?}");
        settings.find_the_knee(false);
        assert!(settings.rates.ends_with(",640"), "{}", settings.rates);
    }

    #[test]
    fn concurrencies_become_a_closed_plan() {
        let settings = LoadSettings {
            model: LoadModel::Closed,
            rates: "not read".into(),
            concurrencies: "1,4".into(),
            ..LoadSettings::default()
        };
        let (plan, _) = settings.plan().expect("a plan");
        assert_eq!(plan.model, Model::Closed);
        assert_eq!(
            plan.levels,
            [StepLevel::Concurrency(1), StepLevel::Concurrency(4)]
        );
    }

    #[test]
    fn bad_input_is_said_in_words() {
        let with = |rates: &str| LoadSettings {
            rates: rates.into(),
            ..LoadSettings::default()
        };
        for (rates, said) in [
            ("abc", "`abc` is not a rate"),
            ("0", "`0` is not a rate"),
            ("10,-5", "`-5` is not a rate"),
            ("  ", "no step"),
        ] {
            let error = with(rates).plan().expect_err(rates);
            assert!(error.contains(said), "{rates}: {error}");
        }
        let closed = LoadSettings {
            model: LoadModel::Closed,
            concurrencies: "2,0".into(),
            ..LoadSettings::default()
        };
        let error = closed.plan().expect_err("a zero concurrency");
        assert!(error.contains("`0` is not a concurrency"), "{error}");
        for step_seconds in [0.0, -1.0, f64::NAN, 90_000.0] {
            let error = LoadSettings {
                step_seconds,
                ..LoadSettings::default()
            }
            .plan()
            .expect_err("a bad step");
            assert!(error.contains("a step lasts"), "{step_seconds}: {error}");
        }
        let error = LoadSettings {
            max_in_flight: 0,
            ..LoadSettings::default()
        }
        .plan()
        .expect_err("no room in flight");
        assert!(error.starts_with("max in flight takes 1 to"), "{error}");
    }

    #[test]
    fn draws_are_read_with_their_seed_and_a_bad_one_is_said_naming_the_field() {
        let settings = LoadSettings {
            params: "id=zipf:1..100\nn:INT64=3".into(),
            seed: 7,
            ..LoadSettings::default()
        };
        let drawing = settings.drawing().expect("valid");
        let draws = drawing.draws.draws.expect("draws");
        assert_eq!((draws.seed, draws.params.len()), (7, 1));
        assert_eq!(drawing.typed.len(), 1);
        assert_eq!(
            LoadSettings::default().drawing().expect("none"),
            Drawing::default()
        );
        let error = LoadSettings {
            params: "id=zipf:100..1".into(),
            ..LoadSettings::default()
        }
        .drawing()
        .expect_err("reversed");
        assert!(
            error.starts_with("Draw parameters: id: the range 100..1 ends below its start"),
            "{error}"
        );
    }

    #[test]
    fn the_queue_reaches_the_knobs_and_leaves_the_others_alone() {
        let queue = QueueSettings {
            query_threads: 2,
            service_ms: 10,
            freeze_every_ms: 1000,
            freeze_ms: 100,
        };
        assert!(queue.is_set());
        assert!(!QueueSettings::default().is_set());
        let knobs = KnobSettings {
            message_delay_ms: 7,
            ..KnobSettings::default()
        };
        let applied = queue.apply(knobs);
        assert_eq!(
            (
                applied.query_threads,
                applied.service_ms,
                applied.freeze_every_ms,
                applied.freeze_ms,
                applied.message_delay_ms
            ),
            (2, 10, 1000, 100, 7)
        );
    }
}
