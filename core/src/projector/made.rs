//! What sessions made in the workspace where nothing stood (a generated file, a file holding only
//! our block, a marker, a skill folder, the folders on the way), recorded inside the workspace
//! beside the priors, so that losing the state directory leaves nothing of ours behind:
//!
//! ```text
//! .{ns}-priors/made.json   every path made and not yet taken out, with what proves it ours,
//!                          and the folders made on the way
//! ```
//!
//! The record is written before anything it names is made (after the ledger, which names the
//! same paths as entries), and every path stays in it while the ledger records an entry for it.
//! Each command, after its own undos, takes out every path the record names that no ledger entry
//! records: one its own undo took out already (the path is gone, or the undo left it as the
//! user's), or, when the ledger was lost, a leftover of a session whose record went with it. A
//! leftover goes only while it is provably ours: a generated file carrying our marker with a
//! digest that holds, or whose SHA-256 the record lists; a file holding our block (the block
//! goes, and the file with it when nothing else is left: `created=true`); an empty marker; a skill
//! folder whose own marker manifest matches it exactly. Anything else is the user's: it stays,
//! and a warning says so. Git's exclude file, when it was there before, is named too: our block
//! in it goes once no ledger entry records it, as no later start may put one there. Folders made
//! on the way go when they are empty and nothing recorded needs them. The record names the
//! state directory whose start wrote it last: while that one, if another than this command's,
//! keeps a ledger, its sessions' leftovers are left to it.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::generated::{self, Provenance};
use crate::ledger::EntryRecord;
use crate::plan::{MarkerKind, Plan, RelPath};
use crate::provider::EntryKind;
use crate::receipts::{FileAction, FileKind};

use super::kind::{Arrival, Cx};
use super::priors;
use super::shared_block::SharedBlock;
use super::skill_folder::{self, skill_path};

/// The record's file name inside the priors folder.
pub const FILE: &str = "made.json";
/// How many of our contents the record remembers for one generated file.
const REMEMBERED: usize = 4;

/// What was made at a path, and so how it is proven ours.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Made {
    /// A file written whole: the SHA-256 of each content we wrote, newest last.
    File { written: Vec<String> },
    /// A file made to hold our block.
    BlockFile,
    /// An empty file or folder whose presence we made.
    Marker { marker: MarkerKind },
    /// A skill folder carrying our marker.
    SkillFolder,
}

/// The record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    #[serde(rename = "_projectfile", default)]
    note: String,
    #[serde(default)]
    paths: BTreeMap<RelPath, Made>,
    #[serde(default)]
    dirs: BTreeSet<RelPath>,
    /// Files of the user's holding our block put after their text without a final newline:
    /// the line end before it is ours, which only this record tells once the ledger is lost.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    joined: BTreeSet<RelPath>,
    /// Files of the user's holding our block that no start's plan names again (git's exclude
    /// file: a later session may create nothing, and put no block there), so that a lost ledger
    /// still has the block taken out.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    held: BTreeSet<RelPath>,
    /// The state directory's folder for this workspace (`<state>/workspaces/<key>`) whose start
    /// wrote the record last: while that folder keeps a ledger and is not this command's, the
    /// sessions it records are its own, and this command leaves their leftovers to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<std::path::PathBuf>,
}

const NOTE: &str = "What projectfile sessions made in this project, so it is taken out even if projectfile's own records are lost. Do not edit.";

fn record_path(cx: &Cx<'_>) -> Result<RelPath> {
    Ok(RelPath::new(priors::dir_name(cx.ns))?.join(FILE)?)
}

/// The record as it stands (`None`: there is none, or it cannot be read as one).
fn read(cx: &Cx<'_>) -> Result<Option<Record>> {
    let path = record_path(cx)?;
    let Some(snapshot) = cx.l.root.read(&path)? else {
        return Ok(None);
    };
    Ok(serde_json::from_slice(&snapshot.bytes).ok())
}

/// Writes `record`, or removes it when it names nothing (and the priors folder, when nothing
/// else is kept there).
fn write(cx: &Cx<'_>, record: &Record) -> Result<()> {
    let path = record_path(cx)?;
    if record.paths.is_empty()
        && record.dirs.is_empty()
        && record.joined.is_empty()
        && record.held.is_empty()
    {
        cx.l.root.remove_file(&path)?;
        return priors::tidy(&cx.l.root, cx.ns);
    }
    priors::prepare_top(&cx.l.root, cx.ns)?;
    let mut record = record.clone();
    record.note = NOTE.to_string();
    let mut bytes = serde_json::to_vec_pretty(&record).unwrap_or_default();
    bytes.push(b'\n');
    cx.l.root.write_atomic(&path, &bytes, Some(0o644))
}

/// Records what `plan`'s start is about to make (its entries recorded in the ledger and saved,
/// nothing applied yet): called before anything is made.
pub(crate) fn note_start(cx: &mut Cx<'_>, plan: &Plan) -> Result<()> {
    let mut made: Vec<(RelPath, Made)> = Vec::new();
    for block in &plan.blocks {
        if cx.l.root.kind(&block.path) == EntryKind::Missing {
            made.push((block.path.clone(), Made::BlockFile));
        }
    }
    for owned in &plan.owned_files {
        let fresh = matches!(
            cx.out.arrivals.get(&owned.path),
            Some(Arrival::Absent | Arrival::Reclaimed)
        );
        if let (true, Some(EntryRecord::Owned { writing, .. })) =
            (fresh, cx.l.ledger.entries.get(&owned.path))
        {
            let written = writing
                .iter()
                .map(|w| priors::digest(w.as_bytes()))
                .collect();
            made.push((owned.path.clone(), Made::File { written }));
        }
    }
    for marker in &plan.markers {
        if cx.out.unapplied.contains(&marker.path) {
            let marker_kind = marker.kind;
            made.push((
                marker.path.clone(),
                Made::Marker {
                    marker: marker_kind,
                },
            ));
        }
    }
    for skill in &plan.skills {
        let path = skill_path(skill)?;
        if matches!(
            cx.out.arrivals.get(&path),
            Some(Arrival::Absent | Arrival::Reclaimed)
        ) {
            made.push((path, Made::SkillFolder));
        }
    }
    let dirs = cx.out.to_create.clone();
    let joined: Vec<RelPath> = plan
        .blocks
        .iter()
        .filter(|b| super::shared_block::joined(cx, &b.path))
        .map(|b| b.path.clone())
        .collect();
    let held: Vec<RelPath> = plan
        .blocks
        .iter()
        .filter(|b| {
            super::git_exclude::is_exclude(&b.path) && cx.l.root.kind(&b.path) == EntryKind::File
        })
        .map(|b| b.path.clone())
        .collect();
    if made.is_empty() && dirs.is_empty() && joined.is_empty() && held.is_empty() {
        return Ok(());
    }
    let mut record = read(cx)?.unwrap_or_default();
    let before = record.clone();
    for (path, what) in made {
        record.paths.entry(path).or_insert(what);
    }
    record.dirs.extend(dirs);
    record.joined.extend(joined);
    record.held.extend(held);
    record.state = Some(cx.l.state.path().to_path_buf());
    if record != before {
        write(cx, &record)?;
    }
    Ok(())
}

/// Every path and folder the record names in `root` for `ns`, each with whether it is a folder.
pub(crate) fn recorded(
    root: &crate::fsio::Root,
    ns: &crate::provider::Namespace,
) -> Result<Vec<(RelPath, bool)>> {
    let path = RelPath::new(priors::dir_name(ns))?.join(FILE)?;
    let Some(snapshot) = root.read(&path)? else {
        return Ok(Vec::new());
    };
    let Ok(record) = serde_json::from_slice::<Record>(&snapshot.bytes) else {
        return Ok(Vec::new());
    };
    let files = record.paths.into_iter().map(|(path, what)| {
        let dir = matches!(
            what,
            Made::SkillFolder
                | Made::Marker {
                    marker: MarkerKind::Dir
                }
        );
        (path, dir)
    });
    Ok(files
        .chain(record.dirs.into_iter().map(|d| (d, true)))
        .collect())
}

/// Whether the record says the block in `path` was put after the user's text without a final
/// newline (a start whose ledger was lost finds it there).
pub(crate) fn is_joined(cx: &Cx<'_>, path: &RelPath) -> Result<bool> {
    Ok(read(cx)?.is_some_and(|record| record.joined.contains(path)))
}

/// Adds the SHA-256 of `content`, which is about to be written to the generated file `path`, to
/// what the record says we wrote there (when it records the path): a format without our marker
/// stays provably ours without the ledger.
pub(crate) fn note_written(cx: &Cx<'_>, path: &RelPath, content: &str) -> Result<()> {
    let Some(mut record) = read(cx)? else {
        return Ok(());
    };
    let Some(Made::File { written }) = record.paths.get_mut(path) else {
        return Ok(());
    };
    let digest = priors::digest(content.as_bytes());
    if written.last() == Some(&digest) {
        return Ok(());
    }
    written.retain(|w| *w != digest);
    written.push(digest);
    let excess = written.len().saturating_sub(REMEMBERED);
    written.drain(..excess);
    write(cx, &record)
}

/// Whether the record's leftovers are another state directory's to settle
/// ([`another_live_state`]), said in a warning when they are.
fn left_to_another_state(cx: &mut Cx<'_>, record: &Record) -> bool {
    let Some(theirs) = record
        .state
        .as_deref()
        .filter(|s| another_live_state(cx, s))
    else {
        return false;
    };
    cx.warn(
        priors::dir_name(cx.ns),
        format!(
            "this workspace's sessions are recorded in another state directory ({}): what they made is left to it; give every command here the same state directory (--state-dir or PROJECTFILE_STATE_DIR)",
            theirs.display()
        ),
    );
    true
}

/// Whether `theirs`, a state directory's folder for a workspace read back from the record, is
/// in another state directory than this command's and still keeps a ledger: a second state
/// directory in use here, whose sessions this command cannot see. Only ever makes a command take
/// out less. A folder of this command's own state directory for another workspace (the record
/// was copied with the workspace, `cp -a`, a backup put back) is not: that workspace's sessions
/// are another folder's, and what they made here is taken out as any leftover.
fn another_live_state(cx: &Cx<'_>, theirs: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    // The common case, this command's own, asks the file system nothing.
    if theirs == cx.l.state.path() {
        return false;
    }
    let identity = |path: Option<&std::path::Path>| {
        std::fs::metadata(path?)
            .ok()
            .filter(std::fs::Metadata::is_dir)
            .map(|meta| (meta.dev(), meta.ino()))
    };
    // `<state>/workspaces/<key>`: the state directory's folder of workspaces.
    let Some(their_workspaces) = identity(theirs.parent()) else {
        return false;
    };
    identity(cx.l.state.path().parent()) != Some(their_workspaces)
        && std::fs::symlink_metadata(theirs.join(crate::journal::JOURNAL_FILE))
            .is_ok_and(|meta| meta.is_file())
}

/// Takes out every path the record names that no ledger entry records, and every folder it
/// names that no entry needs, while provably ours (see the module docs); the record is left
/// naming what the ledger still holds. `present`: the priors folder's names, when it exists.
pub(crate) fn settle(cx: &mut Cx<'_>, present: &[String]) {
    // A write of the record a crash stopped left its temporary file.
    let temp = format!(".{FILE}{}", crate::fsio::TEMP_INFIX);
    if present.iter().any(|name| name.starts_with(&temp))
        && let Ok(path) = record_path(cx)
    {
        let _ = cx.l.root.remove_temp_files(&path);
    }
    if !present.iter().any(|name| name == FILE) {
        return;
    }
    let record = match read(cx) {
        Ok(Some(record)) => record,
        Ok(None) => Record::default(),
        Err(e) => return cx.warn(priors::dir_name(cx.ns), e.to_string()),
    };
    if left_to_another_state(cx, &record) {
        return;
    }
    let mut left = record.clone();
    for path in &record.joined {
        if cx.l.ledger.entries.contains_key(path) {
            continue;
        }
        // Taken out by this command's own undo: nothing left to look for.
        if cx.out.files.iter().any(|f| f.path == path.as_str()) {
            left.joined.remove(path);
            continue;
        }
        // The ledger that knew this block is gone (or the block is out already): it goes now,
        // with the line end it added.
        super::shared_block::set_joined(cx, path, true);
        match SharedBlock::take_out(cx, path) {
            Ok(_) => {
                left.joined.remove(path);
            }
            Err(e) => cx.warn(cx.shown(path), e.to_string()),
        }
    }
    for path in &record.held {
        if cx.l.ledger.entries.contains_key(path) {
            continue;
        }
        // Taken out by this command's own undo, or (a lost ledger) now, when it is there.
        if cx.out.files.iter().any(|f| f.path == path.as_str()) {
            left.held.remove(path);
            continue;
        }
        match SharedBlock::take_out(cx, path) {
            Ok(_) => {
                left.held.remove(path);
            }
            Err(e) => cx.warn(cx.shown(path), e.to_string()),
        }
    }
    for (path, what) in &record.paths {
        if cx.l.ledger.entries.contains_key(path) {
            continue;
        }
        // Taken out by this command's own undo: nothing more to say of it.
        let undone = cx.out.files.iter().any(|f| f.path == path.as_str());
        // A write a crash stopped left its temporary file beside the path.
        cx.l.remove_temp_files(path);
        if matches!(what, Made::SkillFolder) {
            let _ = cx.l.root.remove_temp_entries(path, &[]);
        }
        match take_out(cx, path, what) {
            Ok(true) => {}
            Ok(false) if undone => {}
            Ok(false) => cx.warn(
                cx.shown(path),
                "a session's record of making this was lost, and it is not provably ours any more: it stays where it is",
            ),
            Err(e) => {
                cx.warn(cx.shown(path), e.to_string());
                continue;
            }
        }
        left.paths.remove(path);
    }
    let mut dirs: Vec<&RelPath> = record.dirs.iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for dir in dirs {
        let prefix = format!("{dir}/");
        let needed = cx.l.ledger.created_dirs.contains(dir)
            || left.paths.keys().any(|p| p.as_str().starts_with(&prefix));
        if needed {
            continue;
        }
        match cx.l.root.remove_dir_if_empty(dir) {
            Ok(true) => cx.report(dir, FileKind::Dir, FileAction::Removed),
            Ok(false) => {}
            Err(e) => {
                cx.warn(cx.shown(dir), e.to_string());
                continue;
            }
        }
        left.dirs.remove(dir);
    }
    if left != record
        && let Err(e) = write(cx, &left)
    {
        cx.warn(priors::dir_name(cx.ns), e.to_string());
    }
}

/// Takes out what was made at `path` when it is provably ours; whether what stands there now is
/// gone (taken out here, or already).
fn take_out(cx: &mut Cx<'_>, path: &RelPath, what: &Made) -> Result<bool> {
    let root = &cx.l.root;
    match (what, root.kind(path)) {
        (_, EntryKind::Missing) => Ok(true),
        (Made::File { written }, EntryKind::File) => {
            let ours = root.read(path)?.is_some_and(|s| {
                written.contains(&priors::digest(&s.bytes))
                    || generated::provenance(&s.bytes, cx.ns) == Provenance::Proven
            });
            if ours && root.remove_file(path)? {
                cx.report(path, FileKind::Owned, FileAction::Removed);
            }
            Ok(ours)
        }
        (Made::BlockFile, EntryKind::File) => {
            SharedBlock::take_out(cx, path)?;
            Ok(cx.l.root.kind(path) == EntryKind::Missing)
        }
        (
            Made::Marker {
                marker: MarkerKind::File,
            },
            EntryKind::File,
        ) => {
            let empty = root.read(path)?.is_some_and(|s| s.bytes.is_empty());
            if empty && root.remove_file(path)? {
                cx.report(path, FileKind::Marker, FileAction::Removed);
            }
            Ok(empty)
        }
        (
            Made::Marker {
                marker: MarkerKind::Dir,
            },
            EntryKind::Dir,
        ) => {
            let removed = root.remove_dir_if_empty(path)?;
            if removed {
                cx.report(path, FileKind::Marker, FileAction::Removed);
            }
            Ok(removed)
        }
        (Made::SkillFolder, EntryKind::Dir) => {
            let ours = matches!(
                skill_folder::classify(root, path, cx.ns)?,
                skill_folder::Initial::Leftover(..)
            );
            if ours {
                root.remove_tree(path)?;
                cx.report(path, FileKind::Skill, FileAction::Removed);
            }
            Ok(ours)
        }
        _ => Ok(false),
    }
}
