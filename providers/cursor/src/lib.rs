//! The Cursor CLI provider. Everything Cursor takes is an **owned file** under `.cursor/`, written
//! whole, counted across sessions, and put back byte for byte (content and mode) by the last
//! session when the project had its own:
//!
//! | input | file | role |
//! |---|---|---|
//! | session text | `.cursor/rules/mlp-system.mdc` (frontmatter `alwaysApply: true`, then the text) | `Instructions` |
//! | MCP servers | `.cursor/mcp.json`: the project's own file with the session's servers merged under `"mcpServers"` (core's merged JSON kind); `--mcp-mode replace`: the session's alone | `McpConfig` |
//! | commands | `.cursor/commands/<name>.md` | `Command` |
//! | CLI configuration | `.cursor/cli.json` (as given) | `CliConfig` |
//! | hooks configuration | `.cursor/hooks.json` (as given) | `HooksConfig` |
//! | hook script | `.cursor/hooks/<name>`, mode 0755 | `HookScript` |
//!
//! Plus a `.git` **marker** (an empty directory) that core creates only when the workspace has no
//! `.git`, shares and counts across sessions, and removes only with the last session that holds
//! it; a project's own `.git` (directory or file) is reported `exists` and never touched. The plan
//! always names the marker so that every session counts it: a plan that left it out because
//! another session's marker was there would let that session remove it from under this one.
//!
//! # Decisions
//!
//! - Hook script location `.cursor/hooks/<name>`: project hooks run with the project root as
//!   working directory, and public examples run project hook scripts as `.cursor/hooks/x.sh`, so
//!   the session's hooks configuration should run the script as `.cursor/hooks/<name>`.
//! - The MCP input is the server map itself (`{"name": {...}}`); a map whose only key is
//!   `mcpServers` is refused rather than guessed at (wrapping it again would make a config Cursor
//!   reads as empty). The project's own servers stay while sessions run; a name the project and
//!   the session define differently is refused, naming it; the project's exact bytes come back
//!   with the last session, and an edit made meanwhile is set aside.
//! - The `.git` marker is created as promise 17 requires, although no source says the
//!   Cursor CLI needs it (see the table).
//!
//! # Facts relied on
//!
//! From cursor.com/docs and third-party validators (stored copies;
//! Cursor's source is not public).
//!
//! | fact | source | confirmed? |
//! |---|---|---|
//! | The CLI uses the same rules system as the IDE (`.cursor/rules`) | cursor.com/docs/cli/using ("The CLI agent supports the same rules system as the IDE") | YES (docs) |
//! | The CLI also reads `AGENTS.md` and `CLAUDE.md` at the project root as rules | same page | YES (docs) |
//! | Rules may be `.md` or `.mdc`; `.mdc` frontmatter controls when they apply (the belief that plain `.md` is ignored is outdated) | cursor.com/docs/context/rules ("Cursor supports .md and .mdc extensions") | YES (docs) |
//! | Frontmatter `alwaysApply: true` (a YAML boolean, not the string `"true"`) applies a rule to every request; malformed frontmatter skips the rule | cursor docs; stbenjam/skillsaw `docs/rules/cursor-rules-valid.md` | YES (fields); skip behaviour PARTLY |
//! | Project MCP config `.cursor/mcp.json`, shape `{"mcpServers": {...}}`; project servers need approval | cursor.com/docs/mcp (copy at developersdigest.tech); developersdigest.tech/reference/cursor-cli/config-files | YES (format); approval PARTLY |
//! | Project CLI config `.cursor/cli.json`; "Only permissions can be configured at the project level" | cursor.com/docs/cli/reference/configuration.md | YES (docs) |
//! | Hooks `.cursor/hooks.json` = `{"version": 1, "hooks": {"<event>": [{"command": ...}]}}`, lowerCamelCase events | cursor.com/docs/agent/hooks; skillsaw `cursor-hooks-valid.md` ("must declare version 1") | YES (shape) |
//! | Project hooks run only in a trusted workspace, from the project root (`.cursor/hooks/x.sh`); JSON on stdin/stdout; exit 2 denies | cursor.com/docs/agent/hooks; stored ADR; radiusmethod/crow issue #417 | PARTLY |
//! | Cursor also loads Claude Code hooks ("Third Party Hooks") | cursor.com/docs/agent/hooks | YES |
//! | Project commands: Markdown files in `.cursor/commands/` (global: `~/.cursor/commands/`), run as `/<name>`; frontmatter is not interpreted (harmless) | cursor.com/docs/agent/chat/commands (Cursor 1.6); microsoft/apm PR #1046 ("Cursor 1.6 introduced custom slash commands stored as plain Markdown in .cursor/commands/"); Terry-Mathew/cursor-commands README | YES (docs + third parties); whether the CLI (not the IDE) offers them is UNCONFIRMED |
//! | The user's `~/.cursor/mcp.json` servers load too, so `--mcp-mode replace` empties only the project's file of other servers | cursor.com/docs/mcp (project and global files) | PARTLY |
//! | Skills in `.cursor/skills/`, `.agents/skills/` | cursor.com/docs/context/skills | YES |
//! | The CLI needs a `.git` to find the project root or load rules | — (only hint: cli.json merge walks "from the git root") | **NOT confirmed** |
//! | Whether project hooks run in headless `agent -p` without a trust prompt | — | NOT confirmed |
//! | `CURSOR_CONFIG_DIR` moves the CLI's config folder (`cli-config.json`, `chats/`), else `$XDG_CONFIG_HOME/cursor`, else `~/.cursor`; hooks and `projects/` transcripts stay under `~/.cursor` | rimio-ai/rimz PR #399 (read in the CLI bundle `cursor-config/dist/paths.js`, 2026.09.10); kernel/cli PR #181; lexmount/browseruse-agent-bench PR #42 quoting the CLI docs | PARTLY (third parties reading the bundle; the source is not public) |
//! | Where a browser login is stored under that folder | — | NOT confirmed: authenticate a private home with `CURSOR_API_KEY` |

use projectfile_provider::DiscoveryProfile;
use projectfile_provider::definitions::{HookDialect, HookEvent, HookLayout};
use projectfile_provider::{
    MarkerKind, MarkerProjection, OwnedFileProjection, OwnedRole, Plan, PlanContext, Provider,
    ProviderSpec, RelPath, Result, SessionTextCarrier, mcp, patterns,
};

/// The rule carrying the session text.
pub const RULE_FILE: &str = ".cursor/rules/mlp-system.mdc";
/// Project MCP configuration.
pub const MCP_FILE: &str = ".cursor/mcp.json";
/// Where the CLI reads project commands (`<name>.md`, run as `/<name>`).
pub const COMMANDS_DIR: &str = ".cursor/commands";
/// Project CLI configuration.
pub const CLI_FILE: &str = ".cursor/cli.json";
/// Where the CLI reads project subagents (`<name>.md`).
pub const AGENTS_DIR: &str = ".cursor/agents";

/// How neutral hooks become Cursor's: its lowerCamelCase events, flat handlers in a versioned
/// file, timeouts in seconds.
pub const HOOKS: HookDialect = HookDialect {
    cli: "Cursor",
    events: &[
        (HookEvent::SessionStart, "sessionStart"),
        (HookEvent::UserPromptSubmit, "beforeSubmitPrompt"),
        (HookEvent::BeforeTool, "preToolUse"),
        (HookEvent::AfterTool, "postToolUse"),
        (HookEvent::Stop, "stop"),
        (HookEvent::SessionEnd, "sessionEnd"),
    ],
    layout: HookLayout::Versioned,
    timeout_scale: 1,
};

/// Project hooks configuration.
pub const HOOKS_FILE: &str = ".cursor/hooks.json";
/// Where the session's hook script goes.
pub const HOOK_SCRIPT_DIR: &str = ".cursor/hooks";
/// The marker created when the workspace has no `.git`.
pub const GIT_MARKER: &str = ".git";

/// The Cursor provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor;

/// Where the CLI reads project skills; each session skill is projected into `.cursor/skills/<name>/`.
pub const SKILLS_DIR: &str = ".cursor/skills";

/// The `.mdc` rule: frontmatter that always applies it, then the session text.
pub fn rule_file(prompt: &str) -> String {
    let newline = if prompt.is_empty() || prompt.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!(
        "---\ndescription: Session instructions projected by projectfile for this chat\nalwaysApply: true\n---\n\n{prompt}{newline}"
    )
}

/// Cursor, as data.
pub const SPEC: ProviderSpec = ProviderSpec::new("cursor", discovery)
    .session_text_in_file()
    .skills_in(SKILLS_DIR)
    .takes_mcp()
    .replaces_mcp()
    .takes_commands()
    .takes_subagents()
    .takes_hooks()
    .takes_cli_config()
    .writes_owned_files()
    .creates_markers()
    .with_cli_home_env("CURSOR_CONFIG_DIR");

/// How Cursor discovers instruction files.
fn discovery() -> DiscoveryProfile {
    DiscoveryProfile {
        extra_files: vec![
            ".cursor/rules/*.mdc".into(),
            ".cursor/rules/*.md".into(),
            patterns::AGENTS_MD.into(),
            "CLAUDE.md".into(),
        ],
        ..DiscoveryProfile::default()
    }
}

impl Provider for Cursor {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        let mut plan = session_text_plan(ctx)?;
        add_configuration(ctx, &mut plan)?;
        for owned in &plan.owned_files {
            if ctx.view.exists(&owned.path) {
                plan.notes.push(format!(
                    "the project's own {} is set aside while sessions run and put back, byte for byte, by the last one",
                    owned.path
                ));
            }
        }
        if !ctx.view.exists(&RelPath::new(GIT_MARKER)?) {
            plan.notes.push(format!(
                "the workspace has no {GIT_MARKER}: an empty {GIT_MARKER} directory marks the project root while sessions run (removed by the last one)"
            ));
        }
        Ok(plan)
    }
}

/// The session text in the always-applied rule, and the `.git` marker that makes the workspace
/// a project root for Cursor.
fn session_text_plan(ctx: &PlanContext<'_>) -> Result<Plan> {
    let rule = RelPath::new(RULE_FILE)?;
    Ok(Plan {
        owned_files: vec![OwnedFileProjection {
            path: rule.clone(),
            content: rule_file(&ctx.request.prompt),
            mode: None,
            role: OwnedRole::Instructions,
        }],
        markers: vec![MarkerProjection {
            path: RelPath::new(GIT_MARKER)?,
            kind: MarkerKind::Dir,
        }],
        session_text: Some(SessionTextCarrier::OwnedFile { path: rule }),
        ..Plan::default()
    })
}

/// The session's MCP servers, CLI configuration and hooks, as owned files with their notes.
fn add_configuration(ctx: &PlanContext<'_>, plan: &mut Plan) -> Result<()> {
    if let Some(merged) = mcp::merged_file(ctx, MCP_FILE)? {
        plan.notes.push(if merged.replace {
            format!("{MCP_FILE} holds the session's MCP servers alone while sessions run; the project's own file comes back, byte for byte, with the last one")
        } else {
            format!("the session's MCP servers are merged into the project's {MCP_FILE} (a name both define differently is refused); its own bytes come back with the last session")
        });
        plan.merged_json.push(merged);
    }
    plan.owned_files.extend(patterns::named_files(
        &ctx.request.commands,
        COMMANDS_DIR,
        OwnedRole::Command,
    )?);
    if let Some(config) = &ctx.request.cli_config {
        let map = patterns::json_object(config, "the CLI configuration")?;
        if map.keys().any(|k| k != "permissions" && k != "version") {
            plan.notes.push(format!(
                "Cursor reads only permissions from a project's {CLI_FILE}; its other keys are ignored"
            ));
        }
        plan.owned_files.push(patterns::owned_json(
            CLI_FILE,
            config,
            OwnedRole::CliConfig,
        )?);
    }
    plan.owned_files.extend(patterns::agent_files(
        &ctx.request.agents,
        AGENTS_DIR,
        ".md",
    )?);
    let hooks = patterns::hook_files(
        ctx,
        HOOKS_FILE,
        HOOK_SCRIPT_DIR,
        patterns::Dialect::Converted(&HOOKS),
    )?;
    if let Some(script) = hooks.iter().find(|f| f.role == OwnedRole::HookScript) {
        plan.notes.push(format!(
            "the hook script is at {}; project hooks run from the project root, so the hooks configuration runs it by that path",
            script.path
        ));
    }
    plan.owned_files.extend(hooks);
    Ok(())
}
