//! The README's exit-code table, row by row, against the real binary: 0 success, 1 the operation
//! failed, 2 bad usage (everywhere a provider name is taken, and for the values the command
//! refuses before doing anything), N the command's own status under `run` (128+S for signal S).
//! Every failure prints one `error:` line on stderr and, with `--json`, the error receipt.
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

fn run(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox.cmd().args(args).output().unwrap()
}

/// The error receipt `--json` printed on stdout.
fn error_of(out: &Output) -> Value {
    let value: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(value["schema"], "projectfile.error.v1", "{value}");
    value["error"].clone()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn row_0_success() {
    let sandbox = Sandbox::new();
    assert_eq!(run(&sandbox, &["providers"]).status.code(), Some(0));
    // Releasing an unknown token is success, `"released": false`.
    let out = run(&sandbox, &["release", "--token", "pf1-unknown", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let receipt: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(receipt["released"], false);
    for help in [&["--help"][..], &["--version"], &["acquire", "--help"]] {
        assert_eq!(run(&sandbox, help).status.code(), Some(0), "{help:?}");
    }
}

#[test]
fn row_1_the_operation_failed() {
    let sandbox = Sandbox::new();
    let missing = sandbox.base.join("not-here");
    let out = run(
        &sandbox,
        &["status", "--json", "--workspace", missing.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!("error: {}: ", missing.display())),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(error_of(&out)["path"], missing.to_str().unwrap());

    // A prompt file that cannot be read: kind `io`, with its path.
    let out = run(
        &sandbox,
        &[
            "acquire",
            "--json",
            "--provider",
            "codex",
            "--workspace",
            sandbox.ws.to_str().unwrap(),
            "--prompt-file",
            missing.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let error = error_of(&out);
    assert_eq!(error["kind"], "io");
    assert_eq!(error["path"], missing.to_str().unwrap());
}

#[test]
fn row_2_bad_usage_from_the_parser() {
    let sandbox = Sandbox::new();
    for args in [
        &["frobnicate"][..],
        &["status", "--no-such-flag", "--workspace", "."],
        &["status"],
        &["completions", "tcsh"],
        &["reader", "mode", "--access", "root"],
    ] {
        let out = run(&sandbox, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with("error: "),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty(), "{args:?}: stdout without --json");
        // With --json, the same refusal as an error receipt of kind `usage`.
        let mut with_json = vec!["--json"];
        with_json.extend_from_slice(args);
        let out = run(&sandbox, &with_json);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let error = error_of(&out);
        assert_eq!(error["kind"], "usage", "{args:?}");
        assert!(!error["message"].as_str().unwrap().is_empty());
    }
}

#[test]
fn row_2_an_unknown_provider_everywhere_a_provider_is_taken() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws.to_str().unwrap();
    let runtime_root = sandbox.base.join("rt");
    let rt = runtime_root.to_str().unwrap();
    let unknown = ["--provider", "no-such-cli"];
    let session = [&unknown[..], &["--workspace", ws, "--prompt", "x"]].concat();
    let runtime = [&["--runtime-root", rt][..], &support::RUNTIME_ID].concat();
    let cases: Vec<Vec<&str>> = vec![
        [&["acquire"][..], &session].concat(),
        [&["run"][..], &session, &["--", "true"]].concat(),
        [&["run"][..], &session, &runtime, &["--", "true"]].concat(),
        vec!["resolve", "--workspace", ws, "--as", "no-such-cli"],
        [&["remove-runtime", "--mode", "run"][..], &unknown, &runtime].concat(),
    ];
    for args in cases {
        let out = sandbox.cmd().arg("--json").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let error = error_of(&out);
        assert_eq!(error["kind"], "usage", "{args:?}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("no-such-cli") && message.contains("codex"),
            "{message}"
        );
    }
    // Refused before anything was created.
    assert!(!sandbox.state.exists());
    assert!(!runtime_root.exists());
    assert_eq!(std::fs::read_dir(&sandbox.ws).unwrap().count(), 0);
}

#[test]
fn row_2_values_refused_before_anything_is_done() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws.to_str().unwrap();
    let blank = sandbox.base.join("blank.md");
    std::fs::write(&blank, " \n\t\n").unwrap();
    let outside = sandbox.base.join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    let acquire = ["acquire", "--provider", "codex", "--workspace", ws];
    let run = ["run", "--provider", "codex", "--workspace", ws];
    let (blank, outside) = (blank.to_str().unwrap(), outside.to_str().unwrap());
    let cases: Vec<(Vec<&str>, Option<&str>)> = vec![
        ([&acquire[..], &["--prompt", ""]].concat(), None),
        ([&run[..], &["--prompt", "  ", "--", "true"]].concat(), None),
        (
            [&acquire[..], &["--prompt-file", blank]].concat(),
            Some(blank),
        ),
        (
            vec!["resolve", "--workspace", ws, "--cwd", outside],
            Some(outside),
        ),
    ];
    let rt = sandbox.base.join("rt");
    let rt = rt.to_str().unwrap();
    let linked = |session: &'static str, extra: &[&'static str]| -> Vec<&str> {
        let mut args = run.to_vec();
        args.extend(["--prompt", "x", "--runtime-root", rt, "--user", "u1"]);
        args.extend([
            "--project-id",
            "p1",
            "--mode",
            "run",
            "--session-id",
            session,
        ]);
        args.extend(extra);
        args.extend(["--", "true"]);
        args
    };
    let key = [
        "--runtime-root",
        rt,
        "--user",
        "",
        "--project-id",
        "p1",
        "--session-id",
        "work:project:1",
        "--provider",
        "codex",
        "--mode",
        "run",
    ];
    let mut cases = cases;
    cases.extend([
        (linked("work:project:1", &["--attach", "x"]), None),
        (
            linked("work:project:1", &["--attach-read-only", "=dir"]),
            None,
        ),
        (linked("bogus", &[]), None),
        ([&["runtime", "identity"][..], &key[..]].concat(), None),
        (
            vec!["runtime", "can-resume", "--from", "{not json", "--to", "{}"],
            None,
        ),
    ]);
    for (args, path) in cases {
        let out = sandbox.cmd().arg("--json").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        let error = error_of(&out);
        assert_eq!(error["kind"], "usage", "{args:?}");
        if let Some(path) = path {
            assert_eq!(error["path"], path, "{args:?}");
            assert!(err.starts_with(&format!("error: {path}: ")), "{err}");
        }
    }
    assert!(!sandbox.state.exists(), "nothing was created");
    assert_eq!(std::fs::read_dir(&sandbox.ws).unwrap().count(), 0);
}

#[test]
fn row_n_run_exits_with_the_commands_status() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws.to_str().unwrap();
    let session = [
        "run",
        "--provider",
        "codex",
        "--workspace",
        ws,
        "--prompt",
        "x",
        "--",
    ];
    for (script, code) in [("exit 0", 0), ("exit 7", 7), ("exit 1", 1), ("exit 2", 2)] {
        let out = run(&sandbox, &[&session[..], &["sh", "-c", script]].concat());
        assert_eq!(out.status.code(), Some(code), "{script}: {}", stderr(&out));
    }
    // Killed by a signal S: 128+S.
    let out = run(
        &sandbox,
        &[&session[..], &["sh", "-c", "kill -9 $$"]].concat(),
    );
    assert_eq!(out.status.code(), Some(128 + 9), "{}", stderr(&out));
    let out = run(
        &sandbox,
        &[&session[..], &["sh", "-c", "kill -TERM $$"]].concat(),
    );
    assert_eq!(out.status.code(), Some(128 + 15), "{}", stderr(&out));
    // Every session was released.
    let status = sandbox.json(&["status", "--workspace", ws]);
    assert!(status["leases"].as_array().unwrap().is_empty(), "{status}");
}

/// An identity read from a file (`@FILE`) that is not one is an invalid input naming the file
/// (exit 1, kind `invalid`); an endless one is cut at the input limit instead of read forever.
#[test]
fn row_1_an_identity_file_that_is_not_one() {
    let sandbox = Sandbox::new();
    let bad = sandbox.base.join("identity.json");
    std::fs::write(&bad, "{not json").unwrap();
    for file in [bad.to_str().unwrap(), "/dev/zero"] {
        let from = format!("@{file}");
        let out = sandbox
            .cmd()
            .args([
                "--json",
                "runtime",
                "can-resume",
                "--from",
                &from,
                "--to",
                "{}",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{file}: {}", stderr(&out));
        let error = error_of(&out);
        assert_eq!(error["kind"], "invalid", "{file}");
        assert_eq!(error["path"], file, "{file}");
    }
}

/// A FIFO made in the sandbox's base folder.
fn fifo_in(sandbox: &Sandbox) -> std::path::PathBuf {
    let fifo = sandbox.base.join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    fifo
}

/// An input file that is a FIFO nobody writes to reads as empty once the wait for a writer is
/// over: the command fails as for an empty input instead of hanging in the open.
#[test]
fn an_input_fifo_nobody_writes_to_never_hangs() {
    let sandbox = Sandbox::new();
    let fifo = fifo_in(&sandbox);
    let fifo = fifo.to_str().unwrap();
    let from = format!("@{fifo}");
    let ws = sandbox.ws.to_str().unwrap();
    let cases: [(&[&str], i32); 2] = [
        (&["runtime", "can-resume", "--from", &from, "--to", "{}"], 1),
        (
            &[
                "acquire",
                "--provider",
                "codex",
                "--workspace",
                ws,
                "--prompt-file",
                fifo,
            ],
            2,
        ),
    ];
    for (args, code) in cases {
        let mut child = sandbox
            .cmd()
            .arg("--json")
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{args:?}: hung on the FIFO");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(code), "{args:?}");
    }
}

/// A FIFO whose writer comes a moment after the command started is read to its end.
#[test]
fn an_input_fifo_with_a_late_writer_is_read() {
    let sandbox = Sandbox::new();
    let fifo = fifo_in(&sandbox);
    let writer_fifo = fifo.clone();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        std::fs::write(writer_fifo, "Written late.\n").unwrap();
    });
    let out = sandbox
        .cmd()
        .args(["acquire", "--json", "--provider", "codex", "--workspace"])
        .arg(&sandbox.ws)
        .arg("--prompt-file")
        .arg(&fifo)
        .args(["--holder-pid", &std::process::id().to_string()])
        .output()
        .unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let agents = std::fs::read_to_string(sandbox.ws.join("AGENTS.md")).unwrap();
    assert!(agents.contains("Written late.\n"), "{agents}");
}
