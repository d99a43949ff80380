use super::*;
use crate::report::{Between, ColdStep, Lane, Timeline};

fn query(total_ms: f64) -> IterationRecord {
    {
        let mut r = IterationRecord::new("r", 0, false, "2026-01-02T03:04:05Z");
        r.total_ms = total_ms;
        r.query.stream_wait_ms = Some(20.0);
        r.query.wire_decode_wall_ms = Some(3.0);
        r.query.wire_decode_cpu_ms = Some(2.5);
        r.query.row_decode_wall_ms = Some(10.0);
        r.query.row_decode_cpu_ms = Some(9.0);
        r.query.client_work_wall_ms = Some(4.0);
        r.query.client_work_cpu_ms = Some(3.0);
        r.query.descheduled_ms = Some(2.5);
        r
    }
}

fn parts_of(a: &Accounting) -> Vec<(Part, f64)> {
    a.parts.iter().collect()
}

#[test]
fn the_parts_add_up_to_the_total_and_the_rest_is_untimed() {
    let a = query(38.0).accounting();
    assert_eq!(
        parts_of(&a),
        vec![
            (Part::Network, 20.0),
            (Part::WireDecode, 2.5),
            (Part::RowDecode, 9.0),
            (Part::ClientWork, 3.0),
            (Part::Descheduled, 2.5),
            (Part::Untimed, 1.0),
        ]
    );
    assert_eq!(a.parts.sum_ms(), 38.0);
    assert_eq!(
        a.split,
        Split::None,
        "no server time: the wait is not split"
    );
    assert_eq!(a.overlap_ms, None);
    assert!(a.client_work_timed);
}

#[test]
fn a_server_that_reports_its_wait_on_the_client_splits_the_wait_exactly() {
    // The server took 42 ms, 30 of them waiting for the client to read: 12 ms of work, all
    // while the client waited.
    let record = {
        let mut r = query(38.0);
        r.query.server_elapsed_ms = Some(42.0);
        r.query.server_client_wait_ms = Some(30.0);
        r
    };
    let a = record.accounting();
    assert_eq!(a.split, Split::Measured);
    assert_eq!(a.parts.get(Part::Server), Some(12.0));
    assert_eq!(a.parts.get(Part::Network), Some(8.0));
    assert_eq!(a.overlap_ms, Some(0.0));
    assert_eq!(a.parts.sum_ms(), 38.0);
}

#[test]
fn server_work_beyond_the_client_s_wait_is_an_overlap_never_a_part() {
    // The server reports 42 ms of elapsed time and nothing about waiting: the estimate gives it
    // the whole 20 ms wait, and the 22 ms it worked while the client decoded overlap.
    let record = {
        let mut r = query(38.0);
        r.query.server_elapsed_ms = Some(42.0);
        r
    };
    let a = record.accounting();
    assert_eq!(a.split, Split::Estimated);
    assert_eq!(a.parts.get(Part::Server), Some(20.0));
    assert_eq!(a.parts.get(Part::Network), Some(0.0));
    assert_eq!(a.overlap_ms, Some(22.0));
    assert_eq!(a.parts.sum_ms(), 38.0, "the overlap is not added");
}

#[test]
fn a_cold_start_s_steps_come_first_and_the_gap_after_them_is_untimed() {
    let record = {
        let mut r = query(46.0);
        r.cold
            .get_or_insert_default()
            .set(crate::report::ColdStep::Dns, 1.0);
        r.cold
            .get_or_insert_default()
            .set(crate::report::ColdStep::Tcp, 2.0);
        r.cold
            .get_or_insert_default()
            .set(crate::report::ColdStep::Tls, 0.0);
        r.cold
            .get_or_insert_default()
            .set(crate::report::ColdStep::Http2, 1.5);
        r.cold
            .get_or_insert_default()
            .set(crate::report::ColdStep::Token, 0.0);
        r.cold
            .get_or_insert_default()
            .set(crate::report::ColdStep::Session, 3.0);
        r
    };
    let a = record.accounting();
    let names: Vec<Part> = a.parts.iter().map(|(p, _)| p).collect();
    assert_eq!(&names[..6], &Part::COLD_START);
    assert_eq!(a.parts.get(Part::Untimed), Some(1.5));
    assert_eq!(a.parts.sum_ms(), 46.0);
}

#[test]
fn parts_that_come_to_more_than_the_total_give_back_from_the_wait_first() {
    // A clock's rounding: the spans sum past the total by 0.4 ms.
    let a = query(36.6).accounting();
    assert_eq!(a.parts.get(Part::Untimed), Some(0.0));
    assert_eq!(a.parts.get(Part::Network), Some(19.6));
    assert_eq!(a.parts.sum_ms(), 36.6);
}

#[test]
fn an_older_report_derives_its_client_work_from_the_timeline_or_says_it_cannot() {
    let mut old = {
        let mut r = query(38.0);
        r.query.client_work_wall_ms = None;
        r.query.client_work_cpu_ms = None;
        r
    };
    let a = old.accounting();
    assert!(!a.client_work_timed);
    assert!(!a.parts.has(Part::ClientWork));
    assert_eq!(a.parts.get(Part::Untimed), Some(4.0));
    old.timeline = Some(Timeline {
        lanes: vec![Lane {
            between: Between {
                wall_us: 4_000,
                cpu_us: 3_000,
            },
            ..Lane::default()
        }],
        total_us: 38_000,
        setup: Vec::new(),
    });
    let a = old.accounting();
    assert!(a.client_work_timed);
    assert_eq!(a.parts.get(Part::ClientWork), Some(3.0));
    assert_eq!(a.parts.get(Part::Untimed), Some(1.0));
}

#[test]
fn a_report_without_cpu_times_counts_decode_wall_time_as_decode() {
    let old = {
        let mut r = IterationRecord::new("r", 0, false, "2026-01-02T03:04:05Z");
        r.total_ms = 30.0;
        r.query.stream_wait_ms = Some(20.0);
        r.query.wire_decode_wall_ms = Some(3.0);
        r.query.row_decode_wall_ms = Some(5.0);
        r.query.outside_wait_and_decode_ms = Some(2.0);
        r
    };
    let a = old.accounting();
    assert_eq!(a.parts.get(Part::WireDecode), Some(3.0));
    assert_eq!(a.parts.get(Part::RowDecode), Some(5.0));
    assert!(!a.parts.has(Part::Descheduled));
    assert_eq!(a.parts.get(Part::Untimed), Some(2.0));
}

#[test]
fn a_subject_s_time_splits_as_the_server_saw_it() {
    let record = {
        let mut r = IterationRecord::new("c", 0, false, "2026-01-02T03:04:05Z");
        r.total_ms = 1_900.0;
        r.subject_mut().startup_ms = Some(950.25);
        r.subject_mut().first_byte_ms = Some(3.5);
        r.subject_mut().transfer_ms = Some(700.0);
        r.subject_mut().blocked_ms = Some(640.125);
        r.subject_mut().tail_ms = Some(246.0);
        r
    };
    let a = record.accounting();
    assert_eq!(
        parts_of(&a),
        vec![
            (Part::Untimed, 0.25),
            (Part::Startup, 950.25),
            (Part::FirstByte, 3.5),
            (Part::Streaming, 59.875),
            (Part::Blocked, 640.125),
            (Part::Tail, 246.0),
        ]
    );
    assert_eq!(a.parts.sum_ms(), 1_900.0);
}

#[test]
fn hostile_figures_give_finite_parts_that_still_add_up() {
    let record = {
        let mut r = IterationRecord::new("r", 0, false, "2026-01-02T03:04:05Z");
        r.total_ms = 10.0;
        r.query.stream_wait_ms = Some(f64::NAN);
        r.query.wire_decode_wall_ms = Some(-4.0);
        r.query.row_decode_wall_ms = Some(f64::INFINITY);
        r.query.server_elapsed_ms = Some(1e300);
        r.query.server_client_wait_ms = Some(-1.0);
        r
    };
    let a = record.accounting();
    assert_eq!(a.parts.sum_ms(), 10.0);
    assert!(a.parts.iter().all(|(_, ms)| ms.is_finite() && ms >= 0.0));
}

#[test]
fn a_failed_iteration_is_untimed_but_for_the_steps_it_made() {
    let record = {
        let mut r = IterationRecord::new("r", 0, false, "2026-01-02T03:04:05Z");
        r.total_ms = 12.0;
        r.outcome = crate::report::Outcome::failed("failed", None);
        r.cold
            .get_or_insert_default()
            .set(crate::report::ColdStep::Dns, 2.0);
        r
    };
    let a = record.accounting();
    // A cold start times all six actions; those that took no time are parts of 0 ms.
    let spent: Vec<(Part, f64)> = parts_of(&a)
        .into_iter()
        .filter(|(_, ms)| *ms > 0.0)
        .collect();
    assert_eq!(
        spent,
        vec![(Part::Cold(ColdStep::Dns), 2.0), (Part::Untimed, 10.0)]
    );
    assert_eq!(a.parts.get(Part::Cold(ColdStep::Tls)), Some(0.0));
}

/// A transfer that aborted once at its commit and committed on its second attempt: two streamed
/// DML statements, a think action, the commit.
fn transfer() -> IterationRecord {
    use crate::report::{
        Action, ActionKind, Attempt, AttemptOutcome, StoredTimings, TransactionRecord,
    };
    let statement = |wait: f64, elapsed: f64| {
        let q = QueryTimings {
            stream_wait_ms: Some(wait),
            server_elapsed_ms: Some(elapsed),
            wire_decode_wall_ms: Some(0.2),
            wire_decode_cpu_ms: Some(0.2),
            row_decode_wall_ms: Some(0.1),
            row_decode_cpu_ms: Some(0.1),
            client_work_wall_ms: Some(0.5),
            client_work_cpu_ms: Some(0.4),
            descheduled_ms: Some(0.1),
            ..QueryTimings::default()
        };
        Action {
            kind: Some(ActionKind::Dml),
            ms: wait + 0.8,
            query: Some(StoredTimings::from(&q)),
            ..Action::default()
        }
    };
    let mut aborted = Attempt::new(AttemptOutcome::Aborted);
    aborted.total_ms = 7.0;
    aborted.ended_at = Some(ActionKind::Commit);
    aborted.retry_delay_ms = Some(20.0);
    aborted.backoff_ms = Some(20.4);
    let mut committed = Attempt::new(AttemptOutcome::Committed);
    committed.actions = vec![
        statement(2.0, 1.5),
        statement(3.0, 4.0),
        Action {
            kind: Some(ActionKind::Think),
            ms: 5.0,
            ..Action::default()
        },
        Action {
            kind: Some(ActionKind::Commit),
            ms: 1.5,
            ..Action::default()
        },
    ];
    committed.total_ms = 13.1;
    let mut r = IterationRecord::new("rw", 0, false, "2026-12-05T00:00:00Z");
    r.total_ms = 41.0;
    r.transaction = Some(TransactionRecord {
        attempts: vec![aborted, committed],
        ..TransactionRecord::default()
    });
    r
}

#[test]
fn a_transaction_s_parts_are_its_aborted_attempts_back_off_and_the_last_attempt_s_steps() {
    let a = transfer().accounting();
    assert_eq!(
        parts_of(&a),
        vec![
            (Part::Aborted, 7.0),
            // The first statement's server work fits in its wait; the second's is more than its
            // wait, which is all server, the rest an overlap.
            (Part::Server, 4.5),
            (Part::Network, 0.5),
            (Part::Backoff, 20.4),
            (Part::WireDecode, 0.4),
            (Part::RowDecode, 0.2),
            (Part::ClientWork, 0.8),
            (Part::Descheduled, 0.2),
            (Part::Think, 5.0),
            (Part::Commit, 1.5),
            (Part::Untimed, 0.5),
        ]
    );
    assert_eq!(a.parts.sum_ms(), 41.0);
    assert_eq!(a.overlap_ms, Some(1.0));
    assert_eq!(a.split, Split::Estimated);
}

#[test]
fn a_commit_s_wait_for_locks_as_the_server_gave_it_is_lock_wait_not_commit() {
    let mut r = transfer();
    if let Some(t) = r.transaction.as_mut()
        && let Some(commit) = t.attempts[1].actions.last_mut()
    {
        commit.server_lock_wait_ms = Some(1.25);
    }
    let a = r.accounting();
    assert_eq!(a.parts.ms(Part::Commit), 0.25);
    assert_eq!(a.parts.ms(Part::LockWait), 1.25);
    assert_eq!(a.parts.sum_ms(), 41.0, "carved out, not added");
    // A server that says more than the commit took is held to the commit's time.
    if let Some(t) = r.transaction.as_mut()
        && let Some(commit) = t.attempts[1].actions.last_mut()
    {
        commit.server_lock_wait_ms = Some(9.0);
    }
    let a = r.accounting();
    assert_eq!(a.parts.ms(Part::Commit), 0.0);
    assert_eq!(a.parts.ms(Part::LockWait), 1.5);
}

#[test]
fn a_transaction_s_parts_add_up_even_when_its_steps_come_to_more_than_its_total() {
    let mut r = transfer();
    r.total_ms = 30.0;
    let a = r.accounting();
    assert_eq!(a.parts.sum_ms(), 30.0);
    assert_eq!(a.parts.ms(Part::Untimed), 0.0);
    assert_eq!(
        a.parts.ms(Part::Backoff),
        20.4,
        "a back-off slept is never given back"
    );
}

#[test]
fn a_wait_for_locks_the_server_reports_is_carved_out_of_the_server_part() {
    let mut r = query(38.0);
    r.query.server_elapsed_ms = Some(12.0);
    r.query.server_lock_wait_ms = Some(5.0);
    let a = r.accounting();
    assert_eq!(a.parts.get(Part::LockWait), Some(5.0));
    assert_eq!(a.parts.get(Part::Server), Some(7.0));
    assert_eq!(a.parts.get(Part::Network), Some(8.0));
    assert_eq!(a.parts.sum_ms(), 38.0);
    // A lock wait longer than the server's time the client waited on is cut to that time.
    r.query.server_lock_wait_ms = Some(50.0);
    let a = r.accounting();
    assert_eq!(a.parts.get(Part::LockWait), Some(12.0));
    assert_eq!(a.parts.get(Part::Server), Some(0.0));
    assert_eq!(a.parts.sum_ms(), 38.0);
    // Without the server's figure there is no such part.
    r.query.server_lock_wait_ms = None;
    assert_eq!(r.accounting().parts.get(Part::LockWait), None);
}

#[test]
fn a_wait_for_locks_an_answer_without_statistics_reports_is_carved_out_of_the_network() {
    // A read in a read-write transaction: no server statistics, its wait for locks in its
    // answer's headers.
    let mut r = query(38.0);
    r.query.server_lock_wait_ms = Some(5.0);
    let a = r.accounting();
    assert_eq!(a.parts.get(Part::LockWait), Some(5.0));
    assert_eq!(a.parts.get(Part::Server), None);
    assert_eq!(a.parts.get(Part::Network), Some(15.0));
    assert_eq!(a.parts.sum_ms(), 38.0);
    // Never more than the client waited.
    r.query.server_lock_wait_ms = Some(50.0);
    let a = r.accounting();
    assert_eq!(a.parts.get(Part::LockWait), Some(20.0));
    assert_eq!(a.parts.get(Part::Network), Some(0.0));
    assert_eq!(a.parts.sum_ms(), 38.0);
}
