//! Fault injection for crash-point enumeration: tests arm a countdown on the current thread, and
//! the k-th mutating operation through `fsio` fails as if the process had died there;
//! every later operation on that thread fails too until [`disarm`] is called.
//!
//! Disarmed (the default), `check` is a thread-local read and nothing else.
//!
//! It also models a power loss for the ledger journal, the one file we write without always
//! syncing: with [`track_durability`] on, every durable write of a journal records the file's
//! image, and [`power_loss`] puts each journal back to that image plus a torn half of what was
//! written after it, as a machine that lost power before the page cache reached the disk would.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

thread_local! {
    /// `None`: disarmed. `Some(n)`: `n` more operations succeed, then the process model dies.
    static COUNTDOWN: Cell<Option<u64>> = const { Cell::new(None) };
    /// How many mutating operations have passed through [`check`] on this thread.
    static SEEN: Cell<u64> = const { Cell::new(0) };
    /// Whether every move between directories takes the cross-file-system (copy) path.
    static CROSS_DEVICE: Cell<bool> = const { Cell::new(false) };
    /// Whether folder exchanges behave as on a file system without `RENAME_EXCHANGE`.
    static NO_EXCHANGE: Cell<bool> = const { Cell::new(false) };
    /// `Some` while the power-loss model tracks durable images: each journal's last synced bytes.
    static DURABLE: RefCell<Option<BTreeMap<PathBuf, Vec<u8>>>> = const { RefCell::new(None) };
    /// How many power losses [`power_loss`] has modelled on this thread: each is a restart of
    /// the machine, which a new boot id tells (see [`restarts`]).
    static RESTARTS: Cell<u64> = const { Cell::new(0) };
}

/// How many restarts of the machine the power-loss model has made on this thread (0 outside it):
/// what reads the boot id to tell a power loss appends it, as a real restart changes the id.
pub(crate) fn restarts() -> u64 {
    RESTARTS.with(Cell::get)
}

/// Starts (clearing what was recorded) or stops recording durable images on this thread.
pub fn track_durability(on: bool) {
    DURABLE.with(|d| *d.borrow_mut() = on.then(BTreeMap::new));
}

/// Whether durable images are being recorded on this thread.
pub(crate) fn tracking_durability() -> bool {
    DURABLE.with(|d| d.borrow().is_some())
}

/// Records that `image` is now the durable content of `path` (when tracking).
pub(crate) fn note_durable(path: &Path, image: Vec<u8>) {
    DURABLE.with(|d| {
        if let Some(images) = d.borrow_mut().as_mut() {
            images.insert(path.to_path_buf(), image);
        }
    });
}

/// Models a power loss: every tracked journal goes back to its last durable image, except that
/// the first half of what was written after it reached the disk (a torn write): half of what
/// was appended, or half of the changed bytes (from the first that differs to the last) when
/// the size is the same. Anything else (an unsynced truncation) goes back to the image exactly.
/// The machine restarts with it: a new boot, which the boot id the sweep of private folders
/// notes tells.
/// Returns the paths changed.
pub fn power_loss() -> Vec<PathBuf> {
    RESTARTS.with(|r| r.set(r.get() + 1));
    let images = DURABLE.with(|d| d.borrow().clone().unwrap_or_default());
    let mut changed = Vec::new();
    for (path, image) in images {
        let Ok(now) = std::fs::read(&path) else {
            continue;
        };
        if now == image {
            continue;
        }
        let mut after = image.clone();
        if let Some(appended) = now.strip_prefix(image.as_slice()) {
            after.extend_from_slice(&appended[..appended.len() / 2]);
        } else if now.len() == image.len() {
            let differs = |i: &usize| now[*i] != image[*i];
            if let (Some(first), Some(last)) =
                ((0..now.len()).find(differs), (0..now.len()).rfind(differs))
            {
                let torn_end = first + (last + 1 - first) / 2;
                after[first..torn_end].copy_from_slice(&now[first..torn_end]);
            }
        }
        if std::fs::write(&path, &after).is_ok() {
            changed.push(path);
        }
    }
    changed
}

/// Makes every `Root::exchange` on this thread report that the file system cannot
/// exchange, so tests cover the two-rename fallback.
pub fn force_no_exchange(on: bool) {
    NO_EXCHANGE.with(|c| c.set(on));
}

/// Whether [`force_no_exchange`] is on for this thread.
pub(crate) fn exchange_disabled() -> bool {
    NO_EXCHANGE.with(Cell::get)
}

/// Makes every `tree::move_tree` on this thread behave as if its two ends were on
/// different file systems (copy, rename into place, remove), so tests cover that path on one file
/// system.
pub fn force_cross_device(on: bool) {
    CROSS_DEVICE.with(|c| c.set(on));
}

/// Whether [`force_cross_device`] is on for this thread.
pub(crate) fn cross_device_forced() -> bool {
    CROSS_DEVICE.with(Cell::get)
}

/// Lets `operations` more mutating operations succeed on this thread, then fails every one after.
pub fn arm(operations: u64) {
    COUNTDOWN.with(|c| c.set(Some(operations)));
}

/// Turns fault injection off on this thread.
pub fn disarm() {
    COUNTDOWN.with(|c| c.set(None));
}

/// Resets the operation counter and returns what it was.
pub fn take_seen() -> u64 {
    SEEN.with(|s| s.replace(0))
}

/// Whether the armed countdown has run out (the process model is "dead").
pub fn crashed() -> bool {
    COUNTDOWN.with(|c| c.get() == Some(0))
}

/// Called by every mutating operation before it acts.
pub(crate) fn check(operation: &'static str, path: &Path) -> Result<()> {
    SEEN.with(|s| s.set(s.get() + 1));
    COUNTDOWN.with(|c| match c.get() {
        None => Ok(()),
        Some(0) => Err(Error::io(
            path,
            operation,
            std::io::Error::other("injected crash: the process model stopped here"),
        )),
        Some(n) => {
            c.set(Some(n - 1));
            Ok(())
        }
    })
}
