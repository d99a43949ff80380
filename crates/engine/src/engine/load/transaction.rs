//! One request of a read-write load run (`load --read-write`): one logical transaction, every
//! attempt and back-off of it, run by the client's transaction runner on a session of the
//! request's own (taken from the run's [`SessionPool`], given back when the transaction ends). Its
//! latency is the transaction's: from its intended start (the wait for a session included) and from
//! its actual start (its session in hand). A committed transaction's parts are the transaction
//! accounting's; one that failed counts as an error with its status (ABORTED when the retry policy
//! gave up), and every transaction that made an attempt has its attempts and aborts counted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::client::IterationError;
use crate::client::read_write::TransactionTiming;
use crate::load::Ended;
use crate::report::Outcome;

use super::super::spec::ReadWrite;
use super::super::transaction::accounted;
use super::draws::{MixScript, RequestDraw};
use super::pool::SessionPool;
use super::sink::{StepSink, status_name};
use crate::client::Bound;
use crate::script::Script;
use crate::wire::DecoderKind;

/// What every transaction of a run shares: the sessions and the script with its options.
pub(super) struct Transactions {
    pub(super) pool: Arc<SessionPool>,
    pub(super) read_write: ReadWrite,
    /// A mix's scripts (empty: `read_write`'s one script).
    pub(super) mix: Vec<MixScript>,
    /// Whether the warm-up transaction leaves out the run's tag, so that the target's statistics
    /// for the tag count the run's transactions only (`--server-stats`).
    pub(super) untagged_warm_up: bool,
}

impl Transactions {
    /// Runs one transaction meant to start at `intended` into `step`; returns whether it ended
    /// (false: abandoned in flight).
    pub(super) async fn run(
        &self,
        decoder: DecoderKind,
        step: &StepSink,
        intended: Instant,
        drawn: Option<&RequestDraw>,
    ) -> bool {
        let (place, script, bound) = self.script_of(drawn);
        let mut abandon = step.abandon.clone();
        let lease = tokio::select! {
            lease = self.pool.take() => lease,
            _ = abandon.wait_for(|&stop| stop) => return false,
        };
        let lease = match lease {
            Ok(lease) => lease,
            Err(e) => {
                let status = status_name(&IterationError::from(e));
                let mut tally = step.lock();
                tally.error(&status, since(step.began));
                tally.script_ended(place, None, None);
                return true;
            }
        };
        let started = Instant::now();
        let cancel = std::pin::pin!(async move {
            let _ = abandon.wait_for(|&stop| stop).await;
        });
        let ran = lease
            .session()
            .run_transaction(script, bound, &self.read_write.options, decoder, cancel)
            .await;
        let now = Instant::now();
        let at = now.saturating_duration_since(step.began);
        let timing = match ran {
            Ok(timing) => timing,
            Err(e) => {
                lease.give_back();
                let mut tally = step.lock();
                tally.error(&status_name(&e), at);
                tally.script_ended(place, None, None);
                return true;
            }
        };
        let done = accounted(&timing);
        let code = match &done.outcome {
            // Abandoned in flight: its session is retired with the lease.
            Outcome::Cancelled(_) => return false,
            Outcome::Ok => None,
            Outcome::Failed(failure) => Some(
                failure
                    .code
                    .map_or_else(|| "OTHER".to_owned(), |c| c.spanner_name()),
            ),
        };
        lease.give_back();
        let mut tally = step.lock();
        tally.transaction(&done.transaction);
        match code {
            None => {
                let ended = Ended {
                    from_intended: now.saturating_duration_since(intended),
                    from_start: now.saturating_duration_since(started),
                    at,
                    ..answer(&timing)
                };
                tally.ok(&ended, &done.parts);
                tally.script_ended(place, Some(ended.from_intended), Some(&done.transaction));
            }
            Some(status) => {
                tally.error(&status, at);
                tally.script_ended(place, None, Some(&done.transaction));
            }
        }
        true
    }

    /// One transaction before the first step, its figures kept out (as a query run's warm-up is).
    /// A cancel ends it.
    pub(super) async fn warm_up(
        &self,
        decoder: DecoderKind,
        cancel: &std::sync::atomic::AtomicBool,
        drawn: Option<&RequestDraw>,
    ) {
        let (_, script, bound) = self.script_of(drawn);
        let Ok(lease) = self.pool.take().await else {
            return;
        };
        let cancelled = std::pin::pin!(async {
            while !cancel.load(std::sync::atomic::Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        let untagged;
        let options = if self.untagged_warm_up {
            untagged = crate::client::read_write::ReadWriteOptions {
                tag: None,
                ..self.read_write.options.clone()
            };
            &untagged
        } else {
            &self.read_write.options
        };
        let ran = lease
            .session()
            .run_transaction(script, bound, options, decoder, cancelled)
            .await;
        if ran.is_ok_and(|t| !matches!(accounted(&t).outcome, Outcome::Cancelled(_))) {
            lease.give_back();
        }
    }
}

impl Transactions {
    /// The mix's script names, in its order (empty without a mix).
    pub(super) fn script_names(&self) -> Vec<String> {
        self.mix.iter().map(|m| m.name.clone()).collect()
    }

    /// The script a request runs (its place in the mix, 0 without one) and what it binds.
    fn script_of<'a>(&'a self, drawn: Option<&'a RequestDraw>) -> (usize, &'a Script, &'a [Bound]) {
        let place = drawn.map_or(0, |d| d.script);
        let script = self
            .mix
            .get(place)
            .map_or(&self.read_write.script, |m| &m.script);
        (place, script, drawn.map_or(&[][..], |d| &d.bound))
    }
}

fn since(began: Instant) -> Duration {
    Instant::now().saturating_duration_since(began)
}

/// The committed attempt's answer: its statements' rows and bytes, and their decoding's and own
/// work's CPU time.
fn answer(t: &TransactionTiming) -> Ended {
    let mut ended = Ended::default();
    for s in t
        .attempts
        .last()
        .into_iter()
        .flat_map(|a| &a.actions)
        .filter_map(|a| a.statement.as_ref())
    {
        ended.rows += s.rows;
        ended.bytes += s.counters.wire_bytes;
        ended.decode_cpu += s.wire_decode_cpu + s.row_decode_cpu;
        ended.work_cpu += s.client_work_cpu;
    }
    ended
}
