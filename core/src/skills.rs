//! Skills: projecting a session's skill folders into a CLI's skills folder, counted across sessions
//! like every other projection, and taking them out again without losing a byte of the project.
//!
//! A projected skill folder (`.agents/skills/review/`) is a whole directory we own while a lease
//! holds it. The rules (seed 000, rules 7 and 8; DESIGN.md promises 2, 6, 10, 11, 12):
//!
//! - **Marker.** Every folder we build carries the marker file [`Namespace::skill_marker`]
//!   (`.agentworks-managed`). Its content is a small JSON document naming the namespace, a random
//!   *build id*, and the SHA-256 and mode of every file we wrote (see [`marker_content`]). It is a
//!   hidden file inside the skill folder: skill loaders read the folder's `SKILL.md` and what it
//!   references, and Codex's loader skips hidden entries (research/codex.md). A file of that name
//!   at the top of a *source* skill is not copied (ours replaces it), so a projected folder can be
//!   used as a source.
//! - **Take-over.** A same-named folder without our marker (an earlier version's, or the project's
//!   own) is taken over: moved whole into `<state>/workspaces/<key>/stash/<random>.<name>/` (a
//!   rename when the state directory is on the same file system, else an exact copy and then a
//!   removal, via a hidden name `.{name}.projectfile-prior.{random}` beside it), so our build can
//!   stand in its place and skill updates reach existing projects. The last session puts it back
//!   byte for byte (contents, modes, symlinks as links, times); `status` lists it meanwhile.
//! - **Ownership is proven, never assumed.** The ledger records the manifest of every build (what
//!   we wrote). When a folder is removed or replaced, entries matching the manifest are ours;
//!   files the user changed or added are *set aside* under `kept/` and reported, never deleted
//!   blindly. A refresh carries foreign files into the new build (reported) so they stay where
//!   the user put them while sessions run.
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
//! - **Names.** A skill name is one plain folder name ([`validate_name`]); `../../etc` is refused
//!   before anything is written.
//!
//! Crash safety: the ledger names everything before the workspace is touched (the entry with its
//! prior's stash and hidden names; a refresh's retired names and both manifests), and every
//! step leaves a state that [`undo`] and the next [`project`] recognise from what exists: whether
//! the prior is in the stash, at its hidden name, or not yet moved; which build a folder holds
//! (from its marker's build id).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsio::tree::{PRIOR_INFIX, hex};
use crate::fsio::{self, Root, TEMP_INFIX, TreeEntry, TreeKind, faults};
use crate::ledger::{EntryRecord, KeptRecord, Ledger, Manifest, ManifestFile, Retired, SkillPrior};
use crate::plan::RelPath;
use crate::projector::now_secs;
use crate::provider::{EntryKind, Namespace};

/// The longest skill name accepted, in bytes (a file name's limit on Linux).
pub const MAX_NAME_BYTES: usize = 255;

/// Refuses a skill name that is not one plain, visible folder name: empty, longer than 255 bytes,
/// holding `/` or `\`, `..`, a control character, starting with `.` (hidden names are skipped by
/// the CLIs' skill loaders and are where our temporary folders live), or holding `.projectfile-`
/// (the infix of our temporary and prior names, so one skill's leftovers never match another's).
pub fn validate_name(name: &str) -> Result<()> {
    let refuse = |reason: &str| {
        Err(Error::invalid(
            format!("skill name {name:?}"),
            format!("{reason}; nothing was written"),
        ))
    };
    if name.is_empty() {
        return refuse("a skill name must not be empty");
    }
    if name.len() > MAX_NAME_BYTES {
        return refuse("a skill name must be at most 255 bytes");
    }
    if name.contains('/') || name.contains('\\') {
        return refuse(
            "a skill name is one folder name: it must not contain '/' or '\\' (no absolute or nested paths)",
        );
    }
    if name.contains("..") {
        return refuse("a skill name must not contain '..'");
    }
    if name.chars().any(char::is_control) {
        return refuse("a skill name must not contain control characters");
    }
    if name.starts_with('.') {
        return refuse(
            "a skill name must not start with '.' (hidden folders are not read as skills)",
        );
    }
    if name.contains(".projectfile-") {
        return refuse(
            "a skill name must not contain '.projectfile-' (reserved for our temporary names)",
        );
    }
    Ok(())
}

/// The marker file's content: what a folder holds from us, readable without the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct MarkerDoc {
    #[serde(rename = "_projectfile")]
    note: String,
    namespace: String,
    build: String,
    #[serde(default)]
    files: BTreeMap<String, ManifestFile>,
    #[serde(default)]
    dirs: BTreeMap<String, u32>,
    /// Directories on the way to the skill folder that we created (workspace-relative), so a
    /// leftover reclaimed after a lost state directory takes them with it when they are empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    created_dirs: Vec<String>,
}

/// The marker file's bytes for a build whose files and directories (the marker itself excluded)
/// are `content`.
pub fn marker_content(
    namespace: &Namespace,
    content: &Manifest,
    created_dirs: &[RelPath],
) -> Vec<u8> {
    let doc = MarkerDoc {
        note: format!(
            "This skill folder was projected by projectfile (namespace {}) for running sessions and is removed when the last session ends; files added here are set aside, not kept in place.",
            namespace.as_str()
        ),
        namespace: namespace.as_str().to_string(),
        build: content.build.clone(),
        files: content.files.clone(),
        dirs: content.dirs.clone(),
        created_dirs: created_dirs.iter().map(ToString::to_string).collect(),
    };
    let mut bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// The manifest a marker file declares (its own entry excluded), when it is ours in `namespace`.
fn parse_marker(bytes: &[u8], namespace: &Namespace) -> Option<Manifest> {
    parse_marker_doc(bytes, namespace).map(|(manifest, _)| manifest)
}

/// The manifest and created directories a marker file declares.
fn parse_marker_doc(bytes: &[u8], namespace: &Namespace) -> Option<(Manifest, Vec<String>)> {
    let doc: MarkerDoc = serde_json::from_slice(bytes).ok()?;
    (doc.namespace == namespace.as_str() && !doc.build.is_empty()).then_some((
        Manifest {
            build: doc.build,
            files: doc.files,
            dirs: doc.dirs,
        },
        doc.created_dirs,
    ))
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn key(path: &Path) -> Option<String> {
    path.to_str().map(str::to_string)
}

/// The manifest of what a copy wrote.
fn manifest_from(build: String, entries: &[TreeEntry]) -> Manifest {
    let mut manifest = Manifest {
        build,
        ..Manifest::default()
    };
    for entry in entries {
        let Some(k) = key(&entry.path) else { continue };
        match &entry.kind {
            TreeKind::File { sha256, .. } => {
                manifest.files.insert(
                    k,
                    ManifestFile {
                        sha256: hex(sha256),
                        mode: entry.mode,
                    },
                );
            }
            TreeKind::Dir => {
                manifest.dirs.insert(k, entry.mode);
            }
            TreeKind::Symlink { .. } | TreeKind::Other => {}
        }
    }
    manifest
}

/// How a folder differs from a manifest.
#[derive(Debug, Default)]
struct Diff {
    /// Files of ours whose content changed (or that became something else).
    changed: Vec<PathBuf>,
    /// Entries that are not ours, top-most only (a foreign folder counts once).
    foreign: Vec<PathBuf>,
    /// Fifos, sockets and devices (never ours; we cannot set them aside).
    specials: Vec<PathBuf>,
    /// How many of our files are gone.
    missing: usize,
}

impl Diff {
    fn clean(&self) -> bool {
        self.changed.is_empty()
            && self.foreign.is_empty()
            && self.specials.is_empty()
            && self.missing == 0
    }
}

fn diff(scan: &[TreeEntry], manifest: &Manifest) -> Diff {
    let mut out = Diff::default();
    let mut skip: Option<PathBuf> = None;
    let mut seen = 0usize;
    for entry in scan {
        if let Some(prefix) = &skip {
            if entry.path.starts_with(prefix) {
                continue;
            }
            skip = None;
        }
        let k = key(&entry.path);
        let file = k.as_ref().and_then(|k| manifest.files.get(k));
        let dir = k.as_ref().is_some_and(|k| manifest.dirs.contains_key(k));
        match (&entry.kind, file, dir) {
            (TreeKind::File { sha256, .. }, Some(ours), _) => {
                seen += 1;
                if hex(sha256) != ours.sha256 {
                    out.changed.push(entry.path.clone());
                }
            }
            (TreeKind::Dir, None, true) => {}
            (TreeKind::Other, ..) => out.specials.push(entry.path.clone()),
            (kind, Some(_), _) => {
                // One of our files became a folder or a link: the user's now.
                out.changed.push(entry.path.clone());
                if matches!(kind, TreeKind::Dir) {
                    skip = Some(entry.path.clone());
                }
            }
            (kind, None, _) => {
                out.foreign.push(entry.path.clone());
                if matches!(kind, TreeKind::Dir) {
                    skip = Some(entry.path.clone());
                }
            }
        }
    }
    out.missing = manifest.files.len().saturating_sub(seen);
    out
}

/// Whether two manifests hold the same files and folders, ignoring the build id and the marker.
fn same_content(a: &Manifest, b: &Manifest, marker: &str) -> bool {
    let files = |m: &Manifest| {
        m.files
            .iter()
            .filter(|(k, _)| k.as_str() != marker)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    files(a) == files(b) && a.dirs == b.dirs
}

/// What stands where a skill folder is to go, for a path no ledger entry names yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Initial {
    /// Nothing.
    Absent,
    /// A folder with our marker that matches its own manifest exactly: a leftover of ours whose
    /// record was lost (a deleted state directory). It may be replaced and later removed, and so
    /// may the directories on its way that the marker says we created, once empty.
    Leftover(Manifest, Vec<RelPath>),
    /// A folder we cannot prove is ours: taken over and put back by the last session.
    TakeOver,
}

/// Looks at `path` before a first projection. A symlink, file or special file standing there is
/// refused: we never write through a link or replace what is not a folder.
pub fn classify(root: &Root, path: &RelPath, namespace: &Namespace) -> Result<Initial> {
    match root.kind(path) {
        EntryKind::Missing => Ok(Initial::Absent),
        EntryKind::Dir => {
            let marker = namespace.skill_marker();
            let declared = root
                .read(&path.join(&marker)?)
                .ok()
                .flatten()
                .and_then(|snapshot| {
                    parse_marker_doc(&snapshot.bytes, namespace).map(|m| (m, snapshot.bytes))
                });
            let Some(((mut manifest, created), marker_bytes)) = declared else {
                return Ok(Initial::TakeOver);
            };
            let Some(scan) = root.scan_tree(path)? else {
                return Ok(Initial::Absent);
            };
            let mode = scan
                .iter()
                .find(|e| e.path == Path::new(&marker))
                .map(|e| e.mode)
                .unwrap_or(0o644);
            manifest.files.insert(
                marker,
                ManifestFile {
                    sha256: sha256_hex(&marker_bytes),
                    mode,
                },
            );
            if diff(&scan, &manifest).clean() {
                // Only directories on the way to this folder, and only those that exist.
                let ancestors = path.ancestors();
                let created = created
                    .into_iter()
                    .filter_map(|d| RelPath::new(d).ok())
                    .filter(|d| ancestors.contains(d) && root.kind(d) == EntryKind::Dir)
                    .collect();
                Ok(Initial::Leftover(manifest, created))
            } else {
                Ok(Initial::TakeOver)
            }
        }
        kind => Err(blocked(root, path, kind)),
    }
}

/// A new ledger entry for `path`, held by `token`, from what [`classify`] found.
pub fn new_entry(
    path: &RelPath,
    token: &str,
    source: &Path,
    initial: &Initial,
) -> Result<EntryRecord> {
    let name = path.file_name();
    let (prior, manifest) = match initial {
        Initial::Absent => (None, None),
        Initial::Leftover(manifest, _) => (None, Some(manifest.clone())),
        Initial::TakeOver => {
            let random = fsio::random_hex(8)?;
            (
                Some(SkillPrior {
                    stash: format!("{random}.{name}"),
                    hidden: format!(".{name}{PRIOR_INFIX}{random}"),
                }),
                None,
            )
        }
    };
    Ok(EntryRecord::Skill {
        holders: [token.to_string()].into(),
        source: source.to_path_buf(),
        prior,
        manifest,
        retired: Vec::new(),
    })
}

/// What skill operations did, for the projector's receipts.
#[derive(Debug, Default)]
pub struct Report {
    /// `(path, action)` of each skill folder touched.
    pub files: Vec<(String, &'static str)>,
    /// User bytes set aside.
    pub kept: Vec<KeptRecord>,
    /// `(path, message)`: things the user should know that did not stop the operation.
    pub warnings: Vec<(String, String)>,
}

/// The workspace, the state directory and the namespace one operation works with.
pub struct Cx<'a> {
    /// The workspace (or runtime) root.
    pub root: &'a Root,
    /// `<state>/workspaces/<key>`.
    pub state: &'a Root,
    /// Names the marker file.
    pub namespace: &'a Namespace,
    /// What happened.
    pub report: &'a mut Report,
}

/// The fields of a [`EntryRecord::Skill`], owned.
#[derive(Clone, Debug)]
struct Fields {
    source: PathBuf,
    prior: Option<SkillPrior>,
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

    /// Writes these fields into the ledger entry for `path` (keeping its holders) and saves, when
    /// they differ from what the ledger holds.
    fn commit(
        &self,
        ledger: &mut Ledger,
        path: &RelPath,
        save: &dyn Fn(&Ledger) -> Result<()>,
    ) -> Result<()> {
        let Some(EntryRecord::Skill {
            source,
            prior,
            manifest,
            retired,
            ..
        }) = ledger.entries.get_mut(path)
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
        save(ledger)
    }
}

/// Where a taken-over prior folder is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorAt {
    /// Whole in the stash.
    Stash,
    /// At its hidden name beside the skill folder (a move into the stash was interrupted).
    Hidden,
    /// Not moved yet: the skill folder itself is the prior (or it is gone).
    NotMoved,
}

fn sibling(path: &RelPath, name: &str) -> Result<RelPath> {
    match path.parent() {
        Some(parent) => parent.join(name),
        None => RelPath::new(name),
    }
}

fn stash_rel(prior: &SkillPrior) -> Result<RelPath> {
    RelPath::new("stash")?.join(&prior.stash)
}

/// Where `prior` is now, from what exists.
pub fn locate(root: &Root, state: &Root, path: &RelPath, prior: &SkillPrior) -> Result<PriorAt> {
    if state.kind(&stash_rel(prior)?) == EntryKind::Dir {
        Ok(PriorAt::Stash)
    } else if root.kind(&sibling(path, &prior.hidden)?) == EntryKind::Dir {
        Ok(PriorAt::Hidden)
    } else {
        Ok(PriorAt::NotMoved)
    }
}

/// Where a skill entry's prior is kept (absolute) and where it is now, for `status`.
pub fn prior_status(
    root: &Root,
    state: &Root,
    path: &RelPath,
    entry: &EntryRecord,
) -> Option<(PathBuf, PriorAt)> {
    let EntryRecord::Skill {
        prior: Some(prior), ..
    } = entry
    else {
        return None;
    };
    let stash = stash_rel(prior).ok()?;
    let at = locate(root, state, path, prior).ok()?;
    Some((state.display_path(&stash), at))
}

/// The manifest that describes the folder `dir`: the build its marker names, when the ledger knows
/// that build, else `fallback`.
fn manifest_for(cx: &Cx<'_>, dir: &RelPath, f: &Fields, fallback: &Manifest) -> Manifest {
    let marker = cx.namespace.skill_marker();
    let build = dir
        .join(&marker)
        .ok()
        .and_then(|m| cx.root.read(&m).ok().flatten())
        .and_then(|s| parse_marker(&s.bytes, cx.namespace))
        .map(|m| m.build);
    if let Some(build) = build {
        if let Some(current) = f.manifest.as_ref().filter(|m| m.build == build) {
            return current.clone();
        }
        if let Some(old) = f.retired.iter().find(|r| r.manifest.build == build) {
            return old.manifest.clone();
        }
    }
    fallback.clone()
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
            let kept = RelPath::new("kept")?;
            cx.state.create_dir(&kept)?;
            let folder = kept.join(&format!(
                "{}-{}.{}",
                now_secs(),
                fsio::random_hex(4)?,
                owner.as_str().replace('/', "__")
            ))?;
            cx.state.create_dir(&folder)?;
            *kept_dir = Some(folder.clone());
            folder
        }
    };
    cx.root
        .copy_entry_to(dir, inner, cx.state, &folder, inner)?;
    let shown = inner.to_string_lossy();
    let path = owner.join(&shown).unwrap_or_else(|_| owner.clone());
    cx.report.kept.push(KeptRecord {
        path,
        kept_at: cx.state.display_path(&folder).join(inner),
        reason: reason.to_string(),
    });
    Ok(())
}

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
    let Some(scan) = cx.root.scan_tree(dir)? else {
        return Ok(());
    };
    let found = diff(&scan, manifest);
    if let Some(special) = found.specials.first() {
        return Err(Error::Unsafe {
            path: cx.root.display_path(dir).join(special),
            reason: "a fifo, socket or device stands in a managed skill folder; the folder is left as it is".into(),
        });
    }
    let mut kept_dir = None;
    for inner in &found.changed {
        set_aside(
            cx,
            dir,
            inner,
            owner,
            &mut kept_dir,
            "a file of the projected skill was changed during the session; our copy was removed",
        )?;
    }
    for inner in &found.foreign {
        if let Some(target) = carry_into {
            match cx.root.rename_inner(dir, inner, target, inner) {
                Ok(()) => {
                    cx.report.warnings.push((
                        cx.root.display_path(target).join(inner).display().to_string(),
                        "not projected by us: it stays in the managed skill folder while sessions run and is set aside when the last one ends".into(),
                    ));
                    continue;
                }
                Err(e) if faults::crashed() => return Err(e),
                Err(_) => {}
            }
        }
        set_aside(
            cx,
            dir,
            inner,
            owner,
            &mut kept_dir,
            "a file was added to a managed skill folder; it was set aside, not deleted",
        )?;
    }
    cx.root.remove_tree(dir)?;
    Ok(())
}

/// Disposes of retired builds and removes our temporary folders beside the skill folder.
fn settle(cx: &mut Cx<'_>, path: &RelPath, f: &mut Fields) -> Result<()> {
    for retired in f.retired.clone() {
        let dir = sibling(path, &retired.name)?;
        if cx.root.kind(&dir) == EntryKind::Dir {
            let manifest = manifest_for(cx, &dir, f, &retired.manifest);
            dispose(cx, &dir, &manifest, None, path)?;
        }
        f.retired.retain(|r| r.name != retired.name);
    }
    cx.root.remove_temp_entries(path, &[])?;
    if let Some(prior) = &f.prior {
        let stash = stash_rel(prior)?;
        cx.state.remove_temp_entries(&stash, &[])?;
        // A move into the stash across file systems stopped after the copy was renamed into
        // place: the stash is whole, the hidden original is a duplicate.
        let hidden = sibling(path, &prior.hidden)?;
        if cx.state.kind(&stash) == EntryKind::Dir && cx.root.kind(&hidden) == EntryKind::Dir {
            cx.root.remove_tree(&hidden)?;
        }
    }
    Ok(())
}

/// Projects (or refreshes) the skill folder `path` from `source`, for an entry already recorded in
/// `ledger`. Drives whatever state a crash left to: the prior (if any) in the stash, the current
/// build at `path`, nothing else beside it. Returns the action for the receipt.
pub fn project(
    cx: &mut Cx<'_>,
    ledger: &mut Ledger,
    path: &RelPath,
    source: &Path,
    save: &dyn Fn(&Ledger) -> Result<()>,
) -> Result<&'static str> {
    let Some(mut f) = ledger.entries.get(path).and_then(Fields::of) else {
        return Err(Error::invalid(
            path.to_string(),
            "the plan names this path with two different kinds",
        ));
    };
    f.source = source.to_path_buf();
    let name = path.file_name().to_string();
    let marker = cx.namespace.skill_marker();
    // Builds the ledger knew before settling, to recognise what the folder itself holds.
    let known = f.clone();
    settle(cx, path, &mut f)?;
    f.commit(ledger, path, save)?;

    // 1. What stands there: a prior still to take over, a folder of ours, or nothing.
    let mut take_over = None;
    if let Some(prior) = f.prior.clone()
        && locate(cx.root, cx.state, path, &prior)? == PriorAt::NotMoved
    {
        match cx.root.kind(path) {
            EntryKind::Dir => take_over = Some(sibling(path, &prior.hidden)?),
            EntryKind::Missing => {
                // It was removed before we moved it: nothing to keep.
                f.prior = None;
                f.commit(ledger, path, save)?;
            }
            kind => return Err(blocked(cx.root, path, kind)),
        }
    }

    // 2. Unchanged: our folder is intact and the source holds the same files. Nothing is copied.
    let mut current = None;
    if take_over.is_none() {
        match cx.root.kind(path) {
            EntryKind::Dir => {
                let ours = manifest_for(cx, path, &known, &f.manifest.clone().unwrap_or_default());
                let scan = cx.root.scan_tree(path)?.unwrap_or_default();
                let found = diff(&scan, &ours);
                let intact =
                    found.changed.is_empty() && found.missing == 0 && found.specials.is_empty();
                if f.manifest.is_some() && intact && source_matches(source, &ours, &marker) {
                    report_foreign(cx, path, &found.foreign);
                    finish_stash(cx, path, &f)?;
                    f.commit(ledger, path, save)?;
                    return Ok("unchanged");
                }
                current = Some(ours);
            }
            EntryKind::Missing => {}
            kind => return Err(blocked(cx.root, path, kind)),
        }
    }

    // 3. Build the new folder beside the target; if the source is refused, nothing else changed.
    let temp = sibling(
        path,
        &format!(".{name}{TEMP_INFIX}{}", fsio::random_hex(8)?),
    )?;
    let ancestors = path.ancestors();
    let created: Vec<RelPath> = ledger
        .created_dirs
        .iter()
        .filter(|d| ancestors.contains(d))
        .cloned()
        .collect();
    let full = match build(cx, source, &temp, &marker, &created) {
        Ok(full) => full,
        Err(e) => {
            let _ = cx.root.remove_tree(&temp);
            return Err(e);
        }
    };

    // 4. Put it in place: take the prior over, or swap out our previous build.
    let mut action = "created";
    if let Some(hidden) = &take_over {
        cx.root.rename_noreplace(path, hidden)?;
        action = "taken_over";
    }
    match current {
        None => {
            f.manifest = Some(full);
            f.commit(ledger, path, save)?;
            cx.root.rename_noreplace(&temp, path)?;
        }
        Some(current) => {
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
            f.commit(ledger, path, save)?;
            if !cx.root.exchange(&temp, path)? {
                cx.root.rename_noreplace(path, &old)?;
                cx.root.rename_noreplace(&temp, path)?;
            }
            for dir in [&temp, &old] {
                if cx.root.kind(dir) == EntryKind::Dir {
                    let manifest = manifest_for(cx, dir, &f, &current);
                    dispose(cx, dir, &manifest, Some(path), path)?;
                }
            }
            f.retired.clear();
            action = "refreshed";
        }
    }

    // 5. Finish moving the prior into the stash.
    finish_stash(cx, path, &f)?;
    f.commit(ledger, path, save)?;
    Ok(action)
}

/// Moves a prior left at its hidden name into the stash.
fn finish_stash(cx: &Cx<'_>, path: &RelPath, f: &Fields) -> Result<()> {
    if let Some(prior) = &f.prior
        && locate(cx.root, cx.state, path, prior)? == PriorAt::Hidden
    {
        cx.state.create_dir(&RelPath::new("stash")?)?;
        fsio::move_tree(
            cx.root,
            &sibling(path, &prior.hidden)?,
            cx.state,
            &stash_rel(prior)?,
        )?;
    }
    Ok(())
}

/// Reports files found in a managed folder that are not ours (they stay while sessions run).
fn report_foreign(cx: &mut Cx<'_>, path: &RelPath, foreign: &[PathBuf]) {
    for inner in foreign {
        cx.report.warnings.push((
            cx.root.display_path(path).join(inner).display().to_string(),
            "not projected by us: it stays in the managed skill folder while sessions run and is set aside when the last one ends".into(),
        ));
    }
}

/// Whether the source folder holds exactly the files and folders (content and mode bits, as a copy
/// would write them) that `ours` records. A source a copy would refuse never matches, so the copy
/// is what reports why.
fn source_matches(source: &Path, ours: &Manifest, marker: &str) -> bool {
    let Ok(scan) = fsio::scan_path(source) else {
        return false;
    };
    let mut entries = Vec::with_capacity(scan.len());
    for mut entry in scan {
        if entry.path.starts_with(marker) {
            continue;
        }
        if entry.path.to_str().is_none()
            || matches!(entry.kind, TreeKind::Symlink { .. } | TreeKind::Other)
        {
            return false;
        }
        entry.mode &= 0o777;
        entries.push(entry);
    }
    same_content(ours, &manifest_from(String::new(), &entries), marker)
}

/// The error for something other than a folder standing where the skill folder goes.
fn blocked(root: &Root, path: &RelPath, kind: EntryKind) -> Error {
    match kind {
        EntryKind::Symlink => Error::Symlink {
            path: root.display_path(path),
            detail:
                "a symlink stands where the skill folder goes; it is neither followed nor replaced"
                    .into(),
        },
        _ => Error::Unsafe {
            path: root.display_path(path),
            reason: "a file stands where the skill folder goes; it is not replaced".into(),
        },
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
    let entries = cx.root.copy_in_tree(source, temp, &[marker])?;
    let mut manifest = manifest_from(fsio::random_hex(8)?, &entries);
    let bytes = marker_content(cx.namespace, &manifest, created_dirs);
    cx.root
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

fn same_tree(a: &[TreeEntry], b: &[TreeEntry]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.path == y.path && x.kind == y.kind && x.mode == y.mode)
}

/// Takes the skill folder `path` out after its last holder is gone: our files removed, the user's
/// set aside, the prior (if any) put back. Recognises every state an interrupted operation leaves.
pub fn undo(cx: &mut Cx<'_>, path: &RelPath, entry: &EntryRecord) -> Result<()> {
    let Some(mut f) = Fields::of(entry) else {
        return Ok(());
    };
    let known = f.clone();
    settle(cx, path, &mut f)?;
    let at = match &f.prior {
        Some(prior) => Some(locate(cx.root, cx.state, path, prior)?),
        None => None,
    };
    if at == Some(PriorAt::NotMoved) {
        // The folder standing there is still the prior: never touched.
        return Ok(());
    }
    match cx.root.kind(path) {
        EntryKind::Missing => {}
        EntryKind::Dir => {
            if let (Some(PriorAt::Stash), Some(prior)) = (at, &f.prior) {
                // A restore across file systems stopped after its rename: the folder is the prior.
                let stash = stash_rel(prior)?;
                let here = cx.root.scan_tree(path)?.unwrap_or_default();
                let kept = cx.state.scan_tree(&stash)?.unwrap_or_default();
                if same_tree(&here, &kept) {
                    cx.state.remove_tree(&stash)?;
                    cx.report.files.push((path.to_string(), "restored"));
                    return Ok(());
                }
            }
            if f.manifest.is_none() && f.prior.is_none() {
                // Never built here and nothing taken over: whatever stands there is not ours.
                return Ok(());
            }
            let manifest = manifest_for(cx, path, &known, &f.manifest.clone().unwrap_or_default());
            dispose(cx, path, &manifest, None, path)?;
            if f.prior.is_none() {
                cx.report.files.push((path.to_string(), "removed"));
            }
        }
        EntryKind::Symlink | EntryKind::File | EntryKind::Other => {
            if f.prior.is_none() {
                return Ok(());
            }
            return Err(Error::Unsafe {
                path: cx.root.display_path(path),
                reason: "something else now stands where the taken-over folder goes back; the prior stays in the stash".into(),
            });
        }
    }
    if let Some(prior) = &f.prior {
        match at {
            Some(PriorAt::Stash) => {
                fsio::move_tree(cx.state, &stash_rel(prior)?, cx.root, path)?;
            }
            Some(PriorAt::Hidden) => {
                cx.root
                    .rename_noreplace(&sibling(path, &prior.hidden)?, path)?;
            }
            _ => {}
        }
        cx.report.files.push((path.to_string(), "restored"));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_are_refused() {
        for bad in [
            "",
            "..",
            ".",
            "../../etc",
            "a/b",
            "/etc",
            "a\\b",
            "x\0y",
            "tab\there",
            ".hidden",
            "a..b",
            "x.projectfile-tmp.0",
        ] {
            let e = validate_name(bad).unwrap_err();
            assert!(e.to_string().contains("nothing was written"), "{e}");
        }
        for good in ["review", "Review_v2", "deploy-prod", "日本語"] {
            validate_name(good).unwrap();
        }
        assert!(validate_name(&"a".repeat(256)).is_err());
    }

    #[test]
    fn marker_round_trips() {
        let ns = Namespace::default();
        let mut m = Manifest {
            build: "b1".into(),
            ..Manifest::default()
        };
        m.files.insert(
            "SKILL.md".into(),
            ManifestFile {
                sha256: "00".into(),
                mode: 0o644,
            },
        );
        let bytes = marker_content(&ns, &m, &[]);
        assert_eq!(parse_marker(&bytes, &ns), Some(m));
        assert_eq!(
            parse_marker(&bytes, &Namespace::new("other").unwrap()),
            None
        );
        assert_eq!(parse_marker(b"", &ns), None);
    }
}
