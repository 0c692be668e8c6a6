//! A plan only reads the workspace: planning twice changes nothing and gives the same plan.

use crate::Subject;
use crate::fixture::Fixture;
use crate::tree::Tree;

/// A plan only reads the workspace: planning twice changes nothing and gives the same plan.
pub fn planning_is_pure(subject: &Subject) {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"x\n");
    let before = Tree::capture(&fx.workspace);
    let first = fx.plan(subject, "p");
    let second = fx.plan(subject, "p");
    assert_eq!(first, second);
    assert_eq!(Tree::capture(&fx.workspace), before);
}
