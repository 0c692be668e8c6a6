//! Whole-folder operations for projected skills and the prior folders they take over: scan a tree,
//! copy a source folder in, copy or move a tree between roots (the workspace and the state
//! directory, which may live on different file systems), rename or exchange folders, and remove a
//! tree.
//!
//! Everything walks directory descriptors: `openat` with `O_NOFOLLOW | O_DIRECTORY`, `fstatat` with
//! `AT_SYMLINK_NOFOLLOW`, `unlinkat`, `renameat2`. Nothing is ever read, written or deleted through a
//! symlink:
//!
//! - a **source skill** holding a symlink (or a fifo, socket or device) is refused with an error
//!   naming it: following it could copy files from outside the skill, and copying it as a link
//!   could point a CLI outside the project;
//! - a **prior folder** (the project's own, taken over) is moved whole by `rename` when the state
//!   directory is on the same file system; across file systems it is copied with its symlinks
//!   copied *as links* (never followed), its modes and times kept, then removed;
//! - removal unlinks a symlink as a name and never descends into it.
//!
//! Every mutating operation calls `faults::check` first, so crash points can be
//! enumerated; [`super::faults::force_cross_device`] makes every move take the copy path, so tests
//! cover it on one file system.
#![allow(clippy::disallowed_methods)]

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, Stat, Timestamps};
use rustix::io::Errno;
use sha2::{Digest, Sha256};

use super::{DirFd, Root, TEMP_INFIX, errno, faults, open_dir_in, random_hex};
use crate::error::{Error, Result};
use crate::plan::RelPath;

/// How deep a folder may nest before an operation refuses it.
pub const MAX_DEPTH: usize = 64;
/// How many entries a scanned or copied folder may hold before an operation refuses it.
pub const MAX_ENTRIES: usize = 100_000;

/// What one entry of a scanned tree is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreeKind {
    /// A regular file, with the SHA-256 of its content.
    File {
        /// SHA-256 of the content.
        sha256: [u8; 32],
        /// Length in bytes.
        len: u64,
    },
    /// A directory (its entries follow it in the scan).
    Dir,
    /// A symbolic link, with its target text (never followed).
    Symlink {
        /// The link's target, as stored.
        target: Vec<u8>,
    },
    /// A fifo, socket or device.
    Other,
}

/// One entry of a scanned tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeEntry {
    /// Relative to the scanned folder, never empty.
    pub path: PathBuf,
    /// What it is.
    pub kind: TreeKind,
    /// Permission bits (`st_mode & 0o7777`).
    pub mode: u32,
}

/// Lowercase hex of a digest (or any bytes).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// What a copy does with symlinks and mode bits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Copy {
    /// A source skill: symlinks and special files refused, names must be UTF-8, modes masked to
    /// `0o777`, times not kept.
    Source,
    /// A folder moved or set aside: symlinks copied as links, modes and times kept exactly.
    Exact,
}

fn io(path: &Path, action: &'static str, e: Errno) -> Error {
    Error::io(path, action, errno(e))
}

fn c_name(name: &OsStr, display: &Path) -> Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| {
        Error::invalid(
            display.display().to_string(),
            "a path must not contain a NUL byte",
        )
    })
}

fn name_os(name: &CStr) -> &OsStr {
    OsStr::from_bytes(name.to_bytes())
}

fn timestamps(st: &Stat) -> Timestamps {
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    let spec = |sec: i64, nsec: i64| rustix::fs::Timespec {
        tv_sec: sec,
        tv_nsec: nsec as _,
    };
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    Timestamps {
        last_access: spec(st.st_atime as i64, st.st_atime_nsec as i64),
        last_modification: spec(st.st_mtime as i64, st.st_mtime_nsec as i64),
    }
}

/// The names in an open directory, sorted, without `.` and `..`.
fn list_names(dir: impl AsFd, display: &Path) -> Result<Vec<CString>> {
    let mut names = Vec::new();
    // A descriptor of its own, whose read position is this listing's.
    let reader = open_dir_in(dir, c".")
        .and_then(rustix::fs::Dir::new)
        .map_err(|e| io(display, "read directory", e))?;
    for entry in reader {
        let entry = entry.map_err(|e| io(display, "read directory", e))?;
        let name = entry.file_name();
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            names.push(name.to_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// Opens `name` under `dir` as a directory without following a symlink in its place.
fn open_subdir(dir: impl AsFd, name: &CStr, display: &Path) -> Result<OwnedFd> {
    match open_dir_in(&dir, name) {
        Ok(fd) => Ok(fd),
        Err(Errno::LOOP | Errno::NOTDIR) => Err(Error::Unsafe {
            path: display.to_path_buf(),
            reason: "expected a directory, found a symlink or file; refusing to follow it".into(),
        }),
        Err(e) => Err(io(display, "open the directory", e)),
    }
}

fn depth_check(depth: usize, display: &Path) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::Unsafe {
            path: display.to_path_buf(),
            reason: format!("the folder nests deeper than {MAX_DEPTH} directories"),
        });
    }
    Ok(())
}

fn count_check(count: usize, display: &Path) -> Result<()> {
    if count > MAX_ENTRIES {
        return Err(Error::Unsafe {
            path: display.to_path_buf(),
            reason: format!("the folder holds more than {MAX_ENTRIES} entries"),
        });
    }
    Ok(())
}

/// Hashes (and optionally copies) an open regular file.
fn hash_file(src: OwnedFd, mut sink: Option<&mut File>, display: &Path) -> Result<([u8; 32], u64)> {
    let mut file = File::from(src);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut len = 0u64;
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| Error::io(display, "read", e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        if let Some(out) = sink.as_deref_mut() {
            out.write_all(&buf[..n])
                .map_err(|e| Error::io(display, "write a copy of", e))?;
        }
        len += n as u64;
    }
    Ok((hasher.finalize().into(), len))
}

fn open_regular(dir: BorrowedFd<'_>, name: &CStr, display: &Path) -> Result<OwnedFd> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| io(display, "open", e))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| io(display, "stat", e))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(Error::Unsafe {
            path: display.to_path_buf(),
            reason: "the file changed into something else while it was read".into(),
        });
    }
    Ok(fd)
}

fn scan_into(
    dir: &OwnedFd,
    prefix: &Path,
    top: &Path,
    depth: usize,
    out: &mut Vec<TreeEntry>,
) -> Result<()> {
    depth_check(depth, &top.join(prefix))?;
    for name in list_names(dir, &top.join(prefix))? {
        let rel = prefix.join(name_os(&name));
        let shown = top.join(&rel);
        let st = match rustix::fs::statat(dir, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => continue,
            Err(e) => return Err(io(&shown, "stat", e)),
        };
        let mode = st.st_mode & 0o7777;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {
                let fd = open_regular(dir.as_fd(), &name, &shown)?;
                let (sha256, len) = hash_file(fd, None, &shown)?;
                out.push(TreeEntry {
                    path: rel,
                    kind: TreeKind::File { sha256, len },
                    mode,
                });
            }
            FileType::Directory => {
                out.push(TreeEntry {
                    path: rel.clone(),
                    kind: TreeKind::Dir,
                    mode,
                });
                let sub = open_subdir(dir, &name, &shown)?;
                scan_into(&sub, &rel, top, depth + 1, out)?;
            }
            FileType::Symlink => {
                let target = rustix::fs::readlinkat(dir, name.as_c_str(), Vec::new())
                    .map_err(|e| io(&shown, "read the symlink", e))?;
                out.push(TreeEntry {
                    path: rel,
                    kind: TreeKind::Symlink {
                        target: target.into_bytes(),
                    },
                    mode,
                });
            }
            _ => out.push(TreeEntry {
                path: rel,
                kind: TreeKind::Other,
                mode,
            }),
        }
        count_check(out.len(), top)?;
    }
    Ok(())
}

/// Scans a folder given by an absolute path (a skill's source, a test's fixture). The path itself
/// is the caller's choice and is opened as given; nothing below it is followed.
pub fn scan_path(dir: &Path) -> Result<Vec<TreeEntry>> {
    let fd = open_source(dir)?;
    let mut out = Vec::new();
    scan_into(&fd, Path::new(""), dir, 0, &mut out)?;
    Ok(out)
}

fn open_source(dir: &Path) -> Result<OwnedFd> {
    rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::NOTDIR => Error::Unsafe {
            path: dir.to_path_buf(),
            reason: "expected a folder but found a file".into(),
        },
        other => io(dir, "open the folder", other),
    })
}

/// Copies the directory `src` (open) into the new, open directory `dst`.
#[allow(clippy::too_many_arguments)]
fn copy_dir(
    src: &OwnedFd,
    dst: &OwnedFd,
    prefix: &Path,
    src_top: &Path,
    dst_top: &Path,
    how: Copy,
    skip: &[&str],
    depth: usize,
    out: &mut Vec<TreeEntry>,
) -> Result<()> {
    depth_check(depth, &src_top.join(prefix))?;
    for name in list_names(src, &src_top.join(prefix))? {
        if depth == 0 && skip.iter().any(|s| s.as_bytes() == name.to_bytes()) {
            continue;
        }
        let rel = prefix.join(name_os(&name));
        let shown = src_top.join(&rel);
        if how == Copy::Source && std::str::from_utf8(name.to_bytes()).is_err() {
            return Err(Error::Unsafe {
                path: shown,
                reason: "a skill's file names must be UTF-8".into(),
            });
        }
        copy_node(
            src.as_fd(),
            &name,
            dst.as_fd(),
            &name,
            &shown,
            &dst_top.join(&rel),
            how,
            depth,
            out,
            &rel,
        )?;
        count_check(out.len(), src_top)?;
    }
    super::sync(dst).map_err(|e| io(&dst_top.join(prefix), "fsync the directory", e))?;
    Ok(())
}

/// Copies one entry `src_name` of `src_parent` to the new name `dst_name` in `dst_parent`.
#[allow(clippy::too_many_arguments)]
fn copy_node(
    src_parent: BorrowedFd<'_>,
    src_name: &CStr,
    dst_parent: BorrowedFd<'_>,
    dst_name: &CStr,
    shown: &Path,
    dst_shown: &Path,
    how: Copy,
    depth: usize,
    out: &mut Vec<TreeEntry>,
    rel: &Path,
) -> Result<()> {
    let st = rustix::fs::statat(src_parent, src_name, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| io(shown, "stat", e))?;
    let mask = if how == Copy::Source { 0o777 } else { 0o7777 };
    let mode = st.st_mode & mask;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {
            let src = open_regular(src_parent, src_name, shown)?;
            let mut sink = create_new(dst_parent, dst_name, dst_shown)?;
            let (sha256, len) = hash_file(src, Some(&mut sink), shown)?;
            set_mode_and_times(&sink, mode, (how == Copy::Exact).then_some(&st), dst_shown)?;
            super::sync(&sink).map_err(|e| io(dst_shown, "fsync", e))?;
            out.push(TreeEntry {
                path: rel.to_path_buf(),
                kind: TreeKind::File { sha256, len },
                mode,
            });
        }
        FileType::Directory => {
            rustix::fs::mkdirat(dst_parent, dst_name, Mode::from_raw_mode(0o700))
                .map_err(|e| io(dst_shown, "create the directory", e))?;
            let src = open_subdir(src_parent, src_name, shown)?;
            let dst = open_subdir(dst_parent, dst_name, dst_shown)?;
            out.push(TreeEntry {
                path: rel.to_path_buf(),
                kind: TreeKind::Dir,
                mode,
            });
            copy_dir(
                &src,
                &dst,
                rel,
                &strip(shown, rel),
                &strip(dst_shown, rel),
                how,
                &[],
                depth + 1,
                out,
            )?;
            set_mode_and_times(&dst, mode, (how == Copy::Exact).then_some(&st), dst_shown)?;
        }
        FileType::Symlink => {
            let target = rustix::fs::readlinkat(src_parent, src_name, Vec::new())
                .map_err(|e| io(shown, "read the symlink", e))?;
            if how == Copy::Source {
                return Err(Error::Symlink {
                    path: shown.to_path_buf(),
                    detail: format!(
                        "a skill may not contain symlinks (this one points to {}); it was neither followed nor copied",
                        target.to_string_lossy()
                    ),
                });
            }
            rustix::fs::symlinkat(target.as_c_str(), dst_parent, dst_name)
                .map_err(|e| io(dst_shown, "create the symlink", e))?;
            let _ = rustix::fs::utimensat(
                dst_parent,
                dst_name,
                &timestamps(&st),
                AtFlags::SYMLINK_NOFOLLOW,
            );
            out.push(TreeEntry {
                path: rel.to_path_buf(),
                kind: TreeKind::Symlink {
                    target: target.into_bytes(),
                },
                mode: st.st_mode & 0o7777,
            });
        }
        _ => {
            return Err(Error::Unsafe {
                path: shown.to_path_buf(),
                reason: "a fifo, socket or device cannot be copied; nothing was changed".into(),
            });
        }
    }
    Ok(())
}

/// Creates the new regular file `name` in `dir` (mode 0600 until set), never following a link.
fn create_new(dir: BorrowedFd<'_>, name: &CStr, shown: &Path) -> Result<File> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map(File::from)
    .map_err(|e| io(shown, "create", e))
}

/// Sets the mode of the open file or directory `fd`, and its times from `times` when given.
fn set_mode_and_times(
    fd: impl std::os::fd::AsFd,
    mode: u32,
    times: Option<&rustix::fs::Stat>,
    shown: &Path,
) -> Result<()> {
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))
        .map_err(|e| io(shown, "set the mode of", e))?;
    if let Some(st) = times {
        rustix::fs::futimens(&fd, &timestamps(st)).map_err(|e| io(shown, "set the times of", e))?;
    }
    Ok(())
}

/// `shown` minus the trailing `rel` components: the top a relative path is joined to.
fn strip(shown: &Path, rel: &Path) -> PathBuf {
    let mut top = shown.to_path_buf();
    for _ in rel.components() {
        top.pop();
    }
    top
}

/// Removes every entry of the open directory `dir`, never following a symlink. A directory without
/// owner write permission is made writable first (it is being removed anyway).
fn empty_dir(dir: &OwnedFd, display: &Path, depth: usize) -> Result<()> {
    depth_check(depth, display)?;
    for name in list_names(dir, display)? {
        let shown = display.join(name_os(&name));
        remove_node(dir.as_fd(), &name, &shown, depth + 1)?;
    }
    Ok(())
}

/// Removes `name` from `parent`: a directory with everything in it, anything else as a name.
/// `Ok(false)` when it was already gone.
fn remove_node(parent: BorrowedFd<'_>, name: &CStr, shown: &Path, depth: usize) -> Result<bool> {
    let st = match rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(false),
        Err(e) => return Err(io(shown, "stat", e)),
    };
    if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
        let sub = open_subdir(parent, name, shown)?;
        if st.st_mode & 0o700 != 0o700 {
            rustix::fs::fchmod(&sub, Mode::from_raw_mode((st.st_mode & 0o7777) | 0o700))
                .map_err(|e| io(shown, "make writable before removing", e))?;
        }
        empty_dir(&sub, shown, depth)?;
        match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => Ok(true),
            Err(e) => Err(io(shown, "remove the directory", e)),
        }
    } else {
        match rustix::fs::unlinkat(parent, name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(io(shown, "remove", e)),
        }
    }
}

/// `renameat2(RENAME_NOREPLACE)`, falling back to a checked plain rename where the file system does
/// not support the flag (we hold the workspace lock, so the check is ours alone to race).
fn rename_noreplace_at(
    from_dir: BorrowedFd<'_>,
    from: &CStr,
    to_dir: BorrowedFd<'_>,
    to: &CStr,
    shown: &Path,
) -> std::result::Result<(), Errno> {
    match rustix::fs::renameat_with(from_dir, from, to_dir, to, RenameFlags::NOREPLACE) {
        Err(Errno::INVAL | Errno::NOSYS) => {
            let _ = shown;
            match rustix::fs::statat(to_dir, to, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(_) => Err(Errno::EXIST),
                Err(Errno::NOENT) => rustix::fs::renameat(from_dir, from, to_dir, to),
                Err(e) => Err(e),
            }
        }
        other => other,
    }
}

fn sync_dir(fd: impl AsFd, shown: &Path) -> Result<()> {
    super::sync(fd).map_err(|e| io(shown, "fsync the directory of", e))
}

impl Root {
    /// Opens the directory `rel` itself without following a symlink. `Ok(None)` when it (or a
    /// parent) is missing; an error when something other than a directory stands there.
    fn open_dir_rel(&self, rel: &RelPath) -> Result<Option<OwnedFd>> {
        let Some(parent) = self.open_parent(rel)? else {
            return Ok(None);
        };
        match open_dir_in(&parent, rel.file_name()) {
            Ok(fd) => Ok(Some(fd)),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(self.explain(&parent, rel.file_name(), Path::new(rel.as_str()), e, true)),
        }
    }

    /// Opens the directory holding `rel/inner` and returns it with the last name. `inner` empty
    /// means `rel` itself. `Ok(None)` when a directory on the way is missing.
    fn open_inner_parent(
        &self,
        rel: &RelPath,
        inner: &Path,
    ) -> Result<Option<(DirFd<'_>, CString)>> {
        let mut components: Vec<&OsStr> = inner.iter().collect();
        let Some(last) = components.pop() else {
            let Some(parent) = self.open_parent(rel)? else {
                return Ok(None);
            };
            let name = c_name(OsStr::new(rel.file_name()), &self.display_path(rel))?;
            return Ok(Some((parent, name)));
        };
        let Some(mut dir) = self.open_dir_rel(rel)? else {
            return Ok(None);
        };
        let mut shown = self.display_path(rel);
        for component in components {
            shown.push(component);
            let name = c_name(component, &shown)?;
            match open_dir_in(&dir, name.as_c_str()) {
                Ok(fd) => dir = fd,
                Err(Errno::NOENT) => return Ok(None),
                Err(_) => {
                    return Err(Error::Unsafe {
                        path: shown,
                        reason:
                            "expected a directory, found a symlink or file; refusing to follow it"
                                .into(),
                    });
                }
            }
        }
        let name = c_name(last, &self.display_path(rel).join(inner))?;
        Ok(Some((DirFd::Opened(dir), name)))
    }

    /// The names of every entry directly inside the directory `rel` (lossily as UTF-8), never
    /// following a symlink on the way or at `rel`. `Ok(None)` when it is missing; an error when
    /// a symlink or a file stands there.
    pub fn entry_names(&self, rel: &RelPath) -> Result<Option<Vec<String>>> {
        let Some(fd) = self.open_dir_rel(rel)? else {
            return Ok(None);
        };
        let names = list_names(&fd, &self.display_path(rel))?;
        Ok(Some(
            names
                .iter()
                .map(|n| String::from_utf8_lossy(n.to_bytes()).into_owned())
                .collect(),
        ))
    }

    /// Opens the directory `rel` below this root as a root of its own, never following a
    /// symlink on the way or at `rel`; with `create`, missing directories are made (mode 0700).
    /// `Ok(None)` when it is missing and not created; an error when a symlink or a file stands
    /// on the way.
    pub fn open_subroot(&self, rel: &RelPath, create: bool) -> Result<Option<Root>> {
        // Usually there already: one open, and the directories are made only when it is missing.
        let opened = self.open_dir_rel(rel)?;
        if create && opened.is_none() {
            for dir in rel.ancestors().iter().chain(std::iter::once(rel)) {
                let Some(parent) = self.open_parent(dir)? else {
                    return Ok(None);
                };
                let shown = self.display_path(dir);
                let name = c_name(OsStr::new(dir.file_name()), &shown)?;
                self.note_change();
                match rustix::fs::mkdirat(&parent, name.as_c_str(), Mode::from_raw_mode(0o700)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(io(&shown, "create the directory", e)),
                }
            }
        }
        let opened = match opened {
            Some(fd) => Some(fd),
            None if create => self.open_dir_rel(rel)?,
            None => None,
        };
        Ok(opened.map(|fd| Root::of(self.display_path(rel), fd)))
    }

    /// Lists the folder `rel` and everything below it (files with their SHA-256), without
    /// following symlinks. `Ok(None)` when it is missing; an error when `rel` is a symlink or a
    /// file.
    pub fn scan_tree(&self, rel: &RelPath) -> Result<Option<Vec<TreeEntry>>> {
        let Some(fd) = self.open_dir_rel(rel)? else {
            return Ok(None);
        };
        let mut out = Vec::new();
        scan_into(&fd, Path::new(""), &self.display_path(rel), 0, &mut out)?;
        Ok(Some(out))
    }

    /// Creates the folder `rel` (its parent must exist; `rel` must not) and copies the skill folder
    /// `source` into it, leaving out the top-level names in `skip`. A symlink, fifo, socket or
    /// device in the source, or a file name that is not UTF-8, is refused with an error naming it
    /// (the half-built folder is the caller's to remove). Modes are copied (without set-id and
    /// sticky bits); everything is fsynced. Returns what was written.
    pub fn copy_in_tree(
        &self,
        source: &Path,
        rel: &RelPath,
        skip: &[&str],
    ) -> Result<Vec<TreeEntry>> {
        let src = open_source(source)?;
        let src_mode = rustix::fs::fstat(&src)
            .map_err(|e| io(source, "stat", e))?
            .st_mode
            & 0o777;
        let parent = self.require_parent(rel)?;
        let display = self.display_path(rel);
        let name = c_name(OsStr::new(rel.file_name()), &display)?;
        faults::check("copy_in_tree", &display)?;
        self.note_change();
        rustix::fs::mkdirat(&parent, name.as_c_str(), Mode::from_raw_mode(0o700))
            .map_err(|e| io(&display, "create the directory", e))?;
        let dst = open_subdir(&parent, &name, &display)?;
        let mut out = Vec::new();
        copy_dir(
            &src,
            &dst,
            Path::new(""),
            source,
            &display,
            Copy::Source,
            skip,
            0,
            &mut out,
        )?;
        rustix::fs::fchmod(&dst, Mode::from_raw_mode(src_mode | 0o700))
            .map_err(|e| io(&display, "set the mode of", e))?;
        sync_dir(&dst, &display)?;
        sync_dir(&parent, &display)?;
        Ok(out)
    }

    /// Renames `from` to `to` within this root; refuses when `to` exists.
    pub fn rename_noreplace(&self, from: &RelPath, to: &RelPath) -> Result<()> {
        self.rename_inner(from, Path::new(""), to, Path::new(""))
    }

    /// Renames `from/from_inner` to `to/to_inner` within this root (no symlink followed on the
    /// way); refuses when the target exists or its parent is missing.
    pub fn rename_inner(
        &self,
        from: &RelPath,
        from_inner: &Path,
        to: &RelPath,
        to_inner: &Path,
    ) -> Result<()> {
        let shown = self.display_path(from).join(from_inner);
        let target = self.display_path(to).join(to_inner);
        let missing = |p: &Path| {
            Error::io(
                p,
                "rename",
                std::io::Error::from(std::io::ErrorKind::NotFound),
            )
        };
        let (from_dir, from_name) = self
            .open_inner_parent(from, from_inner)?
            .ok_or_else(|| missing(&shown))?;
        let (to_dir, to_name) = self
            .open_inner_parent(to, to_inner)?
            .ok_or_else(|| missing(&target))?;
        faults::check("rename", &shown)?;
        self.note_change();
        rename_noreplace_at(
            from_dir.as_fd(),
            &from_name,
            to_dir.as_fd(),
            &to_name,
            &shown,
        )
        .map_err(|e| {
            Error::io(
                &shown,
                "rename",
                std::io::Error::other(format!("to {}: {}", target.display(), errno(e))),
            )
        })?;
        sync_dir(&to_dir, &target)?;
        sync_dir(&from_dir, &shown)?;
        Ok(())
    }

    /// Atomically exchanges the folders `a` and `b` (siblings or not, within this root).
    /// `Ok(false)` when the file system cannot exchange (nothing was changed).
    pub fn exchange(&self, a: &RelPath, b: &RelPath) -> Result<bool> {
        let shown = self.display_path(a);
        let missing = |r: &RelPath| {
            Error::io(
                self.display_path(r),
                "exchange",
                std::io::Error::from(std::io::ErrorKind::NotFound),
            )
        };
        let a_dir = self.open_parent(a)?.ok_or_else(|| missing(a))?;
        let b_dir = self.open_parent(b)?.ok_or_else(|| missing(b))?;
        faults::check("exchange", &shown)?;
        self.note_change();
        if faults::exchange_disabled() {
            return Ok(false);
        }
        match rustix::fs::renameat_with(
            &a_dir,
            a.file_name(),
            &b_dir,
            b.file_name(),
            RenameFlags::EXCHANGE,
        ) {
            Ok(()) => {
                sync_dir(&a_dir, &shown)?;
                sync_dir(&b_dir, &self.display_path(b))?;
                Ok(true)
            }
            Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => Ok(false),
            Err(e) => Err(io(&shown, "exchange", e)),
        }
    }

    /// Removes `rel` and everything below it, never following a symlink (a symlink is removed as
    /// a name). `Ok(false)` when it was already gone.
    pub fn remove_tree(&self, rel: &RelPath) -> Result<bool> {
        let Some(parent) = self.open_parent(rel)? else {
            return Ok(false);
        };
        let display = self.display_path(rel);
        let name = c_name(OsStr::new(rel.file_name()), &display)?;
        faults::check("remove_tree", &display)?;
        let removed = remove_node(parent.as_fd(), &name, &display, 0)?;
        sync_dir(&parent, &display)?;
        Ok(removed)
    }

    /// Removes our temporary entries beside `rel` (`.{name}.projectfile-tmp.*`, files or folders
    /// with everything in them), except the names in `except`. Only we create such names, and
    /// only ever with our own bytes in them. Returns how many were removed.
    pub fn remove_temp_entries(&self, rel: &RelPath, except: &[String]) -> Result<usize> {
        let Ok(Some(parent)) = self.open_parent(rel) else {
            return Ok(0);
        };
        let prefix = format!(".{}{TEMP_INFIX}", rel.file_name());
        let parent_shown = self
            .display_path(rel)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut removed = 0;
        for name in list_names(&parent, &parent_shown)? {
            let text = String::from_utf8_lossy(name.to_bytes()).into_owned();
            if !text.starts_with(&prefix) || except.contains(&text) {
                continue;
            }
            let shown = parent_shown.join(&text);
            faults::check("remove_temp", &shown)?;
            if remove_node(parent.as_fd(), &name, &shown, 0)? {
                removed += 1;
            }
        }
        if removed > 0 {
            sync_dir(&parent, &parent_shown)?;
        }
        Ok(removed)
    }

    /// Copies the entry `rel/inner` (a file, a symlink as a link, or a folder with everything in
    /// it) to `to/to_inner` under `dest`, creating the missing directories of `to_inner` (mode
    /// 0700). Modes and times are kept; nothing is followed. The target must not exist.
    pub fn copy_entry_to(
        &self,
        rel: &RelPath,
        inner: &Path,
        dest: &Root,
        to: &RelPath,
        to_inner: &Path,
    ) -> Result<()> {
        let shown = self.display_path(rel).join(inner);
        let target = dest.display_path(to).join(to_inner);
        let (src_dir, src_name) = self.open_inner_parent(rel, inner)?.ok_or_else(|| {
            Error::io(
                &shown,
                "copy",
                std::io::Error::from(std::io::ErrorKind::NotFound),
            )
        })?;
        faults::check("copy_entry", &target)?;
        dest.note_change();
        let mut dir = dest.open_dir_rel(to)?.ok_or_else(|| {
            Error::io(
                dest.display_path(to),
                "copy into",
                std::io::Error::from(std::io::ErrorKind::NotFound),
            )
        })?;
        let mut components: Vec<&OsStr> = to_inner.iter().collect();
        let last = components.pop();
        let mut walked = dest.display_path(to);
        for component in components {
            walked.push(component);
            let name = c_name(component, &walked)?;
            match rustix::fs::mkdirat(&dir, name.as_c_str(), Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(io(&walked, "create the directory", e)),
            }
            dir = open_subdir(&dir, &name, &walked)?;
        }
        let dst_name = match last {
            Some(last) => c_name(last, &target)?,
            None => c_name(OsStr::new(to.file_name()), &target)?,
        };
        let mut out = Vec::new();
        copy_node(
            src_dir.as_fd(),
            &src_name,
            dir.as_fd(),
            &dst_name,
            &shown,
            &target,
            Copy::Exact,
            0,
            &mut out,
            Path::new(""),
        )?;
        sync_dir(&dir, &target)?;
        Ok(())
    }
}

/// Moves the entry `from` under `from_root` to `to` under `to_root` (which must not exist; its
/// parent must). A rename when both are on one file system; otherwise the entry is copied exactly
/// (modes, times, symlinks as links) to a temporary name beside `to`, renamed into place, and only
/// then removed at `from`. A crash at any point leaves the entry whole at `from`, or whole at
/// `to` (perhaps with a copy still at `from`), plus at most a temporary entry beside `to` that
/// [`Root::remove_temp_entries`] cleans.
pub fn move_tree(from_root: &Root, from: &RelPath, to_root: &Root, to: &RelPath) -> Result<()> {
    let shown = from_root.display_path(from);
    let target = to_root.display_path(to);
    let missing = |p: &Path| {
        Error::io(
            p,
            "move",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    };
    let from_dir = from_root
        .open_parent(from)?
        .ok_or_else(|| missing(&shown))?;
    let to_dir = to_root.open_parent(to)?.ok_or_else(|| missing(&target))?;
    let from_name = c_name(OsStr::new(from.file_name()), &shown)?;
    let to_name = c_name(OsStr::new(to.file_name()), &target)?;
    faults::check("move_tree", &shown)?;
    to_root.note_change();
    if !faults::cross_device_forced() {
        match rename_noreplace_at(
            from_dir.as_fd(),
            &from_name,
            to_dir.as_fd(),
            &to_name,
            &shown,
        ) {
            Ok(()) => {
                sync_dir(&to_dir, &target)?;
                sync_dir(&from_dir, &shown)?;
                return Ok(());
            }
            Err(Errno::XDEV) => {}
            Err(e) => {
                return Err(Error::io(
                    &shown,
                    "move",
                    std::io::Error::other(format!("to {}: {}", target.display(), errno(e))),
                ));
            }
        }
    }
    match rustix::fs::statat(&to_dir, to_name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
        Err(Errno::NOENT) => {}
        Ok(_) => {
            return Err(Error::Unsafe {
                path: target,
                reason: "something already stands where a folder is to be moved".into(),
            });
        }
        Err(e) => return Err(io(&target, "stat", e)),
    }
    let temp = format!(".{}{TEMP_INFIX}{}", to.file_name(), random_hex(8)?);
    let temp_name = c_name(OsStr::new(&temp), &target)?;
    let mut out = Vec::new();
    let copied = copy_node(
        from_dir.as_fd(),
        &from_name,
        to_dir.as_fd(),
        &temp_name,
        &shown,
        &target,
        Copy::Exact,
        0,
        &mut out,
        Path::new(""),
    );
    if let Err(e) = copied {
        let _ = remove_node(to_dir.as_fd(), &temp_name, &target, 0);
        return Err(e);
    }
    sync_dir(&to_dir, &target)?;
    faults::check("move_tree:before_rename", &target)?;
    rename_noreplace_at(
        to_dir.as_fd(),
        &temp_name,
        to_dir.as_fd(),
        &to_name,
        &target,
    )
    .map_err(|e| io(&target, "rename the copy into place", e))?;
    sync_dir(&to_dir, &target)?;
    faults::check("move_tree:before_remove", &shown)?;
    remove_node(from_dir.as_fd(), &from_name, &shown, 0)?;
    sync_dir(&from_dir, &shown)?;
    Ok(())
}
