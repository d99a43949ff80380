//! The Cloud path offline for read-write transactions: `profile --read-write` through the engine
//! over the Cloud path (a service-account key made here, a local token endpoint) against the
//! stand-in (`standin.rs`), which aborts the first commit with its RetryInfo in the status details,
//! only in the `google.rpc.retryinfo-bin` trailer, or nowhere. The transaction runs again on the
//! same session after the back-off asked (the policy's own without one); every request of it
//! carries its tag; each call of the retry goes again under its first attempt's request number with
//! the attempt counted up; its parts add up to its total. A statement that fails for another
//! reason is rolled back and not retried. A commit whose answer is lost is sent again under its
//! request number, the attempt counted up; the answer tells whether it committed, and with no
//! answer after three asks the outcome is reported unknown and the transaction is not run again.

use std::sync::Arc;

use spanprof::client::auth::Credentials;
use spanprof::client::cloud::CloudTarget;
use spanprof::client::read_write::{BeginMode, ReadWriteOptions};
use spanprof::engine::{Engine, Job, ProfileSpec, ReadWrite, Target, Variant};
use spanprof::part::Part;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::report::{ActionKind, AttemptOutcome, Code, IterationRecord};
use tonic::metadata::MetadataMap;

use crate::cloud::{DATABASE, INSTANCE, PROJECT, TokenEndpoint, write_key_file};
use crate::standin::{
    ABORT_MESSAGE, Behaviour, Body, Commits, LOST_MESSAGE, Queries, RETRY_SEQ, RETRY_TOKEN,
    RetryIn, StandIn,
};

/// The transaction tag the variant asks for.
const TAG: &str = "transfer";
/// The retry delay the stand-in's ABORTED asks for, in ms.
const DELAY_MS: u64 = 30;
/// The back-off [`RetryPolicy::HonourRetryInfo`](spanprof::client::read_write::RetryPolicy) sleeps
/// before a first retry when the server asked for none, in ms.
const POLICY_FIRST_BACKOFF_MS: f64 = 10.0;
/// The script each iteration runs as one transaction.
const TRANSFER: &str = "UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1";

/// What one read-write iteration over the Cloud path left: the stand-in's log and the record.
struct Ran {
    standin: StandIn,
    record: IterationRecord,
}

/// Runs one timed iteration (no warm-up) of [`TRANSFER`] as a read-write transaction with an
/// explicit begin and the tag [`TAG`], over the Cloud path, against a stand-in answering as
/// `behaviour` says.
async fn transfer_once(behaviour: Behaviour) -> Ran {
    let tokens = TokenEndpoint::start(200).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let key = write_key_file(dir.path(), &tokens.uri);
    let standin = StandIn::start(behaviour).await;
    let target = CloudTarget {
        endpoint: standin.endpoint.clone(),
        credentials: Credentials::ServiceAccountFile(key),
        ..CloudTarget::new(PROJECT, INSTANCE, DATABASE)
    };
    let variant = Variant {
        read_write: Some(ReadWrite {
            script: spanprof::script::parse(TRANSFER).expect("a one-statement script"),
            options: ReadWriteOptions {
                begin: BeginMode::Explicit,
                tag: Some(TAG.into()),
                ..Default::default()
            },
        }),
        ..Variant::new("rw", TRANSFER)
    };
    let spec = ProfileSpec {
        variants: vec![variant],
        iterations: 1,
        warmup: 0,
        ..ProfileSpec::default()
    };
    let events = tokio::task::spawn_blocking(move || {
        let engine = Engine::start(Job::Profile(Target::Cloud(target), spec), Arc::new(|| {}))
            .expect("starts");
        engine.profile_events().collect::<Vec<_>>()
    })
    .await
    .expect("joins");
    let reports = spanprof::engine::collect_reports(&events)
        .unwrap_or_else(|| panic!("the run finished: {events:?}"));
    let [report] = &reports[..] else {
        panic!("one variant, one report: {reports:?}");
    };
    let [record] = &report.iterations[..] else {
        panic!("one iteration: {:?}", report.iterations);
    };
    Ran {
        standin,
        record: record.clone(),
    }
}

/// A stand-in whose first commit aborts, its RetryInfo (of [`DELAY_MS`]) where `place` says; the
/// DML answers with a whole one-row answer.
fn aborting_first_commit(place: RetryIn) -> Behaviour {
    Behaviour {
        commits: Commits::AbortFirst {
            retry_info: place,
            delay_ms: DELAY_MS,
        },
        ..Behaviour::answering(Queries::OneRow)
    }
}

/// A request id header, `1.<process>.<client>.<channel>.<request>.<attempt>`, as its fixed
/// prefix (`1.<process>.<client>.<channel>`), its request number and its attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RequestId {
    prefix: String,
    request: u32,
    attempt: u32,
}

fn request_id(method: &str, headers: &MetadataMap) -> RequestId {
    let text = headers
        .get("x-goog-spanner-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("{method} carries a request id: {headers:?}"));
    let fields: Vec<&str> = text.split('.').collect();
    let [version, process, client, channel, request, attempt] = fields[..] else {
        panic!("{method}: {text} has six fields");
    };
    assert_eq!(version, "1", "{method}: {text}");
    let number = |field: &str| -> u32 {
        field
            .parse()
            .unwrap_or_else(|_| panic!("{method}: {text}: {field} is a number"))
    };
    RequestId {
        prefix: format!("{version}.{process}.{client}.{channel}"),
        request: number(request),
        attempt: number(attempt),
    }
}

/// The ids of the transaction's calls (every call but CreateSession and DeleteSession), with
/// their method, in order.
fn transaction_calls(ran: &Ran) -> Vec<(Body, RequestId)> {
    ran.standin
        .requests()
        .into_iter()
        .filter(|(body, _)| !matches!(body, Body::CreateSession(_) | Body::DeleteSession))
        .map(|(body, headers)| {
            let id = request_id(body.method(), &headers);
            (body, id)
        })
        .collect()
}

/// Microseconds, as the accounting counts them.
fn us(ms: f64) -> i64 {
    (ms * 1000.0).round() as i64
}

/// The selector's transaction id, when it names one.
fn selected(selector: Option<&pb::TransactionSelector>) -> Option<&[u8]> {
    match selector?.selector.as_ref()? {
        pb::transaction_selector::Selector::Id(id) => Some(id),
        _ => None,
    }
}

/// The iteration of a transaction whose first commit aborted (its RetryInfo where `place` says):
/// two attempts, the first aborted at the commit with the delay asked and read from that place and
/// a back-off of at least that long (the policy's own, 10 ms, without one), the second committed;
/// parts with `aborted` and `backoff`, adding up to the total; and on the wire, the retry on the
/// same session, every call tagged, each call of the second attempt under the request number of
/// the same call in the first with attempt 2.
async fn an_aborted_commit_is_retried_as_asked(place: RetryIn) {
    let ran = transfer_once(aborting_first_commit(place)).await;
    let record = &ran.record;
    assert!(record.outcome.is_ok(), "{place:?}: {:?}", record.outcome);

    // The record: two attempts, the abort with what it asked and the back-off slept.
    let transaction = record
        .transaction
        .as_ref()
        .unwrap_or_else(|| panic!("{place:?}: a transaction's record: {record:?}"));
    assert_eq!(transaction.tag.as_deref(), Some(TAG));
    let [aborted, committed] = &transaction.attempts[..] else {
        panic!("{place:?}: two attempts: {:?}", transaction.attempts);
    };
    assert_eq!(aborted.outcome, AttemptOutcome::Aborted, "{aborted:?}");
    assert_eq!(aborted.ended_at, Some(ActionKind::Commit), "{aborted:?}");
    assert_eq!(
        aborted.message.as_deref(),
        Some(ABORT_MESSAGE),
        "{aborted:?}"
    );
    let asked = match place {
        RetryIn::Details => Some("details"),
        RetryIn::Trailer => Some("trailer"),
        RetryIn::Neither => None,
    };
    assert_eq!(
        aborted.retry_info_from.as_deref(),
        asked,
        "{place:?}: where the RetryInfo was read: {aborted:?}"
    );
    let asked_ms = asked.map(|_| DELAY_MS as f64);
    assert_eq!(
        aborted.retry_delay_ms.map(us),
        asked_ms.map(us),
        "{place:?}: the retry delay asked: {aborted:?}"
    );
    let backoff = aborted
        .backoff_ms
        .unwrap_or_else(|| panic!("{place:?}: a back-off after the abort: {aborted:?}"));
    let least = asked_ms.unwrap_or(POLICY_FIRST_BACKOFF_MS);
    assert!(
        backoff >= least,
        "{place:?}: slept {backoff} ms, at least {least} ms asked"
    );
    if asked.is_none() {
        // The policy's 10 ms, not some other figure (a sleep overshoots on a busy machine, never by
        // this much).
        assert!(backoff < 250.0, "{place:?}: slept {backoff} ms");
    }
    assert_eq!(
        committed.outcome,
        AttemptOutcome::Committed,
        "{committed:?}"
    );
    assert_eq!(committed.backoff_ms, None, "{committed:?}");
    assert_eq!(committed.retry_delay_ms, None, "{committed:?}");
    // Each attempt began, ran the statement and committed; the aborted one's commit is timed to
    // the abort, as the committed one's to its answer.
    let kinds =
        |a: &spanprof::report::Attempt| -> Vec<_> { a.actions.iter().map(|s| s.kind).collect() };
    let (begin, dml, commit) = (
        Some(ActionKind::Begin),
        Some(ActionKind::Dml),
        Some(ActionKind::Commit),
    );
    assert_eq!(kinds(aborted), [begin, dml, commit], "{aborted:?}");
    assert_eq!(kinds(committed), [begin, dml, commit], "{committed:?}");
    for (attempt, txn) in [(aborted, "txn-1"), (committed, "txn-2")] {
        let hex: String = txn.bytes().map(|b| format!("{b:02x}")).collect();
        assert_eq!(attempt.transaction_id.as_deref(), Some(hex.as_str()));
    }
    assert!(
        transaction
            .commit_timestamp
            .as_deref()
            .is_some_and(|t| t.starts_with("2026-01-01T00:00:00")),
        "{transaction:?}"
    );

    // Its parts: the aborted attempt whole, the back-off slept, and the committed attempt's actions,
    // adding up to the total to the microsecond.
    let parts = record.accounting().parts;
    assert!(parts.has(Part::Aborted), "{parts:?}");
    assert!(parts.has(Part::Backoff), "{parts:?}");
    assert!(
        parts.has(Part::Begin) && parts.has(Part::Commit),
        "{parts:?}"
    );
    assert_eq!(
        us(parts.ms(Part::Aborted)),
        us(aborted.total_ms),
        "{parts:?}"
    );
    assert_eq!(us(parts.ms(Part::Backoff)), us(backoff), "{parts:?}");
    assert_eq!(
        us(parts.sum_ms()),
        us(record.total_ms),
        "{place:?}: the parts {parts:?} add up to the total {} ms",
        record.total_ms
    );
    assert!(
        record.total_ms >= aborted.total_ms + backoff + committed.total_ms - 0.001,
        "{record:?}"
    );

    // On the wire: the calls, in order.
    let methods: Vec<_> = ran.standin.calls().iter().map(|(m, _)| *m).collect();
    assert_eq!(
        methods,
        [
            "CreateSession",
            "BeginTransaction",
            "ExecuteStreamingSql",
            "Commit",
            "BeginTransaction",
            "ExecuteStreamingSql",
            "Commit",
            "DeleteSession"
        ],
        "{place:?}"
    );
    let calls = transaction_calls(&ran);
    let (first, second) = calls.split_at(3);

    // Every call of the transaction, BeginTransaction included, carries its tag.
    for (body, _) in &calls {
        assert_eq!(
            body.transaction_tag(),
            Some(TAG),
            "{place:?}: {} carries the transaction tag: {body:?}",
            body.method()
        );
    }

    // The retry runs on the session the first attempt ran on, the one the run was granted.
    let session = ran
        .standin
        .requests()
        .iter()
        .find_map(|(body, _)| match body {
            Body::CreateSession(r) => Some(format!("{}/sessions/s1", r.database)),
            _ => None,
        })
        .expect("a CreateSession");
    for (body, _) in &calls {
        assert_eq!(body.session(), Some(session.as_str()), "{body:?}");
    }
    assert_eq!(ran.standin.count("CreateSession"), 1, "no new session");

    // Each attempt works in its own transaction: the statement and the commit name the one its
    // BeginTransaction got.
    let executes = ran.standin.executes();
    let commits = ran.standin.commits();
    for (n, txn) in [b"txn-1", b"txn-2"].iter().enumerate() {
        assert_eq!(
            selected(executes[n].transaction.as_ref()),
            Some(&txn[..]),
            "{:?}",
            executes[n]
        );
        assert_eq!(executes[n].seqno, 1, "{:?}", executes[n]);
        assert_eq!(
            commits[n].transaction,
            Some(pb::commit_request::Transaction::TransactionId(txn.to_vec())),
            "{:?}",
            commits[n]
        );
    }

    // The request ids: the first attempt's calls are three requests, attempt 1; the second's are
    // the same requests, in the same order, attempt 2; all from one client and channel.
    let prefix = &first[0].1.prefix;
    for (n, ((body_1, id_1), (body_2, id_2))) in first.iter().zip(second).enumerate() {
        assert_eq!(body_1.method(), body_2.method());
        let method = body_1.method();
        assert_eq!(&id_1.prefix, prefix, "{method}: {id_1:?}");
        assert_eq!(&id_2.prefix, prefix, "{method}: {id_2:?}");
        assert_eq!(
            id_1.attempt, 1,
            "{place:?}: {method} in attempt 1: {id_1:?}"
        );
        assert_eq!(
            id_2.attempt, 2,
            "{place:?}: {method} in attempt 2: {id_2:?}"
        );
        assert_eq!(
            id_2.request, id_1.request,
            "{place:?}: {method} keeps its request number in the retry"
        );
        assert_eq!(
            id_1.request,
            first[0].1.request + n as u32,
            "{place:?}: the first attempt's calls are requests one after another: {first:?}"
        );
    }
    assert_eq!(
        aborted.request_id.as_deref(),
        Some(format!("{prefix}.{}.1", first[0].1.request).as_str()),
        "the first attempt's record names its first call"
    );
    assert_eq!(
        committed.request_id.as_deref(),
        Some(format!("{prefix}.{}.2", first[0].1.request).as_str()),
        "the second attempt's record names its first call, attempt 2"
    );
}

/// An ABORTED whose RetryInfo is only in the status details is honoured.
#[tokio::test(flavor = "multi_thread")]
async fn a_retry_info_only_in_the_details_is_honoured_and_the_retry_keeps_tag_session_and_requests()
{
    an_aborted_commit_is_retried_as_asked(RetryIn::Details).await;
}

/// An ABORTED whose RetryInfo is only in the `google.rpc.retryinfo-bin` trailer is honoured.
#[tokio::test(flavor = "multi_thread")]
async fn a_retry_info_only_in_the_trailer_is_honoured_and_the_retry_keeps_tag_session_and_requests()
{
    an_aborted_commit_is_retried_as_asked(RetryIn::Trailer).await;
}

/// An ABORTED with no RetryInfo is retried after the policy's own back-off, and the record says
/// nothing was asked.
#[tokio::test(flavor = "multi_thread")]
async fn an_abort_without_retry_info_backs_off_as_the_policy_says() {
    an_aborted_commit_is_retried_as_asked(RetryIn::Neither).await;
}

/// A statement refused for a reason other than ABORTED (a misspelt column) ends the iteration
/// failed, in one attempt, not retried: the begun transaction is rolled back on its session and
/// nothing is committed.
#[tokio::test(flavor = "multi_thread")]
async fn a_failing_statement_rolls_the_transaction_back_and_is_not_retried() {
    const REFUSAL: &str = "Unrecognized name: Balanse";
    let behaviour = Behaviour {
        commits: Commits::AbortFirst {
            retry_info: RetryIn::Details,
            delay_ms: DELAY_MS,
        },
        ..Behaviour::answering(Queries::Refuse(tonic::Code::InvalidArgument, REFUSAL))
    };
    let ran = transfer_once(behaviour).await;
    let record = &ran.record;
    assert!(
        !record.outcome.is_ok() && !record.outcome.is_cancelled(),
        "failed: {:?}",
        record.outcome
    );
    assert_eq!(
        record.outcome.code(),
        Some(Code::InvalidArgument),
        "{record:?}"
    );
    assert!(
        record.outcome.error().is_some_and(|e| e.contains(REFUSAL)),
        "the server's words: {:?}",
        record.outcome
    );
    let transaction = record.transaction.as_ref().expect("a transaction's record");
    let [attempt] = &transaction.attempts[..] else {
        panic!("one attempt: {:?}", transaction.attempts);
    };
    assert_eq!(attempt.outcome, AttemptOutcome::Failed, "{attempt:?}");
    assert_eq!(attempt.ended_at, Some(ActionKind::Dml), "{attempt:?}");
    let kinds: Vec<_> = attempt.actions.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        [Some(ActionKind::Begin), Some(ActionKind::Dml)],
        "the refused statement is an action of its attempt, to its refusal: {attempt:?}"
    );
    assert_eq!(attempt.backoff_ms, None, "{attempt:?}");
    assert_eq!(transaction.commit_timestamp, None);

    let methods: Vec<_> = ran.standin.calls().iter().map(|(m, _)| *m).collect();
    assert_eq!(
        methods,
        [
            "CreateSession",
            "BeginTransaction",
            "ExecuteStreamingSql",
            "Rollback",
            "DeleteSession"
        ]
    );
    let begin = &ran.standin.begins()[0];
    let [rollback] = &ran.standin.rollbacks()[..] else {
        panic!("one rollback");
    };
    assert_eq!(rollback.transaction_id, b"txn-1", "{rollback:?}");
    assert_eq!(rollback.session, begin.session, "{rollback:?}");
    // The calls that take a tag carry it; each is a request of its own, attempt 1.
    let calls = transaction_calls(&ran);
    for (body, id) in &calls {
        if !matches!(body, Body::Rollback(_)) {
            assert_eq!(body.transaction_tag(), Some(TAG), "{body:?}");
        }
        assert_eq!(id.attempt, 1, "{}: {id:?}", body.method());
    }
    let numbers: Vec<_> = calls.iter().map(|(_, id)| id.request).collect();
    assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "{numbers:?}");
}

/// A multiplexed session's commit-retry reply (nothing committed, commit again with this token) is
/// followed within the attempt: one attempt, committed, its commit action counting the retry; the
/// second Commit carries the token the reply gave, under a request number of its own.
#[tokio::test(flavor = "multi_thread")]
async fn a_commit_retry_reply_is_followed_with_its_token_as_part_of_the_commit_not_an_abort() {
    let ran = transfer_once(Behaviour {
        commits: Commits::RetryReplyFirst,
        ..Behaviour::answering(Queries::OneRow)
    })
    .await;
    let record = &ran.record;
    assert!(record.outcome.is_ok(), "{:?}", record.outcome);
    let transaction = record.transaction.as_ref().expect("a transaction's record");
    let [attempt] = &transaction.attempts[..] else {
        panic!("one attempt, no abort: {:?}", transaction.attempts);
    };
    assert_eq!(attempt.outcome, AttemptOutcome::Committed, "{attempt:?}");
    let commit = attempt
        .actions
        .iter()
        .find(|a| a.kind == Some(ActionKind::Commit))
        .expect("a commit action");
    assert_eq!(commit.commit_retries, 1, "{attempt:?}");
    let parts = record.accounting().parts;
    assert!(
        parts.has(Part::Commit) && !parts.has(Part::Aborted) && !parts.has(Part::Backoff),
        "{parts:?}"
    );
    let commits = ran.standin.commits();
    let [first, second] = &commits[..] else {
        panic!("two Commit calls: {commits:?}");
    };
    assert_eq!(
        first.precommit_token, None,
        "the stand-in's begin gave no token"
    );
    let token = second
        .precommit_token
        .as_ref()
        .expect("the reply's token sent back");
    assert_eq!(
        (token.precommit_token.as_slice(), token.seq_num),
        (RETRY_TOKEN, RETRY_SEQ)
    );
    let ids: Vec<RequestId> = transaction_calls(&ran)
        .into_iter()
        .filter(|(body, _)| matches!(body, Body::Commit(_)))
        .map(|(_, id)| id)
        .collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(
        ids[0].request, ids[1].request,
        "two requests, not one retried: {ids:?}"
    );
    assert_eq!((ids[0].attempt, ids[1].attempt), (1, 1), "{ids:?}");
}

/// The Commit calls of a run, their request ids in order.
fn commit_ids(ran: &Ran) -> Vec<RequestId> {
    transaction_calls(ran)
        .into_iter()
        .filter(|(body, _)| matches!(body, Body::Commit(_)))
        .map(|(_, id)| id)
        .collect()
}

/// The first commit's answer is lost (UNAVAILABLE): the same Commit goes again, the same
/// transaction id, under the same request number with attempt 2; its answer is the commit, so the
/// transaction committed in one attempt, the commit action counting one ask, and the attempt says
/// how it was learned. No abort, no back-off, no second attempt.
#[tokio::test(flavor = "multi_thread")]
async fn a_commit_whose_answer_was_lost_is_sent_again_under_its_request_id_and_committed_once() {
    let ran = transfer_once(Behaviour {
        commits: Commits::LoseFirstAnswer,
        ..Behaviour::answering(Queries::OneRow)
    })
    .await;
    let record = &ran.record;
    assert!(record.outcome.is_ok(), "{:?}", record.outcome);
    let transaction = record.transaction.as_ref().expect("a transaction's record");
    let [attempt] = &transaction.attempts[..] else {
        panic!("one attempt: {:?}", transaction.attempts);
    };
    assert_eq!(attempt.outcome, AttemptOutcome::Committed, "{attempt:?}");
    let commit = attempt
        .actions
        .iter()
        .find(|a| a.kind == Some(ActionKind::Commit))
        .expect("a commit action");
    assert_eq!(
        (commit.commit_asked_again, commit.commit_retries),
        (1, 0),
        "{attempt:?}"
    );
    let words = attempt
        .commit_resolution
        .as_deref()
        .expect("how it was learned");
    assert!(
        words.contains(LOST_MESSAGE) && words.contains("committed once"),
        "{words}"
    );
    assert!(transaction.commit_timestamp.is_some(), "{transaction:?}");
    let commits = ran.standin.commits();
    let [first, second] = &commits[..] else {
        panic!("two Commit calls: {commits:?}");
    };
    assert_eq!(first, second, "the same Commit, sent again");
    let ids = commit_ids(&ran);
    assert_eq!(ids.len(), 2);
    assert_eq!(
        (ids[0].request, ids[0].attempt, ids[1].attempt),
        (ids[1].request, 1, 2),
        "one request, its attempt counted up: {ids:?}"
    );
    let parts = record.accounting().parts;
    assert!(
        parts.has(Part::Commit) && !parts.has(Part::Aborted) && !parts.has(Part::Backoff),
        "{parts:?}"
    );
}

/// No commit's answer ever comes: the Commit is asked again three times (attempts 2 to 4 of its
/// request), then the outcome is unknown: the iteration failed with words saying so and how it was
/// asked, one attempt, the transaction not run again (no second BeginTransaction), and no rollback
/// sent (it may have committed).
#[tokio::test(flavor = "multi_thread")]
async fn a_commit_never_answered_is_asked_three_times_then_reported_unknown_and_not_run_again() {
    let ran = transfer_once(Behaviour {
        commits: Commits::LoseEveryAnswer,
        ..Behaviour::answering(Queries::OneRow)
    })
    .await;
    let record = &ran.record;
    let message = record.outcome.error().unwrap_or_default().to_owned();
    assert!(!record.outcome.is_ok(), "{:?}", record.outcome);
    assert!(
        message.contains("outcome is unknown")
            && message.contains("asked again 3 times, no answer came")
            && message.contains("read the data back"),
        "{message}"
    );
    let transaction = record.transaction.as_ref().expect("a transaction's record");
    let [attempt] = &transaction.attempts[..] else {
        panic!("one attempt: {:?}", transaction.attempts);
    };
    assert_eq!(attempt.outcome, AttemptOutcome::Unknown, "{attempt:?}");
    let ids = commit_ids(&ran);
    let attempts: Vec<u32> = ids.iter().map(|id| id.attempt).collect();
    assert_eq!(attempts, [1, 2, 3, 4], "{ids:?}");
    assert!(ids.iter().all(|id| id.request == ids[0].request), "{ids:?}");
    let calls = transaction_calls(&ran);
    let begins = calls
        .iter()
        .filter(|(body, _)| matches!(body, Body::BeginTransaction(_)))
        .count();
    let rollbacks = calls
        .iter()
        .filter(|(body, _)| matches!(body, Body::Rollback(_)))
        .count();
    assert_eq!((begins, rollbacks), (1, 0), "{calls:?}");
}
