//! `spanprof serve` as a child process, for tests that need a server of its own: process-wide harm
//! (SQLite's heap limit is per process), its resident memory, and its threads, unmixed with the other
//! tests of this binary.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `spanprof serve`, killed when dropped.
pub struct ServeProcess {
    child: Child,
    /// Its `host:port`.
    pub host: String,
}

impl ServeProcess {
    /// Starts `spanprof serve` on a free port with `args` and waits for its address.
    pub fn start(args: &[&str]) -> ServeProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_spanprof"))
            .arg("serve")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spanprof serve starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
        let host = lines.find_map(|l| l.strip_prefix("SPANNER_EMULATOR_HOST=").map(str::to_owned));
        // Keep reading what it prints, so its stdout never closes under it.
        std::thread::spawn(move || lines.for_each(drop));
        let mut server = ServeProcess {
            child,
            host: String::new(),
        };
        server.host = host.expect("serve prints SPANNER_EMULATOR_HOST");
        server
    }

    /// Its resident memory, in bytes.
    pub fn rss(&self) -> u64 {
        self.status_bytes("VmRSS:")
    }

    /// The most resident memory it has had, in bytes.
    pub fn peak_rss(&self) -> u64 {
        self.status_bytes("VmHWM:")
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The `/proc/PID/status` line `key` (kB), in bytes.
    fn status_bytes(&self, key: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("a {key} line"))
            * 1024
    }

    /// How many of its threads are query threads (named `spanprof-query-N`).
    pub fn query_threads(&self) -> usize {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id())).expect("tasks");
        tasks
            .filter_map(Result::ok)
            .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
            .filter(|name| name.starts_with("spanprof-query"))
            .count()
    }

    /// Waits up to `limit` for its query threads to number `n`; how long that took, or `None`.
    pub async fn wait_for_query_threads(&self, n: usize, limit: Duration) -> Option<Duration> {
        let start = Instant::now();
        while start.elapsed() <= limit {
            if self.query_threads() == n {
                return Some(start.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        None
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
