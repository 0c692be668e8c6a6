//! Cursor runs the shared conformance suite, plus its own checks: the `.mdc` rule, the `.git`
//! marker counted across three sessions (and never touched when the project has a `.git`), the
//! project's own `.cursor/mcp.json` put back byte for byte with its mode, and the hook files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

projectfile_conformance::conformance_tests!(projectfile_cursor::Cursor);

use projectfile_conformance::{Fixture, HOOK_SCRIPT_NAME, Subject, Tree};
use projectfile_core::{Error, SessionRequest};
use projectfile_cursor::{Cursor, GIT_MARKER, MCP_FILE, RULE_FILE};

fn subject() -> Subject {
    Subject::new(Cursor)
}

#[test]
fn rule_is_a_valid_always_applied_mdc() {
    let fx = Fixture::new();
    let receipt = fx.acquire(&subject(), "Answer in French.").unwrap();
    let text = String::from_utf8(fx.read(RULE_FILE).unwrap()).unwrap();
    let rest = text
        .strip_prefix("---\n")
        .expect("frontmatter opens the file");
    let (front, body) = rest.split_once("\n---\n").expect("frontmatter closes");
    let lines: Vec<&str> = front.lines().collect();
    assert!(lines.contains(&"alwaysApply: true"), "{front}");
    assert!(
        lines.iter().all(|l| l.split_once(": ").is_some()),
        "{front}"
    );
    assert_eq!(body, "\nAnswer in French.\n");
    assert!(fx.release(&receipt.token));
    assert!(fx.read_kind(".cursor").is_none());
}

#[test]
fn git_marker_is_counted_across_three_sessions() {
    let fx = Fixture::new();
    fx.write("src/main.rs", b"fn main() {}\n");
    let before = Tree::capture(&fx.workspace);
    let a = fx.acquire(&subject(), "a").unwrap();
    let b = fx.acquire(&subject(), "b").unwrap();
    let c = fx.acquire(&subject(), "c").unwrap();
    let action = |r: &projectfile_core::projector::AcquireReceipt| {
        r.files
            .iter()
            .find(|f| f.path == GIT_MARKER)
            .unwrap()
            .action
    };
    assert_eq!(
        [action(&a), action(&b), action(&c)],
        ["created", "held", "held"]
    );
    assert!(fx.workspace.join(GIT_MARKER).is_dir());
    assert!(fx.release(&a.token));
    assert!(
        fx.workspace.join(GIT_MARKER).is_dir(),
        "removed by the creator while held"
    );
    assert!(fx.release(&c.token));
    assert!(
        fx.workspace.join(GIT_MARKER).is_dir(),
        "removed while b holds it"
    );
    let last = fx.projector.release(&b.token).unwrap();
    assert!(
        last.files
            .iter()
            .any(|f| f.path == GIT_MARKER && f.kind == "marker" && f.action == "removed")
    );
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

#[test]
fn own_git_is_never_touched() {
    for git_file in [false, true] {
        let fx = Fixture::new();
        if git_file {
            fx.write(GIT_MARKER, b"gitdir: /elsewhere/.git/worktrees/x\n");
        } else {
            fx.write(".git/HEAD", b"ref: refs/heads/main\n");
        }
        let before = Tree::capture(&fx.workspace);
        let receipts: Vec<_> = (0..3)
            .map(|i| fx.acquire(&subject(), &format!("s{i}")).unwrap())
            .collect();
        for r in &receipts {
            let git = r.files.iter().find(|f| f.path == GIT_MARKER).unwrap();
            assert_eq!(git.action, "exists");
            assert!(!r.notes.iter().any(|n| n.contains("has no .git")));
        }
        for r in &receipts {
            assert!(fx.release(&r.token));
        }
        assert_eq!(Tree::capture(&fx.workspace), before);
    }
}

#[test]
fn own_mcp_json_is_restored_byte_exact_with_its_mode() {
    let fx = Fixture::new();
    let own = b"{ \"mcpServers\": { \"own\": { \"command\": \"own\" } } }";
    fx.write_mode(MCP_FILE, own, 0o640);
    let before = Tree::capture(&fx.workspace);
    let session = subject().full_session("with mcp");
    let receipt = fx.acquire_session(&subject(), session.clone()).unwrap();
    let during: serde_json::Value = serde_json::from_slice(&fx.read(MCP_FILE).unwrap()).unwrap();
    assert_eq!(during["mcpServers"], session.mcp_servers.unwrap());
    assert_eq!(fx.mode(MCP_FILE), Some(0o640));
    assert!(
        receipt
            .notes
            .iter()
            .any(|n| n.contains(MCP_FILE) && n.contains("put back"))
    );
    let released = fx.projector.release(&receipt.token).unwrap();
    assert!(
        released
            .files
            .iter()
            .any(|f| f.path == MCP_FILE && f.action == "restored")
    );
    assert_eq!(fx.read(MCP_FILE).unwrap(), own);
    assert_eq!(fx.mode(MCP_FILE), Some(0o640));
    assert_eq!(Tree::capture(&fx.workspace), before);
}

#[test]
fn hooks_land_in_cursor_with_an_executable_script() {
    let fx = Fixture::new();
    let receipt = fx
        .acquire_session(&subject(), subject().full_session("hooks"))
        .unwrap();
    let script = format!(".cursor/hooks/{HOOK_SCRIPT_NAME}");
    assert_eq!(fx.mode(&script), Some(0o755));
    assert!(fx.read(".cursor/hooks.json").is_some());
    assert!(fx.read(".cursor/cli.json").is_some());
    assert!(receipt.notes.iter().any(|n| n.contains(&script)));
    assert!(fx.release(&receipt.token));
    assert!(fx.read_kind(".cursor").is_none());
}

#[test]
fn wrapped_or_malformed_mcp_input_is_refused() {
    for servers in [
        serde_json::json!({"mcpServers": {"x": {"command": "x"}}}),
        serde_json::json!(["not", "an", "object"]),
    ] {
        let fx = Fixture::new();
        let session = SessionRequest {
            mcp_servers: Some(servers),
            ..SessionRequest::with_prompt("p")
        };
        let error = fx.acquire_session(&subject(), session).unwrap_err();
        assert!(matches!(error, Error::Invalid { .. }), "{error}");
        assert!(Tree::capture(&fx.workspace).0.is_empty());
        fx.assert_no_ledger();
    }
}
