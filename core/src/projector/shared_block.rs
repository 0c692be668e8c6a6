//! The session block in a shared file (AGENTS.md, `.pi/APPEND_SYSTEM.md`): counted across
//! sessions, refreshed by each start, taken out by the last release (see [`crate::block`] for
//! the bytes).
//!
//! The ledger lists every session text the block may hold from us ([`Ledger::block_bodies`]),
//! durably before the text is written. A refresh or a release compares the block's body with
//! them: lines that are not ours (the user's, written inside the block while a session ran) move
//! out of the block to just before where its BEGIN line was, and are reported as kept in place.
//! A block no ledger lists a text for (an earlier build's, or one whose record was lost with the
//! state directory) counts as ours whole: its markers prove it ours, and nothing tells its lines
//! apart.
//!
//! [`Ledger::block_bodies`]: crate::ledger::Ledger::block_bodies

use std::collections::BTreeSet;

use crate::block::stream::{self, Scanned, StreamScan};
use crate::error::{Error, Result};
use crate::fsio::OpenFile;
use crate::journal::Durability;
use crate::ledger::EntryRecord;
use crate::plan::{BlockProjection, Namespace, RelPath};
use crate::receipts::{FileAction, FileKind, TakenOver};

use super::kind::{Arrival, Cx, Entry, Projection};

/// The kind: a marked block in a shared file.
pub(crate) struct SharedBlock;

/// How many session texts the ledger lists per block at most (a run of interrupted writes).
const REMEMBERED: usize = 4;

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

    /// Takes our block out of `path` (the user's lines in it stay). For a recorded entry, and
    /// for a file the ledger lists that no entry records (see `strip_stale`).
    pub fn take_out(cx: &mut Cx<'_>, path: &RelPath) -> Result<bool> {
        let Some(file) = scan(cx, path)? else {
            return Ok(false);
        };
        let ours = Self::ours(cx, path);
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
        if removed.now_empty {
            cx.l.root.remove_file(path)?;
            cx.report(path, FileKind::Block, FileAction::Removed);
        } else {
            cx.l.root
                .splice_atomic(path, &file.file, &removed.pieces, None)?;
            cx.report(path, FileKind::Block, FileAction::Restored);
        }
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
    let mut scan = StreamScan::new(cx.markers);
    let mut buf = vec![0u8; CHUNK.min(file.len() + 1)];
    let mut at = 0;
    loop {
        let n = file
            .read_at(at, &mut buf)
            .map_err(|e| Error::io(cx.l.root.display_path(path), "read", e))?;
        if n == 0 {
            break;
        }
        scan.feed(&buf[..n]).map_err(|e| cx.malformed(path, e))?;
        at += n;
    }
    let scanned = scan.finish().map_err(|e| cx.malformed(path, e))?;
    Ok(Some(ScannedFile { file, scanned }))
}

impl Projection for SharedBlock {
    type Planned = BlockProjection;
    type Recorded<'r> = Entry<'r>;

    fn record(cx: &mut Cx<'_>, token: &str, block: &BlockProjection) -> Result<Durability> {
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
                holders: Default::default(),
                namespaces: Default::default(),
            });
        let EntryRecord::Block {
            holders,
            namespaces,
        } = entry
        else {
            return Err(two_kinds(path));
        };
        holders.insert(token.to_string());
        namespaces.insert(cx.ns.as_str().to_string());
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
            bodies.retain(|b| *b != block.body);
            bodies.insert(0, block.body.clone());
            bodies.truncate(REMEMBERED);
        }
        // A text not yet listed durably must be before it is written (see `journal`); in a
        // file not yet listed, so must the file.
        Ok(if listed && unchanged {
            Durability::Deferred
        } else {
            Durability::Durable
        })
    }

    fn apply(cx: &mut Cx<'_>, _token: &str, block: &BlockProjection) -> Result<()> {
        let path = &block.path;
        let current = scan(cx, path)?;
        let ours = match cx.out.arrivals.get(path) {
            Some(Arrival::UnrecordedBlock) => None,
            _ => Self::ours(cx, path),
        };
        let ours: Option<Vec<&str>> = ours
            .as_ref()
            .map(|b| b.iter().map(String::as_str).collect());
        let scanned = current.as_ref().map(|c| &c.scanned);
        let body = scanned.map_or(&[][..], |s| s.body.as_slice());
        let upserted = stream::plan_upsert(cx.markers, scanned, body, &block.body, ours.as_deref())
            .map_err(|e| cx.malformed(path, e))?;
        match (&upserted.pieces, &current) {
            (None, _) => {}
            (Some(pieces), Some(current)) => {
                cx.l.root.splice_atomic(path, &current.file, pieces, None)?;
            }
            (Some(pieces), None) => {
                cx.l.root
                    .write_atomic(path, &stream::apply(pieces, b""), None)?;
            }
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
        let action = match upserted.action {
            crate::block::UpsertAction::Inserted if current.is_none() => FileAction::Created,
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
        for ns in recorded_namespaces(namespaces) {
            cx.in_namespace(&ns, |cx| Self::take_out(cx, entry.path))?;
        }
        Ok(())
    }

    fn status(_cx: &Cx<'_>, _entry: Entry<'_>) -> Option<TakenOver> {
        None
    }
}

/// The namespaces whose block an entry put in its file (ledgers of earlier builds recorded none:
/// the default namespace).
pub(crate) fn recorded_namespaces(namespaces: &BTreeSet<String>) -> Vec<String> {
    if namespaces.is_empty() {
        vec![Namespace::DEFAULT.to_string()]
    } else {
        namespaces.iter().cloned().collect()
    }
}

/// Takes out the block of each namespace of the entry at `path` that no holder of its own
/// namespace is left for, and forgets the entry once no holder and no block is left. Errors are
/// reported as pending undos (the entry stays recorded and is retried at the next start).
pub(crate) fn release_namespaces(cx: &mut Cx<'_>, path: &RelPath) {
    let Some(EntryRecord::Block {
        holders,
        namespaces,
    }) = cx.l.ledger.entries.get(path).cloned()
    else {
        return;
    };
    let live: BTreeSet<String> = holders
        .iter()
        .filter_map(|token| cx.l.ledger.leases.get(token))
        .map(|lease| lease.namespace().to_string())
        .collect();
    let mut left: BTreeSet<String> = recorded_namespaces(&namespaces).into_iter().collect();
    let mut failed = None;
    for ns in recorded_namespaces(&namespaces) {
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
    if holders.is_empty() && left.is_empty() {
        cx.l.ledger.entries.remove(path);
        let _ = cx.l.root.remove_temp_files(path);
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
