//! `cargo xtask`'s own command line, black-box: help exits 0, a wrong command exits 2 with a
//! short message and no backtrace (even with `RUST_BACKTRACE=1`), every task has its `--help`, and
//! a task that fails exits 1 with one `error:` line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

const TASKS: [&str; 9] = [
    "ci",
    "conformance",
    "new-provider",
    "tidy",
    "codegen",
    "bench",
    "torture",
    "crash-points",
    "qualify",
];

fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_lists_every_task_and_exits_0() {
    for flag in ["--help", "-h", "help"] {
        let out = xtask(&[flag]);
        assert_eq!(out.status.code(), Some(0), "{flag}: {}", text(&out.stderr));
        let help = text(&out.stdout);
        assert!(help.contains("Usage: cargo xtask <COMMAND>"), "{help}");
        for task in TASKS {
            assert!(
                help.contains(&format!("  {task} ")),
                "{task} missing:\n{help}"
            );
        }
    }
}

#[test]
fn every_task_has_its_help() {
    for task in TASKS {
        let out = xtask(&[task, "--help"]);
        assert_eq!(out.status.code(), Some(0), "{task}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains(&format!("Usage: cargo xtask {task}")),
            "{task}: {}",
            text(&out.stdout)
        );
    }
}

#[test]
fn a_wrong_command_exits_2_with_a_short_message_and_no_backtrace() {
    for args in [
        &["frobnicate"][..],
        &[],
        &["codegen", "--chek"],
        &["bench", "--cycles", "many"],
        &["conformance"],
    ] {
        let out = xtask(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("backtrace"), "{args:?}:\n{stderr}");
        assert!(!stderr.contains("Error: "), "{args:?}:\n{stderr}");
        assert!(stderr.lines().count() <= 30, "{args:?}:\n{stderr}");
    }
    let stderr = text(&xtask(&["frobnicate"]).stderr);
    assert!(
        stderr.starts_with("error: unrecognized subcommand 'frobnicate'"),
        "{stderr}"
    );
}

#[test]
fn a_failing_task_exits_1_with_one_error_line() {
    let out = xtask(&["conformance", "--provider", "no-such-cli"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: no-such-cli: no such provider (known: "),
        "{stderr}"
    );
}
