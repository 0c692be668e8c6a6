//! Muse's own placement check. The shared conformance suite runs from `tests/suite.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::{Fixture, Subject};

#[test]
fn block_goes_to_agents_md_even_beside_an_override() {
    // No override file is known for Muse: AGENTS.md is what it reads.
    let fx = Fixture::new();
    fx.write("AGENTS.override.md", b"override\n");
    let receipt = fx
        .acquire(&Subject::new(projectfile_muse::Muse), "muse text")
        .unwrap();
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert_eq!(
        text,
        "\n<!-- BEGIN agentworks-session-instructions created=true -->\nmuse text\n<!-- END agentworks-session-instructions -->\n"
    );
    assert_eq!(fx.read("AGENTS.override.md").unwrap(), b"override\n");
    assert!(fx.release(&receipt.token));
    assert!(fx.read("AGENTS.md").is_none());
}
