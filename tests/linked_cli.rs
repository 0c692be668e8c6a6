//! Black-box tests of linked private runtimes through `projectfile run --runtime-root …`: the real
//! project is never a projection destination; no level of a runtime is ever followed through a
//! link, at launch or removal; a runtime holds exactly the links its launch asked for (our stale
//! links are replaced, anything we did not make fails the launch untouched); attached folders
//! follow the mode, under Landlock where the kernel has it; one UUID is one runtime; private CLI
//! homes; resume boundaries.
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
        self.run_as("codex", "work:project:42", mode, extra, script)
    }

    fn run_as(
        &self,
        provider: &str,
        session: &str,
        mode: &str,
        extra: &[&str],
        script: &str,
    ) -> Output {
        self.command(provider, session, mode, extra, script)
            .output()
            .unwrap()
    }

    fn command(
        &self,
        provider: &str,
        session: &str,
        mode: &str,
        extra: &[&str],
        script: &str,
    ) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_projectfile"));
        command
            .env("PROJECTFILE_STATE_DIR", &self.state)
            .args(["run", "--provider", provider, "--workspace"])
            .arg(&self.project)
            .args(["--prompt", "linked session text", "--runtime-root"])
            .arg(&self.rt)
            .args([
                "--user",
                "u1",
                "--project-id",
                "p1",
                "--session-id",
                session,
            ])
            .args(["--mode", mode])
            .args(extra)
            .args(["--", "sh", "-c", script]);
        command
    }

    fn runtime_dir(&self, mode: &str) -> PathBuf {
        self.rt.join("u1/p1/work_3aproject_3a42/codex").join(mode)
    }

    fn remove(&self, mode: &str) -> Output {
        self.remove_with(mode, &[])
    }

    fn remove_with(&self, mode: &str, extra: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_projectfile"))
            .args(["remove-runtime", "--runtime-root"])
            .arg(&self.rt)
            .args([
                "--user",
                "u1",
                "--project-id",
                "p1",
                "--session-id",
                "work:project:42",
            ])
            .args(["--provider", "codex", "--mode", mode])
            .args(extra)
            .output()
            .unwrap()
    }

    /// A new folder next to the project, holding one file.
    fn folder(&self, name: &str) -> PathBuf {
        let dir = self.other.parent().unwrap().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("file.txt"), format!("{name}\n")).unwrap();
        dir
    }
}

/// The identity levels of the `builder` runtime, root first: how many components below the
/// runtime root each one is (0 is the root itself).
const LEVELS: [(&str, usize); 6] = [
    ("root", 0),
    ("user", 1),
    ("project", 2),
    ("session", 3),
    ("provider", 4),
    ("mode", 5),
];

/// The path of `level` for the `builder` runtime of `env`.
fn level_path(env: &Env, depth: usize) -> PathBuf {
    let mut path = env.rt.clone();
    for name in ["u1", "p1", "work_3aproject_3a42", "codex", "builder"]
        .iter()
        .take(depth)
    {
        path.push(name);
    }
    path
}

/// Replaces the folder at `depth` with a symlink to a decoy that holds, below it, the same
/// runtime-shaped path with a precious file at the runtime's place (what a following walk would
/// find and delete). Returns the precious file.
fn swap_level_for_a_link(env: &Env, depth: usize) -> PathBuf {
    let level = level_path(env, depth);
    let decoy = env.other.join("decoy");
    let below: PathBuf = ["u1", "p1", "work_3aproject_3a42", "codex", "builder"]
        .iter()
        .skip(depth)
        .collect();
    std::fs::create_dir_all(decoy.join(&below)).unwrap();
    let precious = decoy.join(&below).join("precious.txt");
    std::fs::write(&precious, b"keep me").unwrap();
    std::fs::rename(&level, env.other.join("moved-away")).unwrap();
    std::os::unix::fs::symlink(&decoy, &level).unwrap();
    precious
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
    let out = env.remove_with("builder", &["--json"]);
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

#[test]
fn remove_runtime_never_follows_a_link_at_any_level() {
    for (name, depth) in LEVELS {
        let env = Env::new();
        assert!(env.run("builder", &[], "true").status.success());
        let precious = swap_level_for_a_link(&env, depth);
        let level = level_path(&env, depth);
        let out = env.remove("builder");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: {}: ", level.display())),
            "{name}: {stderr}"
        );
        assert_eq!(
            std::fs::read(&precious).unwrap(),
            b"keep me",
            "{name}: the link's target lost a file"
        );
        assert!(
            std::fs::symlink_metadata(&level)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{name}: the link itself stays"
        );
    }
}

#[test]
fn a_launch_never_follows_a_link_at_any_level() {
    for (name, depth) in LEVELS {
        let env = Env::new();
        assert!(env.run("builder", &[], "true").status.success());
        let precious = swap_level_for_a_link(&env, depth);
        let decoy_runtime = precious.parent().unwrap().to_path_buf();
        let before = Tree::capture(&env.other);
        let level = level_path(&env, depth);
        let marker = env.project.join("ran");
        let out = env.run("builder", &[], &format!("touch '{}'", marker.display()));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: {}: ", level.display())),
            "{name}: {stderr}"
        );
        assert!(!marker.exists(), "{name}: the command must not run");
        assert_eq!(
            Tree::capture(&env.other),
            before,
            "{name}: nothing may be created in the link's target"
        );
        assert!(!decoy_runtime.join("project").exists(), "{name}");
    }
}

/// Plants `kind` (a link to `target`, a file, or a folder with a file) at `path`.
fn plant(path: &std::path::Path, kind: &str, target: &std::path::Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    match kind {
        "link" => std::os::unix::fs::symlink(target, path).unwrap(),
        "file" => std::fs::write(path, b"planted file").unwrap(),
        _ => {
            std::fs::create_dir(path).unwrap();
            std::fs::write(path.join("inside.txt"), b"planted folder").unwrap();
        }
    }
}

/// What is at `path` now, without following it.
fn what_is(path: &std::path::Path) -> String {
    match std::fs::symlink_metadata(path) {
        Err(_) => "nothing".to_string(),
        Ok(m) if m.file_type().is_symlink() => {
            format!("link to {}", std::fs::read_link(path).unwrap().display())
        }
        Ok(m) if m.is_dir() => format!(
            "folder holding {:?}",
            std::fs::read(path.join("inside.txt")).ok()
        ),
        Ok(_) => format!("file holding {:?}", std::fs::read(path).unwrap()),
    }
}

/// Runs `script` in the runtime and SIGKILLs the `projectfile run` process from inside it (the
/// script's parent), as a crash mid-launch: nothing of ours is cleaned up.
fn run_and_kill(env: &Env, mode: &str, extra: &[&str], script: &str) {
    let out = env.run(mode, extra, &format!("{script}; kill -9 $PPID; exit 0"));
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(9),
        "the launch should have been killed: {}",
        text(&out.stderr)
    );
}

#[test]
fn a_run_without_output_never_sees_an_output_link_it_did_not_ask_for() {
    for kind in ["link", "file", "folder"] {
        let env = Env::new();
        assert!(env.run("builder", &[], "true").status.success());
        let output = env.runtime_dir("builder").join("output");
        plant(&output, kind, &env.other);
        let before = what_is(&output);
        let marker = env.project.join("ran");
        let out = env.run(
            "builder",
            &[],
            &format!(
                "ls output > '{}' 2>&1; touch '{}'",
                marker.display(),
                marker.display()
            ),
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{kind}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: {}: ", output.display())),
            "{kind}: {stderr}"
        );
        assert!(stderr.contains("did not make"), "{kind}: {stderr}");
        assert!(!marker.exists(), "{kind}: the command must not run");
        assert_eq!(what_is(&output), before, "{kind}: left untouched");
    }
}

#[test]
fn our_output_link_left_by_a_killed_run_is_removed_for_a_run_without_output() {
    let env = Env::new();
    let step = env.folder("step-a");
    run_and_kill(
        &env,
        "builder",
        &["--output", step.to_str().unwrap()],
        "echo a > output/a.txt",
    );
    let output = env.runtime_dir("builder").join("output");
    assert_eq!(std::fs::read_link(&output).unwrap(), step);
    let out = env.run(
        "builder",
        &[],
        "if [ -e output ] || [ -L output ]; then echo SAW_OUTPUT; else echo NO_OUTPUT; fi",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "NO_OUTPUT");
    assert_eq!(std::fs::read(step.join("a.txt")).unwrap(), b"a\n");
    assert_eq!(std::fs::read(step.join("file.txt")).unwrap(), b"step-a\n");
}

#[test]
fn a_run_killed_with_output_a_then_a_run_with_output_b_links_b() {
    let env = Env::new();
    let a = env.folder("step-a");
    let b = env.folder("step-b");
    run_and_kill(
        &env,
        "run",
        &["--output", a.to_str().unwrap()],
        "echo a > output/from-a.txt",
    );
    let out = env.run(
        "run",
        &["--output", b.to_str().unwrap()],
        "readlink output; echo b > output/from-b.txt",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), b.display().to_string());
    assert_eq!(std::fs::read(b.join("from-b.txt")).unwrap(), b"b\n");
    assert_eq!(std::fs::read(a.join("from-a.txt")).unwrap(), b"a\n");
    assert!(!b.join("from-a.txt").exists() && !a.join("from-b.txt").exists());
    // The launch ended: its output link is gone again, the folders stay.
    assert_eq!(what_is(&env.runtime_dir("run").join("output")), "nothing");
}

#[test]
fn anything_we_did_not_make_where_our_links_go_fails_the_launch_untouched() {
    for slot in ["output", "project", "attached/docs"] {
        for kind in ["link", "file", "folder"] {
            let env = Env::new();
            let step = env.folder("step");
            let docs = env.folder("docs");
            let wanted: &[&str] = &[
                "--output",
                step.to_str().unwrap(),
                "--attach",
                &format!("docs={}", docs.display()),
            ];
            assert!(env.run("builder", &[], "true").status.success());
            let path = env.runtime_dir("builder").join(slot);
            if slot == "project" {
                std::fs::remove_file(&path).unwrap();
            }
            plant(&path, kind, &env.other);
            let before = what_is(&path);
            let others = Tree::capture(&env.other);
            let marker = env.project.join("ran");
            let out = env.run("builder", wanted, &format!("touch '{}'", marker.display()));
            let stderr = text(&out.stderr);
            let case = format!("{slot} as a {kind}");
            assert_eq!(out.status.code(), Some(1), "{case}: {stderr}");
            assert!(
                stderr.starts_with(&format!("error: {}: ", path.display())),
                "{case}: {stderr}"
            );
            assert!(!marker.exists(), "{case}: the command must not run");
            assert_eq!(what_is(&path), before, "{case}: left untouched");
            assert_eq!(Tree::capture(&env.other), others, "{case}");
            assert!(!step.join("ran").exists() && !docs.join("ran").exists());
        }
    }
}

#[test]
fn a_stray_entry_in_attached_fails_a_launch_that_did_not_attach_it() {
    let env = Env::new();
    assert!(env.run("builder", &[], "true").status.success());
    let stray = env.runtime_dir("builder").join("attached/stray");
    plant(&stray, "link", &env.other);
    let out = env.run("builder", &[], "true");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with(&format!("error: {}: ", stray.display())),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_link(&stray).unwrap(), env.other);
}

#[test]
fn a_forged_link_record_can_only_make_us_unlink_a_symlink() {
    let env = Env::new();
    assert!(env.run("builder", &[], "true").status.success());
    std::fs::write(env.other.join("precious.txt"), b"keep me").unwrap();
    let runtime = env.runtime_dir("builder");
    std::os::unix::fs::symlink(&env.other, runtime.join("output")).unwrap();
    // The forged record names `output` (and keeps `project`, which a launch wants as it is: a
    // record that leaves it out makes it someone else's, and the launch fails).
    let forged = serde_json::json!({
        "version": 1,
        "links": [
            {"slot": "output", "target": env.other},
            {"slot": "project", "target": env.project},
        ],
    });
    std::fs::remove_file(runtime.join(".projectfile-links.json")).unwrap();
    std::fs::write(runtime.join(".projectfile-links.json"), forged.to_string()).unwrap();
    let out = env.run("builder", &[], "test ! -e output && echo NO_OUTPUT");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "NO_OUTPUT");
    assert_eq!(
        std::fs::read(env.other.join("precious.txt")).unwrap(),
        b"keep me"
    );
}

#[test]
fn a_damaged_link_record_proves_nothing() {
    let env = Env::new();
    let step = env.folder("step");
    run_and_kill(
        &env,
        "builder",
        &["--output", step.to_str().unwrap()],
        "true",
    );
    let runtime = env.runtime_dir("builder");
    std::fs::remove_file(runtime.join(".projectfile-links.json")).unwrap();
    std::fs::write(runtime.join(".projectfile-links.json"), b"{not json").unwrap();
    let out = env.run("builder", &[], "true");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is damaged"), "{stderr}");
    assert_eq!(std::fs::read_link(runtime.join("output")).unwrap(), step);
}

fn json_receipt(out: &Output) -> serde_json::Value {
    let stdout = text(&out.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    serde_json::from_str(first).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn attached_folders_are_linked_for_the_launch_with_grants_that_follow_the_mode() {
    for (mode, docs_grant) in [("builder", "read_write"), ("run", "read")] {
        let env = Env::new();
        let docs = env.folder("docs");
        let refs = env.folder("refs");
        let out = env.run(
            mode,
            &[
                "--json",
                "--attach",
                &format!("docs={}", docs.display()),
                "--attach-read-only",
                &format!("ref.v2={}", refs.display()),
            ],
            "cat attached/docs/file.txt attached/ref.v2/file.txt",
        );
        assert!(out.status.success(), "{mode}: {}", text(&out.stderr));
        assert!(text(&out.stdout).ends_with("docs\nrefs\n"), "{mode}");
        let receipt = json_receipt(&out);
        let attached = receipt["linked"]["attached"].as_array().unwrap();
        assert_eq!(attached.len(), 2, "{receipt}");
        let runtime = env.runtime_dir(mode);
        assert_eq!(attached[0]["name"], "docs");
        assert_eq!(attached[0]["access"], "follow_mode");
        assert_eq!(attached[0]["grant"], docs_grant, "{mode}");
        assert_eq!(
            attached[0]["link"]["link"],
            runtime.join("attached/docs").to_str().unwrap()
        );
        assert_eq!(attached[0]["link"]["target"], docs.to_str().unwrap());
        assert_eq!(attached[1]["name"], "ref.v2");
        assert_eq!(attached[1]["access"], "read_only");
        assert_eq!(attached[1]["grant"], "read", "{mode}");
        // The launch is over: the attached links are gone, the folders untouched.
        assert_eq!(what_is(&runtime.join("attached")), "nothing", "{mode}");
        assert_eq!(std::fs::read(docs.join("file.txt")).unwrap(), b"docs\n");
    }
}

#[test]
fn hostile_or_clashing_attach_names_are_refused_before_anything_is_made() {
    let long = "a".repeat(65);
    let cases: Vec<Vec<String>> = [
        "", ".", "..", "a/b", "../x", ".hidden", "project", "output", "attached", "Project",
        "OUTPUT", "a b", "é", "a:b", "nul\u{1}", &long,
    ]
    .iter()
    .map(|name| vec!["--attach".to_string(), format!("{name}=DIR")])
    .chain([
        vec![
            "--attach".into(),
            "docs=DIR".into(),
            "--attach".into(),
            "docs=DIR".into(),
        ],
        vec![
            "--attach".into(),
            "docs=DIR".into(),
            "--attach-read-only".into(),
            "Docs=DIR".into(),
        ],
        vec!["--attach".into(), "docs".into()],
        vec!["--attach".into(), "docs=".into()],
        vec!["--attach-read-only".into(), "=DIR".into()],
        vec!["--attach".into(), "docs=/nonexistent/folder".into()],
    ])
    .collect();
    for case in cases {
        let env = Env::new();
        let docs = env.folder("docs");
        let args: Vec<String> = case
            .iter()
            .map(|a| a.replace("DIR", docs.to_str().unwrap()))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let marker = env.other.join("ran");
        let out = env.run("builder", &args, &format!("touch '{}'", marker.display()));
        let stderr = text(&out.stderr);
        // A refused value is bad usage; a folder that is not there, a failure to read it.
        let missing = case.iter().any(|a| a.contains("/nonexistent/"));
        let code = if missing { 1 } else { 2 };
        assert_eq!(out.status.code(), Some(code), "{case:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{case:?}: {stderr}");
        assert!(!marker.exists(), "{case:?}");
        assert!(!env.rt.exists(), "{case:?}: nothing may be made");
        assert!(!env.state.exists(), "{case:?}: nothing may be made");
    }
}

#[test]
fn remove_runtime_removes_attached_links_without_following_them() {
    let env = Env::new();
    let docs = env.folder("docs");
    let step = env.folder("step");
    run_and_kill(
        &env,
        "builder",
        &[
            "--attach",
            &format!("docs={}", docs.display()),
            "--output",
            step.to_str().unwrap(),
        ],
        "true",
    );
    let runtime = env.runtime_dir("builder");
    assert_eq!(
        std::fs::read_link(runtime.join("attached/docs")).unwrap(),
        docs
    );
    let before = (Tree::capture(&docs), Tree::capture(&step));
    let out = env.remove("builder");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!runtime.exists());
    assert_eq!((Tree::capture(&docs), Tree::capture(&step)), before);
    assert_eq!(
        std::fs::read(env.project.join("AGENTS.md")).unwrap(),
        b"real project rules\r\n"
    );
}

/// The sandboxed matrix: what a command may do inside an attached folder, by mode and access.
#[test]
fn attached_folders_under_landlock_follow_the_mode() {
    if !landlock_available() {
        eprintln!("skipped: this kernel has no Landlock ABI >= 3");
        return;
    }
    const SCRIPT: &str = "d=attached/$NAME; \
        cat $d/file.txt >/dev/null && echo READ; \
        echo more >> $d/file.txt && echo WRITE; \
        echo new > $d/created.txt && echo CREATE; \
        mv $d/keep.txt $d/renamed.txt && echo RENAME; \
        rm $d/gone.txt && echo DELETE; \
        mkdir $d/sub && echo MKDIR; \
        true";
    for (mode, flag, writable) in [
        ("builder", "--attach", true),
        ("run", "--attach", false),
        ("builder", "--attach-read-only", false),
        ("run", "--attach-read-only", false),
    ] {
        let env = Env::new();
        let dir = env.folder("docs");
        std::fs::write(dir.join("keep.txt"), b"keep").unwrap();
        std::fs::write(dir.join("gone.txt"), b"gone").unwrap();
        let before = Tree::capture(&dir);
        let script = SCRIPT.replace("$NAME", "docs");
        let spec = format!("docs={}", dir.display());
        let out = env.run(mode, &["--sandbox", flag, &spec], &script);
        let case = format!("{mode} {flag}");
        assert!(out.status.success(), "{case}: {}", text(&out.stderr));
        let did: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
        let expected: Vec<&str> = if writable {
            vec!["READ", "WRITE", "CREATE", "RENAME", "DELETE", "MKDIR"]
        } else {
            vec!["READ"]
        };
        assert_eq!(did, expected, "{case}");
        if !writable {
            assert_eq!(Tree::capture(&dir), before, "{case}: the folder changed");
        }
    }
}

#[test]
fn a_read_only_attachment_inside_a_writable_grant_is_refused() {
    let env = Env::new();
    std::fs::create_dir(env.project.join("docs")).unwrap();
    let inside = env.project.join("docs");
    let marker = env.other.join("ran");
    let out = env.run(
        "builder",
        &[
            "--sandbox",
            "--allow-unsandboxed",
            "--attach-read-only",
            &format!("docs={}", inside.display()),
        ],
        &format!("touch '{}'", marker.display()),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {}: ", inside.display())),
        "{stderr}"
    );
    assert!(!marker.exists());
}

#[test]
fn one_uuid_in_any_case_is_one_runtime() {
    let env = Env::new();
    let upper = "product-6F9619FF-8B86-D011-B42D-00CF4FC964FF";
    let lower = "product-6f9619ff-8b86-d011-b42d-00cf4fc964ff";
    let mixed = "product-6f9619FF-8b86-D011-b42d-00CF4fc964ff:Main";
    let first = env.run_as(
        "codex",
        upper,
        "builder",
        &["--json"],
        "echo one > note.txt",
    );
    assert!(first.status.success(), "{}", text(&first.stderr));
    let second = env.run_as("codex", lower, "builder", &["--json"], "cat note.txt");
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert!(text(&second.stdout).ends_with("one\n"));
    let a = json_receipt(&first);
    let b = json_receipt(&second);
    assert_eq!(a["linked"]["runtime"], b["linked"]["runtime"]);
    assert_eq!(a["linked"]["identity"]["session"], lower);
    let sessions: Vec<_> = std::fs::read_dir(env.rt.join("u1/p1")).unwrap().collect();
    assert_eq!(sessions.len(), 1);
    // The conversation key keeps its case and is a conversation of its own.
    let keyed = env.run_as("codex", mixed, "builder", &["--json"], "true");
    assert!(keyed.status.success(), "{}", text(&keyed.stderr));
    assert_eq!(
        json_receipt(&keyed)["linked"]["identity"]["session"],
        format!("{lower}:Main")
    );
    // remove-runtime finds the runtime under any spelling too.
    let out = Command::new(env!("CARGO_BIN_EXE_projectfile"))
        .args(["remove-runtime", "--runtime-root"])
        .arg(&env.rt)
        .args(["--user", "u1", "--project-id", "p1", "--session-id", upper])
        .args(["--provider", "codex", "--mode", "builder", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_receipt(&out)["removed"], true);
}

#[test]
fn a_private_cli_home_is_given_through_the_providers_variable() {
    for (provider, var) in [
        ("codex", "CODEX_HOME"),
        ("claude", "CLAUDE_CONFIG_DIR"),
        ("pi", "PI_CODING_AGENT_DIR"),
        ("cursor", "CURSOR_CONFIG_DIR"),
        ("opencode", "XDG_DATA_HOME"),
        ("copilot", "COPILOT_HOME"),
    ] {
        let env = Env::new();
        let out = env.run_as(
            provider,
            "work:project:42",
            "run",
            &["--json", "--private-cli-home", "--cli-version", "2.1.300"],
            &format!("echo \"${var}\"; touch \"${var}/auth.json\""),
        );
        assert!(out.status.success(), "{provider}: {}", text(&out.stderr));
        let receipt = json_receipt(&out);
        let runtime = std::path::PathBuf::from(receipt["linked"]["runtime"].as_str().unwrap());
        let home = runtime.join(".cli-home");
        assert_eq!(receipt["env"][var], home.to_str().unwrap(), "{provider}");
        assert_eq!(
            receipt["linked"]["identity"]["cli_home"],
            home.to_str().unwrap()
        );
        assert!(text(&out.stdout).ends_with(&format!("{}\n", home.display())));
        let meta = std::fs::metadata(&home).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o700
        );
        assert!(
            home.join("auth.json").exists(),
            "{provider}: the home persists"
        );
    }
}

#[test]
fn a_private_cli_home_is_refused_for_a_cli_without_one() {
    for provider in ["muse", "agy"] {
        let env = Env::new();
        let marker = env.other.join("ran");
        let out = env.run_as(
            provider,
            "work:project:42",
            "builder",
            &["--private-cli-home"],
            &format!("touch '{}'", marker.display()),
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{provider}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: {provider}: ")),
            "{provider}: {stderr}"
        );
        assert!(stderr.contains("private CLI home"), "{provider}: {stderr}");
        assert!(!marker.exists());
        assert!(!env.rt.exists(), "{provider}: nothing may be made");
    }
}

fn can_resume(from: &serde_json::Value, to: &serde_json::Value) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_projectfile"))
        .args(["runtime", "can-resume", "--json", "--from"])
        .arg(from.to_string())
        .arg("--to")
        .arg(to.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    json_receipt(&out)
}

fn failed_rules(verdict: &serde_json::Value) -> Vec<String> {
    verdict["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| c["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn resume_boundaries_through_the_cli() {
    let env = Env::new();
    let launch = |mode: &str, extra: &[&str]| {
        let out = env.run(mode, &[&["--json"], extra].concat(), "true");
        assert!(out.status.success(), "{}", text(&out.stderr));
        json_receipt(&out)
    };
    let builder = launch("builder", &[]);
    let identity = builder["linked"]["identity"].clone();
    assert_eq!(identity["runtime"], builder["linked"]["runtime"]);
    assert_eq!(identity["working_dir"], builder["linked"]["runtime"]);
    // The same launch again: a whole run receipt is accepted as an identity.
    let again = launch("builder", &[]);
    let verdict = can_resume(&builder, &again);
    assert_eq!(verdict["resume"], true, "{verdict}");
    // `runtime identity` predicts the identity from the flags alone.
    let predicted = Command::new(env!("CARGO_BIN_EXE_projectfile"))
        .args(["runtime", "identity", "--json", "--runtime-root"])
        .arg(&env.rt)
        .args([
            "--user",
            "u1",
            "--project-id",
            "p1",
            "--session-id",
            "work:project:42",
        ])
        .args(["--provider", "codex", "--mode", "builder"])
        .output()
        .unwrap();
    assert!(predicted.status.success(), "{}", text(&predicted.stderr));
    let predicted = json_receipt(&predicted);
    assert_eq!(predicted["schema"], "projectfile.runtime_identity.v1");
    assert_eq!(can_resume(&identity, &predicted)["resume"], true);
    // A different mode.
    let run = launch("run", &[]);
    assert_eq!(
        failed_rules(&can_resume(&identity, &run)),
        ["same_mode", "same_runtime", "same_working_directory"]
    );
    // An old shared-folder native session.
    let mut shared = identity.clone();
    shared["runtime"] = serde_json::Value::Null;
    shared["working_dir"] = serde_json::json!(env.project);
    assert_eq!(
        failed_rules(&can_resume(&shared, &identity)),
        ["private_runtime", "same_runtime", "same_working_directory"]
    );
    // Codex's project-directory override pointing elsewhere.
    let mut overridden = identity.clone();
    overridden["working_dir"] = serde_json::json!(env.project);
    assert_eq!(
        failed_rules(&can_resume(&overridden, &identity)),
        ["same_working_directory"]
    );
    // A private CLI home holds the session; a launch without it cannot resume it.
    let home = launch("builder", &["--private-cli-home"]);
    assert_eq!(
        failed_rules(&can_resume(&home, &identity)),
        ["same_cli_home"]
    );
    // Another provider or conversation.
    let mut claude = identity.clone();
    claude["provider"] = serde_json::json!("claude");
    assert_eq!(
        failed_rules(&can_resume(&claude, &identity)),
        ["same_provider"]
    );
    let mut other = identity.clone();
    other["session"] = serde_json::json!("work:project:43");
    assert_eq!(
        failed_rules(&can_resume(&other, &identity)),
        ["same_conversation"]
    );
    // A UUID spelled in upper case is the same conversation.
    let mut upper = identity.clone();
    let mut lower = identity.clone();
    upper["session"] = serde_json::json!("product-6F9619FF-8B86-D011-B42D-00CF4FC964FF");
    lower["session"] = serde_json::json!("product-6f9619ff-8b86-d011-b42d-00cf4fc964ff");
    assert_eq!(can_resume(&upper, &lower)["resume"], true);
}

#[test]
fn can_resume_refuses_what_is_not_an_identity() {
    for bad in [
        "not json",
        "{}",
        r#"{"user":"u"}"#,
        "@/nonexistent/identity.json",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_projectfile"))
            .args(["runtime", "can-resume", "--from", bad, "--to", bad])
            .output()
            .unwrap();
        // Inline text that is not an identity is bad usage; a file that cannot be read fails.
        let code = if bad.starts_with('@') { 1 } else { 2 };
        assert_eq!(out.status.code(), Some(code), "{bad}");
        assert!(text(&out.stderr).starts_with("error: "), "{bad}");
    }
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
fn a_sandboxed_cli_reads_the_private_files_its_environment_and_arguments_name() {
    if !landlock_available() {
        eprintln!("skipped: this kernel has no Landlock ABI >= 3");
        return;
    }
    let env = Env::new();
    let servers = env.other.join("servers.json");
    std::fs::write(&servers, r#"{"docs": {"command": "docs-server"}}"#).unwrap();
    let run = |provider: &str, session: &str, script: &str| {
        Command::new(env!("CARGO_BIN_EXE_projectfile"))
            .env("PROJECTFILE_STATE_DIR", &env.state)
            .args(["run", "--provider", provider, "--workspace"])
            .arg(&env.project)
            .args(["--prompt", "private session text", "--mcp-config"])
            .arg(&servers)
            .arg("--runtime-root")
            .arg(&env.rt)
            .args([
                "--user",
                "u1",
                "--project-id",
                "p1",
                "--session-id",
                session,
            ])
            .args(["--mode", "run", "--sandbox", "--", "sh", "-c", script, "sh"])
            .output()
            .unwrap()
    };
    // opencode: the configuration `OPENCODE_CONFIG` names, and the session file it reads through
    // `PROJECTFILE_OPENCODE_INSTRUCTIONS`.
    let out = run(
        "opencode",
        "work:project:44",
        r#"cat "$OPENCODE_CONFIG" "$PROJECTFILE_OPENCODE_INSTRUCTIONS""#,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("docs-server") && stdout.contains("private session text"));
    // Copilot: the folder `COPILOT_CUSTOM_INSTRUCTIONS_DIRS` names, and `@<file>` after its flag.
    let out = run(
        "copilot",
        "work:project:45",
        r#"test "$1" = --additional-mcp-config && cat "${2#@}" "$COPILOT_CUSTOM_INSTRUCTIONS_DIRS"/session.instructions.md"#,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("docs-server") && stdout.contains("private session text"));
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
