//! Promise 6: a holder killed with SIGKILL is cleaned at the next start; a live holder's
//! projection is never touched.

use crate::Subject;
use crate::fixture::Fixture;
use crate::fixture::HolderProcess;
use crate::tree::Tree;
use projectfile_provider::SessionTextCarrier;

/// Promise 6: a holder killed with SIGKILL leaves leftovers that the next start cleans, and a live
/// holder's projection is never touched.
pub fn sigkilled_holder_is_cleaned_at_next_start(subject: &Subject) {
    let fx = Fixture::new();
    fx.write("notes.txt", b"mine\n");
    let before = Tree::capture(&fx.workspace);
    let live = HolderProcess::spawn();
    let doomed = HolderProcess::spawn();
    let kept = fx
        .acquire_as(subject, "live session", live.holder())
        .unwrap();
    let dead = fx
        .acquire_as(subject, "doomed session", doomed.holder())
        .unwrap();
    doomed.kill9();
    let next = fx.acquire(subject, "next session").unwrap();
    assert!(
        next.stale_cleaned.iter().any(|s| s.token == dead.token),
        "the dead holder's lease was not cleaned"
    );
    assert!(
        !next.stale_cleaned.iter().any(|s| s.token == kept.token),
        "a live holder's lease was cleaned"
    );
    assert!(
        !fx.release(&dead.token),
        "a cleaned lease is already released"
    );
    assert!(fx.release(&next.token));
    // The live session still holds: its projection is there.
    if let Some(SessionTextCarrier::Block { path } | SessionTextCarrier::OwnedFile { path }) =
        &kept.session_text
    {
        assert!(
            fx.read(path.as_str()).is_some(),
            "{path} was removed under a live holder"
        );
    }
    live.kill9();
    let report = fx.projector.strip_stale(&fx.workspace).unwrap();
    assert_eq!(report.stale_cleaned.len(), 1);
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}
