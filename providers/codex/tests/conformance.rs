//! Codex's own placement checks. The shared conformance suite runs from `tests/suite.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::{Fixture, Subject};

#[test]
fn block_goes_to_the_override_when_codex_reads_it() {
    let fx = Fixture::new();
    let subject = Subject::new(projectfile_codex::Codex);
    fx.write("AGENTS.md", b"base\n");
    fx.write("AGENTS.override.md", b"override\n");
    let receipt = fx.acquire(&subject, "session text").unwrap();
    assert_eq!(fx.read("AGENTS.md").unwrap(), b"base\n");
    let over = String::from_utf8(fx.read("AGENTS.override.md").unwrap()).unwrap();
    assert!(
        over.starts_with(
            "override\n\n<!-- BEGIN agentworks-session-instructions created=false -->"
        )
    );
    assert!(fx.release(&receipt.token));
    assert_eq!(fx.read("AGENTS.override.md").unwrap(), b"override\n");
}

#[test]
fn empty_workspace_gets_a_created_agents_md() {
    let fx = Fixture::new();
    let subject = Subject::new(projectfile_codex::Codex);
    let receipt = fx.acquire(&subject, "hello").unwrap();
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert_eq!(
        text,
        "\n<!-- BEGIN agentworks-session-instructions created=true -->\nhello\n<!-- END agentworks-session-instructions -->\n"
    );
    assert!(fx.release(&receipt.token));
    assert!(fx.read("AGENTS.md").is_none());
}
