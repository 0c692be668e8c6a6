//! Codex's delivery cases (the shared shapes of `projectfile_conformance::delivery`): a 40 KiB
//! `AGENTS.md` is delivered thanks to the budget argument the profile declares, the receipt's
//! verdict and launch arguments proving it; an `AGENTS.override.md` carries the block and
//! delivers. Each verdict is checked against `resolve_as` over the same workspace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_codex::{Codex, PROJECT_DOC_MAX_BYTES};
use projectfile_conformance::Subject;
use projectfile_conformance::core::guidance::Undelivered;
use projectfile_conformance::delivery::{Shape, verdict_in};
use projectfile_provider::SessionTextCarrier;

#[test]
fn a_40_kib_agents_md_is_delivered_with_the_budget_argument() {
    let receipt = verdict_in(&Subject::new(Codex), Shape::BigAgentsMd);
    let delivery = &receipt.delivery;
    assert!(delivery.delivered, "{delivery:?}");
    assert_eq!(delivery.undelivered, None);
    assert_eq!(delivery.launch_args.len(), 2, "{delivery:?}");
    assert_eq!(delivery.launch_args[0], "-c");
    let bytes: u64 = delivery.launch_args[1]
        .strip_prefix("project_doc_max_bytes=")
        .unwrap()
        .parse()
        .unwrap();
    assert!(bytes > PROJECT_DOC_MAX_BYTES, "{bytes}");
    assert_eq!(receipt.launch_args, delivery.launch_args);
}

#[test]
fn the_override_file_carries_the_block_and_delivers() {
    let receipt = verdict_in(&Subject::new(Codex), Shape::OverrideFile);
    assert!(matches!(
        &receipt.session_text,
        Some(SessionTextCarrier::Block { path }) if path.as_str() == "AGENTS.override.md"
    ));
    assert!(receipt.delivery.delivered, "{:?}", receipt.delivery);
    assert!(receipt.launch_args.is_empty());
}

#[test]
fn plain_and_claude_md_workspaces_deliver_without_arguments() {
    for shape in [Shape::Plain, Shape::ShadowingClaudeMd] {
        let receipt = verdict_in(&Subject::new(Codex), shape);
        assert!(
            receipt.delivery.delivered,
            "{shape:?}: {:?}",
            receipt.delivery
        );
        assert!(receipt.launch_args.is_empty(), "{shape:?}");
        assert!(!matches!(
            receipt.delivery.undelivered,
            Some(Undelivered::BudgetTruncated { .. })
        ));
    }
}
