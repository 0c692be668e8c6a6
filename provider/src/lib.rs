//! `projectfile-provider`: the contract between a CLI adapter (a *provider*) and the engine that
//! projects its plans (`projectfile-core`).
//!
//! A provider is data plus one pure function. It says what its CLI takes and how the CLI finds
//! instruction files ([`Provider`], [`Capabilities`], [`DiscoveryProfile`]), and, given a
//! [`PlanContext`] (the session's [`SessionRequest`], what core [`Probes`]d, a read-only
//! [`WorkspaceView`]), returns a [`Plan`]: blocks, owned files, markers, skills, private files,
//! launch arguments, every path a validated [`RelPath`] under the destination root, every marker
//! named by the session's [`Namespace`]. It never reads the environment or the file system and
//! never writes anything: core applies the plan. Shapes that more than one provider uses live in
//! [`patterns`]; the MCP servers a session brings, checked, with one helper per route a CLI takes
//! them by, in [`mcp`].
//!
//! Provider crates depend on this crate alone (and on pure helpers such as `serde_json` and
//! `semver`); `cargo xtask tidy` enforces it, and bans `std::env`, `std::fs`, `std::process` and
//! `std::net` in their sources.

pub mod definitions;
pub mod discovery;
pub mod error;
pub mod front_matter;
pub mod mcp;
pub mod patterns;
pub mod plan;
pub mod provider;
pub mod spec;

pub use discovery::{
    BUDGET_BYTES_PLACEHOLDER, DiscoveryProfile, Walk, budget_env, budget_launch_args,
};
pub use error::{Error, Result};
pub use plan::*;
pub use provider::*;
