//! Promises 3 and 11 in an empty workspace: everything we create is gone after the last release.

use crate::Subject;
use crate::fixture::Fixture;
use crate::fixture::assert_session_text_visible;
use crate::tree::Tree;

/// Promise 3 and 11: in an empty workspace, everything we create is gone after the last release.
pub fn nothing_left_in_empty_workspace(subject: &Subject) {
    let fx = Fixture::new();
    let before = Tree::capture(&fx.workspace);
    let receipt = fx.acquire(subject, "hello").unwrap();
    assert_session_text_visible(&fx, &receipt, "hello");
    assert!(fx.release(&receipt.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}
