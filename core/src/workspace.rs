//! Which folder a workspace is, over time: its identity, its state-directory key, and finding it
//! again after it moved.
//!
//! A workspace is its folder, not a path to it. Its [`FolderIdentity`] is the folder's device
//! and inode numbers **and** its incarnation: the kernel's file handle for it (what
//! `name_to_handle_at` returns, the form NFS servers hand out so that a handle of a deleted file
//! never names the file created after it: for ext4, XFS and tmpfs the inode number and its
//! generation, a number drawn anew each time the inode is allocated) and its birth time (`statx`
//! `STATX_BTIME`). So
//!
//! - every path to one folder (a bind mount, a symlinked parent, another spelling) and every
//!   name it is given later (`mv ws renamed`) is one workspace: one lock, one ledger;
//! - a folder deleted and created again (`rm -rf ws && git clone … ws`), which ext4 very often
//!   gives the same inode number, is a new workspace: the handle's generation differs, and the
//!   birth time too. Its predecessor's ledger is another one, never applied to it.
//!
//! A file system that has neither a file handle nor a birth time (some FUSE and network file
//! systems) gives device and inode alone: there a re-created folder with the same inode number
//! cannot be told from the old one (docs/threat-model.md says so).
//!
//! The ledger records the identity and the path the folder was last seen at; each lease records
//! the path it was acquired through. [`locate`] finds the folder a ledger describes from those
//! paths (and the folders beside them, where a rename within the same parent leaves it), always
//! checking the identity of what it finds: a path that now names another folder is never taken
//! for it.

use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fsio::{self, Root};

/// FNV-1a, 64 bits: small, stable across builds and platforms (unlike std's `DefaultHasher`).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Which folder this is, as long as it exists: see the module docs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FolderIdentity {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
    /// The kernel's file handle for it, `<type>:<hex bytes>`, where the file system gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    /// Its birth time, `<seconds>.<nanoseconds>`, where the file system records one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub birth: Option<String>,
}

impl FolderIdentity {
    /// The identity of the folder open at `fd`.
    pub fn of_fd(fd: BorrowedFd<'_>) -> Result<FolderIdentity> {
        let (dev, ino) = fsio::dev_ino(fd)?;
        Ok(FolderIdentity {
            dev,
            ino,
            handle: fsio::file_handle(fd),
            birth: fsio::birth_time(fd),
        })
    }

    /// The identity of the directory `path` names (following links: any path to it), or
    /// `None` when it cannot be opened as one.
    pub fn of_path(path: &Path) -> Option<FolderIdentity> {
        let fd = fsio::open_dir_following(path).ok()?;
        FolderIdentity::of_fd(fd.as_fd()).ok()
    }

    /// Its state-directory key: 16 hex digits of a stable hash of every part.
    pub fn key(&self) -> String {
        let text = format!(
            "dev={} ino={} handle={} birth={}",
            self.dev,
            self.ino,
            self.handle.as_deref().unwrap_or("-"),
            self.birth.as_deref().unwrap_or("-"),
        );
        format!("{:016x}", fnv1a64(text.as_bytes()))
    }

    /// An identity no folder has, for tests.
    #[cfg(test)]
    pub fn made_up() -> FolderIdentity {
        FolderIdentity {
            dev: 1,
            ino: 2,
            handle: None,
            birth: None,
        }
    }

    /// Whether this identity tells a re-created folder from the one before it (a handle or a
    /// birth time), as opposed to device and inode alone.
    pub fn tells_incarnations(&self) -> bool {
        self.handle.is_some() || self.birth.is_some()
    }
}

/// A workspace folder, open: the path it was reached through, a handle on the folder itself,
/// and its identity (read from that handle, so the three describe one folder whatever happens
/// to the path meanwhile).
#[derive(Debug)]
pub struct Workspace {
    /// The canonical path it was opened through.
    pub path: PathBuf,
    /// The folder.
    pub(crate) root: Root,
    /// Its identity.
    pub identity: FolderIdentity,
}

impl Workspace {
    /// Opens the workspace `path` names: canonicalized (links in the path followed once, here),
    /// opened as a directory, its identity read from what was opened. Refuses anything that is
    /// not a directory, and a path that is not valid UTF-8 (the ledger records paths as text).
    #[allow(clippy::disallowed_methods)] // names the root once; nothing below it is resolved so
    pub fn open(path: &Path) -> Result<Workspace> {
        let canonical = path
            .canonicalize()
            .map_err(|e| Error::io(path, "resolve the workspace", e))?;
        require_utf8(&canonical, "the workspace")?;
        let root = Root::open(&canonical).map_err(|e| match e {
            Error::Io { source, .. } if source.raw_os_error() == Some(libc::ENOTDIR) => {
                Error::Unsafe {
                    path: canonical.clone(),
                    reason: "the workspace is not a directory".to_string(),
                }
            }
            e => e,
        })?;
        let identity = FolderIdentity::of_fd(root.fd())?;
        Ok(Workspace {
            path: canonical,
            root,
            identity,
        })
    }

    /// The folder's state-directory key.
    pub fn key(&self) -> String {
        self.identity.key()
    }

    /// Another handle on the same folder, for a command that works through its own.
    pub fn try_clone(&self) -> Result<Workspace> {
        Ok(Workspace {
            path: self.path.clone(),
            root: self.root.try_clone()?,
            identity: self.identity.clone(),
        })
    }

    /// Whether the folder has been deleted since it was opened (no name is left for it: what
    /// was in it went with it).
    pub fn is_deleted(&self) -> bool {
        fsio::link_count(self.root.fd()).is_some_and(|links| links == 0)
    }

    /// A path naming this folder itself, through this process's handle on it
    /// (`/proc/self/fd/<fd>`), for the working directory of a command this process starts: the
    /// kernel resolves it to the folder wherever it went, and a folder put in its place at its
    /// old path is not it. Valid in this process and in a child until it runs its program (the
    /// handle closes on exec); `None` without `/proc`.
    pub fn handle_path(&self) -> Option<PathBuf> {
        use std::os::fd::AsRawFd as _;
        let path = PathBuf::from(format!("/proc/self/fd/{}", self.root.fd().as_raw_fd()));
        std::fs::metadata(&path)
            .is_ok_and(|meta| meta.is_dir())
            .then_some(path)
    }

    /// Where the folder is now, as this process's handle on it says (`/proc/self/fd`), when it
    /// still has a name: a rename since it was opened is followed.
    pub fn current_path(&self) -> Option<PathBuf> {
        let now = fsio::fd_path(self.root.fd())?;
        (now.is_absolute() && now.to_str().is_some()).then_some(now)
    }
}

/// Refuses a path that is not valid UTF-8: the ledger and every receipt record paths as JSON
/// text, which cannot hold it, so nothing is started that could not be recorded.
pub(crate) fn require_utf8(path: &Path, what: &str) -> Result<()> {
    if path.to_str().is_some() {
        return Ok(());
    }
    Err(Error::Unsafe {
        path: path.to_path_buf(),
        reason: format!(
            "{what}'s path is not valid UTF-8, and the ledger and receipts record paths as JSON text; use a path that is"
        ),
    })
}

/// The folder whose identity is `identity`, found from `candidates` (paths it was known by, in
/// order of preference): each candidate itself, then the folders beside each (a rename within
/// the same parent folder). What is found is checked by identity, so a path that now names
/// another folder (a re-created one) is passed over. `None` when it is nowhere to be found.
pub fn locate(identity: &FolderIdentity, candidates: &[&Path]) -> Option<Workspace> {
    let check = |path: &Path| -> Option<Workspace> {
        let workspace = Workspace::open(path).ok()?;
        (workspace.identity == *identity).then_some(workspace)
    };
    for path in candidates {
        if let Some(found) = check(path) {
            return Some(found);
        }
    }
    let mut parents: Vec<&Path> = candidates.iter().filter_map(|p| p.parent()).collect();
    parents.dedup();
    for parent in parents {
        for name in fsio::dirs_with_inode(parent, identity.dev, identity.ino) {
            if let Some(found) = check(&parent.join(name)) {
                return Some(found);
            }
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn a_child_started_in_the_handle_path_runs_in_the_folder_wherever_it_went() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let folder = Workspace::open(&ws).unwrap();
        // The folder moves away and another takes its path.
        let moved = tmp.path().join("moved");
        std::fs::rename(&ws, &moved).unwrap();
        std::fs::create_dir(&ws).unwrap();
        let out = std::process::Command::new("pwd")
            .arg("-P")
            .current_dir(folder.handle_path().unwrap())
            .output()
            .unwrap();
        assert!(out.status.success());
        let moved = std::fs::canonicalize(&moved).unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim_end(),
            moved.to_str().unwrap()
        );
    }

    #[test]
    fn one_folder_by_any_path_and_name_is_one_identity() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let first = FolderIdentity::of_path(&ws).unwrap();
        std::os::unix::fs::symlink(&ws, tmp.path().join("link")).unwrap();
        assert_eq!(
            FolderIdentity::of_path(&tmp.path().join("link")),
            Some(first.clone())
        );
        std::fs::rename(&ws, tmp.path().join("renamed")).unwrap();
        let renamed = FolderIdentity::of_path(&tmp.path().join("renamed")).unwrap();
        assert_eq!(renamed, first);
        assert_eq!(renamed.key(), first.key());
    }

    #[test]
    fn a_recreated_folder_is_another_identity_even_on_the_same_inode() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let first = FolderIdentity::of_path(&ws).unwrap();
        // This machine's file systems give a handle or a birth time; one that gives neither is
        // documented as unable to tell.
        assert!(first.tells_incarnations(), "{first:?}");
        let mut same_inode = 0;
        for _ in 0..200 {
            std::fs::remove_dir(&ws).unwrap();
            std::fs::create_dir(&ws).unwrap();
            let again = FolderIdentity::of_path(&ws).unwrap();
            assert_ne!(again, first);
            assert_ne!(again.key(), first.key());
            same_inode += usize::from(again.ino == first.ino && again.dev == first.dev);
        }
        // Not asserted (file systems differ): the loop above holds whether or not it happened.
        let _ = same_inode;
    }

    #[test]
    fn a_renamed_folder_is_found_beside_its_old_name_and_a_new_one_there_is_not_it() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let identity = FolderIdentity::of_path(&ws).unwrap();
        assert_eq!(
            locate(&identity, &[&ws]).unwrap().path,
            ws.canonicalize().unwrap()
        );
        std::fs::rename(&ws, tmp.path().join("renamed")).unwrap();
        // A new folder at the old path is another folder: passed over.
        std::fs::create_dir(&ws).unwrap();
        let found = locate(&identity, &[&ws]).unwrap();
        assert_eq!(
            found.path,
            tmp.path().join("renamed").canonicalize().unwrap()
        );
        // Moved elsewhere: not found.
        let away = tempfile::tempdir().unwrap();
        std::fs::rename(tmp.path().join("renamed"), away.path().join("far")).unwrap();
        assert!(locate(&identity, &[&ws]).is_none());
        // Deleted: not found either.
        std::fs::remove_dir(away.path().join("far")).unwrap();
        assert!(locate(&identity, &[&ws]).is_none());
    }

    #[test]
    fn a_handle_follows_its_folder_and_knows_when_it_is_deleted() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let open = Workspace::open(&ws).unwrap();
        assert!(!open.is_deleted());
        std::fs::rename(&ws, tmp.path().join("moved")).unwrap();
        assert_eq!(
            open.current_path(),
            Some(tmp.path().join("moved").canonicalize().unwrap())
        );
        std::fs::remove_dir(tmp.path().join("moved")).unwrap();
        assert!(open.is_deleted());
    }

    #[test]
    fn a_file_is_no_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let refused = Workspace::open(&file).unwrap_err().to_string();
        assert!(refused.contains("not a directory"), "{refused}");
    }
}
