//! The one trait every kind of projection implements ([`Projection`]: record the intent, apply,
//! undo, report status), the context each step works in ([`Cx`]), and what the steps report
//! ([`Outcome`]).
//!
//! **The undo rule**, shared by every kind: remove or replace only what is provably ours (what the
//! ledger records we wrote, or what our own marker proves); whatever is not (lines the user wrote
//! into our block, a generated file the user edited, a folder without our marker) stays where the
//! user put it and is reported in the receipt's `kept`. Where the project's prior content must
//! come back and the user's edit stands in its way, the prior comes back and the edit is set
//! aside under the state directory, reported with where it went (docs/promises.md, promises 2,
//! 11, 12 and 13).

use std::collections::{BTreeMap, BTreeSet};

use crate::block::Markers;
use crate::error::{Error, Result};
use crate::journal::Durability;
use crate::ledger::{EntryRecord, KeptRecord};
use crate::plan::RelPath;
use crate::provider::Namespace;
use crate::receipts::{
    FileAction, FileKind, FileReceipt, PendingUndo, StaleCleaned, TakenOver, Warning,
};

use super::locked::Locked;

/// What a step of an operation reports, gathered for its receipt.
#[derive(Default)]
pub(crate) struct Outcome {
    pub files: Vec<FileReceipt>,
    pub kept: Vec<KeptRecord>,
    pub warnings: Vec<Warning>,
    pub stale: Vec<StaleCleaned>,
    /// Paths this acquire recorded for the first time and has not applied yet.
    pub unapplied: BTreeSet<RelPath>,
    /// What stood at a path recorded for the first time, for the receipt's action.
    pub arrivals: BTreeMap<RelPath, Arrival>,
    /// Directories this acquire recorded and is to create.
    pub to_create: Vec<RelPath>,
    /// Undos that could not be done (the entry stays recorded and is retried at the next start).
    pub pending: Vec<PendingUndo>,
    /// The session texts a block's file had listed before this start listed its own, by file:
    /// what the block may hold until this start writes it.
    pub listed_before: BTreeMap<RelPath, Vec<String>>,
}

impl Outcome {
    /// Adds a warning about `path` to the receipt.
    pub fn warn(&mut self, path: impl ToString, message: impl Into<String>) {
        self.warnings.push(Warning {
            path: path.to_string(),
            message: message.into(),
        });
    }
}

/// What stood at a path when a session first recorded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// Nothing.
    Absent,
    /// A leftover of ours whose record was lost, proven ours by its own marker.
    Reclaimed,
    /// The project's own, taken over (kept in the priors folder until the last session ends).
    TakenOver,
    /// A block of ours no ledger records (a lost state directory's, or a power loss's):
    /// its whole body counts as ours.
    UnrecordedBlock,
}

/// One operation's view of a locked workspace: its files, its ledger, the namespace, and what
/// it reports.
pub(crate) struct Cx<'a> {
    pub l: &'a mut Locked,
    pub ns: &'a Namespace,
    pub markers: &'a Markers,
    pub out: &'a mut Outcome,
}

impl Cx<'_> {
    /// Keeps what `path` holds now that this command wrote it (asked only when kept), for the
    /// delivery verdict (see `delivery`).
    pub fn wrote(&mut self, path: &RelPath, written: impl FnOnce() -> super::delivery::Written) {
        if let Some(kept) = self.l.written.as_mut() {
            kept.insert(path.clone(), written());
        }
    }

    /// Forgets what was kept of `path`: this command changed it again.
    pub fn rewrote(&mut self, path: &RelPath) {
        if let Some(written) = self.l.written.as_mut() {
            written.remove(path);
        }
    }

    /// Reports what happened to `path`.
    pub fn report(&mut self, path: impl ToString, kind: FileKind, action: FileAction) {
        self.out.files.push(FileReceipt {
            path: path.to_string(),
            kind,
            action,
        });
    }

    /// Reports a problem that did not stop the operation.
    pub fn warn(&mut self, path: impl ToString, message: impl Into<String>) {
        self.out.warn(path, message);
    }

    /// The absolute path of `rel` in the workspace, for messages.
    pub fn shown(&self, rel: &RelPath) -> String {
        self.l.root.display_path(rel).display().to_string()
    }

    /// Reports that what stands at `path` is the user's now and stays where the user put it.
    pub fn kept_in_place(&mut self, path: &RelPath, reason: &str) {
        let record = KeptRecord {
            path: path.clone(),
            kept_at: self.l.root.display_path(path),
            reason: reason.to_string(),
        };
        self.out.kept.push(record);
    }

    /// Sets `bytes` (the user's, standing at `path`) aside under the state directory's `kept/`,
    /// and records where they went.
    pub fn set_aside(&mut self, path: &RelPath, bytes: &[u8], reason: &str) -> Result<()> {
        let record = self.l.keep_aside(path, bytes, reason)?;
        self.keep(record);
        Ok(())
    }

    /// Records bytes set aside under the state directory (for the receipt and `status`).
    pub fn keep(&mut self, record: KeptRecord) {
        self.out.kept.push(record.clone());
        self.l.ledger.kept.push(record);
    }

    /// Saves the ledger.
    pub fn save(&self, durability: Durability) -> Result<()> {
        self.l.save(durability)
    }

    /// Records that undoing `path` failed for `error`: reported as pending, kept in the ledger
    /// (for `status`) until an undo succeeds.
    pub fn pending(&mut self, path: &RelPath, error: &Error) {
        let reason = error.to_string();
        let shown = self.shown(path);
        self.out.pending.retain(|p| p.path != shown);
        self.out.warnings.retain(|w| w.path != shown);
        self.out.pending.push(PendingUndo {
            path: shown.clone(),
            reason: reason.clone(),
        });
        // Also a warning, for readers of the receipt that know no `pending`.
        self.warn(shown, reason.clone());
        self.l.ledger.pending.insert(path.clone(), reason);
    }

    /// Records that `path` has nothing left to undo.
    pub fn settled(&mut self, path: &RelPath) {
        self.l.ledger.pending.remove(path);
    }

    /// Runs `f` in the namespace `ns` (one a record names, whatever namespace the command was
    /// given); a name that is not a valid namespace falls back to the default one.
    pub fn in_namespace<R>(&mut self, ns: &str, f: impl FnOnce(&mut Cx<'_>) -> R) -> R {
        if ns == self.ns.as_str() {
            // The command's own, which most records name: its markers, not made again.
            let mut inner = Cx {
                l: &mut *self.l,
                ns: self.ns,
                markers: self.markers,
                out: &mut *self.out,
            };
            return f(&mut inner);
        }
        let namespace = Namespace::new(ns).unwrap_or_default();
        let markers = Markers::new(&namespace);
        let mut inner = Cx {
            l: &mut *self.l,
            ns: &namespace,
            markers: &markers,
            out: &mut *self.out,
        };
        f(&mut inner)
    }

    /// Turns a block-engine refusal about `path` into an error naming the file and line.
    pub fn malformed(&self, path: &RelPath, e: crate::block::BlockError) -> Error {
        Error::Malformed {
            path: self.l.root.display_path(path),
            line: e.line,
            reason: e.reason,
        }
    }
}

/// One kind of projection, from the plan to the ledger to the workspace and back.
///
/// An acquire first calls [`Projection::record`] for every planned item (the ledger names
/// everything before the workspace is touched; the records are saved, durably when any item
/// asks for it), then [`Projection::apply`] for each. A release calls [`Projection::undo`] for
/// every record no live lease holds any more, by the undo rule above; `status` asks
/// [`Projection::status`].
pub(crate) trait Projection {
    /// What a plan asks for.
    type Planned: ?Sized;
    /// What the ledger records for it.
    type Recorded<'r>;

    /// Records the intent in the ledger (nothing in the workspace is touched). Returns whether
    /// the record must reach the disk before the workspace is touched.
    fn record(cx: &mut Cx<'_>, token: &str, planned: &Self::Planned) -> Result<Durability>;

    /// Applies it, reporting what it did. The ledger already names it.
    fn apply(cx: &mut Cx<'_>, token: &str, planned: &Self::Planned) -> Result<()>;

    /// Takes it out after its last holder is gone, by the undo rule.
    fn undo(cx: &mut Cx<'_>, recorded: Self::Recorded<'_>) -> Result<()>;

    /// Where the prior content it took over is kept, if it took any over.
    fn status(cx: &Cx<'_>, recorded: Self::Recorded<'_>) -> Option<TakenOver>;
}

/// A ledger entry and its path, as the entry kinds record it.
#[derive(Clone, Copy)]
pub(crate) struct Entry<'e> {
    pub path: &'e RelPath,
    pub record: &'e EntryRecord,
}

/// The stricter of two durabilities.
pub(crate) fn stricter(a: Durability, b: Durability) -> Durability {
    if a == Durability::Durable || b == Durability::Durable {
        Durability::Durable
    } else {
        Durability::Deferred
    }
}
