//! The command line keeps the contract its help and README document: text output ends with a
//! newline, `resolve --cwd` stays inside the workspace, a state directory that is not a directory
//! is refused naming the path as given, empty prompts are refused, `--json` is honoured by every
//! command, `--help` shows the global options apart from each command's own, and the README's
//! demo prints what the README says it prints.
#![cfg(feature = "codex")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::process::Output;
use support::Sandbox;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs the binary with `input` on stdin.
fn with_stdin(sandbox: &Sandbox, args: &[&str], input: &str) -> Output {
    let mut command = sandbox.cmd();
    command.args(args);
    support::output_with_stdin(command, input)
}

/// What the binary prints on stdout for `args`.
fn stdout(sandbox: &Sandbox, args: &[&str]) -> String {
    text(&sandbox.cmd().args(args).output().unwrap().stdout)
}

#[test]
fn resolve_output_ends_with_a_newline_and_counts_in_words() {
    let sandbox = Sandbox::new();
    // No final newline in the file itself.
    std::fs::write(sandbox.ws.join("AGENTS.md"), "Use tabs.").unwrap();
    let ws = sandbox.ws.to_str().unwrap();
    let base = ["resolve", "--workspace", ws, "--no-user", "--no-ancestors"];
    let out = sandbox.cmd().args(base).arg("--render").output().unwrap();
    assert!(out.status.success());
    let rendered = text(&out.stdout);
    assert!(rendered.ends_with("Use tabs.\n"), "{rendered:?}");

    let out = sandbox.cmd().args(base).output().unwrap();
    let summary = text(&out.stdout);
    assert!(summary.ends_with("; 1 directory scanned\n"), "{summary:?}");
    std::fs::create_dir(sandbox.ws.join("sub")).unwrap();
    let out = sandbox.cmd().args(base).output().unwrap();
    assert!(text(&out.stdout).ends_with("; 2 directories scanned\n"));

    // Nothing active: nothing printed, not an empty line.
    std::fs::remove_file(sandbox.ws.join("AGENTS.md")).unwrap();
    let out = sandbox.cmd().args(base).arg("--render").output().unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "{:?}", text(&out.stdout));
}

#[test]
fn resolve_cwd_must_lie_inside_the_workspace() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.ws.join("services/api")).unwrap();
    std::fs::write(sandbox.ws.join("services/api/AGENTS.md"), "api rules\n").unwrap();
    let neighbour = sandbox.base.join("neighbour");
    std::fs::create_dir(&neighbour).unwrap();
    std::fs::write(neighbour.join("AGENTS.md"), "not ours\n").unwrap();
    let ws = sandbox.ws.to_str().unwrap();
    let resolve = |cwd: &str| {
        sandbox
            .cmd()
            .args([
                "resolve",
                "--json",
                "--no-user",
                "--workspace",
                ws,
                "--cwd",
                cwd,
            ])
            .output()
            .unwrap()
    };

    let inside = sandbox.ws.join("services/api");
    let out = resolve(inside.to_str().unwrap());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let receipt: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(receipt.to_string().contains("api rules"), "{receipt}");

    // A symbolic link from outside into the workspace is inside; the receipt names the path under
    // the workspace as given.
    let link = sandbox.base.join("shortcut");
    std::os::unix::fs::symlink(&inside, &link).unwrap();
    let out = resolve(link.to_str().unwrap());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let receipt: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        receipt.to_string().contains("services/api/AGENTS.md"),
        "{receipt}"
    );

    for outside in [
        neighbour.clone(),
        sandbox.ws.join("services/api/../../../neighbour"),
    ] {
        let out = resolve(outside.to_str().unwrap());
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(
            err.starts_with(&format!(
                "error: {}: --cwd is outside the workspace",
                outside.display()
            )),
            "{err}"
        );
        assert!(!text(&out.stdout).contains("not ours"));
    }
    // A working directory that does not exist: the operation fails, naming it.
    let missing = sandbox.ws.join("missing");
    let out = resolve(missing.to_str().unwrap());
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with(&format!("error: {}: ", missing.display())));
}

#[test]
fn a_state_dir_that_is_a_file_is_named_as_given() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws.to_str().unwrap();
    std::fs::write(sandbox.base.join("state-file"), "not a directory\n").unwrap();
    let pid = std::process::id().to_string();
    let commands: [&[&str]; 4] = [
        &[
            "acquire",
            "--provider",
            "codex",
            "--workspace",
            ws,
            "--prompt",
            "x",
            "--holder-pid",
            &pid,
        ],
        &["release", "--token", "pf1-anything"],
        &["status", "--workspace", ws],
        &["strip-stale", "--workspace", ws],
    ];
    for (given, expected) in [
        ("state-file", "error: state-file: not a directory"),
        (
            "state-file/projectfile",
            "error: state-file/projectfile: the state directory cannot be created: state-file is not a directory",
        ),
    ] {
        for args in commands {
            let out = sandbox
                .cmd()
                .current_dir(&sandbox.base)
                .env("PROJECTFILE_STATE_DIR", given)
                .args(args)
                .arg("--json")
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(1), "{given} {args:?}");
            let err = text(&out.stderr);
            assert!(err.starts_with(expected), "{given} {args:?}: {err}");
            assert!(!err.contains("workspaces/"), "a derived path: {err}");
            let receipt: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(receipt["error"]["path"], given);
        }
    }
    assert_eq!(std::fs::read_dir(&sandbox.ws).unwrap().count(), 0);
}

#[test]
fn empty_prompts_are_refused_and_the_help_says_so() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws.to_str().unwrap();
    let acquire = ["acquire", "--provider", "codex", "--workspace", ws];
    for (args, stdin, subject) in [
        (vec!["--prompt", ""], "", "--prompt"),
        (vec!["--prompt", " \n "], "", "--prompt"),
        (vec!["--prompt-file", "-"], "", "-"),
        (vec!["--prompt-file", "-"], "\n\n", "-"),
    ] {
        let out = with_stdin(&sandbox, &[&acquire[..], &args].concat(), stdin);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert_eq!(
            err,
            format!(
                "error: {subject}: the session instructions are empty: pass the text the session should project\n"
            )
        );
    }
    assert!(!sandbox.state.exists());
    assert_eq!(std::fs::read_dir(&sandbox.ws).unwrap().count(), 0);
    let help = stdout(&sandbox, &["acquire", "--help"]);
    let words = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("an empty or blank prompt is refused"),
        "{help}"
    );
}

#[test]
fn reader_commands_honour_json() {
    let sandbox = Sandbox::new();
    let message = "please change the README";
    let wrapped = with_stdin(&sandbox, &["reader", "wrap", "--json"], message);
    assert!(wrapped.status.success());
    let wrapped: Value = serde_json::from_slice(&wrapped.stdout).unwrap();
    assert_eq!(wrapped["schema"], "projectfile.reader_wrap.v1");
    let text_wrapped = wrapped["text"].as_str().unwrap();
    assert!(text_wrapped.ends_with(message) && text_wrapped != message);

    let stripped = with_stdin(&sandbox, &["reader", "strip", "--json"], text_wrapped);
    let stripped: Value = serde_json::from_slice(&stripped.stdout).unwrap();
    assert_eq!(stripped["schema"], "projectfile.reader_strip.v1");
    assert_eq!(stripped["text"], message);
    assert_eq!(stripped["stripped"], true);
    let untouched = with_stdin(&sandbox, &["reader", "strip", "--json"], message);
    let untouched: Value = serde_json::from_slice(&untouched.stdout).unwrap();
    assert_eq!(untouched["stripped"], false);
    assert_eq!(untouched["text"], message);

    let hint = sandbox
        .cmd()
        .args([
            "reader",
            "hint",
            "--kind",
            "shared-channel",
            "--product",
            "workflow",
            "--json",
        ])
        .output()
        .unwrap();
    let hint: Value = serde_json::from_slice(&hint.stdout).unwrap();
    assert_eq!(hint["schema"], "projectfile.reader_hint.v1");
    assert_eq!(hint["notice"]["kind"], "shared_channel");
    assert_eq!(hint["notice"]["product"], "workflow");
    assert!(
        hint["hint"]
            .as_str()
            .unwrap()
            .contains("submit_workflow_suggestion")
    );

    // Without --json: the hint is a line; wrap and strip are byte-exact filters.
    let plain = sandbox.cmd().args(["reader", "hint"]).output().unwrap();
    assert!(text(&plain.stdout).ends_with(".\n"));
    let wrapped = with_stdin(&sandbox, &["reader", "wrap"], message);
    assert_eq!(text(&wrapped.stdout), text_wrapped);
}

#[test]
fn completions_honour_json() {
    let sandbox = Sandbox::new();
    let plain = sandbox
        .cmd()
        .args(["completions", "bash"])
        .output()
        .unwrap();
    let json = sandbox
        .cmd()
        .args(["completions", "bash", "--json"])
        .output()
        .unwrap();
    let receipt: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(receipt["schema"], "projectfile.completions.v1");
    assert_eq!(receipt["shell"], "bash");
    assert_eq!(receipt["script"], text(&plain.stdout));
    // The providers of this build are completed where a provider is taken.
    assert!(text(&plain.stdout).contains("codex"));
}

#[test]
fn help_shows_the_global_options_apart() {
    let sandbox = Sandbox::new();
    for args in [
        &["--help"][..],
        &["acquire", "--help"],
        &["reader", "mode", "--help"],
    ] {
        let help = stdout(&sandbox, args);
        let (own, global) = help
            .split_once("Global options:")
            .unwrap_or_else(|| panic!("{args:?}: no global options heading:\n{help}"));
        for flag in ["--state-dir", "--namespace", "--json", "--verbose"] {
            assert!(
                global.contains(flag),
                "{args:?}: {flag} not under the heading:\n{help}"
            );
            assert!(
                !own.contains(flag),
                "{args:?}: {flag} mixed with the command's own:\n{help}"
            );
        }
    }
    let help = stdout(&sandbox, &["acquire", "--help"]);
    assert!(
        help.lines()
            .any(|l| l.contains("[possible values:") && l.contains("codex")),
        "{help}"
    );
}

#[test]
fn the_readme_demo_prints_what_the_readme_shows() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let command = readme
        .lines()
        .find(|l| l.contains("cargo run --release -- run "))
        .expect("the README's main command");
    let after = &readme[readme.find(command).unwrap()..];
    let shown = after
        .split_once("```text\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("the README shows the demo's output in a text block")
        .0;
    let sandbox = Sandbox::new();
    let demo = sandbox.base.join("demo");
    let script = command
        .replace("cargo run --release --", support::BIN)
        .replace("/tmp/demo", demo.to_str().unwrap());
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .env("PROJECTFILE_STATE_DIR", &sandbox.state)
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}\n{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), shown);
}
