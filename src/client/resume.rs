//! How a broken stream is resumed, shared by the timed iteration and the wire floor: the policy
//! (as the official clients resume), which errors are resumable, the back-off between attempts and
//! the error of a wait that ran out.

use std::time::{Duration, Instant};

use tonic::{Code, Status};

use super::timeouts::Timeouts;
use super::timing::IterationError;

/// How an iteration resumes after a broken stream, as the official clients do.
#[derive(Debug, Clone, Copy)]
pub struct ResumePolicy {
    /// Give up after this many resumes.
    pub max_resumes: u32,
    /// Messages without a resume token held back at most; past it the stream cannot be resumed safely.
    pub max_held_messages: usize,
    /// Bytes of such messages held back at most.
    pub max_held_bytes: usize,
    /// Wait before the first retry; doubles on each retry in a row, up to `max_backoff`.
    pub initial_backoff: Duration,
    /// The longest wait between retries.
    pub max_backoff: Duration,
}

impl Default for ResumePolicy {
    fn default() -> Self {
        ResumePolicy {
            max_resumes: 1000,
            max_held_messages: 10,
            max_held_bytes: 128 << 20,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_secs(1),
        }
    }
}

/// The error of a wait that ran out at `due`: the iteration's `deadline`, or the first response's.
pub fn late_error(due: Instant, deadline: Instant, timeouts: &Timeouts) -> IterationError {
    if due >= deadline {
        IterationError::Deadline {
            after: timeouts.iteration,
        }
    } else {
        IterationError::NoFirstResponse {
            after: timeouts.first_response,
        }
    }
}

/// `status`, the break after `resumes` resumes, back when `policy` lets it be resumed; else the
/// error that ends the iteration.
pub fn may_resume(
    status: Status,
    resumes: u32,
    policy: &ResumePolicy,
) -> Result<Status, IterationError> {
    if !is_resumable(&status) {
        return Err(IterationError::Status(status));
    }
    if resumes >= policy.max_resumes {
        return Err(IterationError::CannotResume(format!(
            "gave up after {resumes} resumes: {}",
            status.message()
        )));
    }
    Ok(status)
}

/// Waits `backoff` before the next attempt (an error if that would pass `deadline`), then doubles
/// it, up to the policy's maximum.
pub async fn back_off(
    backoff: &mut Duration,
    deadline: Instant,
    policy: &ResumePolicy,
    timeouts: &Timeouts,
) -> Result<(), IterationError> {
    if Instant::now() + *backoff >= deadline {
        return Err(late_error(deadline, deadline, timeouts));
    }
    tokio::time::sleep(*backoff).await;
    *backoff = (*backoff * 2).min(policy.max_backoff);
    Ok(())
}

/// Whether a stream error is one the official clients resume from.
pub fn is_resumable(status: &Status) -> bool {
    match status.code() {
        Code::Unavailable => true,
        Code::Internal => {
            let m = status.message();
            m.contains("RST_STREAM")
                || m.contains("Received unexpected EOS on DATA frame from server")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resumable_errors_are_the_ones_official_clients_resume() {
        assert!(is_resumable(&Status::unavailable("x")));
        assert!(is_resumable(&Status::internal(
            "stream terminated by RST_STREAM with error code: 2"
        )));
        assert!(is_resumable(&Status::internal(
            "Received unexpected EOS on DATA frame from server"
        )));
        assert!(!is_resumable(&Status::internal("boom")));
        assert!(!is_resumable(&Status::invalid_argument("bad SQL")));
    }
}
