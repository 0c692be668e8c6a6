//! Snapshots of Claude's plan and receipts over the standard fixtures, as a binary that reads
//! AGENTS.md (`new__*`) and as one that does not (`old__*`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::{Subject, fixtures};
use projectfile_provider::{Probes, SessionRequest, VersionProbe};

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

/// `prompt=replace`: the private-file route passes `--system-prompt-file` (an old binary), and
/// the AGENTS.md route is the same, with a note saying the option does not apply to it.
#[test]
fn prompt_replace_plans_and_receipts() {
    for (label, version, fixture) in [
        ("old", "2.1.233", "empty"),
        ("new", "2.1.284", "own_agents_md"),
    ] {
        let subject = Subject::new(projectfile_claude::Claude).with_probes(Probes {
            cli_version: VersionProbe::Known {
                version: version.into(),
                binary: None,
            },
        });
        let build = fixtures::standard()
            .into_iter()
            .find(|(name, _)| *name == fixture)
            .map(|(_, build)| build)
            .unwrap();
        let mut session = SessionRequest::with_prompt(fixtures::PROMPT);
        session.options.insert("prompt".into(), "replace".into());
        let value = fixtures::snapshot_session(&subject, build, session);
        insta::assert_json_snapshot!(format!("{label}__{fixture}__prompt_replace"), value, {
            ".acquire.holder" => "[holder]",
        });
    }
}
