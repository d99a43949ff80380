//! The program under the microscope: its command line, and one run of it with the local instance
//! named in its environment, timed from just before it starts to the moment it exits, its output
//! kept within bounds, killed (with everything it started) if it outlives its limit.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::children;
use crate::client::Readable;

/// Bytes of standard output kept for the row check, at most (about 230,000 Seed23 rows as JSON).
pub const MAX_STDOUT_BYTES: usize = 256 << 20;
/// Bytes of standard error kept (its end), for the error message.
pub const STDERR_TAIL_BYTES: usize = 8 << 10;
/// How long output is still read after the program exited or was killed (a grandchild that holds
/// the pipe open does not stall the run).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// A command line: the program and its arguments, as given (no shell).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct CommandLine {
    /// The program: a path, or a name looked up in `PATH`.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// A command line that cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandLineError {
    /// Nothing to run.
    #[error("no command: give the program to run and its arguments")]
    Empty,
    /// A quote was opened and never closed.
    #[error("the command line has an unclosed {0} quote")]
    Unclosed(char),
    /// A word holds a NUL byte or a control character, which no program receives as written.
    #[error("the command line holds a control character")]
    Control,
}

impl CommandLine {
    /// The command of `words` (program first).
    pub fn new(words: Vec<String>) -> Result<Self, CommandLineError> {
        let mut words = words.into_iter();
        let program = words.next().filter(|p| !p.is_empty());
        let Some(program) = program else {
            return Err(CommandLineError::Empty);
        };
        let args: Vec<String> = words.collect();
        if std::iter::once(&program)
            .chain(&args)
            .any(|w| w.chars().any(char::is_control))
        {
            return Err(CommandLineError::Control);
        }
        Ok(CommandLine { program, args })
    }

    /// Splits `text` into words as a POSIX shell would, quotes and backslashes only (no variables,
    /// globs or redirections): `python3 "my driver.py" --x 'a b'`.
    pub fn parse(text: &str) -> Result<Self, CommandLineError> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut in_word = false;
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            match c {
                '\'' => {
                    in_word = true;
                    loop {
                        match chars.next() {
                            Some('\'') => break,
                            Some(c) => word.push(c),
                            None => return Err(CommandLineError::Unclosed('\'')),
                        }
                    }
                }
                '"' => {
                    in_word = true;
                    loop {
                        match chars.next() {
                            Some('"') => break,
                            Some('\\') => match chars.next() {
                                Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                                Some(c) => {
                                    word.push('\\');
                                    word.push(c);
                                }
                                None => return Err(CommandLineError::Unclosed('"')),
                            },
                            Some(c) => word.push(c),
                            None => return Err(CommandLineError::Unclosed('"')),
                        }
                    }
                }
                '\\' => {
                    in_word = true;
                    if let Some(c) = chars.next() {
                        word.push(c);
                    }
                }
                c if c.is_whitespace() => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                c => {
                    in_word = true;
                    word.push(c);
                }
            }
        }
        if in_word {
            words.push(word);
        }
        Self::new(words)
    }

    /// The command as one line a shell would split back into the same words.
    pub fn display(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|w| quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A short name for its run: the program's file name and its first argument's
    /// (`python3 python_client.py`).
    pub fn short_name(&self) -> String {
        let base = |w: &str| {
            std::path::Path::new(w)
                .file_name()
                .map_or_else(|| w.to_owned(), |n| n.to_string_lossy().into_owned())
        };
        let mut name = base(&self.program);
        if let Some(first) = self.args.first() {
            name.push(' ');
            name.push_str(&base(first));
        }
        name.chars().take(200).collect()
    }
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// How a run of the program ended.
#[derive(Debug)]
pub struct Ran {
    /// Just before it was started.
    pub started: Instant,
    /// When it was seen to exit.
    pub exited: Instant,
    /// Whether it exited with status 0.
    pub success: bool,
    /// Its exit status, in words (`exit status 1`, `signal 9 (SIGKILL)`).
    pub status: String,
    /// Its standard output, at most [`MAX_STDOUT_BYTES`].
    pub stdout: Vec<u8>,
    /// Whether it printed more than that.
    pub stdout_truncated: bool,
    /// The end of its standard error.
    pub stderr_tail: String,
}

/// Why a run of the program failed before it could be judged.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RunError {
    /// It could not be started.
    #[error("cannot start {program}: {reason}")]
    Start {
        /// The program.
        program: String,
        /// The system's reason.
        reason: String,
    },
    /// It did not exit within its limit, and was killed.
    #[error("the command did not exit within {} and was killed{}", Readable(*.after), stderr_note(.stderr_tail))]
    Timeout {
        /// The limit.
        after: Duration,
        /// The end of its standard error.
        stderr_tail: String,
    },
    /// Waiting for it failed.
    #[error("cannot wait for the command: {0}")]
    Wait(String),
}

/// `: <the last line of stderr>` when there is one.
pub fn stderr_note(tail: &str) -> String {
    match tail.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(line) => format!(
            " (its last words: {})",
            crate::report::printable(line.trim())
        ),
        None => String::new(),
    }
}

/// Runs `command` with `env` added to its environment (standard input empty), and waits for it
/// at most `limit`; past it, it is killed with its whole process group. However the run ends
/// (the program's exit, the limit, this future dropped), what is left of its group and the
/// orphans it left (`setsid` ones too) are killed before this returns (`children::Group`).
pub async fn run(
    command: &CommandLine,
    env: &[(&str, String)],
    limit: Duration,
) -> Result<Ran, RunError> {
    let mut cmd = tokio::process::Command::new(&command.program);
    cmd.args(&command.args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let started = Instant::now();
    // Should this future be dropped before the run ends (a cancelled run), dropping `group`
    // kills the whole group and its orphans, not only the child `kill_on_drop` would.
    let (mut child, group) = children::spawn_group(cmd).map_err(|e| RunError::Start {
        program: command.program.clone(),
        reason: e.to_string(),
    })?;
    let stdout = child
        .stdout
        .take()
        .map(|out| tokio::spawn(read_bounded(out, MAX_STDOUT_BYTES, false)));
    let stderr = child
        .stderr
        .take()
        .map(|err| tokio::spawn(read_bounded(err, STDERR_TAIL_BYTES, true)));
    let waited = tokio::time::timeout_at((started + limit).into(), child.wait()).await;
    let exited = Instant::now();
    let reaped = matches!(waited, Ok(Ok(_)));
    let status = match waited {
        Ok(Ok(status)) => Ok(status),
        Ok(Err(e)) => Err(RunError::Wait(e.to_string())),
        Err(_) => Err(RunError::Timeout {
            after: limit,
            stderr_tail: String::new(),
        }),
    };
    // Whatever ended it, nothing it started outlives the run; this also closes the pipes that
    // a grandchild held open, so the readers end.
    let _ = tokio::task::spawn_blocking(move || group.end()).await;
    if !reaped {
        let _ = child.kill().await;
    }
    let (out, truncated) = drained(stdout).await;
    let (err, _) = drained(stderr).await;
    let stderr_tail = String::from_utf8_lossy(&err).into_owned();
    let status = match status {
        Err(RunError::Timeout { after, .. }) => {
            return Err(RunError::Timeout { after, stderr_tail });
        }
        other => other?,
    };
    Ok(Ran {
        started,
        exited,
        success: status.success(),
        status: describe(status),
        stdout: out,
        stdout_truncated: truncated,
        stderr_tail,
    })
}

/// What a reader task read, waiting at most [`DRAIN_GRACE`] for it to finish.
async fn drained(task: Option<tokio::task::JoinHandle<(Vec<u8>, bool)>>) -> (Vec<u8>, bool) {
    let Some(task) = task else {
        return (Vec::new(), false);
    };
    let abort = task.abort_handle();
    match tokio::time::timeout(DRAIN_GRACE, task).await {
        Ok(Ok(read)) => read,
        Ok(Err(_)) => (Vec::new(), false),
        Err(_) => {
            abort.abort();
            (Vec::new(), true)
        }
    }
}

/// Reads `from` to its end, keeping at most `max` bytes (the first ones, or with `tail` the last
/// ones) and whether more came.
async fn read_bounded(mut from: impl AsyncRead + Unpin, max: usize, tail: bool) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut more = false;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if tail {
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > max {
                let cut = kept.len() - max;
                kept.drain(..cut);
                more = true;
            }
        } else {
            let room = max - kept.len().min(max);
            kept.extend_from_slice(&buf[..n.min(room)]);
            more |= n > room;
        }
    }
    (kept, more)
}

fn describe(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => "an unknown exit status".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let c = CommandLine::parse(text).expect("parses");
        std::iter::once(c.program).chain(c.args).collect()
    }

    #[test]
    fn command_lines_split_as_a_shell_splits_them() {
        assert_eq!(
            words(r#"python3 "my driver.py" --x 'a b' c\ d "q\"t""#),
            ["python3", "my driver.py", "--x", "a b", "c d", "q\"t"]
        );
        assert_eq!(words("  node  x.js  "), ["node", "x.js"]);
        assert_eq!(words("a ''"), ["a", ""]);
        assert_eq!(CommandLine::parse("   "), Err(CommandLineError::Empty));
        assert_eq!(
            CommandLine::parse("a 'b"),
            Err(CommandLineError::Unclosed('\''))
        );
        assert_eq!(
            CommandLine::parse("a \"b"),
            Err(CommandLineError::Unclosed('"'))
        );
        assert_eq!(
            CommandLine::new(vec!["a\u{1b}[2J".into()]),
            Err(CommandLineError::Control)
        );
    }

    #[test]
    fn a_displayed_command_splits_back_into_its_words() {
        let c =
            CommandLine::new(vec!["py thon".into(), "it's".into(), "x.py".into()]).expect("valid");
        assert_eq!(CommandLine::parse(&c.display()), Ok(c.clone()));
        assert_eq!(c.short_name(), "py thon it's");
        let d = CommandLine::parse("/usr/bin/python3 examples/clients/python_client.py")
            .expect("valid");
        assert_eq!(d.short_name(), "python3 python_client.py");
    }

    #[tokio::test]
    async fn output_is_kept_within_bounds_and_a_hung_command_is_killed() {
        let sh = |script: &str| CommandLine::new(vec!["sh".into(), "-c".into(), script.into()]);
        let ran = run(
            &sh("echo \"$X\"; echo oops >&2; exit 3").expect("valid"),
            &[("X", "hello".into())],
            Duration::from_secs(20),
        )
        .await
        .expect("runs");
        assert_eq!(ran.stdout, b"hello\n");
        assert!(!ran.success);
        assert_eq!(ran.status, "exit status 3");
        assert_eq!(ran.stderr_tail, "oops\n");

        let started = Instant::now();
        // The grandchild (sleep) holds the pipes: the whole group goes, and the run ends anyway.
        let hung = run(
            &sh("echo last words >&2; sleep 100").expect("valid"),
            &[],
            Duration::from_millis(300),
        )
        .await;
        match hung {
            Err(e @ RunError::Timeout { .. }) => {
                assert!(e.to_string().contains("last words"), "{e}")
            }
            other => panic!("not a timeout: {other:?}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "killed in time"
        );

        #[cfg(target_os = "linux")]
        {
            // A run dropped mid-way (the user cancelled) takes its grandchildren with it.
            let dir = tempfile::tempdir().expect("a temporary directory");
            let pid_file = dir.path().join("pid");
            let script = format!("sleep 100 & echo $! > '{}'; wait", pid_file.display());
            let dropped = tokio::time::timeout(
                Duration::from_millis(500),
                run(&sh(&script).expect("valid"), &[], Duration::from_secs(60)),
            )
            .await;
            assert!(dropped.is_err(), "still running when dropped");
            let pid = std::fs::read_to_string(&pid_file).expect("the script wrote its pid");
            let gone = || {
                // Gone, or a zombie waiting for whoever reaps orphans here.
                std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).map_or(true, |stat| {
                    stat.rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z'))
                })
            };
            let deadline = Instant::now() + Duration::from_secs(10);
            while !gone() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert!(
                gone(),
                "the grandchild {} outlived the cancelled run",
                pid.trim()
            );
        }

        let missing = run(
            &CommandLine::new(vec!["/nonexistent/driver".into()]).expect("valid"),
            &[],
            Duration::from_secs(5),
        )
        .await;
        assert!(
            matches!(&missing, Err(RunError::Start { program, .. }) if program == "/nonexistent/driver"),
            "{missing:?}"
        );
    }
}
