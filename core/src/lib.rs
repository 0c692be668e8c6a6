//! `projectfile-core`: everything a host needs to project one session's instructions, skills and
//! configuration into a workspace and take them out again without losing a byte of the user's
//! project.
//!
//! The crate is organised by responsibility:
//!
//! - [`plan`], [`provider`], [`patterns`]: the provider contract, re-exported from
//!   `projectfile-provider` (the data a provider returns, the trait it implements, shared plan
//!   shapes), so hosts name everything through this crate.
//! - [`block`]: the pure block engine (bytes in, bytes out) for the marked session block.
//! - `fsio` (private): the only module that opens for writing, renames, locks or removes files.
//! - [`holder`]: who keeps a lease alive (a process or a held lock) and whether it still lives.
//! - `ledger` and `journal` (private): the per-workspace record of leases and what each
//!   projected path holds, and how it is kept.
//! - [`projector`]: applies plans under the workspace lock: acquire, release, status, strip-stale;
//!   one module per kind of projection (blocks, owned files, markers, skill folders, private
//!   files, created directories) behind one trait and one undo rule.
//! - [`guidance`]: which instruction files are active for a workspace, with a receipt.
//! - [`generated`]: the in-content marker proving generated configuration ours, per format.
//! - [`mcp`]: the MCP servers a session brings, checked, and one helper per route a CLI takes them by.
//! - [`receipts`]: every JSON receipt the commands print, with its schema name.
//! - [`runtime`], [`reader`], [`sandbox`]: private linked runtimes, the reader role, Landlock.
//! - [`workspace`]: which folder a workspace is over time (its identity and key), and finding it
//!   again after it moved.
//! - [`error`]: the error type every fallible operation returns.
//!
//! The modules that do I/O on their own terms (`fsio`, `journal`, `ledger`, the projector's
//! internals) are private: a host reaches them only through [`Projector`] and the receipts. The
//! workspace's own tests reach inside through a hidden `testing` module.

// Nothing a host can reach is unnameable: a type of a private module in a public signature is
// re-exported where hosts find it (`runtime::LinkRecord`, `receipts::KeptRecord`, …).
#![warn(unnameable_types)]

pub mod block;
pub mod error;
pub(crate) mod fsio;
pub mod generated;
pub mod guidance;
pub mod holder;
pub(crate) mod journal;
pub(crate) mod ledger;
pub mod projector;
pub mod reader;
pub mod receipts;
pub mod runtime;
pub mod sandbox;
#[doc(hidden)]
pub mod testing;
pub mod workspace;

pub use error::{Error, Result};
pub use projectfile_provider::plan::*;
pub use projectfile_provider::provider::*;
pub use projectfile_provider::{definitions, front_matter, mcp, patterns, plan, provider};
pub use projector::Projector;

/// Declares that this process runs one command and exits, as the `projectfile` CLI does: a wait
/// for a lock blocks the thread that waits, ended by a timer signal (`SIGALRM`, from a timer of
/// that thread's own, handled while the wait lasts), instead of starting a waiter thread. Call
/// it once, first thing; a long-lived host never should.
pub fn one_command_per_process() {
    fsio::wait_on_calling_thread();
}

pub use fsio::{interrupt_lock_waits, resume_lock_waits};
