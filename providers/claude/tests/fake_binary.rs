//! Claude probes a fake `claude` binary (a shell script passed as `AcquireRequest::binary_path`,
//! as a host's `--cli-binary` would) and takes the route its `--version` output calls for.
//!
//! One test writes every script before running any of them: writing an executable while another
//! thread forks can make its `exec` fail with ETXTBSY.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_claude::{Claude, PROMPT_FLAG};
use projectfile_conformance::{Fixture, Subject, Tree};
use projectfile_provider::{SessionTextCarrier, VersionProbe};
use std::os::unix::fs::PermissionsExt;

#[test]
fn fake_binaries_pick_the_route() {
    let bin = tempfile::tempdir().unwrap();
    let script = |name: &str, output: &str| {
        let path = bin.path().join(name).join("claude");
        std::fs::create_dir(bin.path().join(name)).unwrap();
        std::fs::write(&path, format!("#!/bin/sh\necho '{output}'\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let new = script("new", "2.1.284 (Claude Code)");
    let old = script("old", "2.1.233 (Claude Code)");
    let garbage = script("garbage", "garbage");
    let absent = bin.path().join("absent/claude");

    // A binary that reads AGENTS.md: the block.
    let fx = Fixture::new();
    let receipt = fx
        .acquire(&Subject::new(Claude).with_binary(&new), "text")
        .unwrap();
    assert_eq!(
        receipt.probes.cli_version,
        VersionProbe::Known {
            version: "2.1.284".into(),
            binary: Some(new.clone())
        }
    );
    assert!(matches!(
        receipt.session_text,
        Some(SessionTextCarrier::Block { .. })
    ));
    assert!(receipt.launch_args.is_empty());
    assert!(fx.read("AGENTS.md").is_some() && fx.read("CLAUDE.md").is_none());
    assert!(fx.release(&receipt.token));
    assert!(fx.read("AGENTS.md").is_none());

    // Old, garbage and absent binaries: the private file, and no project file edited.
    for (binary, expect) in [
        (&old, "known"),
        (&garbage, "unreadable"),
        (&absent, "unreadable"),
    ] {
        let fx = Fixture::new();
        let before = Tree::capture(&fx.workspace);
        let receipt = fx
            .acquire(&Subject::new(Claude).with_binary(binary), "text")
            .unwrap();
        let probe = &receipt.probes.cli_version;
        let as_expected = match (probe, expect) {
            (VersionProbe::Known { version, .. }, "known") => version == "2.1.233",
            (VersionProbe::Unreadable { binary: b, .. }, "unreadable") => b == binary,
            _ => false,
        };
        assert!(as_expected, "{binary:?}: unexpected probe {probe:?}");
        assert!(matches!(
            receipt.session_text,
            Some(SessionTextCarrier::LaunchArgument { .. })
        ));
        assert_eq!(receipt.launch_args[0], PROMPT_FLAG);
        assert_eq!(
            std::fs::read_to_string(&receipt.launch_args[1]).unwrap(),
            "text"
        );
        assert_eq!(Tree::capture(&fx.workspace), before, "{binary:?}");
        assert!(fx.release(&receipt.token));
        assert!(!std::path::Path::new(&receipt.launch_args[1]).exists());
        assert_eq!(Tree::capture(&fx.workspace), before);
    }
}
