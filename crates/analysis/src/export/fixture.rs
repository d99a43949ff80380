//! The small fixed report every golden test exports: two runs, a warm-up, an error whose message
//! needs quoting, a cancelled iteration, and phases that were not measured.

use crate::report::{IterationRecord, RunConfig, RunReport, Status};

/// The message of the failed iteration: a comma, a double quote and a newline.
pub const ERROR_MESSAGE: &str = "bad value, \"x\"\nat row 7";

/// An iteration of `run` with nothing measured but its total.
fn bare(
    run: &str,
    iteration: u32,
    status: Status,
    started_at: &str,
    total_ms: f64,
) -> IterationRecord {
    IterationRecord {
        status,
        total_ms,
        ..IterationRecord::new(run, iteration, false, started_at)
    }
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
    let warmup = IterationRecord {
        warmup: true,
        ttfb_ms: Some(30.0),
        server_ms: Some(25.0),
        server_cpu_ms: Some(20.0),
        gfe_ms: Some(26.0),
        wire_decode_ms: Some(5.0),
        row_decode_ms: Some(3.0),
        other_ms: Some(2.0),
        rows: 100,
        server_rows: Some(100),
        messages: 2,
        wire_bytes: 4096,
        ..bare(fast, 1, Status::Ok, "2026-03-01T10:00:00.000Z", 40.0)
    };
    let second = IterationRecord {
        ttfb_ms: Some(6.5),
        network_ms: Some(1.25),
        server_ms: Some(5.0),
        server_cpu_ms: Some(4.0),
        gfe_ms: Some(5.5),
        afe_ms: Some(0.5),
        wire_decode_ms: Some(1.5),
        row_decode_ms: Some(1.0),
        other_ms: Some(1.25),
        rows: 100,
        server_rows: Some(100),
        messages: 2,
        chunked_values: 1,
        wire_bytes: 4096,
        request_id: Some("1.0123456789abcdef.1.1.2.1".into()),
        trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736".into()),
        operation_ms: Some(9.5),
        attempts: Some(1),
        attempt_ms: vec![9.5],
        ..bare(fast, 2, Status::Ok, "2026-03-01T10:00:00.100Z", 10.0)
    };
    let third = IterationRecord {
        ttfb_ms: Some(7.0),
        server_ms: Some(6.0),
        wire_decode_ms: Some(2.0),
        row_decode_ms: Some(1.5),
        other_ms: Some(2.5),
        rows: 100,
        messages: 2,
        chunked_values: 1,
        wire_bytes: 4096,
        resumes: 1,
        ..bare(fast, 3, Status::Ok, "2026-03-01T10:00:00.200Z", 12.0)
    };
    let failed = IterationRecord {
        error: Some(ERROR_MESSAGE.into()),
        ..bare(fast, 4, Status::Error, "2026-03-01T10:00:00.300Z", 3.25)
    };
    let slow = "slow";
    let only_total = IterationRecord {
        rows: 1,
        messages: 1,
        wire_bytes: 12,
        ..bare(slow, 1, Status::Ok, "2026-03-01T11:00:00Z", 100.0)
    };
    let cancelled = IterationRecord {
        error: Some("cancelled by user".into()),
        ..bare(slow, 2, Status::Cancelled, "2026-03-01T11:00:01Z", 0.125)
    };
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
        iterations: vec![IterationRecord {
            total_ms: 1900.0,
            rows: 10_000,
            server_rows: Some(10_000),
            startup_ms: Some(950.25),
            first_byte_ms: Some(3.5),
            transfer_ms: Some(700.0),
            blocked_ms: Some(640.125),
            tail_ms: Some(246.0),
            check: Some("values".into()),
            ..IterationRecord::new("python3 python_client.py", 0, false, "2026-12-01T20:00:00Z")
        }],
        plans: Default::default(),
        stopped: None,
    }
}
