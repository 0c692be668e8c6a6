//! Standard fixture workspaces and a snapshot of one provider's plan and receipts over each, so
//! every provider's `tests/snapshots.rs` is a few lines:
//!
//! ```text
//! for (name, build) in projectfile_conformance::fixtures::standard() {
//!     let value = projectfile_conformance::fixtures::snapshot(&subject, build);
//!     insta::assert_json_snapshot!(name, value, { ".acquire.holder" => "[holder]" });
//! }
//! ```
//!
//! [`snapshot`] also proves, for each fixture, that the workspace is back byte for byte after the
//! release, and it replaces everything that changes from run to run (the temporary directory, the
//! lease token, the workspace key) inside strings, so only the holder needs an insta redaction.

use crate::tree::{Node, Tree};
use crate::{Fixture, Subject};
use projectfile_core::projector::AcquireReceipt;
use projectfile_core::projector::dry_run::DRY_RUN_TOKEN;
use projectfile_core::testing::ledger::workspace_key;

/// Builds a fixture workspace by writing the user's files into it.
pub type Builder = fn(&Fixture);

/// The prompt every snapshot uses.
pub const PROMPT: &str = "Session instructions: answer in French.";

fn empty(_: &Fixture) {}

fn own_agents_md(fx: &Fixture) {
    fx.write("AGENTS.md", b"# Project rules\n\nUse tabs.\n");
}

fn own_claude_md(fx: &Fixture) {
    fx.write("CLAUDE.md", b"# Claude rules\n\nRun the tests.\n");
}

fn own_cursor(fx: &Fixture) {
    fx.write(
        ".cursor/rules/house.mdc",
        b"---\nalwaysApply: true\n---\nHouse style.\n",
    );
    fx.write_mode(
        ".cursor/mcp.json",
        b"{\"mcpServers\": {\"own\": {\"command\": \"own\"}}}\n",
        0o640,
    );
    fx.write(".cursor/cli.json", b"{\"permissions\": {\"allow\": []}}\n");
    fx.write(".cursor/hooks.json", b"{\"version\": 1, \"hooks\": {}}\n");
}

fn own_pi(fx: &Fixture) {
    fx.write(".pi/SYSTEM.md", b"Pi system prompt of the project.\n");
    fx.write(".pi/APPEND_SYSTEM.md", b"Project append text.\n");
    fx.write(".pi/settings.json", b"{}\n");
}

fn own_agents_dir(fx: &Fixture) {
    fx.write(".agents/hooks.json", b"{\"project\": {\"Stop\": []}}\n");
    fx.write(".agents/skills/lint/SKILL.md", b"---\nname: lint\n---\n");
}

fn git_present(fx: &Fixture) {
    fx.write(".git/HEAD", b"ref: refs/heads/main\n");
    fx.write("README.md", b"A project under git.\n");
}

fn agents_override(fx: &Fixture) {
    fx.write("AGENTS.md", b"# Base rules\n");
    fx.write("AGENTS.override.md", b"# Override rules\n");
}

/// The standard fixtures, by snapshot name: an empty workspace (no `.git`); the project's own
/// `AGENTS.md`; `CLAUDE.md`; `.cursor/`; `.pi/`; `.agents/`; a `.git`; `AGENTS.override.md`.
pub fn standard() -> Vec<(&'static str, Builder)> {
    vec![
        ("empty", empty as Builder),
        ("own_agents_md", own_agents_md),
        ("own_claude_md", own_claude_md),
        ("own_cursor", own_cursor),
        ("own_pi", own_pi),
        ("own_agents_dir", own_agents_dir),
        ("git_present", git_present),
        ("agents_override", agents_override),
    ]
}

/// `tree` with the random id of each prior's folder in the priors folder replaced by the name
/// of what it keeps (`.agentworks-priors/[mcp.json]/mcp.json`), so snapshots are stable.
fn named_priors(tree: Tree) -> Tree {
    let top = format!(
        "{}/",
        projectfile_core::testing::priors::dir_name(&projectfile_core::Namespace::default())
    );
    let mut names = std::collections::BTreeMap::new();
    for path in tree.paths() {
        if let Some((id, name)) = path.strip_prefix(&top).and_then(|r| r.split_once('/'))
            && name != projectfile_core::testing::priors::MANIFEST
            && !name.contains('/')
        {
            names.insert(id.to_string(), format!("[{name}]"));
        }
    }
    let renamed = tree.0.into_iter().map(|(path, node)| {
        let Some(rest) = path.strip_prefix(&top) else {
            return (path, node);
        };
        let (id, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let id = names.get(id).cloned().unwrap_or_else(|| id.to_string());
        let sep = if tail.is_empty() { "" } else { "/" };
        (format!("{top}{id}{sep}{tail}"), node)
    });
    Tree(renamed.collect())
}

/// What changed between two trees, by path.
fn diff(before: &Tree, after: &Tree) -> serde_json::Value {
    let mut added = Vec::new();
    let mut changed = Vec::new();
    let mut removed = Vec::new();
    for (path, node) in &after.0 {
        match before.0.get(path) {
            None => added.push(describe(path, node)),
            Some(old) if old != node => changed.push(describe(path, node)),
            Some(_) => {}
        }
    }
    for (path, node) in &before.0 {
        if !after.0.contains_key(path) {
            removed.push(describe(path, node));
        }
    }
    serde_json::json!({ "added": added, "changed": changed, "removed": removed })
}

fn describe(path: &str, node: &Node) -> String {
    match node {
        Node::Dir { .. } => format!("{path}/"),
        Node::File { mode, .. } if mode & 0o111 != 0 => format!("{path} (executable)"),
        _ => path.to_string(),
    }
}

/// Replaces run-specific text inside every string of `value`.
fn normalise(value: &mut serde_json::Value, replacements: &[(String, &str)]) {
    match value {
        serde_json::Value::String(text) => {
            for (from, to) in replacements {
                if text.contains(from.as_str()) {
                    *text = text.replace(from.as_str(), to);
                }
            }
        }
        serde_json::Value::Array(items) => {
            items.iter_mut().for_each(|v| normalise(v, replacements))
        }
        serde_json::Value::Object(map) => map.values_mut().for_each(|v| normalise(v, replacements)),
        _ => {}
    }
}

/// Builds the fixture, plans, acquires and releases one session with every input the subject's
/// capabilities accept ([`Subject::full_session`] with [`PROMPT`]), asserts the workspace is back
/// exactly as built, and returns `{fixture, plan, acquire, during, release}` as JSON with the
/// temporary directory, token and workspace key replaced by `[tmp]`, `[token]` and `[key]`.
pub fn snapshot(subject: &Subject, build: Builder) -> serde_json::Value {
    snapshot_session(subject, build, subject.full_session(PROMPT))
}

/// [`snapshot`] with the session given (say, with a provider option set).
pub fn snapshot_session(
    subject: &Subject,
    build: Builder,
    session: projectfile_core::SessionRequest,
) -> serde_json::Value {
    let fx = Fixture::new();
    build(&fx);
    let before = Tree::capture(&fx.workspace);
    let plan = fx.plan_session(subject, &session);
    let dry_run = fx
        .dry_run_session(subject, session.clone())
        .unwrap_or_else(|e| panic!("{}: dry run failed: {e}", subject.name()));
    assert_eq!(
        Tree::capture(&fx.workspace),
        before,
        "{}: a dry run wrote",
        subject.name()
    );
    let acquire = fx
        .acquire_session(subject, session)
        .unwrap_or_else(|e| panic!("{}: acquire failed: {e}", subject.name()));
    assert_told_what_happened(&dry_run, &acquire);
    let during = named_priors(Tree::capture(&fx.workspace));
    let release = fx.projector.release(&acquire.token).expect("release");
    assert!(release.released);
    assert_eq!(
        Tree::capture(&fx.workspace),
        before,
        "{}: the workspace is not back after the release",
        subject.name()
    );
    fx.assert_no_ledger();
    let mut value = serde_json::json!({
        "fixture": before.paths().collect::<Vec<_>>(),
        "plan": plan,
        "dry_run": dry_run,
        "acquire": acquire,
        "during": diff(&before, &during),
        "release": release,
    });
    // The same holder as the acquire's, which each provider's snapshot redacts.
    value["dry_run"]["holder"] = serde_json::json!("[holder]");
    // The token holds the key: replace it first.
    let replacements = [
        (acquire.token.clone(), "[token]"),
        (format!("sessions/{DRY_RUN_TOKEN}"), "sessions/[token]"),
        (workspace_key(&acquire.workspace), "[key]"),
        (fx.base.display().to_string(), "[tmp]"),
    ];
    normalise(&mut value, &replacements);
    value
}

/// A dry run told exactly what the acquire then did: the same paths (private files under the
/// token's folder), kinds, actions and order, and the same launch arguments and environment.
fn assert_told_what_happened(dry: &AcquireReceipt, real: &AcquireReceipt) {
    let ours = format!("sessions/{}/", real.token);
    let theirs = format!("sessions/{DRY_RUN_TOKEN}/");
    let told = |r: &AcquireReceipt| -> Vec<(String, String, String)> {
        r.files
            .iter()
            .map(|f| {
                let path = f.path.replace(&theirs, &ours);
                (path, f.kind.to_string(), f.action.to_string())
            })
            .collect()
    };
    let who = &real.provider;
    assert_eq!(
        told(dry),
        told(real),
        "{who}: the dry run told another story"
    );
    let args = |r: &AcquireReceipt| -> Vec<String> {
        r.launch_args
            .iter()
            .map(|a| a.replace(&theirs, &ours))
            .collect()
    };
    assert_eq!(args(dry), args(real), "{who}: other launch arguments");
    let env = |r: &AcquireReceipt| -> Vec<(String, String)> {
        r.env
            .iter()
            .map(|(k, v)| {
                let dir = |t: &str| format!("sessions/{t}");
                (k.clone(), v.replace(&dir(DRY_RUN_TOKEN), &dir(&real.token)))
            })
            .collect()
    };
    assert_eq!(env(dry), env(real), "{who}: another environment");
    assert!(dry.dry_run && !real.dry_run);
}
