//! The delivery verdict of one acquire: whether the session text, where the plan put it, reaches
//! the model, judged by the provider's discovery profile (for the CLI version core probed) over
//! the destination as it stands after projection, with the remedy applied when the profile
//! declares one ([`crate::guidance::delivery_with_remedy`]).
//!
//! The CLI is taken to start in the destination root (as `run` and a host's `Lease::command`
//! start it) and to see the home directory `$HOME` names (user-scope files, and the user memory
//! file Claude Code does not count as the project's), the defaults of `resolve --as`.
//!
//! A file the projection just wrote is not read again: the projection keeps what it wrote
//! ([`Written`]: the bytes of a file the resolver would read, at most
//! [`MAX_SINGLE_FILE_BYTES`], which it read anyway to find its block; only the size of a larger
//! one, which the resolver drops unread), and the verdict reads it from there ([`WrittenFs`]).
//! Under the workspace lock those are the bytes the file holds, so the verdict is the one a read
//! of the file would give. The destination root is not resolved again either: it is the canonical
//! path the command resolved at its start and wrote through.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::guidance::{
    CappedRead, DeliveryQuery, DeliveryVerdict, FsEntry, FsStat, GuidanceFs, MAX_SINGLE_FILE_BYTES,
    StdFs, delivery_with_remedy,
};
use crate::plan::{RelPath, SessionTextCarrier};
use crate::provider::{Probes, Provider};

/// What this command wrote to a file, for the verdict.
#[derive(Debug)]
pub(crate) enum Written {
    /// The whole file, as written.
    Bytes(Vec<u8>),
    /// Its size only: it holds more than [`MAX_SINGLE_FILE_BYTES`].
    Size(u64),
}

impl Written {
    /// `bytes` when the resolver would read them, else their size.
    pub(crate) fn of(bytes: Vec<u8>) -> Self {
        if bytes.len() as u64 > MAX_SINGLE_FILE_BYTES {
            Written::Size(bytes.len() as u64)
        } else {
            Written::Bytes(bytes)
        }
    }
}

/// The real file system, with the files this command wrote answered from what it wrote.
///
/// A file's bytes are handed over at its first read (the resolver reads a path once); a later
/// read of it goes to the file.
pub(super) struct WrittenFs {
    /// The destination root, canonical.
    root: PathBuf,
    files: RefCell<HashMap<PathBuf, Written>>,
}

impl WrittenFs {
    /// The destination `root` (canonical: the path the command resolved and opened the root it
    /// wrote through at) as it stands after this command wrote `written` in it.
    pub(super) fn new(root: &Path, written: HashMap<RelPath, Written>) -> Self {
        WrittenFs {
            root: root.to_path_buf(),
            files: RefCell::new(
                written
                    .into_iter()
                    .map(|(path, written)| (root.join(path.as_str()), written))
                    .collect(),
            ),
        }
    }
}

impl GuidanceFs for WrittenFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.read_capped(path, u64::MAX)?.whole()
    }

    fn read_capped(&self, path: &Path, cap: u64) -> io::Result<CappedRead> {
        let mut files = self.files.borrow_mut();
        let len = match files.get(path) {
            None => return StdFs.read_capped(path, cap),
            Some(Written::Bytes(bytes)) => bytes.len() as u64,
            Some(Written::Size(len)) => *len,
        };
        if len > cap {
            return Ok(CappedRead::TooLarge { len });
        }
        match files.remove(path) {
            Some(Written::Bytes(bytes)) => Ok(CappedRead::Complete(bytes)),
            _ => StdFs.read_capped(path, cap),
        }
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<FsEntry>> {
        StdFs.list_dir(path)
    }

    fn stat(&self, path: &Path) -> io::Result<FsStat> {
        StdFs.stat(path)
    }

    /// The root is answered as this command resolved it: everything the verdict judges was
    /// written through the handle opened there, under the workspace lock.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        if path == self.root {
            return Ok(self.root.clone());
        }
        StdFs.canonicalize(path)
    }
}

/// The carrier a plan without one stands for: nothing says the text went anywhere.
fn unsaid() -> SessionTextCarrier {
    SessionTextCarrier::NotProjected {
        reason: "the provider's plan does not say where the session text went".to_string(),
    }
}

/// The size of the private file carrying the session text, 0 when no private file does.
pub(super) fn private_bytes(plan: &crate::plan::Plan) -> u64 {
    let name = match &plan.session_text {
        Some(SessionTextCarrier::LaunchArgument { private_file })
        | Some(SessionTextCarrier::Environment { private_file, .. }) => private_file,
        _ => return 0,
    };
    plan.private_files
        .iter()
        .find(|f| &f.name == name)
        .map_or(0, |f| f.content.len() as u64)
}

/// Where a session's text went: the destination `root`, our namespace, the plan's carrier, and
/// the session's private folder.
pub(super) struct Session<'a> {
    pub root: &'a Path,
    pub namespace: &'a str,
    pub carrier: Option<&'a SessionTextCarrier>,
    pub private_dir: &'a Path,
    /// The size of the carrier's private file, if the carrier is one.
    pub private_bytes: u64,
    /// What the start did, path by path (nothing for a dry run): a file written whole that was
    /// left as the user edited it does not hold the text, whatever reads it.
    pub done: &'a [crate::receipts::FileReceipt],
}

/// The verdict for `carrier` in the destination `root` as `fs` shows it (the real file system
/// after an acquire; the planned files over it for a dry run); `private_dir` is the session's
/// private folder, where a launch-argument or environment carrier's file lives (shown as its
/// absolute path).
pub(super) fn judge(
    fs: &dyn GuidanceFs,
    provider: &dyn Provider,
    probes: &Probes,
    session: Session<'_>,
) -> DeliveryVerdict {
    let Session {
        root,
        namespace,
        carrier,
        private_dir,
        private_bytes,
        done,
    } = session;
    let unsaid = unsaid();
    let carrier = carrier.unwrap_or(&unsaid);
    if let SessionTextCarrier::OwnedFile { path } = carrier
        && done
            .iter()
            .any(|f| f.path == path.as_str() && f.action == crate::receipts::FileAction::Kept)
    {
        return DeliveryVerdict::undelivered(
            "owned_file",
            Some(root.join(path.as_str()).display().to_string()),
            crate::guidance::Undelivered::EditedByUser,
        );
    }
    let profile = provider.discovery_for(probes);
    let root_text = root.to_string_lossy();
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    let query = DeliveryQuery {
        root: &root_text,
        working_dir: &root_text,
        home_dir: home.as_deref(),
        namespace,
        carrier,
        private_bytes,
    };
    let mut verdict = delivery_with_remedy(fs, &profile, &query);
    if let SessionTextCarrier::LaunchArgument { private_file }
    | SessionTextCarrier::Environment { private_file, .. } = carrier
    {
        verdict.path = Some(private_dir.join(private_file).display().to_string());
    }
    verdict
}
