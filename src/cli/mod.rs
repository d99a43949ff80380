//! The command line: argument definitions and one function per subcommand. `main.rs` only parses and
//! maps the result to an exit code.

mod compare;
mod decode;
mod profile;
mod seed;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use compare::{CompareArgs, run_compare};
pub use decode::{DecodeArgs, DecoderChoice, run_decode};
pub use profile::{
    ModeArg, ProfileArgs, QueryArgs, RecordArgs, TargetArgs, findings, run_profile, run_record,
};
pub use seed::{SeedArgs, run_seed};
pub use serve::{ServeArgs, apply_knob, run_serve};

/// spanprof: where does the time of a Cloud Spanner query go?
#[derive(Debug, Parser)]
#[command(name = "spanprof", version, about)]
pub struct Cli {
    /// What to do; the desktop app when left out.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode a recorded stream file and print one canonical JSON array per row.
    Decode(DecodeArgs),
    /// Compare two runs' JSON reports: medians per phase, and whether the difference is real.
    Compare(CompareArgs),
    /// Run a query N times and report where the time went, per iteration and per phase.
    Profile(Box<ProfileArgs>),
    /// Run a query once and write its stream, as the decoder consumed it, to a stream file.
    Record(Box<RecordArgs>),
    /// Run the built-in local instance (a Spanner-compatible server over demo data) until Ctrl-C.
    Serve(ServeArgs),
    /// Create the demo tables in a Cloud Spanner emulator and load their rows.
    Seed(SeedArgs),
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
            run_compare(&args, std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Profile(args)) => {
            let all_ok = run_profile(&args, std::io::stdout())?;
            Ok(if all_ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(3)
            })
        }
        Some(Command::Record(args)) => {
            run_record(&args, std::io::stdout())?;
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
        None => {
            anyhow::bail!(
                "the desktop app is not built yet; `spanprof decode FILE` decodes a stream file (see --help)"
            )
        }
    }
}
