//! Landlock, for real: child shells in Run mode cannot write, truncate, rename, link, create or
//! delete in the project (directly or through `project/`), while they can in their runtime;
//! Builder can write the project; a link into an ungranted folder stays denied. Each test skips
//! with a printed reason when the kernel has no usable Landlock.
#![cfg(all(feature = "landlock", target_os = "linux"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use projectfile_core::reader::Mode;
use projectfile_core::runtime::{Runtime, RuntimeKey, SessionId};
use projectfile_core::sandbox::{
    DEFAULT_MIN_ABI, Enforcement, SandboxPolicy, TARGET_ABI, kernel_abi,
};
use rstest::rstest;

fn landlock_usable() -> bool {
    match kernel_abi() {
        Some(abi) if abi >= DEFAULT_MIN_ABI => true,
        other => {
            eprintln!(
                "skipping: this kernel's Landlock ABI is {other:?}, below the minimum {DEFAULT_MIN_ABI}"
            );
            false
        }
    }
}

struct Env {
    _tmp: tempfile::TempDir,
    runtime: Runtime,
    project: PathBuf,
    outside: PathBuf,
    output: PathBuf,
}

fn env(mode: Mode) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let project = base.join("project");
    let outside = base.join("outside");
    let output = base.join("step-output");
    fs::create_dir_all(project.join("sub")).unwrap();
    fs::create_dir_all(project.join("emptydir")).unwrap();
    fs::write(project.join("a.txt"), "original\n").unwrap();
    fs::write(project.join("sub/b.txt"), "nested\n").unwrap();
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    fs::create_dir(&output).unwrap();
    let key = RuntimeKey::new(
        "reader",
        "crew",
        SessionId::parse("work:project:1").unwrap(),
        "claude",
        mode,
    )
    .unwrap();
    let runtime = Runtime::open(&base.join("runtimes"), key).unwrap();
    runtime.link_project(&project).unwrap();
    // A link into a folder no grant covers.
    symlink(&outside, runtime.dir().join("other")).unwrap();
    Env {
        _tmp: tmp,
        runtime,
        project,
        outside,
        output,
    }
}

fn policy(e: &Env, mode: Mode) -> SandboxPolicy {
    SandboxPolicy::new(mode, e.runtime.dir(), &e.project)
}

/// Runs `script` under `sh -c` in the sandbox; returns (success, stderr).
fn sh(e: &Env, policy: &SandboxPolicy, script: &str) -> (bool, String) {
    let prepared = policy.prepare().unwrap();
    let expected = if kernel_abi().unwrap() >= TARGET_ABI {
        Enforcement::Full
    } else {
        Enforcement::Partial
    };
    assert_eq!(prepared.status().enforcement, expected);
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(script)
        .env("P", &e.project)
        .env("R", e.runtime.dir())
        .env("O", &e.outside)
        .env("OUT", &e.output)
        .env("LC_ALL", "C")
        .current_dir(e.runtime.dir());
    let status = prepared.install(&mut command);
    assert_eq!(status.enforcement, expected);
    let out = command.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
                out.push((path, Vec::new()));
            } else {
                out.push((path.clone(), fs::read(&path).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

const MUTATIONS: &[(&str, &str)] = &[
    ("create", r#"echo x > "$P/new.txt""#),
    ("append", r#"echo x >> "$P/a.txt""#),
    ("open-truncate", r#": > "$P/a.txt""#),
    ("truncate", r#"truncate -s 0 "$P/a.txt""#),
    ("rename", r#"mv "$P/a.txt" "$P/renamed.txt""#),
    ("rename-out", r#"mv "$P/a.txt" "$R/stolen.txt""#),
    (
        "rename-in",
        r#"echo x > "$R/here.txt" && mv "$R/here.txt" "$P/here.txt""#,
    ),
    ("hard-link", r#"ln "$P/a.txt" "$P/hard""#),
    ("symlink", r#"ln -s a.txt "$P/sym""#),
    ("delete", r#"rm "$P/a.txt""#),
    ("delete-nested", r#"rm "$P/sub/b.txt""#),
    ("mkdir", r#"mkdir "$P/newdir""#),
    ("rmdir", r#"rmdir "$P/emptydir""#),
    ("create-via-link", r#"echo x > "$R/project/new.txt""#),
    ("truncate-via-link", r#"truncate -s 0 "$R/project/a.txt""#),
    ("delete-via-link", r#"rm "$R/project/a.txt""#),
    (
        "rename-via-link",
        r#"mv "$R/project/a.txt" "$R/project/b.txt""#,
    ),
    ("symlink-via-link", r#"ln -s /etc/passwd "$R/project/sym""#),
];

#[rstest]
fn run_mode_cannot_change_the_project(
    #[values(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)] index: usize,
) {
    if !landlock_usable() {
        return;
    }
    let (name, script) = MUTATIONS[index];
    let e = env(Mode::Run);
    let before = snapshot(&e.project);
    let (ok, stderr) = sh(&e, &policy(&e, Mode::Run), script);
    assert!(!ok, "{name}: a Run session changed the project");
    assert!(
        stderr.contains("Permission denied") || stderr.contains("Operation not permitted"),
        "{name}: {stderr}"
    );
    assert_eq!(snapshot(&e.project), before, "{name}");
}

#[rstest]
fn builder_mode_can_change_the_project(
    #[values(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)] index: usize,
) {
    if !landlock_usable() {
        return;
    }
    let (name, script) = MUTATIONS[index];
    let e = env(Mode::Builder);
    let before = snapshot(&e.project);
    let (ok, stderr) = sh(&e, &policy(&e, Mode::Builder), script);
    assert!(ok, "{name}: {stderr}");
    assert_ne!(snapshot(&e.project), before, "{name}");
}

#[rstest]
fn both_modes_read_the_project_and_write_their_runtime(
    #[values(Mode::Builder, Mode::Run)] mode: Mode,
) {
    if !landlock_usable() {
        return;
    }
    let e = env(mode);
    let script = r#"
        set -e
        cat "$P/a.txt" "$R/project/a.txt" "$R/project/sub/b.txt" > /dev/null
        ls "$P" "$R/project/sub" > /dev/null
        echo x > "$R/w.txt"
        echo y >> "$R/w.txt"
        mv "$R/w.txt" "$R/w2.txt"
        ln -s w2.txt "$R/lnk"
        ln "$R/w2.txt" "$R/hard"
        : > "$R/w2.txt"
        truncate -s 0 "$R/hard"
        mkdir -p "$R/.claude/skills/s" && echo skill > "$R/.claude/skills/s/SKILL.md"
        rm -r "$R/.claude" "$R/w2.txt" "$R/lnk" "$R/hard"
        cp "$P/a.txt" "$R/copy.txt"
        echo discard > /dev/null
    "#;
    let (ok, stderr) = sh(&e, &policy(&e, mode), script);
    assert!(ok, "{mode}: {stderr}");
    assert_eq!(
        fs::read_to_string(e.runtime.dir().join("copy.txt")).unwrap(),
        "original\n"
    );
}

#[rstest]
#[case::read_through_link(r#"cat "$R/other/secret.txt""#)]
#[case::list_through_link(r#"ls "$R/other""#)]
#[case::write_through_link(r#"echo x > "$R/other/new.txt""#)]
#[case::read_directly(r#"cat "$O/secret.txt""#)]
#[case::write_tmp(r#"echo x > "$(dirname "$O")/tmp-probe""#)]
#[case::write_slash_tmp(
    r#"echo x > /tmp/projectfile-landlock-probe-$$ && rm -f /tmp/projectfile-landlock-probe-$$"#
)]
#[case::write_etc(r#"echo x >> /etc/hostname"#)]
fn a_link_into_an_ungranted_folder_stays_denied(
    #[case] script: &str,
    #[values(Mode::Builder, Mode::Run)] mode: Mode,
) {
    if !landlock_usable() {
        return;
    }
    let e = env(mode);
    let before = snapshot(&e.outside);
    let (ok, stderr) = sh(&e, &policy(&e, mode), script);
    assert!(!ok, "{mode} {script}: allowed");
    assert!(
        stderr.contains("Permission denied") || stderr.contains("Operation not permitted"),
        "{stderr}"
    );
    assert_eq!(snapshot(&e.outside), before);
    assert!(!e.outside.parent().unwrap().join("tmp-probe").exists());
}

#[test]
fn a_granted_output_folder_is_writable_through_its_link_in_run_mode() {
    if !landlock_usable() {
        return;
    }
    let e = env(Mode::Run);
    e.runtime.link_output(&e.output).unwrap();
    let policy = policy(&e, Mode::Run).with_read_write(&e.output);
    let (ok, stderr) = sh(&e, &policy, r#"echo deliverable > "$R/output/report.md""#);
    assert!(ok, "{stderr}");
    assert_eq!(
        fs::read_to_string(e.output.join("report.md")).unwrap(),
        "deliverable\n"
    );
    // The project is still read-only in the same policy.
    let (ok, _) = sh(&e, &policy, r#"echo x > "$R/project/new.txt""#);
    assert!(!ok);
}

#[test]
fn the_parent_stays_unsandboxed() {
    if !landlock_usable() {
        return;
    }
    let e = env(Mode::Run);
    let (ok, _) = sh(&e, &policy(&e, Mode::Run), r#"echo x > "$P/new.txt""#);
    assert!(!ok);
    // This process (the host, `projectfile run`) can still write anywhere it could before.
    fs::write(e.project.join("new.txt"), "host").unwrap();
    fs::write(e.outside.join("host.txt"), "host").unwrap();
}

#[test]
fn the_status_records_the_kernel_and_the_grants() {
    if !landlock_usable() {
        return;
    }
    let e = env(Mode::Run);
    let prepared = policy(&e, Mode::Run).prepare().unwrap();
    let status = prepared.status();
    assert_eq!(status.kernel_abi, kernel_abi());
    assert_eq!(status.mode, Mode::Run);
    assert!(!status.unsandboxed_allowed);
    assert!(status.grants.iter().any(|g| g.path == e.project));
    eprintln!(
        "landlock status: {}",
        serde_json::to_string(status).unwrap()
    );
}

#[test]
fn a_prepared_sandbox_can_launch_twice() {
    if !landlock_usable() {
        return;
    }
    let e = env(Mode::Run);
    let prepared = policy(&e, Mode::Run).prepare().unwrap();
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(r#"echo x > "$P/new.txt""#)
        .env("P", &e.project);
    prepared.install(&mut command);
    for _ in 0..2 {
        assert!(!command.status().unwrap().success());
    }
    assert!(!e.project.join("new.txt").exists());
}

#[test]
fn every_mutation_is_exercised() {
    assert_eq!(MUTATIONS.len(), 18, "update the #[values] lists above");
}
