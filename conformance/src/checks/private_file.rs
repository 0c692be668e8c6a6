//! The launch-argument and environment routes: the private file lives under the state directory,
//! per session, for as long as its session.

use crate::Subject;
use crate::fixture::{Fixture, environment_file};
use crate::tree::Tree;
use projectfile_core::projector::AcquireReceipt;
use projectfile_provider::{LaunchArg, SessionTextCarrier};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// The launch-argument route: the private file named by the launch arguments (or by the
/// environment) exists under the state directory (never in the workspace), holds the session
/// text with mode 0600, follows its flag, is separate per session, and is gone after that
/// session's release; the workspace is not edited at all when the plan projects nothing else.
pub fn launch_arg_private_file_lives_while_held(subject: &Subject) {
    let probe = Fixture::new();
    let plan = probe.plan(subject, "x");
    assert!(
        !plan.private_files.is_empty(),
        "{}: registered for this provider, but the plan has no private files",
        subject.name()
    );
    let edits_nothing =
        plan.blocks.is_empty() && plan.owned_files.is_empty() && plan.markers.is_empty();
    let fx = Fixture::new();
    fx.write("README.md", b"project\n");
    let before = Tree::capture(&fx.workspace);
    let a = fx.acquire(subject, "private text A").unwrap();
    let b = fx.acquire(subject, "private text B").unwrap();
    let file_of = |receipt: &AcquireReceipt, prompt: &str| -> PathBuf {
        let path = match &receipt.session_text {
            Some(SessionTextCarrier::Environment { private_file, var }) => {
                environment_file(receipt, private_file, var)
            }
            _ => {
                let at = plan
                    .launch_args
                    .iter()
                    .position(|arg| matches!(arg, LaunchArg::PrivateFilePath(_)))
                    .expect("a launch argument names the private file");
                assert_eq!(receipt.launch_args.len(), plan.launch_args.len());
                if let Some(LaunchArg::Literal(flag)) =
                    at.checked_sub(1).map(|i| &plan.launch_args[i])
                {
                    assert_eq!(
                        &receipt.launch_args[at - 1],
                        flag,
                        "the flag precedes the path"
                    );
                }
                PathBuf::from(&receipt.launch_args[at])
            }
        };
        assert!(path.is_absolute(), "{path:?} is not absolute");
        assert!(
            path.starts_with(&fx.state),
            "{path:?} is not under the state directory"
        );
        assert!(
            !path.starts_with(&fx.workspace),
            "{path:?} is in the workspace"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), prompt);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{path:?} is readable by others");
        path
    };
    let file_a = file_of(&a, "private text A");
    let file_b = file_of(&b, "private text B");
    assert_ne!(file_a, file_b, "sessions share a private file");
    if edits_nothing {
        assert_eq!(
            Tree::capture(&fx.workspace),
            before,
            "the workspace was edited"
        );
    }
    assert!(fx.release(&a.token));
    assert!(!file_a.exists(), "{file_a:?} outlives its session");
    assert!(file_b.exists(), "{file_b:?} removed with another session");
    assert!(fx.release(&b.token));
    assert!(!file_b.exists(), "{file_b:?} outlives its session");
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}
