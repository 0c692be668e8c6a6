//! What the workspace's own tests reach inside core for, and nothing else: fault injection and
//! sync counting in the one writing module, the journal's framing, the state directory's layout
//! (workspace keys, the priors folder), the runtime links' low-level steps. Core's I/O modules
//! (`fsio`, `journal`, `ledger`, the projector's internals) are private to core; these re-exports
//! let the conformance suite, the crash-point enumeration, the fuzz targets and the integration
//! tests drive and inspect them from outside.
//!
//! Hidden from the documentation and no part of the API: a host never needs it, and any of it
//! may change in any release.

/// The writing module's internals: fault injection, sync counting, locks, file-system families.
pub mod fsio {
    pub use crate::fsio::{
        FsFamily, FsRole, LOCK_NOTE_LEN, LockGuard, LockNotice, LockWait, TEMP_INFIX,
        bytes_read_on_this_thread, check_file_system, dir_opens_on_this_thread, faults,
        file_system_family, hold_lock, syncs_on_this_thread, with_lock_wait_on_calling_thread,
        with_polled_lock_wait,
    };

    /// Takes the lock on the file `name` in the folder `dir` as the workspace lock is taken
    /// (`Root::lock_file`, no file created): `Ok(None)` when it is absent.
    pub fn lock_file_in(
        dir: &std::path::Path,
        name: &str,
        wait: &LockWait,
    ) -> crate::Result<Option<LockGuard>> {
        crate::fsio::Root::open(dir)?.lock_file(&crate::RelPath::new(name)?, false, wait)
    }

    /// Runtime links' low-level steps and file names.
    pub mod links {
        pub use crate::fsio::links::{
            LAUNCH_LOCK, LINK_RECORD, ensure_link, remove_link, remove_runtime, verify_link,
        };
    }
}

/// The journal's record framing and file names.
pub mod journal {
    pub use crate::journal::{
        COMPACT_RECORDS, DELTA_CHANGES, JOURNAL_FILE, SLOTS_FILE, Scan, TAIL,
        bytes_checked_on_this_thread, check64, frame, read_ledger_json, records_nothing, scan,
    };
}

/// The state directory's layout.
pub mod ledger {
    pub use crate::ledger::{leases_serialised_on_this_thread, workspace_key};
}

/// Where taken-over content waits inside the workspace.
pub mod priors {
    pub use crate::projector::priors::{MANIFEST, dir_name};
}
