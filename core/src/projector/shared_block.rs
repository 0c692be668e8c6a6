//! The session block in a shared file (AGENTS.md, `.pi/APPEND_SYSTEM.md`): counted across
//! sessions, refreshed by each start, taken out by the last release (see [`crate::block`] for
//! the bytes).
//!
//! One block, one text: live sessions with different texts share it, and the block holds the
//! newest start's. Each lease records the text it put there (`LeaseRecord::block_texts`), so a
//! start warns when live sessions with other texts share the block (naming the newest three by
//! token, counting the rest), and when the session whose text the block holds ends, the block is
//! given the text of the newest live session sharing it back (unless the user took the block out
//! of the file).
//!
//! Every session text the block may hold from us is recorded before it is written: a start's
//! text listed durably ([`Ledger::block_bodies`]); a text given back listed too, but not synced,
//! since it is the text of a live session, recorded by its lease (`LeaseRecord::block_texts`),
//! which every record keeps from that session's start to its end. A refresh or a release
//! compares the block's body with the texts listed before it (never with the text about to be
//! written, which the block does not hold yet): lines that are not ours (the user's, written
//! inside the block while a session ran) move out of the block to just before where its BEGIN
//! line was, and are reported as kept in place. When no listed text is in the block whole (a
//! power loss took the record listing the text given back, and with the machine, the session
//! whose text it is), the newest text of a session this command released that is in it whole
//! counts as ours too; a cleanup that must wait lists those texts for the block.
//! A block no ledger lists a text for (one whose record was lost with the
//! state directory) counts as ours whole: its markers prove it ours, and nothing tells its lines
//! apart.
//!
//! [`Ledger::block_bodies`]: crate::ledger::Ledger::block_bodies

use std::collections::BTreeSet;

use crate::block::stream::{self, Scanned, StreamScan};
use crate::error::{Error, Result};
use crate::fsio::OpenFile;
use crate::guidance::MAX_SINGLE_FILE_BYTES;
use crate::journal::Durability;
use crate::ledger::EntryRecord;
use crate::plan::{BlockProjection, RelPath};
use crate::receipts::{FileAction, FileKind, TakenOver};

use super::delivery::Written;
use super::kind::{Arrival, Cx, Entry, Projection};

/// The kind: a marked block in a shared file.
pub(crate) struct SharedBlock;

/// How many session texts the ledger lists per block at most (a run of interrupted writes).
const REMEMBERED: usize = 4;

/// How many of the live sessions sharing a block with other texts a start's warning names (the
/// newest); the rest are counted.
const NAMED_SHARERS: usize = 3;

const KEPT_REASON: &str = "lines written inside the session block are not ours: they were kept in place, where the block was";

impl SharedBlock {
    /// The texts the block in `path` may hold from us; `None` when none is listed.
    fn ours(cx: &Cx<'_>, path: &RelPath) -> Option<Vec<String>> {
        cx.l.ledger
            .block_bodies
            .get(path)
            .and_then(|by_ns| by_ns.get(cx.ns.as_str()))
            .filter(|bodies| !bodies.is_empty())
            .cloned()
    }

    /// The texts the sessions this command released had put in the block in `path` (of this
    /// namespace), the last released first.
    fn released_texts<'c>(cx: &'c Cx<'_>, path: &'c RelPath) -> impl Iterator<Item = &'c str> + 'c {
        let ns = cx.ns.as_str();
        cx.l.released_texts
            .iter()
            .rev()
            .filter(move |(p, n, _)| p == path && n == ns)
            .map(|(_, _, text)| text.as_str())
    }

    /// The texts of ours the block body `body` in `path` is compared with, given the texts
    /// `listed` for it: those, and when none of them is in the body whole, the text of the
    /// newest session this command released (dead ones, after a power loss) that put one there
    /// and is in it whole, other than `writing`, the text about to be written (the block does
    /// not hold it yet: lines equal to it are the user's). `None` (the block counts as ours
    /// whole) when nothing is listed.
    fn recognized(
        cx: &Cx<'_>,
        path: &RelPath,
        body: &[u8],
        listed: Option<Vec<String>>,
        writing: Option<&str>,
    ) -> Option<Vec<String>> {
        let mut ours = listed?;
        if ours
            .iter()
            .any(|text| crate::block::holds_whole(body, text))
        {
            return Some(ours);
        }
        let released = Self::released_texts(cx, path);
        // Each distinct text compared once, and at most `DIFF_BUDGET` line comparisons in all
        // (however many sessions shared the block): past it, the listed texts alone.
        let body_lines = body.split(|&b| b == b'\n').count();
        let mut tried: BTreeSet<&str> = ours.iter().map(String::as_str).chain(writing).collect();
        let mut spent = 0usize;
        let held = released
            .filter(|text| tried.insert(text))
            .take_while(|text| {
                spent = spent.saturating_add(text.lines().count().saturating_mul(body_lines));
                spent <= crate::block::DIFF_BUDGET
            })
            .find(|text| crate::block::holds_whole(body, text));
        if let Some(text) = held {
            ours.insert(0, text.to_string());
        }
        Some(ours)
    }

    /// Takes our block out of `path` (the user's lines in it stay). For a recorded entry, and
    /// for a file the ledger lists that no entry records (see `strip_stale`). When it cannot, the
    /// texts of the sessions this command released that had put theirs there are listed for the
    /// block: the next start, which retries, no longer has their leases to tell their lines by.
    pub fn take_out(cx: &mut Cx<'_>, path: &RelPath) -> Result<bool> {
        let taken = Self::take_out_now(cx, path);
        if taken.is_err() {
            let released: Vec<String> =
                Self::released_texts(cx, path).map(str::to_string).collect();
            let ns = cx.ns.as_str().to_string();
            if let Some(bodies) =
                cx.l.ledger
                    .block_bodies
                    .get_mut(path)
                    .and_then(|by_ns| by_ns.get_mut(&ns))
            {
                for text in released {
                    if !bodies.contains(&text) {
                        bodies.push(text);
                    }
                }
            }
        }
        taken
    }

    fn take_out_now(cx: &mut Cx<'_>, path: &RelPath) -> Result<bool> {
        let Some(file) = scan(cx, path)? else {
            return Ok(false);
        };
        let ours = Self::recognized(cx, path, &file.scanned.body, Self::ours(cx, path), None);
        let ours: Option<Vec<&str>> = ours
            .as_ref()
            .map(|b| b.iter().map(String::as_str).collect());
        let Some(removed) = stream::plan_remove(&file.scanned, &file.scanned.body, ours.as_deref())
        else {
            // No block: this command's start may put one in, and need not read the file again.
            let key = (path.clone(), cx.ns.as_str().to_string());
            cx.l.scans.insert(key, file);
            return Ok(false);
        };
        cx.rewrote(path);
        if removed.now_empty {
            cx.l.root.remove_file(path)?;
            cx.report(path, FileKind::Block, FileAction::Removed);
        } else {
            cx.l.root
                .splice_atomic(path, &file.file, &removed.pieces, None)?;
            cx.report(path, FileKind::Block, FileAction::Restored);
        }
        cx.l.retire(file.file);
        if removed.kept_lines > 0 {
            cx.kept_in_place(path, KEPT_REASON);
        }
        Ok(true)
    }
}

/// The bytes a scan reads at a time: the most of a file held at once.
const CHUNK: usize = 256 * 1024;

/// A file scanned for a namespace's block, still open: what its rewrite copies from, so a large
/// file is neither held whole nor read twice (see [`crate::block::stream`]).
#[derive(Debug)]
pub(crate) struct ScannedFile {
    file: OpenFile,
    scanned: Scanned,
    /// The bytes scanned, when the command keeps what it writes for its delivery verdict and
    /// the file is one the verdict would read (see `delivery`): the file is still read once.
    bytes: Option<Vec<u8>>,
}

impl ScannedFile {
    /// What the file holds once `pieces` (of this scan) are written, as the verdict keeps it;
    /// `None` when the scanned bytes were not kept and the file is small enough to be read.
    fn after(&mut self, pieces: Option<&[stream::Piece]>) -> Option<Written> {
        let bytes = self
            .bytes
            .take()
            .filter(|bytes| bytes.len() == self.scanned.len);
        match (pieces, bytes) {
            (None, Some(bytes)) => Some(Written::Bytes(bytes)),
            (Some(pieces), Some(bytes)) => Some(Written::of(stream::apply_owned(pieces, bytes))),
            (pieces, None) => {
                let len = pieces.map_or(self.scanned.len as u64, stream::length);
                (len > MAX_SINGLE_FILE_BYTES).then_some(Written::Size(len))
            }
        }
    }
}

/// Whether `cx`'s namespace's block in `path` was put after text without a final newline (see
/// [`crate::ledger::Ledger::block_joined`]).
pub(crate) fn joined(cx: &Cx<'_>, path: &RelPath) -> bool {
    cx.l.ledger
        .block_joined
        .get(path)
        .is_some_and(|namespaces| namespaces.contains(cx.ns.as_str()))
}

/// The marker lines of `cx`'s namespace's block in `path`: `#` comments in git's exclude file,
/// HTML comments elsewhere; joined or not (see [`joined`]).
fn markers_for(cx: &Cx<'_>, path: &RelPath) -> crate::block::Markers {
    let markers = if super::git_exclude::is_exclude(path) {
        crate::block::Markers::for_git_exclude(cx.ns)
    } else {
        cx.markers.clone()
    };
    markers.with_joined(joined(cx, path))
}

/// Records whether `cx`'s namespace's block in `path` is `joined`; whether that changed.
pub(crate) fn set_joined(cx: &mut Cx<'_>, path: &RelPath, joined: bool) -> bool {
    let ns = cx.ns.as_str();
    let joined_ns = &mut cx.l.ledger.block_joined;
    let changed = match joined {
        true => joined_ns
            .entry(path.clone())
            .or_default()
            .insert(ns.to_string()),
        false => joined_ns
            .get_mut(path)
            .is_some_and(|namespaces| namespaces.remove(ns)),
    };
    joined_ns.retain(|_, namespaces| !namespaces.is_empty());
    changed
}

/// Scans `path` for the block of `cx`'s namespace, a chunk at a time (`None`: no file). A scan
/// this command already made of the file is taken again while the file is as it was then.
fn scan(cx: &mut Cx<'_>, path: &RelPath) -> Result<Option<ScannedFile>> {
    let key = (path.clone(), cx.ns.as_str().to_string());
    if let Some(earlier) = cx.l.scans.remove(&key)
        && cx.l.root.file_state(path) == Some(earlier.file.state())
    {
        return Ok(Some(earlier));
    }
    let Some(file) = cx.l.root.open_file(path)? else {
        return Ok(None);
    };
    let markers = markers_for(cx, path);
    let mut scan = StreamScan::new(&markers);
    let mut buf = vec![0u8; CHUNK.min(file.len() + 1)];
    let cap = usize::try_from(MAX_SINGLE_FILE_BYTES).unwrap_or(usize::MAX);
    let mut kept =
        (cx.l.written.is_some() && file.len() <= cap).then(|| Vec::with_capacity(file.len()));
    let mut at = 0;
    loop {
        let n = file
            .read_at(at, &mut buf)
            .map_err(|e| Error::io(cx.l.root.display_path(path), "read", e))?;
        if n == 0 {
            break;
        }
        scan.feed(&buf[..n]).map_err(|e| cx.malformed(path, e))?;
        // A file that grew past what the verdict reads while it was read is not kept.
        kept = kept.filter(|kept| kept.len() + n <= cap);
        if let Some(kept) = kept.as_mut() {
            kept.extend_from_slice(&buf[..n]);
        }
        at += n;
    }
    let scanned = scan.finish().map_err(|e| cx.malformed(path, e))?;
    Ok(Some(ScannedFile {
        file,
        scanned,
        bytes: kept,
    }))
}

impl SharedBlock {
    /// The live sessions of this namespace holding the block in `path`, each with its order
    /// (`seq`, start time, token: no two alike) and its texts, not yet read; one walk of the
    /// leases, nothing collected.
    fn live_sessions<'c>(
        cx: &'c Cx<'_>,
        path: &'c RelPath,
    ) -> impl Iterator<Item = ((u64, u64, &'c str), &'c crate::ledger::BlockTexts)> + 'c {
        let recorded = cx.l.ledger.entries.contains_key(path);
        let ns = cx.ns.as_str();
        recorded
            .then(|| crate::ledger::leases_holding(&cx.l.ledger.leases, path))
            .into_iter()
            .flatten()
            .filter(move |(_, lease)| lease.namespace() == ns)
            .map(|(token, lease)| {
                (
                    (lease.seq(), lease.acquired_at(), token),
                    lease.block_texts(),
                )
            })
    }

    /// After a session ends: the block in `path` holds the text of a live session again (the
    /// newest one sharing it), unless it does already, it is gone from the file (the user took
    /// it out), or no live session's text is known. The text is listed first, unsynced: that
    /// session's lease records it in every record since its start (see the module's doc). Lines
    /// the user wrote inside the block stay, as at every refresh.
    fn give_back(cx: &mut Cx<'_>, path: &RelPath) -> Result<()> {
        let (token, text) = {
            let listed = Self::ours(cx, path).unwrap_or_default();
            let only_listed = match listed.as_slice() {
                [only] => Some(only.as_str()),
                _ => None,
            };
            // The newest live session with a text here: most often the newest of all, found in
            // one walk that keeps nothing but it (each start puts its own text in, each end gives
            // the newest back); else the sessions are collected, sorted newest first and their
            // texts read in that order.
            let newest_of_all = Self::live_sessions(cx, path)
                .max_by(|a, b| a.0.cmp(&b.0))
                .and_then(|((_, _, token), texts)| Some((token, texts.get(path)?)));
            let mut sessions = Vec::new();
            let newest = match newest_of_all {
                Some(found) => Some(found),
                None => {
                    sessions.extend(Self::live_sessions(cx, path));
                    sessions.sort_unstable_by(|a, b| b.0.cmp(&a.0));
                    sessions
                        .iter()
                        .find_map(|((_, _, token), texts)| Some((*token, texts.get(path)?)))
                }
            };
            let Some((token, text)) = newest else {
                return Ok(());
            };
            // Any live session's text in the block will do: it is left as it is (the sessions
            // walked again only when the listed text is not the newest one's).
            let held = |listed: &str| {
                listed == text
                    || Self::live_sessions(cx, path)
                        .any(|(_, texts)| texts.text_is(path, listed) == Some(true))
            };
            if only_listed.is_some_and(held) {
                return Ok(());
            }
            (token.to_string(), text.to_string())
        };
        let Some(file) = scan(cx, path)? else {
            return Ok(());
        };
        if file.scanned.block.is_none() {
            return Ok(());
        }
        // The write below takes this scan again (the file is as it was), not a second read.
        cx.l.scans
            .insert((path.clone(), cx.ns.as_str().to_string()), file);
        // Listed first, not synced: a crash mid-write leaves a block we know; a power loss, one
        // the dead session's lease tells (see the module's doc). The write compares the block
        // with what was listed before.
        let bodies =
            cx.l.ledger
                .block_bodies
                .entry(path.clone())
                .or_default()
                .entry(cx.ns.as_str().to_string())
                .or_default();
        let before = bodies.clone();
        bodies.retain(|b| *b != text);
        bodies.insert(0, text.clone());
        bodies.truncate(REMEMBERED);
        cx.out.listed_before.insert(path.clone(), before);
        cx.save(Durability::Deferred)?;
        let block = BlockProjection {
            path: path.clone(),
            body: text,
        };
        Self::apply(cx, &token, &block)
    }

    /// Warns, for each block and each file written whole of `token`'s plan (`shared`: each
    /// path with the text or content this session puts there), when live sessions of this
    /// namespace put another there: it holds this session's now, for every CLI started from here
    /// on (and the newest of them gets theirs back when this one ends).
    pub fn warn_shared(cx: &mut Cx<'_>, token: &str, shared: &[(&RelPath, &str)]) {
        // Git's exclude block holds the newest session's patterns by design.
        // A file left as the user edited it does not hold this session's content either.
        let left: Vec<String> = cx
            .out
            .files
            .iter()
            .filter(|f| f.action == FileAction::Kept)
            .map(|f| f.path.clone())
            .collect();
        for &(path, text) in shared.iter().filter(|(path, _)| {
            !super::git_exclude::is_exclude(path) && !left.iter().any(|l| l == path.as_str())
        }) {
            // Sessions that share their texts share the answer: asked once per run of them.
            let mut last: Option<(&crate::ledger::BlockTexts, bool)> = None;
            let mut others: Vec<(u64, u64, &str)> = Self::live_sessions(cx, path)
                .filter(|((_, _, other), texts)| {
                    if *other == token {
                        return false;
                    }
                    match last {
                        Some((seen, another)) if seen.same_as(texts) => another,
                        _ => {
                            let another = texts.text_is(path, text) == Some(false);
                            last = Some((texts, another));
                            another
                        }
                    }
                })
                .map(|(order, _)| order)
                .collect();
            if others.is_empty() {
                continue;
            }
            // The newest first, and at most a few by name: the warning stays one line however
            // many sessions share the block. Only the few named are put in order.
            let count = others.len();
            if count > NAMED_SHARERS {
                others.select_nth_unstable_by(NAMED_SHARERS, |a, b| b.cmp(a));
                others.truncate(NAMED_SHARERS);
            }
            others.sort_unstable_by(|a, b| b.cmp(a));
            let named: Vec<&str> = others
                .iter()
                .take(NAMED_SHARERS)
                .map(|(_, _, other)| *other)
                .collect();
            let more = match count.saturating_sub(NAMED_SHARERS) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let message = match cx.l.ledger.entries.get(path) {
                Some(EntryRecord::Block { .. }) => format!(
                    "live sessions {}{more} share this block with another session text: it holds this session's text now, so a CLI started for them from here on reads this text, not theirs (when this session ends, the newest of them gets its text back); give a workspace one session text, or each session a route of its own (`run --runtime-root`)",
                    named.join(", ")
                ),
                _ => format!(
                    "live sessions {}{more} share this file with other content: it holds this session's now, so a CLI started for them from here on reads this, not theirs (when this session ends, the newest of them gets its content back); give a workspace one session definition, or each session a route of its own (`run --runtime-root`)",
                    named.join(", ")
                ),
            };
            cx.warn(cx.shown(path), message);
        }
    }
}

impl Projection for SharedBlock {
    type Planned = BlockProjection;
    type Recorded<'r> = Entry<'r>;

    fn record(cx: &mut Cx<'_>, _token: &str, block: &BlockProjection) -> Result<Durability> {
        let ledger = &mut cx.l.ledger;
        let path = &block.path;
        let listed = ledger.block_files.contains(path);
        if !ledger.entries.contains_key(path) {
            cx.out.unapplied.insert(path.clone());
        }
        let entry = ledger
            .entries
            .entry(path.clone())
            .or_insert_with(|| EntryRecord::Block {
                namespaces: Default::default(),
            });
        let EntryRecord::Block { namespaces } = entry else {
            return Err(two_kinds(path));
        };
        let inserting = namespaces.insert(cx.ns.as_str().to_string());
        ledger.block_files.insert(path.clone());
        let bodies = ledger
            .block_bodies
            .entry(path.clone())
            .or_default()
            .entry(cx.ns.as_str().to_string())
            .or_default();
        if bodies.is_empty() {
            cx.out
                .arrivals
                .insert(path.clone(), Arrival::UnrecordedBlock);
        }
        let unchanged = bodies.len() == 1 && bodies[0] == block.body;
        if !unchanged {
            // What the block may hold before this start's write: what its write compares with.
            cx.out.listed_before.insert(path.clone(), bodies.clone());
            bodies.retain(|b| *b != block.body);
            bodies.insert(0, block.body.clone());
            bodies.truncate(REMEMBERED);
        }
        // A block put after text without a final newline: recorded before it is written, so
        // the line end it adds is taken out with it whatever becomes of the record.
        let joined_changed = inserting && {
            // A file already holding our block (a lost ledger's) ends in it: the workspace's
            // record of what sessions made says whether its line end was ours.
            let joined = !cx.l.root.ends_line(path)? || super::made::is_joined(cx, path)?;
            set_joined(cx, path, joined)
        };
        // A text not yet listed durably must be before it is written (see `journal`); in a
        // file not yet listed, so must the file.
        Ok(if listed && unchanged && !joined_changed {
            Durability::Deferred
        } else {
            Durability::Durable
        })
    }

    fn apply(cx: &mut Cx<'_>, _token: &str, block: &BlockProjection) -> Result<()> {
        let path = &block.path;
        let mut current = scan(cx, path)?;
        let scanned = current.as_ref().map(|c| &c.scanned);
        let body = scanned.map_or(&[][..], |s| s.body.as_slice());
        // The texts listed before this start listed its own (a user's line equal to a line of
        // the text being written is the user's), else those listed now.
        let listed = cx
            .out
            .listed_before
            .remove(path)
            .filter(|before| !before.is_empty())
            .or_else(|| Self::ours(cx, path));
        let ours = match cx.out.arrivals.get(path) {
            Some(Arrival::UnrecordedBlock) => None,
            _ => Self::recognized(cx, path, body, listed, Some(&block.body)),
        };
        let ours: Option<Vec<&str>> = ours
            .as_ref()
            .map(|b| b.iter().map(String::as_str).collect());
        let markers = markers_for(cx, path);
        let upserted = stream::plan_upsert(&markers, scanned, body, &block.body, ours.as_deref())
            .map_err(|e| cx.malformed(path, e))?;
        let created = current.is_none();
        let written = match (&upserted.pieces, &mut current) {
            (None, None) => None,
            (pieces, Some(current)) => {
                if let Some(pieces) = pieces {
                    cx.l.root.splice_atomic(path, &current.file, pieces, None)?;
                }
                current.after(pieces.as_deref())
            }
            (Some(pieces), None) => {
                let bytes = stream::apply(pieces, b"");
                cx.l.root.write_atomic(path, &bytes, None)?;
                Some(Written::of(bytes))
            }
        };
        // The file replaced stays open until the lock is let go (see `Locked::retire`).
        if let Some(current) = current.filter(|_| upserted.pieces.is_some()) {
            cx.l.retire(current.file);
        }
        match written {
            Some(written) => cx.wrote(path, || written),
            None => cx.rewrote(path),
        }
        // The block holds this text alone now.
        if let Some(bodies) =
            cx.l.ledger
                .block_bodies
                .get_mut(path)
                .and_then(|by_ns| by_ns.get_mut(cx.ns.as_str()))
        {
            *bodies = vec![block.body.clone()];
        }
        cx.out.unapplied.remove(path);
        // The file changed between the record and the write (a user's edit): what the insertion
        // says wins, recorded at once.
        if upserted.action == crate::block::UpsertAction::Inserted
            && set_joined(cx, path, upserted.joined)
        {
            cx.save(Durability::Durable)?;
        }
        let action = match upserted.action {
            crate::block::UpsertAction::Inserted if created => FileAction::Created,
            crate::block::UpsertAction::Inserted => FileAction::Inserted,
            crate::block::UpsertAction::Refreshed => FileAction::Refreshed,
            crate::block::UpsertAction::Unchanged => FileAction::Unchanged,
        };
        cx.report(path, FileKind::Block, action);
        if upserted.kept_lines > 0 {
            cx.kept_in_place(path, KEPT_REASON);
        }
        Ok(())
    }

    fn undo(cx: &mut Cx<'_>, entry: Entry<'_>) -> Result<()> {
        let EntryRecord::Block { namespaces, .. } = entry.record else {
            return Ok(());
        };
        for ns in namespaces.clone() {
            cx.in_namespace(&ns, |cx| Self::take_out(cx, entry.path))?;
        }
        Ok(())
    }

    fn status(_cx: &Cx<'_>, _entry: Entry<'_>) -> Option<TakenOver> {
        None
    }
}

/// The distinct namespaces of a block's live holders, noted lease by lease: each copied once,
/// however many share it. Leases read from one record share their namespace's text, so a lease
/// whose namespace is the very text of the one before it is passed over without comparing.
#[derive(Default)]
pub(crate) struct LiveNamespaces<'a> {
    distinct: Vec<&'a str>,
}

impl<'a> LiveNamespaces<'a> {
    /// Notes the namespace of one live holder.
    pub(crate) fn note(&mut self, ns: &'a str) {
        let same_text = |seen: &&str| std::ptr::eq(*seen, ns);
        if !self.distinct.last().is_some_and(same_text) && !self.distinct.contains(&ns) {
            self.distinct.push(ns);
        }
    }

    /// The namespaces noted.
    pub(crate) fn into_set(self) -> BTreeSet<String> {
        self.distinct.into_iter().map(str::to_string).collect()
    }
}

/// Takes out the block of each namespace of the entry at `path` that no holder of its own
/// namespace is left for (`live`: the namespaces of its live holders), and forgets the entry
/// once no holder and no block is left. Errors are reported as pending undos (the entry stays
/// recorded and is retried at the next start).
pub(crate) fn release_namespaces(cx: &mut Cx<'_>, path: &RelPath, live: BTreeSet<String>) {
    let Some(EntryRecord::Block { namespaces }) = cx.l.ledger.entries.get(path) else {
        return;
    };
    // Every holder has a namespace.
    let no_holder = live.is_empty();
    let namespaces = namespaces.clone();
    let mut left: BTreeSet<String> = namespaces.clone();
    let mut failed = None;
    for ns in namespaces {
        if live.contains(&ns) {
            continue;
        }
        match cx.in_namespace(&ns, |cx| SharedBlock::take_out(cx, path)) {
            Ok(_) => {
                left.remove(&ns);
            }
            Err(e) => failed = Some(e),
        }
    }
    match failed {
        Some(e) => cx.pending(path, &e),
        None => cx.settled(path),
    }
    for ns in &live {
        if let Err(e) = cx.in_namespace(ns, |cx| SharedBlock::give_back(cx, path)) {
            cx.warn(
                cx.shown(path),
                format!("the block could not be given a live session's text back: {e}"),
            );
        }
    }
    if no_holder && left.is_empty() {
        cx.l.ledger.entries.remove(path);
        cx.l.remove_temp_files(path);
    } else if let Some(EntryRecord::Block { namespaces, .. }) = cx.l.ledger.entries.get_mut(path) {
        *namespaces = left;
    }
}

/// The error for a plan that names one path as two kinds of projection.
pub(crate) fn two_kinds(path: &RelPath) -> Error {
    Error::invalid(
        path.to_string(),
        "the plan names this path with two different kinds of projection",
    )
}
