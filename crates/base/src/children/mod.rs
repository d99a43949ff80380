//! Nothing spanprof starts outlives it: the emulator, a client program under `spanprof client`
//! (and what that program starts), the drivers.
//!
//! On Linux, however spanprof ends:
//! - every child asks the kernel, between fork and exec, for SIGKILL when its parent dies
//!   (`PR_SET_PDEATHSIG`), then checks that its parent is still there. That signal follows the
//!   *thread* that forked, so every child is forked by one spawner thread that lives as long as
//!   the process (a job that panics there is caught, so it never ends early). This is what holds
//!   on SIGKILL of spanprof.
//! - every signal that would end spanprof from outside (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1,
//!   SIGUSR2, SIGALRM and the rest of `sys::ENDING`) is caught (from the first child on) by a
//!   thread of its own: the children are sent SIGTERM and given their grace (the emulator a
//!   second to stop cleanly), then SIGKILL; then spanprof exits with 128 + the signal's number.
//! - a panic of the main thread stops them the same way before the process ends.
//! - a client program runs in its own process group, marked in its environment ([`MARK_VAR`]);
//!   on every end of a run (its normal exit too) the group is killed, and spanprof, made the
//!   subreaper of its descendants (`PR_SET_CHILD_SUBREAPER`), kills and reaps the orphans that
//!   carry the run's mark: a `setsid` grandchild that left the group is found that way.
//!
//! What is not covered: a grandchild of a client program (not the program itself) when
//! spanprof is killed with SIGKILL, since nothing of spanprof runs any more then; and a
//! descendant that both leaves the group and clears its environment.
//!
//! On other Unix systems the signals, the panic hook and the process groups work the same, but
//! there is no parent-death signal nor subreaper: a SIGKILL of spanprof leaves its children, and
//! a `setsid` grandchild escapes. On other systems only the owners' drops stop children.

mod registry;
mod sys;

use std::io;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

pub use registry::{MARK_VAR, Stop, let_a_signal_end_the_process, stop_all};

/// How long the end of a run looks for what its group and its orphans left.
pub const GROUP_END_WITHIN: Duration = Duration::from_secs(3);

/// A child in the registry [`stop_all`] reads; dropping this takes it out. Drop it once the
/// child has exited or been killed, before it is reaped (the pid is then still its own).
#[derive(Debug)]
pub struct Registration {
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        registry::unregister(self.id);
    }
}

/// Asks, in `command`'s child before exec, for SIGKILL when the forking thread dies (Linux).
/// For a child waited for on the thread that forks it (so that thread outlives it), as
/// `installed_binary` runs `dpkg`; long-lived children go through [`spawn`].
pub fn die_with_spanprof(command: &mut std::process::Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        let parent = std::process::id();
        // SAFETY (the one `unsafe` of `pre_exec`): the hook runs in the forked child and calls
        // only prctl and getppid, both async-signal-safe; it allocates nothing.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(move || sys::die_with_parent(parent));
        }
    }
    #[cfg(not(unix))]
    let _ = command;
}

/// Starts `command` from the spawner thread (so its parent-death signal waits for the process,
/// not the calling thread) and registers it, to be stopped as `stop` says.
pub fn spawn(
    mut command: std::process::Command,
    stop: Stop,
) -> io::Result<(std::process::Child, Registration)> {
    registry::install_watchers();
    die_with_spanprof(&mut command);
    on_spawner(move || {
        let child = command.spawn()?;
        let id = registry::register(child.id(), stop);
        Ok((child, Registration { id }))
    })?
}

/// Sends SIGTERM to `child`, which must not have been reaped yet (so its pid is its own).
pub fn terminate(child: &std::process::Child) {
    sys::signal(child.id(), false, sys::TERM);
}

/// A client program's run: its process group and its mark. [`Group::end`] (or the drop) kills
/// the group and every marked orphan.
#[derive(Debug)]
pub struct Group {
    pgid: u32,
    marker: String,
    registration: Option<Registration>,
}

impl Group {
    /// The process group, led by the program (its pid).
    pub fn pgid(&self) -> u32 {
        self.pgid
    }

    /// Kills what is left of the run: the whole group, then the orphans with its mark. Blocks
    /// until they are gone, at most [`GROUP_END_WITHIN`].
    pub fn end(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        if let Some(registration) = self.registration.take() {
            // Still registered while the group ends, so the sweep leaves the leader (the
            // program) to whoever waits for it: it is signalled with its group, never reaped here.
            registry::end_group(self.pgid, &self.marker, GROUP_END_WITHIN);
            drop(registration);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Starts `command` (a tokio one, inside the caller's runtime) in a process group of its own,
/// marked in its environment, from the spawner thread; makes spanprof the subreaper of what it
/// starts. The caller owns the [`Group`]: it must `end` it (or drop it) when the run ends.
pub fn spawn_group(
    mut command: tokio::process::Command,
) -> io::Result<(tokio::process::Child, Group)> {
    registry::install_watchers();
    become_subreaper();
    let marker = registry::new_marker();
    command.env(MARK_VAR, &marker);
    #[cfg(unix)]
    {
        command.process_group(0);
        let parent = std::process::id();
        // SAFETY: as in `die_with_spanprof`: only prctl and getppid run in the forked child.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(move || sys::die_with_parent(parent));
        }
    }
    let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
    on_spawner(move || {
        let _inside = runtime.enter();
        let child = command.spawn()?;
        let pgid = child
            .id()
            .ok_or_else(|| io::Error::other("the program exited before its id was read"))?;
        let stop = Stop {
            group: true,
            grace: Duration::ZERO,
        };
        let id = registry::register(pgid, stop);
        Ok((
            child,
            Group {
                pgid,
                marker,
                registration: Some(Registration { id }),
            },
        ))
    })?
}

/// Makes spanprof the subreaper of its descendants, once.
fn become_subreaper() {
    static DONE: OnceLock<bool> = OnceLock::new();
    DONE.get_or_init(sys::become_subreaper);
}

type Job = Box<dyn FnOnce() + Send>;

/// Runs `job` on the spawner thread and returns what it returned. Should that thread not start,
/// the job runs on the calling thread (its children then die with that thread).
fn on_spawner<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> io::Result<T> {
    static SPAWNER: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("spanprof-spawner".into())
            .spawn(move || {
                // The sender lives in a static, so this loop ends only with the process.
                for job in queue {
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            })
            .ok()
            .map(|_| Mutex::new(jobs))
    });
    let Some(spawner) = spawner else {
        return Ok(job());
    };
    let (done, result) = mpsc::sync_channel(1);
    let sent = spawner
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .send(Box::new(move || {
            let _ = done.send(job());
        }));
    sent.map_err(|_| io::Error::other("the spawner thread is gone"))?;
    result
        .recv()
        .map_err(|_| io::Error::other("the spawner thread dropped the job"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spawned_child_is_registered_until_its_registration_drops() {
        let mut command = std::process::Command::new("sleep");
        command.arg("30");
        let stop = Stop {
            group: false,
            grace: Duration::ZERO,
        };
        let (mut child, registration) = spawn(command, stop).expect("sleep starts");
        assert!(registry::registered().contains(&child.id()));
        let _ = child.kill();
        drop(registration);
        assert!(!registry::registered().contains(&child.id()));
        let _ = child.wait();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_started_from_a_thread_that_ends_lives_on() {
        let stop = Stop {
            group: false,
            grace: Duration::ZERO,
        };
        let started = std::thread::spawn(move || {
            let mut command = std::process::Command::new("sleep");
            command.arg("30");
            spawn(command, stop).expect("sleep starts")
        })
        .join()
        .expect("the thread ends");
        let (mut child, registration) = started;
        // The thread that asked is gone; the one that forked is not, so no SIGKILL came.
        std::thread::sleep(Duration::from_millis(200));
        assert!(matches!(child.try_wait(), Ok(None)), "still running");
        let _ = child.kill();
        drop(registration);
        let _ = child.wait();
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn ending_a_group_takes_its_setsid_orphans_along() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let pids = dir.path().join("pids");
        let script = format!(
            "sleep 60 & echo $! >> '{p}'; setsid sleep 60 & echo $! >> '{p}'; exit 0",
            p = pids.display()
        );
        let mut command = tokio::process::Command::new("sh");
        command.args(["-c", &script]);
        let (mut child, group) = spawn_group(command).expect("sh starts");
        assert!(child.wait().await.expect("sh exits").success());
        let listed = std::fs::read_to_string(&pids).expect("the script wrote its pids");
        let pids: Vec<u32> = listed
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        assert_eq!(pids.len(), 2, "{listed}");
        assert!(
            pids.iter().all(|p| sys::alive(*p)),
            "both sleep after sh exited"
        );
        tokio::task::spawn_blocking(move || group.end())
            .await
            .expect("ends");
        for pid in pids {
            assert!(!sys::alive(pid), "{pid} outlived its run");
        }
    }
}
