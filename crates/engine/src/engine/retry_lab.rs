//! The retry lab (`spanprof client --read-write`): starts the local instance with the subject's
//! knobs (`abort_every`, the retry delays), watches its read-write tap, runs the program once with
//! the instance and the SQL in its environment (and `SPANPROF_READ_WRITE=1`), and returns what the
//! instance saw of its read-write calls, for the retry check (`analysis::retry_check`, which the
//! command line runs on them). It starts as every run does, through `Engine::start`.

use std::time::Instant;

use crate::retry_lab::{RwBegan, RwRequest, RwRpc};
use crate::server::LocalInstance;
use crate::server::rw_tap::{self, RwCall};
use crate::subject::command;

use super::events::{RetryLabError, RetryLabRun};
use super::subject::SubjectSpec;

/// The SQL a program is given in `SPANPROF_SQL` when `--sql` names none: a write to the row the
/// drivers read.
pub const DEFAULT_READ_WRITE_SQL: &str =
    "UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 1";

/// Runs `spec`'s program once against a fresh local instance and checks its retries (the
/// engine's `Job::RetryLab`; [`crate::engine::retry_lab_run`] waits for it).
pub async fn run(spec: &SubjectSpec) -> Result<RetryLabRun, RetryLabError> {
    let instance = LocalInstance::start(spec.server.clone())
        .await
        .map_err(|e| RetryLabError::Start(e.to_string()))?;
    let tap = instance.rw_tap();
    let mut env = spec.environment(&instance.host_port(), 0);
    env.push(("SPANPROF_READ_WRITE", "1".to_owned()));
    tap.watch();
    let zero = Instant::now();
    let ran = command::run(&spec.command, &env, spec.limit).await;
    let seen = tap.take();
    tap.stop();
    let ran = ran?;
    Ok(RetryLabRun {
        command: spec.command.display(),
        exit: ran.status.clone(),
        success: ran.success,
        stderr_tail: ran.stderr_tail.clone(),
        elapsed: ran.exited.saturating_duration_since(ran.started),
        requests: requests(&seen.calls, zero),
        overflow: seen.overflow,
    })
}

fn ms_since(zero: Instant, at: Instant) -> f64 {
    at.saturating_duration_since(zero).as_secs_f64() * 1e3
}

/// The server's calls as the check reads them, times from `zero`.
pub fn requests(calls: &[RwCall], zero: Instant) -> Vec<RwRequest> {
    calls.iter().map(|c| request(c, zero)).collect()
}

/// The server's call as the check reads it.
fn request(call: &RwCall, zero: Instant) -> RwRequest {
    RwRequest {
        rpc: match call.rpc {
            rw_tap::RwRpc::Begin => RwRpc::Begin,
            rw_tap::RwRpc::ExecuteSql => RwRpc::ExecuteSql,
            rw_tap::RwRpc::ExecuteStreamingSql => RwRpc::ExecuteStreamingSql,
            rw_tap::RwRpc::ExecuteBatchDml => RwRpc::ExecuteBatchDml,
            rw_tap::RwRpc::Read => RwRpc::Read,
            rw_tap::RwRpc::Commit => RwRpc::Commit,
            rw_tap::RwRpc::Rollback => RwRpc::Rollback,
        },
        session: call.session.clone(),
        named: call.named,
        began: call.began.map(|b| RwBegan {
            txn: b.txn,
            multiplexed: b.multiplexed,
            previous_named: b.previous_named,
            previous_kept: b.previous_kept,
        }),
        tag: call.tag.clone(),
        token_sent: call.token_sent,
        token_latest: call.token_latest,
        code: call.code,
        retry_delay_ms: call.retry_delay.map(|d| d.as_secs_f64() * 1e3),
        arrived_ms: ms_since(zero, call.arrived),
        answered_ms: ms_since(zero, call.answered),
    }
}
