//! Black-box tests of git's view of a session: in a git work tree, `git status --porcelain` while a
//! session of any provider runs (with a skill, a command and a subagent where the provider takes
//! them) lists only tracked files a block was written into; `.git/info/exclude` is byte for byte
//! as it was after the last session (or absent when it was); a linked worktree and an exclude
//! file that is a link are left alone, and the session goes on; a `.gitignore` that re-includes
//! paths gets a note.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::process::{Command, Output};
use support::Sandbox;

/// `git` with a fixed identity, or `None` when there is no git here.
fn git(dir: &Path, args: &[&str]) -> Option<Output> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .output()
        .ok()
}

fn git_ok(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args).unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A repository with a committed AGENTS.md at the workspace, or `None` without git.
fn repo(sb: &Sandbox) -> Option<()> {
    git(&sb.ws, &["init", "-q"]).filter(|o| o.status.success())?;
    std::fs::write(sb.ws.join("AGENTS.md"), b"# rules\n").unwrap();
    git_ok(&sb.ws, &["add", "AGENTS.md"]);
    git_ok(&sb.ws, &["commit", "-q", "-m", "init"]);
    Some(())
}

/// A sandbox whose workspace is a repository ([`repo`]), or `None` (said on stderr) without git.
fn git_sandbox() -> Option<Sandbox> {
    let sb = Sandbox::new();
    if repo(&sb).is_none() {
        eprintln!("no git here; not tested");
        return None;
    }
    Some(sb)
}

fn providers(sb: &Sandbox) -> Vec<Value> {
    sb.json(&["providers"])["providers"]
        .as_array()
        .unwrap()
        .clone()
}

/// Inputs for a session of `provider` that create files of every kind it takes.
fn inputs(sb: &Sandbox, provider: &Value) -> Vec<String> {
    let caps = &provider["capabilities"];
    let mut args = Vec::new();
    let skill = sb.base.join("skill");
    if !skill.exists() {
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            b"---\nname: review\ndescription: Reviews.\n---\nReview.\n",
        )
        .unwrap();
        std::fs::write(
            sb.base.join("command.md"),
            b"---\ndescription: Ships.\n---\nShip $ARGUMENTS.\n",
        )
        .unwrap();
        std::fs::write(
            sb.base.join("agent.md"),
            b"---\nname: helper\ndescription: Helps.\n---\nHelp.\n",
        )
        .unwrap();
    }
    if caps["skills"] == true {
        args.push("--skill".into());
        args.push(format!("review={}", skill.display()));
    }
    if caps["commands"] == true {
        args.push("--command".into());
        args.push(format!("ship={}", sb.base.join("command.md").display()));
    }
    if caps["subagents"] == true {
        args.push("--agent".into());
        args.push(format!("helper={}", sb.base.join("agent.md").display()));
    }
    args
}

/// Runs a session of `provider` whose command prints `git status --porcelain`; the status, or
/// `None` when the session could not start (a provider refusing one of these inputs).
fn status_during(sb: &Sandbox, provider: &str, inputs: &[String]) -> Option<String> {
    let out = sb
        .cmd()
        .args(["run", "--provider", provider, "--workspace"])
        .arg(&sb.ws)
        .args(["--prompt", "Be brief."])
        .args(inputs)
        // The plan's launch arguments go to `sh`'s positional parameters.
        .args([
            "--",
            "sh",
            "-c",
            "git status --porcelain --untracked-files=all",
            "sh",
        ])
        .output()
        .unwrap();
    if !out.status.success() {
        eprintln!("{provider}: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    Some(String::from_utf8(out.stdout).unwrap())
}

/// `run --provider P --workspace WS --prompt x -- sh -c SCRIPT sh`, which must succeed.
fn run_script(sb: &Sandbox, provider: &str, script: &str) {
    let out = sb
        .cmd()
        .args(["run", "--provider", provider, "--workspace"])
        .arg(&sb.ws)
        .args(["--prompt", "x", "--", "sh", "-c", script, "sh"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn git_sees_only_the_blocks_of_every_providers_session() {
    let Some(sb) = git_sandbox() else {
        return;
    };
    let exclude = sb.ws.join(".git/info/exclude");
    let before = std::fs::read(&exclude).ok();
    for provider in providers(&sb) {
        let name = provider["name"].as_str().unwrap();
        let inputs = inputs(&sb, &provider);
        let status = status_during(&sb, name, &inputs)
            .or_else(|| status_during(&sb, name, &[]))
            .unwrap_or_else(|| panic!("{name}: refused even a plain session"));
        for line in status.lines() {
            // Tracked files with a block of ours (` M`), nothing untracked or added.
            assert!(
                line.starts_with(" M "),
                "{name}: git sees {line:?} during the session:\n{status}"
            );
        }
        assert_eq!(
            git_ok(&sb.ws, &["status", "--porcelain"]),
            "",
            "{name}: after"
        );
        assert_eq!(
            std::fs::read(&exclude).ok(),
            before,
            "{name}: the exclude file"
        );
    }
}

#[test]
fn an_absent_exclude_file_is_absent_again() {
    let Some(sb) = git_sandbox() else {
        return;
    };
    std::fs::remove_dir_all(sb.ws.join(".git/info")).unwrap();
    let status = status_during(&sb, "cursor", &[]).unwrap();
    assert_eq!(status, "", "{status}");
    assert!(!sb.ws.join(".git/info").exists());
    assert_eq!(git_ok(&sb.ws, &["status", "--porcelain"]), "");
}

#[test]
fn the_users_own_excludes_written_during_a_session_stay() {
    let Some(sb) = git_sandbox() else {
        return;
    };
    let exclude = sb.ws.join(".git/info/exclude");
    run_script(&sb, "cursor", "echo '*.tmp' >> .git/info/exclude");
    let after = std::fs::read_to_string(&exclude).unwrap();
    assert!(after.ends_with("*.tmp\n"), "{after}");
    assert!(!after.contains("session-excludes"), "{after}");
}

#[test]
fn a_linked_worktree_or_a_linked_exclude_file_is_left_alone() {
    let Some(sb) = git_sandbox() else {
        return;
    };
    // A linked worktree as the workspace: its `.git` is a file.
    let tree = sb.base.join("tree");
    git_ok(&sb.ws, &["worktree", "add", "-q", tree.to_str().unwrap()]);
    let other = Sandbox::at(&tree, &sb.state);
    let receipt = other
        .cmd()
        .args(["acquire", "--provider", "cursor", "--workspace"])
        .arg(&tree)
        .args(["--prompt", "x", "--holder-pid", &support::me(), "--json"])
        .output()
        .unwrap();
    assert!(receipt.status.success());
    let receipt: Value = serde_json::from_slice(&receipt.stdout).unwrap();
    assert!(
        receipt["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("not hidden from git")),
        "{receipt}"
    );
    other.json(&["release", "--token", receipt["token"].as_str().unwrap()]);
    // An exclude file that is a link: never written through.
    let exclude = sb.ws.join(".git/info/exclude");
    let target = sb.base.join("elsewhere");
    std::fs::write(&target, b"# theirs\n").unwrap();
    std::fs::remove_file(&exclude).unwrap();
    std::os::unix::fs::symlink(&target, &exclude).unwrap();
    assert!(status_during(&sb, "cursor", &[]).is_some());
    assert_eq!(std::fs::read(&target).unwrap(), b"# theirs\n");
    assert!(
        std::fs::symlink_metadata(&exclude)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // An exclude file with a second hard link: never split from it, and the session goes on.
    std::fs::remove_file(&exclude).unwrap();
    std::fs::hard_link(&target, &exclude).unwrap();
    assert!(status_during(&sb, "cursor", &[]).is_some());
    assert_eq!(std::fs::read(&target).unwrap(), b"# theirs\n");
    assert_eq!(std::fs::metadata(&exclude).unwrap().nlink(), 2);
}

/// A skill folder the project already had (tracked) is taken over: while sessions hold ours, git
/// sees the project's tracked file as changed and nothing untracked (our marker included), also
/// while a later session that brings no skill runs beside it; afterwards the tree is clean.
#[test]
fn a_taken_over_skill_folder_shows_git_nothing_untracked() {
    let Some(sb) = git_sandbox() else {
        return;
    };
    let theirs = sb.ws.join(".claude/skills/review");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(theirs.join("SKILL.md"), b"the project's own skill\n").unwrap();
    git_ok(&sb.ws, &["add", "-A"]);
    git_ok(&sb.ws, &["commit", "-q", "-m", "skill"]);
    let skill = sb.base.join("skill");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        b"---\nname: review\ndescription: Reviews.\n---\nReview.\n",
    )
    .unwrap();
    std::fs::write(skill.join("scripts/run.sh"), b"echo run\n").unwrap();
    let acquire = |extra: &[&str]| {
        let mut args = vec![
            "acquire",
            "--provider",
            "claude",
            "--workspace",
            sb.ws.to_str().unwrap(),
            "--prompt",
            "x",
            "--cli-version",
            "2.1.332",
        ];
        args.extend_from_slice(extra);
        let holder = support::me();
        args.extend_from_slice(&["--holder-pid", &holder]);
        sb.json(&args)["token"].as_str().unwrap().to_string()
    };
    let with_skill = acquire(&["--skill", &format!("review={}", skill.display())]);
    let untracked = |when: &str| {
        let status = git_ok(&sb.ws, &["status", "--porcelain", "--untracked-files=all"]);
        for line in status.lines() {
            assert!(
                line.starts_with(" M "),
                "{when}: git sees {line:?}:\n{status}"
            );
        }
    };
    untracked("with the skill's session");
    let plain = acquire(&[]);
    untracked("with a second session beside it");
    sb.json(&["release", "--token", &with_skill]);
    sb.json(&["release", "--token", &plain]);
    assert_eq!(git_ok(&sb.ws, &["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read(theirs.join("SKILL.md")).unwrap(),
        b"the project's own skill\n"
    );
}

/// An exclude file without a final newline: a pattern the user adds after our block while the
/// session runs stays a pattern of its own, and theirs before it too.
#[test]
fn a_pattern_added_after_our_block_stays_its_own_line() {
    let Some(sb) = git_sandbox() else {
        return;
    };
    let exclude = sb.ws.join(".git/info/exclude");
    std::fs::write(&exclude, b"*.log").unwrap();
    std::fs::write(sb.ws.join("a.log"), b"l\n").unwrap();
    std::fs::write(sb.ws.join("secret.env"), b"s\n").unwrap();
    run_script(&sb, "gemini", "echo /secret.env >> .git/info/exclude");
    assert_eq!(std::fs::read(&exclude).unwrap(), b"*.log\n/secret.env\n");
    assert_eq!(git_ok(&sb.ws, &["status", "--porcelain"]), "");
}

/// A workspace in a folder of a larger repository: nothing is written above the workspace, and
/// the receipt says git will see what the session creates.
#[test]
fn a_workspace_inside_a_larger_repository_gets_a_note() {
    let Some(sb) = git_sandbox() else {
        return;
    };
    let sub = sb.ws.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let exclude = sb.ws.join(".git/info/exclude");
    let before = std::fs::read(&exclude).ok();
    let receipt = sb.json(&[
        "acquire",
        "--provider",
        "gemini",
        "--workspace",
        sub.to_str().unwrap(),
        "--prompt",
        "x",
        "--holder-pid",
        &support::me(),
    ]);
    assert!(
        receipt["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("inside a git work tree")),
        "{receipt}"
    );
    assert_eq!(std::fs::read(&exclude).ok(), before);
    sb.json(&["release", "--token", receipt["token"].as_str().unwrap()]);
    assert_eq!(git_ok(&sb.ws, &["status", "--porcelain"]), "");
}

/// The state directory deleted while a session runs in a git work tree: the next command there
/// takes our block out of the exclude file `git init` wrote, as it takes out what the session
/// created, from the record inside the workspace.
#[test]
fn a_lost_state_directory_leaves_no_block_in_the_exclude_file() {
    let Some(sb) = git_sandbox() else {
        return;
    };
    let exclude = sb.ws.join(".git/info/exclude");
    let before = std::fs::read(&exclude).unwrap();
    let state = sb.state.to_str().unwrap().replace('\'', "'\\''");
    run_script(&sb, "cursor", &format!("rm -rf '{state}'"));
    assert!(!sb.state.exists());
    sb.json(&["strip-stale", "--workspace", sb.ws.to_str().unwrap()]);
    assert_eq!(std::fs::read(&exclude).unwrap(), before);
    assert_eq!(
        git_ok(&sb.ws, &["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
}

/// `git clean -fdX` while a session stands in for a project's file deletes the priors folder
/// (ignored) with the project's copy in it: the release cannot put it back, says so naming the
/// file, and leaves nothing of ours there.
#[test]
fn a_prior_deleted_by_git_clean_is_reported_and_nothing_of_ours_stays() {
    let Some(sb) = git_sandbox() else {
        return;
    };
    let ship = sb.ws.join(".claude/commands/ship.md");
    std::fs::create_dir_all(ship.parent().unwrap()).unwrap();
    std::fs::write(&ship, b"the project's own command\n").unwrap();
    std::fs::write(
        sb.base.join("command.md"),
        b"---\ndescription: Ships.\n---\nShip $ARGUMENTS.\n",
    )
    .unwrap();
    let receipt = sb.json(&[
        "acquire",
        "--provider",
        "claude",
        "--workspace",
        sb.ws.to_str().unwrap(),
        "--prompt",
        "x",
        "--cli-version",
        "2.1.332",
        "--command",
        &format!("ship={}", sb.base.join("command.md").display()),
        "--holder-pid",
        &support::me(),
    ]);
    assert_ne!(
        std::fs::read(&ship).unwrap(),
        b"the project's own command\n"
    );
    git_ok(&sb.ws, &["clean", "-q", "-f", "-d", "-X"]);
    let released = sb.json(&["release", "--token", receipt["token"].as_str().unwrap()]);
    let warnings = released["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| {
            w["path"]
                .as_str()
                .unwrap()
                .ends_with(".claude/commands/ship.md")
                && w["message"]
                    .as_str()
                    .unwrap()
                    .contains("cannot be put back")
        }),
        "{released}"
    );
    assert!(!ship.exists());
}

/// A project `.gitignore` that re-includes paths (`!` patterns outrank `.git/info/exclude`) may
/// show git what a session creates: the receipt says so, naming the file; one without a `!`
/// pattern, or one beside nothing the session creates, gets no note.
#[test]
fn a_gitignore_that_re_includes_paths_gets_a_note() {
    for (file, text, noted) in [
        (".gitignore", "*\n!*/\n!*.md\n!.gitignore\n", true),
        (".claude/.gitignore", "!agents/\n", true),
        (".gitignore", "target/\n\\!literal\n", false),
        ("docs/.gitignore", "!*.md\n", false),
    ] {
        let Some(sb) = git_sandbox() else {
            return;
        };
        let path = sb.ws.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        git_ok(&sb.ws, &["add", "-A"]);
        git_ok(&sb.ws, &["commit", "-q", "-m", "ignore"]);
        std::fs::write(sb.base.join("agent.md"), "---\ndescription: R\n---\nR.\n").unwrap();
        let agent = format!("rev={}", sb.base.join("agent.md").display());
        let receipt = sb.acquired("claude", "x", &["--agent", &agent]);
        let note = receipt["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .find(|n| n.contains("re-includes"))
            .map(str::to_string);
        match noted {
            true => assert!(note.is_some_and(|n| n.contains(file)), "{file}: {receipt}"),
            false => assert!(note.is_none(), "{file}: {receipt}"),
        }
        sb.json(&["release", "--token", receipt["token"].as_str().unwrap()]);
        assert_eq!(git_ok(&sb.ws, &["status", "--porcelain"]), "", "{file}");
    }
}
