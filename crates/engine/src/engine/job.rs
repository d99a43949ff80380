//! What a run is asked to do, of every kind: a [`Job`]. Each kind is a room with its own loop (a
//! profile's in `run.rs`, a subject's in `subject.rs`, a load run's in `load/`, a recording's in
//! `recording.rs`), reached by its arm here; the handle (`handle.rs`) starts any of them the one
//! way. A new kind of run is a new room and an arm in [`Job::shape`] and [`Job::run`].

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::events::{Cancel, EngineError, EngineEvent, LoadEvent, RetryLabError, RunEvent, Sink};
use super::load::{self, InFlightCount, LoadSpec};
use super::spec::ProfileSpec;
use super::subject::{self, SubjectSpec};
use super::target::Target;
use super::{recording, retry_lab, run};

/// A run to start, of any kind.
// A job is made once per run and moved once, to its thread: its size costs nothing, and boxing
// the specs would only make every caller spell the box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Job {
    /// A profile: the spec's variants, warm-ups and iterations on the target
    /// ([`EngineEvent`]s).
    Profile(Target, ProfileSpec),
    /// A subject's profile (`spanprof client`): a program run against the local instance
    /// ([`EngineEvent`]s, as a profile's).
    Subject(SubjectSpec),
    /// A load test on the target, and after it the target's own statistics of the run when its
    /// spec asks for them ([`LoadEvent`]s).
    Load(Target, LoadSpec),
    /// The spec's first variant run once, its stream recorded (one [`RunEvent::Recorded`]).
    Record(Target, ProfileSpec),
    /// A program's read-write retries watched by the local instance (`spanprof client
    /// --read-write`; one [`RunEvent::RetryLab`]).
    RetryLab(SubjectSpec),
}

/// How a kind of run is started: its threads' names, its runtime's workers, and what it reports
/// when the runtime cannot be built.
pub(super) struct Shape {
    /// The run's own thread.
    pub(super) thread: &'static str,
    /// The runtime's worker threads.
    pub(super) io: &'static str,
    /// How many workers the runtime has.
    pub(super) workers: usize,
    /// The event that says the run could not start.
    pub(super) failed: fn(EngineError) -> RunEvent,
}

fn profile_failed(error: EngineError) -> RunEvent {
    EngineEvent::Failed(error).into()
}

impl Job {
    /// How the run starts; an error (before any thread starts) when it cannot run as asked.
    pub(super) fn shape(&self) -> std::io::Result<Shape> {
        Ok(match self {
            Job::Profile(..) => Shape {
                thread: "spanprof-engine",
                io: "spanprof-engine-io",
                workers: 2,
                failed: profile_failed,
            },
            Job::Subject(_) => Shape {
                thread: "spanprof-client",
                io: "spanprof-client-io",
                workers: 2,
                failed: profile_failed,
            },
            Job::Load(_, spec) => {
                spec.plan
                    .check()
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
                Shape {
                    thread: "spanprof-load",
                    io: "spanprof-load-io",
                    // The generator's requests need every core the machine has.
                    workers: std::thread::available_parallelism().map_or(2, |n| n.get().max(2)),
                    failed: |e| LoadEvent::Failed(e).into(),
                }
            }
            Job::Record(..) => Shape {
                thread: "spanprof-record",
                io: "spanprof-record-io",
                workers: 2,
                failed: |e| RunEvent::Recorded(Box::new(Err(e.into()))),
            },
            Job::RetryLab(_) => Shape {
                thread: "spanprof-retry-lab",
                io: "spanprof-retry-lab-io",
                workers: 2,
                failed: |e| {
                    let error = RetryLabError::NotStarted(e.to_string());
                    RunEvent::RetryLab(Box::new(Err(error)))
                },
            },
        })
    }

    /// Runs the job's room to its end, every event to `sink`.
    pub(super) async fn run(self, sink: &Sink, cancel: &Cancel, in_flight: InFlightCount) {
        match self {
            Job::Profile(target, spec) => run::run(target, spec, sink, cancel).await,
            Job::Subject(spec) => subject::run(spec, sink, cancel).await,
            Job::Load(target, spec) => {
                let flag: &Arc<AtomicBool> = &cancel.flag;
                load::run(target, spec, sink, flag, in_flight).await
            }
            Job::Record(target, spec) => sink.send(recording::record(target, spec).await),
            Job::RetryLab(spec) => sink.send(retry_lab::run(&spec).await),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::engine::events::RecordingError;
    use crate::engine::handle::{Engine, record};
    use crate::engine::spec::{SpecError, Variant};
    use crate::load::{LoadSteps, Model, StepLevel};
    use crate::subject::command::CommandLine;

    /// Nothing listens on a port below 1024 here; no test below gets as far as connecting.
    fn nowhere() -> Target {
        Target::Endpoint("127.0.0.1:9".into())
    }

    fn load(levels: Vec<StepLevel>) -> LoadSpec {
        LoadSpec {
            database: Default::default(),
            variant: Variant::new("load", "SELECT 1"),
            plan: LoadSteps {
                model: Model::Open,
                levels,
                step_duration: Duration::from_secs(1),
                max_in_flight: 10,
                drain: Duration::from_secs(1),
            },
            decoder: Default::default(),
            timeouts: Default::default(),
            headers: Default::default(),
            notices: Vec::new(),
            stop_at_knee: false,
            draws: Default::default(),
            server_stats: None,
        }
    }

    fn subject_spec() -> SubjectSpec {
        SubjectSpec::new(CommandLine {
            program: "true".into(),
            args: Vec::new(),
        })
    }

    #[test]
    fn every_kind_runs_on_a_thread_of_its_own_name_that_the_window_counts_as_a_run_s() {
        let subject = subject_spec();
        let jobs = [
            (
                Job::Profile(nowhere(), ProfileSpec::default()),
                "spanprof-engine",
            ),
            (Job::Subject(subject), "spanprof-client"),
            (
                Job::Load(nowhere(), load(vec![StepLevel::Rate(5.0)])),
                "spanprof-load",
            ),
            (
                Job::Record(nowhere(), ProfileSpec::default()),
                "spanprof-record",
            ),
            (Job::RetryLab(subject_spec()), "spanprof-retry-lab"),
        ];
        for (job, thread) in jobs {
            let shape = job.shape().expect("runs");
            assert_eq!(shape.thread, thread);
            assert_eq!(shape.io, format!("{thread}-io"));
            assert!(shape.workers >= 2, "{thread}: {}", shape.workers);
        }
    }

    #[test]
    fn a_run_that_cannot_start_says_so_in_its_own_kind_s_event() {
        let error = || EngineError::from(SpecError::NoVariants);
        let profile = Job::Profile(nowhere(), ProfileSpec::default());
        assert!(matches!(
            (profile.shape().expect("runs").failed)(error()),
            RunEvent::Profile(EngineEvent::Failed(_))
        ));
        let loading = Job::Load(nowhere(), load(vec![StepLevel::Rate(5.0)]));
        assert!(matches!(
            (loading.shape().expect("runs").failed)(error()),
            RunEvent::Load(LoadEvent::Failed(_))
        ));
        let recording = Job::Record(nowhere(), ProfileSpec::default());
        match (recording.shape().expect("runs").failed)(error()) {
            RunEvent::Recorded(recorded) => {
                assert!(matches!(*recorded, Err(RecordingError::Start(_))))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_load_plan_without_steps_is_refused_before_any_thread_starts() {
        let refused = Engine::start(Job::Load(nowhere(), load(Vec::new())), Arc::new(|| {}))
            .expect_err("no steps");
        assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
    }

    #[test]
    fn a_profile_and_a_recording_started_the_one_way_report_a_spec_that_cannot_run() {
        let no_variants = || ProfileSpec {
            variants: Vec::new(),
            ..ProfileSpec::default()
        };
        let engine =
            Engine::start(Job::Profile(nowhere(), no_variants()), Arc::new(|| {})).expect("starts");
        let events: Vec<EngineEvent> = engine.profile_events().collect();
        assert!(
            matches!(
                events.as_slice(),
                [EngineEvent::Failed(EngineError::Spec(
                    SpecError::NoVariants
                ))]
            ),
            "{events:?}"
        );
        let recorded = record(nowhere(), &no_variants());
        assert!(
            matches!(
                recorded,
                Err(RecordingError::Start(EngineError::Spec(
                    SpecError::NoVariants
                )))
            ),
            "{recorded:?}"
        );
    }
}
