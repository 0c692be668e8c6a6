//! Trust boundaries crossed through the `projectfile` binary, as a hostile user or a dying host
//! would cross them: holders that are not what they claim (FIFOs, sockets, directories, symlinks,
//! missing or unheld lock files, zombie and exited pids, a lock file swapped for a FIFO after
//! acquire), output that cannot be written (a pipe whose reader is gone), a relative state
//! directory, and guidance that reaches outside its own tree. Each test's name states the promise;
//! every command runs under a bound, so a hang fails the test instead of stalling the suite.
#![cfg(feature = "codex")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use projectfile::core::testing::fsio::{LockGuard, hold_lock};
use serde_json::Value;
use std::io::Read as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::Sandbox;

/// How long any single command may take before the test calls it hung. Generous: this is a
/// bound on a hang, not a performance assertion.
const HANG: Duration = Duration::from_secs(60);

/// The user's own AGENTS.md, which every refused acquire must leave byte for byte.
const USER_BYTES: &[u8] = b"# user rules\r\nkeep me\n";

struct Finished {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Waits for `child` at most [`HANG`], killing it and failing the test when it does not end.
fn finish(mut child: Child, what: &str) -> Finished {
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(out) = out.as_mut() {
            out.read_to_string(&mut text).unwrap();
        }
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(err) = err.as_mut() {
            err.read_to_string(&mut text).unwrap();
        }
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} hung for {HANG:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    use std::os::unix::process::ExitStatusExt as _;
    Finished {
        code: status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
        stdout: reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// Runs `cmd` with piped output under the hang bound.
fn bounded(cmd: &mut Command, what: &str) -> Finished {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish(child, what)
}

/// A sandbox whose workspace holds the user's own AGENTS.md.
fn sandbox() -> Sandbox {
    let env = Sandbox::new();
    std::fs::write(env.ws.join("AGENTS.md"), USER_BYTES).unwrap();
    env
}

fn acquire_cmd(env: &Sandbox, holder: &[&str]) -> Command {
    let mut cmd = env.cmd();
    cmd.args(["acquire", "--provider", "codex", "--json", "--workspace"])
        .arg(&env.ws)
        .args(["--prompt", "session text"])
        .args(holder);
    cmd
}

fn acquire(env: &Sandbox, holder: &[&str]) -> Finished {
    bounded(&mut acquire_cmd(env, holder), "acquire")
}

/// `projectfile <command> --json --workspace <ws>` under the hang bound.
fn on_workspace(env: &Sandbox, command: &str) -> Finished {
    bounded(
        env.cmd()
            .args([command, "--json", "--workspace"])
            .arg(&env.ws),
        command,
    )
}

fn status(env: &Sandbox) -> Value {
    let done = on_workspace(env, "status");
    assert_eq!(done.code, 0, "status failed: {}", done.stderr);
    serde_json::from_str(&done.stdout).unwrap()
}

fn leases(env: &Sandbox) -> Vec<Value> {
    status(env)["leases"].as_array().unwrap().clone()
}

fn assert_user_bytes_untouched(env: &Sandbox) {
    assert_eq!(
        std::fs::read(env.ws.join("AGENTS.md")).unwrap(),
        USER_BYTES,
        "the workspace is not back to its bytes"
    );
    let names: Vec<String> = std::fs::read_dir(&env.ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["AGENTS.md".to_string()], "leftovers");
}

/// Asserts a refusal: exit 1, one `error: <path>: <reason>` line naming `path`, nothing
/// projected and no lease recorded.
fn assert_refused(env: &Sandbox, done: &Finished, path: &str, reason_part: &str) {
    assert_eq!(
        done.code, 1,
        "stdout {} stderr {}",
        done.stdout, done.stderr
    );
    let line = done.stderr.lines().next().unwrap_or_default();
    assert!(
        line.starts_with(&format!("error: {path}: ")),
        "expected `error: {path}: …`, got {:?}",
        done.stderr
    );
    assert!(
        line.contains(reason_part),
        "expected {reason_part:?} in {line:?}"
    );
    let v: Value = serde_json::from_str(&done.stdout).unwrap();
    assert!(v["error"].is_object(), "{v}");
    assert_eq!(
        v["error"]["path"], path,
        "the JSON error names the path too"
    );
    assert_user_bytes_untouched(env);
    assert!(leases(env).is_empty(), "a lease was recorded");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// An exclusive `flock` on `path` held by this test process (another process than the binary).
fn hold(path: &Path) -> LockGuard {
    hold_lock(path).unwrap()
}

/// Asserts that `--holder-lock path` is refused, naming the path and `words`.
fn refuse_lock(env: &Sandbox, path: &Path, words: &str) {
    let done = acquire(env, &lock_arg(path));
    assert_refused(env, &done, path.to_str().unwrap(), words);
}

fn lock_arg(path: &Path) -> [&str; 2] {
    ["--holder-lock", path.to_str().unwrap()]
}

#[test]
fn a_holder_lock_that_is_a_fifo_is_refused_naming_it() {
    let env = sandbox();
    let fifo = env.base.join("holder.fifo");
    mkfifo(&fifo);
    refuse_lock(&env, &fifo, "FIFO");
}

#[test]
fn a_holder_lock_that_is_a_socket_is_refused_naming_it() {
    let env = sandbox();
    let socket = env.base.join("holder.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    refuse_lock(&env, &socket, "socket");
}

#[test]
fn a_holder_lock_that_is_a_directory_is_refused_naming_it() {
    let env = sandbox();
    let dir = env.base.join("holder.d");
    std::fs::create_dir(&dir).unwrap();
    refuse_lock(&env, &dir, "directory");
}

#[test]
fn a_holder_lock_that_is_a_device_is_refused_naming_it() {
    let env = sandbox();
    refuse_lock(&env, Path::new("/dev/null"), "device");
}

#[test]
fn a_holder_lock_that_is_a_symlink_to_a_held_lock_is_refused() {
    let env = sandbox();
    let real = env.base.join("real.lock");
    let _held = hold(&real);
    let link = env.base.join("holder.lock");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    refuse_lock(&env, &link, "symlink");
}

#[test]
fn a_missing_holder_lock_is_refused_naming_it() {
    let env = sandbox();
    let missing = env.base.join("no-such.lock");
    refuse_lock(&env, &missing, "no such file");
    assert!(!missing.exists(), "the holder lock was created");
}

#[test]
fn a_holder_lock_nobody_holds_is_refused_naming_it() {
    let env = sandbox();
    let unheld = env.base.join("unheld.lock");
    std::fs::write(&unheld, b"").unwrap();
    refuse_lock(&env, &unheld, "nobody holds");
}

#[test]
fn a_relative_holder_lock_held_by_another_process_is_accepted_and_recorded_absolute() {
    let env = sandbox();
    let lock = env.base.join("held.lock");
    let held = hold(&lock);
    let done = bounded(
        acquire_cmd(&env, &["--holder-lock", "held.lock"]).current_dir(&env.base),
        "acquire",
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    let receipt: Value = serde_json::from_str(&done.stdout).unwrap();
    assert_eq!(receipt["holder"]["path"], lock.to_str().unwrap());
    assert_eq!(leases(&env)[0]["liveness"]["state"], "alive");
    drop(held);
    assert_eq!(leases(&env)[0]["liveness"]["state"], "dead");
}

/// A child that has exited and is not reaped: a zombie, until its caller waits for it.
#[allow(clippy::zombie_processes)] // the zombie is the point; the caller reaps it
fn zombie() -> Child {
    let child = Command::new("true").spawn().unwrap();
    let stat = format!("/proc/{}/stat", child.id());
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(&stat).unwrap();
        let state = text[text.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .next();
        if state == Some("Z") {
            return child;
        }
        assert!(start.elapsed() < HANG, "the child never became a zombie");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_zombie_holder_pid_is_refused_naming_it() {
    let env = sandbox();
    let mut child = zombie();
    let pid = child.id().to_string();
    let done = acquire(&env, &["--holder-pid", &pid]);
    assert_refused(&env, &done, &format!("/proc/{pid}"), "zombie");
    child.wait().unwrap();
}

#[test]
fn the_pid_of_a_process_that_exited_is_refused_naming_it() {
    let env = sandbox();
    let mut child = Command::new("true").spawn().unwrap();
    child.wait().unwrap();
    let pid = child.id().to_string();
    let done = acquire(&env, &["--holder-pid", &pid]);
    assert_refused(&env, &done, &format!("/proc/{pid}"), "no such process");
}

#[test]
fn a_holder_lock_swapped_for_a_fifo_after_acquire_makes_the_lease_stale_and_never_hangs() {
    let env = sandbox();
    let lock = env.base.join("holder.lock");
    let held = hold(&lock);
    let done = acquire(&env, &lock_arg(&lock));
    assert_eq!(done.code, 0, "{}", done.stderr);
    let token = serde_json::from_str::<Value>(&done.stdout).unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();
    // The old inode stays locked; the path now names a FIFO nobody writes to.
    std::fs::remove_file(&lock).unwrap();
    mkfifo(&lock);

    let leases = leases(&env);
    assert_eq!(leases.len(), 1);
    assert_eq!(leases[0]["liveness"]["state"], "dead", "{leases:?}");
    assert!(
        leases[0]["liveness"]["reason"]
            .as_str()
            .unwrap()
            .contains("FIFO"),
        "{leases:?}"
    );
    // Another session cleans the stale one; releasing the old token returns.
    let other = acquire(&env, &["--holder-pid", &std::process::id().to_string()]);
    assert_eq!(other.code, 0, "{}", other.stderr);
    let cleaned = serde_json::from_str::<Value>(&other.stdout).unwrap()["stale_cleaned"].clone();
    assert_eq!(cleaned[0]["token"], token.as_str(), "{cleaned}");
    let released = bounded(
        env.cmd().args(["release", "--json", "--token", &token]),
        "release",
    );
    assert_eq!(released.code, 0, "{}", released.stderr);
    let strip = on_workspace(&env, "strip-stale");
    assert_eq!(strip.code, 0, "{}", strip.stderr);
    drop(held);
}

/// How standard output is broken for a command.
#[derive(Clone, Copy, Debug)]
enum BrokenOut {
    /// A pipe whose reader is gone: every write fails with EPIPE.
    ReaderGone,
    /// Descriptor 1 closed before the binary starts.
    Closed,
}

/// Runs `cmd` with its standard output broken as `how`, under the hang bound.
fn with_broken_stdout(cmd: &mut Command, how: BrokenOut) -> Finished {
    cmd.stdin(Stdio::null()).stderr(Stdio::piped());
    match how {
        BrokenOut::ReaderGone => {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            cmd.stdout(writer);
        }
        BrokenOut::Closed => {
            use std::os::unix::process::CommandExt as _;
            // SAFETY: close(2) is async-signal-safe; it runs in the child between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    libc::close(1);
                    Ok(())
                });
            }
        }
    }
    let child = cmd.spawn().unwrap();
    finish(child, "a command with a broken stdout")
}

/// Asserts the session whose output was lost is gone: no lease, the user's bytes back.
fn assert_nothing_left(env: &Sandbox, done: &Finished) {
    assert_ne!(done.code, 101, "panicked: {}", done.stderr);
    assert_eq!(done.code, 1, "{}", done.stderr);
    assert!(
        done.stderr
            .starts_with("error: stdout: cannot write the receipt"),
        "{}",
        done.stderr
    );
    assert!(leases(env).is_empty(), "a lease outlives its lost token");
    assert_user_bytes_untouched(env);
}

#[test]
fn acquire_whose_receipt_cannot_be_written_is_undone_and_exits_1() {
    for how in [BrokenOut::ReaderGone, BrokenOut::Closed] {
        for json in [true, false] {
            let env = sandbox();
            let mut cmd = acquire_cmd(&env, &[]);
            if !json {
                // acquire_cmd asks for --json; the human receipt is just as undeliverable.
                cmd = env.cmd();
                cmd.args(["acquire", "--provider", "codex", "--workspace"])
                    .arg(&env.ws)
                    .args(["--prompt", "session text"]);
            }
            let done = with_broken_stdout(&mut cmd, how);
            assert_nothing_left(&env, &done);
            assert!(
                done.stderr.contains("was released"),
                "{how:?}: {}",
                done.stderr
            );
        }
    }
}

fn run_cmd(env: &Sandbox, json: bool, command: &[&str]) -> Command {
    let mut cmd = env.cmd();
    cmd.args(["run", "--provider", "codex", "--workspace"])
        .arg(&env.ws)
        .args(["--prompt", "session text"]);
    if json {
        cmd.arg("--json");
    }
    cmd.arg("--").args(command);
    cmd
}

#[test]
fn run_json_whose_receipt_cannot_be_written_never_runs_the_command_and_releases() {
    for how in [BrokenOut::ReaderGone, BrokenOut::Closed] {
        let env = sandbox();
        let marker = env.base.join("ran");
        let done = with_broken_stdout(
            &mut run_cmd(&env, true, &["touch", marker.to_str().unwrap()]),
            how,
        );
        assert_nothing_left(&env, &done);
        assert!(
            !marker.exists(),
            "{how:?}: the command ran without its receipt"
        );
    }
}

#[test]
fn run_releases_whatever_happens_to_its_output() {
    for how in [BrokenOut::ReaderGone, BrokenOut::Closed] {
        let env = sandbox();
        let marker = env.base.join("ran");
        let script = format!("touch {}; echo into the void", marker.display());
        let done = with_broken_stdout(&mut run_cmd(&env, false, &["sh", "-c", &script]), how);
        assert_ne!(done.code, 101, "panicked: {}", done.stderr);
        assert!(marker.exists(), "{how:?}: the command did not run");
        assert!(leases(&env).is_empty(), "{how:?}: the lease outlived run");
        assert_user_bytes_untouched(&env);
    }
}

#[test]
fn run_json_prints_exactly_one_object_when_the_command_cannot_start() {
    let env = sandbox();
    let not_executable = env.base.join("not-executable");
    std::fs::write(&not_executable, b"#!/bin/sh\n").unwrap();
    for command in [
        "no-such-command-anywhere".to_string(),
        not_executable.display().to_string(),
        env.base.join("missing").display().to_string(),
    ] {
        let done = bounded(&mut run_cmd(&env, true, &[&command]), "run");
        assert_eq!(done.code, 1, "{command}: {}", done.stderr);
        let objects: Vec<Value> = serde_json::Deserializer::from_str(&done.stdout)
            .into_iter::<Value>()
            .map(Result::unwrap)
            .collect();
        assert_eq!(objects.len(), 1, "{command}: {}", done.stdout);
        assert_eq!(objects[0]["schema"], "projectfile.error.v1");
        assert!(
            done.stderr
                .starts_with(&format!("error: {command}: cannot run the command")),
            "{}",
            done.stderr
        );
        assert!(leases(&env).is_empty());
        assert_user_bytes_untouched(&env);
    }
}

#[test]
fn run_json_prints_the_receipt_line_before_the_command_own_output() {
    let env = sandbox();
    let done = bounded(
        &mut run_cmd(&env, true, &["sh", "-c", "echo from the command"]),
        "run",
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    let mut lines = done.stdout.lines();
    let receipt: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(receipt["schema"], "projectfile.acquire.v1");
    assert_eq!(lines.collect::<Vec<_>>(), vec!["from the command"]);
}

#[cfg(feature = "claude")]
#[test]
fn a_relative_state_dir_hands_the_command_an_absolute_prompt_file_that_resolves_from_the_workspace()
{
    let env = sandbox();
    // `sh -c SCRIPT sh ARGS…`: ARGS are the launch arguments, `$2` the prompt file.
    let script = r#"printf '%s\n' "$@"; cat -- "$2""#;
    let done = bounded(
        Command::new(support::BIN)
            .env_remove("PROJECTFILE_STATE_DIR")
            .current_dir(&env.base)
            .args(["--state-dir", "rel-state", "run", "--provider", "claude"])
            .args(["--workspace", "ws", "--prompt", "from the prompt file"])
            .args(["--", "sh", "-c", script, "sh"]),
        "run",
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    let mut lines = done.stdout.lines();
    assert_eq!(lines.next(), Some("--append-system-prompt-file"));
    let prompt_file = Path::new(lines.next().unwrap());
    assert!(prompt_file.is_absolute(), "{}", prompt_file.display());
    assert!(
        prompt_file.starts_with(env.base.join("rel-state")),
        "{}",
        prompt_file.display()
    );
    assert!(
        done.stdout.contains("from the prompt file"),
        "{}",
        done.stdout
    );
    assert!(leases(&Sandbox::at(&env.ws, &env.base.join("rel-state"))).is_empty());
}

/// A hostile repository: its AGENTS.md imports a private key by every spelling, its CLAUDE.md is
/// a symlink to it, and a symlinked folder leads out; `home` holds the key.
fn hostile_repository(env: &Sandbox) -> std::path::PathBuf {
    let home = env.base.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY BYTES").unwrap();
    std::fs::create_dir_all(env.base.join("secret")).unwrap();
    std::fs::write(env.base.join("secret/notes.md"), "PRIVATE NOTES").unwrap();
    let key = home.join(".ssh/id_rsa");
    std::fs::write(
        env.ws.join("AGENTS.md"),
        format!(
            "rules\n@../secret/notes.md\n@{}\n@~/.ssh/id_rsa\n@docs/a.md\n",
            key.display()
        ),
    )
    .unwrap();
    std::fs::create_dir(env.ws.join("docs")).unwrap();
    std::fs::write(env.ws.join("docs/a.md"), "hop 1\n@../../secret/notes.md").unwrap();
    std::os::unix::fs::symlink(&key, env.ws.join("CLAUDE.md")).unwrap();
    std::os::unix::fs::symlink(env.base.join("secret"), env.ws.join("linked")).unwrap();
    std::fs::write(env.base.join("secret/AGENTS.md"), "PRIVATE AGENTS").unwrap();
    home
}

fn resolve_out(env: &Sandbox, home: &Path, extra: &[&str]) -> String {
    let done = bounded(
        env.cmd()
            .args(["resolve", "--workspace"])
            .arg(&env.ws)
            .arg("--home")
            .arg(home)
            .args(extra),
        "resolve",
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    done.stdout
}

#[test]
fn resolve_never_reads_guidance_outside_its_tree_unless_allowed() {
    let env = Sandbox::new();
    let home = hostile_repository(&env);
    for mode in [
        &["--json"][..],
        &["--render"],
        &["--fragments"],
        &[],
        &["--as", "claude", "--json"],
    ] {
        let out = resolve_out(&env, &home, mode);
        assert!(!out.contains("PRIVATE"), "{mode:?} leaked: {out}");
    }
    let receipt: Value = serde_json::from_str(&resolve_out(&env, &home, &["--json"])).unwrap();
    let outside: Vec<&Value> = receipt["omitted"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["reason"] == "outside_tree")
        .collect();
    let named: Vec<&str> = outside
        .iter()
        .map(|o| o["path"].as_str().unwrap())
        .collect();
    let ws = env.ws.to_str().unwrap();
    for expected in [
        format!("{ws}/../secret/notes.md"),
        home.join(".ssh/id_rsa").display().to_string(),
        format!("{ws}/docs/../../secret/notes.md"),
        format!("{ws}/CLAUDE.md"),
    ] {
        assert!(
            named.contains(&expected.as_str()),
            "{expected} not in {named:?}"
        );
    }
    assert!(outside.iter().all(|o| o["resolves_to"].is_string()));
    let allowed = resolve_out(&env, &home, &["--render", "--allow-outside-tree"]);
    for secret in ["PRIVATE KEY BYTES", "PRIVATE NOTES"] {
        assert!(allowed.contains(secret), "{secret} not read once allowed");
    }
    // A working directory reached through a symlinked folder that leads out of the workspace is
    // refused as bad usage before anything is read; the subtree scan never enters that folder.
    let through_link = bounded(
        env.cmd()
            .args(["resolve", "--render", "--workspace"])
            .arg(&env.ws)
            .arg("--home")
            .arg(&home)
            .args(["--cwd", env.ws.join("linked").to_str().unwrap()]),
        "resolve",
    );
    assert_eq!(through_link.code, 2, "{}", through_link.stderr);
    assert!(!through_link.stdout.contains("PRIVATE"));
    assert!(
        through_link.stderr.contains("linked"),
        "{}",
        through_link.stderr
    );
}

#[test]
fn an_agents_md_that_is_a_fifo_is_refused_naming_it_without_blocking() {
    let env = Sandbox::new();
    let fifo = env.ws.join("AGENTS.md");
    mkfifo(&fifo);
    let done = acquire(&env, &["--holder-pid", &std::process::id().to_string()]);
    assert_eq!(done.code, 1, "{}", done.stderr);
    assert!(
        done.stderr
            .starts_with(&format!("error: {}: ", fifo.display())),
        "{}",
        done.stderr
    );
    assert!(leases(&env).is_empty());
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(
        std::os::unix::fs::FileTypeExt::is_fifo(&kind),
        "the FIFO was replaced"
    );
}

#[test]
fn forged_tokens_release_nothing_and_touch_nothing() {
    let env = sandbox();
    let held = acquire(&env, &["--holder-pid", &std::process::id().to_string()]);
    assert_eq!(held.code, 0, "{}", held.stderr);
    let token = serde_json::from_str::<Value>(&held.stdout).unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let key = token.split('-').nth(1).unwrap().to_string();
    let during = std::fs::read(env.ws.join("AGENTS.md")).unwrap();
    for forged in [
        "pf1-../../../etc-00000000000000000000000000000000".to_string(),
        format!("pf1-{key}-../../{key}"),
        format!("pf1-{key}-00000000000000000000000000000000"),
        format!("pf1-{}-{}", "f".repeat(16), "0".repeat(32)),
        "garbage".to_string(),
        String::new(),
    ] {
        let done = bounded(
            env.cmd().args(["release", "--json", "--token", &forged]),
            "release",
        );
        assert_ne!(done.code, 101, "{forged:?} panicked: {}", done.stderr);
        if done.code == 0 {
            let receipt: Value = serde_json::from_str(&done.stdout).unwrap();
            assert_eq!(receipt["released"], false, "{forged:?}");
        }
        assert_eq!(
            std::fs::read(env.ws.join("AGENTS.md")).unwrap(),
            during,
            "{forged:?} changed the workspace"
        );
        assert_eq!(leases(&env).len(), 1, "{forged:?} released the live lease");
    }
}

#[test]
fn no_command_panics_when_its_stdout_reader_is_gone() {
    let env = sandbox();
    let ws = env.ws.to_str().unwrap();
    let commands: [&[&str]; 9] = [
        &["providers"],
        &["providers", "--json"],
        &["status", "--workspace", ws],
        &["strip-stale", "--workspace", ws, "--json"],
        &["resolve", "--workspace", ws, "--render"],
        &["resolve", "--workspace", ws],
        &["completions", "bash"],
        &["reader", "hint"],
        &["reader", "mode", "--access", "owner", "--json"],
    ];
    for args in commands {
        let done = with_broken_stdout(env.cmd().args(args), BrokenOut::ReaderGone);
        assert_eq!(done.code, 1, "{args:?}: {}", done.stderr);
        assert!(
            done.stderr.starts_with("error: stdout: cannot write"),
            "{args:?}: {}",
            done.stderr
        );
    }
    assert_user_bytes_untouched(&env);
}

/// A FIFO planted where the workspace's ledger is kept never hangs a command: each refuses at
/// once, naming it, and the user's file is as it was.
#[test]
fn a_fifo_at_the_ledger_is_refused_naming_it_and_never_hangs() {
    let env = sandbox();
    let done = acquire(&env, &["--holder-pid", &std::process::id().to_string()]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let token = serde_json::from_str::<Value>(&done.stdout).unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let key_dir = env.state.join("workspaces").join(&token[4..20]);
    let ledger = key_dir.join("ledger.jsonl");
    std::fs::remove_file(&ledger).unwrap();
    mkfifo(&ledger);
    for (what, finished) in [
        ("status", on_workspace(&env, "status")),
        ("strip-stale", on_workspace(&env, "strip-stale")),
        (
            "release",
            bounded(
                env.cmd().args(["release", "--json", "--token", &token]),
                "release",
            ),
        ),
        (
            "acquire",
            acquire(&env, &["--holder-pid", &std::process::id().to_string()]),
        ),
    ] {
        assert_ne!(finished.code, 0, "{what}: {}", finished.stdout);
        assert!(
            finished.stderr.contains("ledger.jsonl") && finished.stderr.contains("regular file"),
            "{what}: {}",
            finished.stderr
        );
    }
    std::fs::remove_file(&ledger).unwrap();
}
