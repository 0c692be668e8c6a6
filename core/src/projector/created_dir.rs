//! Directories we create on the way to a projected path: recorded before they are made, removed
//! by the last session that needs them, and only while they are empty (a directory the user put
//! files in is theirs now, and stays).

use crate::error::{Error, Result};
use crate::journal::Durability;
use crate::plan::RelPath;
use crate::provider::EntryKind;
use crate::receipts::{FileAction, FileKind, TakenOver};

use super::kind::{Cx, Projection};

/// The kind: directories created on the way to the plan's paths.
pub(crate) struct CreatedDirs;

impl Projection for CreatedDirs {
    /// Every path the plan projects.
    type Planned = [RelPath];
    type Recorded<'r> = &'r RelPath;

    fn record(cx: &mut Cx<'_>, _token: &str, paths: &[RelPath]) -> Result<Durability> {
        let mut durability = Durability::Deferred;
        for path in paths {
            for dir in path.ancestors() {
                match cx.l.root.kind(&dir) {
                    EntryKind::Missing => {
                        if !cx.out.to_create.contains(&dir) {
                            cx.out.to_create.push(dir.clone());
                        }
                        cx.l.ledger.created_dirs.insert(dir);
                        durability = Durability::Durable;
                    }
                    EntryKind::Dir => {}
                    EntryKind::Symlink => {
                        return Err(Error::Symlink {
                            path: cx.l.root.display_path(&dir),
                            detail: "a directory on the way to the target is a symlink".into(),
                        });
                    }
                    EntryKind::File | EntryKind::Other => {
                        return Err(Error::Unsafe {
                            path: cx.l.root.display_path(&dir),
                            reason: "a file stands where a directory is needed".into(),
                        });
                    }
                }
            }
        }
        Ok(durability)
    }

    fn apply(cx: &mut Cx<'_>, _token: &str, _paths: &[RelPath]) -> Result<()> {
        for dir in std::mem::take(&mut cx.out.to_create) {
            if cx.l.root.create_dir(&dir)? {
                cx.report(&dir, FileKind::Dir, FileAction::Created);
            }
        }
        Ok(())
    }

    /// Removes the created directory `dir` when no entry needs it and it is empty; it is
    /// forgotten either way once no entry needs it (removed, gone, or the user's now).
    fn undo(cx: &mut Cx<'_>, dir: &RelPath) -> Result<()> {
        let prefix = format!("{dir}/");
        let needed =
            cx.l.ledger
                .entries
                .keys()
                .any(|p| p.as_str().starts_with(&prefix));
        if needed {
            return Ok(());
        }
        if cx.l.root.remove_dir_if_empty(dir)? {
            cx.report(dir, FileKind::Dir, FileAction::Removed);
        }
        cx.l.ledger.created_dirs.remove(dir);
        Ok(())
    }

    fn status(_cx: &Cx<'_>, _dir: &RelPath) -> Option<TakenOver> {
        None
    }
}
