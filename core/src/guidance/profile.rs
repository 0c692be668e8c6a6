//! Discovery profiles: how one CLI finds its instruction files (names, order, first-wins or all,
//! root markers, budget), declared as data by each provider.

use serde::{Deserialize, Serialize};

/// How a CLI discovers instruction files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscoveryProfile {
    /// File names looked for in each directory, in the order they are read.
    pub per_directory: Vec<String>,
    /// Only the first existing name of `per_directory` is read in a directory (Codex's override).
    pub first_wins: bool,
    /// Files whose presence marks the project root (e.g. `.git`); the walk from the working
    /// directory stops there. Empty: the workspace root is the root.
    pub root_markers: Vec<String>,
    /// Extra files or globs read relative to the root (e.g. `.pi/APPEND_SYSTEM.md`).
    pub extra_files: Vec<String>,
    /// The CLI's byte budget for instruction files, if it has one.
    pub budget_bytes: Option<u64>,
    /// `@path` imports are expanded.
    pub imports: bool,
}
