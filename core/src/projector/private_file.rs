//! Private files: written in the session's own folder under the state directory, never in the
//! project (Claude's `--system-prompt-file`), and removed with the session. The folder is
//! `sessions/<token>`, derived from the lease token alone.

use crate::error::Result;
use crate::journal::Durability;
use crate::plan::{PrivateFile, RelPath};
use crate::receipts::{FileAction, FileKind, TakenOver};

use super::kind::{Cx, Projection};
use super::locked::session_dir;

/// The kind: a session's private files.
pub(crate) struct PrivateFiles;

impl Projection for PrivateFiles {
    type Planned = [PrivateFile];
    /// The lease token.
    type Recorded<'r> = &'r str;

    fn record(_cx: &mut Cx<'_>, _token: &str, _files: &[PrivateFile]) -> Result<Durability> {
        // The lease names the folder, and need not be on disk before it: a power loss that takes
        // the record leaves a folder no lease names, under the state directory only, and the
        // first command after the restart lists `sessions/` and removes it (the lock file's note
        // of the folder names the boot before; see `locked`). The session died with the machine.
        Ok(Durability::Deferred)
    }

    fn apply(cx: &mut Cx<'_>, token: &str, files: &[PrivateFile]) -> Result<()> {
        if files.is_empty() {
            return Ok(());
        }
        cx.l.state.create_dir(&RelPath::new("sessions")?)?;
        let dir = session_dir(token)?;
        cx.l.state.create_dir(&dir)?;
        for file in files {
            let path = dir.join(&file.name)?;
            cx.l.state
                .write_atomic(&path, file.content.as_bytes(), Some(0o600))?;
            let shown = cx.l.state.display_path(&path).display().to_string();
            cx.report(shown, FileKind::Private, FileAction::Written);
        }
        Ok(())
    }

    fn undo(cx: &mut Cx<'_>, token: &str) -> Result<()> {
        let dir = session_dir(token)?;
        if cx.l.state.remove_tree(&dir)? {
            let shown = cx.l.state.display_path(&dir).display().to_string();
            cx.report(shown, FileKind::Private, FileAction::Removed);
        }
        Ok(())
    }

    fn status(_cx: &Cx<'_>, _token: &str) -> Option<TakenOver> {
        None
    }
}
