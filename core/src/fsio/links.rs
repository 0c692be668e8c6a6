//! Link operations for private runtimes: walk (and create) the runtime levels, create, verify
//! and remove the `project/`, `output/` and `attached/<name>` links, and remove a runtime tree
//! without ever following a link out of it.
//!
//! This is the only place links are created or removed. The runtime root is opened without
//! following a symlink in its place (its parent folders are the host's choice, resolved once),
//! and every level below it (user, project, session, provider, mode) is opened relative to the
//! previous level's descriptor with `openat(O_NOFOLLOW | O_DIRECTORY)` ([`open_levels`]); every
//! later operation works on those descriptors (`fstatat` with `AT_SYMLINK_NOFOLLOW`, `symlinkat`,
//! `unlinkat`), so no path under a runtime root is resolved again between a check and its use. A
//! symlink is only ever removed as a name; nothing is deleted through it. A link is never
//! overwritten or silently adopted: when the name holds anything other than the expected link,
//! the operation fails with an error naming the path and what was found. [`launch`] adds the
//! launch lock and the link record that let a launch replace links it made itself.
#![allow(clippy::disallowed_methods)]

use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, CWD, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub mod launch;
pub use launch::{
    ATTACHED_DIR, LAUNCH_LOCK, LINK_RECORD, LaunchLock, WantedLink, lock_launch, private_dir,
    reconcile, release_links,
};

/// How deep [`remove_runtime`] descends before refusing (runtimes are shallow; this bounds the
/// number of open directory descriptors).
const MAX_DEPTH: usize = 256;

/// What a created or verified link points at, for the launch receipt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LinkRecord {
    /// The link itself (`<runtime>/<name>`).
    pub link: PathBuf,
    /// The canonical target, exactly as the link's text.
    pub target: PathBuf,
    /// Device of the folder the link resolves to.
    pub dev: u64,
    /// Inode of the folder the link resolves to.
    pub ino: u64,
    /// Whether this call created the link (false: it was already there and verified).
    pub created: bool,
}

fn io(path: &Path, action: &'static str, errno: Errno) -> Error {
    Error::io(path, action, std::io::Error::from(errno))
}

fn unsafe_at(path: &Path, reason: impl Into<String>) -> Error {
    Error::Unsafe {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

#[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
fn dev_ino(st: &Stat) -> (u64, u64) {
    (st.st_dev as u64, st.st_ino as u64)
}

/// A human description of a file type, for "found a ..." errors.
fn describe(file_type: FileType) -> &'static str {
    match file_type {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symlink",
        FileType::Fifo => "a named pipe",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "a file of unknown type",
    }
}

/// Checks that `name` is one plain path component (no `/`, not `.` or `..`, no NUL, not empty).
pub fn check_component(subject: &Path, name: &OsStr) -> Result<CString> {
    let bytes = name.as_bytes();
    let plain = !bytes.is_empty() && bytes != b"." && bytes != b".." && !bytes.contains(&b'/');
    match CString::new(bytes) {
        Ok(c) if plain => Ok(c),
        _ => Err(Error::invalid(
            subject.display().to_string(),
            format!(
                "{:?} is not a single plain path component",
                name.to_string_lossy()
            ),
        )),
    }
}

/// Opens `name` under `dir` as a directory without following a symlink in its place.
fn open_dir_at(dir: impl AsFd, name: &CStr, path: &Path) -> Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rfs::openat(&dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(Errno::LOOP | Errno::NOTDIR) => {
            let found = match rfs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => describe(FileType::from_raw_mode(st.st_mode)),
                Err(_) => "something that is not a directory",
            };
            Err(unsafe_at(
                path,
                format!("expected a directory, found {found}; refusing to follow or replace it"),
            ))
        }
        Err(errno) => Err(io(path, "open directory", errno)),
    }
}

/// Like [`open_dir_at`], with `Ok(None)` when `name` does not exist.
fn open_dir_opt(dir: impl AsFd, name: &CStr, path: &Path) -> Result<Option<OwnedFd>> {
    match open_dir_at(dir, name, path) {
        Ok(fd) => Ok(Some(fd)),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(other) => Err(other),
    }
}

/// Opens a directory given by path; only its last component is checked for being a symlink (the
/// parents are the host's choice).
fn open_dir_path(path: &Path) -> Result<OwnedFd> {
    open_dir_at(CWD, &path_cstring(path)?, path)
}

fn path_cstring(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        Error::invalid(
            path.display().to_string(),
            "a path must not contain a NUL byte",
        )
    })
}

/// A runtime root and the levels below it, each opened without following a symlink, so every
/// later operation on them is relative to a descriptor and never resolves a path again.
#[derive(Debug)]
pub struct Levels {
    /// The root's path and descriptor.
    root: (PathBuf, OwnedFd),
    /// Each level below the root, the root's child first.
    below: Vec<Level>,
}

/// One level below the root.
#[derive(Debug)]
struct Level {
    /// Its name in the level above.
    name: CString,
    path: PathBuf,
    fd: OwnedFd,
}

impl Levels {
    /// The path of the deepest level (the runtime directory when every level was walked).
    pub fn path(&self) -> &Path {
        self.below.last().map_or(&self.root.0, |level| &level.path)
    }

    /// The root's path: its canonical parent joined with its own (checked) name.
    pub fn root(&self) -> &Path {
        &self.root.0
    }

    /// The descriptor of the deepest level.
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.below
            .last()
            .map_or(self.root.1.as_fd(), |level| level.fd.as_fd())
    }

    /// Device and inode of the deepest level.
    pub fn identity(&self) -> Result<(u64, u64)> {
        let st = rfs::fstat(self.fd()).map_err(|e| io(self.path(), "inspect directory", e))?;
        Ok(dev_ino(&st))
    }
}

/// Opens the runtime root without following a symlink in its place; its parent folders are the
/// host's choice and are resolved once (canonicalised). With `create`, the parents and the root
/// are created when missing (the root mode 0700). `Ok(None)` when the root is missing and
/// `create` is false.
fn open_root(root: &Path, create: bool) -> Result<Option<(PathBuf, OwnedFd)>> {
    let refuse = || {
        Error::invalid(
            root.display().to_string(),
            "the runtime root must be an absolute path naming a folder (not `/`, not ending in \
             `.` or `..`)",
        )
    };
    if !root.is_absolute() {
        return Err(Error::invalid(
            root.display().to_string(),
            "the runtime root must be an absolute path",
        ));
    }
    let (parent, name) = split_last(root).map_err(|_| refuse())?;
    if create {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|source| Error::io(parent, "create the runtime root's parent", source))?;
    }
    let parent = match std::fs::canonicalize(parent) {
        Ok(parent) => parent,
        Err(source) if !create && source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(source) => {
            return Err(Error::io(
                parent,
                "resolve the runtime root's parent",
                source,
            ));
        }
    };
    let parent_fd = open_dir_path(&parent)?;
    let path = parent.join(OsStr::from_bytes(name.to_bytes()));
    if create {
        match rfs::mkdirat(&parent_fd, name.as_c_str(), Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(errno) => return Err(io(&path, "create runtime root", errno)),
        }
    }
    if let Ok(st) = rfs::statat(&parent_fd, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)
        && FileType::from_raw_mode(st.st_mode) == FileType::Symlink
    {
        let target = rfs::readlinkat(&parent_fd, name.as_c_str(), Vec::new())
            .map(|t| t.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "an unreadable target".to_string());
        return Err(unsafe_at(
            &path,
            format!(
                "the runtime root is a symlink (to {target}); refusing to follow it. Pass the \
                 folder itself as the runtime root, so that no launch or cleanup ever walks \
                 through a link"
            ),
        ));
    }
    match open_dir_opt(&parent_fd, &name, &path)? {
        Some(fd) => Ok(Some((path, fd))),
        None if create => Err(io(&path, "open runtime root", Errno::NOENT)),
        None => Ok(None),
    }
}

/// Opens (with `create`: creating, mode 0700) the runtime root and then each of `components`
/// below it, one level at a time relative to the previous level's descriptor, refusing a symlink
/// or anything but a directory at any level, the root included. `Ok(None)` when a level is
/// missing and `create` is false.
pub fn open_levels(root: &Path, components: &[&OsStr], create: bool) -> Result<Option<Levels>> {
    let Some((root_path, root_fd)) = open_root(root, create)? else {
        return Ok(None);
    };
    let mut path = root_path.clone();
    let mut levels = Levels {
        root: (root_path, root_fd),
        below: Vec::with_capacity(components.len()),
    };
    for component in components {
        let name = check_component(&path, component)?;
        path.push(component);
        let parent = levels.fd();
        if create {
            match rfs::mkdirat(parent, name.as_c_str(), Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(errno) => return Err(io(&path, "create runtime directory", errno)),
            }
        }
        let Some(fd) = open_dir_opt(parent, &name, &path)? else {
            if create {
                return Err(io(&path, "open runtime directory", Errno::NOENT));
            }
            return Ok(None);
        };
        levels.below.push(Level {
            name,
            path: path.clone(),
            fd,
        });
    }
    Ok(Some(levels))
}

/// Splits `path` into its parent directory and a plain last component.
fn split_last(path: &Path) -> Result<(&Path, CString)> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    match (parent, path.components().next_back()) {
        (Some(parent), Some(Component::Normal(name))) => Ok((parent, check_component(path, name)?)),
        _ => Err(Error::invalid(
            path.display().to_string(),
            "expected a path with a parent directory and a plain last component",
        )),
    }
}

/// Canonicalises a link target and checks that it is a directory.
fn canonical_dir(target: &Path) -> Result<PathBuf> {
    let canonical = std::fs::canonicalize(target)
        .map_err(|source| Error::io(target, "resolve link target", source))?;
    let meta = std::fs::metadata(&canonical)
        .map_err(|source| Error::io(&canonical, "inspect link target", source))?;
    if !meta.is_dir() {
        return Err(unsafe_at(
            &canonical,
            "a runtime link target must be a directory",
        ));
    }
    Ok(canonical)
}

/// Creates the link `<runtime_dir>/<name>` to the canonical form of `target` when the name is
/// free, then verifies it exactly as [`verify_link`] does. A name already holding anything else
/// (another link, a file, a directory) fails with an error naming the path and what was found;
/// it is never overwritten or adopted. `runtime_dir` is opened by path (only its last component
/// is checked); `ensure_link_in` works on a directory already opened level by level.
pub fn ensure_link(runtime_dir: &Path, name: &str, target: &Path) -> Result<LinkRecord> {
    ensure_link_in(&open_dir_path(runtime_dir)?, runtime_dir, name, target)
}

/// [`ensure_link`] inside the open directory `dir` (at `dir_path`).
pub fn ensure_link_in(
    dir: impl AsFd,
    dir_path: &Path,
    name: &str,
    target: &Path,
) -> Result<LinkRecord> {
    let cname = check_component(dir_path, OsStr::new(name))?;
    let canonical = canonical_dir(target)?;
    let link = dir_path.join(name);
    let mut created = false;
    match rfs::statat(&dir, cname.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(_) => {}
        Err(Errno::NOENT) => {
            match rfs::symlinkat(canonical.as_os_str(), &dir, cname.as_c_str()) {
                Ok(()) => created = true,
                // Someone else created it between our look and our create: verify theirs.
                Err(Errno::EXIST) => {}
                Err(errno) => return Err(io(&link, "create link", errno)),
            }
        }
        Err(errno) => return Err(io(&link, "inspect link", errno)),
    }
    let mut record = verify_at(&dir, &cname, &link, &canonical)?;
    record.created = created;
    Ok(record)
}

/// Checks the link `<runtime_dir>/<name>` at launch: it must be a symlink, its text must equal
/// the canonical form of `target`, and what it resolves to must be the same directory (device and
/// inode) as the target. Anything else fails with an error naming the path and what was found.
pub fn verify_link(runtime_dir: &Path, name: &str, target: &Path) -> Result<LinkRecord> {
    verify_link_in(&open_dir_path(runtime_dir)?, runtime_dir, name, target)
}

/// [`verify_link`] inside the open directory `dir` (at `dir_path`).
pub fn verify_link_in(
    dir: impl AsFd,
    dir_path: &Path,
    name: &str,
    target: &Path,
) -> Result<LinkRecord> {
    let cname = check_component(dir_path, OsStr::new(name))?;
    let canonical = canonical_dir(target)?;
    verify_at(&dir, &cname, &dir_path.join(name), &canonical)
}

fn verify_at(dir: impl AsFd, name: &CStr, link: &Path, canonical: &Path) -> Result<LinkRecord> {
    let refuse = |found: String| {
        unsafe_at(
            link,
            format!(
                "expected a symlink to {}, found {found}; refusing to overwrite or adopt it",
                canonical.display()
            ),
        )
    };
    let text = match what_is_at(&dir, name, link)? {
        Found::Nothing => return Err(refuse("nothing".to_string())),
        Found::Other(file_type) => return Err(refuse(describe(file_type).to_string())),
        Found::Link(text) => text,
    };
    if text.as_os_str() != canonical.as_os_str() {
        return Err(refuse(format!("a symlink to {}", text.display())));
    }
    let resolved = rfs::statat(&dir, name, AtFlags::empty()).map_err(|errno| {
        unsafe_at(
            link,
            format!(
                "the link to {} does not resolve ({}); refusing to launch",
                canonical.display(),
                std::io::Error::from(errno)
            ),
        )
    })?;
    let wanted = rfs::statat(CWD, canonical, AtFlags::empty())
        .map_err(|errno| io(canonical, "inspect link target", errno))?;
    if dev_ino(&resolved) != dev_ino(&wanted)
        || FileType::from_raw_mode(resolved.st_mode) != FileType::Directory
    {
        return Err(unsafe_at(
            link,
            format!(
                "the link resolves to a different file than {} (device or inode differ); \
                 refusing to launch",
                canonical.display()
            ),
        ));
    }
    let (dev, ino) = dev_ino(&resolved);
    Ok(LinkRecord {
        link: link.to_path_buf(),
        target: canonical.to_path_buf(),
        dev,
        ino,
        created: false,
    })
}

/// What a name in a directory is, looked at without following it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// The name is free.
    Nothing,
    /// A symlink, with its text.
    Link(PathBuf),
    /// Anything else: a file, a directory, a pipe, …
    Other(FileType),
}

impl Found {
    /// "nothing", "a symlink to X", "a directory", … for error messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            Found::Nothing => "nothing".to_string(),
            Found::Link(text) => format!("a symlink to {}", text.display()),
            Found::Other(file_type) => describe(*file_type).to_string(),
        }
    }
}

/// Looks at `name` in `dir` without following it.
pub(crate) fn what_is_at(dir: impl AsFd, name: &CStr, path: &Path) -> Result<Found> {
    let st = match rfs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(Found::Nothing),
        Err(errno) => return Err(io(path, "inspect", errno)),
    };
    let file_type = FileType::from_raw_mode(st.st_mode);
    if file_type != FileType::Symlink {
        return Ok(Found::Other(file_type));
    }
    let text = rfs::readlinkat(&dir, name, Vec::new()).map_err(|e| io(path, "read link", e))?;
    Ok(Found::Link(PathBuf::from(OsStr::from_bytes(
        text.as_bytes(),
    ))))
}

/// Removes the link `<runtime_dir>/<name>` when it is a symlink whose text is exactly
/// `expected_target` (as recorded in a [`LinkRecord`]); the target is never touched. Returns
/// `false` when the name is absent. Anything else in its place fails with an error.
pub fn remove_link(runtime_dir: &Path, name: &str, expected_target: &Path) -> Result<bool> {
    match open_dir_path(runtime_dir) {
        Ok(dir) => remove_link_in(&dir, runtime_dir, name, expected_target),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(other) => Err(other),
    }
}

/// [`remove_link`] inside the open directory `dir` (at `dir_path`).
pub fn remove_link_in(
    dir: impl AsFd,
    dir_path: &Path,
    name: &str,
    expected_target: &Path,
) -> Result<bool> {
    let cname = check_component(dir_path, OsStr::new(name))?;
    let link = dir_path.join(name);
    match what_is_at(&dir, &cname, &link)? {
        Found::Nothing => Ok(false),
        Found::Link(text) if text.as_os_str() == expected_target.as_os_str() => {
            match rfs::unlinkat(&dir, cname.as_c_str(), AtFlags::empty()) {
                Ok(()) => Ok(true),
                Err(Errno::NOENT) => Ok(false),
                Err(errno) => Err(io(&link, "remove link", errno)),
            }
        }
        found => Err(unsafe_at(
            &link,
            format!(
                "expected a symlink to {}, found {}; refusing to remove it",
                expected_target.display(),
                found.describe()
            ),
        )),
    }
}

/// Removes the runtime directory `runtime_dir` and everything in it, links included, without
/// following any link: symlinks are unlinked as names, so their targets (the real project, the
/// real output folder, or anything a hostile process planted a link to) are never touched. The
/// walk stays on the runtime's file system and refuses to descend into a mount point. Returns
/// `false` when the runtime is absent; refuses when `runtime_dir` itself is a symlink or not a
/// directory.
pub fn remove_runtime(runtime_dir: &Path) -> Result<bool> {
    let (parent, name) = split_last(runtime_dir)?;
    let parent_fd = match open_dir_path(parent) {
        Ok(fd) => fd,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(false);
        }
        Err(other) => return Err(other),
    };
    match what_is_at(&parent_fd, &name, runtime_dir)? {
        Found::Nothing => return Ok(false),
        Found::Other(FileType::Directory) => {}
        found => {
            return Err(unsafe_at(
                runtime_dir,
                format!(
                    "expected the runtime directory, found {}; refusing to remove it",
                    found.describe()
                ),
            ));
        }
    }
    let dir = open_dir_at(&parent_fd, &name, runtime_dir)?;
    remove_open_dir(&parent_fd, &name, &dir, runtime_dir)
}

/// Empties the open directory `dir` (named `name` in `parent`, at `path`) without following any
/// link, then removes its name. `Ok(false)` when the name vanished meanwhile.
fn remove_open_dir(parent: impl AsFd, name: &CStr, dir: &OwnedFd, path: &Path) -> Result<bool> {
    let (dev, _) = dev_ino(&rfs::fstat(dir).map_err(|e| io(path, "inspect runtime", e))?);
    empty_dir(dir, path, dev, 0)?;
    match rfs::unlinkat(&parent, name, AtFlags::REMOVEDIR) {
        Ok(()) => Ok(true),
        Err(Errno::NOENT) => Ok(false),
        Err(errno) => Err(io(path, "remove runtime directory", errno)),
    }
}

impl Levels {
    /// Removes the deepest level and everything in it, never following a link (its descriptor,
    /// opened during the walk, is what gets emptied), then each level above it left empty,
    /// deepest first, stopping at the first one still in use. Never removes the root.
    pub fn remove_deepest_and_prune(self) -> Result<bool> {
        let Some((deepest, above)) = self.below.split_last() else {
            return Err(unsafe_at(
                self.root(),
                "refusing to remove the runtime root itself",
            ));
        };
        // `parents[i]` is the directory holding `above[i]`; the last one holds `deepest`.
        let parents: Vec<&OwnedFd> = std::iter::once(&self.root.1)
            .chain(above.iter().map(|level| &level.fd))
            .collect();
        let holder = parents.last().copied().unwrap_or(&self.root.1);
        let removed = remove_open_dir(holder, &deepest.name, &deepest.fd, &deepest.path)?;
        for (level, parent) in above.iter().zip(&parents).rev() {
            match rfs::unlinkat(*parent, level.name.as_c_str(), AtFlags::REMOVEDIR) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(Errno::NOTEMPTY) | Err(Errno::EXIST) => break,
                Err(errno) => return Err(io(&level.path, "remove empty directory", errno)),
            }
        }
        Ok(removed)
    }
}

/// Removes every entry of the open directory `dir` (at `path`), never following a symlink.
fn empty_dir(dir: &OwnedFd, path: &Path, dev: u64, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(unsafe_at(
            path,
            format!(
                "the runtime is nested deeper than {MAX_DEPTH} directories; refusing to remove it"
            ),
        ));
    }
    // Collect the names first: removing entries while reading a directory stream is unspecified.
    let mut names: Vec<CString> = Vec::new();
    let reader = rfs::Dir::read_from(dir).map_err(|e| io(path, "read directory", e))?;
    for entry in reader {
        let entry = entry.map_err(|e| io(path, "read directory", e))?;
        let name = entry.file_name();
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            names.push(name.to_owned());
        }
    }
    for name in names {
        let child = path.join(OsStr::from_bytes(name.to_bytes()));
        let st = match rfs::statat(dir, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => continue,
            Err(errno) => return Err(io(&child, "inspect", errno)),
        };
        if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
            if dev_ino(&st).0 != dev {
                return Err(unsafe_at(
                    &child,
                    "is a mount point inside the runtime; refusing to remove across file systems",
                ));
            }
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match rfs::openat(dir, name.as_c_str(), flags, Mode::empty()) {
                Ok(sub) => {
                    empty_dir(&sub, &child, dev, depth + 1)?;
                    match rfs::unlinkat(dir, name.as_c_str(), AtFlags::REMOVEDIR) {
                        Ok(()) | Err(Errno::NOENT) => {}
                        Err(errno) => return Err(io(&child, "remove directory", errno)),
                    }
                }
                // Swapped for a link or a file since we looked: remove the name, never follow it.
                Err(Errno::LOOP) | Err(Errno::NOTDIR) => unlink_name(dir, &name, &child)?,
                Err(Errno::NOENT) => {}
                Err(errno) => return Err(io(&child, "open directory", errno)),
            }
        } else {
            unlink_name(dir, &name, &child)?;
        }
    }
    Ok(())
}

fn unlink_name(dir: &OwnedFd, name: &CStr, path: &Path) -> Result<()> {
    match rfs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(errno) => Err(io(path, "remove", errno)),
    }
}
