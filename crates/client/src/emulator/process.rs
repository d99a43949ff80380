//! Starting and stopping the installed `emulator_main`.
//!
//! No port is picked for the emulator and handed over: it is started on the address the caller
//! names, port 0 included, binds it itself and says where it listens on stderr
//! (`... Server address: 127.0.0.1:36739`). That line is awaited for a bounded time; then a named
//! thread keeps reading stderr (so the pipe never fills and blocks the emulator) and remembers its
//! last lines for the error, should the emulator die. Ready means a TCP connection to the address
//! succeeds.

use std::collections::VecDeque;
use std::io::{BufRead as _, BufReader, Read};
use std::net::{TcpStream, ToSocketAddrs as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::children;

/// The environment variable naming `emulator_main`, when it is not where its package puts it.
pub const BINARY_VAR: &str = "SPANPROF_EMULATOR_MAIN";
/// The Debian package that installs `emulator_main`.
pub const PACKAGE: &str = "google-cloud-cli-spanner-emulator";
/// How long [`Emulator::start`] waits for the emulator to print its address and accept a connection.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);

/// What comes before the address in the emulator's start-up line.
const ADDRESS_MARKER: &str = "Server address: ";
/// The lines of stderr an error carries, at most.
const TAIL_LINES: usize = 20;
/// The characters kept of each of those lines.
const TAIL_LINE_CHARS: usize = 400;
/// How long one connection attempt may take.
const CONNECT_ATTEMPT: Duration = Duration::from_millis(200);
/// The pause between connection attempts, and between looks at a process that is exiting.
const RETRY_INTERVAL: Duration = Duration::from_millis(50);
/// How long a process whose stderr closed gets to exit by itself before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long the emulator gets to stop after SIGTERM before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(1);

/// Why the emulator could not be found or started.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    /// `dpkg` could not be run to find the installed binary.
    #[error("cannot ask dpkg where the emulator is")]
    Dpkg(#[source] std::io::Error),
    /// Neither [`BINARY_VAR`] nor the package names an `emulator_main`.
    #[error(
        "the Cloud Spanner emulator is not installed (no emulator_main in {PACKAGE}); \
         install it or set {BINARY_VAR}"
    )]
    NotInstalled,
    /// The process could not be started.
    #[error("cannot start {}", binary.display())]
    Spawn {
        /// The binary that was run.
        binary: PathBuf,
        /// Why it did not start.
        #[source]
        source: std::io::Error,
    },
    /// The thread that reads the emulator's stderr could not be started.
    #[error("cannot start a thread to read the emulator's output")]
    Thread(#[source] std::io::Error),
    /// The process ended (or closed its stderr) before it was ready.
    #[error("the emulator exited before it was ready ({}); {}",
        status_text(.status), tail_text(.tail))]
    Exited {
        /// How it ended, if that could be learnt.
        status: Option<ExitStatus>,
        /// Its last lines of stderr.
        tail: Vec<String>,
    },
    /// The process did not print its address in time (it was killed).
    #[error("the emulator did not print its address within {} s; {}",
        .timeout.as_secs_f64(), tail_text(.tail))]
    NoAddress {
        /// How long it was given.
        timeout: Duration,
        /// Its last lines of stderr.
        tail: Vec<String>,
    },
    /// The process printed its address but did not accept a connection in time (it was killed).
    #[error("the emulator did not accept connections on {address} within {} s",
        .timeout.as_secs_f64())]
    NotListening {
        /// The address it printed.
        address: String,
        /// How long it was given, in all.
        timeout: Duration,
    },
}

/// A running `emulator_main`, ready for connections; killed (and waited for) when dropped.
#[derive(Debug)]
pub struct Emulator {
    child: Child,
    registration: Option<children::Registration>,
    address: String,
    drain: Option<JoinHandle<Vec<String>>>,
}

impl Emulator {
    /// Starts the installed emulator ([`installed_binary`]) on `host_port` (`127.0.0.1:0` for any
    /// free port) and waits, at most [`START_TIMEOUT`], until it accepts connections.
    pub fn start(host_port: &str) -> Result<Emulator, EmulatorError> {
        Emulator::start_binary(&installed_binary()?, host_port, START_TIMEOUT)
    }

    /// [`Emulator::start`] with `flags` of the emulator's own after its address (e.g.
    /// `--enable_fault_injection`, which aborts some first commits at random).
    pub fn start_with_flags(host_port: &str, flags: &[&str]) -> Result<Emulator, EmulatorError> {
        Emulator::start_binary_with(&installed_binary()?, host_port, flags, START_TIMEOUT)
    }

    /// Starts `binary --host_port host_port` and waits, at most `timeout` in all, until it has
    /// printed its address and a TCP connection to that address succeeds.
    pub fn start_binary(
        binary: &Path,
        host_port: &str,
        timeout: Duration,
    ) -> Result<Emulator, EmulatorError> {
        Emulator::start_binary_with(binary, host_port, &[], timeout)
    }

    fn start_binary_with(
        binary: &Path,
        host_port: &str,
        flags: &[&str],
        timeout: Duration,
    ) -> Result<Emulator, EmulatorError> {
        let deadline = Instant::now() + timeout;
        let mut command = Command::new(binary);
        command
            .args(["--host_port", host_port])
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // Registered, so a signal to spanprof stops it; it dies with spanprof's process however
        // that ends (`children`). `emulator_main` is one process: nothing of its own to follow.
        let stop = children::Stop {
            group: false,
            grace: STOP_GRACE,
        };
        let (mut child, registration) =
            children::spawn(command, stop).map_err(|source| EmulatorError::Spawn {
                binary: binary.to_owned(),
                source,
            })?;
        let (found, address) = mpsc::channel();
        let drain = match child.stderr.take().map(|stderr| spawn_drain(stderr, found)) {
            Some(Ok(handle)) => handle,
            Some(Err(e)) => {
                return Err(kill_unwatched(
                    child,
                    registration,
                    EmulatorError::Thread(e),
                ));
            }
            None => return Err(kill_unwatched(child, registration, missing_pipe(binary))),
        };
        // From here on, dropping `emulator` kills the process and ends the thread.
        let mut emulator = Emulator {
            child,
            registration: Some(registration),
            address: String::new(),
            drain: Some(drain),
        };
        match address.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(found) => emulator.address = found,
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(emulator.exited()),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let (_, tail) = emulator.shut_down(Duration::ZERO);
                return Err(EmulatorError::NoAddress { timeout, tail });
            }
        }
        emulator.wait_until_listening(deadline, timeout)?;
        Ok(emulator)
    }

    /// Where it listens, `host:port`, as it printed it.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Tries to connect until one succeeds, the process exits, or `deadline` passes.
    fn wait_until_listening(
        &mut self,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), EmulatorError> {
        loop {
            if accepts_connections(&self.address) {
                return Ok(());
            }
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return Err(self.exited());
            }
            if Instant::now() >= deadline {
                return Err(EmulatorError::NotListening {
                    address: self.address.clone(),
                    timeout,
                });
            }
            std::thread::sleep(RETRY_INTERVAL);
        }
    }

    /// The error for a process that ended early: its status and the tail of its stderr.
    fn exited(&mut self) -> EmulatorError {
        let (status, tail) = self.shut_down(EXIT_GRACE);
        EmulatorError::Exited { status, tail }
    }

    /// Gives the process `grace` to exit by itself, then kills it; waits for it and for the
    /// stderr thread. Returns its exit status and the last lines of its stderr.
    fn shut_down(&mut self, grace: Duration) -> (Option<ExitStatus>, Vec<String>) {
        let until = Instant::now() + grace;
        while Instant::now() < until && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(RETRY_INTERVAL);
        }
        self.stop_cleanly();
        let _ = self.child.kill();
        // Out of the registry before it is reaped: its pid is about to be free.
        self.registration = None;
        let status = self.child.wait().ok();
        // The process is gone, so its stderr has closed and the thread ends.
        let tail = self
            .drain
            .take()
            .and_then(|drain| drain.join().ok())
            .unwrap_or_default();
        (status, tail)
    }
}

impl Emulator {
    /// SIGTERM, then at most [`STOP_GRACE`] for the process to exit by itself.
    fn stop_cleanly(&mut self) {
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        children::terminate(&self.child);
        let until = Instant::now() + STOP_GRACE;
        while Instant::now() < until && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.shut_down(Duration::ZERO);
    }
}

/// `emulator_main`: `$SPANPROF_EMULATOR_MAIN`, else the file of that name that `dpkg -L` lists for
/// [`PACKAGE`].
pub fn installed_binary() -> Result<PathBuf, EmulatorError> {
    if let Some(path) = std::env::var_os(BINARY_VAR) {
        return Ok(PathBuf::from(path));
    }
    let mut dpkg = Command::new("dpkg");
    // Waited for on this thread, so it cannot outlive it.
    children::die_with_spanprof(&mut dpkg);
    let listed = dpkg
        .args(["-L", PACKAGE])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(EmulatorError::Dpkg)?;
    String::from_utf8_lossy(&listed.stdout)
        .lines()
        .find(|line| line.ends_with("/emulator_main"))
        .map(PathBuf::from)
        .filter(|path| path.is_file())
        .ok_or(EmulatorError::NotInstalled)
}

/// The address in the emulator's start-up line (`... Server address: 127.0.0.1:36739`), if `line`
/// is that line and the address is `host:port`.
fn server_address(line: &str) -> Option<&str> {
    let (_, rest) = line.split_once(ADDRESS_MARKER)?;
    let address = rest.trim();
    let (host, port) = address.rsplit_once(':')?;
    (!host.is_empty() && port.parse::<u16>().is_ok()).then_some(address)
}

/// Starts the thread that reads `stderr` to its end (see [`drain`]).
fn spawn_drain(
    stderr: impl Read + Send + 'static,
    found: mpsc::Sender<String>,
) -> std::io::Result<JoinHandle<Vec<String>>> {
    std::thread::Builder::new()
        .name("spanprof-emulator-stderr".into())
        .spawn(move || drain(stderr, found))
}

/// Reads `stderr` line by line until it ends: sends the first address line's address on `found`
/// (and drops it, so a receiver learns that none came when the stream ends first), and returns the
/// last [`TAIL_LINES`] lines, trimmed, each at most [`TAIL_LINE_CHARS`] characters.
fn drain(stderr: impl Read, found: mpsc::Sender<String>) -> Vec<String> {
    let mut reader = BufReader::new(stderr);
    let mut found = Some(found);
    let mut tail = VecDeque::with_capacity(TAIL_LINES);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if let Some(address) = server_address(text)
            && let Some(sender) = found.take()
        {
            // The receiver may have given up waiting; the emulator is being killed then.
            let _ = sender.send(address.to_owned());
        }
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(text.chars().take(TAIL_LINE_CHARS).collect());
    }
    tail.into()
}

/// Whether a TCP connection to `address` succeeds now.
fn accepts_connections(address: &str) -> bool {
    address.to_socket_addrs().is_ok_and(|mut resolved| {
        resolved.any(|addr| TcpStream::connect_timeout(&addr, CONNECT_ATTEMPT).is_ok())
    })
}

/// Kills and reaps a child nobody reads the stderr of yet, and passes `error` on.
fn kill_unwatched(
    mut child: Child,
    registration: children::Registration,
    error: EmulatorError,
) -> EmulatorError {
    let _ = child.kill();
    drop(registration);
    let _ = child.wait();
    error
}

/// The error for a child whose stderr pipe is missing (never, as it is asked for).
fn missing_pipe(binary: &Path) -> EmulatorError {
    EmulatorError::Spawn {
        binary: binary.to_owned(),
        source: std::io::Error::other("no pipe for its stderr"),
    }
}

/// The last lines of stderr for an error message.
fn tail_text(tail: &[String]) -> String {
    if tail.is_empty() {
        "it printed nothing".to_owned()
    } else {
        format!("its last output:\n{}", tail.join("\n"))
    }
}

fn status_text(status: &Option<ExitStatus>) -> String {
    status.map_or_else(|| "status unknown".to_owned(), |s| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::io::ErrorKind;
    use std::os::unix::fs::PermissionsExt as _;

    /// The line `emulator_main` printed on this machine.
    const START_UP_LINE: &str = "I0000 00:00:1796113342.925477    6189 emulator_main.cc:40] \
                                 Server address: 127.0.0.1:42425";

    #[test]
    fn the_address_is_read_from_the_start_up_line_only() {
        assert_eq!(server_address(START_UP_LINE), Some("127.0.0.1:42425"));
        assert_eq!(
            server_address("Server address: localhost:9010  "),
            Some("localhost:9010")
        );
        assert_eq!(server_address("Cloud Spanner Emulator running."), None);
        assert_eq!(server_address("Server address: 127.0.0.1"), None);
        assert_eq!(server_address("Server address: 127.0.0.1:99999"), None);
        assert_eq!(server_address("Server address: :9010"), None);
    }

    #[test]
    fn the_stderr_reader_sends_the_first_address_and_keeps_the_last_lines() {
        let mut text = String::from("WARNING: logging\n");
        text.push_str(START_UP_LINE);
        text.push('\n');
        text.push_str("Server address: 127.0.0.1:1\n");
        for i in 0..30 {
            text.push_str(&format!("request {i}\n"));
        }
        text.push_str(&"x".repeat(1000));
        let (found, address) = mpsc::channel();
        let tail = drain(text.as_bytes(), found);
        assert_eq!(address.try_recv().as_deref(), Ok("127.0.0.1:42425"));
        assert!(
            address.try_recv().is_err(),
            "only the first address is sent"
        );
        assert_eq!(tail.len(), TAIL_LINES);
        assert_eq!(tail[0], "request 11");
        assert_eq!(tail[TAIL_LINES - 2], "request 29");
        assert_eq!(tail[TAIL_LINES - 1], "x".repeat(TAIL_LINE_CHARS));
    }

    #[test]
    fn the_stderr_reader_hangs_up_when_no_address_came() {
        let (found, address) = mpsc::channel();
        let tail = drain(
            &b"E server.cc:318] Failed to bind to address\r\n"[..],
            found,
        );
        assert_eq!(address.recv(), Err(mpsc::RecvError));
        assert_eq!(tail, ["E server.cc:318] Failed to bind to address"]);
    }

    #[test]
    fn a_missing_binary_cannot_be_started() {
        let binary = Path::new("/nonexistent/emulator_main");
        match Emulator::start_binary(binary, "127.0.0.1:0", Duration::from_secs(5)) {
            Err(EmulatorError::Spawn {
                binary: named,
                source,
            }) => {
                assert_eq!(named, binary);
                assert_eq!(source.kind(), ErrorKind::NotFound);
            }
            other => panic!("expected a spawn error, got {other:?}"),
        }
    }

    #[test]
    fn a_binary_that_exits_at_once_is_reported_with_its_status() {
        let started = Instant::now();
        let err = Emulator::start_binary(Path::new("/bin/false"), "127.0.0.1:0", START_TIMEOUT)
            .expect_err("/bin/false exits");
        match &err {
            EmulatorError::Exited { status, tail } => {
                assert_eq!(status.and_then(|s| s.code()), Some(1));
                assert!(tail.is_empty(), "{tail:?}");
            }
            other => panic!("expected an exit error, got {other:?}"),
        }
        assert_eq!(
            err.to_string(),
            "the emulator exited before it was ready (exit status: 1); it printed nothing"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn an_emulator_that_fails_says_why_in_the_error() {
        let script = Script::new("echo 'E server.cc:318] Failed to bind to address' >&2; exit 3");
        let err = script
            .start(Duration::from_secs(10))
            .expect_err("the script exits");
        assert!(
            matches!(&err, EmulatorError::Exited { status: Some(s), .. } if s.code() == Some(3)),
            "{err:?}"
        );
        assert!(
            err.to_string().contains("Failed to bind to address"),
            "{err}"
        );
    }

    #[test]
    fn an_emulator_that_prints_no_address_is_killed_after_the_timeout() {
        let script = Script::new("echo 'warming up' >&2; exec sleep 60");
        let started = Instant::now();
        let err = script
            .start(Duration::from_millis(500))
            .expect_err("no address comes");
        assert!(started.elapsed() < Duration::from_secs(10));
        match err {
            EmulatorError::NoAddress { timeout, tail } => {
                assert_eq!(timeout, Duration::from_millis(500));
                assert_eq!(tail, ["warming up"]);
            }
            other => panic!("expected no address, got {other:?}"),
        }
    }

    #[test]
    fn an_address_nobody_accepts_connections_on_is_not_ready() {
        let closed = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
        closed
            .bind("127.0.0.1:0".parse().expect("a loopback address"))
            .expect("a free loopback port");
        let address = closed.local_addr().expect("a bound address").to_string();
        let script = Script::new(&format!(
            "echo 'Server address: {address}' >&2; exec sleep 60"
        ));
        match script.start(Duration::from_millis(500)) {
            Err(EmulatorError::NotListening {
                address: printed, ..
            }) => {
                assert_eq!(printed, address);
            }
            other => panic!("expected not listening, got {other:?}"),
        }
    }

    #[test]
    fn an_emulator_is_ready_once_its_address_accepts_connections() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback listener");
        let address = listener.local_addr().expect("a bound address").to_string();
        let script = Script::new(&format!(
            "echo 'Server address: {address}' >&2; exec sleep 60"
        ));
        let emulator = script.start(Duration::from_secs(10)).expect("it is ready");
        assert_eq!(emulator.address(), address);
    }

    /// A shell script in a temporary directory that stands in for `emulator_main`.
    struct Script {
        _dir: tempfile::TempDir,
        path: PathBuf,
    }

    impl Script {
        fn new(body: &str) -> Script {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let path = dir.path().join("emulator_main");
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("the script is written");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .expect("the script is made executable");
            Script { _dir: dir, path }
        }

        /// Starts the script as the emulator on port 0. Another test thread forking while this
        /// one wrote the script can hold it open for writing a moment: that is retried.
        fn start(&self, timeout: Duration) -> Result<Emulator, EmulatorError> {
            for _ in 0..50 {
                match Emulator::start_binary(&self.path, "127.0.0.1:0", timeout) {
                    Err(EmulatorError::Spawn { source, .. })
                        if source.kind() == ErrorKind::ExecutableFileBusy =>
                    {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    outcome => return outcome,
                }
            }
            panic!("{} stayed busy", self.path.display());
        }
    }
}
