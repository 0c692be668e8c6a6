//! The GitHub Copilot CLI provider: the session text goes into a private
//! `session.instructions.md` in the session's private folder, which Copilot searches because
//! `COPILOT_CUSTOM_INSTRUCTIONS_DIRS` names it, so Copilot shows the text to the model with the
//! project's own instructions and no file of the workspace is written; the session's MCP servers
//! go in a private file passed as `--additional-mcp-config @<file>`, its skills to
//! `.github/skills/` and its subagents to `.github/agents/<name>.agent.md`.
//!
//! # Why not a block in `AGENTS.md`
//!
//! Copilot reads `AGENTS.md` only at the git root, the folders down to the working directory
//! and the working directory itself: a block in the workspace's `AGENTS.md` would be missed by a
//! CLI started elsewhere in a repository the workspace lies in, and would touch a file the user
//! owns. `COPILOT_CUSTOM_INSTRUCTIONS_DIRS` is read wherever Copilot starts, adds to the
//! project's instructions without hiding any, and creates nothing in the workspace. Copilot has
//! no flag taking a prompt file: `--agent NAME` appends an agent's body to its prompt, but the
//! agent must be a file Copilot finds (`.github/agents/`, `~/.copilot/agents/`) and the flag
//! chooses the session's agent, which is the host's to choose.
//!
//! # Facts relied on
//!
//! Measured with Copilot CLI 1.0.102 (npm `@github/copilot`, its `copilot-linux-x64` binary) run
//! as `copilot -s -p TEXT` with `COPILOT_OFFLINE=true` and a custom provider
//! (`COPILOT_PROVIDER_BASE_URL`) on a loopback chat-completions endpoint that records the request
//! (`cargo xtask qualify`, QUALIFICATION.md); `copilot instruction list` and `copilot help
//! environment` of the same binary agree with what the requests held.
//!
//! | fact | source | confirmed? |
//! |---|---|---|
//! | Per folder: `.github/copilot-instructions.md`, `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`, all of them (none hides another), at the git root, each folder below it down to the working directory, and the working directory | measured with 1.0.102 | YES (measured) |
//! | The root is the git repository's top (an empty `.git` folder is none); without a repository only the working directory is read; nothing above the root, nothing below the working directory (a nested `AGENTS.md` is only listed by path, to read on demand) | measured with 1.0.102 | YES (measured) |
//! | `.github/instructions/**/*.instructions.md` and `.claude/rules/**/*.md` of the root and of the working directory are read, recursively; one whose front matter has `applyTo` (other than `**`, `**/*`, `*` or an empty pattern, which apply to every path and are read at start), or a rule with `paths:`, is only listed by path and pattern, to read on demand; the front matter itself reaches the model | measured with 1.0.102 | YES (measured) |
//! | Not read: `.claude/CLAUDE.md`, `CLAUDE.local.md`, `AGENTS.override.md`, `CONTEXT.md` | measured with 1.0.102 | YES (measured) |
//! | User files: `$COPILOT_HOME/copilot-instructions.md` and `$COPILOT_HOME/instructions/**/*.instructions.md` (default `~/.copilot`); not `~/.copilot/AGENTS.md` | measured with 1.0.102 | YES (measured) |
//! | `COPILOT_CUSTOM_INSTRUCTIONS_DIRS`: "comma-separated list of additional directories to search for custom instructions files"; every `*.instructions.md` below such a folder is read (an `AGENTS.md` there is only listed); a file path is ignored | `copilot help environment` (1.0.102); measured with 1.0.102 | YES (measured) |
//! | `@path` imports are expanded, inline, 8 deep (the ninth stays literal), never outside the repository | measured with 1.0.102 | YES (measured) |
//! | HTML comments are kept (our marker lines would reach the model); invalid UTF-8 is sent with replacement characters | measured with 1.0.102 | YES (measured) |
//! | The whole prompt must fit the model's prompt-token limit, 128000 tokens for a model outside Copilot's catalog: over it Copilot sends nothing at all ("No response was returned", exit 1). With Copilot's own prompt and tools (about 48 KB) 448 KiB of English prose fit and 450 KiB do not; `COPILOT_PROVIDER_MAX_PROMPT_TOKENS=N` raises the limit (40000 tokens: 107 KiB fit, 109 KiB not; 80000: 262/264 KiB; 200000: 726/728 KiB, about 4 bytes of prose per token) | `copilot help providers`; measured with 1.0.102 | YES (measured); the profile counts [`PROMPT_BUDGET_BYTES`] |
//! | `--additional-mcp-config @<file>` adds servers (`{"mcpServers": {…}}`, Claude's format) for the session, with the user's `~/.copilot/mcp-config.json`; their tools are offered in `-p` mode (`<server>-<tool>`) | `copilot --help`; measured with 1.0.102 | YES (measured) |
//! | The project's `.mcp.json` and `.github/hooks/*.json` are loaded only in a trusted folder (`--trust-folder`, or `COPILOT_ALLOW_ALL=true`), which would also run the project's own hooks and servers | `copilot --help`, `copilot help environment`; measured with 1.0.102 (a `sessionStart` hook ran only with `--trust-folder`) | YES (measured): hooks are refused, servers go by flag |
//! | No flag hides the user's own servers (`--disable-mcp-server` takes names the provider cannot know) | `copilot --help` | YES: `--mcp-mode replace` is refused |
//! | Skills: `.github/skills/`, `.agents/skills/`, `.claude/skills/` (`<name>/SKILL.md`), listed in the `skill` tool without trust | `copilot skill --help`; measured with 1.0.102 | YES (measured): `.github/skills/` |
//! | Subagents: `.github/agents/<name>.agent.md`, listed in the `task` tool's description as "User-provided custom agents" without trust | measured with 1.0.102 | YES (measured) |
//! | `--agent NAME` keeps Copilot's own system prompt and appends the agent's body in `<agent_instructions>` | measured with 1.0.102 | YES (measured); not the session text's route (see above) |
//! | Commands: none in `-p` mode: `-p "/ship now"` is sent as typed, with a `.github/prompts/ship.prompt.md` and a `.claude/commands/ship.md` in the project | measured with 1.0.102 | YES (measured): refused |
//! | `COPILOT_HOME` moves the configuration and state folder (default `~/.copilot`): settings, sessions, logs and the user instruction files | `copilot help environment`; measured with 1.0.102 | YES (measured) |
//!
//! # Measured with the real CLI
//!
//! `cargo xtask qualify --provider copilot` (QUALIFICATION.md): the session text reaches the
//! request in an empty workspace, beside an `AGENTS.md`, in a git repository and beside a project
//! `CLAUDE.md`; the receipt's verdict agrees each time; the workspace is back byte for byte after
//! each release; a session's MCP server's tool, skill and subagent reach the request; a linked
//! runtime delivers in builder mode and in run mode under the sandbox. With a 480 KiB `AGENTS.md`
//! Copilot sends nothing and exits 1, and launched with the receipt's
//! `COPILOT_PROVIDER_MAX_PROMPT_TOKENS` it sends the session text. The discovery differential
//! agrees on every shape of `tests/data/discovery_shapes.json`. Copilot tries no other host.
//!
//! # Known gaps
//!
//! - The prompt limit is counted in tokens; the profile counts bytes, [`PROMPT_BUDGET_BYTES`],
//!   half the 448 KiB of prose measured, so that denser text (code, JSON, base64, other
//!   scripts) still fits when the verdict says so. Over it the receipt's `env` raises the limit
//!   (`COPILOT_PROVIDER_MAX_PROMPT_TOKENS`, set to the bytes needed: a token is at least a
//!   byte) rather than let Copilot send nothing; a model in Copilot's catalog may allow more.
//! - A host that sets `COPILOT_CUSTOM_INSTRUCTIONS_DIRS` itself loses it to the session's for
//!   that launch (the receipt says so).

use projectfile_provider::Input;
use projectfile_provider::{
    BUDGET_BYTES_PLACEHOLDER, DiscoveryProfile, EnvValue, Plan, PlanContext, Provider,
    ProviderSpec, Result, Walk, mcp, patterns,
};

/// The variable naming folders Copilot searches for `*.instructions.md`: the session's private
/// folder.
pub const INSTRUCTIONS_DIRS_ENV: &str = "COPILOT_CUSTOM_INSTRUCTIONS_DIRS";
/// The private file holding the session text (found by its `.instructions.md` ending).
pub const INSTRUCTIONS_FILE: &str = "session.instructions.md";
/// The flag that adds MCP servers for the session.
pub const MCP_FLAG: &str = "--additional-mcp-config";
/// The prefix that makes the flag's value a file to read.
pub const MCP_FILE_PREFIX: &str = "@";
/// The private file holding `{"mcpServers": …}`.
pub const MCP_FILE: &str = "mcp-config.json";
/// The variable that raises the prompt-token limit.
pub const PROMPT_TOKENS_ENV: &str = "COPILOT_PROVIDER_MAX_PROMPT_TOKENS";
/// The bytes of instruction text the profile lets through Copilot's default prompt limit
/// (128000 tokens, of which Copilot's own prompt and tools take about 12400): 224 KiB, two bytes
/// a token, far below the 448 KiB of prose measured, since denser text takes more tokens per
/// byte (a 307 KB JSON listing and 300 KB of base64 did not fit, measured with 1.0.102).
pub const PROMPT_BUDGET_BYTES: u64 = 224 * 1024;
/// Where the CLI reads project skills; each session skill is projected into `.github/skills/<name>/`.
pub const SKILLS_DIR: &str = ".github/skills";
/// Where the CLI reads project subagents, `<name>.agent.md`.
pub const AGENTS_DIR: &str = ".github/agents";
/// The file name ending of a subagent.
pub const AGENT_SUFFIX: &str = ".agent.md";

/// Copilot CLI, as data.
pub const SPEC: ProviderSpec = ProviderSpec::new("copilot", discovery)
    .session_text_as_launch_arg()
    .skills_in(SKILLS_DIR)
    .takes_mcp()
    .takes_subagents()
    .writes_owned_files()
    .with_cli_home_env("COPILOT_HOME")
    .refusing(&[
        (
            Input::Hooks,
            "Copilot CLI 1.0.102 runs a project's hooks only in a trusted folder, which would run the project's own hooks and servers too (measured)",
        ),
        (
            Input::Commands,
            "Copilot CLI 1.0.102 runs no custom command in one-turn mode: `/NAME args` is sent as typed (measured)",
        ),
    ]);

/// The Copilot CLI provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct Copilot;

/// How Copilot discovers instruction files.
fn discovery() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec![
            ".github/copilot-instructions.md".into(),
            patterns::AGENTS_MD.into(),
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
        imports: true,
        imports_keep_line: true,
        max_import_hops: Some(8),
        budget_bytes: Some(PROMPT_BUDGET_BYTES),
        budget_all_or_nothing: true,
        budget_env: vec![(PROMPT_TOKENS_ENV.into(), BUDGET_BYTES_PLACEHOLDER.into())],
        verbatim: true,
        lossy_utf8: true,
        ..DiscoveryProfile::default()
    }
}

impl Provider for Copilot {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    /// The session text in the private folder Copilot is told to search, the MCP servers in a
    /// private file passed by flag, the subagents in `.github/agents/`.
    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        let mut plan = patterns::environment_file_plan(
            ctx,
            INSTRUCTIONS_FILE,
            INSTRUCTIONS_DIRS_ENV,
            EnvValue::PrivateDir,
            vec![format!(
                "the session text goes to {INSTRUCTIONS_FILE} in the session's private folder, which {INSTRUCTIONS_DIRS_ENV} names; no project file is edited, and a host's own {INSTRUCTIONS_DIRS_ENV} is replaced for this launch"
            )],
        );
        mcp::prefixed_file_route(ctx, &mut plan, MCP_FLAG, MCP_FILE_PREFIX, MCP_FILE)?;
        if ctx.request.mcp_servers.is_some() {
            plan.notes.push(format!(
                "the session's MCP servers go in a private file passed as {MCP_FLAG} {MCP_FILE_PREFIX}<file>, added to the user's own"
            ));
        }
        plan.owned_files = patterns::agent_files(&ctx.request.agents, AGENTS_DIR, AGENT_SUFFIX)?;
        Ok(plan)
    }
}
