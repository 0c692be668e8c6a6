//! Safe file I/O: the only module allowed to open for writing, rename, lock or remove files
//! (enforced by clippy's `disallowed-methods`, see `clippy.toml`).
//!
//! Every path below a [`Root`] is reached from the root's descriptor without following any
//! symlink, so nothing is ever read for editing, written or deleted through a symlink: a symlink
//! at the target or at any directory between the root and it makes the operation refuse. Where the
//! kernel has `openat2` (Linux 5.6 and later) the directories on the way are opened in one call
//! with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, which the kernel enforces atomically for every
//! component; otherwise (`ENOSYS`, or `EPERM` from a seccomp filter) component by component with
//! `openat` and `O_NOFOLLOW`. A refusal is always explained by the component walk, so both ways
//! name the same path and reason. Writes are
//! atomic and durable: a temporary file in the same directory, `fsync`, `rename`, `fsync` of the
//! directory, with the replaced file's mode, extended attributes and POSIX ACLs (and, where
//! permitted, owner) kept ([`xattrs`]: an attribute that cannot be carried refuses the write,
//! never drops it silently). A crash at any
//! point leaves the old bytes or the new bytes, plus at most a temporary file that
//! [`Root::remove_temp_files`] cleans at the next start.
//!
//! Locks are `flock`s waited for in the kernel's queue, with a limit: on the calling thread
//! ended by a timer signal in a one-command process ([`lock_alarm`]), on a waiter thread in a
//! library host (see `wait_for_lock`).
//!
//! The [`faults`] submodule lets tests stop the process model after the k-th mutating operation.
#![allow(clippy::disallowed_methods)]

pub mod faults;
pub mod links;
mod lock_alarm;
mod splice;
pub mod tree;
mod xattrs;

pub use lock_alarm::with_lock_wait_on_calling_thread;
pub use lock_alarm::{interrupt_lock_waits, resume_lock_waits};
pub(crate) use lock_alarm::{lock_waits_interrupted, wait_on_calling_thread};
pub use splice::{FileState, OpenFile};
pub use tree::{TreeEntry, TreeKind, move_tree, scan_path};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::plan::{MarkerKind, RelPath};
use crate::provider::{EntryKind, WorkspaceView};

/// The infix of our temporary files: `.{name}.projectfile-tmp.{random}`.
pub const TEMP_INFIX: &str = ".projectfile-tmp.";

/// A regular file read without following symlinks, with what is needed to write it back exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSnapshot {
    /// The whole content.
    pub bytes: Vec<u8>,
    /// Permission bits (`st_mode & 0o7777`).
    pub mode: u32,
}

/// An open handle on a destination root (a workspace, a runtime, or our state directory).
#[derive(Debug)]
pub struct Root {
    path: PathBuf,
    fd: OwnedFd,
    /// Bumped before every operation through this handle that can make a directory or leave a
    /// temporary file below it: see [`Root::changes`].
    changes: std::sync::atomic::AtomicU64,
}

/// The directory a path below a [`Root`] is in: the root's own descriptor, borrowed, for a name
/// directly inside the root (no duplicate is made for it), or a descriptor opened below it.
#[derive(Debug)]
pub(crate) enum DirFd<'a> {
    /// The root's own descriptor.
    Root(BorrowedFd<'a>),
    /// A directory opened below the root.
    Opened(OwnedFd),
}

impl AsFd for DirFd<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            DirFd::Root(fd) => fd.as_fd(),
            DirFd::Opened(fd) => fd.as_fd(),
        }
    }
}

impl DirFd<'_> {
    /// A reader of this directory's entries. The root's own descriptor is reopened (`.`): its
    /// read position must stay its own. An opened one is read as it is, without the `fcntl` and
    /// reopening `Dir::read_from` makes.
    fn entries(self) -> rustix::io::Result<rustix::fs::Dir> {
        match self {
            DirFd::Root(fd) => rustix::fs::Dir::new(open_dir_in(fd, c".")?),
            DirFd::Opened(fd) => rustix::fs::Dir::new(fd),
        }
    }
}

fn errno(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from(e)
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

thread_local! {
    /// Directory descriptors this module has asked the kernel for on this thread.
    static DIR_OPENS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many directory descriptors this module has asked the kernel for on the calling thread
/// (every `open`, `openat` and `openat2` of a directory by a `Root`'s walks and listings,
/// answered or refused): tests check that a command opens no directory twice where once does.
pub fn dir_opens_on_this_thread() -> u64 {
    DIR_OPENS.with(std::cell::Cell::get)
}

/// Counts a directory descriptor asked for.
fn note_dir_open() {
    DIR_OPENS.with(|c| c.set(c.get() + 1));
}

/// Opens the directory `name` in `dir` without following a symlink there, counted.
fn open_dir_in<P: rustix::path::Arg>(dir: impl AsFd, name: P) -> rustix::io::Result<OwnedFd> {
    note_dir_open();
    rustix::fs::openat(dir, name, dir_flags(), Mode::empty())
}

/// Whether `openat2` answers here: [`OPENAT2_UNKNOWN`] until first asked, then
/// [`OPENAT2_WORKS`] or [`OPENAT2_MISSING`] (`ENOSYS` on old kernels, `EPERM` under seccomp).
static OPENAT2: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(OPENAT2_UNKNOWN);
const OPENAT2_UNKNOWN: u8 = 0;
const OPENAT2_WORKS: u8 = 1;
const OPENAT2_MISSING: u8 = 2;

thread_local! {
    /// Test hook: walk component by component on this thread even where `openat2` works, so both
    /// ways are tested on one kernel.
    static COMPONENT_WALK_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with `openat2` switched off on the calling thread (the component-by-component walk
/// answers instead), then switches it back. For tests of the fallback.
#[cfg(test)]
pub fn with_component_walk_only<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            COMPONENT_WALK_ONLY.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(COMPONENT_WALK_ONLY.with(|c| c.replace(true)));
    f()
}

/// Opens the directory `path` (relative, no `.` or `..`) below `dir` with `openat2` and
/// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`. `None` when `openat2` is unavailable (or switched off
/// by [`with_component_walk_only`]).
fn open_dir_beneath(dir: &OwnedFd, path: &str) -> Option<rustix::io::Result<OwnedFd>> {
    use std::sync::atomic::Ordering;
    if COMPONENT_WALK_ONLY.with(std::cell::Cell::get)
        || OPENAT2.load(Ordering::Relaxed) == OPENAT2_MISSING
    {
        return None;
    }
    let resolve = rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_SYMLINKS;
    note_dir_open();
    match rustix::fs::openat2(dir, path, dir_flags(), Mode::empty(), resolve) {
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {
            OPENAT2.store(OPENAT2_MISSING, Ordering::Relaxed);
            None
        }
        answer => {
            OPENAT2.store(OPENAT2_WORKS, Ordering::Relaxed);
            Some(answer)
        }
    }
}

thread_local! {
    /// `fsync`s and `fdatasync`s made through this module on this thread.
    static SYNCS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

thread_local! {
    /// Bytes this module has read from files on this thread.
    static BYTES_READ: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many bytes this module has read from files on the calling thread: tests check that a
/// command reads a file once.
pub fn bytes_read_on_this_thread() -> u64 {
    BYTES_READ.with(std::cell::Cell::get)
}

/// Counts `n` bytes read.
fn note_read(n: usize) {
    BYTES_READ.with(|c| c.set(c.get() + n as u64));
}

/// How many `fsync`s and `fdatasync`s this module has made on the calling thread: benchmarks
/// report it, tests check it.
pub fn syncs_on_this_thread() -> u64 {
    SYNCS.with(std::cell::Cell::get)
}

/// `fsync(2)`, counted.
pub(crate) fn sync(fd: impl std::os::fd::AsFd) -> rustix::io::Result<()> {
    SYNCS.with(|c| c.set(c.get() + 1));
    rustix::fs::fsync(fd)
}

/// `fdatasync(2)`, counted.
pub(crate) fn sync_data(fd: impl std::os::fd::AsFd) -> rustix::io::Result<()> {
    SYNCS.with(|c| c.set(c.get() + 1));
    rustix::fs::fdatasync(fd)
}

/// Random lowercase hex from the OS generator, `2 * len` characters.
pub fn random_hex(len: usize) -> Result<String> {
    let mut buf = vec![0u8; len];
    let mut filled = 0;
    while filled < len {
        let n = rustix::rand::getrandom(&mut buf[filled..], rustix::rand::GetRandomFlags::empty())
            .map_err(|e| Error::io("getrandom", "read random bytes", errno(e)))?;
        filled += n;
    }
    Ok(tree::hex(&buf))
}

impl Root {
    /// Opens `path` (which should be canonical: symlinks in the root's own path are followed once,
    /// here, and never below it) as a directory handle.
    pub fn open(path: &Path) -> Result<Root> {
        note_dir_open();
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| Error::io(path, "open the directory", errno(e)))?;
        Ok(Root::of(path.to_path_buf(), fd))
    }

    /// The root's own descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Another handle on the same directory (a duplicated descriptor), for a caller that keeps
    /// one of its own.
    pub fn try_clone(&self) -> Result<Root> {
        let fd = self
            .fd
            .try_clone()
            .map_err(|e| Error::io(&self.path, "duplicate the handle of", e))?;
        Ok(Root::of(self.path.clone(), fd))
    }

    fn of(path: PathBuf, fd: OwnedFd) -> Root {
        Root {
            path,
            fd,
            changes: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// How many operations through this handle so far could have made a directory below it
    /// (`mkdirat`, a rename, an exchange, a tree copied or moved in) or left a temporary file
    /// (every atomic write makes one, and a failure or an injected crash may leave it). While it
    /// stays the same, a directory found missing through this handle is still missing and no
    /// temporary file appeared, unless something else wrote there: a caller holding the lock
    /// over the tree knows nothing did.
    pub fn changes(&self) -> u64 {
        self.changes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Notes an operation [`Root::changes`] counts.
    fn note_change(&self) {
        self.changes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Creates `path` and its missing parents (mode 0700 for the new ones), then opens it. Used
    /// for our own state directory, never inside a workspace.
    pub fn create_private(path: &Path) -> Result<Root> {
        // Usually there already: one `open` instead of `mkdir` + `stat` + `open`.
        if let Ok(root) = Root::open(path) {
            return Ok(root);
        }
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(path)
            .map_err(|e| Error::io(path, "create the directory", e))?;
        Root::open(path)
    }

    /// The root's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The absolute path of `rel` under this root, for messages and receipts.
    pub fn display_path(&self, rel: &RelPath) -> PathBuf {
        self.path.join(rel.as_str())
    }

    /// Opens the directory holding `rel` without following any symlink. `Ok(None)` when a parent
    /// directory does not exist.
    ///
    /// One `openat2` beneath the root where the kernel has it; a refusal (a symlink or a file on
    /// the way) is then explained by the component walk, which names the offending component.
    fn open_parent(&self, rel: &RelPath) -> Result<Option<DirFd<'_>>> {
        let name = rel.file_name();
        let text = rel.as_str();
        if text.len() == name.len() {
            // Directly inside the root: its own descriptor serves, unduplicated.
            return Ok(Some(DirFd::Root(self.fd.as_fd())));
        }
        let parents = &text[..text.len() - name.len() - 1];
        match open_dir_beneath(&self.fd, parents) {
            Some(Ok(fd)) => return Ok(Some(DirFd::Opened(fd))),
            Some(Err(rustix::io::Errno::NOENT)) => return Ok(None),
            Some(Err(_)) | None => {}
        }
        self.walk_to_parent(rel)
    }

    /// [`Root::open_parent`] component by component with `openat` and `O_NOFOLLOW`.
    fn walk_to_parent(&self, rel: &RelPath) -> Result<Option<DirFd<'_>>> {
        let mut current = DirFd::Root(self.fd.as_fd());
        let mut walked = PathBuf::new();
        let components: Vec<&str> = rel.components().collect();
        let parents = components.len().saturating_sub(1);
        for component in &components[..parents] {
            walked.push(component);
            match open_dir_in(&current, *component) {
                Ok(fd) => current = DirFd::Opened(fd),
                Err(rustix::io::Errno::NOENT) => return Ok(None),
                Err(e) => return Err(self.explain(&current, component, &walked, e, true)),
            }
        }
        Ok(Some(current))
    }

    /// Turns an `openat` failure into a precise error: a symlink, not a directory, or plain I/O.
    fn explain(
        &self,
        dir: impl AsFd,
        name: &str,
        walked: &Path,
        e: rustix::io::Errno,
        expect_dir: bool,
    ) -> Error {
        let path = self.path.join(walked);
        if let Ok(stat) = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            let kind = FileType::from_raw_mode(stat.st_mode);
            if kind == FileType::Symlink {
                let target = rustix::fs::readlinkat(&dir, name, Vec::new())
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| "an unreadable target".to_string());
                return Error::Symlink {
                    path,
                    detail: format!("it is a symlink to {target}"),
                };
            }
            if expect_dir && kind != FileType::Directory {
                return Error::Unsafe {
                    path,
                    reason: "expected a directory here but found a file".to_string(),
                };
            }
        }
        Error::io(path, "open", errno(e))
    }

    /// What `rel` is, without following symlinks; [`EntryKind::Other`] when a parent is not a
    /// plain directory (a symlink, a file).
    pub fn kind(&self, rel: &RelPath) -> EntryKind {
        let parent = match self.open_parent(rel) {
            Ok(Some(fd)) => fd,
            Ok(None) => return EntryKind::Missing,
            Err(_) => return EntryKind::Other,
        };
        match rustix::fs::statat(&parent, rel.file_name(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
                FileType::RegularFile => EntryKind::File,
                FileType::Directory => EntryKind::Dir,
                FileType::Symlink => EntryKind::Symlink,
                _ => EntryKind::Other,
            },
            Err(rustix::io::Errno::NOENT) => EntryKind::Missing,
            Err(_) => EntryKind::Other,
        }
    }

    /// Reads the regular file `rel`. `Ok(None)` when it (or a parent) does not exist. Refuses a
    /// symlink anywhere on the way, and anything that is not a regular file.
    pub fn read(&self, rel: &RelPath) -> Result<Option<FileSnapshot>> {
        let Some(parent) = self.open_parent(rel)? else {
            return Ok(None);
        };
        self.read_in(&parent, rel)
    }

    fn read_in(&self, parent: &DirFd<'_>, rel: &RelPath) -> Result<Option<FileSnapshot>> {
        let Some(file) = self.open_file_in(parent, rel)? else {
            return Ok(None);
        };
        let bytes = read_sized(&file.fd, 0, file.stat.st_size)
            .map_err(|e| Error::io(self.display_path(rel), "read", e))?;
        Ok(Some(FileSnapshot {
            bytes,
            mode: file.mode(),
        }))
    }

    /// Opens the parent of `rel`, failing when it is missing.
    fn require_parent(&self, rel: &RelPath) -> Result<DirFd<'_>> {
        match self.open_parent(rel)? {
            Some(fd) => Ok(fd),
            None => Err(Error::io(
                self.display_path(rel),
                "open the parent directory",
                std::io::Error::from(std::io::ErrorKind::NotFound),
            )),
        }
    }

    /// The `lstat` of `rel` inside `parent` when it is a regular file, `None` when absent; a
    /// symlink or anything else is refused.
    fn regular_file_stat(
        &self,
        parent: &DirFd<'_>,
        rel: &RelPath,
    ) -> Result<Option<rustix::fs::Stat>> {
        let name = rel.file_name();
        match rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
                FileType::RegularFile => Ok(Some(stat)),
                FileType::Symlink => Err(self.explain(
                    parent,
                    name,
                    Path::new(rel.as_str()),
                    rustix::io::Errno::LOOP,
                    false,
                )),
                _ => Err(Error::Unsafe {
                    path: self.display_path(rel),
                    reason: "expected a regular file but found a directory or special file"
                        .to_string(),
                }),
            },
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(Error::io(self.display_path(rel), "stat", errno(e))),
        }
    }

    /// Atomically and durably replaces (or creates) the regular file `rel` with `bytes`.
    ///
    /// `mode`: the permission bits to set; `None` keeps the replaced file's mode, or lets the
    /// umask decide for a new file. Refuses when `rel` is a symlink, a directory, or a regular
    /// file with more than one hard link (replacing it would split it from its other names).
    pub fn write_atomic(&self, rel: &RelPath, bytes: &[u8], mode: Option<u32>) -> Result<()> {
        self.replace_file(rel, splice::Content::Bytes(bytes), mode, true)
    }

    /// [`Root::write_atomic`] without any sync: atomic (readers see the old bytes or the new) but
    /// not durable, for notes a power loss may take without harm (they are written again).
    pub fn write_atomic_unsynced(
        &self,
        rel: &RelPath,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> Result<()> {
        self.replace_file(rel, splice::Content::Bytes(bytes), mode, false)
    }

    fn replace_file(
        &self,
        rel: &RelPath,
        content: splice::Content<'_>,
        mode: Option<u32>,
        durable: bool,
    ) -> Result<()> {
        let parent = self.require_parent(rel)?;
        let name = rel.file_name();
        let display = self.display_path(rel);
        let existing = self.regular_file_stat(&parent, rel)?;
        if let Some(stat) = &existing
            && stat.st_nlink > 1
        {
            return Err(Error::Unsafe {
                path: display,
                reason: format!(
                    "the file has {} hard links; replacing it would split it from its other names",
                    stat.st_nlink
                ),
            });
        }

        // What the replaced file carries beyond its bytes, mode and owner: read before anything
        // is made, so a file whose attributes cannot be read is refused with nothing written.
        let attributes = match &existing {
            Some(stat) => Some(xattrs::of_file_at(&parent, name, stat, &display)?),
            None => None,
        };
        faults::check("write_atomic:before_temp", &display)?;
        self.note_change();
        let temp = format!(".{name}{TEMP_INFIX}{}", random_hex(8)?);
        let create_mode = match (mode, &existing) {
            (Some(m), _) => m & 0o7777,
            (None, Some(stat)) => stat.st_mode & 0o7777,
            (None, None) => 0o666,
        };
        let fd = rustix::fs::openat(
            &parent,
            temp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(|e| Error::io(&display, "create a temporary file beside", errno(e)))?;
        let result = self
            .fill_temp(
                &fd,
                &content,
                create_mode,
                existing.as_ref(),
                mode.is_some(),
                &display,
            )
            .and_then(|()| match &attributes {
                Some(attributes) => attributes.carry_to(&fd, &display),
                None => Ok(()),
            })
            .and_then(|()| match durable {
                true => sync(&fd)
                    .map_err(|e| Error::io(&display, "fsync a temporary file beside", errno(e))),
                false => Ok(()),
            });
        if let Err(e) = result {
            let _ = rustix::fs::unlinkat(&parent, temp.as_str(), AtFlags::empty());
            return Err(e);
        }
        drop(fd);
        // An injected crash here leaves the temporary file behind, as a real crash would.
        faults::check("write_atomic:before_rename", &display)?;
        if let Err(e) = rustix::fs::renameat(&parent, temp.as_str(), &parent, name) {
            let _ = rustix::fs::unlinkat(&parent, temp.as_str(), AtFlags::empty());
            return Err(Error::io(
                display,
                "rename the temporary file over",
                errno(e),
            ));
        }
        faults::check("write_atomic:after_rename", &display)?;
        if durable {
            sync(&parent).map_err(|e| Error::io(&display, "fsync the directory of", errno(e)))?;
        }
        Ok(())
    }

    fn fill_temp(
        &self,
        fd: &OwnedFd,
        content: &splice::Content<'_>,
        create_mode: u32,
        existing: Option<&rustix::fs::Stat>,
        explicit_mode: bool,
        display: &Path,
    ) -> Result<()> {
        content
            .write_to(fd)
            .map_err(|e| Error::io(display, "write a temporary file beside", e))?;
        let final_mode = if explicit_mode || existing.is_some() {
            create_mode
        } else {
            // A new file: honour the umask exactly as `open(O_CREAT, 0666)` would.
            let mask = current_umask();
            create_mode & !mask
        };
        rustix::fs::fchmod(fd, Mode::from_raw_mode(final_mode))
            .map_err(|e| Error::io(display, "set the mode of a temporary file beside", errno(e)))?;
        if let Some(stat) = existing {
            // Keep the owner when we may (running as root on a user's file); ignore EPERM.
            let me = rustix::process::geteuid();
            if me.is_root() && (stat.st_uid != 0 || stat.st_gid != 0) {
                let _ = rustix::fs::fchown(
                    fd,
                    Some(rustix::fs::Uid::from_raw(stat.st_uid)),
                    Some(rustix::fs::Gid::from_raw(stat.st_gid)),
                );
            }
        }
        Ok(())
    }

    /// Removes the regular file `rel` (never a symlink, never a directory). `Ok(false)` when it
    /// was already gone.
    pub fn remove_file(&self, rel: &RelPath) -> Result<bool> {
        let Some(parent) = self.open_parent(rel)? else {
            return Ok(false);
        };
        let name = rel.file_name();
        let display = self.display_path(rel);
        if self.regular_file_stat(&parent, rel)?.is_none() {
            return Ok(false);
        }
        faults::check("remove_file", &display)?;
        match rustix::fs::unlinkat(&parent, name, AtFlags::empty()) {
            Ok(()) => {}
            Err(rustix::io::Errno::NOENT) => return Ok(false),
            Err(e) => return Err(Error::io(display, "remove", errno(e))),
        }
        sync(&parent).map_err(|e| Error::io(&display, "fsync the directory of", errno(e)))?;
        Ok(true)
    }

    /// Opens the existing regular file `rel` for writing, without following symlinks, refusing
    /// anything else and a file with other hard links.
    fn open_existing_for_write(&self, rel: &RelPath, flags: OFlags) -> Result<File> {
        let parent = self.require_parent(rel)?;
        let display = self.display_path(rel);
        let fd = rustix::fs::openat(
            &parent,
            rel.file_name(),
            OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK | flags,
            Mode::empty(),
        )
        .map_err(|e| self.explain(&parent, rel.file_name(), Path::new(rel.as_str()), e, false))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io(&display, "stat", errno(e)))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || stat.st_nlink != 1 {
            return Err(Error::Unsafe {
                path: display,
                reason: "expected a regular file with one name".to_string(),
            });
        }
        Ok(File::from(fd))
    }

    /// Appends `bytes` to the existing regular file `rel` (`O_APPEND`, one `write_all`). With
    /// `durable`, `fdatasync`s it before returning, which makes the whole file as it now stands
    /// durable (earlier unsynced appends too). For the ledger journal, whose reader discards a
    /// torn last record.
    pub fn append(&self, rel: &RelPath, bytes: &[u8], durable: bool) -> Result<()> {
        let display = self.display_path(rel);
        faults::check("append", &display)?;
        let mut file = self.open_existing_for_write(rel, OFlags::APPEND)?;
        file.write_all(bytes)
            .map_err(|e| Error::io(&display, "append to", e))?;
        if durable {
            sync_data(&file).map_err(|e| Error::io(&display, "fdatasync", errno(e)))?;
        }
        Ok(())
    }

    /// Writes `pieces`, one after another, over the existing regular file `rel` from `offset`
    /// (the file grows only if they reach past its end). With `durable`, `fdatasync`s it before
    /// returning: into blocks the file already has, written and synced once, that is a write of
    /// the bytes alone, with no size or allocation of the file's to record. For the ledger
    /// journal's sync slots (see `journal`).
    pub fn write_at(
        &self,
        rel: &RelPath,
        offset: u64,
        pieces: &[&[u8]],
        durable: bool,
    ) -> Result<()> {
        let display = self.display_path(rel);
        faults::check("write_at", &display)?;
        let file = self.open_existing_for_write(rel, OFlags::empty())?;
        let mut at = offset;
        for piece in pieces {
            let mut rest: &[u8] = piece;
            while !rest.is_empty() {
                match rustix::io::pwrite(&file, rest, at) {
                    Ok(0) => {
                        let short = std::io::ErrorKind::WriteZero.into();
                        return Err(Error::io(&display, "write to", short));
                    }
                    Ok(n) => {
                        rest = &rest[n..];
                        at += n as u64;
                    }
                    Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(Error::io(&display, "write to", errno(e))),
                }
            }
        }
        if durable {
            sync_data(&file).map_err(|e| Error::io(&display, "fdatasync", errno(e)))?;
        }
        Ok(())
    }

    /// Cuts the existing regular file `rel` to `len` bytes (not synced: the next durable append
    /// syncs it).
    pub fn truncate(&self, rel: &RelPath, len: u64) -> Result<()> {
        let display = self.display_path(rel);
        faults::check("truncate", &display)?;
        let file = self.open_existing_for_write(rel, OFlags::empty())?;
        file.set_len(len)
            .map_err(|e| Error::io(&display, "truncate", e))
    }

    /// Creates the directory `rel` (its parent must exist). `Ok(false)` when a directory is
    /// already there; an error when something else is.
    pub fn create_dir(&self, rel: &RelPath) -> Result<bool> {
        let parent = self.require_parent(rel)?;
        let name = rel.file_name();
        let display = self.display_path(rel);
        faults::check("create_dir", &display)?;
        self.note_change();
        match rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(0o777)) {
            Ok(()) => {
                sync(&parent)
                    .map_err(|e| Error::io(&display, "fsync the directory of", errno(e)))?;
                Ok(true)
            }
            Err(rustix::io::Errno::EXIST) => match self.kind(rel) {
                EntryKind::Dir => Ok(false),
                EntryKind::Symlink => Err(Error::Symlink {
                    path: display,
                    detail: "a symlink stands where a directory is needed".to_string(),
                }),
                _ => Err(Error::Unsafe {
                    path: display,
                    reason: "a file stands where a directory is needed".to_string(),
                }),
            },
            Err(e) => Err(Error::io(display, "create the directory", errno(e))),
        }
    }

    /// Creates an empty marker file (exclusively). `Ok(false)` when something is already there.
    pub fn create_marker(&self, rel: &RelPath, kind: MarkerKind) -> Result<bool> {
        match kind {
            MarkerKind::Dir => {
                if self.kind(rel) != EntryKind::Missing {
                    return Ok(false);
                }
                self.create_dir(rel)
            }
            MarkerKind::File => {
                let parent = self.require_parent(rel)?;
                let display = self.display_path(rel);
                faults::check("create_marker", &display)?;
                match rustix::fs::openat(
                    &parent,
                    rel.file_name(),
                    OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o666),
                ) {
                    Ok(fd) => {
                        sync(&fd).map_err(|e| Error::io(&display, "fsync", errno(e)))?;
                        sync(&parent)
                            .map_err(|e| Error::io(&display, "fsync the directory of", errno(e)))?;
                        Ok(true)
                    }
                    Err(rustix::io::Errno::EXIST) => Ok(false),
                    Err(e) => Err(Error::io(display, "create", errno(e))),
                }
            }
        }
    }

    /// The [`FileState`] of the directory `rel`, without following a symlink there or on the
    /// way; `None` when it is missing or not a plain directory. Read-only: one `statx`.
    pub fn dir_stamp(&self, rel: &RelPath) -> Option<FileState> {
        self.stamp_of(rel, FileType::Directory)
    }

    /// The [`FileState`] of the regular file `rel`, without following a symlink there or on the
    /// way; `None` when it is not a regular file or cannot be looked at.
    pub fn file_stamp(&self, rel: &RelPath) -> Option<FileState> {
        self.stamp_of(rel, FileType::RegularFile)
    }

    fn stamp_of(&self, rel: &RelPath, kind: FileType) -> Option<FileState> {
        let parent = self.open_parent(rel).ok()??;
        let stat = rustix::fs::statat(&parent, rel.file_name(), AtFlags::SYMLINK_NOFOLLOW).ok()?;
        (FileType::from_raw_mode(stat.st_mode) == kind).then(|| FileState::of(&stat))
    }

    /// Whether the directory `rel` is empty. `None` when it is not a plain directory.
    pub fn dir_is_empty(&self, rel: &RelPath) -> Option<bool> {
        let parent = self.open_parent(rel).ok()??;
        let fd = open_dir_in(&parent, rel.file_name()).ok()?;
        for entry in DirFd::Opened(fd).entries().ok()? {
            let entry = entry.ok()?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                return Some(false);
            }
        }
        Some(true)
    }

    /// Removes the directory `rel` when it is empty. `Ok(false)` when it is not empty, gone, or
    /// not a directory (never a symlink).
    pub fn remove_dir_if_empty(&self, rel: &RelPath) -> Result<bool> {
        if self.kind(rel) != EntryKind::Dir {
            return Ok(false);
        }
        let Some(parent) = self.open_parent(rel)? else {
            return Ok(false);
        };
        let display = self.display_path(rel);
        faults::check("remove_dir", &display)?;
        match rustix::fs::unlinkat(&parent, rel.file_name(), AtFlags::REMOVEDIR) {
            Ok(()) => {
                sync(&parent)
                    .map_err(|e| Error::io(&display, "fsync the directory of", errno(e)))?;
                Ok(true)
            }
            Err(
                rustix::io::Errno::NOTEMPTY | rustix::io::Errno::EXIST | rustix::io::Errno::NOENT,
            ) => Ok(false),
            Err(e) => Err(Error::io(display, "remove the directory", errno(e))),
        }
    }

    /// The names of the regular files directly inside the directory `rel`, unsorted; `None` when
    /// it is missing or not a plain directory. Read-only; symlinks and directories are not listed.
    pub fn file_names(&self, rel: &RelPath) -> Option<Vec<String>> {
        let parent = self.open_parent(rel).ok()??;
        let fd = open_dir_in(&parent, rel.file_name()).ok()?;
        let mut names = Vec::new();
        if let Ok(mut dir) = DirFd::Opened(fd).entries() {
            while let Some(Ok(entry)) = dir.next() {
                if entry.file_type() == FileType::RegularFile {
                    names.push(entry.file_name().to_string_lossy().into_owned());
                }
            }
        }
        Some(names)
    }

    /// Removes our temporary files left beside `rel` by a crash (`.{name}.projectfile-tmp.*`).
    /// Returns how many were removed.
    pub fn remove_temp_files(&self, rel: &RelPath) -> Result<usize> {
        self.remove_temp_files_beside(rel, &[])
    }

    /// [`Root::remove_temp_files`] for `rel` and for the files named `others` in its folder,
    /// in one listing of it.
    pub fn remove_temp_files_beside(&self, rel: &RelPath, others: &[&str]) -> Result<usize> {
        let Ok(Some(parent)) = self.open_parent(rel) else {
            return Ok(0);
        };
        let prefixes: Vec<String> = std::iter::once(rel.file_name())
            .chain(others.iter().copied())
            .map(|name| format!(".{name}{TEMP_INFIX}"))
            .collect();
        // Compared as bytes: a workspace root may list many entries, and only ours are copied.
        let Ok(mut dir) = parent.entries() else {
            return Ok(0);
        };
        let mut doomed = Vec::new();
        while let Some(Ok(entry)) = dir.next() {
            let name = entry.file_name();
            let ours = prefixes
                .iter()
                .any(|prefix| name.to_bytes().starts_with(prefix.as_bytes()));
            if ours && entry.file_type() == FileType::RegularFile {
                doomed.push(name.to_owned());
            }
        }
        let Ok(parent) = dir.fd() else {
            return Ok(0);
        };
        let mut removed = 0;
        for name in doomed {
            if rustix::fs::unlinkat(parent, name.as_c_str(), AtFlags::empty()).is_ok() {
                removed += 1;
            }
        }
        Ok(removed)
    }
}

impl WorkspaceView for Root {
    fn kind(&self, path: &RelPath) -> EntryKind {
        Root::kind(self, path)
    }

    /// `lstat` of `<ancestor>/<name>` for every ancestor of the root's path (which is canonical),
    /// nearest first. Read-only.
    fn found_above_root(&self, names: &[&str]) -> Vec<PathBuf> {
        let names: Vec<RelPath> = names
            .iter()
            .filter_map(|name| RelPath::new(*name).ok())
            .collect();
        let mut found = Vec::new();
        for dir in self.path.ancestors().skip(1) {
            for name in &names {
                let candidate = dir.join(name.as_str());
                if std::fs::symlink_metadata(&candidate).is_ok() {
                    found.push(candidate);
                }
            }
        }
        found
    }
}

/// The process umask, read without changing it (from `/proc/self/status`), falling back to 022.
fn current_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

/// An exclusive advisory lock on a file under our state directory, released on drop.
#[must_use = "the lock is released when this guard is dropped"]
#[derive(Debug)]
pub struct LockGuard {
    file: File,
}

/// How long a [`LockGuard`]'s note may be: the lock file holds it padded with spaces to this
/// length, so a new note replaces the last in one write, with no truncation.
pub const LOCK_NOTE_LEN: usize = 384;

impl LockGuard {
    /// The note the lock file holds (see [`LockGuard::set_note`]), spaces at its end trimmed;
    /// empty when there is none or it cannot be read.
    pub fn note(&self) -> Vec<u8> {
        let mut room = [std::mem::MaybeUninit::<u8>::uninit(); LOCK_NOTE_LEN];
        let Ok(read) = pread_uninit(&self.file, &mut room, 0) else {
            return Vec::new();
        };
        let read = room.get(..read).unwrap_or_default();
        // SAFETY: `pread_uninit` wrote the first `read` bytes of `room`.
        let note = unsafe { read.assume_init_ref() };
        let end = note.iter().rposition(|b| *b != b' ').map_or(0, |at| at + 1);
        note[..end].to_vec()
    }

    /// Leaves `note` (at most [`LOCK_NOTE_LEN`] bytes, no trailing space) in the lock file for
    /// the next holder of the lock. Not synced: a note a power loss takes, or leaves older than
    /// the state it describes, must be found out by whoever reads it (each note says what it
    /// stands for, and the boot it was written in).
    pub fn set_note(&self, note: &[u8]) -> std::io::Result<()> {
        if note.len() > LOCK_NOTE_LEN {
            return Err(std::io::ErrorKind::InvalidInput.into());
        }
        let mut padded = [b' '; LOCK_NOTE_LEN];
        padded[..note.len()].copy_from_slice(note);
        std::os::unix::fs::FileExt::write_all_at(&self.file, &padded, 0)
    }
}

/// Takes an exclusive lock on `path` (created if absent), waiting for other holders.
pub fn lock_exclusive(path: &Path) -> Result<LockGuard> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| Error::io(path, "open the lock file", e))?;
    file.lock().map_err(|e| Error::io(path, "lock", e))?;
    Ok(LockGuard { file })
}

/// How long to wait for a lock another process holds, and whom to tell while waiting.
#[derive(Clone)]
pub struct LockWait {
    /// Give up after this long: an [`Error::Busy`], and nothing changed.
    pub limit: Duration,
    /// Call `notice` once the wait has lasted this long (never, when that is past `limit`).
    pub notice_after: Duration,
    /// Told once, after `notice_after`, which lock is awaited and (where `/proc/locks` says)
    /// which process holds it.
    pub notice: Option<LockNoticeFn>,
}

/// What a [`LockWait`] calls while it waits.
pub type LockNoticeFn = Arc<dyn Fn(&LockNotice) + Send + Sync>;

impl LockWait {
    /// The default limit: 30 seconds.
    pub const DEFAULT_LIMIT: Duration = Duration::from_secs(30);

    /// Waiting at most `limit`, with no notice.
    pub fn at_most(limit: Duration) -> LockWait {
        LockWait {
            limit,
            ..LockWait::default()
        }
    }
}

impl Default for LockWait {
    fn default() -> Self {
        LockWait {
            limit: LockWait::DEFAULT_LIMIT,
            notice_after: Duration::from_secs(1),
            notice: None,
        }
    }
}

impl std::fmt::Debug for LockWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockWait")
            .field("limit", &self.limit)
            .field("notice_after", &self.notice_after)
            .field("notice", &self.notice.is_some())
            .finish()
    }
}

/// What a wait for a lock tells its [`LockWait::notice`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockNotice {
    /// The lock file.
    pub path: PathBuf,
    /// The process holding it, when `/proc/locks` names it.
    pub holder: Option<u32>,
    /// How long the wait may last in all.
    pub limit: Duration,
}

impl Root {
    /// Takes an exclusive lock on the file `rel` below this root, waiting for another holder at
    /// most `wait.limit` (then [`Error::Busy`]). With `create`, the file is made (mode 0600) if
    /// absent; without, `Ok(None)` when it is absent. Never follows a symlink on the way or at
    /// `rel`, and refuses anything but a regular file (a FIFO is never opened for blocking).
    ///
    /// The wait is queued in the kernel, so the lock is taken the moment its holder lets go; a
    /// signal does not end it; a wait given up leaves no lock behind (it polls every 20 ms only
    /// where neither a timer nor a waiter thread can be started). In a process that runs one
    /// command (see [`crate::one_command_per_process`]) the calling thread itself waits, with
    /// `SIGALRM` handled while it does; otherwise a waiter thread does. Safe to call from many
    /// threads at once: each call waits on its own descriptor.
    pub fn lock_file(
        &self,
        rel: &RelPath,
        create: bool,
        wait: &LockWait,
    ) -> Result<Option<LockGuard>> {
        let Some(parent) = self.open_parent(rel)? else {
            return Ok(None);
        };
        let display = self.display_path(rel);
        let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let flags = if create {
            flags | OFlags::CREATE
        } else {
            flags
        };
        let fd =
            match rustix::fs::openat(&parent, rel.file_name(), flags, Mode::from_raw_mode(0o600)) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) if !create => return Ok(None),
                Err(e) => {
                    return Err(self.explain(
                        &parent,
                        rel.file_name(),
                        Path::new(rel.as_str()),
                        e,
                        false,
                    ));
                }
            };
        let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io(&display, "stat", errno(e)))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(Error::Unsafe {
                path: display,
                reason: "the lock file is not a regular file".to_string(),
            });
        }
        let file = File::from(fd);
        wait_for_lock(&file, &display, &stat, wait)?;
        Ok(Some(LockGuard { file }))
    }
}

thread_local! {
    /// Test hook: lock waits on this thread poll, as they do where no waiter thread can start.
    static POLLED_LOCK_WAIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with lock waits on the calling thread polling instead of queueing in the kernel (the
/// fallback when no waiter thread can be started), so both ways are tested.
pub fn with_polled_lock_wait<T>(f: impl FnOnce() -> T) -> T {
    POLLED_LOCK_WAIT.with(|c| c.set(true));
    let out = f();
    POLLED_LOCK_WAIT.with(|c| c.set(false));
    out
}

/// Takes the exclusive lock on `file`, waiting at most `wait.limit` for another holder.
///
/// The wait is the kernel's: a blocking `flock(LOCK_EX)`, which the kernel grants the moment
/// the holder lets go. In a process that runs one command (see
/// [`crate::one_command_per_process`]) the calling thread blocks in it, and a timer signal
/// ([`lock_alarm`]) interrupts it at the notice and at the limit (see [`wait_on_this_thread`]).
/// Otherwise (a library host, whose threads and signals are its own) a waiter thread blocks in
/// it while this thread waits on a channel with a deadline (first until the notice is due,
/// then until the limit); the lock is taken on the same open file description as `file` (see
/// [`LockWaiter`]), so it is this caller's once the thread has it. Where neither the timer nor
/// a waiter thread can be started, it polls with `try_lock` every 20 ms instead.
fn wait_for_lock(
    file: &File,
    display: &Path,
    stat: &rustix::fs::Stat,
    wait: &LockWait,
) -> Result<()> {
    match file.try_lock() {
        Ok(()) => return Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => {}
        Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(display, "lock", e)),
    }
    if wait.limit.is_zero() {
        return Err(busy(display, stat, wait));
    }
    if lock_waits_interrupted() {
        return Err(interrupted(display));
    }
    let start = Instant::now();
    let polled = POLLED_LOCK_WAIT.with(std::cell::Cell::get);
    if !polled
        && lock_alarm::waits_on_calling_thread()
        && let Ok(alarm) = lock_alarm::LockAlarm::start()
    {
        return wait_on_this_thread(file, display, stat, wait, start, alarm);
    }
    let mut waiter = if polled {
        LockWaiter::Poll
    } else {
        LockWaiter::start(file)
    };
    let lock_error = |e| Error::io(display, "lock", e);
    if let Some(notice) = &wait.notice
        && wait.notice_after <= wait.limit
    {
        if waiter
            .until(file, start.checked_add(wait.notice_after))
            .map_err(lock_error)?
        {
            return Ok(());
        }
        notice(&LockNotice {
            path: display.to_path_buf(),
            holder: lock_holder(stat),
            limit: wait.limit,
        });
    }
    if waiter
        .until(file, start.checked_add(wait.limit))
        .map_err(lock_error)?
    {
        return Ok(());
    }
    if lock_waits_interrupted() {
        return Err(interrupted(display));
    }
    Err(busy(display, stat, wait))
}

/// The refusal of a wait given up by [`interrupt_lock_waits`].
fn interrupted(display: &Path) -> Error {
    Error::Busy {
        path: display.to_path_buf(),
        reason: "the wait for this lock was given up (a signal arrived); nothing was changed"
            .to_string(),
    }
}

/// The wait of [`wait_for_lock`] on the calling thread: blocked in `flock(LOCK_EX)` on `file`
/// itself, so the lock is this caller's the moment the kernel grants it, and a wait given up
/// leaves nothing queued (an interrupted `flock` leaves the kernel's queue). `alarm` fires at
/// the notice (when there is one to give), then at the limit; each interruption (the alarm's,
/// or any other signal whose handler does not restart the call) checks the clock: before the
/// deadline the wait goes on, at the notice the notice is given once, at the limit `Busy`.
/// The alarm is dropped (timer deleted, signal state put back) before returning, on every
/// path, and re-armed for the limit before the notice is given, so neither the notice's nor the
/// refusal's own I/O is interrupted by it.
fn wait_on_this_thread(
    file: &File,
    display: &Path,
    stat: &rustix::fs::Stat,
    wait: &LockWait,
    start: Instant,
    alarm: lock_alarm::LockAlarm,
) -> Result<()> {
    let lock_error = |e| Error::io(display, "lock", e);
    let limit_at = start.checked_add(wait.limit);
    let mut notice = wait
        .notice
        .as_ref()
        .filter(|_| wait.notice_after <= wait.limit)
        .zip(start.checked_add(wait.notice_after));
    let first = notice.as_ref().map_or(limit_at, |(_, at)| Some(*at));
    alarm.arm(first).map_err(lock_error)?;
    let taken = loop {
        match rustix::fs::flock(file, rustix::fs::FlockOperation::LockExclusive) {
            Ok(()) => break Ok(true),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => break Err(lock_error(errno(e))),
        }
        if lock_waits_interrupted() {
            break Ok(false);
        }
        if let Some((tell, at)) = notice
            && Instant::now() >= at
        {
            notice = None;
            // Armed for the limit, or disarmed when that has passed too: the timer, repeating
            // since the notice was due, does not interrupt the notice's own I/O.
            let limit_reached = limit_at.is_some_and(|at| Instant::now() >= at);
            alarm
                .arm(limit_at.filter(|_| !limit_reached))
                .map_err(lock_error)?;
            tell(&LockNotice {
                path: display.to_path_buf(),
                holder: lock_holder(stat),
                limit: wait.limit,
            });
        }
        if limit_at.is_some_and(|at| Instant::now() >= at) {
            break Ok(false);
        }
    };
    drop(alarm);
    match taken? {
        true => Ok(()),
        false if lock_waits_interrupted() => Err(interrupted(display)),
        false => Err(busy(display, stat, wait)),
    }
}

/// The refusal of a wait that reached its limit, naming the holder where `/proc/locks` does.
fn busy(display: &Path, stat: &rustix::fs::Stat, wait: &LockWait) -> Error {
    let by = lock_holder(stat).map_or_else(String::new, |pid| format!(" (process {pid})"));
    Error::Busy {
        path: display.to_path_buf(),
        reason: format!(
            "another process{by} has held this workspace's lock for {} s; nothing was changed (wait longer with --wait SECS)",
            wait.limit.as_secs()
        ),
    }
}

/// How a wait for a lock learns that the lock is taken.
///
/// **A wait given up leaks no lock.** A `flock` lock belongs to the open file description, which
/// the caller's descriptor and the waiter thread's duplicate (`try_clone`, a `dup`) share, and the
/// kernel releases it when the last descriptor on that description is closed. The thread closes
/// its duplicate as soon as its `flock` returns, whether it took the lock or failed, before it
/// reports, and whether or not anyone still listens. So when the caller gives up (`Busy`) and
/// drops its descriptor, the thread's `flock` still completes once the holder lets go, the
/// duplicate is then the description's last descriptor, and closing it frees the lock.
/// `core/tests/lock_wait.rs` watches this in `/proc/locks`. The cost of a wait given up on a
/// holder that never lets go is one parked thread and one descriptor, until the holder goes or
/// the process ends. Each wait has its own thread and channel: nothing is shared between waits.
enum LockWaiter {
    /// A thread blocked in `flock(LOCK_EX)` on a duplicate of the caller's descriptor, which
    /// sends the outcome once (a channel with room for it, so the send never blocks).
    Kernel(std::sync::mpsc::Receiver<std::io::Result<()>>),
    /// `try_lock` every 20 ms.
    Poll,
}

impl LockWaiter {
    /// Starts the waiter thread; polls when the descriptor cannot be duplicated or no thread
    /// can be started (a process at its limits).
    fn start(file: &File) -> LockWaiter {
        let Ok(duplicate) = file.try_clone() else {
            return LockWaiter::Poll;
        };
        let (report, outcome) = std::sync::mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("pf-lock-wait".to_string())
            .stack_size(64 * 1024)
            .spawn(move || {
                let taken = lock_blocking(&duplicate);
                drop(duplicate);
                let _ = report.send(taken);
            });
        match thread {
            Ok(_) => LockWaiter::Kernel(outcome),
            Err(_) => LockWaiter::Poll,
        }
    }

    /// Waits until the lock is taken (`true`) or `deadline` passes (`false`); no deadline (a
    /// limit past what the clock can count) waits for as long as it takes.
    fn until(&mut self, file: &File, deadline: Option<Instant>) -> std::io::Result<bool> {
        use std::sync::mpsc::RecvTimeoutError;
        match self {
            LockWaiter::Kernel(outcome) => {
                let received = match deadline {
                    Some(at) => outcome.recv_timeout(at.saturating_duration_since(Instant::now())),
                    None => outcome.recv().map_err(|_| RecvTimeoutError::Disconnected),
                };
                match received {
                    Ok(taken) => taken.map(|()| true),
                    Err(RecvTimeoutError::Timeout) => Ok(false),
                    Err(RecvTimeoutError::Disconnected) => Err(std::io::Error::other(
                        "the thread waiting for the lock ended without an answer",
                    )),
                }
            }
            LockWaiter::Poll => loop {
                match file.try_lock() {
                    Ok(()) => return Ok(true),
                    Err(std::fs::TryLockError::WouldBlock) => {}
                    Err(std::fs::TryLockError::Error(e)) => return Err(e),
                }
                if lock_waits_interrupted() {
                    return Ok(false);
                }
                let left = deadline.map(|at| at.saturating_duration_since(Instant::now()));
                if left.is_some_and(|left| left.is_zero()) {
                    return Ok(false);
                }
                let step = Duration::from_millis(20);
                std::thread::sleep(left.map_or(step, |left| left.min(step)));
            },
        }
    }
}

/// `flock(LOCK_EX)`, blocking until the kernel grants it; a signal that interrupts the wait
/// (`EINTR`) does not end it.
fn lock_blocking(file: &File) -> std::io::Result<()> {
    loop {
        match rustix::fs::flock(file, rustix::fs::FlockOperation::LockExclusive) {
            Err(rustix::io::Errno::INTR) => continue,
            taken => return taken.map_err(errno),
        }
    }
}

/// Opens the directory `path` names, following links (a workspace path the user gave): read
/// only.
pub fn open_dir_following(path: &Path) -> Result<OwnedFd> {
    note_dir_open();
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io(path, "open the directory", errno(e)))
}

/// The device and inode numbers of the file open at `fd`.
pub fn dev_ino(fd: BorrowedFd<'_>) -> Result<(u64, u64)> {
    let stat = rustix::fs::fstat(fd).map_err(|e| Error::io("a directory", "stat", errno(e)))?;
    Ok((stat.st_dev, stat.st_ino))
}

/// How many names the file open at `fd` has (0 once a directory is removed).
pub fn link_count(fd: BorrowedFd<'_>) -> Option<u64> {
    rustix::fs::fstat(fd).ok().map(|stat| stat.st_nlink)
}

/// The path the kernel has for the file open at `fd` (`/proc/self/fd/<fd>`), `None` when it
/// cannot be read or the file has no name any more.
pub fn fd_path(fd: BorrowedFd<'_>) -> Option<PathBuf> {
    use std::os::fd::AsRawFd as _;
    let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
    let deleted = link.as_os_str().as_encoded_bytes().ends_with(b" (deleted)");
    (!deleted).then_some(link)
}

/// The birth time of the file open at `fd` (`statx` `STATX_BTIME`) as `<seconds>.<nanoseconds>`,
/// where the file system records one.
pub fn birth_time(fd: BorrowedFd<'_>) -> Option<String> {
    use rustix::fs::{StatxFlags, statx};
    let x = statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::BTIME).ok()?;
    // `stx_mask` says which fields the file system filled in.
    (x.stx_mask & StatxFlags::BTIME.bits() != 0)
        .then(|| format!("{}.{:09}", x.stx_btime.tv_sec, x.stx_btime.tv_nsec))
}

/// The kernel's file handle for the file open at `fd` (`name_to_handle_at`), as
/// `<handle type>:<hex bytes>`, where the file system gives one: the identity a file server
/// gives out, which a file created later in the same inode does not share (for ext4, XFS and
/// tmpfs it holds the inode's generation, drawn anew at each allocation).
pub fn file_handle(fd: BorrowedFd<'_>) -> Option<String> {
    use std::os::fd::AsRawFd as _;
    /// `struct file_handle` with room for `MAX_HANDLE_SZ` bytes.
    #[repr(C)]
    struct FileHandle {
        handle_bytes: u32,
        handle_type: i32,
        f_handle: [u8; 128],
    }
    let mut handle = FileHandle {
        handle_bytes: 128,
        handle_type: 0,
        f_handle: [0; 128],
    };
    let mut mount_id: libc::c_int = 0;
    // SAFETY: `name_to_handle_at(2)` with an empty path and `AT_EMPTY_PATH` reads the file open
    // at `fd`; `handle` is a `struct file_handle` whose `handle_bytes` states the room after its
    // header (128, `MAX_HANDLE_SZ`), which the kernel writes at most, and `mount_id` an int.
    let done = unsafe {
        libc::syscall(
            libc::SYS_name_to_handle_at,
            fd.as_raw_fd(),
            c"".as_ptr(),
            &mut handle as *mut FileHandle,
            &mut mount_id as *mut libc::c_int,
            libc::AT_EMPTY_PATH,
        )
    };
    let len = usize::try_from(handle.handle_bytes).ok()?;
    if done != 0 || len > handle.f_handle.len() {
        return None;
    }
    Some(format!(
        "{}:{}",
        handle.handle_type,
        tree::hex(&handle.f_handle[..len])
    ))
}

/// The names in the directory `parent` (following links in `parent` itself) of directories
/// whose device and inode numbers are `dev` and `ino`: where a folder renamed within its parent
/// is. Entries that are links are not followed. Read only; empty when `parent` cannot be read.
pub fn dirs_with_inode(parent: &Path, dev: u64, ino: u64) -> Vec<String> {
    let Ok(fd) = open_dir_following(parent) else {
        return Vec::new();
    };
    let Ok(dir) = rustix::fs::Dir::read_from(&fd) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in dir.flatten() {
        // The inode number in the listing spares a `stat` of every other entry.
        if entry.ino() != ino {
            continue;
        }
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if name == "." || name == ".." {
            continue;
        }
        let same = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
            FileType::from_raw_mode(st.st_mode) == FileType::Directory
                && st.st_dev == dev
                && st.st_ino == ino
        });
        if same {
            found.push(name.to_string());
        }
    }
    found
}

/// The process holding a `flock` on the file `stat` describes, from `/proc/locks` (Linux);
/// `None` when it cannot be told.
///
/// The kernel writes `/proc/locks` a page at a time as it is read, by position in its list of
/// locks: while other locks come and go between two pages, a line can be skipped. So a file not
/// found is looked for in up to three readings.
pub fn lock_holder(stat: &rustix::fs::Stat) -> Option<u32> {
    lock_holder_of(stat.st_dev, stat.st_ino)
}

/// [`lock_holder`] of the file with device `dev` and inode number `ino`, wherever its path went.
pub fn lock_holder_of(dev: u64, ino: u64) -> Option<u32> {
    let device = format!(
        "{:02x}:{:02x}:{}",
        rustix::fs::major(dev),
        rustix::fs::minor(dev),
        ino
    );
    (0..3).find_map(|_| {
        let text = std::fs::read_to_string("/proc/locks").ok()?;
        text.lines().find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // `N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END`; waiters have a `->` first.
            match fields.as_slice() {
                [_, kind, _, _, pid, dev, ..] if *kind != "->" && *dev == device => {
                    pid.parse().ok()
                }
                _ => None,
            }
        })
    })
}

/// What a holder lock file is now (see [`holder_lock_state`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HolderLockState {
    /// A regular file on which some open file description holds a lock.
    Held,
    /// A regular file nobody holds locked.
    Free,
    /// Nothing at the path.
    Missing,
    /// Something that can never be a holder lock; the text names what it is (`a FIFO`, …).
    NotAFile(&'static str),
}

/// What stands at `path`, in words, for a kind that is not a regular file.
fn kind_in_words(kind: FileType) -> &'static str {
    match kind {
        FileType::Symlink => "a symlink",
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice | FileType::BlockDevice => "a device",
        FileType::Directory => "a directory",
        _ => "not a regular file",
    }
}

/// Whether some process holds a lock on the regular file `path` (a lease holder of kind `lock`),
/// without ever blocking and without following a final symlink.
///
/// The path is opened with `O_PATH | O_NOFOLLOW`, which opens nothing (no FIFO rendezvous, no
/// device driver); only a regular file is then reopened, through its descriptor, for reading with
/// `O_NONBLOCK`, and tested with a non-blocking exclusive `flock`. A FIFO, socket, device,
/// directory or symlink is [`HolderLockState::NotAFile`], whatever it became after a lease named
/// it. Errors (permission denied) are errors: the caller decides what an unknown answer means.
pub fn holder_lock_state(path: &Path) -> Result<HolderLockState> {
    let handle = match rustix::fs::open(
        path,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(HolderLockState::Missing),
        Err(e) => return Err(Error::io(path, "open the holder lock file", errno(e))),
    };
    let stat = rustix::fs::fstat(&handle)
        .map_err(|e| Error::io(path, "stat the holder lock", errno(e)))?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if kind != FileType::RegularFile {
        return Ok(HolderLockState::NotAFile(kind_in_words(kind)));
    }
    let file = reopen_for_reading(&handle, path, &stat)?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(HolderLockState::Free),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(HolderLockState::Held),
        Err(e) => Err(Error::io(path, "test the holder lock", errno(e))),
    }
}

/// Opens for reading the very regular file `handle` (an `O_PATH` descriptor) names: through
/// `/proc/self/fd`, or, without `/proc`, by path again with `O_NOFOLLOW | O_NONBLOCK`, checked to
/// be the same inode.
fn reopen_for_reading(handle: &OwnedFd, path: &Path, stat: &rustix::fs::Stat) -> Result<OwnedFd> {
    use std::os::fd::AsRawFd as _;
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let by_descriptor = format!("/proc/self/fd/{}", handle.as_raw_fd());
    if let Ok(fd) = rustix::fs::open(by_descriptor.as_str(), flags, Mode::empty()) {
        return Ok(fd);
    }
    let fd = rustix::fs::open(path, flags | OFlags::NOFOLLOW, Mode::empty())
        .map_err(|e| Error::io(path, "open the holder lock file", errno(e)))?;
    let again =
        rustix::fs::fstat(&fd).map_err(|e| Error::io(path, "stat the holder lock", errno(e)))?;
    if again.st_dev != stat.st_dev || again.st_ino != stat.st_ino {
        return Err(Error::Unsafe {
            path: path.to_path_buf(),
            reason: "the holder lock file was replaced while it was checked".to_string(),
        });
    }
    Ok(fd)
}

/// Holds an exclusive lock on `path` for as long as the returned guard lives (for hosts and tests
/// that name a lock file as their lease holder).
pub fn hold_lock(path: &Path) -> Result<LockGuard> {
    lock_exclusive(path)
}

/// Reads a whole file by absolute path (state-directory files, private files). `Ok(None)` when
/// absent.
pub fn read_private(path: &Path) -> Result<Option<Vec<u8>>> {
    Ok(read_private_tail(path, u64::MAX)?.map(|tail| tail.bytes))
}

/// The last bytes of a file read by [`read_private_tail`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tail {
    /// The file's length.
    pub len: u64,
    /// Where `bytes` start in the file.
    pub start: u64,
    /// The file from `start` to its end.
    pub bytes: Vec<u8>,
}

/// Reads at most the last `max` bytes of a file by absolute path (state-directory files).
/// `Ok(None)` when absent.
pub fn read_private_tail(path: &Path, max: u64) -> Result<Option<Tail>> {
    match OpenTail::open(path)? {
        Some(open) => open.last(max).map(Some),
        None => Ok(None),
    }
}

/// A state-directory file opened to read its end, perhaps in more than one step, through one
/// descriptor: its length as `fstat` gave it when opened.
#[derive(Debug)]
pub struct OpenTail<'a> {
    file: File,
    path: &'a Path,
    len: u64,
    state: FileState,
}

impl<'a> OpenTail<'a> {
    /// Opens `path` (an absolute path); `Ok(None)` when absent. Only a regular file is read:
    /// the last component is not followed, and a FIFO or device there is opened without
    /// blocking and refused, naming it.
    pub fn open(path: &'a Path) -> Result<Option<OpenTail<'a>>> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let file = match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => File::from(fd),
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(Error::io(path, "open", errno(e))),
        };
        let stat = rustix::fs::fstat(&file).map_err(|e| Error::io(path, "stat", errno(e)))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(Error::Unsafe {
                path: path.to_path_buf(),
                reason: "is not a regular file; it is not read".into(),
            });
        }
        let len = u64::try_from(stat.st_size).unwrap_or(0);
        Ok(Some(OpenTail {
            file,
            path,
            len,
            state: FileState::of(&stat),
        }))
    }

    /// Its last `max` bytes (fewer when it is shorter), read with one `pread` of that size and
    /// one that finds the end.
    pub fn last(&self, max: u64) -> Result<Tail> {
        let start = self.len.saturating_sub(max);
        let size = i64::try_from(self.len - start).unwrap_or(i64::MAX);
        let bytes =
            read_sized(&self.file, start, size).map_err(|e| Error::io(self.path, "read", e))?;
        Ok(Tail {
            len: self.len,
            start,
            bytes,
        })
    }

    /// The file's length when it was opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// The file's state when it was opened.
    pub fn state(&self) -> FileState {
        self.state
    }

    /// Whether this file holds `expected` from `start` (see [`fd_holds_at`]).
    pub fn holds_at(&self, start: u64, expected: &[u8]) -> Result<bool> {
        fd_holds_at(&self.file, start, expected).map_err(|e| Error::io(self.path, "read", e))
    }

    /// The `len` bytes from `from`, or fewer where the file ends before them, read straight
    /// into a buffer to share (no copy made to share it).
    pub fn range_shared(&self, from: u64, len: usize) -> Result<std::sync::Arc<[u8]>> {
        // Read into memory not written before (no zeroing of what the read then overwrites).
        let mut shared = std::sync::Arc::<[u8]>::new_uninit_slice(len);
        // A new `Arc` is its slice's only owner: `get_mut` gives the slice.
        let Some(room) = std::sync::Arc::get_mut(&mut shared) else {
            return Ok(std::sync::Arc::from([]));
        };
        let filled =
            pread_uninit(&self.file, room, from).map_err(|e| Error::io(self.path, "read", e))?;
        if filled < len {
            // The file ended early: what was read, alone.
            let read = room.get(..filled).unwrap_or_default();
            // SAFETY: `pread_uninit` wrote the first `filled` bytes of `room`.
            return Ok(std::sync::Arc::from(unsafe { read.assume_init_ref() }));
        }
        // SAFETY: `pread_uninit` wrote all `len` bytes of the slice (`filled == len`).
        Ok(unsafe { shared.assume_init() })
    }

    /// `tail` (read from this file) extended back to start at `from`: only the bytes it lacks
    /// are read. Its buffer has room for `spare` more bytes, reserved and not touched, so a
    /// caller that writes about as much into it next does not move it to fresh memory.
    pub fn extend_back(&self, tail: Tail, from: u64, spare: usize) -> Result<Tail> {
        let Some(missing) = tail.start.checked_sub(from).filter(|n| *n > 0) else {
            return Ok(tail);
        };
        let missing = usize::try_from(missing)
            .map_err(|_| Error::io(self.path, "read", std::io::ErrorKind::FileTooLarge.into()))?;
        let len = missing + tail.bytes.len();
        let mut bytes = Vec::with_capacity(len.saturating_add(spare));
        // Read into the reserved room as it is: std reads a file into memory not yet written
        // (no zeroing of what the read then overwrites), retrying an interrupted read.
        let read = std::io::Seek::seek(&mut &self.file, std::io::SeekFrom::Start(from))
            .and_then(|_| {
                std::io::Read::read_to_end(
                    &mut std::io::Read::take(&self.file, missing as u64),
                    &mut bytes,
                )
            })
            .map_err(|e| Error::io(self.path, "read", e))?;
        note_read(read);
        if read < missing {
            let short = std::io::ErrorKind::UnexpectedEof.into();
            return Err(Error::io(self.path, "read", short));
        }
        bytes.extend_from_slice(&tail.bytes);
        Ok(Tail {
            len: tail.len,
            start: from,
            bytes,
        })
    }
}

/// Writes all of `bytes` to `fd` (no handle duplicated for a `File`).
fn write_all(fd: impl std::os::fd::AsFd, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match rustix::io::write(&fd, bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(errno(e)),
        }
    }
    Ok(())
}

/// The bytes of `fd` from `offset` to its end, read with `pread` into a buffer sized from
/// `expected` (the size `fstat` gave) plus one byte, so a file that is what `fstat` said takes
/// one `pread` and one more to see its end: no probing of the size and position first, as
/// `read_to_end` does. A file that grew meanwhile is read to its new end all the same.
fn read_sized(fd: impl std::os::fd::AsFd, offset: u64, expected: i64) -> std::io::Result<Vec<u8>> {
    let expected = usize::try_from(expected).unwrap_or(0);
    let mut bytes: Vec<u8> = Vec::with_capacity(expected.saturating_add(1));
    loop {
        if bytes.len() == bytes.capacity() {
            bytes.reserve(bytes.capacity().max(4096));
        }
        let at = offset.saturating_add(bytes.len() as u64);
        let read = pread_uninit(&fd, bytes.spare_capacity_mut(), at)?;
        // SAFETY: `pread_uninit` wrote the first `read` bytes of the spare capacity, which
        // follow the `len` bytes already there.
        unsafe { bytes.set_len(bytes.len() + read) };
        if bytes.len() < bytes.capacity() {
            // The room was not filled: the file ended.
            break;
        }
    }
    Ok(bytes)
}

/// Whether the file `fd` holds `expected` from `start`: read and compared a piece at a time, so
/// no buffer of its size is made (a file that ends early does not hold it).
fn fd_holds_at(fd: impl std::os::fd::AsFd, start: u64, expected: &[u8]) -> std::io::Result<bool> {
    // At most 16 KiB at a time, and no more than is compared (a small record, a small piece).
    let mut piece = Vec::with_capacity(expected.len().clamp(1, 16 * 1024));
    let mut done = 0;
    while let Some(rest) = expected.get(done..).filter(|rest| !rest.is_empty()) {
        let want = piece.capacity().min(rest.len());
        let room = piece
            .spare_capacity_mut()
            .get_mut(..want)
            .unwrap_or_default();
        let read = pread_uninit(&fd, room, start.saturating_add(done as u64))?;
        // SAFETY: `pread_uninit` wrote the first `read` bytes of the spare capacity (the vector
        // holds none: it is emptied after each comparison).
        unsafe { piece.set_len(read) };
        if read == 0 || rest.get(..read) != Some(piece.as_slice()) {
            return Ok(false);
        }
        done += read;
        piece.clear();
    }
    Ok(true)
}

/// Reads `fd` from `offset` into `room` (memory not yet written) until it is full or the file
/// ends, an interrupted read retried: how many bytes of `room`, from its start, the reads wrote.
fn pread_uninit(
    fd: impl std::os::fd::AsFd,
    room: &mut [std::mem::MaybeUninit<u8>],
    offset: u64,
) -> std::io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = room.get_mut(filled..).filter(|rest| !rest.is_empty()) {
        let at = offset.saturating_add(filled as u64);
        match rustix::io::pread(&fd, rest, at) {
            Ok(([], _)) => break,
            Ok((read, _)) => {
                note_read(read.len());
                filled += read.len();
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(errno(e)),
        }
    }
    Ok(filled)
}

/// A file system on which locks or atomic renames cannot be taken for granted, recognised by the
/// `f_type` magic number `statfs(2)` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsFamily {
    /// NFS (`NFS_SUPER_MAGIC` 0x6969).
    Nfs,
    /// SMB, CIFS or SMB2/3 (0x517B, 0xFF534D42, 0xFE534D42).
    Smb,
    /// A FUSE file system (0x65735546).
    Fuse,
    /// 9P (0x01021997).
    NineP,
}

/// What a path is used for, which decides what its file system must guarantee.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsRole {
    /// Our state directory: the workspace lock and the ledger live there.
    State,
    /// The workspace: where atomic renames replace the user's files.
    Workspace,
}

impl FsFamily {
    /// The family of an `f_type` magic number; `None` for a local file system.
    pub fn from_magic(f_type: u32) -> Option<FsFamily> {
        match f_type {
            0x6969 => Some(FsFamily::Nfs),
            0x517B | 0xFF53_4D42 | 0xFE53_4D42 => Some(FsFamily::Smb),
            0x6573_5546 => Some(FsFamily::Fuse),
            0x0102_1997 => Some(FsFamily::NineP),
            _ => None,
        }
    }

    /// A name for messages.
    pub fn name(self) -> &'static str {
        match self {
            FsFamily::Nfs => "NFS",
            FsFamily::Smb => "SMB/CIFS",
            FsFamily::Fuse => "FUSE",
            FsFamily::NineP => "9P",
        }
    }

    /// The policy for `role` on this family: `Err(reason)` refuses, `Ok(Some(warning))` goes on
    /// with a warning in the receipt, `Ok(None)` is fine.
    ///
    /// - State directory: the workspace lock is what keeps concurrent sessions from losing an
    ///   update. SMB/CIFS and 9P are **refused**: their Linux clients map `flock` onto byte-range
    ///   locks with the server's own (often Windows) semantics or keep it local to one client, so
    ///   two machines could hold the same workspace lock. NFS and FUSE get a **warning**: NFS
    ///   forwards the lock to the server's lock manager (unless mounted `nolock`), and a FUSE file
    ///   system honours locks only as far as it implements them; neither can be told from here.
    /// - Workspace: every write is a rename over the user's file. NFS renames atomically on the
    ///   server: fine. SMB/CIFS, FUSE and 9P get a **warning**: replacing a file another program
    ///   holds open can fail there, and some implementations (sshfs's rename workaround) replace
    ///   by unlink then rename, which is not atomic.
    pub fn policy(self, role: FsRole) -> std::result::Result<Option<String>, String> {
        let name = self.name();
        match (role, self) {
            (FsRole::State, FsFamily::Smb | FsFamily::NineP) => Err(format!(
                "the state directory is on {name}, whose locks are not reliably shared between machines, so concurrent sessions could lose updates; put the state directory (--state-dir) on a local disk"
            )),
            (FsRole::State, FsFamily::Nfs | FsFamily::Fuse) => Ok(Some(format!(
                "the state directory is on {name}; its lock holds across machines only if the file system forwards locks (NFS without `nolock`); a local state directory is safer"
            ))),
            (FsRole::Workspace, FsFamily::Nfs) => Ok(None),
            (FsRole::Workspace, FsFamily::Smb | FsFamily::Fuse | FsFamily::NineP) => {
                Ok(Some(format!(
                    "the workspace is on {name}, where replacing a file by rename may fail while another program holds it open, or may not be atomic"
                )))
            }
        }
    }
}

/// The remote or user-space file system `path` lives on, `None` for a local one (read-only: one
/// `statfs(2)`).
pub fn file_system_family(path: &Path) -> Result<Option<FsFamily>> {
    let stat = rustix::fs::statfs(path)
        .map_err(|e| Error::io(path, "find the file system of", errno(e)))?;
    Ok(family_of(&stat))
}

/// [`file_system_family`] of the directory a [`Root`] holds open (`fstatfs(2)`): wherever it
/// was moved since it was opened.
pub fn root_file_system_family(root: &Root) -> Result<Option<FsFamily>> {
    let stat = rustix::fs::fstatfs(root.fd())
        .map_err(|e| Error::io(root.path(), "find the file system of", errno(e)))?;
    Ok(family_of(&stat))
}

fn family_of(stat: &rustix::fs::StatFs) -> Option<FsFamily> {
    // `f_type` is a signed or unsigned word depending on the target; every magic fits in 32 bits.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let magic = stat.f_type as u32;
    FsFamily::from_magic(magic)
}

/// Applies [`FsFamily::policy`] to the file system `path` is on: an [`Error::Unsafe`] naming the
/// path when refused, `Ok(Some(warning))` when allowed with a warning.
pub fn check_file_system(path: &Path, role: FsRole) -> Result<Option<String>> {
    apply_policy(file_system_family(path)?, path, role)
}

/// [`FsFamily::policy`] for `path`, already known to be on `family` (`None`: local).
pub fn apply_policy(family: Option<FsFamily>, path: &Path, role: FsRole) -> Result<Option<String>> {
    let Some(family) = family else {
        return Ok(None);
    };
    family.policy(role).map_err(|reason| Error::Unsafe {
        path: path.to_path_buf(),
        reason,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Any range of any file reads as the file's bytes there, cut where the file ends; and
        /// from any offset to the end.
        #[test]
        fn a_shared_range_is_the_file_bytes_there(
            content in proptest::collection::vec(proptest::num::u8::ANY, 0..9000),
            from in 0u64..10_000,
            len in 0usize..10_000,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("file");
            std::fs::write(&path, &content).unwrap();
            let open = OpenTail::open(&path).unwrap().unwrap();
            let start = usize::try_from(from).unwrap().min(content.len());
            let end = start.saturating_add(len).min(content.len());
            let range = open.range_shared(from, len).unwrap();
            proptest::prop_assert_eq!(&range[..], &content[start..end]);
            // Read to the end from `from`, whatever size the caller expected (a size that lies,
            // too small or too large, reads the same).
            let expected = i64::try_from(len).unwrap();
            let rest = read_sized(&open.file, from, expected).unwrap();
            proptest::prop_assert_eq!(&rest[..], &content[start..]);
        }
    }

    /// What an operation answered, comparable across the two walks.
    fn outcome<T: std::fmt::Debug>(result: Result<T>) -> String {
        match result {
            Ok(value) => format!("ok {value:?}"),
            Err(error) => format!("{} {error}", error.kind()),
        }
    }

    /// Every operation on every path of a hostile tree, as one transcript.
    fn transcript(root: &Root, outside: &Path) -> Vec<String> {
        let paths = [
            "top.md",
            "a/b/c.md",
            "a/b/missing/c.md",
            "nope/c.md",
            "link-in/c.md",
            "link-out/secret.md",
            "a/link-out/secret.md",
            "dangling/c.md",
            "file/c.md",
            "a/b",
        ];
        let mut lines = Vec::new();
        for text in paths {
            let rel = RelPath::new(text).unwrap();
            lines.push(format!("{text}: kind {:?}", root.kind(&rel)));
            lines.push(format!("{text}: read {}", outcome(root.read(&rel))));
            let written = root.write_atomic(&rel, b"written", None);
            lines.push(format!("{text}: write {}", outcome(written)));
            lines.push(format!(
                "{text}: remove {}",
                outcome(root.remove_file(&rel))
            ));
            lines.push(format!(
                "{text}: files {:?}",
                root.file_names(&rel).unwrap_or_default()
            ));
        }
        let secret = std::fs::read(outside.join("secret.md")).unwrap();
        lines.push(format!("outside: {}", String::from_utf8_lossy(&secret)));
        lines
    }

    fn hostile_tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (ws, outside) = (base.join("ws"), base.join("outside"));
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.md"), b"secret").unwrap();
        std::fs::write(ws.join("top.md"), b"top").unwrap();
        std::fs::write(ws.join("a/b/c.md"), b"c").unwrap();
        std::fs::write(ws.join("file"), b"a file in the way").unwrap();
        std::os::unix::fs::symlink("a/b", ws.join("link-in")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("link-out")).unwrap();
        std::os::unix::fs::symlink("../../outside", ws.join("a/link-out")).unwrap();
        std::os::unix::fs::symlink("nowhere", ws.join("dangling")).unwrap();
        (dir, ws, outside)
    }

    #[test]
    fn openat2_and_the_component_walk_answer_alike_and_never_leave_the_root() {
        let (_a, ws_a, outside_a) = hostile_tree();
        let (_b, ws_b, outside_b) = hostile_tree();
        let with_openat2 = transcript(&Root::open(&ws_a).unwrap(), &outside_a);
        let walked =
            with_component_walk_only(|| transcript(&Root::open(&ws_b).unwrap(), &outside_b));
        let normalise = |lines: Vec<String>, ws: &Path| -> Vec<String> {
            let base = ws.parent().unwrap().display().to_string();
            lines
                .into_iter()
                .map(|l| l.replace(&base, "<base>"))
                .collect()
        };
        assert_eq!(
            normalise(with_openat2.clone(), &ws_a),
            normalise(walked, &ws_b)
        );
        let text = with_openat2.join("\n");
        assert!(text.contains("outside: secret"), "{text}");
        assert!(text.contains("link-out/secret.md: read symlink"), "{text}");
        assert!(text.contains("a/b/c.md: read ok Some"), "{text}");
        assert!(text.contains("file/c.md: read unsafe_target"), "{text}");
        match OPENAT2.load(std::sync::atomic::Ordering::Relaxed) {
            OPENAT2_WORKS => {}
            state => {
                eprintln!("note: openat2 is unavailable here (state {state}); only the walk ran")
            }
        }
    }

    #[test]
    fn found_above_root_sees_ancestors_only_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("a/b");
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::create_dir_all(base.join("a/.claude")).unwrap();
        std::fs::write(base.join("CLAUDE.md"), b"top").unwrap();
        std::fs::write(base.join("a/.claude/CLAUDE.md"), b"mid").unwrap();
        // Inside the root: not "above" it.
        std::fs::write(root.join("CLAUDE.md"), b"root").unwrap();
        std::os::unix::fs::symlink("nowhere", base.join("a/CLAUDE.local.md")).unwrap();
        let view = Root::open(&root).unwrap();
        let found = view.found_above_root(&[
            "CLAUDE.md",
            ".claude/CLAUDE.md",
            "CLAUDE.local.md",
            "../escape",
            "/etc/passwd",
        ]);
        assert_eq!(
            found,
            vec![
                base.join("a/.claude/CLAUDE.md"),
                base.join("a/CLAUDE.local.md"),
                base.join("CLAUDE.md"),
            ]
            .into_iter()
            .chain(
                base.ancestors()
                    .skip(1)
                    .flat_map(|d| {
                        ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"].map(|n| d.join(n))
                    })
                    .filter(|p| std::fs::symlink_metadata(p).is_ok())
            )
            .collect::<Vec<_>>()
        );
    }

    /// A crash's leftovers beside a file are removed, whatever bytes their random part holds;
    /// another file's, a directory with our prefix and the file itself stay.
    #[test]
    fn temp_files_left_beside_a_file_are_removed_and_nothing_else() {
        use std::os::unix::ffi::OsStrExt as _;
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        let ours = |tail: &[u8]| {
            let mut name = format!(".AGENTS.md{TEMP_INFIX}").into_bytes();
            name.extend_from_slice(tail);
            base.join(std::ffi::OsStr::from_bytes(&name))
        };
        std::fs::write(base.join("AGENTS.md"), b"kept").unwrap();
        std::fs::write(ours(b"0a1b"), b"left by a crash").unwrap();
        std::fs::write(ours(b"\xff\xfe"), b"left by a crash, not UTF-8").unwrap();
        std::fs::create_dir(ours(b"dir")).unwrap();
        std::fs::write(
            base.join(format!(".CLAUDE.md{TEMP_INFIX}0a1b")),
            b"another's",
        )
        .unwrap();
        let root = Root::open(base).unwrap();
        let removed = root
            .remove_temp_files(&RelPath::new("AGENTS.md").unwrap())
            .unwrap();
        assert_eq!(removed, 2);
        assert!(!ours(b"0a1b").exists() && !ours(b"\xff\xfe").exists());
        assert!(ours(b"dir").is_dir());
        assert!(base.join(format!(".CLAUDE.md{TEMP_INFIX}0a1b")).exists());
        assert_eq!(std::fs::read(base.join("AGENTS.md")).unwrap(), b"kept");
    }
}
