//! Workspace guidance resolution (seed 001): which instruction files are active for a workspace,
//! in precedence order, deduped, budgeted, with a receipt of what was dropped and why; and the
//! discovery profiles that say how each CLI finds its files.

mod profile;

pub use profile::DiscoveryProfile;
