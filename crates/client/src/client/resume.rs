//! How a broken stream is resumed, shared by the timed iteration and the wire floor: the policy
//! (as the official clients resume), which errors are resumable, the back-off between attempts and
//! the error of a wait that ran out, and the bound on a resume token.

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
    /// Wait before the first retry; doubles on each retry in a row (an attempt that brought no
    /// message does not start the row again), up to `max_backoff`. Each wait is drawn between
    /// half and all of it (jitter), so that clients broken together do not retry together.
    pub initial_backoff: Duration,
    /// The longest wait between retries.
    pub max_backoff: Duration,
}

/// The longest resume token the client keeps and sends back. Spanner's are tens of bytes; a token
/// past this is refused with [`IterationError::TooLarge`] rather than echoed on the resume.
pub const MAX_RESUME_TOKEN_BYTES: usize = 64 << 10;

/// The error for a resume token of `bytes` bytes, past [`MAX_RESUME_TOKEN_BYTES`], in message
/// `message` (1-based).
pub fn token_too_large(bytes: usize, message: u64) -> IterationError {
    IterationError::TooLarge(format!(
        "message {message} carries a resume token of {bytes} bytes, more than the {} KiB a \
         token may be (Spanner's are tens of bytes); it is not sent back",
        MAX_RESUME_TOKEN_BYTES >> 10
    ))
}

impl ResumePolicy {
    /// No resume at all: a broken stream is the call's end (a statement in a read-write
    /// transaction, which a resend would run again).
    pub fn never() -> Self {
        ResumePolicy {
            max_resumes: 0,
            ..ResumePolicy::default()
        }
    }
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
    if let Some(error) = too_large(&status) {
        return Err(error);
    }
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

/// The error for a message past the client's size limit ([`super::MAX_MESSAGE_BYTES`]), which
/// tonic reports as OUT_OF_RANGE before it reads the message.
fn too_large(status: &Status) -> Option<IterationError> {
    (status.code() == Code::OutOfRange
        && status
            .message()
            .contains("decoded message length too large"))
    .then(|| {
        IterationError::TooLarge(format!(
            "the server sent a message larger than the {} MiB one message may be \
             (production's are far smaller): {}",
            super::MAX_MESSAGE_BYTES >> 20,
            status.message()
        ))
    })
}

/// Waits about `backoff` before the next attempt (an error if that would pass `deadline`), then
/// doubles it, up to the policy's maximum. The wait is drawn between half and all of `backoff`.
pub async fn back_off(
    backoff: &mut Duration,
    deadline: Instant,
    policy: &ResumePolicy,
    timeouts: &Timeouts,
) -> Result<(), IterationError> {
    let wait = jittered(*backoff);
    if Instant::now() + wait >= deadline {
        return Err(late_error(deadline, deadline, timeouts));
    }
    tokio::time::sleep(wait).await;
    *backoff = (*backoff * 2).min(policy.max_backoff);
    Ok(())
}

/// A wait between half of `backoff` and all of it, drawn anew each time.
fn jittered(backoff: Duration) -> Duration {
    use std::hash::BuildHasher as _;
    // Each RandomState is keyed afresh; hashing the time mixes in the moment of the draw.
    let bits = std::hash::RandomState::new().hash_one(Instant::now());
    let fraction = 0.5 + (bits >> 11) as f64 / (1u64 << 53) as f64 / 2.0;
    backoff.mul_f64(fraction)
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

    #[test]
    fn waits_are_drawn_between_half_and_all_of_the_back_off() {
        let backoff = Duration::from_millis(400);
        let waits: Vec<Duration> = (0..200).map(|_| jittered(backoff)).collect();
        assert!(
            waits.iter().all(|w| *w >= backoff / 2 && *w <= backoff),
            "{waits:?}"
        );
        let distinct: std::collections::BTreeSet<Duration> = waits.iter().copied().collect();
        assert!(distinct.len() > 100, "the waits are jittered: {distinct:?}");
    }

    #[test]
    fn a_message_past_the_size_limit_is_refused_as_too_large() {
        let status = Status::out_of_range(
            "Error, decoded message length too large: found 200000000 bytes, the limit is: 1 bytes",
        );
        let error = may_resume(status, 0, &ResumePolicy::default()).expect_err("refused");
        assert!(
            error
                .to_string()
                .contains("larger than the 128 MiB one message may be"),
            "{error}"
        );
    }
}
