//! `spanprof profile`: run one or more query variants N times, interleaved, and print where the
//! time went, how each variant compares with the reference, how a sweep grows, and (with
//! `--baseline`) whether the run regressed.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;

use super::decode::DecoderChoice;
use super::gate::{BaselineSource, Verdict};
use super::headers::HeaderArgs;
use super::options::RequestOptionArgs;
use super::summary;
use super::target::TargetArgs;
use super::variants::{FromCommandLine, SweepSpec, parse_sweep, variants};
use crate::analysis::parse_slowdown;
use crate::engine::{
    Engine, EngineEvent, Job, Order, Param, ProfileSpec, QueryMode, ReportCollector,
};
use crate::export::{Exporter, Markdown};
use crate::part::Measure;
use crate::report::{RunReport, Status, printable};

/// The query and how to run it.
#[derive(Debug, Clone, clap::Args)]
pub struct QueryArgs {
    /// A query (one SQL statement). Repeat it to compare queries: their iterations are
    /// interleaved, and each is a run of the report, named by its --label.
    #[arg(long = "sql", value_name = "SQL")]
    pub sql: Vec<String>,
    /// normal (rows only), with-stats (server time and rows), or profile (and the plan). Default:
    /// profile for --endpoint (the emulator returns no statistics in with-stats), else with-stats.
    #[arg(long, value_enum)]
    pub query_mode: Option<ModeArg>,
    /// A query parameter: name=value (a STRING) or name:TYPE=value; repeatable.
    #[arg(long = "param", value_parser = parse_param)]
    pub params: Vec<Param>,
    /// The decoder: fast (zero-copy, straight from the bytes) or reference (prost, then rows); run
    /// both to put them side by side.
    #[arg(long, value_enum, default_value_t = DecoderChoice::Fast)]
    pub decoder: DecoderChoice,
}

impl QueryArgs {
    /// The query mode asked for, or the target's default (the one that returns statistics).
    pub fn mode(&self, target: &TargetArgs) -> QueryMode {
        self.query_mode
            .map_or_else(|| target.target().default_mode(), QueryMode::from)
    }
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
    /// How the query is asked.
    #[command(flatten)]
    pub options: RequestOptionArgs,
    /// What every call says besides the query.
    #[command(flatten)]
    pub headers: HeaderArgs,
    /// The run's label (in exports and comparisons); one per --sql when there are several (else
    /// they are 1, 2, ...).
    #[arg(long = "label", value_name = "LABEL")]
    pub labels: Vec<String>,
    /// A workload file (TOML) describing the variants, each with its own SQL, parameters and
    /// options (see docs/commands/profile.md); instead of --sql.
    #[arg(long, value_name = "FILE.toml")]
    pub workload: Option<PathBuf>,
    /// Sweep a query parameter: one variant per value of @NAME, e.g. n:INT64=100,1000,10000.
    #[arg(long, value_name = "NAME:TYPE=V1,V2,...", value_parser = parse_sweep)]
    pub sweep: Option<SweepSpec>,
    /// How the variants connect: warm or cold, and the kind of session.
    #[command(flatten)]
    pub connection: super::connection::ConnectionArgs,
    /// Each iteration as one read-write transaction.
    #[command(flatten)]
    pub read_write: super::read_write::ReadWriteArgs,
    /// The order of the variants' timed iterations (each variant's warm-ups come first).
    #[arg(long, value_enum)]
    pub order: Option<OrderArg>,
    /// The seed of --order shuffled.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Timed iterations of each variant (default 10).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub iterations: Option<u32>,
    /// Untimed iterations of each variant first (default 1).
    #[arg(long)]
    pub warmup: Option<u32>,
    /// The variant the others are compared with (default: the first).
    #[arg(long, value_name = "LABEL")]
    pub reference: Option<String>,
    /// A JSON report to gate this run against (with --fail-if-slower), or the run history's
    /// `history:last`, `history:best` (the earlier runs of the same query on the same target) or
    /// `history:ID`. When none can be had the run is still printed, exported and saved, and the
    /// exit code is 5.
    #[arg(long, value_name = "BASE.json", requires = "fail_if_slower")]
    pub baseline: Option<PathBuf>,
    /// Exit with code 4 when this run is slower than --baseline by more than this (e.g. 10%) and
    /// the difference is significant.
    #[arg(long, value_name = "PERCENT", value_parser = parse_slowdown, requires = "baseline")]
    pub fail_if_slower: Option<f64>,
    /// What the gate compares: total (the default) or a part (server, network, wire-decode,
    /// row-decode, client-work, descheduled, untimed, a cold start's dns... session).
    #[arg(long, value_name = "PART", value_parser = parse_measure, requires = "fail_if_slower")]
    pub phase: Option<Measure>,
    /// Where the runs are written.
    #[command(flatten)]
    pub out: super::outputs::Outputs<super::outputs::ProfileFiles>,
    /// Where the run is saved.
    #[command(flatten)]
    pub history: super::history::HistoryArgs,
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

impl From<ModeArg> for QueryMode {
    fn from(mode: ModeArg) -> QueryMode {
        match mode {
            ModeArg::Normal => QueryMode::Normal,
            ModeArg::WithStats => QueryMode::WithStats,
            ModeArg::Profile => QueryMode::Profile,
        }
    }
}

/// `--order` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderArg {
    /// Round robin after each variant's warm-up (the default).
    Interleaved,
    /// Each variant's iterations back to back.
    Blocked,
    /// A random order, fixed by --seed.
    Shuffled,
}

/// How a profile ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileOutcome {
    /// Every iteration ended ok (and the gate, if any, passed).
    Passed,
    /// Some iteration failed or was cancelled.
    IterationsFailed,
    /// The gate failed: slower than the baseline by more than allowed.
    Regressed,
    /// The gate had no baseline to compare with (none in the history, or it could not be read);
    /// the run was printed, exported and saved all the same.
    NoBaseline,
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

/// A measure as `--phase` spells it: `total`, or a part's key (`wire-decode` or `wire_decode`).
pub fn parse_measure(text: &str) -> Result<Measure, String> {
    Measure::parse(text)
}

/// The profile the arguments describe, and the label the comparisons take as their reference.
fn profile_spec(args: &ProfileArgs) -> anyhow::Result<(ProfileSpec, String)> {
    for label in &args.labels {
        check_label(label)?;
    }
    let options = args.options.options()?;
    let script = args.read_write.script_text()?;
    anyhow::ensure!(
        script.is_none() || args.query.sql.is_empty(),
        "--script holds the transaction's statements: leave out --sql"
    );
    let script_sql: Vec<String> = script.into_iter().collect();
    let line = FromCommandLine {
        sql: if script_sql.is_empty() {
            &args.query.sql
        } else {
            &script_sql
        },
        labels: &args.labels,
        params: &args.query.params,
        mode: args.query.mode(&args.target),
        options: &options,
        sweep: args.sweep.as_ref(),
        workload: args.workload.as_deref(),
    };
    let (variants, workload) = variants(&line)?;
    let mut variants = args.read_write.apply(args.connection.apply(variants)?)?;
    if args.query.query_mode.is_none() {
        // Partitions run in normal mode: the mode nobody asked for is that one.
        for v in variants
            .iter_mut()
            .filter(|v| v.options.partitioned.is_some())
        {
            if v.mode == line.mode {
                v.mode = QueryMode::Normal;
            }
        }
    }
    let order = match (args.order, args.seed) {
        (Some(OrderArg::Shuffled) | None, Some(seed)) => Some(Order::Shuffled(seed)),
        (Some(OrderArg::Shuffled), None) => Some(Order::Shuffled(0)),
        (Some(_), Some(_)) => anyhow::bail!("--seed goes with --order shuffled"),
        (Some(OrderArg::Interleaved), None) => Some(Order::Interleaved),
        (Some(OrderArg::Blocked), None) => Some(Order::Blocked),
        (None, None) => None,
    };
    let from_file = workload.as_ref();
    let spec = ProfileSpec {
        database: args.target.database(),
        iterations: args
            .iterations
            .or(from_file.and_then(|w| w.iterations))
            .unwrap_or(10)
            .max(1),
        warmup: args
            .warmup
            .or(from_file.and_then(|w| w.warmup))
            .unwrap_or(1),
        decoder: from_file
            .and_then(|w| w.decoder)
            .filter(|_| args.query.decoder == DecoderChoice::Fast)
            .unwrap_or_else(|| args.query.decoder.into()),
        timeouts: args.target.timeouts.timeouts(),
        order: order
            .or(from_file.and_then(|w| w.order))
            .unwrap_or_default(),
        headers: args.headers.options(),
        variants,
    };
    let reference = args
        .reference
        .clone()
        .or_else(|| from_file.and_then(|w| w.reference.clone()))
        .unwrap_or_else(|| spec.variants[0].label.clone());
    anyhow::ensure!(
        spec.variants.iter().any(|v| v.label == reference),
        "--reference \"{}\" names no variant (they are {})",
        printable(&reference),
        spec.variants
            .iter()
            .map(|v| format!("\"{}\"", printable(&v.label)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    spec.check()?;
    Ok((spec, reference))
}

/// What a reader should notice beyond the table: query statistics that did not come, a slow first
/// (cold) iteration and outlying ones, as [`analysis::findings`](crate::analysis::findings) found
/// them.
pub fn findings(report: &RunReport) -> String {
    summary::findings(report)
}

/// Runs the profile, prints a progress bar on stderr and on `out` the summary of each variant,
/// each variant against the reference, a sweep's table and models, and the gate's decision; writes
/// the exports and saves the run. A baseline that cannot be had never costs the run: everything
/// else is done first, and the outcome says so.
pub fn run_profile(args: &ProfileArgs, mut out: impl Write) -> anyhow::Result<ProfileOutcome> {
    let (spec, reference) = profile_spec(args)?;
    let baseline = args
        .baseline
        .as_deref()
        .map(|path| BaselineSource::parse(path, &args.history))
        .transpose()?;
    let reports = run_engine(args, spec)?;
    let database = args.target.database().name();
    // Read before this run is saved: `history:last` is an earlier run.
    let baseline = baseline.map(|source| source.read(&reports, &database));
    let history = args.history.worker();
    super::history::save(history.as_ref(), &reports);
    print_summary(&mut out, &reports, &reference)?;
    // The page compares every variant with the reference, as the summary printed does.
    let reference_at = reports.iter().position(|r| r.config.label == reference);
    let pairs = reference_at.map(|at| {
        (0..reports.len())
            .filter(|&i| i != at)
            .map(|i| (at, i))
            .collect()
    });
    args.out
        .write(crate::export::Reports::Profile(&reports), pairs)?;
    let all_ok = reports
        .iter()
        .flat_map(|r| &r.iterations)
        .all(|i| i.status() == Status::Ok);
    let verdict = match (baseline, args.fail_if_slower) {
        (Some(baseline), Some(max_slowdown)) => {
            let gate = crate::analysis::Gate {
                max_slowdown,
                measure: args.phase.unwrap_or(Measure::Total),
            };
            super::gate::decide(&mut out, baseline, &reports, gate)?
        }
        _ => Verdict::Passed,
    };
    super::history::finish(history);
    Ok(match verdict {
        _ if !all_ok => ProfileOutcome::IterationsFailed,
        Verdict::Regressed => ProfileOutcome::Regressed,
        Verdict::NoBaseline => ProfileOutcome::NoBaseline,
        Verdict::Passed => ProfileOutcome::Passed,
    })
}

/// Runs `spec` on the engine with a progress bar on stderr (and each failed iteration's error);
/// its reports.
fn run_engine(args: &ProfileArgs, spec: ProfileSpec) -> anyhow::Result<Vec<RunReport>> {
    let several = spec.variants.len() > 1;
    let labels: Vec<String> = spec.variants.iter().map(|v| v.label.clone()).collect();
    let total = spec.variants.len() as u64 * u64::from(spec.warmup + spec.iterations);
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {msg} [{bar:30}] {pos}/{len} iterations",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let engine = Engine::start(Job::Profile(args.target.target(), spec), Arc::new(|| {}))
        .context("cannot start the profiling engine")?;
    let mut reports: Option<Vec<RunReport>> = None;
    let mut records = ReportCollector::default();
    for event in engine.profile_events() {
        match event {
            EngineEvent::Connected { target, session_ms } => {
                bar.suspend(|| {
                    let took = crate::text::ms(session_ms);
                    eprintln!("connected to {target} (session created in {took})")
                });
            }
            EngineEvent::Progress {
                variant,
                rows,
                wire_bytes,
                ..
            } => {
                let name = if several {
                    format!("{}: ", printable(&labels[variant]))
                } else {
                    String::new()
                };
                bar.set_message(format!(
                    "{name}{} rows, {}",
                    crate::text::count(rows),
                    crate::text::bytes(wire_bytes)
                ));
            }
            EngineEvent::Iteration { variant, record } => {
                bar.inc(1);
                if let Some(error) = record.error() {
                    let name = if several {
                        format!("{}, ", printable(&record.run))
                    } else {
                        String::new()
                    };
                    // Printed whether or not stderr is a terminal (the bar itself hides when not).
                    // A server's text: its control characters escaped before the terminal.
                    let error = printable(error);
                    bar.suspend(|| eprintln!("{name}iteration {}: {error}", record.iteration));
                }
                records.push(variant, *record);
            }
            // The headless profile prints timings only.
            EngineEvent::Details(_) => {}
            EngineEvent::Finished(heads) => reports = Some(records.finish(heads)),
            EngineEvent::Failed(error) => {
                bar.finish_and_clear();
                return Err(error.into());
            }
        }
    }
    bar.finish_and_clear();
    reports.context("the engine stopped without a report")
}

/// The summary on `out`: the tables, each run's findings, top operators and traces, each variant
/// against the reference, a sweep's table.
fn print_summary(
    out: &mut impl Write,
    reports: &[RunReport],
    reference: &str,
) -> anyhow::Result<()> {
    let several = reports.len() > 1;
    out.write_all(&Markdown.export(reports)?)?;
    for report in reports {
        let found = summary::findings(report);
        let plan = super::plan::plan_summary(report, 5);
        for text in [found, plan, super::headers::traces(report)] {
            if !text.is_empty() {
                if several {
                    write!(out, "\n{}:", printable(&report.config.label))?;
                }
                out.write_all(text.as_bytes())?;
            }
        }
    }
    out.write_all(summary::against_reference(reports, reference).as_bytes())?;
    if let Some(text) = summary::sweep(reports) {
        out.write_all(text.as_bytes())?;
    }
    Ok(())
}

fn parse_param(text: &str) -> Result<Param, String> {
    Param::parse(text).map_err(|e| e.to_string())
}
