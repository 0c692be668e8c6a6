//! Skill folders: projecting a session's skill folders into a CLI's skills folder, counted across
//! sessions like every other projection, and taking them out again without losing a byte of the
//! project (docs/promises.md, promises 11, 12 and 15).
//!
//! - **Marker.** Every folder we build carries the marker file [`crate::Namespace::skill_marker`]
//!   (`.agentworks-managed`). Its content is a small JSON document naming the namespace, a random
//!   *build id*, and the SHA-256 and mode of every file we wrote (see [`marker_content`]). It is a
//!   hidden file inside the skill folder: skill loaders read the folder's `SKILL.md` and what it
//!   references, and skip hidden entries. A file of that name at the top of a *source* skill is
//!   not copied (ours replaces it), so a projected folder can be used as a source.
//! - **Take-over.** A same-named folder without our marker (an earlier version's, or the
//!   project's own) is taken over: moved whole into the workspace's priors folder
//!   ([`super::priors`]; a rename, as it is on the same file system), so our build can stand in
//!   its place and skill updates reach existing projects. The last session puts it back byte for
//!   byte (contents, modes, symlinks as links, times); `status` lists it meanwhile; if the state
//!   directory is lost, the next start puts it back.
//! - **Ownership is proven, never assumed.** The ledger records the manifest of every build (what
//!   we wrote). A folder carrying our marker is ours: when it is removed or replaced, entries
//!   matching the manifest go; files the user changed or added in it are *set aside* under
//!   `kept/` and reported, never deleted blindly (a refresh carries added files into the new
//!   build instead, so they stay where the user put them while sessions run). A folder without
//!   our marker standing there (the user put their own in place of ours) is not ours: it stays
//!   untouched and is reported, unless the project's prior must come back there, in which case
//!   it is set aside and reported with where it went.
//! - **Lost state directory.** A folder with our marker but no ledger entry is ours only if it
//!   matches the manifest in its own marker exactly (then it is a leftover we may replace and,
//!   later, remove). Anything else — a changed file, an added file, a marker we cannot read — is
//!   unprovable, so the folder is taken over like the project's own and comes back whole.
//! - **Atomic per folder.** A build is made in a temporary folder beside the target
//!   (`.{name}.projectfile-tmp.{random}`, only ever holding our bytes), fsynced, then renamed in;
//!   a refresh exchanges the two folders atomically (`RENAME_EXCHANGE`, or two renames where the
//!   file system cannot) and then disposes of the old one as above.
//! - **No symlinks.** A symlink (or fifo, socket, device) inside a source skill is refused with an
//!   error naming it: following it could copy files from outside the skill, and a copied link could
//!   point the CLI outside the project. A symlink standing where the skill folder goes is refused.
//! - **Names.** A skill name is one plain folder name ([`crate::plan::validate_skill_name`]);
//!   `../../etc` is refused before anything is written.
//!
//! Crash safety: the ledger names everything before the workspace is touched (the entry with its
//! prior's id; a refresh's retired names and both manifests), and every step leaves a state that
//! the next undo or projection recognises from what exists: whether the prior is in the priors
//! folder or not yet moved; which build a folder holds (from its marker's build id).

mod contents;

pub use contents::{Initial, classify, marker_content};

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsio::{self, TEMP_INFIX, faults};
use crate::journal::Durability;
use crate::ledger::{EntryRecord, KeptRecord, Manifest, ManifestFile, PriorRef, Retired};
use crate::plan::{RelPath, SkillProjection};
use crate::provider::EntryKind;
use crate::receipts::{FileAction, FileKind, PriorState, TakenOver};

use super::kind::{Arrival, Cx, Entry, Projection};
use super::priors::{self, PriorKind};
use super::shared_block::two_kinds;
use contents::{blocked, diff, manifest_from, parse_marker, sha256_hex, source_matches};

/// The kind: a projected skill folder.
pub(crate) struct SkillFolder;

/// The folder a plan's skill goes to.
pub(crate) fn skill_path(skill: &SkillProjection) -> Result<RelPath> {
    Ok(skill.skills_dir.join(&skill.name)?)
}

impl Projection for SkillFolder {
    type Planned = SkillProjection;
    type Recorded<'r> = Entry<'r>;

    fn record(cx: &mut Cx<'_>, _token: &str, skill: &SkillProjection) -> Result<Durability> {
        let path = skill_path(skill)?;
        if let Some(entry) = cx.l.ledger.entries.get_mut(&path) {
            if !matches!(entry, EntryRecord::Skill { .. }) {
                return Err(two_kinds(&path));
            }
            return Ok(Durability::Durable);
        }
        // A new entry records what stands there now (and, for a take-over, where the prior will
        // be kept) before anything is touched.
        let initial = classify(&cx.l.root, &path, cx.ns)?;
        let (prior, manifest, arrival) = match initial {
            Initial::Absent => (None, None, Arrival::Absent),
            Initial::Leftover(manifest, created) => {
                cx.l.ledger.created_dirs.extend(created);
                (None, Some(manifest), Arrival::Reclaimed)
            }
            Initial::TakeOver => (Some(priors::new_ref(cx.ns)?), None, Arrival::TakenOver),
        };
        cx.out.arrivals.insert(path.clone(), arrival);
        cx.l.ledger.entries.insert(
            path,
            EntryRecord::Skill {
                source: skill.source.clone(),
                prior,
                manifest,
                retired: Vec::new(),
                namespace: cx.ns.as_str().to_string(),
            },
        );
        Ok(Durability::Durable)
    }

    fn apply(cx: &mut Cx<'_>, _token: &str, skill: &SkillProjection) -> Result<()> {
        let path = skill_path(skill)?;
        let action = project(cx, &path, &skill.source)?;
        let action = match cx.out.arrivals.get(&path) {
            Some(Arrival::Reclaimed) => FileAction::Reclaimed,
            _ => action,
        };
        cx.report(&path, FileKind::Skill, action);
        Ok(())
    }

    fn undo(cx: &mut Cx<'_>, entry: Entry<'_>) -> Result<()> {
        undo(cx, entry.path, entry.record)
    }

    fn status(cx: &Cx<'_>, entry: Entry<'_>) -> Option<TakenOver> {
        let EntryRecord::Skill {
            prior: Some(prior), ..
        } = entry.record
        else {
            return None;
        };
        let stash =
            cx.l.root
                .display_path(&priors::kept_path(prior, entry.path).ok()?);
        Some(TakenOver {
            path: entry.path.clone(),
            stash,
            state: match locate(cx, entry.path, prior) {
                PriorAt::Kept => PriorState::Stashed,
                PriorAt::NotMoved => PriorState::InPlace,
            },
        })
    }
}

/// The fields of a [`EntryRecord::Skill`], owned.
#[derive(Clone, Debug)]
struct Fields {
    source: PathBuf,
    prior: Option<PriorRef>,
    manifest: Option<Manifest>,
    retired: Vec<Retired>,
}

impl Fields {
    fn of(entry: &EntryRecord) -> Option<Fields> {
        match entry {
            EntryRecord::Skill {
                source,
                prior,
                manifest,
                retired,
                ..
            } => Some(Fields {
                source: source.clone(),
                prior: prior.clone(),
                manifest: manifest.clone(),
                retired: retired.clone(),
            }),
            _ => None,
        }
    }

    /// Writes these fields into the ledger entry for `path` (keeping its holders) and saves,
    /// durably, when they differ from what the ledger holds.
    fn commit(&self, cx: &mut Cx<'_>, path: &RelPath) -> Result<()> {
        let Some(EntryRecord::Skill {
            source,
            prior,
            manifest,
            retired,
            ..
        }) = cx.l.ledger.entries.get_mut(path)
        else {
            return Ok(());
        };
        if *source == self.source
            && *prior == self.prior
            && *manifest == self.manifest
            && *retired == self.retired
        {
            return Ok(());
        }
        *source = self.source.clone();
        *prior = self.prior.clone();
        *manifest = self.manifest.clone();
        *retired = self.retired.clone();
        cx.save(Durability::Durable)
    }
}

/// Where a taken-over prior folder is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PriorAt {
    /// Whole in its keeping place, the priors folder.
    Kept,
    /// Not moved yet: the skill folder itself is the prior (or it is gone).
    NotMoved,
}

fn sibling(path: &RelPath, name: &str) -> Result<RelPath> {
    match path.parent() {
        Some(parent) => Ok(parent.join(name)?),
        None => Ok(RelPath::new(name)?),
    }
}

/// Where `prior` is now, from what exists.
fn locate(cx: &Cx<'_>, path: &RelPath, prior: &PriorRef) -> PriorAt {
    if priors::is_kept(&cx.l.root, prior, path) {
        PriorAt::Kept
    } else {
        PriorAt::NotMoved
    }
}

/// The build the marker in `dir` names, as the ledger knows it: `Some` when the folder carries
/// our marker (an unknown build of ours is described by `fallback`), `None` when it does not.
fn marked_manifest(
    cx: &Cx<'_>,
    dir: &RelPath,
    f: &Fields,
    fallback: &Manifest,
) -> Option<Manifest> {
    let marker = cx.ns.skill_marker();
    let snapshot = cx.l.root.read(&dir.join(&marker).ok()?).ok()??;
    let build = parse_marker(&snapshot.bytes, cx.ns)?.build;
    if let Some(current) = f.manifest.as_ref().filter(|m| m.build == build) {
        return Some(current.clone());
    }
    if let Some(old) = f.retired.iter().find(|r| r.manifest.build == build) {
        return Some(old.manifest.clone());
    }
    Some(fallback.clone())
}

/// The manifest that describes the folder `dir`: the build its marker names, when the ledger
/// knows that build, else `fallback`.
fn manifest_for(cx: &Cx<'_>, dir: &RelPath, f: &Fields, fallback: &Manifest) -> Manifest {
    marked_manifest(cx, dir, f, fallback).unwrap_or_else(|| fallback.clone())
}

/// Copies `dir/inner` into a fresh folder under `kept/` and records it.
fn set_aside(
    cx: &mut Cx<'_>,
    dir: &RelPath,
    inner: &Path,
    owner: &RelPath,
    kept_dir: &mut Option<RelPath>,
    reason: &str,
) -> Result<()> {
    let folder = match kept_dir {
        Some(folder) => folder.clone(),
        None => {
            let folder = cx.l.kept_name(owner)?;
            cx.l.state.create_dir(&folder)?;
            *kept_dir = Some(folder.clone());
            folder
        }
    };
    let to_inner = if inner.as_os_str().is_empty() {
        Path::new(owner.file_name())
    } else {
        inner
    };
    cx.l.root
        .copy_entry_to(dir, inner, &cx.l.state, &folder, to_inner)?;
    let shown = inner.to_string_lossy();
    let path = if shown.is_empty() {
        owner.clone()
    } else {
        owner.join(&shown).unwrap_or_else(|_| owner.clone())
    };
    let kept_at = cx.l.state.display_path(&folder).join(to_inner);
    cx.keep(KeptRecord {
        path,
        kept_at,
        reason: reason.to_string(),
    });
    Ok(())
}

const CHANGED_NOTE: &str =
    "a file of the projected skill was changed during the session; our copy was removed";
const ADDED_NOTE: &str =
    "a file was added to a managed skill folder; it was set aside, not deleted";
const FOREIGN_NOTE: &str = "not projected by us: it stays in the managed skill folder while sessions run and is set aside when the last one ends";

/// Removes the folder `dir`, which holds a build of ours described by `manifest`: files the user
/// changed are set aside; files the user added are moved into `carry_into` when given and free
/// there (reported), else set aside. `owner` is the skill folder reports name.
fn dispose(
    cx: &mut Cx<'_>,
    dir: &RelPath,
    manifest: &Manifest,
    carry_into: Option<&RelPath>,
    owner: &RelPath,
) -> Result<()> {
    let Some(scan) = cx.l.root.scan_tree(dir)? else {
        return Ok(());
    };
    let found = diff(&scan, manifest);
    if let Some(special) = found.specials.first() {
        return Err(Error::Unsafe {
            path: cx.l.root.display_path(dir).join(special),
            reason: "a fifo, socket or device stands in a managed skill folder; the folder is left as it is".into(),
        });
    }
    let mut kept_dir = None;
    let changed = found
        .changed
        .iter()
        .map(|inner| (inner, CHANGED_NOTE, false));
    let foreign = found.foreign.iter().map(|inner| (inner, ADDED_NOTE, true));
    for (inner, reason, may_carry) in changed.chain(foreign) {
        if let (Some(target), true) = (carry_into, may_carry) {
            match cx.l.root.rename_inner(dir, inner, target, inner) {
                Ok(()) => {
                    let shown = cx.l.root.display_path(target).join(inner);
                    cx.warn(shown.display(), FOREIGN_NOTE);
                    continue;
                }
                Err(e) if faults::crashed() => return Err(e),
                Err(_) => {}
            }
        }
        set_aside(cx, dir, inner, owner, &mut kept_dir, reason)?;
    }
    cx.l.root.remove_tree(dir)?;
    Ok(())
}

/// Disposes of retired builds and removes our temporary folders beside the skill folder.
fn settle(cx: &mut Cx<'_>, path: &RelPath, f: &mut Fields) -> Result<()> {
    for retired in f.retired.clone() {
        let dir = sibling(path, &retired.name)?;
        if cx.l.root.kind(&dir) == EntryKind::Dir {
            let manifest = manifest_for(cx, &dir, f, &retired.manifest);
            dispose(cx, &dir, &manifest, None, path)?;
        }
        f.retired.retain(|r| r.name != retired.name);
    }
    cx.l.root.remove_temp_entries(path, &[])?;
    if let Some(prior) = &f.prior {
        cx.l.root
            .remove_temp_entries(&priors::kept_path(prior, path)?, &[])?;
    }
    Ok(())
}

/// Reports files found in a managed folder that are not ours (they stay while sessions run).
fn report_foreign(cx: &mut Cx<'_>, path: &RelPath, foreign: &[PathBuf]) {
    for inner in foreign {
        let shown = cx.l.root.display_path(path).join(inner);
        cx.warn(shown.display(), FOREIGN_NOTE);
    }
}

/// Copies `source` into the new folder `temp`, writes the marker, and returns the full manifest.
fn build(
    cx: &Cx<'_>,
    source: &Path,
    temp: &RelPath,
    marker: &str,
    created_dirs: &[RelPath],
) -> Result<Manifest> {
    let entries = cx.l.root.copy_in_tree(source, temp, &[marker])?;
    let mut manifest = manifest_from(fsio::random_hex(8)?, &entries);
    let bytes = marker_content(cx.ns, &manifest, created_dirs);
    cx.l.root
        .write_atomic(&temp.join(marker)?, &bytes, Some(0o644))?;
    manifest.files.insert(
        marker.to_string(),
        ManifestFile {
            sha256: sha256_hex(&bytes),
            mode: 0o644,
        },
    );
    Ok(manifest)
}

/// What stands at the skill folder before a projection.
enum Standing {
    /// Nothing.
    Nothing,
    /// The project's prior, still to be taken over.
    Prior,
    /// A folder of ours (its build's manifest).
    Ours(Manifest),
    /// A folder without our marker, put there by the user during the session.
    Users,
}

/// What stands at `path`, for an entry whose fields are `f` (`known`: as the ledger knew them
/// before settling).
fn standing(cx: &mut Cx<'_>, path: &RelPath, f: &mut Fields, known: &Fields) -> Result<Standing> {
    if let Some(p) = &f.prior {
        priors::drop_duplicate(&cx.l.root, p, path)?;
    }
    if let Some(prior) = f.prior.clone()
        && locate(cx, path, &prior) == PriorAt::NotMoved
    {
        match cx.l.root.kind(path) {
            EntryKind::Dir => return Ok(Standing::Prior),
            EntryKind::Missing => {
                // It was removed before we moved it: nothing to keep.
                priors::forget(&cx.l.root, &prior)?;
                f.prior = None;
                f.commit(cx, path)?;
            }
            kind => return Err(blocked(&cx.l.root, path, kind)),
        }
    }
    match cx.l.root.kind(path) {
        EntryKind::Missing => Ok(Standing::Nothing),
        EntryKind::Dir => {
            let fallback = f.manifest.clone().unwrap_or_default();
            Ok(match marked_manifest(cx, path, known, &fallback) {
                Some(manifest) => Standing::Ours(manifest),
                None => Standing::Users,
            })
        }
        kind => Err(blocked(&cx.l.root, path, kind)),
    }
}

/// Projects (or refreshes) the skill folder `path` from `source`, for an entry already recorded
/// in the ledger. Drives whatever state a crash left to: the prior (if any) in the priors folder,
/// the current build at `path`, nothing else beside it. Returns the action for the receipt.
fn project(cx: &mut Cx<'_>, path: &RelPath, source: &Path) -> Result<FileAction> {
    let Some(mut f) = cx.l.ledger.entries.get(path).and_then(Fields::of) else {
        return Err(two_kinds(path));
    };
    f.source = source.to_path_buf();
    // Builds the ledger knew before settling, to recognise what the folder itself holds.
    let known = f.clone();
    settle(cx, path, &mut f)?;
    f.commit(cx, path)?;
    let current = match standing(cx, path, &mut f, &known)? {
        Standing::Users => {
            cx.kept_in_place(path, USERS_FOLDER);
            cx.warn(
                cx.shown(path),
                "a folder without our marker stands where this session's skill goes: it is the user's, and was not replaced",
            );
            return Ok(FileAction::Kept);
        }
        Standing::Ours(ours) => {
            let scan = cx.l.root.scan_tree(path)?.unwrap_or_default();
            let found = diff(&scan, &ours);
            let intact =
                found.changed.is_empty() && found.missing == 0 && found.specials.is_empty();
            let marker = cx.ns.skill_marker();
            if f.manifest.is_some() && intact && source_matches(source, &ours, &marker) {
                report_foreign(cx, path, &found.foreign);
                f.commit(cx, path)?;
                return Ok(FileAction::Unchanged);
            }
            Some(ours)
        }
        Standing::Prior | Standing::Nothing => None,
    };
    let take_over =
        f.prior.is_some() && current.is_none() && cx.l.root.kind(path) == EntryKind::Dir;
    let full = build_beside(cx, path, source)?;
    let action = place(cx, path, &mut f, full, current, take_over)?;
    f.commit(cx, path)?;
    Ok(action)
}

const USERS_FOLDER: &str = "a folder without our marker stands where our skill folder was: it is not ours, and stays where the user put it";

/// Builds the new folder beside `path` (a temporary name); if the source is refused, nothing
/// else changed. Returns the temporary name and the build's manifest.
fn build_beside(cx: &mut Cx<'_>, path: &RelPath, source: &Path) -> Result<(RelPath, Manifest)> {
    let name = path.file_name().to_string();
    let temp = sibling(
        path,
        &format!(".{name}{TEMP_INFIX}{}", fsio::random_hex(8)?),
    )?;
    let ancestors = path.ancestors();
    let created: Vec<RelPath> =
        cx.l.ledger
            .created_dirs
            .iter()
            .filter(|d| ancestors.contains(d))
            .cloned()
            .collect();
    let marker = cx.ns.skill_marker();
    match build(cx, source, &temp, &marker, &created) {
        Ok(full) => Ok((temp, full)),
        Err(e) => {
            let _ = cx.l.root.remove_tree(&temp);
            Err(e)
        }
    }
}

/// Puts the new build in place: takes the prior over, or swaps out our previous build.
fn place(
    cx: &mut Cx<'_>,
    path: &RelPath,
    f: &mut Fields,
    (temp, full): (RelPath, Manifest),
    current: Option<Manifest>,
    take_over: bool,
) -> Result<FileAction> {
    let mut action = FileAction::Created;
    if take_over && let Some(p) = &f.prior {
        priors::take(&cx.l.root, p, path, PriorKind::Folder, None)?;
        action = FileAction::TakenOver;
    }
    let Some(current) = current else {
        f.manifest = Some(full);
        f.commit(cx, path)?;
        cx.l.root.rename_noreplace(&temp, path)?;
        return Ok(action);
    };
    let name = path.file_name().to_string();
    let old = sibling(
        path,
        &format!(".{name}{TEMP_INFIX}{}", fsio::random_hex(8)?),
    )?;
    for dir in [&temp, &old] {
        f.retired.push(Retired {
            name: dir.file_name().to_string(),
            manifest: current.clone(),
        });
    }
    f.manifest = Some(full);
    f.commit(cx, path)?;
    if !cx.l.root.exchange(&temp, path)? {
        cx.l.root.rename_noreplace(path, &old)?;
        cx.l.root.rename_noreplace(&temp, path)?;
    }
    for dir in [&temp, &old] {
        if cx.l.root.kind(dir) == EntryKind::Dir {
            let manifest = manifest_for(cx, dir, f, &current);
            dispose(cx, dir, &manifest, Some(path), path)?;
        }
    }
    f.retired.clear();
    Ok(FileAction::Refreshed)
}

/// Takes the skill folder `path` out after its last holder is gone: our files removed, the
/// user's set aside (or, for a folder without our marker, left in place), the prior (if any) put
/// back. Recognises every state an interrupted operation leaves.
fn undo(cx: &mut Cx<'_>, path: &RelPath, entry: &EntryRecord) -> Result<()> {
    let Some(mut f) = Fields::of(entry) else {
        return Ok(());
    };
    let known = f.clone();
    settle(cx, path, &mut f)?;
    if let Some(p) = &f.prior {
        priors::drop_duplicate(&cx.l.root, p, path)?;
    }
    if let Some(p) = &f.prior
        && locate(cx, path, p) == PriorAt::NotMoved
    {
        // The folder standing there is still the prior: never touched.
        priors::forget(&cx.l.root, p)?;
        return Ok(());
    }
    match cx.l.root.kind(path) {
        EntryKind::Missing => {}
        EntryKind::Dir => {
            if clear_folder(cx, path, &f, &known, f.prior.is_some())? {
                return Ok(());
            }
        }
        EntryKind::Symlink | EntryKind::File | EntryKind::Other => {
            if f.prior.is_none() {
                return Ok(());
            }
            return Err(Error::Unsafe {
                path: cx.l.root.display_path(path),
                reason: "something else now stands where the taken-over folder goes back; the prior stays where it is kept".into(),
            });
        }
    }
    if let Some(prior) = &f.prior {
        priors::put_back(&cx.l.root, prior, path)?;
        priors::forget(&cx.l.root, prior)?;
        cx.report(path, FileKind::Skill, FileAction::Restored);
    }
    Ok(())
}

/// Clears the folder standing at `path` before the prior (if `has_prior`) comes back. Returns
/// true when nothing more is to be done (the folder stays, or the prior is already back).
fn clear_folder(
    cx: &mut Cx<'_>,
    path: &RelPath,
    f: &Fields,
    known: &Fields,
    has_prior: bool,
) -> Result<bool> {
    if f.manifest.is_none() && !has_prior {
        // Never built here and nothing taken over: whatever stands there is not ours.
        return Ok(true);
    }
    let fallback = f.manifest.clone().unwrap_or_default();
    match marked_manifest(cx, path, known, &fallback) {
        Some(manifest) => {
            dispose(cx, path, &manifest, None, path)?;
            if !has_prior {
                cx.report(path, FileKind::Skill, FileAction::Removed);
            }
            Ok(false)
        }
        None if has_prior => {
            let mut kept_dir = None;
            set_aside(
                cx,
                path,
                Path::new(""),
                path,
                &mut kept_dir,
                "a folder without our marker stood where the project's own folder goes back; it was set aside",
            )?;
            cx.l.root.remove_tree(path)?;
            Ok(false)
        }
        None => {
            cx.kept_in_place(path, USERS_FOLDER);
            cx.report(path, FileKind::Skill, FileAction::Kept);
            Ok(true)
        }
    }
}
