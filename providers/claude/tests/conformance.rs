//! Claude's own routing checks: which binary versions and project files send the session text to
//! the AGENTS.md block or to the private file passed with `--append-system-prompt-file`. The shared
//! conformance suite runs from `tests/suite.rs`, once per route.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_claude::{Claude, PRIVATE_FILE, PROMPT_FLAG};
use projectfile_conformance::{Fixture, Subject, Tree};
use projectfile_provider::{Probes, SessionTextCarrier, VersionProbe};

fn known(version: &str) -> Probes {
    Probes {
        cli_version: VersionProbe::Known {
            version: version.to_string(),
            binary: None,
        },
    }
}

fn subject(version: &str) -> Subject {
    Subject::new(Claude).with_probes(known(version))
}

/// Acquires, asserts the private-file route left the workspace alone, releases.
fn assert_private_route(fx: &Fixture, subject: &Subject, why: &str) {
    let before = Tree::capture(&fx.workspace);
    let receipt = fx.acquire(subject, "session text").unwrap();
    assert_eq!(
        receipt.session_text,
        Some(SessionTextCarrier::LaunchArgument {
            private_file: PRIVATE_FILE.into()
        })
    );
    assert_eq!(receipt.launch_args.len(), 2);
    assert_eq!(receipt.launch_args[0], PROMPT_FLAG);
    assert!(receipt.launch_args[1].ends_with(PRIVATE_FILE));
    assert!(
        receipt.notes.iter().any(|n| n.contains(why)),
        "no note says {why:?}: {:?}",
        receipt.notes
    );
    assert_eq!(
        Tree::capture(&fx.workspace),
        before,
        "a project file was edited"
    );
    assert!(fx.release(&receipt.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

#[test]
fn new_binary_gets_the_agents_md_block() {
    let fx = Fixture::new();
    let receipt = fx.acquire(&subject("2.1.284"), "session text").unwrap();
    assert!(receipt.launch_args.is_empty());
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert!(text.contains("created=true -->\nsession text\n"));
    assert!(fx.read("CLAUDE.md").is_none());
    assert!(fx.release(&receipt.token));
    assert!(fx.read("AGENTS.md").is_none());
}

#[test]
fn later_versions_read_agents_md_too() {
    for version in ["2.1.285", "2.2.0", "3.0.0"] {
        let fx = Fixture::new();
        let plan = fx.plan(&subject(version), "x");
        assert_eq!(plan.blocks.len(), 1, "{version}");
        assert!(plan.private_files.is_empty(), "{version}");
    }
}

#[test]
fn old_or_unknown_binary_gets_a_private_file() {
    for (version, why) in [
        ("2.1.233", "does not read AGENTS.md"),
        ("2.1.283", "does not read AGENTS.md"),
        ("2.1.284-beta.1", "does not read AGENTS.md"),
        ("not a version", "not a semantic version"),
    ] {
        assert_private_route(&Fixture::new(), &subject(version), why);
    }
    let missing = Subject::new(Claude).with_probes(Probes {
        cli_version: VersionProbe::Missing {
            reason: "claude was not found on PATH".into(),
        },
    });
    assert_private_route(&Fixture::new(), &missing, "not found");
}

#[test]
fn own_claude_md_takes_the_private_route_even_on_a_new_binary() {
    for own in ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"] {
        let fx = Fixture::new();
        fx.write(own, b"# the project's own\n");
        fx.write("AGENTS.md", b"# agents\n");
        assert_private_route(&fx, &subject("2.1.284"), own);
        assert_eq!(fx.read(own).unwrap(), b"# the project's own\n");
        assert_eq!(fx.read("AGENTS.md").unwrap(), b"# agents\n");
    }
}

#[test]
fn claude_md_above_the_workspace_counts_too() {
    let fx = Fixture::new();
    // The workspace is `<base>/workspace`: a CLAUDE.md in `<base>` is "a directory above".
    std::fs::write(fx.base.join("CLAUDE.md"), b"# above\n").unwrap();
    let above = fx.base.join("CLAUDE.md").display().to_string();
    assert_private_route(&fx, &subject("2.1.284"), &above);
    assert_eq!(
        std::fs::read(fx.base.join("CLAUDE.md")).unwrap(),
        b"# above\n"
    );
}

#[test]
fn claude_rules_and_agents_override_do_not_change_the_route() {
    let fx = Fixture::new();
    fx.write(".claude/rules/style.md", b"rule\n");
    fx.write("AGENTS.override.md", b"override\n");
    let receipt = fx.acquire(&subject("2.1.284"), "text").unwrap();
    // Claude never reads AGENTS.override.md: the block goes to AGENTS.md.
    assert!(fx.read("AGENTS.md").is_some());
    assert_eq!(fx.read("AGENTS.override.md").unwrap(), b"override\n");
    assert!(fx.release(&receipt.token));
    assert!(fx.read("AGENTS.md").is_none());
}

#[test]
fn claude_md_is_never_written() {
    for version in ["2.1.284", "2.1.233"] {
        for own in [None, Some("CLAUDE.md"), Some("AGENTS.md")] {
            let fx = Fixture::new();
            if let Some(own) = own {
                fx.write(own, b"own\n");
            }
            let receipt = fx.acquire(&subject(version), "text").unwrap();
            assert!(
                !receipt.files.iter().any(|f| f.path.ends_with("CLAUDE.md")),
                "{version} {own:?}: {:?}",
                receipt.files
            );
            if own != Some("CLAUDE.md") {
                assert!(fx.read("CLAUDE.md").is_none());
            }
            assert!(fx.release(&receipt.token));
        }
    }
}
