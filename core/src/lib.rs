//! `projectfile-core`: everything a host needs to project one session's instructions, skills and
//! configuration into a workspace and take them out again without losing a byte of the user's
//! project.
//!
//! The crate is organised by responsibility:
//!
//! - [`plan`] and [`provider`]: the data a provider returns and the trait it implements.
//! - [`block`]: the pure block engine (bytes in, bytes out) for the marked session block.
//! - [`fsio`]: the only module that opens for writing, renames, locks or removes files.
//! - [`holder`]: who keeps a lease alive (a process or a held lock) and whether it still lives.
//! - [`ledger`]: the per-workspace record of leases and what each projected path holds.
//! - [`projector`]: applies plans under the workspace lock: acquire, release, status, strip-stale;
//!   one module per kind of projection (blocks, owned files, markers, skill folders, private
//!   files, created directories) behind one trait and one undo rule.
//! - [`guidance`]: which instruction files are active for a workspace, with a receipt.
//! - [`generated`]: the in-content marker proving generated configuration ours, per format.
//! - [`mcp`]: the MCP servers a session brings, checked, and one helper per route a CLI takes them by.
//! - [`receipts`]: every JSON receipt the commands print, with its schema name.
//! - [`runtime`], [`reader`], [`sandbox`]: private linked runtimes, the reader role, Landlock.
//! - [`error`]: the error type every fallible operation returns.

pub mod block;
pub mod error;
pub mod fsio;
pub mod generated;
pub mod guidance;
pub mod holder;
pub mod journal;
pub mod ledger;
pub mod mcp;
pub mod patterns;
pub mod plan;
pub mod projector;
pub mod provider;
pub mod reader;
pub mod receipts;
pub mod runtime;
pub mod sandbox;

pub use error::{Error, Result};
pub use plan::*;
pub use projector::Projector;
pub use provider::*;
