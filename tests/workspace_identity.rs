//! Black-box tests of workspace identity: every path to one folder shares one lock and one
//! ledger (the state key names the folder's device and inode, not the path), and a path whose
//! folder changed since a ledger was written is reported, never taken for that folder.
//!
//! Two paths to one folder are made with a bind mount in a private mount namespace (`unshare
//! --user --map-root-user --mount`, no privileges needed where user namespaces are enabled);
//! where `unshare` cannot make one, that test says so and checks nothing else.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use support::{BIN, Sandbox};

const USER: &[u8] = b"# mine\n";

/// Runs the binary with `args` in a mount namespace where `other` is a bind mount of `ws`.
fn through_bind(sb: &Sandbox, other: &Path, args: &[&str]) -> Output {
    Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c"])
        .arg("mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"")
        .arg("sh")
        .arg(&sb.ws)
        .arg(other)
        .arg(BIN)
        .args(args)
        .env("PROJECTFILE_STATE_DIR", &sb.state)
        .output()
        .unwrap()
}

fn json(out: &Output) -> Value {
    support::succeeded(out)
}

fn acquire_args<'a>(workspace: &'a str, prompt: &'a str, pid: &'a str) -> Vec<&'a str> {
    let args = [
        "acquire",
        "--provider",
        "codex",
        "--workspace",
        workspace,
        "--prompt",
        prompt,
        "--holder-pid",
        pid,
        "--json",
    ];
    args.to_vec()
}

#[test]
fn two_paths_to_one_folder_share_one_ledger_and_one_lock() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    let other = sb.base.join("mounted");
    std::fs::create_dir(&other).unwrap();
    let probe = through_bind(&sb, &other, &["providers"]);
    if !probe.status.success() {
        eprintln!(
            "no bind mount possible here ({}); two paths to one folder not tested",
            String::from_utf8_lossy(&probe.stderr).trim()
        );
        return;
    }
    let pid = std::process::id().to_string();
    let ws = sb.ws.to_str().unwrap();
    let a = sb.json(&acquire_args(ws, "Through the first path.", &pid)[..9]);
    let b = json(&through_bind(
        &sb,
        &other,
        &acquire_args(other.to_str().unwrap(), "Through the second.", &pid),
    ));
    // One state directory, one ledger holding both leases.
    let keys: Vec<_> = std::fs::read_dir(sb.state.join("workspaces"))
        .unwrap()
        .collect();
    assert_eq!(keys.len(), 1, "one folder, one key");
    let status = json(&through_bind(
        &sb,
        &other,
        &["status", "--json", "--workspace", other.to_str().unwrap()],
    ));
    assert_eq!(status["leases"].as_array().unwrap().len(), 2, "{status}");
    // Releasing the first leaves the block the second holds.
    sb.json(&["release", "--token", a["token"].as_str().unwrap()]);
    let text = String::from_utf8(std::fs::read(sb.ws.join("AGENTS.md")).unwrap()).unwrap();
    assert!(text.contains("Through the second."), "{text}");
    sb.json(&["release", "--token", b["token"].as_str().unwrap()]);
    assert_eq!(std::fs::read(sb.ws.join("AGENTS.md")).unwrap(), USER);
}

#[test]
fn a_path_whose_folder_changed_is_reported_and_never_taken_for_the_old_one() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    let pid = std::process::id().to_string();
    let ws = sb.ws.to_str().unwrap().to_string();
    let a = sb.json(&acquire_args(&ws, "Old folder.", &pid)[..9]);
    // The folder is moved away and another one made at its path, with a copy of the file.
    let moved = sb.base.join("moved");
    std::fs::rename(&sb.ws, &moved).unwrap();
    std::fs::create_dir(&sb.ws).unwrap();
    let copy = std::fs::read(moved.join("AGENTS.md")).unwrap();
    std::fs::write(sb.ws.join("AGENTS.md"), &copy).unwrap();

    // The old lease's release never touches the new folder: it finds its own, renamed beside
    // it (its identity checked), and is released there.
    let out = sb
        .cmd()
        .args(["release", "--json", "--token", a["token"].as_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let receipt: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(receipt["released"], true, "{receipt}");
    assert_eq!(std::fs::read(moved.join("AGENTS.md")).unwrap(), USER);
    assert_eq!(std::fs::read(sb.ws.join("AGENTS.md")).unwrap(), copy);

    // A start at the path says it named another folder before.
    let b = sb.json(&acquire_args(&ws, "New folder.", &pid)[..9]);
    assert!(
        b["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["message"]
                .as_str()
                .unwrap()
                .contains("named another folder")),
        "{b}"
    );
    sb.json(&["release", "--token", b["token"].as_str().unwrap()]);
}
