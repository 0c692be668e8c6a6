//! Promises 12 and 13: owned files are counted across sessions and the last release restores the
//! project's prior content and mode.

use crate::Subject;
use crate::fixture::Fixture;
use crate::fixture::as_written;
use crate::tree;
use crate::tree::Tree;

/// The prior content every owned file gets in [`owned_files_restore_prior_content_and_mode`].
pub(crate) fn prior_of(path: &str) -> Vec<u8> {
    format!("\u{feff}project's own {path}\r\nno final newline").into_bytes()
}

/// Promise 12: an owned file's prior content and mode are restored exactly by the last session,
/// whichever session ends first; an overlapping session does not disturb them.
pub fn owned_files_restore_prior_content_and_mode(subject: &Subject) {
    let probe = Fixture::new();
    let session = subject.full_session("owned");
    let plan = probe.plan_session(subject, &session);
    assert!(
        !plan.owned_files.is_empty(),
        "{}: registered for this provider, but the plan has no owned files",
        subject.name()
    );
    for first_released_is_a in [true, false] {
        let fx = Fixture::new();
        for (i, owned) in plan.owned_files.iter().enumerate() {
            // A different mode per file (and one the hook script's 0755 would overwrite).
            let mode = [0o640, 0o600, 0o700, 0o444][i % 4];
            fx.write_mode(owned.path.as_str(), &prior_of(owned.path.as_str()), mode);
        }
        let before = Tree::capture(&fx.workspace);
        let a = fx.acquire_session(subject, session.clone()).unwrap();
        let b = fx
            .acquire_session(subject, subject.full_session("owned again"))
            .unwrap();
        let later = fx.plan_session(subject, &subject.full_session("owned again"));
        for owned in &later.owned_files {
            let path = owned.path.as_str();
            assert_eq!(
                fx.read(path).as_deref(),
                Some(as_written(owned).as_slice()),
                "{path}: the newest session's content is not in place"
            );
            if let Some(mode) = owned.mode {
                assert_eq!(
                    fx.mode(path),
                    Some(mode),
                    "{path}: planned mode not applied"
                );
            } else {
                assert_eq!(
                    fx.mode(path),
                    Some(before_mode(&before, path)),
                    "{path}: the prior mode should be kept while ours is written"
                );
            }
        }
        let (first, second) = if first_released_is_a {
            (&a, &b)
        } else {
            (&b, &a)
        };
        let released = fx.projector.release(&first.token).unwrap();
        assert!(released.released);
        for owned in &later.owned_files {
            assert_ne!(
                fx.read(owned.path.as_str()),
                Some(prior_of(owned.path.as_str())),
                "{}: restored while another session holds it",
                owned.path
            );
        }
        let last = fx.projector.release(&second.token).unwrap();
        assert!(
            last.kept.is_empty() && released.kept.is_empty(),
            "nothing was edited"
        );
        for owned in &plan.owned_files {
            assert!(
                last.files
                    .iter()
                    .any(|f| f.path == owned.path.as_str() && f.action == "restored"),
                "{}: the last release does not report the restore",
                owned.path
            );
        }
        assert_eq!(
            Tree::capture(&fx.workspace),
            before,
            "prior content or mode lost"
        );
        fx.assert_no_ledger();
    }
}

fn before_mode(tree: &Tree, path: &str) -> u32 {
    match tree.0.get(path) {
        Some(tree::Node::File { mode, .. }) => *mode,
        other => panic!("{path}: expected a file in the snapshot, found {other:?}"),
    }
}
