//! Markers: a file or folder whose presence we create (Cursor's temporary `.git`), only where
//! nothing stands, counted across sessions, and removed by the last session that holds it only
//! while it is still empty (a marker the user filled is theirs now, and stays).

use crate::error::Result;
use crate::journal::Durability;
use crate::ledger::EntryRecord;
use crate::plan::{MarkerKind, MarkerProjection};
use crate::provider::EntryKind;
use crate::receipts::{FileAction, FileKind, TakenOver};

use super::kind::{Cx, Entry, Projection};
use super::shared_block::two_kinds;

/// The kind: an empty file or folder whose presence we create.
pub(crate) struct Marker;

impl Projection for Marker {
    type Planned = MarkerProjection;
    type Recorded<'r> = Entry<'r>;

    fn record(cx: &mut Cx<'_>, _token: &str, marker: &MarkerProjection) -> Result<Durability> {
        let path = &marker.path;
        if let Some(entry) = cx.l.ledger.entries.get_mut(path) {
            if !matches!(entry, EntryRecord::Marker { .. }) {
                return Err(two_kinds(path));
            }
            cx.report(path, FileKind::Marker, FileAction::Held);
            return Ok(Durability::Deferred);
        }
        if cx.l.root.kind(path) != EntryKind::Missing {
            cx.report(path, FileKind::Marker, FileAction::Exists);
            return Ok(Durability::Deferred);
        }
        cx.out.unapplied.insert(path.clone());
        cx.l.ledger.entries.insert(
            path.clone(),
            EntryRecord::Marker {
                marker: marker.kind,
            },
        );
        Ok(Durability::Durable)
    }

    fn apply(cx: &mut Cx<'_>, _token: &str, marker: &MarkerProjection) -> Result<()> {
        if !cx.out.unapplied.contains(&marker.path) {
            return Ok(());
        }
        cx.l.root.create_marker(&marker.path, marker.kind)?;
        cx.out.unapplied.remove(&marker.path);
        cx.report(&marker.path, FileKind::Marker, FileAction::Created);
        Ok(())
    }

    fn undo(cx: &mut Cx<'_>, entry: Entry<'_>) -> Result<()> {
        let EntryRecord::Marker { marker, .. } = entry.record else {
            return Ok(());
        };
        let path = entry.path;
        let removed = match marker {
            MarkerKind::Dir => match cx.l.root.dir_is_empty(path) {
                Some(true) => cx.l.root.remove_dir_if_empty(path)?,
                _ => false,
            },
            MarkerKind::File => match cx.l.root.read(path) {
                Ok(Some(s)) if s.bytes.is_empty() => cx.l.root.remove_file(path)?,
                _ => false,
            },
        };
        let action = if removed {
            FileAction::Removed
        } else {
            FileAction::Kept
        };
        cx.report(path, FileKind::Marker, action);
        Ok(())
    }

    fn status(_cx: &Cx<'_>, _entry: Entry<'_>) -> Option<TakenOver> {
        None
    }
}
