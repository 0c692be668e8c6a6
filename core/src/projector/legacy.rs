//! Prior contents that earlier builds kept under the state directory (`stash/`) rather than in
//! the workspace's priors folder: still put back by the last session and shown by `status`,
//! never written any more.

use crate::error::{Error, Result};
use crate::fsio::FileSnapshot;
use crate::ledger::{OwnedPrior, Stash};
use crate::plan::RelPath;
use crate::receipts::{FileAction, FileKind, PriorState, TakenOver};

use super::kind::Cx;

fn stash_path(stash: &Stash) -> Result<RelPath> {
    Ok(RelPath::new("stash")?.join(&stash.file)?)
}

/// Puts an owned file's stashed prior back at `path`; a user's edit standing there (`ours` is
/// `Some(false)`) is set aside first.
pub(crate) fn restore_owned(
    cx: &mut Cx<'_>,
    path: &RelPath,
    stash: &Stash,
    ours: Option<bool>,
    current: Option<FileSnapshot>,
) -> Result<()> {
    let stashed = stash_path(stash)?;
    let Some(prior) = cx.l.state.read(&stashed)? else {
        return Err(Error::Ledger {
            path: cx.l.state.display_path(&stashed),
            reason: "the stashed prior content is missing; the file is left as it is".into(),
        });
    };
    let already_back = current.as_ref().is_some_and(|s| s.bytes == prior.bytes);
    if let (Some(false), Some(snapshot), false) = (ours, &current, already_back) {
        cx.set_aside(
            path,
            &snapshot.bytes,
            "the file was edited during the session; the project's prior content was put back",
        )?;
    }
    // The stash itself goes when the ledger that forgets this entry is saved.
    cx.l.root
        .write_atomic(path, &prior.bytes, Some(stash.mode))?;
    cx.report(path, FileKind::Owned, FileAction::Restored);
    Ok(())
}

/// Where an owned file's prior is kept, for `status`.
pub(crate) fn taken_over(cx: &Cx<'_>, path: &RelPath, prior: &OwnedPrior) -> Option<TakenOver> {
    match prior {
        OwnedPrior::Workspace(p) => super::owned_file::prior_state(cx, path, p),
        OwnedPrior::Stash(stash) => Some(TakenOver {
            path: path.clone(),
            stash: cx.l.state.display_path(&stash_path(stash).ok()?),
            state: PriorState::Stashed,
        }),
    }
}
