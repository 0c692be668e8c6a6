//! The read-only file-system seam of the guidance resolver: the [`GuidanceFs`] trait, the real
//! [`StdFs`] on `std` (and `rustix` for a non-blocking open), and the deterministic in-memory
//! [`MemoryFs`] used by tests and by hosts that resolve over a snapshot.
//!
//! Every read the resolver makes goes through this trait, so a resolution is a pure function of
//! what the trait answers. Nothing here writes, renames or removes anything.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ffi::OsString;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub use crate::plan::EntryKind;

/// One entry of a directory listing, as seen without following symlinks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsEntry {
    /// The entry's file name (no directories).
    pub name: OsString,
    /// Its kind; a symlink is [`EntryKind::Symlink`] whatever it points to.
    pub kind: EntryKind,
}

/// What is at a path, without following a final symlink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FsStat {
    /// The entry's kind.
    pub kind: EntryKind,
    /// Its length in bytes (for a symlink, the length of the link itself).
    pub len: u64,
}

/// The outcome of a capped read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CappedRead {
    /// The whole file, at most `cap` bytes.
    Complete(Vec<u8>),
    /// The file holds more than `cap` bytes; it was not read whole. `len` is its size (or a lower
    /// bound when the size could not be known without reading).
    TooLarge {
        /// The file's size in bytes.
        len: u64,
    },
}

impl CappedRead {
    /// The whole file; an error when it was too large to be read whole.
    pub fn whole(self) -> io::Result<Vec<u8>> {
        match self {
            CappedRead::Complete(bytes) => Ok(bytes),
            CappedRead::TooLarge { len } => Err(io::Error::other(format!(
                "file of {len} bytes cannot be read whole"
            ))),
        }
    }
}

/// The read-only questions the resolver asks. Implementations must not panic.
///
/// Error conventions the resolver relies on: a path that does not exist is
/// [`io::ErrorKind::NotFound`]; reading a directory is [`io::ErrorKind::IsADirectory`]; a path
/// through a non-directory is [`io::ErrorKind::NotADirectory`]. The resolver treats those three as
/// "absent" and every other error as "unreadable".
pub trait GuidanceFs {
    /// Reads a whole file, following symlinks (a symlinked *file* is read; that is the
    /// `ln -s AGENTS.md CLAUDE.md` convention).
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// Reads a file unless it holds more than `cap` bytes. The default reads the whole file and
    /// then compares; implementations should check the size first.
    fn read_capped(&self, path: &Path, cap: u64) -> io::Result<CappedRead> {
        let bytes = self.read(path)?;
        let len = bytes.len() as u64;
        if len > cap {
            Ok(CappedRead::TooLarge { len })
        } else {
            Ok(CappedRead::Complete(bytes))
        }
    }

    /// Lists a directory (following a symlink at `path` itself, as `read_dir` does), reporting each
    /// entry's kind *without* following it. Order is unspecified; the resolver sorts.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<FsEntry>>;

    /// What is at `path`, without following a final symlink.
    fn stat(&self, path: &Path) -> io::Result<FsStat>;

    /// Where `path` really is: absolute, every symlink followed and every `.` and `..` applied,
    /// as `realpath(3)` answers ([`io::ErrorKind::NotFound`] when a component is missing). The
    /// resolver asks it to keep guidance inside its own tree; it never reads through the answer.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
}

fn kind_of(file_type: std::fs::FileType) -> EntryKind {
    if file_type.is_symlink() {
        EntryKind::Symlink
    } else if file_type.is_dir() {
        EntryKind::Dir
    } else if file_type.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    }
}

thread_local! {
    /// Files [`StdFs`] opened to read, and the bytes it read from them, on this thread.
    static STD_READS: std::cell::Cell<FileReads> = const {
        std::cell::Cell::new(FileReads { files: 0, bytes: 0 })
    };
}

/// What [`StdFs`] has read on one thread: tests count them to check that a command reads a
/// file once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileReads {
    /// Files opened to read (their bytes, or their size when over the cap).
    pub files: u64,
    /// Bytes read from them.
    pub bytes: u64,
}

impl StdFs {
    /// What [`StdFs`] has read on the calling thread so far.
    pub fn reads_on_this_thread() -> FileReads {
        STD_READS.with(std::cell::Cell::get)
    }

    fn note_read(files: u64, bytes: u64) {
        STD_READS.with(|reads| {
            let now = reads.get();
            reads.set(FileReads {
                files: now.files + files,
                bytes: now.bytes + bytes,
            });
        });
    }
}

/// The real file system, read-only.
///
/// - `read`/`read_capped` open with `O_NONBLOCK` (on Unix) and check the opened file's own
///   metadata: a directory is [`io::ErrorKind::IsADirectory`], anything but a regular file (a FIFO
///   that would block, a device) is refused as an error, and a file over the cap is reported
///   without being read.
/// - `list_dir` takes each entry's kind from `DirEntry::file_type()` (no extra `stat`, symlinks not
///   followed), so the resolver's subtree walk never enters a symlinked directory: a symlink loop
///   cannot hang it and the walk cannot leave the tree.
/// - Entries that fail while listing are skipped.
#[derive(Clone, Copy, Debug, Default)]
pub struct StdFs;

impl StdFs {
    #[cfg(unix)]
    fn open(path: &Path) -> io::Result<std::fs::File> {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        )?;
        Ok(std::fs::File::from(fd))
    }

    #[cfg(not(unix))]
    fn open(path: &Path) -> io::Result<std::fs::File> {
        std::fs::File::open(path)
    }
}

impl GuidanceFs for StdFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.read_capped(path, u64::MAX)?.whole()
    }

    fn read_capped(&self, path: &Path, cap: u64) -> io::Result<CappedRead> {
        let file = Self::open(path)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::ErrorKind::IsADirectory.into());
        }
        if !meta.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
        Self::note_read(1, 0);
        if meta.len() > cap {
            return Ok(CappedRead::TooLarge { len: meta.len() });
        }
        let capacity = usize::try_from(meta.len()).unwrap_or(0);
        let mut bytes = Vec::with_capacity(capacity);
        file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
        let len = bytes.len() as u64;
        Self::note_read(0, len);
        if len > cap {
            return Ok(CappedRead::TooLarge { len });
        }
        Ok(CappedRead::Complete(bytes))
    }

    // Read-only: the resolver lists guidance folders and never enters a symlinked one.
    #[allow(clippy::disallowed_methods)]
    fn list_dir(&self, path: &Path) -> io::Result<Vec<FsEntry>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(path)? {
            let Ok(entry) = entry else { continue };
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            out.push(FsEntry {
                name: entry.file_name(),
                kind: kind_of(file_type),
            });
        }
        Ok(out)
    }

    fn stat(&self, path: &Path) -> io::Result<FsStat> {
        let meta = std::fs::symlink_metadata(path)?;
        Ok(FsStat {
            kind: kind_of(meta.file_type()),
            len: meta.len(),
        })
    }

    #[allow(clippy::disallowed_methods)] // read-only: where a path leads, to keep guidance in its tree
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }
}

/// How many symlinks [`MemoryFs`] follows in one lookup before answering "too many levels".
const MEMORY_SYMLINK_HOPS: usize = 40;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    File(Vec<u8>),
    /// A file whose reads fail with `PermissionDenied`; the number is its reported length.
    Unreadable(u64),
    Dir(BTreeSet<String>),
    Symlink(String),
}

/// A deterministic in-memory file system for tests and snapshots.
///
/// Paths are `/`-separated strings; a relative path is taken relative to `/`. Adding an entry
/// creates its parent directories (replacing any non-directory in the way). Symlinks are stored
/// with their target as written and resolved on lookup like the OS does: relative to the link's
/// directory, at most 40 hops, then an error. `..` is applied to the path resolved so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryFs {
    nodes: BTreeMap<String, Node>,
}

impl Default for MemoryFs {
    fn default() -> Self {
        Self::new()
    }
}

fn components(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|c| !c.is_empty() && *c != ".")
}

fn key_of(components: &[String]) -> String {
    let mut key = String::from("/");
    key.push_str(&components.join("/"));
    key
}

fn split_key(key: &str) -> Option<(String, String)> {
    let cut = key.rfind('/')?;
    let parent = if cut == 0 {
        "/".to_string()
    } else {
        key[..cut].to_string()
    };
    Some((parent, key[cut + 1..].to_string()))
}

impl MemoryFs {
    /// An empty file system holding only the root directory `/`.
    pub fn new() -> Self {
        let mut nodes = BTreeMap::new();
        nodes.insert("/".to_string(), Node::Dir(BTreeSet::new()));
        MemoryFs { nodes }
    }

    fn lexical_key(path: &str) -> String {
        let mut stack: Vec<String> = Vec::new();
        for component in components(path) {
            if component == ".." {
                stack.pop();
            } else {
                stack.push(component.to_string());
            }
        }
        key_of(&stack)
    }

    fn insert(&mut self, path: &str, node: Node) -> &mut Self {
        let key = Self::lexical_key(path);
        if key == "/" {
            return self;
        }
        // Make every ancestor a directory and link each child into its parent.
        let mut child = key.clone();
        while let Some((parent, name)) = split_key(&child) {
            let entry = self
                .nodes
                .entry(parent.clone())
                .or_insert_with(|| Node::Dir(BTreeSet::new()));
            if !matches!(entry, Node::Dir(_)) {
                *entry = Node::Dir(BTreeSet::new());
            }
            if let Node::Dir(children) = entry {
                children.insert(name);
            }
            if parent == "/" {
                break;
            }
            child = parent;
        }
        match (self.nodes.get(&key), &node) {
            // Re-adding a directory keeps its children.
            (Some(Node::Dir(_)), Node::Dir(_)) => {}
            _ => {
                self.nodes.insert(key, node);
            }
        }
        self
    }

    /// Adds (or replaces) a file.
    pub fn add_file(&mut self, path: &str, contents: impl Into<Vec<u8>>) -> &mut Self {
        self.insert(path, Node::File(contents.into()))
    }

    /// Adds a directory.
    pub fn add_dir(&mut self, path: &str) -> &mut Self {
        self.insert(path, Node::Dir(BTreeSet::new()))
    }

    /// Adds a symlink at `path` pointing at `target` (relative to the link's directory unless
    /// absolute).
    pub fn add_symlink(&mut self, path: &str, target: &str) -> &mut Self {
        self.insert(path, Node::Symlink(target.to_string()))
    }

    /// Adds a file that exists, reports `len` bytes, and fails every read with `PermissionDenied`.
    pub fn add_unreadable(&mut self, path: &str, len: u64) -> &mut Self {
        self.insert(path, Node::Unreadable(len))
    }

    /// Builder form of [`MemoryFs::add_file`].
    pub fn with_file(mut self, path: &str, contents: impl Into<Vec<u8>>) -> Self {
        self.add_file(path, contents);
        self
    }

    /// Builder form of [`MemoryFs::add_dir`].
    pub fn with_dir(mut self, path: &str) -> Self {
        self.add_dir(path);
        self
    }

    /// Builder form of [`MemoryFs::add_symlink`].
    pub fn with_symlink(mut self, path: &str, target: &str) -> Self {
        self.add_symlink(path, target);
        self
    }

    /// Builder form of [`MemoryFs::add_unreadable`].
    pub fn with_unreadable(mut self, path: &str, len: u64) -> Self {
        self.add_unreadable(path, len);
        self
    }

    /// Resolves `path` to the key of the node it names, following symlinks in every component (and
    /// in the last one when `follow_last`).
    fn resolve(&self, path: &Path, follow_last: bool) -> io::Result<String> {
        let text = path
            .to_str()
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        let mut pending: VecDeque<String> = components(text).map(str::to_string).collect();
        let mut current: Vec<String> = Vec::new();
        let mut hops = 0usize;
        while let Some(component) = pending.pop_front() {
            if component == ".." {
                current.pop();
                continue;
            }
            current.push(component);
            let key = key_of(&current);
            match self.nodes.get(&key) {
                None => return Err(io::ErrorKind::NotFound.into()),
                Some(Node::Symlink(target)) => {
                    if pending.is_empty() && !follow_last {
                        break;
                    }
                    hops += 1;
                    if hops > MEMORY_SYMLINK_HOPS {
                        return Err(io::Error::other("too many levels of symbolic links"));
                    }
                    current.pop();
                    if target.starts_with('/') {
                        current.clear();
                    }
                    for part in components(target).collect::<Vec<_>>().into_iter().rev() {
                        pending.push_front(part.to_string());
                    }
                }
                Some(Node::File(_) | Node::Unreadable(_)) if !pending.is_empty() => {
                    return Err(io::ErrorKind::NotADirectory.into());
                }
                Some(_) => {}
            }
        }
        Ok(key_of(&current))
    }

    fn node(&self, key: &str) -> io::Result<&Node> {
        self.nodes
            .get(key)
            .ok_or_else(|| io::ErrorKind::NotFound.into())
    }
}

fn node_kind(node: &Node) -> EntryKind {
    match node {
        Node::File(_) | Node::Unreadable(_) => EntryKind::File,
        Node::Dir(_) => EntryKind::Dir,
        Node::Symlink(_) => EntryKind::Symlink,
    }
}

impl GuidanceFs for MemoryFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let key = self.resolve(path, true)?;
        match self.node(&key)? {
            Node::File(bytes) => Ok(bytes.clone()),
            Node::Unreadable(_) => Err(io::ErrorKind::PermissionDenied.into()),
            Node::Dir(_) => Err(io::ErrorKind::IsADirectory.into()),
            Node::Symlink(_) => Err(io::Error::other("unresolved symlink")),
        }
    }

    fn read_capped(&self, path: &Path, cap: u64) -> io::Result<CappedRead> {
        let key = self.resolve(path, true)?;
        match self.node(&key)? {
            Node::File(bytes) if bytes.len() as u64 > cap => Ok(CappedRead::TooLarge {
                len: bytes.len() as u64,
            }),
            Node::File(bytes) => Ok(CappedRead::Complete(bytes.clone())),
            Node::Unreadable(_) => Err(io::ErrorKind::PermissionDenied.into()),
            Node::Dir(_) => Err(io::ErrorKind::IsADirectory.into()),
            Node::Symlink(_) => Err(io::Error::other("unresolved symlink")),
        }
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<FsEntry>> {
        let key = self.resolve(path, true)?;
        let Node::Dir(children) = self.node(&key)? else {
            return Err(io::ErrorKind::NotADirectory.into());
        };
        let mut out = Vec::with_capacity(children.len());
        for name in children {
            let child = crate::guidance::paths::join(&key, name);
            if let Some(node) = self.nodes.get(&child) {
                out.push(FsEntry {
                    name: OsString::from(name),
                    kind: node_kind(node),
                });
            }
        }
        Ok(out)
    }

    fn stat(&self, path: &Path) -> io::Result<FsStat> {
        let key = self.resolve(path, false)?;
        let node = self.node(&key)?;
        let len = match node {
            Node::File(bytes) => bytes.len() as u64,
            Node::Unreadable(len) => *len,
            Node::Symlink(target) => target.len() as u64,
            Node::Dir(_) => 0,
        };
        Ok(FsStat {
            kind: node_kind(node),
            len,
        })
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        let key = self.resolve(path, true)?;
        self.node(&key)?;
        Ok(PathBuf::from(key))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn memory_fs_symlinks() {
        let fs = MemoryFs::new()
            .with_file("/w/AGENTS.md", "hi")
            .with_symlink("/w/CLAUDE.md", "AGENTS.md")
            .with_symlink("/w/loop", "..")
            .with_symlink("/w/self", "self");
        assert_eq!(fs.read(Path::new("/w/CLAUDE.md")).unwrap(), b"hi");
        assert_eq!(
            fs.read(Path::new("/w/loop/w/loop/w/AGENTS.md")).unwrap(),
            b"hi"
        );
        assert!(fs.read(Path::new("/w/self")).is_err());
        assert_eq!(
            fs.stat(Path::new("/w/CLAUDE.md")).unwrap().kind,
            EntryKind::Symlink
        );
        assert_eq!(
            fs.read(Path::new("/w/missing")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(
            fs.read(Path::new("/w")).unwrap_err().kind(),
            io::ErrorKind::IsADirectory
        );
        assert_eq!(
            fs.read(Path::new("/w/AGENTS.md/x")).unwrap_err().kind(),
            io::ErrorKind::NotADirectory
        );
        let names: Vec<_> = fs
            .list_dir(Path::new("/w"))
            .unwrap()
            .into_iter()
            .map(|e| (e.name.into_string().unwrap(), e.kind))
            .collect();
        assert_eq!(
            names,
            vec![
                ("AGENTS.md".to_string(), EntryKind::File),
                ("CLAUDE.md".to_string(), EntryKind::Symlink),
                ("loop".to_string(), EntryKind::Symlink),
                ("self".to_string(), EntryKind::Symlink),
            ]
        );
    }
}
