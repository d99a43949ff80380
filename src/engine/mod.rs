//! Running a profile: warm-up plus N timed iterations of one query against a target, on the engine's
//! own tokio runtime in a named thread. The caller never blocks: it reads plain [`EngineEvent`]s from a
//! channel (a notify callback tells it when one is waiting) and can cancel at any moment. Talking to
//! the instance is the client layer's job ([`Session`]); the engine keeps the run loop, the events and
//! cancellation.

pub mod details;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::Notify;

use crate::client::{
    ClientError, Decoding, IterationError, IterationTiming, PreparedQuery, Query, ResumePolicy,
    Session,
};
pub use crate::client::{DatabasePath, Param, ParamError, QueryMode, Target, Timeouts};
use crate::report::{IterationRecord, RunConfig, RunReport, Status};
use crate::wire::{DecoderKind, RowsView, Timestamp};
pub use details::{IterationDetails, PREVIEW_ROWS};

/// How long the end of a run waits for the server to delete its session. The wait happens on the
/// engine's own thread, never the caller's.
pub const SESSION_DELETE_WAIT: Duration = Duration::from_secs(2);

/// What to profile.
#[derive(Debug, Clone)]
pub struct ProfileSpec {
    /// The run's label.
    pub label: String,
    /// The database.
    pub database: DatabasePath,
    /// One SQL statement.
    pub sql: String,
    /// Its parameters.
    pub params: Vec<Param>,
    /// The query mode.
    pub mode: QueryMode,
    /// Timed iterations.
    pub iterations: u32,
    /// Untimed iterations first (reported, marked warm-up).
    pub warmup: u32,
    /// The decoder that turns the stream into rows.
    pub decoder: DecoderKind,
    /// How long connecting, each call and each iteration may take.
    pub timeouts: Timeouts,
}

impl Default for ProfileSpec {
    /// `SELECT * FROM Seed23 LIMIT 1000` on the default database, with statistics, 10 iterations after
    /// one warm-up. Callers set what they need and take the rest from here.
    fn default() -> Self {
        ProfileSpec {
            label: "run".into(),
            database: DatabasePath::default(),
            sql: "SELECT * FROM Seed23 LIMIT 1000".into(),
            params: Vec::new(),
            mode: QueryMode::default(),
            iterations: 10,
            warmup: 1,
            decoder: DecoderKind::default(),
            timeouts: Timeouts::DEFAULT,
        }
    }
}

impl ProfileSpec {
    /// The query as the client layer takes it.
    pub fn query(&self) -> Query {
        Query {
            sql: self.sql.clone(),
            params: self.params.clone(),
            mode: self.mode,
        }
    }

    /// The run's configuration as its report records it.
    fn run_config(&self, target: &Target) -> RunConfig {
        RunConfig {
            label: self.label.clone(),
            target: target.report_name(),
            sql: self.sql.clone(),
            params: self
                .params
                .iter()
                .map(|p| (format!("{}:{}", p.name, p.type_name), p.value.clone()))
                .collect(),
            query_mode: self.mode.as_str().into(),
            iterations: self.iterations,
            warmup: self.warmup,
            decoder: self.decoder.as_str().into(),
        }
    }
}

/// What the engine reports, in order: `Connected` (or `Failed`), then per iteration any number of
/// `Progress` and one `Iteration`, then (after a last iteration that ended ok) `Details`, then
/// `Finished`.
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
        /// 0-based iteration number, warm-ups first.
        iteration: u32,
        /// Iterations in all, warm-ups included.
        of: u32,
        /// Rows decoded so far in this iteration.
        rows: u64,
        /// Bytes of the messages those rows came from.
        wire_bytes: u64,
    },
    /// An iteration ended (ok, error or cancelled).
    Iteration(IterationRecord),
    /// What the run's last iteration returned: a bounded preview of its rows, its statistics and
    /// plan, and the server timing.
    Details(Box<IterationDetails>),
    /// The run ended; the report holds every iteration.
    Finished(RunReport),
    /// The run could not start (unreachable target, no session, a bad parameter...).
    Failed(ClientError),
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
                    Err(e) => sink.send(EngineEvent::Failed(e)),
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

/// Opens a session and prepares the query, or says why not.
async fn open(
    target: &Target,
    spec: &ProfileSpec,
) -> Result<(Session, PreparedQuery), ClientError> {
    let session = Session::open(target, &spec.database, spec.timeouts).await?;
    match session.prepare(&spec.query()) {
        Ok(query) => Ok((session, query)),
        Err(e) => {
            // Best effort: the session is of no use, and the server would expire it anyway.
            let _ = session.close(SESSION_DELETE_WAIT).await;
            Err(e)
        }
    }
}

async fn run(target: Target, spec: ProfileSpec, sink: &Sink, cancel: &Cancel) {
    let mut report = RunReport {
        config: spec.run_config(&target),
        started_at: now_rfc3339(),
        iterations: Vec::new(),
        plans: Default::default(),
    };
    let opening = tokio::select! {
        o = open(&target, &spec) => Some(o),
        _ = cancel.notify.notified() => None,
    };
    let (session, query) = match opening {
        Some(Ok(opened)) => opened,
        Some(Err(e)) => return sink.send(EngineEvent::Failed(e)),
        None => return sink.send(EngineEvent::Finished(report)),
    };
    sink.send(EngineEvent::Connected {
        target: session.description().to_owned(),
        session_ms: ms(session.created_in()),
    });
    let total = spec.warmup + spec.iterations;
    for i in 0..total {
        let warmup = i < spec.warmup;
        let last = i + 1 == total;
        let (record, details) = if cancel.is_set() {
            (cancelled_record(&spec, i, warmup), None)
        } else {
            let mut preview = details::Preview::new(if last { PREVIEW_ROWS } else { 0 });
            let (record, timing) = one_iteration(
                &session,
                &query,
                &spec,
                (i, total, warmup),
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
                report.plans.record(i, nodes);
            }
            let details = timing
                .filter(|_| last)
                .map(|t| iteration_details(i, t, preview));
            (record, details)
        };
        let stop = record.status == Status::Cancelled;
        report.iterations.push(record.clone());
        sink.send(EngineEvent::Iteration(record));
        if let Some(details) = details {
            sink.send(EngineEvent::Details(Box::new(details)));
        }
        if stop {
            break;
        }
    }
    // Best effort: the server drops idle sessions anyway.
    let _ = session.close(SESSION_DELETE_WAIT).await;
    sink.send(EngineEvent::Finished(report));
}

fn cancelled_record(spec: &ProfileSpec, iteration: u32, warmup: bool) -> IterationRecord {
    IterationRecord {
        status: Status::Cancelled,
        error: Some("cancelled".into()),
        ..blank_record(spec, iteration, warmup)
    }
}

fn blank_record(spec: &ProfileSpec, iteration: u32, warmup: bool) -> IterationRecord {
    IterationRecord::new(spec.label.clone(), iteration, warmup, now_rfc3339())
}

/// The details of the last iteration: its kept rows as text, with its columns' headings.
fn iteration_details(
    iteration: u32,
    timing: IterationTiming,
    preview: details::Preview,
) -> IterationDetails {
    IterationDetails {
        iteration,
        columns: details::column_headings(timing.columns.as_deref().unwrap_or_default()),
        rows: preview.into_text(),
        rows_total: timing.rows,
        stats: timing.stats,
        server_timing: timing.server_timing,
    }
}

/// Runs one iteration (`(number, of, warmup)`); rows stream past `preview`. The timing comes
/// back too when the iteration ended ok.
async fn one_iteration(
    session: &Session,
    query: &PreparedQuery,
    spec: &ProfileSpec,
    (iteration, of, warmup): (u32, u32, bool),
    preview: &mut details::Preview,
    sink: &Sink,
    cancel: &Cancel,
) -> (IterationRecord, Option<IterationTiming>) {
    let mut record = blank_record(spec, iteration, warmup);
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
                iteration,
                of,
                rows,
                wire_bytes,
            });
        }
    };
    let outcome = tokio::select! {
        r = session.execute(
            query,
            ResumePolicy::default(),
            Decoding::new(spec.decoder, &mut on_rows),
        ) => Some(r),
        _ = cancel.notify.notified() => None,
    };
    match outcome {
        Some(Ok(timing)) => {
            fill(&mut record, &timing);
            return (record, Some(timing));
        }
        Some(Err(e)) => {
            record.status = Status::Error;
            if let IterationError::RowCountMismatch { server, decoded } = &e {
                record.rows = *decoded;
                record.server_rows = Some(*server);
            }
            record.error = Some(e.to_string());
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
pub enum RecordError {
    /// No session, or the query could not be prepared.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The execution failed.
    #[error(transparent)]
    Iteration(#[from] IterationError),
}

/// Runs the query once (blocking the calling thread on a runtime of its own) and records every message
/// the decoder consumed, after any resume, so that `spanprof decode` reproduces its rows offline.
pub fn record(target: Target, spec: &ProfileSpec) -> Result<Recording, RecordError> {
    runtime("spanprof-record")?.block_on(async {
        let (session, query) = open(&target, spec).await?;
        let mut file = Vec::new();
        let outcome = session
            .execute(
                &query,
                ResumePolicy::default(),
                Decoding {
                    decoder: spec.decoder,
                    on_rows: &mut |_, _| {},
                    recording: Some(&mut file),
                },
            )
            .await;
        let _ = session.close(SESSION_DELETE_WAIT).await;
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
}
