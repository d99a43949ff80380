//! What every room of the engine uses alike: a duration in milliseconds as records keep it, the
//! time now as reports write it, and how long a run's end waits for a session's deletion.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::wire::Timestamp;

/// How long the end of a run waits for the server to delete its session. The wait happens on the
/// engine's own thread, never the caller's.
pub const SESSION_DELETE_WAIT: Duration = Duration::from_secs(2);

/// `now` in RFC 3339 UTC.
pub(super) fn now_rfc3339() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp::new(d.as_secs() as i64, d.subsec_nanos())
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// `d` in milliseconds, as records keep durations.
pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
