//! The `spanprof` binary: parse the command line, run it, map errors to an exit code.

use std::process::ExitCode;

use clap::Parser as _;

// The server and the decoder allocate many small strings from several threads at once; mimalloc's
// per-thread heaps avoid glibc's arena lock contention there (about a third of the server's time).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Before SQLite starts (the history store, the local instance): bound what a query builds.
    spanprof::server::sqlite::memory::install();
    let cli = spanprof::cli::Cli::parse();
    let ran = spanprof::cli::run(cli);
    // A SIGTERM that stopped a client program ends a run early: the signal's status, not the run's.
    spanprof::children::let_a_signal_end_the_process();
    match ran {
        Ok(code) => code,
        Err(e) => {
            // One line: the error and its causes, joined, with whatever a server or a file put in
            // them written as text (a control character would reach the terminal).
            eprintln!("spanprof: {}", spanprof::text::printable(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}
