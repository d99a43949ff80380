//! The system calls behind `children`, each `unsafe` block argued; everything else here is safe
//! code reading `/proc`. On Linux all of it works; on other Unix systems signals and process
//! groups work and the Linux-only requests (`PR_SET_PDEATHSIG`, `PR_SET_CHILD_SUBREAPER`) are
//! skipped; elsewhere every call here does nothing.

#![allow(unsafe_code)]

use std::io;

/// A signal by number, as `kill(2)` takes it.
pub type Signal = i32;

/// SIGTERM: asks a process to stop.
#[cfg(unix)]
pub const TERM: Signal = libc::SIGTERM;
/// SIGKILL: ends a process at once.
#[cfg(unix)]
pub const KILL: Signal = libc::SIGKILL;

/// The signals whose default action ends the process and that come from outside it (another
/// process, a terminal, a timer): each is caught so that the children end with spanprof. Not
/// SIGPIPE (ignored by Rust programs) nor the faults (SIGSEGV, SIGBUS...), which are this
/// process's own.
#[cfg(unix)]
pub const ENDING: &[Signal] = &[
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    #[cfg(target_os = "linux")]
    libc::SIGPWR,
    #[cfg(target_os = "linux")]
    libc::SIGSTKFLT,
];
/// SIGTERM: asks a process to stop.
#[cfg(not(unix))]
pub const TERM: Signal = 15;
/// SIGKILL: ends a process at once.
#[cfg(not(unix))]
pub const KILL: Signal = 9;

/// What a child runs between fork and exec: it asks the kernel for SIGKILL when the thread that
/// forked it dies (which `children` makes the long-lived spawner thread, so in effect when
/// spanprof's process ends, however it ends), then checks that its parent is still `parent`
/// (spanprof may have died between the fork and the request, and then nothing would ever send
/// it). Only async-signal-safe calls: `prctl` and `getppid`.
#[cfg(target_os = "linux")]
pub fn die_with_parent(parent: u32) -> io::Result<()> {
    // SAFETY: prctl(PR_SET_PDEATHSIG, sig) takes plain integers, touches no memory of ours and is
    // async-signal-safe, so it may run in the forked child before exec.
    let asked = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    if asked != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: getppid has no arguments and cannot fail; async-signal-safe.
    let now = unsafe { libc::getppid() };
    if u32::try_from(now).ok() != Some(parent) {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

/// Elsewhere there is no such request; the signal handling and the guards are what there is.
#[cfg(not(target_os = "linux"))]
pub fn die_with_parent(_parent: u32) -> io::Result<()> {
    Ok(())
}

/// Makes this process the subreaper of its descendants (Linux): an orphaned descendant (a
/// `setsid` daemon whose parent exited) is reparented to spanprof, not to init, so it can be found
/// among spanprof's children and killed. Returns whether that holds now.
#[cfg(target_os = "linux")]
pub fn become_subreaper() -> bool {
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) takes plain integers and touches no memory of ours.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong) == 0 }
}

/// Not on this system.
#[cfg(not(target_os = "linux"))]
pub fn become_subreaper() -> bool {
    false
}

/// Sends `signal` to the process `pid`, or with `group` to the process group `pid` leads.
/// Whether it was delivered (false when no such process or group is left).
#[cfg(unix)]
pub fn signal(pid: u32, group: bool, signal: Signal) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        // 0 and -1 would mean this process's own group or every process: never.
        return false;
    }
    let target = if group { -pid } else { pid };
    // SAFETY: kill takes plain integers; `target` is a positive pid or a negated positive pgid.
    unsafe { libc::kill(target, signal) == 0 }
}

/// Ends the process at once with `code`, as a fatal signal's own default action would: stdout and
/// stderr flushed, then no atexit handlers and no static destructors. `std::process::exit` runs
/// them, and a GL driver's torn down under the window's render thread still drawing made the
/// window die of SIGSEGV on SIGTERM now and then.
#[cfg(unix)]
pub fn exit_now(code: i32) -> ! {
    use std::io::Write as _;
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    // SAFETY: _exit takes a plain integer and ends the process; it touches none of our memory.
    unsafe { libc::_exit(code) }
}

/// Not on this system.
#[cfg(not(unix))]
pub fn signal(_pid: u32, _group: bool, _signal: Signal) -> bool {
    false
}

/// Reaps the child `pid` if it has exited (never blocks); whether it is gone: reaped now, or no
/// child of ours by that pid is left to wait for (ECHILD). Only called for orphans `children`
/// killed, but two sweeps may kill the same one (a signal's and the ending run's, on two
/// threads): the one that did not reap it must not wait for it (a SIGTERM or SIGINT took 3 s).
#[cfg(unix)]
pub fn reap(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    let mut status = 0;
    // SAFETY: `status` is a live local the call writes one int to; `pid` is positive (it came
    // from /proc), so only that one child is waited for.
    let waited = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    waited == pid
        || (waited == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
}

/// Not on this system.
#[cfg(not(unix))]
pub fn reap(_pid: u32) -> bool {
    false
}

/// What `/proc/PID/stat` says of a process: its parent, process group and state letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// The parent's pid.
    pub ppid: u32,
    /// The process group.
    pub pgrp: u32,
    /// `R`, `S`, `Z` (exited, not yet reaped)...
    pub state: char,
}

/// Reads `/proc/PID/stat` (Linux); `None` when the process is gone or this is not Linux.
pub fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// The fields after the command name, which may itself hold spaces and parentheses.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Stat { ppid, pgrp, state })
}

/// Whether `pid` is still running (present and not a zombie).
pub fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|s| s.state != 'Z')
}

/// Every pid `/proc` lists now, with its stat (empty off Linux).
pub fn processes() -> Vec<(u32, Stat)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        Some((pid, stat(pid)?))
    })
    .collect()
}

/// The value of `name` in the environment `pid` was started with (readable for processes of
/// the same user; `None` for a zombie, whose environment is gone).
pub fn environment_value(pid: u32, name: &str) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    raw.split(|b| *b == 0).find_map(|entry| {
        let rest = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
        Some(String::from_utf8_lossy(rest).into_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_past_a_command_name_with_spaces_and_parentheses() {
        let line = "4242 (my (odd) prog) S 17 4242 4242 0 -1 4194560 0 0";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                ppid: 17,
                pgrp: 4242,
                state: 'S'
            })
        );
        assert_eq!(parse_stat("4242 (x"), None);
        assert_eq!(parse_stat("4242 (x) Z"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_seen_alive_with_its_parent_and_its_environment() {
        let me = std::process::id();
        let own = stat(me).expect("our own stat");
        assert_ne!(own.state, 'Z');
        assert_eq!(own.ppid, std::os::unix::process::parent_id());
        assert!(alive(me));
        assert!(processes().iter().any(|(pid, _)| *pid == me));
        assert!(environment_value(me, "PATH").is_some());
        assert_eq!(
            environment_value(me, "SPANPROF_NO_SUCH_VARIABLE_HERE"),
            None
        );
        assert!(!signal(0, true, 0), "group 0 is never signalled");
    }

    #[cfg(unix)]
    #[test]
    fn a_child_another_thread_reaped_is_gone_and_one_still_running_is_not() {
        let mut running = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep starts");
        assert!(!reap(running.id()), "running, not reaped");
        let _ = running.kill();
        let _ = running.wait();
        // Reaped already (as another sweep would have): nothing is left to wait for.
        assert!(reap(running.id()));
        // Not our child at all (init).
        assert!(reap(1));
    }
}
