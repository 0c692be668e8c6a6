//! The Claude Code provider. The session text goes into the root `AGENTS.md` block when the
//! `claude` binary reads `AGENTS.md` *and* the project leaves it to (no `CLAUDE.md` of its own);
//! otherwise no project file is edited at all: the text goes into a private file under the state
//! directory, passed with `--append-system-prompt-file <file>`, and removed on release. This
//! provider never writes `CLAUDE.md`.
//!
//! # Decisions
//!
//! - **Version gate: 2.1.284**, as the product's design requires (docs/promises.md, promise 17;
//!   it also names 2.1.233 as a version that does not read AGENTS.md). Public sources show
//!   AGENTS.md support from **2.1.277**, reliable (telemetry off, Bedrock, Vertex, gateways) from
//!   **2.1.281**; nothing backs 2.1.284 itself. It is kept as a safe,
//!   stricter bound: 2.1.277–2.1.283 take the private-file route, which still delivers the text.
//!   A version that cannot be read (no binary, garbage from `--version`, not semver) counts as old.
//! - **Project `CLAUDE.md`**: Claude (default setting `claude-md-or-agents-md`) skips `AGENTS.md`
//!   when a `CLAUDE.md`, `.claude/CLAUDE.md` or `CLAUDE.local.md` exists in the working directory
//!   *or any directory above it*. The CLI runs in the workspace root, so the provider looks at the
//!   root ([`WorkspaceView::exists`](projectfile_provider::WorkspaceView::exists)) and above it
//!   ([`WorkspaceView::found_above_root`](projectfile_provider::WorkspaceView::found_above_root)); if
//!   any exists, the session takes the private-file route even on a new binary, so the text still
//!   reaches the model and `CLAUDE.md` is never touched. The user's own `~/.claude/CLAUDE.md` does
//!   not count (it is the user memory file, recognised by the home directory core hands in as
//!   [`PlanContext::home`]), nor do `.claude/rules/`.
//! - **`--append-system-prompt-file` by default, `--system-prompt-file` on request**: the
//!   AGENTS.md route *adds* the text to Claude's context; appending is the same thing on the
//!   command line. The product's design names `--system-prompt-file`, but measured it *replaces*
//!   Claude Code's own system prompt (its tool and safety guidance: see "Measured" below), so it
//!   is a host's choice: the provider option `prompt=replace` ([`PROMPT_OPTION`];
//!   `--provider-option claude.prompt=replace`, `SessionBuilder::provider_option`) makes the
//!   private-file route pass [`REPLACE_FLAG`]; `prompt=append` (the default) passes
//!   [`PROMPT_FLAG`]. The option does not change the AGENTS.md route. The append flag exists
//!   since 2.0.34 and works interactively in current versions, far older than 2.1.233.
//!
//! # Facts relied on
//!
//! Main source: the official memory page, code.claude.com/docs/en/memory.
//!
//! | fact | source | confirmed? |
//! |---|---|---|
//! | Memory files: managed, `~/.claude/CLAUDE.md`, project `./CLAUDE.md` or `./.claude/CLAUDE.md`, `./CLAUDE.local.md` | memory page, "Choose where to put CLAUDE.md files" | YES (docs) |
//! | `CLAUDE.md`/`CLAUDE.local.md` are read from cwd and every directory above it, root first | memory page "How CLAUDE.md files load" | YES |
//! | A file that is not valid UTF-8 is sent, each bad sequence as U+FFFD, not dropped | measured with 2.1.332 (AGENTS.md holding `caf\xe9`) | YES (measured) |
//! | AGENTS.md support added in 2.1.277 ("in a project with no CLAUDE.md, Claude Code reads AGENTS.md instead"), made independent of telemetry/provider in 2.1.281 | CHANGELOG 2.1.277 and 2.1.281 as quoted in i9wa4/dotfiles issue #394; memory page "requires Claude Code v2.1.277 or later" | YES |
//! | The 2.1.284 threshold | docs/promises.md, promise 17 (the product's design) | NO public source; kept as the required, stricter bound |
//! | 2.1.233 does not read AGENTS.md | older than 2.1.277 | YES (by version) |
//! | AGENTS.md is skipped when a `CLAUDE.md`, `.claude/CLAUDE.md` or `CLAUDE.local.md` exists in cwd or any directory above; `~/.claude/CLAUDE.md`, the managed file and `.claude/rules/` do not count | memory page "When Claude Code reads AGENTS.md" | YES (docs) |
//! | Read at start: `AGENTS.md` and `.claude/AGENTS.md` in cwd and above; **not** read: `AGENTS.local.md`, `AGENTS.override.md`, anything under `.agents/` | memory page, same section | YES (docs) |
//! | The user setting (`claude-md`, `managed-only`) can turn AGENTS.md off; it lives in `~/.claude/settings.json`, `--settings` or managed settings, never project settings | memory page "Choose which instruction files load" | YES (docs); not probed by this provider |
//! | The shipped plugin may default to *not* reading AGENTS.md (`projectInstructions: "claude"` in `anthropics/claude-code` `mods/agents-md/.claude-plugin/plugin.json`) | that file | CONFLICTING with the docs; which one ships is NOT confirmed |
//! | `--system-prompt-file` replaces the default system prompt | code.claude.com/docs/en/cli-reference (stored copies); CHANGELOG 2.0.30 | YES |
//! | `--append-system-prompt-file` appends a file to the default prompt, keeping built-in behaviour | headless docs as quoted in stored notes; lidge-jun/opencodex PR #5315 quoting the docs ("Appends file contents to the default prompt") | YES (exists) |
//! | `--append-system-prompt-file` exists from 2.0.34; interactive use arrived later (before 2026-03) | alex-feel/claude-code-toolbox PR #168 ("only exists in Claude Code v2.0.34+"); iloom-ai/iloom-cli PR #833 ("now supports … on interactive mode") | PARTLY (third parties) |
//! | `claude --version` prints `2.1.277 (Claude Code)` | i9wa4/dotfiles issue #394 | YES (one observed output) |
//! | Block-level HTML comments are stripped from CLAUDE.md | memory page "How CLAUDE.md files load" | YES; measured for AGENTS.md too (below) |
//! | `@path` imports, at most four hops in current docs (five in older) | memory page "Import additional files" | YES; four measured on 2.1.332 |
//! | An import leading outside the working directory (an "external" import) is followed only once the user approved external imports for the project, which Claude Code asks interactively and `-p` never does: in a fresh home nothing outside the working directory is imported, from a file of the working directory (`@../x.md`) or from one above it (`@x.md` beside a parent's `CLAUDE.md`); an import inside it is followed from any file; `~/.claude/CLAUDE.md`'s imports of home files are followed | memory page "Import additional files" (the approval dialog for external imports); measured with 2.1.233, 2.1.280, 2.1.281, 2.1.284 and 2.1.332 (shapes `claude_imports_from_subfolder`, `claude_imports_outside_cwd`, `claude_user_rules`) | YES (measured): `imports_inside_working_dir`, such an import is `unapproved_import` |
//! | `.claude/rules/**/*.md`, recursively, in the working directory and every folder above it (not only the project root) and in `~/.claude/rules/`; a rule whose front matter has `paths:` only when the task touches a matching path | memory page "Organize rules with `.claude/rules/`"; measured with 2.1.233, 2.1.280, 2.1.281, 2.1.284 and 2.1.332 (shapes `claude_rules_every_folder`, `claude_user_rules`) | YES (measured) |
//! | Order sent: `~/.claude/CLAUDE.md`, `~/.claude/rules/`, then folder by folder from the top down: `CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules/`, `AGENTS.md`, `.claude/AGENTS.md`, `CLAUDE.local.md`; an imported file right after its importer | measured with the same five builds (shapes `claude_rules_every_folder`, `claude_rules_with_claude_files`, `claude_user_rules`, `claude_imports_from_subfolder`) | YES (measured); within one rules folder Claude Code keeps the directory's listing order, `resolve --as` sorts |
//! | Skills in `.claude/skills/<name>/SKILL.md` | code.claude.com/docs/de/skills.md | YES |
//! | `CLAUDE_CONFIG_DIR` moves Claude Code's configuration folder (default `~/.claude`): settings, `.claude.json`, `projects/` (native sessions) and, on Linux and Windows, the login `.credentials.json`; on macOS the login is a Keychain entry whose name is derived from the folder | code.claude.com/docs/en/authentication "Credential management" as quoted in Rul1an/assay issue #2194; anthropics/claude-code issues #47661 and #88601 (measured with 2.1.238) | PARTLY (docs as quoted, and reports; the source is not public) |
//! | `ANTHROPIC_API_KEY` in the environment authenticates without a stored login | code.claude.com/docs/en/authentication | YES (docs) |
//! | `--mcp-config <file>` takes `{"mcpServers": {"name": {"command", "args", "env"}}}` (a bare `{"name": {...}}` map is refused, exit 1); the flag takes several values, so `claude -p --mcp-config F "prompt"` reads the prompt as a second config: pass `--mcp-config=F` as one argument; no approval is needed in print mode | code.claude.com/docs/en/cli-reference; measured with 2.1.332 (issue text of this work, and the MCP route below) | YES (measured) |
//! | `--strict-mcp-config` uses only `--mcp-config`'s servers (it hides the project's own `.mcp.json` and the user's): the `--mcp-mode replace` route | code.claude.com/docs/en/cli-reference | YES (docs; measured: it hides `.mcp.json`) |
//! | 2.1.332 defers MCP tools behind its tool search unless `ENABLE_TOOL_SEARCH=false`; 2.1.233 and 2.1.284 send them in `tools` directly | measured (QUALIFICATION.md, the MCP rows) | YES (measured): a session with MCP servers gets `ENABLE_TOOL_SEARCH=false` in the receipt's `env` |
//! | `--settings <file-or-json>` loads additional settings for the session ("flagSettings"), merged with user, project and local settings; array-valued keys such as `hooks` are concatenated, so project hooks stay | code.claude.com/docs/en/cli-reference; mintlify.com/jackdog668/claude-code/configuration/settings (settings hierarchy, "flagSettings: --settings CLI flag"); docs.rs git-worktree-manager `operations::claude_settings` ("merges its content into the user's existing settings layers … hooks are concatenated") | YES (docs), concatenation PARTLY |
//! | Hooks in settings: `{"hooks": {"PreToolUse": [{"matcher": …, "hooks": [{"type": "command", "command": …}]}]}}`; project hook commands may use `$CLAUDE_PROJECT_DIR` | code.claude.com/docs/en/hooks | YES (docs) |
//! | Project subagents: `.claude/agents/<name>.md`, YAML frontmatter `name`, `description` (optional `tools`, `model`), loaded at session start | code.claude.com/docs/en/sub-agents (quoted by claudepluginhub.com sub-agent-patterns; thirdlf03/claude-dev-toolkit `claude-code-subagents.md` "Project subagents: .claude/agents/") | YES (docs) |
//! | Project commands: `.claude/commands/<name>.md`, run as `/<name>` (still read next to skills) | code.claude.com/docs/en/slash-commands; docs.augmentcode.com custom-commands (reads `.claude/commands/` "Compatible with Claude Code") | YES (docs) |
//!
//! # Measured with the real CLI
//!
//! `cargo xtask qualify` (QUALIFICATION.md), 2026-11-30: Claude Code 2.1.233, 2.1.280, 2.1.281,
//! 2.1.284 and 2.1.332 from the npm registry (and 2.1.277 once, the same way, by hand), each run
//! as `claude -p` with a private
//! `HOME`, `ANTHROPIC_BASE_URL` on a loopback endpoint that records the request, and
//! `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`. A file counts as read when its marker text is in
//! the first request. The discovery profile ([`Claude::discovery_for`]) follows these facts:
//!
//! - **AGENTS.md by version**: 2.1.233, 2.1.277 and 2.1.280 do not read it; 2.1.281, 2.1.284 and
//!   2.1.332 do, and `.claude/AGENTS.md` too ([`AGENTS_MD_READ_SINCE`]). The block route keeps the
//!   stricter [`AGENTS_MD_SINCE`]; 2.1.281–2.1.283 take the private file, which delivers as well.
//! - **Shadowing**: a `CLAUDE.md`, `.claude/CLAUDE.md` or `CLAUDE.local.md` in the working
//!   directory or any directory above it makes Claude skip *every* `AGENTS.md` (a `CLAUDE.md` in
//!   the working directory hides an `AGENTS.md` above it too). `~/.claude/CLAUDE.md` does not,
//!   nor does a `CLAUDE.md` below the working directory. `resolve --as claude` lists such an
//!   `AGENTS.md` as `shadowed` by the file.
//! - **Never read**: `AGENTS.override.md`, `AGENTS.local.md`, `~/.claude/AGENTS.md`,
//!   `~/.agents/AGENTS.md`.
//! - **On demand**: instruction files below the working directory are not in the first request
//!   (the docs: read when Claude reads a file there); `.claude/rules/**/*.md` (2026-12-07: of
//!   every walked folder and of `~/.claude/rules/`, each folder's after its `CLAUDE.md` files and
//!   before its `AGENTS.md` and `CLAUDE.local.md`) are read at start unless their front matter
//!   has `paths:`. Both are `on_demand` in `resolve --as claude`.
//! - **Imports**: `@docs/x.md` in `AGENTS.md` is inlined, four levels deep (the fifth stays
//!   literal). An import leading outside the working directory (`@~/notes.md` from the project,
//!   `@../x.md`, a parent folder's `@x.md` beside it) is not loaded in `-p` mode: such imports
//!   wait for an approval (2026-12-07, every build above). No size limit (a 500 KB `AGENTS.md`
//!   arrives whole), no deduplication (the same text in two files arrives twice).
//! - **Markers and line ends**: block-level HTML comments are removed, so our marker lines never
//!   reach the model; in a file holding a comment (every file with our block), CRLF becomes LF,
//!   while a file without comments keeps its CRLF.
//! - **Prompt-file flags**: `--append-system-prompt-file` and `--system-prompt-file` both deliver
//!   the text on 2.1.233, 2.1.284 and 2.1.332; `--system-prompt-file` *replaces* Claude Code's own
//!   system prompt: measured first with about 330 characters of system prompt sent instead of
//!   7.5k–10k, and by `cargo xtask qualify` with 180 characters of system prompt (44 of them the
//!   session text) instead of 5.9k–9.7k on every version it runs. So the append flag stays the
//!   default route and the replacing one is the `prompt=replace` option; qualify checks both.
//!
//! # Known gaps
//!
//! - A user who set "Project instructions" to `claude-md` or `managed-only` gets no AGENTS.md even
//!   on a new binary; this provider does not read user settings. A host that knows this can pass
//!   an older `--cli-version` to force the private-file route.
//! - Only the root's `AGENTS.md` is used; `.claude/AGENTS.md` is read by Claude but never written.

use projectfile_provider::definitions::{self, HookDialect, HookLayout};
use projectfile_provider::{
    BinarySpec, OwnedRole, Plan, PlanContext, Probes, Provider, ProviderOption, ProviderSpec,
    RelPath, Result, VersionProbe, mcp, patterns,
};
use projectfile_provider::{DiscoveryProfile, Walk};

/// The first version this provider trusts to read `AGENTS.md` (promise 17; see the module docs).
pub const AGENTS_MD_SINCE: semver::Version = semver::Version::new(2, 1, 284);
/// The first version measured to read `AGENTS.md` (2.1.280 does not, 2.1.281 does); the
/// discovery profile follows it, while the block route keeps the stricter [`AGENTS_MD_SINCE`].
pub const AGENTS_MD_READ_SINCE: semver::Version = semver::Version::new(2, 1, 281);
/// The flag that carries the private file by default: the text is appended to Claude Code's
/// own system prompt.
pub const PROMPT_FLAG: &str = "--append-system-prompt-file";
/// The flag that carries it with `prompt=replace` (the seed's literal route): the text replaces
/// Claude Code's own system prompt.
pub const REPLACE_FLAG: &str = "--system-prompt-file";
/// The option choosing the flag of the private-file route: `append` or `replace`.
pub const PROMPT_OPTION: &str = "prompt";
/// The private file's name (under the session's private directory in the state directory).
pub const PRIVATE_FILE: &str = "session-instructions.md";
/// Project files whose presence in the working directory or above makes Claude skip `AGENTS.md`.
pub const CLAUDE_FILES: [&str; 3] = ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"];
/// The user memory file, relative to the home directory; it does not make Claude skip AGENTS.md.
const USER_MEMORY: &str = ".claude/CLAUDE.md";

/// The Claude Code provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct Claude;

/// Where the CLI reads project skills; each session skill is projected into `.claude/skills/<name>/`.
pub const SKILLS_DIR: &str = ".claude/skills";
/// Where the CLI reads project subagents (`<name>.md`).
pub const AGENTS_DIR: &str = ".claude/agents";
/// Where the CLI reads project commands (`<name>.md`, run as `/<name>`).
pub const COMMANDS_DIR: &str = ".claude/commands";
/// The flag that takes the session's MCP servers, passed as `--mcp-config=<file>` (one argument:
/// the flag takes several values and would read the prompt after it as another file).
pub const MCP_FLAG: &str = "--mcp-config";
/// The flag that hides every MCP server but `--mcp-config`'s (`--mcp-mode replace`).
pub const STRICT_MCP_FLAG: &str = "--strict-mcp-config";
/// The private file holding `{"mcpServers": …}`.
pub const MCP_FILE: &str = "mcp-servers.json";
/// Set to `false` in the CLI's environment when the session brings MCP servers: Claude Code
/// 2.1.332 otherwise defers MCP tools behind its tool search (measured; QUALIFICATION.md).
pub const TOOL_SEARCH_ENV: &str = "ENABLE_TOOL_SEARCH";
/// How neutral hooks become Claude Code's: its events, each handler nested under a matcher,
/// timeouts in seconds.
pub const HOOKS: HookDialect = HookDialect {
    cli: "Claude Code",
    events: definitions::CLAUDE_CODE_EVENTS,
    layout: HookLayout::Nested,
    timeout_scale: 1,
};

/// The flag that loads extra settings (the session's hooks) from a file.
pub const SETTINGS_FLAG: &str = "--settings";
/// The private file holding `{"hooks": …}`.
pub const SETTINGS_FILE: &str = "settings.json";
/// Where the session's hook script goes; the hooks configuration runs it as
/// `"$CLAUDE_PROJECT_DIR"/.claude/hooks/<name>`.
pub const HOOK_SCRIPT_DIR: &str = ".claude/hooks";

/// Claude Code, as data. Its discovery is that of a binary that reads `AGENTS.md`; an older one
/// is told apart by [`Provider::discovery_for`].
pub const SPEC: ProviderSpec = ProviderSpec::new("claude", || profile(true))
    .session_text_in_file()
    .session_text_as_launch_arg()
    .skills_in(SKILLS_DIR)
    .takes_mcp()
    .replaces_mcp()
    .takes_hooks()
    .writes_owned_files()
    .takes_subagents()
    .takes_commands()
    .probes_binary(BinarySpec {
        name: "claude",
        version_args: &["--version"],
    })
    .with_cli_home_env("CLAUDE_CONFIG_DIR")
    .with_options(options);

/// The one option: which flag carries the private file.
fn options() -> Vec<ProviderOption> {
    vec![ProviderOption {
        name: PROMPT_OPTION.into(),
        values: vec!["append".into(), "replace".into()],
        default: "append".into(),
        help: format!(
            "the flag of the private-file route (a binary that does not read AGENTS.md, or a project with its own CLAUDE.md): `append` ({PROMPT_FLAG}: Claude Code keeps its own system prompt) or `replace` ({REPLACE_FLAG}: the session text replaces it; measured, Claude Code then sends a few hundred characters of system prompt instead of several thousand, without its own tool and safety guidance). The AGENTS.md route is the same either way"
        ),
    }]
}

/// The binary's version if it reads `AGENTS.md`, or why it is treated as one that does not.
fn reads_agents_md(probes: &Probes) -> std::result::Result<semver::Version, String> {
    let old = format!(
        "so it is treated as a binary that does not read AGENTS.md (needs {AGENTS_MD_SINCE} or later)"
    );
    match &probes.cli_version {
        VersionProbe::NotProbed => Err(format!("the claude version is unknown, {old}")),
        VersionProbe::Missing { reason } => Err(format!("{reason}; {old}")),
        VersionProbe::Unreadable { reason, .. } => Err(format!(
            "the claude version could not be read ({reason}), {old}"
        )),
        VersionProbe::Known { version, .. } => match semver::Version::parse(version) {
            Err(_) => Err(format!(
                "claude version {version:?} is not a semantic version, {old}"
            )),
            Ok(v) if v < AGENTS_MD_SINCE => Err(format!(
                "claude {v} does not read AGENTS.md (needs {AGENTS_MD_SINCE} or later)"
            )),
            Ok(v) => Ok(v),
        },
    }
}

/// The project's own `CLAUDE.md`-like files at the root or above it, as Claude would find them.
fn own_claude_files(ctx: &PlanContext<'_>) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for name in CLAUDE_FILES {
        if ctx.view.exists(&RelPath::new(name)?) {
            found.push(name.to_string());
        }
    }
    let user_memory = ctx.home.map(|home| home.join(USER_MEMORY));
    found.extend(
        ctx.view
            .found_above_root(&CLAUDE_FILES)
            .into_iter()
            .filter(|p| Some(p) != user_memory.as_ref())
            .map(|p| p.display().to_string()),
    );
    Ok(found)
}

/// Where Claude Code reads its rules, in every walked folder and under the home directory
/// (recursively, measured).
pub const RULES: &str = ".claude/rules/**/*.md";

/// Claude Code's discovery profile, for a binary that reads `AGENTS.md` or one that does not.
///
/// In each folder (measured): `CLAUDE.md`, `.claude/CLAUDE.md`, the folder's `.claude/rules/`,
/// `AGENTS.md`, `.claude/AGENTS.md`, `CLAUDE.local.md` (an `AGENTS.md` is never read beside a
/// `CLAUDE.local.md`, so the two never meet); the user's `~/.claude/CLAUDE.md`, then
/// `~/.claude/rules/`, first.
fn profile(reads_agents_md: bool) -> DiscoveryProfile {
    let agents: &[&str] = if reads_agents_md {
        &["AGENTS.md", ".claude/AGENTS.md"]
    } else {
        &[]
    };
    let [claude_md, dot_claude_md, local_md] = CLAUDE_FILES;
    let mut per_directory: Vec<String> = vec![claude_md.into(), dot_claude_md.into(), RULES.into()];
    per_directory.extend(agents.iter().map(|s| s.to_string()));
    per_directory.push(local_md.into());
    DiscoveryProfile {
        per_directory,
        // A CLAUDE.md-like file anywhere on the walk hides every AGENTS.md (measured).
        exclusive_if_present: CLAUDE_FILES
            .iter()
            .flat_map(|c| agents.iter().map(|a| (c.to_string(), a.to_string())))
            .collect(),
        exclusive_across_walk: true,
        on_demand_path_rules: true,
        on_demand_subtree: true,
        walk: Walk::CwdUpToFsRoot,
        imports: true,
        imports_keep_line: true,
        max_import_hops: Some(4),
        imports_inside_working_dir: true,
        strip_html_comments: true,
        user_files: vec![USER_MEMORY.into(), RULES.into()],
        // A file that is not valid UTF-8 is sent, each bad sequence as U+FFFD (measured with
        // 2.1.332).
        lossy_utf8: true,
        ..DiscoveryProfile::default()
    }
}

impl Provider for Claude {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    fn discovery_for(&self, probes: &Probes) -> DiscoveryProfile {
        match probes.cli_version.semver() {
            Some(version) if version < AGENTS_MD_READ_SINCE => profile(false),
            _ => profile(true),
        }
    }

    /// Where the session text goes, then the session's MCP servers (a private
    /// `--mcp-config=<file>`), hooks (a private `--settings=<file>`, the script in
    /// `.claude/hooks/`), subagents and commands.
    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        let mut plan = text_plan(ctx)?;
        mcp::private_file_route(ctx, &mut plan, MCP_FLAG, MCP_FILE, STRICT_MCP_FLAG)?;
        if ctx.request.mcp_servers.is_some() {
            plan.env.push((TOOL_SEARCH_ENV.into(), "false".into()));
            plan.notes.push(format!(
                "the session's MCP servers go in a private file passed as {MCP_FLAG}=<file>; {TOOL_SEARCH_ENV}=false makes Claude Code (2.1.332 and later) send their tools in the first request instead of deferring them behind its tool search"
            ));
        }
        patterns::settings_file_route(
            ctx,
            &mut plan,
            SETTINGS_FLAG,
            SETTINGS_FILE,
            HOOK_SCRIPT_DIR,
            patterns::Dialect::Converted(&HOOKS),
        )?;
        let request = ctx.request;
        plan.owned_files
            .extend(patterns::agent_files(&request.agents, AGENTS_DIR, ".md")?);
        plan.owned_files.extend(patterns::named_files(
            &request.commands,
            COMMANDS_DIR,
            OwnedRole::Command,
        )?);
        Ok(plan)
    }
}

/// Where the session text goes: the `AGENTS.md` block, or the private file.
fn text_plan(ctx: &PlanContext<'_>) -> Result<Plan> {
    {
        let replace = ctx.request.option(PROMPT_OPTION, "append") == "replace";
        let flag = if replace { REPLACE_FLAG } else { PROMPT_FLAG };
        let mut route = format!(
            "the session text goes to a private file passed with {flag}; no project file is edited"
        );
        if replace {
            route.push_str(&format!(
                " (option {PROMPT_OPTION}=replace: it replaces Claude Code's own system prompt)"
            ));
        }
        let version = match reads_agents_md(ctx.probes) {
            Ok(version) => version,
            Err(why) => {
                return Ok(patterns::private_file_plan(
                    ctx,
                    flag,
                    PRIVATE_FILE,
                    vec![format!("{why}: {route}")],
                ));
            }
        };
        let own = own_claude_files(ctx)?;
        if !own.is_empty() {
            return Ok(patterns::private_file_plan(
                ctx,
                flag,
                PRIVATE_FILE,
                vec![format!(
                    "claude {version} reads AGENTS.md only when no CLAUDE.md, .claude/CLAUDE.md or CLAUDE.local.md exists in the working directory or above, and {} does: {route}",
                    own.join(", ")
                )],
            ));
        }
        // Claude does not read AGENTS.override.md: the block always goes to AGENTS.md.
        let mut plan = patterns::agents_md_block(ctx, &[])?;
        plan.notes.push(format!(
            "claude {version} reads AGENTS.md when the project has no CLAUDE.md, so the block goes there"
        ));
        if replace {
            plan.notes.push(format!(
                "option {PROMPT_OPTION}=replace chooses the flag of the private-file route only; this session's text goes into AGENTS.md"
            ));
        }
        Ok(plan)
    }
}
