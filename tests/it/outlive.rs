//! Nothing spanprof starts outlives it: the window that started the
//! emulator, ended by SIGTERM or SIGKILL; `spanprof client` with a program that leaves sleepers
//! behind (one in its group, one `setsid`), ended normally, by `--limit` and by SIGINT, SIGTERM,
//! SIGHUP, SIGQUIT, SIGUSR1 and SIGALRM; a test that started the emulator and panics or is killed mid-way. What was started
//! is found by pid (the processes below spanprof's, and the pids the programs wrote), never by
//! name, and checked 5 s after the end at most.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long after spanprof's end everything it started must be gone.
const GONE_WITHIN: Duration = Duration::from_secs(5);

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_spanprof")
}

fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `/proc/PID/stat`'s parent and state, if the process is there.
fn stat(pid: u32) -> Option<(u32, char)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((fields.next()?.parse().ok()?, state))
}

/// Gone, or a zombie nobody has reaped yet (it runs nothing and holds nothing).
fn gone(pid: u32) -> bool {
    stat(pid).is_none_or(|(_, state)| state == 'Z')
}

/// Every live process below `root`, found by walking parents.
fn descendants(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| {
            let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let (ppid, state) = stat(pid)?;
            (state != 'Z').then_some((pid, ppid))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// Waits at most `within` for `done`; whether it held.
fn wait_until(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

fn send(pid: u32, signal: &str) {
    let sent = Command::new("kill")
        .args(["-s", signal, &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -s {signal} {pid}");
}

/// Asserts that every pid in `started` is gone within [`GONE_WITHIN`] of now.
fn assert_all_gone(started: &[u32], what: &str) {
    let left = || {
        started
            .iter()
            .copied()
            .filter(|p| !gone(*p))
            .collect::<Vec<_>>()
    };
    wait_until(GONE_WITHIN, || left().is_empty());
    let left = left();
    for pid in &left {
        // Leave nothing behind for the next test either.
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert!(left.is_empty(), "{what}: {left:?} outlived spanprof");
}

/// Waits for `child` to exit, at most `within`; its status code or signal in words.
fn exit_of(child: &mut Child, within: Duration) -> String {
    let mut status = None;
    wait_until(within, || {
        status = child.try_wait().ok().flatten();
        status.is_some()
    });
    match status {
        Some(s) => s.to_string(),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("spanprof did not exit within {within:?}")
        }
    }
}

/// A child killed (and reaped) when dropped, so a failing test leaves nothing running.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// The window
// ---------------------------------------------------------------------------------------------

/// Xvfb on a free display, killed when dropped; `None` (a loud failure under CI) without it.
fn xvfb() -> Option<(Reaped, String)> {
    let installed = Command::new("sh")
        .args(["-c", "command -v Xvfb"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        assert!(!on_ci(), "CI: Xvfb is missing (apt-get install xvfb)");
        eprintln!("skipped: Xvfb is not installed");
        return None;
    }
    // Xvfb picks a free display itself and writes its number on stdout once it accepts
    // connections: no other X server on the machine can be taken for ours.
    let mut server = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            // No reset when the last client leaves: a window connecting then would be refused.
            "-noreset",
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb starts");
    let mut line = String::new();
    let stdout = server.stdout.take().expect("Xvfb's stdout");
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)
        .expect("Xvfb's display number");
    let server = Reaped(server);
    let n: u32 = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("Xvfb did not start (it wrote {line:?})"));
    let display = format!(":{n}");
    Some((server, display))
}

/// The window under Xvfb with a throwaway home, told to start the emulator on a port of its own
/// choosing; returns it once the emulator runs below it, with every process below it.
fn window_with_emulator(display: &str, home: &Path) -> (Reaped, Vec<u32>) {
    let emulator = spanprof::emulator::installed_binary().unwrap_or_else(|e| {
        panic!(
            "{}the Cloud Spanner emulator is needed: {e}",
            if on_ci() { "CI: " } else { "" }
        )
    });
    let runtime = home.join("runtime");
    std::fs::create_dir_all(&runtime).expect("a runtime dir");
    let window = Command::new(bin())
        .args(["--start-emulator", "127.0.0.1:0"])
        .env("DISPLAY", display)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the window starts");
    let window = Reaped(window);
    let pid = window.0.id();
    let is_emulator =
        |p: &u32| std::fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|exe| exe == emulator);
    assert!(
        wait_until(Duration::from_secs(60), || descendants(pid)
            .iter()
            .any(is_emulator)),
        "no emulator below the window {pid} within 60 s"
    );
    // Seeding under way: the emulator serves the window's connection.
    std::thread::sleep(Duration::from_secs(1));
    let below = descendants(pid);
    (window, below)
}

fn the_window_ended_by(signal: &str, expected_exit: &str) {
    let Some((_xvfb, display)) = xvfb() else {
        return;
    };
    let home = tempfile::tempdir().expect("a temporary home");
    let (mut window, started) = window_with_emulator(&display, home.path());
    assert!(!started.is_empty());
    send(window.0.id(), signal);
    let exit = exit_of(&mut window.0, GONE_WITHIN);
    assert!(exit.contains(expected_exit), "the window ended with {exit}");
    assert_all_gone(&started, &format!("the window ended by {signal}"));
}

#[test]
fn the_window_ended_by_sigterm_leaves_no_emulator() {
    the_window_ended_by("TERM", "143");
}

#[test]
fn the_window_ended_by_sigkill_leaves_no_emulator() {
    the_window_ended_by("KILL", "SIGKILL");
}

// ---------------------------------------------------------------------------------------------
// spanprof client
// ---------------------------------------------------------------------------------------------

/// `spanprof client` (one iteration, no comparison, a small table) of a program that starts a
/// sleeper in its group and a `setsid` one, writes their pids and its own to `pids`, then does
/// `then` (`exec` spanprof's driver, or sleep).
fn client_with_sleepers(pids: &Path, then: &str, limit: &str) -> Command {
    let script = format!(
        "echo $$ >> '{p}'; sleep 300 & echo $! >> '{p}'; setsid sleep 300 & echo $! >> '{p}'; {then}",
        p = pids.display()
    );
    let mut command = Command::new(bin());
    command
        .args([
            "client",
            "--rows",
            "100",
            "--iterations",
            "1",
            "--warmup",
            "0",
        ])
        .args([
            "--no-compare",
            "--limit",
            limit,
            "--sql",
            "SELECT * FROM Seed23",
        ])
        .args(["--", "sh", "-c", &script, bin()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn written_pids(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[test]
fn a_client_program_that_exits_normally_leaves_none_of_its_sleepers() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pids = dir.path().join("pids");
    let ran = client_with_sleepers(&pids, "exec \"$0\" driver", "60s")
        .output()
        .expect("spanprof runs");
    let stdout = String::from_utf8_lossy(&ran.stdout);
    assert!(
        ran.status.success() && stdout.contains("values ok"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let started = written_pids(&pids);
    assert_eq!(started.len(), 3, "{started:?}");
    // Checked at once: they were gone when spanprof returned.
    let left: Vec<u32> = started.iter().copied().filter(|p| !gone(*p)).collect();
    assert_all_gone(&started, "a normal exit");
    assert!(left.is_empty(), "left when spanprof returned: {left:?}");
}

#[test]
fn a_client_program_killed_at_its_limit_leaves_none_of_its_sleepers() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pids = dir.path().join("pids");
    let ran = client_with_sleepers(&pids, "sleep 300", "2s")
        .output()
        .expect("spanprof runs");
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert_eq!(ran.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("did not exit within"), "{stderr}");
    let started = written_pids(&pids);
    assert_eq!(started.len(), 3, "{started:?}");
    let left: Vec<u32> = started.iter().copied().filter(|p| !gone(*p)).collect();
    assert_all_gone(&started, "the limit");
    assert!(left.is_empty(), "left when spanprof returned: {left:?}");
}

fn a_client_run_ended_by(signal: &str, code: i32) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pids = dir.path().join("pids");
    let mut spanprof = Reaped(
        client_with_sleepers(&pids, "sleep 300", "300s")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spanprof starts"),
    );
    assert!(
        wait_until(Duration::from_secs(60), || written_pids(&pids).len() == 3),
        "the program did not start its sleepers"
    );
    let mut started = written_pids(&pids);
    started.extend(descendants(spanprof.0.id()));
    send(spanprof.0.id(), signal);
    let exit = exit_of(&mut spanprof.0, GONE_WITHIN);
    assert!(
        exit.contains(&code.to_string()),
        "spanprof ended with {exit}"
    );
    assert_all_gone(&started, &format!("SIG{signal}"));
}

#[test]
fn a_client_run_ended_by_sigint_leaves_nothing() {
    a_client_run_ended_by("INT", 130);
}

#[test]
fn a_client_run_ended_by_sigterm_leaves_nothing() {
    a_client_run_ended_by("TERM", 143);
}

#[test]
fn a_client_run_ended_by_sighup_leaves_nothing() {
    a_client_run_ended_by("HUP", 129);
}

// These three signals ended spanprof by their default action and left the program's children
// running.
#[test]
fn a_client_run_ended_by_sigquit_leaves_nothing() {
    a_client_run_ended_by("QUIT", 131);
}

#[test]
fn a_client_run_ended_by_sigusr1_leaves_nothing() {
    a_client_run_ended_by("USR1", 138);
}

#[test]
fn a_client_run_ended_by_sigalrm_leaves_nothing() {
    a_client_run_ended_by("ALRM", 142);
}

// ---------------------------------------------------------------------------------------------
// Tests that start the emulator, failing mid-way
// ---------------------------------------------------------------------------------------------

const HELPER_VAR: &str = "SPANPROF_OUTLIVE_HELPER";
const HELPER_PID_FILE: &str = "SPANPROF_OUTLIVE_PID_FILE";

/// Not a test of its own: run by the two below in a test process of its own, it starts the
/// emulator as the emulator tests do, writes its pid, then panics (`panic`) or waits to be
/// killed (`hang`). Without its variable it does nothing.
#[test]
#[ignore = "a helper the tests below run in a process of their own"]
fn helper_a_test_that_starts_the_emulator_and_fails_mid_way() {
    let Ok(how) = std::env::var(HELPER_VAR) else {
        return;
    };
    let emulator = spanprof::emulator::Emulator::start("127.0.0.1:0").expect("the emulator starts");
    let pid = descendants(std::process::id())
        .into_iter()
        .next()
        .expect("the emulator is below this process");
    let file = std::env::var(HELPER_PID_FILE).expect("a pid file named");
    std::fs::write(file, pid.to_string()).expect("the pid written");
    if how == "hang" {
        std::thread::sleep(Duration::from_secs(300));
    }
    panic!(
        "mid-way, with the emulator at {} running",
        emulator.address()
    );
}

/// Runs the helper in a test process of its own; returns it and the emulator's pid.
fn helper(how: &str, pid_file: &Path) -> (Reaped, u32) {
    let me = std::env::current_exe().expect("the test binary");
    let child = Command::new(me)
        .args([
            "outlive::helper_a_test_that_starts_the_emulator_and_fails_mid_way",
            "--exact",
            "--include-ignored",
        ])
        .env(HELPER_VAR, how)
        .env(HELPER_PID_FILE, pid_file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the test binary runs");
    let child = Reaped(child);
    assert!(
        wait_until(Duration::from_secs(60), || written_pids(pid_file).len()
            == 1),
        "{}the helper did not start the emulator (is it installed?)",
        if on_ci() { "CI: " } else { "" }
    );
    (child, written_pids(pid_file)[0])
}

#[test]
fn a_test_that_panics_with_the_emulator_running_leaves_none() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (mut test, emulator) = helper("panic", &dir.path().join("pid"));
    let exit = exit_of(&mut test.0, Duration::from_secs(30));
    assert!(exit.contains("101"), "the test process ended with {exit}");
    assert_all_gone(&[emulator], "a test that panicked");
}

#[test]
fn a_test_killed_with_the_emulator_running_leaves_none() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (mut test, emulator) = helper("hang", &dir.path().join("pid"));
    assert!(!gone(emulator), "the emulator runs while the test hangs");
    send(test.0.id(), "KILL");
    let _ = exit_of(&mut test.0, GONE_WITHIN);
    assert_all_gone(&[emulator], "a test killed mid-way");
}
