//! `spanprof client [OPTIONS] -- CMD [ARGS...]`: another program's Spanner client under the
//! microscope. Starts the local instance (knobs as for `serve`), runs the command N times with the
//! instance in its environment, interleaved with spanprof's own decoder and the wire floor, and
//! prints each iteration's time as the server saw it, the row check, and the verdict.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use super::decode::DecoderChoice;
use super::profile::{OrderArg, check_label};
use super::serve::ServeArgs;
use super::target::parse_limit;
use crate::engine::{
    DEFAULT_SUBJECT_SQL, Engine, EngineEvent, Job, Order, ReportCollector, SubjectSpec,
};
use crate::export::{Exporter, Markdown};
use crate::part::Part;
use crate::report::{IterationRecord, RunReport, Status, printable};
use crate::server::ServerConfig;
use crate::subject::command::CommandLine;

/// Arguments of `spanprof client`.
#[derive(Debug, Clone, clap::Args)]
pub struct SubjectArgs {
    /// The local instance: its rows and how it streams (as for `serve`).
    #[command(flatten)]
    pub serve: ServeArgs,
    /// The SQL given to the command in `SPANPROF_SQL`.
    #[arg(long, default_value = DEFAULT_SUBJECT_SQL)]
    pub sql: String,
    /// Timed iterations of the command (and of each comparison).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub iterations: u32,
    /// Untimed iterations of each first.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// The order of the timed iterations (interleaved by default).
    #[arg(long, value_enum)]
    pub order: Option<OrderArg>,
    /// The seed of --order shuffled.
    #[arg(long)]
    pub seed: Option<u64>,
    /// The command's run label (default: its program and first argument).
    #[arg(long)]
    pub label: Option<String>,
    /// spanprof's decoder, run beside the command.
    #[arg(long, value_enum, default_value_t = DecoderChoice::Fast)]
    pub decoder: DecoderChoice,
    /// Run the command alone: no spanprof decoder, no wire floor.
    #[arg(long)]
    pub no_compare: bool,
    /// How long one run of the command may take before it is killed (`300s`, `5m`).
    #[arg(long, default_value = "300s", value_parser = parse_limit)]
    pub limit: Duration,
    /// Where the runs are written.
    #[command(flatten)]
    pub out: super::outputs::Outputs<super::outputs::ProfileFiles>,
    /// Where the runs are saved.
    #[command(flatten)]
    pub history: super::history::HistoryArgs,
    /// The retry lab: run the command once, its read-write transactions aborted as the knobs
    /// script (`--abort-every`), and check its retries against the rules of a correct retry.
    #[arg(long)]
    pub read_write: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl SubjectArgs {
    /// The client profile these arguments describe.
    pub fn spec(&self) -> anyhow::Result<SubjectSpec> {
        let command = CommandLine::new(self.command.clone())?;
        if let Some(label) = &self.label {
            check_label(label)?;
        }
        let order = match (self.order, self.seed) {
            (Some(OrderArg::Shuffled) | None, Some(seed)) => Order::Shuffled(seed),
            (Some(OrderArg::Shuffled), None) => Order::Shuffled(0),
            (Some(_), Some(_)) => anyhow::bail!("--seed goes with --order shuffled"),
            (Some(OrderArg::Blocked), None) => Order::Blocked,
            (Some(OrderArg::Interleaved) | None, None) => Order::Interleaved,
        };
        Ok(SubjectSpec {
            label: self.label.clone().unwrap_or_else(|| command.short_name()),
            sql: self.sql.clone(),
            iterations: self.iterations,
            warmup: self.warmup,
            order,
            server: ServerConfig {
                port: self.serve.port,
                seed23_rows: self.serve.rows,
                knobs: self.serve.knobs(),
                connections: self.serve.connections(),
            },
            limit: self.limit,
            compare: (!self.no_compare).then(|| self.decoder.into()),
            ..SubjectSpec::new(command)
        })
    }
}

/// Runs the client profile; prints each iteration as it ends, then the summary and the verdict;
/// writes the exports. Returns whether every iteration passed.
pub fn run_subject(args: &SubjectArgs, mut out: impl Write) -> anyhow::Result<bool> {
    let spec = args.spec()?;
    let engine = Engine::start(Job::Subject(spec), Arc::new(|| {}))
        .context("cannot start the client profile")?;
    let mut reports = None;
    let mut records = ReportCollector::default();
    writeln!(out, "{}", header())?;
    for event in engine.profile_events() {
        match event {
            EngineEvent::Connected { target, .. } => eprintln!("profiling on {target}"),
            EngineEvent::Iteration { variant, record } => {
                writeln!(out, "{}", iteration_line(&record))?;
                if let Some(error) = record.error() {
                    eprintln!(
                        "{}, iteration {}: {}",
                        printable(&record.run),
                        record.iteration,
                        printable(error)
                    );
                }
                records.push(variant, *record);
            }
            EngineEvent::Finished(heads) => reports = Some(records.finish(heads)),
            EngineEvent::Failed(error) => return Err(error.into()),
            EngineEvent::Progress { .. } | EngineEvent::Details(_) => {}
        }
    }
    let reports: Vec<RunReport> = reports.context("the engine stopped without a report")?;
    let history = args.history.worker();
    super::history::save(history.as_ref(), &reports);
    writeln!(out)?;
    out.write_all(&Markdown.export(&reports)?)?;
    match crate::analysis::subject_comparison(&reports) {
        Some(verdict) => writeln!(out, "\n{verdict}")?,
        None => writeln!(
            out,
            "\nno verdict: the command has no timed iteration that read the query to its end"
        )?,
    }
    args.out
        .write(crate::export::Reports::Profile(&reports), None)?;
    super::history::finish(history);
    Ok(reports
        .iter()
        .flat_map(|r| &r.iterations)
        .all(|i| i.status() == Status::Ok))
}

/// The columns of [`iteration_line`].
fn header() -> String {
    let mut line = format!("{:<28} {:>4}", "run", "it");
    for part in Part::SUBJECT {
        line.push_str(&format!(" {:>10}", part.label()));
    }
    line.push_str(&format!(
        " {:>10} {:>8} {:>7}  check",
        "total", "rows", "resumes"
    ));
    line
}

/// One iteration: its run, number, its parts as the server saw them, total, rows, resumes and
/// the check.
fn iteration_line(r: &IterationRecord) -> String {
    let name: String = printable(&r.run).chars().take(28).collect();
    let mut line = format!(
        "{name:<28} {:>3}{}",
        r.iteration,
        if r.warmup { "w" } else { " " }
    );
    let parts = r.accounting().parts;
    for part in Part::SUBJECT {
        match parts.get(part) {
            Some(ms) => line.push_str(&format!(" {:>10}", crate::text::ms(ms))),
            None => line.push_str(&format!(" {:>10}", "-")),
        }
    }
    let check = match (r.status(), r.subject.and_then(|s| s.check)) {
        (Status::Ok, Some(kind)) => format!("{} ok", kind.as_str()),
        (Status::Ok, None) => String::new(),
        (status, _) => status.as_str().to_owned(),
    };
    line.push_str(&format!(
        " {:>10} {:>8} {:>7}  {check}",
        crate::text::ms(r.total_ms),
        crate::text::count(r.answer.rows),
        r.answer.resumes
    ));
    line
}
