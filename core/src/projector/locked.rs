//! One workspace under its lock, with its ledger loaded, and the state-directory layout every
//! path under `<state>/workspaces/<key>/` is derived from.
//!
//! ```text
//! <state>/workspaces/<key>/lock             the workspace lock
//! <state>/workspaces/<key>/ledger.jsonl     the ledger's journal (crate::journal)
//! <state>/workspaces/<key>/ledger.sync      the journal's sync slots (crate::journal)
//! <state>/workspaces/<key>/kept/            user bytes set aside
//! <state>/workspaces/<key>/sessions/<token> one session's private files
//! <state>/paths/<path key>                  which folder (key) a workspace path last named
//! ```
//!
//! Every path removed or walked here is derived from names we generated (the workspace key, a
//! lease token), never read back from a record, and reached through [`Root`]'s no-follow,
//! descriptor-relative I/O from the state directory down: a symlink planted at `workspaces`,
//! at `<key>`, at `sessions` or `kept` is refused or skipped, never followed.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsio::{self, LockGuard, LockWait, Root};
use crate::holder::LivenessCheck;
use crate::journal::{Durability, Journal};
use crate::ledger::{FolderRef, KeptRecord, Ledger, path_key};
use crate::plan::RelPath;
use crate::receipts::Warning;
use crate::workspace::{self, Workspace};

/// The folder of one session's private files.
pub(crate) fn session_dir(token: &str) -> Result<RelPath> {
    Ok(RelPath::new("sessions")?.join(token)?)
}

/// One workspace, locked, with its ledger loaded.
pub(crate) struct Locked {
    pub root: Root,
    /// `<state>/workspaces/<key>`.
    pub state: Root,
    pub ledger: Ledger,
    /// Where the ledger is kept.
    pub journal: Journal,
    /// How many kept records a durable save has recorded (more must be saved durably).
    kept_durable: Cell<usize>,
    /// Files of [`Ledger::block_files`] no entry recorded when the ledger was read: each may
    /// hold a block whose lease's record a power loss took, checked by the next strip.
    pub unrecorded_blocks: Vec<RelPath>,
    /// Warnings about the file systems of the state directory and the workspace.
    pub fs_warnings: Vec<Warning>,
    /// This command's answers on which holders live, each distinct holder asked once.
    pub liveness: LivenessCheck,
    /// Files this command scanned for a namespace's block and left as they were, by path and
    /// namespace: a start that puts its block in takes the scan again instead of reading anew.
    pub scans: std::collections::HashMap<(RelPath, String), super::shared_block::ScannedFile>,
    /// What this command wrote to each file, kept for a start's delivery verdict so it reads
    /// no file again (`None`: no verdict is judged, nothing is kept).
    pub written: Option<std::collections::HashMap<RelPath, super::delivery::Written>>,
    /// The session texts the leases this command released had put in blocks, by file and
    /// namespace, in the order released: a block may still hold one (see `shared_block`).
    pub released_texts: Vec<(RelPath, String, String)>,
    /// What this command already knows needs no sweeping: see [`Swept`].
    swept: std::cell::RefCell<Swept>,
    /// The workspace lock (absent only for a read-only look at a state without a lock file).
    lock: Option<LockGuard>,
    /// Files this command replaced or removed while it had them open, still open: see
    /// [`Locked::retire`]. Closed when this is dropped, after the lock is let go.
    retired: std::cell::RefCell<Vec<fsio::OpenFile>>,
}

/// How many replaced files a command keeps open until its lock is let go; past that, each is
/// closed at once (a command that rewrites hundreds of files keeps its descriptors few).
pub(crate) const RETIRED_MAX: usize = 32;

/// The folders under `<state>/workspaces/<key>/` a save sweeps.
#[derive(Clone, Copy)]
enum StateDir {
    Sessions = 1,
    Kept = 2,
}

impl StateDir {
    fn name(self) -> &'static str {
        match self {
            StateDir::Sessions => "sessions",
            StateDir::Kept => "kept",
        }
    }
}

/// What one command found needs no sweeping, each answer good while the handle it was found
/// through has changed nothing since ([`Root::changes`]).
///
/// Under the workspace lock only this command writes in the workspace's state folder and in the
/// paths it projects, and it writes only through [`Locked::state`] and [`Locked::root`]; an
/// operation through either that could make a directory or leave a temporary file is counted by
/// the handle. So while the count stands:
/// - a state folder found missing (`sessions`, `kept`) is still missing: listing it
///   again would find nothing to sweep;
/// - beside a path already swept of temporary files, none has appeared: ours appear only while
///   we write (a write that fails removes its own; a process killed mid-write is not this one),
///   and writing is counted.
///
/// A change makes every answer of that handle void, and the next sweep looks again.
#[derive(Default)]
struct Swept {
    /// [`StateDir`] bits found missing, with `state.changes()` when they were.
    missing_dirs: (u8, u64),
    /// Paths swept of temporary files, with `root.changes()` when they were.
    temps: (std::collections::HashSet<RelPath>, u64),
    /// Whether `sessions/` holds no folder that no lease names, as this command knows it (see
    /// [`SessionsNote`]): so when the command began, or once its sweep listed the folder and
    /// removed every such one; kept so by the command's own changes, and lost with a private
    /// folder it could not remove.
    sessions_clean: bool,
    /// The note of `sessions/` this command leaves: the one it found, or the folder's as it
    /// swept it; empty when it is not known clean.
    sessions_note: Vec<u8>,
    /// The notes the lock file holds, as this command found or last left them.
    left: LockNotes,
}

/// The lock file's notes: one line for `sessions/` ([`SessionsNote`]), one for the journal
/// ([`Journal::note`]), padded with spaces (a line missing or not read is empty, and matches
/// nothing).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct LockNotes {
    sessions: Vec<u8>,
    journal: Vec<u8>,
}

impl LockNotes {
    fn read(lock: &fsio::LockGuard) -> LockNotes {
        let text = lock.note();
        let mut lines = text.split(|b| *b == b'\n');
        LockNotes {
            sessions: lines.next().unwrap_or_default().to_vec(),
            journal: lines.next().unwrap_or_default().to_vec(),
        }
    }

    /// Leaves these notes in the lock file, in one write.
    fn write(&self, lock: &fsio::LockGuard) -> std::io::Result<()> {
        let mut text = Vec::with_capacity(self.sessions.len() + 1 + self.journal.len());
        text.extend_from_slice(&self.sessions);
        text.push(b'\n');
        text.extend_from_slice(&self.journal);
        lock.set_note(&text)
    }
}

/// What the lock file notes of `sessions/` between commands: `sessions <boot id> <stamp>`, the
/// [`FileState`](fsio::FileState) the folder had when the last command let the lock go with no
/// folder there that no lease names.
///
/// A private folder no lease names is left only by a power loss (a session's folder is removed
/// before the record that ends its lease is written, and made after the record that starts it
/// is written: only a power loss takes a written record, unsynced, and keeps the folder), or by
/// someone else. So a command that finds the note naming this boot and the
/// folder's stamp as it is now knows the folder needs no sweeping, without listing it (with 256
/// sessions, the listing and its lookups cost more than the rest of a command). After a power
/// loss the boot differs; a folder made or removed by anyone since changes the stamp; a note
/// that cannot be read, or the folder replaced, matches nothing: each is listed, as before.
struct SessionsNote;

impl SessionsNote {
    /// The note for `sessions/` with `stamp` in this boot; `None` when the boot id cannot be
    /// read (every command then lists the folder).
    fn text(stamp: Option<fsio::FileState>) -> Option<Vec<u8>> {
        let boot = crate::holder::boot_stamp()?;
        let stamp = stamp.map_or_else(|| "missing".to_string(), |stamp| stamp.to_text());
        Some(format!("sessions {boot} {stamp}").into_bytes())
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        // The lock first: the retired files are closed after it, with the other fields.
        drop(self.lock.take());
    }
}

pub(crate) use crate::workspace::require_utf8;

/// How an operation opens a workspace's state.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Access<'a> {
    /// Acquire and strip-stale: the state directory, lock and ledger are created as needed, for
    /// this workspace.
    Create(&'a Workspace),
    /// Release of `token`: what exists, for the folder the ledger records, found where it was
    /// seen (or at `hint`, a handle on it or a path the host gave), its identity checked;
    /// nothing is created. A folder not found is [`Error::WorkspaceLost`] while `token` is
    /// recorded, and nothing to do (`None`) otherwise.
    Existing {
        token: &'a str,
        hint: Option<&'a Workspace>,
    },
    /// Status: what exists, for this workspace, changing nothing (no directory, lock file or
    /// ledger is created; a lock file that is absent is not waited for).
    ReadOnly(&'a Workspace),
}

/// Remembers under `<state>/paths/<path key>` that `canonical` names the folder whose key is
/// `key`; a warning when it named another folder before (whose record stays where it is,
/// untouched). Called under that folder's lock, so a temporary file beside the note was left by
/// a process killed mid-write, before its rename: the note it was writing did not land, so the
/// next start finds the note differing from its key and clears that file before it writes. A
/// note already right is left as it is without listing `<state>/paths/` (one entry per path
/// ever used), so a start's cost does not grow with the paths this state directory has seen.
pub(crate) fn remember_path(
    state_dir: &Path,
    canonical: &Path,
    key: &str,
) -> Result<Option<Warning>> {
    let base = Root::create_private(state_dir)?;
    let paths = RelPath::new("paths")?;
    let file = paths.join(&path_key(canonical))?;
    let before = base.read(&file)?.map(|s| s.bytes);
    if before.as_deref() == Some(key.as_bytes()) {
        return Ok(None);
    }
    base.remove_temp_files(&file)?;
    // A note, not a record: a power loss may take it, and the next start writes it again.
    base.open_subroot(&paths, true)?;
    base.write_atomic_unsynced(&file, key.as_bytes(), Some(0o600))?;
    let Some(before) = before else {
        return Ok(None);
    };
    // A note that names no key (damaged, or written by hand) named no folder: it is replaced.
    let Some(earlier) = std::str::from_utf8(&before)
        .ok()
        .filter(|k| k.len() == 16 && k.bytes().all(|b| b.is_ascii_hexdigit()))
    else {
        return Ok(None);
    };
    Ok(Some(Warning {
        path: canonical.display().to_string(),
        message: format!(
            "this path named another folder before (its record is {}); that record is kept and not applied here",
            base.display_path(&RelPath::new("workspaces")?.join(earlier)?)
                .display()
        ),
    }))
}

/// What `status` says of the path `canonical` when it named another folder than the one whose
/// key is `key` the last time a start went through it (a deleted and re-created checkout):
/// that folder's record is kept apart and never applied here. Read only.
pub(crate) fn earlier_folder(state_dir: &Path, canonical: &Path, key: &str) -> Option<Warning> {
    let base = Root::open(state_dir).ok()?;
    let file = RelPath::new("paths")
        .ok()?
        .join(&path_key(canonical))
        .ok()?;
    let noted = base.read(&file).ok()??.bytes;
    let earlier = std::str::from_utf8(&noted).ok()?;
    if earlier == key || earlier.len() != 16 || !earlier.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let record = base.display_path(&RelPath::new("workspaces").ok()?.join(earlier).ok()?);
    Some(Warning {
        path: canonical.display().to_string(),
        message: format!(
            "this path named another folder before (deleted, or moved away), whose record is {}: it is kept apart and not applied here",
            record.display()
        ),
    })
}

/// Whether `<state>/paths/<path key>` already says that `canonical` names the folder whose key
/// is `key`: read only, nothing created, no link followed below `state_dir`; `false` when it
/// cannot be read. A start asks before it takes the workspace lock, so a note already right
/// costs the next command waiting for the lock nothing. The note is written only under the lock
/// of the folder it names; a note found right before the lock stays right under it, since only
/// a start that found another folder at this path (holding that folder's lock, not this one's)
/// could write it otherwise, which the lock would not have kept out either.
pub(crate) fn path_noted(state_dir: &Path, canonical: &Path, key: &str) -> bool {
    let Ok(base) = Root::open(state_dir) else {
        return false;
    };
    let Ok(file) = RelPath::new("paths").and_then(|paths| paths.join(&path_key(canonical))) else {
        return false;
    };
    matches!(base.read(&file), Ok(Some(note)) if note.bytes == key.as_bytes())
}

/// `<state>/workspaces/<key>` as a root, reached without following a link below `state_dir`;
/// created when `create`. `Ok(None)` when it does not exist and is not created.
fn open_state(state_dir: &Path, key: &str, create: bool) -> Result<Option<Root>> {
    let base = if create {
        Root::create_private(state_dir)?
    } else {
        match Root::open(state_dir) {
            Ok(root) => root,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(e) => return Err(e),
        }
    };
    base.open_subroot(&RelPath::new("workspaces")?.join(key)?, create)
}

/// The folder `ledger` describes, for a release: `hint` when it is that folder, else found from
/// the path the ledger last saw it at and the paths its leases were acquired through (see
/// [`workspace::locate`]).
fn find_folder(ledger: &Ledger, hint: Option<&Workspace>) -> Option<Workspace> {
    if let Some(hint) = hint
        && hint.identity == ledger.identity
    {
        // A handle kept since the acquire follows the folder: it is where the handle says now.
        let mut found = hint.try_clone().ok()?;
        if let Some(now) = found.current_path() {
            found.path = now;
        }
        return Some(found);
    }
    let mut candidates: Vec<&Path> = vec![&ledger.workspace];
    for (_, lease) in ledger.leases.iter() {
        let path = lease.workspace();
        if !candidates.contains(&path) {
            candidates.push(path);
        }
    }
    workspace::locate(&ledger.identity, &candidates)
}

/// The folder `ledger` describes: the one given (its identity checked as the ledger was read),
/// or, for a release, found from what the ledger recorded (`None`: not found, and the token is
/// not recorded either: nothing to do). The ledger's last-seen path follows it, with a warning
/// when a release found it moved; a folder deleted since its handle was opened is said so.
fn folder_of(
    ledger: &mut Ledger,
    given: Option<&Workspace>,
    access: Access<'_>,
) -> Result<Option<(Workspace, Option<Warning>)>> {
    // Whether a release finds its session recorded: only then is anything released there.
    let mut recorded = true;
    let workspace = match (given, access) {
        (Some(workspace), _) => workspace.try_clone()?,
        (None, Access::Existing { token, hint }) => {
            recorded = ledger.leases.contains_key(token);
            match find_folder(ledger, hint) {
                Some(found) => found,
                None if recorded => return Err(lost(ledger, token, hint)),
                None => return Ok(None),
            }
        }
        (None, _) => return Ok(None),
    };
    let mut moved = None;
    if given.is_none() && workspace.is_deleted() {
        // Removed with everything in it (a folder is removed once empty): nothing of ours is
        // left there, and its path may name another folder now.
        moved = Some(Warning {
            path: workspace.path.display().to_string(),
            message: "the workspace folder was deleted during the session; nothing of the session was left in it".into(),
        });
    } else if ledger.workspace != workspace.path && !matches!(access, Access::ReadOnly(_)) {
        if given.is_none() && recorded {
            moved = Some(Warning {
                path: workspace.path.display().to_string(),
                message: format!(
                    "the workspace folder moved here from {}; the session was released here",
                    ledger.workspace.display()
                ),
            });
        }
        ledger.workspace = workspace.path.clone();
    }
    Ok(Some((workspace, moved)))
}

/// The refusal of a release whose workspace folder cannot be found: where it was last seen,
/// why it is not there, and what to do.
fn lost(ledger: &Ledger, token: &str, hint: Option<&Workspace>) -> Error {
    let seen = &ledger.workspace;
    let there = match Workspace::open(seen) {
        Ok(_) => "the folder there now is another one: deleted and created again?",
        Err(_) => "nothing is there now",
    };
    let given = hint
        .map(|h| format!(", and {} is another folder", h.path.display()))
        .unwrap_or_default();
    Error::WorkspaceLost {
        path: seen.clone(),
        reason: format!(
            "the workspace of session {token} is no longer here ({there}) nor beside it{given}, so nothing was released and its lease stays recorded; if the folder moved, run `projectfile release --token {token} --workspace <its new path>`, or any start or `strip-stale` there cleans it once the session's holder has ended; if it was deleted, nothing of the session is left in it"
        ),
    }
}

impl Locked {
    /// Locks the workspace whose state directory is `key` under `state_dir` (waiting for another
    /// holder at most as `wait` says) and loads its ledger. `Ok(None)` when `access` creates
    /// nothing and nothing is recorded there.
    pub fn open(
        state_dir: &Path,
        key: &str,
        access: Access<'_>,
        wait: &LockWait,
    ) -> Result<Option<Locked>> {
        let state_path = state_dir.join("workspaces").join(key);
        require_utf8(&state_path, "the state directory")?;
        let (create, given) = match access {
            Access::Create(workspace) => (true, Some(workspace)),
            Access::Existing { .. } => (false, None),
            Access::ReadOnly(workspace) => (false, Some(workspace)),
        };
        let folder = given.map(FolderRef::of);
        let Some(state) = open_state(state_dir, key, create)? else {
            return Ok(None);
        };
        // Locks and atomic renames must be real: refuse or warn on remote file systems.
        let mut fs_warnings = Vec::new();
        let mut check = |root: &Root, role| -> Result<bool> {
            let family = fsio::root_file_system_family(root)?;
            if let Some(message) = fsio::apply_policy(family, root.path(), role)? {
                let path = root.path().display().to_string();
                fs_warnings.push(Warning { path, message });
            }
            Ok(family.is_some())
        };
        let remote_state = check(&state, fsio::FsRole::State)?;
        let lock = state.lock_file(&RelPath::new("lock")?, create, wait)?;
        let writes = !matches!(access, Access::ReadOnly(_));
        if lock.is_none() && writes {
            return Ok(None);
        }
        // What the last command left noted (see `SessionsNote` and the journal's note); a
        // read-only command asks nothing of them.
        let notes = match lock.as_ref().filter(|_| writes) {
            Some(lock) => LockNotes::read(lock),
            None => LockNotes::default(),
        };
        let (journal, ledger) = match access {
            Access::ReadOnly(_) => Journal::read(&state, folder, remote_state)?,
            _ => Journal::load_noted(
                &state,
                folder,
                remote_state,
                Some(notes.journal.as_slice()).filter(|note| !note.is_empty()),
            )?,
        };
        let Some(mut ledger) = ledger else {
            return Ok(None);
        };
        // The key is the hash of the folder's identity: a record under it that names another
        // folder was copied or forged, and is never applied (to that folder least of all).
        if ledger.identity.key() != key {
            return Err(Error::Ledger {
                path: state_path.join(crate::journal::JOURNAL_FILE),
                reason: format!(
                    "the record describes another folder (its identity's key is {}, not {key}): it was copied or altered, and nothing was done",
                    ledger.identity.key()
                ),
            });
        }
        let Some((workspace, moved)) = folder_of(&mut ledger, given, access)? else {
            return Ok(None);
        };
        check(&workspace.root, fsio::FsRole::Workspace)?;
        fs_warnings.extend(moved);
        let unrecorded_blocks = ledger
            .block_files
            .iter()
            .filter(|path| !ledger.entries.contains_key(*path))
            .cloned()
            .collect();
        // Before this command changes anything: whether `sessions/` is as the last command left
        // it, swept (see `SessionsNote`). A read-only command sweeps nothing: it asks nothing.
        let mut swept = Swept::default();
        if lock.is_some() && writes {
            let now =
                SessionsNote::text(state.dir_stamp(&RelPath::new(StateDir::Sessions.name())?));
            swept.sessions_clean = now.is_some_and(|now| now == notes.sessions);
            swept.sessions_note = notes.sessions.clone();
            swept.left = notes;
        }
        Ok(Some(Locked {
            root: workspace.root,
            kept_durable: Cell::new(ledger.kept.len()),
            unrecorded_blocks,
            state,
            ledger,
            journal,
            fs_warnings,
            liveness: LivenessCheck::new(),
            scans: Default::default(),
            written: None,
            released_texts: Vec::new(),
            swept: std::cell::RefCell::new(swept),
            lock,
            retired: Default::default(),
        }))
    }

    /// Keeps `file`, which this command has just replaced or removed, open until the workspace
    /// lock is let go. The last close of a replaced file frees its inode and blocks, and that
    /// waits on the file system's writes of the same inode table (the syncs of the write that
    /// replaced it, or another command's): work that need not hold up the next command waiting
    /// for the lock. Past [`RETIRED_MAX`], `file` is closed at once.
    pub fn retire(&self, file: fsio::OpenFile) {
        let mut retired = self.retired.borrow_mut();
        if retired.len() < RETIRED_MAX {
            retired.push(file);
        }
    }

    /// How many replaced files this command keeps open until its lock is let go.
    #[cfg(test)]
    pub fn retired(&self) -> usize {
        self.retired.borrow().len()
    }

    /// Saves the ledger, then sweeps what it no longer names from the state directory.
    pub fn save(&self, durability: Durability) -> Result<()> {
        // Kept bytes must stay findable.
        let durability = if self.ledger.kept.len() > self.kept_durable.get() {
            Durability::Durable
        } else {
            durability
        };
        if let Some(replaced) = self.journal.save(&self.state, &self.ledger, durability)? {
            self.retire(replaced);
        }
        if durability == Durability::Durable {
            self.kept_durable.set(self.ledger.kept.len());
        }
        self.sweep();
        Ok(())
    }

    /// `list` of the state folder `dir`, or `None` without looking when this command found it
    /// missing and has made nothing in the state folder since (see [`Swept`]). A `None` from
    /// `list` is taken to mean missing.
    fn listing(
        &self,
        dir: StateDir,
        list: impl FnOnce(&RelPath) -> Option<Vec<String>>,
    ) -> Option<Vec<String>> {
        let changes = self.state.changes();
        let mut swept = self.swept.borrow_mut();
        if swept.missing_dirs.1 != changes {
            swept.missing_dirs = (0, changes);
        }
        if swept.missing_dirs.0 & dir as u8 != 0 {
            return None;
        }
        let listed = list(&RelPath::new(dir.name()).ok()?);
        if listed.is_none() {
            swept.missing_dirs.0 |= dir as u8;
        }
        listed
    }

    /// Removes our temporary files left beside the workspace path `path` by a crash, unless
    /// this command already did and has written nothing in the workspace since (see [`Swept`]).
    pub fn remove_temp_files(&self, path: &RelPath) {
        let changes = self.root.changes();
        {
            let mut swept = self.swept.borrow_mut();
            if swept.temps.1 != changes {
                swept.temps = (Default::default(), changes);
            }
            if swept.temps.0.contains(path) {
                return;
            }
        }
        // Best effort: a failure is retried at the next sweep.
        if self.root.remove_temp_files(path).is_ok() {
            self.swept.borrow_mut().temps.0.insert(path.clone());
        }
    }

    /// Removes what the saved ledger no longer names under the state directory: our temporary
    /// files in `kept/` (left by a crash mid-write), and the private
    /// directories in `sessions/` no lease names (a power loss can keep one whose removal was
    /// not yet on disk while the release's record was). Runs under the workspace lock right
    /// after a save, so nothing else writes there; best effort, a failure is retried at the
    /// next save. Kept user bytes are never removed.
    fn sweep(&self) {
        let (Ok(kept), Ok(sessions)) = (
            RelPath::new(StateDir::Kept.name()),
            RelPath::new(StateDir::Sessions.name()),
        ) else {
            return;
        };
        self.sweep_sessions(&sessions);
        let temps = self
            .listing(StateDir::Kept, |dir| self.state.file_names(dir))
            .unwrap_or_default()
            .into_iter()
            .filter(|name| name.contains(fsio::TEMP_INFIX));
        for path in temps.filter_map(|name| kept.join(&name).ok()) {
            let _ = self.state.remove_file(&path);
        }
    }

    /// The `sessions/` part of [`Locked::sweep`]: listed only when this command does not know
    /// it clean (see [`SessionsNote`]); then the note is left for the next command, when the
    /// folder is clean and changed since the note was read or written.
    fn sweep_sessions(&self, sessions: &RelPath) {
        if !self.swept.borrow().sessions_clean {
            // An error (a symlink or a file there) is no answer: the next save looks again.
            let session_dirs = self.listing(StateDir::Sessions, |dir| {
                self.state.entry_names(dir).unwrap_or(Some(Vec::new()))
            });
            let mut clean = true;
            for name in session_dirs.unwrap_or_default() {
                if self.ledger.leases.contains_key(&name) {
                    continue;
                }
                let removed = sessions
                    .join(&name)
                    .is_ok_and(|dir| self.state.remove_tree(&dir).is_ok());
                clean &= removed;
            }
            // A symlink or a file in its place is no folder of ours: never listed, never clean.
            clean &= !matches!(
                self.state.kind(sessions),
                crate::provider::EntryKind::Symlink
                    | crate::provider::EntryKind::File
                    | crate::provider::EntryKind::Other
            );
            self.swept.borrow_mut().sessions_clean = clean;
        }
        let mut swept = self.swept.borrow_mut();
        swept.sessions_note = match swept.sessions_clean {
            true => SessionsNote::text(self.state.dir_stamp(sessions)).unwrap_or_default(),
            false => Vec::new(),
        };
        self.leave_notes(&mut swept);
    }

    /// Leaves the lock file's notes for the next command, when they changed: `sessions/` as
    /// this command swept it, and the journal as its last save left it. Best effort: a note not
    /// left makes the next command list the folder, and hash the journal's base.
    fn leave_notes(&self, swept: &mut Swept) {
        let Some(lock) = self.lock.as_ref() else {
            return;
        };
        let notes = LockNotes {
            sessions: swept.sessions_note.clone(),
            journal: self.journal.note(&self.state).unwrap_or_default(),
        };
        if notes != swept.left && notes.write(lock).is_ok() {
            swept.left = notes;
        }
    }

    /// Records that a session's private folder could not be removed: `sessions/` is listed at
    /// the next sweep, and at each command's until its folder is gone.
    pub fn sessions_unswept(&self) {
        self.swept.borrow_mut().sessions_clean = false;
    }

    /// Sets user bytes aside under the state directory's `kept/` and returns the record.
    pub fn keep_aside(&self, path: &RelPath, bytes: &[u8], reason: &str) -> Result<KeptRecord> {
        let file = self.kept_name(path)?;
        self.state.write_atomic(&file, bytes, Some(0o600))?;
        Ok(KeptRecord {
            path: path.clone(),
            kept_at: self.state.display_path(&file),
            reason: reason.to_string(),
        })
    }

    /// A fresh name under `kept/` for what stood at `path` (the folder is created).
    pub fn kept_name(&self, path: &RelPath) -> Result<RelPath> {
        let kept_dir = RelPath::new("kept")?;
        self.state.create_dir(&kept_dir)?;
        Ok(kept_dir.join(&format!(
            "{}-{}.{}",
            super::now_secs(),
            fsio::random_hex(4)?,
            path.as_str().replace('/', "__")
        ))?)
    }

    /// The absolute path of a session's private directory.
    pub fn session_path(&self, token: &str) -> Result<PathBuf> {
        Ok(self.state.display_path(&session_dir(token)?))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::disallowed_methods)]
mod tests {
    use super::*;

    /// How many of this process's descriptors name a file under `dir` that is no longer there.
    fn open_deleted(dir: &Path) -> usize {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
            .filter(|target| {
                let target = target.to_string_lossy();
                target.starts_with(&*dir.to_string_lossy()) && target.ends_with(" (deleted)")
            })
            .count()
    }

    #[test]
    fn a_path_note_is_written_only_when_it_differs_and_clears_a_killed_write_first() {
        const A: &str = "aaaaaaaaaaaaaaaa";
        const B: &str = "bbbbbbbbbbbbbbbb";
        let tmp = tempfile::tempdir().unwrap();
        let state = tmp.path().join("state");
        let folder = Path::new("/some/workspace");
        let note = state.join("paths").join(path_key(folder));
        let left =
            state
                .join("paths")
                .join(format!(".{}{}0123", path_key(folder), fsio::TEMP_INFIX));
        // Before any state directory, no note is taken as there.
        assert!(!path_noted(&state, folder, A));
        // A first start writes the note.
        assert!(remember_path(&state, folder, A).unwrap().is_none());
        assert_eq!(std::fs::read(&note).unwrap(), A.as_bytes());
        assert!(path_noted(&state, folder, A));
        assert!(!path_noted(&state, folder, B));
        // A write killed before its rename leaves its temporary file and the old note.
        std::fs::write(&left, B.as_bytes()).unwrap();
        // The same folder again: nothing to write, nothing listed or touched.
        assert!(remember_path(&state, folder, A).unwrap().is_none());
        assert!(left.exists());
        // Another folder at that path: the leftover goes, the note is written, a warning says so.
        let warning = remember_path(&state, folder, B).unwrap().unwrap();
        assert!(warning.message.contains("named another folder before"));
        assert_eq!(std::fs::read(&note).unwrap(), B.as_bytes());
        assert!(!left.exists());
        // A link planted at `paths` is not followed: the note behind it does not count.
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::rename(state.join("paths"), &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, state.join("paths")).unwrap();
        assert!(elsewhere.join(path_key(folder)).exists());
        assert!(!path_noted(&state, folder, B));
    }

    #[test]
    fn replaced_files_stay_open_until_the_lock_is_let_go() {
        let tmp = tempfile::tempdir().unwrap();
        let workspace = tmp.path().join("ws");
        std::fs::create_dir(&workspace).unwrap();
        let canonical = workspace.canonicalize().unwrap();
        let state_dir = tmp.path().join("state");
        let opened = Workspace::open(&canonical).unwrap();
        let key = opened.key();
        let locked = Locked::open(
            &state_dir,
            &key,
            Access::Create(&opened),
            &LockWait::default(),
        )
        .unwrap()
        .unwrap();
        for n in 0..RETIRED_MAX + 3 {
            let rel = RelPath::new(format!("f{n}.md")).unwrap();
            locked.root.write_atomic(&rel, b"old", None).unwrap();
            let old = locked.root.open_file(&rel).unwrap().unwrap();
            locked.root.write_atomic(&rel, b"new", None).unwrap();
            locked.retire(old);
        }
        // At most RETIRED_MAX are kept; the others were closed at once.
        assert_eq!(locked.retired(), RETIRED_MAX);
        assert_eq!(open_deleted(&canonical), RETIRED_MAX);
        // The lock is held meanwhile (flock: another open of the file conflicts)...
        let lock =
            std::fs::File::open(state_dir.join("workspaces").join(&key).join("lock")).unwrap();
        assert!(lock.try_lock().is_err());
        drop(locked);
        // ...and let go with every replaced file closed.
        assert!(lock.try_lock().is_ok());
        assert_eq!(open_deleted(&canonical), 0);
    }
}
