//! Dry runs: what an acquire would do, told from a read-only look at the workspace and its
//! ledger, with nothing written: no lease, no state directory, no lock file, no ledger record, no
//! private file (`acquire --dry-run`, `run --dry-run`).
//!
//! Each planned path gets the action the acquire would report for it, as the kinds decide it:
//!
//! | kind | action |
//! |---|---|
//! | directory on the way | `created` when missing |
//! | block | `created`, `inserted`, `refreshed` or `unchanged`, by the block engine on the current bytes (a malformed marker is refused as the acquire would) |
//! | owned file (and merged JSON file) | `created` when missing, `refreshed`/`unchanged` when a session holds it, `reclaimed` when our marker proves it ours, `replaced` when it is the project's (taken over) |
//! | marker | `held` when a session holds it, `exists` when it is the project's (both reported first, as the acquire records its intent), `created` when missing |
//! | skill folder | `created` when missing, `refreshed` when a session holds it, `reclaimed` when it carries our marker file, `taken_over` when it is the project's |
//! | private file | `written`, under the session folder a start would make (named `dry-run` here) |
//!
//! A start first cleans the leftovers of dead holders; a dry run only counts them, in a note.
//!
//! The delivery verdict is judged as for an acquire, over `Projected`: the workspace as the
//! start would leave it (the planned blocks and owned files over the real, read-only file
//! system), so the verdict and the launch arguments it adds are the ones the start would report.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use crate::block::{self, Markers, UpsertAction};
use crate::error::Result;
use crate::fsio::Root;
use crate::generated::{self, Provenance};
use crate::guidance::{CappedRead, FsEntry, FsStat, GuidanceFs, StdFs};
use crate::ledger::{EntryRecord, Ledger};
use crate::plan::{EntryKind, Plan, RelPath};
use crate::provider::Namespace;
use crate::receipts::{FileAction, FileKind, FileReceipt};

use super::plan_paths;

/// The token a dry run's private paths are shown under (no lease is taken, so no token exists).
pub const DRY_RUN_TOKEN: &str = "dry-run";

/// What a dry run reads: the workspace and the ledger (empty when none was ever written).
pub(crate) struct View<'a> {
    pub root: &'a Root,
    pub ledger: &'a Ledger,
    pub ns: &'a Namespace,
    pub markers: &'a Markers,
}

/// The files an acquire of `plan` would report, in the order it reports them.
pub(crate) fn predict(
    view: &View<'_>,
    plan: &Plan,
    private_dir: &Path,
) -> Result<Vec<FileReceipt>> {
    let mut files = Vec::new();
    let mut report = |path: String, kind: FileKind, action: FileAction| {
        files.push(FileReceipt { path, kind, action });
    };
    // Workspace paths as an acquire reports them: relative to the workspace.
    let shown = |rel: &RelPath| rel.to_string();
    // A marker already there (held by a session, or the project's own) is reported as the
    // intent is recorded, before anything is applied; one to create, when it is created.
    let marker_actions: Vec<FileAction> = plan
        .markers
        .iter()
        .map(|marker| {
            match (
                view.ledger.entries.get(&marker.path),
                view.root.kind(&marker.path),
            ) {
                (Some(EntryRecord::Marker { .. }), _) => FileAction::Held,
                (_, EntryKind::Missing) => FileAction::Created,
                _ => FileAction::Exists,
            }
        })
        .collect();
    for (marker, action) in plan.markers.iter().zip(&marker_actions) {
        if *action != FileAction::Created {
            report(shown(&marker.path), FileKind::Marker, *action);
        }
    }
    let mut dirs: Vec<RelPath> = Vec::new();
    for path in plan_paths(plan)? {
        for dir in path.ancestors() {
            if view.root.kind(&dir) == EntryKind::Missing && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    for dir in &dirs {
        report(shown(dir), FileKind::Dir, FileAction::Created);
    }
    for planned in &plan.blocks {
        report(
            shown(&planned.path),
            FileKind::Block,
            block_action(view, planned)?,
        );
    }
    for owned in &plan.owned_files {
        let held = view.ledger.entries.contains_key(&owned.path);
        let content = generated::stamp(&owned.content, &owned.path, owned.role, view.ns);
        let action = match view.root.read(&owned.path)? {
            None => FileAction::Created,
            Some(s) if held && s.bytes == content.as_bytes() => FileAction::Unchanged,
            Some(_) if held => FileAction::Refreshed,
            Some(s) if generated::provenance(&s.bytes, view.ns) == Provenance::Proven => {
                FileAction::Reclaimed
            }
            Some(_) => FileAction::Replaced,
        };
        report(shown(&owned.path), FileKind::Owned, action);
    }
    for (marker, action) in plan.markers.iter().zip(&marker_actions) {
        if *action == FileAction::Created {
            report(shown(&marker.path), FileKind::Marker, *action);
        }
    }
    for file in &plan.private_files {
        let path = private_dir.join(&file.name).display().to_string();
        report(path, FileKind::Private, FileAction::Written);
    }
    for skill in &plan.skills {
        let path = super::skill_folder::skill_path(skill)?;
        let action = match view.root.kind(&path) {
            EntryKind::Missing => FileAction::Created,
            _ if view.ledger.entries.contains_key(&path) => FileAction::Refreshed,
            _ if view.root.kind(&path.join(&view.ns.skill_marker())?) == EntryKind::File => {
                FileAction::Reclaimed
            }
            _ => FileAction::TakenOver,
        };
        report(shown(&path), FileKind::Skill, action);
    }
    Ok(files)
}

/// What the block engine would do to the file at the block's path (refusing a malformed marker
/// as the acquire would).
fn block_action(view: &View<'_>, planned: &crate::plan::BlockProjection) -> Result<FileAction> {
    let (existed, upserted) = upserted(view, planned)?;
    Ok(match upserted.action {
        UpsertAction::Inserted if !existed => FileAction::Created,
        UpsertAction::Inserted => FileAction::Inserted,
        UpsertAction::Refreshed => FileAction::Refreshed,
        UpsertAction::Unchanged => FileAction::Unchanged,
    })
}

/// Whether the block's file exists, and what the block engine would make of it.
fn upserted(
    view: &View<'_>,
    planned: &crate::plan::BlockProjection,
) -> Result<(bool, block::Upserted)> {
    let current = view.root.read(&planned.path)?;
    let exclude;
    let markers = if super::git_exclude::is_exclude(&planned.path) {
        exclude = block::Markers::for_git_exclude(view.ns);
        &exclude
    } else {
        view.markers
    };
    let upserted = block::upsert(
        markers,
        current.as_ref().map(|s| s.bytes.as_slice()),
        &planned.body,
    )
    .map_err(|e| crate::error::Error::Malformed {
        path: view.root.display_path(&planned.path),
        line: e.line,
        reason: e.reason,
    })?;
    Ok((current.is_some(), upserted))
}

/// A note on the leases a real start would clean first (their holders are dead).
pub(crate) fn stale_note(ledger: &Ledger) -> Option<String> {
    let dead = ledger
        .leases
        .values()
        .filter(|lease| lease.holder().liveness().is_dead())
        .count();
    (dead > 0).then(|| {
        format!(
            "dry run: a start would first clean {dead} lease(s) whose holders are dead, and undo what only they held"
        )
    })
}

/// The workspace as a start would leave it, read-only: the bytes of every planned block file and
/// owned file (and the directories made on the way) over the real file system. Only the delivery
/// verdict reads it.
pub(crate) struct Projected {
    files: BTreeMap<PathBuf, Vec<u8>>,
    dirs: BTreeSet<PathBuf>,
}

impl Projected {
    /// The planned files of `plan` in the workspace `root_path`, as the start would write them.
    pub(crate) fn new(view: &View<'_>, plan: &Plan, root_path: &Path) -> Result<Projected> {
        let mut files = BTreeMap::new();
        for planned in &plan.blocks {
            let (_, upserted) = upserted(view, planned)?;
            files.insert(root_path.join(planned.path.as_str()), upserted.bytes);
        }
        for owned in &plan.owned_files {
            let content = generated::stamp(&owned.content, &owned.path, owned.role, view.ns);
            files.insert(root_path.join(owned.path.as_str()), content.into_bytes());
        }
        let dirs = files
            .keys()
            .flat_map(|file| file.ancestors().skip(1))
            .filter(|dir| dir.starts_with(root_path) && *dir != root_path)
            .map(Path::to_path_buf)
            .collect();
        Ok(Projected { files, dirs })
    }

    fn planned(&self, path: &Path) -> Option<&Vec<u8>> {
        self.files.get(path)
    }
}

impl GuidanceFs for Projected {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.planned(path) {
            Some(bytes) => Ok(bytes.clone()),
            None => StdFs.read(path),
        }
    }

    fn read_capped(&self, path: &Path, cap: u64) -> io::Result<CappedRead> {
        match self.planned(path) {
            Some(bytes) if bytes.len() as u64 > cap => Ok(CappedRead::TooLarge {
                len: bytes.len() as u64,
            }),
            Some(bytes) => Ok(CappedRead::Complete(bytes.clone())),
            None => StdFs.read_capped(path, cap),
        }
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<FsEntry>> {
        let mut entries = match StdFs.list_dir(path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound && self.dirs.contains(path) => Vec::new(),
            Err(e) => return Err(e),
        };
        let planned = self
            .files
            .keys()
            .map(|f| (f, EntryKind::File))
            .chain(self.dirs.iter().map(|d| (d, EntryKind::Dir)));
        for (child, kind) in planned {
            if child.parent() != Some(path) {
                continue;
            }
            let Some(name) = child.file_name() else {
                continue;
            };
            if !entries.iter().any(|e| e.name == name) {
                entries.push(FsEntry {
                    name: name.to_os_string(),
                    kind,
                });
            }
        }
        Ok(entries)
    }

    fn stat(&self, path: &Path) -> io::Result<FsStat> {
        if let Some(bytes) = self.planned(path) {
            return Ok(FsStat {
                kind: EntryKind::File,
                len: bytes.len() as u64,
            });
        }
        match StdFs.stat(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && self.dirs.contains(path) => {
                Ok(FsStat {
                    kind: EntryKind::Dir,
                    len: 0,
                })
            }
            other => other,
        }
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        match StdFs.canonicalize(path) {
            // A planned path lies under the canonical root with no link on the way (the start
            // refuses one), so it is its own real path.
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    && (self.files.contains_key(path) || self.dirs.contains(path)) =>
            {
                Ok(path.to_path_buf())
            }
            other => other,
        }
    }
}
