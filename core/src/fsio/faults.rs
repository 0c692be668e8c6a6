//! Fault injection for crash-point enumeration: tests arm a countdown on the current thread, and
//! the k-th mutating operation through [`crate::fsio`] fails as if the process had died there;
//! every later operation on that thread fails too until [`disarm`] is called.
//!
//! Disarmed (the default), [`check`] is a thread-local read and nothing else.

use std::cell::Cell;
use std::path::Path;

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
}

/// Makes every [`super::Root::exchange`] on this thread report that the file system cannot
/// exchange, so tests cover the two-rename fallback.
pub fn force_no_exchange(on: bool) {
    NO_EXCHANGE.with(|c| c.set(on));
}

/// Whether [`force_no_exchange`] is on for this thread.
pub(crate) fn exchange_disabled() -> bool {
    NO_EXCHANGE.with(Cell::get)
}

/// Makes every [`super::tree::move_tree`] on this thread behave as if its two ends were on
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
