//! The command line's polish, black-box: every command's help has examples, completion scripts
//! for bash, zsh and fish, and `-v` logging each step on stderr while `--json` stdout stays one
//! object.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::process::{Command, Output};

fn projectfile(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_projectfile"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_command_has_examples_in_its_help() {
    for command in [
        "providers",
        "acquire",
        "release",
        "run",
        "status",
        "strip-stale",
        "resolve",
        "completions",
    ] {
        let out = projectfile(&[command, "--help"]);
        assert!(out.status.success(), "{command} --help");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("Example"),
            "{command} --help has no example:\n{help}"
        );
        assert!(
            help.contains(&format!("projectfile {command}")),
            "{command} --help shows no use of itself:\n{help}"
        );
    }
}

/// Each command's arguments are built only when clap reaches that command; its help still opens
/// with the summary the top-level help lists for it (not its arguments struct's doc comment),
/// and lists its own options beside the global ones.
#[test]
fn each_commands_help_opens_with_its_summary_and_lists_its_options() {
    let top = projectfile(&["--help"]);
    let top = String::from_utf8_lossy(&top.stdout).into_owned();
    for (path, own_option) in [
        (&["acquire"][..], "--holder-pid"),
        (&["release"][..], "--token"),
        (&["run"][..], "--runtime-root"),
        (&["status"][..], "--workspace"),
        (&["strip-stale"][..], "--workspace"),
        (&["resolve"][..], "--max-depth"),
        (&["remove-runtime"][..], "--project-id"),
        (&["completions"][..], "<SHELL>"),
        (&["runtime", "identity"][..], "--private-cli-home"),
        (&["runtime", "can-resume"][..], "--from"),
    ] {
        let mut args = path.to_vec();
        args.push("--help");
        let out = projectfile(&args);
        assert!(out.status.success(), "{args:?}");
        let help = String::from_utf8_lossy(&out.stdout);
        let first = help.lines().next().unwrap_or_default();
        assert!(
            first.len() > 12 && !first.starts_with('`') && !first.starts_with("Commands that"),
            "{args:?}: the help opens with {first:?}, not the command's summary"
        );
        if path.len() == 1 {
            let listed = top
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{} ", path[0])))
                .expect("every command is listed in --help");
            let summary = listed.trim_start()[path[0].len()..].trim();
            assert!(
                first.starts_with(summary.trim_end_matches('.').split(' ').next().unwrap()),
                "{args:?}: opens with {first:?}, top-level help says {summary:?}"
            );
        }
        for option in [own_option, "--state-dir", "--json"] {
            assert!(help.contains(option), "{args:?}: {option} missing:\n{help}");
        }
    }
    let script = projectfile(&["completions", "bash"]);
    let script = String::from_utf8_lossy(&script.stdout);
    for flag in [
        "--holder-pid",
        "--runtime-root",
        "--max-depth",
        "--private-cli-home",
    ] {
        assert!(script.contains(flag), "bash completion lacks {flag}");
    }
}

#[test]
fn completion_scripts_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F _projectfile"),
        ("zsh", "#compdef projectfile"),
        ("fish", "complete -c projectfile"),
    ] {
        let out = projectfile(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains(marker), "{shell}: no {marker:?}");
        assert!(script.contains("strip-stale"), "{shell}: commands missing");
        assert!(script.contains("verbose"), "{shell}: flags missing");
    }
    assert_eq!(projectfile(&["completions", "tcsh"]).status.code(), Some(2));
}

#[cfg(feature = "codex")]
#[test]
fn verbose_logs_each_step_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let state = dir.path().join("state");
    let pid = std::process::id().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_projectfile"))
        .env("PROJECTFILE_STATE_DIR", &state)
        .args([
            "-v",
            "--json",
            "acquire",
            "--provider",
            "codex",
            "--prompt",
            "x",
        ])
        .args(["--holder-pid", &pid, "--workspace"])
        .arg(&ws)
        .output()
        .unwrap();
    assert!(out.status.success());
    let receipt: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    for step in [
        "] state: ",
        "] acquire: provider codex",
        "] lock: took and released ",
        "] stale: nothing stale to clean",
        "] plan: session text in the block of AGENTS.md",
        "] write: created block AGENTS.md",
        "] delivery: delivered",
        "] lease: ",
    ] {
        assert!(log.contains(step), "missing {step:?} in:\n{log}");
    }
    assert!(
        log.lines().all(|l| l.starts_with("projectfile: [")),
        "{log}"
    );
    let token = receipt["token"].as_str().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_projectfile"))
        .env("PROJECTFILE_STATE_DIR", &state)
        .args(["release", "--verbose", "--token", token])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("] write: removed block AGENTS.md"), "{log}");
    assert!(log.contains(&format!("] lease: {token} released")), "{log}");
}
