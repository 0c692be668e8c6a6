//! Black-box tests of the workspace lock as a shared resource: a process that holds it and is
//! stopped (SIGSTOP) makes a command wait at most `--wait SECS`, saying once on stderr which lock
//! it waits for and which process holds it, then fail with nothing changed; read-only commands
//! create nothing in the state directory.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use support::{Sandbox, tree};

fn acquire(sb: &Sandbox, extra: &[&str]) -> Output {
    sb.cmd()
        .args(extra)
        .args(["acquire", "--provider", "codex", "--workspace"])
        .arg(&sb.ws)
        .args(["--prompt", "Session text.", "--holder-pid"])
        .arg(std::process::id().to_string())
        .arg("--json")
        .output()
        .unwrap()
}

fn lock_path(sb: &Sandbox) -> PathBuf {
    let dir = std::fs::read_dir(sb.state.join("workspaces"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    dir.join("lock")
}

/// `flock -o LOCK cat`, once it holds the lock: the lock is held by `flock` alone (its `cat`
/// does not inherit it and ends when its standard input closes).
fn hold(lock: &Path) -> Child {
    let mut child = Command::new("flock")
        .arg("-o")
        .arg(lock)
        .arg("cat")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..500 {
        let free = Command::new("flock")
            .args(["-n"])
            .arg(lock)
            .arg("true")
            .status()
            .unwrap()
            .success();
        if !free {
            return child;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("flock never took the lock");
}

fn signal(child: &Child, sig: &str) {
    assert!(
        Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
}

/// A workspace with an `AGENTS.md` that has been acquired and released once, so its state
/// directory and lock file exist, and the lock file's path.
fn workspace_acquired_and_released() -> (Sandbox, PathBuf) {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), b"mine\n").unwrap();
    let first = acquire(&sb, &[]);
    assert!(first.status.success());
    let token: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let released = sb
        .cmd()
        .args(["release", "--token", token["token"].as_str().unwrap()])
        .output()
        .unwrap();
    assert!(released.status.success());
    let lock = lock_path(&sb);
    (sb, lock)
}

#[test]
fn a_stopped_lock_holder_makes_a_command_give_up_after_the_wait_with_nothing_changed() {
    let (sb, lock) = workspace_acquired_and_released();
    let mut holder = hold(&lock);
    signal(&holder, "-STOP");
    let before = tree(&sb.ws);

    let out = acquire(&sb, &["--wait", "2"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let waiting: Vec<&str> = err.lines().filter(|l| l.contains("waiting")).collect();
    assert_eq!(waiting.len(), 1, "{err}");
    assert!(waiting[0].contains(&lock.display().to_string()), "{err}");
    assert!(
        waiting[0].contains(&format!("process {}", holder.id())),
        "{err}"
    );
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with("error: ") && last.contains("lock"),
        "{err}"
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["error"]["kind"], "busy");
    assert_eq!(tree(&sb.ws), before, "nothing changed");

    // A read-only command waits for the same lock, just as long.
    let status = sb
        .cmd()
        .args(["--wait", "1", "status", "--workspace"])
        .arg(&sb.ws)
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));

    signal(&holder, "-CONT");
    drop(holder.stdin.take());
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(acquire(&sb, &["--wait", "2"]).status.success());
}

#[test]
fn status_creates_nothing() {
    // No state directory at all.
    let sb = Sandbox::new();
    sb.json(&["status", "--workspace", sb.ws.to_str().unwrap()]);
    assert!(!sb.state.exists(), "status created the state directory");

    // A state directory used by another workspace: nothing is added for this one.
    let other = sb.base.join("other");
    std::fs::create_dir(&other).unwrap();
    let first = sb
        .cmd()
        .args([
            "acquire",
            "--provider",
            "codex",
            "--prompt",
            "x",
            "--workspace",
        ])
        .arg(&other)
        .output()
        .unwrap();
    assert!(first.status.success());
    let before = tree(&sb.state);
    let report = sb.json(&["status", "--workspace", sb.ws.to_str().unwrap()]);
    assert!(report["leases"].as_array().unwrap().is_empty());
    assert_eq!(
        tree(&sb.state),
        before,
        "status changed the state directory"
    );
}

/// The number of threads of process `pid` (`/proc/PID/status`).
fn threads_of(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Whether process `pid` is queued in the kernel for a `flock` (`/proc/locks` lists a waiter).
fn queued_for_a_lock(pid: u32) -> bool {
    let pid = pid.to_string();
    std::fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            matches!(fields.as_slice(), [_, "->", "FLOCK", _, _, p, ..] if *p == pid)
        })
}

/// Whether process `pid` is stopped (state `T` in `/proc/PID/stat`).
fn stopped(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat.rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('T'))
}

/// Waits (at most a minute, so a broken build fails instead of hanging) until `what` holds.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !check() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "never: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A workspace acquired and released once, its lock taken by this test process.
fn workspace_with_its_lock_held() -> (Sandbox, PathBuf, std::fs::File) {
    let (sb, lock) = workspace_acquired_and_released();
    let held = std::fs::File::open(&lock).unwrap();
    held.lock().unwrap();
    (sb, lock, held)
}

/// `acquire --json` with `--wait SECS`, started, its stderr going to the file `stderr`.
fn spawn_acquire(sb: &Sandbox, wait: &str, stderr: &Path) -> Child {
    sb.cmd()
        .args([
            "--wait",
            wait,
            "acquire",
            "--provider",
            "codex",
            "--workspace",
        ])
        .arg(&sb.ws)
        .args(["--prompt", "Session text.", "--holder-pid"])
        .arg(std::process::id().to_string())
        .arg("--json")
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap()
}

/// The lines of the file `stderr` that tell of the wait.
fn waiting_lines(stderr: &Path) -> Vec<String> {
    std::fs::read_to_string(stderr)
        .unwrap()
        .lines()
        .filter(|line| line.contains("waiting"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_cli_waits_on_its_one_thread_through_signals_and_takes_the_lock_once_let_go() {
    let (sb, lock, held) = workspace_with_its_lock_held();
    let stderr = sb.base.join("stderr");
    let mut child = spawn_acquire(&sb, "600", &stderr);
    let pid = child.id();
    eventually("the command queues for the lock in the kernel", || {
        queued_for_a_lock(pid)
    });
    eventually("the command says once that it waits", || {
        !waiting_lines(&stderr).is_empty()
    });
    assert_eq!(threads_of(pid), 1, "the wait started a thread");

    // Stopped and continued, and told a window changed: the wait goes on.
    signal(&child, "-STOP");
    eventually("the command stops", || stopped(pid));
    signal(&child, "-CONT");
    signal(&child, "-WINCH");
    eventually("the command queues for the lock again", || {
        !stopped(pid) && queued_for_a_lock(pid)
    });
    assert!(
        child.try_wait().unwrap().is_none(),
        "a signal ended the wait"
    );
    assert_eq!(threads_of(pid), 1, "the wait started a thread");

    drop(held);
    eventually("the command ends once the lock is let go", || {
        child.try_wait().unwrap().is_some()
    });
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        std::fs::read_to_string(&stderr).unwrap()
    );
    let receipt: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(receipt["token"].is_string(), "{receipt}");
    let waiting = waiting_lines(&stderr);
    assert_eq!(waiting.len(), 1, "told once: {waiting:?}");
    assert!(
        waiting[0].contains(&lock.display().to_string()),
        "{waiting:?}"
    );
    assert!(
        std::fs::read_to_string(sb.ws.join("AGENTS.md"))
            .unwrap()
            .contains("Session text."),
        "the session's block is in"
    );
}

#[test]
fn the_cli_gives_up_at_its_limit_with_nothing_changed_never_starting_a_thread() {
    let (sb, _lock, held) = workspace_with_its_lock_held();
    let before = tree(&sb.ws);
    let stderr = sb.base.join("stderr");
    let mut child = spawn_acquire(&sb, "1", &stderr);
    let pid = child.id();
    eventually("the command queues for the lock in the kernel", || {
        queued_for_a_lock(pid)
    });
    // Sampled while it waits, until it gives up.
    let mut most_threads = 0;
    while child.try_wait().unwrap().is_none() {
        if queued_for_a_lock(pid) {
            most_threads = most_threads.max(threads_of(pid));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(most_threads, 1, "the wait started a thread");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["error"]["kind"], "busy", "{json}");
    assert_eq!(waiting_lines(&stderr).len(), 1, "told once");
    assert_eq!(tree(&sb.ws), before, "nothing changed");
    drop(held);
}

/// `run` waiting for the workspace lock (held by this test) is ended by SIGTERM or SIGINT while
/// it waits: it gives the wait up at once, never starts its command, changes nothing, and exits
/// with the signal's status (128+N).
#[test]
fn a_signal_ends_runs_wait_for_the_workspace_lock_and_its_command_never_starts() {
    for (sig, code) in [("-TERM", 143), ("-INT", 130)] {
        let (sb, _lock, held) = workspace_with_its_lock_held();
        let before = tree(&sb.ws);
        let ran = sb.base.join("ran");
        let mut child = sb
            .cmd()
            .args(["--wait", "600", "run", "--provider", "codex", "--workspace"])
            .arg(&sb.ws)
            .args(["--prompt", "Session text.", "--", "touch"])
            .arg(&ran)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        eventually("run waits for the lock", || queued_for_a_lock(pid));
        signal(&child, sig);
        // Ended while the lock is still held (the test holds it until after this).
        let mut status = None;
        eventually("run ends", || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        assert_eq!(status.unwrap().code(), Some(code), "{sig}");
        assert!(!ran.exists(), "{sig}: the command started");
        assert_eq!(tree(&sb.ws), before, "{sig}");
        drop(held);
    }
}

/// The same for a runtime's launch lock, held by another launch: the second launch's wait
/// (`--runtime-wait`) is given up at the signal.
#[test]
fn a_signal_ends_runs_wait_for_a_runtime_in_use() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), b"mine\n").unwrap();
    let rt = sb.base.join("rt");
    std::fs::create_dir(&rt).unwrap();
    let go = sb.base.join("go");
    let linked = |wait: &str| {
        let mut c = sb.cmd();
        c.args(["run", "--provider", "codex", "--workspace"])
            .arg(&sb.ws)
            .args(["--prompt", "Session text.", "--runtime-root"])
            .arg(&rt)
            .args(["--user", "u1", "--project-id", "p1", "--session-id"])
            .args(["work:project:1", "--mode", "run", "--runtime-wait", wait])
            .stderr(std::process::Stdio::null());
        c
    };
    let started = sb.base.join("started");
    let script = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.05; done",
        started.display(),
        go.display()
    );
    let mut first = linked("0")
        .args(["--", "sh", "-c", &script])
        .spawn()
        .unwrap();
    eventually("the first launch runs", || started.exists());
    let ran = sb.base.join("ran");
    let mut second = linked("600")
        .arg("--")
        .arg("touch")
        .arg(&ran)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    signal(&second, "-TERM");
    let mut status = None;
    eventually("the second launch ends", || {
        status = second.try_wait().unwrap();
        status.is_some()
    });
    assert_eq!(status.unwrap().code(), Some(143));
    assert!(!ran.exists(), "the command started");
    std::fs::write(&go, b"").unwrap();
    assert!(first.wait().unwrap().success());
    assert_eq!(std::fs::read(sb.ws.join("AGENTS.md")).unwrap(), b"mine\n");
}

/// Once the command has started, a signal no longer gives a wait up: `run`'s release, waiting
/// for the lock after the command ended, still finishes, and `run` exits with the command's
/// status.
#[test]
fn a_signal_during_runs_release_does_not_leave_the_session_behind() {
    let (sb, lock) = workspace_acquired_and_released();
    let before = tree(&sb.ws);
    let started = sb.base.join("started");
    let go = sb.base.join("go");
    let script = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done; exit 7",
        started.display(),
        go.display()
    );
    let mut child = sb
        .cmd()
        .args(["--wait", "600", "run", "--provider", "codex", "--workspace"])
        .arg(&sb.ws)
        .args(["--prompt", "Session text.", "--", "sh", "-c", &script])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    eventually("the command runs", || started.exists());
    // The command ends while this test holds the workspace lock: the release waits for it.
    let held = std::fs::File::open(&lock).unwrap();
    held.lock().unwrap();
    std::fs::write(&go, b"").unwrap();
    let pid = child.id();
    eventually("the release waits for the lock", || queued_for_a_lock(pid));
    signal(&child, "-INT");
    std::thread::sleep(std::time::Duration::from_millis(200));
    drop(held);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(7), "the command's status");
    assert_eq!(tree(&sb.ws), before, "the session was released");
}
