//! Hostile file systems and hostile trees, through the projector (docs/promises.md, promises 8, 10, 11 and
//! 14): symlinks out of the workspace (dangling too), an owned file replaced by a directory
//! mid-session, read-only and immutable files and directories, a full disk, a state directory on
//! another file system, a workspace path that is not UTF-8, and the policy for NFS, SMB/CIFS,
//! FUSE and 9P. Each test's name states the
//! outcome; every one ends with a clear error or a success, and nothing lost.
//!
//! Some cases need root (mounting a small tmpfs, `chattr +i`); tests run as root here. Where a case
//! cannot be set up, the test prints why and skips that assertion rather than pretending.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

use projectfile_conformance::{Fixture, Subject, Tree};
use projectfile_core::guidance::DiscoveryProfile;
use projectfile_core::holder::Holder;
use projectfile_core::projector::{AcquireReceipt, AcquireRequest, Projector};
use projectfile_core::testing::fsio::{self, FsFamily, FsRole};
use projectfile_core::{
    BlockProjection, Error, Namespace, OwnedFileProjection, OwnedRole, Plan, PlanContext, Provider,
    ProviderSpec, RelPath, SessionRequest, SessionTextCarrier,
};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A test-only provider shaped like Pi and Cursor together: the session block in
/// `.pi/APPEND_SYSTEM.md` and an owned rule file `.cursor/rules/x.mdc`.
struct PiCursor;

const PI: &str = ".pi/APPEND_SYSTEM.md";
const RULE: &str = ".cursor/rules/x.mdc";

/// Reads the file its block is in, as Pi does, so the session text is delivered.
const SPEC: ProviderSpec = ProviderSpec::new("pi-cursor", || DiscoveryProfile {
    extra_files: vec![PI.to_string()],
    ..DiscoveryProfile::default()
})
.session_text_in_file()
.writes_owned_files();

impl Provider for PiCursor {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    fn session_plan(&self, ctx: &PlanContext<'_>) -> projectfile_provider::Result<Plan> {
        Ok(Plan {
            blocks: vec![BlockProjection {
                path: RelPath::new(PI)?,
                body: ctx.request.prompt.clone(),
            }],
            owned_files: vec![OwnedFileProjection {
                path: RelPath::new(RULE)?,
                content: format!("---\nalwaysApply: true\n---\n{}\n", ctx.request.prompt),
                mode: None,
                role: OwnedRole::Instructions,
            }],
            session_text: Some(SessionTextCarrier::Block {
                path: RelPath::new(PI)?,
            }),
            ..Plan::default()
        })
    }
}

fn codex() -> Subject {
    Subject::new(projectfile_codex::Codex)
}

fn pi_cursor() -> Subject {
    Subject::new(PiCursor)
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

fn symlink(target: &Path, link: &Path) {
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// Asserts a one-sentence error naming a path under the workspace, and nothing changed.
fn assert_clean_refusal(fx: &Fixture, error: &Error, before: &Tree, outside: &Tree) {
    let message = error.to_string();
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        error
            .path()
            .is_some_and(|p| p.starts_with(&fx.workspace) || p.starts_with(&fx.state)),
        "the error names no path of ours: {message}"
    );
    assert_eq!(
        &Tree::capture(&fx.workspace),
        before,
        "the workspace changed"
    );
    assert_eq!(
        &Tree::capture(&fx.outside),
        outside,
        "something outside the workspace changed"
    );
    fx.assert_no_ledger();
}

// ---------------------------------------------------------------------------------------------
// Symlinks out of the workspace

/// `link` (relative to the workspace) points at `target` outside; with `dangling` the target does
/// not exist. The acquire must refuse as a symlink error and write nothing anywhere.
fn symlink_case(subject: &Subject, link: &str, target: &str, target_is_dir: bool, dangling: bool) {
    let fx = Fixture::new();
    fx.write("README.md", b"project\n");
    let target = fx.outside.join(target);
    if !dangling {
        if target_is_dir {
            std::fs::create_dir_all(&target).unwrap();
            std::fs::write(target.join("keep.md"), b"outside\n").unwrap();
        } else {
            std::fs::write(&target, b"outside\n").unwrap();
        }
    }
    symlink(&target, &fx.workspace.join(link));
    let before = Tree::capture(&fx.workspace);
    let outside = Tree::capture(&fx.outside);
    let error = fx.acquire(subject, "session").expect_err("refused");
    assert!(
        matches!(error, Error::Symlink { .. }),
        "{link} -> {} (dangling {dangling}): {error}",
        target.display()
    );
    assert_clean_refusal(&fx, &error, &before, &outside);
    assert_eq!(target.exists(), !dangling, "the link target was created");
}

#[test]
fn agents_md_symlinked_outside_is_refused_and_the_target_untouched() {
    for dangling in [false, true] {
        symlink_case(&codex(), "AGENTS.md", "theirs.md", false, dangling);
    }
}

#[test]
fn agents_override_symlinked_outside_is_refused() {
    for dangling in [false, true] {
        symlink_case(&codex(), "AGENTS.override.md", "o.md", false, dangling);
    }
}

#[test]
fn dot_cursor_symlinked_outside_is_refused() {
    for dangling in [false, true] {
        symlink_case(&pi_cursor(), ".cursor", "cursor-dir", true, dangling);
    }
}

#[test]
fn dot_cursor_rules_symlinked_outside_is_refused() {
    for dangling in [false, true] {
        symlink_case(&pi_cursor(), ".cursor/rules", "rules-dir", true, dangling);
    }
}

#[test]
fn dot_pi_symlinked_outside_is_refused() {
    for dangling in [false, true] {
        symlink_case(&pi_cursor(), ".pi", "pi-dir", true, dangling);
    }
}

#[test]
fn pi_append_system_and_cursor_rule_symlinked_outside_are_refused() {
    for dangling in [false, true] {
        symlink_case(&pi_cursor(), PI, "append.md", false, dangling);
        symlink_case(&pi_cursor(), RULE, "x.mdc", false, dangling);
    }
}

#[test]
fn symlink_loop_on_the_way_is_refused() {
    let fx = Fixture::new();
    std::os::unix::fs::symlink(".pi", fx.workspace.join(".pi")).unwrap();
    let before = Tree::capture(&fx.workspace);
    let error = fx.acquire(&pi_cursor(), "x").expect_err("refused");
    assert!(matches!(error, Error::Symlink { .. }), "{error}");
    assert_clean_refusal(&fx, &error, &before, &Tree::capture(&fx.outside));
}

// ---------------------------------------------------------------------------------------------
// An owned file replaced by a directory mid-session

#[test]
fn owned_file_replaced_by_a_directory_is_left_alone_with_a_warning_and_cleaned_once_gone() {
    let fx = Fixture::new();
    let subject = pi_cursor();
    fx.write("README.md", b"project\n");
    let original = Tree::capture(&fx.workspace);
    let receipt = fx.acquire(&subject, "session").unwrap();
    // The user (or a tool) replaces our rule file with a directory holding their own file.
    std::fs::remove_file(fx.workspace.join(RULE)).unwrap();
    fx.write(&format!("{RULE}/theirs.md"), b"user data\n");
    let with_dir = Tree::capture(&fx.workspace);

    // Release succeeds, takes our block out, and leaves the directory alone with a warning.
    let released = fx.projector.release(&receipt.token).unwrap();
    assert!(released.released);
    assert!(
        released
            .warnings
            .iter()
            .any(|w| w.path.ends_with(RULE) && w.message.contains("directory")),
        "{:?} {:?}",
        released.warnings,
        released.pending
    );
    assert_eq!(
        fx.read(&format!("{RULE}/theirs.md")).unwrap(),
        b"user data\n"
    );
    assert!(fx.read(PI).is_none(), "our block file is gone");
    let _ = with_dir;

    // A new start refuses clearly while the directory stands where our file goes.
    let error = fx.acquire(&subject, "next").expect_err("refused");
    assert!(error.to_string().contains(RULE), "{error}");
    assert!(matches!(error, Error::Unsafe { .. }), "{error}");
    assert_eq!(
        fx.read(&format!("{RULE}/theirs.md")).unwrap(),
        b"user data\n"
    );

    // Once the user removes it, strip-stale finishes the cleaning: the workspace is the original.
    std::fs::remove_dir_all(fx.workspace.join(RULE)).unwrap();
    let report = fx.projector.strip_stale(&fx.workspace).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(Tree::capture(&fx.workspace), original);
    fx.assert_no_ledger();
}

// ---------------------------------------------------------------------------------------------
// Read-only and immutable files and directories

#[test]
fn read_only_0444_agents_md_gets_the_block_and_keeps_its_mode() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"read-only rules\n");
    let path = fx.workspace.join("AGENTS.md");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = Tree::capture(&fx.workspace);
    let receipt = fx.acquire(&codex(), "session").unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o444, "the mode was not kept while the block is in");
    assert!(fx.release(&receipt.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

/// `chattr +i` on a path, undone on drop. `Err` says why it could not be set.
struct Immutable(PathBuf);

impl Immutable {
    fn set(path: &Path) -> std::result::Result<Immutable, String> {
        let out = Command::new("chattr")
            .arg("+i")
            .arg(path)
            .output()
            .map_err(|e| format!("chattr is not available: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "chattr +i failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Immutable(path.to_path_buf()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

/// Makes `path` unwritable: `chattr +i` as root (permission bits do not stop root), `chmod a-w`
/// otherwise. `Err` says why neither could be done.
enum Locked {
    Immutable(#[allow(dead_code)] Immutable),
    Mode(PathBuf, u32),
}

impl Locked {
    fn lock(path: &Path) -> std::result::Result<Locked, String> {
        if is_root() {
            return Immutable::set(path).map(Locked::Immutable);
        }
        let mode = std::fs::metadata(path).unwrap().permissions().mode();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & !0o222)).unwrap();
        Ok(Locked::Mode(path.to_path_buf(), mode))
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        if let Locked::Mode(path, mode) = self {
            let _ = std::fs::set_permissions(&*path, std::fs::Permissions::from_mode(*mode));
        }
    }
}

#[test]
fn unwritable_agents_md_is_refused_with_the_path_and_nothing_left() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"locked rules\n");
    let path = fx.workspace.join("AGENTS.md");
    if !is_root() {
        // A 0444 file is replaced by rename; only its directory's bits stop a non-root writer.
        eprintln!("SKIP: not root, and permission bits cannot make a renamed-over file unwritable");
        return;
    }
    let guard = match Locked::lock(&path) {
        Ok(g) => g,
        Err(reason) => {
            eprintln!("SKIP: {reason} (running as root, where permission bits do not block)");
            return;
        }
    };
    let before = Tree::capture(&fx.workspace);
    let error = fx.acquire(&codex(), "session").expect_err("refused");
    assert!(matches!(error, Error::Io { .. }), "{error}");
    assert!(error.to_string().contains("AGENTS.md"), "{error}");
    assert_clean_refusal(&fx, &error, &before, &Tree::capture(&fx.outside));
    drop(guard);
    // Unlocked again, the same start works.
    let receipt = fx.acquire(&codex(), "session").unwrap();
    assert!(fx.release(&receipt.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
}

#[test]
fn unwritable_workspace_directory_is_refused_with_the_path_and_nothing_left() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"rules\n");
    let guard = match Locked::lock(&fx.workspace) {
        Ok(g) => g,
        Err(reason) => {
            eprintln!("SKIP: {reason}");
            return;
        }
    };
    let before = Tree::capture(&fx.workspace);
    let error = fx.acquire(&codex(), "session").expect_err("refused");
    assert!(matches!(error, Error::Io { .. }), "{error}");
    assert!(
        error.to_string().contains("AGENTS.md"),
        "the error names the file: {error}"
    );
    assert_clean_refusal(&fx, &error, &before, &Tree::capture(&fx.outside));
    drop(guard);
}

#[test]
fn unwritable_owned_file_directory_is_refused_and_the_prior_file_kept() {
    let fx = Fixture::new();
    fx.write(RULE, b"the user's rule\n");
    let guard = match Locked::lock(&fx.workspace.join(".cursor/rules")) {
        Ok(g) => g,
        Err(reason) => {
            eprintln!("SKIP: {reason}");
            return;
        }
    };
    let before = Tree::capture(&fx.workspace);
    let error = fx.acquire(&pi_cursor(), "session").expect_err("refused");
    assert!(error.to_string().contains(RULE), "{error}");
    assert_clean_refusal(&fx, &error, &before, &Tree::capture(&fx.outside));
    drop(guard);
}

// ---------------------------------------------------------------------------------------------
// Full disk and another file system

/// A small tmpfs mounted for one test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(path: &Path, size: &str) -> std::result::Result<Tmpfs, String> {
        if !is_root() {
            return Err("not root, cannot mount a tmpfs".into());
        }
        std::fs::create_dir_all(path).unwrap();
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(path)
            .output()
            .map_err(|e| format!("mount is not available: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs is not permitted here: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Tmpfs(path.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the file system holding `dir` until ENOSPC.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![0x5a_u8; 4096];
    while f.write_all(&chunk).is_ok() {}
    let _ = f.sync_all();
}

fn acquire_with(
    projector: &Projector,
    provider: &dyn Provider,
    workspace: &Path,
    prompt: &str,
) -> std::result::Result<AcquireReceipt, Error> {
    let request = AcquireRequest::new(
        workspace,
        SessionRequest::with_prompt(prompt),
        Holder::current_process().unwrap(),
    );
    projector.acquire(provider, &request)
}

#[test]
fn full_disk_is_refused_with_enospc_naming_the_file_and_nothing_left() {
    let base = tempfile::tempdir().unwrap();
    let mount = base.path().join("small");
    let _tmpfs = match Tmpfs::mount(&mount, "64k") {
        Ok(t) => t,
        Err(reason) => {
            eprintln!("SKIP: {reason}");
            return;
        }
    };
    let ws = mount.join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("AGENTS.md"), b"rules on a full disk\n").unwrap();
    fill(&mount);
    let before = Tree::capture(&ws);
    let state = base.path().join("state");
    let projector = Projector::new(&state, Namespace::default());
    let error = acquire_with(&projector, &projectfile_codex::Codex, &ws, "session")
        .expect_err("a full disk refuses");
    let message = error.to_string();
    assert!(matches!(error, Error::Io { .. }), "{message}");
    assert!(message.contains("AGENTS.md"), "{message}");
    assert!(message.contains("No space left on device"), "{message}");
    assert_eq!(Tree::capture(&ws), before, "the workspace changed");
    assert!(
        !std::fs::read_dir(&ws).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains(fsio::TEMP_INFIX)),
        "a temporary file was left"
    );
    assert!(projector.status(&ws).unwrap().leases.is_empty());
    // Space again: the same start works and the release gives the bytes back.
    std::fs::remove_file(mount.join("filler")).unwrap();
    let receipt = acquire_with(&projector, &projectfile_codex::Codex, &ws, "session").unwrap();
    assert!(projector.release(&receipt.token).unwrap().released);
    assert_eq!(Tree::capture(&ws), before);
}

#[test]
fn state_dir_on_a_full_disk_is_refused_before_the_workspace_is_touched() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"rules\n");
    let mount = fx.outside.join("small-state");
    let _tmpfs = match Tmpfs::mount(&mount, "64k") {
        Ok(t) => t,
        Err(reason) => {
            eprintln!("SKIP: {reason}");
            return;
        }
    };
    fill(&mount);
    let before = Tree::capture(&fx.workspace);
    let projector = Projector::new(mount.join("state"), Namespace::default());
    let error = acquire_with(&projector, &projectfile_codex::Codex, &fx.workspace, "s")
        .expect_err("refused");
    let message = error.to_string();
    assert!(message.contains("No space left on device"), "{message}");
    assert!(
        error.path().is_some_and(|p| p.starts_with(&mount)),
        "{message}"
    );
    assert_eq!(
        Tree::capture(&fx.workspace),
        before,
        "the workspace changed"
    );
}

/// A directory on a different file system than `than`, if one can be had.
fn other_fs_dir(
    than: &Path,
    scratch: &Path,
) -> std::result::Result<(PathBuf, Option<Tmpfs>), String> {
    let dev = |p: &Path| std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(p).unwrap());
    match Tmpfs::mount(scratch, "16m") {
        Ok(t) => return Ok((scratch.to_path_buf(), Some(t))),
        Err(reason) => eprintln!("no tmpfs ({reason}); trying /dev/shm"),
    }
    let shm = Path::new("/dev/shm");
    if shm.is_dir() && dev(shm) != dev(than) {
        let dir = tempfile::Builder::new()
            .prefix("projectfile-state-")
            .tempdir_in(shm)
            .map_err(|e| e.to_string())?
            .keep();
        return Ok((dir, None));
    }
    Err("neither a tmpfs mount nor a /dev/shm on another file system".into())
}

#[test]
fn state_dir_on_another_file_system_round_trips_with_stash_and_ledger() {
    let fx = Fixture::new();
    fx.write(PI, b"pi user text\n");
    fx.write(RULE, b"the user's own rule\n");
    std::fs::set_permissions(
        fx.workspace.join(RULE),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    let (state, _mount) = match other_fs_dir(&fx.workspace, &fx.outside.join("other-fs")) {
        Ok(v) => v,
        Err(reason) => {
            eprintln!("SKIP: {reason}");
            return;
        }
    };
    let dev = |p: &Path| std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(p).unwrap());
    assert_ne!(dev(&state), dev(&fx.workspace), "not another file system");
    let before = Tree::capture(&fx.workspace);
    let projector = Projector::new(state.join("pf"), Namespace::default());
    let a = acquire_with(&projector, &PiCursor, &fx.workspace, "one").unwrap();
    let b = acquire_with(&projector, &PiCursor, &fx.workspace, "two").unwrap();
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    assert!(fx.read(RULE).unwrap().ends_with(b"two\n"));
    assert!(projector.release(&a.token).unwrap().released);
    assert!(projector.release(&b.token).unwrap().released);
    assert_eq!(Tree::capture(&fx.workspace), before);
    assert!(projector.status(&fx.workspace).unwrap().entries.is_empty());
    if _mount.is_none() {
        let _ = std::fs::remove_dir_all(&state);
    }
}

// ---------------------------------------------------------------------------------------------
// NFS, SMB/CIFS, FUSE, 9P

#[test]
fn remote_file_systems_are_refused_or_warned_by_policy() {
    let magic = |m: u32| FsFamily::from_magic(m);
    assert_eq!(magic(0x6969), Some(FsFamily::Nfs));
    assert_eq!(magic(0x517B), Some(FsFamily::Smb));
    assert_eq!(magic(0xFF53_4D42), Some(FsFamily::Smb));
    assert_eq!(magic(0xFE53_4D42), Some(FsFamily::Smb));
    assert_eq!(magic(0x6573_5546), Some(FsFamily::Fuse));
    assert_eq!(magic(0x0102_1997), Some(FsFamily::NineP));
    assert_eq!(magic(0xEF53), None, "ext4 is local");
    assert_eq!(magic(0x0102_1994), None, "tmpfs is local");
    assert_eq!(magic(0x9123_683E), None, "btrfs is local");
    assert_eq!(magic(0x5846_5342), None, "xfs is local");

    // The state directory holds the lock: refused where locks are not shared, else a warning.
    assert!(FsFamily::Smb.policy(FsRole::State).is_err());
    assert!(FsFamily::NineP.policy(FsRole::State).is_err());
    assert!(matches!(FsFamily::Nfs.policy(FsRole::State), Ok(Some(_))));
    assert!(matches!(FsFamily::Fuse.policy(FsRole::State), Ok(Some(_))));
    // The workspace needs atomic renames: NFS has them, the others are warned about.
    assert_eq!(FsFamily::Nfs.policy(FsRole::Workspace), Ok(None));
    for f in [FsFamily::Smb, FsFamily::Fuse, FsFamily::NineP] {
        let warning = f.policy(FsRole::Workspace).unwrap().unwrap();
        assert!(warning.contains(f.name()), "{warning}");
    }
    let refusal = FsFamily::Smb.policy(FsRole::State).unwrap_err();
    assert!(refusal.contains("--state-dir"), "{refusal}");
}

#[test]
fn local_file_systems_pass_without_a_warning() {
    let fx = Fixture::new();
    assert_eq!(fsio::file_system_family(&fx.workspace).unwrap(), None);
    if Path::new("/dev/shm").is_dir() {
        assert_eq!(
            fsio::file_system_family(Path::new("/dev/shm")).unwrap(),
            None
        );
    }
    assert!(
        fsio::check_file_system(&fx.workspace, FsRole::State)
            .unwrap()
            .is_none()
    );
    let receipt = fx.acquire(&codex(), "x").unwrap();
    assert!(receipt.warnings.is_empty(), "{:?}", receipt.warnings);
    assert!(fx.release(&receipt.token));
    let error = fsio::file_system_family(Path::new("/definitely/not/here")).unwrap_err();
    assert!(
        error.to_string().contains("/definitely/not/here"),
        "{error}"
    );
}

#[test]
fn a_fuse_mount_if_present_is_recognised() {
    // No FUSE tool is installed in CI; when a FUSE file system is mounted on this machine, check
    // that it is recognised, else say so.
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let fuse = mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, at, kind) = (f.next()?, f.next()?, f.next()?);
            (kind.starts_with("fuse.") || kind == "fuse").then(|| PathBuf::from(at))
        })
        .find(|p| std::fs::metadata(p).is_ok());
    match fuse {
        Some(at) => assert_eq!(
            fsio::file_system_family(&at).unwrap(),
            Some(FsFamily::Fuse),
            "{}",
            at.display()
        ),
        None => eprintln!("SKIP: no FUSE file system is mounted here"),
    }
}

#[test]
fn a_workspace_path_that_is_not_utf8_is_refused_before_anything_is_written() {
    use std::os::unix::ffi::OsStrExt;
    let fx = Fixture::new();
    let ws = fx.base.join(std::ffi::OsStr::from_bytes(b"ws\xff\nname"));
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("AGENTS.md"), b"mine\n").unwrap();
    let request = AcquireRequest::new(
        &ws,
        SessionRequest::with_prompt("x"),
        Holder::current_process().unwrap(),
    );
    let refused = fx
        .projector
        .acquire(&projectfile_codex::Codex, &request)
        .unwrap_err();
    assert_eq!(refused.kind(), "unsafe_target", "{refused}");
    assert!(refused.to_string().contains("not valid UTF-8"), "{refused}");
    assert!(fx.projector.status(&ws).is_err());
    assert_eq!(std::fs::read(ws.join("AGENTS.md")).unwrap(), b"mine\n");
    fx.assert_no_ledger();
}
