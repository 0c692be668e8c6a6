//! Snapshots of Copilot's plan and receipts over the standard fixtures.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::{Subject, fixtures};

#[test]
fn plans_and_receipts() {
    let subject = Subject::new(projectfile_copilot::Copilot);
    for (name, build) in fixtures::standard() {
        let value = fixtures::snapshot(&subject, build);
        insta::assert_json_snapshot!(name, value, { ".acquire.holder" => "[holder]" });
    }
}
