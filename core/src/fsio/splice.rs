//! Rewriting a large file without holding it: [`Root::open_file`] opens a regular file for
//! reading (no symlink followed, as [`Root::read`]) and keeps it open, so a caller can scan it a
//! chunk at a time; [`Root::splice_atomic`] then replaces it exactly as [`Root::write_atomic`]
//! does (temporary file, fsync, rename, fsync of the directory, mode and owner kept), its new
//! content made of ranges of the open file, copied by the kernel (`copy_file_range`), and new
//! bytes ([`Piece`]). The file's bytes pass through this process once, when they are scanned.

use rustix::fs::{FileType, Mode, OFlags};
use std::ops::Range;
use std::os::fd::OwnedFd;

use super::{Root, errno, write_all};
use crate::block::stream::Piece;
use crate::error::{Error, Result};
use crate::plan::RelPath;

/// A regular file of a root, open for reading, with what `fstat` said of it when opened.
#[derive(Debug)]
pub struct OpenFile {
    pub(super) fd: OwnedFd,
    pub(super) stat: rustix::fs::Stat,
}

/// What tells one state of a file or a directory from another: the same inode with the same size,
/// link count, modification and change times. A write changes the change time; an entry made or
/// removed in a directory changes its times or its link count (two plus its subdirectories, on
/// the file systems that keep it); a folder replaced or restored has another inode or change
/// time (no program can set a change time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileState {
    dev: u64,
    ino: u64,
    size: i64,
    nlink: u64,
    mtime: (i64, u64),
    ctime: (i64, u64),
}

impl FileState {
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    pub(super) fn of(stat: &rustix::fs::Stat) -> FileState {
        FileState {
            dev: stat.st_dev,
            ino: stat.st_ino,
            size: stat.st_size,
            nlink: stat.st_nlink as u64,
            mtime: (stat.st_mtime, stat.st_mtime_nsec),
            ctime: (stat.st_ctime, stat.st_ctime_nsec),
        }
    }

    /// The state as text: its numbers, space-separated (device, inode, links, size, then the
    /// modification and change times, to the nanosecond).
    pub fn to_text(self) -> String {
        format!(
            "{} {} {} {} {}.{} {}.{}",
            self.dev,
            self.ino,
            self.nlink,
            self.size,
            self.mtime.0,
            self.mtime.1,
            self.ctime.0,
            self.ctime.1
        )
    }
}

impl OpenFile {
    /// Its length when opened.
    pub fn len(&self) -> usize {
        usize::try_from(self.stat.st_size).unwrap_or(0)
    }

    /// Its permission bits.
    pub fn mode(&self) -> u32 {
        self.stat.st_mode & 0o7777
    }

    /// Its state when opened, to tell whether the file at its path is still the one scanned.
    pub fn state(&self) -> FileState {
        FileState::of(&self.stat)
    }

    /// Up to `len` bytes from `offset` (fewer where the file ends first), read straight into
    /// a new buffer's room (no zeroing of what the read then overwrites).
    pub fn read_vec_at(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(len);
        let filled = super::pread_uninit(&self.fd, bytes.spare_capacity_mut(), offset)?;
        // SAFETY: `pread_uninit` wrote the first `filled` bytes of the spare capacity (at most
        // its `len` bytes), and the vector held none before them.
        unsafe { bytes.set_len(filled) };
        Ok(bytes)
    }

    /// Whether this file holds `expected` from `offset`: read and compared a piece at a time,
    /// so no buffer of its size is made (a file that ends early does not hold it).
    pub fn holds_at(&self, offset: u64, expected: &[u8]) -> std::io::Result<bool> {
        super::fd_holds_at(&self.fd, offset, expected)
    }

    /// Reads into `buf` from `offset` (`pread`); 0 at the end.
    pub fn read_at(&self, offset: usize, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match rustix::io::pread(&self.fd, &mut *buf, offset as u64) {
                Err(rustix::io::Errno::INTR) => {}
                Ok(n) => {
                    super::note_read(n);
                    return Ok(n);
                }
                Err(e) => return Err(errno(e)),
            }
        }
    }
}

/// The error for a file that shrank while it was being rewritten.
fn changed() -> std::io::Error {
    std::io::Error::other("the file changed while it was being rewritten")
}

/// What a replaced file is filled with.
pub(super) enum Content<'a> {
    Bytes(&'a [u8]),
    Pieces(&'a OpenFile, &'a [Piece]),
}

impl Content<'_> {
    /// Writes the content to the new file `fd` (at its start).
    pub(super) fn write_to(&self, fd: &OwnedFd) -> std::io::Result<()> {
        match self {
            Content::Bytes(bytes) => write_all(fd, bytes),
            Content::Pieces(source, pieces) => {
                for piece in *pieces {
                    match piece {
                        Piece::Original(range) => copy_range(source, range.clone(), fd)?,
                        Piece::New(bytes) => write_all(fd, bytes)?,
                    }
                }
                Ok(())
            }
        }
    }
}

/// Copies `range` of `source` to `fd`'s position, by `copy_file_range` (the kernel moves the
/// bytes, or shares them on a file system that can), or by `pread` and `write` where that is not
/// available.
fn copy_range(source: &OpenFile, range: Range<usize>, fd: &OwnedFd) -> std::io::Result<()> {
    let mut at = range.start as u64;
    let end = range.end as u64;
    while at < end {
        let want = usize::try_from(end - at).unwrap_or(usize::MAX);
        match rustix::fs::copy_file_range(&source.fd, Some(&mut at), fd, None, want) {
            Ok(0) => return Err(changed()),
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(
                rustix::io::Errno::XDEV
                | rustix::io::Errno::NOSYS
                | rustix::io::Errno::INVAL
                | rustix::io::Errno::OPNOTSUPP,
            ) => return copy_by_reading(source, at as usize..range.end, fd),
            Err(e) => return Err(errno(e)),
        }
    }
    Ok(())
}

fn copy_by_reading(source: &OpenFile, range: Range<usize>, fd: &OwnedFd) -> std::io::Result<()> {
    let mut buf = vec![0u8; (range.len()).clamp(1, 256 * 1024)];
    let mut at = range.start;
    while at < range.end {
        let want = (range.end - at).min(buf.len());
        let n = source.read_at(at, &mut buf[..want])?;
        if n == 0 {
            return Err(changed());
        }
        write_all(fd, &buf[..n])?;
        at += n;
    }
    Ok(())
}

impl Root {
    /// Whether the file `rel` ends a line ([`crate::block::ends_line`] of its bytes): empty, a
    /// BOM alone, or `\n` last; a file that is not there ends none and starts none, so `true`.
    /// Reads at most its last three bytes.
    pub fn ends_line(&self, rel: &RelPath) -> Result<bool> {
        let Some(file) = self.open_file(rel)? else {
            return Ok(true);
        };
        let len = file.len();
        let mut tail = [0u8; 3];
        let from = len.saturating_sub(tail.len());
        let n = file
            .read_at(from, &mut tail[..len - from])
            .map_err(|e| Error::io(self.display_path(rel), "read", e))?;
        Ok(crate::block::ends_line(&tail[..n]) && (n == len || tail[..n].ends_with(b"\n")))
    }

    /// Opens the regular file `rel` for reading, without following a symlink at it or on the
    /// way (the refusals of [`Root::read`]). `Ok(None)` when it does not exist.
    pub fn open_file(&self, rel: &RelPath) -> Result<Option<OpenFile>> {
        let Some(parent) = self.open_parent(rel)? else {
            return Ok(None);
        };
        self.open_file_in(&parent, rel)
    }

    pub(super) fn open_file_in(
        &self,
        parent: &super::DirFd<'_>,
        rel: &RelPath,
    ) -> Result<Option<OpenFile>> {
        let name = rel.file_name();
        let fd = match rustix::fs::openat(
            parent,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => {
                return Err(self.explain(
                    parent,
                    name,
                    std::path::Path::new(rel.as_str()),
                    e,
                    false,
                ));
            }
        };
        let stat = rustix::fs::fstat(&fd)
            .map_err(|e| Error::io(self.display_path(rel), "stat", errno(e)))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(Error::Unsafe {
                path: self.display_path(rel),
                reason: "expected a regular file but found a directory or special file".to_string(),
            });
        }
        Ok(Some(OpenFile { fd, stat }))
    }

    /// The state of the file at `rel` now (`None`: no regular file there), to compare with
    /// [`OpenFile::state`].
    pub fn file_state(&self, rel: &RelPath) -> Option<FileState> {
        let parent = self.open_parent(rel).ok()??;
        self.regular_file_stat(&parent, rel)
            .ok()?
            .map(|stat| FileState::of(&stat))
    }

    /// Atomically and durably replaces the regular file `rel` (which `source` is open on) with
    /// `pieces`: exactly [`Root::write_atomic`] of the bytes the pieces make.
    pub fn splice_atomic(
        &self,
        rel: &RelPath,
        source: &OpenFile,
        pieces: &[Piece],
        mode: Option<u32>,
    ) -> Result<()> {
        self.replace_file(rel, Content::Pieces(source, pieces), mode, true)
    }
}
