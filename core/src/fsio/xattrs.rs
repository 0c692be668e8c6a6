//! Extended attributes carried from a file to the file that replaces it: every attribute of every
//! namespace the caller may read (`user.*`, `trusted.*` for a privileged caller, `security.*`,
//! and the POSIX ACLs, which are the `system.posix_acl_access` attribute), set on the temporary
//! file before it is renamed over the old one, as its mode and owner are. An atomic rewrite makes
//! a new inode; without this, a team folder's ACL on `AGENTS.md`, or a file's `user.*` tags,
//! would be lost by one session.
//!
//! An attribute that cannot be set on the new file (a `security.*` label the caller may not set,
//! a file system that takes no attributes of that namespace) refuses the write, unless the new
//! file already holds the same value (a label the system gave it): nothing is dropped silently.
//! An attribute the new file got that the old one did not have (an ACL inherited from the
//! folder's default ACL) is removed, so the rewritten file carries exactly the old one's.

use std::ffi::CString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{Mode, OFlags, XattrFlags};

use crate::error::{Error, Result};

/// A file's extended attributes, by name, as read.
#[derive(Debug, Default)]
pub(super) struct Attributes {
    pairs: Vec<(CString, Vec<u8>)>,
}

/// Opens the regular file `name` in `dir` without following a link, for its attributes,
/// checking it is the file `stat` describes (a file swapped in meanwhile is not taken for it):
/// `None` when it is gone or another file now.
fn open_same(dir: BorrowedFd<'_>, name: &str, stat: &rustix::fs::Stat) -> Option<OwnedFd> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .or_else(|_| {
        // No read permission: a path handle still names the inode for `/proc/self/fd`.
        rustix::fs::openat(
            dir,
            name,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
    })
    .ok()?;
    let now = rustix::fs::fstat(&fd).ok()?;
    (now.st_dev == stat.st_dev && now.st_ino == stat.st_ino).then_some(fd)
}

/// The `/proc/self/fd/<fd>` name of `fd`: what the path-based attribute calls take for a path
/// handle (`O_PATH`), on which the descriptor calls fail.
fn proc_name(fd: BorrowedFd<'_>) -> String {
    use std::os::fd::AsRawFd as _;
    format!("/proc/self/fd/{}", fd.as_raw_fd())
}

/// Every attribute name of `fd`, and its value (`Err` with the errno of a failing call).
fn read_all(fd: BorrowedFd<'_>) -> rustix::io::Result<Vec<(CString, Vec<u8>)>> {
    let path = proc_name(fd);
    let size = match rustix::fs::flistxattr_query(fd) {
        Ok(size) => size,
        Err(rustix::io::Errno::BADF) => rustix::fs::listxattr_query(&path)?,
        Err(rustix::io::Errno::NOTSUP) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    if size == 0 {
        return Ok(Vec::new());
    }
    let mut names = vec![0u8; size];
    let len = match rustix::fs::flistxattr(fd, &mut names[..]) {
        Err(rustix::io::Errno::BADF) => rustix::fs::listxattr(&path, &mut names[..])?,
        read => read?,
    };
    names.truncate(len);
    let mut pairs = Vec::new();
    for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let Ok(name) = CString::new(name) else {
            continue;
        };
        let value = read_one(fd, &path, &name)?;
        pairs.push((name, value));
    }
    Ok(pairs)
}

/// The value of the attribute `name` of `fd` (`path` its `/proc` name).
fn read_one(fd: BorrowedFd<'_>, path: &str, name: &CString) -> rustix::io::Result<Vec<u8>> {
    let size = match rustix::fs::fgetxattr_query(fd, name.as_c_str()) {
        Err(rustix::io::Errno::BADF) => rustix::fs::getxattr_query(path, name.as_c_str())?,
        size => size?,
    };
    let mut value = vec![0u8; size];
    if size > 0 {
        let len = match rustix::fs::fgetxattr(fd, name.as_c_str(), &mut value[..]) {
            Err(rustix::io::Errno::BADF) => {
                rustix::fs::getxattr(path, name.as_c_str(), &mut value[..])?
            }
            read => read?,
        };
        value.truncate(len);
    }
    Ok(value)
}

/// The attributes of the regular file `name` in `dir`, which `stat` describes (`display` names
/// it in errors). A file that cannot be read for them is refused: replacing it could lose them.
pub(super) fn of_file_at(
    dir: &impl AsFd,
    name: &str,
    stat: &rustix::fs::Stat,
    display: &Path,
) -> Result<Attributes> {
    let Some(fd) = open_same(dir.as_fd(), name, stat) else {
        // Gone or replaced meanwhile: the rewrite's own checks will tell.
        return Ok(Attributes::default());
    };
    let pairs = read_all(fd.as_fd()).map_err(|e| Error::Unsafe {
        path: display.to_path_buf(),
        reason: format!(
            "its extended attributes could not be read ({}), so it was not rewritten: a rewrite would drop them",
            std::io::Error::from(e)
        ),
    })?;
    Ok(Attributes { pairs })
}

impl Attributes {
    /// Sets these attributes on the new file `fd`, and removes any other it got.
    pub(super) fn carry_to(&self, fd: &OwnedFd, display: &Path) -> Result<()> {
        let refuse = |name: &CString, what: &str, e: rustix::io::Errno| Error::Unsafe {
            path: display.to_path_buf(),
            reason: format!(
                "its extended attribute {} could not be {what} the rewritten file ({}), so it was not rewritten",
                name.to_string_lossy(),
                std::io::Error::from(e)
            ),
        };
        for (name, value) in &self.pairs {
            if let Err(e) = rustix::fs::fsetxattr(fd, name.as_c_str(), value, XattrFlags::empty()) {
                // A value the system already gave the new file (a security label) is carried.
                let path = proc_name(fd.as_fd());
                if read_one(fd.as_fd(), &path, name).ok().as_ref() != Some(value) {
                    return Err(refuse(name, "carried to", e));
                }
            }
        }
        // What the new file got that the old one did not have (an ACL inherited from the
        // folder's default ACL): removed, except a label the system insists on.
        let got = read_all(fd.as_fd()).map_err(|e| Error::Unsafe {
            path: display.to_path_buf(),
            reason: format!(
                "the rewritten file's extended attributes could not be read ({}), so it was not rewritten",
                std::io::Error::from(e)
            ),
        })?;
        for (name, _) in got {
            if self.pairs.iter().any(|(ours, _)| *ours == name) {
                continue;
            }
            if let Err(e) = rustix::fs::fremovexattr(fd, name.as_c_str())
                && !name.as_bytes().starts_with(b"security.")
            {
                return Err(refuse(&name, "removed from", e));
            }
        }
        Ok(())
    }
}
