//! Snapshots of Claude's plan and receipts over the standard fixtures, as a binary that reads
//! AGENTS.md (`new__*`) and as one that does not (`old__*`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::{Subject, fixtures};
use projectfile_provider::{Probes, VersionProbe};

#[test]
fn plans_and_receipts() {
    for (label, version) in [("new", "2.1.284"), ("old", "2.1.233")] {
        let subject = Subject::new(projectfile_claude::Claude).with_probes(Probes {
            cli_version: VersionProbe::Known {
                version: version.into(),
                binary: None,
            },
        });
        for (name, build) in fixtures::standard() {
            let value = fixtures::snapshot(&subject, build);
            insta::assert_json_snapshot!(format!("{label}__{name}"), value, {
                ".acquire.holder" => "[holder]",
            });
        }
    }
}
