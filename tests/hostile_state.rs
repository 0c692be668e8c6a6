//! Black-box tests of the state directory as a trust boundary (docs/threat-model.md): a symlink
//! planted at any level under it is never followed, a path read back from the ledger is never
//! trusted, and a release that could not undo everything says so (exit 3, `pending`), with the
//! next start finishing the job.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use support::{Sandbox, me, tree};

fn run(sb: &Sandbox, args: &[&str]) -> (Output, Value) {
    let out = sb.cmd().args(args).arg("--json").output().unwrap();
    let value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, value)
}

fn acquire(sb: &Sandbox, provider: &str, extra: &[&str]) -> (Output, Value) {
    let ws = sb.ws.to_str().unwrap().to_string();
    let holder = me();
    let mut args = vec![
        "acquire",
        "--provider",
        provider,
        "--workspace",
        &ws,
        "--prompt",
        "Session text.",
        "--holder-pid",
        &holder,
    ];
    args.extend_from_slice(extra);
    run(sb, &args)
}

fn acquired(sb: &Sandbox, provider: &str, extra: &[&str]) -> Value {
    let (out, value) = acquire(sb, provider, extra);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    value
}

fn release(sb: &Sandbox, receipt: &Value) -> (Output, Value) {
    run(
        sb,
        &["release", "--token", receipt["token"].as_str().unwrap()],
    )
}

/// The one workspace directory under `<state>/workspaces/`.
fn key_dir(sb: &Sandbox) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(sb.state.join("workspaces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.remove(0)
}

/// A folder outside everything, with files a careless walk would remove.
fn victim(sb: &Sandbox) -> PathBuf {
    let victim = sb.base.join("victim");
    std::fs::create_dir_all(victim.join("pf1-0000000000000000-00000000000000000000000000000000"))
        .unwrap();
    std::fs::write(victim.join("precious.txt"), b"do not touch\n").unwrap();
    std::fs::write(victim.join("lock"), b"not a lock\n").unwrap();
    victim
}

fn replace_with_link(path: &Path, target: &Path) {
    if path.exists() {
        std::fs::remove_dir_all(path).unwrap();
    }
    std::os::unix::fs::symlink(target, path).unwrap();
}

fn assert_refused(out: &Output, what: &str) {
    assert_eq!(out.status.code(), Some(1), "{what}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: "), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
}

#[test]
fn a_release_that_cannot_take_the_block_out_exits_3_and_the_next_start_finishes() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), b"mine\n").unwrap();
    let a = acquired(&sb, "codex", &[]);
    // The file gains a second name: replacing it would split it from that name.
    std::fs::hard_link(sb.ws.join("AGENTS.md"), sb.base.join("second-name.md")).unwrap();
    let (out, end) = release(&sb, &a);
    assert_eq!(out.status.code(), Some(3), "{end}");
    assert_eq!(end["released"], true);
    let pending = end["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{end}");
    assert!(pending[0]["path"].as_str().unwrap().ends_with("AGENTS.md"));
    assert!(
        pending[0]["reason"].as_str().unwrap().contains("hard link"),
        "{end}"
    );
    let (_, status) = run(&sb, &["status", "--workspace", sb.ws.to_str().unwrap()]);
    assert_eq!(status["pending"].as_array().unwrap().len(), 1, "{status}");

    // Without --json the exit code is the same and stderr says what is pending.
    std::fs::remove_file(sb.base.join("second-name.md")).unwrap();
    std::fs::hard_link(sb.ws.join("AGENTS.md"), sb.base.join("second-name.md")).unwrap();
    let out = sb
        .cmd()
        .args(["strip-stale", "--workspace"])
        .arg(&sb.ws)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pending: "));

    // Once the second name is gone, the next start finishes the job.
    std::fs::remove_file(sb.base.join("second-name.md")).unwrap();
    let b = acquired(&sb, "codex", &[]);
    let (out, end) = release(&sb, &b);
    assert_eq!(out.status.code(), Some(0), "{end}");
    assert_eq!(std::fs::read(sb.ws.join("AGENTS.md")).unwrap(), b"mine\n");
    let (_, status) = run(&sb, &["status", "--workspace", sb.ws.to_str().unwrap()]);
    assert!(
        status.get("pending").is_none(),
        "absent when none: {status}"
    );
}

#[test]
fn a_run_whose_release_is_deferred_exits_3_and_the_failing_command_status_wins() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), "mine\n").unwrap();
    let second = sb.base.join("second-name.md");
    // The command gives AGENTS.md a second name while the session holds it: the block cannot
    // be removed at release without splitting the file from that name.
    for (command_exit, expected) in [(0, 3), (7, 7)] {
        let script = format!("ln AGENTS.md {} && exit {command_exit}", second.display());
        let out = sb
            .cmd()
            .args(["run", "--provider", "codex", "--workspace"])
            .arg(&sb.ws)
            .args(["--prompt", "Session text.", "--", "sh", "-c", &script])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(expected), "{stderr}");
        if expected == 3 {
            assert!(stderr.contains("pending: "), "{stderr}");
        }
        std::fs::remove_file(&second).unwrap();
    }
    // The next start finishes the job, and the user's bytes are back.
    let b = acquired(&sb, "codex", &[]);
    let (out, end) = release(&sb, &b);
    assert_eq!(out.status.code(), Some(0), "{end}");
    assert_eq!(std::fs::read(sb.ws.join("AGENTS.md")).unwrap(), b"mine\n");
}

#[test]
fn a_symlink_planted_at_sessions_is_never_followed() {
    let sb = Sandbox::new();
    // An old Claude binary takes the session text through a private file under sessions/.
    let old = ["--cli-version", "2.1.100"];
    let a = acquired(&sb, "claude", &old);
    let victim = victim(&sb);
    let before = tree(&victim);
    replace_with_link(&key_dir(&sb).join("sessions"), &victim);
    let (out, _) = release(&sb, &a);
    assert!(out.status.code().is_some_and(|c| c == 0 || c == 3));
    let b = acquired(&sb, "codex", &[]);
    release(&sb, &b);
    assert_eq!(tree(&victim), before, "the link's target was touched");
}

#[test]
fn a_symlink_planted_at_the_workspace_state_dir_is_refused() {
    for level in ["key", "workspaces"] {
        let sb = Sandbox::new();
        let a = acquired(&sb, "codex", &[]);
        release(&sb, &a);
        let victim = victim(&sb);
        let before = tree(&victim);
        let planted = match level {
            "key" => key_dir(&sb),
            _ => sb.state.join("workspaces"),
        };
        replace_with_link(&planted, &victim);
        let (out, _) = acquire(&sb, "codex", &[]);
        assert_refused(&out, level);
        let (out, _) = run(
            &sb,
            &["strip-stale", "--workspace", sb.ws.to_str().unwrap()],
        );
        assert_refused(&out, level);
        assert_eq!(
            tree(&victim),
            before,
            "{level}: the link's target was touched"
        );
        assert!(std::fs::read(sb.ws.join("AGENTS.md")).is_err(), "{level}");
    }
}

#[test]
fn a_symlink_planted_at_kept_leaves_the_undo_pending_and_its_target_alone() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join(".cursor")).unwrap();
    std::fs::write(sb.ws.join(".cursor/cli.json"), b"{\"own\": 1}\n").unwrap();
    let config = sb.base.join("cli.json");
    std::fs::write(&config, br#"{"permissions": {"allow": []}}"#).unwrap();
    let cli = ["--cli-config", config.to_str().unwrap()];
    let a = acquired(&sb, "cursor", &cli);
    std::fs::write(sb.ws.join(".cursor/cli.json"), b"the user's edit\n").unwrap();
    let victim = victim(&sb);
    let before = tree(&victim);
    replace_with_link(&key_dir(&sb).join("kept"), &victim);
    let (out, end) = release(&sb, &a);
    assert_eq!(out.status.code(), Some(3), "{end}");
    assert_eq!(tree(&victim), before, "the link's target was touched");
    assert_eq!(
        std::fs::read(sb.ws.join(".cursor/cli.json")).unwrap(),
        b"the user's edit\n",
        "nothing is lost while the undo waits"
    );
    // With the link gone, strip-stale finishes: the prior comes back, the edit is set aside.
    std::fs::remove_file(key_dir(&sb).join("kept")).unwrap();
    let (out, end) = run(
        &sb,
        &["strip-stale", "--workspace", sb.ws.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{end}");
    assert_eq!(
        std::fs::read(sb.ws.join(".cursor/cli.json")).unwrap(),
        b"{\"own\": 1}\n"
    );
    let kept = &end["kept"][0];
    assert_eq!(
        std::fs::read(kept["kept_at"].as_str().unwrap()).unwrap(),
        b"the user's edit\n"
    );
}

#[test]
fn a_recorded_private_directory_is_never_trusted() {
    let sb = Sandbox::new();
    let a = acquired(&sb, "codex", &[]);
    release(&sb, &a);
    let victim = victim(&sb);
    let before = tree(&victim);
    let token = a["token"].as_str().unwrap();
    let key = &token[4..20];
    // A ledger whose dead lease names the victim as its workspace, and as a private directory.
    let journal = key_dir(&sb).join(projectfile::core::testing::journal::JOURNAL_FILE);
    let read = projectfile::core::testing::journal::read_ledger_json(&journal)
        .unwrap()
        .unwrap();
    let ledger = serde_json::json!({
        "version": 1,
        "workspace": victim,
        "identity": read["identity"],
        "leases": {
            format!("pf1-{key}-{}", "1".repeat(32)): {
                "provider": "codex",
                "holder": {"kind": "process", "pid": 999_999, "start_time": 1, "boot_id": "gone",
                           "pid_ns": 1, "time_ns": 1},
                "workspace": victim,
                "acquired_at": 0,
                "paths": ["AGENTS.md"],
                "namespace": "agentworks",
                "private_dir": victim,
            }
        },
        "entries": {"AGENTS.md": {"kind": "block", "namespaces": ["agentworks"]}},
        "created_dirs": [],
        "kept": [],
    });
    let body = serde_json::to_vec(&ledger).unwrap();
    std::fs::write(&journal, projectfile::core::testing::journal::frame(&body)).unwrap();
    let (out, end) = run(
        &sb,
        &["strip-stale", "--workspace", sb.ws.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{end}");
    assert_eq!(end["stale_cleaned"].as_array().unwrap().len(), 1, "{end}");
    assert_eq!(tree(&victim), before, "a recorded path was trusted");
}

#[test]
fn symlinks_planted_at_paths_are_never_followed() {
    let sb = Sandbox::new();
    let a = acquired(&sb, "codex", &[]);
    release(&sb, &a);
    let victim = victim(&sb);
    let before = tree(&victim);
    // `paths/` (which folder each path named) points at the victim: refused, nothing written.
    replace_with_link(&sb.state.join("paths"), &victim);
    let (out, _) = acquire(&sb, "codex", &[]);
    assert_refused(&out, "paths");
    assert_eq!(
        tree(&victim),
        before,
        "paths: the link's target was touched"
    );
}

/// A ledger under one workspace's key that describes another folder (a record copied or forged
/// in the state directory) is refused, naming it: a release by that key's token never works on
/// the folder the record names.
#[test]
fn a_ledger_that_names_another_folder_than_its_key_is_refused() {
    let sb = Sandbox::new();
    let other = sb.base.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("AGENTS.md"), b"# theirs\n").unwrap();
    let mut holder = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = holder.id().to_string();
    let theirs = sb.json(&[
        "acquire",
        "--provider",
        "codex",
        "--workspace",
        other.to_str().unwrap(),
        "--prompt",
        "Theirs.",
        "--holder-pid",
        &pid,
    ]);
    let ours = acquired(&sb, "codex", &[]);
    let key = |receipt: &Value| receipt["token"].as_str().unwrap()[4..20].to_string();
    let workspaces = sb.state.join("workspaces");
    // Our key's record replaced by the other folder's, whose holder then ends.
    std::fs::copy(
        workspaces.join(key(&theirs)).join("ledger.jsonl"),
        workspaces.join(key(&ours)).join("ledger.jsonl"),
    )
    .unwrap();
    holder.kill().unwrap();
    holder.wait().unwrap();
    let before = tree(&other);
    let (out, value) = release(&sb, &ours);
    assert_refused(&out, "a ledger naming another folder");
    assert_eq!(value["error"]["kind"], "ledger", "{value}");
    let message = value["error"]["message"].as_str().unwrap();
    assert!(message.contains("another folder"), "{message}");
    assert_eq!(tree(&other), before);
}

/// A note under `<state>/paths/` that names no workspace key (damaged, or written by hand) is
/// replaced by the next command through that path, which goes on.
#[test]
fn a_damaged_path_note_is_replaced_and_every_command_goes_on() {
    let sb = Sandbox::new();
    let released = acquired(&sb, "codex", &[]);
    release(&sb, &released);
    let paths = sb.state.join("paths");
    let note = std::fs::read_dir(&paths)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let key = std::fs::read(&note).unwrap();
    for damage in [&b"not-a-key\n"[..], b"", b"../../etc\xff"] {
        std::fs::write(&note, damage).unwrap();
        let ws = sb.ws.to_str().unwrap();
        let (out, _) = run(&sb, &["strip-stale", "--workspace", ws]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(std::fs::read(&note).unwrap(), key);
        std::fs::write(&note, damage).unwrap();
        let receipt = acquired(&sb, "codex", &[]);
        assert_eq!(receipt["warnings"], serde_json::json!([]), "{receipt}");
        release(&sb, &receipt);
    }
}
