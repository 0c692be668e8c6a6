//! A byte-exact picture of a directory tree (contents, modes, symlink targets, never following a
//! link), to assert that a workspace is exactly as the user left it.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// One node of the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// A regular file: content and permission bits.
    File { bytes: Vec<u8>, mode: u32 },
    /// A directory and its permission bits.
    Dir { mode: u32 },
    /// A symlink and its target text.
    Symlink { target: std::path::PathBuf },
    /// Anything else.
    Other,
}

/// Every path under a root, relative, with its node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree(pub BTreeMap<String, Node>);

impl Tree {
    /// Captures `root` recursively without following symlinks.
    pub fn capture(root: &Path) -> Tree {
        let mut map = BTreeMap::new();
        capture_into(root, root, &mut map);
        Tree(map)
    }

    /// The relative paths.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

fn capture_into(root: &Path, dir: &Path, map: &mut BTreeMap<String, Node>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let mode = meta.permissions().mode() & 0o7777;
        let node = if meta.file_type().is_symlink() {
            Node::Symlink {
                target: std::fs::read_link(&path).unwrap_or_default(),
            }
        } else if meta.is_dir() {
            capture_into(root, &path, map);
            Node::Dir { mode }
        } else if meta.is_file() {
            Node::File {
                bytes: std::fs::read(&path).unwrap_or_default(),
                mode,
            }
        } else {
            Node::Other
        };
        map.insert(rel, node);
    }
}
