//! The discovery-profile rules the opencode and Copilot CLIs showed, over `MemoryFs`: a root only
//! where git finds a repository (an empty `.git` folder is none), the walk from the working
//! directory up to that root (or to `/` without one), first-wins across the walk, recursive
//! `**` globs (extra and user files), files read at the root and the working directory,
//! `applyTo:` front matter read on demand, invalid UTF-8 read lossily, and a budget the whole
//! prompt must fit (nothing kept over it), raised through the environment, also for a session
//! text the CLI finds through the environment. And the rules Claude Code and Pi showed: globs
//! among the names read in every folder, in their place (Claude Code's `.claude/rules/`), imports
//! followed only inside the working directory, and extra files read first, each with its user
//! fallback in its place (Pi's system and append files).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_core::SessionTextCarrier;
use projectfile_core::guidance::{
    DeliveryQuery, DiscoveryProfile, GuidanceRequest, GuidanceResolution, MemoryFs, OmissionReason,
    Undelivered, Walk, budget_env, delivery_verdict, delivery_with_remedy, resolve_as,
};

const ROOT: &str = "/w/proj";
const HOME: &str = "/home/u";

fn paths(resolution: &GuidanceResolution) -> Vec<&str> {
    resolution.sources.iter().map(|s| s.path.as_str()).collect()
}

fn omitted(resolution: &GuidanceResolution, reason: OmissionReason) -> Vec<&str> {
    resolution
        .omitted
        .iter()
        .filter(|o| o.reason == reason)
        .map(|o| o.path.as_str())
        .collect()
}

fn request(cwd: &str) -> GuidanceRequest {
    GuidanceRequest::new(ROOT)
        .with_working_dir(cwd)
        .with_home_dir(HOME)
        .with_max_bytes(u64::MAX)
}

/// opencode's shape: AGENTS.md, else CLAUDE.md, else CONTEXT.md, across the whole walk from the
/// working directory up to the git root (or `/`), lossy.
fn opencode() -> DiscoveryProfile {
    let names = ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"];
    DiscoveryProfile {
        per_directory: names.iter().map(|s| s.to_string()).collect(),
        first_wins: true,
        exclusive_if_present: vec![
            ("AGENTS.md".into(), "CLAUDE.md".into()),
            ("AGENTS.md".into(), "CONTEXT.md".into()),
            ("CLAUDE.md".into(), "CONTEXT.md".into()),
        ],
        exclusive_across_walk: true,
        git_root: true,
        walk: Walk::CwdUpToRoot,
        user_files: vec![
            ".config/opencode/AGENTS.md".into(),
            ".claude/CLAUDE.md".into(),
        ],
        verbatim: true,
        lossy_utf8: true,
        ..Default::default()
    }
}

/// Copilot's shape: four names from the git root (else the working directory) down, the
/// instruction folders at the root and the working directory, the whole prompt in one budget.
fn copilot(budget: u64) -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec![
            ".github/copilot-instructions.md".into(),
            "AGENTS.md".into(),
            "CLAUDE.md".into(),
            "GEMINI.md".into(),
        ],
        git_root: true,
        walk: Walk::RootToCwd,
        extra_files: vec![
            ".github/instructions/**/*.instructions.md".into(),
            ".claude/rules/**/*.md".into(),
        ],
        extra_files_also_at_working_dir: true,
        on_demand_apply_to: true,
        on_demand_path_rules: true,
        user_files: vec![
            ".copilot/copilot-instructions.md".into(),
            ".copilot/instructions/**/*.instructions.md".into(),
        ],
        budget_bytes: Some(budget),
        budget_all_or_nothing: true,
        budget_env: vec![(
            "COPILOT_PROVIDER_MAX_PROMPT_TOKENS".into(),
            "{bytes}".into(),
        )],
        lossy_utf8: true,
        imports: true,
        max_import_hops: Some(8),
        verbatim: true,
        ..Default::default()
    }
}

/// A git repository at `dir`, as git finds one: `.git/HEAD`.
fn repo(fs: MemoryFs, dir: &str) -> MemoryFs {
    fs.with_file(&format!("{dir}/.git/HEAD"), "ref: refs/heads/main\n")
}

#[test]
fn an_empty_git_folder_is_no_root_and_the_walk_goes_up_to_the_file_system_root() {
    let fs = MemoryFs::new()
        .with_dir("/w/proj/.git")
        .with_file("/w/AGENTS.md", "above")
        .with_file("/w/proj/AGENTS.md", "root")
        .with_file("/w/proj/sub/AGENTS.md", "sub");
    let resolution = resolve_as(&fs, &opencode(), &request("/w/proj/sub"));
    assert_eq!(
        paths(&resolution),
        vec!["/w/AGENTS.md", "/w/proj/AGENTS.md", "/w/proj/sub/AGENTS.md"]
    );
}

#[test]
fn a_repository_stops_the_walk_at_its_top() {
    for fs in [
        repo(MemoryFs::new(), "/w/proj"),
        // A linked worktree or a submodule: a `.git` file.
        MemoryFs::new().with_file("/w/proj/.git", "gitdir: /elsewhere\n"),
    ] {
        let fs = fs
            .with_file("/w/AGENTS.md", "above")
            .with_file("/w/proj/AGENTS.md", "root")
            .with_file("/w/proj/sub/AGENTS.md", "sub")
            .with_file("/w/proj/sub/deeper/AGENTS.md", "below");
        let resolution = resolve_as(&fs, &opencode(), &request("/w/proj/sub"));
        assert_eq!(
            paths(&resolution),
            vec!["/w/proj/AGENTS.md", "/w/proj/sub/AGENTS.md"]
        );
    }
}

#[test]
fn the_first_name_found_anywhere_on_the_walk_wins_everywhere() {
    let fs = repo(MemoryFs::new(), ROOT)
        .with_file("/w/proj/CLAUDE.md", "root claude")
        .with_file("/w/proj/CONTEXT.md", "root context")
        .with_file("/w/proj/sub/AGENTS.md", "sub agents");
    let resolution = resolve_as(&fs, &opencode(), &request("/w/proj/sub"));
    assert_eq!(paths(&resolution), vec!["/w/proj/sub/AGENTS.md"]);
    assert_eq!(
        omitted(&resolution, OmissionReason::Shadowed),
        vec!["/w/proj/CLAUDE.md", "/w/proj/CONTEXT.md"]
    );
    // No AGENTS.md: every CLAUDE.md is read, CONTEXT.md nowhere.
    let fs = repo(MemoryFs::new(), ROOT)
        .with_file("/w/proj/CLAUDE.md", "root claude")
        .with_file("/w/proj/sub/CLAUDE.md", "sub claude")
        .with_file("/w/proj/sub/CONTEXT.md", "sub context");
    let resolution = resolve_as(&fs, &opencode(), &request("/w/proj/sub"));
    assert_eq!(
        paths(&resolution),
        vec!["/w/proj/CLAUDE.md", "/w/proj/sub/CLAUDE.md"]
    );
    // The user files: the first that exists.
    let fs = repo(MemoryFs::new(), ROOT)
        .with_file("/home/u/.config/opencode/AGENTS.md", "mine")
        .with_file("/home/u/.claude/CLAUDE.md", "claude's");
    let resolution = resolve_as(&fs, &opencode(), &request(ROOT));
    assert_eq!(
        paths(&resolution),
        vec!["/home/u/.config/opencode/AGENTS.md"]
    );
}

#[test]
fn invalid_utf8_is_read_lossily_where_the_cli_sends_it() {
    let bytes = b"rules \xff\xfe end\n".to_vec();
    let fs = repo(MemoryFs::new(), ROOT).with_file("/w/proj/AGENTS.md", bytes);
    let resolution = resolve_as(&fs, &opencode(), &request(ROOT));
    assert_eq!(resolution.sources.len(), 1);
    assert_eq!(resolution.sources[0].body, "rules \u{fffd}\u{fffd} end\n");
    let mut strict = opencode();
    strict.lossy_utf8 = false;
    let resolution = resolve_as(&fs, &strict, &request(ROOT));
    assert_eq!(
        omitted(&resolution, OmissionReason::NotUtf8),
        vec!["/w/proj/AGENTS.md"]
    );
}

#[test]
fn instruction_folders_recurse_at_the_root_and_the_working_directory() {
    let fs = repo(MemoryFs::new(), ROOT)
        .with_file("/w/proj/AGENTS.md", "root")
        .with_file("/w/proj/a/CLAUDE.md", "between")
        .with_file(
            "/w/proj/a/.github/instructions/x.instructions.md",
            "not read",
        )
        .with_file("/w/proj/a/b/GEMINI.md", "cwd")
        .with_file("/w/proj/.github/instructions/top.instructions.md", "top")
        .with_file(
            "/w/proj/.github/instructions/deep/er/low.instructions.md",
            "low",
        )
        .with_file("/w/proj/.github/instructions/plain.md", "no suffix")
        .with_file(
            "/w/proj/.github/instructions/ts.instructions.md",
            "---\napplyTo: \"**/*.ts\"\n---\nts only\n",
        )
        .with_file(
            "/w/proj/.github/instructions/all.instructions.md",
            "---\napplyTo: '**'\n---\neverywhere\n",
        )
        // Patterns for every path too (Copilot CLI 1.0.102 reads these at start, measured).
        .with_file(
            "/w/proj/.github/instructions/any.instructions.md",
            "---\napplyTo: \"**/*\"\n---\nany file\n",
        )
        .with_file(
            "/w/proj/.github/instructions/star.instructions.md",
            "---\napplyTo: \"*\"\n---\nstar\n",
        )
        .with_file(
            "/w/proj/.github/instructions/empty.instructions.md",
            "---\napplyTo: \"\"\n---\nempty\n",
        )
        // Patterns in a list below the key name some paths.
        .with_file(
            "/w/proj/.github/instructions/list.instructions.md",
            "---\napplyTo:\n  - \"**/*.ts\"\n---\nlisted\n",
        )
        .with_file("/w/proj/.claude/rules/r.md", "rule")
        .with_file("/w/proj/.claude/rules/s/q.md", "nested rule")
        .with_file(
            "/w/proj/.claude/rules/p.md",
            "---\npaths: [src]\n---\nscoped\n",
        )
        .with_file(
            "/w/proj/a/b/.github/instructions/z.instructions.md",
            "cwd's",
        )
        .with_file(
            "/w/proj/.github/instructions/.hidden/h.instructions.md",
            "h",
        )
        .with_file("/home/u/.copilot/copilot-instructions.md", "user")
        .with_file(
            "/home/u/.copilot/instructions/d/u.instructions.md",
            "user deep",
        );
    let resolution = resolve_as(&fs, &copilot(u64::MAX), &request("/w/proj/a/b"));
    assert_eq!(
        paths(&resolution),
        vec![
            "/home/u/.copilot/copilot-instructions.md",
            "/home/u/.copilot/instructions/d/u.instructions.md",
            "/w/proj/AGENTS.md",
            "/w/proj/a/CLAUDE.md",
            "/w/proj/a/b/GEMINI.md",
            "/w/proj/.github/instructions/all.instructions.md",
            "/w/proj/.github/instructions/any.instructions.md",
            "/w/proj/.github/instructions/deep/er/low.instructions.md",
            "/w/proj/.github/instructions/empty.instructions.md",
            "/w/proj/.github/instructions/star.instructions.md",
            "/w/proj/.github/instructions/top.instructions.md",
            "/w/proj/.claude/rules/r.md",
            "/w/proj/.claude/rules/s/q.md",
            "/w/proj/a/b/.github/instructions/z.instructions.md",
        ]
    );
    assert_eq!(
        omitted(&resolution, OmissionReason::OnDemand),
        vec![
            "/w/proj/.github/instructions/list.instructions.md",
            "/w/proj/.github/instructions/ts.instructions.md",
            "/w/proj/.claude/rules/p.md"
        ]
    );
    // Without a repository the working directory is the root: nothing above it is read.
    let fs = MemoryFs::new()
        .with_dir("/w/proj/.git")
        .with_file("/w/proj/AGENTS.md", "root")
        .with_file("/w/proj/a/AGENTS.md", "cwd");
    let resolution = resolve_as(&fs, &copilot(u64::MAX), &request("/w/proj/a"));
    assert_eq!(paths(&resolution), vec!["/w/proj/a/AGENTS.md"]);
}

#[test]
fn over_a_whole_prompt_budget_nothing_is_kept() {
    let fs = repo(MemoryFs::new(), ROOT)
        .with_file("/w/proj/AGENTS.md", "a".repeat(60))
        .with_file("/w/proj/CLAUDE.md", "c".repeat(60));
    let fits = resolve_as(&fs, &copilot(120), &request(ROOT));
    assert_eq!(fits.sources.len(), 2);
    let over = resolve_as(&fs, &copilot(119), &request(ROOT));
    assert!(over.sources.is_empty(), "{:?}", paths(&over));
    assert_eq!(
        omitted(&over, OmissionReason::BudgetExhausted),
        vec!["/w/proj/AGENTS.md", "/w/proj/CLAUDE.md"]
    );
}

fn query<'a>(carrier: &'a SessionTextCarrier, private_bytes: u64) -> DeliveryQuery<'a> {
    DeliveryQuery {
        root: ROOT,
        working_dir: ROOT,
        home_dir: Some(HOME),
        namespace: "agentworks",
        carrier,
        private_bytes,
    }
}

#[test]
fn a_private_file_found_through_the_environment_counts_against_a_whole_prompt_budget() {
    let fs = repo(MemoryFs::new(), ROOT).with_file("/w/proj/AGENTS.md", "a".repeat(100));
    let carrier = SessionTextCarrier::Environment {
        private_file: "session.instructions.md".into(),
        var: "COPILOT_CUSTOM_INSTRUCTIONS_DIRS".into(),
    };
    let profile = copilot(150);
    assert!(delivery_verdict(&fs, &profile, &query(&carrier, 50)).delivered);
    let verdict = delivery_verdict(&fs, &profile, &query(&carrier, 51));
    assert!(!verdict.delivered);
    assert_eq!(
        verdict.undelivered,
        Some(Undelivered::BudgetTruncated {
            budget_bytes: 150,
            needed_bytes: 151
        })
    );
    let raise = [(
        "COPILOT_PROVIDER_MAX_PROMPT_TOKENS".to_string(),
        "151".to_string(),
    )];
    assert_eq!(verdict.remedy_env, raise.clone().into_iter().collect());
    let remedied = delivery_with_remedy(&fs, &profile, &query(&carrier, 51));
    assert!(remedied.delivered, "{remedied:?}");
    assert_eq!(remedied.env, raise.into_iter().collect());
    assert!(remedied.remedy_env.is_empty() && remedied.launch_args.is_empty());
    assert!(
        remedied
            .note
            .unwrap()
            .contains("the environment `COPILOT_PROVIDER_MAX_PROMPT_TOKENS=151`")
    );
    // Without such a budget (opencode), the environment route is delivered whatever the size.
    let verdict = delivery_verdict(&fs, &opencode(), &query(&carrier, 1 << 30));
    assert!(verdict.delivered && verdict.via == "environment");
}

#[test]
fn a_block_over_a_whole_prompt_budget_needs_every_byte() {
    let begin = "<!-- BEGIN agentworks-session-instructions created=true -->";
    let end = "<!-- END agentworks-session-instructions -->";
    let agents = format!("{begin}\nAnswer briefly.\n{end}\n");
    let fs = repo(MemoryFs::new(), ROOT)
        .with_file("/w/proj/AGENTS.md", agents.clone())
        .with_file("/w/proj/GEMINI.md", "g".repeat(500));
    let carrier = SessionTextCarrier::Block {
        path: projectfile_core::RelPath::new("AGENTS.md").unwrap(),
    };
    let profile = copilot(400);
    let verdict = delivery_verdict(&fs, &profile, &query(&carrier, 0));
    let needed = (agents.len() + 500) as u64;
    assert_eq!(
        verdict.undelivered,
        Some(Undelivered::BudgetTruncated {
            budget_bytes: 400,
            needed_bytes: needed
        }),
        "{verdict:?}"
    );
    let remedied = delivery_with_remedy(&fs, &profile, &query(&carrier, 0));
    assert!(remedied.delivered, "{remedied:?}");
    assert_eq!(
        remedied.env.get("COPILOT_PROVIDER_MAX_PROMPT_TOKENS"),
        Some(&needed.to_string())
    );
}

#[test]
fn budget_env_fills_in_the_bytes() {
    assert_eq!(
        budget_env(&copilot(1), 42),
        Some(vec![(
            "COPILOT_PROVIDER_MAX_PROMPT_TOKENS".to_string(),
            "42".to_string()
        )])
    );
    assert_eq!(budget_env(&opencode(), 42), None);
}

/// Claude Code's shape (as `providers/claude` declares it, without `AGENTS.md` shadowing):
/// rules in every walked folder and the home, imports only inside the working directory.
fn claude() -> DiscoveryProfile {
    let rules = ".claude/rules/**/*.md";
    DiscoveryProfile {
        per_directory: vec![
            "CLAUDE.md".into(),
            ".claude/CLAUDE.md".into(),
            rules.into(),
            "AGENTS.md".into(),
            ".claude/AGENTS.md".into(),
            "CLAUDE.local.md".into(),
        ],
        walk: Walk::CwdUpToFsRoot,
        imports: true,
        max_import_hops: Some(4),
        imports_inside_working_dir: true,
        on_demand_path_rules: true,
        on_demand_subtree: true,
        strip_html_comments: true,
        user_files: vec![".claude/CLAUDE.md".into(), rules.into()],
        ..Default::default()
    }
}

#[test]
fn rules_are_read_in_every_folder_in_their_place_recursively_scoped_ones_on_demand() {
    let fs = MemoryFs::new()
        .with_file("/home/u/.claude/CLAUDE.md", "user memory")
        .with_file("/home/u/.claude/rules/b.md", "user rule b")
        .with_file("/home/u/.claude/rules/a/deep.md", "user rule deep")
        .with_file(
            "/home/u/.claude/rules/scoped.md",
            "---\npaths:\n  - src/**\n---\nuser scoped",
        )
        .with_file("/w/.claude/rules/top.md", "top rule")
        .with_file("/w/AGENTS.md", "top agents")
        .with_file("/w/proj/CLAUDE.local.md", "root local")
        .with_file("/w/proj/CLAUDE.md", "root claude")
        .with_file("/w/proj/.claude/rules/r.md", "root rule")
        .with_file("/w/proj/.claude/rules/nested/n.md", "root nested rule")
        .with_file(
            "/w/proj/.claude/rules/.hidden/h.md",
            "in a hidden folder: never",
        )
        .with_file(
            "/w/proj/sub/.claude/rules/s.md",
            "---\npaths: [\"*.rs\"]\n---\nscoped",
        )
        .with_file(
            "/w/proj/sub/deeper/.claude/rules/d.md",
            "below the working dir",
        );
    let resolution = resolve_as(&fs, &claude(), &request("/w/proj/sub"));
    assert_eq!(
        paths(&resolution),
        vec![
            "/home/u/.claude/CLAUDE.md",
            "/home/u/.claude/rules/a/deep.md",
            "/home/u/.claude/rules/b.md",
            "/w/.claude/rules/top.md",
            "/w/AGENTS.md",
            "/w/proj/CLAUDE.md",
            "/w/proj/.claude/rules/nested/n.md",
            "/w/proj/.claude/rules/r.md",
            "/w/proj/CLAUDE.local.md",
        ]
    );
    assert_eq!(
        omitted(&resolution, OmissionReason::OnDemand),
        vec![
            "/home/u/.claude/rules/scoped.md",
            "/w/proj/sub/.claude/rules/s.md",
            "/w/proj/sub/deeper/.claude/rules/d.md",
        ]
    );
    // Without the path rule, a scoped rule of a walked folder is read like any other.
    let mut profile = claude();
    profile.on_demand_path_rules = false;
    let resolution = resolve_as(&fs, &profile, &request("/w/proj/sub"));
    assert!(paths(&resolution).contains(&"/w/proj/sub/.claude/rules/s.md"));
}

#[test]
fn an_import_leading_outside_the_working_directory_waits_for_an_approval() {
    let fs = MemoryFs::new()
        .with_file(
            "/w/proj/CLAUDE.md",
            "root\n@beside.md\n@sub/inside.md\n@missing.md",
        )
        .with_file("/w/proj/beside.md", "beside the root")
        .with_file(
            "/w/proj/sub/CLAUDE.md",
            "sub\n@../up.md\n@inside.md\n@~/notes.md",
        )
        .with_file("/w/proj/up.md", "up")
        .with_file("/w/proj/sub/inside.md", "inside")
        .with_file("/home/u/.claude/CLAUDE.md", "user\n@~/notes.md")
        .with_file("/home/u/notes.md", "notes");
    let resolution = resolve_as(&fs, &claude(), &request("/w/proj/sub"));
    let bodies: Vec<&str> = resolution.sources.iter().map(|s| s.body.as_str()).collect();
    assert_eq!(
        bodies,
        vec![
            "user\nnotes",
            "root\n@beside.md\ninside\n@missing.md",
            "sub\n@../up.md\ninside\n@~/notes.md",
        ]
    );
    let unapproved: Vec<(&str, Option<&str>)> = resolution
        .omitted
        .iter()
        .filter(|o| o.reason == OmissionReason::UnapprovedImport)
        .map(|o| (o.path.as_str(), o.imported_from.as_deref()))
        .collect();
    // A line naming no file (`@missing.md`) is text: no notice.
    assert_eq!(
        unapproved,
        vec![
            ("/w/proj/beside.md", Some("/w/proj/CLAUDE.md")),
            ("/w/proj/sub/../up.md", Some("/w/proj/sub/CLAUDE.md")),
            ("/home/u/notes.md", Some("/w/proj/sub/CLAUDE.md")),
        ]
    );
    // Started at the root, the root's imports stay inside the working directory.
    let resolution = resolve_as(&fs, &claude(), &request(ROOT));
    assert_eq!(
        resolution.sources[1].body,
        "root\nbeside the root\ninside\n@missing.md"
    );
    // Without the rule, the import above the working directory is followed (inside the tree).
    let mut profile = claude();
    profile.imports_inside_working_dir = false;
    let resolution = resolve_as(&fs, &profile, &request("/w/proj/sub"));
    assert!(omitted(&resolution, OmissionReason::UnapprovedImport).is_empty());
    assert!(resolution.sources[1].body.contains("beside the root"));
}

/// Pi's shape: context files from the working directory up, the system and append files of the
/// working directory first, the user's in their place where the project has none.
fn pi(first: bool) -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec!["AGENTS.md".into(), "CLAUDE.md".into()],
        first_wins: true,
        walk: Walk::CwdUpToFsRoot,
        extra_files: vec![".pi/SYSTEM.md".into(), ".pi/APPEND_SYSTEM.md".into()],
        extra_files_at_working_dir: true,
        extra_files_first: first,
        user_files: vec![".pi/agent/AGENTS.md".into()],
        user_fallbacks: vec![
            (".pi/SYSTEM.md".into(), ".pi/agent/SYSTEM.md".into()),
            (
                ".pi/APPEND_SYSTEM.md".into(),
                ".pi/agent/APPEND_SYSTEM.md".into(),
            ),
        ],
        verbatim: true,
        ..Default::default()
    }
}

#[test]
fn extra_files_first_each_followed_by_its_user_fallback() {
    let fs = MemoryFs::new()
        .with_file("/home/u/.pi/agent/SYSTEM.md", "user system")
        .with_file("/home/u/.pi/agent/APPEND_SYSTEM.md", "user append")
        .with_file("/home/u/.pi/agent/AGENTS.md", "user agents")
        .with_file("/w/proj/.pi/SYSTEM.md", "project system")
        .with_file("/w/AGENTS.md", "above")
        .with_file("/w/proj/AGENTS.md", "root");
    let resolution = resolve_as(&fs, &pi(true), &request(ROOT));
    assert_eq!(
        paths(&resolution),
        vec![
            "/w/proj/.pi/SYSTEM.md",
            "/home/u/.pi/agent/APPEND_SYSTEM.md",
            "/home/u/.pi/agent/AGENTS.md",
            "/w/AGENTS.md",
            "/w/proj/AGENTS.md",
        ]
    );
    assert_eq!(
        omitted(&resolution, OmissionReason::Shadowed),
        vec!["/home/u/.pi/agent/SYSTEM.md"]
    );
    // Off, the same files come after everything else, each fallback still in its place.
    let resolution = resolve_as(&fs, &pi(false), &request(ROOT));
    assert_eq!(
        paths(&resolution),
        vec![
            "/home/u/.pi/agent/AGENTS.md",
            "/w/AGENTS.md",
            "/w/proj/AGENTS.md",
            "/w/proj/.pi/SYSTEM.md",
            "/home/u/.pi/agent/APPEND_SYSTEM.md",
        ]
    );
}
