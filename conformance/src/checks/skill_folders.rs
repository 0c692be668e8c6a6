//! Promise 15: skill folders. A projected skill folder carries our marker, is counted across
//! sessions and goes with the last one; a project's own same-named folder is taken over and put
//! back byte for byte; hostile names and symlinked sources are refused; a lost state directory
//! or a crash leaves nothing of ours behind. Registered for providers whose spec names a skills
//! folder (a provider without one must refuse skills: `unsupported_inputs_are_refused`).

use projectfile_core::holder::Holder;
use projectfile_core::projector::AcquireReceipt;
use projectfile_core::{Error, SessionRequest, SkillInput};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::Subject;
use crate::fixture::{Fixture, HolderProcess};
use crate::tree::Tree;

/// A session request carrying `prompt` and the given skills.
pub fn skill_session(prompt: &str, skills: &[(&str, &Path)]) -> SessionRequest {
    let mut session = SessionRequest::with_prompt(prompt);
    session.skills = skills
        .iter()
        .map(|(name, source)| SkillInput {
            name: (*name).to_string(),
            source: source.to_path_buf(),
        })
        .collect();
    session
}

/// Makes a source skill folder under the fixture's `sources/<label>`.
pub fn skill_source(fx: &Fixture, label: &str, files: &[(&str, &[u8])]) -> PathBuf {
    let dir = fx.sources.join(label);
    std::fs::create_dir_all(&dir).unwrap();
    for (rel, bytes) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    dir
}

/// The provider's skills folder (relative), as its plan places a session's skill. The skill
/// checks are registered only for a provider that takes skills; one that does not must refuse
/// them, which `unsupported_inputs_are_refused` checks.
pub fn skills_dir(subject: &Subject) -> String {
    let fx = Fixture::new();
    let src = skill_source(&fx, "probe", &[("SKILL.md", b"probe\n")]);
    let session = skill_session("x", &[("probe", &src)]);
    let plan = fx.plan_session(subject, &session);
    let skill = plan
        .skills
        .first()
        .unwrap_or_else(|| panic!("{}: claims skills but planned none", subject.name()));
    assert_eq!(skill.name, "probe");
    skill.skills_dir.to_string()
}

pub(crate) fn me() -> Holder {
    Holder::current_process().unwrap()
}

fn acquire(fx: &Fixture, subject: &Subject, skills: &[(&str, &Path)]) -> AcquireReceipt {
    fx.acquire_session_as(subject, skill_session("skills session", skills), me())
        .unwrap()
}

fn action_of(receipt: &AcquireReceipt, path: &str) -> &'static str {
    receipt
        .files
        .iter()
        .find(|f| f.kind == "skill" && f.path == path)
        .map(|f| f.action.as_str())
        .unwrap_or("none")
}

/// The project's own same-named skill folder: nested folders, odd modes, a symlink, bytes that are
/// not UTF-8.
fn write_project_skill(fx: &Fixture, folder: &str) {
    fx.write(
        &format!("{folder}/SKILL.md"),
        b"---\nname: review\n---\nthe project's own\n",
    );
    fx.write(
        &format!("{folder}/refs/deep/notes.txt"),
        b"\xff\xfe\0 not utf-8\n",
    );
    fx.write(&format!("{folder}/run.sh"), b"#!/bin/sh\n");
    let ws = &fx.workspace;
    std::fs::set_permissions(
        ws.join(folder).join("run.sh"),
        PermissionsExt::from_mode(0o750),
    )
    .unwrap();
    std::fs::set_permissions(
        ws.join(folder).join("refs/deep"),
        PermissionsExt::from_mode(0o701),
    )
    .unwrap();
    std::os::unix::fs::symlink("refs/deep/notes.txt", ws.join(folder).join("link")).unwrap();
}

/// Rule 7: a projected skill folder carries the marker, is counted across sessions, and goes with
/// the last one; differently named skills are untouched.
pub fn skills_are_projected_marked_and_removed(subject: &Subject) {
    let dir = skills_dir(subject);
    let fx = Fixture::new();
    fx.write(
        &format!("{dir}/lint/SKILL.md"),
        b"lint: the project's, differently named\n",
    );
    let before = Tree::capture(&fx.workspace);
    let src = skill_source(
        &fx,
        "review",
        &[
            ("SKILL.md", b"---\nname: review\n---\nours\n"),
            ("scripts/run.sh", b"x"),
        ],
    );
    let folder = format!("{dir}/review");
    let a = acquire(&fx, subject, &[("review", &src)]);
    assert_eq!(action_of(&a, &folder), "created", "{:?}", a.files);
    assert_eq!(
        fx.read(&format!("{folder}/SKILL.md")).unwrap(),
        b"---\nname: review\n---\nours\n"
    );
    assert_eq!(fx.read(&format!("{folder}/scripts/run.sh")).unwrap(), b"x");
    let marker = projectfile_core::Namespace::default().skill_marker();
    assert!(
        fx.read(&format!("{folder}/{marker}")).is_some(),
        "the marker is missing"
    );
    let b = acquire(&fx, subject, &[("review", &src)]);
    assert!(fx.release(&a.token));
    assert!(
        fx.read(&format!("{folder}/SKILL.md")).is_some(),
        "removed under a live lease"
    );
    assert!(fx.release(&b.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

/// Rule 7: a same-named folder without the marker is taken over (status lists it) and comes back
/// byte for byte after three sessions, one of them SIGKILLed.
pub fn skill_take_over_restores_the_projects_folder(subject: &Subject) {
    let dir = skills_dir(subject);
    let fx = Fixture::new();
    let folder = format!("{dir}/review");
    write_project_skill(&fx, &folder);
    fx.write(&format!("{dir}/lint/SKILL.md"), b"lint\n");
    let before = Tree::capture(&fx.workspace);
    let src = skill_source(&fx, "review", &[("SKILL.md", b"ours\n")]);
    let a = acquire(&fx, subject, &[("review", &src)]);
    assert_eq!(action_of(&a, &folder), "taken_over", "{:?}", a.files);
    assert_eq!(fx.read(&format!("{folder}/SKILL.md")).unwrap(), b"ours\n");
    let status = fx.projector.status(&fx.workspace).unwrap();
    assert!(
        status
            .taken_over
            .iter()
            .any(|t| t.path.as_str() == folder && t.stash.join("SKILL.md").is_file()),
        "status must list the taken-over folder: {:?}",
        status.taken_over
    );
    let doomed = HolderProcess::spawn();
    let b = fx
        .acquire_session_as(
            subject,
            skill_session("b", &[("review", &src)]),
            doomed.holder(),
        )
        .unwrap();
    let c = acquire(&fx, subject, &[("review", &src)]);
    doomed.kill9();
    let d = acquire(&fx, subject, &[("review", &src)]);
    assert!(d.stale_cleaned.iter().any(|s| s.token == b.token));
    for t in [&a, &c, &d] {
        assert!(fx.release(&t.token));
    }
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

/// Rule 7 and promise 2: a refresh replaces our files (removed ones disappear); a file the user
/// drops into the managed folder is reported, never silently deleted, and set aside at the end.
pub fn skill_refresh_and_user_files(subject: &Subject) {
    let dir = skills_dir(subject);
    let fx = Fixture::new();
    let folder = format!("{dir}/review");
    let before = Tree::capture(&fx.workspace);
    let v1 = skill_source(&fx, "v1", &[("SKILL.md", b"v1\n"), ("old.md", b"old")]);
    let v2 = skill_source(&fx, "v2", &[("SKILL.md", b"v2\n"), ("new.md", b"new")]);
    let a = acquire(&fx, subject, &[("review", &v1)]);
    fx.write(&format!("{folder}/mine.txt"), b"the user's\n");
    let b = acquire(&fx, subject, &[("review", &v2)]);
    assert_eq!(fx.read(&format!("{folder}/SKILL.md")).unwrap(), b"v2\n");
    assert_eq!(fx.read(&format!("{folder}/new.md")).unwrap(), b"new");
    assert!(
        fx.read(&format!("{folder}/old.md")).is_none(),
        "a removed file must disappear"
    );
    assert_eq!(
        fx.read(&format!("{folder}/mine.txt")).unwrap(),
        b"the user's\n"
    );
    assert!(
        b.warnings.iter().any(|w| w.path.ends_with("mine.txt")),
        "{:?}",
        b.warnings
    );
    assert!(fx.release(&a.token));
    let end = fx.projector.release(&b.token).unwrap();
    assert_eq!(Tree::capture(&fx.workspace), before);
    let kept = end
        .kept
        .iter()
        .find(|k| k.path.as_str() == format!("{folder}/mine.txt"))
        .unwrap_or_else(|| panic!("the user's file was not reported: {:?}", end.kept));
    assert_eq!(std::fs::read(&kept.kept_at).unwrap(), b"the user's\n");
}

/// Rule 7: a hostile skill name is refused with a clear error and nothing is written.
pub fn skill_hostile_names_are_refused(subject: &Subject) {
    skills_dir(subject);
    for name in ["../../etc", "/etc/passwd", "a/b", "..", "x\u{7}y", ""] {
        let fx = Fixture::new();
        let src = skill_source(&fx, "s", &[("SKILL.md", b"x")]);
        let before = Tree::capture(&fx.workspace);
        let error = fx
            .acquire_session_as(subject, skill_session("x", &[(name, &src)]), me())
            .expect_err(name);
        assert!(matches!(error, Error::Invalid { .. }), "{name:?}: {error}");
        assert!(error.to_string().contains("skill name"), "{error}");
        assert_eq!(Tree::capture(&fx.workspace), before, "{name:?}");
        assert!(std::fs::read_dir(&fx.outside).unwrap().next().is_none());
        fx.assert_no_ledger();
    }
}

/// Promise 10: a symlink inside a source skill is refused, never followed out of the skill.
pub fn skill_source_symlinks_are_refused(subject: &Subject) {
    let dir = skills_dir(subject);
    let fx = Fixture::new();
    std::fs::write(fx.outside.join("secret"), b"secret").unwrap();
    let src = skill_source(&fx, "s", &[("SKILL.md", b"x")]);
    std::os::unix::fs::symlink(fx.outside.join("secret"), src.join("leak")).unwrap();
    write_project_skill(&fx, &format!("{dir}/review"));
    let before = Tree::capture(&fx.workspace);
    let error = fx
        .acquire_session_as(subject, skill_session("x", &[("review", &src)]), me())
        .expect_err("a symlink in the source");
    assert!(matches!(error, Error::Symlink { .. }), "{error}");
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

/// Rule 8 for skills: with the state directory lost between start and end, a leftover that its own
/// marker proves ours is removed by the next start; one the user changed is left as it was.
pub fn skill_lost_state_dir(subject: &Subject) {
    let dir = skills_dir(subject);
    let folder = format!("{dir}/review");
    for user_changes_it in [false, true] {
        let fx = Fixture::new();
        let src = skill_source(&fx, "s", &[("SKILL.md", b"ours\n")]);
        let a = acquire(&fx, subject, &[("review", &src)]);
        std::fs::remove_dir_all(&fx.state).unwrap();
        assert!(!fx.release(&a.token), "the ledger is gone");
        if user_changes_it {
            fx.write(&format!("{folder}/mine.txt"), b"user\n");
        }
        let leftover: Vec<(String, crate::tree::Node)> = Tree::capture(&fx.workspace)
            .0
            .into_iter()
            .filter(|(p, _)| p.starts_with(&format!("{folder}/")))
            .collect();
        let b = acquire(&fx, subject, &[("review", &src)]);
        // A proven leftover, named by the workspace's record of what sessions made, goes before
        // the start builds its own; a changed one is the user's, taken over like theirs.
        let expected = if user_changes_it {
            "taken_over"
        } else {
            "removed"
        };
        assert_eq!(action_of(&b, &folder), expected, "{:?}", b.files);
        assert!(fx.release(&b.token));
        let after: Vec<(String, crate::tree::Node)> = Tree::capture(&fx.workspace)
            .0
            .into_iter()
            .filter(|(p, _)| p.starts_with(&format!("{folder}/")))
            .collect();
        if user_changes_it {
            assert_eq!(after, leftover, "unprovable content must be left as it was");
        } else {
            assert!(after.is_empty(), "a proven leftover must go: {after:?}");
        }
    }
}

/// Promise 6 for skills: a SIGKILLed holder's skill folder is cleaned at the next start and the
/// project's own folder comes back.
pub fn skill_crash_leftovers_are_cleaned(subject: &Subject) {
    let dir = skills_dir(subject);
    let fx = Fixture::new();
    write_project_skill(&fx, &format!("{dir}/review"));
    let before = Tree::capture(&fx.workspace);
    let src = skill_source(&fx, "s", &[("SKILL.md", b"ours\n")]);
    let doomed = HolderProcess::spawn();
    let a = fx
        .acquire_session_as(
            subject,
            skill_session("x", &[("review", &src)]),
            doomed.holder(),
        )
        .unwrap();
    doomed.kill9();
    let next = acquire(&fx, subject, &[]);
    assert!(next.stale_cleaned.iter().any(|s| s.token == a.token));
    assert!(fx.release(&next.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}
