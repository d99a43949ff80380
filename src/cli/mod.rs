//! The command line: argument definitions and one function per subcommand. `main.rs` only parses and
//! maps the result to an exit code.

mod decode;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use decode::{DecodeArgs, run_decode};
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
    /// Run the built-in local instance (a Spanner-compatible server over demo data) until Ctrl-C.
    Serve(ServeArgs),
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
        Some(Command::Serve(args)) => {
            run_serve(&args, std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            anyhow::bail!(
                "the desktop app is not built yet; `spanprof decode FILE` decodes a stream file (see --help)"
            )
        }
    }
}
