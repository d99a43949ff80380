//! Running a profile: warm-up plus N timed iterations of one or more query variants against a
//! target, on the engine's own tokio runtime in a named thread. The variants' iterations are
//! interleaved by default ([`schedule`]), so the machine's drift falls on all of them alike. The
//! caller never blocks: it reads plain [`EngineEvent`]s from a channel (a notify callback tells it
//! when one is waiting) and can cancel at any moment. Talking to the instance is the client layer's
//! job ([`Session`]); the engine keeps the run loop, the events and cancellation.

pub mod cold;
pub mod details;
pub mod load;
pub mod schedule;
pub mod subject;
pub mod sweep;
pub mod target;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::Notify;

use crate::client::{
    ClientError, Decoding, IterationError, IterationTiming, OptionError, PreparedQuery, Query,
    ResumePolicy, Session,
};
pub use crate::client::{
    DatabasePath, HeaderOptions, Param, ParamError, Partitioned, Priority, QueryMode,
    RequestOptions, SessionKind, Staleness, Timeouts,
};
use crate::report::{
    IterationRecord, RUN_MESSAGE_LIMIT, RunConfig, RunReport, Status, SweepPoint, Timeline,
};
use crate::wire::{DecoderKind, RowsView, Timestamp};
pub use details::{IterationDetails, PREVIEW_ROWS};
pub use schedule::{Order, Step, schedule};
pub use subject::{DEFAULT_COMMAND_LIMIT, DEFAULT_SUBJECT_SQL, SubjectSpec};
pub use sweep::{SweepError, SweepSpec, parse_sweep};
pub use target::{Connected, StartLocalError, Target, connect};

/// How long the end of a run waits for the server to delete its session. The wait happens on the
/// engine's own thread, never the caller's.
pub const SESSION_DELETE_WAIT: Duration = Duration::from_secs(2);

/// One thing a profile runs and compares: a query as the user states it, under a label.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// Its label: its run's name in reports, exports and comparisons.
    pub label: String,
    /// One SQL statement.
    pub sql: String,
    /// Its parameters.
    pub params: Vec<Param>,
    /// The query mode.
    pub mode: QueryMode,
    /// How the query is asked.
    pub options: RequestOptions,
    /// When the variant is one point of a sweep: the swept parameter and its value here.
    pub sweep: Option<SweepPoint>,
    /// Every iteration a cold start: a new connection, token source and session first, each step
    /// timed ([`cold`]).
    pub cold: bool,
    /// The kind of session to ask for; `None`: [`Variant::session_kind`]'s default.
    pub session: Option<SessionKind>,
}

impl Variant {
    /// `sql` under `label`, with statistics, no parameters, no options.
    pub fn new(label: impl Into<String>, sql: impl Into<String>) -> Self {
        Variant {
            label: label.into(),
            sql: sql.into(),
            params: Vec::new(),
            mode: QueryMode::default(),
            options: RequestOptions::default(),
            sweep: None,
            cold: false,
            session: None,
        }
    }

    /// The kind of session its queries run on: the one asked for, else multiplexed (the official
    /// clients' default for read-only work), or regular for a partitioned read (Spanner has not
    /// always taken partitioned operations on a multiplexed session).
    pub fn session_kind(&self) -> SessionKind {
        self.session
            .unwrap_or(if self.options.partitioned.is_some() {
                SessionKind::Regular
            } else {
                SessionKind::Multiplexed
            })
    }

    /// The query as the client layer takes it.
    pub fn query(&self) -> Query {
        Query {
            sql: self.sql.clone(),
            params: self.params.clone(),
            mode: self.mode,
            options: self.options.clone(),
        }
    }
}

/// What to profile.
#[derive(Debug, Clone)]
pub struct ProfileSpec {
    /// The database.
    pub database: DatabasePath,
    /// The variants, at least one, with distinct labels; the first is the comparisons' reference
    /// unless said otherwise.
    pub variants: Vec<Variant>,
    /// Timed iterations of each variant.
    pub iterations: u32,
    /// Untimed iterations of each variant first (reported, marked warm-up).
    pub warmup: u32,
    /// The decoder that turns the stream into rows.
    pub decoder: DecoderKind,
    /// How long connecting, each call and each iteration may take.
    pub timeouts: Timeouts,
    /// The order of the variants' timed iterations.
    pub order: Order,
    /// The official clients' optional headers: the AFE timing opt-in, end-to-end tracing.
    pub headers: HeaderOptions,
}

impl Default for ProfileSpec {
    /// `SELECT * FROM Seed23 LIMIT 1000` labelled `run` on the default database, with statistics,
    /// 10 iterations after one warm-up. Callers set what they need and take the rest from here.
    fn default() -> Self {
        ProfileSpec {
            database: DatabasePath::default(),
            variants: vec![Variant::new("run", "SELECT * FROM Seed23 LIMIT 1000")],
            iterations: 10,
            warmup: 1,
            decoder: DecoderKind::default(),
            timeouts: Timeouts::DEFAULT,
            order: Order::default(),
            headers: HeaderOptions::default(),
        }
    }
}

/// The most variants one profile runs (a sweep's values and a workload's queries together).
pub const MAX_VARIANTS: usize = 1000;

/// A profile that cannot run as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// No variant to run.
    #[error("nothing to run: a profile needs at least one query")]
    NoVariants,
    /// Two variants share a label, so their runs could not be told apart.
    #[error("two variants are labelled \"{0}\": labels name runs and must differ")]
    DuplicateLabel(String),
    /// More variants than a profile runs.
    #[error(
        "{0} variants: a profile runs at most {MAX_VARIANTS} (each runs every iteration, interleaved)"
    )]
    TooManyVariants(usize),
    /// A label that is empty, too long or holds control characters.
    #[error("the label \"{0}\" is not a label: 1 to 200 bytes of printable text")]
    BadLabel(String),
    /// A variant's request options cannot be used together.
    #[error("{label}: {error}")]
    Options {
        /// The variant.
        label: String,
        /// What is wrong.
        error: OptionError,
    },
}

impl ProfileSpec {
    /// Checks what can be checked before anything runs: at least one variant, labels that are
    /// labels and differ, options that go together.
    pub fn check(&self) -> Result<(), SpecError> {
        if self.variants.is_empty() {
            return Err(SpecError::NoVariants);
        }
        if self.variants.len() > MAX_VARIANTS {
            return Err(SpecError::TooManyVariants(self.variants.len()));
        }
        let mut labels = std::collections::HashSet::with_capacity(self.variants.len());
        for v in &self.variants {
            let label = &v.label;
            if label.is_empty() || label.len() > 200 || label.chars().any(char::is_control) {
                return Err(SpecError::BadLabel(crate::text::excerpt(label, 80)));
            }
            if !labels.insert(label.as_str()) {
                return Err(SpecError::DuplicateLabel(label.clone()));
            }
            v.options.check().map_err(|error| SpecError::Options {
                label: label.clone(),
                error,
            })?;
            if v.options.partitioned.is_some() && v.mode != QueryMode::Normal {
                return Err(SpecError::Options {
                    label: label.clone(),
                    error: OptionError {
                        option: "partitioned".into(),
                        value: v.mode.as_str().into(),
                        why: crate::client::options::PARTITIONED_MODE.into(),
                    },
                });
            }
        }
        Ok(())
    }

    /// The configuration of `variant`'s run as its report records it.
    fn run_config(&self, variant: &Variant, target: &Target) -> RunConfig {
        RunConfig {
            label: variant.label.clone(),
            target: target.report_name(),
            sql: variant.sql.clone(),
            params: variant
                .params
                .iter()
                .map(|p| (format!("{}:{}", p.name, p.type_name), p.value.clone()))
                .collect(),
            query_mode: variant.mode,
            iterations: self.iterations,
            warmup: self.warmup,
            decoder: self.decoder.into(),
            options: variant.options.describe(),
            sweep: variant.sweep.clone(),
            cold: variant.cold,
            order: if self.variants.len() > 1 {
                self.order.describe()
            } else {
                String::new()
            },
            client_host: host_name(),
            timeouts: self.timeouts.describe(),
            ..RunConfig::default()
        }
    }
}

/// The name of the machine this runs on (the kernel's, else `$HOSTNAME`), empty when neither
/// says.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().chars().take(255).collect())
        .unwrap_or_default()
}

/// Why a run could not start.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    /// The built-in local instance could not start.
    #[error(transparent)]
    StartLocal(#[from] StartLocalError),
    /// The target, the session or a query's preparation failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The profile cannot run as asked.
    #[error(transparent)]
    Spec(#[from] SpecError),
}

/// What the engine reports, in order: `Connected` (or `Failed`), then per iteration any number of
/// `Progress` and one `Iteration`, with each variant's last iteration (when it ended ok) followed
/// by its `Details`, then `Finished`.
#[derive(Debug, Clone)]
pub enum EngineEvent {
    /// The target is reachable and a session exists; creating it took `session_ms` (not counted in
    /// any iteration).
    Connected {
        /// A description of the target.
        target: String,
        /// Milliseconds to create the session.
        session_ms: f64,
    },
    /// Rows decoded so far in the current iteration (sent at most every 100 ms).
    Progress {
        /// The variant running.
        variant: usize,
        /// Its 0-based iteration number, warm-ups first.
        iteration: u32,
        /// The iteration's place in the whole schedule, from 0.
        step: u32,
        /// Iterations in the whole schedule, every variant's warm-ups included.
        steps: u32,
        /// Rows decoded so far in this iteration.
        rows: u64,
        /// Bytes of the messages those rows came from.
        wire_bytes: u64,
    },
    /// An iteration ended (ok, error or cancelled); its `run` names its variant.
    Iteration(Box<IterationRecord>),
    /// What a variant's last iteration returned: a bounded preview of its rows, its statistics and
    /// plan, and the server timing.
    Details(Box<IterationDetails>),
    /// The run ended; one report per variant, in the variants' order, holds its iterations.
    Finished(Vec<RunReport>),
    /// The run could not start (an unreachable target, no session, a bad parameter or option...).
    Failed(EngineError),
}

/// Shared between the engine and its handle.
#[derive(Debug, Default)]
struct Cancel {
    flag: AtomicBool,
    notify: Notify,
}

impl Cancel {
    fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

/// A running profile. Dropping it cancels the run and returns at once: the engine's thread
/// abandons the iteration in flight, deletes the session (waiting at most
/// [`SESSION_DELETE_WAIT`]) and ends on its own.
#[derive(Debug)]
pub struct Engine {
    cancel: Arc<Cancel>,
    events: mpsc::Receiver<EngineEvent>,
}

/// Called after each event is sent (the app asks for a repaint there).
pub type Notifier = Arc<dyn Fn() + Send + Sync>;

impl Engine {
    /// Starts a run on a new thread with its own runtime.
    pub fn start(target: Target, spec: ProfileSpec, notify: Notifier) -> std::io::Result<Engine> {
        let (tx, events) = mpsc::channel();
        let cancel = Arc::new(Cancel::default());
        let engine_cancel = Arc::clone(&cancel);
        std::thread::Builder::new()
            .name("spanprof-engine".into())
            .spawn(move || {
                let sink = Sink { tx, notify };
                match runtime("spanprof-engine-io") {
                    Ok(rt) => rt.block_on(run(target, spec, &sink, &engine_cancel)),
                    Err(e) => sink.send(EngineEvent::Failed(e.into())),
                }
            })?;
        Ok(Engine { cancel, events })
    }

    /// Asks the run to stop: the current iteration is abandoned (reported as cancelled) at once.
    pub fn cancel(&self) {
        self.cancel.flag.store(true, Ordering::SeqCst);
        self.cancel.notify.notify_one();
    }

    /// The next event, if one is waiting.
    pub fn try_next(&self) -> Option<EngineEvent> {
        self.events.try_recv().ok()
    }

    /// Waits for the next event; `None` once the engine has ended and every event was read.
    pub fn next(&self) -> Option<EngineEvent> {
        self.events.recv().ok()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // The thread is not joined: it ends by itself once the session is deleted, and a caller
        // that drops the handle (a window closing) must not wait for a server's answer.
        self.cancel();
    }
}

/// The engine's runtime: two workers, named.
fn runtime(name: &str) -> Result<tokio::runtime::Runtime, ClientError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(|e| ClientError::Runtime(Arc::new(e)))
}

struct Sink {
    tx: mpsc::Sender<EngineEvent>,
    notify: Notifier,
}

impl Sink {
    fn send(&self, event: EngineEvent) {
        // A caller that dropped its receiver no longer wants events.
        let _ = self.tx.send(event);
        (self.notify)();
    }
}

/// `now` in RFC 3339 UTC.
fn now_rfc3339() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp::new(d.as_secs() as i64, d.subsec_nanos())
        .map(|t| t.to_string())
        .unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

async fn run(target: Target, spec: ProfileSpec, sink: &Sink, cancel: &Cancel) {
    let started_at = now_rfc3339();
    let mut reports: Vec<RunReport> = spec
        .variants
        .iter()
        .map(|v| RunReport {
            config: spec.run_config(v, &target),
            started_at: started_at.clone(),
            iterations: Vec::new(),
            plans: Default::default(),
            stopped: None,
        })
        .collect();
    if let Err(e) = spec.check() {
        return sink.send(EngineEvent::Failed(e.into()));
    }
    let opening = tokio::select! {
        o = cold::RunSessions::open(&target, &spec) => Some(o),
        _ = cancel.notify.notified() => None,
    };
    let (sessions, queries) = match opening {
        Some(Ok(opened)) => opened,
        Some(Err(e)) => return sink.send(EngineEvent::Failed(e)),
        None => return sink.send(EngineEvent::Finished(reports)),
    };
    sessions.note_kinds(&spec.variants, &mut reports);
    sink.send(EngineEvent::Connected {
        target: sessions.first().description().to_owned(),
        session_ms: ms(sessions.first().created_in()),
    });
    let steps = schedule(
        spec.variants.len(),
        spec.warmup,
        spec.iterations,
        spec.order,
    );
    let total = u32::try_from(steps.len()).unwrap_or(u32::MAX);
    // Where each variant runs for the last time: its details are kept there.
    let mut last_of = vec![0usize; spec.variants.len()];
    for (i, step) in steps.iter().enumerate() {
        last_of[step.variant] = i;
    }
    for (seq, &step) in (0u32..).zip(&steps) {
        // A variant whose first iteration failed for good runs no more: every later one would
        // fail alike.
        if reports[step.variant].stopped.is_some() {
            continue;
        }
        let variant = &spec.variants[step.variant];
        let last = last_of[step.variant] == seq as usize;
        let at = Position {
            step,
            seq,
            steps: total,
            kept_messages: RUN_MESSAGE_LIMIT.saturating_sub(kept_messages(&reports[step.variant])),
        };
        let (record, details) = if cancel.is_set() {
            (cancelled_record(variant, at), None)
        } else {
            let mut preview = details::Preview::new(if last { PREVIEW_ROWS } else { 0 });
            let query = &queries[step.variant];
            let (record, timing) = cold::iteration(
                &sessions,
                query,
                (&spec, variant),
                at,
                &mut preview,
                sink,
                cancel,
            )
            .await;
            // Each iteration's plan goes into the report (its fingerprint, its operators' figures);
            // the emulator's PROFILE answers carry an empty plan, which is no plan.
            if let Some(nodes) = timing
                .as_ref()
                .and_then(|t| t.stats.as_ref()?.plan.as_deref())
                .filter(|nodes| !nodes.is_empty())
            {
                reports[step.variant].plans.record(step.iteration, nodes);
            }
            let details = timing
                .filter(|_| last)
                .map(|t| iteration_details(variant, step.iteration, t, preview));
            (record, details)
        };
        let stop = record.status == Status::Cancelled;
        let report = &mut reports[step.variant];
        if report.iterations.is_empty() && record.failed_for_good() {
            report.stopped = Some(stopped_because(&record));
        }
        report.iterations.push(record.clone());
        sink.send(EngineEvent::Iteration(Box::new(record)));
        if let Some(details) = details {
            sink.send(EngineEvent::Details(Box::new(details)));
        }
        if stop {
            break;
        }
    }
    sessions.close().await;
    sink.send(EngineEvent::Finished(reports));
}

/// Why a variant stopped after its first iteration: its error, and that no retry can fix it.
fn stopped_because(record: &IterationRecord) -> String {
    format!(
        "stopped after the first iteration: {} (an error no retry can fix)",
        record
            .error
            .as_deref()
            .unwrap_or("the server refused the query")
    )
}

/// Where an iteration falls: its variant and number, and its place in the schedule.
#[derive(Debug, Clone, Copy)]
struct Position {
    step: Step,
    seq: u32,
    steps: u32,
    /// What is left of the run's [`RUN_MESSAGE_LIMIT`] for the iteration's timeline.
    kept_messages: usize,
}

/// Messages the timelines of `report` keep one by one.
fn kept_messages(report: &RunReport) -> usize {
    let lanes = report
        .iterations
        .iter()
        .filter_map(|r| r.timeline.as_ref())
        .flat_map(|t| &t.lanes);
    lanes.map(|lane| lane.messages.len()).sum()
}

fn cancelled_record(variant: &Variant, at: Position) -> IterationRecord {
    IterationRecord {
        status: Status::Cancelled,
        error: Some("cancelled".into()),
        ..blank_record(variant, at)
    }
}

fn blank_record(variant: &Variant, at: Position) -> IterationRecord {
    IterationRecord {
        seq: Some(at.seq),
        ..IterationRecord::new(
            variant.label.clone(),
            at.step.iteration,
            at.step.warmup,
            now_rfc3339(),
        )
    }
}

/// The details of a variant's last iteration: its kept rows as text, with its columns' headings.
fn iteration_details(
    variant: &Variant,
    iteration: u32,
    timing: IterationTiming,
    preview: details::Preview,
) -> IterationDetails {
    IterationDetails {
        run: variant.label.clone(),
        iteration,
        columns: details::column_headings(timing.columns.as_deref().unwrap_or_default()),
        rows: preview.into_text(),
        rows_total: timing.rows,
        stats: timing.stats,
        server_timing: timing.server_timing,
        partitions: timing.partitions,
        request_id: timing.request_id.map(|id| id.to_string()),
        trace_id: timing.trace_id,
        operation: timing.operation,
        attempts: timing.attempts,
    }
}

/// Runs one iteration of `variant` at `at`; rows stream past `preview`. The timing comes back too
/// when the iteration ended ok.
async fn one_iteration(
    session: &Session,
    query: &PreparedQuery,
    (spec, variant): (&ProfileSpec, &Variant),
    at: Position,
    preview: &mut details::Preview,
    sink: &Sink,
    cancel: &Cancel,
) -> (IterationRecord, Option<IterationTiming>) {
    let mut record = blank_record(variant, at);
    let started = Instant::now();
    let (mut rows, mut wire_bytes) = (0u64, 0u64);
    let mut last_progress = Instant::now();
    let mut on_rows = |batch: RowsView<'_>, message_bytes: usize| {
        preview.keep(batch);
        rows += batch.len() as u64;
        wire_bytes += message_bytes as u64;
        if last_progress.elapsed() >= Duration::from_millis(100) {
            last_progress = Instant::now();
            sink.send(EngineEvent::Progress {
                variant: at.step.variant,
                iteration: at.step.iteration,
                step: at.seq,
                steps: at.steps,
                rows,
                wire_bytes,
            });
        }
    };
    let outcome = tokio::select! {
        r = session.execute_identified(
            query,
            ResumePolicy::default(),
            Decoding {
                kept_messages: at.kept_messages,
                ..Decoding::new(spec.decoder, &mut on_rows)
            },
        ) => Some(r),
        _ = cancel.notify.notified() => None,
    };
    match outcome {
        Some((_, Ok(timing))) => {
            fill(&mut record, &timing);
            return (record, Some(timing));
        }
        Some((ids, Err(e))) => {
            record.status = Status::Error;
            record.request_id = ids.request_id.map(|id| id.to_string());
            record.trace_id = ids.trace_id;
            if let IterationError::RowCountMismatch { server, decoded } = &e {
                record.rows = *decoded;
                record.server_rows = Some(*server);
            }
            record.error = Some(e.to_string());
            record.error_code = e.status_code();
        }
        None => {
            record.status = Status::Cancelled;
            record.error = Some("cancelled".into());
        }
    }
    record.total_ms = ms(started.elapsed());
    (record, None)
}

/// A recorded execution: the stream as the decoder consumed it, in the stream-file format.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The stream file's bytes.
    pub file: Vec<u8>,
    /// What the iteration measured.
    pub timing: IterationTiming,
}

/// Why a recording could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// The built-in local instance could not start.
    #[error(transparent)]
    StartLocal(#[from] StartLocalError),
    /// No session, or the query could not be prepared.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The profile cannot run as asked.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The execution failed.
    #[error(transparent)]
    Iteration(#[from] IterationError),
}

impl From<EngineError> for RecordingError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::StartLocal(e) => RecordingError::StartLocal(e),
            EngineError::Client(e) => RecordingError::Client(e),
            EngineError::Spec(e) => RecordingError::Spec(e),
        }
    }
}

/// Runs the first variant's query once (blocking the calling thread on a runtime of its own) and
/// records every message the decoder consumed, after any resume, so that `spanprof decode`
/// reproduces its rows offline.
pub fn record(target: Target, spec: &ProfileSpec) -> Result<Recording, RecordingError> {
    spec.check()?;
    runtime("spanprof-record")?.block_on(async {
        let (sessions, queries) = cold::RunSessions::open(&target, spec).await?;
        let query = queries
            .into_iter()
            .next()
            .ok_or(RecordingError::Spec(SpecError::NoVariants))?;
        let mut file = Vec::new();
        let outcome = sessions
            .first()
            .execute(
                &query,
                ResumePolicy::default(),
                Decoding {
                    recording: Some(&mut file),
                    ..Decoding::new(spec.decoder, &mut |_, _| {})
                },
            )
            .await;
        sessions.close().await;
        Ok(Recording {
            file,
            timing: outcome?,
        })
    })
}

/// Copies an iteration's measurements into its record.
pub fn fill(record: &mut IterationRecord, t: &IterationTiming) {
    let stats = t.stats.as_ref().map(|s| &s.query_stats);
    record.total_ms = ms(t.total);
    record.ttfb_ms = t.ttfb.map(ms);
    record.network_ms = Some(ms(t.network));
    record.wire_decode_ms = Some(ms(t.wire_decode));
    record.row_decode_ms = Some(ms(t.row_decode));
    record.other_ms = Some(ms(t.other()));
    record.server_ms = stats.and_then(|s| s.elapsed).map(ms);
    record.server_cpu_ms = stats.and_then(|s| s.cpu_time).map(ms);
    record.gfe_ms = t.server_timing.gfe.map(ms);
    record.afe_ms = t.server_timing.afe.map(ms);
    record.rows = t.rows;
    record.server_rows = stats.and_then(|s| s.rows_returned);
    record.messages = t.counters.messages;
    record.chunked_values = t.counters.chunked_values;
    record.wire_bytes = t.counters.wire_bytes;
    record.resumes = t.resumes;
    record.wire_decode_cpu_ms = Some(ms(t.wire_decode_cpu));
    record.row_decode_cpu_ms = Some(ms(t.row_decode_cpu));
    record.descheduled_ms = Some(ms(t.descheduled));
    record.client_work_ms = Some(ms(t.client_work));
    record.client_work_cpu_ms = Some(ms(t.client_work_cpu));
    record.backoff_ms = Some(ms(t.backoff));
    record.partition_query_ms = t.partition_query.map(ms);
    record.server_client_wait_ms = stats.and_then(|s| s.client_wait).map(ms);
    record.request_id = t.request_id.map(|id| id.to_string());
    record.trace_id.clone_from(&t.trace_id);
    record.operation_ms = t.operation.map(ms);
    record.attempts = u32::try_from(t.attempts.len()).ok().filter(|&n| n > 0);
    record.attempt_ms = t.attempts.iter().copied().map(ms).collect();
    record.timeline = (!t.lanes.is_empty()).then(|| Timeline {
        lanes: t.lanes.clone(),
        total_us: u64::try_from(t.total.as_micros()).unwrap_or(u64::MAX),
        setup: Vec::new(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(labels: impl IntoIterator<Item = String>) -> ProfileSpec {
        ProfileSpec {
            variants: labels
                .into_iter()
                .map(|l| Variant::new(&l, "SELECT 1"))
                .collect(),
            ..ProfileSpec::default()
        }
    }

    #[test]
    fn variants_are_capped_and_duplicates_found_among_many() {
        let many = spec((0..100_000).map(|i| format!("n={i}")));
        assert_eq!(many.check(), Err(SpecError::TooManyVariants(100_000)));
        let mut labels: Vec<String> = (0..MAX_VARIANTS - 1).map(|i| format!("n={i}")).collect();
        labels.push("n=7".into());
        assert_eq!(
            spec(labels).check(),
            Err(SpecError::DuplicateLabel("n=7".into()))
        );
        assert_eq!(
            spec((0..MAX_VARIANTS).map(|i| format!("n={i}"))).check(),
            Ok(())
        );
    }

    #[test]
    fn a_huge_label_is_not_echoed_whole() {
        let huge = "x".repeat(10 << 20);
        let Err(error) = spec([huge]).check() else {
            panic!("a 10 MB label is refused");
        };
        let text = error.to_string();
        assert!(text.len() < 300, "{} bytes", text.len());
        assert!(text.contains("10485760 bytes"), "{text}");
    }
}
