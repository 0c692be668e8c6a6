//! Black-box tests of the one undo rule (docs/promises.md, promises 2, 11, 12, 13, 15 and 16): a
//! release or a refresh removes or replaces only what is provably ours; whatever is not (lines
//! the user wrote inside our block, a generated file the user edited, a folder the user put in
//! place of our skill) stays where the user put it and is reported; and the project's own prior
//! content survives the loss of the state directory.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use support::{Sandbox, me, tree};

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn read(root: &Path, rel: &str) -> Option<Vec<u8>> {
    std::fs::read(root.join(rel)).ok()
}

fn acquire(sb: &Sandbox, provider: &str, prompt: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "acquire",
        "--provider",
        provider,
        "--workspace",
        sb.ws.to_str().unwrap(),
        "--prompt",
        prompt,
    ];
    args.extend_from_slice(extra);
    let holder = me();
    args.extend_from_slice(&["--holder-pid", &holder]);
    sb.json(&args)
}

fn release(sb: &Sandbox, receipt: &Value) -> Value {
    sb.json(&["release", "--token", receipt["token"].as_str().unwrap()])
}

/// The `kept` record for `path`, which must say where the bytes are now.
fn kept_record<'a>(receipt: &'a Value, path: &str) -> &'a Value {
    receipt["kept"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["path"] == path)
        .unwrap_or_else(|| panic!("{path} is not reported in kept: {receipt}"))
}

const BEGIN: &str = "<!-- BEGIN agentworks-session-instructions";

#[test]
fn a_line_written_inside_our_block_survives_the_release_in_place() {
    let sb = Sandbox::new();
    write(&sb.ws, "AGENTS.md", b"# project\n");
    let a = acquire(&sb, "codex", "Our text.\nSecond line.", &[]);
    let with_block = String::from_utf8(read(&sb.ws, "AGENTS.md").unwrap()).unwrap();
    let edited = with_block.replace("Our text.\n", "Our text.\nmy own note\n");
    assert_ne!(edited, with_block);
    write(&sb.ws, "AGENTS.md", edited.as_bytes());

    let end = release(&sb, &a);
    assert_eq!(
        read(&sb.ws, "AGENTS.md").unwrap(),
        b"# project\nmy own note\n",
        "the user's line stays, just before where the block was; our lines go"
    );
    let kept = kept_record(&end, "AGENTS.md");
    assert_eq!(
        Path::new(kept["kept_at"].as_str().unwrap()),
        sb.ws.join("AGENTS.md"),
        "kept in place"
    );
}

#[test]
fn a_line_written_inside_our_block_survives_a_refresh_and_the_last_release() {
    let sb = Sandbox::new();
    write(&sb.ws, "AGENTS.md", b"# project\n");
    let a = acquire(&sb, "codex", "First session.", &[]);
    let with_block = String::from_utf8(read(&sb.ws, "AGENTS.md").unwrap()).unwrap();
    let edited = with_block.replace("First session.\n", "First session.\nkeep me\n");
    write(&sb.ws, "AGENTS.md", edited.as_bytes());

    let b = acquire(&sb, "codex", "Second session.", &[]);
    let now = String::from_utf8(read(&sb.ws, "AGENTS.md").unwrap()).unwrap();
    assert!(
        now.contains("keep me\n"),
        "the refresh dropped the line: {now}"
    );
    let begin = now.find(BEGIN).unwrap();
    assert!(
        now.find("keep me").unwrap() < begin,
        "the user's line moved out of the block: {now}"
    );
    assert!(now.contains("Second session."), "{now}");
    assert!(!now.contains("First session."), "{now}");
    kept_record(&b, "AGENTS.md");

    release(&sb, &a);
    release(&sb, &b);
    assert_eq!(read(&sb.ws, "AGENTS.md").unwrap(), b"# project\nkeep me\n");
}

#[test]
fn an_edited_generated_file_with_no_prior_stays_in_the_project() {
    let sb = Sandbox::new();
    let config = sb.base.join("cli.json");
    std::fs::write(&config, br#"{"permissions": {"allow": ["Shell(ls)"]}}"#).unwrap();
    let a = acquire(
        &sb,
        "cursor",
        "Cursor session.",
        &["--cli-config", config.to_str().unwrap()],
    );
    let edit = b"{\"permissions\": {\"allow\": [\"Shell(git)\"]}}\n";
    write(&sb.ws, ".cursor/cli.json", edit);

    let end = release(&sb, &a);
    assert_eq!(
        read(&sb.ws, ".cursor/cli.json").as_deref(),
        Some(&edit[..]),
        "the user's edit of a generated file stays where the user put it"
    );
    let kept = kept_record(&end, ".cursor/cli.json");
    assert_eq!(
        std::fs::read(kept["kept_at"].as_str().unwrap()).unwrap(),
        edit
    );
    assert!(
        end["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == ".cursor/cli.json" && f["action"] == "kept"),
        "{end}"
    );
    // Everything else of ours is gone.
    assert!(read(&sb.ws, ".cursor/rules/mlp-system.mdc").is_none());
    assert!(!sb.ws.join(".git").exists());
}

#[test]
fn a_folder_the_user_put_in_place_of_our_skill_stays_untouched() {
    let sb = Sandbox::new();
    let source = sb.base.join("review-src");
    write(&source, "SKILL.md", b"---\nname: review\n---\nours\n");
    let skill = format!("review={}", source.display());
    let a = acquire(&sb, "pi", "Pi session.", &["--skill", &skill]);
    let folder = sb.ws.join(".pi/skills/review");
    assert!(folder.join(".agentworks-managed").exists());
    std::fs::remove_dir_all(&folder).unwrap();
    write(
        &folder,
        "SKILL.md",
        b"---\nname: review\n---\nthe user's own\n",
    );
    write(&folder, "notes/todo.md", b"todo\n");
    let users = tree(&folder);

    let end = release(&sb, &a);
    assert_eq!(
        tree(&folder),
        users,
        "an unmarked folder is not ours to remove"
    );
    let kept = kept_record(&end, ".pi/skills/review");
    assert_eq!(Path::new(kept["kept_at"].as_str().unwrap()), folder);
}

#[test]
fn a_taken_over_skill_folder_survives_the_loss_of_the_state_directory() {
    let sb = Sandbox::new();
    write(
        &sb.ws,
        ".claude/skills/review/SKILL.md",
        b"the project's own\n",
    );
    write(
        &sb.ws,
        ".claude/skills/review/refs/a.md",
        b"\xef\xbb\xbfref\r\n",
    );
    let before = tree(&sb.ws);
    let source = sb.base.join("review-src");
    write(&source, "SKILL.md", b"---\nname: review\n---\nours\n");
    let skill = format!("review={}", source.display());
    let a = acquire(
        &sb,
        "claude",
        "Claude session.",
        &["--skill", &skill, "--cli-version", "2.1.300"],
    );
    assert_eq!(
        read(&sb.ws, ".claude/skills/review/SKILL.md").unwrap(),
        b"---\nname: review\n---\nours\n"
    );
    std::fs::remove_dir_all(&sb.state).unwrap();
    let end = release(&sb, &a);
    assert_eq!(end["released"], false);

    // The next start puts the project's folder back, with no ledger at all.
    let b = acquire(
        &sb,
        "claude",
        "Next session.",
        &["--cli-version", "2.1.300"],
    );
    assert_eq!(
        read(&sb.ws, ".claude/skills/review/SKILL.md").unwrap(),
        b"the project's own\n",
        "{b}"
    );
    release(&sb, &b);
    assert_eq!(tree(&sb.ws), before);
}

#[test]
fn an_owned_files_prior_survives_the_loss_of_the_state_directory() {
    let sb = Sandbox::new();
    write(
        &sb.ws,
        ".cursor/cli.json",
        b"{\"the project's\": \"own\"}\n",
    );
    write(&sb.ws, ".cursor/mcp.json", b"{\"mcpServers\": {}}\n");
    std::fs::set_permissions(
        sb.ws.join(".cursor/cli.json"),
        PermissionsExt::from_mode(0o640),
    )
    .unwrap();
    let before = tree(&sb.ws);
    let config = sb.base.join("cli.json");
    std::fs::write(&config, br#"{"permissions": {"allow": []}}"#).unwrap();
    let servers = sb.base.join("mcp.json");
    std::fs::write(&servers, br#"{"docs": {"command": "docs-mcp"}}"#).unwrap();
    let a = acquire(
        &sb,
        "cursor",
        "Cursor session.",
        &[
            "--cli-config",
            config.to_str().unwrap(),
            "--mcp-config",
            servers.to_str().unwrap(),
        ],
    );
    assert_ne!(
        read(&sb.ws, ".cursor/cli.json").unwrap(),
        b"{\"the project's\": \"own\"}\n"
    );
    std::fs::remove_dir_all(&sb.state).unwrap();
    release(&sb, &a);

    // strip-stale (or any next start) restores the project's files with no ledger at all.
    sb.json(&["strip-stale", "--workspace", sb.ws.to_str().unwrap()]);
    assert_eq!(
        read(&sb.ws, ".cursor/cli.json").unwrap(),
        b"{\"the project's\": \"own\"}\n"
    );
    assert_eq!(
        read(&sb.ws, ".cursor/mcp.json").unwrap(),
        b"{\"mcpServers\": {}}\n"
    );
    // What a lost ledger cannot prove ours (the rule file is proven by its own marker) is gone
    // with it or left; the project's own bytes are all back.
    for (path, node) in &before {
        assert_eq!(tree(&sb.ws).get(path), Some(node), "{path}");
    }
}

#[test]
fn a_folder_the_user_put_in_place_of_our_skill_is_not_refreshed_away() {
    let sb = Sandbox::new();
    let source = sb.base.join("review-src");
    write(&source, "SKILL.md", b"---\nname: review\n---\nours\n");
    let skill = format!("review={}", source.display());
    let a = acquire(&sb, "pi", "First.", &["--skill", &skill]);
    let folder = sb.ws.join(".pi/skills/review");
    std::fs::remove_dir_all(&folder).unwrap();
    write(&folder, "SKILL.md", b"the user's own\n");
    let users = tree(&folder);
    let b = acquire(&sb, "pi", "Second.", &["--skill", &skill]);
    assert_eq!(tree(&folder), users, "a second start does not replace it");
    kept_record(&b, ".pi/skills/review");
    release(&sb, &a);
    release(&sb, &b);
    assert_eq!(tree(&folder), users);
}

#[test]
fn a_users_folder_over_a_taken_over_one_is_set_aside_and_the_projects_comes_back() {
    let sb = Sandbox::new();
    write(
        &sb.ws,
        ".claude/skills/review/SKILL.md",
        b"the project's own\n",
    );
    let before = tree(&sb.ws);
    let source = sb.base.join("review-src");
    write(&source, "SKILL.md", b"ours\n");
    let skill = format!("review={}", source.display());
    let version = ["--skill", &skill, "--cli-version", "2.1.300"];
    let a = acquire(&sb, "claude", "Claude session.", &version);
    let folder = sb.ws.join(".claude/skills/review");
    std::fs::remove_dir_all(&folder).unwrap();
    write(&folder, "SKILL.md", b"the user's replacement\n");
    let end = release(&sb, &a);
    assert_eq!(tree(&sb.ws), before, "the project's own folder is back");
    let kept = kept_record(&end, ".claude/skills/review");
    let kept_at = Path::new(kept["kept_at"].as_str().unwrap());
    assert!(
        kept_at.starts_with(&sb.state),
        "set aside under the state directory"
    );
    assert_eq!(
        std::fs::read(kept_at.join("SKILL.md")).unwrap(),
        b"the user's replacement\n"
    );
}

#[test]
fn an_edited_generated_file_is_not_refreshed_away_by_a_second_session() {
    let sb = Sandbox::new();
    let config = sb.base.join("cli.json");
    std::fs::write(&config, br#"{"permissions": {"allow": []}}"#).unwrap();
    let cli = ["--cli-config", config.to_str().unwrap()];
    let a = acquire(&sb, "cursor", "First.", &cli);
    let edit = b"{\"permissions\": {\"deny\": [\"Shell(rm)\"]}}\n";
    write(&sb.ws, ".cursor/cli.json", edit);
    let b = acquire(&sb, "cursor", "Second.", &cli);
    assert_eq!(read(&sb.ws, ".cursor/cli.json").as_deref(), Some(&edit[..]));
    kept_record(&b, ".cursor/cli.json");
    assert!(
        b["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["path"].as_str().unwrap().ends_with(".cursor/cli.json")),
        "{b}"
    );
    release(&sb, &a);
    release(&sb, &b);
    assert_eq!(read(&sb.ws, ".cursor/cli.json").as_deref(), Some(&edit[..]));
}

#[test]
fn an_edit_over_the_projects_own_config_is_set_aside_and_the_prior_comes_back() {
    let sb = Sandbox::new();
    write(
        &sb.ws,
        ".cursor/cli.json",
        b"{\"the project's\": \"own\"}\n",
    );
    let before = tree(&sb.ws);
    let config = sb.base.join("cli.json");
    std::fs::write(&config, br#"{"permissions": {"allow": []}}"#).unwrap();
    let a = acquire(
        &sb,
        "cursor",
        "Cursor session.",
        &["--cli-config", config.to_str().unwrap()],
    );
    write(&sb.ws, ".cursor/cli.json", b"edited during the session\n");
    let end = release(&sb, &a);
    assert_eq!(tree(&sb.ws), before);
    let kept = kept_record(&end, ".cursor/cli.json");
    assert_eq!(
        std::fs::read(kept["kept_at"].as_str().unwrap()).unwrap(),
        b"edited during the session\n"
    );
}

/// A taken-over file or folder whose parent folder the user deleted during the session comes
/// back with the folders on its way: by the release, and, after the state directory was lost
/// too, by `strip-stale`. The project had those folders; what it kept there is put back.
fn a_taken_over_path_comes_back_when_the_user_deleted_its_folder(
    provider: &str,
    prior: &str,
    deleted: &str,
    lose_state: bool,
) {
    let sb = Sandbox::new();
    write(&sb.ws, prior, b"the project's own\n");
    let before = tree(&sb.ws);
    let source = sb.base.join("review-src");
    write(&source, "SKILL.md", b"---\nname: review\n---\nours\n");
    let skill = format!("review={}", source.display());
    let a = acquire(&sb, provider, "Be brief.", &["--skill", &skill]);
    assert_ne!(read(&sb.ws, prior).unwrap(), b"the project's own\n");
    std::fs::remove_dir_all(sb.ws.join(deleted)).unwrap();
    if lose_state {
        std::fs::remove_dir_all(&sb.state).unwrap();
        release(&sb, &a);
        // Exit 0: nothing is left pending.
        sb.json(&["strip-stale", "--workspace", sb.ws.to_str().unwrap()]);
    } else {
        release(&sb, &a);
    }
    assert_eq!(tree(&sb.ws), before);
}

#[test]
fn a_taken_over_rule_file_comes_back_when_the_user_deleted_its_folder() {
    a_taken_over_path_comes_back_when_the_user_deleted_its_folder(
        "cursor",
        ".cursor/rules/mlp-system.mdc",
        ".cursor/rules",
        false,
    );
}

#[test]
fn a_taken_over_rule_file_comes_back_after_its_folder_and_the_state_directory_were_lost() {
    a_taken_over_path_comes_back_when_the_user_deleted_its_folder(
        "cursor",
        ".cursor/rules/mlp-system.mdc",
        ".cursor",
        true,
    );
}

#[test]
fn a_taken_over_skill_folder_comes_back_when_the_user_deleted_its_parent() {
    a_taken_over_path_comes_back_when_the_user_deleted_its_folder(
        "pi",
        ".pi/skills/review/SKILL.md",
        ".pi/skills",
        false,
    );
}

#[test]
fn a_taken_over_skill_folder_comes_back_after_its_parent_and_the_state_directory_were_lost() {
    a_taken_over_path_comes_back_when_the_user_deleted_its_folder(
        "pi",
        ".pi/skills/review/SKILL.md",
        ".pi",
        true,
    );
}

/// The same with a symlink to a folder outside the workspace put where the deleted folder was:
/// the prior is never moved through it, stays kept, and the release says so.
#[test]
fn a_taken_over_file_never_goes_back_through_a_symlinked_folder() {
    let sb = Sandbox::new();
    write(
        &sb.ws,
        ".cursor/rules/mlp-system.mdc",
        b"the project's own\n",
    );
    let a = acquire(&sb, "cursor", "Be brief.", &[]);
    std::fs::remove_dir_all(sb.ws.join(".cursor/rules")).unwrap();
    let outside = sb.base.join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, sb.ws.join(".cursor/rules")).unwrap();
    let out = sb
        .cmd()
        .args(["release", "--json", "--token", a["token"].as_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "the prior's return is pending");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    let kept = std::fs::read_dir(sb.ws.join(".agentworks-priors"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("mlp-system.mdc").is_file())
        .count();
    assert_eq!(kept, 1, "the project's file is still kept");
}
