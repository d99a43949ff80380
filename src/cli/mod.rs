//! The command line: argument definitions and one function per subcommand. `main.rs` only parses and
//! maps the result to an exit code.

mod compare;
mod connection;
mod decode;
mod driver;
mod explain;
mod gate;
mod headers;
mod history;
mod load;
mod load_draws;
mod load_summary;
mod load_variants;
mod load_vary;
mod names;
mod options;
mod outputs;
mod plan;
mod profile;
mod read_write;
mod record;
mod reports;
mod retry_lab;
mod seed;
mod serve;
mod subject;
mod summary;
mod target;
mod target_stats;
mod variants;
mod workload;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use compare::{CompareArgs, run_compare};
pub use decode::{DecodeArgs, DecoderChoice, run_decode};
pub use driver::{DriverArgs, run_driver};
pub use explain::{ExplainArgs, run_explain};
pub use history::{HistoryAction, HistoryArgs, HistoryCommandArgs, run_history};
pub use load::{LoadArgs, run_load};
pub use options::RequestOptionArgs;
pub use plan::{PlanArgs, plan_diff_text, plan_summary, run_plan};
pub use profile::{
    ModeArg, OrderArg, ProfileArgs, ProfileOutcome, QueryArgs, findings, run_profile,
};
pub use record::{RecordArgs, run_record};
pub use seed::{SeedArgs, run_seed};
pub use serve::{QueueArgs, ServeArgs, apply_knob, run_serve};
pub use subject::{SubjectArgs, run_subject};
pub use target::{TargetArgs, TimeoutArgs};
pub use variants::{SweepSpec, parse_sweep};
pub use workload::Workload;

/// The exit code of a profile with a failed or cancelled iteration.
pub const ITERATIONS_FAILED: u8 = 3;
/// The exit code of a gate (`--fail-if-slower`) that found a regression.
pub const REGRESSED: u8 = 4;
/// The exit code of a gate that had no baseline to compare with (an empty history, a baseline
/// that could not be read): the run itself was printed, exported and saved.
pub const NO_BASELINE: u8 = 5;

/// spanprof: where does the time of a Cloud Spanner query go?
#[derive(Debug, Parser)]
#[command(
    name = "spanprof",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do; the desktop app when left out.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The app only: JSON reports to open (`spanprof a.json b.json`); two runs or more are shown
    /// side by side in Compare.
    #[arg(value_name = "REPORT.json")]
    pub reports: Vec<std::path::PathBuf>,
    /// The app only: record frame times while runs stream, appended to FILE as CSV.
    #[arg(long, value_name = "FILE", env = "SPANPROF_FRAME_STATS", hide = true)]
    pub frame_stats: Option<std::path::PathBuf>,
    /// The app only: write the state of the last run (`running`, `finished ...`) to FILE.
    #[arg(long, value_name = "FILE", env = "SPANPROF_STATUS_FILE", hide = true)]
    pub status_file: Option<std::path::PathBuf>,
    /// The app only: rows in the local instance's Seed23 (overrides the saved setting).
    #[arg(long, value_name = "N", env = "SPANPROF_ROWS", hide = true)]
    pub rows: Option<u64>,
    /// The app only: the SQL to start with (overrides the saved query).
    #[arg(long, value_name = "SQL", env = "SPANPROF_SQL", hide = true)]
    pub sql: Option<String>,
    /// The app only: timed iterations, without warm-up (overrides the saved setting).
    #[arg(long, value_name = "N", env = "SPANPROF_ITERATIONS", hide = true)]
    pub iterations: Option<u32>,
    /// The app only: the query mode to start with (overrides the saved setting).
    #[arg(long, value_enum, env = "SPANPROF_MODE", hide = true)]
    pub start_mode: Option<ModeArg>,
    /// The app only: the tab to show first (iterations, compare, plan, details, history or load).
    #[arg(long, value_name = "TAB", env = "SPANPROF_TAB", hide = true, value_parser = crate::app::Tab::parse)]
    pub start_tab: Option<crate::app::Tab>,
    /// The app only: start the emulator on HOST:PORT (port 0: any) and seed it at once.
    #[arg(
        long,
        value_name = "HOST:PORT",
        env = "SPANPROF_START_EMULATOR",
        hide = true
    )]
    pub start_emulator: Option<String>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode a recorded stream file and print one canonical JSON array per row.
    Decode(DecodeArgs),
    /// Compare two runs' JSON reports: medians per phase, whether the difference is real and where
    /// it is; with --fail-if-slower, a CI gate (exit code 4 on a regression).
    Compare(CompareArgs),
    /// Explain each iteration of a JSON report against the median one: its extra time split into
    /// causes (first byte, a stream gap at a message, decode, descheduling, resumes, other).
    Explain(ExplainArgs),
    /// Show the query plans a JSON report or a recorded stream holds: the operator tree with self
    /// and total time, rows, scanned rows and executions, hottest operators first.
    Plan(PlanArgs),
    /// Run one or more queries N times, interleaved, and report where the time went, per
    /// iteration and per phase, and how they compare.
    Profile(Box<ProfileArgs>),
    /// Run a query once and write its stream, as the decoder consumed it, to a stream file.
    Record(Box<RecordArgs>),
    /// Run a query under load: a steady arrival rate (`--rate 50,100,200`) or a fixed
    /// concurrency (`--concurrency 1,2,4`), a step each; latencies from the intended and the
    /// actual start, the knee, where the time went.
    Load(Box<LoadArgs>),
    /// Run another program's Spanner client N times against the local instance (knobs as for
    /// `serve`): where its time goes as the server sees it (blocked time included), every row it
    /// prints checked, beside spanprof's own decoder and the wire floor.
    Client(Box<SubjectArgs>),
    /// Read $SPANPROF_SQL from $SPANNER_EMULATOR_HOST as spanprof's own client and print each row
    /// as a canonical JSON line: a program for `spanprof client` to run.
    Driver(DriverArgs),
    /// Run the built-in local instance (a Spanner-compatible server over demo data) until Ctrl-C.
    Serve(ServeArgs),
    /// Create the demo tables in a Cloud Spanner emulator and load their rows.
    Seed(SeedArgs),
    /// The run history: every finished run of `profile` and `client`, newest first; `show` or
    /// `export` one.
    History(HistoryCommandArgs),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Decode(args)) => {
            let stdout = std::io::stdout().lock();
            let stderr = std::io::stderr().lock();
            run_decode(&args, stdout, stderr)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Compare(args)) => {
            let regressed = run_compare(&args, std::io::stdout())?;
            Ok(if regressed {
                ExitCode::from(REGRESSED)
            } else {
                ExitCode::SUCCESS
            })
        }
        Some(Command::Explain(args)) => {
            run_explain(&args, std::io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Plan(args)) => {
            run_plan(&args, std::io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Profile(args)) => Ok(match run_profile(&args, std::io::stdout())? {
            ProfileOutcome::Passed => ExitCode::SUCCESS,
            ProfileOutcome::IterationsFailed => ExitCode::from(ITERATIONS_FAILED),
            ProfileOutcome::Regressed => ExitCode::from(REGRESSED),
            ProfileOutcome::NoBaseline => ExitCode::from(NO_BASELINE),
        }),
        Some(Command::Load(args)) => {
            match &args.vary {
                Some(vary) => load_variants::run_variants(&args, vary, std::io::stdout())?,
                None => run_load(&args, std::io::stdout())?,
            };
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Record(args)) => {
            run_record(&args, std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Client(args)) if args.read_write => {
            Ok(if retry_lab::run_retry_lab(&args, std::io::stdout())? {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(ITERATIONS_FAILED)
            })
        }
        Some(Command::Client(args)) => Ok(if run_subject(&args, std::io::stdout())? {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(ITERATIONS_FAILED)
        }),
        Some(Command::Driver(args)) => {
            // Line-buffered as the locked stdout is, and `Send` (the rows' callback must be).
            run_driver(&args, std::io::LineWriter::new(std::io::stdout()))?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Serve(args)) => {
            run_serve(&args, std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Seed(args)) => {
            run_seed(&args, std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::History(args)) => {
            run_history(&args, std::io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            crate::app::launch(crate::app::AppOptions {
                persist: true,
                local_rows: cli.rows,
                sql: cli.sql,
                iterations: cli.iterations,
                frame_stats: cli.frame_stats,
                status_file: cli.status_file,
                file_dialogs: crate::app::DialogBackend::System,
                mode: cli.start_mode.map(crate::engine::QueryMode::from),
                tab: cli.start_tab,
                start_emulator: cli.start_emulator,
                history: crate::history::Location::choose(
                    std::env::var("SPANPROF_HISTORY").ok().as_deref(),
                    false,
                )
                .unwrap_or_default(),
                open: cli.reports,
            })?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
