//! The window's own CPU while a run is measured: every thread of this process but the engine's
//! and the local instance's (their threads are named `spanprof-…`: the engine's thread and its
//! runtime's workers, the local instance's query threads), summed from `/proc/self/task`. The
//! main thread, egui's and the GL driver's (llvmpipe's rasteriser threads with software GL) are
//! what is left. Linux only; elsewhere nothing is measured.

use std::collections::HashMap;
use std::time::Instant;

use crate::report::WindowCpu;

/// The prefix of the names of the threads that do the run's work, not the window's.
const RUN_THREADS: &str = "spanprof-";

/// The CPU of the window's threads counted from a start.
#[derive(Debug)]
pub struct WindowMeter {
    started: Instant,
    /// Each window thread's CPU nanoseconds at the start, by thread id.
    at_start: HashMap<u32, u64>,
}

impl WindowMeter {
    /// Counts from now; `None` where the threads' CPU cannot be read.
    pub fn start() -> Option<WindowMeter> {
        Some(WindowMeter {
            started: Instant::now(),
            at_start: window_threads()?,
        })
    }

    /// The window's CPU since the start: what each of its threads used since (a thread started
    /// since counts from zero; one that ended since is not counted).
    pub fn read(&self) -> Option<WindowCpu> {
        let now = window_threads()?;
        let ns: u64 = now
            .iter()
            .map(|(tid, &ns)| ns.saturating_sub(self.at_start.get(tid).copied().unwrap_or(0)))
            .sum();
        Some(WindowCpu {
            cpu_s: ns as f64 / 1e9,
            wall_s: self.started.elapsed().as_secs_f64(),
        })
    }
}

/// Each thread of this process outside the run's, with its CPU time so far (nanoseconds).
fn window_threads() -> Option<HashMap<u32, u64>> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    let mut out = HashMap::new();
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let path = task.path();
        let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        if is_run_thread(name.trim_end()) {
            continue;
        }
        // The thread may have ended between the listing and the read: it is left out.
        if let Some(ns) = thread_cpu_ns(&path) {
            out.insert(tid, ns);
        }
    }
    Some(out)
}

/// Whether a thread named `name` does the run's work (the engine, its runtime, the local
/// instance), not the window's.
fn is_run_thread(name: &str) -> bool {
    name.starts_with(RUN_THREADS)
}

/// A thread's CPU time so far: `schedstat`'s nanoseconds on the CPU, else `stat`'s user and
/// system clock ticks (100 a second on Linux).
fn thread_cpu_ns(task: &std::path::Path) -> Option<u64> {
    if let Ok(text) = std::fs::read_to_string(task.join("schedstat"))
        && let Some(ns) = text.split_whitespace().next().and_then(|s| s.parse().ok())
    {
        return Some(ns);
    }
    let stat = std::fs::read_to_string(task.join("stat")).ok()?;
    // The fields after the name (which may hold spaces and parentheses) from its closing one:
    // state is the first, utime the twelfth and stime the thirteenth.
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|s| s.parse::<u64>().ok());
    Some((ticks(11)? + ticks(12)?) * 10_000_000)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_run_threads_are_told_from_the_window_threads() {
        for run in ["spanprof-engine", "spanprof-query-", "spanprof-seed"] {
            assert!(is_run_thread(run), "{run}");
        }
        for window in ["spanprof", "llvmpipe-0", "eframe", "gdbus"] {
            assert!(!is_run_thread(window), "{window}");
        }
    }

    /// A thread named `name` that spins for 150 ms and then waits, alive,
    /// until told; its thread id.
    fn spinner(
        name: &str,
    ) -> (
        u32,
        std::sync::mpsc::Sender<()>,
        std::thread::JoinHandle<()>,
    ) {
        let (id_tx, id_rx) = std::sync::mpsc::channel();
        let (end_tx, end_rx) = std::sync::mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let until = Instant::now() + std::time::Duration::from_millis(150);
                let mut n = 0u64;
                while Instant::now() < until {
                    n = std::hint::black_box(n + 1);
                }
                let tid = std::fs::read_link("/proc/thread-self")
                    .ok()
                    .and_then(|p| p.file_name()?.to_str()?.parse::<u32>().ok());
                _ = id_tx.send(tid);
                _ = end_rx.recv();
            })
            .expect("a thread");
        let tid = id_rx.recv().expect("its id").expect("/proc/thread-self");
        (tid, end_tx, handle)
    }

    #[test]
    fn a_window_thread_that_spins_is_counted_and_a_run_thread_is_not() {
        let meter = WindowMeter::start().expect("/proc/self/task is there");
        let (run, end_run, run_handle) = spinner("spanprof-engine");
        let (window, end_window, window_handle) = spinner("painter");
        let threads = window_threads().expect("read");
        assert!(!threads.contains_key(&run), "{threads:?}");
        assert!(threads[&window] >= 100_000_000, "{threads:?}");
        let cpu = meter.read().expect("read");
        assert!(cpu.cpu_s >= 0.1, "{cpu:?}");
        assert!(cpu.wall_s >= 0.3, "{cpu:?}");
        for (end, handle) in [(end_run, run_handle), (end_window, window_handle)] {
            _ = end.send(());
            handle.join().expect("ended");
        }
    }
}
