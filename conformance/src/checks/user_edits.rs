//! Promise 2 for blocks: the user's edits outside our block while a session runs are kept.

use crate::Subject;
use crate::checks::block_targets;
use crate::fixture::Fixture;

/// Promise 2: edits the user makes outside the block while a session runs are kept. (Owned
/// files: [`owned_file_user_edit_is_set_aside`](super::owned_file_edits::owned_file_user_edit_is_set_aside).)
pub fn user_edits_are_kept(subject: &Subject) {
    for target in block_targets(subject) {
        let fx = Fixture::new();
        fx.write(&target, b"original\n");
        let receipt = fx.acquire(subject, "session").unwrap();
        let mut edited = b"prepended by the user\n".to_vec();
        edited.extend(fx.read(&target).unwrap());
        edited.extend(b"appended by the user\n");
        fx.write(&target, &edited);
        assert!(fx.release(&receipt.token));
        assert_eq!(
            fx.read(&target).unwrap(),
            b"prepended by the user\noriginal\nappended by the user\n".to_vec(),
            "{target}: the user's edits must survive the release"
        );
    }
}
