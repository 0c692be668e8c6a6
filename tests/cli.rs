//! Black-box tests of the `projectfile` binary: real processes, real files, JSON receipts.
//! They drive the Codex provider, so they build only with the `codex` feature.
#![cfg(feature = "codex")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use support::Sandbox;

/// A sandbox with a directory outside the workspace.
struct Env {
    sandbox: Sandbox,
    outside: PathBuf,
}

impl std::ops::Deref for Env {
    type Target = Sandbox;
    fn deref(&self) -> &Sandbox {
        &self.sandbox
    }
}

impl Env {
    fn new() -> Env {
        let sandbox = Sandbox::new();
        let outside = sandbox.base.join("outside");
        std::fs::create_dir(&outside).unwrap();
        Env { sandbox, outside }
    }

    fn acquire(&self, prompt: &str, holder: u32) -> String {
        let ws = self.ws.to_str().unwrap();
        let pid = holder.to_string();
        let v = self.json(&[
            "acquire",
            "--provider",
            "codex",
            "--workspace",
            ws,
            "--prompt",
            prompt,
            "--holder-pid",
            &pid,
        ]);
        v["token"].as_str().unwrap().to_string()
    }

    fn release(&self, token: &str) -> bool {
        self.json(&["release", "--token", token])["released"]
            .as_bool()
            .unwrap()
    }

    fn agents(&self) -> Option<Vec<u8>> {
        std::fs::read(self.ws.join("AGENTS.md")).ok()
    }

    fn write(&self, rel: &str, bytes: &[u8]) {
        std::fs::write(self.ws.join(rel), bytes).unwrap();
    }
}

fn me() -> u32 {
    std::process::id()
}

fn contains(bytes: &[u8], needle: &str) -> bool {
    String::from_utf8_lossy(bytes).contains(needle)
}

#[test]
fn user_files_survive_byte_exact() {
    let cases: &[&[u8]] = &[
        b"crlf\r\nlines\r\n",
        b"\xEF\xBB\xBFbom\n",
        b"no final newline",
        b"bad \xFF\xFE utf8 and \0 nul\n",
        b"",
    ];
    for original in cases {
        let env = Env::new();
        env.write("AGENTS.md", original);
        let t = env.acquire("Session: reply in haiku.", me());
        assert!(contains(&env.agents().unwrap(), "Session: reply in haiku."));
        assert!(env.release(&t));
        assert_eq!(env.agents().unwrap(), *original);
    }
}

#[test]
fn two_sessions_release_in_either_order_and_twice() {
    for order in [0, 1] {
        let env = Env::new();
        env.write("AGENTS.md", b"mine\n");
        let a = env.acquire("A", me());
        let b = env.acquire("B", me());
        let (x, y) = if order == 0 { (&a, &b) } else { (&b, &a) };
        assert!(env.release(x));
        assert!(contains(
            &env.agents().unwrap(),
            "BEGIN agentworks-session-instructions"
        ));
        assert!(!env.release(x), "second release of the same token");
        assert!(env.release(y));
        assert_eq!(env.agents().unwrap(), b"mine\n");
        assert!(!env.release(y));
    }
}

#[test]
fn sigkilled_holder_is_cleaned_by_the_next_start() {
    let env = Env::new();
    let mut holder = Command::new("sleep").arg("600").spawn().unwrap();
    let t = env.acquire("doomed", holder.id());
    assert!(contains(&env.agents().unwrap(), "doomed"));
    holder.kill().unwrap(); // SIGKILL
    holder.wait().unwrap();
    let status = env.json(&["status", "--workspace", env.ws.to_str().unwrap()]);
    assert_eq!(status["stale"][0].as_str().unwrap(), t);
    let next = env.acquire("next", me());
    assert!(!contains(&env.agents().unwrap(), "doomed"));
    assert!(env.release(&next));
    assert!(
        env.agents().is_none(),
        "the created AGENTS.md is gone with the last session"
    );
    assert!(!env.release(&t));
}

#[test]
fn user_edit_mid_session_is_kept() {
    let env = Env::new();
    env.write("AGENTS.md", b"top\n");
    let t = env.acquire("S", me());
    let mut now = env.agents().unwrap();
    now.extend_from_slice(b"added during the session\n");
    env.write("AGENTS.md", &now);
    assert!(env.release(&t));
    assert_eq!(env.agents().unwrap(), b"top\nadded during the session\n");
}

#[test]
fn malformed_markers_are_refused_with_file_and_line() {
    let env = Env::new();
    let text =
        b"a\nb\n<!-- BEGIN agentworks-session-instructions created=false -->\nunterminated\n";
    env.write("AGENTS.md", text);
    let out: Output = env
        .cmd()
        .args(["acquire", "--provider", "codex", "--workspace"])
        .arg(&env.ws)
        .args(["--prompt", "x", "--holder-pid", &me().to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("AGENTS.md:3:"), "{err}");
    assert_eq!(env.agents().unwrap(), text);
}

#[test]
fn symlinked_agents_md_pointing_outside_is_refused() {
    let env = Env::new();
    let target = env.outside.join("precious.md");
    std::fs::write(&target, b"precious\n").unwrap();
    std::os::unix::fs::symlink(&target, env.ws.join("AGENTS.md")).unwrap();
    let out = env
        .cmd()
        .args(["acquire", "--provider", "codex", "--json", "--workspace"])
        .arg(&env.ws)
        .args(["--prompt", "x", "--holder-pid", &me().to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "symlink");
    assert_eq!(std::fs::read(&target).unwrap(), b"precious\n");
    assert!(
        std::fs::symlink_metadata(env.ws.join("AGENTS.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn thirty_two_processes_at_once_lose_nothing() {
    let env = Env::new();
    env.write("AGENTS.md", b"shared\r\nfile");
    let ws = env.ws.to_str().unwrap().to_string();
    let state = env.state.clone();
    let script = format!(
        "set -e; T=$(\"$PF\" acquire --provider codex --workspace '{ws}' --prompt \"p$$\" --holder-pid $$ --json | sed 's/.*\"token\":\"\\([^\"]*\\)\".*/\\1/'); \"$PF\" release --token \"$T\" --json >/dev/null"
    );
    let children: Vec<_> = (0..32)
        .map(|_| {
            Command::new("sh")
                .arg("-c")
                .arg(&script)
                .env("PF", env!("CARGO_BIN_EXE_projectfile"))
                .env("PROJECTFILE_STATE_DIR", &state)
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    assert_eq!(env.agents().unwrap(), b"shared\r\nfile");
    let status = env.json(&["status", "--workspace", &ws]);
    assert_eq!(status["leases"].as_array().unwrap().len(), 0);
}

#[test]
fn run_shows_the_text_while_running_and_restores_after() {
    let env = Env::new();
    env.write("AGENTS.md", b"user\n");
    let out = env
        .cmd()
        .args(["run", "--provider", "codex", "--workspace"])
        .arg(&env.ws)
        .args([
            "--prompt",
            "visible during run",
            "--",
            "sh",
            "-c",
            "cat AGENTS.md; exit 7",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(7),
        "run exits with the child's status"
    );
    assert!(contains(&out.stdout, "visible during run"));
    assert_eq!(env.agents().unwrap(), b"user\n");
}

#[test]
fn run_finds_its_command_on_the_path_and_restores_when_there_is_none() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.write("AGENTS.md", b"user\n");
    let bin = env.outside.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let tool = bin.join("pf-test-tool");
    std::fs::write(
        &tool,
        "#!/bin/sh\ngrep -c 'on the path' AGENTS.md\nexit 5\n",
    )
    .unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        env.outside.join("absent").display(),
        bin.display()
    );
    let run = |program: &str| {
        env.cmd()
            .env("PATH", &path)
            .args(["run", "--provider", "codex", "--workspace"])
            .arg(&env.ws)
            .args(["--prompt", "on the path", "--", program])
            .output()
            .unwrap()
    };
    let out = run("pf-test-tool");
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
    assert_eq!(env.agents().unwrap(), b"user\n");
    let out = run("pf-no-such-tool");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: pf-no-such-tool: cannot run the command"),
        "{stderr}"
    );
    assert_eq!(env.agents().unwrap(), b"user\n", "nothing left behind");
    let status = env.json(&["status", "--workspace", env.ws.to_str().unwrap()]);
    assert_eq!(status["leases"].as_array().unwrap().len(), 0);
}

#[test]
fn closed_standard_descriptors_are_opened_on_dev_null() {
    use std::os::unix::process::CommandExt;
    let env = Env::new();
    env.write("AGENTS.md", b"user\n");
    let seen = env.outside.join("descriptors");
    let script = format!(
        "a=$(readlink /proc/$$/fd/0); b=$(readlink /proc/$$/fd/1); c=$(readlink /proc/$$/fd/2); \
         printf '%s\\n' \"$a\" \"$b\" \"$c\" > '{}'",
        seen.display()
    );
    let mut cmd = env.cmd();
    cmd.args(["-v", "run", "--provider", "codex", "--workspace"])
        .arg(&env.ws)
        .args(["--prompt", "closed fds", "--", "sh", "-c", &script]);
    // SAFETY: close(2) is async-signal-safe; projectfile starts with 0, 1 and 2 closed, where a
    // file it opened could take their numbers and receive what it prints.
    unsafe {
        cmd.pre_exec(|| {
            for fd in 0..3 {
                libc::close(fd);
            }
            Ok(())
        });
    }
    assert_eq!(cmd.status().unwrap().code(), Some(0));
    // What the command inherits is what projectfile had: /dev/null on each, as std's runtime
    // would have opened them.
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        "/dev/null\n/dev/null\n/dev/null\n"
    );
    for entry in walk(&env.base) {
        let bytes = std::fs::read(&entry).unwrap();
        for printed in ["projectfile.acquire.v1", "projectfile: ["] {
            assert!(
                !contains(&bytes, printed),
                "{} holds {printed:?}",
                entry.display()
            );
        }
    }
    assert_eq!(env.agents().unwrap(), b"user\n");
}

/// Every regular file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            files.extend(walk(&entry.path()));
        } else if kind.is_file() {
            files.push(entry.path());
        }
    }
    files
}

/// `run` of `command` in the workspace with the session text `prompt`, which must succeed.
fn run_ok<S: AsRef<std::ffi::OsStr>>(env: &Env, prompt: &str, command: &[S]) -> Output {
    let out = env
        .cmd()
        .args(["run", "--provider", "codex", "--workspace"])
        .arg(&env.ws)
        .args(["--prompt", prompt, "--"])
        .args(command)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Leases left in the sandbox's state for its workspace.
fn lease_count(env: &Env) -> usize {
    let status = env.json(&["status", "--workspace", env.ws.to_str().unwrap()]);
    status["leases"].as_array().unwrap().len()
}

#[test]
fn run_passes_arguments_that_are_not_utf8_through_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt as _;
    let env = Env::new();
    env.write("AGENTS.md", b"user\n");
    let seen = env.outside.join("seen");
    // Arguments are bytes on Unix: a file name in Latin-1 is a valid argument to the command.
    let odd = std::ffi::OsStr::from_bytes(b"caf\xe9 \xff\xfe");
    let script = "printf %s \"$1\" > \"$2\"";
    let command = [
        "sh".as_ref(),
        "-c".as_ref(),
        script.as_ref(),
        "sh".as_ref(),
        odd,
        seen.as_os_str(),
    ];
    run_ok(&env, "bytes", &command);
    assert_eq!(std::fs::read(&seen).unwrap(), b"caf\xe9 \xff\xfe");
    assert_eq!(env.agents().unwrap(), b"user\n");
    assert_eq!(lease_count(&env), 0);
}

#[test]
fn arguments_that_are_not_utf8_where_text_is_needed_are_refused_cleanly() {
    use std::os::unix::ffi::OsStrExt as _;
    let env = Env::new();
    env.write("AGENTS.md", b"user\n");
    let bytes = |b: &'static [u8]| std::ffi::OsStr::from_bytes(b);
    let odd_ws = env.base.join(bytes(b"ws-\xff"));
    std::fs::create_dir(&odd_ws).unwrap();
    let ws = env.ws.as_os_str();
    let lines: [(Vec<&std::ffi::OsStr>, i32, &str); 4] = [
        // A prompt is text: clap's refusal, bad usage.
        (
            vec![
                "acquire".as_ref(),
                "--provider".as_ref(),
                "codex".as_ref(),
                "--workspace".as_ref(),
                ws,
                "--prompt".as_ref(),
                bytes(b"a\xff"),
            ],
            2,
            "error: invalid UTF-8",
        ),
        // Before the subcommand (the full parser's path).
        (
            vec![bytes(b"\xff"), "providers".as_ref()],
            2,
            "error: unrecognized subcommand",
        ),
        (
            vec![
                "--namespace".as_ref(),
                bytes(b"n\xff"),
                "providers".as_ref(),
            ],
            2,
            "error: invalid UTF-8",
        ),
        // A path the ledger cannot record as JSON text: the library's refusal, naming it.
        (
            vec![
                "acquire".as_ref(),
                "--provider".as_ref(),
                "codex".as_ref(),
                "--workspace".as_ref(),
                odd_ws.as_os_str(),
                "--prompt".as_ref(),
                "p".as_ref(),
            ],
            1,
            "error: ",
        ),
    ];
    for (args, code, starts) in lines {
        let out = env.cmd().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.starts_with(starts), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(env.agents().unwrap(), b"user\n");
    assert_eq!(std::fs::read_dir(&odd_ws).unwrap().count(), 0);
    assert_eq!(lease_count(&env), 0);
}

#[test]
fn run_gives_its_command_the_default_sigpipe() {
    // projectfile ignores SIGPIPE (a closed stdout is an error it reports); the command it runs
    // must start with the default action, as under std's runtime, or `cmd | head` would leave it
    // writing into a closed pipe.
    let env = Env::new();
    let out = run_ok(&env, "signals", &["grep", "^SigIgn:", "/proc/self/status"]);
    let line = String::from_utf8_lossy(&out.stdout);
    let mask = u64::from_str_radix(line.trim().trim_start_matches("SigIgn:").trim(), 16).unwrap();
    assert_eq!(mask & (1 << (libc::SIGPIPE - 1)), 0, "{line}");
}

/// A panic, which the library promises never to raise, still ends the process as under std's
/// runtime: its message on stderr, status 101, nothing on stdout, nothing changed. The debug
/// binary panics on request (the release binary has no such switch).
#[cfg(debug_assertions)]
#[test]
fn a_panic_reports_and_exits_101() {
    let env = Env::new();
    env.write("AGENTS.md", b"user\n");
    let out = env
        .cmd()
        .env("PROJECTFILE_PANIC_FOR_TESTS", "1")
        .args(["acquire", "--provider", "codex", "--workspace"])
        .arg(&env.ws)
        .args(["--prompt", "p", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "{stderr}");
    assert!(stderr.contains("panicked at"), "{stderr}");
    assert!(stderr.contains("a panic asked for by the test"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(env.agents().unwrap(), b"user\n");
    assert_eq!(lease_count(&env), 0);
}

#[test]
fn run_forwards_sigterm_and_releases() {
    let env = Env::new();
    let ready = env.outside.join("ready");
    let mut child = env
        .cmd()
        .args(["run", "--provider", "codex", "--workspace"])
        .arg(&env.ws)
        .args(["--prompt", "x", "--", "sh", "-c"])
        .arg(format!(
            "trap 'exit 42' TERM; touch '{}'; while :; do sleep 0.05; done",
            ready.display()
        ))
        .spawn()
        .unwrap();
    wait_for(&ready);
    assert!(env.agents().is_some());
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(42),
        "the child's own exit status comes back"
    );
    assert!(env.agents().is_none(), "released after the child ended");
}

#[test]
fn run_killed_with_sigkill_is_cleaned_by_strip_stale() {
    let env = Env::new();
    let ready = env.outside.join("ready");
    let mut child = env
        .cmd()
        .args(["run", "--provider", "codex", "--workspace"])
        .arg(&env.ws)
        .args(["--prompt", "x", "--", "sh", "-c"])
        .arg(format!("touch '{}'; exec sleep 600", ready.display()))
        .spawn()
        .unwrap();
    wait_for(&ready);
    child.kill().unwrap();
    child.wait().unwrap();
    // The grandchild `sleep` still runs, but the holder was `projectfile run` itself.
    let report = env.json(&["strip-stale", "--workspace", env.ws.to_str().unwrap()]);
    assert_eq!(report["stale_cleaned"].as_array().unwrap().len(), 1);
    assert!(env.agents().is_none());
    let _ = Command::new("pkill")
        .args(["-f", &ready.display().to_string()])
        .status();
}

#[test]
fn providers_lists_the_enabled_ones() {
    let env = Env::new();
    let v = env.json(&["providers"]);
    let names: Vec<&str> = v["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"codex"));
}

#[test]
fn errors_are_one_line_with_the_path() {
    let env = Env::new();
    let out = env
        .cmd()
        .args(["status", "--workspace", "/definitely/not/here"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: /definitely/not/here: "), "{err}");
    assert_eq!(err.lines().count(), 1);
}

fn wait_for(path: &Path) {
    for _ in 0..400 {
        if path.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("{} never appeared", path.display());
}
