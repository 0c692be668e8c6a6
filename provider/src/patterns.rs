//! Plan shapes more than one provider uses, so providers stay declarative and never copy logic:
//!
//! - [`agents_md_block`] / [`block_plan`]: the session block in a shared file (Codex, Muse,
//!   Claude, Pi).
//! - [`private_file_plan`]: the launch-argument route, the session text in a private file under the
//!   state directory passed as `<flag> <path>` (Claude).
//! - [`environment_file_plan`]: the environment route, the session text in a private file the CLI
//!   finds through an environment variable (opencode, Copilot).
//! - [`not_projected_plan`]: nothing carries the session text; the receipt says so (agy).
//! - [`owned_json`], [`hook_files`]: generated configuration written whole as owned files (Cursor,
//!   agy).
//! - [`settings_file_route`]: hooks in a private settings file passed on the command line, the
//!   script as an owned file (Claude).
//! - [`named_files`]: subagents and commands, one owned `<name>.md` each in the folder the CLI
//!   reads (Claude, Cursor, Pi, Qwen's subagents); [`named_files_with_suffix`] for another file
//!   name ending (Copilot's `<name>.agent.md`); [`crate::front_matter::front_matter`] splits
//!   such a file for a CLI that takes its fields as configuration instead (opencode).
//! - [`command_files`]: commands in the CLI's own format, TOML with a `prompt` string or
//!   Markdown, refused where the file does not fit it (Gemini, Qwen).
//! - [`merged_hooks`]: hooks merged into the project's settings file under `"hooks"`, the script
//!   as an owned file (Gemini, Qwen).
//! - MCP servers: see [`crate::mcp`].

use crate::definitions;
use crate::error::{Error, Result};
use crate::plan::MergedJsonProjection;
use crate::plan::{
    BlockProjection, EnvValue, LaunchArg, OwnedFileProjection, OwnedRole, Plan, PrivateFile,
    RelPath, SessionTextCarrier, SkillProjection,
};
use crate::provider::{HooksFormat, NamedFile, PlanContext};

/// The portable project instruction file.
pub const AGENTS_MD: &str = "AGENTS.md";

/// Mode bits of a projected hook script: the CLI runs it directly.
pub const HOOK_SCRIPT_MODE: u32 = 0o755;

/// The session block in the root instruction file the CLI reads: the first of `read_instead` that
/// exists at the root (any kind: a symlink there is refused later rather than silently bypassed),
/// else `AGENTS.md`.
pub fn agents_md_block(ctx: &PlanContext<'_>, read_instead: &[&str]) -> Result<Plan> {
    let mut target = RelPath::new(AGENTS_MD)?;
    let mut notes = Vec::new();
    for name in read_instead {
        let candidate = RelPath::new(*name)?;
        if ctx.view.exists(&candidate) {
            notes.push(format!(
                "{candidate} exists at the root and is read instead of {AGENTS_MD}, so the block goes there"
            ));
            target = candidate;
            break;
        }
    }
    block_plan(ctx, target, notes)
}

/// A plan whose only projection is the session block in `path`.
pub fn block_plan(ctx: &PlanContext<'_>, path: RelPath, notes: Vec<String>) -> Result<Plan> {
    Ok(Plan {
        blocks: vec![BlockProjection {
            path: path.clone(),
            body: ctx.request.prompt.clone(),
        }],
        session_text: Some(SessionTextCarrier::Block { path }),
        notes,
        ..Plan::default()
    })
}

/// The launch-argument route: no file in the project is edited; the session text goes into the
/// private file `file_name` (core writes it under the state directory, mode 0600, and removes it
/// on release) and the CLI is started with `flag <absolute path of that file>`.
pub fn private_file_plan(
    ctx: &PlanContext<'_>,
    flag: &str,
    file_name: &str,
    notes: Vec<String>,
) -> Plan {
    Plan {
        private_files: vec![session_text_file(ctx, file_name)],
        launch_args: vec![
            LaunchArg::Literal(flag.to_string()),
            LaunchArg::PrivateFilePath(file_name.to_string()),
        ],
        session_text: Some(SessionTextCarrier::LaunchArgument {
            private_file: file_name.to_string(),
        }),
        notes,
        ..Plan::default()
    }
}

/// The session text as the private file `file_name`.
fn session_text_file(ctx: &PlanContext<'_>, file_name: &str) -> PrivateFile {
    PrivateFile {
        name: file_name.to_string(),
        content: ctx.request.prompt.clone(),
    }
}

/// The environment route: no file in the project is edited; the session text goes into the
/// private file `file_name` (under the state directory, mode 0600, removed on release) and the
/// CLI finds it through the environment variable `var`, set to `value`: the file's path
/// ([`EnvValue::PrivateFilePath`]) or the session's private directory ([`EnvValue::PrivateDir`],
/// for a variable naming folders to search). Core fills in the path, which the receipt's `env`
/// shows.
pub fn environment_file_plan(
    ctx: &PlanContext<'_>,
    file_name: &str,
    var: &str,
    value: EnvValue,
    notes: Vec<String>,
) -> Plan {
    Plan {
        private_files: vec![session_text_file(ctx, file_name)],
        env: vec![(var.to_string(), value)],
        session_text: Some(SessionTextCarrier::Environment {
            private_file: file_name.to_string(),
            var: var.to_string(),
        }),
        notes,
        ..Plan::default()
    }
}

/// A plan that carries the session text nowhere, saying why in the carrier and in a note, so the
/// host knows it must deliver the text another way (e.g. as the first message).
pub fn not_projected_plan(reason: &str) -> Plan {
    Plan {
        session_text: Some(SessionTextCarrier::NotProjected {
            reason: reason.to_string(),
        }),
        notes: vec![format!(
            "the session text was not projected: {reason}; deliver it to the CLI another way"
        )],
        ..Plan::default()
    }
}

/// `value` as a JSON object, or an error naming `what` (`the MCP servers`, …).
pub fn json_object<'v>(
    value: &'v serde_json::Value,
    what: &str,
) -> Result<&'v serde_json::Map<String, serde_json::Value>> {
    value
        .as_object()
        .ok_or_else(|| Error::invalid(what, "must be a JSON object"))
}

/// An owned file holding `value` as pretty-printed JSON with a final newline (keys sorted, so the
/// same input always gives the same bytes).
pub fn owned_json(
    path: &str,
    value: &serde_json::Value,
    role: OwnedRole,
) -> Result<OwnedFileProjection> {
    let mut content = serde_json::to_string_pretty(value)
        .map_err(|e| Error::invalid(path, format!("cannot be serialized: {e}")))?;
    content.push('\n');
    Ok(OwnedFileProjection {
        path: RelPath::new(path)?,
        content,
        mode: None,
        role,
    })
}

/// The session's hooks as owned files: the configuration at `config_path` (the CLI's own format
/// written as given, a neutral one converted by `dialect`; both must be a JSON object), and the
/// script, if any, at `<script_dir>/<name>` with mode 0755. Empty when the session brings no
/// hooks. The script name must be a plain file name; the hooks configuration is expected to run
/// it by that path (the host knows it in advance, and a neutral command names it
/// [`definitions::HOOK_SCRIPT_PLACEHOLDER`]).
pub fn hook_files(
    ctx: &PlanContext<'_>,
    config_path: &str,
    script_dir: &str,
    dialect: Dialect<'_>,
) -> Result<Vec<OwnedFileProjection>> {
    let Some(config) = session_hooks(ctx, script_dir, dialect)? else {
        return Ok(Vec::new());
    };
    let mut files = vec![owned_json(config_path, &config, OwnedRole::HooksConfig)?];
    files.extend(hook_script(ctx, script_dir)?);
    Ok(files)
}

/// How a provider's CLI takes neutral hooks: converted by its [`definitions::HookDialect`], or
/// not at all (`Unconfirmed`: the CLI's own format is not known well enough to convert into,
/// named by the refusal), in which case only its own format is accepted.
#[derive(Clone, Copy, Debug)]
pub enum Dialect<'d> {
    /// Neutral hooks are converted to this dialect.
    Converted(&'d definitions::HookDialect),
    /// Neutral hooks are refused for the CLI named here.
    Unconfirmed(&'static str),
}

/// The session's hooks configuration in the CLI's form (see [`definitions::hooks_config`]),
/// checked to be a JSON object; `None` when the session brings no hooks. A neutral command's
/// [`definitions::HOOK_SCRIPT_PLACEHOLDER`] becomes the script's absolute path as projected
/// under `script_dir`.
pub fn session_hooks(
    ctx: &PlanContext<'_>,
    script_dir: &str,
    dialect: Dialect<'_>,
) -> Result<Option<serde_json::Value>> {
    let Some(hooks) = &ctx.request.hooks else {
        return Ok(None);
    };
    let config = match (hooks.format, dialect) {
        (HooksFormat::Cli, _) => hooks.config.clone(),
        (HooksFormat::Neutral, Dialect::Unconfirmed(cli)) => {
            return Err(Error::invalid(
                "the session's neutral hooks",
                format!(
                    "{cli}'s hooks format is not confirmed well enough to convert them into; give hooks in its own format (--hooks-config); nothing was written"
                ),
            ));
        }
        (HooksFormat::Neutral, Dialect::Converted(dialect)) => {
            let script = match &hooks.script {
                Some(script) => Some(
                    ctx.root
                        .join(RelPath::new(script_dir)?.join(&script.name)?.as_str())
                        .to_string_lossy()
                        .into_owned(),
                ),
                None => None,
            };
            definitions::hooks_config(hooks, dialect, script.as_deref())?
        }
    };
    json_object(&config, "the hooks configuration")?;
    Ok(Some(config))
}

/// The session's hook script, if any, as an owned file `<script_dir>/<name>` with mode 0755. The
/// name must be a plain file name.
pub fn hook_script(ctx: &PlanContext<'_>, script_dir: &str) -> Result<Option<OwnedFileProjection>> {
    let Some(script) = ctx.request.hooks.as_ref().and_then(|h| h.script.as_ref()) else {
        return Ok(None);
    };
    if script.name.contains('/') || script.name.starts_with('.') || script.name.is_empty() {
        return Err(Error::invalid(
            format!("hook script {:?}", script.name),
            "a hook script name must be a plain file name (no `/`, not starting with `.`)",
        ));
    }
    Ok(Some(OwnedFileProjection {
        path: RelPath::new(script_dir)?.join(&script.name)?,
        content: script.content.clone(),
        mode: Some(HOOK_SCRIPT_MODE),
        role: OwnedRole::HookScript,
    }))
}

/// `value` as pretty-printed JSON in the private file `file_name`, passed as `<flag>=<path>` (ONE
/// argument: a flag that takes several values would read the next argument as another one). `what`
/// names the input in an error.
pub fn private_json_flag(
    plan: &mut Plan,
    flag: &str,
    file_name: &str,
    value: &serde_json::Value,
    what: &str,
) -> Result<()> {
    private_json(plan, file_name, value, what)?;
    plan.launch_args.push(LaunchArg::FlagWithPrivateFile {
        flag: flag.to_string(),
        name: file_name.to_string(),
    });
    Ok(())
}

/// `value` as pretty-printed JSON (keys sorted, a final newline) in the private file
/// `file_name`, for the caller to name on the command line or in the environment. `what` names
/// the input in an error.
pub fn private_json(
    plan: &mut Plan,
    file_name: &str,
    value: &serde_json::Value,
    what: &str,
) -> Result<()> {
    let mut content = serde_json::to_string_pretty(value)
        .map_err(|e| Error::invalid(what, format!("cannot be serialized: {e}")))?;
    content.push('\n');
    plan.private_files.push(PrivateFile {
        name: file_name.to_string(),
        content,
    });
    Ok(())
}

/// The hooks route of a CLI that reads extra settings from a file named on its command line:
/// the session's hooks configuration as the private file `file_name`, `{"hooks": <config>}` (a
/// configuration that already holds a top-level `"hooks"` object is taken as the whole settings
/// file), passed as `<flag>=<path>`; the script, if any, as an owned file `<script_dir>/<name>`
/// (mode 0755) in the project, which the configuration runs by that path. No project settings
/// file is touched. Adds nothing when the session brings no hooks.
pub fn settings_file_route(
    ctx: &PlanContext<'_>,
    plan: &mut Plan,
    flag: &str,
    file_name: &str,
    script_dir: &str,
    dialect: Dialect<'_>,
) -> Result<()> {
    let Some(config) = session_hooks(ctx, script_dir, dialect)? else {
        return Ok(());
    };
    let settings = match config.get("hooks") {
        Some(serde_json::Value::Object(_)) => config,
        _ => serde_json::json!({ "hooks": config }),
    };
    private_json_flag(plan, flag, file_name, &settings, "the hooks configuration")?;
    // The configuration travels in the private file; the script lives in the project.
    plan.owned_files.extend(hook_script(ctx, script_dir)?);
    Ok(())
}

/// Subagents or commands (`role` says which) as owned files `<dir>/<name>.md`, one per input, in
/// request order: written whole, a same-named file of the project's taken over and put back byte
/// for byte by the last session, refreshed by each start, counted across sessions, and proven
/// ours by the marker comment after their frontmatter (core's `generated` module).
///
/// | CLI | subagents | commands |
/// |---|---|---|
/// | Claude Code | `.claude/agents` | `.claude/commands` |
/// | Cursor | — | `.cursor/commands` |
/// | Pi | — | `.pi/prompts` (prompt templates) |
///
/// Refuses (before anything is written) a name that is not one plain name
/// ([`crate::plan::validate_entry_name`]) and a name given twice.
pub fn named_files(
    inputs: &[NamedFile],
    dir: &str,
    role: OwnedRole,
) -> Result<Vec<OwnedFileProjection>> {
    named_files_with_suffix(inputs, dir, ".md", role)
}

/// [`named_files`] with each file named `<name><suffix>` (Copilot reads subagents from
/// `.github/agents/<name>.agent.md`).
pub fn named_files_with_suffix(
    inputs: &[NamedFile],
    dir: &str,
    suffix: &str,
    role: OwnedRole,
) -> Result<Vec<OwnedFileProjection>> {
    let what = match role {
        OwnedRole::Subagent => "subagent",
        _ => "command",
    };
    let dir = RelPath::new(dir)?;
    let mut out: Vec<OwnedFileProjection> = Vec::with_capacity(inputs.len());
    for input in inputs {
        crate::plan::validate_entry_name(what, &input.name)?;
        let path = dir.join(&format!("{}{suffix}", input.name))?;
        if out.iter().any(|o| o.path == path) {
            return Err(Error::invalid(
                format!("{what} name {:?}", input.name),
                format!("the session names this {what} twice; nothing was written"),
            ));
        }
        out.push(OwnedFileProjection {
            path,
            content: input.content.clone(),
            mode: None,
            role,
        });
    }
    Ok(out)
}

/// Neutral subagents ([`definitions::agent_markdown`]: front matter with a `description`, named
/// as the session names them) as owned files `<dir>/<name><suffix>`, as [`named_files`] projects
/// them.
///
/// | CLI | folder | suffix |
/// |---|---|---|
/// | Claude Code | `.claude/agents` | `.md` |
/// | Qwen Code | `.qwen/agents` | `.md` |
/// | Copilot CLI | `.github/agents` | `.agent.md` |
/// | Gemini CLI | `<private home>/.gemini/agents` | `.md` |
pub fn agent_files(
    inputs: &[NamedFile],
    dir: &str,
    suffix: &str,
) -> Result<Vec<OwnedFileProjection>> {
    let mut files = named_files_with_suffix(inputs, dir, suffix, OwnedRole::Subagent)?;
    for (file, input) in files.iter_mut().zip(inputs) {
        file.content = definitions::agent_markdown(input)?;
    }
    Ok(files)
}

/// How a CLI reads command files (see [`command_files`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandFormats {
    /// Only TOML with a `prompt` string, as `<name>.toml` (Gemini CLI).
    Toml,
    /// TOML with a `prompt` string as `<name>.toml`, anything else as Markdown `<name>.md`
    /// (Qwen Code).
    TomlOrMarkdown,
}

/// The prompt of a TOML command file: `Some` when `content` is TOML holding a string `prompt`.
fn toml_prompt(content: &str) -> Option<String> {
    let document: toml_edit::DocumentMut = content.parse().ok()?;
    document
        .get("prompt")
        .and_then(|item| item.as_str())
        .map(str::to_string)
}

/// Commands as owned files in the folder `dir` the CLI `cli` reads them from, each in a format
/// that CLI reads, in request order. A file already in the CLI's TOML form (a string `prompt`)
/// becomes `<dir>/<name>.toml` as it is; a neutral Markdown command is converted
/// ([`definitions`]): to TOML (`description`, `prompt`) where the CLI reads only TOML, to
/// Markdown `<dir>/<name>.md` where it reads that too, `$ARGUMENTS` becoming `{{args}}` either
/// way. Taken over, put back, counted and proven ours as every owned file (see [`named_files`]).
///
/// | CLI | folder | formats |
/// |---|---|---|
/// | Gemini CLI | `.gemini/commands` | [`CommandFormats::Toml`] |
/// | Qwen Code | `.qwen/commands` | [`CommandFormats::TomlOrMarkdown`] |
///
/// Both replace only `{{args}}` with the arguments (a prompt without it gets them appended), so a
/// TOML file whose prompt uses `$ARGUMENTS` and not `{{args}}` is refused rather than projected
/// to reach the model with the placeholder unfilled. Refuses too, before anything is written, a
/// name that is not one plain name and a name given twice.
pub fn command_files(
    inputs: &[NamedFile],
    dir: &str,
    cli: &str,
    formats: CommandFormats,
) -> Result<Vec<OwnedFileProjection>> {
    let dir = RelPath::new(dir)?;
    let mut out: Vec<OwnedFileProjection> = Vec::with_capacity(inputs.len());
    for (index, input) in inputs.iter().enumerate() {
        crate::plan::validate_entry_name("command", &input.name)?;
        let refuse = |reason: String| {
            Error::invalid(
                format!("command {:?}", input.name),
                format!("{reason}; nothing was written"),
            )
        };
        let (content, extension) = match (toml_prompt(&input.content), formats) {
            (Some(prompt), _) => {
                if prompt.contains(definitions::NEUTRAL_ARGS)
                    && !prompt.contains(definitions::TOML_ARGS)
                {
                    return Err(refuse(format!(
                        "its TOML prompt uses {}, which {cli} leaves as it is (it replaces only {}): write {} there, or give the command as neutral Markdown",
                        definitions::NEUTRAL_ARGS,
                        definitions::TOML_ARGS,
                        definitions::TOML_ARGS
                    )));
                }
                (input.content.clone(), "toml")
            }
            (None, CommandFormats::Toml) => (definitions::command_toml(input), "toml"),
            (None, CommandFormats::TomlOrMarkdown) => {
                (definitions::command_markdown_toml_args(input), "md")
            }
        };
        if inputs[..index].iter().any(|other| other.name == input.name) {
            return Err(refuse("the session names this command twice".to_string()));
        }
        out.push(OwnedFileProjection {
            path: dir.join(&format!("{}.{extension}", input.name))?,
            content,
            mode: None,
            role: OwnedRole::Command,
        });
    }
    Ok(out)
}

/// The key a CLI's settings file holds its hooks under.
pub const HOOKS_KEY: &str = "hooks";

/// The hooks route of a CLI that reads hooks from its project settings file (and runs them in
/// one-turn mode): the session's hooks configuration (the event map, or an object holding it
/// under `"hooks"`) merged into the project's `settings_path` under `"hooks"`, one entry per
/// event (core refuses an event the project's file defines differently, and gives the project's
/// exact bytes back at the end); the script, if any, as an owned file `<script_dir>/<name>`
/// (mode 0755), which the configuration runs by that path. Adds nothing when the session brings
/// no hooks.
///
/// | CLI | settings file | script folder |
/// |---|---|---|
/// | Gemini CLI | `.gemini/settings.json` | `.gemini/hooks` |
/// | Qwen Code | `.qwen/settings.json` | `.qwen/hooks` |
pub fn merged_hooks(
    ctx: &PlanContext<'_>,
    plan: &mut Plan,
    settings_path: &str,
    script_dir: &str,
    dialect: Dialect<'_>,
) -> Result<()> {
    let Some(config) = session_hooks(ctx, script_dir, dialect)? else {
        return Ok(());
    };
    let config = json_object(&config, "the hooks configuration")?;
    let events = match config.get(HOOKS_KEY) {
        Some(serde_json::Value::Object(events)) => events,
        _ => config,
    };
    plan.merged_json.push(MergedJsonProjection {
        created_with: serde_json::Map::new(),
        path: RelPath::new(settings_path)?,
        key: HOOKS_KEY.to_string(),
        entries: events.clone(),
        replace: false,
        role: OwnedRole::HooksConfig,
    });
    plan.owned_files.extend(hook_script(ctx, script_dir)?);
    Ok(())
}

/// The session's skills, projected into the CLI's skills folder `skills_dir` (relative to the
/// destination root): one [`SkillProjection`] per `ctx.request.skills`, in request order.
///
/// Every provider whose CLI reads skill folders gets this called with its own folder by naming
/// it in its spec ([`crate::ProviderSpec::skills_in`]); core does the rest (its skill-folder
/// projection): the copy into `skills_dir/<name>/` built beside it and renamed in, the `.{namespace}-managed` marker file, the
/// take-over of a same-named folder (stashed, put back by the last session), counting across
/// sessions, refresh at each start, and removal of only what is provably ours.
///
/// | CLI | `skills_dir` | source |
/// |---|---|---|
/// | Codex | `.agents/skills` | openai/codex `codex-rs/core-skills/src/loader.rs` (`repo_agents_skill_roots`) |
/// | Claude Code | `.claude/skills` | code.claude.com/docs skills page |
/// | Pi | `.pi/skills` | badlogic/pi-mono `packages/coding-agent/docs/skills.md` |
/// | Cursor | `.cursor/skills` | cursor.com/docs/context/skills |
/// | Gemini CLI | `.gemini/skills` | measured with 0.61.0 (listed in the system instruction) |
/// | Qwen Code | `.qwen/skills` | measured with 0.24.4 (listed in the first user message) |
///
/// Refuses (before anything is written) a skill name that is not one plain folder name
/// ([`crate::plan::validate_skill_name`]: no `/`, `..`, absolute path, control character or leading
/// `.`), and two skills with the same name.
///
/// A provider does not call it itself: naming its folder in its spec
/// ([`crate::ProviderSpec::skills_in`]) is what gets the session's skills planned there, by
/// [`crate::ProviderExt::plan`].
pub fn skills(ctx: &PlanContext<'_>, skills_dir: &str) -> Result<Vec<SkillProjection>> {
    let skills_dir = RelPath::new(skills_dir)?;
    let mut out: Vec<SkillProjection> = Vec::with_capacity(ctx.request.skills.len());
    for skill in &ctx.request.skills {
        crate::plan::validate_skill_name(&skill.name)?;
        if out.iter().any(|s| s.name == skill.name) {
            return Err(crate::error::Error::invalid(
                format!("skill name {:?}", skill.name),
                "the session names this skill twice; nothing was written",
            ));
        }
        out.push(SkillProjection {
            skills_dir: skills_dir.clone(),
            name: skill.name.clone(),
            source: skill.source.clone(),
        });
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;
    use crate::provider::{
        EntryKind, HookScript, HooksInput, NamedFile, Namespace, Probes, SessionRequest,
        WorkspaceView,
    };
    use std::path::{Path, PathBuf};

    /// An empty destination: every path missing, nothing above the root.
    pub(crate) struct Empty;
    impl WorkspaceView for Empty {
        fn kind(&self, _: &RelPath) -> EntryKind {
            EntryKind::Missing
        }
        fn found_above_root(&self, _: &[&str]) -> Vec<PathBuf> {
            Vec::new()
        }
    }

    fn with_request<T>(request: SessionRequest, f: impl FnOnce(&PlanContext<'_>) -> T) -> T {
        let ns = Namespace::default();
        let probes = Probes::default();
        f(&PlanContext {
            root: Path::new("/ws"),
            namespace: &ns,
            request: &request,
            probes: &probes,
            view: &Empty,
            home: None,
            cli_home: None,
        })
    }

    fn hooks(name: &str) -> SessionRequest {
        SessionRequest {
            hooks: Some(HooksInput {
                config: serde_json::json!({"b": 1, "a": [true]}),
                script: Some(HookScript {
                    name: name.to_string(),
                    content: "#!/bin/sh\n".to_string(),
                }),
                format: Default::default(),
            }),
            ..SessionRequest::with_prompt("p")
        }
    }

    #[test]
    fn hook_files_write_config_and_executable_script() {
        let files = with_request(hooks("guard.sh"), |ctx| {
            hook_files(
                ctx,
                ".x/hooks.json",
                ".x/hooks",
                Dialect::Unconfirmed("test"),
            )
            .unwrap()
        });
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path.as_str(), ".x/hooks.json");
        assert_eq!(
            files[0].content,
            "{\n  \"a\": [\n    true\n  ],\n  \"b\": 1\n}\n"
        );
        assert_eq!(files[0].role, OwnedRole::HooksConfig);
        assert_eq!(files[1].path.as_str(), ".x/hooks/guard.sh");
        assert_eq!(files[1].mode, Some(0o755));
        assert_eq!(files[1].role, OwnedRole::HookScript);
    }

    #[test]
    fn hook_script_names_must_be_plain() {
        for bad in ["a/b.sh", "../x", ".hidden", ""] {
            let result = with_request(hooks(bad), |ctx| {
                hook_files(ctx, "h.json", "hooks", Dialect::Unconfirmed("test"))
            });
            assert!(result.is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn hooks_config_must_be_an_object() {
        let mut request = hooks("x.sh");
        if let Some(h) = request.hooks.as_mut() {
            h.config = serde_json::json!([1]);
        }
        let error = with_request(request, |ctx| {
            hook_files(ctx, "h.json", "hooks", Dialect::Unconfirmed("test"))
        })
        .unwrap_err();
        assert!(error.to_string().contains("JSON object"), "{error}");
    }

    fn named(name: &str, content: &str) -> NamedFile {
        NamedFile {
            name: name.into(),
            content: content.into(),
        }
    }

    #[test]
    fn command_files_take_the_clis_own_format() {
        let toml = named(
            "review",
            "description = \"d\"\nprompt = \"\"\"Review {{args}}\"\"\"\n",
        );
        let markdown = named("ship", "---\ndescription: Ship\n---\nShip {{args}} now.\n");
        let files = command_files(
            &[toml.clone(), markdown.clone()],
            ".q/commands",
            "qwen",
            CommandFormats::TomlOrMarkdown,
        )
        .unwrap();
        assert_eq!(files[0].path.as_str(), ".q/commands/review.toml");
        assert_eq!(files[1].path.as_str(), ".q/commands/ship.md");
        assert_eq!(files[1].content, markdown.content);
        assert!(files.iter().all(|f| f.role == OwnedRole::Command));

        let only_toml = command_files(
            std::slice::from_ref(&toml),
            ".g/commands",
            "gemini",
            CommandFormats::Toml,
        )
        .unwrap();
        assert_eq!(only_toml[0].path.as_str(), ".g/commands/review.toml");
        assert_eq!(only_toml[0].content, toml.content);
    }

    #[test]
    fn neutral_commands_are_converted_for_the_clis_that_replace_args() {
        let neutral = named(
            "ship",
            "---\ndescription: Ship\n---\nShip $ARGUMENTS now.\n",
        );
        let gemini = command_files(
            std::slice::from_ref(&neutral),
            ".g/commands",
            "gemini",
            CommandFormats::Toml,
        )
        .unwrap();
        assert_eq!(gemini[0].path.as_str(), ".g/commands/ship.toml");
        assert_eq!(
            toml_prompt(&gemini[0].content).as_deref(),
            Some("Ship {{args}} now.\n")
        );
        let qwen = command_files(
            std::slice::from_ref(&neutral),
            ".q/commands",
            "qwen",
            CommandFormats::TomlOrMarkdown,
        )
        .unwrap();
        assert_eq!(qwen[0].path.as_str(), ".q/commands/ship.md");
        assert_eq!(
            qwen[0].content,
            "---\ndescription: Ship\n---\nShip {{args}} now.\n"
        );
    }

    #[test]
    fn command_files_refuse_what_would_reach_the_model_broken() {
        // A TOML file is the CLI's own form: `$ARGUMENTS` there would stay literal.
        let toml_with_claude_args = named("fix", "prompt = \"Fix $ARGUMENTS please.\"\n");
        let error = command_files(
            &[toml_with_claude_args],
            ".q/commands",
            "qwen",
            CommandFormats::TomlOrMarkdown,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("$ARGUMENTS") && error.contains("{{args}}"),
            "{error}"
        );
        // Both placeholders: the args arrive, the file is taken as written.
        let both = named("fix", "prompt = \"Fix {{args}}; $ARGUMENTS is literal.\"\n");
        assert!(command_files(&[both], ".q/c", "qwen", CommandFormats::TomlOrMarkdown).is_ok());
        // One name twice, whatever the formats.
        let twice = [named("a", "prompt = \"x\"\n"), named("a", "text\n")];
        let error = command_files(&twice, ".q/c", "qwen", CommandFormats::TomlOrMarkdown)
            .unwrap_err()
            .to_string();
        assert!(error.contains("twice"), "{error}");
        for bad in ["a/b", "..", ".hidden", ""] {
            let input = named(bad, "prompt = \"x\"\n");
            assert!(command_files(&[input], ".q/c", "qwen", CommandFormats::Toml).is_err());
        }
        // TOML whose prompt is not a string is no command file of that form: it is taken as a
        // neutral Markdown command, whose whole text becomes the prompt.
        let not_prompt = named("n", "prompt = 3\n");
        let converted =
            command_files(&[not_prompt], ".g/c", "gemini", CommandFormats::Toml).unwrap();
        assert_eq!(
            toml_prompt(&converted[0].content).as_deref(),
            Some("prompt = 3\n")
        );
    }

    #[test]
    fn merged_hooks_take_the_event_map_and_the_script() {
        for config in [
            serde_json::json!({"hooks": {"SessionStart": [{"hooks": []}]}}),
            serde_json::json!({"SessionStart": [{"hooks": []}]}),
        ] {
            let mut request = hooks("guard.sh");
            if let Some(h) = request.hooks.as_mut() {
                h.config = config;
            }
            let mut plan = Plan::default();
            with_request(request, |ctx| {
                merged_hooks(
                    ctx,
                    &mut plan,
                    ".g/settings.json",
                    ".g/hooks",
                    Dialect::Unconfirmed("test"),
                )
            })
            .unwrap();
            assert_eq!(plan.merged_json.len(), 1);
            let merged = &plan.merged_json[0];
            assert_eq!(merged.path.as_str(), ".g/settings.json");
            assert_eq!(merged.key, HOOKS_KEY);
            assert!(!merged.replace);
            assert_eq!(merged.entries.keys().collect::<Vec<_>>(), ["SessionStart"]);
            assert_eq!(plan.owned_files[0].path.as_str(), ".g/hooks/guard.sh");
            assert_eq!(plan.owned_files[0].mode, Some(0o755));
        }
        let mut plan = Plan::default();
        with_request(SessionRequest::with_prompt("p"), |ctx| {
            merged_hooks(
                ctx,
                &mut plan,
                ".g/settings.json",
                ".g/hooks",
                Dialect::Unconfirmed("test"),
            )
        })
        .unwrap();
        assert_eq!(plan, Plan::default());
    }

    #[test]
    fn named_files_take_the_suffix() {
        let inputs = vec![NamedFile {
            name: "rev".into(),
            content: "x".into(),
        }];
        let files =
            named_files_with_suffix(&inputs, ".github/agents", ".agent.md", OwnedRole::Subagent)
                .unwrap();
        assert_eq!(files[0].path.as_str(), ".github/agents/rev.agent.md");
        assert_eq!(
            named_files(&inputs, ".claude/agents", OwnedRole::Subagent).unwrap()[0]
                .path
                .as_str(),
            ".claude/agents/rev.md"
        );
    }

    #[test]
    fn environment_file_plan_names_the_file_through_the_variable() {
        let plan = with_request(SessionRequest::with_prompt("text"), |ctx| {
            environment_file_plan(ctx, "s.md", "VAR", EnvValue::PrivateDir, vec![])
        });
        assert_eq!(plan.private_files[0].content, "text");
        assert_eq!(plan.env, vec![("VAR".to_string(), EnvValue::PrivateDir)]);
        assert_eq!(
            plan.session_text,
            Some(SessionTextCarrier::Environment {
                private_file: "s.md".into(),
                var: "VAR".into()
            })
        );
        assert!(plan.launch_args.is_empty() && plan.blocks.is_empty());
    }

    #[test]
    fn private_file_plan_passes_the_flag_then_the_path() {
        let plan = with_request(SessionRequest::with_prompt("text"), |ctx| {
            private_file_plan(ctx, "--flag", "f.md", vec![])
        });
        assert_eq!(plan.private_files[0].content, "text");
        assert_eq!(
            plan.launch_args,
            vec![
                LaunchArg::Literal("--flag".into()),
                LaunchArg::PrivateFilePath("f.md".into())
            ]
        );
        assert!(plan.blocks.is_empty() && plan.owned_files.is_empty());
    }
}
