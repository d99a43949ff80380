//! One step of a load test: what its requests measured as they ended, folded into fixed-size
//! aggregates ([`StepTally`]: three HDR histograms, counters, and the accounting's parts summed
//! per part; no record is kept per request), and the step's figures once it is over
//! ([`StepResult`], what the JSON and CSV hold).

use std::collections::BTreeMap;
use std::time::Duration;

use super::StepLevel;
use super::histogram::Latencies;
use super::scripts::{ScriptShare, ScriptTally};
use crate::part::Part;
use crate::report::{AttemptOutcome, ConflictTally, Conflicts, Parts, TransactionRecord};

/// The latency past which a request counts as slow in `over_100ms_share`.
pub const SLOW: Duration = Duration::from_millis(100);

/// What a request that ended measured, for its step.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ended {
    /// From its intended start to its end (corrected for coordinated omission).
    pub from_intended: Duration,
    /// From its actual start to its end.
    pub from_start: Duration,
    /// When it ended, from the step's start.
    pub at: Duration,
    /// Rows decoded.
    pub rows: u64,
    /// Bytes of the messages they came in.
    pub bytes: u64,
    /// CPU time its decoding got (wire and row decode).
    pub decode_cpu: Duration,
    /// CPU time of the client's own work besides decoding.
    pub work_cpu: Duration,
}

/// A step's aggregates while it runs: fixed size, whatever the count.
#[derive(Debug, Clone)]
pub struct StepTally {
    level: StepLevel,
    corrected: Latencies,
    uncorrected: Latencies,
    lag: Latencies,
    ok: u64,
    errors: BTreeMap<String, u64>,
    late: u64,
    dropped: u64,
    unfinished: u64,
    rows: u64,
    bytes: u64,
    last_end: Duration,
    parts_us: [u64; Part::ALL.len()],
    parts_seen: u64,
    decode_cpu: Duration,
    work_cpu: Duration,
    /// The server's queue waits reported (microseconds summed, and how many reported one).
    queue_us: u64,
    queued: u64,
    /// A read-write run's transactions (`None` for a query's run).
    transactions: Option<TransactionTally>,
    /// A mix's scripts, in the mix's order (empty without a mix).
    scripts: Vec<ScriptTally>,
}

/// A read-write step's transactions while it runs: how many made attempts, their attempts, the
/// aborts by the action they aborted at, and how many transactions took each number of attempts.
#[derive(Debug, Clone, Default)]
struct TransactionTally {
    transactions: u64,
    attempts: u64,
    by_attempts: BTreeMap<u32, u64>,
    aborts_at: BTreeMap<String, u64>,
    /// The waits for locks and the wounds the server named (bounded by key).
    conflicts: ConflictTally,
}

impl TransactionTally {
    fn aborts(&self) -> u64 {
        self.aborts_at.values().sum()
    }
}

/// The CPU a step's generator and process used, measured by the engine around it.
#[derive(Debug, Clone, Copy, Default)]
pub struct StepCpu {
    /// The generator thread's CPU time (open model), if measured.
    pub generator: Option<Duration>,
    /// The whole process's CPU time over the step (an in-process local instance included).
    pub process: Duration,
}

impl StepTally {
    /// An empty step at `level`.
    pub fn new(level: StepLevel) -> Self {
        StepTally {
            level,
            corrected: Latencies::new(),
            uncorrected: Latencies::new(),
            lag: Latencies::new(),
            ok: 0,
            errors: BTreeMap::new(),
            late: 0,
            dropped: 0,
            unfinished: 0,
            rows: 0,
            bytes: 0,
            last_end: Duration::ZERO,
            parts_us: [0; Part::ALL.len()],
            parts_seen: 0,
            decode_cpu: Duration::ZERO,
            work_cpu: Duration::ZERO,
            queue_us: 0,
            queued: 0,
            transactions: None,
            scripts: Vec::new(),
        }
    }

    /// The step split by the mix's scripts, `names` in the mix's order, beside its totals.
    pub fn with_scripts(mut self, names: &[String]) -> Self {
        self.scripts = names.iter().map(ScriptTally::new).collect();
        self
    }

    /// A request of the mix's `script`-th script ended: committed with `latency` from its
    /// intended start, or failed (`None`); `t` its transaction, when it made attempts. Goes in
    /// beside [`StepTally::ok`] or [`StepTally::error`], which count it in the step's totals.
    pub fn script_ended(
        &mut self,
        script: usize,
        latency: Option<Duration>,
        t: Option<&TransactionRecord>,
    ) {
        if let Some(tally) = self.scripts.get_mut(script) {
            let attempts = t.map_or(0, |t| t.attempts.len());
            let aborts = t.map_or(0, |t| {
                t.attempts
                    .iter()
                    .filter(|a| a.outcome == AttemptOutcome::Aborted)
                    .count() as u64
            });
            tally.ended(latency, attempts, aborts);
        }
    }

    /// An empty step of a read-write run at `level`: each request one transaction, its figures
    /// ([`StepTally::transaction`]) reported beside the latencies even when none ended.
    pub fn read_write(level: StepLevel) -> Self {
        StepTally {
            transactions: Some(TransactionTally::default()),
            ..StepTally::new(level)
        }
    }

    /// A transaction that ended (committed, failed or given up), with every attempt it made: its
    /// attempts counted, its aborts by the action they aborted at. Its latency and parts go in by
    /// [`StepTally::ok`] when it committed, its status by [`StepTally::error`] otherwise. A
    /// transaction that made no attempt is not counted here.
    pub fn transaction(&mut self, t: &TransactionRecord) {
        let n = t.attempts.len();
        if n == 0 {
            return;
        }
        let tally = self
            .transactions
            .get_or_insert_with(TransactionTally::default);
        tally.transactions += 1;
        tally.attempts = tally.attempts.saturating_add(n as u64);
        *tally
            .by_attempts
            .entry(u32::try_from(n).unwrap_or(u32::MAX))
            .or_insert(0) += 1;
        for a in t
            .attempts
            .iter()
            .filter(|a| a.outcome == AttemptOutcome::Aborted)
        {
            let at = a.ended_at.map_or("unknown", |k| k.as_str());
            *tally.aborts_at.entry(at.to_owned()).or_insert(0) += 1;
        }
        for a in &t.attempts {
            for wait in a.actions.iter().flat_map(|s| &s.lock_waits) {
                tally.conflicts.wait(wait);
            }
            if let Some(wound) = &a.wounded_by {
                tally.conflicts.wound(wound);
            }
        }
    }

    /// Of a request that ended ok, the wait the server reported in its queue (`ms`): inside its
    /// `server` part, kept beside the parts.
    pub fn queued(&mut self, ms: f64) {
        let us = (ms * 1e3).round().max(0.0) as u64;
        self.queue_us = self.queue_us.saturating_add(us);
        self.queued += 1;
    }

    /// A request that ended ok, with its accounting's parts.
    pub fn ok(&mut self, ended: &Ended, parts: &Parts) {
        self.ok += 1;
        self.corrected.record(ended.from_intended);
        self.uncorrected.record(ended.from_start);
        self.rows += ended.rows;
        self.bytes += ended.bytes;
        self.last_end = self.last_end.max(ended.at);
        for (part, ms) in parts.iter() {
            let us = (ms * 1e3).round().max(0.0) as u64;
            let slot = &mut self.parts_us[part.index()];
            *slot = slot.saturating_add(us);
        }
        self.parts_seen += 1;
        self.decode_cpu += ended.decode_cpu;
        self.work_cpu += ended.work_cpu;
    }

    /// A request that failed with `status` (a gRPC code in Spanner's spelling, or `OTHER`); the
    /// run goes on. Errors are counted, not put in the latency histograms.
    pub fn error(&mut self, status: &str, at: Duration) {
        *self.errors.entry(status.to_owned()).or_insert(0) += 1;
        self.last_end = self.last_end.max(at);
    }

    /// A start issued `lag` after the generator meant to wake for it.
    pub fn lag(&mut self, lag: Duration) {
        self.lag.record(lag);
    }

    /// A start that began `behind` its intended time: late past [`super::LATE_AFTER`].
    pub fn started(&mut self, behind: Duration) {
        if behind > super::LATE_AFTER {
            self.late += 1;
        }
    }

    /// Starts the step never issued (the step ended while they waited for room in flight).
    pub fn dropped(&mut self, n: u64) {
        self.dropped += n;
    }

    /// Requests abandoned in flight (the drain ran out, or the run was cancelled).
    pub fn unfinished(&mut self, n: u64) {
        self.unfinished += n;
    }

    /// The step's figures: `started` is its start from the run's, `cpu` what it used.
    pub fn finish(&self, started: Duration, generated: Duration, cpu: StepCpu) -> StepResult {
        let (target_rate, concurrency) = match self.level {
            StepLevel::Rate(r) => (Some(r), None),
            StepLevel::Concurrency(c) => (None, Some(c)),
        };
        let span = self.last_end.max(generated).as_secs_f64();
        let per_s = |n: u64| if span > 0.0 { n as f64 / span } else { 0.0 };
        let share = |h: &Latencies| {
            let n = h.count();
            (n > 0).then(|| h.count_above(SLOW) as f64 / n as f64)
        };
        let per_query = |d: Duration| (self.ok > 0).then(|| d.as_secs_f64() * 1e3 / self.ok as f64);
        let parts = Part::ALL
            .into_iter()
            .filter(|p| self.parts_us[p.index()] > 0 && self.parts_seen > 0)
            .map(|p| {
                let mean = self.parts_us[p.index()] as f64 / 1e3 / self.parts_seen as f64;
                (p.key().to_owned(), mean)
            })
            .collect();
        StepResult {
            target_rate,
            concurrency,
            started_s: started.as_secs_f64(),
            duration_s: span,
            achieved_rate: per_s(self.ok),
            p50_ms: self.corrected.quantile_ms(0.5),
            p90_ms: self.corrected.quantile_ms(0.9),
            p99_ms: self.corrected.quantile_ms(0.99),
            p999_ms: self.corrected.quantile_ms(0.999),
            max_ms: self.corrected.max_ms(),
            p50_uncorrected_ms: self.uncorrected.quantile_ms(0.5),
            p90_uncorrected_ms: self.uncorrected.quantile_ms(0.9),
            p99_uncorrected_ms: self.uncorrected.quantile_ms(0.99),
            over_100ms_share: share(&self.corrected),
            over_100ms_share_uncorrected: share(&self.uncorrected),
            count: self.ok,
            errors: self.errors.values().sum(),
            errors_by_status: self.errors.clone(),
            late: self.late,
            dropped: self.dropped,
            unfinished: self.unfinished,
            generator_lag_p99_ms: self.lag.quantile_ms(0.99),
            generator_lag_max_ms: self.lag.max_ms(),
            generator_cpu_ms: cpu.generator.map(|d| d.as_secs_f64() * 1e3),
            process_cpu_ms: cpu.process.as_secs_f64() * 1e3,
            rows: self.rows,
            bytes: self.bytes,
            rows_per_s: per_s(self.rows),
            bytes_per_s: per_s(self.bytes),
            decode_cpu_ms_per_query: per_query(self.decode_cpu),
            client_cpu_ms_per_query: per_query(self.decode_cpu + self.work_cpu),
            parts,
            server_queue_ms: (self.queued > 0)
                .then(|| self.queue_us as f64 / 1e3 / self.queued as f64),
            histogram: self.corrected.encode(),
            histogram_uncorrected: self.uncorrected.encode(),
            processes: Vec::new(),
            committed: self.transactions.as_ref().map(|_| self.ok),
            committed_per_s: self.transactions.as_ref().map(|_| per_s(self.ok)),
            attempts_per_s: self.transactions.as_ref().map(|t| per_s(t.attempts)),
            aborts_per_transaction: self
                .transactions
                .as_ref()
                .filter(|t| t.transactions > 0)
                .map(|t| t.aborts() as f64 / t.transactions as f64),
            attempts: self
                .transactions
                .as_ref()
                .map(|t| t.by_attempts.clone())
                .unwrap_or_default(),
            aborts_at: self
                .transactions
                .as_ref()
                .map(|t| t.aborts_at.clone())
                .unwrap_or_default(),
            conflicts: self
                .transactions
                .as_ref()
                .filter(|t| !t.conflicts.is_empty())
                .map(|t| t.conflicts.conflicts()),
            scripts: self.scripts.iter().map(|s| s.finish(span)).collect(),
        }
    }
}

/// One process's part of a merged step: what its own generator did, kept apart (a lagging
/// generator on one machine is not the others').
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProcessStep {
    /// Which run it was: its label and when it started.
    pub run: String,
    /// Its level (its rate, or its clients).
    pub level: f64,
    /// Its requests that ended ok, per second.
    pub achieved_rate: f64,
    /// Its requests that ended ok.
    pub count: u64,
    /// Its generator's lag, 99th percentile.
    pub generator_lag_p99_ms: Option<f64>,
    /// Its generator's largest lag.
    pub generator_lag_max_ms: Option<f64>,
    /// Its generator thread's CPU time.
    pub generator_cpu_ms: Option<f64>,
}

/// One step's figures. Latencies are from the intended start unless named `uncorrected` (from
/// the actual start); percentiles are `None` when no request ended ok.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepResult {
    /// The open model's arrival rate, per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate: Option<f64>,
    /// The closed model's requests in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// When the step began, in seconds from the run's start.
    pub started_s: f64,
    /// From its start to its last request's end (or to the end of its generation, if later),
    /// in seconds: what the rates divide by.
    pub duration_s: f64,
    /// Requests that ended ok, per second.
    pub achieved_rate: f64,
    /// Median latency from the intended start.
    pub p50_ms: Option<f64>,
    /// 90th percentile from the intended start.
    pub p90_ms: Option<f64>,
    /// 99th percentile from the intended start.
    pub p99_ms: Option<f64>,
    /// 99.9th percentile from the intended start.
    pub p999_ms: Option<f64>,
    /// The longest, from the intended start.
    pub max_ms: Option<f64>,
    /// Median from the actual start.
    pub p50_uncorrected_ms: Option<f64>,
    /// 90th percentile from the actual start.
    pub p90_uncorrected_ms: Option<f64>,
    /// 99th percentile from the actual start.
    pub p99_uncorrected_ms: Option<f64>,
    /// The share of requests over 100 ms from the intended start.
    pub over_100ms_share: Option<f64>,
    /// The share over 100 ms from the actual start.
    pub over_100ms_share_uncorrected: Option<f64>,
    /// Requests that ended ok.
    pub count: u64,
    /// Requests that failed.
    pub errors: u64,
    /// Failures by status (`RESOURCE_EXHAUSTED`, `DEADLINE_EXCEEDED`, ..., `OTHER`).
    pub errors_by_status: BTreeMap<String, u64>,
    /// Starts more than [`super::LATE_AFTER`] after their intended time.
    pub late: u64,
    /// Starts never issued: the step ended while they waited for room in flight.
    pub dropped: u64,
    /// Requests abandoned in flight (the drain ran out, or the run was cancelled).
    pub unfinished: u64,
    /// The generator's own lag, its 99th percentile: how late it woke for a start it was on time
    /// for (the open model; `None` for the closed one).
    pub generator_lag_p99_ms: Option<f64>,
    /// The generator's largest lag.
    pub generator_lag_max_ms: Option<f64>,
    /// The generator thread's CPU time over the step.
    pub generator_cpu_ms: Option<f64>,
    /// The process's CPU time over the step (an in-process local instance included).
    pub process_cpu_ms: f64,
    /// Rows decoded.
    pub rows: u64,
    /// Bytes received.
    pub bytes: u64,
    /// Rows per second.
    pub rows_per_s: f64,
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// The decoders' CPU time per request that ended ok.
    pub decode_cpu_ms_per_query: Option<f64>,
    /// The client's CPU time per request (decoding and its own work).
    pub client_cpu_ms_per_query: Option<f64>,
    /// The accounting's parts, each its mean per request that ended ok, by key; they add up
    /// to the mean latency from the actual start.
    pub parts: BTreeMap<String, f64>,
    /// Of the `server` part, the mean wait in the server's queue for a query thread, per request
    /// that reported one (the local instance's queue model): queueing shown under the server,
    /// never added to the parts. `None` where the server reports no queue (Cloud Spanner, the
    /// emulator, the local instance without its queue model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_queue_ms: Option<f64>,
    /// The latencies from the intended start, HdrHistogram's compressed encoding in base64.
    pub histogram: String,
    /// The latencies from the actual start, encoded alike.
    pub histogram_uncorrected: String,
    /// A merged step's processes, each with its own generator figures (`spanprof load merge`);
    /// empty for one process's step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessStep>,
    /// A read-write run's transactions that committed (its `count`); absent for a query's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed: Option<u64>,
    /// Transactions committed per second: the goodput (its `achieved_rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed_per_s: Option<f64>,
    /// Attempts per second, aborted ones included: the work the server was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts_per_s: Option<f64>,
    /// Aborted attempts per transaction that made an attempt (committed or not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborts_per_transaction: Option<f64>,
    /// How many transactions took each number of attempts (`{"1": 380, "2": 17}`): it sums to
    /// the transactions that made an attempt, committed or failed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attempts: BTreeMap<u32, u64>,
    /// Aborted attempts by the action they aborted at (`commit`, `dml`, `query`, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub aborts_at: BTreeMap<String, u64>,
    /// Who blocked whom, where the server named it (the local instance): the step's waits for
    /// locks and wounds, and the keys waited on most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflicts: Option<Conflicts>,
    /// A mix's scripts, each one's share of the step (empty without a mix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<ScriptShare>,
}

impl StepResult {
    /// The step's level.
    pub fn level(&self) -> StepLevel {
        match (self.target_rate, self.concurrency) {
            (_, Some(c)) => StepLevel::Concurrency(c),
            (Some(r), None) => StepLevel::Rate(r),
            (None, None) => StepLevel::Rate(0.0),
        }
    }

    /// A part's mean per request, 0 when absent.
    pub fn part_ms(&self, part: Part) -> f64 {
        self.parts.get(part.key()).copied().unwrap_or(0.0)
    }

    /// Every figure of the step that is a real number, by its JSON name (a part's by its key,
    /// a process's prefixed): what a report read back is checked on.
    pub fn figures(&self) -> Vec<(&str, f64)> {
        let optional = [
            ("target_rate", self.target_rate),
            ("p50_ms", self.p50_ms),
            ("p90_ms", self.p90_ms),
            ("p99_ms", self.p99_ms),
            ("p999_ms", self.p999_ms),
            ("max_ms", self.max_ms),
            ("p50_uncorrected_ms", self.p50_uncorrected_ms),
            ("p90_uncorrected_ms", self.p90_uncorrected_ms),
            ("p99_uncorrected_ms", self.p99_uncorrected_ms),
            ("over_100ms_share", self.over_100ms_share),
            (
                "over_100ms_share_uncorrected",
                self.over_100ms_share_uncorrected,
            ),
            ("generator_lag_p99_ms", self.generator_lag_p99_ms),
            ("generator_lag_max_ms", self.generator_lag_max_ms),
            ("generator_cpu_ms", self.generator_cpu_ms),
            ("decode_cpu_ms_per_query", self.decode_cpu_ms_per_query),
            ("client_cpu_ms_per_query", self.client_cpu_ms_per_query),
            ("server_queue_ms", self.server_queue_ms),
            ("committed_per_s", self.committed_per_s),
            ("attempts_per_s", self.attempts_per_s),
            ("aborts_per_transaction", self.aborts_per_transaction),
        ];
        let mut figures: Vec<(&str, f64)> = vec![
            ("started_s", self.started_s),
            ("duration_s", self.duration_s),
            ("achieved_rate", self.achieved_rate),
            ("process_cpu_ms", self.process_cpu_ms),
            ("rows_per_s", self.rows_per_s),
            ("bytes_per_s", self.bytes_per_s),
        ];
        figures.extend(optional.into_iter().filter_map(|(k, v)| Some((k, v?))));
        figures.extend(self.parts.iter().map(|(k, v)| (k.as_str(), *v)));
        for p in &self.processes {
            figures.push(("processes.level", p.level));
            figures.push(("processes.achieved_rate", p.achieved_rate));
            let lags = [
                ("processes.generator_lag_p99_ms", p.generator_lag_p99_ms),
                ("processes.generator_lag_max_ms", p.generator_lag_max_ms),
                ("processes.generator_cpu_ms", p.generator_cpu_ms),
            ];
            figures.extend(lags.into_iter().filter_map(|(k, v)| Some((k, v?))));
        }
        figures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(intended_ms: u64, start_ms: u64, at_ms: u64) -> Ended {
        Ended {
            from_intended: Duration::from_millis(intended_ms),
            from_start: Duration::from_millis(start_ms),
            at: Duration::from_millis(at_ms),
            rows: 10,
            bytes: 1000,
            decode_cpu: Duration::from_micros(500),
            work_cpu: Duration::from_micros(100),
        }
    }

    #[test]
    fn a_step_counts_errors_apart_and_shares_slow_requests_both_ways() {
        let mut step = StepTally::new(StepLevel::Rate(10.0));
        let parts = Parts::default();
        for i in 0..18u64 {
            step.ok(&ended(5, 5, 100 * i), &parts);
        }
        // Two waited 150 ms to start, then took 5 ms.
        step.ok(&ended(155, 5, 1900), &parts);
        step.ok(&ended(155, 5, 2000), &parts);
        step.error("RESOURCE_EXHAUSTED", Duration::from_millis(500));
        step.error("RESOURCE_EXHAUSTED", Duration::from_millis(600));
        step.error("DEADLINE_EXCEEDED", Duration::from_millis(700));
        step.started(Duration::from_millis(150));
        step.started(Duration::from_micros(100));
        step.dropped(3);
        let r = step.finish(Duration::ZERO, Duration::from_secs(2), StepCpu::default());
        assert_eq!(r.count, 20);
        assert_eq!(r.errors, 3);
        assert_eq!(r.errors_by_status["RESOURCE_EXHAUSTED"], 2);
        assert_eq!(r.over_100ms_share, Some(0.1));
        assert_eq!(r.over_100ms_share_uncorrected, Some(0.0));
        assert_eq!((r.late, r.dropped), (1, 3));
        assert!((r.achieved_rate - 10.0).abs() < 1e-9, "{}", r.achieved_rate);
        assert_eq!(r.rows, 200);
        assert!((r.bytes_per_s - 10_000.0).abs() < 1e-6);
        assert!((r.decode_cpu_ms_per_query.expect("some") - 0.5).abs() < 1e-9);
        assert!((r.client_cpu_ms_per_query.expect("some") - 0.6).abs() < 1e-9);
        assert_eq!(r.target_rate, Some(10.0));
        assert_eq!(r.concurrency, None);
        assert_eq!(r.generator_lag_p99_ms, None, "nothing recorded");
        let back = Latencies::decode(&r.histogram).expect("encoded");
        assert_eq!(back.count(), 20);
    }

    #[test]
    fn an_empty_step_has_no_percentiles_and_no_rate() {
        let r = StepTally::new(StepLevel::Concurrency(4)).finish(
            Duration::from_secs(3),
            Duration::ZERO,
            StepCpu::default(),
        );
        assert_eq!(r.p99_ms, None);
        assert_eq!(r.over_100ms_share, None);
        assert_eq!(r.achieved_rate, 0.0);
        assert_eq!(r.level(), StepLevel::Concurrency(4));
    }

    /// A transaction of `outcomes`, each aborted one at `at`.
    fn transaction(
        outcomes: &[AttemptOutcome],
        at: crate::report::ActionKind,
    ) -> TransactionRecord {
        TransactionRecord {
            attempts: outcomes
                .iter()
                .map(|&o| crate::report::Attempt {
                    ended_at: (o == AttemptOutcome::Aborted).then_some(at),
                    ..crate::report::Attempt::new(o)
                })
                .collect(),
            ..TransactionRecord::default()
        }
    }

    fn read_write_step() -> StepResult {
        use crate::report::ActionKind;
        use AttemptOutcome::{Aborted, Committed, Failed};
        let mut step = StepTally::read_write(StepLevel::Concurrency(2));
        for i in 0..8u64 {
            step.ok(&ended(5, 5, 100 * i), &Parts::default());
            step.transaction(&transaction(&[Committed], ActionKind::Commit));
        }
        step.ok(&ended(30, 30, 900), &Parts::default());
        step.transaction(&transaction(&[Aborted, Committed], ActionKind::Commit));
        step.ok(&ended(30, 30, 950), &Parts::default());
        step.transaction(&transaction(
            &[Aborted, Aborted, Committed],
            ActionKind::Dml,
        ));
        // One failed at a statement after an abort, one gave up after two aborts.
        step.error("INVALID_ARGUMENT", Duration::from_millis(960));
        step.transaction(&transaction(&[Aborted, Failed], ActionKind::Commit));
        step.error("ABORTED", Duration::from_millis(970));
        step.transaction(&transaction(&[Aborted, Aborted], ActionKind::Commit));
        step.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default())
    }

    #[test]
    fn a_read_write_step_counts_attempts_aborts_and_goodput_apart() {
        let r = read_write_step();
        assert_eq!(r.committed, Some(10));
        assert_eq!(r.count, 10);
        assert_eq!(r.errors, 2);
        assert_eq!(r.errors_by_status["ABORTED"], 1);
        assert_eq!(r.attempts, BTreeMap::from([(1, 8), (2, 3), (3, 1)]));
        assert_eq!(
            r.attempts.values().sum::<u64>(),
            r.count + r.errors,
            "every transaction that made an attempt"
        );
        assert_eq!(
            r.aborts_at,
            BTreeMap::from([("commit".to_owned(), 4), ("dml".to_owned(), 2)])
        );
        // 6 aborts over 12 transactions; 17 attempts and 10 commits in the step's second.
        assert_eq!(r.aborts_per_transaction, Some(0.5));
        assert_eq!(r.attempts_per_s, Some(17.0));
        assert_eq!(r.committed_per_s, Some(10.0));
        assert_eq!(r.committed_per_s, Some(r.achieved_rate));
    }

    #[test]
    fn the_transaction_fields_are_absent_for_a_query_run_and_read_back_for_a_read_write_one() {
        let query = StepTally::new(StepLevel::Rate(10.0)).finish(
            Duration::ZERO,
            Duration::from_secs(1),
            StepCpu::default(),
        );
        let json = serde_json::to_value(&query).expect("serialises");
        for key in [
            "committed",
            "committed_per_s",
            "attempts_per_s",
            "aborts_per_transaction",
            "attempts",
            "aborts_at",
        ] {
            assert!(json.get(key).is_none(), "{key} in a query's step: {json}");
        }
        let back: StepResult = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, query);

        let rw = read_write_step();
        let json = serde_json::to_value(&rw).expect("serialises");
        assert_eq!(json["committed"], 10);
        assert_eq!(json["attempts"]["2"], 3, "{json}");
        assert_eq!(json["aborts_at"]["commit"], 4);
        let back: StepResult = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, rw);

        // A read-write step in which nothing ended still says so.
        let empty = StepTally::read_write(StepLevel::Concurrency(1)).finish(
            Duration::ZERO,
            Duration::from_secs(1),
            StepCpu::default(),
        );
        assert_eq!(empty.committed, Some(0));
        assert_eq!(empty.aborts_per_transaction, None);
    }
}
