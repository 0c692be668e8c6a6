//! Checks for what a session brings besides its text and skills, each run for every provider
//! that declares it: MCP servers merged into the project's own JSON file (the project's entries
//! stay, its exact bytes come back, a clash or a user's edit is handled by the undo rule, a lost
//! state directory loses nothing), bad MCP input refused with nothing written, subagents and
//! commands projected like skills (take-over of a same-named file and exact restore, even with
//! the state directory lost), and dry runs that change nothing at all.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use projectfile_core::holder::Holder;
use projectfile_core::projector::AcquireRequest;
use projectfile_core::{
    Capabilities, HooksFormat, HooksInput, MergedJsonProjection, NamedFile, ProviderExt,
    SessionRequest,
};

use crate::{Fixture, HolderProcess, Subject, Tree};
use projectfile_core::mcp::SERVERS_KEY;
use projectfile_core::patterns::HOOKS_KEY;

/// Says on stderr that a check found nothing to check (the registry selects these checks by the
/// provider's capabilities and plan, so this is a safety net).
fn skip(subject: &Subject, check: &str, why: &str) {
    eprintln!("{}: {check} skipped: {why}", subject.name());
}

/// The subagent [`crate::full_session`] brings when the provider takes subagents.
pub fn session_agent() -> NamedFile {
    NamedFile {
        name: "reviewer".into(),
        content: "---\nname: reviewer\ndescription: Reviews the change for bugs\n---\nReview the diff; list bugs only.\n".into(),
    }
}

/// The command [`crate::full_session`] brings when the provider takes commands.
pub fn session_command() -> NamedFile {
    NamedFile {
        name: "ship".into(),
        content: "---\ndescription: Ship the change\n---\nRun the release checklist.\n".into(),
    }
}

/// The merged JSON files the provider plans for its full session (the MCP route of Cursor, agy).
fn merged_files(subject: &Subject) -> Vec<MergedJsonProjection> {
    let fx = Fixture::new();
    fx.plan_session(subject, &subject.full_session("merge"))
        .merged_json
}

/// The project's own file for a merged JSON path: under each key merged into it, one entry of its
/// own; odd spacing, another top-level key, CRLF and no final newline, so only a byte-exact
/// restore passes.
fn project_file(keys: &[&str]) -> Vec<u8> {
    let mut text = String::from("{ ");
    for key in keys {
        text.push_str(&format!(
            "\"{key}\" : {{ \"projects-own\": {{\"command\": \"own-server\"}} }},\r\n  "
        ));
    }
    text.push_str("\"other\": [1, 2] }");
    text.into_bytes()
}

/// Each path the merged projections name once, with every key merged into it.
fn files_and_keys(merged: &[MergedJsonProjection]) -> Vec<(&str, Vec<&str>)> {
    let mut files: Vec<(&str, Vec<&str>)> = Vec::new();
    for m in merged {
        match files.iter_mut().find(|(path, _)| *path == m.path.as_str()) {
            Some((_, keys)) => keys.push(m.key.as_str()),
            None => files.push((m.path.as_str(), vec![m.key.as_str()])),
        }
    }
    files
}

/// The provider's merged JSON files and a fixture holding the project's own file at each, or
/// `None` (the check skipped, saying so) when the provider merges none.
fn with_project_files(
    subject: &Subject,
    check: &str,
) -> Option<(Vec<MergedJsonProjection>, Fixture)> {
    let merged = merged_files(subject);
    if merged.is_empty() {
        skip(subject, check, "the plan merges no JSON file");
        return None;
    }
    let fx = Fixture::new();
    for (path, keys) in files_and_keys(&merged) {
        fx.write(path, &project_file(&keys));
    }
    Some((merged, fx))
}

/// The JSON object in a workspace file.
fn json_at(fx: &Fixture, path: &str) -> serde_json::Value {
    let bytes = fx.read(path).unwrap_or_default();
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{path} is not JSON: {e}"))
}

/// Merged JSON: while sessions run the file holds the project's entries and the session's (and
/// the project's other keys); the last release gives the project's exact bytes back; with no
/// project file, nothing is left.
pub fn merged_json_keeps_the_projects_entries(subject: &Subject) {
    let merged = merged_files(subject);
    if merged.is_empty() {
        skip(
            subject,
            "merged_json_keeps_the_projects_entries",
            "the plan merges no JSON file",
        );
        return;
    }
    for with_project_file in [true, false] {
        let fx = Fixture::new();
        for (path, keys) in files_and_keys(&merged) {
            if with_project_file {
                fx.write(path, &project_file(&keys));
            }
        }
        let before = Tree::capture(&fx.workspace);
        let a = fx
            .acquire_session(subject, subject.full_session("a"))
            .unwrap();
        let b = fx
            .acquire_session(subject, subject.full_session("b"))
            .unwrap();
        for m in &merged {
            let now = json_at(&fx, m.path.as_str());
            let entries = now[&m.key]
                .as_object()
                .expect("the merged key holds an object");
            for name in m.entries.keys() {
                assert!(
                    entries.contains_key(name),
                    "{}: the session's {name} is missing",
                    m.path
                );
            }
            if with_project_file {
                assert!(
                    entries.contains_key("projects-own"),
                    "{}: the project's entry is gone",
                    m.path
                );
                assert_eq!(
                    now["other"],
                    serde_json::json!([1, 2]),
                    "{}: the project's other key is gone",
                    m.path
                );
            }
        }
        assert!(fx.release(&a.token));
        assert!(fx.release(&b.token));
        assert_eq!(
            Tree::capture(&fx.workspace),
            before,
            "the project's bytes did not come back"
        );
        fx.assert_no_ledger();
    }
}

/// Merged JSON: a name the project and the session both define is refused, naming it, and
/// nothing is written; with `--mcp-mode replace` (where the provider honours it) the file holds
/// the session's entries alone, and the project's bytes still come back.
pub fn merged_json_clash_is_refused(subject: &Subject) {
    let Some((merged, fx)) = with_project_files(subject, "merged_json_clash_is_refused") else {
        return;
    };
    let mut session = subject.full_session("clash");
    let clashing: serde_json::Value = serde_json::json!({"projects-own": {"command": "ours"}});
    // The clash comes in by the input the merged file takes: MCP servers, or hook events.
    let merges = |key: &str| merged.iter().any(|m| m.key == key);
    let clash_key = if merges(SERVERS_KEY) {
        session.mcp_servers = Some(clashing.clone());
        SERVERS_KEY
    } else if merges(HOOKS_KEY)
        && let Some(hooks) = session.hooks.as_mut()
    {
        hooks.config = serde_json::json!({ HOOKS_KEY: clashing.clone() });
        HOOKS_KEY
    } else {
        skip(
            subject,
            "merged_json_clash_is_refused",
            "the merged file takes neither MCP servers nor hooks",
        );
        return;
    };
    let before = Tree::capture(&fx.workspace);
    let error = fx
        .acquire_session(subject, session.clone())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("\"projects-own\""),
        "the refusal does not name the entry: {error}"
    );
    assert!(error.contains("nothing was written"), "{error}");
    assert_eq!(
        Tree::capture(&fx.workspace),
        before,
        "a refused start wrote something"
    );
    fx.assert_no_ledger();
    if clash_key != SERVERS_KEY || !subject.provider.capabilities().mcp_replace {
        return;
    }
    session.mcp_mode = projectfile_core::McpMode::Replace;
    let receipt = fx.acquire_session(subject, session).unwrap();
    for m in merged.iter().filter(|m| m.key == SERVERS_KEY) {
        let now = json_at(&fx, m.path.as_str());
        assert_eq!(
            now[&m.key], clashing,
            "{}: replace must hold the session's entries alone",
            m.path
        );
    }
    assert!(fx.release(&receipt.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
}

/// Merged JSON, by the undo rule: the user's edit of the merged file during the session is set
/// aside (reported with where it went) and the project's prior bytes come back; with the state
/// directory deleted mid-session, the next start and release still give the project's bytes back.
pub fn merged_json_user_edit_and_lost_state(subject: &Subject) {
    let Some((merged, fx)) = with_project_files(subject, "merged_json_user_edit_and_lost_state")
    else {
        return;
    };
    let before = Tree::capture(&fx.workspace);
    let receipt = fx
        .acquire_session(subject, subject.full_session("edit"))
        .unwrap();
    for m in &merged {
        fx.write(m.path.as_str(), b"{\"edited\": true}\n");
    }
    let released = fx.projector.release(&receipt.token).unwrap();
    for m in &merged {
        let kept = released
            .kept
            .iter()
            .find(|k| k.path == m.path)
            .unwrap_or_else(|| panic!("{}: the user's edit is not reported", m.path));
        assert_eq!(
            std::fs::read(&kept.kept_at).unwrap(),
            b"{\"edited\": true}\n"
        );
    }
    assert_eq!(
        Tree::capture(&fx.workspace),
        before,
        "the prior did not come back"
    );

    lose_the_state_mid_session(&fx, subject, subject.full_session("lost"), &before);
}

/// A session whose holder is SIGKILLed and whose whole state directory is then deleted (lost
/// mid-session); the next start and its release must give back every byte of `before`.
fn lose_the_state_mid_session(
    fx: &Fixture,
    subject: &Subject,
    session: SessionRequest,
    before: &Tree,
) {
    let holder = HolderProcess::spawn();
    fx.acquire_session_as(subject, session, holder.holder())
        .unwrap();
    holder.kill9();
    std::fs::remove_dir_all(&fx.state).unwrap();
    std::fs::create_dir(&fx.state).unwrap();
    let next = fx.acquire(subject, "next").unwrap();
    assert!(fx.release(&next.token));
    assert_project_bytes_back(fx, before, "a lost state directory");
}

/// Every path `before` held is back exactly. After a lost state directory, what only the lost
/// ledger could prove ours may stay (an empty directory or marker we made, a generated JSON file
/// no marker can prove: see `generated_config_is_removed_only_when_ours`); the project's bytes may
/// not be lost.
fn assert_project_bytes_back(fx: &Fixture, before: &Tree, after: &str) {
    let now = Tree::capture(&fx.workspace);
    for (path, node) in &before.0 {
        assert_eq!(
            now.0.get(path),
            Some(node),
            "{path}: {after} lost the project's bytes"
        );
    }
}

/// Bad MCP input (a map that is not an object, a wrapper, a server that is not an object, a name
/// that is not a plain name) is refused with a clear error, and nothing is written.
pub fn mcp_bad_input_is_refused(subject: &Subject) {
    if !subject.provider.capabilities().mcp {
        skip(
            subject,
            "mcp_bad_input_is_refused",
            "the provider takes no MCP servers",
        );
        return;
    }
    let fx = Fixture::new();
    fx.write("README.md", b"project\n");
    let before = Tree::capture(&fx.workspace);
    for (bad, needle) in [
        (serde_json::json!(["docs"]), "must be a JSON object"),
        (
            serde_json::json!({"mcpServers": {"docs": {"command": "d"}}}),
            "not a file wrapping it",
        ),
        (serde_json::json!({"docs": "d"}), "must be a JSON object"),
        (
            serde_json::json!({"do cs": {"command": "d"}}),
            "not a plain name",
        ),
        (
            serde_json::json!({"docs.x": {"command": "d"}}),
            "not a plain name",
        ),
    ] {
        let mut session = SessionRequest::with_prompt("p");
        session.mcp_servers = Some(bad.clone());
        let error = fx
            .acquire_session(subject, session)
            .unwrap_err()
            .to_string();
        assert!(error.contains(needle), "{bad}: {error}");
        assert!(error.contains("nothing was written"), "{bad}: {error}");
        assert_eq!(
            Tree::capture(&fx.workspace),
            before,
            "{bad}: something was written"
        );
        fx.assert_no_ledger();
    }
}

/// The subagent and command folders a provider writes to, with the file each session entry gets.
fn named_paths(subject: &Subject) -> Vec<String> {
    let caps = subject.provider.capabilities();
    let fx = Fixture::new();
    let mut session = SessionRequest::with_prompt("p");
    if caps.subagents {
        session.agents = vec![session_agent()];
    }
    if caps.commands {
        session.commands = vec![subject.command()];
    }
    let plan = fx.plan_session(subject, &session);
    let mut paths: Vec<String> = plan
        .owned_files
        .iter()
        .filter(|o| {
            matches!(
                o.role,
                projectfile_core::OwnedRole::Subagent | projectfile_core::OwnedRole::Command
            )
        })
        .map(|o| o.path.to_string())
        .collect();
    paths.sort();
    paths
}

/// Subagents and commands, like skills: a same-named file of the project's is taken over and put
/// back byte for byte (mode included), our file is refreshed by each start and proven ours by its
/// marker, a hostile name is refused with nothing written, and with the state directory lost the
/// project's file still comes back. A CLI that takes them from a private configuration instead
/// gets `named_files_in_private_configuration`.
pub fn named_files_take_over_and_restore(subject: &Subject) {
    let caps = subject.provider.capabilities();
    if !caps.subagents && !caps.commands {
        skip(
            subject,
            "named_files_take_over_and_restore",
            "no subagents or commands",
        );
        return;
    }
    let paths = named_paths(subject);
    if paths.is_empty() {
        return named_files_in_private_configuration(subject);
    }
    let fx = Fixture::new();
    for path in &paths {
        fx.write_mode(path, b"project's own\r\nno newline", 0o640);
    }
    let before = Tree::capture(&fx.workspace);
    let mut session = SessionRequest::with_prompt("p");
    if caps.subagents {
        session.agents = vec![session_agent()];
    }
    if caps.commands {
        session.commands = vec![subject.command()];
    }
    let a = fx.acquire_session(subject, session.clone()).unwrap();
    for path in &paths {
        let text = String::from_utf8(fx.read(path).unwrap()).unwrap();
        assert!(
            !path.ends_with(".md") || text.starts_with("---\n"),
            "{path}: the frontmatter must stay first: {text}"
        );
        assert!(
            text.contains("generated by projectfile"),
            "{path}: no marker proves it ours"
        );
        assert!(
            a.files
                .iter()
                .any(|f| f.path == *path && f.action == "replaced"),
            "{path}: {:?}",
            a.files
        );
    }
    let mut again = session.clone();
    for file in again.agents.iter_mut().chain(again.commands.iter_mut()) {
        // A comment in TOML, a heading in Markdown: every command format stays readable.
        file.content.push_str("# Second session.\n");
    }
    let b = fx.acquire_session(subject, again).unwrap();
    for path in &paths {
        let text = String::from_utf8(fx.read(path).unwrap()).unwrap();
        assert!(
            text.contains("Second session."),
            "{path}: a start did not refresh it"
        );
    }
    assert!(fx.release(&b.token));
    assert!(fx.release(&a.token));
    assert_eq!(
        Tree::capture(&fx.workspace),
        before,
        "the project's files did not come back"
    );

    lose_the_state_mid_session(&fx, subject, session.clone(), &before);
    let before = Tree::capture(&fx.workspace);

    hostile_names_are_refused(&fx, subject, &before);
}

/// Subagents and commands a CLI takes from a private configuration (opencode's `agent` and
/// `command`, Codex's roles on its command line) rather than from files in the project: the plan's private files carry each entry's
/// name and body, the workspace is untouched while the session holds and after it, the private
/// files go with the session, and a hostile name is refused with nothing written.
fn named_files_in_private_configuration(subject: &Subject) {
    let caps = subject.provider.capabilities();
    let mut session = SessionRequest::with_prompt("p");
    if caps.subagents {
        session.agents = vec![session_agent()];
    }
    if caps.commands {
        session.commands = vec![session_command()];
    }
    let fx = Fixture::new();
    let plan = fx.plan_session(subject, &session);
    let private: String = plan
        .private_files
        .iter()
        .map(|f| f.content.as_str())
        .collect();
    // A CLI that names each entry on its command line instead (Codex's roles) carries the name
    // there and the body in a private file.
    let args: Vec<String> = plan
        .launch_args
        .iter()
        .map(|arg| arg.render(|name| name.to_string()))
        .collect();
    for file in session.agents.iter().chain(&session.commands) {
        let (_, body) = projectfile_core::front_matter::front_matter(&file.content);
        let named = private.contains(&format!("\"{}\"", file.name))
            || args.iter().any(|a| a.contains(&format!(".{}.", file.name)));
        assert!(
            named && private.contains(body.trim()),
            "the capabilities declare subagents or commands the plan does not project: {} is in no file of the plan",
            file.name
        );
    }
    fx.write("README.md", b"project\n");
    let before = Tree::capture(&fx.workspace);
    // What the session text alone does to the workspace (Codex's block), for comparison.
    let plain = fx
        .acquire_session(subject, SessionRequest::with_prompt("p"))
        .unwrap();
    let text_only = Tree::capture(&fx.workspace);
    assert!(fx.release(&plain.token));
    let receipt = fx.acquire_session(subject, session.clone()).unwrap();
    assert_eq!(
        Tree::capture(&fx.workspace),
        text_only,
        "the subagents or commands were written into the workspace"
    );
    assert!(fx.release(&receipt.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
    hostile_names_are_refused(&fx, subject, &before);
}

/// A subagent (or command) named `../escape`, `.hidden`, `a/b` or nothing is refused, naming
/// that nothing was written, and the workspace stays `before`.
fn hostile_names_are_refused(fx: &Fixture, subject: &Subject, before: &Tree) {
    let caps = subject.provider.capabilities();
    for bad in ["../escape", ".hidden", "a/b", ""] {
        let mut hostile = SessionRequest::with_prompt("p");
        let file = NamedFile {
            name: bad.into(),
            content: "x".into(),
        };
        if caps.subagents {
            hostile.agents = vec![file];
        } else {
            hostile.commands = vec![file];
        }
        let error = fx
            .acquire_session(subject, hostile)
            .unwrap_err()
            .to_string();
        assert!(error.contains("nothing was written"), "{bad:?}: {error}");
        assert_eq!(
            &Tree::capture(&fx.workspace),
            before,
            "{bad:?}: something was written"
        );
    }
}

/// Every path under `root` with its modification time (directories included, so an entry made
/// and removed again shows), besides the byte-exact [`Tree`].
fn stamped(root: &Path) -> (Tree, BTreeMap<String, (i64, i64)>) {
    let mut times = BTreeMap::new();
    for entry in walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
    {
        if let Ok(meta) = entry.path().symlink_metadata() {
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            times.insert(rel.display().to_string(), (meta.mtime(), meta.mtime_nsec()));
        }
    }
    (Tree::capture(root), times)
}

/// A dry run changes nothing at all: the workspace and the state directory are identical byte for
/// byte and in their modification times, whether no session ever ran (then no state directory
/// entry appears: no lock file, no ledger) or sessions hold (a live one, a dead one a real start
/// would clean); its receipt is marked `dry_run` and names the files a start would touch.
pub fn dry_run_changes_nothing(subject: &Subject) {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"# Project\n");
    let dry = |fx: &Fixture| {
        let session = subject.full_session("dry");
        let mut request =
            AcquireRequest::new(&fx.workspace, session, Holder::current_process().unwrap());
        request.probes = subject.probes.clone();
        fx.projector
            .dry_run(subject.provider.as_ref(), &request)
            .unwrap()
    };
    let before = (stamped(&fx.workspace), stamped(&fx.state));
    let receipt = dry(&fx);
    assert!(receipt.dry_run, "the receipt is not marked as a dry run");
    assert_eq!(
        (stamped(&fx.workspace), stamped(&fx.state)),
        before,
        "a dry run changed something"
    );
    assert_eq!(
        std::fs::read_dir(&fx.state).unwrap().count(),
        0,
        "a dry run created state"
    );

    let live = HolderProcess::spawn();
    let dead = HolderProcess::spawn();
    let held = fx
        .acquire_session_as(subject, subject.full_session("live"), live.holder())
        .unwrap();
    fx.acquire_session_as(subject, subject.full_session("dead"), dead.holder())
        .unwrap();
    dead.kill9();
    let before = (stamped(&fx.workspace), stamped(&fx.state));
    let receipt = dry(&fx);
    assert!(receipt.dry_run);
    assert!(
        receipt.stale_cleaned.is_empty(),
        "a dry run cleaned a lease"
    );
    assert!(
        receipt
            .notes
            .iter()
            .any(|n| n.contains("would first clean 1 lease")),
        "{:?}",
        receipt.notes
    );
    assert_eq!(
        (stamped(&fx.workspace), stamped(&fx.state)),
        before,
        "a dry run changed something"
    );
    assert!(fx.release(&held.token));
}

/// Adds the subagents and commands `caps` accept to `session` (used by [`crate::full_session`]).
pub fn add_named_files(caps: &Capabilities, session: &mut SessionRequest) {
    if caps.subagents {
        session.agents = vec![session_agent()];
    }
    if caps.commands {
        session.commands = vec![session_command()];
    }
}

/// The neutral definitions (docs/session-definitions.md): the same neutral command, subagent and
/// hooks, each on its own, are either projected converted (no neutral event name and no
/// `$ARGUMENTS` left where the CLI's form has another placeholder is checked by the provider's
/// own tests; here: the session starts and its release leaves the workspace byte for byte) or
/// refused naming the kind, with nothing written and no ledger. Every provider, whatever it takes.
pub fn neutral_definitions_are_converted_or_refused(subject: &Subject) {
    let hooks = HooksInput {
        config: serde_json::json!({"hooks": {
            "session_start": [{"command": "true"}],
            "before_tool": [{"matcher": "Bash", "command": "true", "timeout": 5}],
        }}),
        script: None,
        format: HooksFormat::Neutral,
    };
    let kinds: [(&str, SessionRequest); 3] = [
        (
            "command",
            SessionRequest {
                commands: vec![NamedFile {
                    name: "ship".into(),
                    content: "---\ndescription: Ship\n---\nShip $ARGUMENTS.\n".into(),
                }],
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "subagent",
            SessionRequest {
                agents: vec![session_agent()],
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "hooks",
            SessionRequest {
                hooks: Some(hooks),
                ..SessionRequest::with_prompt("p")
            },
        ),
    ];
    for (kind, session) in kinds {
        let fx = Fixture::new();
        fx.write("README.md", b"project\n");
        let before = Tree::capture(&fx.workspace);
        match fx.acquire_session(subject, session) {
            Ok(receipt) => {
                for file in &receipt.files {
                    let Some(bytes) = fx.read(&file.path) else {
                        continue;
                    };
                    let text = String::from_utf8_lossy(&bytes);
                    assert!(
                        !text.contains("\"session_start\"") && !text.contains("\"before_tool\""),
                        "{kind}: {} holds the neutral events unconverted",
                        file.path
                    );
                }
                assert!(fx.release(&receipt.token), "{kind}: release");
                assert_eq!(
                    Tree::capture(&fx.workspace),
                    before,
                    "{kind}: not byte for byte after"
                );
            }
            Err(error) => {
                let error = error.to_string();
                assert!(
                    error.contains(kind),
                    "{kind}: the refusal does not name it: {error}"
                );
                assert!(
                    error.contains(subject.provider.name()) || error.contains("hooks"),
                    "{kind}: the refusal does not name the provider: {error}"
                );
                assert_eq!(
                    Tree::capture(&fx.workspace),
                    before,
                    "{kind}: refused, yet touched"
                );
                fx.assert_no_ledger();
            }
        }
    }
}
