//! Running a profile: warm-up plus N timed iterations of one or more query variants against a
//! target, on the engine's own tokio runtime in a named thread. The variants' iterations are
//! interleaved by default ([`schedule`]), so the machine's drift falls on all of them alike. The
//! caller never blocks: it reads plain [`EngineEvent`]s from a channel (a notify callback tells it
//! when one is waiting) and can cancel at any moment. Talking to the instance is the client layer's
//! job ([`Session`](crate::client::Session)); the engine keeps the run loop, the events and
//! cancellation. This file is the face: the rooms are the spec ([`spec`]), the events
//! ([`events`]), the handle ([`handle`]), the run loop ([`run`]), one iteration
//! ([`iteration`]) and the reports put together from the events ([`reports`]).

pub mod cold;
pub mod details;
mod events;
mod handle;
mod iteration;
pub mod load;
mod reports;
mod run;
pub mod schedule;
mod spec;
pub mod subject;
pub mod sweep;
pub mod target;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::client::ClientError;
pub use crate::client::{
    DatabasePath, HeaderOptions, Param, ParamError, Partitioned, Priority, QueryMode,
    RequestOptions, SessionKind, Staleness, Timeouts,
};
use crate::wire::Timestamp;
pub use details::{IterationDetails, PREVIEW_ROWS};
pub use events::{EngineError, EngineEvent, Notifier};
pub use handle::Engine;
pub use iteration::fill;
pub use reports::{ReportCollector, collect_reports};
pub use run::{Recording, RecordingError, record};
pub use schedule::{Order, Step, schedule};
pub use spec::{MAX_VARIANTS, ProfileSpec, SpecError, Variant, host_name};
pub use subject::{DEFAULT_COMMAND_LIMIT, DEFAULT_SUBJECT_SQL, SubjectSpec};
pub use sweep::{SweepError, SweepSpec, parse_sweep};
pub use target::{Connected, StartLocalError, Target, connect};

/// How long the end of a run waits for the server to delete its session. The wait happens on the
/// engine's own thread, never the caller's.
pub const SESSION_DELETE_WAIT: Duration = Duration::from_secs(2);

/// The engine's runtime: two workers, named.
fn runtime(name: &str) -> Result<tokio::runtime::Runtime, ClientError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(|e| ClientError::Runtime(Arc::new(e)))
}

/// `now` in RFC 3339 UTC.
fn now_rfc3339() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp::new(d.as_secs() as i64, d.subsec_nanos())
        .map(|t| t.to_string())
        .unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
