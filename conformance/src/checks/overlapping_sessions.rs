//! Promise 3: a projection stays while any lease holds it, whichever order the sessions end in.

use crate::Subject;
use crate::fixture::Fixture;
use crate::fixture::assert_session_text_visible;
use crate::tree::Tree;
use projectfile_provider::SessionTextCarrier;

/// Promise 3: the projection stays while any lease holds it, whichever order they end in.
pub fn overlapping_sessions_release_in_either_order(subject: &Subject) {
    for first_released_is_a in [true, false] {
        let fx = Fixture::new();
        fx.write("README.md", b"project\n");
        let before = Tree::capture(&fx.workspace);
        let a = fx.acquire(subject, "session A").unwrap();
        let b = fx.acquire(subject, "session B").unwrap();
        assert_session_text_visible(&fx, &b, "session B");
        let (first, second) = if first_released_is_a {
            (&a, &b)
        } else {
            (&b, &a)
        };
        assert!(fx.release(&first.token));
        // Still held by the other session: its projection is still there.
        let still = fx.acquire(subject, "session C").unwrap();
        assert_session_text_visible(&fx, &still, "session C");
        assert!(fx.release(&still.token));
        if let Some(SessionTextCarrier::Block { path } | SessionTextCarrier::OwnedFile { path }) =
            &second.session_text
        {
            assert!(
                fx.read(path.as_str()).is_some(),
                "{path} vanished while a lease holds it"
            );
        }
        assert!(fx.release(&second.token));
        assert_eq!(Tree::capture(&fx.workspace), before);
        fx.assert_no_ledger();
    }
}
