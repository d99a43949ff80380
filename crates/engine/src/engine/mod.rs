//! Running a profile, a subject, a load test or a recording: each on the engine's own tokio
//! runtime in a named thread, started the one way ([`Engine::start`] with a [`Job`]). A profile's
//! variants' iterations are interleaved by default ([`schedule`]), so the machine's drift falls on
//! all of them alike. The caller never blocks: it reads plain [`RunEvent`]s from a channel (a
//! notify callback tells it when one is waiting) and can cancel at any moment. Talking to the
//! instance is the client layer's job ([`Session`](crate::client::Session)); the engine keeps the
//! run loops, the events and cancellation. This file is the face: the rooms are the job and its
//! start ([`job`], [`handle`]), the events ([`events`]), each kind's loop (a profile's [`run`],
//! [`subject`], [`load`], [`recording`]), one iteration ([`iteration`]), the spec ([`spec`]),
//! what they share ([`common`]) and the reports put together from the events ([`reports`]).

pub mod cold;
mod common;
pub mod details;
mod events;
mod handle;
mod iteration;
mod job;
mod keeper;
pub mod load;
mod record;
mod recording;
mod reports;
pub mod retry_lab;
mod run;
pub mod schedule;
mod spec;
pub mod subject;
pub mod sweep;
pub mod target;
mod transaction;

pub use crate::client::{
    DatabasePath, HeaderOptions, Param, ParamError, Partitioned, Priority, QueryMode,
    RequestOptions, SessionKind, Staleness, Timeouts,
};
pub use common::SESSION_DELETE_WAIT;
pub use details::{IterationDetails, PREVIEW_ROWS};
pub use events::{
    EngineError, EngineEvent, LoadEvent, Notifier, Recording, RecordingError, RetryLabError,
    RetryLabRun, RunEvent,
};
pub use handle::{Canceller, Engine, record, retry_lab_run};
pub use job::Job;
pub use keeper::{Kept, LocalKeeper, StartLocalError};
pub use reports::{ReportCollector, collect_reports};
pub use schedule::{Order, Turn, schedule};
pub use spec::{MAX_VARIANTS, ProfileSpec, ReadWrite, SpecError, Variant, host_name};
pub use subject::{DEFAULT_COMMAND_LIMIT, DEFAULT_SUBJECT_SQL, SubjectSpec};
pub use sweep::{SweepError, SweepSpec, parse_sweep};
pub use target::{Connected, Target, connect};
