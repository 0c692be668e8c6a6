//! What a skill folder holds and whether it is ours: the marker file's document, the manifest
//! of a build, how a folder differs from a manifest, and what stands where a folder is to go.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsio::tree::hex;
use crate::fsio::{self, Root, TreeEntry, TreeKind};
use crate::ledger::{Manifest, ManifestFile};
use crate::plan::RelPath;
use crate::provider::{EntryKind, Namespace};

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
pub(super) fn parse_marker(bytes: &[u8], namespace: &Namespace) -> Option<Manifest> {
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

pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn key(path: &Path) -> Option<String> {
    path.to_str().map(str::to_string)
}

/// The manifest of what a copy wrote.
pub(super) fn manifest_from(build: String, entries: &[TreeEntry]) -> Manifest {
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
pub(super) struct Diff {
    /// Files of ours whose content changed (or that became something else).
    pub changed: Vec<PathBuf>,
    /// Entries that are not ours, top-most only (a foreign folder counts once).
    pub foreign: Vec<PathBuf>,
    /// Fifos, sockets and devices (never ours; we cannot set them aside).
    pub specials: Vec<PathBuf>,
    /// How many of our files are gone.
    pub missing: usize,
}

impl Diff {
    pub fn clean(&self) -> bool {
        self.changed.is_empty()
            && self.foreign.is_empty()
            && self.specials.is_empty()
            && self.missing == 0
    }
}

pub(super) fn diff(scan: &[TreeEntry], manifest: &Manifest) -> Diff {
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

/// Whether the source folder holds exactly the files and folders (content and mode bits, as a copy
/// would write them) that `ours` records. A source a copy would refuse never matches, so the copy
/// is what reports why.
pub(super) fn source_matches(source: &Path, ours: &Manifest, marker: &str) -> bool {
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

/// The error for something other than a folder standing where the skill folder goes.
pub(super) fn blocked(root: &Root, path: &RelPath, kind: EntryKind) -> Error {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
