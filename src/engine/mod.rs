//! Running a profile: warm-up plus N timed iterations of one query against a target, on the engine's
//! own tokio runtime in a named thread. The caller never blocks: it reads plain [`EngineEvent`]s from a
//! channel (a notify callback tells it when one is waiting) and can cancel at any moment.

pub mod details;
pub mod params;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::Notify;
use tonic::metadata::MetadataMap;
use tonic::transport::Channel;

use crate::client::auth::TokenSource;
use crate::client::cloud::CloudTarget;
use crate::client::iteration::{
    Decoding, IterationError, IterationTiming, ResumePolicy, run_iteration,
};
use crate::client::{connect_plaintext, error_chain};
use crate::proto::google::spanner::v1 as pb;
use crate::proto::google::spanner::v1::spanner_client::SpannerClient;
use crate::report::{IterationRecord, RunConfig, RunReport, Status};
use crate::server::{LocalInstance, ServerConfig};
use crate::wire::{DecoderKind, RowsView, Timestamp};
pub use details::{IterationDetails, PREVIEW_ROWS};
pub use params::{Param, ParamError};

/// Where to run.
#[derive(Debug, Clone)]
pub enum Target {
    /// The built-in local instance, started in-process for the run.
    Local(ServerConfig),
    /// A plaintext gRPC endpoint (`host:port`), such as the Cloud Spanner emulator.
    Endpoint(String),
    /// Cloud Spanner: TLS, OAuth tokens, resource and routing headers.
    Cloud(CloudTarget),
}

/// The database a run reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabasePath {
    /// Project id.
    pub project: String,
    /// Instance id.
    pub instance: String,
    /// Database id.
    pub database: String,
}

impl DatabasePath {
    /// `projects/P/instances/I/databases/D`.
    pub fn name(&self) -> String {
        format!(
            "projects/{}/instances/{}/databases/{}",
            self.project, self.instance, self.database
        )
    }
}

impl Default for DatabasePath {
    fn default() -> Self {
        DatabasePath {
            project: "test-project".into(),
            instance: "test-instance".into(),
            database: "test-db".into(),
        }
    }
}

/// The query modes a profile can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum QueryMode {
    /// Rows only: no server statistics.
    Normal,
    /// Rows and statistics (server elapsed and CPU time, rows returned).
    #[default]
    WithStats,
    /// Rows, statistics and the executed plan.
    Profile,
}

impl QueryMode {
    fn wire(self) -> pb::execute_sql_request::QueryMode {
        match self {
            QueryMode::Normal => pb::execute_sql_request::QueryMode::Normal,
            QueryMode::WithStats => pb::execute_sql_request::QueryMode::WithStats,
            QueryMode::Profile => pb::execute_sql_request::QueryMode::Profile,
        }
    }

    /// The command line's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            QueryMode::Normal => "normal",
            QueryMode::WithStats => "with-stats",
            QueryMode::Profile => "profile",
        }
    }
}

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
    /// The run could not start (unreachable target, no session...).
    Failed(String),
}

/// Shared between the engine and its handle.
#[derive(Debug, Default)]
struct Cancel {
    flag: AtomicBool,
    notify: Notify,
}

/// A running profile. Dropping it cancels the run and waits for the engine thread to end.
#[derive(Debug)]
pub struct Engine {
    cancel: Arc<Cancel>,
    events: mpsc::Receiver<EngineEvent>,
    thread: Option<JoinHandle<()>>,
}

/// Called after each event is sent (the app asks for a repaint there).
pub type Notifier = Arc<dyn Fn() + Send + Sync>;

impl Engine {
    /// Starts a run on a new thread with its own runtime.
    pub fn start(target: Target, spec: ProfileSpec, notify: Notifier) -> std::io::Result<Engine> {
        let (tx, events) = mpsc::channel();
        let cancel = Arc::new(Cancel::default());
        let engine_cancel = Arc::clone(&cancel);
        let thread = std::thread::Builder::new()
            .name("spanprof-engine".into())
            .spawn(move || {
                let sink = Sink { tx, notify };
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .thread_name("spanprof-engine-io")
                    .enable_all()
                    .build();
                match runtime {
                    Ok(rt) => rt.block_on(run(target, spec, &sink, &engine_cancel)),
                    Err(e) => sink.send(EngineEvent::Failed(format!(
                        "cannot start the engine's runtime: {e}"
                    ))),
                }
            })?;
        Ok(Engine {
            cancel,
            events,
            thread: Some(thread),
        })
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
        self.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
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

/// A connected target: the channel, the session, the headers every call carries, and whatever must
/// live as long as the run (the local instance).
struct Connected {
    channel: Channel,
    session: String,
    headers: MetadataMap,
    description: String,
    cloud: Option<(CloudTarget, TokenSource)>,
    _local: Option<LocalInstance>,
}

impl Connected {
    /// The headers for the next call: the resource prefix, and for Cloud Spanner the routing header
    /// and a current token (refreshed before it expires).
    async fn call_headers(&self) -> Result<MetadataMap, String> {
        match &self.cloud {
            None => Ok(self.headers.clone()),
            Some((target, tokens)) => cloud_headers(target, tokens).await,
        }
    }
}

async fn cloud_headers(target: &CloudTarget, tokens: &TokenSource) -> Result<MetadataMap, String> {
    let authorization = tokens.authorization().await.map_err(|e| e.to_string())?;
    let mut request = tonic::Request::new(());
    target
        .decorate(&mut request, Some(authorization))
        .map_err(|e| e.to_string())?;
    Ok(request.into_parts().0)
}

async fn connect(
    target: &Target,
    database: &DatabasePath,
) -> Result<(Connected, Duration), String> {
    let mut local = None;
    let mut cloud = None;
    let (channel, description) = match target {
        Target::Local(config) => {
            let instance = LocalInstance::start(config.clone())
                .await
                .map_err(|e| format!("cannot start the local instance: {e}"))?;
            let host = instance.host_port();
            local = Some(instance);
            (plaintext(&host).await?, format!("local instance {host}"))
        }
        Target::Endpoint(host_port) => {
            (plaintext(host_port).await?, format!("endpoint {host_port}"))
        }
        Target::Cloud(target) => {
            let tokens = target.token_source().map_err(|e| e.to_string())?;
            let channel = tokio::time::timeout(Duration::from_secs(10), target.connect())
                .await
                .map_err(|_| format!("cannot reach {}: no answer within 10 s", target.endpoint))?
                .map_err(|e| e.to_string())?;
            let description = format!("Cloud Spanner {}", target.endpoint);
            cloud = Some((target.clone(), tokens));
            (channel, description)
        }
    };
    let mut headers = MetadataMap::new();
    if let Ok(prefix) = database.name().parse() {
        headers.insert("google-cloud-resource-prefix", prefix);
    }
    let mut conn = Connected {
        channel,
        session: String::new(),
        headers,
        description,
        cloud,
        _local: local,
    };
    let call_headers = conn.call_headers().await?;
    let started = Instant::now();
    let mut request = tonic::Request::new(pb::CreateSessionRequest {
        database: database.name(),
        session: None,
    });
    *request.metadata_mut() = call_headers;
    conn.session = SpannerClient::new(conn.channel.clone())
        .create_session(request)
        .await
        .map_err(|s| {
            format!(
                "cannot create a session in {}: {}",
                database.name(),
                s.message()
            )
        })?
        .into_inner()
        .name;
    Ok((conn, started.elapsed()))
}

async fn plaintext(host_port: &str) -> Result<Channel, String> {
    tokio::time::timeout(Duration::from_secs(5), connect_plaintext(host_port))
        .await
        .map_err(|_| format!("cannot reach {host_port}: no answer within 5 s"))?
        .map_err(|e| format!("cannot reach {host_port}: {}", error_chain(&e)))
}

async fn run(target: Target, spec: ProfileSpec, sink: &Sink, cancel: &Cancel) {
    let config = RunConfig {
        label: spec.label.clone(),
        target: match &target {
            Target::Local(_) => "local".into(),
            Target::Endpoint(h) => format!("endpoint {h}"),
            Target::Cloud(c) => format!("cloud {}", c.database_name()),
        },
        sql: spec.sql.clone(),
        params: spec
            .params
            .iter()
            .map(|p| (format!("{}:{}", p.name, p.type_name), p.value.clone()))
            .collect(),
        query_mode: spec.mode.as_str().into(),
        iterations: spec.iterations,
        warmup: spec.warmup,
        decoder: spec.decoder.as_str().into(),
    };
    let mut report = RunReport {
        config,
        started_at: now_rfc3339(),
        iterations: Vec::new(),
    };
    let connecting = tokio::select! {
        c = connect(&target, &spec.database) => Some(c),
        _ = cancel.notify.notified() => None,
    };
    let conn = match connecting {
        Some(Ok((conn, session_time))) => {
            sink.send(EngineEvent::Connected {
                target: conn.description.clone(),
                session_ms: ms(session_time),
            });
            conn
        }
        Some(Err(message)) => return sink.send(EngineEvent::Failed(message)),
        None => return sink.send(EngineEvent::Finished(report)),
    };
    let mut request = pb::ExecuteSqlRequest {
        session: conn.session.clone(),
        sql: spec.sql.clone(),
        query_mode: spec.mode.wire() as i32,
        ..Default::default()
    };
    if let Err(e) = params::apply(&spec.params, &mut request) {
        return sink.send(EngineEvent::Failed(e.to_string()));
    }
    let total = spec.warmup + spec.iterations;
    let mut last = None;
    for i in 0..total {
        let warmup = i < spec.warmup;
        let record = if cancel.flag.load(Ordering::SeqCst) {
            cancelled_record(&spec, i, warmup)
        } else {
            let keep = if i + 1 == total { PREVIEW_ROWS } else { 0 };
            let mut preview = details::Preview::new(keep);
            let (record, timing) = one_iteration(
                &conn,
                &request,
                &spec,
                (i, total, warmup),
                &mut preview,
                sink,
                cancel,
            )
            .await;
            last = timing.map(|t| (i, t, preview));
            record
        };
        let stop = record.status == Status::Cancelled;
        report.iterations.push(record.clone());
        sink.send(EngineEvent::Iteration(record));
        if let Some((iteration, timing, preview)) = last.take().filter(|_| i + 1 == total) {
            let details = iteration_details(iteration, timing, preview);
            sink.send(EngineEvent::Details(Box::new(details)));
        }
        if stop {
            break;
        }
    }
    delete_session(&conn).await;
    sink.send(EngineEvent::Finished(report));
}

async fn delete_session(conn: &Connected) {
    let mut request = tonic::Request::new(pb::DeleteSessionRequest {
        name: conn.session.clone(),
    });
    *request.metadata_mut() = conn.headers.clone();
    let mut client = SpannerClient::new(conn.channel.clone());
    // Best effort: the server drops idle sessions anyway.
    let _ = tokio::time::timeout(Duration::from_secs(2), client.delete_session(request)).await;
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
    conn: &Connected,
    request: &pb::ExecuteSqlRequest,
    spec: &ProfileSpec,
    (iteration, of, warmup): (u32, u32, bool),
    preview: &mut details::Preview,
    sink: &Sink,
    cancel: &Cancel,
) -> (IterationRecord, Option<IterationTiming>) {
    let mut record = blank_record(spec, iteration, warmup);
    let headers = match conn.call_headers().await {
        Ok(headers) => headers,
        Err(message) => {
            record.status = Status::Error;
            record.error = Some(message);
            return (record, None);
        }
    };
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
        r = run_iteration(
            conn.channel.clone(),
            request,
            &headers,
            ResumePolicy::default(),
            Decoding::new(spec.decoder, &mut on_rows),
        ) => Some(r),
        _ = cancel.notify.notified() => None,
    };
    let mut kept = None;
    match outcome {
        Some(Ok(timing)) => {
            fill(&mut record, &timing);
            kept = Some(timing);
        }
        Some(Err(e)) => {
            record.status = Status::Error;
            record.total_ms = ms(started.elapsed());
            if let IterationError::RowCountMismatch { server, decoded } = &e {
                record.rows = *decoded;
                record.server_rows = Some(*server);
            }
            record.error = Some(e.to_string());
        }
        None => {
            record.status = Status::Cancelled;
            record.total_ms = ms(started.elapsed());
            record.error = Some("cancelled".into());
        }
    }
    (record, kept)
}

/// A recorded execution: the stream as the decoder consumed it, in the stream-file format.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The stream file's bytes.
    pub file: Vec<u8>,
    /// What the iteration measured.
    pub timing: IterationTiming,
}

/// Runs the query once (blocking the calling thread on a runtime of its own) and records every message
/// the decoder consumed, after any resume, so that `spanprof decode` reproduces its rows offline.
pub fn record(target: Target, spec: &ProfileSpec) -> Result<Recording, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("spanprof-record")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    runtime.block_on(async {
        let (conn, _) = connect(&target, &spec.database).await?;
        let mut request = pb::ExecuteSqlRequest {
            session: conn.session.clone(),
            sql: spec.sql.clone(),
            query_mode: spec.mode.wire() as i32,
            ..Default::default()
        };
        params::apply(&spec.params, &mut request).map_err(|e| e.to_string())?;
        let headers = conn.call_headers().await?;
        let mut file = Vec::new();
        let outcome = run_iteration(
            conn.channel.clone(),
            &request,
            &headers,
            ResumePolicy::default(),
            Decoding {
                decoder: spec.decoder,
                on_rows: &mut |_, _| {},
                recording: Some(&mut file),
            },
        )
        .await;
        delete_session(&conn).await;
        let timing = outcome.map_err(|e| e.to_string())?;
        Ok(Recording { file, timing })
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
