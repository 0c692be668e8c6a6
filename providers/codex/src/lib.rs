//! The Codex CLI provider: the session text is a block in the root `AGENTS.md`, or in
//! `AGENTS.override.md` when the root has one, because Codex reads the override instead; the
//! session's skills are projected into `.agents/skills/<name>/`; its MCP servers go on the
//! command line as `-c mcp_servers.<name>=<TOML inline table>` overrides written by `toml_edit`
//! (see [`projectfile_provider::mcp::toml_overrides`]), added to the user's own servers.
//!
//! # Facts relied on
//!
//! Verified against stored copies of openai/codex (October 2026); "code" means read in the loader
//! itself, `codex-rs/core/src/agents_md.rs` (formerly `project_doc.rs`).
//!
//! | fact | source | confirmed? |
//! |---|---|---|
//! | `AGENTS.md` is collected from the project root down to the working directory, joined root first | `agents_md.rs` module doc: "Collect every `AGENTS.md` found from the project root down to the current working directory (inclusive)" | yes (code) |
//! | In each directory `AGENTS.override.md` is read *instead of* `AGENTS.md`: at most one file per directory, the first found wins | `agents_md.rs` `candidate_filenames()`; developers.openai.com/codex/guides/agents-md: "Codex includes at most one file per directory" | yes (code + docs) |
//! | The root is the nearest ancestor holding a `project_root_markers` entry (default `.git`, file or directory); with none, only the working directory is read; a project's own `.codex/config.toml` cannot change the markers | `agents_md.rs` doc and `agents_md_paths()` | yes (code) |
//! | Project docs share one 32 KiB budget (`project_doc_max_bytes`); the file crossing it is truncated, later ones dropped | `agents_md.rs` `read_agents_md()`; official guide | yes (and measured, below) |
//! | HTML comments are not stripped, so our marker lines reach the model verbatim and are worded to read sensibly | no stripping in `read_agents_md()` (an absence) | yes (code reading) |
//! | A file that is not valid UTF-8 is sent, each bad sequence as U+FFFD, not dropped | measured with 0.171.0 (`caf\xe9` in AGENTS.md reached the model, with the session block) | YES (measured) |
//! | Repository skills live in `.agents/skills/` of each directory from the root to the working directory | Codex skills docs and loader | yes (docs) |
//! | Newer versions (0.150+) may drop project `AGENTS.md` for projects explicitly marked untrusted | openai/codex issue #41499 quoting the 0.150.0 release notes | partly |
//! | `CODEX_HOME` moves the whole Codex home (default `~/.codex`): `config.toml`, the login `auth.json`, `sessions/`; when set it must already exist and be a directory (it is canonicalised) | `find_codex_home()` in openai/codex (`codex-rs/core`, copied in `codex-rs/rmcp-client/src/find_codex_home.rs`) | yes (code) |
//! | `-c key=value` overrides any configuration key for the run; the value is parsed as TOML (a string that does not parse is taken literally); `mcp_servers.<name>` is a table `{command, args, env}` (stdio) or `{url}` (streamable HTTP) | `codex-rs/common/src/config_override.rs` (`CliConfigOverrides`); developers.openai.com/codex/mcp | YES (code + docs); measured with 0.171.0 (the MCP route below) |
//! | A project `.codex/config.toml` is ignored when the project is not trusted, so it cannot carry a session's servers | measured with 0.171.0 (issue text of this work) | YES (measured) |
//! | A server that cannot start does not fail `codex exec` (exit 0) | measured with 0.171.0 | YES (measured) |
//! | No flag gives Codex *only* the `-c` servers (the overrides are layered over `$CODEX_HOME/config.toml`), so `--mcp-mode replace` is refused | the override mechanism above | YES (by the code's design) |
//! | Hooks exist (0.114+, `PreToolUse` from 0.117, `[features].hooks` from 0.130): `hooks.json` or inline `[hooks]` next to a config layer (`~/.codex/`, or the project's `.codex/` once the project is trusted), and command hooks must be reviewed and trusted before they run | developers.openai.com/codex/hooks; serpro69/claude-toolbox issue #107 (the 0.130 key); littlebearapps/untether issue #179; tak848/ccgate PR #59 | PARTLY (docs as quoted) |
//! | A session cannot bring hooks: with 0.171.0, `codex exec` ran neither `-c features.hooks=true -c 'hooks.SessionStart=[…]'` overrides nor a user-level `$CODEX_HOME/hooks.json` (with `[features] hooks = true`) `SessionStart`/`UserPromptSubmit` hook (a `touch` command; no file appeared), and a project `.codex/` is ignored untrusted | measured by hand, 2026-11-30 | YES (measured): `--hooks-config` is refused for codex |
//! | Subagents and project commands: custom prompts live only in `$CODEX_HOME/prompts/` (no project folder) | developers.openai.com/codex (custom prompts) | refused |
//! | `codex exec` also takes `CODEX_API_KEY` (or `OPENAI_API_KEY`) from the environment instead of `auth.json` | codex-rs `core::auth` (`CODEX_API_KEY` overrides the stored credentials) | partly (code summaries) |
//!
//! # Measured with the real CLI
//!
//! `cargo xtask qualify` (QUALIFICATION.md), 2026-11-30: Codex 0.171.0 from the npm registry, run
//! as `codex exec` with `CODEX_HOME` in a private home and a custom model provider
//! (`-c model_providers.qualify={base_url=…, wire_api="responses"}`) on a loopback endpoint that
//! records the request. The discovery profile follows these facts:
//!
//! - In each directory `AGENTS.override.md` is read instead of `AGENTS.md`, even when it is empty
//!   (`resolve --as codex` lists the `AGENTS.md` as `shadowed`).
//! - The root is the nearest directory holding `.git` (a directory or a worktree's `.git` file);
//!   files are read from there down to the working directory, none above the root, none below the
//!   working directory. Without a `.git` only the working directory is read.
//! - `CLAUDE.md` is not read; `@path` lines are not expanded.
//! - **The budget**: project docs share 32768 bytes, counted as written (markers, whitespace).
//!   With a 40 KiB project `AGENTS.md` the block after the user's text never reaches the model;
//!   with `-c project_doc_max_bytes=<the file's size>` it does. The profile declares that
//!   argument ([`DiscoveryProfile::budget_launch_args`]) so core can add it.
//! - User files: `$CODEX_HOME/AGENTS.override.md`, else `$CODEX_HOME/AGENTS.md`; they are never cut
//!   (a 40 KB user file arrives whole next to the project docs); `~/.agents/AGENTS.md` is not read.
//! - Our marker lines and CRLF line ends reach the model as written.
//! - Even pointed at a custom provider, Codex tries to reach other hosts at start; the
//!   qualification refuses them (see QUALIFICATION.md).
//!
//! Consequence for projection: the block goes in the workspace root's `AGENTS.override.md` when
//! that file exists (any kind: a symlink there is refused rather than bypassed), else in
//! `AGENTS.md`. A session run in a subdirectory with its own override still reads the root's file,
//! because every directory from the root down contributes one file.

use projectfile_provider::Input;
use projectfile_provider::{BUDGET_BYTES_PLACEHOLDER, DiscoveryProfile};
use projectfile_provider::{
    LaunchArg, Plan, PlanContext, PrivateFile, Provider, ProviderSpec, Result, definitions, mcp,
    patterns,
};

/// The file Codex reads in a directory when present, instead of `AGENTS.md`.
pub const OVERRIDE_FILE: &str = "AGENTS.override.md";
/// The portable instruction file.
pub const AGENTS_FILE: &str = patterns::AGENTS_MD;
/// Codex's default budget for project docs (`project_doc_max_bytes`).
pub const PROJECT_DOC_MAX_BYTES: u64 = 32 * 1024;
/// Where Codex reads project skills (at the project root; it also reads deeper ones).
pub const SKILLS_DIR: &str = ".agents/skills";

/// Codex, as data.
pub const SPEC: ProviderSpec = ProviderSpec::new("codex", discovery)
    .session_text_in_file()
    .skills_in(SKILLS_DIR)
    .takes_mcp()
    .takes_subagents()
    .with_cli_home_env("CODEX_HOME")
    .refusing(&[
        (
            Input::Hooks,
            "`codex exec` 0.171.0 runs no hook a session can bring: neither `-c` overrides nor a hooks.json in its home ran (measured)",
        ),
        (
            Input::Commands,
            "Codex reads custom prompts only from its own home, and `codex exec` does not expand them",
        ),
    ]);

/// The Codex provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct Codex;

/// How Codex discovers instruction files.
fn discovery() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec![OVERRIDE_FILE.into(), AGENTS_FILE.into()],
        first_wins: true,
        root_markers: vec![".git".into()],
        budget_bytes: Some(PROJECT_DOC_MAX_BYTES),
        truncate_at_budget: true,
        verbatim: true,
        user_files: vec![
            format!(".codex/{OVERRIDE_FILE}"),
            format!(".codex/{AGENTS_FILE}"),
        ],
        budget_excludes_user: true,
        budget_launch_args: vec![
            "-c".into(),
            format!("project_doc_max_bytes={BUDGET_BYTES_PLACEHOLDER}"),
        ],
        // A file that is not valid UTF-8 is sent, each bad sequence as U+FFFD (measured with
        // 0.171.0: `caf\xe9` in AGENTS.md reached the model with the session block).
        lossy_utf8: true,
        ..DiscoveryProfile::default()
    }
}

impl Provider for Codex {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        let mut plan = patterns::agents_md_block(ctx, &[OVERRIDE_FILE])?;
        if let Some(servers) = mcp::servers(ctx)? {
            let overrides = mcp::toml_overrides(servers)?;
            plan.launch_args
                .extend(overrides.into_iter().map(LaunchArg::Literal));
            plan.notes.push(
                "the session's MCP servers go on the command line as -c mcp_servers.<name>=… overrides, added to Codex's own; no project file is edited".into(),
            );
        }
        agent_roles(ctx, &mut plan)?;
        Ok(plan)
    }
}

/// The session's subagents as Codex roles on the command line: `-c agents.<name>.description=…`
/// and `-c agents.<name>.config_file=<private file>`, that file holding the agent's prompt as
/// `developer_instructions`. No file of the project or of the user's home is touched. The
/// neutral `tools` and `model`, written for another CLI, are left out (a role file takes Codex's
/// own configuration keys).
fn agent_roles(ctx: &PlanContext<'_>, plan: &mut Plan) -> Result<()> {
    for file in &ctx.request.agents {
        projectfile_provider::validate_entry_name("subagent", &file.name)?;
        if !mcp::is_plain_name(&file.name) {
            return Err(projectfile_provider::Error::invalid(
                format!("subagent {:?}", file.name),
                "Codex names a role by letters, digits, `_` and `-` only; nothing was written",
            ));
        }
        let agent = definitions::agent(file)?;
        let role_file = format!("agent-{}.toml", file.name);
        if plan.private_files.iter().any(|f| f.name == role_file) {
            return Err(projectfile_provider::Error::invalid(
                format!("subagent {:?}", file.name),
                "the session names this subagent twice; nothing was written",
            ));
        }
        plan.private_files.push(PrivateFile {
            name: role_file.clone(),
            content: definitions::toml_document(&[("developer_instructions", agent.body)]),
        });
        plan.launch_args.extend([
            LaunchArg::Literal("-c".into()),
            LaunchArg::Literal(format!(
                "agents.{}.description={}",
                file.name,
                definitions::toml_string(&agent.description)
            )),
            LaunchArg::Literal("-c".into()),
            // The path is no TOML value, so Codex takes it as the string it is.
            LaunchArg::PrefixedPrivateFile {
                prefix: format!("agents.{}.config_file=", file.name),
                name: role_file,
            },
        ]);
    }
    if !ctx.request.agents.is_empty() {
        plan.notes.push(
            "the session's subagents go on the command line as Codex roles (-c agents.<name>.description=… and a private config_file holding the prompt), listed in the spawn_agent tool; no project file is edited".into(),
        );
    }
    Ok(())
}
