//! The `spanprof` binary: parse the command line, run it, map errors to an exit code.

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = spanprof::cli::Cli::parse();
    match spanprof::cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // One line: the error and its causes, joined.
            eprintln!("spanprof: {e:#}");
            ExitCode::FAILURE
        }
    }
}
