//! The retry check against hand-made calls: one clean retry per kind of session, then each rule
//! broken once.

use super::*;
use crate::retry_lab::RwBegan;

const OK: i32 = 0;

fn call(rpc: RwRpc, session: &str, at: f64) -> RwRequest {
    RwRequest {
        rpc,
        session: session.to_owned(),
        named: None,
        began: None,
        tag: "t".to_owned(),
        token_sent: None,
        token_latest: None,
        code: OK,
        retry_delay_ms: None,
        arrived_ms: at,
        answered_ms: at + 1.0,
    }
}

fn begin(session: &str, txn: u64, multiplexed: bool, previous: Option<u64>, at: f64) -> RwRequest {
    RwRequest {
        began: Some(RwBegan {
            txn,
            multiplexed,
            previous_named: previous.filter(|_| multiplexed),
            previous_kept: previous,
        }),
        ..call(RwRpc::Begin, session, at)
    }
}

fn on(txn: u64, mut c: RwRequest) -> RwRequest {
    c.named = Some(txn);
    c
}

fn aborted(mut c: RwRequest, delay: f64) -> RwRequest {
    c.code = ABORTED;
    c.retry_delay_ms = Some(delay);
    c
}

/// An attempt begun, aborted at its commit (delay 10 ms), and its retry at `retry_at`.
fn aborted_then_retried(multiplexed: bool, retry: RwRequest) -> Vec<RwRequest> {
    let txn2 = retry.began.map_or(0, |b| b.txn);
    let at = retry.arrived_ms;
    vec![
        begin("s1", 1, multiplexed, None, 0.0),
        on(1, call(RwRpc::ExecuteSql, "s1", 2.0)),
        aborted(on(1, call(RwRpc::Commit, "s1", 4.0)), 10.0),
        retry,
        on(txn2, call(RwRpc::ExecuteSql, "s1", at + 2.0)),
        on(txn2, call(RwRpc::Commit, "s1", at + 4.0)),
    ]
}

fn verdict(check: &RetryCheck, rule: Rule) -> &Verdict {
    check.verdict(rule).expect("every rule has a verdict")
}

#[test]
fn a_clean_retry_on_a_regular_session_passes_and_counts_two_attempts_for_one_commit() {
    let calls = aborted_then_retried(false, begin("s1", 2, false, Some(1), 20.0));
    let check = retry_check(&calls, false);
    assert!(check.passed(), "{check:#?}");
    assert_eq!(
        verdict(&check, Rule::SameSession),
        &Verdict::Pass { checked: 1 }
    );
    assert_eq!(
        verdict(&check, Rule::RetryDelay),
        &Verdict::Pass { checked: 1 }
    );
    assert!(matches!(
        verdict(&check, Rule::PreviousTransaction),
        Verdict::NotExercised { .. }
    ));
    let amp = &check.amplification;
    assert_eq!((amp.transactions, amp.committed, amp.attempts), (1, 1, 2));
    assert_eq!(amp.attempts_per_commit, Some(2.0));
}

#[test]
fn a_retry_on_another_regular_session_fails_with_the_sessions_named() {
    let calls = aborted_then_retried(false, begin("projects/p/sessions/s2", 2, false, None, 20.0));
    let check = retry_check(&calls, false);
    let Verdict::Fail { evidence, .. } = verdict(&check, Rule::SameSession) else {
        panic!("{check:#?}");
    };
    assert_eq!((evidence.transaction, evidence.attempt), (1, 2));
    assert_eq!(
        (evidence.expected.as_str(), evidence.seen.as_str()),
        ("session s1", "session s2")
    );
}

#[test]
fn a_multiplexed_retry_naming_no_previous_transaction_or_too_soon_fails() {
    let calls = aborted_then_retried(true, begin("s1", 2, true, None, 12.0));
    let check = retry_check(&calls, false);
    let Verdict::Fail { evidence, .. } = verdict(&check, Rule::PreviousTransaction) else {
        panic!("{check:#?}");
    };
    assert_eq!(evidence.seen, "none");
    let Verdict::Fail { evidence, .. } = verdict(&check, Rule::RetryDelay) else {
        panic!("12 ms is 7 ms after the ABORTED answered at 5 ms: {check:#?}");
    };
    assert!(evidence.seen.starts_with("7.0 ms"), "{evidence:?}");
}

#[test]
fn a_stale_token_a_changed_tag_and_a_failure_left_open_each_fail() {
    let mut calls = vec![
        begin("s1", 1, true, None, 0.0),
        on(1, call(RwRpc::ExecuteSql, "s1", 2.0)),
        on(
            1,
            RwRequest {
                token_sent: Some(1),
                token_latest: Some(2),
                ..call(RwRpc::Commit, "s1", 4.0)
            },
        ),
        begin("s1", 5, false, None, 10.0),
        on(
            5,
            RwRequest {
                tag: String::new(),
                ..call(RwRpc::ExecuteSql, "s1", 12.0)
            },
        ),
        on(
            5,
            RwRequest {
                code: 3,
                ..call(RwRpc::ExecuteSql, "s1", 14.0)
            },
        ),
    ];
    let check = retry_check(&calls, false);
    assert!(
        matches!(verdict(&check, Rule::LatestToken), Verdict::Fail { .. }),
        "{check:#?}"
    );
    let Verdict::Fail { evidence, .. } = verdict(&check, Rule::SameTag) else {
        panic!("{check:#?}");
    };
    assert_eq!(
        (evidence.transaction, evidence.seen.as_str()),
        (2, "tag \"\"")
    );
    assert!(matches!(
        verdict(&check, Rule::RollbackAfterFailure),
        Verdict::Fail { .. }
    ));
    calls.push(on(5, call(RwRpc::Rollback, "s1", 20.0)));
    let check = retry_check(&calls, false);
    assert_eq!(
        verdict(&check, Rule::RollbackAfterFailure),
        &Verdict::Pass { checked: 1 }
    );
}

#[test]
fn a_transaction_retried_young_ten_times_is_flagged_starved() {
    let mut calls = Vec::new();
    for n in 0..12u64 {
        let at = n as f64 * 100.0;
        calls.push(begin("s1", n + 1, true, None, at));
        let commit = on(n + 1, call(RwRpc::Commit, "s1", at + 2.0));
        calls.push(if n < 11 { aborted(commit, 1.0) } else { commit });
    }
    let check = retry_check(&calls, false);
    assert_eq!(check.amplification.max_attempts, 12);
    let starved = &check.starved[0];
    assert!(!starved.kept_age && starved.committed);
    assert_eq!(
        starved.note,
        "starved: 12 attempts, retries did not keep their age — they named no previous transaction"
    );
}
