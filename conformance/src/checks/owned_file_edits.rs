//! Promises 2, 12 and 13 for owned files under the one undo rule: a file the user edited is not
//! ours any more.

use crate::Subject;
use crate::checks::owned_files::prior_of;
use crate::fixture::Fixture;
use crate::tree::Tree;

/// Promises 2, 12 and 13 for owned files, by the one undo rule: a file the user edited during the
/// session is not ours any more. With no prior content it stays where the user put it, through a
/// refresh and the last release, and is reported in `kept` (kept in place). Where the project's
/// prior content must come back, the prior comes back and the edit is set aside under the state
/// directory, reported with where it went.
pub fn owned_file_user_edit_is_set_aside(subject: &Subject) {
    let probe = Fixture::new();
    let session = subject.full_session("edited");
    let plan = probe.plan_session(subject, &session);
    assert!(
        !plan.owned_files.is_empty(),
        "{}: registered for this provider, but the plan has no owned files",
        subject.name()
    );
    for owned in &plan.owned_files {
        let path = owned.path.as_str();
        for with_prior in [false, true] {
            let edit = format!("the user's edit of {path}\n");
            // Edited, then released by the only session.
            let fx = Fixture::new();
            if with_prior {
                fx.write_mode(path, &prior_of(path), 0o640);
            }
            let before = Tree::capture(&fx.workspace);
            let receipt = fx.acquire_session(subject, session.clone()).unwrap();
            fx.write(path, edit.as_bytes());
            let released = fx.projector.release(&receipt.token).unwrap();
            assert_kept(&released.kept, path, &edit);
            assert_edit_outcome(&fx, &before, path, &edit, with_prior);

            // Edited while held, then a second session starts: the edit is not refreshed away.
            let fx = Fixture::new();
            if with_prior {
                fx.write_mode(path, &prior_of(path), 0o640);
            }
            let before = Tree::capture(&fx.workspace);
            let a = fx.acquire_session(subject, session.clone()).unwrap();
            fx.write(path, edit.as_bytes());
            let b = fx.acquire_session(subject, session.clone()).unwrap();
            assert_kept(&b.kept, path, &edit);
            assert_eq!(fx.read(path).as_deref(), Some(edit.as_bytes()), "{path}");
            assert!(fx.release(&a.token));
            let last = fx.projector.release(&b.token).unwrap();
            assert_kept(&last.kept, path, &edit);
            assert_edit_outcome(&fx, &before, path, &edit, with_prior);
        }
    }
}

/// After the last release of an edited owned file: with a prior, the workspace is as it was
/// before the session; without one, it is that plus the user's edit, in place.
fn assert_edit_outcome(fx: &Fixture, before: &Tree, path: &str, edit: &str, with_prior: bool) {
    let now = Tree::capture(&fx.workspace);
    if with_prior {
        assert_eq!(&now, before, "{path}: the prior state is not back");
        return;
    }
    assert_eq!(
        fx.read(path).as_deref(),
        Some(edit.as_bytes()),
        "{path}: the edit moved"
    );
    for (p, node) in &before.0 {
        assert_eq!(now.0.get(p), Some(node), "{path}: {p} changed");
    }
}

fn assert_kept(kept: &[projectfile_core::receipts::KeptRecord], path: &str, edit: &str) {
    let record = kept
        .iter()
        .find(|k| k.path.as_str() == path)
        .unwrap_or_else(|| panic!("{path}: the user's edit is not reported in kept: {kept:?}"));
    assert_eq!(
        std::fs::read(&record.kept_at).unwrap(),
        edit.as_bytes(),
        "{path}: the kept copy does not hold the user's bytes"
    );
    assert!(!record.reason.is_empty());
}
