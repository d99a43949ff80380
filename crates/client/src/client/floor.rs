//! The wire floor: an iteration that only receives the answer's bytes and decodes nothing, what any
//! client pays at least for the same query. A broken stream is resumed from the last resume token
//! (found by peeking at each message's framing), or, in a stream without tokens, asked again from
//! the start, as the official clients do.

use std::time::{Duration, Instant};

use tonic::transport::Channel;

use super::execute_streaming_sql_raw;
use super::headers::CallMetadata;
use super::resume::{
    MAX_RESUME_TOKEN_BYTES, ResumePolicy, back_off, late_error, may_resume, token_too_large,
};
use super::timeouts::Timeouts;
use super::timing::{IterationError, IterationTiming};
use crate::proto::google::spanner::v1 as pb;
use crate::wire::peek_resume_token;

/// Runs `request` once, receiving its messages' bytes only; the timing's rows stay 0 (nothing is
/// decoded), its messages and bytes are counted, and the network is all of its time. Each attempt
/// carries `call`'s headers with its attempt number.
pub async fn read_bytes(
    channel: Channel,
    request: &pb::ExecuteSqlRequest,
    call: CallMetadata,
    policy: ResumePolicy,
    timeouts: Timeouts,
) -> Result<IterationTiming, IterationError> {
    let mut timing = IterationTiming {
        request_id: Some(call.id()),
        ..IterationTiming::default()
    };
    let mut request = request.clone();
    let start = Instant::now();
    let deadline = start + timeouts.iteration;
    let mut backoff = policy.initial_backoff;
    loop {
        let now = Instant::now();
        let first_due = (now + timeouts.first_response).min(deadline);
        let mut attempt = tonic::Request::new(request.clone());
        *attempt.metadata_mut() = call.attempt(timing.resumes + 1);
        attempt.set_timeout(deadline.saturating_duration_since(now));
        let late = |due: Instant| late_error(due, deadline, &timeouts);
        let response = tokio::time::timeout_at(
            first_due.into(),
            execute_streaming_sql_raw(channel.clone(), attempt),
        )
        .await
        .map_err(|_| late(first_due))?;
        let received = timing.counters.messages;
        let broke = match response {
            Ok(response) => {
                let mut stream = response.into_inner();
                let mut due = first_due;
                loop {
                    let next = tokio::time::timeout_at(due.into(), stream.message())
                        .await
                        .map_err(|_| late(due))?;
                    due = deadline;
                    match next {
                        Ok(Some(bytes)) => {
                            // A stream that always has a message ready never lets the timeout
                            // above fire: the deadline is checked between messages too.
                            let arrived = Instant::now();
                            if arrived >= deadline {
                                return Err(late(deadline));
                            }
                            timing.ttfb.get_or_insert_with(|| arrived - start);
                            timing.counters.messages += 1;
                            timing.counters.wire_bytes += bytes.len() as u64;
                            let token = peek_resume_token(&bytes).map_err(|reason| {
                                IterationError::CannotResume(format!(
                                    "message {} is not a PartialResultSet: {reason}",
                                    timing.counters.messages
                                ))
                            })?;
                            if let Some(token) = token {
                                if token.len() > MAX_RESUME_TOKEN_BYTES {
                                    let message = timing.counters.messages;
                                    return Err(token_too_large(token.len(), message));
                                }
                                request.resume_token = token.to_vec();
                            }
                        }
                        Ok(None) => break None,
                        Err(status) => break Some(status),
                    }
                }
            }
            Err(status) => Some(status),
        };
        let ended = Instant::now();
        timing.attempts.push(ended - now);
        timing.operation = Some(ended - start);
        let Some(status) = broke else { break };
        may_resume(status, timing.resumes, &policy)?;
        timing.resumes += 1;
        if timing.counters.messages > received {
            // The attempt made progress: this retry is the first in a row.
            backoff = policy.initial_backoff;
        }
        back_off(&mut backoff, deadline, &policy, &timeouts).await?;
    }
    timing.total = start.elapsed();
    timing.network = timing.total;
    timing.wire_decode = Duration::ZERO;
    Ok(timing)
}
