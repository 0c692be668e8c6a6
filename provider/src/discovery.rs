//! Discovery profiles: how one CLI finds its instruction files (names, order, first-wins or all,
//! root markers, budget), declared as data by each provider and evaluated by core's guidance
//! resolver (`projectfile_core::guidance::resolve_as`).
//!
//! The providers' profiles, checked against the real CLIs by `cargo xtask qualify` (each provider's
//! module docs hold the measurements; the golden tests in `core/tests/guidance_golden.rs` run
//! copies of these):
//!
//! ```text
//! Codex:  per_directory ["AGENTS.override.md", "AGENTS.md"], first_wins, root_markers [".git"],
//!         walk RootToCwd, budget_bytes 32768, truncate_at_budget, verbatim,
//!         user_files [".codex/AGENTS.override.md", ".codex/AGENTS.md"], budget_excludes_user,
//!         budget_launch_args ["-c", "project_doc_max_bytes={bytes}"], lossy_utf8
//! Claude: per_directory ["CLAUDE.md", ".claude/CLAUDE.md", ".claude/rules/**/*.md",
//!         "AGENTS.md", ".claude/AGENTS.md", "CLAUDE.local.md"] (no AGENTS.md before 2.1.281),
//!         exclusive_if_present (each CLAUDE-file, each AGENTS-file), exclusive_across_walk,
//!         walk CwdUpToFsRoot, imports, imports_keep_line, max_import_hops 4,
//!         imports_inside_working_dir, strip_html_comments, user_files [".claude/CLAUDE.md",
//!         ".claude/rules/**/*.md"], on_demand_path_rules, on_demand_subtree, lossy_utf8
//! Pi:     per_directory ["AGENTS.md", "CLAUDE.md"], first_wins, walk CwdUpToFsRoot, verbatim,
//!         extra_files [".pi/SYSTEM.md", ".pi/APPEND_SYSTEM.md"] at the working directory and
//!         first, user_files [".pi/agent/AGENTS.md", ".pi/agent/CLAUDE.md"], user_fallbacks
//!         [(".pi/SYSTEM.md", ".pi/agent/SYSTEM.md"), (".pi/APPEND_SYSTEM.md",
//!         ".pi/agent/APPEND_SYSTEM.md")], lossy_utf8
//! Cursor: extra_files [".cursor/rules/*.mdc", ".cursor/rules/*.md", "AGENTS.md", "CLAUDE.md"]
//! Gemini: per_directory ["GEMINI.md"], root_markers [".git"], walk RootToCwd, imports,
//!         imports_keep_line, max_import_hops 5, user_files [".gemini/GEMINI.md"], lossy_utf8
//! Qwen:   per_directory ["QWEN.md", "AGENTS.md"], names_across_walk, root_markers [".git"],
//!         walk AboveRootToCwd, imports, imports_keep_line, max_import_hops 5,
//!         user_files [".qwen/QWEN.md", ".qwen/AGENTS.md"], marked_root_files
//!         [".qwen/QWEN.local.md"], extra_files [".qwen/rules/*.md", ".qwen/rules/*/*.md"],
//!         on_demand_path_rules, lossy_utf8
//! ```

use serde::{Deserialize, Serialize};

/// Which directories between the file-system root and the working directory a CLI reads.
///
/// Whatever the walk, sources are reported broadest first (top directory first, working directory
/// last). A directory strictly above the request's `workspace_root` has scope `ancestor` (depth
/// -1); the root itself and everything below it has scope `workspace` (depth 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Walk {
    /// From the project root down to the working directory. The root is the nearest of the
    /// working directory and its ancestors holding one of `root_markers`; when no marker is found
    /// only the working directory is read (Codex). With no `root_markers` the root is the
    /// request's `workspace_root`, and a working directory outside it reads only the root (the
    /// seed's chain rule).
    #[default]
    RootToCwd,
    /// The working directory and every directory above it, up to but not including the
    /// file-system root (Claude Code, Pi). `root_markers` then only locate `extra_files`.
    CwdUpToFsRoot,
    /// From the folder *above* the project root down to the working directory (Qwen Code). The
    /// root is found as for [`Walk::RootToCwd`]; without a marker the walk starts at the folder
    /// above the home directory when the working directory lies below it, else at the top (the
    /// file-system root, as everywhere, excluded).
    AboveRootToCwd,
    /// The working directory and every directory above it up to the root, the root included;
    /// without a root (no marker found), up to but not including the file-system root
    /// (opencode: from the working directory up to the git worktree, or to `/` outside git).
    CwdUpToRoot,
}

/// How a CLI discovers instruction files.
///
/// Every field defaults to "off" or "empty", so a provider spells out only what its CLI does:
/// `DiscoveryProfile { per_directory: …, ..Default::default() }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct DiscoveryProfile {
    /// File names looked for in each directory, in the order they are read. A name may hold a
    /// `/` (`.claude/CLAUDE.md`) and may be a glob, as in `extra_files`
    /// (`.claude/rules/**/*.md`), its matches sorted in its place.
    pub per_directory: Vec<String>,
    /// Only the first existing name of `per_directory` is read in a directory (Codex's override).
    /// "Existing" means present in any readable-or-not form, even empty. Applies to `user_files`
    /// too, which are treated as one group.
    pub first_wins: bool,
    /// Files whose presence marks the project root (e.g. `.git`); the walk from the working
    /// directory stops there. Empty: the workspace root is the root. The root is also where
    /// `extra_files` are looked up.
    pub root_markers: Vec<String>,
    /// The root is the top of the git repository holding the working directory, as git finds
    /// it: the nearest of the working directory and its ancestors (the file-system root
    /// excluded) holding a `.git` directory with a `HEAD` in it, or a `.git` file (a linked
    /// worktree, a submodule). An empty `.git` folder is no repository: opencode and Copilot ask
    /// git, Codex only looks for the name. Takes the place of `root_markers`.
    pub git_root: bool,
    /// Extra files or globs read relative to the root (e.g. `.pi/APPEND_SYSTEM.md`), after every
    /// directory, in this order (each glob's matches sorted), with scope `editor_pack`. Never
    /// import-expanded. `*` and `?` match within one path segment; a `**` segment matches any
    /// number of directories (none included), never entering a symlink or a hidden directory.
    pub extra_files: Vec<String>,
    /// The CLI's byte budget for instruction files, if it has one. `None`: the request's
    /// `max_bytes` applies (the host's own budget; pass a large one to see everything).
    pub budget_bytes: Option<u64>,
    /// `@path` imports are expanded.
    pub imports: bool,
    /// Which directories are read; see [`Walk`].
    pub walk: Walk,
    /// Pairs `(a, b)`: in a directory where `a` exists, `b` is not read (Claude Code reads
    /// `AGENTS.md` only where there is no `CLAUDE.md`). `a` need not be in `per_directory`.
    pub exclusive_if_present: Vec<(String, String)>,
    /// Files under the home directory, in reading order, with scope `user` (e.g.
    /// `.claude/CLAUDE.md`). Read only when the request has a `home_dir` and `include_user_scope`.
    /// An entry may be a glob, as in `extra_files` (Copilot's
    /// `.copilot/instructions/**/*.instructions.md`), its matches sorted in its place.
    pub user_files: Vec<String>,
    /// Directories below the working directory are read too (scope `scoped`, breadth-first,
    /// bounded by the request's `max_depth`, `max_dirs` and `skip_dirs`; hidden and symlinked
    /// directories never entered).
    pub include_subtree: bool,
    /// Block-level HTML comments are removed before the text reaches the model (Claude Code does;
    /// Codex does not).
    pub strip_html_comments: bool,
    /// A body identical to an earlier one is dropped (`duplicate_body`). A CLI that concatenates
    /// what it finds leaves this off, so the resolution shows the repetition it pays for.
    pub dedupe_bodies: bool,
    /// The CLI's own import nesting limit; `None`: the request's `max_import_hops`.
    pub max_import_hops: Option<usize>,
    /// The budget cuts mid-source instead of dropping whole sources: sources are kept while they
    /// fit, the one crossing the budget is truncated (at a character boundary) with a
    /// `budget_truncated` notice, and everything after it is `budget_exhausted` (Codex reads up to
    /// its byte limit). Off: the seed's whole-source rule, first source always kept.
    pub truncate_at_budget: bool,
    /// `exclusive_if_present` applies across the whole walk, not per directory: `a` found in any
    /// walked directory (the subtree below the working directory and the home directory aside)
    /// means `b` is read in none (Claude Code skips every `AGENTS.md` when a `CLAUDE.md` exists
    /// in the working directory or any directory above it).
    pub exclusive_across_walk: bool,
    /// `extra_files` are looked up in the working directory instead of the root (Pi reads
    /// `.pi/APPEND_SYSTEM.md` only where it is started).
    pub extra_files_at_working_dir: bool,
    /// Pairs `(extra, user)`: the user file (relative to the home directory) is read only when the
    /// extra file (one of `extra_files`) is absent; otherwise it is `shadowed` by it (Pi reads the
    /// project's `.pi/APPEND_SYSTEM.md` *instead of* `~/.pi/agent/APPEND_SYSTEM.md`). Read in the
    /// extra file's place (right after it), scope `user`, never import-expanded.
    pub user_fallbacks: Vec<(String, String)>,
    /// The budget counts only project files: user files are kept whole and reported in
    /// `unbudgeted_bytes` (Codex limits project docs, never the user's own instructions).
    pub budget_excludes_user: bool,
    /// The CLI sends each file as written: bodies are not trimmed and a session block is carried
    /// with its marker lines, so byte counts are the file's own (Codex, Pi). Off: bodies are
    /// trimmed and a session block is its text alone.
    pub verbatim: bool,
    /// Instruction files in directories below the working directory are read only when the task
    /// touches a file there (Claude Code): they are listed as `on_demand`, never as sources.
    /// Bounded like the subtree scan (`max_depth`, `max_dirs`, `skip_dirs`).
    pub on_demand_subtree: bool,
    /// An extra file, or a file a glob of `per_directory` or `user_files` matched, whose front
    /// matter (between `---` lines at its top) has a `paths:` key is read only when the task
    /// touches a matching path (Claude Code's `.claude/rules/`): listed as `on_demand`.
    pub on_demand_path_rules: bool,
    /// The launch arguments that raise the budget, with `{bytes}` standing for the number of bytes
    /// needed (Codex: `["-c", "project_doc_max_bytes={bytes}"]`). Empty: nothing can raise it.
    /// See [`budget_launch_args`].
    pub budget_launch_args: Vec<String>,
    /// A file that is not valid UTF-8 is read with each invalid sequence replaced by U+FFFD and
    /// sent (every CLI measured: Codex, Claude Code, Pi, Gemini CLI, Qwen Code, opencode,
    /// Copilot). Off: it is `not_utf8` and dropped whole (a CLI not measured: Cursor, Muse, agy).
    pub lossy_utf8: bool,
    /// Each name of `per_directory` is read in every walked directory before the next name is,
    /// the user file of that name (the entry of `user_files` with that file name) first: Qwen
    /// Code sends every `QWEN.md`, then every `AGENTS.md`. Off: directory by directory, every
    /// user file first. Takes plain names only (`first_wins` and `exclusive_if_present` do not
    /// apply across names).
    pub names_across_walk: bool,
    /// Files read at the root `root_markers` found, only when one was found (Qwen Code reads
    /// `.qwen/QWEN.local.md` at the git root and nowhere without one): after the walk, before
    /// `extra_files`, with the same scope.
    pub marked_root_files: Vec<String>,
    /// The environment variables that raise the budget, `(name, value)`, with `{bytes}` in a
    /// value standing for the number of bytes needed (Copilot:
    /// `COPILOT_PROVIDER_MAX_PROMPT_TOKENS={bytes}`). See [`budget_env`].
    pub budget_env: Vec<(String, String)>,
    /// Over its budget the CLI sends nothing at all (Copilot refuses a prompt over its token
    /// limit and exits): when the budgeted sources do not all fit, every one of them is
    /// `budget_exhausted`; when they do, every one is kept whole. A session text the CLI reads
    /// from a private file counts against the same budget.
    pub budget_all_or_nothing: bool,
    /// `extra_files` are looked up in the root and, when the working directory is another
    /// directory, there too (Copilot reads `.github/instructions/` and `.claude/rules/` of
    /// both).
    pub extra_files_also_at_working_dir: bool,
    /// An extra file whose front matter has an `applyTo:` key with any pattern but `**` is read
    /// only when the task touches a matching path (Copilot's `.github/instructions/`): listed as
    /// `on_demand`. Without the key, or with `**`, the file is read at start.
    pub on_demand_apply_to: bool,
    /// `extra_files` (each with its `user_fallbacks` entry) are read first, before the user files
    /// and the walk: Pi sends `.pi/SYSTEM.md` and `.pi/APPEND_SYSTEM.md` (or the user's own)
    /// ahead of its context files. Off: after everything else.
    pub extra_files_first: bool,
    /// An import in a file of the walk is followed only when it leads inside the working
    /// directory (lexically, `..` applied); one leading elsewhere is `unapproved_import` and its
    /// line stays literal. Claude Code asks the user before following such an import, which a
    /// one-turn run (`-p`) in a fresh home never approves. Imports in user files are not
    /// concerned.
    pub imports_inside_working_dir: bool,
    /// An import stands for the imported file inside its line: the text around it on that line
    /// is sent too (Claude Code, Gemini CLI, Qwen Code and Copilot CLI, measured). Off: the
    /// line is replaced whole by the file.
    pub imports_keep_line: bool,
}

/// The placeholder of [`DiscoveryProfile::budget_launch_args`] and
/// [`DiscoveryProfile::budget_env`].
pub const BUDGET_BYTES_PLACEHOLDER: &str = "{bytes}";

/// The environment that makes `profile`'s CLI read `needed_bytes` of instruction files, or
/// `None` when the profile declares none.
pub fn budget_env(profile: &DiscoveryProfile, needed_bytes: u64) -> Option<Vec<(String, String)>> {
    if profile.budget_env.is_empty() {
        return None;
    }
    let bytes = needed_bytes.to_string();
    Some(
        profile
            .budget_env
            .iter()
            .map(|(name, value)| {
                (
                    name.clone(),
                    value.replace(BUDGET_BYTES_PLACEHOLDER, &bytes),
                )
            })
            .collect(),
    )
}

/// The launch arguments that make `profile`'s CLI read `needed_bytes` of instruction files, or
/// `None` when the profile declares none (nothing can raise its budget).
pub fn budget_launch_args(profile: &DiscoveryProfile, needed_bytes: u64) -> Option<Vec<String>> {
    if profile.budget_launch_args.is_empty() {
        return None;
    }
    let bytes = needed_bytes.to_string();
    Some(
        profile
            .budget_launch_args
            .iter()
            .map(|arg| arg.replace(BUDGET_BYTES_PLACEHOLDER, &bytes))
            .collect(),
    )
}
