//! The stable data of guidance resolution: the seed's defaults, the [`GuidanceRequest`] a host
//! hands in, and the [`GuidanceResolution`] receipt it gets back (sources, omissions, byte counts).
//!
//! Field names and string values are the seed's and are part of the JSON contract: do not rename.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Per-directory instruction file names, in the order they are read within one directory.
///
/// `AGENTS.md` is the portable spelling and comes first; `CLAUDE.md` follows and is dropped when its
/// body matches (the `ln -s AGENTS.md CLAUDE.md` convention); override and local files come last so
/// personal notes are read last.
pub const DIRECTORY_INSTRUCTION_FILES: [&str; 4] = [
    "AGENTS.md",
    "CLAUDE.md",
    "AGENTS.override.md",
    "CLAUDE.local.md",
];

/// User-scope files, relative to the home directory, in reading order.
pub const USER_SCOPE_FILES: [&str; 4] = [
    ".codex/AGENTS.override.md",
    ".codex/AGENTS.md",
    ".agents/AGENTS.md",
    ".claude/CLAUDE.md",
];

/// Root-only editor rule packs read last; an entry containing `*` is a glob.
pub const DEFAULT_EDITOR_PACKS: [&str; 3] = [
    ".cursorrules",
    ".cursor/rules/*.mdc",
    ".github/copilot-instructions.md",
];

/// Directory names never walked by the subtree scan (hidden directories are skipped as well).
pub const DEFAULT_SKIP_DIRS: [&str; 8] = [
    ".git",
    ".build",
    "target",
    "node_modules",
    "dist",
    "vendor",
    ".venv",
    "__pycache__",
];

/// Default byte budget of the kept sources (32 KiB).
pub const DEFAULT_MAX_BYTES: u64 = 32_768;
/// Default maximum depth of the subtree scan below the working directory.
pub const DEFAULT_MAX_DEPTH: usize = 8;
/// Default maximum number of directories the subtree scan visits.
pub const DEFAULT_MAX_DIRS: usize = 4_000;
/// Default maximum nesting of `@path` imports.
pub const DEFAULT_MAX_IMPORT_HOPS: usize = 4;
/// A single file larger than this (4 MiB) is skipped outright (`file_too_large`), never truncated.
pub const MAX_SINGLE_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// The default namespace of our own session blocks.
pub const DEFAULT_SESSION_NAMESPACE: &str = crate::plan::Namespace::DEFAULT;

/// Where one resolved source sits in the precedence order (broadest first; `Ord` follows that
/// order, `Session` last).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GuidanceScope {
    /// A file under the home directory (`depth` -1).
    User,
    /// A directory above the workspace root (`depth` -1).
    Ancestor,
    /// The workspace root or a directory on the way down to the working directory (`depth` 0).
    Workspace,
    /// A directory below the working directory (`depth` = levels below it).
    Scoped,
    /// A root-only editor rule pack, or a profile's extra file (`depth` 0).
    EditorPack,
    /// Our own projected session block, cut out of the file it sits in and reported right after
    /// that file (same `depth`); not the user's guidance.
    Session,
}

impl GuidanceScope {
    /// The scope's stable string (`user`, `ancestor`, `workspace`, `scoped`, `editor_pack`,
    /// `session`).
    pub fn as_str(self) -> &'static str {
        match self {
            GuidanceScope::User => "user",
            GuidanceScope::Ancestor => "ancestor",
            GuidanceScope::Workspace => "workspace",
            GuidanceScope::Scoped => "scoped",
            GuidanceScope::EditorPack => "editor_pack",
            GuidanceScope::Session => "session",
        }
    }
}

impl fmt::Display for GuidanceScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a discovered source did not reach the model (or, for `malformed_session_block`, a notice
/// about a file whose text was kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum OmissionReason {
    /// The file holds more than [`MAX_SINGLE_FILE_BYTES`]; `bytes` is its size. Seed reason.
    FileTooLarge,
    /// Its body is identical to an earlier kept source; `bytes` is the body's length. Seed reason.
    DuplicateBody,
    /// The byte budget was spent before it; `bytes` is its length. Seed reason.
    BudgetExhausted,
    /// Only for profiles with `truncate_at_budget`: the source was cut at the budget; `bytes` is
    /// how many bytes were cut off (the source itself is kept, shortened).
    BudgetTruncated,
    /// The file exists but could not be read (permission, I/O error, symlink loop, not a regular
    /// file); `bytes` is 0.
    Unreadable,
    /// The file is not valid UTF-8; it is skipped whole, never lossily decoded; `bytes` is its size.
    NotUtf8,
    /// The file holds a malformed or unterminated session block; its text is kept as user guidance
    /// unchanged (nothing was cut); `bytes` is 0.
    MalformedSessionBlock,
    /// Only for discovery profiles: the CLI does not read this file because another one it found
    /// takes its place (`shadowed_by` names it): an override read instead, a `CLAUDE.md` that
    /// makes Claude Code skip `AGENTS.md`, a project file read instead of the user's. `bytes` is
    /// the file's size.
    Shadowed,
    /// Only for discovery profiles: the CLI reads this file later, only when the task touches
    /// its folder or its paths, so it is not in the first request. `bytes` is the file's size.
    OnDemand,
    /// An import, or an instruction file reached through a symlink, resolves outside the tree of
    /// the file that names it (see [`GuidanceRequest::allow_outside_tree`]); it was not read.
    /// `path` is the path as named, `resolves_to` where it leads, `imported_from` the importing
    /// file; `bytes` is 0. An import line left this way stays literal.
    OutsideTree,
    /// Only for discovery profiles with `imports_inside_working_dir`: an import that leads
    /// outside the working directory, which the CLI follows only once the user approves it
    /// (Claude Code asks; a one-turn run in a fresh home never approves). `path` is the import as
    /// resolved, `imported_from` the importing file; `bytes` is 0. Its line stays literal.
    UnapprovedImport,
}

impl OmissionReason {
    /// The reason's stable string.
    pub fn as_str(self) -> &'static str {
        match self {
            OmissionReason::FileTooLarge => "file_too_large",
            OmissionReason::DuplicateBody => "duplicate_body",
            OmissionReason::BudgetExhausted => "budget_exhausted",
            OmissionReason::BudgetTruncated => "budget_truncated",
            OmissionReason::Unreadable => "unreadable",
            OmissionReason::NotUtf8 => "not_utf8",
            OmissionReason::MalformedSessionBlock => "malformed_session_block",
            OmissionReason::Shadowed => "shadowed",
            OmissionReason::OnDemand => "on_demand",
            OmissionReason::OutsideTree => "outside_tree",
            OmissionReason::UnapprovedImport => "unapproved_import",
        }
    }
}

impl fmt::Display for OmissionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One resolved guidance source, carrying enough provenance to be a receipt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GuidanceSource {
    /// The path as the walk joined it from the request's strings (never canonicalised). A session
    /// block is `<file>#session` (`#session-2`, … for further blocks in the same file).
    pub path: String,
    /// Where it sits in the precedence order.
    pub scope: GuidanceScope,
    /// -1 for user and ancestor scope, 0 for workspace and editor packs, levels below the working
    /// directory for scoped sources; a session source has the depth of its file.
    pub depth: i32,
    /// The text that reaches the model: comments stripped, imports inlined, trimmed.
    pub body: String,
    /// `body.len()` in bytes.
    pub bytes: u64,
    /// For a `session` source, the guidance file it was reached through (the file holding it, or
    /// the file that imported the file holding it). The seed declares this field but inlines
    /// imports, so no other source sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_from: Option<String>,
}

/// A source that was discovered but did not reach the model, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GuidanceOmission {
    /// The path, as in [`GuidanceSource::path`].
    pub path: String,
    /// Why.
    pub reason: OmissionReason,
    /// A byte count whose meaning depends on the reason (see [`OmissionReason`]).
    pub bytes: u64,
    /// For `shadowed`: the file read instead, or whose presence makes the CLI skip this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadowed_by: Option<String>,
    /// For `outside_tree`: the real path the named path leads to, outside the tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolves_to: Option<String>,
    /// For an import left out (`outside_tree`, `unapproved_import`): the guidance file whose `@`
    /// line named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_from: Option<String>,
}

impl GuidanceOmission {
    /// An omission with no extra provenance.
    pub fn new(path: impl Into<String>, reason: OmissionReason, bytes: u64) -> Self {
        GuidanceOmission {
            path: path.into(),
            reason,
            bytes,
            shadowed_by: None,
            resolves_to: None,
            imported_from: None,
        }
    }
}

/// The complete resolution: what loaded, in order, and what did not.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GuidanceResolution {
    /// Budget-approved sources, broadest first, ready to render.
    pub sources: Vec<GuidanceSource>,
    /// Everything discovered and dropped, in discovery order, then budget drops in source order.
    pub omitted: Vec<GuidanceOmission>,
    /// Sum of the kept sources' `bytes`.
    pub total_bytes: u64,
    /// The budget that was applied. What counted against it is `total_bytes -
    /// unbudgeted_bytes`; it exceeds the budget only under the seed's rule that the first source
    /// is always kept whole.
    pub budget_bytes: u64,
    /// Bytes the budget took away: the sum of the `budget_truncated` and `budget_exhausted`
    /// omissions' `bytes`. Omitted when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut_bytes: u64,
    /// Bytes of kept sources the budget does not count (a profile with `budget_excludes_user`:
    /// Codex never cuts the user's own instructions). Omitted when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unbudgeted_bytes: u64,
    /// Candidate directories considered (seed semantics): one per user-scope file (in
    /// [`resolve_as`](super::resolve_as), one for all the profile's user files), one per ancestor
    /// and workspace directory, plus every directory the subtree scan found.
    pub dirs_scanned: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl GuidanceResolution {
    /// The bytes that counted against the budget: `total_bytes - unbudgeted_bytes`.
    pub fn budget_used_bytes(&self) -> u64 {
        self.total_bytes.saturating_sub(self.unbudgeted_bytes)
    }
}

fn default_max_bytes() -> u64 {
    DEFAULT_MAX_BYTES
}
fn default_max_depth() -> usize {
    DEFAULT_MAX_DEPTH
}
fn default_max_dirs() -> usize {
    DEFAULT_MAX_DIRS
}
fn default_max_import_hops() -> usize {
    DEFAULT_MAX_IMPORT_HOPS
}
fn default_true() -> bool {
    true
}
fn default_editor_packs() -> Vec<String> {
    DEFAULT_EDITOR_PACKS.iter().map(|s| s.to_string()).collect()
}
fn default_skip_dirs() -> Vec<String> {
    DEFAULT_SKIP_DIRS.iter().map(|s| s.to_string()).collect()
}

/// Discovery inputs. Only `workspace_root` is required; every other field has the seed's default,
/// both through [`GuidanceRequest::new`] and when deserialising.
///
/// Paths are strings with `/` separators and are used as given: nothing is canonicalised and no
/// environment variable is consulted (pass `home_dir` explicitly to get user scope).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuidanceRequest {
    /// The workspace root.
    pub workspace_root: String,
    /// The working directory; default the workspace root. Used as given: a relative value is not
    /// joined to the root, and one outside the root only changes where the subtree scan starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// The home directory; without it there is no user scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home_dir: Option<String>,
    /// Byte budget of the kept sources (default 32 KiB).
    #[serde(default = "default_max_bytes")]
    pub max_bytes: u64,
    /// Maximum depth of the subtree scan (default 8).
    #[serde(default = "default_max_depth")]
    pub max_depth: usize,
    /// Maximum directories of the subtree scan (default 4,000).
    #[serde(default = "default_max_dirs")]
    pub max_dirs: usize,
    /// Maximum `@path` import nesting (default 4; 0 disables imports).
    #[serde(default = "default_max_import_hops")]
    pub max_import_hops: usize,
    /// Read the user-scope files under `home_dir` (default true).
    #[serde(default = "default_true")]
    pub include_user_scope: bool,
    /// Read the directories above the workspace root (default true).
    #[serde(default = "default_true")]
    pub include_ancestors: bool,
    /// Scan the subtree below the working directory (default true).
    #[serde(default = "default_true")]
    pub include_subtree: bool,
    /// Root-relative editor packs, globs allowed (default [`DEFAULT_EDITOR_PACKS`]).
    #[serde(default = "default_editor_packs")]
    pub editor_packs: Vec<String>,
    /// Directory names the subtree scan never enters (default [`DEFAULT_SKIP_DIRS`]).
    #[serde(default = "default_skip_dirs")]
    pub skip_dirs: Vec<String>,
    /// The namespace of our own session blocks (default `agentworks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_namespace: Option<String>,
    /// Read imports and instruction files that resolve outside the tree of the file naming them
    /// (default false). Not in the seed.
    ///
    /// A file's tree is the workspace root for workspace, scoped and editor-pack files, the home
    /// directory for user files, and an ancestor file's own directory for ancestor files; an
    /// import belongs to the tree of the file that started the chain. Where a path leads is
    /// decided on real paths (symlinks followed, `..` applied), so `@../secret`, `@/abs/path`,
    /// `@~/…` from a project file, a chain of imports that leaves at any hop, a symlinked
    /// instruction file pointing out and a symlinked directory on the way are all caught. By
    /// default such a file is not read: it is listed in `omitted` as `outside_tree` with where it
    /// leads, so a host can show it and ask (Claude Code asks before following an import out of
    /// the project). Set this only when the user has approved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_outside_tree: bool,
}

impl GuidanceRequest {
    /// A request for `workspace_root` with every other field at its default.
    pub fn new(workspace_root: impl Into<String>) -> Self {
        GuidanceRequest {
            workspace_root: workspace_root.into(),
            working_dir: None,
            home_dir: None,
            max_bytes: DEFAULT_MAX_BYTES,
            max_depth: DEFAULT_MAX_DEPTH,
            max_dirs: DEFAULT_MAX_DIRS,
            max_import_hops: DEFAULT_MAX_IMPORT_HOPS,
            include_user_scope: true,
            include_ancestors: true,
            include_subtree: true,
            editor_packs: default_editor_packs(),
            skip_dirs: default_skip_dirs(),
            session_namespace: None,
            allow_outside_tree: false,
        }
    }

    /// Sets the working directory.
    pub fn with_working_dir(mut self, dir: impl Into<String>) -> Self {
        self.working_dir = Some(dir.into());
        self
    }

    /// Sets the home directory (enables user scope).
    pub fn with_home_dir(mut self, dir: impl Into<String>) -> Self {
        self.home_dir = Some(dir.into());
        self
    }

    /// Sets the byte budget.
    pub fn with_max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Sets the subtree scan's maximum depth.
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Sets the subtree scan's maximum directory count.
    pub fn with_max_dirs(mut self, dirs: usize) -> Self {
        self.max_dirs = dirs;
        self
    }

    /// Sets the maximum import nesting.
    pub fn with_max_import_hops(mut self, hops: usize) -> Self {
        self.max_import_hops = hops;
        self
    }

    /// Turns user scope on or off.
    pub fn with_user_scope(mut self, on: bool) -> Self {
        self.include_user_scope = on;
        self
    }

    /// Turns the ancestor directories on or off.
    pub fn with_ancestors(mut self, on: bool) -> Self {
        self.include_ancestors = on;
        self
    }

    /// Turns the subtree scan on or off.
    pub fn with_subtree(mut self, on: bool) -> Self {
        self.include_subtree = on;
        self
    }

    /// Replaces the editor packs.
    pub fn with_editor_packs<S: Into<String>>(
        mut self,
        packs: impl IntoIterator<Item = S>,
    ) -> Self {
        self.editor_packs = packs.into_iter().map(Into::into).collect();
        self
    }

    /// Replaces the skip list.
    pub fn with_skip_dirs<S: Into<String>>(mut self, dirs: impl IntoIterator<Item = S>) -> Self {
        self.skip_dirs = dirs.into_iter().map(Into::into).collect();
        self
    }

    /// Allows (or, by default, refuses) reading guidance that resolves outside its own tree
    /// (see [`GuidanceRequest::allow_outside_tree`]).
    pub fn with_allow_outside_tree(mut self, allow: bool) -> Self {
        self.allow_outside_tree = allow;
        self
    }

    /// Sets the session-block namespace.
    pub fn with_session_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.session_namespace = Some(namespace.into());
        self
    }

    /// The session-block namespace in effect.
    pub fn namespace(&self) -> &str {
        self.session_namespace
            .as_deref()
            .unwrap_or(DEFAULT_SESSION_NAMESPACE)
    }
}
