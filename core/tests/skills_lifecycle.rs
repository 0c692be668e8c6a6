//! Skill folders across a session's life: projection, marker, take-over and restore, counting
//! across sessions, refresh, user files, crash leftovers, hostile names and symlinks.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod skills_common;

use projectfile_core::Error;
use skills_common::*;
use std::path::Path;

const MARKER: &str = ".agentworks-managed";

#[test]
fn a_skill_is_projected_with_its_marker_and_removed_by_the_last_session() {
    let fx = Fx::new();
    let src = fx.source(
        "review",
        &[
            ("SKILL.md", b"---\nname: review\n---\nours\n"),
            ("scripts/x.sh", b"x"),
        ],
    );
    let before = tree(&fx.ws);
    let a = fx.acquire(&[("review", &src)]);
    assert!(
        a.files
            .iter()
            .any(|f| f.kind == "skill" && f.action == "created"),
        "{:?}",
        a.files
    );
    assert_eq!(
        fx.read(".agents/skills/review/SKILL.md").unwrap(),
        b"---\nname: review\n---\nours\n"
    );
    assert_eq!(fx.read(".agents/skills/review/scripts/x.sh").unwrap(), b"x");
    let marker =
        String::from_utf8(fx.read(&format!(".agents/skills/review/{MARKER}")).unwrap()).unwrap();
    assert!(marker.contains("namespace agentworks"), "{marker}");
    assert!(marker.contains("SKILL.md"), "{marker}");
    let ino = |rel: &str| {
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(fx.ws.join(rel)).unwrap())
    };
    let first = ino(".agents/skills/review/SKILL.md");
    let b = fx.acquire(&[("review", &src)]);
    assert!(
        b.files
            .iter()
            .any(|f| f.kind == "skill" && f.action == "unchanged"),
        "{:?}",
        b.files
    );
    assert_eq!(
        ino(".agents/skills/review/SKILL.md"),
        first,
        "an unchanged skill is not copied again"
    );
    assert!(fx.release(&a.token).released);
    assert!(
        fx.read(".agents/skills/review/SKILL.md").is_some(),
        "still held by b"
    );
    assert!(fx.release(&b.token).released);
    assert_eq!(tree(&fx.ws), before);
    fx.assert_no_state();
}

#[test]
fn the_projects_own_folder_is_taken_over_and_comes_back_byte_exact() {
    let fx = Fx::new();
    write_project_review(&fx);
    fx.write(".agents/skills/lint/SKILL.md", b"lint, differently named\n");
    let before = tree(&fx.ws);
    let src = fx.source("review", &[("SKILL.md", b"ours\n")]);
    let a = fx.acquire(&[("review", &src)]);
    assert!(
        a.files
            .iter()
            .any(|f| f.kind == "skill" && f.action == "taken_over"),
        "{:?}",
        a.files
    );
    assert_eq!(
        fx.read(".agents/skills/review/SKILL.md").unwrap(),
        b"ours\n"
    );
    assert!(fx.read(".agents/skills/review/run.sh").is_none());
    assert!(
        fx.read(&format!(".agents/skills/review/{MARKER}"))
            .is_some()
    );
    assert_eq!(
        fx.read(".agents/skills/lint/SKILL.md").unwrap(),
        b"lint, differently named\n"
    );
    let status = fx.projector.status(&fx.ws).unwrap();
    assert_eq!(status.taken_over.len(), 1, "{status:?}");
    assert_eq!(status.taken_over[0].path.as_str(), ".agents/skills/review");
    assert_eq!(status.taken_over[0].state, "stashed");
    // Kept inside the workspace, where losing the state directory cannot take it.
    assert!(
        status.taken_over[0]
            .stash
            .starts_with(fx.ws.join(".agentworks-priors"))
    );
    assert!(status.taken_over[0].stash.join("SKILL.md").exists());
    // Two more sessions, one of them SIGKILLed.
    let doomed = Sleeper::spawn();
    let b = fx.acquire_as(&[("review", &src)], doomed.holder());
    let c = fx.acquire(&[("review", &src)]);
    doomed.kill9();
    let d = fx.acquire(&[("review", &src)]);
    assert!(d.stale_cleaned.iter().any(|s| s.token == b.token));
    assert!(
        !fx.release(&b.token).released,
        "a cleaned lease is already released"
    );
    assert!(fx.release(&a.token).released);
    assert_eq!(
        fx.read(".agents/skills/review/SKILL.md").unwrap(),
        b"ours\n"
    );
    assert!(fx.release(&c.token).released);
    assert!(fx.release(&d.token).released);
    assert_eq!(tree(&fx.ws), before);
    fx.assert_no_state();
}

#[test]
fn a_refresh_replaces_files_and_keeps_foreign_ones_reported() {
    let fx = Fx::new();
    let v1 = fx.source("v1", &[("SKILL.md", b"v1\n"), ("old.txt", b"old")]);
    let v2 = fx.source("v2", &[("SKILL.md", b"v2\n"), ("new.txt", b"new")]);
    let before = tree(&fx.ws);
    let a = fx.acquire(&[("review", &v1)]);
    fx.write(".agents/skills/review/mine.txt", b"dropped by the user");
    let b = fx.acquire(&[("review", &v2)]);
    assert!(
        b.files
            .iter()
            .any(|f| f.kind == "skill" && f.action == "refreshed"),
        "{:?}",
        b.files
    );
    assert_eq!(fx.read(".agents/skills/review/SKILL.md").unwrap(), b"v2\n");
    assert_eq!(fx.read(".agents/skills/review/new.txt").unwrap(), b"new");
    assert!(
        fx.read(".agents/skills/review/old.txt").is_none(),
        "removed files disappear"
    );
    assert_eq!(
        fx.read(".agents/skills/review/mine.txt").unwrap(),
        b"dropped by the user"
    );
    assert!(
        b.warnings.iter().any(|w| w.path.ends_with("mine.txt")),
        "foreign file reported: {:?}",
        b.warnings
    );
    // No temporary or retired folder is left beside it.
    let names: Vec<String> = std::fs::read_dir(fx.ws.join(".agents/skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["review".to_string()]);
    fx.release(&a.token);
    let end = fx.release(&b.token);
    assert_eq!(tree(&fx.ws), before, "nothing of ours stays behind");
    let kept: Vec<_> = end
        .kept
        .iter()
        .filter(|k| k.path.as_str().ends_with("mine.txt"))
        .collect();
    assert_eq!(kept.len(), 1, "{:?}", end.kept);
    assert_eq!(
        std::fs::read(&kept[0].kept_at).unwrap(),
        b"dropped by the user"
    );
    let status = fx.projector.status(&fx.ws).unwrap();
    assert!(
        status
            .kept
            .iter()
            .any(|k| k.path.as_str().ends_with("mine.txt"))
    );
}

#[test]
fn a_user_edit_of_our_file_is_set_aside_and_the_prior_still_comes_back() {
    let fx = Fx::new();
    write_project_review(&fx);
    let before = tree(&fx.ws);
    let src = fx.source("review", &[("SKILL.md", b"ours\n")]);
    let a = fx.acquire(&[("review", &src)]);
    fx.write(
        ".agents/skills/review/SKILL.md",
        b"ours, edited by the user\n",
    );
    fx.write(".agents/skills/review/extra/new.md", b"added\n");
    let end = fx.release(&a.token);
    assert_eq!(tree(&fx.ws), before);
    let mut kept: Vec<(String, Vec<u8>)> = end
        .kept
        .iter()
        .map(|k| {
            (
                k.path.to_string(),
                std::fs::read(&k.kept_at).unwrap_or_default(),
            )
        })
        .collect();
    kept.sort();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert_eq!(kept[0].0, ".agents/skills/review/SKILL.md");
    assert_eq!(kept[0].1, b"ours, edited by the user\n");
    assert_eq!(kept[1].0, ".agents/skills/review/extra");
    assert!(Path::new(&end.kept[0].kept_at).exists());
}

#[test]
fn hostile_names_are_refused_and_nothing_is_written() {
    for name in ["../../etc", "/etc", "a/b", "..", ".", "", "x\ny", ".hidden"] {
        let fx = Fx::new();
        let src = fx.source("s", &[("SKILL.md", b"x")]);
        let before = tree(&fx.ws);
        let err = fx
            .try_acquire_with(&CODEX_LIKE, &[(name, &src)], me())
            .expect_err(name);
        assert!(matches!(err, Error::Invalid { .. }), "{name:?}: {err}");
        assert!(err.to_string().contains("skill name"), "{err}");
        assert_eq!(tree(&fx.ws), before, "{name:?}");
        fx.assert_no_state();
        assert!(!fx.dir.path().join("etc").exists());
    }
}

#[test]
fn a_symlink_inside_a_source_skill_is_refused() {
    let fx = Fx::new();
    let outside = fx.dir.path().join("secret");
    std::fs::write(&outside, b"secret").unwrap();
    let src = fx.source("s", &[("SKILL.md", b"x")]);
    std::os::unix::fs::symlink(&outside, src.join("leak")).unwrap();
    write_project_review(&fx);
    let before = tree(&fx.ws);
    let ino = || {
        std::os::unix::fs::MetadataExt::ino(
            &std::fs::metadata(fx.ws.join(".agents/skills/review")).unwrap(),
        )
    };
    let prior_ino = ino();
    let err = fx
        .try_acquire_with(&CODEX_LIKE, &[("review", &src)], me())
        .expect_err("symlink in source");
    assert_eq!(ino(), prior_ino, "the project's folder was never moved");
    assert!(matches!(err, Error::Symlink { .. }), "{err}");
    assert!(err.to_string().contains("leak"), "{err}");
    assert_eq!(tree(&fx.ws), before, "nothing half done");
    fx.assert_no_state();
}

#[test]
fn a_symlink_where_the_folder_goes_is_refused() {
    let fx = Fx::new();
    let elsewhere = fx.dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::create_dir_all(fx.ws.join(".agents/skills")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, fx.ws.join(".agents/skills/review")).unwrap();
    let src = fx.source("s", &[("SKILL.md", b"x")]);
    let before = tree(&fx.ws);
    let err = fx
        .try_acquire_with(&CODEX_LIKE, &[("review", &src)], me())
        .expect_err("symlinked target");
    assert!(matches!(err, Error::Symlink { .. }), "{err}");
    assert_eq!(tree(&fx.ws), before);
    assert!(std::fs::read_dir(&elsewhere).unwrap().next().is_none());
    fx.assert_no_state();
}

#[test]
fn a_lost_state_dir_leaves_unprovable_content_and_removes_provable_leftovers() {
    // Provable: the leftover matches its own marker exactly.
    let fx = Fx::new();
    let src = fx.source("s", &[("SKILL.md", b"ours\n")]);
    let before = tree(&fx.ws);
    let a = fx.acquire(&[("review", &src)]);
    std::fs::remove_dir_all(&fx.state).unwrap();
    assert!(!fx.release(&a.token).released);
    let b = fx.acquire(&[("review", &src)]);
    // The workspace's record of what the lost session made: the leftover goes, a new build
    // comes.
    let skill: Vec<&str> = b
        .files
        .iter()
        .filter(|f| f.kind == "skill")
        .map(|f| f.action.as_str())
        .collect();
    assert_eq!(skill, ["removed", "created"], "{:?}", b.files);
    fx.release(&b.token);
    assert_eq!(tree(&fx.ws), before, "a proven leftover is removed");

    // Unprovable: the user dropped a file into the leftover; the folder comes back whole.
    let fx = Fx::new();
    let src = fx.source("s", &[("SKILL.md", b"ours\n")]);
    let a = fx.acquire(&[("review", &src)]);
    std::fs::remove_dir_all(&fx.state).unwrap();
    fx.release(&a.token);
    fx.write(".agents/skills/review/mine.txt", b"user\n");
    // The AGENTS.md block of the lost session is the block engine's own business (its markers
    // prove it ours); the skill folder is what this test watches.
    let skills = |fx: &Fx| {
        let mut t = tree(&fx.ws);
        t.retain(|p, _| p.starts_with(".agents"));
        t
    };
    let leftover = skills(&fx);
    let b = fx.acquire(&[("review", &src)]);
    assert!(
        b.files
            .iter()
            .any(|f| f.kind == "skill" && f.action == "taken_over"),
        "{:?}",
        b.files
    );
    assert!(fx.read(".agents/skills/review/mine.txt").is_none());
    fx.release(&b.token);
    assert_eq!(
        skills(&fx),
        leftover,
        "unprovable content is left as it was"
    );
}

#[test]
fn crash_leftovers_are_cleaned_at_the_next_start() {
    let fx = Fx::new();
    write_project_review(&fx);
    let before = tree(&fx.ws);
    let src = fx.source("s", &[("SKILL.md", b"ours\n")]);
    let doomed = Sleeper::spawn();
    let a = fx.acquire_as(&[("review", &src)], doomed.holder());
    doomed.kill9();
    let status = fx.projector.status(&fx.ws).unwrap();
    assert!(status.stale.contains(&a.token));
    let report = fx.projector.strip_stale(&fx.ws).unwrap();
    assert_eq!(report.stale_cleaned.len(), 1);
    assert_eq!(tree(&fx.ws), before);
    fx.assert_no_state();
}

#[test]
fn moves_across_file_systems_keep_the_prior_exact() {
    let fx = Fx::new();
    write_project_review(&fx);
    let before = tree(&fx.ws);
    let src = fx.source("s", &[("SKILL.md", b"ours\n")]);
    projectfile_core::testing::fsio::faults::force_cross_device(true);
    let a = fx.acquire(&[("review", &src)]);
    let b = fx.acquire(&[("review", &src)]);
    fx.release(&a.token);
    fx.release(&b.token);
    projectfile_core::testing::fsio::faults::force_cross_device(false);
    assert_eq!(tree(&fx.ws), before);
    fx.assert_no_state();
}

#[test]
fn a_state_dir_on_another_file_system_keeps_the_prior_exact() {
    // /dev/shm is a tmpfs on Linux; the workspace lives on the temporary directory's file system.
    let shm = Path::new("/dev/shm");
    let Ok(other) = tempfile::tempdir_in(shm) else {
        eprintln!("no /dev/shm: skipped");
        return;
    };
    let fx = Fx::new();
    let projector = projectfile_core::projector::Projector::new(
        other.path(),
        projectfile_core::Namespace::default(),
    );
    write_project_review(&fx);
    let before = tree(&fx.ws);
    let v1 = fx.source("v1", &[("SKILL.md", b"v1\n")]);
    let v2 = fx.source("v2", &[("SKILL.md", b"v2\n")]);
    let a = projector
        .acquire(&CODEX_LIKE, &fx.request(&[("review", &v1)], me()))
        .unwrap();
    projectfile_core::testing::fsio::faults::force_no_exchange(true);
    let b = projector
        .acquire(&CODEX_LIKE, &fx.request(&[("review", &v2)], me()))
        .unwrap();
    projectfile_core::testing::fsio::faults::force_no_exchange(false);
    assert_eq!(fx.read(".agents/skills/review/SKILL.md").unwrap(), b"v2\n");
    let status = projector.status(&fx.ws).unwrap();
    assert!(status.taken_over[0].stash.starts_with(&fx.ws));
    assert!(
        !other
            .path()
            .join("workspaces")
            .read_dir()
            .unwrap()
            .any(|e| e.unwrap().path().join("stash").exists())
    );
    projector.release(&a.token).unwrap();
    projector.release(&b.token).unwrap();
    assert_eq!(tree(&fx.ws), before);
}
