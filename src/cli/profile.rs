//! `spanprof profile`: run a query N times and print where the time went.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use std::time::Duration;

use anyhow::Context as _;

use super::decode::DecoderChoice;
use crate::client::auth::Credentials;
use crate::client::cloud::CloudTarget;
use crate::client::{Timeouts, check_host_port, parse_duration};
use crate::engine::{DatabasePath, Engine, EngineEvent, Param, ProfileSpec, QueryMode, Target};
use crate::export::{Csv, Exporter, Json, Markdown, write_atomically};
use crate::report::{RunReport, Status};
use crate::server::{DEFAULT_SEED23_ROWS, KnobSettings, ServerConfig};

/// Where to run: the built-in local instance (default), a plaintext endpoint, or Cloud Spanner.
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// A plaintext endpoint such as the emulator (host:port); defaults to $SPANNER_EMULATOR_HOST when
    /// set. Without it, the built-in local instance runs in-process.
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_endpoint)]
    pub endpoint: Option<String>,
    /// Use the built-in local instance even if SPANNER_EMULATOR_HOST is set.
    #[arg(long, conflicts_with_all = ["endpoint", "cloud"])]
    pub local: bool,
    /// Cloud Spanner (TLS to spanner.googleapis.com, OAuth): needs --project, --instance, --database.
    #[arg(long, conflicts_with = "endpoint")]
    pub cloud: bool,
    /// A service-account key file for --cloud; without it, application default credentials (the
    /// GOOGLE_APPLICATION_CREDENTIALS file, gcloud's user login, or the metadata server).
    #[arg(long, requires = "cloud")]
    pub credentials: Option<PathBuf>,
    /// The Cloud Spanner API endpoint for --cloud (https://, or http:// for a local test server).
    #[arg(long, requires = "cloud", default_value = crate::client::cloud::DEFAULT_ENDPOINT)]
    pub cloud_endpoint: String,
    /// Project id.
    #[arg(long, default_value = "test-project")]
    pub project: String,
    /// Instance id.
    #[arg(long, default_value = "test-instance")]
    pub instance: String,
    /// Database id.
    #[arg(long, default_value = "test-db")]
    pub database: String,
    /// Rows in the local instance's Seed23.
    #[arg(long, default_value_t = DEFAULT_SEED23_ROWS)]
    pub rows: u64,
    /// How long to wait, and for what.
    #[command(flatten)]
    pub timeouts: TimeoutArgs,
}

/// How long the client waits: durations such as `10s`, `250ms`, `5m`.
#[derive(Debug, Clone, clap::Args)]
pub struct TimeoutArgs {
    /// The limit of one iteration, resumes included (sent to the server as the call's deadline).
    #[arg(long, value_name = "DUR", default_value = "10m", value_parser = parse_limit)]
    pub timeout: Duration,
    /// How long a query may take to send its first message.
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = parse_limit)]
    pub first_response_timeout: Duration,
    /// How long connecting may take (TCP, TLS, HTTP/2).
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = parse_limit)]
    pub connect_timeout: Duration,
    /// How long a call such as CreateSession may take to be answered.
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = parse_limit)]
    pub call_timeout: Duration,
}

impl TimeoutArgs {
    /// The limits as the client takes them.
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            connect: self.connect_timeout,
            call: self.call_timeout,
            first_response: self.first_response_timeout,
            iteration: self.timeout,
        }
    }
}

/// A positive duration (`10s`, `250ms`, `5m`).
pub fn parse_limit(text: &str) -> Result<Duration, String> {
    match parse_duration(text) {
        Ok(d) if d.is_zero() => Err("a limit must be longer than zero".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

/// The query and how to run it.
#[derive(Debug, Clone, clap::Args)]
pub struct QueryArgs {
    /// The query (one SQL statement).
    #[arg(long)]
    pub sql: String,
    /// normal (rows only), with-stats (server time and rows), or profile (and the plan).
    #[arg(long, value_enum, default_value_t = ModeArg::WithStats)]
    pub query_mode: ModeArg,
    /// A query parameter: name=value (a STRING) or name:TYPE=value; repeatable.
    #[arg(long = "param", value_parser = parse_param)]
    pub params: Vec<Param>,
    /// The decoder: fast (zero-copy, straight from the bytes) or reference (prost, then rows); run
    /// both to put them side by side.
    #[arg(long, value_enum, default_value_t = DecoderChoice::Fast)]
    pub decoder: DecoderChoice,
}

/// Arguments of `spanprof profile`.
#[derive(Debug, Clone, clap::Args)]
pub struct ProfileArgs {
    /// Where to run.
    #[command(flatten)]
    pub target: TargetArgs,
    /// What to run.
    #[command(flatten)]
    pub query: QueryArgs,
    /// Timed iterations.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub iterations: u32,
    /// Untimed iterations first.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// The run's label (in exports and comparisons).
    #[arg(long, default_value = "run")]
    pub label: String,
    /// Write every iteration as CSV here.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write the JSON report here (for `spanprof compare`).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the Markdown summary here.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
}

/// Arguments of `spanprof record`.
#[derive(Debug, Clone, clap::Args)]
pub struct RecordArgs {
    /// Where to run.
    #[command(flatten)]
    pub target: TargetArgs,
    /// What to run.
    #[command(flatten)]
    pub query: QueryArgs,
    /// The stream file to write.
    #[arg(long)]
    pub out: PathBuf,
}

/// `--query-mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// Rows only.
    Normal,
    /// Rows and statistics.
    WithStats,
    /// Rows, statistics and plan.
    Profile,
}

impl ModeArg {
    /// The query mode it names.
    pub fn mode(self) -> QueryMode {
        match self {
            ModeArg::Normal => QueryMode::Normal,
            ModeArg::WithStats => QueryMode::WithStats,
            ModeArg::Profile => QueryMode::Profile,
        }
    }
}

/// Checks a label: printable text (no control characters), at most 200 bytes. Not a clap value
/// parser: clap would print the refused value raw, escape sequences and all.
pub fn check_label(text: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        !text.chars().any(char::is_control),
        "the label \"{}\" holds control characters; a label is printable text",
        crate::report::printable(text)
    );
    anyhow::ensure!(text.len() <= 200, "a label is at most 200 bytes");
    Ok(())
}

/// `host:port` with the port in range.
pub fn parse_endpoint(text: &str) -> Result<String, String> {
    check_host_port(text).map(|()| text.to_owned())
}

fn parse_param(text: &str) -> Result<Param, String> {
    Param::parse(text).map_err(|e| e.to_string())
}

impl TargetArgs {
    /// The target these arguments name.
    pub fn target(&self) -> Target {
        if self.cloud {
            return Target::Cloud(CloudTarget {
                project: self.project.clone(),
                instance: self.instance.clone(),
                database: self.database.clone(),
                endpoint: self.cloud_endpoint.clone(),
                credentials: match &self.credentials {
                    Some(path) => Credentials::ServiceAccountFile(path.clone()),
                    None => Credentials::ApplicationDefault,
                },
            });
        }
        let endpoint = if self.local {
            None
        } else {
            self.endpoint.clone().or_else(|| {
                std::env::var("SPANNER_EMULATOR_HOST")
                    .ok()
                    .filter(|h| !h.is_empty())
            })
        };
        match endpoint {
            Some(host_port) => Target::Endpoint(host_port),
            None => Target::Local(ServerConfig {
                port: 0,
                seed23_rows: self.rows,
                knobs: KnobSettings::default(),
            }),
        }
    }
}

fn spec(
    target: &TargetArgs,
    query: &QueryArgs,
    label: &str,
    iterations: u32,
    warmup: u32,
) -> ProfileSpec {
    ProfileSpec {
        label: label.to_owned(),
        database: DatabasePath {
            project: target.project.clone(),
            instance: target.instance.clone(),
            database: target.database.clone(),
        },
        sql: query.sql.clone(),
        params: query.params.clone(),
        mode: query.query_mode.mode(),
        iterations,
        warmup,
        decoder: query.decoder.into(),
        timeouts: target.timeouts.timeouts(),
    }
}

/// Records one execution's stream to `--out`; prints what it wrote.
pub fn run_record(args: &RecordArgs, mut out: impl Write) -> anyhow::Result<()> {
    let spec = spec(&args.target, &args.query, "record", 1, 0);
    let recording = crate::engine::record(args.target.target(), &spec)?;
    write_atomically(&args.out, &recording.file)?;
    let t = &recording.timing;
    writeln!(
        out,
        "recorded {} rows in {} messages ({} bytes, {} resumes) to {}; `spanprof decode {}` replays them",
        t.rows,
        t.counters.messages,
        recording.file.len(),
        t.resumes,
        args.out.display(),
        args.out.display()
    )?;
    Ok(())
}

/// What a reader should notice beyond the table: a slow first (cold) iteration and outlying ones,
/// as [`analysis::findings`](crate::analysis::findings) found them.
pub fn findings(report: &RunReport) -> String {
    let found = crate::analysis::Findings::of(report);
    let mut text = String::new();
    if let Some(first) = &found.first {
        let verdict = if first.slow {
            "a slow cold start"
        } else {
            "no cold-start penalty"
        };
        text.push_str(&format!(
            "\nfirst iteration {:.2} ms, {:.2}× the median of the rest ({:.2} ms): {verdict}\n",
            first.total_ms, first.ratio, first.rest_median_ms
        ));
    }
    let flagged: Vec<String> = found
        .outliers
        .iter()
        .map(|o| format!("#{} ({:.2} ms)", o.iteration, o.total_ms))
        .collect();
    if !flagged.is_empty() {
        text.push_str(&format!(
            "outlying iterations (MAD rule): {}\n",
            flagged.join(", ")
        ));
    }
    text
}

/// Runs the profile, prints a progress bar on stderr and the summary on `out`, writes the exports.
/// Returns whether every iteration succeeded.
pub fn run_profile(args: &ProfileArgs, mut out: impl Write) -> anyhow::Result<bool> {
    check_label(&args.label)?;
    let spec = spec(
        &args.target,
        &args.query,
        &args.label,
        args.iterations,
        args.warmup,
    );
    let total = u64::from(spec.warmup + spec.iterations);
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {msg} [{bar:30}] {pos}/{len} iterations",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let engine = Engine::start(args.target.target(), spec, Arc::new(|| {}))
        .context("cannot start the profiling engine")?;
    let mut report: Option<RunReport> = None;
    while let Some(event) = engine.next() {
        match event {
            EngineEvent::Connected { target, session_ms } => {
                bar.suspend(|| {
                    eprintln!("connected to {target} (session created in {session_ms:.1} ms)")
                });
            }
            EngineEvent::Progress {
                rows, wire_bytes, ..
            } => bar.set_message(format!("{rows} rows, {:.1} MB", wire_bytes as f64 / 1e6)),
            EngineEvent::Iteration(record) => {
                bar.inc(1);
                if let Some(error) = &record.error {
                    // Printed whether or not stderr is a terminal (the bar itself hides when not).
                    bar.suspend(|| eprintln!("iteration {}: {error}", record.iteration));
                }
            }
            // The headless profile prints timings only.
            EngineEvent::Details(_) => {}
            EngineEvent::Finished(r) => report = Some(r),
            EngineEvent::Failed(error) => {
                bar.finish_and_clear();
                return Err(error.into());
            }
        }
    }
    bar.finish_and_clear();
    let report = report.context("the engine stopped without a report")?;
    let reports = std::slice::from_ref(&report);
    out.write_all(&Markdown.export(reports)?)?;
    out.write_all(findings(&report).as_bytes())?;
    out.write_all(super::plan::plan_summary(&report, 5).as_bytes())?;
    for (path, exporter) in [
        (&args.csv, &Csv as &dyn Exporter),
        (&args.json, &Json),
        (&args.markdown, &Markdown),
    ] {
        if let Some(path) = path {
            write_atomically(path, &exporter.export(reports)?)?;
        }
    }
    Ok(report.iterations.iter().all(|i| i.status == Status::Ok))
}
