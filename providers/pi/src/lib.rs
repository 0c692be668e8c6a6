//! The Pi coding agent provider: the session text is a block in `.pi/APPEND_SYSTEM.md` at the
//! workspace root, which Pi appends to its system prompt. `.pi/` is created only when absent and
//! removed at the end only if we created it and it is empty (core records it in `created_dirs`);
//! the project's own `.pi/` contents are never replaced: an existing `APPEND_SYSTEM.md` gets the
//! block after the user's text, and everything else in `.pi/` is left alone.
//!
//! # Facts relied on
//!
//! From the CLI's public source, badlogic/pi-mono (`packages/coding-agent`).
//!
//! | fact | source | confirmed? |
//! |---|---|---|
//! | `.pi/APPEND_SYSTEM.md` is appended to the system prompt | `src/core/resource-loader.ts` `discoverAppendSystemPromptFile()` | YES (code) |
//! | It is looked up **only** at `<cwd>/.pi/APPEND_SYSTEM.md` (no walk), else `~/.pi/agent/APPEND_SYSTEM.md`: the project file *shadows* the global one | same function | YES (code) |
//! | A context file that is not valid UTF-8 is sent, each bad sequence as U+FFFD, not dropped | measured with 0.73.1 | YES (measured) |
//! | `--append-system-prompt` suppresses discovery of both files | `this.appendSystemPromptSource ?? this.discoverAppendSystemPromptFile()` | YES (code) |
//! | A project `.pi/SYSTEM.md` replaces Pi's default prompt; appended text still follows it | `discoverSystemPromptFile()`; `docs/usage.md` | YES |
//! | Order sent: the system file (`.pi/SYSTEM.md`, else `~/.pi/agent/SYSTEM.md`), the append file (`.pi/APPEND_SYSTEM.md`, else `~/.pi/agent/APPEND_SYSTEM.md`), then "Project Context": `~/.pi/agent/AGENTS.md` (or `CLAUDE.md`), then each folder's from the top down to the working directory | `src/core/system-prompt.ts` `buildSystemPrompt()` (custom prompt, then `appendSection`, then the context files); measured with 0.73.1 (shapes `pi_system_files_first`, `pi_user_system_files_first`, `pi_project_system_user_append`) | YES (measured): `extra_files_first` |
//! | Context files: `AGENTS.md`, else `CLAUDE.md`, one per directory, from cwd up to the filesystem root, plus `~/.pi/agent/AGENTS.md` first | `loadContextFileFromDir()`, `loadProjectContextFiles()` | YES (code) |
//! | Newer Pi reads `AGENTS.override.md` instead of `AGENTS.md`/`CLAUDE.md` in a directory | `docs/usage.md` "Context Files" | NO for 0.73.1 (measured, below) |
//! | Non-interactive runs (`-p`, `--mode json/rpc`) on an untrusted project may ignore `.pi/` resources, incl. `APPEND_SYSTEM.md`; `--approve` trusts | `docs/usage.md` "Project Trust"; two third-party code readings | PARTLY |
//! | No HTML-comment stripping, no size limit in the loader | `loadContextFileFromDir()` | YES (by reading the code) |
//! | Skills in `.pi/skills/` and `.agents/skills/` | `docs/skills.md` "Locations" | YES |
//! | No built-in MCP | `docs/usage.md` "Design Principles"; README "No MCP." | YES: MCP is refused |
//! | Prompt templates (commands, run as `/<name>`): project `.pi/prompts/*.md`, global `~/.pi/agent/prompts/*.md`; the file name without `.md` is the command | `packages/coding-agent/docs/prompt-templates.md` "Locations"; the SDK example `discoverPromptTemplates()` ("from cwd/.pi/prompts/ and ~/.pi/agent/prompts/") | YES (docs): session commands go to `.pi/prompts/<name>.md` |
//! | Subagents | no built-in subagents (extensions may add them) | refused |
//! | Hooks | none built in (extensions subscribe to events in TypeScript) | refused |
//! | `PI_CODING_AGENT_DIR` moves the agent folder (default `~/.pi/agent`): `settings.json`, `auth.json` (the login), `models.json`, `sessions/`, the global `APPEND_SYSTEM.md` | `src/config.ts` `ENV_AGENT_DIR = ${APP_NAME.toUpperCase()}_CODING_AGENT_DIR`, `getAgentDir()`; the docs' "Pi Process Configuration" table | YES (code) |
//!
//! # Measured with the real CLI
//!
//! `cargo xtask qualify` (QUALIFICATION.md), 2026-11-30: Pi 0.73.1 from the npm registry, run as
//! `pi -p --no-session` with a private `HOME` whose `.pi/agent/models.json` points a provider at a
//! loopback endpoint that records the request (`PI_OFFLINE=1`). The discovery profile follows
//! these facts:
//!
//! - Per directory `AGENTS.md`, else `CLAUDE.md`, from the working directory up to the file-system
//!   root; nothing below the working directory. **`AGENTS.override.md` is not read** by 0.73.1 (the
//!   docs of later versions mention it).
//! - `~/.pi/agent/AGENTS.md`, else `~/.pi/agent/CLAUDE.md`.
//! - `.pi/SYSTEM.md` and `.pi/APPEND_SYSTEM.md` are read only in the working directory (started in
//!   a subfolder, the root's are not read), and a project `.pi/APPEND_SYSTEM.md` hides the user's
//!   `~/.pi/agent/APPEND_SYSTEM.md`: while a session holds, the user's global append text does not
//!   reach the model (`resolve --as pi` lists it as `shadowed`).
//! - No imports, no size limit (a 60 KB `AGENTS.md` arrives whole), no deduplication; our marker
//!   lines and CRLF line ends reach the model as written.
//! - 2026-12-07: the system and append files (the project's, or the user's where the project has
//!   none) come first in the system prompt, before every context file (the user's `AGENTS.md`
//!   included), so the session text in `.pi/APPEND_SYSTEM.md` precedes the project's
//!   `AGENTS.md`.
//!
//! Consequences the receipt states as notes: Pi must be started in the workspace root (the file is
//! not found from a subdirectory), and while a session holds, the project file hides the user's
//! global `~/.pi/agent/APPEND_SYSTEM.md` when the project had none of its own.

use projectfile_provider::Input;
use projectfile_provider::{DiscoveryProfile, Walk};
use projectfile_provider::{
    OwnedRole, Plan, PlanContext, Provider, ProviderSpec, RelPath, Result, patterns,
};

/// The file Pi appends to its system prompt, relative to the launch directory.
pub const APPEND_SYSTEM: &str = ".pi/APPEND_SYSTEM.md";
/// The project file that replaces Pi's own prompt.
pub const SYSTEM: &str = ".pi/SYSTEM.md";
/// The user's own append file (relative to the home directory), read only where the project has
/// no `.pi/APPEND_SYSTEM.md`.
pub const USER_APPEND_SYSTEM: &str = ".pi/agent/APPEND_SYSTEM.md";
/// The user's own system prompt file, read only where the project has no `.pi/SYSTEM.md`.
pub const USER_SYSTEM: &str = ".pi/agent/SYSTEM.md";

/// Where the CLI reads project skills; each session skill is projected into `.pi/skills/<name>/`.
pub const SKILLS_DIR: &str = ".pi/skills";
/// Where Pi reads project prompt templates (commands): `<name>.md`, run as `/<name>`.
pub const PROMPTS_DIR: &str = ".pi/prompts";

/// Pi, as data.
pub const SPEC: ProviderSpec = ProviderSpec::new("pi", discovery)
    .session_text_in_file()
    .skills_in(SKILLS_DIR)
    .writes_owned_files()
    .takes_commands()
    .with_cli_home_env("PI_CODING_AGENT_DIR")
    .refusing(&[
        (
            Input::Hooks,
            "Pi's hooks are TypeScript extensions, not commands a file declares",
        ),
        (
            Input::Subagents,
            "Pi has no subagents (\"No sub-agents\", by design)",
        ),
    ]);

/// The Pi provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pi;

/// How Pi discovers instruction files.
fn discovery() -> DiscoveryProfile {
    DiscoveryProfile {
        // Pi 0.73.1 does not read AGENTS.override.md (measured; see the module docs).
        per_directory: vec![patterns::AGENTS_MD.into(), "CLAUDE.md".into()],
        first_wins: true,
        walk: Walk::CwdUpToFsRoot,
        // Sent first, before the context files (measured).
        extra_files: vec![SYSTEM.into(), APPEND_SYSTEM.into()],
        extra_files_at_working_dir: true,
        extra_files_first: true,
        user_files: vec![".pi/agent/AGENTS.md".into(), ".pi/agent/CLAUDE.md".into()],
        user_fallbacks: vec![
            (SYSTEM.into(), USER_SYSTEM.into()),
            (APPEND_SYSTEM.into(), USER_APPEND_SYSTEM.into()),
        ],
        verbatim: true,
        // A file that is not valid UTF-8 is sent, each bad sequence as U+FFFD (measured with
        // 0.73.1).
        lossy_utf8: true,
        ..DiscoveryProfile::default()
    }
}

impl Provider for Pi {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        let target = RelPath::new(APPEND_SYSTEM)?;
        let mut notes = vec![format!(
            "Pi reads {APPEND_SYSTEM} only in the directory it is started in: start pi in the workspace root; in print or RPC mode an untrusted project's .pi files may be ignored unless pi runs with --approve"
        )];
        if !ctx.view.exists(&target) {
            notes.push(format!(
                "while the session holds, {APPEND_SYSTEM} hides the user's ~/.pi/agent/APPEND_SYSTEM.md, if any"
            ));
        }
        if ctx.view.exists(&RelPath::new(SYSTEM)?) {
            notes.push(format!(
                "the project's {SYSTEM} replaces Pi's own prompt; the session text is appended after it"
            ));
        }
        let mut plan = patterns::block_plan(ctx, target, notes)?;
        plan.owned_files =
            patterns::named_files(&ctx.request.commands, PROMPTS_DIR, OwnedRole::Command)?;
        Ok(plan)
    }
}
