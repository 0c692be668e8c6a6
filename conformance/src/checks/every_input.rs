//! Promise 3 for every input at once: a session bringing everything the provider takes leaves
//! nothing behind.

use crate::Subject;
use crate::fixture::Fixture;
use crate::fixture::as_written;
use crate::fixture::assert_session_text_visible;
use crate::tree::Tree;

/// Promise 3 and 11 with every input the provider accepts: each owned file holds exactly the
/// planned bytes (and mode) while the session holds, and nothing is left after the release.
pub fn every_input_leaves_nothing_behind(subject: &Subject) {
    let fx = Fixture::new();
    let session = subject.full_session("every input");
    let plan = fx.plan_session(subject, &session);
    let before = Tree::capture(&fx.workspace);
    let receipt = fx.acquire_session(subject, session).unwrap();
    assert_session_text_visible(&fx, &receipt, "every input");
    for owned in &plan.owned_files {
        let path = owned.path.as_str();
        assert_eq!(
            fx.read(path).as_deref(),
            Some(as_written(owned).as_slice()),
            "{path} does not hold the planned content"
        );
        if let Some(mode) = owned.mode {
            assert_eq!(fx.mode(path), Some(mode), "{path} has the wrong mode");
        }
    }
    assert!(fx.release(&receipt.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}
