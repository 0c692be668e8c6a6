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
        let entries = walkdir::WalkDir::new(root).min_depth(1).into_iter();
        for entry in entries.filter_map(Result::ok) {
            let rel = entry
                .path()
                .strip_prefix(root)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Some(node) = node(&entry) {
                map.insert(rel, node);
            }
        }
        Tree(map)
    }

    /// The relative paths.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

/// One entry as found (walkdir reports a symlink itself, never its target); `None` when it
/// vanished while the walk went on.
fn node(entry: &walkdir::DirEntry) -> Option<Node> {
    let meta = entry.metadata().ok()?;
    let mode = meta.permissions().mode() & 0o7777;
    let kind = entry.file_type();
    Some(if kind.is_symlink() {
        Node::Symlink {
            target: std::fs::read_link(entry.path()).unwrap_or_default(),
        }
    } else if kind.is_dir() {
        Node::Dir { mode }
    } else if kind.is_file() {
        Node::File {
            bytes: std::fs::read(entry.path()).unwrap_or_default(),
            mode,
        }
    } else {
        Node::Other
    })
}
