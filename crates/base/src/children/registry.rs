//! The children spanprof has started and not yet reaped, and what ends them all: on a signal
//! that would end spanprof (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM...: `sys::ENDING`;
//! a thread of its own waits for them) and on a panic of the main thread.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use super::sys;

/// The environment variable that marks a client program's run and all it starts: its value is
/// spanprof's pid, a dot, and the run's number.
pub const MARK_VAR: &str = "SPANPROF_RUN";

/// How long the end of a run looks for what its group left behind.
const SWEEP_WITHIN: Duration = Duration::from_secs(3);
/// The pause between looks at processes that are stopping.
const POLL: Duration = Duration::from_millis(10);

/// How a registered child is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    /// Signal its whole process group (it leads one), not only the process.
    pub group: bool,
    /// How long it gets after SIGTERM before SIGKILL; zero sends SIGKILL at once.
    pub grace: Duration,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    id: u64,
    pid: u32,
    stop: Stop,
}

/// The children started and not yet reaped. Invariant: an entry is removed before its child is
/// reaped, so its pid is never that of another process.
static ENTRIES: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn entries() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    // A panic while the lock was held leaves a vector still worth reading.
    ENTRIES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Adds `pid`; the number returned removes it again.
pub fn register(pid: u32, stop: Stop) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    entries().push(Entry { id, pid, stop });
    id
}

/// Removes what [`register`] returned `id` for.
pub fn unregister(id: u64) {
    entries().retain(|e| e.id != id);
}

/// The pids registered now.
pub fn registered() -> Vec<u32> {
    entries().iter().map(|e| e.pid).collect()
}

/// A fresh marker for a run: this process's pid and a number no other run of it had.
pub fn new_marker() -> String {
    format!(
        "{}.{}",
        std::process::id(),
        NEXT_ID.fetch_add(1, Ordering::Relaxed)
    )
}

/// Stops every registered child: SIGTERM to those with a grace, at most the longest grace for
/// them to exit, then SIGKILL to all (groups included); then the orphans any run left.
pub fn stop_all() {
    let now: Vec<Entry> = entries().clone();
    let grace = now.iter().map(|e| e.stop.grace).max().unwrap_or_default();
    let gentle: Vec<&Entry> = now.iter().filter(|e| !e.stop.grace.is_zero()).collect();
    for e in &gentle {
        sys::signal(e.pid, e.stop.group, sys::TERM);
    }
    let until = Instant::now() + grace;
    while Instant::now() < until && gentle.iter().any(|e| sys::alive(e.pid)) {
        std::thread::sleep(POLL);
    }
    for e in &now {
        sys::signal(e.pid, e.stop.group, sys::KILL);
    }
    // Any run of this process: its mark starts with our pid. Each group is followed until it is
    // empty (an orphan appears only once its parent in the group has died), then the rest.
    let prefix = format!("{}.", std::process::id());
    let ours = |mark: &str| mark.starts_with(&prefix);
    for e in now.iter().filter(|e| e.stop.group) {
        sweep(&ours, Some(e.pid), SWEEP_WITHIN);
    }
    sweep(&ours, None, SWEEP_WITHIN);
}

/// Ends a run's process group `pgid` (marked `marker`): SIGKILL to the group, then until
/// nothing of it is left, kills and reaps the orphans reparented to spanprof that carry the
/// marker (a `setsid` child has left the group but not the environment). At most `within`.
pub fn end_group(pgid: u32, marker: &str, within: Duration) {
    sys::signal(pgid, true, sys::KILL);
    sweep(&|mark| mark == marker, Some(pgid), within);
}

/// Kills and reaps, pass after pass until one finds nothing (or `within` passes), the
/// processes whose parent is spanprof, that it did not register, and whose environment carries
/// a marker `matches` accepts; with `pgid`, also the members of that group (a zombie's
/// environment is gone, its group is not).
fn sweep(matches: &dyn Fn(&str) -> bool, pgid: Option<u32>, within: Duration) {
    let me = std::process::id();
    let until = Instant::now() + within;
    loop {
        let registered: HashSet<u32> = registry_pids();
        let mut found = 0;
        let mut group_left = false;
        for (pid, stat) in sys::processes() {
            let in_group = pgid.is_some_and(|g| stat.pgrp == g);
            group_left |= in_group && stat.state != 'Z';
            if stat.ppid != me || registered.contains(&pid) {
                continue;
            }
            let marked = sys::environment_value(pid, MARK_VAR).is_some_and(|m| matches(&m));
            if marked || in_group {
                sys::signal(pid, false, sys::KILL);
                reap_within(pid, until);
                found += 1;
            }
        }
        if (found == 0 && !group_left) || Instant::now() >= until {
            return;
        }
        if let (true, Some(g)) = (group_left, pgid) {
            // A member forked while the group was being killed.
            sys::signal(g, true, sys::KILL);
        }
        std::thread::sleep(POLL);
    }
}

fn registry_pids() -> HashSet<u32> {
    registered().into_iter().collect()
}

/// Reaps a child that was sent SIGKILL, waiting for it at most until `until`.
fn reap_within(pid: u32, until: Instant) {
    while !sys::reap(pid) && Instant::now() < until {
        std::thread::sleep(POLL);
    }
}

/// Once per process: the panic hook and the signal thread.
pub fn install_watchers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        install_panic_hook();
        start_signal_thread();
    });
}

/// A panic of the main thread ends the process without dropping what other threads hold: the
/// children are stopped first (after the usual panic message). Other threads' panics end only
/// their thread (a test, a worker), so they stop nothing.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        if std::thread::current().name() == Some("main") {
            stop_all();
        }
    }));
}

/// A named thread waits for the signals of `sys::ENDING`; on one, it stops the children and ends
/// the process with 128 + the signal's number, as the default action's status reads to a shell.
/// Returns once the signals are caught (or they cannot be: then their default action stays).
#[cfg(unix)]
fn start_signal_thread() {
    let (ready, caught) = std::sync::mpsc::sync_channel::<bool>(1);
    let started = std::thread::Builder::new()
        .name("spanprof-signals".into())
        .spawn(move || {
            let Some(signo) = wait_for_signal(&ready) else {
                return;
            };
            ENDING_BY.store(signo, Ordering::SeqCst);
            stop_all();
            sys::exit_now(128 + signo);
        });
    if started.is_ok() {
        let _ = caught.recv();
    }
}

/// The signal the process is ending by, once one came (0 before).
static ENDING_BY: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// If a signal is ending the process, waits (at most a few seconds) for the signal thread to
/// end it with the signal's status, so that the children it stops, ending a run, do not let the
/// main thread return first with the run's own status. Returns at once otherwise.
pub fn let_a_signal_end_the_process() {
    if ENDING_BY.load(Ordering::SeqCst) == 0 {
        return;
    }
    // The signal thread ends the process once the children are stopped, which ends this sleep.
    std::thread::sleep(SWEEP_WITHIN * 3);
}

/// Not a Unix system: there are no such signals to catch.
#[cfg(not(unix))]
fn start_signal_thread() {}

/// Catches every signal of `sys::ENDING` (says so on `ready`) and waits for the first; its
/// number.
#[cfg(unix)]
fn wait_for_signal(ready: &std::sync::mpsc::SyncSender<bool>) -> Option<i32> {
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build();
    let Ok(runtime) = runtime else {
        let _ = ready.send(false);
        return None;
    };
    runtime.block_on(async {
        // One that cannot be caught here keeps its default action; the others are still caught.
        let mut streams: Vec<_> = sys::ENDING
            .iter()
            .filter_map(|&signo| Some((signo, signal(SignalKind::from_raw(signo)).ok()?)))
            .collect();
        let _ = ready.send(!streams.is_empty());
        if streams.is_empty() {
            return None;
        }
        let arrivals = streams.iter_mut().map(|(signo, stream)| {
            Box::pin(async move {
                stream.recv().await;
                *signo
            })
        });
        let (signo, _, _) = futures_util::future::select_all(arrivals).await;
        Some(signo)
    })
}
