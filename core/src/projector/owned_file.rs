//! Owned files: a file we write whole (Cursor's rule file, MCP, CLI and hooks configuration, a
//! hook script), counted across sessions, refreshed by each start, and taken out by the last
//! release.
//!
//! What is ours is proven, never assumed: the content the ledger records we last wrote (or were
//! writing when a crash came), or content our in-content marker proves ([`crate::generated`]).
//!
//! - Sessions that share the file (Cursor's rule file of two sessions, Gemini CLI's merged
//!   settings) share it as a block is shared: it holds the newest start's content (each lease
//!   records the content it put there), a start with other content than live sessions' warns,
//!   and when the session whose content it holds ends, the newest live one's comes back.
//! - A project's own file standing there is taken over: moved into the priors folder
//!   ([`super::priors`]) and put back by the last release, mode and all.
//! - A file the user edited during the session is not ours any more. A refresh leaves it as the
//!   user left it (reported). The last release leaves it in place too (reported), unless the
//!   project's prior must come back there: then the prior comes back and the edit is set aside
//!   under the state directory, reported with where it went.

use crate::error::Result;
use crate::generated::{self, Provenance};
use crate::journal::Durability;
use crate::ledger::{EntryRecord, PriorRef};
use crate::plan::{OwnedFileProjection, RelPath};
use crate::receipts::{FileAction, FileKind, PriorState, TakenOver};

use super::delivery::Written;
use super::kind::{Arrival, Cx, Entry, Projection};
use super::priors::{self, PriorKind};
use super::shared_block::two_kinds;

/// The kind: a file written whole.
pub(crate) struct OwnedFile;

/// Whether `bytes` are provably ours: what we last wrote or were writing, or proven by our marker.
fn is_ours(cx: &Cx<'_>, bytes: &[u8], written: &str, writing: Option<&str>) -> bool {
    (!written.is_empty() && bytes == written.as_bytes())
        || writing.is_some_and(|w| bytes == w.as_bytes())
        || generated::provenance(bytes, cx.ns) == Provenance::Proven
}

impl OwnedFile {
    /// After a session ends while others share `path`: when the file holds the content a session
    /// this command released put there (and nothing else: an edit stands), it gets the content of
    /// the newest live session sharing it back, as a shared block gets its text back. That
    /// content is recorded as being written (durably) before it is written.
    pub(crate) fn give_back(cx: &mut Cx<'_>, path: &RelPath) -> Result<()> {
        let Some(EntryRecord::Owned {
            role,
            written,
            written_mode,
            ..
        }) = cx.l.ledger.entries.get(path).cloned()
        else {
            return Ok(());
        };
        let ns = cx.ns.as_str();
        let stamp = |content: &str| generated::stamp(content, path, role, cx.ns);
        let holds_released =
            cx.l.released_texts
                .iter()
                .any(|(p, n, content)| p == path && n == ns && stamp(content) == written);
        if !holds_released {
            return Ok(());
        }
        let newest = crate::ledger::leases_holding(&cx.l.ledger.leases, path)
            .filter(|(_, lease)| lease.namespace() == ns)
            .filter_map(|(token, lease)| {
                let content = lease.block_texts().get(path)?;
                Some(((lease.seq(), lease.acquired_at(), token), content))
            })
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|((_, _, token), content)| (token.to_string(), content.to_string()));
        let Some((token, content)) = newest else {
            return Ok(());
        };
        let stamped = stamp(&content);
        if stamped == written {
            return Ok(());
        }
        // An edit of the user's stands, said once (the last release sets it aside or leaves it).
        if cx
            .l
            .root
            .read(path)?
            .is_some_and(|s| !is_ours(cx, &s.bytes, &written, None))
        {
            cx.kept_in_place(
                path,
                "the file was edited during the session and is not ours any more: the live sessions' content was not given back",
            );
            cx.report(path, FileKind::Owned, FileAction::Kept);
            return Ok(());
        }
        if let Some(EntryRecord::Owned { writing, .. }) = cx.l.ledger.entries.get_mut(path) {
            *writing = Some(stamped);
        }
        cx.save(Durability::Durable)?;
        let owned = OwnedFileProjection {
            path: path.clone(),
            content,
            mode: written_mode,
            role,
        };
        Self::apply(cx, &token, &owned)
    }
}

impl Projection for OwnedFile {
    type Planned = OwnedFileProjection;
    type Recorded<'r> = Entry<'r>;

    fn record(cx: &mut Cx<'_>, _token: &str, owned: &OwnedFileProjection) -> Result<Durability> {
        let path = &owned.path;
        let content = generated::stamp(&owned.content, path, owned.role, cx.ns);
        let current = cx.l.root.read(path)?;
        if let Some(entry) = cx.l.ledger.entries.get_mut(path) {
            let EntryRecord::Owned {
                written, writing, ..
            } = entry
            else {
                return Err(two_kinds(path));
            };
            // A write a crash interrupted may have landed; if the file holds it, it is ours.
            if let Some(interrupted) = writing.take()
                && current
                    .as_ref()
                    .is_some_and(|s| s.bytes == interrupted.as_bytes())
            {
                *written = interrupted;
            }
            *writing = Some(content);
            return Ok(Durability::Durable);
        }
        let (prior, arrival) = match &current {
            None => (None, Arrival::Absent),
            Some(s) if generated::provenance(&s.bytes, cx.ns) == Provenance::Proven => {
                (None, Arrival::Reclaimed)
            }
            Some(_) => (Some(priors::new_ref(cx.ns)?), Arrival::TakenOver),
        };
        cx.out.unapplied.insert(path.clone());
        cx.out.arrivals.insert(path.clone(), arrival);
        cx.l.ledger.entries.insert(
            path.clone(),
            EntryRecord::Owned {
                role: owned.role,
                prior,
                written: String::new(),
                written_mode: None,
                writing: Some(content),
                namespace: cx.ns.as_str().to_string(),
            },
        );
        Ok(Durability::Durable)
    }

    fn apply(cx: &mut Cx<'_>, _token: &str, owned: &OwnedFileProjection) -> Result<()> {
        let path = &owned.path;
        let content = generated::stamp(&owned.content, path, owned.role, cx.ns);
        if let Some(EntryRecord::Owned { prior: Some(p), .. }) = cx.l.ledger.entries.get(path) {
            priors::drop_duplicate(&cx.l.root, p, path)?;
        }
        let current = cx.l.root.read(path)?;
        let Some(EntryRecord::Owned {
            prior,
            written,
            written_mode,
            ..
        }) = cx.l.ledger.entries.get(path).cloned()
        else {
            return Err(two_kinds(path));
        };
        let workspace_prior = prior.clone();
        // A prior not moved yet stands at the path: take it over now (first time, or a start
        // after a crash that came before the move).
        let taking = match (&workspace_prior, &current) {
            (Some(p), Some(_)) if !priors::is_kept(&cx.l.root, p, path) => Some(p.clone()),
            _ => None,
        };
        let action = if let Some(p) = &taking {
            let digest = priors::digest(content.as_bytes());
            priors::take(&cx.l.root, p, path, PriorKind::File, Some(digest))?;
            // Moved: from here on a failed acquire undoes this entry (the prior comes back).
            cx.out.unapplied.remove(path);
            FileAction::Replaced
        } else {
            match (cx.out.arrivals.get(path), &current) {
                (Some(Arrival::Reclaimed), _) => FileAction::Reclaimed,
                (Some(Arrival::Absent), _) => FileAction::Created,
                (_, Some(s))
                    if s.bytes != content.as_bytes() && !is_ours(cx, &s.bytes, &written, None) =>
                {
                    return Self::leave_edited(cx, path);
                }
                (_, Some(s))
                    if s.bytes == content.as_bytes()
                        && written == content
                        && written_mode == owned.mode =>
                {
                    FileAction::Unchanged
                }
                _ => FileAction::Refreshed,
            }
        };
        if action != FileAction::Unchanged {
            if let (Some(p), None) = (&workspace_prior, &taking) {
                priors::note_written(&cx.l.root, p, priors::digest(content.as_bytes()))?;
            }
            if action == FileAction::Refreshed && workspace_prior.is_none() {
                super::made::note_written(cx, path, &content)?;
            }
            // The first write over a prior keeps the prior's mode unless the plan sets one.
            let prior_mode = taking.as_ref().and(current.as_ref()).map(|s| s.mode);
            cx.l.root
                .write_atomic(path, content.as_bytes(), owned.mode.or(prior_mode))?;
        }
        cx.wrote(path, || Written::of(content.as_bytes().to_vec()));
        if let Some(EntryRecord::Owned {
            written,
            written_mode,
            writing,
            ..
        }) = cx.l.ledger.entries.get_mut(path)
        {
            *written = content;
            *written_mode = owned.mode;
            *writing = None;
        }
        cx.out.unapplied.remove(path);
        cx.report(path, FileKind::Owned, action);
        Ok(())
    }

    fn undo(cx: &mut Cx<'_>, entry: Entry<'_>) -> Result<()> {
        let path = entry.path;
        let EntryRecord::Owned {
            prior,
            written,
            writing,
            ..
        } = entry.record
        else {
            return Ok(());
        };
        let current = cx.l.root.read(path)?;
        let ours = current
            .as_ref()
            .map(|s| is_ours(cx, &s.bytes, written, writing.as_deref()));
        match prior {
            Some(p) => Self::restore(cx, path, p, ours, writing.is_none(), current),
            None => match (ours, current) {
                (Some(true), _) => {
                    if cx.l.root.remove_file(path)? {
                        cx.report(path, FileKind::Owned, FileAction::Removed);
                    }
                    Ok(())
                }
                (Some(false), _) => {
                    cx.kept_in_place(
                        path,
                        "the file was edited during the session and is not ours any more: it was left where the user put it",
                    );
                    cx.report(path, FileKind::Owned, FileAction::Kept);
                    Ok(())
                }
                (None, _) => Ok(()),
            },
        }
    }

    fn status(cx: &Cx<'_>, entry: Entry<'_>) -> Option<TakenOver> {
        let EntryRecord::Owned {
            prior: Some(prior), ..
        } = entry.record
        else {
            return None;
        };
        prior_state(cx, entry.path, prior)
    }
}

impl OwnedFile {
    /// A refresh found the user's edit where our file was: it stays, reported.
    fn leave_edited(cx: &mut Cx<'_>, path: &RelPath) -> Result<()> {
        cx.kept_in_place(
            path,
            "the file was edited during the session and is not ours any more: it was not refreshed",
        );
        cx.warn(
            cx.shown(path),
            "edited during the session: left as the user left it, so this session does not get its own content there",
        );
        cx.out.unapplied.remove(path);
        cx.report(path, FileKind::Owned, FileAction::Kept);
        Ok(())
    }

    /// Puts the project's prior back at `path` (what is ours there goes; a user's edit is set
    /// aside), then forgets its folder in the priors folder. `written`: our last write is known
    /// done (no write was under way when the ledger was saved).
    fn restore(
        cx: &mut Cx<'_>,
        path: &RelPath,
        prior: &PriorRef,
        ours: Option<bool>,
        written: bool,
        current: Option<crate::fsio::FileSnapshot>,
    ) -> Result<()> {
        let kept = priors::is_kept(&cx.l.root, prior, path);
        if !kept && written && ours == Some(true) {
            // Our file stands there and its write is known done, so the project's file was moved
            // into the priors folder before it; that copy is gone (`git clean -X` removes ignored
            // folders, the priors folder among them). Nothing can bring it back: say so, and take
            // out what is ours.
            cx.warn(
                cx.shown(path),
                format!(
                    "the project's own file here was kept in {}/ while sessions ran, and that copy was deleted (by `git clean -X`?): it cannot be put back, and the session's file was removed",
                    priors::dir_name(cx.ns)
                ),
            );
            if cx.l.root.remove_file(path)? {
                cx.report(path, FileKind::Owned, FileAction::Removed);
            }
            return priors::forget(&cx.l.root, prior);
        }
        if !kept || priors::drop_duplicate(&cx.l.root, prior, path)? {
            // Never moved (or already put back): what stands there is the project's own.
            return priors::forget(&cx.l.root, prior);
        }
        if let (Some(false), Some(snapshot)) = (ours, &current) {
            cx.set_aside(
                path,
                &snapshot.bytes,
                "the file was edited during the session; the project's prior content was put back",
            )?;
        }
        if current.is_some() {
            cx.l.root.remove_file(path)?;
        }
        priors::put_back(&cx.l.root, prior, path)?;
        priors::forget(&cx.l.root, prior)?;
        cx.report(path, FileKind::Owned, FileAction::Restored);
        Ok(())
    }
}

/// Where a prior is shown for `status`.
fn prior_state(cx: &Cx<'_>, path: &RelPath, prior: &PriorRef) -> Option<TakenOver> {
    let kept = priors::kept_path(prior, path).ok()?;
    Some(TakenOver {
        path: path.clone(),
        stash: cx.l.root.display_path(&kept),
        state: if priors::is_kept(&cx.l.root, prior, path) {
            PriorState::Stashed
        } else {
            PriorState::InPlace
        },
    })
}
