//! The guidance resolver: [`resolve`] (the seed's rules and defaults) and [`resolve_as`] (what one
//! CLI would load, from its [`DiscoveryProfile`]). Both build a [`Plan`] of candidate directories
//! and files and run the same engine over a [`GuidanceFs`].
//!
//! # Order of work (seed semantics)
//!
//! 1. Candidates, broadest first: user-scope files under `home_dir` (one candidate per file), the
//!    directories above the workspace root (top first), the root and each directory down to the
//!    working directory, then the breadth-first subtree below the working directory.
//! 2. In each candidate directory the instruction names are read in order. A path already
//!    considered is skipped (`seen_paths`). Absent and empty-after-trim files are skipped silently.
//! 3. A file over 4 MiB is `file_too_large`. Otherwise our session blocks are cut out, block-level
//!    HTML comments stripped, `@path` imports inlined, and the body trimmed; a body identical to an
//!    earlier source's is `duplicate_body`.
//! 4. Editor packs (globs sorted) come last; there a duplicate or empty body is skipped silently and
//!    imports are not expanded.
//! 5. The budget keeps whole sources in order while they fit; the first source is always kept, a
//!    later smaller source may still fit after a larger one was dropped; each drop is
//!    `budget_exhausted`.
//!
//! # Decisions where the seed is silent or where this port deliberately differs
//!
//! - **Reads**: a path that is absent, a directory, or below a non-directory is "absent" (silent).
//!   Any other read error is reported as `unreadable`; invalid UTF-8 is reported as `not_utf8` and
//!   the file is skipped whole (never lossily decoded, so the model never sees replacement
//!   characters). The seed skipped both silently. A leading UTF-8 byte-order mark is removed.
//! - **4 MiB cap everywhere**: the cap is checked from the file's size before reading, for every
//!   read (the seed only checked directory candidates, after reading). A whitespace-only file over
//!   the cap is therefore reported rather than skipped; an editor pack or import over the cap is
//!   reported `file_too_large` too (an over-size import leaves its line literal).
//! - **Imports** resolve relative to the importing file's own directory, also for user-scope files
//!   (the seed's code passed the home directory there, its doc comment says "relative to the file";
//!   the doc wins). `@~/path` resolves under `home_dir` when one is given (Claude Code's spelling;
//!   not in the seed). Paths are joined and reported as written; only cycle detection compares
//!   lexically folded paths, so `@../AGENTS.md` back to the importer is refused. An imported file
//!   that is unreadable, not UTF-8 or too large leaves its line literal and is reported once.
//! - **Seen paths** are recorded at the first attempt, present or not (the same answer the seed
//!   gets, without asking the file system twice).
//! - **Subtree walk**: only real directories are entered (`list_dir` kinds, symlinks never
//!   followed); names that are not UTF-8 are skipped. Each scoped directory's listing (taken anyway
//!   to find its children; taken too for the directories the seed finds but does not list, at
//!   `max_depth` or after `max_dirs`, when two or more names are looked for, because one listing
//!   costs less than one failed lookup per name) tells which instruction names can exist there,
//!   so absent names cost no system call. The match is ASCII-case-insensitive, so a
//!   case-insensitive file system still finds `agents.md` when asked for `AGENTS.md`, exactly as a
//!   direct read would. The listing never changes which directories are candidates or found.
//! - **Session blocks** (ours, see [`crate::block`]): detected before comment stripping, cut out of the user's
//!   text and reported as `session` sources right after their file (even when the user text is
//!   empty or a duplicate), path `<file>#session`, `imported_from` the file they were reached
//!   through, each block path once. They are deduplicated only among themselves (the block seen
//!   again through `ln -s AGENTS.md CLAUDE.md` is `duplicate_body`), never against user bodies, and
//!   count against the budget like anything else that reaches the model. An empty block is
//!   skipped.
//!   A malformed file keeps its text as user guidance and gets a `malformed_session_block` notice.
//! - **Trees** (not in the seed): every file is read only when its real path (symlinks followed,
//!   `..` applied) lies inside its tree: the workspace root for workspace and scoped files and
//!   relative editor packs, the home directory for user files, an ancestor file's own directory,
//!   `/` for an absolute pack the host named itself; an import belongs to the tree of the file
//!   that started its chain. Otherwise it is not read and is `outside_tree` (with `resolves_to`
//!   and, for an import, `imported_from`), unless the request sets `allow_outside_tree`. See
//!   `confine` for how real paths are found cheaply.
//! - **Profiles** add to this: a name of `per_directory` may be a glob, expanded in each
//!   directory in its place (Claude Code's `.claude/rules/**/*.md`); a profile with
//!   `imports_inside_working_dir` follows an import of a walked file only when it leads inside the
//!   working directory, lexically (an existing file elsewhere is `unapproved_import`); with
//!   `extra_files_first` the extra files, each followed by its user fallback, come before
//!   everything else; with `imports_keep_line` an import is replaced by the imported file inside
//!   its line, the text around it kept.

use std::borrow::Cow;
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::io::ErrorKind;
use std::path::Path;

use super::confine::{Confinement, Placement};
use super::fs::{CappedRead, EntryKind, GuidanceFs};
use super::model::{
    DIRECTORY_INSTRUCTION_FILES, GuidanceOmission, GuidanceRequest, GuidanceResolution,
    GuidanceScope, GuidanceSource, MAX_SINGLE_FILE_BYTES, OmissionReason, USER_SCOPE_FILES,
};
use super::paths::{self, join, norm, parent};
use super::session::scan_session_blocks;
use super::text::{import_target, is_fence, strip_comments};
use projectfile_provider::discovery::{DiscoveryProfile, Walk};

/// Resolves every guidance source for one workspace, in precedence order, by the seed's rules.
///
/// Never fails: what could not be read is named in `omitted`.
pub fn resolve(fs: &dyn GuidanceFs, request: &GuidanceRequest) -> GuidanceResolution {
    let confine = Confinement::new(fs, request.allow_outside_tree);
    Engine::new(fs, &confine, Plan::from_request(request))
        .collect()
        .finish()
}

/// Answers "what would this CLI load": the same engine, driven by `profile` instead of the seed's
/// candidate list.
///
/// The profile decides the names, the walk, the user files, the extra files, the subtree scan,
/// imports, comment stripping, deduplication and the budget (see [`DiscoveryProfile`]). The
/// request supplies the paths (`workspace_root`, `working_dir`, `home_dir`), the scan limits
/// (`max_depth`, `max_dirs`, `skip_dirs`), `max_import_hops` (unless the profile sets its own),
/// `max_bytes` (when the profile has no budget), `include_user_scope` and the session namespace;
/// its `include_ancestors`, `include_subtree` and `editor_packs` are ignored.
pub fn resolve_as(
    fs: &dyn GuidanceFs,
    profile: &DiscoveryProfile,
    request: &GuidanceRequest,
) -> GuidanceResolution {
    collect_as(fs, profile, request).finish()
}

/// [`resolve_as`] up to its budget: every source the profile reads, in order, before the budget
/// keeps or cuts any, so one reading of the files can be budgeted more than once
/// ([`Collected::outline`]). `resolve_as` is `collect_as(..).finish()`.
pub(crate) fn collect_as(
    fs: &dyn GuidanceFs,
    profile: &DiscoveryProfile,
    request: &GuidanceRequest,
) -> Collected {
    let confine = Confinement::new(fs, request.allow_outside_tree);
    Engine::new(fs, &confine, Plan::from_profile(fs, profile, request)).collect()
}

/// What the budget does to one source (see [`budget_fates`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// Kept whole, charged to the budget.
    Whole,
    /// Kept whole, not charged (a user source when the profile's budget excludes them).
    Unbudgeted,
    /// Kept up to this byte (`budget_truncated`).
    Cut(usize),
    /// Dropped (`budget_exhausted`).
    Exhausted,
}

/// The fate of each of `sources` under `budget`: whole sources are kept in order while they fit,
/// the first one always (or, with `truncate`, the one crossing the budget is cut at a character
/// boundary and every later one dropped). The one rule [`Collected::finish`] and
/// [`Collected::outline`] both apply.
fn budget_fates(sources: &[GuidanceSource], budget: u64, rule: BudgetRule) -> Vec<Fate> {
    let BudgetRule {
        truncate,
        excludes_user,
        all_or_nothing,
    } = rule;
    let charged = |s: &GuidanceSource| !(excludes_user && s.scope == GuidanceScope::User);
    if all_or_nothing {
        let total: u64 = sources.iter().filter(|s| charged(s)).map(|s| s.bytes).sum();
        let fits = total <= budget;
        return sources
            .iter()
            .map(|s| match (charged(s), fits) {
                (false, _) => Fate::Unbudgeted,
                (true, true) => Fate::Whole,
                (true, false) => Fate::Exhausted,
            })
            .collect();
    }
    let mut fates = Vec::with_capacity(sources.len());
    let mut used = 0u64;
    let mut any_kept = false;
    for source in sources {
        if excludes_user && source.scope == GuidanceScope::User {
            fates.push(Fate::Unbudgeted);
            any_kept = true;
            continue;
        }
        let remaining = budget.saturating_sub(used);
        let fate = if source.bytes > remaining && (truncate || any_kept) {
            match truncate.then(|| floor_boundary(&source.body, remaining)) {
                Some(cut) if cut > 0 => Fate::Cut(cut),
                _ => Fate::Exhausted,
            }
        } else {
            Fate::Whole
        };
        match fate {
            Fate::Whole => used = used.saturating_add(source.bytes),
            Fate::Cut(cut) => used = used.saturating_add(cut as u64),
            Fate::Unbudgeted | Fate::Exhausted => {}
        }
        any_kept |= fate != Fate::Exhausted;
        fates.push(fate);
    }
    fates
}

/// How a budget treats the sources: cut the one crossing it, leave user sources uncharged,
/// keep everything or nothing (see [`DiscoveryProfile`]).
#[derive(Clone, Copy, Debug, Default)]
struct BudgetRule {
    truncate: bool,
    excludes_user: bool,
    all_or_nothing: bool,
}

/// Every source a resolution read, before its budget (see [`collect_as`]).
pub(crate) struct Collected {
    sources: Vec<GuidanceSource>,
    omitted: Vec<GuidanceOmission>,
    dirs_scanned: u64,
    budget: u64,
    rule: BudgetRule,
}

impl Collected {
    /// The budget the plan puts in force (the profile's, or the request's `max_bytes`).
    pub(crate) fn budget(&self) -> u64 {
        self.budget
    }

    /// The resolution under the plan's own budget.
    fn finish(self) -> GuidanceResolution {
        let fates = budget_fates(&self.sources, self.budget, self.rule);
        let mut omitted = self.omitted;
        let mut kept = Vec::with_capacity(self.sources.len());
        let mut tally = Tally::default();
        for (mut source, fate) in self.sources.into_iter().zip(fates) {
            if let Some(omission) = tally.charge(&source, fate) {
                omitted.push(omission);
            }
            match fate {
                Fate::Exhausted => continue,
                Fate::Cut(cut) => {
                    source.body.truncate(cut);
                    source.bytes = cut as u64;
                }
                Fate::Whole | Fate::Unbudgeted => {}
            }
            kept.push(source);
        }
        tally.resolution(kept, omitted, self.budget, self.dirs_scanned)
    }

    /// The resolution under `budget`, without the bodies (each source's `body` is empty, its
    /// `bytes` what the budget keeps): paths, bytes and reasons, as [`resolve_as`] with that
    /// budget would report them.
    pub(crate) fn outline(&self, budget: u64) -> GuidanceResolution {
        let fates = budget_fates(&self.sources, budget, self.rule);
        let mut omitted = self.omitted.clone();
        let mut kept = Vec::with_capacity(self.sources.len());
        let mut tally = Tally::default();
        for (source, fate) in self.sources.iter().zip(fates) {
            if let Some(omission) = tally.charge(source, fate) {
                omitted.push(omission);
            }
            let bytes = match fate {
                Fate::Exhausted => continue,
                Fate::Cut(cut) => cut as u64,
                Fate::Whole | Fate::Unbudgeted => source.bytes,
            };
            kept.push(GuidanceSource {
                path: source.path.clone(),
                scope: source.scope,
                depth: source.depth,
                body: String::new(),
                bytes,
                imported_from: source.imported_from.clone(),
            });
        }
        tally.resolution(kept, omitted, budget, self.dirs_scanned)
    }
}

/// The byte counts of a resolution being budgeted.
#[derive(Default)]
struct Tally {
    used: u64,
    unbudgeted: u64,
    cut: u64,
}

impl Tally {
    /// Counts `source` under `fate`; the omission it reports, if any.
    fn charge(&mut self, source: &GuidanceSource, fate: Fate) -> Option<GuidanceOmission> {
        let (reason, cut_bytes) = match fate {
            Fate::Whole => {
                self.used = self.used.saturating_add(source.bytes);
                return None;
            }
            Fate::Unbudgeted => {
                self.unbudgeted = self.unbudgeted.saturating_add(source.bytes);
                return None;
            }
            Fate::Cut(cut) => {
                self.used = self.used.saturating_add(cut as u64);
                (OmissionReason::BudgetTruncated, source.bytes - cut as u64)
            }
            Fate::Exhausted => (OmissionReason::BudgetExhausted, source.bytes),
        };
        self.cut = self.cut.saturating_add(cut_bytes);
        Some(GuidanceOmission::new(
            source.path.clone(),
            reason,
            cut_bytes,
        ))
    }

    fn resolution(
        self,
        sources: Vec<GuidanceSource>,
        omitted: Vec<GuidanceOmission>,
        budget: u64,
        dirs_scanned: u64,
    ) -> GuidanceResolution {
        GuidanceResolution {
            sources,
            omitted,
            total_bytes: self.used.saturating_add(self.unbudgeted),
            budget_bytes: budget,
            cut_bytes: self.cut,
            unbudgeted_bytes: self.unbudgeted,
            dirs_scanned,
        }
    }
}

/// Which names are read in one candidate directory, and how they exclude each other.
#[derive(Clone, Debug)]
struct NameRule {
    /// Plain names or globs (expanded in each directory, see [`NameRule::expanded`]).
    names: Vec<String>,
    first_wins: bool,
    exclusive: Vec<(String, String)>,
    /// The names a glob matched before the rule was made (user files); empty: none.
    globbed: Vec<bool>,
}

impl NameRule {
    fn all(names: Vec<String>) -> Self {
        NameRule {
            names,
            first_wins: false,
            exclusive: Vec::new(),
            globbed: Vec::new(),
        }
    }

    /// The rule in `dir`: each glob replaced by its matches there (relative to `dir`, sorted),
    /// with, for each name, whether a glob matched it. A glob whose first segment `listing`
    /// rules out is not expanded (no match, no system call).
    fn expanded(
        &self,
        fs: &dyn GuidanceFs,
        dir: &str,
        listing: Option<&[String]>,
    ) -> (Cow<'_, NameRule>, Vec<bool>) {
        let pre = |index: usize| self.globbed.get(index).copied().unwrap_or(false);
        if !self.names.iter().any(|n| paths::has_wildcard(n)) {
            return (
                Cow::Borrowed(self),
                (0..self.names.len()).map(pre).collect(),
            );
        }
        let mut names = Vec::with_capacity(self.names.len());
        let mut globbed = Vec::with_capacity(self.names.len());
        for (index, name) in self.names.iter().enumerate() {
            if !paths::has_wildcard(name) {
                names.push(name.clone());
                globbed.push(pre(index));
                continue;
            }
            if !maybe_present(name, listing) {
                continue;
            }
            let mut matches: Vec<String> = glob(fs, dir, name)
                .into_iter()
                .filter_map(|m| {
                    m.strip_prefix(dir)
                        .map(|rest| rest.trim_start_matches('/').to_string())
                })
                .collect();
            matches.sort();
            globbed.extend(matches.iter().map(|_| true));
            names.extend(matches);
        }
        let rule = NameRule {
            names,
            first_wins: self.first_wins,
            exclusive: self.exclusive.clone(),
            globbed: globbed.clone(),
        };
        (Cow::Owned(rule), globbed)
    }
}

/// One fixed candidate: a directory with its scope, and the names read there.
#[derive(Clone, Debug)]
struct Group {
    dir: String,
    scope: GuidanceScope,
    depth: i32,
    /// The tree its files (and their imports) must stay in.
    tree: String,
    /// `None`: the plan's per-directory rule.
    names: Option<NameRule>,
}

#[derive(Clone, Debug)]
struct Subtree {
    start: String,
    /// The tree scoped files must stay in: the workspace root, or the start when the working
    /// directory lies outside the root.
    tree: String,
    max_depth: usize,
    max_dirs: usize,
    skip: Vec<String>,
}

/// Everything the engine needs, decided before the first read of guidance text.
#[derive(Clone, Debug)]
struct Plan {
    groups: Vec<Group>,
    dir_rule: NameRule,
    subtree: Option<Subtree>,
    packs: Vec<String>,
    pack_root: String,
    /// A second directory the packs are looked up in, after `pack_root`
    /// (`extra_files_also_at_working_dir`).
    also_pack_root: Option<String>,
    /// Packs that duplicate an earlier body are named (`duplicate_body`) rather than skipped
    /// silently (profiles: an extra file is as much the CLI's input as any other).
    report_pack_duplicates: bool,
    home: Option<String>,
    hops: usize,
    strip_comments: bool,
    dedupe: bool,
    budget: u64,
    truncate: bool,
    namespace: String,
    /// Profile extensions (all off for the seed's rules); see [`ProfileRules`].
    rules: ProfileRules,
}

/// What a discovery profile adds to the seed's engine, decided before the first read.
#[derive(Clone, Debug, Default)]
struct ProfileRules {
    /// `(name, by)`: `name` is shadowed in every walked directory by the file `by`
    /// (`exclusive_across_walk`).
    walk_shadows: Vec<(String, String)>,
    /// `(extra, user)` as full paths: the user file is read only when the extra one is absent.
    user_fallbacks: Vec<(String, String)>,
    /// The subtree scan lists files as `on_demand` instead of reading them.
    subtree_on_demand: bool,
    /// Extra files with a `paths:` front-matter key are `on_demand`.
    path_rules_on_demand: bool,
    /// Bodies untrimmed, session blocks with their markers.
    verbatim: bool,
    /// User-scope sources are not charged to the budget.
    budget_excludes_user: bool,
    /// Files that are not UTF-8 are read with replacement characters instead of dropped.
    lossy_utf8: bool,
    /// Each directory is read once per name (`names_across_walk`).
    names_across_walk: bool,
    /// `(root, files)`: the profile's `marked_root_files`, read at the root its markers found
    /// (none when no marker was found), before the extra files.
    marked_root: Option<(String, Vec<String>)>,
    /// Over the budget nothing is kept (`budget_all_or_nothing`).
    all_or_nothing: bool,
    /// Extra files with an `applyTo:` front-matter pattern other than `**` are `on_demand`.
    apply_to_on_demand: bool,
    /// The extra files (and their user fallbacks) are read before everything else.
    extras_first: bool,
    /// Imports of walked files are followed only inside this directory (the working directory;
    /// `imports_inside_working_dir`).
    imports_inside: Option<String>,
    /// The text around an import on its line is kept (`imports_keep_line`).
    imports_keep_line: bool,
}

impl Plan {
    fn from_request(request: &GuidanceRequest) -> Self {
        let root = norm(&request.workspace_root).to_string();
        let working_dir = norm(request.working_dir.as_deref().unwrap_or(&root)).to_string();
        let home = request.home_dir.as_deref().unwrap_or("");
        let mut groups = Vec::new();
        if request.include_user_scope && !home.is_empty() {
            for rel in USER_SCOPE_FILES {
                groups.push(Group {
                    dir: norm(home).to_string(),
                    scope: GuidanceScope::User,
                    depth: -1,
                    tree: norm(home).to_string(),
                    names: Some(NameRule::all(vec![rel.to_string()])),
                });
            }
        }
        if request.include_ancestors {
            for dir in paths::ancestors(&root) {
                groups.push(Group {
                    tree: dir.clone(),
                    dir,
                    scope: GuidanceScope::Ancestor,
                    depth: -1,
                    names: None,
                });
            }
        }
        for dir in paths::chain(&root, &working_dir) {
            groups.push(Group {
                dir,
                scope: GuidanceScope::Workspace,
                depth: 0,
                tree: root.clone(),
                names: None,
            });
        }
        let subtree = request.include_subtree.then(|| Subtree {
            tree: subtree_tree(&root, &working_dir),
            start: working_dir.clone(),
            max_depth: request.max_depth,
            max_dirs: request.max_dirs,
            skip: request.skip_dirs.clone(),
        });
        Plan {
            groups,
            dir_rule: NameRule::all(
                DIRECTORY_INSTRUCTION_FILES
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            ),
            subtree,
            packs: request.editor_packs.clone(),
            pack_root: root,
            also_pack_root: None,
            report_pack_duplicates: false,
            home: (!home.is_empty()).then(|| norm(home).to_string()),
            hops: request.max_import_hops,
            strip_comments: true,
            dedupe: true,
            budget: request.max_bytes,
            truncate: false,
            namespace: request.namespace().to_string(),
            rules: ProfileRules::default(),
        }
    }

    fn from_profile(
        fs: &dyn GuidanceFs,
        profile: &DiscoveryProfile,
        request: &GuidanceRequest,
    ) -> Self {
        let workspace = norm(&request.workspace_root).to_string();
        let working_dir = norm(request.working_dir.as_deref().unwrap_or(&workspace)).to_string();
        let home = request.home_dir.as_deref().unwrap_or("");
        let marker_root = find_profile_root(fs, profile, &workspace, &working_dir);
        // Without a marker, Codex reads only the working directory; extras hang off it too.
        let root = marker_root.clone().unwrap_or_else(|| working_dir.clone());
        let dirs = walked_dirs(profile.walk, marker_root.as_deref(), &working_dir, home);
        let user_scope = request.include_user_scope && !home.is_empty();
        let user_files = if user_scope {
            user_names(fs, home, &profile.user_files)
        } else {
            Vec::new()
        };
        let groups = profile_groups(profile, dirs, &workspace, norm(home), user_files);
        let home_dir = (!home.is_empty()).then(|| norm(home).to_string());
        let pack_root = if profile.extra_files_at_working_dir {
            working_dir.clone()
        } else {
            root
        };
        let also_pack_root = (profile.extra_files_also_at_working_dir && pack_root != working_dir)
            .then(|| working_dir.clone());
        let rules = ProfileRules {
            walk_shadows: walk_shadows(fs, profile, &groups),
            user_fallbacks: match &home_dir {
                Some(home) if request.include_user_scope => profile
                    .user_fallbacks
                    .iter()
                    .map(|(extra, user)| (join(&pack_root, extra), join(home, user)))
                    .collect(),
                _ => Vec::new(),
            },
            subtree_on_demand: profile.on_demand_subtree && !profile.include_subtree,
            path_rules_on_demand: profile.on_demand_path_rules,
            verbatim: profile.verbatim,
            budget_excludes_user: profile.budget_excludes_user,
            lossy_utf8: profile.lossy_utf8,
            names_across_walk: profile.names_across_walk,
            marked_root: marker_root
                .filter(|_| !profile.marked_root_files.is_empty())
                .map(|root| (root, profile.marked_root_files.clone())),
            all_or_nothing: profile.budget_all_or_nothing,
            apply_to_on_demand: profile.on_demand_apply_to,
            extras_first: profile.extra_files_first,
            imports_inside: profile
                .imports_inside_working_dir
                .then(|| working_dir.clone()),
            imports_keep_line: profile.imports_keep_line,
        };
        let scan_subtree = profile.include_subtree || profile.on_demand_subtree;
        let subtree = scan_subtree.then(|| Subtree {
            tree: subtree_tree(&workspace, &working_dir),
            start: working_dir.clone(),
            max_depth: request.max_depth,
            max_dirs: request.max_dirs,
            skip: request.skip_dirs.clone(),
        });
        let hops = if profile.imports {
            profile.max_import_hops.unwrap_or(request.max_import_hops)
        } else {
            0
        };
        Plan {
            groups,
            dir_rule: NameRule {
                names: profile.per_directory.clone(),
                first_wins: profile.first_wins,
                exclusive: profile.exclusive_if_present.clone(),
                globbed: Vec::new(),
            },
            subtree,
            packs: profile.extra_files.clone(),
            pack_root,
            also_pack_root,
            report_pack_duplicates: true,
            home: home_dir,
            hops,
            strip_comments: profile.strip_html_comments,
            dedupe: profile.dedupe_bodies,
            budget: profile.budget_bytes.unwrap_or(request.max_bytes),
            truncate: profile.truncate_at_budget,
            namespace: request.namespace().to_string(),
            rules,
        }
    }
}

/// The candidate groups of a profile: the user files (`user_files`, each with whether a glob
/// matched it) and the walked directories `dirs`, in the profile's reading order.
fn profile_groups(
    profile: &DiscoveryProfile,
    dirs: Vec<String>,
    workspace: &str,
    home: &str,
    user_files: Vec<(String, bool)>,
) -> Vec<Group> {
    if profile.names_across_walk {
        let user_files: Vec<String> = user_files.into_iter().map(|(name, _)| name).collect();
        return name_major_groups(profile, &dirs, workspace, home, &user_files);
    }
    let mut groups = Vec::new();
    if !user_files.is_empty() {
        let (names, globbed) = user_files.into_iter().unzip();
        groups.push(Group {
            dir: home.to_string(),
            scope: GuidanceScope::User,
            depth: -1,
            tree: home.to_string(),
            names: Some(NameRule {
                names,
                first_wins: profile.first_wins,
                exclusive: profile.exclusive_if_present.clone(),
                globbed,
            }),
        });
    }
    groups.extend(dirs.into_iter().map(|dir| walked(dir, workspace, None)));
    groups
}

/// The directories `walk` reads, broadest first: `marker_root` is the root the profile's markers
/// found, `home` the home directory (empty when unknown).
fn walked_dirs(
    walk: Walk,
    marker_root: Option<&str>,
    working_dir: &str,
    home: &str,
) -> Vec<String> {
    let from_the_top = || {
        let mut dirs = paths::ancestors(working_dir);
        dirs.push(working_dir.to_string());
        dirs
    };
    match walk {
        Walk::RootToCwd => match marker_root {
            Some(root) => paths::chain(root, working_dir),
            None => vec![working_dir.to_string()],
        },
        Walk::CwdUpToFsRoot => from_the_top(),
        Walk::CwdUpToRoot => match marker_root {
            Some(root) => paths::chain(root, working_dir),
            None => from_the_top(),
        },
        Walk::AboveRootToCwd => {
            let top = match marker_root {
                Some(root) => parent(root).or(Some(root)),
                None => parent(norm(home))
                    .filter(|top| !home.is_empty() && paths::within(working_dir, top)),
            };
            match top {
                Some(top) => paths::chain(top, working_dir),
                None => from_the_top(),
            }
        }
    }
}

/// A walked directory as a candidate: scope `workspace` inside the workspace, `ancestor` above
/// it; `names`: `None` for the plan's per-directory rule.
fn walked(dir: String, workspace: &str, names: Option<NameRule>) -> Group {
    let (scope, depth, tree) = if paths::within(&dir, workspace) {
        (GuidanceScope::Workspace, 0, workspace.to_string())
    } else {
        (GuidanceScope::Ancestor, -1, dir.clone())
    };
    Group {
        dir,
        scope,
        depth,
        tree,
        names,
    }
}

/// For `names_across_walk`: each name of `per_directory` across every walked directory, the user
/// file of that name first; user files (relative to `home`, globs expanded) of no walked name
/// come before everything.
fn name_major_groups(
    profile: &DiscoveryProfile,
    dirs: &[String],
    workspace: &str,
    home: &str,
    user_files: &[String],
) -> Vec<Group> {
    let user = |rel: &String| Group {
        dir: home.to_string(),
        scope: GuidanceScope::User,
        depth: -1,
        tree: home.to_string(),
        names: Some(NameRule::all(vec![rel.clone()])),
    };
    let file_name = |rel: &str| rel.rsplit('/').next().unwrap_or(rel).to_string();
    let mut groups: Vec<Group> = user_files
        .iter()
        .filter(|rel| {
            !profile
                .per_directory
                .iter()
                .any(|n| file_name(n) == file_name(rel))
        })
        .map(user)
        .collect();
    for name in &profile.per_directory {
        groups.extend(
            user_files
                .iter()
                .filter(|rel| file_name(rel) == file_name(name))
                .map(user),
        );
        for dir in dirs {
            let names = NameRule::all(vec![name.clone()]);
            groups.push(walked(dir.clone(), workspace, Some(names)));
        }
    }
    groups
}

/// For `exclusive_across_walk`: each skipped name with the first file (in walk order) whose
/// presence shadows it. Only the walked directories count, never the home directory.
fn walk_shadows(
    fs: &dyn GuidanceFs,
    profile: &DiscoveryProfile,
    groups: &[Group],
) -> Vec<(String, String)> {
    let mut shadows: Vec<(String, String)> = Vec::new();
    if !profile.exclusive_across_walk {
        return shadows;
    }
    for group in groups.iter().filter(|g| g.scope != GuidanceScope::User) {
        for (present, skipped) in &profile.exclusive_if_present {
            if shadows.iter().any(|(name, _)| name == skipped) {
                continue;
            }
            let path = join(&group.dir, present);
            if read(fs, &path, false).is_present() {
                shadows.push((skipped.clone(), path));
            }
        }
    }
    shadows
}

/// The tree of the subtree scan's files: the workspace root when the scan starts inside it,
/// otherwise the start itself.
fn subtree_tree(root: &str, start: &str) -> String {
    if paths::within(start, root) {
        root.to_string()
    } else {
        start.to_string()
    }
}

/// The root the profile's markers find from `working_dir` (the git top for `git_root`, the
/// workspace when it names no marker); `None` when no marker is found.
fn find_profile_root(
    fs: &dyn GuidanceFs,
    profile: &DiscoveryProfile,
    workspace: &str,
    working_dir: &str,
) -> Option<String> {
    if profile.git_root {
        find_git_root(fs, working_dir)
    } else if profile.root_markers.is_empty() {
        Some(workspace.to_string())
    } else {
        find_marker_root(fs, working_dir, &profile.root_markers)
    }
}

/// The profile's user files relative to `home`, each glob replaced by its matches (sorted), each
/// with whether a glob matched it.
fn user_names(fs: &dyn GuidanceFs, home: &str, user_files: &[String]) -> Vec<(String, bool)> {
    let home = norm(home);
    let mut names = Vec::with_capacity(user_files.len());
    for entry in user_files {
        if !entry.contains('*') && !entry.contains('?') {
            names.push((entry.clone(), false));
            continue;
        }
        let mut matches: Vec<String> = glob(fs, home, entry)
            .into_iter()
            .filter_map(|m| {
                m.strip_prefix(home)
                    .map(|rest| rest.trim_start_matches('/').to_string())
            })
            .collect();
        matches.sort();
        names.extend(matches.into_iter().map(|m| (m, true)));
    }
    names
}

/// The top of the git repository holding `working_dir`, as git finds it: the nearest of it and
/// its ancestors holding a `.git` directory with a `HEAD`, or a `.git` file (a linked worktree, a
/// submodule). An empty `.git` folder does not count.
pub(crate) fn find_git_root(fs: &dyn GuidanceFs, working_dir: &str) -> Option<String> {
    let kind = |path: String| {
        fs.stat(Path::new(&path))
            .map_or(EntryKind::Missing, |stat| stat.kind)
    };
    let mut current = Some(working_dir);
    while let Some(dir) = current {
        let found = match kind(join(dir, ".git")) {
            EntryKind::File => true,
            EntryKind::Dir => kind(join(dir, ".git/HEAD")) != EntryKind::Missing,
            _ => false,
        };
        if found {
            return Some(dir.to_string());
        }
        current = parent(dir);
    }
    None
}

/// The nearest of `working_dir` and its ancestors (the file-system root excluded, as everywhere in
/// the walk) holding any of `markers`, in any form (a `.git` file of a worktree counts).
fn find_marker_root(fs: &dyn GuidanceFs, working_dir: &str, markers: &[String]) -> Option<String> {
    let mut current = Some(working_dir);
    while let Some(dir) = current {
        let found = markers.iter().any(|marker| {
            fs.stat(Path::new(&join(dir, marker)))
                .is_ok_and(|stat| stat.kind != EntryKind::Missing)
        });
        if found {
            return Some(dir.to_string());
        }
        current = parent(dir);
    }
    None
}

/// From how many candidate names on a directory the walk lists it rather than reading each name
/// (see [`Engine::walk`]).
const LIST_FOR_PRESENCE_MIN_NAMES: usize = 2;

/// What one read produced.
enum Loaded {
    Absent,
    Text(String),
    TooLarge(u64),
    /// Not valid UTF-8 (and not read lossily): its size.
    NotUtf8(u64),
    Unreadable,
    /// Not read: it leads to this real path, outside its tree.
    OutsideTree(String),
}

impl Loaded {
    fn is_present(&self) -> bool {
        !matches!(self, Loaded::Absent)
    }

    /// The file's size as far as the read told it (0 when it could not be read).
    fn size(&self) -> u64 {
        match self {
            Loaded::Absent | Loaded::Unreadable | Loaded::OutsideTree(_) => 0,
            Loaded::Text(text) => text.len() as u64,
            Loaded::TooLarge(len) => *len,
            Loaded::NotUtf8(len) => *len,
        }
    }
}

/// Reads `path` when it stays inside `tree` (see [`Confinement`]).
/// With `lossy`, a file that is not UTF-8 is read with replacement characters (see
/// [`DiscoveryProfile::lossy_utf8`]).
fn load(
    fs: &dyn GuidanceFs,
    confine: &Confinement<'_>,
    path: &str,
    tree: &str,
    lossy: bool,
) -> Loaded {
    match confine.place(path, tree) {
        Placement::Inside => read(fs, path, lossy),
        Placement::Outside { real } => Loaded::OutsideTree(real),
        Placement::Absent => Loaded::Absent,
        Placement::Unknown => Loaded::Unreadable,
    }
}

fn read(fs: &dyn GuidanceFs, path: &str, lossy: bool) -> Loaded {
    match fs.read_capped(Path::new(path), MAX_SINGLE_FILE_BYTES) {
        Ok(CappedRead::Complete(bytes)) => {
            let decoded = match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(err) if lossy => String::from_utf8_lossy(err.as_bytes()).into_owned(),
                Err(err) => return Loaded::NotUtf8(err.as_bytes().len() as u64),
            };
            let mut text = decoded;
            if text.starts_with('\u{feff}') {
                text.replace_range(..'\u{feff}'.len_utf8(), "");
            }
            Loaded::Text(text)
        }
        Ok(CappedRead::TooLarge { len }) => Loaded::TooLarge(len),
        Err(err)
            if matches!(
                err.kind(),
                ErrorKind::NotFound | ErrorKind::IsADirectory | ErrorKind::NotADirectory
            ) =>
        {
            Loaded::Absent
        }
        Err(_) => Loaded::Unreadable,
    }
}

/// Whether a directory listing leaves room for `name` to exist (see the module doc).
fn maybe_present(name: &str, listing: Option<&[String]>) -> bool {
    let Some(listing) = listing else {
        return true;
    };
    let first = name.split('/').next().unwrap_or(name);
    if !first.is_ascii() {
        return true;
    }
    listing
        .iter()
        .any(|entry| entry.eq_ignore_ascii_case(first))
}

fn body_hash(body: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    body.hash(&mut hasher);
    hasher.finish()
}

/// A session block cut out of a file, waiting to be placed after its host.
struct SessionPiece {
    path: String,
    body: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Directory,
    Pack,
}

/// Where a candidate file was found: its directory, scope, depth and the tree it must stay in.
#[derive(Clone, Copy)]
struct Site<'s> {
    dir: &'s str,
    scope: GuidanceScope,
    depth: i32,
    tree: &'s str,
}

/// The import chain being expanded: the tree it must stay in, the lexically folded paths of the
/// files on it (cycle detection) and the paths as joined (the last one is the importer).
struct Chain<'t> {
    tree: &'t str,
    folded: Vec<String>,
    files: Vec<String>,
    /// Imports are followed only inside this directory (`imports_inside_working_dir`, for a
    /// chain started by a file of the walk).
    inside: Option<String>,
}

struct Engine<'a> {
    fs: &'a dyn GuidanceFs,
    confine: &'a Confinement<'a>,
    plan: Plan,
    sources: Vec<GuidanceSource>,
    omitted: Vec<GuidanceOmission>,
    seen_paths: HashSet<String>,
    /// Body hash → indices into `sources` of user bodies with that hash.
    bodies: HashMap<u64, Vec<usize>>,
    /// The same for session bodies, which are deduplicated only among themselves.
    session_bodies: HashMap<u64, Vec<usize>>,
    session_paths: HashSet<String>,
    notices: HashSet<(String, OmissionReason)>,
}

impl<'a> Engine<'a> {
    fn new(fs: &'a dyn GuidanceFs, confine: &'a Confinement<'a>, plan: Plan) -> Self {
        Engine {
            fs,
            confine,
            plan,
            sources: Vec::new(),
            omitted: Vec::new(),
            seen_paths: HashSet::new(),
            bodies: HashMap::new(),
            session_bodies: HashMap::new(),
            session_paths: HashSet::new(),
            notices: HashSet::new(),
        }
    }

    fn collect(mut self) -> Collected {
        if self.plan.rules.extras_first {
            self.extras();
        }
        let groups = std::mem::take(&mut self.plan.groups);
        let dir_rule = self.plan.dir_rule.clone();
        for group in &groups {
            let rule = group.names.as_ref().unwrap_or(&dir_rule);
            let site = Site {
                dir: &group.dir,
                scope: group.scope,
                depth: group.depth,
                tree: &group.tree,
            };
            self.visit(site, rule, None);
        }
        // A directory read once per name (`names_across_walk`) is still one directory.
        let mut dirs_scanned = if self.plan.rules.names_across_walk {
            let distinct: HashSet<(&str, GuidanceScope)> =
                groups.iter().map(|g| (g.dir.as_str(), g.scope)).collect();
            distinct.len() as u64
        } else {
            groups.len() as u64
        };
        if let Some(subtree) = self.plan.subtree.take() {
            dirs_scanned += self.walk(&subtree, &dir_rule) as u64;
        }
        if !self.plan.rules.extras_first {
            self.extras();
        }
        Collected {
            sources: self.sources,
            omitted: self.omitted,
            dirs_scanned,
            budget: self.plan.budget,
            rule: BudgetRule {
                truncate: self.plan.truncate,
                excludes_user: self.plan.rules.budget_excludes_user,
                all_or_nothing: self.plan.rules.all_or_nothing,
            },
        }
    }

    /// The editor packs (a profile's extra files), each followed by its user fallback, then any
    /// fallback whose extra file was not among them.
    fn extras(&mut self) {
        for (full, tree) in self.pack_paths() {
            self.extra(&full, &tree);
            self.user_fallbacks(Some(&full));
        }
        self.user_fallbacks(None);
    }

    /// One editor pack (or extra file) at `full`, in `tree`.
    fn extra(&mut self, full: &str, tree: &str) {
        if !self.seen_paths.insert(full.to_string()) {
            return;
        }
        let loaded = self.load(full, tree);
        if let Loaded::Text(text) = &loaded
            && ((self.plan.rules.path_rules_on_demand && has_paths_front_matter(text))
                || (self.plan.rules.apply_to_on_demand && applies_to_some_paths(text)))
        {
            self.note(full, OmissionReason::OnDemand, loaded.size());
            return;
        }
        let base = parent(full).unwrap_or(tree).to_string();
        let site = Site {
            dir: &base,
            scope: GuidanceScope::EditorPack,
            depth: 0,
            tree,
        };
        self.accept(full, loaded, site, Kind::Pack);
    }

    /// The `(extra, user)` fallbacks of the extra file `of` (every one left when `None`): the
    /// user file is read when the extra file is absent, and is reported `shadowed` by it
    /// otherwise.
    fn user_fallbacks(&mut self, of: Option<&str>) {
        let (these, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.plan.rules.user_fallbacks)
            .into_iter()
            .partition(|(extra, _)| of.is_none_or(|of| of == extra));
        self.plan.rules.user_fallbacks = rest;
        for (extra, user) in these {
            if !self.seen_paths.insert(user.clone()) {
                continue;
            }
            let home = self.plan.home.clone().unwrap_or_default();
            let loaded = self.load(&user, &home);
            if !loaded.is_present() {
                continue;
            }
            if read(self.fs, &extra, false).is_present() {
                self.shadow(&user, &extra, loaded.size());
                continue;
            }
            let base = parent(&user).unwrap_or(&user).to_string();
            let site = Site {
                dir: &base,
                scope: GuidanceScope::User,
                depth: -1,
                tree: &home,
            };
            self.accept(&user, loaded, site, Kind::Pack);
        }
    }

    /// The breadth-first subtree scan below `subtree.start`, reading each directory's guidance as
    /// it comes up. Returns how many directories it found (the seed's `len(subtree)`).
    ///
    /// One FIFO queue gives the seed's level-by-level order: a directory is listed when it comes
    /// up, if it is above `max_depth` and the `max_dirs` budget is not spent; directories found
    /// are candidates in discovery order, whether or not they are listed themselves.
    fn walk(&mut self, subtree: &Subtree, rule: &NameRule) -> usize {
        let mut scanned = 0usize;
        let mut queue: VecDeque<(String, usize)> = VecDeque::new();
        queue.push_back((subtree.start.clone(), 0));
        while let Some((dir, depth)) = queue.pop_front() {
            let mut listing: Option<Vec<String>> = None;
            let list_children = depth < subtree.max_depth && scanned < subtree.max_dirs;
            // A directory the seed does not list (at `max_depth`, or found after `max_dirs` was
            // reached) is still a candidate: one listing answers for all its names with one path
            // lookup, where reading each name would cost one failed lookup per name.
            let list_for_presence = depth > 0 && rule.names.len() >= LIST_FOR_PRESENCE_MIN_NAMES;
            if (list_children || list_for_presence)
                && let Ok(entries) = self.fs.list_dir(Path::new(&dir))
            {
                let mut names: Vec<String> = Vec::with_capacity(entries.len());
                let mut children: Vec<usize> = Vec::new();
                for entry in entries {
                    // A name that is not UTF-8 cannot be joined into a string path: skipped.
                    let Ok(name) = entry.name.into_string() else {
                        continue;
                    };
                    if list_children
                        && entry.kind == EntryKind::Dir
                        && !name.starts_with('.')
                        && !subtree.skip.contains(&name)
                    {
                        children.push(names.len());
                    }
                    names.push(name);
                }
                children.sort_unstable_by(|a, b| names[*a].cmp(&names[*b]));
                for index in children {
                    if scanned >= subtree.max_dirs {
                        break;
                    }
                    scanned += 1;
                    self.confine.entered(&dir, &names[index]);
                    queue.push_back((join(&dir, &names[index]), depth + 1));
                }
                listing = Some(names);
            }
            if depth > 0 {
                let site = Site {
                    dir: &dir,
                    scope: GuidanceScope::Scoped,
                    depth: i32::try_from(depth).unwrap_or(i32::MAX),
                    tree: &subtree.tree,
                };
                self.visit(site, rule, listing.as_deref());
            }
        }
        scanned
    }

    /// Reads the names of `rule` in the site's directory and accepts each chosen file.
    fn visit(&mut self, site: Site<'_>, rule: &NameRule, listing: Option<&[String]>) {
        let (fs, confine, dir, tree) = (self.fs, self.confine, site.dir, site.tree);
        let lossy = self.plan.rules.lossy_utf8;
        let (rule, globbed) = rule.expanded(fs, dir, listing);
        let names = &rule.names;
        let mut memo: Vec<Option<Loaded>> = Vec::new();
        memo.resize_with(names.len(), || None);
        let fetch = |slot: &mut Option<Loaded>, name: &str| -> bool {
            if slot.is_none() {
                *slot = Some(if maybe_present(name, listing) {
                    load(fs, confine, &join(dir, name), tree, lossy)
                } else {
                    Loaded::Absent
                });
            }
            slot.as_ref().is_some_and(Loaded::is_present)
        };
        // For each name, the file that takes its place, if any.
        let mut shadowed_by: Vec<Option<String>> = vec![None; names.len()];
        if rule.first_wins
            && let Some(first) = (0..names.len()).find(|i| fetch(&mut memo[*i], &names[*i]))
        {
            let winner = join(dir, &names[first]);
            for (index, slot) in shadowed_by.iter_mut().enumerate() {
                if index != first {
                    *slot = Some(winner.clone());
                }
            }
        }
        for (present, skipped) in &rule.exclusive {
            let is_present = match names.iter().position(|n| n == present) {
                Some(index) => fetch(&mut memo[index], present),
                None => {
                    maybe_present(present, listing)
                        && load(fs, confine, &join(dir, present), tree, false).is_present()
                }
            };
            if is_present {
                for (index, name) in names.iter().enumerate() {
                    if name == skipped && shadowed_by[index].is_none() {
                        shadowed_by[index] = Some(join(dir, present));
                    }
                }
            }
        }
        if matches!(
            site.scope,
            GuidanceScope::Workspace | GuidanceScope::Ancestor
        ) {
            for (skipped, by) in &self.plan.rules.walk_shadows {
                for (index, name) in names.iter().enumerate() {
                    if name == skipped && shadowed_by[index].is_none() {
                        shadowed_by[index] = Some(by.clone());
                    }
                }
            }
        }
        let on_demand = site.scope == GuidanceScope::Scoped && self.plan.rules.subtree_on_demand;
        for (index, name) in names.iter().enumerate() {
            if memo[index].is_none() && !maybe_present(name, listing) {
                continue;
            }
            let full = join(dir, name);
            if !self.seen_paths.insert(full.clone()) {
                continue;
            }
            let loaded = memo[index]
                .take()
                .unwrap_or_else(|| load(fs, confine, &full, tree, lossy));
            if !loaded.is_present() {
                continue;
            }
            let path_rule = globbed[index]
                && self.plan.rules.path_rules_on_demand
                && matches!(&loaded, Loaded::Text(text) if has_paths_front_matter(text));
            if let Some(by) = shadowed_by[index].take() {
                self.shadow(&full, &by, loaded.size());
            } else if on_demand || path_rule {
                self.note(&full, OmissionReason::OnDemand, loaded.size());
            } else {
                self.accept(&full, loaded, site, Kind::Directory);
            }
        }
    }

    /// Reads `path` inside `tree` as the profile reads (see [`load`]).
    fn load(&self, path: &str, tree: &str) -> Loaded {
        load(
            self.fs,
            self.confine,
            path,
            tree,
            self.plan.rules.lossy_utf8,
        )
    }

    /// Records that `path` is not read because `by` takes its place.
    fn shadow(&mut self, path: &str, by: &str, bytes: u64) {
        self.note_omission(GuidanceOmission {
            shadowed_by: Some(by.to_string()),
            ..GuidanceOmission::new(path, OmissionReason::Shadowed, bytes)
        });
    }

    /// Records a notice once per (path, reason).
    fn note(&mut self, path: &str, reason: OmissionReason, bytes: u64) {
        self.note_omission(GuidanceOmission::new(path, reason, bytes));
    }

    fn note_omission(&mut self, omission: GuidanceOmission) {
        if self
            .notices
            .insert((omission.path.clone(), omission.reason))
        {
            self.omitted.push(omission);
        }
    }

    /// Records that `path` (imported by `importer`, if any) leads to `real`, outside its tree.
    fn note_outside(&mut self, path: &str, real: String, importer: Option<&str>) {
        self.note_omission(GuidanceOmission {
            resolves_to: Some(real),
            imported_from: importer.map(str::to_string),
            ..GuidanceOmission::new(path, OmissionReason::OutsideTree, 0)
        });
    }

    fn has_body(&self, index: &HashMap<u64, Vec<usize>>, hash: u64, body: &str) -> bool {
        index
            .get(&hash)
            .is_some_and(|indices| indices.iter().any(|i| self.sources[*i].body == body))
    }

    /// Cuts our session blocks out of `text` (found in `path`), in place, queueing them in
    /// `pieces`.
    fn cut_sessions(&mut self, path: &str, text: &mut String, pieces: &mut Vec<SessionPiece>) {
        let scan = scan_session_blocks(text, &self.plan.namespace);
        if scan.malformed.is_some() {
            self.note(path, OmissionReason::MalformedSessionBlock, 0);
            return;
        }
        for (index, block) in scan.blocks.iter().enumerate() {
            let body = text.get(block.body.clone()).unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let body = if self.plan.rules.verbatim {
                text.get(block.range.clone()).unwrap_or(body)
            } else {
                body
            };
            let path = if index == 0 {
                format!("{path}#session")
            } else {
                format!("{path}#session-{}", index + 1)
            };
            pieces.push(SessionPiece {
                path,
                body: body.to_string(),
            });
        }
        // Last first, so the earlier ranges still hold; the user's text moves down in place
        // (a large file is never held twice).
        for block in scan.blocks.iter().rev() {
            if text.get(block.range.clone()).is_some() {
                text.replace_range(block.range.clone(), "");
            }
        }
    }

    /// Turns one read into a source, a notice, or nothing.
    fn accept(&mut self, full: &str, loaded: Loaded, site: Site<'_>, kind: Kind) {
        let Site {
            dir: base_dir,
            scope,
            depth,
            tree,
        } = site;
        let text = match loaded {
            Loaded::Absent => return,
            Loaded::TooLarge(len) => return self.note(full, OmissionReason::FileTooLarge, len),
            Loaded::NotUtf8(len) => return self.note(full, OmissionReason::NotUtf8, len),
            Loaded::Unreadable => return self.note(full, OmissionReason::Unreadable, 0),
            Loaded::OutsideTree(real) => return self.note_outside(full, real, None),
            Loaded::Text(text) => text,
        };
        if text.trim().is_empty() {
            return;
        }
        // One copy of the text at a time: each step works in place, or replaces it.
        let mut body = text;
        let mut pieces = Vec::new();
        self.cut_sessions(full, &mut body, &mut pieces);
        if self.plan.strip_comments
            && let Some(stripped) = owned(strip_comments(&body))
        {
            body = stripped;
        }
        if kind == Kind::Directory && self.plan.hops > 0 {
            let base = parent(full).unwrap_or(base_dir).to_string();
            let inside = match scope {
                GuidanceScope::User => None,
                _ => self.plan.rules.imports_inside.clone(),
            };
            let mut chain = Chain {
                tree,
                folded: vec![paths::fold(full)],
                files: vec![full.to_string()],
                inside,
            };
            let expanded = self.expand(&body, &base, self.plan.hops, &mut chain, &mut pieces);
            if let Some(expanded) = owned(expanded) {
                body = expanded;
            }
        }
        // A verbatim body is sent as written, unless there is nothing but blanks.
        if !self.plan.rules.verbatim || body.trim().is_empty() {
            trim_in_place(&mut body);
        }
        if !body.is_empty() {
            // Bodies are indexed only for deduplication (hashing a large one costs).
            let hash = self.plan.dedupe.then(|| body_hash(&body));
            if let Some(hash) = hash
                && self.has_body(&self.bodies, hash, &body)
            {
                if kind == Kind::Directory || self.plan.report_pack_duplicates {
                    self.omitted.push(GuidanceOmission::new(
                        full,
                        OmissionReason::DuplicateBody,
                        body.len() as u64,
                    ));
                }
            } else {
                if let Some(hash) = hash {
                    self.bodies
                        .entry(hash)
                        .or_default()
                        .push(self.sources.len());
                }
                self.sources.push(GuidanceSource {
                    path: full.to_string(),
                    scope,
                    depth,
                    bytes: body.len() as u64,
                    body,
                    imported_from: None,
                });
            }
        }
        for piece in pieces {
            if !self.session_paths.insert(piece.path.clone()) {
                continue;
            }
            let hash = body_hash(&piece.body);
            if self.plan.dedupe && self.has_body(&self.session_bodies, hash, &piece.body) {
                self.omitted.push(GuidanceOmission::new(
                    piece.path,
                    OmissionReason::DuplicateBody,
                    piece.body.len() as u64,
                ));
                continue;
            }
            self.session_bodies
                .entry(hash)
                .or_default()
                .push(self.sources.len());
            self.sources.push(GuidanceSource {
                bytes: piece.body.len() as u64,
                path: piece.path,
                scope: GuidanceScope::Session,
                depth,
                body: piece.body,
                imported_from: Some(full.to_string()),
            });
        }
    }

    /// The text an import line is replaced with, or `None` to keep the line literal.
    fn load_import(
        &mut self,
        path: &str,
        chain: &Chain<'_>,
        pieces: &mut Vec<SessionPiece>,
    ) -> Option<String> {
        match self.load(path, chain.tree) {
            Loaded::Absent => None,
            Loaded::OutsideTree(real) => {
                self.note_outside(path, real, chain.files.last().map(String::as_str));
                None
            }
            Loaded::TooLarge(len) => {
                self.note(path, OmissionReason::FileTooLarge, len);
                None
            }
            Loaded::NotUtf8(len) => {
                self.note(path, OmissionReason::NotUtf8, len);
                None
            }
            Loaded::Unreadable => {
                self.note(path, OmissionReason::Unreadable, 0);
                None
            }
            Loaded::Text(mut text) => {
                if text.trim().is_empty() {
                    return None;
                }
                self.cut_sessions(path, &mut text, pieces);
                Some(text)
            }
        }
    }

    /// Inlines `@path` imports (seed semantics): each line carrying an import outside a fence is
    /// replaced whole by the imported file's expanded text (with `imports_keep_line`, only the
    /// import is, the rest of its line kept); `hops` bounds the nesting, `chain`
    /// refuses cycles (the line stays literal), a missing target leaves the line literal.
    ///
    /// `chain` holds lexically folded paths, so `docs/../AGENTS.md` is recognised as the file that
    /// started the chain (the seed compared joined strings, so such a cycle was bounded only by
    /// `hops`). The file itself is still read at the path as joined.
    fn expand<'t>(
        &mut self,
        text: &'t str,
        base_dir: &str,
        hops: usize,
        chain: &mut Chain<'_>,
        pieces: &mut Vec<SessionPiece>,
    ) -> Cow<'t, str> {
        if hops == 0 || !text.contains('@') {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut in_fence = false;
        for (index, line) in text.lines().enumerate() {
            if index > 0 {
                out.push('\n');
            }
            if is_fence(line.trim()) {
                in_fence = !in_fence;
                out.push_str(line);
                continue;
            }
            if in_fence || !line.contains('@') {
                out.push_str(line);
                continue;
            }
            let Some((at, spec)) = import_target(line) else {
                out.push_str(line);
                continue;
            };
            let resolved = match (spec.strip_prefix("~/"), &self.plan.home) {
                (Some(rest), Some(home)) => join(home, rest),
                _ if spec.starts_with('/') => spec.to_string(),
                _ => join(base_dir, spec),
            };
            let key = paths::fold(&resolved);
            if chain.folded.contains(&key) {
                out.push_str(line);
                continue;
            }
            if let Some(inside) = &chain.inside
                && !paths::within(&key, inside)
            {
                // A line naming no file is text, not an import: left literal silently.
                let exists = self
                    .fs
                    .stat(Path::new(&resolved))
                    .is_ok_and(|stat| stat.kind != EntryKind::Missing);
                if exists {
                    self.note_omission(GuidanceOmission {
                        imported_from: chain.files.last().cloned(),
                        ..GuidanceOmission::new(resolved, OmissionReason::UnapprovedImport, 0)
                    });
                }
                out.push_str(line);
                continue;
            }
            let Some(imported) = self.load_import(&resolved, chain, pieces) else {
                out.push_str(line);
                continue;
            };
            let stripped = if self.plan.strip_comments {
                strip_comments(&imported)
            } else {
                Cow::Borrowed(imported.as_str())
            };
            let next_base = parent(&resolved).unwrap_or(base_dir).to_string();
            chain.folded.push(key);
            chain.files.push(resolved);
            let expanded = self.expand(&stripped, &next_base, hops - 1, chain, pieces);
            chain.folded.pop();
            chain.files.pop();
            if self.plan.rules.imports_keep_line {
                out.push_str(&line[..at]);
                out.push_str(&expanded);
                out.push_str(&line[at + 1 + spec.len()..]);
            } else {
                out.push_str(&expanded);
            }
        }
        Cow::Owned(out)
    }

    /// The editor packs (or a profile's extra files) as full paths, globs expanded and sorted,
    /// each with its tree: the pack root for a relative entry (the repository's own file), `/`
    /// for an absolute one (a file the host named itself).
    fn pack_paths(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some((marked, files)) = &self.plan.rules.marked_root {
            out.extend(files.iter().map(|rel| (join(marked, rel), marked.clone())));
        }
        let roots = std::iter::once(&self.plan.pack_root).chain(self.plan.also_pack_root.as_ref());
        for root in roots {
            for rel in &self.plan.packs {
                let tree = if rel.starts_with('/') { "/" } else { root };
                if rel.contains('*') {
                    let mut matches = glob(self.fs, root, rel);
                    matches.sort();
                    out.extend(matches.into_iter().map(|m| (m, tree.to_string())));
                } else {
                    out.push((join(root, rel), tree.to_string()));
                }
            }
        }
        out
    }
}

/// The text a step made, when it made a new one (`None`: the step left its input as it was).
fn owned(step: Cow<'_, str>) -> Option<String> {
    match step {
        Cow::Owned(text) => Some(text),
        Cow::Borrowed(_) => None,
    }
}

/// `text.trim()`, in place.
fn trim_in_place(text: &mut String) {
    let end = text.trim_end().len();
    text.truncate(end);
    let start = text.len() - text.trim_start().len();
    text.drain(..start);
}

/// The rest of the line after `key` (such as `paths:`) in the front matter `text` opens with (a
/// `---` line, then lines up to the next `---`), if that front matter has the key.
fn front_matter_value<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return None;
    }
    lines
        .take_while(|line| line.trim_end() != "---")
        .find_map(|line| line.strip_prefix(key))
}

/// Whether `text` opens with front matter holding a `paths:` key.
fn has_paths_front_matter(text: &str) -> bool {
    front_matter_value(text, "paths:").is_some()
}

/// Whether `text` opens with front matter holding an `applyTo:` key whose pattern names some
/// paths only (Copilot reads such an instruction file only for the paths it applies to). `**`,
/// `**/*`, `*` and an empty pattern apply to every path: Copilot CLI 1.0.102 reads such a file at
/// start (measured).
fn applies_to_some_paths(text: &str) -> bool {
    front_matter_value(text, "applyTo:").is_some_and(|value| {
        let value = value.trim();
        // Nothing on the key's line: its patterns are in a list below it.
        let pattern = value.trim_matches(|c| c == '"' || c == '\'');
        value.is_empty() || !matches!(pattern, "**" | "**/*" | "*" | "")
    })
}

/// The largest char boundary of `text` at or below `limit`.
fn floor_boundary(text: &str, limit: u64) -> usize {
    let mut cut = usize::try_from(limit).unwrap_or(usize::MAX).min(text.len());
    while cut > 0 && !text.is_char_boundary(cut) {
        cut -= 1;
    }
    cut
}

/// How many directories a `**` segment of one glob may enter, so a pattern over a large tree
/// stays a bounded walk.
const MAX_GLOB_DIRS: usize = 4096;

/// Expands a root-relative pattern whose segments may hold `*` and `?`. Wildcard segments list
/// their directory: a middle segment matches only real directories (symlinks not followed), the
/// last one only files and symlinks. A `**` segment stands for the directory and every real
/// directory below it (hidden ones and symlinks not entered, at most [`MAX_GLOB_DIRS`]).
/// Literal segments are joined without checking. Unsorted.
fn glob(fs: &dyn GuidanceFs, root: &str, pattern: &str) -> Vec<String> {
    let start = if pattern.starts_with('/') { "/" } else { root };
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let mut current = vec![start.to_string()];
    for (index, segment) in segments.iter().enumerate() {
        let last = index + 1 == segments.len();
        if *segment == "**" && !last {
            current = below(fs, current);
            continue;
        }
        let mut next = Vec::new();
        for dir in &current {
            if !paths::has_wildcard(segment) {
                next.push(join(dir, segment));
                continue;
            }
            let Ok(entries) = fs.list_dir(Path::new(dir)) else {
                continue;
            };
            for entry in entries {
                let Some(name) = entry.name.to_str() else {
                    continue;
                };
                let kind_fits = if last {
                    matches!(entry.kind, EntryKind::File | EntryKind::Symlink)
                } else {
                    entry.kind == EntryKind::Dir
                };
                if kind_fits && paths::wildcard_match(segment, name) {
                    next.push(join(dir, name));
                }
            }
        }
        current = next;
    }
    current
}

/// `dirs` and every real directory below them (hidden ones and symlinks not entered), each
/// once, at most [`MAX_GLOB_DIRS`] entered.
fn below(fs: &dyn GuidanceFs, dirs: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut queue: VecDeque<String> = dirs.into_iter().collect();
    while let Some(dir) = queue.pop_front() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        if out.len() >= MAX_GLOB_DIRS {
            break;
        }
        if let Ok(entries) = fs.list_dir(Path::new(&dir)) {
            let mut children: Vec<String> = entries
                .into_iter()
                .filter(|e| e.kind == EntryKind::Dir)
                .filter_map(|e| e.name.into_string().ok())
                .filter(|name| !name.starts_with('.'))
                .map(|name| join(&dir, &name))
                .collect();
            children.sort();
            queue.extend(children);
        }
        out.push(dir);
    }
    out
}
