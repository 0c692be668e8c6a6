//! What one `acquire` and one `release` cost the kernel, as a user runs them: the binary, one
//! process per command, counted under `strace -f` (every system call of the process, its start
//! included) against a ceiling. Counted, never timed: the same command makes the same
//! calls on every run, however loaded the machine is.
//!
//! The ceilings hold what the commands need with some room (the dynamic loader's calls differ a
//! little between C libraries), and sit well below what they made before the redundant calls
//! were cut: a holder's `/proc` entry read twice, the workspace path resolved twice, a
//! descriptor duplicated around every `openat`, a directory reopened for every listing, the same
//! temporary-file sweep run twice, the state folders probed after every save. A change that
//! brings any of those back fails here.
//!
//! Linux only, and only where `strace` is installed and may trace (in a container without
//! `ptrace` it may not): otherwise the test says so and passes without counting.
#![cfg(all(feature = "codex", target_os = "linux"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::{BIN, Sandbox};

/// System calls of an uncontended `acquire --json` of Codex's block into a small AGENTS.md, the
/// workspace's state already made: 159 with a plain build, of which about 60 are the process's
/// start (the loader mapping libc and the unwinder, std's runtime set-up, clap's parse), and
/// about 20 more since the folder's identity over time, the holder's namespaces and the file's
/// extended attributes are read.
const ACQUIRE_CEILING: u64 = 195;

/// System calls of the `release --json` of that lease: 128 with a plain build, the same start
/// included, and the same reads of identity and attributes since.
const RELEASE_CEILING: u64 = 155;

/// `strace` on `PATH`, if any.
fn strace() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("strace"))
        .find(|candidate| candidate.is_file())
}

/// The system calls in an `strace -f` log, less the `fcntl(F_GETFD)` a build with debug
/// assertions makes as it closes each descriptor (std checks the descriptor is open): the test
/// builds the binary so, the user's build does not.
fn calls_in(log: &str) -> u64 {
    let calls = log.lines().filter_map(|line| {
        // `<pid> <call>(…) = …`; a call's resumption, a signal and the exit are not calls.
        let call = line
            .split_once(' ')
            .map_or(line, |(_, rest)| rest)
            .trim_start();
        let counted = !(call.starts_with("<...")
            || call.starts_with("+++")
            || call.starts_with("---")
            || (call.starts_with("fcntl(") && call.contains(", F_GETFD)")));
        counted.then_some(())
    });
    calls.count() as u64
}

/// Runs the binary with `args` under `strace -f` (with the environment a user has: cargo's
/// `LD_LIBRARY_PATH` for tests would have the loader search its folders): its standard output
/// and the system calls it made, or `None` when `strace` could not trace it.
fn traced(strace: &Path, sandbox: &Sandbox, args: &[&str]) -> Option<(Vec<u8>, u64)> {
    traced_log(strace, sandbox, args).map(|(out, log)| (out, calls_in(&log)))
}

/// [`traced`], with the `strace` log itself.
fn traced_log(strace: &Path, sandbox: &Sandbox, args: &[&str]) -> Option<(Vec<u8>, String)> {
    let log = sandbox.base.join("strace.log");
    let out = Command::new(strace)
        .args(["-f", "-o"])
        .arg(&log)
        .arg(BIN)
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .env("PROJECTFILE_STATE_DIR", &sandbox.state)
        .env("HOME", &sandbox.base)
        .output()
        .unwrap();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    if !log.contains("execve(") {
        eprintln!(
            "note: strace could not trace the binary here, nothing counted: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.stdout, log))
}

/// `strace`, a sandbox and [`small_acquire`]'s command line in it; `None` where `strace` is not
/// installed, with a note that says `what` (what the test could not do).
fn traced_small_acquire(what: &str) -> Option<(PathBuf, Sandbox, Vec<String>)> {
    let Some(strace) = strace() else {
        eprintln!("note: strace is not installed; {what}");
        return None;
    };
    let sandbox = Sandbox::new();
    let acquire = small_acquire(&sandbox);
    Some((strace, sandbox, acquire))
}

/// The command line of an `acquire --json` of Codex's block into the sandbox's small
/// AGENTS.md (written here), held by this process.
fn small_acquire(sandbox: &Sandbox) -> Vec<String> {
    std::fs::write(sandbox.ws.join("AGENTS.md"), "# Team rules\n").unwrap();
    let ws = sandbox.ws.to_str().unwrap().to_string();
    [
        "acquire",
        "--json",
        "--provider",
        "codex",
        "--workspace",
        &ws,
        "--prompt",
        "Session text.",
        "--holder-pid",
        &std::process::id().to_string(),
    ]
    .map(str::to_string)
    .to_vec()
}

#[test]
fn acquire_and_release_stay_under_their_system_call_ceilings() {
    let Some((strace, sandbox, acquire)) =
        traced_small_acquire("the system calls were not counted")
    else {
        return;
    };
    let acquire: Vec<&str> = acquire.iter().map(String::as_str).collect();
    // A first session makes the state directory, the ledger and the path's note: the counted
    // one is a session like every later one.
    let first = sandbox
        .cmd()
        .args(&acquire)
        .env("HOME", &sandbox.base)
        .output();
    let first: serde_json::Value = serde_json::from_slice(&first.unwrap().stdout).unwrap();
    let token = first["token"].as_str().unwrap();
    assert_eq!(
        sandbox.json(&["release", "--token", token])["released"],
        true
    );

    let Some((receipt, acquire_calls)) = traced(&strace, &sandbox, &acquire) else {
        return;
    };
    let receipt: serde_json::Value = serde_json::from_slice(&receipt).unwrap();
    let token = receipt["token"].as_str().unwrap();
    let release = ["release", "--json", "--token", token];
    let Some((released, release_calls)) = traced(&strace, &sandbox, &release) else {
        return;
    };
    let released: serde_json::Value = serde_json::from_slice(&released).unwrap();
    assert_eq!(released["released"], true);
    assert_eq!(
        std::fs::read_to_string(sandbox.ws.join("AGENTS.md")).unwrap(),
        "# Team rules\n"
    );
    eprintln!("system calls: acquire {acquire_calls}, release {release_calls}");
    assert!(
        acquire_calls <= ACQUIRE_CEILING,
        "acquire made {acquire_calls} system calls, more than {ACQUIRE_CEILING}"
    );
    assert!(
        release_calls <= RELEASE_CEILING,
        "release made {release_calls} system calls, more than {RELEASE_CEILING}"
    );
}

/// Where in an `strace` log of an `acquire` in `ws` the workspace lock is let go (the `close` of
/// the descriptor it was `flock`ed on), and where the delivery verdict starts looking for the
/// repository root (its first look at the workspace's own `.git` by its path; the plan's look
/// for a work tree above the workspace starts at its parent): line numbers.
fn lock_and_verdict(log: &str, ws: &std::path::Path) -> (usize, usize) {
    let lines: Vec<&str> = log.lines().collect();
    let (locked_at, fd) = lines
        .iter()
        .enumerate()
        .find_map(|(i, line)| {
            let rest = line.split_once("flock(")?.1;
            let fd = rest.split_once(',')?.0;
            rest.contains("LOCK_EX").then(|| (i, fd.to_string()))
        })
        .expect("the lock was taken");
    let close = format!("close({fd})");
    let released = lines
        .iter()
        .enumerate()
        .skip(locked_at)
        .find(|(_, line)| line.contains(&close))
        .map(|(i, _)| i)
        .expect("the lock's descriptor was closed");
    let own = format!("{}/.git\"", ws.display());
    let verdict = lines
        .iter()
        .position(|line| line.contains(&own))
        .expect("the verdict looked for the repository root");
    (released, verdict)
}

#[test]
fn the_workspace_lock_is_let_go_before_the_delivery_verdict_unless_delivery_is_required() {
    let Some((strace, sandbox, acquire)) = traced_small_acquire("nothing was traced") else {
        return;
    };
    let mut acquire: Vec<&str> = acquire.iter().map(String::as_str).collect();
    let Some((_, log)) = traced_log(&strace, &sandbox, &acquire) else {
        return;
    };
    let (released, verdict) = lock_and_verdict(&log, &sandbox.ws);
    assert!(
        released < verdict,
        "the lock was let go at line {released}, after the verdict began at {verdict}"
    );
    // Required, a refusal undoes the start under the lock: it is held through the verdict.
    acquire.push("--require-delivery");
    let Some((_, log)) = traced_log(&strace, &sandbox, &acquire) else {
        return;
    };
    let (released, verdict) = lock_and_verdict(&log, &sandbox.ws);
    assert!(
        verdict < released,
        "the lock was let go at line {released}, before the verdict began at {verdict}"
    );
}
