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

#[test]
fn a_stopped_lock_holder_makes_a_command_give_up_after_the_wait_with_nothing_changed() {
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
