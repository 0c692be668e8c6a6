//! Runtime links: `project/` and `output/` are created when absent, verified at every launch,
//! never overwritten or adopted, and cleanup removes the runtime without touching the targets.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::fs;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};

use projectfile_core::reader::Mode;
use projectfile_core::runtime::{Runtime, RuntimeKey, SessionId};
use projectfile_core::testing::fsio::links::{
    ensure_link, remove_link, remove_runtime, verify_link,
};
use tempfile::TempDir;

struct Fixture {
    _tmp: TempDir,
    root: PathBuf,
    real: PathBuf,
    other: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("runtimes");
    let real = base.join("real-project");
    let other = base.join("other-project");
    for dir in [&real, &other] {
        fs::create_dir(dir).unwrap();
        fs::write(dir.join("AGENTS.md"), "the user's instructions\n").unwrap();
    }
    Fixture {
        _tmp: tmp,
        root,
        real,
        other,
    }
}

fn key(mode: Mode) -> RuntimeKey {
    RuntimeKey::new(
        "user-1",
        "crew-7",
        SessionId::parse("work:project:7").unwrap(),
        "claude",
        mode,
    )
    .unwrap()
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
                out.push((path, Vec::new()));
            } else if meta.file_type().is_symlink() {
                out.push((
                    path.clone(),
                    fs::read_link(&path)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                ));
            } else {
                out.push((path.clone(), fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_project_link_is_created_then_verified() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Builder)).unwrap();
    let first = runtime.link_project(&f.real).unwrap();
    assert!(first.created);
    assert_eq!(first.link, runtime.project_link());
    assert_eq!(first.target, f.real);
    assert_eq!(fs::read_link(runtime.project_link()).unwrap(), f.real);
    let meta = fs::metadata(&f.real).unwrap();
    assert_eq!((first.dev, first.ino), (meta.dev(), meta.ino()));

    // Next launch: the same link is found and verified, not recreated.
    let second = runtime.link_project(&f.real).unwrap();
    assert!(!second.created);
    assert_eq!(second.target, first.target);
    let verified = runtime.verify_project(&f.real).unwrap();
    assert_eq!(verified.ino, first.ino);
    // A file created through the link is a real project file immediately.
    fs::write(runtime.project_link().join("notes.md"), "hi").unwrap();
    assert_eq!(fs::read_to_string(f.real.join("notes.md")).unwrap(), "hi");
}

#[test]
fn the_link_text_is_canonical_even_when_the_target_is_given_through_a_symlink() {
    let f = fixture();
    let alias = f.root.parent().unwrap().join("alias");
    symlink(&f.real, &alias).unwrap();
    let runtime = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    let record = runtime.link_project(&alias).unwrap();
    assert_eq!(record.target, f.real);
    assert_eq!(fs::read_link(runtime.project_link()).unwrap(), f.real);
}

#[test]
fn a_replaced_link_fails_the_launch_and_is_left_alone() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Builder)).unwrap();
    runtime.link_project(&f.real).unwrap();
    fs::remove_file(runtime.project_link()).unwrap();
    symlink(&f.other, runtime.project_link()).unwrap();

    for err in [
        runtime.link_project(&f.real).unwrap_err(),
        runtime.verify_project(&f.real).unwrap_err(),
    ] {
        let message = err.to_string();
        assert_eq!(
            err.path(),
            Some(runtime.project_link().as_path()),
            "{message}"
        );
        assert!(
            message.contains(&format!("found a symlink to {}", f.other.display())),
            "{message}"
        );
        assert!(
            message.contains(&format!("expected a symlink to {}", f.real.display())),
            "{message}"
        );
    }
    assert_eq!(fs::read_link(runtime.project_link()).unwrap(), f.other);
}

#[test]
fn a_regular_file_or_directory_in_place_of_the_link_fails_the_launch() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Builder)).unwrap();
    fs::write(runtime.project_link(), "not a link").unwrap();
    let message = runtime.link_project(&f.real).unwrap_err().to_string();
    assert!(message.contains("found a regular file"), "{message}");
    assert!(
        message.contains(&runtime.project_link().display().to_string()),
        "{message}"
    );
    assert_eq!(
        fs::read_to_string(runtime.project_link()).unwrap(),
        "not a link"
    );

    fs::remove_file(runtime.project_link()).unwrap();
    fs::create_dir(runtime.project_link()).unwrap();
    fs::write(runtime.project_link().join("AGENTS.md"), "copy").unwrap();
    let message = runtime.link_project(&f.real).unwrap_err().to_string();
    assert!(message.contains("found a directory"), "{message}");
    assert!(
        message.contains("refusing to overwrite or adopt it"),
        "{message}"
    );
    assert_eq!(
        fs::read_to_string(runtime.project_link().join("AGENTS.md")).unwrap(),
        "copy"
    );
}

#[test]
fn a_missing_link_fails_verification() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    let message = runtime.verify_project(&f.real).unwrap_err().to_string();
    assert!(message.contains("found nothing"), "{message}");
}

#[test]
fn a_link_whose_target_vanished_fails() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    runtime.link_project(&f.real).unwrap();
    fs::rename(&f.real, f.real.with_extension("moved")).unwrap();
    assert!(runtime.verify_project(&f.real).is_err());
    // A different folder now at the recorded path: the text matches, and it resolves to the new
    // folder, which is what the path names now.
    fs::create_dir(&f.real).unwrap();
    assert!(runtime.verify_project(&f.real).is_ok());
}

#[test]
fn a_target_that_is_not_a_directory_is_refused() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    let message = runtime
        .link_project(&f.real.join("AGENTS.md"))
        .unwrap_err()
        .to_string();
    assert!(message.contains("must be a directory"), "{message}");
    assert!(fs::symlink_metadata(runtime.project_link()).is_err());
}

#[test]
fn link_names_must_be_plain_components() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    for bad in ["", ".", "..", "a/b", "../escape"] {
        assert!(ensure_link(runtime.dir(), bad, &f.real).is_err(), "{bad:?}");
        assert!(verify_link(runtime.dir(), bad, &f.real).is_err(), "{bad:?}");
    }
}

#[test]
fn output_links_are_retargeted_per_invocation_without_touching_the_outputs() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    let first_out = f.root.parent().unwrap().join("step-1");
    let second_out = f.root.parent().unwrap().join("step-2");
    fs::create_dir(&first_out).unwrap();
    fs::create_dir(&second_out).unwrap();

    let record = runtime.link_output(&first_out).unwrap();
    fs::write(runtime.output_link().join("report.md"), "deliverable").unwrap();
    assert_eq!(
        fs::read_to_string(first_out.join("report.md")).unwrap(),
        "deliverable"
    );

    // The next invocation has its own folder: the old link is wrong and fails the launch...
    assert!(runtime.link_output(&second_out).is_err());
    // ...until the host removes exactly the link it recorded.
    assert!(runtime.unlink_output(&second_out).is_err());
    assert!(runtime.unlink_output(&record.target).unwrap());
    assert!(!runtime.unlink_output(&record.target).unwrap());
    assert_eq!(
        fs::read_to_string(first_out.join("report.md")).unwrap(),
        "deliverable"
    );
    runtime.link_output(&second_out).unwrap();
    runtime.verify_output(&second_out).unwrap();
}

#[test]
fn remove_link_refuses_anything_but_the_recorded_link() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    fs::create_dir(runtime.output_link()).unwrap();
    let message = remove_link(runtime.dir(), "output", &f.real)
        .unwrap_err()
        .to_string();
    assert!(message.contains("found a directory"), "{message}");
    assert!(runtime.output_link().is_dir());
}

#[test]
fn cleanup_removes_the_runtime_and_never_the_targets() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Builder)).unwrap();
    runtime.link_project(&f.real).unwrap();
    let out = f.root.parent().unwrap().join("out");
    fs::create_dir(&out).unwrap();
    fs::write(out.join("artifact"), "a").unwrap();
    runtime.link_output(&out).unwrap();
    fs::write(runtime.dir().join("AGENTS.md"), "session instructions").unwrap();
    fs::create_dir_all(runtime.dir().join(".claude/skills/x")).unwrap();
    fs::write(runtime.dir().join(".claude/skills/x/SKILL.md"), "skill").unwrap();
    let before_real = snapshot(&f.real);
    let before_out = snapshot(&out);

    assert!(runtime.remove().unwrap());
    assert!(!runtime.dir().exists());
    assert_eq!(snapshot(&f.real), before_real);
    assert_eq!(snapshot(&out), before_out);
    // Empty identity levels are pruned, the root itself stays.
    assert!(f.root.is_dir());
    assert_eq!(fs::read_dir(&f.root).unwrap().count(), 0);
    // Twice is fine.
    assert!(!runtime.remove().unwrap());
}

#[test]
fn cleanup_keeps_sibling_runtimes() {
    let f = fixture();
    let builder = Runtime::open(&f.root, key(Mode::Builder)).unwrap();
    let run = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    builder.link_project(&f.real).unwrap();
    run.link_project(&f.real).unwrap();
    assert!(run.remove().unwrap());
    builder.verify_project(&f.real).unwrap();
    assert!(builder.dir().is_dir());
}

#[test]
fn hostile_links_planted_in_the_runtime_leave_their_targets_untouched() {
    let f = fixture();
    let precious = f.root.parent().unwrap().join("precious");
    fs::create_dir_all(precious.join("deep")).unwrap();
    fs::write(precious.join("keep.txt"), "keep").unwrap();
    fs::write(precious.join("deep/keep.txt"), "keep too").unwrap();
    let runtime = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    runtime.link_project(&f.real).unwrap();
    fs::create_dir_all(runtime.dir().join("a/b")).unwrap();
    symlink(&precious, runtime.dir().join("evil")).unwrap();
    symlink(&precious, runtime.dir().join("a/b/evil")).unwrap();
    symlink(precious.join("keep.txt"), runtime.dir().join("a/evil-file")).unwrap();
    symlink(precious.join("deep"), runtime.dir().join("a/b/evil-deep")).unwrap();
    symlink("/nonexistent/dangling", runtime.dir().join("dangling")).unwrap();
    let before = snapshot(&precious);
    let before_real = snapshot(&f.real);

    assert!(remove_runtime(runtime.dir()).unwrap());
    assert!(!runtime.dir().exists());
    assert_eq!(snapshot(&precious), before);
    assert_eq!(snapshot(&f.real), before_real);
}

#[test]
fn a_runtime_dir_that_is_itself_a_link_is_refused() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    let precious = f.root.parent().unwrap().join("precious");
    fs::create_dir(&precious).unwrap();
    fs::write(precious.join("keep.txt"), "keep").unwrap();
    fs::remove_dir(runtime.dir()).unwrap();
    symlink(&precious, runtime.dir()).unwrap();

    let err = remove_runtime(runtime.dir()).unwrap_err();
    assert!(err.to_string().contains("found a symlink"), "{err}");
    assert_eq!(
        fs::read_to_string(precious.join("keep.txt")).unwrap(),
        "keep"
    );
    // Opening the runtime refuses too, and so do link operations.
    assert!(Runtime::open(&f.root, key(Mode::Run)).is_err());
    assert!(runtime.link_project(&f.real).is_err());
    assert!(fs::symlink_metadata(precious.join("project")).is_err());
}

#[test]
fn an_identity_level_replaced_by_a_link_is_refused() {
    let f = fixture();
    let runtime = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    let level = runtime.dir().parent().unwrap().to_path_buf();
    fs::remove_dir(runtime.dir()).unwrap();
    fs::remove_dir(&level).unwrap();
    symlink(&f.other, &level).unwrap();
    let message = Runtime::open(&f.root, key(Mode::Run))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("expected a directory, found a symlink"),
        "{message}"
    );
    assert!(!f.other.join("run").exists());
}

#[test]
fn removing_an_absent_runtime_is_not_an_error() {
    let f = fixture();
    let runtime = Runtime::locate(&f.root, key(Mode::Run)).unwrap();
    assert!(!runtime.remove().unwrap());
    assert!(!remove_runtime(&f.root.join("nope")).unwrap());
}

#[test]
fn the_runtime_directory_is_private_and_stable() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let first = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    let mode = fs::metadata(first.dir()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let again = Runtime::open(&f.root, key(Mode::Run)).unwrap();
    assert_eq!(first.dir(), again.dir());
    assert_eq!(
        first.dir(),
        Runtime::locate(&f.root, key(Mode::Run)).unwrap().dir()
    );
    assert_eq!(again.root(), f.root);
}
