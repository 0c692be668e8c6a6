//! Keeping guidance inside its own tree: before a guidance file is read, where its path really
//! leads (symlinks followed, `..` applied) is compared with the real path of the tree of the file
//! that named it. A path that leads out is not read unless the request allows it
//! ([`GuidanceRequest::allow_outside_tree`](super::GuidanceRequest::allow_outside_tree)).
//!
//! A file's real path is its directory's real path joined with its name, unless the file itself
//! is a symlink (then it is resolved whole). Directories are resolved once and remembered, and a
//! directory the subtree walk entered from a listing (a real directory, never a symlink) is
//! derived from its parent without asking the file system again.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::Path;

use super::fs::{EntryKind, GuidanceFs};
use super::paths::{join, parent, within};

/// Where a named path leads, relative to a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Inside the tree, or confinement is off: read it.
    Inside,
    /// It leads to `real`, outside the tree: do not read it.
    Outside { real: String },
    /// Nothing is there (missing, or below a non-directory).
    Absent,
    /// Where it leads cannot be told (a symlink loop, no permission): do not read it.
    Unknown,
}

/// The real paths of directories, asked once each.
pub(crate) struct Confinement<'a> {
    fs: &'a dyn GuidanceFs,
    allow_outside: bool,
    /// Directory as joined → its real path (`None`: it cannot be resolved).
    real_dirs: RefCell<HashMap<String, Option<String>>>,
}

fn is_absent(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::NotFound | ErrorKind::NotADirectory)
}

impl<'a> Confinement<'a> {
    pub(crate) fn new(fs: &'a dyn GuidanceFs, allow_outside: bool) -> Self {
        Confinement {
            fs,
            allow_outside,
            real_dirs: RefCell::new(HashMap::new()),
        }
    }

    /// Where `path` leads, relative to the tree rooted at `tree` (both as joined strings).
    pub(crate) fn place(&self, path: &str, tree: &str) -> Placement {
        if self.allow_outside {
            return Placement::Inside;
        }
        let real = match self.real_file(path) {
            Ok(real) => real,
            Err(kind) if is_absent(kind) => return Placement::Absent,
            Err(_) => return Placement::Unknown,
        };
        match self.real_dir(tree) {
            Some(real_tree) if within(&real, &real_tree) => Placement::Inside,
            Some(_) => Placement::Outside { real },
            None => Placement::Unknown,
        }
    }

    /// Records that `child` is a real directory (not a symlink) directly inside `dir`, as a
    /// listing of `dir` said, so its real path is derived rather than asked for.
    pub(crate) fn entered(&self, dir: &str, name: &str) {
        if self.allow_outside {
            return;
        }
        let child = join(dir, name);
        let derived = self.real_dir(dir).map(|real| join(&real, name));
        self.real_dirs.borrow_mut().entry(child).or_insert(derived);
    }

    fn canonical(&self, path: &str) -> Result<String, ErrorKind> {
        let real = self
            .fs
            .canonicalize(Path::new(path))
            .map_err(|e| e.kind())?;
        real.into_os_string()
            .into_string()
            .map_err(|_| ErrorKind::InvalidData)
    }

    fn real_dir(&self, dir: &str) -> Option<String> {
        if let Some(known) = self.real_dirs.borrow().get(dir) {
            return known.clone();
        }
        let real = self.canonical(dir).ok();
        self.real_dirs
            .borrow_mut()
            .insert(dir.to_string(), real.clone());
        real
    }

    fn real_file(&self, path: &str) -> Result<String, ErrorKind> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let stat = self.fs.stat(Path::new(path)).map_err(|e| e.kind())?;
        let dir = parent(path).filter(|_| path.contains('/'));
        match dir {
            Some(dir) if stat.kind != EntryKind::Symlink && !matches!(name, "" | "." | "..") => {
                // Below its directory only through a real name: the directory decides.
                self.real_dir(dir)
                    .map(|real| join(&real, name))
                    .ok_or(ErrorKind::Other)
            }
            _ => self.canonical(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guidance::MemoryFs;

    fn fs() -> MemoryFs {
        MemoryFs::new()
            .with_file("/ws/AGENTS.md", "root")
            .with_file("/ws/docs/a.md", "a")
            .with_file("/secret/key", "key")
            .with_symlink("/ws/link.md", "../secret/key")
            .with_symlink("/ws/inside.md", "docs/a.md")
            .with_symlink("/ws/out", "/secret")
            .with_symlink("/ws/loop", "loop")
    }

    #[test]
    fn places_paths_by_where_they_really_lead() {
        let fs = fs();
        let confine = Confinement::new(&fs, false);
        let outside = |real: &str| Placement::Outside {
            real: real.to_string(),
        };
        assert_eq!(confine.place("/ws/AGENTS.md", "/ws"), Placement::Inside);
        assert_eq!(
            confine.place("/ws/docs/../AGENTS.md", "/ws"),
            Placement::Inside
        );
        assert_eq!(confine.place("/ws/inside.md", "/ws"), Placement::Inside);
        assert_eq!(
            confine.place("/ws/../secret/key", "/ws"),
            outside("/secret/key")
        );
        assert_eq!(confine.place("/ws/link.md", "/ws"), outside("/secret/key"));
        assert_eq!(confine.place("/ws/out/key", "/ws"), outside("/secret/key"));
        assert_eq!(confine.place("/ws/missing.md", "/ws"), Placement::Absent);
        assert_eq!(confine.place("/ws/AGENTS.md/x", "/ws"), Placement::Absent);
        assert_eq!(confine.place("/ws/loop", "/ws"), Placement::Unknown);
        assert_eq!(confine.place("/secret/key", "/"), Placement::Inside);
        let open = Confinement::new(&fs, true);
        assert_eq!(open.place("/ws/link.md", "/ws"), Placement::Inside);
    }
}
