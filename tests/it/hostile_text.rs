//! A server's error text reached the terminal as it came, escape
//! sequences and all (a server could retitle, clear or restyle the user's terminal through an
//! error message). Now every line spanprof prints of it has its control characters escaped.

use std::process::Command;

use crate::history::text;
use tonic::Code;

use crate::standin::{Behaviour, Queries, StandIn};

/// Retitles the terminal, clears it, and rings the bell.
const HOSTILE: &str = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{1b}[31mred";

/// `spanprof profile` of one query against `host`, its stderr raw.
fn profile_against(host: &str) -> (Option<i32>, Vec<u8>) {
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args([
            "profile",
            "--endpoint",
            host,
            "--sql",
            "SELECT 1",
            "--iterations",
            "2",
        ])
        .args(["--warmup", "0", "--no-history"])
        .output()
        .expect("runs");
    (out.status.code(), out.stderr)
}

/// Against main (ef0cf4c) both the session's error (the one line `main` prints) and each failed
/// iteration's line carried ESC and BEL bytes to the terminal. Now neither does; the text is shown
/// with its control characters written as `\u{1b}`.
#[test]
fn a_server_s_error_text_reaches_the_terminal_escaped() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    for behaviour in [
        Behaviour {
            fail_sessions: Some(HOSTILE),
            ..Behaviour::default()
        },
        Behaviour::answering(Queries::Refuse(Code::Internal, HOSTILE)),
    ] {
        let standin = runtime.block_on(StandIn::start(behaviour));
        let host = standin.host();
        let (code, stderr) = profile_against(host);
        let shown = text(&stderr);
        eprintln!("exit {code:?}: {shown:?}");
        assert!(code.is_some_and(|c| c != 0), "it failed: {shown}");
        assert!(
            !stderr.iter().any(|&b| b == 0x1b || b == 0x07),
            "raw control bytes reached the terminal: {shown:?}"
        );
        assert!(
            shown.contains("\\u{1b}]0;owned\\u{7}"),
            "shown as text: {shown}"
        );
    }
}
