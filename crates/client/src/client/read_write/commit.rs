//! A read-write attempt's commit: the Commit call with the attempt's mutations and highest
//! precommit token, a multiplexed session's retry reply followed by committing again, and a
//! commit whose answer was lost asked for again (the same Commit, the same request number with its
//! attempt counted up) until the server's answer tells whether it committed.

use std::time::Duration;

use tonic::transport::Channel;

use super::options::ReadWriteOptions;
use super::timing::{ActionCall, AttemptEnd};
use super::{Broke, Running};
use crate::client::session::Session;
use crate::client::timing::HeaderLockWait;
use crate::client::timing::IterationError;
use crate::proto::google::spanner::v1 as pb;
use crate::proto::google::spanner::v1::spanner_client::SpannerClient;

impl Session {
    pub(super) async fn commit(
        &self,
        run: &mut Running<'_, '_>,
        options: &ReadWriteOptions,
        mutations: Vec<pb::Mutation>,
    ) -> Result<AttemptEnd, Broke> {
        let Some(id) = run.id.clone() else {
            return Err(Broke::Error(
                ActionCall::Commit,
                IterationError::Unsupported("nothing began a transaction to commit"),
            ));
        };
        let began = run.start(ActionCall::Commit, 0);
        let mut retries = 0u32;
        let mut lock_wait: Option<Duration> = None;
        let mut named = Vec::new();
        let answer = loop {
            let message = pb::CommitRequest {
                session: run.session.to_owned(),
                transaction: Some(pb::commit_request::Transaction::TransactionId(id.clone())),
                mutations: mutations.clone(),
                return_commit_stats: options.commit_stats,
                max_commit_delay: options.max_commit_delay.map(|d| prost_types::Duration {
                    seconds: 0,
                    nanos: d.as_nanos() as i32,
                }),
                request_options: options.request_options(),
                precommit_token: run.token.clone(),
            };
            // A commit sent again after a retry reply is a request of its own.
            let (answer, waited) = self.commit_call(run, message).await?;
            if let Some(waited) = waited {
                lock_wait = Some(lock_wait.unwrap_or_default() + waited.waited);
                named.extend(waited.named);
            }
            match answer.multiplexed_session_retry.clone() {
                // Not committed yet: commit again with the token it gave (a step of this attempt,
                // not an abort), a few times at most.
                Some(pb::commit_response::MultiplexedSessionRetry::PrecommitToken(token))
                    if retries < MAX_COMMIT_RETRIES =>
                {
                    run.keep_token(Some(token));
                    retries += 1;
                }
                Some(_) => {
                    return Err(Broke::Error(
                        ActionCall::Commit,
                        IterationError::Unsupported(
                            "the server asked to commit again more times than the client follows",
                        ),
                    ));
                }
                None => break answer,
            }
        };
        let step = run.push(ActionCall::Commit, 0, began);
        step.commit_retries = retries;
        step.server_lock_wait = lock_wait;
        step.lock_waits = named;
        Ok(AttemptEnd::Committed {
            timestamp: answer.commit_timestamp.as_ref().map(rfc3339),
            mutation_count: answer
                .commit_stats
                .and_then(|s| u64::try_from(s.mutation_count).ok()),
        })
    }

    /// Sends one Commit request. When its answer is lost (none in time, a broken connection,
    /// UNAVAILABLE) it may have committed: the same request goes again under the same request
    /// number, its attempt counted up, as the official clients' transports send Commit again.
    /// A transaction commits once, so the server answers with the commit it made (Spanner and
    /// the emulator both do), with ABORTED when it aborted, or with why it cannot say; each ask
    /// waits a little longer first, and after the last the outcome stays unknown. How it ended
    /// is kept on the attempt, in words.
    async fn commit_call(
        &self,
        run: &mut Running<'_, '_>,
        message: pb::CommitRequest,
    ) -> Result<(pb::CommitResponse, Option<HeaderLockWait>), Broke> {
        let call = run.next_call();
        let commit = |mut c: SpannerClient<Channel>, r| async move {
            let response = c.commit(r).await?;
            let waited = HeaderLockWait::from_headers(response.metadata());
            Ok(tonic::Response::new((response.into_inner(), waited)))
        };
        let channel = run.channel.clone();
        let first = self
            .send(
                channel.clone(),
                call.attempt(1),
                ActionCall::Commit,
                "Commit",
                message.clone(),
                commit,
            )
            .await;
        let lost = match first {
            Ok(answer) => return Ok(answer),
            Err(Broke::NoAnswer(_, error)) => error,
            Err(Broke::Status(_, status)) if commit_outcome_unknown(&status) => {
                IterationError::Status(status)
            }
            Err(other) => return Err(other),
        };
        let mut wait = FIRST_ASK_WAIT;
        for ask in 1..=MAX_ASKS {
            tokio::time::sleep(wait).await;
            wait *= 2;
            run.asked_again += 1;
            let answer = self
                .send(
                    channel.clone(),
                    call.attempt(1 + ask),
                    ActionCall::Commit,
                    "Commit",
                    message.clone(),
                    commit,
                )
                .await;
            let asked = match ask {
                1 => "asked again".to_owned(),
                n => format!("asked again {n} times"),
            };
            match answer {
                Ok(answer) => {
                    run.resolution = Some(format!(
                        "the commit's answer was lost ({lost}); {asked}, the server answered with \
                         the commit it had made: committed once"
                    ));
                    return Ok(answer);
                }
                Err(Broke::Status(at, status)) if status.code() == tonic::Code::Aborted => {
                    run.resolution = Some(format!(
                        "the commit's answer was lost ({lost}); {asked}, the server said it had \
                         aborted: nothing was applied"
                    ));
                    return Err(Broke::Status(at, status));
                }
                Err(Broke::NoAnswer(..)) => {}
                Err(Broke::Status(_, status)) if commit_outcome_unknown(&status) => {}
                Err(Broke::Status(_, status)) => {
                    run.resolution = Some(format!(
                        "{asked}, the server could not say: {}",
                        status.message()
                    ));
                    return Err(Broke::NoAnswer(ActionCall::Commit, lost));
                }
                Err(Broke::Error(..)) => break,
            }
        }
        run.resolution = Some(format!(
            "asked again {} times, no answer came",
            run.asked_again
        ));
        Err(Broke::NoAnswer(ActionCall::Commit, lost))
    }
}

/// Commits sent again after a multiplexed session's retry reply, at most.
const MAX_COMMIT_RETRIES: u32 = 3;

/// Times a commit whose answer was lost is asked again, at most.
const MAX_ASKS: u32 = 3;

/// The wait before the first ask (then doubling: 250 ms, 500 ms, 1 s).
const FIRST_ASK_WAIT: Duration = Duration::from_millis(250);

/// Whether a Commit that failed with `status` may still have committed: the answer was lost (a
/// deadline, a broken connection), not refused.
pub(super) fn commit_outcome_unknown(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::DeadlineExceeded | tonic::Code::Unavailable | tonic::Code::Unknown
    ) || crate::client::broke_in_transport(status)
}

fn rfc3339(t: &prost_types::Timestamp) -> String {
    crate::wire::Timestamp::new(t.seconds, u32::try_from(t.nanos).unwrap_or(0))
        .map(|t| t.to_string())
        .unwrap_or_default()
}
