//! The JSON receipts of the `projectfile` commands: every shape and schema name is defined once,
//! in [`projectfile_core::receipts`], and re-exported here; this module adds what needs the
//! providers compiled into this build ([`providers_of_this_build`]).

pub use projectfile_core::receipts::*;

/// `projectfile providers --json`: the providers compiled into this build.
pub fn providers_of_this_build() -> ProvidersReceipt {
    ProvidersReceipt::of(&crate::providers())
}
