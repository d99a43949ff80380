//! What a run is asked to do, of every kind: a [`Job`]. Each kind is a room with its own loop (a
//! profile's in `run.rs`, a subject's in `subject.rs`, a load run's in `load/`, a recording's in
//! `recording.rs`), reached by its arm here; the handle (`handle.rs`) starts any of them the one
//! way. A new kind of run is a new room and an arm in [`Job::shape`] and [`Job::run`].

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::events::{Cancel, EngineError, EngineEvent, LoadEvent, RunEvent, Sink};
use super::load::{self, InFlightCount, LoadSpec};
use super::spec::ProfileSpec;
use super::subject::{self, SubjectSpec};
use super::target::Target;
use super::{recording, run};

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
    /// A load test on the target ([`LoadEvent`]s).
    Load(Target, LoadSpec),
    /// The spec's first variant run once, its stream recorded (one [`RunEvent::Recorded`]).
    Record(Target, ProfileSpec),
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
        }
    }
}
