//! agy's own checks: the receipt says the session text was not projected, and the hooks are
//! counted per workspace. The shared conformance suite runs from `tests/suite.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_agy::{Agy, HOOKS_FILE};
use projectfile_conformance::{Fixture, HOOK_SCRIPT_NAME, Subject, Tree};
use projectfile_provider::SessionTextCarrier;

fn subject() -> Subject {
    Subject::new(Agy)
}

#[test]
fn session_text_is_not_projected_and_the_receipt_says_so() {
    let fx = Fixture::new();
    let receipt = fx.acquire(&subject(), "agy text").unwrap();
    assert!(matches!(
        receipt.session_text,
        Some(SessionTextCarrier::NotProjected { ref reason }) if !reason.is_empty()
    ));
    assert!(
        receipt
            .notes
            .iter()
            .any(|n| n.contains("not projected") && n.contains("another way"))
    );
    assert!(receipt.files.is_empty() && receipt.launch_args.is_empty());
    assert!(Tree::capture(&fx.workspace).0.is_empty());
    assert!(fx.release(&receipt.token));
}

#[test]
fn hooks_are_counted_per_workspace() {
    let script = format!(".agents/hooks/{HOOK_SCRIPT_NAME}");
    let fx = Fixture::new();
    let a = fx
        .acquire_session(&subject(), subject().full_session("a"))
        .unwrap();
    let config = fx.read(HOOKS_FILE).unwrap();
    assert_eq!(fx.mode(&script), Some(0o755));
    let b = fx
        .acquire_session(&subject(), subject().full_session("b"))
        .unwrap();
    let held = b.files.iter().find(|f| f.path == HOOKS_FILE).unwrap();
    assert_eq!(held.action, "unchanged");
    assert!(fx.release(&a.token));
    assert_eq!(
        fx.read(HOOKS_FILE).unwrap(),
        config,
        "removed while b holds it"
    );
    let last = fx.projector.release(&b.token).unwrap();
    assert!(
        last.files
            .iter()
            .any(|f| f.path == HOOKS_FILE && f.action == "removed")
    );
    assert!(fx.read_kind(".agents").is_none());
    fx.assert_no_ledger();
}

#[test]
fn own_hooks_file_is_put_back() {
    let fx = Fixture::new();
    fx.write_mode(HOOKS_FILE, b"{\"own\": {\"Stop\": []}}", 0o600);
    fx.write(".agents/skills/x/SKILL.md", b"x\n");
    let before = Tree::capture(&fx.workspace);
    let a = fx
        .acquire_session(&subject(), subject().full_session("a"))
        .unwrap();
    let b = fx
        .acquire_session(&subject(), subject().full_session("b"))
        .unwrap();
    assert_ne!(fx.read(HOOKS_FILE).unwrap(), b"{\"own\": {\"Stop\": []}}");
    assert!(fx.release(&b.token));
    assert!(fx.release(&a.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
}
