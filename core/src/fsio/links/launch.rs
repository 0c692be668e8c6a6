//! One launch in a runtime: the launch lock, the link record, and the reconciliation that leaves
//! the runtime holding exactly the links this launch asked for.
//!
//! # The launch lock
//!
//! The runtime directory itself is locked (`flock`, exclusive, close-on-exec so the CLI does not
//! inherit it) for the whole launch, and by removal, so a launch never has its links changed
//! under it and a runtime in use is never removed; `<runtime>/.projectfile-launch.lock` only
//! names the holder (see [`lock_launch`]). A killed launch drops it with its last descriptor.
//!
//! # How "we made this link" is proven
//!
//! `<runtime>/.projectfile-links.json` lists `(slot, target)` pairs: the links a launch created
//! (`project`, `output`, `attached/<name>`). Before a link is created its pair is written to the
//! record durably (temp file, `fsync`, `rename`, `fsync` of the runtime), so a crash at any point
//! leaves every link of ours named in the record. A link counts as ours only when the record names
//! its slot **and** the link on disk is a symlink whose text is exactly the recorded target; a
//! file, a directory, or a link with any other text is not ours, whatever the record says. The
//! record is read without following a link, size-bounded, and a damaged record proves nothing.
//!
//! The record lives in the runtime, which the CLI can write, so the CLI can forge it. What a
//! forged record buys is only this: that the next launch unlinks a symlink in the runtime instead
//! of refusing. Unlinking a symlink never touches its target, and the CLI could remove that link
//! itself, so trusting the record for this one decision gives nothing away. Nothing is ever
//! followed, replaced or deleted on the record's word alone.
//!
//! # Reconciliation
//!
//! For every slot that matters (`project`, `output`, each entry of `attached/`, each wanted or
//! recorded slot) the launch decides, before changing anything: keep (exactly the wanted link is
//! there, and recorded), create (free), replace or remove (ours, not wanted as it is), or refuse (anything we
//! did not make where one of our links goes). One refusal fails the launch with nothing changed.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, OsStr};
use std::io::{Read as _, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{self as rfs, AtFlags, FileType, FlockOperation, Mode, OFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use super::{Found, Levels, LinkRecord, canonical_dir, check_component, io, unsafe_at};
use crate::error::{Error, Result};

/// The launch lock inside a runtime.
pub const LAUNCH_LOCK: &str = ".projectfile-launch.lock";
/// The record of the links a launch made, inside a runtime.
pub const LINK_RECORD: &str = ".projectfile-links.json";
/// The folder of the attached-folder links inside a runtime.
pub const ATTACHED_DIR: &str = "attached";
/// Top-level link slots checked at every launch, wanted or not.
pub const RESERVED_SLOTS: [&str; 2] = ["project", "output"];

/// The largest link record read back; a bigger one is damaged.
const RECORD_MAX: u64 = 1 << 20;
/// How often a waiting launch retries the lock.
const LOCK_POLL: Duration = Duration::from_millis(25);

/// A held launch lock; dropping it releases the lock.
#[derive(Debug)]
pub struct LaunchLock {
    /// The runtime directory, opened for the lock: the lock is on it.
    _dir: OwnedFd,
    /// The file naming the holder.
    _holder: OwnedFd,
}

/// Takes the launch lock of the open runtime `dir` (at `path`), waiting at most `wait`.
///
/// The lock is an exclusive `flock` on the runtime directory itself, through an open file
/// description of its own: a lock file can be unlinked by anything that writes the runtime (the
/// CLI a launch runs, in its working directory), and a launch after that would lock a new file
/// while the first one still ran; the directory cannot be taken away while it holds anything.
/// The file [`LAUNCH_LOCK`] beside it only names the holder (our pid, for a waiting launch's
/// message); it is opened without following a link and must be a regular file. A wait that runs
/// out is [`Error::Busy`].
pub fn lock_launch(dir: impl AsFd, path: &Path, wait: Duration) -> Result<LaunchLock> {
    let lock_path = path.join(LAUNCH_LOCK);
    let flags =
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let holder = match rfs::openat(&dir, LAUNCH_LOCK, flags, Mode::from_raw_mode(0o600)) {
        Ok(fd) => fd,
        Err(Errno::LOOP) => {
            return Err(unsafe_at(
                &lock_path,
                "the launch lock is a symlink; refusing to follow it",
            ));
        }
        Err(errno) => return Err(io(&lock_path, "open the launch lock", errno)),
    };
    let st = rfs::fstat(&holder).map_err(|e| io(&lock_path, "inspect the launch lock", e))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(unsafe_at(
            &lock_path,
            "the launch lock is not a regular file; refusing to use it",
        ));
    }
    let locked = rfs::openat(
        &dir,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io(path, "open the runtime to lock it", e))?;
    let started = Instant::now();
    loop {
        match rfs::flock(&locked, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => break,
            Err(Errno::WOULDBLOCK) if crate::fsio::lock_waits_interrupted() => {
                return Err(Error::Busy {
                    path: path.to_path_buf(),
                    reason: "the wait for another launch to finish was given up (a signal \
                             arrived); nothing was changed"
                        .to_string(),
                });
            }
            Err(Errno::WOULDBLOCK) if started.elapsed() < wait => std::thread::sleep(LOCK_POLL),
            Err(Errno::WOULDBLOCK) => {
                let holder = read_holder(&holder)
                    .map(|pid| format!(" (pid {pid})"))
                    .unwrap_or_default();
                return Err(Error::Busy {
                    path: path.to_path_buf(),
                    reason: format!(
                        "another launch{holder} is using this runtime (waited {} s for its \
                         launch lock); try again when it has finished",
                        wait.as_secs()
                    ),
                });
            }
            Err(errno) => return Err(io(path, "lock the runtime", errno)),
        }
    }
    let pid = std::process::id().to_string();
    // The pid is only a hint for messages: a failure to write it changes nothing.
    if rfs::ftruncate(&holder, 0).is_ok() {
        let _ = rustix::io::pwrite(&holder, pid.as_bytes(), 0);
    }
    Ok(LaunchLock {
        _dir: locked,
        _holder: holder,
    })
}

fn read_holder(fd: &OwnedFd) -> Option<u32> {
    let mut buf = [0u8; 16];
    let n = rustix::io::pread(fd, &mut buf, 0).ok()?;
    std::str::from_utf8(buf.get(..n)?).ok()?.trim().parse().ok()
}

/// One `(slot, target)` pair of the link record.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct RecordedLink {
    slot: String,
    target: PathBuf,
}

/// The link record's file format.
#[derive(Debug, Default, Serialize, Deserialize)]
struct LinkRecordFile {
    version: u32,
    links: Vec<RecordedLink>,
}

/// Reads the link record of the open runtime `dir`; a missing record is empty, a damaged one
/// (not a regular file, too big, not our JSON) is empty too, with the reason.
fn read_record(dir: impl AsFd, path: &Path) -> (Vec<RecordedLink>, Option<String>) {
    let record_path = path.join(LINK_RECORD);
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let fd = match rfs::openat(&dir, LINK_RECORD, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return (Vec::new(), None),
        Err(errno) => {
            let reason = format!("{} cannot be opened ({errno})", record_path.display());
            return (Vec::new(), Some(reason));
        }
    };
    let regular = rfs::fstat(&fd)
        .map(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
        .unwrap_or(false);
    if !regular {
        let reason = format!("{} is not a regular file", record_path.display());
        return (Vec::new(), Some(reason));
    }
    let mut bytes = Vec::new();
    let read = std::fs::File::from(fd)
        .take(RECORD_MAX + 1)
        .read_to_end(&mut bytes);
    let parsed = match read {
        Ok(_) if bytes.len() as u64 > RECORD_MAX => Err("it is too big".to_string()),
        Ok(_) => serde_json::from_slice::<LinkRecordFile>(&bytes).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    match parsed {
        Ok(file) if file.version == 1 => (file.links, None),
        Ok(file) => {
            let reason = format!(
                "{} has unknown version {}",
                record_path.display(),
                file.version
            );
            (Vec::new(), Some(reason))
        }
        Err(e) => (
            Vec::new(),
            Some(format!("{} is damaged ({e})", record_path.display())),
        ),
    }
}

/// Writes the link record of the open runtime `dir` durably: a temporary file, `fsync`,
/// `rename` over the record, `fsync` of the runtime directory.
fn write_record(dir: impl AsFd, path: &Path, links: &[RecordedLink]) -> Result<()> {
    let record_path = path.join(LINK_RECORD);
    let mut links = links.to_vec();
    links.sort();
    links.dedup();
    let bytes = serde_json::to_vec_pretty(&LinkRecordFile { version: 1, links })
        .map_err(|e| unsafe_at(&record_path, format!("cannot encode the link record: {e}")))?;
    let temp = format!("{LINK_RECORD}.tmp");
    // A leftover of a crashed write (or anything planted there) is only a name to clear.
    match rfs::unlinkat(&dir, temp.as_str(), AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => {}
        Err(errno) => return Err(io(&path.join(&temp), "clear the temporary record", errno)),
    }
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rfs::openat(&dir, temp.as_str(), flags, Mode::from_raw_mode(0o600))
        .map_err(|e| io(&path.join(&temp), "create the link record", e))?;
    let mut file = std::fs::File::from(fd);
    file.write_all(&bytes)
        .map_err(|e| Error::io(&record_path, "write the link record", e))?;
    crate::fsio::sync(&file).map_err(|e| io(&record_path, "fsync the link record", e))?;
    rfs::renameat(&dir, temp.as_str(), &dir, LINK_RECORD)
        .map_err(|e| io(&record_path, "replace the link record", e))?;
    crate::fsio::sync(&dir).map_err(|e| io(path, "fsync the runtime directory", e))
}

/// One link a launch wants: `slot` is `project`, `output` or `attached/<name>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WantedLink {
    /// Where the link goes, relative to the runtime.
    pub slot: String,
    /// The folder it links (canonicalised and checked here).
    pub target: PathBuf,
}

/// What reconciliation does to one slot.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    /// Exactly the wanted link is there.
    Keep,
    /// The slot is free: create the wanted link.
    Create,
    /// Our link with another target is there: unlink it, then create the wanted one.
    Replace(PathBuf),
    /// Our link is there and this launch does not want one: unlink it.
    Remove(PathBuf),
    /// Nothing is there and nothing is wanted.
    Nothing,
}

/// A slot split into the folder it lives in (`None`: the runtime itself) and its name.
fn split_slot(slot: &str) -> (Option<&str>, &str) {
    match slot.split_once('/') {
        Some((folder, name)) => (Some(folder), name),
        None => (None, slot),
    }
}

/// The open runtime directory and, when it exists, its open `attached/` folder.
struct Folders<'a> {
    runtime: &'a Levels,
    attached: Option<OwnedFd>,
}

impl Folders<'_> {
    fn fd_of(&self, folder: Option<&str>) -> Option<std::os::fd::BorrowedFd<'_>> {
        match folder {
            None => Some(self.runtime.fd()),
            Some(_) => self.attached.as_ref().map(AsFd::as_fd),
        }
    }

    fn path_of(&self, slot: &str) -> PathBuf {
        self.runtime.path().join(slot)
    }

    /// What is at `slot` now.
    fn look(&self, slot: &str) -> Result<Found> {
        let (folder, name) = split_slot(slot);
        let Some(fd) = self.fd_of(folder) else {
            return Ok(Found::Nothing);
        };
        let cname = check_component(self.runtime.path(), OsStr::new(name))?;
        super::what_is_at(fd, &cname, &self.path_of(slot))
    }

    /// Unlinks `slot` when it is still the symlink with text `expected` (re-checked right
    /// before: the name is only ever removed as a link, never followed).
    fn unlink_ours(&self, slot: &str, expected: &Path) -> Result<()> {
        let (folder, name) = split_slot(slot);
        let Some(fd) = self.fd_of(folder) else {
            return Ok(());
        };
        let dir = match folder {
            Some(folder) => self.runtime.path().join(folder),
            None => self.runtime.path().to_path_buf(),
        };
        super::remove_link_in(fd, &dir, name, expected).map(|_| ())
    }
}

/// Opens `attached/` in the runtime without following a link; `Ok(None)` when absent, and with
/// `create` it is made (mode 0700) first. Anything but a directory there is refused.
fn open_attached(runtime: &Levels, create: bool) -> Result<Option<OwnedFd>> {
    let path = runtime.path().join(ATTACHED_DIR);
    let name = check_component(runtime.path(), OsStr::new(ATTACHED_DIR))?;
    if create {
        match rfs::mkdirat(runtime.fd(), name.as_c_str(), Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(errno) => return Err(io(&path, "create the attached folder", errno)),
        }
    }
    super::open_dir_opt(runtime.fd(), &name, &path)
}

/// The names inside the open `attached/` folder.
fn attached_entries(attached: &OwnedFd, path: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let reader = rfs::Dir::read_from(attached).map_err(|e| io(path, "read directory", e))?;
    for entry in reader {
        let entry = entry.map_err(|e| io(path, "read directory", e))?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        match std::str::from_utf8(name) {
            Ok(name) => names.push(format!("{ATTACHED_DIR}/{name}")),
            // We never make such a name: whatever it is, it is not ours.
            Err(_) => {
                return Err(unsafe_at(
                    &path.join(OsStr::from_bytes(name)),
                    "found an entry projectfile did not make (its name is not UTF-8); refusing \
                     to follow, replace or remove it. Remove it yourself, or remove the whole \
                     runtime with `projectfile remove-runtime`",
                ));
            }
        }
    }
    Ok(names)
}

/// Decides the step for one slot, or the reason it fails the launch.
fn decide(
    found: &Found,
    wanted: Option<&Path>,
    recorded: &[PathBuf],
) -> std::result::Result<Step, ()> {
    match (found, wanted) {
        (Found::Nothing, Some(_)) => Ok(Step::Create),
        (Found::Nothing, None) => Ok(Step::Nothing),
        // Exactly the wanted link, and ours: the record names it (a link is recorded before it
        // is made, so every link of ours is). The same text unrecorded is someone else's.
        (Found::Link(text), Some(target)) if text == target && recorded.contains(text) => {
            Ok(Step::Keep)
        }
        (Found::Link(text), Some(_)) if recorded.contains(text) => Ok(Step::Replace(text.clone())),
        (Found::Link(text), None) if recorded.contains(text) => Ok(Step::Remove(text.clone())),
        _ => Err(()),
    }
}

fn foreign(path: &Path, found: &Found, wanted: Option<&Path>, damaged: Option<&str>) -> Error {
    let wanted = match wanted {
        Some(target) => format!("this launch links {} here", target.display()),
        None => "this launch links nothing here".to_string(),
    };
    let record = match damaged {
        Some(reason) => format!(" (the link record proves nothing: {reason})"),
        None => String::new(),
    };
    unsafe_at(
        path,
        format!(
            "found {} that projectfile did not make{record} ({wanted}); refusing to follow, \
             replace or remove it. Remove it yourself, or remove the whole runtime with \
             `projectfile remove-runtime`",
            found.describe()
        ),
    )
}

/// Leaves the open runtime `runtime` holding exactly the `wanted` links (see the module docs):
/// decides every slot first and fails with nothing changed when one holds something we did not
/// make; then records, removes, creates and verifies. Returns the verified links in `wanted`
/// order. Call with the launch lock held.
pub fn reconcile(runtime: &Levels, wanted: &[WantedLink]) -> Result<Vec<LinkRecord>> {
    let mut targets: BTreeMap<&str, PathBuf> = BTreeMap::new();
    for link in wanted {
        let (folder, name) = split_slot(&link.slot);
        check_component(runtime.path(), OsStr::new(name))?;
        if folder.is_some_and(|f| f != ATTACHED_DIR) || (folder.is_none() && name == ATTACHED_DIR) {
            return Err(Error::invalid(
                link.slot.clone(),
                "not a runtime link slot (project, output or attached/<name>)",
            ));
        }
        targets.insert(&link.slot, canonical_dir(&link.target)?);
    }
    let (record, damaged) = read_record(runtime.fd(), runtime.path());
    let wants_attached = targets.keys().any(|slot| slot.contains('/'));
    let folders = Folders {
        runtime,
        attached: open_attached(runtime, false)?,
    };
    let mut slots: Vec<String> = RESERVED_SLOTS.iter().map(|s| s.to_string()).collect();
    slots.extend(targets.keys().map(|s| s.to_string()));
    slots.extend(record.iter().map(|r| r.slot.clone()));
    if let Some(attached) = &folders.attached {
        slots.extend(attached_entries(
            attached,
            &runtime.path().join(ATTACHED_DIR),
        )?);
    }
    slots.sort();
    slots.dedup();
    let mut plan = Vec::with_capacity(slots.len());
    for slot in slots {
        let found = folders.look(&slot)?;
        let wanted_target = targets.get(slot.as_str()).map(PathBuf::as_path);
        let recorded: Vec<PathBuf> = record
            .iter()
            .filter(|r| r.slot == slot)
            .map(|r| r.target.clone())
            .collect();
        match decide(&found, wanted_target, &recorded) {
            Ok(step) => plan.push((slot, step)),
            Err(()) => {
                return Err(foreign(
                    &folders.path_of(&slot),
                    &found,
                    wanted_target,
                    damaged.as_deref(),
                ));
            }
        }
    }
    apply(folders, wants_attached, &record, &plan, &targets)?;
    let attached = open_attached(runtime, false)?;
    wanted
        .iter()
        .map(|link| {
            let (folder, name) = split_slot(&link.slot);
            let created = plan
                .iter()
                .any(|(slot, step)| slot == &link.slot && step != &Step::Keep);
            let mut verified = match folder {
                None => super::verify_link_in(runtime.fd(), runtime.path(), name, &link.target)?,
                Some(folder) => {
                    let fd = attached
                        .as_ref()
                        .ok_or_else(|| io(&runtime.path().join(folder), "open", Errno::NOENT))?;
                    super::verify_link_in(fd, &runtime.path().join(folder), name, &link.target)?
                }
            };
            verified.created = created;
            Ok(verified)
        })
        .collect()
}

/// Carries out a decided plan: records every link of ours that exists or will exist, durably;
/// removes and replaces ours; creates the wanted ones; syncs; records only the wanted ones.
fn apply(
    mut folders: Folders<'_>,
    wants_attached: bool,
    record: &[RecordedLink],
    plan: &[(String, Step)],
    targets: &BTreeMap<&str, PathBuf>,
) -> Result<()> {
    let runtime = folders.runtime;
    let wanted_pairs: Vec<RecordedLink> = targets
        .iter()
        .map(|(slot, target)| RecordedLink {
            slot: slot.to_string(),
            target: target.clone(),
        })
        .collect();
    let mut during = wanted_pairs.clone();
    for (slot, step) in plan {
        if let Step::Replace(old) | Step::Remove(old) = step {
            during.push(RecordedLink {
                slot: slot.clone(),
                target: old.clone(),
            });
        }
    }
    during.sort();
    during.dedup();
    let mut recorded = record.to_vec();
    recorded.sort();
    recorded.dedup();
    let changes = plan
        .iter()
        .any(|(_, step)| !matches!(step, Step::Keep | Step::Nothing));
    if changes || during != recorded {
        write_record(runtime.fd(), runtime.path(), &during)?;
    }
    if wants_attached && folders.attached.is_none() {
        folders.attached = open_attached(runtime, true)?;
    }
    for (slot, step) in plan {
        match step {
            Step::Remove(old) | Step::Replace(old) => folders.unlink_ours(slot, old)?,
            Step::Keep | Step::Create | Step::Nothing => {}
        }
        if matches!(step, Step::Create | Step::Replace(_))
            && let Some(target) = targets.get(slot.as_str())
        {
            create_link(&folders, slot, target)?;
        }
    }
    if changes {
        if let Some(attached) = &folders.attached {
            crate::fsio::sync(attached)
                .map_err(|e| io(&runtime.path().join(ATTACHED_DIR), "fsync", e))?;
        }
        if during.len() != wanted_pairs.len() {
            write_record(runtime.fd(), runtime.path(), &wanted_pairs)?;
        } else {
            crate::fsio::sync(runtime.fd()).map_err(|e| io(runtime.path(), "fsync", e))?;
        }
    }
    Ok(())
}

fn create_link(folders: &Folders<'_>, slot: &str, target: &Path) -> Result<()> {
    let (folder, name) = split_slot(slot);
    let path = folders.path_of(slot);
    let fd = folders
        .fd_of(folder)
        .ok_or_else(|| io(&path, "open the folder of", Errno::NOENT))?;
    let cname: CString = check_component(folders.runtime.path(), OsStr::new(name))?;
    match rfs::symlinkat(target.as_os_str(), fd, cname.as_c_str()) {
        // Raced by someone else: verification decides whether theirs is exactly ours.
        Ok(()) | Err(Errno::EXIST) => Ok(()),
        Err(errno) => Err(io(&path, "create link", errno)),
    }
}

/// Unlinks every link of ours except those in `keep` (slots), then records only the kept ones,
/// and removes `attached/` when it is left empty. A slot that no longer holds exactly our link
/// is left alone and reported (the next launch refuses it). Call with the launch lock held.
pub fn release_links(runtime: &Levels, keep: &[&str]) -> Result<Vec<String>> {
    let (record, _) = read_record(runtime.fd(), runtime.path());
    let folders = Folders {
        runtime,
        attached: open_attached(runtime, false)?,
    };
    let mut kept = Vec::new();
    let mut leftovers = Vec::new();
    for link in &record {
        if keep.contains(&link.slot.as_str()) {
            kept.push(link.clone());
            continue;
        }
        match folders.look(&link.slot)? {
            Found::Nothing => {}
            Found::Link(text) if text == link.target => {
                folders.unlink_ours(&link.slot, &link.target)?;
            }
            found => leftovers.push(format!(
                "{}: expected our link to {}, found {}; left alone",
                folders.path_of(&link.slot).display(),
                link.target.display(),
                found.describe()
            )),
        }
    }
    if kept.len() != record.len() {
        write_record(runtime.fd(), runtime.path(), &kept)?;
    }
    if folders.attached.is_some() {
        let name = check_component(runtime.path(), OsStr::new(ATTACHED_DIR))?;
        match rfs::unlinkat(runtime.fd(), name.as_c_str(), AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOTEMPTY) | Err(Errno::EXIST) | Err(Errno::NOENT) => {}
            Err(errno) => {
                return Err(io(&runtime.path().join(ATTACHED_DIR), "remove", errno));
            }
        }
    }
    Ok(leftovers)
}

/// Creates (when missing, mode 0700) the private folder `name` directly in the open runtime and
/// returns its path; a symlink or anything but a directory there is refused, never followed.
pub fn private_dir(runtime: &Levels, name: &str) -> Result<PathBuf> {
    let path = runtime.path().join(name);
    let cname: &CStr = &check_component(runtime.path(), OsStr::new(name))?;
    match rfs::mkdirat(runtime.fd(), cname, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(errno) => return Err(io(&path, "create", errno)),
    }
    match super::open_dir_opt(runtime.fd(), cname, &path)? {
        Some(_) => Ok(path),
        None => Err(io(&path, "open", Errno::NOENT)),
    }
}
