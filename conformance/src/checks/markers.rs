//! Markers are counted: created once when absent, held by the others, removed with the last
//! holder; the project's own is never touched.

use crate::Subject;
use crate::fixture::Fixture;
use crate::tree::Tree;
use projectfile_core::projector::AcquireReceipt;

/// Markers are counted: created once by the first session when absent, held by the others, and
/// removed only when the last holder ends, whichever ended first. A path the project already has
/// (empty or not, directory or file) is reported `exists` and never touched.
pub fn markers_are_counted(subject: &Subject) {
    let probe = Fixture::new();
    let plan = probe.plan(subject, "x");
    assert!(
        !plan.markers.is_empty(),
        "{}: registered for this provider, but the plan has no markers",
        subject.name()
    );
    for marker in &plan.markers {
        let path = marker.path.as_str();
        // Absent: three sessions share one marker.
        let fx = Fixture::new();
        fx.write("README.md", b"project\n");
        let before = Tree::capture(&fx.workspace);
        let receipts: Vec<AcquireReceipt> = ["a", "b", "c"]
            .iter()
            .map(|p| fx.acquire(subject, p).unwrap())
            .collect();
        let actions: Vec<&str> = receipts
            .iter()
            .map(|r| {
                r.files
                    .iter()
                    .find(|f| f.path == path && f.kind == "marker")
                    .map(|f| f.action.as_str())
                    .unwrap_or("missing")
            })
            .collect();
        assert_eq!(actions, ["created", "held", "held"], "{path}");
        // The creator ends first: the others still hold it.
        for (i, receipt) in receipts.iter().enumerate() {
            assert!(
                fx.read_kind(path).is_some(),
                "{path} gone before session {i} ended"
            );
            assert!(fx.release(&receipt.token));
        }
        assert!(
            fx.read_kind(path).is_none(),
            "{path} left after the last session"
        );
        assert_eq!(Tree::capture(&fx.workspace), before);
        fx.assert_no_ledger();

        // Present: the project's own, as an empty directory, a full directory, or a file.
        let owns: [(&str, ProjectOwn<'_>); 3] = [
            ("empty directory", &|fx: &Fixture| {
                std::fs::create_dir(fx.workspace.join(path)).unwrap()
            }),
            ("directory", &|fx: &Fixture| {
                fx.write(&format!("{path}/HEAD"), b"ref: refs/heads/main\n")
            }),
            ("file", &|fx: &Fixture| {
                fx.write(path, b"gitdir: /elsewhere\n")
            }),
        ];
        for (label, make) in owns {
            let fx = Fixture::new();
            make(&fx);
            let before = Tree::capture(&fx.workspace);
            let receipts: Vec<AcquireReceipt> = ["a", "b", "c"]
                .iter()
                .map(|p| fx.acquire(subject, p).unwrap())
                .collect();
            for r in &receipts {
                assert!(
                    r.files
                        .iter()
                        .any(|f| f.path == path && f.kind == "marker" && f.action == "exists"),
                    "{path} ({label}): the project's own is not reported as existing"
                );
            }
            for r in &receipts {
                assert!(fx.release(&r.token));
            }
            assert_eq!(
                Tree::capture(&fx.workspace),
                before,
                "{path} ({label}) was touched"
            );
            fx.assert_no_ledger();
        }
    }
}

/// Puts the project's own entry at a marker path.
type ProjectOwn<'a> = &'a dyn Fn(&Fixture);
