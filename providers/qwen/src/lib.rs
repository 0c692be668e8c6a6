//! The Qwen Code provider: the session text is a block in the root `QWEN.md`, because Qwen Code
//! reads that file from one folder above the git root down to the folder it starts in and puts
//! it into its system prompt, after its own prompt, which it keeps. The user's bytes around the
//! block are kept as they are.
//!
//! What else a session brings goes where Qwen Code reads it: skills in `.qwen/skills/<name>/`;
//! MCP servers in a private file passed as `--mcp-config=<file>` (no project file is edited);
//! hooks merged into the project's `.qwen/settings.json` (its exact bytes come back at the end);
//! subagents as `.qwen/agents/<name>.md`; commands as `.qwen/commands/<name>.md` (or `.toml`).
//!
//! # Decisions
//!
//! - **`QWEN.md` rather than `--append-system-prompt`.** Both put the text into the system prompt
//!   and keep Qwen Code's own (measured: the flag's text comes last, after the context files),
//!   but the flag takes the text itself, not a file: it would sit in the process's arguments
//!   (readable by every local user, at most 128 KiB per argument) and in every receipt. The block
//!   lives in a file, and the delivery verdict reads it as Qwen Code does. `--system-prompt` and
//!   `QWEN_SYSTEM_MD` replace Qwen Code's own prompt and are not used.
//! - **MCP servers by the private file.** Servers in the project's `.qwen/settings.json` or
//!   `.mcp.json` start in one-turn mode only with `--yolo`; a `--mcp-config` file starts without
//!   it (measured), and its tools keep the normal approval: no `trust` is added. `--mcp-mode replace` adds
//!   `--allowed-mcp-server-names=<name>` for each of the session's servers, which stops the user's
//!   own servers from starting.
//! - **Commands** are taken as Qwen Code reads them: a file that is TOML with a `prompt` string as
//!   `<name>.toml`, anything else as Markdown `<name>.md`; one using `$ARGUMENTS` (left as it is:
//!   only `{{args}}` is replaced) is refused.
//!
//! # Facts relied on
//!
//! Read in the published bundle of `@qwen-code/qwen-code` 0.24.4 (`chunks/*.js`, which keeps the
//! source file names of QwenLM/qwen-code as comments, and the docs it ships under
//! `bundled/qc-helper/docs/`) and measured with the binary by `cargo xtask qualify`
//! (QUALIFICATION.md) and by hand against the same capture endpoint.
//!
//! | fact | source | confirmed? |
//! |---|---|---|
//! | Context files are read from the folder it starts in up to one folder *above* the nearest folder holding `.git`; without one, up to the folder above the home directory when it starts below it, else up to the top (the file-system root itself never) | `packages/core/src/memory/memoryDiscovery.ts` (`getMemoryFilePathsInternalForEachDir`, `ultimateStopDir`); measured with 0.24.4 | YES |
//! | The names are `QWEN.md` then `AGENTS.md`; each name is read along the whole walk (root first) before the next: user `QWEN.md`, every `QWEN.md`, user `AGENTS.md`, every `AGENTS.md` | `memoryDiscovery.ts` (the loop over `getAllMemoryFilenames()`); measured with 0.24.4 | YES |
//! | `context.fileName` in a settings file *replaces* the names (`["GEMINI.md"]`: neither `QWEN.md` nor `AGENTS.md` is read) | measured with 0.24.4 (a project `.qwen/settings.json`) | YES (measured); a provider reads no settings (see Known gaps) |
//! | `.qwen/QWEN.local.md` at the git root is read after them, and not at all without a git root | `memoryDiscovery.ts` (`loadServerHierarchicalMemory`, `LOCAL_CONTEXT_FILENAME`); docs `features/memory.md`; measured with 0.24.4 | YES |
//! | Rules: every `.md` under `.qwen/rules/` (of the git root, else the folder it starts in) and `~/.qwen/rules/`, sorted, after the context files; a rule with `paths:` front matter only when a matching file is touched; HTML comments stripped from rules | `packages/core/src/config/rulesDiscovery.ts`; docs `features/rules.md`; measured with 0.24.4 | YES |
//! | User files: `~/.qwen/QWEN.md` and `~/.qwen/AGENTS.md` (or under `QWEN_HOME`) | `memoryDiscovery.ts`; measured with 0.24.4 | YES |
//! | Everything goes into the system prompt as `--- Context from: <path> ---` sections, each trimmed; empty files are skipped | `memoryDiscovery.ts` (`concatenateInstructions`); measured with 0.24.4 | YES |
//! | `@path` imports expanded in place, five levels deep; an import outside the project root is replaced by an `Import failed` comment | `packages/core/src/utils/memoryImportProcessor.ts` (`maxDepth: 5`); docs `features/memory.md`; measured with 0.24.4 | YES |
//! | No budget: a 1.5 MB `QWEN.md` is sent whole | measured with 0.24.4 | YES (measured) |
//! | HTML comments in context files are not stripped, so our marker lines reach the model and are worded to read sensibly; CRLF is kept inside a file | measured with 0.24.4 | YES (measured) |
//! | Bytes that are not UTF-8 are sent as U+FFFD, never dropped | `memoryDiscovery.ts` (`readFile(…, "utf-8")`); measured with 0.24.4 | YES |
//! | `--append-system-prompt TEXT` appends to the system prompt, after the context files, keeping Qwen Code's own; `--system-prompt TEXT` and `QWEN_SYSTEM_MD` replace it | `qwen --help` of 0.24.4; measured with 0.24.4 (1 051 characters of system prompt with `--system-prompt` instead of about 20 000) | YES |
//! | `QWEN_HOME` moves the whole global folder (default `~/.qwen`: settings, credentials, memory, skills, user `QWEN.md`) | docs `configuration/settings.md`; `cli-entry.js` (`resolveQwenHome`); measured with 0.24.4 | YES |
//! | Skills: `.qwen/skills/<name>/SKILL.md` and `.agents/skills/` in the project, `~/.qwen/skills/`; names and descriptions listed in the first user message | `packages/core/src/skills/skill-manager.ts`; docs `features/skills.md`; measured with 0.24.4 | YES |
//! | MCP: `--mcp-config` takes a file path (or inline JSON) `{"mcpServers": …}`; its servers start in one-turn mode without `--yolo`, while the project's `.qwen/settings.json` and `.mcp.json` servers start only with it; the user's `~/.qwen/settings.json` servers start too | `qwen --help` of 0.24.4; measured with 0.24.4 | YES (measured) |
//! | An MCP tool runs without a confirmation only when its server's own configuration says `trust` | `packages/core/src/tools/mcp-client.ts` (`DiscoveredMCPTool` gets `mcpServerConfig.trust`) | YES (code) |
//! | MCP tools are deferred: listed by name (`mcp__<server>__<tool>`) in a system reminder and loaded through `tool_search`/`tool_call` | docs `configuration/settings.md` (`tools.toolSearch`); measured with 0.24.4 | YES |
//! | `--allowed-mcp-server-names` only filters which servers start (no approval is granted) | `packages/cli/src/config/config.ts` (`allowedMcpServers`); measured with 0.24.4 (the user's server no longer starts) | YES |
//! | Hooks in the project's `.qwen/settings.json` (`hooks`: event, matchers, `{type, command}`) load in a trusted folder (every folder while folder trust is off, the default) and run in one-turn mode | docs `features/hooks.md` ("Project hooks load only in a trusted folder"); measured with 0.24.4 (`SessionStart` and `UserPromptSubmit` ran) | YES |
//! | Qwen Code rewrites a `.qwen/settings.json` that lacks `"$version"`, adding `"$version": 4`, and leaves one that has it alone; so a settings file the session makes starts with it (never added to the project's own file) | measured with 0.24.4 (a created file holding only `hooks` was rewritten during a one-turn run) | YES |
//! | Commands: `.qwen/commands/<name>.md` (optional front matter) or the older `<name>.toml` (`prompt`); only `{{args}}` is replaced (`$ARGUMENTS` stays literal), a prompt without it gets the typed line appended | `packages/cli/src/services/FileCommandLoader.ts`; docs `features/commands.md`; measured with 0.24.4 | YES |
//! | Subagents: `.qwen/agents/<name>.md` (front matter `name`, `description`), listed in the agent tool's description | `packages/core/src/subagents/subagent-manager.ts`; docs `features/sub-agents.md`; measured with 0.24.4 | YES |
//! | Pointed at a local endpoint: `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_MODEL`; `privacy.usageStatisticsEnabled = false` stops its usage logging (else it tries an `aliyuncs.com` host); `memory.enableManagedAutoMemory = false` stops a second, background model request | measured with 0.24.4 | YES (measured) |
//!
//! # Known gaps
//!
//! - A project or user `context.fileName` that leaves `QWEN.md` out hides the block; a provider
//!   reads no settings, so the delivery verdict cannot see it.
//! - Started in the home directory itself, Qwen Code reads only the home's own files; rules in
//!   `~/.qwen/rules/` and rules nested two folders deep are not in `resolve --as qwen`.
//! - Rules are listed after every context file, top-level rules before nested ones; Qwen Code
//!   sorts them by their path below `.qwen/rules/`.

use projectfile_provider::definitions::{self, HookDialect, HookLayout};
use projectfile_provider::{
    DiscoveryProfile, Plan, PlanContext, Provider, ProviderSpec, RelPath, Result, Walk, mcp,
    patterns,
};

/// Qwen Code's own context file, where the block goes.
pub const CONTEXT_FILE: &str = "QWEN.md";
/// The project's settings file, where the session's hooks are merged.
pub const SETTINGS_FILE: &str = ".qwen/settings.json";
/// Where Qwen Code reads project skills.
pub const SKILLS_DIR: &str = ".qwen/skills";
/// Where Qwen Code reads project subagents (`<name>.md`).
pub const AGENTS_DIR: &str = ".qwen/agents";
/// The key and value of the settings format's version, which Qwen Code 0.24.4 writes into a
/// `.qwen/settings.json` lacking it (`"$version": 4`, measured), and leaves alone once there.
pub const SETTINGS_VERSION_KEY: &str = "$version";
/// See [`SETTINGS_VERSION_KEY`].
pub const SETTINGS_VERSION: u64 = 4;

/// How neutral hooks become Qwen Code's: Claude Code's event names, each handler nested under
/// a matcher, timeouts in milliseconds.
pub const HOOKS: HookDialect = HookDialect {
    cli: "Qwen Code",
    events: definitions::CLAUDE_CODE_EVENTS,
    layout: HookLayout::Nested,
    timeout_scale: 1000,
};

/// Where Qwen Code reads project commands (`<name>.md` or `<name>.toml`).
pub const COMMANDS_DIR: &str = ".qwen/commands";
/// Where the session's hook script goes; its configuration runs it as
/// `"$QWEN_PROJECT_DIR"/.qwen/hooks/<name>`.
pub const HOOK_SCRIPT_DIR: &str = ".qwen/hooks";
/// The flag taking the session's MCP servers, as `--mcp-config=<file>`.
pub const MCP_FLAG: &str = "--mcp-config";
/// The flag naming, one argument each, the only servers to start (`--mcp-mode replace`).
pub const ALLOW_FLAG: &str = "--allowed-mcp-server-names";
/// The private file holding `{"mcpServers": …}`.
pub const MCP_FILE: &str = "mcp-servers.json";

/// Qwen Code, as data.
pub const SPEC: ProviderSpec = ProviderSpec::new("qwen", discovery)
    .session_text_in_file()
    .skills_in(SKILLS_DIR)
    .takes_mcp()
    .replaces_mcp()
    .takes_hooks()
    .takes_subagents()
    .takes_commands()
    .writes_owned_files()
    .with_cli_home_env("QWEN_HOME");

/// The Qwen Code provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct Qwen;

/// How Qwen Code discovers instruction files (see the facts table).
fn discovery() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec![CONTEXT_FILE.into(), patterns::AGENTS_MD.into()],
        names_across_walk: true,
        root_markers: vec![".git".into()],
        walk: Walk::AboveRootToCwd,
        imports: true,
        imports_keep_line: true,
        max_import_hops: Some(5),
        user_files: vec![
            format!(".qwen/{CONTEXT_FILE}"),
            format!(".qwen/{}", patterns::AGENTS_MD),
        ],
        marked_root_files: vec![".qwen/QWEN.local.md".into()],
        extra_files: vec![".qwen/rules/*.md".into(), ".qwen/rules/*/*.md".into()],
        on_demand_path_rules: true,
        lossy_utf8: true,
        ..DiscoveryProfile::default()
    }
}

impl Provider for Qwen {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    /// The `QWEN.md` block; the session's MCP servers in a private `--mcp-config=<file>`; hooks
    /// merged into `.qwen/settings.json`, the script in `.qwen/hooks/`; subagents and commands
    /// in `.qwen/agents/` and `.qwen/commands/`.
    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        let notes = vec![format!(
            "Qwen Code reads {CONTEXT_FILE} from one folder above the git root down to the folder it starts in, unless a context.fileName setting leaves {CONTEXT_FILE} out: start it in the workspace root"
        )];
        let mut plan = patterns::block_plan(ctx, RelPath::new(CONTEXT_FILE)?, notes)?;
        mcp::private_file_route_naming(ctx, &mut plan, MCP_FLAG, MCP_FILE, ALLOW_FLAG)?;
        if ctx.request.mcp_servers.is_some() {
            plan.notes.push(format!(
                "the session's MCP servers go in a private file passed as {MCP_FLAG}=<file>, which Qwen Code starts in one-turn mode without --yolo; their tools keep the normal approval"
            ));
        }
        patterns::merged_hooks(
            ctx,
            &mut plan,
            SETTINGS_FILE,
            HOOK_SCRIPT_DIR,
            patterns::Dialect::Converted(&HOOKS),
        )?;
        if let Some(settings) = plan.merged_json.last_mut() {
            // Qwen Code writes its settings format's version into a file that lacks it (a
            // file the session makes), which would leave the file no longer provably ours.
            settings
                .created_with
                .insert(SETTINGS_VERSION_KEY.into(), SETTINGS_VERSION.into());
        }
        let request = ctx.request;
        plan.owned_files
            .extend(patterns::agent_files(&request.agents, AGENTS_DIR, ".md")?);
        plan.owned_files.extend(patterns::command_files(
            &request.commands,
            COMMANDS_DIR,
            "qwen",
            patterns::CommandFormats::TomlOrMarkdown,
        )?);
        Ok(plan)
    }
}
