//! One launch in a runtime, through the library: it holds exactly the links it asked for (our
//! stale links, whatever a crash left, are removed or replaced and never followed; anything we did
//! not make fails the launch with nothing changed), the launch lock keeps launches and removal
//! apart, nothing of the runtime is followed through a link, and a property over launch histories
//! with crashes in between.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use projectfile_conformance::Tree;
use projectfile_core::reader::Mode;
use projectfile_core::runtime::{
    AttachAccess, Attachment, CLI_HOME_DIR, Launch, LaunchLinks, Runtime, RuntimeKey, SessionId,
};
use projectfile_core::testing::fsio::links::{LAUNCH_LOCK, LINK_RECORD};
use proptest::prelude::*;
use rstest::rstest;

const NO_WAIT: Duration = Duration::ZERO;

struct Fixture {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    project: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let project = base.join("project");
    fs::create_dir(&project).unwrap();
    fs::write(project.join("AGENTS.md"), "the user's rules\n").unwrap();
    for name in ["a", "b", "c", "outside"] {
        fs::create_dir(base.join(name)).unwrap();
        fs::write(base.join(name).join("keep.txt"), name).unwrap();
    }
    Fixture {
        root: base.join("runtimes"),
        _tmp: tmp,
        base,
        project,
    }
}

fn key() -> RuntimeKey {
    RuntimeKey::new(
        "user-1",
        "crew-7",
        SessionId::parse("work:project:7").unwrap(),
        "codex",
        Mode::Builder,
    )
    .unwrap()
}

impl Fixture {
    fn launch(&self, links: &LaunchLinks) -> projectfile_core::Result<Launch> {
        Runtime::launch(&self.root, key(), links, NO_WAIT)
    }
    fn dir(&self) -> PathBuf {
        Runtime::locate(&self.root, key())
            .unwrap()
            .dir()
            .to_path_buf()
    }
    fn folder(&self, name: &str) -> PathBuf {
        self.base.join(name)
    }
    /// A launch with `output/` linking `name`, ended; returns the runtime and the link record as
    /// the launch had written it (what a SIGKILL would have left, together with the link).
    fn record_of_a_launch_with_output(&self, name: &str) -> (PathBuf, Vec<u8>) {
        let launch = self
            .launch(&LaunchLinks::new(&self.project).with_output(self.folder(name)))
            .unwrap();
        let dir = launch.dir().to_path_buf();
        let record = fs::read(dir.join(LINK_RECORD)).unwrap();
        drop(launch);
        (dir, record)
    }

    /// Every folder a link may point at, captured.
    fn targets(&self) -> Vec<Tree> {
        ["project", "a", "b", "c", "outside"]
            .iter()
            .map(|n| Tree::capture(&self.base.join(n)))
            .collect()
    }
}

/// The links in the runtime (`project`, `output`, `attached/*`) and what they point at.
fn links_in(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for slot in ["project", "output"] {
        if let Ok(target) = fs::read_link(dir.join(slot)) {
            out.push((slot.to_string(), target));
        }
    }
    if let Ok(entries) = fs::read_dir(dir.join("attached")) {
        for entry in entries {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            out.push((
                format!("attached/{name}"),
                fs::read_link(entry.path()).unwrap(),
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn a_launch_links_what_it_asked_for_and_closing_keeps_only_the_project() {
    let f = fixture();
    let links = LaunchLinks::new(&f.project)
        .with_output(f.folder("a"))
        .with_attached(Attachment::new("docs", f.folder("b"), AttachAccess::FollowMode).unwrap())
        .with_attached(Attachment::new("refs", f.folder("c"), AttachAccess::ReadOnly).unwrap());
    let launch = f.launch(&links).unwrap();
    assert_eq!(launch.dir(), f.dir());
    assert!(launch.project().created);
    assert_eq!(launch.output().unwrap().target, f.folder("a"));
    assert_eq!(launch.attached().len(), 2);
    assert_eq!(
        links_in(launch.dir()),
        vec![
            ("attached/docs".into(), f.folder("b")),
            ("attached/refs".into(), f.folder("c")),
            ("output".into(), f.folder("a")),
            ("project".into(), f.project.clone()),
        ]
    );
    assert!(launch.close().unwrap().is_empty());
    assert_eq!(
        links_in(&f.dir()),
        vec![("project".into(), f.project.clone())]
    );
    assert!(!f.dir().join("attached").exists());
    // The next launch finds its project link and keeps it.
    let again = f.launch(&LaunchLinks::new(&f.project)).unwrap();
    assert!(!again.project().created);
}

/// The states a crash can leave (the record is written before the links are made), each with a
/// launch after it that wants `output/` elsewhere or not at all.
#[rstest]
#[case::killed_after_the_launch(&["a"], Some("a"), Some("b"))]
#[case::killed_after_the_launch_next_wants_none(&["a"], Some("a"), None)]
#[case::killed_before_the_link_was_made(&["a"], None, None)]
#[case::killed_while_replacing_old_gone(&["a", "b"], None, Some("c"))]
#[case::killed_while_replacing_new_made(&["a", "b"], Some("b"), None)]
#[case::killed_while_replacing_old_still_there(&["a", "b"], Some("a"), Some("b"))]
fn whatever_a_crash_left_of_ours_is_cleaned_at_the_next_launch(
    #[case] recorded: &[&str],
    #[case] on_disk: Option<&str>,
    #[case] next: Option<&str>,
) {
    let f = fixture();
    f.launch(&LaunchLinks::new(&f.project))
        .unwrap()
        .close()
        .unwrap();
    let dir = f.dir();
    let mut record: Vec<serde_json::Value> =
        vec![serde_json::json!({"slot": "project", "target": f.project})];
    for name in recorded {
        record.push(serde_json::json!({"slot": "output", "target": f.folder(name)}));
    }
    fs::remove_file(dir.join(LINK_RECORD)).unwrap();
    fs::write(
        dir.join(LINK_RECORD),
        serde_json::json!({"version": 1, "links": record}).to_string(),
    )
    .unwrap();
    if let Some(name) = on_disk {
        symlink(f.folder(name), dir.join("output")).unwrap();
    }
    let before = f.targets();
    let mut links = LaunchLinks::new(&f.project);
    if let Some(name) = next {
        links = links.with_output(f.folder(name));
    }
    let launch = f.launch(&links).unwrap();
    let mut expected = vec![("project".to_string(), f.project.clone())];
    if let Some(name) = next {
        expected.push(("output".to_string(), f.folder(name)));
    }
    expected.sort();
    assert_eq!(links_in(launch.dir()), expected);
    drop(launch);
    assert_eq!(f.targets(), before, "a link's target changed");
}

#[test]
fn a_foreign_thing_fails_the_launch_before_any_of_our_changes() {
    let f = fixture();
    // A killed launch left our output link to a, and something foreign sits in attached/.
    let (dir, record) = f.record_of_a_launch_with_output("a");
    symlink(f.folder("a"), dir.join("output")).unwrap();
    fs::write(dir.join(LINK_RECORD), &record).unwrap();
    fs::create_dir(dir.join("attached")).unwrap();
    symlink(f.folder("outside"), dir.join("attached/stray")).unwrap();
    let before = Tree::capture(&dir);
    let err = f.launch(&LaunchLinks::new(&f.project)).unwrap_err();
    assert_eq!(
        err.path(),
        Some(dir.join("attached/stray").as_path()),
        "{err}"
    );
    assert!(err.to_string().contains("did not make"), "{err}");
    assert_eq!(Tree::capture(&dir), before, "nothing may change");
}

/// A link we did not make is not ours even when its text is exactly what the launch wants:
/// the record does not name it, so the launch fails and leaves it (and its folder) alone.
#[test]
fn a_foreign_link_with_the_wanted_text_fails_the_launch() {
    let f = fixture();
    drop(f.launch(&LaunchLinks::new(&f.project)).unwrap());
    let dir = f.dir();
    let docs = f.folder("a");
    fs::create_dir(dir.join("attached")).unwrap();
    symlink(docs.canonicalize().unwrap(), dir.join("attached/d")).unwrap();
    symlink(f.folder("b").canonicalize().unwrap(), dir.join("output")).unwrap();
    let before = Tree::capture(&dir);
    let links = LaunchLinks::new(&f.project)
        .with_output(f.folder("b"))
        .with_attached(Attachment::new("d", &docs, AttachAccess::ReadOnly).unwrap());
    let err = f.launch(&links).unwrap_err();
    assert!(err.to_string().contains("did not make"), "{err}");
    assert_eq!(Tree::capture(&dir), before, "nothing may change");
}

#[test]
fn a_stray_entry_with_a_name_that_is_not_utf8_is_not_ours() {
    use std::os::unix::ffi::OsStrExt;
    let f = fixture();
    f.launch(&LaunchLinks::new(&f.project))
        .unwrap()
        .close()
        .unwrap();
    let dir = f.dir();
    fs::create_dir(dir.join("attached")).unwrap();
    let stray = dir
        .join("attached")
        .join(std::ffi::OsStr::from_bytes(b"n\xff"));
    symlink(f.folder("outside"), &stray).unwrap();
    let err = f.launch(&LaunchLinks::new(&f.project)).unwrap_err();
    assert_eq!(err.path(), Some(stray.as_path()), "{err}");
    assert!(fs::symlink_metadata(&stray).is_ok());
}

#[test]
fn the_launch_lock_keeps_launches_and_removal_apart() {
    let f = fixture();
    let runtime = Runtime::locate(&f.root, key()).unwrap();
    let first = f.launch(&LaunchLinks::new(&f.project)).unwrap();
    let err = f.launch(&LaunchLinks::new(&f.project)).unwrap_err();
    assert!(err.to_string().contains("another launch"), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("(pid {})", std::process::id())),
        "{err}"
    );
    let err = runtime.remove_waiting(NO_WAIT).unwrap_err();
    assert!(err.to_string().contains("another launch"), "{err}");
    assert!(f.dir().is_dir());
    drop(first);
    assert!(runtime.remove_waiting(NO_WAIT).unwrap());
    assert!(!f.dir().exists());
}

/// The lock holds whatever the running CLI does to the file that names its holder: a second
/// launch and a removal still wait (and are refused as busy) while the first launch lasts.
#[test]
fn the_launch_lock_holds_when_its_file_is_unlinked() {
    let f = fixture();
    let runtime = Runtime::locate(&f.root, key()).unwrap();
    let first = f.launch(&LaunchLinks::new(&f.project)).unwrap();
    std::fs::remove_file(f.dir().join(LAUNCH_LOCK)).unwrap();
    let err = f.launch(&LaunchLinks::new(&f.project)).unwrap_err();
    assert_eq!(err.kind(), "busy", "{err}");
    let err = runtime.remove_waiting(NO_WAIT).unwrap_err();
    assert_eq!(err.kind(), "busy", "{err}");
    assert!(f.dir().is_dir());
    drop(first);
    assert!(f.launch(&LaunchLinks::new(&f.project)).is_ok());
}

#[rstest]
#[case::the_lock(LAUNCH_LOCK)]
#[case::the_cli_home(CLI_HOME_DIR)]
fn launch_files_planted_as_links_are_refused_not_followed(#[case] name: &str) {
    let f = fixture();
    f.launch(&LaunchLinks::new(&f.project))
        .unwrap()
        .close()
        .unwrap();
    let dir = f.dir();
    let _ = fs::remove_file(dir.join(name));
    symlink(f.folder("outside"), dir.join(name)).unwrap();
    let before = f.targets();
    let result = f
        .launch(&LaunchLinks::new(&f.project))
        .and_then(|launch| launch.private_dir(CLI_HOME_DIR));
    let err = result.unwrap_err();
    assert_eq!(err.path(), Some(dir.join(name).as_path()), "{err}");
    assert_eq!(f.targets(), before);
}

#[test]
fn a_link_record_planted_as_a_link_proves_nothing_and_is_not_followed() {
    let f = fixture();
    let (dir, record) = f.record_of_a_launch_with_output("a");
    // The record now is a link to a copy of a real record: it must not count.
    fs::write(f.folder("outside").join("record.json"), &record).unwrap();
    fs::remove_file(dir.join(LINK_RECORD)).unwrap();
    symlink(
        f.folder("outside").join("record.json"),
        dir.join(LINK_RECORD),
    )
    .unwrap();
    symlink(f.folder("a"), dir.join("output")).unwrap();
    let err = f.launch(&LaunchLinks::new(&f.project)).unwrap_err();
    assert!(err.to_string().contains("proves nothing"), "{err}");
    assert_eq!(
        fs::read(f.folder("outside").join("record.json")).unwrap(),
        record
    );
}

#[test]
fn a_runtime_replaced_during_the_launch_is_detected() {
    let f = fixture();
    let launch = f.launch(&LaunchLinks::new(&f.project)).unwrap();
    launch.check_unchanged().unwrap();
    let moved = f.base.join("moved");
    fs::rename(launch.dir(), &moved).unwrap();
    fs::create_dir(launch.dir()).unwrap();
    let err = launch.check_unchanged().unwrap_err();
    assert_eq!(err.path(), Some(launch.dir()), "{err}");
    assert!(err.to_string().contains("replaced"), "{err}");
}

#[test]
fn private_folders_are_private_and_stay() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let launch = f.launch(&LaunchLinks::new(&f.project)).unwrap();
    let home = launch.private_dir(CLI_HOME_DIR).unwrap();
    assert_eq!(home, f.dir().join(CLI_HOME_DIR));
    assert_eq!(
        fs::metadata(&home).unwrap().permissions().mode() & 0o777,
        0o700
    );
    fs::write(home.join("auth.json"), "{}").unwrap();
    launch.close().unwrap();
    let again = f.launch(&LaunchLinks::new(&f.project)).unwrap();
    assert_eq!(again.private_dir(CLI_HOME_DIR).unwrap(), home);
    assert!(home.join("auth.json").exists());
}

#[rstest]
#[case("")]
#[case(".")]
#[case("..")]
#[case(".hidden")]
#[case("a/b")]
#[case("a b")]
#[case("project")]
#[case("Output")]
#[case("ATTACHED")]
#[case("é")]
#[case("a\0b")]
fn attachment_names_must_be_one_plain_folder_name(#[case] name: &str) {
    let err = Attachment::new(name, "/tmp", AttachAccess::ReadOnly).unwrap_err();
    assert!(err.to_string().contains("attached folder name"), "{err}");
    assert!(Attachment::new(&"a".repeat(65), "/tmp", AttachAccess::ReadOnly).is_err());
    assert!(Attachment::new(&"a".repeat(64), "/tmp", AttachAccess::ReadOnly).is_ok());
    assert!(Attachment::new("v1.2_x-Y", "/tmp", AttachAccess::ReadOnly).is_ok());
}

#[test]
fn duplicate_attachment_names_are_refused_before_anything_is_made() {
    let f = fixture();
    let links = LaunchLinks::new(&f.project)
        .with_attached(Attachment::new("Docs", f.folder("a"), AttachAccess::FollowMode).unwrap())
        .with_attached(Attachment::new("docs", f.folder("b"), AttachAccess::ReadOnly).unwrap());
    let err = f.launch(&links).unwrap_err();
    assert!(err.to_string().contains("given twice"), "{err}");
    assert!(!f.root.exists());
}

#[test]
fn an_attachment_holding_the_runtime_is_refused() {
    let f = fixture();
    let links = LaunchLinks::new(&f.project)
        .with_attached(Attachment::new("all", &f.base, AttachAccess::ReadOnly).unwrap());
    let err = f.launch(&links).unwrap_err();
    assert_eq!(err.path(), Some(f.base.as_path()), "{err}");
    assert!(!f.dir().join("attached").exists());
}

/// One step of a launch history: the output folder and attachments wanted (indexes into
/// `a`, `b`, `c`), and whether the launch is killed (its links left as they are) or closed.
#[derive(Clone, Debug)]
struct Step {
    output: Option<usize>,
    attached: Vec<(usize, usize, bool)>,
    killed: bool,
}

fn step() -> impl Strategy<Value = Step> {
    (
        proptest::option::of(0usize..3),
        proptest::collection::vec((0usize..3, 0usize..3, any::<bool>()), 0..3),
        any::<bool>(),
    )
        .prop_map(|(output, attached, killed)| Step {
            output,
            attached,
            killed,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever happened before (launches with other links, killed or closed), a launch holds
    /// exactly the links it asked for, and no folder a link pointed at ever changes.
    #[test]
    fn every_launch_holds_exactly_what_it_asked_for(history in proptest::collection::vec(step(), 1..6)) {
        let f = fixture();
        let names = ["a", "b", "c"];
        let before = f.targets();
        for step in history {
            let mut links = LaunchLinks::new(&f.project);
            let mut expected = vec![("project".to_string(), f.project.clone())];
            if let Some(i) = step.output {
                links = links.with_output(f.folder(names[i]));
                expected.push(("output".to_string(), f.folder(names[i])));
            }
            let mut used = Vec::new();
            for (name, target, read_only) in &step.attached {
                if used.contains(name) {
                    continue;
                }
                used.push(*name);
                let access = if *read_only { AttachAccess::ReadOnly } else { AttachAccess::FollowMode };
                let attachment = Attachment::new(&format!("n{name}"), f.folder(names[*target]), access).unwrap();
                links = links.with_attached(attachment);
                expected.push((format!("attached/n{name}"), f.folder(names[*target])));
            }
            expected.sort();
            let launch = f.launch(&links).unwrap();
            prop_assert_eq!(links_in(launch.dir()), expected);
            let dir = launch.dir().to_path_buf();
            if step.killed {
                // What a SIGKILL leaves: the links and the record as they are now.
                let record = fs::read(dir.join(LINK_RECORD)).unwrap();
                let left = links_in(&dir);
                drop(launch);
                fs::remove_file(dir.join(LINK_RECORD)).unwrap();
                fs::write(dir.join(LINK_RECORD), record).unwrap();
                for (slot, target) in left {
                    if fs::symlink_metadata(dir.join(&slot)).is_err() {
                        fs::create_dir_all(dir.join(&slot).parent().unwrap()).unwrap();
                        symlink(target, dir.join(&slot)).unwrap();
                    }
                }
            } else {
                prop_assert!(launch.close().unwrap().is_empty());
            }
            prop_assert_eq!(f.targets(), before.clone());
        }
    }
}
