//! The Gemini CLI provider: the session text is a block in the root `GEMINI.md`, because Gemini
//! CLI always reads that name (a project's `context.fileName` only adds names to it) from the git
//! root down to the folder it starts in, and shows it to the model in the first user message
//! next to the project's own context, while its one system-prompt route (`GEMINI_SYSTEM_MD`)
//! replaces the whole of its own prompt. The user's bytes around the block are kept as they are.
//!
//! What else a session brings goes where Gemini CLI reads it: skills in `.gemini/skills/<name>/`;
//! MCP servers and hooks merged into the project's `.gemini/settings.json` (its exact bytes come
//! back at the end); commands as `.gemini/commands/<name>.toml`. Subagents and
//! `--mcp-mode replace` are refused, with the reason.
//!
//! # Decisions
//!
//! - **MCP servers carry `"trust": true`.** In one-turn mode (`-p`) Gemini CLI decides every
//!   tool call by its policy engine with no one to ask, so a tool that would need a confirmation
//!   is not offered at all: a server's tools reach the model only when they may run without
//!   one, by `trust: true` on the server or by `--allowed-mcp-server-names`. The flag would
//!   also hide every other server (the project's and the user's), so each of the session's
//!   servers gets `"trust": true` in the merged file instead (unless the host set `trust`
//!   itself): its tools run without a confirmation, also in an interactive run of the session;
//!   the project's and the user's servers keep their own settings. A private `--policy` file
//!   allowing the tools in one-turn mode only was measured to work, but the flag replaces the
//!   user's own policies folder (`~/.gemini/policies`), so it is not used; workspace policies
//!   (`.gemini/policies/`) are switched off in 0.61.0.
//! - **Subagents are refused.** A project's `.gemini/agents/*.md` reach the model only once the
//!   user acknowledged each file (its sha256 under `~/.gemini/acknowledgments/agents.json`, in
//!   the CLI's own home) and are dropped silently otherwise; `~/.gemini/agents/` needs no
//!   acknowledgment but is the user's own folder, outside what a session writes.
//! - **Commands are TOML only.** Gemini CLI reads `.gemini/commands/<name>.toml` (`prompt`,
//!   optional `description`) and nothing else there; a `--command` file that is not TOML with a
//!   `prompt` string is refused, and so is one using `$ARGUMENTS` (left as it is: only
//!   `{{args}}` is replaced).
//! - **The folder must be trusted.** Gemini CLI reads project files (and runs project hooks)
//!   only in a trusted folder, and in one-turn mode an untrusted folder stops it (exit 55): the
//!   host trusts the folder, passes `--skip-trust`, or sets `GEMINI_CLI_TRUST_WORKSPACE=true`. The
//!   plan does not do it for the user.
//!
//! # Facts relied on
//!
//! Read in the published bundle of `@google/gemini-cli` 0.61.0 (`bundle/*.js`, which keeps the
//! source file names of google-gemini/gemini-cli as comments) and measured with the binary by
//! `cargo xtask qualify` (QUALIFICATION.md) and by hand against the same capture endpoint.
//!
//! | fact | source | confirmed? |
//! |---|---|---|
//! | Project context files are read from the folder it starts in up to the nearest folder holding `.git` (a file or a folder); without one, only the folder it starts in; nothing above the git root | `packages/core/src/utils/memoryDiscovery.ts` (`getEnvironmentMemoryPaths`, `findUpwardGeminiFiles`: the ceiling is the git root, else the trusted root itself) | YES: measured with 0.61.0 (a `GEMINI.md` above the git root, and above a folder without one, is not sent) |
//! | `GEMINI.md` is always read; `context.fileName` in a settings file *adds* names (`["AGENTS.md"]` reads both) | `packages/core/src/tools/memoryTool.ts` (`setGeminiMdFilename` keeps the current names); measured with 0.61.0 | YES |
//! | The files found are sent sorted by path, each trimmed and wrapped in `--- Context from: <path> ---` lines; empty files are skipped | `memoryDiscovery.ts` (`getEnvironmentMemoryPaths` sorts, `concatenateInstructions` trims) | YES (code; order measured with 0.61.0) |
//! | Project context goes into the first user message (`<project_context>`); `~/.gemini/GEMINI.md` goes into the system instruction | measured with 0.61.0 (the request's `contents[0]` and `systemInstruction`) | YES (measured) |
//! | `GEMINI.md` files below the folder it starts in are read only when a tool touches a file there (just in time), never at start | `memoryDiscovery.ts` (`loadJitSubdirectoryMemory`); measured with 0.61.0 | YES |
//! | `@path` imports are expanded in place (the token, not the line), five levels deep; an import outside the git root (or, without one, outside the importing file's folder) is replaced by an `Import failed` comment | `packages/core/src/utils/memoryImportProcessor.ts` (`processImports`, `maxDepth: 5`, `validateImportPath`); measured with 0.61.0 (the sixth level stays literal) | YES |
//! | No budget: a 1.5 MB `GEMINI.md` is sent whole | measured with 0.61.0 | YES (measured) |
//! | HTML comments are not stripped, so our marker lines reach the model and are worded to read sensibly; CRLF is kept inside a file | measured with 0.61.0 | YES (measured) |
//! | Bytes that are not UTF-8 are sent as U+FFFD (the file is read as UTF-8 with replacement), never dropped | `memoryDiscovery.ts` (`readFile(…, "utf-8")`); measured with 0.61.0 | YES |
//! | Project files are read only in a trusted folder; in one-turn mode an untrusted folder exits 55; `GEMINI_CLI_TRUST_WORKSPACE=true` or `--skip-trust` trusts it | `packages/core/src/utils/trust.ts` (`checkPathTrust`), `packages/cli/src/utils/userStartupWarnings.ts`; measured with 0.61.0 | YES |
//! | `GEMINI_SYSTEM_MD` (also from `.gemini/.env`) replaces the whole system prompt; there is no flag or variable that appends to it | `packages/core/src/prompts/promptProvider.ts` (`getCoreSystemPrompt` reads `GEMINI_SYSTEM_MD`); `gemini --help` of 0.61.0 lists no prompt flag | YES (code); not used |
//! | `GEMINI_CLI_HOME` replaces the home directory the CLI puts its `.gemini` folder in (settings, auth choice, sessions, acknowledgments) | `packages/core/src/utils/paths.ts` (`homedir()`); measured with 0.61.0 (settings then read from `$GEMINI_CLI_HOME/.gemini`) | YES |
//! | Skills: `.gemini/skills/<name>/SKILL.md` and `.agents/skills/` in the project, `~/.gemini/skills/`; their names and descriptions are listed in the system instruction | `packages/core/src/skills/skillManager.ts`, `config/storage.ts` (`getProjectSkillsDir`); measured with 0.61.0 | YES |
//! | MCP servers: `mcpServers` in `.gemini/settings.json` (project) or `~/.gemini/settings.json`; there is no flag naming a server file | `packages/cli/src/config/config.ts` (`mcpServers` from the merged settings); `gemini --help` of 0.61.0 lists no server-file flag; measured with 0.61.0 | YES |
//! | In one-turn mode a server's tools are offered only with an allow rule: `trust: true` on the server or `--allowed-mcp-server-names` (which also stops every other server); the policy engine's default there is deny | `packages/core/src/policy/config.ts` (`TRUSTED_MCP_SERVER_PRIORITY`, `defaultDecision` deny when not interactive); measured with 0.61.0 (no `trust`: not offered) | YES |
//! | `--policy FILE` replaces the user's policies folder, and workspace policies are switched off (`disableWorkspacePolicies = true`) | `policy/config.ts` (`getPolicyDirectories`), `packages/cli/src/config/policy.ts` | YES (code); not used |
//! | Hooks in a trusted project's `.gemini/settings.json` (`hooks`: event, then matchers, then `{type, command}`) run in one-turn mode, after a warning; the CLI records them as trusted in `~/.gemini/trusted_hooks.json` | `packages/core/src/hooks/hookRegistry.ts` (`checkProjectHooksTrust`), `trustedHooks.ts`; measured with 0.61.0 (`SessionStart` and `BeforeAgent` ran) | YES |
//! | Commands: `.gemini/commands/<name>.toml` with `prompt` (and `description`); `-p "/name args"` runs it; only `{{args}}` is replaced (`$ARGUMENTS` stays literal), and a prompt without it gets the typed line appended; a `.md` file there is no command | `packages/cli/src/services/FileCommandLoader.ts`; measured with 0.61.0 | YES |
//! | Project agents (`.gemini/agents/*.md`) reach the model only once acknowledged (sha256 in `~/.gemini/acknowledgments/agents.json`) and are dropped silently otherwise; `~/.gemini/agents/` need none | `packages/core/src/agents/registry.ts` (`acknowledgeAgent`), `config/storage.ts` (`getAcknowledgedAgentsPath`); measured with 0.61.0 | YES (refused) |
//! | Pointed at a local endpoint: `GOOGLE_GEMINI_BASE_URL`, `GEMINI_API_KEY` and `security.auth.selectedType = "gemini-api-key"` in the user settings (without it: "Invalid auth method selected", exit 41); `privacy.usageStatisticsEnabled = false` stops its usage logging (else it tries `play.googleapis.com`) | `packages/core/src/core/contentGenerator.ts` (`getAuthTypeFromEnv`); measured with 0.61.0 | YES (measured) |
//!
//! # Known gaps
//!
//! - The sort by path puts a subfolder whose name sorts before `GEMINI.md` (`A/`, `0/`) ahead of
//!   the root's file; `resolve --as gemini` lists the root first. No budget depends on the order.
//! - A project that names more files in `context.fileName` gets them read too; the profile knows
//!   only `GEMINI.md` (a provider reads no settings).
//! - A user who set `mcp.allowed` (or `mcp.excluded`) in `~/.gemini/settings.json` may keep the
//!   session's servers from starting.

use projectfile_provider::definitions::{self, HookDialect, HookEvent, HookLayout};
use projectfile_provider::{
    DiscoveryProfile, Input, OwnedRole, Plan, PlanContext, Provider, ProviderSpec, RelPath, Result,
    Walk, mcp, patterns,
};

/// The file Gemini CLI always reads in each folder of its walk.
pub const CONTEXT_FILE: &str = "GEMINI.md";
/// The project's settings file, where the session's MCP servers and hooks are merged.
pub const SETTINGS_FILE: &str = ".gemini/settings.json";
/// Where Gemini CLI reads project skills.
pub const SKILLS_DIR: &str = ".gemini/skills";
/// Where, under the folder `GEMINI_CLI_HOME` names, Gemini CLI reads the user's subagents
/// (`<name>.md`), which need no acknowledgment.
pub const HOME_AGENTS_DIR: &str = ".gemini/agents";

/// The variable that moves Gemini CLI's home (its `~/.gemini/` is under it).
pub const GEMINI_HOME_ENV: &str = "GEMINI_CLI_HOME";

/// How neutral hooks become Gemini CLI's: its events, each handler nested under a matcher,
/// timeouts in milliseconds.
pub const HOOKS: HookDialect = HookDialect {
    cli: "Gemini CLI",
    events: &[
        (HookEvent::SessionStart, "SessionStart"),
        (HookEvent::UserPromptSubmit, "BeforeAgent"),
        (HookEvent::BeforeTool, "BeforeTool"),
        (HookEvent::AfterTool, "AfterTool"),
        (HookEvent::Stop, "AfterAgent"),
        (HookEvent::SessionEnd, "SessionEnd"),
    ],
    layout: HookLayout::Nested,
    timeout_scale: 1000,
};

/// Where Gemini CLI reads project commands (`<name>.toml`).
pub const COMMANDS_DIR: &str = ".gemini/commands";
/// Where the session's hook script goes; its configuration runs it as
/// `"$GEMINI_PROJECT_DIR"/.gemini/hooks/<name>`.
pub const HOOK_SCRIPT_DIR: &str = ".gemini/hooks";
/// The key each session server gets set to `true` (see the module docs).
pub const TRUST_KEY: &str = "trust";

/// Gemini CLI, as data.
pub const SPEC: ProviderSpec = ProviderSpec::new("gemini", discovery)
    .session_text_in_file()
    .skills_in(SKILLS_DIR)
    .takes_mcp()
    .takes_hooks()
    .takes_commands()
    .writes_owned_files()
    .with_cli_home_env(GEMINI_HOME_ENV)
    .takes_subagents_in_cli_home()
    .refusing(&[
        (
            Input::McpReplace,
            "the session's servers are merged into the project's .gemini/settings.json, the user's own servers load from ~/.gemini/settings.json all the same, and --allowed-mcp-server-names would hide a project server of the same name",
        ),
    ]);

/// The Gemini CLI provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gemini;

/// How Gemini CLI discovers instruction files (see the facts table).
fn discovery() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec![CONTEXT_FILE.into()],
        root_markers: vec![".git".into()],
        walk: Walk::RootToCwd,
        imports: true,
        imports_keep_line: true,
        max_import_hops: Some(5),
        user_files: vec![format!(".gemini/{CONTEXT_FILE}")],
        on_demand_subtree: true,
        lossy_utf8: true,
        ..DiscoveryProfile::default()
    }
}

impl Provider for Gemini {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    /// The `GEMINI.md` block; the session's MCP servers (each trusted) and hooks merged into
    /// `.gemini/settings.json`, the hook script in `.gemini/hooks/`; commands as TOML files.
    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        let notes = vec![format!(
            "Gemini CLI reads {CONTEXT_FILE} from the git root down to the folder it starts in (only that folder without a git root), and only in a trusted folder: start it in the workspace root, with the folder trusted (or GEMINI_CLI_TRUST_WORKSPACE=true)"
        )];
        let mut plan = patterns::block_plan(ctx, RelPath::new(CONTEXT_FILE)?, notes)?;
        if let Some(mut merged) = mcp::merged_file(ctx, SETTINGS_FILE)? {
            for server in merged.entries.values_mut() {
                if let Some(server) = server.as_object_mut() {
                    server
                        .entry(TRUST_KEY)
                        .or_insert(serde_json::Value::Bool(true));
                }
            }
            plan.merged_json.push(merged);
            plan.notes.push(format!(
                "the session's MCP servers are merged into {SETTINGS_FILE} with \"trust\": true, without which Gemini CLI offers no tool of theirs in one-turn mode; their tools then run without a confirmation"
            ));
        }
        patterns::merged_hooks(
            ctx,
            &mut plan,
            SETTINGS_FILE,
            HOOK_SCRIPT_DIR,
            patterns::Dialect::Converted(&HOOKS),
        )?;
        if let Some(home) = ctx.cli_home {
            let dir = home.join(HOME_AGENTS_DIR)?;
            let agents = &ctx.request.agents;
            let mut files = patterns::named_files(agents, dir.as_str(), OwnedRole::Subagent)?;
            for (file, agent) in files.iter_mut().zip(agents) {
                definitions::require_slug(agent, "Gemini CLI")?;
                file.content = definitions::agent_markdown_minimal(agent)?;
            }
            plan.owned_files.extend(files);
            if !agents.is_empty() {
                plan.notes.push(format!(
                    "the session's subagents go to the CLI's private home ({GEMINI_HOME_ENV}/{HOME_AGENTS_DIR}/), which Gemini CLI reads without asking the user to acknowledge them; only their name, description and prompt (Gemini CLI drops an agent whose tools or keys were written for another CLI)"
                ));
            }
        }
        plan.owned_files.extend(patterns::command_files(
            &ctx.request.commands,
            COMMANDS_DIR,
            "gemini",
            patterns::CommandFormats::Toml,
        )?);
        Ok(plan)
    }
}
