//! Black-box tests of linked private runtimes through `projectfile run --runtime-root …`: the real
//! project is never a projection destination, a tampered `project/` link fails the launch without
//! being overwritten, and a Run-mode child cannot write the project (Landlock, where available).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

use projectfile_conformance::Tree;
use std::path::PathBuf;
use std::process::{Command, Output};

struct Env {
    _dir: tempfile::TempDir,
    project: PathBuf,
    rt: PathBuf,
    state: PathBuf,
    other: PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let env = Env {
            project: base.join("project"),
            rt: base.join("rt"),
            state: base.join("state"),
            other: base.join("other"),
            _dir: dir,
        };
        std::fs::create_dir_all(env.project.join(".claude")).unwrap();
        std::fs::create_dir_all(&env.other).unwrap();
        std::fs::write(env.project.join("AGENTS.md"), b"real project rules\r\n").unwrap();
        std::fs::write(env.project.join(".claude/settings.json"), b"{}\n").unwrap();
        env
    }

    fn run(&self, mode: &str, extra: &[&str], script: &str) -> Output {
        Command::new(env!("CARGO_BIN_EXE_projectfile"))
            .env("PROJECTFILE_STATE_DIR", &self.state)
            .args(["run", "--provider", "codex", "--workspace"])
            .arg(&self.project)
            .args(["--prompt", "linked session text", "--runtime-root"])
            .arg(&self.rt)
            .args([
                "--user",
                "u1",
                "--project-id",
                "p1",
                "--session-id",
                "work:project:42",
            ])
            .args(["--mode", mode])
            .args(extra)
            .args(["--", "sh", "-c", script])
            .output()
            .unwrap()
    }

    fn runtime_dir(&self, mode: &str) -> PathBuf {
        self.rt.join("u1/p1/work_3aproject_3a42/codex").join(mode)
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn linked_session_leaves_the_real_project_byte_identical() {
    let env = Env::new();
    let before = Tree::capture(&env.project);
    let out = env.run("builder", &[], "cat AGENTS.md; cat project/AGENTS.md");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("linked session text"),
        "the runtime carries the block"
    );
    assert!(
        stdout.contains("real project rules"),
        "project/ reaches the real folder"
    );
    assert_eq!(Tree::capture(&env.project), before);
    assert!(!env.runtime_dir("builder").join("AGENTS.md").exists());
}

#[test]
fn a_tampered_project_link_fails_the_launch_and_is_not_overwritten() {
    for tamper in ["other link", "file", "directory"] {
        let env = Env::new();
        assert!(env.run("builder", &[], "true").status.success());
        let link = env.runtime_dir("builder").join("project");
        std::fs::remove_file(&link).unwrap();
        match tamper {
            "other link" => std::os::unix::fs::symlink(&env.other, &link).unwrap(),
            "file" => std::fs::write(&link, b"not a link").unwrap(),
            _ => std::fs::create_dir(&link).unwrap(),
        }
        let marker = env.other.join("ran");
        let out = env.run("builder", &[], &format!("touch '{}'", marker.display()));
        assert_eq!(out.status.code(), Some(1), "{tamper}: the launch must fail");
        assert!(
            text(&out.stderr).starts_with("error: "),
            "{tamper}: {}",
            text(&out.stderr)
        );
        assert!(!marker.exists(), "{tamper}: the command must not run");
        let meta = std::fs::symlink_metadata(&link).unwrap();
        match tamper {
            "other link" => assert_eq!(std::fs::read_link(&link).unwrap(), env.other),
            "file" => assert_eq!(std::fs::read(&link).unwrap(), b"not a link"),
            _ => assert!(meta.is_dir()),
        }
    }
}

#[test]
fn remove_runtime_with_a_hostile_link_inside_leaves_the_target_alone() {
    let env = Env::new();
    assert!(env.run("builder", &[], "true").status.success());
    let precious = env.other.join("precious.txt");
    std::fs::write(&precious, b"keep me").unwrap();
    std::os::unix::fs::symlink(&env.other, env.runtime_dir("builder").join("hostile")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_projectfile"))
        .args(["remove-runtime", "--runtime-root"])
        .arg(&env.rt)
        .args([
            "--user",
            "u1",
            "--project-id",
            "p1",
            "--session-id",
            "work:project:42",
        ])
        .args(["--provider", "codex", "--mode", "builder", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!env.runtime_dir("builder").exists());
    assert_eq!(std::fs::read(&precious).unwrap(), b"keep me");
    assert_eq!(
        std::fs::read(env.project.join("AGENTS.md")).unwrap(),
        b"real project rules\r\n"
    );
}

fn landlock_available() -> bool {
    projectfile::core::sandbox::kernel_abi().is_some_and(|abi| abi >= 3)
}

#[test]
fn run_mode_child_cannot_write_the_project() {
    if !landlock_available() {
        eprintln!("skipped: this kernel has no Landlock ABI >= 3");
        return;
    }
    let env = Env::new();
    let before = Tree::capture(&env.project);
    let out = env.run(
        "run",
        &["--sandbox"],
        "echo x >> project/AGENTS.md && echo WROTE; rm project/AGENTS.md && echo REMOVED; \
         touch project/new.txt && echo CREATED; echo ok > mine.txt && echo RUNTIME_OK",
    );
    let stdout = text(&out.stdout);
    assert!(
        !stdout.contains("WROTE") && !stdout.contains("REMOVED") && !stdout.contains("CREATED")
    );
    assert!(
        stdout.contains("RUNTIME_OK"),
        "the runtime stays writable: {stdout}"
    );
    assert_eq!(Tree::capture(&env.project), before);
}

#[test]
fn builder_mode_child_can_write_the_project() {
    if !landlock_available() {
        eprintln!("skipped: this kernel has no Landlock ABI >= 3");
        return;
    }
    let env = Env::new();
    let out = env.run("builder", &["--sandbox"], "echo built > project/out.txt");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(env.project.join("out.txt")).unwrap(),
        b"built\n"
    );
}

#[test]
fn reader_notice_round_trips_through_the_cli() {
    let run = |args: &[&str], input: &str| -> String {
        use std::io::Write as _;
        let mut child = Command::new(env!("CARGO_BIN_EXE_projectfile"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        text(&child.wait_with_output().unwrap().stdout)
    };
    let message = "please change the README";
    let wrapped = run(&["reader", "wrap"], message);
    assert_ne!(wrapped, message);
    assert_eq!(run(&["reader", "strip"], &wrapped), message);
    let mode = run(
        &[
            "reader",
            "mode",
            "--access",
            "owner",
            "--route",
            "read-only-channel",
            "--json",
        ],
        "",
    );
    let v: serde_json::Value = serde_json::from_str(&mode).unwrap();
    assert_eq!(v["mode"], "run");
    assert_eq!(v["read_only"], true);
}

/// `run --sandbox` for claude below the AGENTS.md gate: the session text is a private file under
/// the state directory, named on the command line; the sandboxed CLI must be able to read it.
fn run_claude_sandboxed(env: &Env, extra: &[&str], script: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_projectfile"))
        .env("PROJECTFILE_STATE_DIR", &env.state)
        .args(["run", "--provider", "claude", "--cli-version", "2.1.233"])
        .arg("--workspace")
        .arg(&env.project)
        .args(["--prompt", "private session text", "--runtime-root"])
        .arg(&env.rt)
        .args(["--user", "u1", "--project-id", "p1"])
        .args([
            "--session-id",
            "work:project:43",
            "--mode",
            "run",
            "--sandbox",
        ])
        .args(extra)
        .args(["--", "sh", "-c", script, "sh"])
        .output()
        .unwrap()
}

#[test]
fn a_sandboxed_cli_reads_its_private_prompt_file() {
    if !landlock_available() {
        eprintln!("skipped: this kernel has no Landlock ABI >= 3");
        return;
    }
    let env = Env::new();
    // The launch arguments follow: $1 is --append-system-prompt-file, $2 the private file.
    let out = run_claude_sandboxed(
        &env,
        &[],
        "test \"$1\" = --append-system-prompt-file && cat \"$2\"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("private session text"));
}

#[test]
fn sandbox_read_and_write_grant_extra_paths() {
    if !landlock_available() {
        eprintln!("skipped: this kernel has no Landlock ABI >= 3");
        return;
    }
    let env = Env::new();
    std::fs::write(env.other.join("tool.txt"), b"installed tool\n").unwrap();
    let script = format!(
        "cat '{0}/tool.txt'; echo home > '{0}/written.txt' && echo WROTE",
        env.other.display()
    );
    let denied = run_claude_sandboxed(&env, &[], &script);
    assert!(!text(&denied.stdout).contains("installed tool"));
    assert!(!env.other.join("written.txt").exists());
    let other = env.other.to_string_lossy().into_owned();
    let granted = run_claude_sandboxed(&env, &["--sandbox-write", &other], &script);
    assert!(
        text(&granted.stdout).contains("installed tool"),
        "{}",
        text(&granted.stderr)
    );
    assert!(text(&granted.stdout).contains("WROTE"));
    std::fs::remove_file(env.other.join("written.txt")).unwrap();
    let read_only = run_claude_sandboxed(&env, &["--sandbox-read", &other], &script);
    assert!(text(&read_only.stdout).contains("installed tool"));
    assert!(!env.other.join("written.txt").exists());
}
