//! Promise 10: nothing is written through a symlink, at the target or on the way to it.

use crate::Subject;
use crate::fixture::Fixture;
use crate::tree::Tree;
use projectfile_core::Error;

/// Promise 10: nothing is written through a symlink, at the target or on the way to it.
pub fn symlinks_are_refused(subject: &Subject) {
    let probe = Fixture::new();
    let session = subject.full_session("x");
    let plan = probe.plan_session(subject, &session);
    let mut targets: Vec<String> = plan.blocks.iter().map(|b| b.path.to_string()).collect();
    targets.extend(plan.owned_files.iter().map(|o| o.path.to_string()));
    assert!(
        !targets.is_empty(),
        "{}: registered for this provider, but the plan writes no file in the workspace",
        subject.name()
    );
    for target in targets {
        // The target itself links outside (and a dangling link).
        for dangling in [false, true] {
            let fx = Fixture::new();
            let secret = fx.outside.join("secret.md");
            if !dangling {
                std::fs::write(&secret, b"outside\n").unwrap();
            }
            let link = fx.workspace.join(&target);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(&secret, &link).unwrap();
            let before = Tree::capture(&fx.workspace);
            let error = fx
                .acquire_session(subject, session.clone())
                .expect_err("symlinked target");
            assert!(matches!(error, Error::Symlink { .. }), "{target}: {error}");
            assert_eq!(Tree::capture(&fx.workspace), before);
            if !dangling {
                assert_eq!(std::fs::read(&secret).unwrap(), b"outside\n");
            } else {
                assert!(
                    !secret.exists(),
                    "a file was created through a dangling link"
                );
            }
            fx.assert_no_ledger();
        }
        // A directory on the way links outside.
        if let Some((first, _)) = target.split_once('/') {
            let fx = Fixture::new();
            std::os::unix::fs::symlink(&fx.outside, fx.workspace.join(first)).unwrap();
            let error = fx
                .acquire_session(subject, session.clone())
                .expect_err("symlinked directory");
            assert!(matches!(error, Error::Symlink { .. }), "{target}: {error}");
            assert!(
                std::fs::read_dir(&fx.outside).unwrap().next().is_none(),
                "something was written outside the workspace"
            );
            fx.assert_no_ledger();
        }
    }
}
