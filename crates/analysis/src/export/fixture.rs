//! The small fixed report every golden test exports: two runs, a warm-up, an error whose message
//! needs quoting, a cancelled iteration, and phases that were not measured.

use crate::report::{Check, IterationRecord, Outcome, RunConfig, RunReport};

/// The message of the failed iteration: a comma, a double quote and a newline.
pub const ERROR_MESSAGE: &str = "bad value, \"x\"\nat row 7";

/// An iteration of `run` with nothing measured but its total.
fn bare(
    run: &str,
    iteration: u32,
    outcome: Outcome,
    started_at: &str,
    total_ms: f64,
) -> IterationRecord {
    let mut r = IterationRecord::new(run, iteration, false, started_at);
    r.outcome = outcome;
    r.total_ms = total_ms;
    r
}

fn config(label: &str, target: &str, iterations: u32, warmup: u32) -> RunConfig {
    RunConfig {
        label: label.into(),
        target: target.into(),
        sql: "SELECT * FROM Singers WHERE SingerId = @id".into(),
        params: vec![("id".into(), "7".into())],
        query_mode: crate::kind::QueryMode::Profile,
        iterations,
        warmup,
        decoder: crate::kind::Reader::Named("spanprof".into()),
        ..Default::default()
    }
}

/// The two runs: "fast, cached" (a warm-up, two successes, a failure) on the local instance, and
/// "slow" (a success with only its total known, then a cancellation) on the emulator.
pub fn reports() -> Vec<RunReport> {
    let fast = "fast, cached";
    let warmup = {
        let mut r = bare(fast, 1, Outcome::Ok, "2026-03-01T10:00:00.000Z", 40.0);
        r.warmup = true;
        r.query.ttfb_ms = Some(30.0);
        r.query.server_elapsed_ms = Some(25.0);
        r.query.server_cpu_ms = Some(20.0);
        r.google.gfe_ms = Some(26.0);
        r.query.wire_decode_wall_ms = Some(5.0);
        r.query.row_decode_wall_ms = Some(3.0);
        r.query.outside_wait_and_decode_ms = Some(2.0);
        r.answer.rows = 100;
        r.answer.server_rows = Some(100);
        r.answer.messages = 2;
        r.answer.wire_bytes = 4096;
        r
    };
    let second = {
        let mut r = bare(fast, 2, Outcome::Ok, "2026-03-01T10:00:00.100Z", 10.0);
        r.query.ttfb_ms = Some(6.5);
        r.query.stream_wait_ms = Some(1.25);
        r.query.server_elapsed_ms = Some(5.0);
        r.query.server_cpu_ms = Some(4.0);
        r.google.gfe_ms = Some(5.5);
        r.google.afe_ms = Some(0.5);
        r.query.wire_decode_wall_ms = Some(1.5);
        r.query.row_decode_wall_ms = Some(1.0);
        r.query.outside_wait_and_decode_ms = Some(1.25);
        r.answer.rows = 100;
        r.answer.server_rows = Some(100);
        r.answer.messages = 2;
        r.answer.chunked_values = 1;
        r.answer.wire_bytes = 4096;
        r.ids.request_id = Some("1.0123456789abcdef.1.1.2.1".into());
        r.ids.trace_id = Some("4bf92f3577b34da6a3ce929d0e0e4736".into());
        r.google.operation_ms = Some(9.5);
        r.google.attempts = Some(1);
        r.google.attempt_ms = vec![9.5];
        r
    };
    let third = {
        let mut r = bare(fast, 3, Outcome::Ok, "2026-03-01T10:00:00.200Z", 12.0);
        r.query.ttfb_ms = Some(7.0);
        r.query.server_elapsed_ms = Some(6.0);
        r.query.wire_decode_wall_ms = Some(2.0);
        r.query.row_decode_wall_ms = Some(1.5);
        r.query.outside_wait_and_decode_ms = Some(2.5);
        r.answer.rows = 100;
        r.answer.messages = 2;
        r.answer.chunked_values = 1;
        r.answer.wire_bytes = 4096;
        r.answer.resumes = 1;
        r
    };
    let failed = bare(
        fast,
        4,
        Outcome::failed(ERROR_MESSAGE, None),
        "2026-03-01T10:00:00.300Z",
        3.25,
    );
    let slow = "slow";
    let only_total = {
        let mut r = bare(slow, 1, Outcome::Ok, "2026-03-01T11:00:00Z", 100.0);
        r.answer.rows = 1;
        r.answer.messages = 1;
        r.answer.wire_bytes = 12;
        r
    };
    let cancelled = bare(
        slow,
        2,
        Outcome::Cancelled("cancelled by user".into()),
        "2026-03-01T11:00:01Z",
        0.125,
    );
    vec![
        RunReport {
            config: config(fast, "local", 3, 1),
            started_at: "2026-03-01T10:00:00Z".into(),
            iterations: vec![warmup, second, third, failed],
            plans: Default::default(),
            stopped: None,
        },
        RunReport {
            config: config(slow, "emulator 127.0.0.1:9010", 2, 0),
            started_at: "2026-03-01T11:00:00Z".into(),
            iterations: vec![only_total, cancelled],
            plans: Default::default(),
            stopped: None,
        },
    ]
}

/// A subject's run (`spanprof client`): a program's iteration with the server's phases,
/// its rows checked by value, the command and the stream's settings.
pub fn subject_report() -> RunReport {
    RunReport {
        config: RunConfig {
            label: "python3 python_client.py".into(),
            target: "local".into(),
            sql: "SELECT * FROM Seed23 LIMIT 10000".into(),
            query_mode: crate::kind::QueryMode::Normal,
            iterations: 1,
            decoder: crate::kind::Reader::Program,
            command: vec!["python3".into(), "python_client.py".into()],
            stream: vec![
                ("shape".into(), "emulator".into()),
                ("fail-every".into(), "3".into()),
            ],
            ..RunConfig::default()
        },
        started_at: "2026-12-01T20:00:00Z".into(),
        iterations: vec![{
            let mut r =
                IterationRecord::new("python3 python_client.py", 0, false, "2026-12-01T20:00:00Z");
            r.total_ms = 1900.0;
            r.answer.rows = 10_000;
            r.answer.server_rows = Some(10_000);
            r.subject_mut().startup_ms = Some(950.25);
            r.subject_mut().first_byte_ms = Some(3.5);
            r.subject_mut().transfer_ms = Some(700.0);
            r.subject_mut().blocked_ms = Some(640.125);
            r.subject_mut().tail_ms = Some(246.0);
            r.subject_mut().check = Some(Check::Values);
            r
        }],
        plans: Default::default(),
        stopped: None,
    }
}

/// A read-write run on the local instance whose transactions blocked one another: iteration 1's
/// first attempt waited 4.5 ms at its DML on `accounts(1).balance` behind iteration 0 and was
/// wounded by iteration 2; its second attempt waited 2 ms at commit on `accounts(2)` behind a
/// transaction of another client.
pub fn conflicted_report() -> RunReport {
    use crate::report::{
        Action, ActionKind, Attempt, AttemptOutcome, LockWaitSeen, ReportHead, TransactionRecord,
        WoundSeen,
    };
    let attempt = |id: &str, outcome, actions: Vec<Action>| {
        let mut a = Attempt::new(outcome);
        a.transaction_id = Some(id.into());
        a.total_ms = actions.iter().map(|s| s.at_ms + s.ms).fold(1.0, f64::max);
        a.actions = actions;
        a
    };
    let wait = |key: &str, column: Option<&str>, ms: f64, holder: &str| LockWaitSeen {
        key: key.into(),
        column: column.map(Into::into),
        mode: "WriterShared".into(),
        ms,
        holders: vec![holder.into()],
    };
    let action = |kind, at_ms, ms, lock_waits| Action {
        kind: Some(kind),
        at_ms,
        ms,
        lock_waits,
        ..Action::default()
    };
    let mut wounded = attempt(
        "aa02",
        AttemptOutcome::Aborted,
        vec![action(
            ActionKind::Dml,
            0.5,
            9.0,
            vec![wait("accounts(1)", Some("balance"), 4.5, "aa01")],
        )],
    );
    wounded.ended_at = Some(ActionKind::Dml);
    wounded.backoff_ms = Some(3.0);
    wounded.message = Some("Transaction was wounded".into());
    wounded.wounded_by = Some(WoundSeen {
        by: "aa03".into(),
        key: "accounts(1)".into(),
        column: None,
        mode: "Exclusive".into(),
    });
    let retried = attempt(
        "aa04",
        AttemptOutcome::Committed,
        vec![
            action(ActionKind::Dml, 0.5, 1.0, Vec::new()),
            action(
                ActionKind::Commit,
                2.0,
                3.0,
                vec![wait("accounts(2)", None, 2.0, "ffeeddccbbaa99887766")],
            ),
        ],
    );
    let plain = |id: &str| {
        attempt(
            id,
            AttemptOutcome::Committed,
            vec![action(ActionKind::Commit, 0.5, 1.0, Vec::new())],
        )
    };
    let iteration = |n: u32, attempts: Vec<Attempt>| {
        let mut r = IterationRecord::new("rw", n, false, "2026-12-05T00:00:00Z");
        r.total_ms = attempts.iter().map(|a| a.total_ms).sum();
        r.transaction = Some(TransactionRecord {
            attempts,
            ..TransactionRecord::default()
        });
        r
    };
    ReportHead::new(
        RunConfig {
            label: "rw".into(),
            target: "local".into(),
            read_write: Some("isolation default".into()),
            ..RunConfig::default()
        },
        "2026-12-05T00:00:00Z".into(),
    )
    .with_records(vec![
        iteration(0, vec![plain("aa01")]),
        iteration(1, vec![wounded, retried]),
        iteration(2, vec![plain("aa03")]),
    ])
}
