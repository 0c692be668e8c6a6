//! Black-box tests of skills through the `projectfile` binary (Codex: `.agents/skills/`): a
//! project's own same-named folder taken over and put back across three sessions and a SIGKILLed
//! holder, a user file dropped into a managed folder, a hostile skill name, and a state directory
//! deleted between start and end.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Output};
use support::{Sandbox, tree};

const FOLDER: &str = ".agents/skills/review";

/// A sandbox with a skill source folder beside the workspace.
struct Env {
    sandbox: Sandbox,
    skill: PathBuf,
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
        let skill = sandbox.base.join("review-src");
        std::fs::create_dir_all(skill.join("scripts")).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            b"---\nname: review\ndescription: ours\n---\nReview.\n",
        )
        .unwrap();
        std::fs::write(skill.join("scripts/check.sh"), b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            skill.join("scripts/check.sh"),
            PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        Env { sandbox, skill }
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).arg("--json").output().unwrap()
    }

    fn acquire_skill(&self, name: &str, holder: u32) -> Output {
        let skill = format!("{name}={}", self.skill.display());
        let pid = holder.to_string();
        self.run(&[
            "acquire",
            "--provider",
            "codex",
            "--workspace",
            self.ws.to_str().unwrap(),
            "--prompt",
            "Use the review skill.",
            "--skill",
            &skill,
            "--holder-pid",
            &pid,
        ])
    }

    fn acquire(&self, holder: u32) -> Value {
        let out = self.acquire_skill("review", holder);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn release(&self, token: &Value) -> Value {
        self.json(&["release", "--token", token.as_str().unwrap()])
    }

    fn status(&self) -> Value {
        self.json(&["status", "--workspace", self.ws.to_str().unwrap()])
    }

    fn write(&self, rel: &str, bytes: &[u8]) {
        let path = self.ws.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.ws.join(rel)).ok()
    }
}

fn me() -> u32 {
    std::process::id()
}

fn sleeper() -> Child {
    Command::new("sleep").arg("600").spawn().unwrap()
}

fn action(receipt: &Value, path: &str) -> String {
    receipt["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "skill" && f["path"] == path)
        .map(|f| f["action"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

#[test]
fn the_projects_own_skill_survives_three_sessions_and_a_sigkill() {
    let env = Env::new();
    env.write(
        &format!("{FOLDER}/SKILL.md"),
        b"---\nname: review\n---\nthe project's own\n",
    );
    env.write(&format!("{FOLDER}/refs/guide.md"), b"\xef\xbb\xbfguide\r\n");
    std::fs::set_permissions(
        env.ws.join(FOLDER).join("refs"),
        PermissionsExt::from_mode(0o750),
    )
    .unwrap();
    std::os::unix::fs::symlink("refs/guide.md", env.ws.join(FOLDER).join("guide")).unwrap();
    env.write(".agents/skills/lint/SKILL.md", b"differently named\n");
    env.write("AGENTS.md", b"# project\n");
    let before = tree(&env.ws);

    let mut holder_a = sleeper();
    let a = env.acquire(holder_a.id());
    assert_eq!(action(&a, FOLDER), "taken_over");
    let marker = env.read(&format!("{FOLDER}/.agentworks-managed")).unwrap();
    assert!(String::from_utf8_lossy(&marker).contains("namespace agentworks"));
    assert_eq!(
        env.read(&format!("{FOLDER}/scripts/check.sh")).unwrap(),
        b"#!/bin/sh\n"
    );
    let status = env.status();
    let taken = &status["taken_over"][0];
    assert_eq!(taken["path"], FOLDER);
    assert_eq!(taken["state"], "stashed");
    let stash = PathBuf::from(taken["stash"].as_str().unwrap());
    assert!(
        stash.starts_with(env.ws.join(".agentworks-priors")),
        "kept inside the workspace: {stash:?}"
    );
    assert_eq!(
        std::fs::read(stash.join("SKILL.md")).unwrap(),
        b"---\nname: review\n---\nthe project's own\n"
    );
    let human = env
        .cmd()
        .args(["status", "--workspace"])
        .arg(&env.ws)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&human.stdout).contains("taken over .agents/skills/review"));

    let mut holder_b = sleeper();
    let b = env.acquire(holder_b.id());
    let c = env.acquire(me());
    holder_b.kill().unwrap(); // SIGKILL
    holder_b.wait().unwrap();
    let d = env.acquire(me());
    assert!(
        d["stale_cleaned"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["token"] == b["token"]),
        "{d}"
    );
    assert_eq!(
        env.read(".agents/skills/lint/SKILL.md").unwrap(),
        b"differently named\n"
    );
    env.release(&a["token"]);
    env.release(&c["token"]);
    assert!(
        env.read(&format!("{FOLDER}/.agentworks-managed")).is_some(),
        "still held by d"
    );
    let end = env.release(&d["token"]);
    assert!(end["released"].as_bool().unwrap());
    assert_eq!(
        tree(&env.ws),
        before,
        "the project's own files came back; nothing of ours stays"
    );
    let status = env.status();
    assert!(status["leases"].as_array().unwrap().is_empty());
    assert!(status["taken_over"].as_array().unwrap().is_empty());
    let _ = holder_a.kill();
    let _ = holder_a.wait();
}

#[test]
fn a_file_dropped_into_a_managed_skill_folder_is_kept_and_reported() {
    let env = Env::new();
    let before = tree(&env.ws);
    let a = env.acquire(me());
    assert_eq!(action(&a, FOLDER), "created");
    env.write(&format!("{FOLDER}/notes.md"), b"my notes\n");
    let b = env.acquire(me());
    assert!(
        b["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["path"].as_str().unwrap().ends_with("notes.md")),
        "{b}"
    );
    assert_eq!(
        env.read(&format!("{FOLDER}/notes.md")).unwrap(),
        b"my notes\n"
    );
    env.release(&a["token"]);
    let end = env.release(&b["token"]);
    assert_eq!(tree(&env.ws), before);
    let kept = end["kept"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["path"] == format!("{FOLDER}/notes.md"))
        .unwrap_or_else(|| panic!("not reported: {end}"));
    assert_eq!(
        std::fs::read(kept["kept_at"].as_str().unwrap()).unwrap(),
        b"my notes\n"
    );
    let status = env.status();
    assert!(
        !status["kept"].as_array().unwrap().is_empty(),
        "status lists kept bytes"
    );
}

#[test]
fn a_hostile_skill_name_is_refused_and_nothing_is_written() {
    let env = Env::new();
    env.write("AGENTS.md", b"mine\n");
    let before = tree(&env.ws);
    for name in ["../../etc", "/etc", "a/b", ".."] {
        let out = env.acquire_skill(name, me());
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: skill name "), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["error"]["kind"], "invalid");
        assert_eq!(tree(&env.ws), before, "{name}");
        assert!(!env.base.join("etc").exists());
    }
    let status = env.status();
    assert!(status["leases"].as_array().unwrap().is_empty());
}

#[test]
fn a_state_dir_deleted_between_start_and_end() {
    // Our leftover, proven by its marker and named by the workspace's record of what sessions
    // made, goes at the next start, which builds its own.
    let env = Env::new();
    env.write("AGENTS.md", b"# project\n");
    let before = tree(&env.ws);
    let a = env.acquire(me());
    std::fs::remove_dir_all(&env.state).unwrap();
    assert!(!env.release(&a["token"])["released"].as_bool().unwrap());
    let b = env.acquire(me());
    let actions: Vec<&str> = b["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == FOLDER)
        .map(|f| f["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["removed", "created"], "{b}");
    env.release(&b["token"]);
    assert_eq!(tree(&env.ws), before, "nothing of ours stays behind");

    // A leftover the user changed cannot be proven ours: it is left exactly as it was.
    let env = Env::new();
    let a = env.acquire(me());
    std::fs::remove_dir_all(&env.state).unwrap();
    env.release(&a["token"]);
    env.write(
        &format!("{FOLDER}/SKILL.md"),
        b"edited by the user after the state was lost\n",
    );
    let leftover = tree(&env.ws.join(".agents"));
    let b = env.acquire(me());
    assert_eq!(action(&b, FOLDER), "taken_over");
    env.release(&b["token"]);
    assert_eq!(
        tree(&env.ws.join(".agents")),
        leftover,
        "unprovable content is left in place"
    );
}
