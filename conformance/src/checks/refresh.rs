//! Promise 5: each start refreshes the projection, so a changed prompt is picked up.

use crate::Subject;
use crate::fixture::Fixture;
use crate::fixture::assert_session_text_visible;
use projectfile_provider::SessionTextCarrier;

/// Promise 5: each start refreshes the projection, so a changed prompt is picked up.
pub fn start_refreshes_the_text(subject: &Subject) {
    let fx = Fixture::new();
    let a = fx.acquire(subject, "first prompt").unwrap();
    let b = fx.acquire(subject, "second prompt").unwrap();
    assert_session_text_visible(&fx, &b, "second prompt");
    if let Some(SessionTextCarrier::Block { path } | SessionTextCarrier::OwnedFile { path }) =
        &b.session_text
    {
        let text = String::from_utf8_lossy(&fx.read(path.as_str()).unwrap()).into_owned();
        assert!(
            !text.contains("first prompt"),
            "{path} still carries the old prompt"
        );
    }
    fx.release(&a.token);
    fx.release(&b.token);
}
