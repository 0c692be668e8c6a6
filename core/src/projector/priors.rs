//! Prior content kept inside the workspace: when a session takes over a path the project already
//! had (its own `.cursor/mcp.json`, its own `.claude/skills/review/`), the prior is moved — a
//! rename, on the same file system — into a hidden folder at the top of the workspace, named by
//! our namespace, and put back by the last session:
//!
//! ```text
//! .{ns}-priors/.gitignore            `*`: git ignores the whole folder
//! .{ns}-priors/<id>/manifest.json    the original path, file or folder, and the SHA-256 of
//!                                    each content we wrote there
//! .{ns}-priors/<id>/<name>           the prior itself (file or folder), under its own name
//! ```
//!
//! Kept there, a prior survives the loss of the state directory: the next start (or
//! `strip-stale`) finds every id no ledger entry names and puts its prior back, with no ledger at
//! all, when what stands at the original path is provably ours (content whose SHA-256 the
//! manifest lists, a generated file our marker proves, a skill folder whose own marker manifest
//! matches it) or absent. Anything else there is the user's: both stay, and a warning says where
//! the prior is.
//!
//! No CLI reads the folder: Claude Code, Codex, Cursor, Pi, Muse, agy, opencode and Copilot CLI
//! read instruction files, rules, skills and configuration from fixed names at the top of the
//! project and in their own dot-folders (`.claude/`, `.codex/`, `.agents/`, `.cursor/`, `.pi/`,
//! `.agent/`, `.opencode/`, `.github/`), and every discovery profile in this crate lists only
//! such names (a `**` glob never enters a hidden folder); a skill loader looks for
//! `<skills folder>/<name>/SKILL.md`, never inside another hidden folder.
//!
//! Crash safety: the ledger names the id (durably) before the manifest is written, and the
//! manifest is written before the prior moves; the move is one rename (or, across file systems,
//! a copy renamed into place before the original goes). Every interrupted step leaves the prior
//! whole at its original path or in its folder.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::fsio::{self, Root};
use crate::generated::{self, Provenance};
use crate::ledger::{EntryRecord, PriorRef};
use crate::plan::RelPath;
use crate::provider::{EntryKind, Namespace};
use crate::receipts::{FileAction, FileKind};

use super::kind::Cx;
use super::skill_folder;

/// The manifest's file name inside a prior's folder.
pub const MANIFEST: &str = "manifest.json";
/// How many of our contents a manifest remembers for one path.
const REMEMBERED: usize = 4;

/// The priors folder of a namespace: `.{ns}-priors`.
pub fn dir_name(namespace: &Namespace) -> String {
    format!(".{}-priors", namespace.as_str())
}

/// What a prior is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorKind {
    /// A file we write whole (an owned file).
    File,
    /// A folder (a skill folder).
    Folder,
}

/// What a prior's folder says about it, readable without the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Manifest {
    #[serde(rename = "_projectfile")]
    note: String,
    /// Where the prior came from, relative to the workspace.
    path: RelPath,
    kind: PriorKind,
    /// SHA-256 (hex) of each content we wrote at `path`, newest last.
    #[serde(default)]
    written: Vec<String>,
}

/// A fresh prior reference for namespace `namespace`.
pub fn new_ref(namespace: &Namespace) -> Result<PriorRef> {
    Ok(PriorRef {
        dir: dir_name(namespace),
        id: fsio::random_hex(8)?,
    })
}

fn id_dir(prior: &PriorRef) -> Result<RelPath> {
    Ok(RelPath::new(prior.dir.as_str())?.join(&prior.id)?)
}

fn manifest_path(prior: &PriorRef) -> Result<RelPath> {
    Ok(id_dir(prior)?.join(MANIFEST)?)
}

/// Where the prior of `original` is kept.
pub fn kept_path(prior: &PriorRef, original: &RelPath) -> Result<RelPath> {
    Ok(id_dir(prior)?.join(original.file_name())?)
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn digest(bytes: &[u8]) -> String {
    fsio::tree::hex(&Sha256::digest(bytes))
}

/// Whether the prior of `original` is in its folder now.
pub fn is_kept(root: &Root, prior: &PriorRef, original: &RelPath) -> bool {
    kept_path(prior, original).is_ok_and(|p| root.kind(&p) != EntryKind::Missing)
}

/// Moves what stands at `original` into the prior's folder, after writing its manifest
/// (`written`: the SHA-256 of what we are about to write there, for a file).
pub fn take(
    root: &Root,
    prior: &PriorRef,
    original: &RelPath,
    kind: PriorKind,
    written: Option<String>,
) -> Result<()> {
    let manifest = Manifest {
        note: "The project's own content, kept by projectfile while sessions run and put back by the last one (or by the next start, if its record was lost). Do not edit.".into(),
        path: original.clone(),
        kind,
        written: written.into_iter().collect(),
    };
    let moved = prepare(root, prior, &manifest)
        .and_then(|()| fsio::move_tree(root, original, root, &kept_path(prior, original)?));
    if let Err(e) = moved {
        // Nothing moved (a move is whole or not at all): the folder is ours to take back.
        if !fsio::faults::crashed() && !is_kept(root, prior, original) {
            let _ = forget(root, prior);
        }
        return Err(e);
    }
    Ok(())
}

/// Creates the priors folder (with its `.gitignore`) and the prior's folder with its manifest.
fn prepare(root: &Root, prior: &PriorRef, manifest: &Manifest) -> Result<()> {
    create_top(root, &RelPath::new(prior.dir.as_str())?)?;
    root.create_dir(&id_dir(prior)?)?;
    write_manifest(root, prior, manifest)
}

/// Creates the priors folder `top` with its `.gitignore`, unless there.
fn create_top(root: &Root, top: &RelPath) -> Result<()> {
    root.create_dir(top)?;
    let ignore = top.join(".gitignore")?;
    if root.kind(&ignore) == EntryKind::Missing {
        root.write_atomic(&ignore, b"*\n", Some(0o644))?;
    }
    Ok(())
}

/// Creates the priors folder of `namespace` with its `.gitignore`, unless there.
pub(crate) fn prepare_top(root: &Root, namespace: &Namespace) -> Result<()> {
    create_top(root, &RelPath::new(dir_name(namespace))?)
}

/// Removes the priors folder of `namespace` when nothing is kept in it any more.
pub(crate) fn tidy(root: &Root, namespace: &Namespace) -> Result<()> {
    tidy_top(root, &RelPath::new(dir_name(namespace))?)
}

fn write_manifest(root: &Root, prior: &PriorRef, manifest: &Manifest) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(manifest).unwrap_or_default();
    bytes.push(b'\n');
    root.write_atomic(&manifest_path(prior)?, &bytes, Some(0o644))
}

fn read_manifest(root: &Root, prior: &PriorRef) -> Option<Manifest> {
    let bytes = root.read(&manifest_path(prior).ok()?).ok()??.bytes;
    serde_json::from_slice(&bytes).ok()
}

/// Adds `sha256` to what the manifest says we wrote (before we write it), so the content stays
/// provably ours without the ledger.
pub fn note_written(root: &Root, prior: &PriorRef, sha256: String) -> Result<()> {
    let Some(mut manifest) = read_manifest(root, prior) else {
        return Ok(());
    };
    if manifest.written.last() == Some(&sha256) {
        return Ok(());
    }
    manifest.written.retain(|w| *w != sha256);
    manifest.written.push(sha256);
    let excess = manifest.written.len().saturating_sub(REMEMBERED);
    manifest.written.drain(..excess);
    write_manifest(root, prior, &manifest)
}

/// Removes our temporary files a crash left in the prior's folder (a manifest's, a copy's).
pub fn remove_temp_files(root: &Root, prior: &PriorRef, original: &RelPath) -> Result<()> {
    root.remove_temp_files(&manifest_path(prior)?)?;
    root.remove_temp_entries(&kept_path(prior, original)?, &[])?;
    Ok(())
}

/// When a move across file systems stopped after its copy was in place but before the original
/// went, the prior stands whole both in its folder and at `original`: the copy in its folder is
/// dropped (the prior is at its place). Returns whether that was so.
pub fn drop_duplicate(root: &Root, prior: &PriorRef, original: &RelPath) -> Result<bool> {
    if !is_kept(root, prior, original) {
        return Ok(false);
    }
    let kept = kept_path(prior, original)?;
    let same = match (root.kind(original), root.kind(&kept)) {
        (EntryKind::File, EntryKind::File) => {
            let (a, b) = (root.read(original)?, root.read(&kept)?);
            a.is_some() && a == b
        }
        (EntryKind::Dir, EntryKind::Dir) => {
            let (a, b) = (root.scan_tree(original)?, root.scan_tree(&kept)?);
            a.is_some_and(|a| {
                b.is_some_and(|b| {
                    a.len() == b.len()
                        && a.iter()
                            .zip(&b)
                            .all(|(x, y)| x.path == y.path && x.kind == y.kind && x.mode == y.mode)
                })
            })
        }
        _ => false,
    };
    if same {
        forget(root, prior)?;
    }
    Ok(same)
}

/// Puts the prior back at `original`, where nothing may stand now. The folders on its way were
/// the project's when the prior was taken over; any the user deleted since are made again (never
/// through a link: a symlink or a file standing at one refuses the move and the prior stays
/// kept).
pub fn put_back(root: &Root, prior: &PriorRef, original: &RelPath) -> Result<()> {
    for folder in original.ancestors() {
        if root.kind(&folder) == EntryKind::Missing {
            root.create_dir(&folder)?;
        }
    }
    fsio::move_tree(root, &kept_path(prior, original)?, root, original)
}

/// Removes the prior's folder (its manifest, and the prior if a copy of it is still there), and
/// the priors folder when nothing else is kept in it.
pub fn forget(root: &Root, prior: &PriorRef) -> Result<()> {
    let dir = id_dir(prior)?;
    if root.kind(&dir) == EntryKind::Dir {
        root.remove_tree(&dir)?;
    }
    tidy_top(root, &RelPath::new(prior.dir.as_str())?)
}

/// Removes the priors folder `top` when nothing is kept in it any more (only its `.gitignore`,
/// or our temporary files a crash left).
fn tidy_top(root: &Root, top: &RelPath) -> Result<()> {
    let ignore = top.join(".gitignore")?;
    root.remove_temp_files(&ignore)?;
    let others = root
        .entry_names(top)?
        .unwrap_or_default()
        .into_iter()
        .any(|name| name != ".gitignore");
    if !others {
        root.remove_file(&ignore)?;
        root.remove_dir_if_empty(top)?;
    }
    Ok(())
}

/// The priors of this namespace's folder that no ledger entry names (their record was lost with
/// the state directory, or their last step was interrupted), put back where what stands at the
/// original path is provably ours or absent.
pub(crate) fn recover(cx: &mut Cx<'_>) {
    let Ok(top) = RelPath::new(dir_name(cx.ns)) else {
        return;
    };
    let names = match cx.l.root.entry_names(&top) {
        Ok(Some(names)) => names,
        Ok(None) => return,
        Err(e) => return cx.warn(cx.shown(&top), e.to_string()),
    };
    let named: Vec<&str> =
        cx.l.ledger
            .entries
            .values()
            .filter_map(|entry| prior_of(entry).map(|p| p.id.as_str()))
            .collect();
    let orphans: Vec<String> = names
        .iter()
        .filter(|name| {
            *name != ".gitignore" && *name != super::made::FILE && !named.contains(&name.as_str())
        })
        .cloned()
        .collect();
    for id in orphans {
        if id.contains(fsio::TEMP_INFIX) {
            continue;
        }
        let prior = PriorRef {
            dir: top.to_string(),
            id,
        };
        if let Err(e) = recover_one(cx, &prior) {
            let shown = id_dir(&prior).map(|d| cx.shown(&d)).unwrap_or_default();
            cx.warn(shown, e.to_string());
        }
    }
    super::made::settle(cx, &names);
    if let Err(e) = tidy_top(&cx.l.root, &top) {
        cx.warn(cx.shown(&top), e.to_string());
    }
}

/// The workspace prior an entry records, if any.
pub fn prior_of(entry: &EntryRecord) -> Option<&PriorRef> {
    match entry {
        EntryRecord::Owned {
            prior: Some(prior), ..
        }
        | EntryRecord::Skill {
            prior: Some(prior), ..
        } => Some(prior),
        _ => None,
    }
}

fn recover_one(cx: &mut Cx<'_>, prior: &PriorRef) -> Result<()> {
    let Some(manifest) = read_manifest(&cx.l.root, prior) else {
        // Not a folder of ours, or one whose manifest never got written (nothing moved yet).
        let names = cx.l.root.entry_names(&id_dir(prior)?)?.unwrap_or_default();
        if names.iter().all(|name| name.contains(fsio::TEMP_INFIX)) {
            forget(&cx.l.root, prior)?;
        }
        return Ok(());
    };
    let original = &manifest.path;
    if !is_kept(&cx.l.root, prior, original) {
        // Put back already, or never moved: the manifest is all that is left.
        return forget(&cx.l.root, prior);
    }
    let ours = match (cx.l.root.kind(original), manifest.kind) {
        (EntryKind::Missing, _) => true,
        (EntryKind::File, PriorKind::File) => cx.l.root.read(original)?.is_some_and(|s| {
            manifest.written.contains(&digest(&s.bytes))
                || generated::provenance(&s.bytes, cx.ns) == Provenance::Proven
        }),
        (EntryKind::Dir, PriorKind::Folder) => matches!(
            skill_folder::classify(&cx.l.root, original, cx.ns)?,
            skill_folder::Initial::Leftover(..)
        ),
        _ => false,
    };
    if !ours {
        let kept = kept_path(prior, original)?;
        let message = format!(
            "the project's own {original} is kept at {} because something that is not provably ours stands at its place; move it back by hand",
            cx.shown(&kept)
        );
        cx.warn(cx.shown(original), message);
        return Ok(());
    }
    match cx.l.root.kind(original) {
        EntryKind::File => {
            cx.l.root.remove_file(original)?;
        }
        EntryKind::Dir => {
            cx.l.root.remove_tree(original)?;
        }
        _ => {}
    }
    put_back(&cx.l.root, prior, original)?;
    forget(&cx.l.root, prior)?;
    let kind = match manifest.kind {
        PriorKind::File => FileKind::Owned,
        PriorKind::Folder => FileKind::Skill,
    };
    cx.report(original, kind, FileAction::Restored);
    cx.warn(
        cx.shown(original),
        "the project's own content was put back from the priors folder; the record of the session that took it over was lost",
    );
    Ok(())
}
