//! One iteration of a read-write transaction (`profile --read-write`): the variant's script run
//! on its session by the client's transaction runner, attempt after attempt, and the record made
//! of what it measured: every attempt with its actions (each streamed statement's figures as a
//! query's iteration has them), how it ended, the RetryInfo asked and the back-off slept.

use std::time::Instant;

use crate::client::read_write::{
    ActionCall, ActionTiming, AttemptEnd, AttemptTiming, TransactionTiming,
};
use crate::client::{Bound, Session};
use crate::report::{
    Action, ActionKind, Attempt, AttemptOutcome, Code, IterationRecord, LockWaitSeen, Outcome,
    Parts, StoredTimings, TransactionRecord, waits_from_text,
};
use crate::wire::result_stats::LOCK_WAITS;

use super::common::ms;
use super::iteration::{Done, IterationContext};
use super::record;
use super::spec::ReadWrite;

/// Runs one transaction of `rw` on `session` and builds its record.
pub(super) async fn iteration(
    session: &Session,
    rw: &ReadWrite,
    cx: &IterationContext<'_>,
) -> Done {
    let mut record = record::blank(cx.variant, cx.at);
    record.session_kind = Some(session.granted());
    if cx.cancel.is_set() {
        record.outcome = Outcome::cancelled();
        return done(record, false);
    }
    // The variant's parameters go on each statement that names them, as a query's go on it.
    let bound: Vec<Bound> = match cx.variant.params.iter().map(Bound::of).collect() {
        Ok(bound) => bound,
        Err(e) => {
            record.outcome = Outcome::failed(e.to_string(), None);
            return done(record, false);
        }
    };
    let started = Instant::now();
    let cancel = std::pin::pin!(cx.cancel.notify.notified());
    let ran = session
        .run_transaction(&rw.script, &bound, &rw.options, cx.spec.decoder, cancel)
        .await;
    record.total_ms = ms(started.elapsed());
    let timing = match ran {
        Ok(timing) => timing,
        Err(e) => {
            let no_token = e.is_token_failure();
            record.outcome = Outcome::failed(e.to_string(), e.status_code());
            return done(record, no_token);
        }
    };
    record.total_ms = ms(timing.total);
    record.outcome = outcome(&timing);
    fill_answer(&mut record, &timing);
    record.ids.request_id = timing
        .attempts
        .first()
        .and_then(|a| a.request_id)
        .map(|id| id.to_string());
    record.transaction = Some(transaction_record(&timing, rw.options.tag.clone()));
    done(record, false)
}

/// What a load request keeps of one transaction: every attempt's record, how it ended, and its
/// parts (the same accounting a `profile --read-write` iteration's are).
pub(super) struct Accounted {
    pub(super) transaction: TransactionRecord,
    pub(super) outcome: Outcome,
    pub(super) parts: Parts,
}

/// `timing` accounted for, as [`iteration`] accounts for a profile's transaction.
pub(super) fn accounted(timing: &TransactionTiming) -> Accounted {
    let mut record = IterationRecord::new(String::new(), 0, false, String::new());
    record.total_ms = ms(timing.total);
    record.transaction = Some(transaction_record(timing, None));
    let parts = record.accounting().parts;
    Accounted {
        transaction: record.transaction.take().unwrap_or_default(),
        outcome: outcome(timing),
        parts,
    }
}

fn done(record: IterationRecord, no_token: bool) -> Done {
    Done {
        record,
        timing: None,
        no_token,
    }
}

/// How the transaction ended, as the iteration's outcome: ok when it committed; failed with the
/// step and the server's words otherwise.
fn outcome(t: &TransactionTiming) -> Outcome {
    let Some(last) = t.attempts.last() else {
        return Outcome::failed("the transaction made no attempt", None);
    };
    match &last.end {
        AttemptEnd::Committed { .. } => Outcome::Ok,
        AttemptEnd::Cancelled => Outcome::cancelled(),
        AttemptEnd::Aborted { at, message, .. } => Outcome::failed(
            format!(
                "aborted at {} in attempt {}, not retried: {}; the server said: {message}",
                step_words(*at),
                t.attempts.len(),
                t.gave_up.as_deref().unwrap_or("the retry policy stopped")
            ),
            Some(Code::Aborted),
        ),
        AttemptEnd::Failed { at, error } => Outcome::failed(
            format!(
                "{} failed, the transaction rolled back: {error}",
                step_words(*at)
            ),
            error.status_code(),
        ),
        AttemptEnd::Unknown { error } => Outcome::failed(
            format!(
                "the commit's outcome is unknown ({error}); {}. The transaction was not run \
                 again, so it cannot have been applied twice; read the data back to know whether \
                 it was applied",
                last.commit_resolution
                    .as_deref()
                    .unwrap_or("it was not asked again")
            ),
            error.status_code(),
        ),
    }
}

fn step_words(call: ActionCall) -> &'static str {
    match call {
        ActionCall::Begin => "BeginTransaction",
        ActionCall::Query => "a query",
        ActionCall::Dml => "a DML statement",
        ActionCall::Read => "a READ",
        ActionCall::BatchDml => "a batch of DML",
        ActionCall::Mutate => "a mutation",
        ActionCall::Think => "a SLEEP",
        ActionCall::Commit => "the commit",
    }
}

/// The committed (or last) attempt's streamed statements' answers, summed.
fn fill_answer(record: &mut IterationRecord, t: &TransactionTiming) {
    let Some(last) = t.attempts.last() else {
        return;
    };
    for step in &last.actions {
        if let Some(s) = &step.statement {
            record.answer.rows += s.rows;
            record.answer.messages += s.counters.messages;
            record.answer.chunked_values += s.counters.chunked_values;
            record.answer.wire_bytes += s.counters.wire_bytes;
        }
    }
}

/// The record of every attempt.
fn transaction_record(t: &TransactionTiming, tag: Option<String>) -> TransactionRecord {
    let (commit_timestamp, mutation_count) = match t.attempts.last().map(|a| &a.end) {
        Some(AttemptEnd::Committed {
            timestamp,
            mutation_count,
        }) => (timestamp.clone(), *mutation_count),
        _ => (None, None),
    };
    TransactionRecord {
        attempts: t.attempts.iter().map(attempt).collect(),
        commit_timestamp,
        mutation_count,
        tag,
    }
}

fn attempt(a: &AttemptTiming) -> Attempt {
    let mut out = Attempt::new(match &a.end {
        AttemptEnd::Committed { .. } => AttemptOutcome::Committed,
        AttemptEnd::Aborted { .. } => AttemptOutcome::Aborted,
        AttemptEnd::Failed { .. } => AttemptOutcome::Failed,
        AttemptEnd::Cancelled => AttemptOutcome::Cancelled,
        AttemptEnd::Unknown { .. } => AttemptOutcome::Unknown,
    });
    out.total_ms = ms(a.total);
    out.backoff_ms = a.backoff.map(ms);
    out.transaction_id = a.transaction_id.as_deref().map(hex);
    out.request_id = a.request_id.map(|id| id.to_string());
    out.commit_resolution = a.commit_resolution.clone();
    out.actions = a
        .actions
        .iter()
        .map(|s| Action {
            kind: Some(kind(s.call)),
            index: s.index,
            at_ms: ms(s.at),
            ms: ms(s.took),
            rows: s.rows,
            query: s
                .statement
                .as_ref()
                .map(|t| StoredTimings::from(&record::of_request(t).query)),
            commit_retries: s.commit_retries,
            commit_asked_again: s.asked_again,
            server_lock_wait_ms: s.server_lock_wait.map(ms),
            lock_waits: named_waits(s),
        })
        .collect();
    match &a.end {
        AttemptEnd::Aborted {
            at,
            message,
            retry,
            wounded_by,
        } => {
            out.wounded_by = wounded_by.clone();
            out.ended_at = Some(kind(*at));
            out.message = Some(message.clone());
            out.retry_delay_ms = retry.map(|(d, _)| ms(d));
            out.retry_info_from = retry.map(|(_, from)| from.as_str().to_owned());
        }
        AttemptEnd::Failed { at, error } => {
            out.ended_at = Some(kind(*at));
            out.message = Some(error.to_string());
        }
        AttemptEnd::Unknown { error } => {
            out.ended_at = Some(ActionKind::Commit);
            out.message = Some(error.to_string());
        }
        AttemptEnd::Committed { .. } | AttemptEnd::Cancelled => {}
    }
    out
}

fn kind(call: ActionCall) -> ActionKind {
    match call {
        ActionCall::Begin => ActionKind::Begin,
        ActionCall::Query => ActionKind::Query,
        ActionCall::Dml => ActionKind::Dml,
        ActionCall::Read => ActionKind::Read,
        ActionCall::BatchDml => ActionKind::BatchDml,
        ActionCall::Mutate => ActionKind::Mutate,
        ActionCall::Think => ActionKind::Think,
        ActionCall::Commit => ActionKind::Commit,
    }
}

/// The waits for locks a step went through, as the server named them: a statement's in its
/// statistics (`lock_waits`), or in its answer's headers when the answer has no query statistics
/// (a read's, a NORMAL-mode statement's); a commit's in its answer's header, a failed request's
/// in its trailers (both kept on the step).
fn named_waits(s: &ActionTiming) -> Vec<LockWaitSeen> {
    let from_answer = s.statement.as_ref().map(|t| {
        match t
            .stats
            .as_ref()
            .and_then(|stats| stats.query_stats.entries.get(LOCK_WAITS))
        {
            Some(text) => waits_from_text(text),
            None => t
                .server_lock_wait
                .as_ref()
                .map(|w| w.named.clone())
                .unwrap_or_default(),
        }
    });
    let mut waits = s.lock_waits.clone();
    waits.extend(from_answer.unwrap_or_default());
    waits
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::IterationTiming;
    use crate::client::timing::HeaderLockWait;
    use crate::wire::result_stats::ResultStats;

    fn wait(key: &str) -> LockWaitSeen {
        LockWaitSeen {
            key: key.into(),
            column: None,
            mode: "ReaderShared".into(),
            ms: 2.0,
            holders: Vec::new(),
        }
    }

    fn step(stats: Option<ResultStats>, header: Vec<LockWaitSeen>) -> ActionTiming {
        ActionTiming {
            call: ActionCall::Dml,
            index: 0,
            at: std::time::Duration::ZERO,
            took: std::time::Duration::ZERO,
            rows: None,
            statement: Some(IterationTiming {
                stats,
                server_lock_wait: Some(HeaderLockWait {
                    waited: std::time::Duration::from_millis(2),
                    named: header,
                }),
                ..IterationTiming::default()
            }),
            commit_retries: 0,
            asked_again: 0,
            server_lock_wait: None,
            lock_waits: Vec::new(),
        }
    }

    #[test]
    fn a_statement_without_query_statistics_names_the_waits_its_headers_give() {
        // NORMAL mode: a DML's statistics hold only its row count.
        let row_count_only = ResultStats::default();
        let named = named_waits(&step(Some(row_count_only), vec![wait("accounts(1)")]));
        assert_eq!(named, [wait("accounts(1)")]);
        let named = named_waits(&step(None, vec![wait("accounts(2)")]));
        assert_eq!(named, [wait("accounts(2)")]);
        // With query statistics the waits are theirs, and are not counted twice.
        let mut with_stats = ResultStats::default();
        let text = serde_json::to_string(&[wait("accounts(3)")]).expect("JSON");
        with_stats
            .query_stats
            .entries
            .insert(LOCK_WAITS.to_owned(), text);
        let named = named_waits(&step(Some(with_stats), vec![wait("accounts(3)")]));
        assert_eq!(named, [wait("accounts(3)")]);
    }
}
