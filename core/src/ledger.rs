//! The ledger: the per-workspace record of leases and of what each projected path holds, kept
//! under the state directory (never in the workspace) in a checksummed journal
//! ([`crate::journal`]).
//!
//! Layout of the state directory:
//!
//! ```text
//! <state>/workspaces/<key>/ledger.jsonl  the journal of one workspace's ledger
//! <state>/workspaces/<key>/ledger.sync   its two sync slots: the newest durable records
//! <state>/workspaces/<key>/lock          the workspace lock (held around every read-modify-write)
//! <state>/workspaces/<key>/kept/         user bytes set aside (an owned file edited mid-session whose
//!                                        prior content came back, files changed in or added to a
//!                                        managed skill folder)
//! <state>/workspaces/<key>/sessions/<t>/ private files of one session (Claude's prompt file)
//! ```
//!
//! The prior contents of paths we take over are not kept here but inside the workspace, where
//! losing the state directory cannot take them: see [`crate::projector::priors`].
//!
//! `<key>` names the workspace folder itself, not a path to it, over time: the hash of its
//! [`FolderIdentity`] (device, inode, and the folder's incarnation: its file handle and birth
//! time; see [`crate::workspace`]), so every path and every later name of one folder share one
//! lock and one ledger, and a folder deleted and created again is another workspace. The ledger
//! records the folder's identity and the path it was last seen at, and each lease the path it
//! was acquired through; a command finds the folder from those and checks its identity, so a
//! recorded path that now names another folder is never taken for it. `<state>/paths/<path
//! key>` remembers which folder each path last named, so a path whose folder changed (a deleted
//! and re-created checkout) is reported.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::holder::Holder;
use crate::plan::{MarkerKind, OwnedRole, RelPath};
pub use crate::workspace::{FolderIdentity, fnv1a64};

mod leases;
mod leases_json;

pub(crate) use leases::{Leases, ReadLeases};

/// The ledger format version this build writes and reads.
pub const LEDGER_VERSION: u32 = 1;

/// The state-directory key of the folder a workspace path names now (see
/// [`FolderIdentity::key`]); of the path itself when no folder can be looked at there.
pub fn workspace_key(path: &Path) -> String {
    match FolderIdentity::of_path(path) {
        Some(identity) => identity.key(),
        None => path_key(path),
    }
}

/// The hash of a path itself: the name under `<state>/paths/` that remembers which folder a
/// path named.
pub fn path_key(path: &Path) -> String {
    format!("{:016x}", fnv1a64(path.as_os_str().as_encoded_bytes()))
}

/// The workspace folder a ledger is for: the path it is at now and its identity.
#[derive(Clone, Copy, Debug)]
pub struct FolderRef<'a> {
    /// Its canonical path now.
    pub path: &'a Path,
    /// Its identity.
    pub identity: &'a FolderIdentity,
}

impl<'a> FolderRef<'a> {
    /// The folder of an open workspace.
    pub fn of(workspace: &'a crate::workspace::Workspace) -> FolderRef<'a> {
        FolderRef {
            path: &workspace.path,
            identity: &workspace.identity,
        }
    }
}

/// One session's hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseRecord {
    /// The provider that planned it (shared: the leases read from one record mostly name one).
    pub provider: std::sync::Arc<str>,
    /// What keeps it alive.
    pub holder: Holder,
    /// The path of the workspace folder it was acquired through (canonical, UTF-8): where a
    /// release looks for the folder first, its identity checked (see [`crate::workspace`]).
    pub workspace: std::sync::Arc<str>,
    /// Seconds since the Unix epoch when it was taken.
    pub acquired_at: u64,
    /// The paths it holds.
    pub paths: std::sync::Arc<[RelPath]>,
    /// The namespace of its markers.
    pub namespace: std::sync::Arc<str>,
    /// The session text this lease put in each shared block, and the content it put in each
    /// file written whole, by file: when the session whose text a block (or content a file)
    /// holds ends, it is given back the newest live sharing session's. Private, like the whole
    /// ledger; empty when it put none (left out).
    /// Shared, not copied, between leases read from the same bytes (the sessions of a workspace
    /// mostly share their texts).
    #[serde(default, skip_serializing_if = "no_texts")]
    pub block_texts: BlockTexts,
    /// The order in which leases were taken in this workspace (1 + the highest of the leases
    /// recorded then), telling the newest live session apart; at least 1 (a 0 is left out).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seq: u64,
}

/// The session text a lease put in each shared block, by file: written and read as a JSON
/// object. A few entries at most (one per file a session's text goes to).
#[derive(Clone)]
pub struct BlockTexts(Texts);

#[derive(Clone)]
enum Texts {
    /// Sorted by path, one allocation: a tree map of one entry is a whole node, hundreds of
    /// bytes for each lease with a text of its own.
    Listed(std::sync::Arc<[(RelPath, String)]>),
    /// As read from a record: the object `{"<path>":"<text>",…}` at `range` of `buffer`, its
    /// strings plain (no escape), its paths valid and in increasing order (checked when it was
    /// read). Read again when asked for, so reading the leases of many sessions, each with a text
    /// of its own, copies none of the texts.
    Read {
        buffer: std::sync::Arc<[u8]>,
        range: std::ops::Range<usize>,
    },
}

impl Default for BlockTexts {
    fn default() -> Self {
        BlockTexts(Texts::Listed(std::sync::Arc::from(Vec::new())))
    }
}

impl BlockTexts {
    /// The text put in the block of `path`.
    pub fn get(&self, path: &RelPath) -> Option<&str> {
        match &self.0 {
            Texts::Listed(entries) => entries
                .binary_search_by(|(p, _)| p.cmp(path))
                .ok()
                .and_then(|i| entries.get(i))
                .map(|(_, text)| text.as_str()),
            Texts::Read { .. } => self
                .iter()
                .find(|(p, _)| *p == path.as_str())
                .map(|(_, text)| text),
        }
    }

    /// Whether the text put in the block of `path` is `text`; `None` when no text is.
    ///
    /// Texts as read of one entry, `{"<path>":"<text>"}` (the writer's form for a session
    /// whose text goes to one file), are compared as they stand, not read: their strings are
    /// plain (see [`BlockTexts::read`]), so the bytes between the quotes are the strings
    /// themselves, and a `text` that is not plain cannot be equal to one that is. Anything else
    /// is read with [`BlockTexts::get`]. A command among many sessions asks this of each.
    pub fn text_is(&self, path: &RelPath, text: &str) -> Option<bool> {
        if let Texts::Read { buffer, range } = &self.0
            && let Some(bytes) = buffer.get(range.clone())
            && let Some(entry) = bytes
                .strip_prefix(b"{\"")
                .and_then(|b| b.strip_suffix(b"\"}"))
            && let Some(quote) = entry.iter().position(|b| *b == b'"')
            && let (key, Some(value)) = (&entry[..quote], entry[quote..].strip_prefix(b"\":\""))
            && !value.contains(&b'"')
        {
            return (key == path.as_str().as_bytes()).then(|| value == text.as_bytes());
        }
        self.get(path).map(|t| t == text)
    }

    /// Whether `other` is these very texts: the same bytes of one buffer, or one list (the
    /// leases read from one record share the texts they repeat), so any question asked of one
    /// has the other's answer. Texts alike but kept apart answer `false`.
    pub fn same_as(&self, other: &BlockTexts) -> bool {
        match (&self.0, &other.0) {
            (Texts::Listed(a), Texts::Listed(b)) => std::sync::Arc::ptr_eq(a, b),
            (
                Texts::Read { buffer, range },
                Texts::Read {
                    buffer: other_buffer,
                    range: other_range,
                },
            ) => std::sync::Arc::ptr_eq(buffer, other_buffer) && range == other_range,
            _ => false,
        }
    }

    /// Each file and its text, by path.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let (listed, read) = match &self.0 {
            Texts::Listed(entries) => (Some(entries.iter()), None),
            Texts::Read { buffer, range } => (
                None,
                buffer.get(range.clone()).map(leases_json::plain_entries),
            ),
        };
        let listed = listed
            .into_iter()
            .flatten()
            .map(|(path, text)| (path.as_str(), text.as_str()));
        listed.chain(read.into_iter().flatten())
    }

    /// Whether no text is recorded.
    pub fn is_empty(&self) -> bool {
        match &self.0 {
            Texts::Listed(entries) => entries.is_empty(),
            // Checked when read (see `read`): an object of plain entries, empty only as `{}`.
            Texts::Read { buffer, range } => buffer.get(range.clone()).is_none_or(|b| b.len() <= 2),
        }
    }

    /// The texts at `range` of `buffer`, an object whose strings are plain and whose paths are
    /// valid and in increasing order (see `leases_json::plain_texts_checked`).
    pub(crate) fn read(buffer: &std::sync::Arc<[u8]>, range: std::ops::Range<usize>) -> Self {
        BlockTexts(Texts::Read {
            buffer: buffer.clone(),
            range,
        })
    }
}

impl std::fmt::Debug for BlockTexts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl PartialEq for BlockTexts {
    fn eq(&self, other: &BlockTexts) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for BlockTexts {}

impl FromIterator<(RelPath, String)> for BlockTexts {
    /// Sorted by path; of a path given twice, the last text (as a map collects).
    fn from_iter<I: IntoIterator<Item = (RelPath, String)>>(entries: I) -> Self {
        let map: BTreeMap<RelPath, String> = entries.into_iter().collect();
        BlockTexts(Texts::Listed(map.into_iter().collect()))
    }
}

impl Serialize for BlockTexts {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for BlockTexts {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let map = BTreeMap::<RelPath, String>::deserialize(deserializer)?;
        Ok(map.into_iter().collect())
    }
}

fn no_texts(texts: &BlockTexts) -> bool {
    texts.is_empty()
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

thread_local! {
    /// Leases serialised to JSON on this thread.
    static LEASES_SERIALISED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many leases have been serialised to JSON on the calling thread: tests check that a
/// command serialises each lease once however many times it saves.
pub fn leases_serialised_on_this_thread() -> u64 {
    LEASES_SERIALISED.with(std::cell::Cell::get)
}

/// What the leases of one workspace mostly have in common: the provider that planned them, what
/// keeps them alive, the paths they hold, their namespace. The leases read from one record share
/// one of these when they share those fields (one process often holds every lease), so reading a
/// lease allocates nothing of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LeaseShape {
    provider: std::sync::Arc<str>,
    holder: Holder,
    workspace: std::sync::Arc<str>,
    paths: std::sync::Arc<[RelPath]>,
    namespace: std::sync::Arc<str>,
}

impl LeaseShape {
    /// The shape of `record`.
    pub(crate) fn of(record: &LeaseRecord) -> LeaseShape {
        LeaseShape {
            provider: record.provider.clone(),
            holder: record.holder.clone(),
            workspace: record.workspace.clone(),
            paths: record.paths.clone(),
            namespace: record.namespace.clone(),
        }
    }
}

/// A lease as the ledger holds it: read-only once recorded (nothing changes a lease; a new
/// session is a new lease), so its JSON is written once and copied into every later record
/// instead of being serialised again: a lease read from the journal keeps the bytes it was
/// read from, a new one is serialised at the first save of its command. What it shares with
/// other leases is a [`LeaseShape`] they point to; its own are its numbers and its texts.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    shape: std::sync::Arc<LeaseShape>,
    acquired_at: u64,
    seq: u64,
    block_texts: BlockTexts,
    json: std::cell::OnceCell<LeaseJson>,
}

/// A lease's compact JSON: its range of a buffer the leases read from one record share (one
/// copy of the record's leases, not one per lease), or a buffer of its own.
#[derive(Clone, Debug)]
pub(crate) struct LeaseJson {
    buffer: std::sync::Arc<[u8]>,
    range: std::ops::Range<usize>,
    /// How many bytes of `range` come before the lease's JSON: its key as the ledger wrote it
    /// (`"<token>":`, a token with nothing to escape), so it is copied with the lease; 0 when
    /// the range holds the lease alone.
    key: usize,
}

impl LeaseJson {
    /// The JSON of a lease at `range` of `buffer`, starting `key` bytes in (0: at once).
    pub(crate) fn new(
        buffer: &std::sync::Arc<[u8]>,
        range: std::ops::Range<usize>,
        key: usize,
    ) -> Self {
        LeaseJson {
            buffer: buffer.clone(),
            range,
            key,
        }
    }

    /// Its bytes, the lease's JSON alone; `None` if its range is not inside its buffer (never,
    /// as the reader makes them; the lease is then serialised anew instead).
    fn bytes(&self) -> Option<&[u8]> {
        self.buffer
            .get(self.range.clone())
            .and_then(|keyed| keyed.get(self.key..))
    }

    /// `"<token>":` and the lease's JSON, when the bytes kept are those of this very key.
    fn keyed_bytes(&self, token: &str) -> Option<&[u8]> {
        let keyed = self.buffer.get(self.range.clone())?;
        let key = keyed.get(..self.key)?;
        let written = key.strip_prefix(b"\"")?.strip_suffix(b"\":")?;
        (written == token.as_bytes()).then_some(keyed)
    }
}

impl Recorded {
    /// Records `record`.
    pub fn new(record: LeaseRecord) -> Recorded {
        Recorded {
            shape: std::sync::Arc::new(LeaseShape::of(&record)),
            acquired_at: record.acquired_at,
            seq: record.seq,
            block_texts: record.block_texts,
            json: std::cell::OnceCell::new(),
        }
    }

    /// A lease of `shape` with these numbers and texts, read from `json` and keeping it as its
    /// JSON.
    pub(crate) fn read(
        shape: &std::sync::Arc<LeaseShape>,
        acquired_at: u64,
        seq: u64,
        block_texts: BlockTexts,
        json: LeaseJson,
    ) -> Recorded {
        Recorded {
            shape: shape.clone(),
            acquired_at,
            seq,
            block_texts,
            json: std::cell::OnceCell::from(json),
        }
    }

    /// A lease read by serde from `raw`, one value of a ledger's `leases` object.
    fn read_raw(raw: &serde_json::value::RawValue) -> serde_json::Result<Recorded> {
        let record: LeaseRecord = serde_json::from_str(raw.get())?;
        let bytes: std::sync::Arc<[u8]> = raw.get().as_bytes().into();
        let range = 0..bytes.len();
        Ok(Recorded::with_json(
            record,
            LeaseJson::new(&bytes, range, 0),
        ))
    }

    /// `record`, read from `json` (see [`Recorded::read`]).
    pub(crate) fn with_json(record: LeaseRecord, json: LeaseJson) -> Recorded {
        let shape = std::sync::Arc::new(LeaseShape::of(&record));
        Recorded::read(
            &shape,
            record.acquired_at,
            record.seq,
            record.block_texts,
            json,
        )
    }

    /// The provider that planned it.
    pub fn provider(&self) -> &std::sync::Arc<str> {
        &self.shape.provider
    }

    /// What keeps it alive.
    pub fn holder(&self) -> &Holder {
        &self.shape.holder
    }

    /// Seconds since the Unix epoch when it was taken.
    pub fn acquired_at(&self) -> u64 {
        self.acquired_at
    }

    /// The paths it holds.
    pub fn paths(&self) -> &std::sync::Arc<[RelPath]> {
        &self.shape.paths
    }

    /// The path of the workspace it was acquired through.
    pub fn workspace(&self) -> &Path {
        Path::new(&*self.shape.workspace)
    }

    /// The namespace of its markers.
    pub fn namespace(&self) -> &str {
        &self.shape.namespace
    }

    /// The session text it put in each shared block, by file.
    pub fn block_texts(&self) -> &BlockTexts {
        &self.block_texts
    }

    /// The order in which it was taken (see [`LeaseRecord::seq`]).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The whole record.
    pub fn record(&self) -> LeaseRecord {
        let shape = &*self.shape;
        LeaseRecord {
            provider: shape.provider.clone(),
            holder: shape.holder.clone(),
            workspace: shape.workspace.clone(),
            acquired_at: self.acquired_at,
            paths: shape.paths.clone(),
            namespace: shape.namespace.clone(),
            block_texts: self.block_texts.clone(),
            seq: self.seq,
        }
    }

    /// Appends `"<token>":` and its compact JSON to `out`: copied at once when both were read
    /// together as this build writes them, otherwise the key written and then the JSON.
    fn write_keyed_json(&self, token: &str, out: &mut Vec<u8>) -> serde_json::Result<()> {
        if let Some(keyed) = self.json.get().and_then(|json| json.keyed_bytes(token)) {
            out.extend_from_slice(keyed);
            return Ok(());
        }
        write_json_str(out, token)?;
        out.push(b':');
        self.write_json(out)
    }

    /// Appends its compact JSON to `out`: serialised there the first time, and kept.
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        if let Some(json) = self.json.get().and_then(LeaseJson::bytes) {
            out.extend_from_slice(json);
            return Ok(());
        }
        LEASES_SERIALISED.with(|c| c.set(c.get() + 1));
        let start = out.len();
        serde_json::to_writer(&mut *out, &self.record())?;
        let buffer: std::sync::Arc<[u8]> = out[start..].into();
        let range = 0..buffer.len();
        let _ = self.json.set(LeaseJson::new(&buffer, range, 0));
        Ok(())
    }
}

impl PartialEq for Recorded {
    fn eq(&self, other: &Recorded) -> bool {
        self.acquired_at == other.acquired_at
            && self.seq == other.seq
            && self.block_texts == other.block_texts
            && (std::sync::Arc::ptr_eq(&self.shape, &other.shape) || self.shape == other.shape)
    }
}

impl Eq for Recorded {}

impl Serialize for Recorded {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        self.record().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Recorded {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Recorded, D::Error> {
        let raw = <Box<serde_json::value::RawValue>>::deserialize(deserializer)?;
        Recorded::read_raw(&raw).map_err(serde::de::Error::custom)
    }
}

/// Reads the leases object into a map built at once from its entries, which a ledger lists in
/// order (inserting them one by one compares each token with a path of others, about 800
/// instructions a lease), each lease keeping the bytes it was read from (borrowed from the
/// journal's buffer while it is read). Entries out of order, or a token twice, read as insertion
/// would: the map sorts them, and the last of equal tokens wins.
fn leases_in_order<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Leases, D::Error> {
    struct Entries;
    impl<'de> serde::de::Visitor<'de> for Entries {
        type Value = Vec<(String, Recorded)>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map of leases by token")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            use serde::de::Error as _;
            let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
            while let Some((token, raw)) =
                map.next_entry::<String, &'de serde_json::value::RawValue>()?
            {
                entries.push((token, Recorded::read_raw(raw).map_err(A::Error::custom)?));
            }
            Ok(entries)
        }
    }
    Ok(deserializer.deserialize_map(Entries)?.into_iter().collect())
}

/// The leases holding the entry at `path`: those whose [`LeaseRecord::paths`] name it, in token
/// order. An entry names no holders: a lease never changes once recorded and states what it
/// holds, so a start or an end among hundreds of sessions sharing an entry records nothing of
/// the others.
/// The leases read from one record share their paths, so a lease whose paths are the very list
/// of the lease before it is answered without looking at them again.
pub fn leases_holding<'a>(
    leases: &'a Leases,
    path: &'a RelPath,
) -> impl Iterator<Item = (&'a str, &'a Recorded)> + 'a {
    let mut last: Option<(&'a std::sync::Arc<[RelPath]>, bool)> = None;
    leases.iter().filter(move |(_, lease)| {
        let paths = lease.paths();
        match last {
            Some((seen, holds)) if std::sync::Arc::ptr_eq(seen, paths) => holds,
            _ => {
                let holds = paths.contains(path);
                last = Some((paths, holds));
                holds
            }
        }
    })
}

/// Where the prior content of a path we took over is kept: `<dir>/<id>/` inside the workspace
/// (see [`crate::projector::priors`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriorRef {
    /// The priors folder at the top of the workspace (`.{ns}-priors`).
    pub dir: String,
    /// The random id of this prior's folder inside it.
    pub id: String,
}

/// One file we wrote into a projected skill folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// SHA-256 of the content, lowercase hex.
    pub sha256: String,
    /// Permission bits.
    pub mode: u32,
}

/// What one build of a projected skill folder holds: every file and directory we wrote into it,
/// so a user's change or addition can be told from our bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// A random id, also written into the folder's marker file, telling builds apart.
    pub build: String,
    /// Files by path relative to the folder (`/`-separated), including the marker file.
    #[serde(default)]
    pub files: BTreeMap<String, ManifestFile>,
    /// Directories inside the folder, with their modes.
    #[serde(default)]
    pub dirs: BTreeMap<String, u32>,
}

/// An earlier build of ours beside the skill folder, swapped out by a refresh and not yet removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retired {
    /// Its name beside the skill folder.
    pub name: String,
    /// What we wrote into it.
    pub manifest: Manifest,
}

/// What one projected path holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EntryRecord {
    /// Our block in a shared file (the bodies we wrote are in [`Ledger::block_bodies`]): one
    /// block per namespace, each taken out when no holder of its namespace is left.
    Block {
        /// The namespaces whose block we put in the file.
        namespaces: BTreeSet<String>,
    },
    /// A file we own while sessions live.
    Owned {
        /// What it is for.
        role: OwnedRole,
        /// The prior content, or `None` when there was no file.
        prior: Option<PriorRef>,
        /// Exactly what we last wrote, to tell our bytes from a user's edit.
        written: String,
        /// The mode we last wrote it with.
        written_mode: Option<u32>,
        /// Content whose write was under way when the ledger was last saved: a crash may have
        /// left it in the file, so it counts as ours too until the write is known to be done.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        writing: Option<String>,
        /// The namespace whose marker proves it ours.
        namespace: String,
    },
    /// A file or folder whose presence we created.
    Marker {
        /// File or directory.
        marker: MarkerKind,
    },
    /// A projected skill folder (see [`crate::projector::skill_folder`]).
    Skill {
        /// The folder it was last copied from.
        source: PathBuf,
        /// The folder that stood there before, taken over; `None` when there was none.
        prior: Option<PriorRef>,
        /// What the folder holds from us; `None` until the first build is recorded.
        manifest: Option<Manifest>,
        /// Earlier builds beside the folder still to be removed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        retired: Vec<Retired>,
        /// The namespace of its marker file.
        namespace: String,
    },
}

impl EntryRecord {
    /// The namespace whose markers prove this entry ours (a block keeps one per namespace in its
    /// `namespaces`, and a marker proves nothing by its content: the default namespace for
    /// them).
    pub fn namespace(&self) -> &str {
        match self {
            EntryRecord::Owned { namespace, .. } | EntryRecord::Skill { namespace, .. } => {
                namespace
            }
            _ => crate::plan::Namespace::DEFAULT,
        }
    }
}

/// User bytes we set aside instead of losing them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KeptRecord {
    /// The workspace path the bytes came from.
    pub path: RelPath,
    /// Where they are now.
    pub kept_at: PathBuf,
    /// Why they were set aside.
    pub reason: String,
}

/// The whole record for one workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// Format version.
    pub version: u32,
    /// Where the workspace folder was last seen: the canonical path of the last command that
    /// found it (a start or a strip through a path, a release that found it moved).
    pub workspace: PathBuf,
    /// The workspace folder's identity: a command works on the folder of this identity only.
    pub identity: FolderIdentity,
    /// Live and stale leases by token.
    #[serde(default, deserialize_with = "leases_in_order")]
    pub leases: Leases,
    /// Projected paths.
    #[serde(default)]
    pub entries: BTreeMap<RelPath, EntryRecord>,
    /// Directories we created, removed when no entry needs them and they are empty.
    #[serde(default)]
    pub created_dirs: BTreeSet<RelPath>,
    /// Every file that has held our block in this workspace, recorded durably the first time and
    /// kept after the last session ends. At each start, such a file holding our block that no
    /// entry records has the block removed: a power loss can lose the unsynced record of the
    /// lease that wrote it (see [`crate::journal`]), and the block itself says whether the file
    /// was ours to create. Not a lease: [`Ledger::is_empty`] ignores it.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub block_files: BTreeSet<RelPath>,
    /// The session texts each block may hold from us, by file and namespace, newest first: what
    /// a release or a refresh compares the block's body with to tell the user's lines from ours.
    /// After a write completes only its text is listed; a write a crash may have interrupted
    /// leaves the earlier texts listed too. Kept after the last session ends, like
    /// [`Ledger::block_files`]; a start's text is listed durably before it is written (see
    /// [`crate::journal`]); a text a release gives back is the text of a live lease, recorded
    /// in its [`LeaseRecord::block_texts`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub block_bodies: BTreeMap<RelPath, BTreeMap<String, Vec<String>>>,
    /// The files whose block of each listed namespace was put after text without a final
    /// newline: the line end before its BEGIN line is ours whatever that line comes to hold (see
    /// [`crate::block::Markers::with_joined`]). Set (durably) before such a block is written, by
    /// each start that puts one in; kept, like [`Ledger::block_files`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub block_joined: BTreeMap<RelPath, BTreeSet<String>>,
    /// User bytes set aside, for `status`.
    #[serde(default)]
    pub kept: Vec<KeptRecord>,
    /// Entries whose undo failed, with the reason: left recorded, retried at every start, shown
    /// by `status`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pending: BTreeMap<RelPath, String>,
}

impl Ledger {
    /// An empty ledger for `workspace`.
    pub fn new(folder: FolderRef<'_>) -> Ledger {
        Ledger {
            version: LEDGER_VERSION,
            workspace: folder.path.to_path_buf(),
            identity: folder.identity.clone(),
            leases: Leases::new(),
            entries: BTreeMap::new(),
            created_dirs: BTreeSet::new(),
            block_files: BTreeSet::new(),
            block_bodies: BTreeMap::new(),
            block_joined: BTreeMap::new(),
            kept: Vec::new(),
            pending: BTreeMap::new(),
        }
    }

    /// An empty ledger for a folder at `path` with a made-up identity, for tests.
    #[cfg(test)]
    pub fn at(path: &Path) -> Ledger {
        Ledger::new(FolderRef {
            path,
            identity: &FolderIdentity::made_up(),
        })
    }

    /// Parses a ledger, checking it belongs to the folder `workspace` when given.
    pub fn parse(bytes: &[u8], file: &Path, workspace: Option<&FolderIdentity>) -> Result<Ledger> {
        // The leases read apart (see `leases_json`), the rest by serde; anything the fast reading
        // declines is read by serde whole, which also says what is wrong.
        let fast = leases_json::split_leases(bytes).and_then(|(rest, leases)| {
            let mut ledger: Ledger = serde_json::from_slice(&rest).ok()?;
            ledger.leases = leases;
            Some(ledger)
        });
        let ledger: Ledger = match fast {
            Some(ledger) => ledger,
            None => serde_json::from_slice(bytes).map_err(|e| Error::Ledger {
                path: file.to_path_buf(),
                reason: e.to_string(),
            })?,
        };
        if ledger.version != LEDGER_VERSION {
            return Err(Error::Ledger {
                path: file.to_path_buf(),
                reason: format!(
                    "version {} is not the version {LEDGER_VERSION} this build understands",
                    ledger.version
                ),
            });
        }
        // Another folder with the same key (a hash collision) must not share it.
        if let Some(identity) = workspace
            && ledger.identity != *identity
        {
            return Err(Error::Ledger {
                path: file.to_path_buf(),
                reason: format!(
                    "it records the folder last seen at {}, not the one it was read for (a key collision); refusing to share it",
                    ledger.workspace.display()
                ),
            });
        }
        Ok(ledger)
    }

    /// The ledger as compact JSON (one line: no raw newline), as a journal record holds it.
    #[cfg(test)]
    pub fn to_json(&self, file: &Path) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_json(&mut out, file)?;
        Ok(out)
    }

    /// Appends [`Ledger::to_json`]'s bytes to `out` (a buffer reused from save to save): what
    /// the derived serialisation writes, field by field, with each lease's JSON copied from
    /// [`Recorded`] when an earlier save of this command wrote it.
    pub fn write_json(&self, out: &mut Vec<u8>, file: &Path) -> Result<()> {
        self.write_record(out, file, None, &mut self.leases.iter())
    }

    /// Appends a delta record's JSON to `out` (see [`crate::journal`]): `head`, which opens the
    /// object in place of the version, then [`Ledger::write_json`]'s fields after the version,
    /// with only the leases `added` lists (in token order).
    pub(crate) fn write_delta_json<'a>(
        &self,
        out: &mut Vec<u8>,
        file: &Path,
        head: &[u8],
        added: &mut dyn Iterator<Item = (&'a str, &'a Recorded)>,
    ) -> Result<()> {
        self.write_record(out, file, Some(head), added)
    }

    /// [`Ledger::write_fields`], its error naming the journal `file`.
    fn write_record<'a>(
        &self,
        out: &mut Vec<u8>,
        file: &Path,
        head: Option<&[u8]>,
        leases: &mut dyn Iterator<Item = (&'a str, &'a Recorded)>,
    ) -> Result<()> {
        self.write_fields(out, head, leases)
            .map_err(|e| Error::Ledger {
                path: file.to_path_buf(),
                reason: format!("it cannot record this ledger: {e}"),
            })
    }

    /// The leases the ledger JSON at `body` of `buffer` records, without reading the rest of it
    /// (the base of a delta record, whose other fields the delta replaces): read apart, each
    /// lease's JSON kept as a range of `buffer`, or, when that reading declines, the whole ledger
    /// read by serde.
    pub fn parse_leases(
        buffer: &std::sync::Arc<[u8]>,
        body: std::ops::Range<usize>,
        file: &Path,
    ) -> Result<Leases> {
        match leases_json::leases_in(buffer, body.clone()) {
            Some(leases) => Ok(leases),
            None => Ledger::parse(buffer.get(body).unwrap_or_default(), file, None)
                .map(|ledger| ledger.leases),
        }
    }

    /// [`Ledger::write_json`]: the fields in their declared order, skipped as the derived
    /// serialisation skips them (`ledger_json_is_the_derived_serialisation` holds the two equal);
    /// with `head`, that in place of the version; the leases are those `leases` lists.
    fn write_fields<'a>(
        &self,
        out: &mut Vec<u8>,
        head: Option<&[u8]>,
        leases: &mut dyn Iterator<Item = (&'a str, &'a Recorded)>,
    ) -> serde_json::Result<()> {
        fn field<T: Serialize>(out: &mut Vec<u8>, name: &str, value: &T) -> serde_json::Result<()> {
            out.extend_from_slice(b",\"");
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\":");
            serde_json::to_writer(out, value)
        }
        match head {
            Some(head) => out.extend_from_slice(head),
            None => {
                out.extend_from_slice(b"{\"version\":");
                serde_json::to_writer(&mut *out, &self.version)?;
            }
        }
        field(out, "workspace", &self.workspace)?;
        field(out, "identity", &self.identity)?;
        out.extend_from_slice(b",\"leases\":{");
        let mut first = true;
        for (token, lease) in leases {
            if !first {
                out.push(b',');
            }
            first = false;
            lease.write_keyed_json(token, out)?;
        }
        out.push(b'}');
        out.extend_from_slice(b",\"entries\":{");
        for (n, (path, entry)) in self.entries.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            write_json_str(out, path.as_str())?;
            out.push(b':');
            write_entry(out, entry)?;
        }
        out.push(b'}');
        field(out, "created_dirs", &self.created_dirs)?;
        if !self.block_files.is_empty() {
            field(out, "block_files", &self.block_files)?;
        }
        if !self.block_bodies.is_empty() {
            field(out, "block_bodies", &self.block_bodies)?;
        }
        if !self.block_joined.is_empty() {
            field(out, "block_joined", &self.block_joined)?;
        }
        field(out, "kept", &self.kept)?;
        if !self.pending.is_empty() {
            field(out, "pending", &self.pending)?;
        }
        out.push(b'}');
        Ok(())
    }

    /// Whether nothing is recorded (no leases, entries, created directories or kept bytes; the
    /// [`Ledger::block_files`] and [`Ledger::block_bodies`] hints do not count).
    pub fn is_empty(&self) -> bool {
        self.leases.is_empty()
            && self.entries.is_empty()
            && self.created_dirs.is_empty()
            && self.kept.is_empty()
    }
}

/// Appends `entry` as the derived serialisation writes it (`"kind"`, then the fields in their
/// declared order, skipped as it skips them; never the holders, which the leases state:
/// `write_entry_is_the_derived_serialisation` holds the two equal).
fn write_entry(out: &mut Vec<u8>, entry: &EntryRecord) -> serde_json::Result<()> {
    fn field<T: Serialize>(out: &mut Vec<u8>, name: &str, value: &T) -> serde_json::Result<()> {
        out.extend_from_slice(b",\"");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        serde_json::to_writer(out, value)
    }
    /// A field the derived serialisation skips when it is `None`.
    fn some<T: Serialize>(
        out: &mut Vec<u8>,
        name: &str,
        value: &Option<T>,
    ) -> serde_json::Result<()> {
        match value {
            Some(_) => field(out, name, value),
            None => Ok(()),
        }
    }
    let kind = match entry {
        EntryRecord::Block { .. } => "block",
        EntryRecord::Owned { .. } => "owned",
        EntryRecord::Marker { .. } => "marker",
        EntryRecord::Skill { .. } => "skill",
    };
    out.extend_from_slice(b"{\"kind\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.push(b'"');
    match entry {
        EntryRecord::Block { namespaces, .. } => field(out, "namespaces", namespaces)?,
        EntryRecord::Owned {
            role,
            prior,
            written,
            written_mode,
            writing,
            namespace,
            ..
        } => {
            field(out, "role", role)?;
            field(out, "prior", prior)?;
            field(out, "written", written)?;
            field(out, "written_mode", written_mode)?;
            some(out, "writing", writing)?;
            field(out, "namespace", namespace)?;
        }
        EntryRecord::Marker { marker, .. } => field(out, "marker", marker)?,
        EntryRecord::Skill {
            source,
            prior,
            manifest,
            retired,
            namespace,
            ..
        } => {
            field(out, "source", source)?;
            field(out, "prior", prior)?;
            field(out, "manifest", manifest)?;
            if !retired.is_empty() {
                field(out, "retired", retired)?;
            }
            field(out, "namespace", namespace)?;
        }
    }
    out.push(b'}');
    Ok(())
}

/// Appends `text` as a JSON string, as serde_json writes it: a string with nothing to escape (a
/// token, a path) is copied between its quotes at once, anything else goes through serde_json.
fn write_json_str(out: &mut Vec<u8>, text: &str) -> serde_json::Result<()> {
    if !leases_json::has_special(text.as_bytes()) {
        out.reserve(text.len() + 2);
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
        Ok(())
    } else {
        serde_json::to_writer(out, text)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    /// Any entry, each variant with its optional fields present or not.
    pub(crate) fn any_entry() -> impl proptest::strategy::Strategy<Value = EntryRecord> {
        use crate::plan::MarkerKind;
        use proptest::prelude::*;
        let text = || "[a-z\"\\\\\n\u{e9}]{0,6}";
        let prior_ref = || (text(), text()).prop_map(|(dir, id)| PriorRef { dir, id });
        let manifest = || {
            (
                text(),
                prop::collection::btree_map(text(), (text(), any::<u32>()), 0..2),
                prop::collection::btree_map(text(), any::<u32>(), 0..2),
            )
                .prop_map(|(build, files, dirs)| Manifest {
                    build,
                    files: files
                        .into_iter()
                        .map(|(k, (sha256, mode))| (k, ManifestFile { sha256, mode }))
                        .collect(),
                    dirs,
                })
        };
        prop_oneof![
            prop::collection::btree_set(text(), 0..2)
                .prop_map(|namespaces| EntryRecord::Block { namespaces }),
            (
                prop::sample::select(vec![OwnedRole::Instructions, OwnedRole::McpConfig]),
                prop::option::of(prior_ref()),
                text(),
                prop::option::of(any::<u32>()),
                prop::option::of(text()),
                text(),
            )
                .prop_map(
                    |(role, prior, written, written_mode, writing, namespace)| {
                        EntryRecord::Owned {
                            role,
                            prior,
                            written,
                            written_mode,
                            writing,
                            namespace,
                        }
                    }
                ),
            any::<bool>().prop_map(|file| EntryRecord::Marker {
                marker: if file {
                    MarkerKind::File
                } else {
                    MarkerKind::Dir
                },
            }),
            (
                text(),
                prop::option::of(prior_ref()),
                prop::option::of(manifest()),
                prop::collection::vec(
                    (text(), manifest()).prop_map(|(name, manifest)| Retired { name, manifest }),
                    0..2
                ),
                text(),
            )
                .prop_map(|(source, prior, manifest, retired, namespace)| {
                    EntryRecord::Skill {
                        source: source.into(),
                        prior,
                        manifest,
                        retired,
                        namespace,
                    }
                }),
        ]
    }

    proptest::proptest! {
        /// For any texts by file (a path given twice included), a lease's texts are written as
        /// the map of them is, read back the same, and each text is found by its path.
        #[test]
        fn block_texts_read_and_write_as_their_map(
            entries in proptest::collection::vec(
                (
                    proptest::strategy::Strategy::prop_filter_map(
                        "[a-z/\"\u{e9}]{1,5}",
                        "a path",
                        |p: String| RelPath::new(p).ok(),
                    ),
                    "(?s).{0,8}",
                ),
                0..5,
            ),
        ) {
            let map: BTreeMap<RelPath, String> = entries.iter().cloned().collect();
            let texts: BlockTexts = entries.into_iter().collect();
            let json = serde_json::to_string(&texts).unwrap();
            proptest::prop_assert_eq!(&json, &serde_json::to_string(&map).unwrap());
            proptest::prop_assert_eq!(&serde_json::from_str::<BlockTexts>(&json).unwrap(), &texts);
            proptest::prop_assert_eq!(texts.is_empty(), map.is_empty());
            for (path, text) in &map {
                proptest::prop_assert_eq!(texts.get(path), Some(text.as_str()));
            }
            let absent = RelPath::new("absent-\u{e9}").unwrap();
            proptest::prop_assert_eq!(texts.get(&absent), None);
            proptest::prop_assert!(texts.iter().map(|(p, _)| p).eq(map.keys().map(RelPath::as_str)));
            // The same texts kept as read from a record (taken when every string is plain, that
            // is written without an escape): alike in every answer.
            let bytes: std::sync::Arc<[u8]> = json.as_bytes().into();
            let plain = leases_json::plain_texts_checked(&bytes, &mut Vec::new()).is_some();
            proptest::prop_assert_eq!(plain, !json.contains('\\'));
            if plain {
                let read = BlockTexts::read(&bytes, 0..bytes.len());
                proptest::prop_assert_eq!(&read, &texts);
                for (path, text) in &map {
                    proptest::prop_assert_eq!(read.get(path), Some(text.as_str()));
                }
                proptest::prop_assert_eq!(read.get(&absent), None);
                proptest::prop_assert_eq!(read.is_empty(), map.is_empty());
                proptest::prop_assert_eq!(serde_json::to_string(&read).unwrap(), json);
            }
        }
    }

    proptest::proptest! {
        /// For any entries, the ledger's writer writes what the derived serialisation writes.
        #[test]
        fn write_entry_is_the_derived_serialisation(
            entries in proptest::collection::btree_map(
                proptest::strategy::Strategy::prop_filter_map(
                    "[a-z\"\u{e9}]{1,4}",
                    "a path",
                    |p: String| RelPath::new(p).ok(),
                ),
                any_entry(),
                0..4,
            ),
        ) {
            let mut ledger = Ledger::at(Path::new("/w"));
            ledger.entries = entries;
            let derived = serde_json::to_vec(&ledger).unwrap();
            let mut written = Vec::new();
            ledger.write_json(&mut written, Path::new("f")).unwrap();
            proptest::prop_assert_eq!(
                String::from_utf8_lossy(&written),
                String::from_utf8_lossy(&derived)
            );
        }
    }

    proptest::proptest! {
        /// For any string, the fast string writer writes what serde_json writes.
        #[test]
        fn strings_are_written_as_serde_writes_them(text in "(?s).{0,12}") {
            let mut ours = b"x".to_vec();
            write_json_str(&mut ours, &text).unwrap();
            let theirs = serde_json::to_vec(&text).unwrap();
            proptest::prop_assert_eq!(&ours[1..], theirs.as_slice());
        }
    }

    #[test]
    fn fnv_is_stable() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    /// A ledger with every field that may be skipped filled, and leases in two shapes.
    fn full_ledger() -> Ledger {
        let mut l = Ledger::at(Path::new("/w \"quoted\""));
        l.identity = FolderIdentity {
            handle: Some("1:0a0b".into()),
            birth: Some("1.000000002".into()),
            ..FolderIdentity::made_up()
        };
        let path = RelPath::new("AGENTS.md").unwrap();
        for (n, token) in ["b\u{e9}", "a\n"].iter().enumerate() {
            let lease = LeaseRecord {
                provider: "codex".into(),
                holder: Holder::Lock {
                    path: PathBuf::from(format!("/h/{n}")),
                    mnt_ns: 9,
                    dev: 3,
                    ino: 4,
                },
                workspace: "/w \"quoted\"".into(),
                acquired_at: 7,
                paths: vec![path.clone()].into(),
                namespace: if n == 0 { "ns" } else { "agentworks" }.into(),
                block_texts: [(path.clone(), "text\twith \"tabs\"".to_string())]
                    .into_iter()
                    .collect(),
                seq: n as u64,
            };
            l.leases.insert(token.to_string(), Recorded::new(lease));
        }
        l.entries.insert(
            path.clone(),
            EntryRecord::Marker {
                marker: MarkerKind::File,
            },
        );
        l.created_dirs.insert(RelPath::new("d").unwrap());
        l.block_files.insert(path.clone());
        l.block_bodies.insert(
            path.clone(),
            [("ns".to_string(), vec!["b".to_string()])].into(),
        );
        l.block_joined
            .insert(path.clone(), ["ns".to_string()].into());
        l.kept.push(KeptRecord {
            path: path.clone(),
            kept_at: PathBuf::from("/k"),
            reason: "why".into(),
        });
        l.pending.insert(path, "failed".into());
        l
    }

    #[test]
    fn ledger_json_is_the_derived_serialisation() {
        for ledger in [Ledger::at(Path::new("/w")), full_ledger()] {
            let derived = serde_json::to_vec(&ledger).unwrap();
            // Twice: the second time with each lease's JSON kept from the first.
            for _ in 0..2 {
                let mut written = b"before".to_vec();
                ledger.write_json(&mut written, Path::new("f")).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&written[6..]),
                    String::from_utf8_lossy(&derived)
                );
            }
            let back = Ledger::parse(&derived, Path::new("f"), None).unwrap();
            assert_eq!(back, ledger);
        }
    }

    #[test]
    fn a_lease_read_keeps_its_bytes() {
        let kept = r#"{"provider":"p","holder":{"kind":"lock","path":"/l","mnt_ns":9},"workspace":"/w","acquired_at":1,"paths":[],"namespace":"agentworks","seq":1,"later":{"a":[1]}}"#;
        let json = format!(
            "{{\"version\":1,\"workspace\":\"/w\",\"identity\":{{\"dev\":1,\"ino\":2}},\"leases\":{{\"a\":{kept}}},\"entries\":{{}},\"created_dirs\":[],\"kept\":[]}}"
        );
        let before = leases_serialised_on_this_thread();
        let ledger = Ledger::parse(json.as_bytes(), Path::new("f"), None).unwrap();
        let mut out = Vec::new();
        ledger.write_json(&mut out, Path::new("f")).unwrap();
        let out = String::from_utf8(out).unwrap();
        // The lease's bytes, a field of a later build included, are copied as read.
        assert!(out.contains(&format!("\"a\":{kept}")), "{out}");
        assert_eq!(leases_serialised_on_this_thread() - before, 0);
        let back = Ledger::parse(out.as_bytes(), Path::new("f"), None).unwrap();
        assert_eq!(back.leases["a"], ledger.leases["a"]);
    }

    /// A lease held by a lock file, with nothing but its order `seq` of its own.
    pub(crate) fn lock_lease(seq: u64) -> Recorded {
        Recorded::new(LeaseRecord {
            provider: "p".into(),
            holder: Holder::Lock {
                path: PathBuf::from("/l"),
                mnt_ns: 9,
                dev: 0,
                ino: 0,
            },
            workspace: "/w".into(),
            acquired_at: 0,
            paths: Vec::new().into(),
            namespace: "agentworks".into(),
            block_texts: Default::default(),
            seq,
        })
    }

    proptest::proptest! {
        /// For any leases, each naming some paths (a run of them sharing one list, as leases
        /// read from one record do) and any path: the leases holding it are exactly those whose
        /// paths name it, in token order.
        #[test]
        fn the_leases_holding_a_path_are_those_naming_it(
            leases in proptest::collection::btree_map(
                "[ab]{0,3}",
                (proptest::collection::btree_set("[xyz]", 0..3), proptest::prelude::any::<bool>()),
                0..40,
            ),
            asked in "[xyzw]",
        ) {
            let asked = RelPath::new(&asked).unwrap();
            let mut previous: Option<std::sync::Arc<[RelPath]>> = None;
            let leases: Leases = leases
                .into_iter()
                .enumerate()
                .map(|(n, (token, (paths, shared)))| {
                    let mut record = lock_lease(n as u64).record();
                    record.paths = match (&previous, shared) {
                        (Some(previous), true) => previous.clone(),
                        _ => paths.iter().map(|p| RelPath::new(p).unwrap()).collect(),
                    };
                    previous = Some(record.paths.clone());
                    (token, Recorded::new(record))
                })
                .collect();
            let holding: Vec<(&str, u64)> =
                leases_holding(&leases, &asked).map(|(t, l)| (t, l.seq())).collect();
            let naming: Vec<(&str, u64)> = leases
                .iter()
                .filter(|(_, l)| l.paths().contains(&asked))
                .map(|(t, l)| (t, l.seq()))
                .collect();
            proptest::prop_assert_eq!(holding, naming);
        }
    }

    #[test]
    fn leases_out_of_order_or_twice_read_as_inserted() {
        let lease = |seq: u64| {
            format!(
                "{{\"provider\":\"p\",\"holder\":{{\"kind\":\"lock\",\"path\":\"/l\",\"mnt_ns\":1}},\"workspace\":\"/w\",\"acquired_at\":1,\"paths\":[],\"namespace\":\"agentworks\",\"seq\":{seq}}}"
            )
        };
        let json = format!(
            "{{\"version\":1,\"workspace\":\"/w\",\"identity\":{{\"dev\":1,\"ino\":2}},\"leases\":{{\"c\":{},\"a\":{},\"c\":{}}},\"entries\":{{}},\"created_dirs\":[],\"kept\":[]}}",
            lease(1),
            lease(2),
            lease(3)
        );
        let ledger = Ledger::parse(json.as_bytes(), Path::new("f"), None).unwrap();
        let seqs: Vec<(&str, u64)> = ledger
            .leases
            .iter()
            .map(|(token, lease)| (token, lease.seq()))
            .collect();
        assert_eq!(seqs, [("a", 2), ("c", 3)]);
    }

    #[test]
    fn ledger_round_trips_and_refuses_another_workspace() {
        let mut l = Ledger::at(Path::new("/w"));
        l.entries.insert(
            RelPath::new("AGENTS.md").unwrap(),
            EntryRecord::Block {
                namespaces: Default::default(),
            },
        );
        let mut lease = lock_lease(1).record();
        lease.paths = vec![RelPath::new("AGENTS.md").unwrap()].into();
        l.leases.insert("t".to_string(), Recorded::new(lease));
        let bytes = l.to_json(Path::new("f")).unwrap();
        assert!(!bytes.contains(&b'\n'));
        assert_eq!(
            Ledger::parse(&bytes, Path::new("f"), Some(&FolderIdentity::made_up())).unwrap(),
            l
        );
        let other = FolderIdentity {
            ino: 3,
            ..FolderIdentity::made_up()
        };
        assert!(Ledger::parse(&bytes, Path::new("f"), Some(&other)).is_err());
    }
}
