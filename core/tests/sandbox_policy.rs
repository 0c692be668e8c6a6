//! The sandbox policy as data: grants per mode, the Run-mode write rule, the enforcement decision
//! and the receipt status. No kernel involved (see `sandbox_landlock.rs` for that).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

use std::fs;
use std::path::PathBuf;

use projectfile_core::reader::Mode;
use projectfile_core::runtime::AttachAccess;
use projectfile_core::sandbox::{
    DEFAULT_MIN_ABI, Enforcement, Grant, GrantAccess, SandboxPolicy, TARGET_ABI, enforcement_for,
};
use rstest::rstest;

struct Dirs {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    runtime: PathBuf,
    project: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let runtime = base.join("runtime");
    let project = base.join("project");
    fs::create_dir(&runtime).unwrap();
    fs::create_dir(&project).unwrap();
    Dirs {
        _tmp: tmp,
        base,
        runtime,
        project,
    }
}

fn access_of(grants: &[Grant], path: &std::path::Path) -> Vec<GrantAccess> {
    grants
        .iter()
        .filter(|g| g.path == path)
        .map(|g| g.access)
        .collect()
}

#[rstest]
#[case(Mode::Builder, GrantAccess::ReadWrite)]
#[case(Mode::Run, GrantAccess::Read)]
fn the_target_grant_follows_the_mode(#[case] mode: Mode, #[case] target: GrantAccess) {
    let d = dirs();
    let grants = SandboxPolicy::new(mode, &d.runtime, &d.project)
        .grants()
        .unwrap();
    assert_eq!(access_of(&grants, &d.runtime), vec![GrantAccess::ReadWrite]);
    assert_eq!(access_of(&grants, &d.project), vec![target]);
    // /tmp (where these test folders live) is never granted by default.
    assert!(
        grants
            .iter()
            .filter(|g| g.access.writes())
            .all(|g| !d.base.starts_with(&g.path))
    );
    assert!(
        grants
            .iter()
            .all(|g| g.path != std::path::Path::new("/tmp"))
    );
    // System defaults are present and canonical.
    assert!(
        grants
            .iter()
            .any(|g| g.path == std::path::Path::new("/usr") && g.access == GrantAccess::Read)
    );
    assert!(
        grants
            .iter()
            .any(|g| g.path == std::path::Path::new("/dev") && g.access == GrantAccess::Device)
    );
    assert!(
        grants
            .iter()
            .all(|g| g.path == g.path.canonicalize().unwrap())
    );
}

#[test]
fn without_system_defaults_only_the_runtime_target_and_extras_are_granted() {
    let d = dirs();
    let home = d.base.join("cli-home");
    fs::create_dir(&home).unwrap();
    let grants = SandboxPolicy::new(Mode::Run, &d.runtime, &d.project)
        .without_system_defaults()
        .with_read_write(&home)
        .grants()
        .unwrap();
    assert_eq!(
        grants,
        vec![
            Grant {
                path: d.runtime.clone(),
                access: GrantAccess::ReadWrite
            },
            Grant {
                path: d.project.clone(),
                access: GrantAccess::Read
            },
            Grant {
                path: home,
                access: GrantAccess::ReadWrite
            },
        ]
    );
}

#[rstest]
#[case::the_target_itself("project")]
#[case::inside_the_target("project/sub")]
#[case::containing_the_target(".")]
fn run_mode_refuses_any_other_write_grant_over_the_target(#[case] rel: &str) {
    let d = dirs();
    fs::create_dir_all(d.project.join("sub")).unwrap();
    let path = d.base.join(rel);
    let err = SandboxPolicy::new(Mode::Run, &d.runtime, &d.project)
        .with_read_write(&path)
        .grants()
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("may only read the real target"),
        "{message}"
    );
    assert_eq!(err.kind(), "unsafe_target");
    // Builder may.
    SandboxPolicy::new(Mode::Builder, &d.runtime, &d.project)
        .with_read_write(&path)
        .grants()
        .unwrap();
    // Reading is fine in Run.
    SandboxPolicy::new(Mode::Run, &d.runtime, &d.project)
        .with_read(&path)
        .grants()
        .unwrap();
}

#[test]
fn a_run_runtime_must_not_contain_the_target() {
    let d = dirs();
    let inner = d.runtime.join("project-copy");
    fs::create_dir(&inner).unwrap();
    let message = SandboxPolicy::new(Mode::Run, &d.runtime, &inner)
        .grants()
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("must not contain the real target"),
        "{message}"
    );
}

#[test]
fn a_write_grant_given_through_a_symlink_is_caught_after_canonicalising() {
    let d = dirs();
    let alias = d.base.join("alias");
    std::os::unix::fs::symlink(&d.project, &alias).unwrap();
    assert!(
        SandboxPolicy::new(Mode::Run, &d.runtime, &d.project)
            .with_read_write(&alias)
            .grants()
            .is_err()
    );
}

#[test]
fn missing_or_relative_paths_are_refused() {
    let d = dirs();
    assert!(
        SandboxPolicy::new(Mode::Run, d.base.join("nope"), &d.project)
            .grants()
            .is_err()
    );
    assert!(
        SandboxPolicy::new(Mode::Run, &d.runtime, d.base.join("nope"))
            .grants()
            .is_err()
    );
    assert!(
        SandboxPolicy::new(Mode::Run, "runtime", &d.project)
            .grants()
            .is_err()
    );
    assert!(
        SandboxPolicy::new(Mode::Run, &d.runtime, &d.project)
            .with_read(d.base.join("nope"))
            .grants()
            .is_err()
    );
}

#[rstest]
#[case(Some(7), 3, false, Ok(Enforcement::Full))]
#[case(Some(5), 3, false, Ok(Enforcement::Full))]
#[case(Some(5), 5, false, Ok(Enforcement::Full))]
#[case(Some(4), 3, false, Ok(Enforcement::Partial))]
#[case(Some(3), 3, false, Ok(Enforcement::Partial))]
#[case(Some(2), 3, false, Err(()))]
#[case(Some(2), 3, true, Ok(Enforcement::NotEnforced))]
#[case(Some(1), 1, false, Ok(Enforcement::Partial))]
#[case(Some(4), 5, false, Err(()))]
#[case(None, 1, false, Err(()))]
#[case(None, 3, true, Ok(Enforcement::NotEnforced))]
fn the_enforcement_decision(
    #[case] kernel: Option<u8>,
    #[case] min: u8,
    #[case] allow: bool,
    #[case] expected: Result<Enforcement, ()>,
) {
    let got = enforcement_for(kernel, min, allow);
    match (got, expected) {
        (Ok((enforcement, detail)), Ok(want)) => {
            assert_eq!(enforcement, want);
            assert!(!detail.is_empty());
        }
        (Err(reason), Err(())) => {
            assert!(
                reason.contains("refusing to launch unsandboxed"),
                "{reason}"
            );
            assert!(reason.contains(&format!("minimum {min}")), "{reason}");
        }
        (got, want) => panic!("got {got:?}, want {want:?}"),
    }
}

// Truncation is only controlled from ABI 3, and the default minimum must be reachable.
const _: () = assert!(DEFAULT_MIN_ABI >= 3 && DEFAULT_MIN_ABI <= TARGET_ABI);

#[rstest]
#[case(0)]
#[case(TARGET_ABI + 1)]
fn an_out_of_range_minimum_abi_is_refused(#[case] min: u8) {
    let d = dirs();
    let err = SandboxPolicy::new(Mode::Run, &d.runtime, &d.project)
        .min_abi(min)
        .allow_unsandboxed(true)
        .prepare()
        .unwrap_err();
    assert!(err.to_string().contains("minimum Landlock ABI"), "{err}");
}

#[cfg(not(feature = "landlock"))]
#[test]
fn without_the_feature_launch_fails_unless_unsandboxed_is_allowed() {
    let d = dirs();
    let err = SandboxPolicy::new(Mode::Run, &d.runtime, &d.project)
        .prepare()
        .unwrap_err();
    assert!(err.to_string().contains("landlock"), "{err}");
    let prepared = SandboxPolicy::new(Mode::Run, &d.runtime, &d.project)
        .allow_unsandboxed(true)
        .prepare()
        .unwrap();
    assert_eq!(prepared.status().enforcement, Enforcement::NotEnforced);
    assert!(prepared.status().unsandboxed_allowed);
    let mut command = std::process::Command::new("true");
    let status = prepared.install(&mut command);
    assert_eq!(status.enforcement, Enforcement::NotEnforced);
}

#[test]
fn the_status_serializes_for_the_receipt() {
    let d = dirs();
    let prepared = SandboxPolicy::new(Mode::Run, &d.runtime, &d.project)
        .without_system_defaults()
        .allow_unsandboxed(true)
        .prepare()
        .unwrap();
    let json = serde_json::to_value(prepared.status()).unwrap();
    assert_eq!(json["mode"], "run");
    assert_eq!(json["target_abi"], TARGET_ABI);
    assert_eq!(json["min_abi"], DEFAULT_MIN_ABI);
    assert_eq!(json["unsandboxed_allowed"], true);
    assert!(["full", "partial", "not_enforced"].contains(&json["enforcement"].as_str().unwrap()));
    assert_eq!(json["grants"][1]["access"], "read");
}

/// Each attached folder is granted separately by its access and the mode.
#[rstest]
#[case(Mode::Builder, AttachAccess::FollowMode, GrantAccess::ReadWrite)]
#[case(Mode::Run, AttachAccess::FollowMode, GrantAccess::Read)]
#[case(Mode::Builder, AttachAccess::ReadOnly, GrantAccess::Read)]
#[case(Mode::Run, AttachAccess::ReadOnly, GrantAccess::Read)]
fn attached_folders_are_granted_by_access_and_mode(
    #[case] mode: Mode,
    #[case] access: AttachAccess,
    #[case] expected: GrantAccess,
) {
    let d = dirs();
    let docs = d.base.join("docs");
    let refs = d.base.join("refs");
    fs::create_dir(&docs).unwrap();
    fs::create_dir(&refs).unwrap();
    let grants = SandboxPolicy::new(mode, &d.runtime, &d.project)
        .with_attached("docs", &docs, access)
        .with_attached("refs", &refs, AttachAccess::ReadOnly)
        .grants()
        .unwrap();
    assert_eq!(access_of(&grants, &docs), vec![expected]);
    assert_eq!(access_of(&grants, &refs), vec![GrantAccess::Read]);
}

/// Landlock grants add up: a read-only attachment inside something this launch may write would be
/// writable after all, so the policy refuses it, naming the attachment.
#[rstest]
#[case::inside_the_builder_project("project/docs", Mode::Builder, true)]
#[case::the_builder_project_itself("project", Mode::Builder, true)]
#[case::inside_the_run_project("project/docs", Mode::Run, false)]
#[case::inside_the_output_folder("output/docs", Mode::Run, true)]
#[case::inside_a_writable_attachment("wide/docs", Mode::Builder, true)]
#[case::inside_a_read_only_attachment("narrow/docs", Mode::Builder, false)]
fn a_read_only_attachment_inside_a_write_grant_is_refused(
    #[case] rel: &str,
    #[case] mode: Mode,
    #[case] refused: bool,
) {
    let d = dirs();
    for dir in ["project/docs", "output/docs", "wide/docs", "narrow/docs"] {
        fs::create_dir_all(d.base.join(dir)).unwrap();
    }
    let path = d.base.join(rel);
    let result = SandboxPolicy::new(mode, &d.runtime, &d.project)
        .with_read_write(d.base.join("output"))
        .with_attached("wide", d.base.join("wide"), AttachAccess::FollowMode)
        .with_attached("narrow", d.base.join("narrow"), AttachAccess::ReadOnly)
        .with_attached("docs", &path, AttachAccess::ReadOnly)
        .grants();
    match result {
        Err(e) if refused => {
            assert_eq!(e.path(), Some(path.as_path()), "{e}");
            assert!(e.to_string().contains("\"docs\""), "{e}");
        }
        Ok(grants) if !refused => assert!(access_of(&grants, &path).contains(&GrantAccess::Read)),
        other => panic!("{rel} in {mode}: {other:?}"),
    }
}

#[test]
fn an_attachment_overlapping_the_runtime_is_refused() {
    let d = dirs();
    fs::create_dir(d.runtime.join("inner")).unwrap();
    for (path, access) in [
        (d.runtime.join("inner"), AttachAccess::ReadOnly),
        (d.runtime.clone(), AttachAccess::ReadOnly),
        (d.base.clone(), AttachAccess::FollowMode),
    ] {
        let err = SandboxPolicy::new(Mode::Builder, &d.runtime, &d.project)
            .with_attached("x", &path, access)
            .grants()
            .unwrap_err();
        assert_eq!(err.path(), Some(path.as_path()), "{err}");
        assert!(err.to_string().contains("runtime"), "{err}");
    }
}
