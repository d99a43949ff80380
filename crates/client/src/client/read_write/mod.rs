//! A read-write transaction run as one logical transaction: a script's steps in attempts, each
//! attempt timed step by step, retried after an ABORTED as the wire notes' "correct retry" says.
//!
//! - An attempt begins explicitly (BeginTransaction) or inline (its first statement carries
//!   `begin`, and the answer's metadata names the transaction); a script with no statement before
//!   its commit begins explicitly.
//! - Queries and DML stream (ExecuteStreamingSql) and are timed as a query's iteration is; each
//!   carries the transaction, an increasing `seqno`, and the transaction tag. A READ streams as
//!   StreamingRead with its lock hint (`read.rs`). Batches go as ExecuteBatchDml; mutations are
//!   kept for the commit; `SLEEP` holds the transaction open.
//! - Commit carries the mutations, the precommit token with the highest sequence number seen (a
//!   multiplexed session's), commit stats and max commit delay when asked; a multiplexed
//!   session's retry reply (a token, nothing committed) is followed by committing again with it,
//!   counted on the commit step, never as an abort.
//! - ABORTED at any step ends the attempt (nothing to roll back); the transaction runs again on
//!   the same session after the back-off the policy gives (the server's RetryInfo, honoured as
//!   asked, by default), with the aborted attempt's id as the previous transaction id on a
//!   multiplexed session, every call under its first attempt's request number with the attempt
//!   counted up.
//! - Any other failure rolls the transaction back and is not retried; a cancel rolls back too. A
//!   Commit that got no answer (a deadline, a lost connection) may have committed: the same
//!   Commit is sent again, as the official clients' transports do, and the server's answer says
//!   whether it committed (a transaction commits once); after a few asks with no answer it is
//!   reported as unknown. A commit in flight when the run is cancelled is not sent again.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use tonic::transport::Channel;

mod commit;
mod options;
mod read;
mod timing;

pub use options::{
    BeginMode, Isolation, LockMode, MAX_COMMIT_DELAY, ReadWriteOptions, RetryPolicy,
};
pub use timing::{ActionCall, ActionTiming, AttemptEnd, AttemptTiming, TransactionTiming};

use super::headers::{CallMetadata, IterationHeaders};
use super::iteration::{Decoding, run_iteration};
use super::params::{Bound, bind, bound_for};
use super::resume::ResumePolicy;
use super::retry_info::retry_delay;
use super::session::Session;
use super::timing::IterationError;
use crate::proto::google::spanner::v1 as pb;
use crate::proto::google::spanner::v1::spanner_client::SpannerClient;
use crate::report::WoundSeen;
use crate::script::{Script, Statement, Step};
use crate::wire::result_stats::WOUNDED_BY_TRAILER;
use crate::wire::{DecoderKind, RowCount, RowsView};
use commit::commit_outcome_unknown;

/// A cancel the runner watches: resolves once the run is cancelled.
pub type CancelSignal<'a> = Pin<&'a mut (dyn Future<Output = ()> + Send)>;

/// An attempt in progress: its calls' headers (kept so that a retry sends each call again under
/// its request number), its transaction, and the precommit token with the highest sequence
/// number seen.
struct Running<'a, 'h> {
    channel: Channel,
    session: &'a str,
    headers: &'a IterationHeaders<'h>,
    /// The request's drawn parameters, bound on each statement that mentions them.
    bound: &'a [Bound],
    calls: &'a mut Vec<CallMetadata>,
    call: usize,
    attempt: u32,
    id: Option<Vec<u8>>,
    seqno: i64,
    token: Option<pb::MultiplexedSessionPrecommitToken>,
    started: Instant,
    actions: Vec<ActionTiming>,
    /// The call in flight (its kind, place and start), recorded as an action however it ends.
    current: Option<(ActionCall, u32, Instant)>,
    /// Commits sent again because an answer was lost.
    asked_again: u32,
    /// How a commit whose answer was lost was resolved, in words.
    resolution: Option<String>,
}

impl<'a, 'h> Running<'a, 'h> {
    /// Attempt `attempt` of a transaction on `session`, nothing sent yet.
    fn new(
        session: &'a Session,
        headers: &'a IterationHeaders<'h>,
        bound: &'a [Bound],
        calls: &'a mut Vec<CallMetadata>,
        attempt: u32,
    ) -> Self {
        Running {
            channel: session.channel().clone(),
            session: session.name(),
            headers,
            bound,
            calls,
            call: 0,
            attempt,
            id: None,
            seqno: 0,
            token: None,
            started: Instant::now(),
            actions: Vec::new(),
            current: None,
            asked_again: 0,
            resolution: None,
        }
    }
}

impl Running<'_, '_> {
    /// The headers of the attempt's next call: the same request number as in the first attempt,
    /// the attempt counted up.
    fn next_call(&mut self) -> CallMetadata {
        if self.call == self.calls.len() {
            self.calls.push(self.headers.next_call());
        }
        let call = self.calls[self.call].from_attempt(self.attempt);
        self.call += 1;
        call
    }

    fn selector(
        &self,
        options: &ReadWriteOptions,
        previous: Option<&[u8]>,
    ) -> pb::TransactionSelector {
        use pb::transaction_selector::Selector;
        pb::TransactionSelector {
            selector: Some(match &self.id {
                Some(id) => Selector::Id(id.clone()),
                None => Selector::Begin(options.transaction_options(previous)),
            }),
        }
    }

    fn keep_token(&mut self, token: Option<pb::MultiplexedSessionPrecommitToken>) {
        if let Some(token) = token
            && self
                .token
                .as_ref()
                .is_none_or(|t| token.seq_num > t.seq_num)
        {
            self.token = Some(token);
        }
    }

    /// Starts the call `call` (the script's `index`-th step; 0 for begin and commit): if it
    /// fails or aborts, the attempt still records it, to its end.
    fn start(&mut self, call: ActionCall, index: u32) -> Instant {
        let began = Instant::now();
        self.current = Some((call, index, began));
        began
    }

    /// Records the call that was in flight when the attempt ended, if one was.
    fn end_current(&mut self) {
        if let Some((call, index, began)) = self.current.take() {
            self.push(call, index, began);
        }
    }

    fn push(&mut self, call: ActionCall, index: u32, began: Instant) -> &mut ActionTiming {
        self.current = None;
        self.actions.push(ActionTiming {
            call,
            index,
            at: began.duration_since(self.started),
            took: began.elapsed(),
            rows: None,
            statement: None,
            commit_retries: 0,
            asked_again: 0,
            server_lock_wait: None,
            lock_waits: Vec::new(),
        });
        let last = self.actions.len() - 1;
        &mut self.actions[last]
    }
}

/// The end of a step that did not go through.
enum Broke {
    /// The server answered with an error.
    Status(ActionCall, tonic::Status),
    /// No answer came in time: a commit's outcome is then unknown.
    NoAnswer(ActionCall, IterationError),
    /// Anything else.
    Error(ActionCall, IterationError),
}

impl Session {
    /// Runs `script` as one read-write transaction on this session, attempt after attempt as
    /// `options` say, every statement decoded by `decoder` and carrying the parameters of `bound`
    /// it mentions (the same in every attempt); stops (rolling back) when `cancel` resolves.
    pub async fn run_transaction(
        &self,
        script: &Script,
        bound: &[Bound],
        options: &ReadWriteOptions,
        decoder: DecoderKind,
        mut cancel: CancelSignal<'_>,
    ) -> Result<TransactionTiming, IterationError> {
        let headers = self.headers().iteration().await?;
        let started = Instant::now();
        let mut calls = Vec::new();
        let mut attempts: Vec<AttemptTiming> = Vec::new();
        let mut gave_up = None;
        loop {
            let number = u32::try_from(attempts.len() + 1).unwrap_or(u32::MAX);
            // A regular session keeps the transaction's lock priority across its retries; a
            // multiplexed one is told which attempt this one retries.
            let previous = attempts
                .last()
                .filter(|_| self.is_multiplexed())
                .and_then(|a| a.transaction_id.clone());
            let attempt = self
                .attempt(
                    script,
                    bound,
                    options,
                    decoder,
                    &headers,
                    &mut calls,
                    number,
                    previous.as_deref(),
                    cancel.as_mut(),
                )
                .await;
            let asked = match &attempt.end {
                AttemptEnd::Aborted { retry, .. } => Some(retry.map(|(d, _)| d)),
                _ => None,
            };
            attempts.push(attempt);
            let Some(asked) = asked else { break };
            let Some(backoff) = options.retry.backoff(asked, number + 1) else {
                gave_up = Some("the retry policy is none: an abort ends the transaction".into());
                break;
            };
            if number >= options.max_attempts {
                gave_up = Some(format!(
                    "aborted {number} times: --max-attempts {} reached",
                    options.max_attempts
                ));
                break;
            }
            if started.elapsed() + backoff >= options.deadline {
                gave_up = Some(format!(
                    "the transaction's deadline ({} ms) would pass before its next attempt",
                    options.deadline.as_millis()
                ));
                break;
            }
            let slept = Instant::now();
            let cancelled = tokio::select! {
                _ = tokio::time::sleep(backoff) => false,
                _ = cancel.as_mut() => true,
            };
            if let Some(last) = attempts.last_mut() {
                last.backoff = Some(slept.elapsed());
            }
            if cancelled {
                attempts.push(AttemptTiming {
                    end: AttemptEnd::Cancelled,
                    actions: Vec::new(),
                    total: Duration::ZERO,
                    transaction_id: None,
                    request_id: None,
                    backoff: None,
                    commit_resolution: None,
                });
                break;
            }
        }
        Ok(TransactionTiming {
            attempts,
            total: started.elapsed(),
            gave_up,
        })
    }

    /// One attempt of the transaction.
    #[allow(clippy::too_many_arguments)]
    async fn attempt(
        &self,
        script: &Script,
        bound: &[Bound],
        options: &ReadWriteOptions,
        decoder: DecoderKind,
        headers: &IterationHeaders<'_>,
        calls: &mut Vec<CallMetadata>,
        number: u32,
        previous: Option<&[u8]>,
        mut cancel: CancelSignal<'_>,
    ) -> AttemptTiming {
        let mut run = Running::new(self, headers, bound, calls, number);
        let request_id = run.calls.first().map(|c| c.id().with_attempt(number));
        let outcome = tokio::select! {
            o = self.run_script(&mut run, script, options, decoder, previous) => Some(o),
            _ = cancel.as_mut() => None,
        };
        let request_id =
            request_id.or_else(|| run.calls.first().map(|c| c.id().with_attempt(number)));
        // A cancel while the commit was in flight cannot say whether it was applied.
        let cancelled_in_commit =
            outcome.is_none() && matches!(run.current, Some((ActionCall::Commit, _, _)));
        if cancelled_in_commit {
            let asked = match run.asked_again {
                0 => "not asked again".to_owned(),
                1 => "asked again once without an answer, then no more".to_owned(),
                n => format!("asked again {n} times without an answer, then no more"),
            };
            run.resolution = Some(format!(
                "{asked}: the run was cancelled, and a commit sent again could apply what the \
                 cancel stopped; read the data back to know"
            ));
        }
        run.end_current();
        if let Some(commit) = run
            .actions
            .iter_mut()
            .rev()
            .find(|a| a.call == ActionCall::Commit)
        {
            commit.asked_again = run.asked_again;
        }
        let end = match outcome {
            Some(Ok(end)) => end,
            Some(Err(Broke::Status(at, status))) if status.code() == tonic::Code::Aborted => {
                waits_before_failing(&mut run.actions, &status);
                AttemptEnd::Aborted {
                    at,
                    message: status.message().to_owned(),
                    retry: retry_delay(&status),
                    wounded_by: wounded_by(&status),
                }
            }
            Some(Err(Broke::Status(ActionCall::Commit, status)))
                if commit_outcome_unknown(&status) =>
            {
                AttemptEnd::Unknown {
                    error: IterationError::Status(status),
                }
            }
            Some(Err(Broke::NoAnswer(ActionCall::Commit, error))) => AttemptEnd::Unknown { error },
            Some(Err(Broke::NoAnswer(at, error))) => {
                self.roll_back(&mut run).await;
                AttemptEnd::Failed { at, error }
            }
            Some(Err(Broke::Status(at, status))) => {
                self.roll_back(&mut run).await;
                AttemptEnd::Failed {
                    at,
                    error: IterationError::Status(status),
                }
            }
            Some(Err(Broke::Error(at, error))) => {
                let aborted =
                    matches!(&error, IterationError::Status(s) if s.code() == tonic::Code::Aborted);
                if let (true, IterationError::Status(status)) = (aborted, &error) {
                    waits_before_failing(&mut run.actions, status);
                    AttemptEnd::Aborted {
                        at,
                        message: status.message().to_owned(),
                        retry: retry_delay(status),
                        wounded_by: wounded_by(status),
                    }
                } else {
                    self.roll_back(&mut run).await;
                    AttemptEnd::Failed { at, error }
                }
            }
            None if cancelled_in_commit => AttemptEnd::Unknown {
                error: IterationError::Unsupported(
                    "the run was cancelled while the commit was in flight",
                ),
            },
            None => {
                self.roll_back(&mut run).await;
                AttemptEnd::Cancelled
            }
        };
        AttemptTiming {
            end,
            total: run.started.elapsed(),
            actions: run.actions,
            transaction_id: run.id,
            request_id,
            backoff: None,
            commit_resolution: run.resolution,
        }
    }

    /// The attempt's steps, begin to commit.
    async fn run_script(
        &self,
        run: &mut Running<'_, '_>,
        script: &Script,
        options: &ReadWriteOptions,
        decoder: DecoderKind,
        previous: Option<&[u8]>,
    ) -> Result<AttemptEnd, Broke> {
        let first_sql = script.steps.iter().position(Step::sends);
        if options.begin == BeginMode::Explicit || first_sql.is_none() {
            self.begin(run, options, previous, script).await?;
        }
        let mut mutations = Vec::new();
        let last_sql = script.steps.iter().rposition(Step::sends);
        for (i, step) in script.steps.iter().enumerate() {
            let index = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let last = Some(i) == last_sql;
            match step {
                Step::Query(s) => {
                    self.statement(
                        run,
                        ActionCall::Query,
                        index,
                        s,
                        options,
                        decoder,
                        previous,
                        last,
                    )
                    .await?
                }
                Step::Dml(s) => {
                    self.statement(
                        run,
                        ActionCall::Dml,
                        index,
                        s,
                        options,
                        decoder,
                        previous,
                        last,
                    )
                    .await?
                }
                Step::BatchDml(statements) => {
                    self.batch(run, index, statements, options, previous, last)
                        .await?
                }
                Step::Mutate(m) => {
                    let began = Instant::now();
                    mutations.extend(m.iter().cloned());
                    let step = run.push(ActionCall::Mutate, index, began);
                    step.rows = Some(m.len() as u64);
                }
                Step::Sleep(d) => {
                    let began = Instant::now();
                    tokio::time::sleep(*d).await;
                    run.push(ActionCall::Think, index, began);
                }
                Step::Read(r) => {
                    let how = (options, decoder, previous);
                    self.read(run, index, r, how).await?
                }
            }
        }
        self.commit(run, options, mutations).await
    }

    async fn begin(
        &self,
        run: &mut Running<'_, '_>,
        options: &ReadWriteOptions,
        previous: Option<&[u8]>,
        script: &Script,
    ) -> Result<(), Broke> {
        let began = run.start(ActionCall::Begin, 0);
        // On a multiplexed session, a transaction that only writes mutations names one of them.
        let mutation_key = script.steps.iter().find_map(|s| match s {
            Step::Mutate(m) => m.first().cloned(),
            _ => None,
        });
        let message = pb::BeginTransactionRequest {
            session: run.session.to_owned(),
            options: Some(options.transaction_options(previous)),
            request_options: options.request_options(),
            mutation_key: mutation_key.filter(|_| self.is_multiplexed()),
        };
        let answer = self
            .unary(
                run,
                ActionCall::Begin,
                "BeginTransaction",
                message,
                |mut c, r| async move { c.begin_transaction(r).await },
            )
            .await?;
        run.id = Some(answer.id);
        run.keep_token(answer.precommit_token);
        run.push(ActionCall::Begin, 0, began);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    async fn statement(
        &self,
        run: &mut Running<'_, '_>,
        call: ActionCall,
        index: u32,
        statement: &Statement,
        options: &ReadWriteOptions,
        decoder: DecoderKind,
        previous: Option<&[u8]>,
        last: bool,
    ) -> Result<(), Broke> {
        run.seqno += 1;
        let mut request = pb::ExecuteSqlRequest {
            session: run.session.to_owned(),
            transaction: Some(run.selector(options, previous)),
            sql: statement.sql.clone(),
            query_mode: options.mode as i32,
            seqno: run.seqno,
            request_options: options.request_options(),
            last_statement: last && call == ActionCall::Dml,
            ..Default::default()
        };
        bind(run.bound, &mut request);
        let began = run.start(call, index);
        let mut ignore = |_: RowsView<'_>, _: usize| {};
        let metadata = run.next_call();
        let timing = run_iteration(
            run.channel.clone(),
            &request,
            metadata,
            // A statement in a transaction is not resumed: a resent DML runs again.
            ResumePolicy::never(),
            self.timeouts(),
            Decoding::new(decoder, &mut ignore),
        )
        .await
        .map_err(|e| Broke::Error(call, e))?;
        if run.id.is_none() {
            match &timing.transaction_id {
                Some(id) => run.id = Some(id.clone()),
                None => {
                    return Err(Broke::Error(
                        call,
                        IterationError::Unsupported(
                            "the server began no transaction for the first statement (no transaction id in its answer)",
                        ),
                    ));
                }
            }
        }
        let rows = match timing.stats.as_ref().and_then(|s| s.row_count) {
            Some(RowCount::Exact(n)) | Some(RowCount::LowerBound(n)) => u64::try_from(n).ok(),
            None => Some(timing.rows),
        };
        run.keep_token(timing.precommit_token.clone());
        let step = run.push(call, index, began);
        step.rows = rows;
        step.statement = Some(timing);
        Ok(())
    }

    async fn batch(
        &self,
        run: &mut Running<'_, '_>,
        index: u32,
        statements: &[Statement],
        options: &ReadWriteOptions,
        previous: Option<&[u8]>,
        last: bool,
    ) -> Result<(), Broke> {
        run.seqno += 1;
        let message = pb::ExecuteBatchDmlRequest {
            session: run.session.to_owned(),
            transaction: Some(run.selector(options, previous)),
            statements: statements
                .iter()
                .map(|s| {
                    let (params, param_types) = bound_for(run.bound, &s.sql).unzip();
                    pb::execute_batch_dml_request::Statement {
                        sql: s.sql.clone(),
                        params,
                        param_types: param_types.unwrap_or_default(),
                    }
                })
                .collect(),
            seqno: run.seqno,
            request_options: options.request_options(),
            last_statements: last,
        };
        let began = run.start(ActionCall::BatchDml, index);
        let answer = self
            .unary(
                run,
                ActionCall::BatchDml,
                "ExecuteBatchDml",
                message,
                |mut c, r| async move { c.execute_batch_dml(r).await },
            )
            .await?;
        if run.id.is_none() {
            let id = answer
                .result_sets
                .first()
                .and_then(|r| r.metadata.as_ref()?.transaction.as_ref())
                .map(|t| t.id.clone())
                .filter(|id| !id.is_empty());
            run.id = id;
        }
        run.keep_token(answer.precommit_token);
        let rows: i64 = answer
            .result_sets
            .iter()
            .filter_map(|r| match r.stats.as_ref()?.row_count? {
                pb::result_set_stats::RowCount::RowCountExact(n) => Some(n),
                pb::result_set_stats::RowCount::RowCountLowerBound(n) => Some(n),
            })
            .sum();
        let step = run.push(ActionCall::BatchDml, index, began);
        step.rows = u64::try_from(rows).ok();
        if let Some(status) = answer.status.filter(|s| s.code != 0) {
            let ran = answer.result_sets.len();
            let code = tonic::Code::from_i32(status.code);
            let message = format!(
                "statement {} of the batch (line {}): {}",
                ran + 1,
                statements.get(ran).map_or(0, |s| s.line),
                status.message
            );
            return Err(Broke::Status(
                ActionCall::BatchDml,
                tonic::Status::new(code, message),
            ));
        }
        if run.id.is_none() {
            return Err(Broke::Error(
                ActionCall::BatchDml,
                IterationError::Unsupported(
                    "the server began no transaction for the batch (no transaction id in its answer)",
                ),
            ));
        }
        Ok(())
    }

    /// Sends one unary call of the attempt (`name` for an error) under its next request id.
    async fn unary<Req, Resp, Fut>(
        &self,
        run: &mut Running<'_, '_>,
        call: ActionCall,
        name: &'static str,
        message: Req,
        send: impl FnOnce(SpannerClient<Channel>, tonic::Request<Req>) -> Fut,
    ) -> Result<Resp, Broke>
    where
        Fut: Future<Output = Result<tonic::Response<Resp>, tonic::Status>>,
    {
        let headers = run.next_call().attempt(1);
        self.send(run.channel.clone(), headers, call, name, message, send)
            .await
    }

    /// Sends one unary call with `headers`, and waits at most the call limit: no answer in time
    /// is [`Broke::NoAnswer`], a status [`Broke::Status`], both at `call`.
    async fn send<Req, Resp, Fut>(
        &self,
        channel: Channel,
        headers: tonic::metadata::MetadataMap,
        call: ActionCall,
        name: &'static str,
        message: Req,
        send: impl FnOnce(SpannerClient<Channel>, tonic::Request<Req>) -> Fut,
    ) -> Result<Resp, Broke>
    where
        Fut: Future<Output = Result<tonic::Response<Resp>, tonic::Status>>,
    {
        let mut request = tonic::Request::new(message);
        *request.metadata_mut() = headers;
        let within = self.timeouts().call;
        let answer = tokio::time::timeout(within, send(SpannerClient::new(channel), request))
            .await
            .map_err(|_| Broke::NoAnswer(call, no_answer(self.endpoint(), name, within)))?
            .map_err(|s| Broke::Status(call, s))?;
        Ok(answer.into_inner())
    }

    /// Rolls the attempt's transaction back, when it has one (best effort: a rollback that fails
    /// leaves the server to reap the transaction).
    async fn roll_back(&self, run: &mut Running<'_, '_>) {
        let Some(id) = run.id.clone() else { return };
        let message = pb::RollbackRequest {
            session: run.session.to_owned(),
            transaction_id: id,
        };
        let mut request = tonic::Request::new(message);
        *request.metadata_mut() = run.next_call().attempt(1);
        let mut client = SpannerClient::new(run.channel.clone());
        let _ = tokio::time::timeout(self.timeouts().call, client.rollback(request)).await;
    }
}

/// The waits for locks the server names in an aborted request's trailers (the local instance's,
/// for a request aborted while it waited: a wait LOCK_STATS count too), kept on the action that
/// failed (the attempt's last), beside any it was told of before.
fn waits_before_failing(actions: &mut [ActionTiming], status: &tonic::Status) {
    let (Some(waited), Some(last)) = (
        super::timing::HeaderLockWait::from_headers(status.metadata()),
        actions.last_mut(),
    ) else {
        return;
    };
    last.server_lock_wait = Some(last.server_lock_wait.unwrap_or_default() + waited.waited);
    last.lock_waits.extend(waited.named);
}

/// The older transaction that wounded an aborted attempt, when the server's trailer names it.
fn wounded_by(status: &tonic::Status) -> Option<WoundSeen> {
    let text = status.metadata().get(WOUNDED_BY_TRAILER)?.to_str().ok()?;
    serde_json::from_str(text).ok()
}

fn no_answer(endpoint: &str, call: &'static str, after: Duration) -> IterationError {
    IterationError::Client(crate::client::ClientError::Unanswered {
        endpoint: endpoint.to_owned(),
        call,
        after,
    })
}
