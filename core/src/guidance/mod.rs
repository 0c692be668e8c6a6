//! Workspace guidance resolution: which instruction files are active for a workspace,
//! in precedence order, deduped, budgeted, with a receipt of what was dropped and why; and the
//! discovery profiles that say how each CLI finds its files.
//!
//! This module is the single owner of the discovery rules: every surface that answers "which
//! guidance is active?" (a system prompt, a notice, a rules panel, a receipt) consumes a
//! [`GuidanceResolution`] instead of restating file names and the walk.
//!
//! - [`resolve()`]: the seed's rules over a [`GuidanceRequest`]; [`resolve_as`]: what one CLI
//!   would load, from its [`DiscoveryProfile`].
//! - [`GuidanceFs`]: every read goes through it; [`StdFs`] is the real file system (symlinked
//!   directories never walked), [`MemoryFs`] a deterministic in-memory one.
//! - [`prompt_fragments`] and [`render_block`]: projections for prompts.
//! - [`session_block_ranges`]: finds our own projected session blocks, which are reported apart
//!   from the user's guidance (scope `session`).
//! - [`delivery_verdict`]: whether the session text, where a plan put it, reaches the model by
//!   the CLI's profile; [`delivery_with_remedy`]: the same with the profile's budget arguments
//!   applied; [`budget_launch_args`] and [`budget_env`]: the arguments and the environment that
//!   raise a CLI's budget.
//! - Guidance stays inside its own tree: an import or a symlinked instruction file that leads out
//!   of it is listed as `outside_tree` and never read, unless
//!   [`GuidanceRequest::allow_outside_tree`] is set.
//!
//! Precedence runs broadest to most specific, so the most specific text comes last: user,
//! ancestor, workspace (root down to the working directory), scoped (the subtree below it,
//! breadth-first), then root-only editor packs.

mod confine;
mod delivery;
mod fs;
#[doc(hidden)]
pub mod fuzzing;
mod model;
mod paths;
mod render;
mod resolve;
mod session;
mod text;

pub use delivery::{
    DeliveryQuery, DeliveryVerdict, Undelivered, delivery_verdict, delivery_with_remedy,
};
pub use fs::{CappedRead, EntryKind, FileReads, FsEntry, FsStat, GuidanceFs, MemoryFs, StdFs};
pub use model::{
    DEFAULT_EDITOR_PACKS, DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_DIRS,
    DEFAULT_MAX_IMPORT_HOPS, DEFAULT_SESSION_NAMESPACE, DEFAULT_SKIP_DIRS,
    DIRECTORY_INSTRUCTION_FILES, GuidanceOmission, GuidanceRequest, GuidanceResolution,
    GuidanceScope, GuidanceSource, MAX_SINGLE_FILE_BYTES, OmissionReason, USER_SCOPE_FILES,
};
pub use projectfile_provider::discovery::{
    BUDGET_BYTES_PLACEHOLDER, DiscoveryProfile, Walk, budget_env, budget_launch_args,
};
pub use render::{FRAGMENT_SOURCE, PromptFragment, prompt_fragments, render_block};
pub(crate) use resolve::find_git_root;
pub use resolve::{resolve, resolve_as};
pub use session::{
    MalformedBlock, SessionBlock, SessionScan, scan_session_blocks, session_block_ranges,
};
pub(crate) use text::first_import;
