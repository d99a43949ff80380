//! Another program's Spanner client under the microscope (`spanprof client`): the local instance
//! started with the knobs asked for, the program run N times against it (warm-ups first,
//! interleaved with spanprof's own decoder and a bytes-only read of the same query), each run's
//! time split at the server (start-up, request to first byte, first to last byte, blocked on the
//! client, last byte to exit) and every row it printed checked against the rows it was sent.
//!
//! It reports the same [`EngineEvent`]s as a query's profile, so the CLI and the app show a
//! client's run as they show any other.

use std::time::{Duration, Instant};

use super::common::{SESSION_DELETE_WAIT, ms, now_rfc3339};
use super::events::{Cancel, EngineEvent, Sink};
use super::record;
use crate::client::{
    DatabasePath, Decoding, Endpoint, PreparedQuery, Query, QueryMode, ResumePolicy, Session,
    Timeouts,
};
use crate::engine::schedule::{Order, Turn, schedule};
use crate::report::{Check, IterationRecord, Outcome, Reader, ReportHead, RunConfig};
use crate::server::tap::Observed;
use crate::server::{LocalInstance, ServerConfig};
use crate::subject::check::{Expected, check};
use crate::subject::command::{self, CommandLine, stderr_note};
use crate::wire::DecoderKind;

/// The query a client profile runs unless told otherwise.
pub const DEFAULT_SUBJECT_SQL: &str = "SELECT * FROM Seed23 LIMIT 10000";

/// How long one run of the program may take unless told otherwise.
pub const DEFAULT_COMMAND_LIMIT: Duration = Duration::from_secs(300);

/// What to run: a command, N times, against the local instance.
#[derive(Debug, Clone)]
pub struct SubjectSpec {
    /// The program and its arguments.
    pub command: CommandLine,
    /// The label of the program's run (by default its short name).
    pub label: String,
    /// The SQL the program is given in `SPANPROF_SQL`.
    pub sql: String,
    /// Timed iterations of each run.
    pub iterations: u32,
    /// Untimed iterations of each run first.
    pub warmup: u32,
    /// The order of the runs' timed iterations.
    pub order: Order,
    /// The local instance: its rows and knobs (shape, faults, message size).
    pub server: ServerConfig,
    /// The database named in the program's environment.
    pub database: DatabasePath,
    /// How long one run of the program may take before it is killed.
    pub limit: Duration,
    /// spanprof's decoder to run beside it (and the wire floor), or `None` for the program alone.
    pub compare: Option<DecoderKind>,
    /// The limits of spanprof's own reads.
    pub timeouts: Timeouts,
}

impl SubjectSpec {
    /// `command` with the defaults: the default SQL, 5 iterations after one warm-up, interleaved
    /// with the fast decoder and the floor, on a local instance of 100,000 Seed23 rows.
    pub fn new(command: CommandLine) -> Self {
        SubjectSpec {
            label: command.short_name(),
            command,
            sql: DEFAULT_SUBJECT_SQL.into(),
            iterations: 5,
            warmup: 1,
            order: Order::default(),
            server: ServerConfig::default(),
            database: DatabasePath::default(),
            limit: DEFAULT_COMMAND_LIMIT,
            compare: Some(DecoderKind::Fast),
            timeouts: Timeouts::DEFAULT,
        }
    }

    /// How the local instance streams, in the command line's spelling, as reports record it.
    pub fn stream_settings(&self) -> Vec<(String, String)> {
        let k = &self.server.knobs;
        let mut out = vec![
            ("shape".to_owned(), k.shape.as_str().to_owned()),
            (
                "max-message-bytes".to_owned(),
                k.max_message_bytes.to_string(),
            ),
        ];
        for (name, value) in [
            ("fail-every", k.fail_every),
            ("first-byte-delay-ms", k.first_byte_delay_ms),
            ("message-delay-ms", k.message_delay_ms),
            ("bandwidth", k.bandwidth_bytes_per_s),
            ("stall-every", k.stall_every),
            ("stall-ms", k.stall_ms),
        ] {
            if value != 0 {
                out.push((name.to_owned(), value.to_string()));
            }
        }
        if k.stall_every != 0 {
            out.push((
                "stall-at-message".to_owned(),
                k.stall_at_message.to_string(),
            ));
        }
        out
    }

    /// The labels of the runs it makes, in order: the program's, then (when comparing) spanprof's
    /// decoder's and the floor's.
    pub fn labels(&self) -> Vec<String> {
        self.runs().into_iter().map(|run| run.label(self)).collect()
    }

    /// The runs it makes, in order: the program's, then (when comparing) spanprof's decoder's and
    /// the floor's.
    fn runs(&self) -> Vec<Run> {
        let mut runs = vec![Run::Command];
        if let Some(decoder) = self.compare {
            runs.extend([Run::Decoder(decoder), Run::Floor]);
        }
        runs
    }

    fn run_config(&self, run: Run) -> RunConfig {
        RunConfig {
            label: run.label(self),
            target: "local".into(),
            database: self.database.name(),
            sql: self.sql.clone(),
            query_mode: QueryMode::Normal,
            iterations: self.iterations,
            warmup: self.warmup,
            decoder: match run {
                Run::Command => Reader::Program,
                Run::Decoder(decoder) => decoder.into(),
                Run::Floor => Reader::BytesOnly,
            },
            order: if self.compare.is_some() {
                self.order.describe()
            } else {
                String::new()
            },
            command: match run {
                Run::Command => std::iter::once(self.command.program.clone())
                    .chain(self.command.args.iter().cloned())
                    .collect(),
                _ => Vec::new(),
            },
            client_host: super::host_name(),
            timeouts: self.timeouts.describe(),
            stream: self.stream_settings(),
            ..RunConfig::default()
        }
    }

    /// The environment the program runs in, iteration `iteration`.
    pub fn environment(&self, host_port: &str, iteration: u32) -> Vec<(&'static str, String)> {
        vec![
            ("SPANNER_EMULATOR_HOST", host_port.to_owned()),
            ("SPANPROF_SQL", self.sql.clone()),
            ("SPANPROF_PROJECT", self.database.project.clone()),
            ("SPANPROF_INSTANCE", self.database.instance.clone()),
            ("SPANPROF_DATABASE", self.database.database.clone()),
            ("SPANPROF_ITERATION", iteration.to_string()),
        ]
    }
}

/// One of a client profile's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    Command,
    Decoder(DecoderKind),
    Floor,
}

impl Run {
    fn label(self, spec: &SubjectSpec) -> String {
        match self {
            Run::Command => spec.label.clone(),
            Run::Decoder(decoder) => format!("spanprof ({} decoder)", decoder.as_str()),
            Run::Floor => "wire floor".into(),
        }
    }
}

/// spanprof's own session and query, when it compares.
struct Ours {
    session: Session,
    query: PreparedQuery,
}

async fn start(
    spec: &SubjectSpec,
) -> Result<(LocalInstance, Option<Ours>), crate::engine::EngineError> {
    let instance = LocalInstance::start(spec.server.clone())
        .await
        .map_err(super::StartLocalError::from)?;
    if spec.compare.is_none() {
        return Ok((instance, None));
    }
    let endpoint = Endpoint::plaintext(instance.host_port());
    let session = Session::open(&endpoint, &spec.database, spec.timeouts).await?;
    let query = Query {
        sql: spec.sql.clone(),
        params: Vec::new(),
        mode: QueryMode::Normal,
        options: Default::default(),
    };
    match session.prepare(&query) {
        Ok(query) => Ok((instance, Some(Ours { session, query }))),
        Err(e) => {
            let _ = session.close(SESSION_DELETE_WAIT).await;
            Err(e.into())
        }
    }
}

/// Runs `spec`'s program (and spanprof's reads beside it), every event to `sink`, until done or
/// cancelled.
pub(super) async fn run(spec: SubjectSpec, sink: &Sink, cancel: &Cancel) {
    let started_at = now_rfc3339();
    let runs = spec.runs();
    let reports: Vec<ReportHead> = runs
        .iter()
        .map(|&run| ReportHead::new(spec.run_config(run), started_at.clone()))
        .collect();
    let opening = tokio::select! {
        o = start(&spec) => Some(o),
        _ = cancel.notify.notified() => None,
    };
    let (instance, ours) = match opening {
        Some(Ok(opened)) => opened,
        Some(Err(e)) => return sink.send(EngineEvent::Failed(e)),
        None => return sink.send(EngineEvent::Finished(reports)),
    };
    sink.send(EngineEvent::Connected {
        target: format!(
            "local instance {} ({} shape) for {}",
            instance.host_port(),
            spec.server.knobs.shape,
            crate::report::printable(&spec.command.display())
        ),
        session_ms: ours.as_ref().map_or(0.0, |o| ms(o.session.created_in())),
    });
    let turns = schedule(runs.len(), spec.warmup, spec.iterations, spec.order);
    for (seq, &turn) in (0u32..).zip(&turns) {
        let run = runs[turn.variant];
        let mut record = record::subject(run.label(&spec), turn, seq);
        if cancel.is_set() {
            record.outcome = Outcome::cancelled();
        } else {
            let iteration = Iteration {
                spec: &spec,
                instance: &instance,
                turn,
                cancel,
            };
            match (run, &ours) {
                (Run::Command, _) => iteration.command(&mut record).await,
                (Run::Decoder(decoder), Some(ours)) => {
                    iteration.ours(ours, Some(decoder), &mut record).await
                }
                (Run::Floor, Some(ours)) => iteration.ours(ours, None, &mut record).await,
                // The runs are made from `compare`, which also opened the session.
                (_, None) => record.outcome = Outcome::cancelled(),
            }
        }
        let stop = record.outcome.is_cancelled();
        sink.send(EngineEvent::Iteration {
            variant: turn.variant,
            record: Box::new(record),
        });
        if stop {
            break;
        }
    }
    if let Some(ours) = ours {
        let _ = ours.session.close(SESSION_DELETE_WAIT).await;
    }
    instance.stop(Duration::from_secs(2)).await;
    sink.send(EngineEvent::Finished(reports));
}

/// One iteration of one run.
struct Iteration<'a> {
    spec: &'a SubjectSpec,
    instance: &'a LocalInstance,
    turn: Turn,
    cancel: &'a Cancel,
}

impl Iteration<'_> {
    /// Runs the program once, watching what the server sends it, and checks its rows.
    async fn command(&self, record: &mut IterationRecord) {
        let env = self
            .spec
            .environment(&self.instance.host_port(), self.turn.iteration);
        let tap = self.instance.tap();
        tap.watch();
        let started = Instant::now();
        let ran = tokio::select! {
            r = command::run(&self.spec.command, &env, self.spec.limit) => Some(r),
            _ = self.cancel.notify.notified() => None,
        };
        let seen = tap.take();
        tap.stop();
        let ran = match ran {
            None => {
                record.outcome = Outcome::cancelled();
                return;
            }
            Some(Err(e)) => {
                record.total_ms = ms(started.elapsed());
                record.outcome = Outcome::failed(e.to_string(), None);
                return;
            }
            Some(Ok(ran)) => ran,
        };
        record.total_ms = ms(ran.exited.saturating_duration_since(ran.started));
        server_seen(record, &seen, ran.started, ran.exited);
        // What the program received, as the server counted it; every query request after the
        // first resumed or restarted a broken stream (a shape without tokens can only restart).
        record.answer.messages = seen.messages;
        record.answer.wire_bytes = seen.bytes;
        record.answer.resumes = seen.requests.saturating_sub(1);
        if !ran.success {
            let why = format!(
                "the command ended with {}{}",
                ran.status,
                stderr_note(&ran.stderr_tail)
            );
            record.outcome = Outcome::failed(why, None);
            return;
        }
        let checking = checked(&seen, &ran.stdout, ran.stdout_truncated);
        record.answer.rows = checking.rows;
        record.answer.server_rows = checking.sent;
        match checking.outcome {
            Ok(kind) => record.subject_mut().check = Some(kind),
            Err(error) => record.outcome = Outcome::failed(error, None),
        }
    }

    /// Reads the query once with spanprof's `decoder`, or (`None`) receiving its bytes only.
    async fn ours(&self, ours: &Ours, decoder: Option<DecoderKind>, record: &mut IterationRecord) {
        let tap = self.instance.tap();
        tap.watch();
        let started = Instant::now();
        let policy = ResumePolicy::default();
        let read = async {
            match decoder {
                Some(decoder) => {
                    ours.session
                        .execute(&ours.query, policy, Decoding::new(decoder, &mut |_, _| {}))
                        .await
                }
                None => ours.session.execute_bytes_only(&ours.query, policy).await,
            }
        };
        let outcome = tokio::select! {
            r = read => Some(r),
            _ = self.cancel.notify.notified() => None,
        };
        let ended = Instant::now();
        let seen = tap.take();
        tap.stop();
        match outcome {
            None => record.outcome = Outcome::cancelled(),
            Some(Ok(timing)) => {
                record::fill(record, &timing);
                server_seen(record, &seen, started, ended);
                if decoder.is_none() {
                    // Nothing decoded: the rows are those the server sent.
                    record.answer.rows = 0;
                }
            }
            Some(Err(e)) => {
                record.total_ms = ms(started.elapsed());
                record.outcome = Outcome::failed(e.to_string(), e.status_code());
            }
        }
    }
}

/// The subject's timings as the server saw them, from `started` (the client's start) to `ended` (its end).
fn server_seen(record: &mut IterationRecord, seen: &Observed, started: Instant, ended: Instant) {
    let span = |from: Instant, to: Instant| ms(to.saturating_duration_since(from));
    let timings = record.subject_mut();
    timings.startup_ms = seen.first_request.map(|at| span(started, at));
    if let (Some(request), Some(first), Some(last)) =
        (seen.first_request, seen.first_byte, seen.last_byte)
    {
        timings.first_byte_ms = Some(span(request, first));
        timings.transfer_ms = Some(span(first, last));
        timings.blocked_ms = Some(ms(seen.blocked));
        timings.tail_ms = Some(span(last, ended));
    }
}

/// What the row check made of a program's output.
struct Checking {
    /// The check's kind (`values`, `count`), or what is wrong.
    outcome: Result<Check, String>,
    /// Rows the program printed (or counted).
    rows: u64,
    /// Rows the server sent, when its answer was read.
    sent: Option<u64>,
}

impl Checking {
    fn failed(why: String) -> Self {
        Checking {
            outcome: Err(why),
            rows: 0,
            sent: None,
        }
    }
}

/// The program's output checked against the answer the server sent.
fn checked(seen: &Observed, stdout: &[u8], truncated: bool) -> Checking {
    if seen.overflow {
        return Checking::failed(format!(
            "not checked: the server sent more than the {} MiB (or {} queries) the check keeps",
            crate::server::tap::MAX_KEPT_BYTES >> 20,
            crate::server::tap::MAX_QUERIES
        ));
    }
    let Some(answer) = seen.answer() else {
        return Checking::failed(format!(
            "the command never read a query to its end ({} query requests, {} resumes)",
            seen.requests, seen.resumes
        ));
    };
    let expected = match Expected::decode(&answer) {
        Ok(expected) => expected,
        Err(e) => {
            return Checking::failed(format!("the server's own answer does not decode: {e}"));
        }
    };
    let sent = Some(expected.rows.len() as u64);
    match check(&expected, stdout, truncated) {
        Ok(ok) => Checking {
            outcome: Ok(ok.kind()),
            rows: ok.rows(),
            sent,
        },
        Err(mismatch) => Checking {
            outcome: Err(mismatch.to_string()),
            rows: mismatch.printed,
            sent,
        },
    }
}
