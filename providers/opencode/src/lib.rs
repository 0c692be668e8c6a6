//! The opencode provider: the session text goes into a private file that a private opencode
//! configuration (`OPENCODE_CONFIG=<file>`, which opencode merges with the user's and the
//! project's) lists in its `instructions`, so opencode shows it to the model after the project's
//! `AGENTS.md` and no file of the workspace is written or shadowed; the same private
//! configuration carries the session's MCP servers (`mcp`), commands (`command`) and subagents
//! (`agent`), and its skills go to `.agents/skills/`.
//!
//! # Why not a block in `AGENTS.md`
//!
//! opencode reads `AGENTS.md`, else `CLAUDE.md`, else `CONTEXT.md`, over the whole walk: the
//! first name found anywhere from the working directory up to the git root wins everywhere. A
//! block in a new `AGENTS.md` would make opencode drop every project `CLAUDE.md` the user relies
//! on. The private configuration creates nothing in the workspace (opencode writes a
//! `.gitignore` into any project `.opencode/` it finds, and rewrites a project `opencode.json`
//! lacking `$schema`, so the project's own configuration files are not a route that keeps the
//! user's bytes), and it adds to what the project has instead of hiding it. The path of the
//! session's file reaches the configuration through opencode's own `{env:NAME}` substitution
//! ([`INSTRUCTIONS_ENV`]), core filling in both paths in the receipt's `env`.
//!
//! # Facts relied on
//!
//! Measured with opencode 1.18.33 (npm `opencode-ai`, its `opencode-linux-x64` binary) run as
//! `opencode run TEXT` against a loopback chat-completions endpoint that records the request
//! (`cargo xtask qualify`, QUALIFICATION.md; a file counts as read when its marker is in the
//! request). The source is the JavaScript bundled in that binary (`Instruction.systemPaths`,
//! `ConfigPaths`), read to guide the measurements.
//!
//! | fact | source | confirmed? |
//! |---|---|---|
//! | Project instruction files: for each name of `AGENTS.md`, `CLAUDE.md`, `CONTEXT.md` in turn, every match from the working directory up to the worktree; the first name with any match wins and the others are read nowhere | bundle `Instruction.systemPaths` (`findUp(name, directory, worktree)`, `break` after the first name found); measured with 1.18.33 | YES (measured) |
//! | The worktree is what git reports (`git rev-parse --show-toplevel` once a `.git` is found): an empty `.git` folder is no repository; without one the walk goes up to `/` ("Workspace root folder: /") | bundle `Git.repo.discover`; measured with 1.18.33 (an empty `.git` folder: the `AGENTS.md` above it is read; a real repository: not) | YES (measured) |
//! | Sent in this order: the user file, then the project files from the working directory up, then `instructions`; each as `Instructions from: <path>` and the file as written (no trimming, HTML comments kept, so our marker lines would reach the model) | measured with 1.18.33 | YES (measured) |
//! | User files: `$XDG_CONFIG_HOME/opencode/AGENTS.md` (default `~/.config/opencode/AGENTS.md`), else `~/.claude/CLAUDE.md` (first found wins; `OPENCODE_DISABLE_CLAUDE_CODE_PROMPT` drops the second) | bundle `Instruction`; measured with 1.18.33 | YES (measured) |
//! | Not read: `.claude/CLAUDE.md`, `CLAUDE.local.md`, `AGENTS.override.md`, `.opencode/AGENTS.md`, files below the working directory; no `@file` imports (the line stays literal); no budget (a 1 MB file arrives whole); invalid UTF-8 is sent with replacement characters | measured with 1.18.33 | YES (measured) |
//! | `OPENCODE_CONFIG=<file>` names a configuration merged after the user's and before the project's; its `instructions` (absolute paths and globs) are read after the project files; arrays concatenate, so the project's own `instructions` stay | docs (opencode.ai/docs/config, "Custom config"); measured with 1.18.33 | YES (measured) |
//! | `{env:NAME}` in a configuration value is replaced by the variable's value (a path holding `"` works) | opencode.ai/docs/config "Variables"; measured with 1.18.33 | YES (measured) |
//! | opencode writes `"$schema"` into a configuration file lacking it (the private one and a project `opencode.json`), so ours carries it | measured with 1.18.33 | YES (measured) |
//! | opencode writes `.gitignore` (`node_modules`, `package.json`, `bun.lock`, …) into every `.opencode/` it reads, the project's included | measured with 1.18.33 | YES (measured): nothing is projected into `.opencode/` |
//! | `OPENCODE_CONFIG_DIR` would also carry configuration, but opencode then reads that folder's `AGENTS.md` *instead of* the user's `~/.config/opencode/AGENTS.md` and `~/.claude/CLAUDE.md` | measured with 1.18.33 | YES (measured): not used |
//! | MCP servers: `mcp.<name>` = `{"type": "local", "command": [cmd, args…], "environment": {…}}` or `{"type": "remote", "url", "headers"}`; in `opencode run` their tools are offered at once (`<server>_<tool>` in `tools`), no approval asked | opencode.ai/docs/mcp-servers; measured with 1.18.33 (a private `mcp` entry's tool in the first request) | YES (measured) |
//! | Commands: `command.<name>.template` (`$ARGUMENTS` replaced) with `description`, `agent`; `opencode run --command NAME ARGS` runs one | opencode.ai/docs/commands; measured with 1.18.33 | YES (measured) |
//! | Subagents: `agent.<name>` with `description`, `mode: "subagent"`, `prompt`; listed in the `task` tool's description | opencode.ai/docs/agents; measured with 1.18.33 | YES (measured) |
//! | Skills: `.agents/skills/<name>/SKILL.md` (also `.claude/skills/`, `.opencode/skills/`), listed in the system prompt's `<available_skills>` | opencode.ai/docs/skills; measured with 1.18.33 | YES (measured): `.agents/skills/` (opencode writes nothing there) |
//! | Hooks: opencode has none, only JavaScript plugins | opencode.ai/docs/plugins | refused |
//! | Its folders follow XDG: login (`auth.json`), sessions (`opencode.db`) and logs under `$XDG_DATA_HOME/opencode` (default `~/.local/share/opencode`), settings under `$XDG_CONFIG_HOME/opencode` | bundle (`xdg-basedir` paths); measured with 1.18.33 (`XDG_DATA_HOME` set: the database and logs there, nothing under `~/.local/share`) | YES (measured): `XDG_DATA_HOME` is the private home's variable |
//! | Instructions listed in the project's own `opencode.json` (`instructions` globs, relative ones matched from the working directory up to the worktree) are read too | bundle `Instruction.systemPaths`; measured with 1.18.33 | YES; not modelled by `resolve --as opencode` (it reads no configuration) |
//!
//! # Measured with the real CLI
//!
//! `cargo xtask qualify --provider opencode` (QUALIFICATION.md): the session text reaches the
//! first request in an empty workspace, beside an `AGENTS.md`, in a git repository and beside a
//! project `CLAUDE.md`, which opencode keeps reading during the session (the row's control adds
//! the `AGENTS.md` a block would create, and the `CLAUDE.md` is gone); the receipt's verdict
//! agrees each time; the workspace is back byte for byte after each release; a session's MCP
//! server's tool, skill and subagent reach the first request; a linked runtime delivers in builder
//! mode and in run mode under the sandbox. The discovery differential agrees on every shape of
//! `tests/data/discovery_shapes.json`. opencode still tries `registry.npmjs.org` (the plugin
//! package of its config folders), which the qualification's proxy refuses.
//!
//! # Known gaps
//!
//! - A host that sets `OPENCODE_CONFIG` itself loses it to the session's (the receipt says so);
//!   `OPENCODE_CONFIG_CONTENT` and the project's configuration are merged as usual.
//! - `--mcp-mode replace` is refused: a configuration can only switch off servers it names, and
//!   the provider does not read the user's or the project's.

use projectfile_provider::Input;
use projectfile_provider::{
    DiscoveryProfile, EnvValue, Error, NamedFile, Plan, PlanContext, Provider, ProviderSpec,
    Result, Walk, definitions, front_matter, mcp, patterns,
};
use serde_json::{Map, Value, json};

/// The variable naming the private configuration opencode merges.
pub const CONFIG_ENV: &str = "OPENCODE_CONFIG";
/// The private configuration's file name.
pub const CONFIG_FILE: &str = "opencode.json";
/// The variable the configuration's `instructions` read the session file's path from.
pub const INSTRUCTIONS_ENV: &str = "PROJECTFILE_OPENCODE_INSTRUCTIONS";
/// The private file holding the session text.
pub const INSTRUCTIONS_FILE: &str = "session-instructions.md";
/// Where the CLI reads project skills; each session skill is projected into `.agents/skills/<name>/`.
pub const SKILLS_DIR: &str = ".agents/skills";
/// The names opencode looks for, in order; the first found anywhere on the walk wins.
pub const NAMES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"];
/// opencode's configuration schema, which it writes into a file lacking it.
pub const SCHEMA: &str = "https://opencode.ai/config.json";

/// opencode, as data.
pub const SPEC: ProviderSpec = ProviderSpec::new("opencode", discovery)
    .session_text_as_launch_arg()
    .skills_in(SKILLS_DIR)
    .takes_mcp()
    .takes_subagents()
    .takes_commands()
    .with_cli_home_env("XDG_DATA_HOME")
    .refusing(&[(
        Input::Hooks,
        "opencode's hooks are plugins (JavaScript or TypeScript modules), not commands a file declares",
    )]);

/// The opencode provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct Opencode;

/// How opencode discovers instruction files.
fn discovery() -> DiscoveryProfile {
    let names: Vec<String> = NAMES.iter().map(|s| s.to_string()).collect();
    let mut exclusive = Vec::new();
    for (at, first) in names.iter().enumerate() {
        for later in &names[at + 1..] {
            exclusive.push((first.clone(), later.clone()));
        }
    }
    DiscoveryProfile {
        per_directory: names,
        // The user files: the first that exists.
        first_wins: true,
        exclusive_if_present: exclusive,
        exclusive_across_walk: true,
        git_root: true,
        walk: Walk::CwdUpToRoot,
        user_files: vec![
            ".config/opencode/AGENTS.md".into(),
            ".claude/CLAUDE.md".into(),
        ],
        verbatim: true,
        lossy_utf8: true,
        ..DiscoveryProfile::default()
    }
}

impl Provider for Opencode {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        let mut plan = patterns::environment_file_plan(
            ctx,
            INSTRUCTIONS_FILE,
            INSTRUCTIONS_ENV,
            EnvValue::PrivateFilePath(INSTRUCTIONS_FILE.into()),
            vec![format!(
                "the session text goes to a private file listed in the `instructions` of a private opencode configuration ({CONFIG_ENV}), which opencode merges with the user's and the project's; no project file is edited, and a host's own {CONFIG_ENV} is replaced for this launch"
            )],
        );
        let mut config = Map::new();
        config.insert("$schema".into(), json!(SCHEMA));
        config.insert(
            "instructions".into(),
            json!([format!("{{env:{INSTRUCTIONS_ENV}}}")]),
        );
        if let Some(servers) = mcp::servers(ctx)? {
            config.insert("mcp".into(), Value::Object(mcp_servers(servers)?));
            plan.notes.push(
                "the session's MCP servers go in the private configuration's `mcp`, added to the user's and the project's".into(),
            );
        }
        let request = ctx.request;
        if !request.commands.is_empty() {
            config.insert("command".into(), commands(&request.commands)?);
        }
        if !request.agents.is_empty() {
            config.insert("agent".into(), agents(&request.agents)?);
        }
        patterns::private_json(
            &mut plan,
            CONFIG_FILE,
            &Value::Object(config),
            "the opencode configuration",
        )?;
        plan.env.push((
            CONFIG_ENV.into(),
            EnvValue::PrivateFilePath(CONFIG_FILE.into()),
        ));
        Ok(plan)
    }
}

/// The refusal of an input opencode's configuration cannot hold.
fn refuse(what: String, reason: &str) -> Error {
    Error::invalid(what, format!("{reason}; nothing was written"))
}

/// The session's servers in opencode's form: `{"type": "local", "command": [cmd, args…],
/// "environment"}` for a command, `{"type": "remote", "url", "headers"}` for a URL.
fn mcp_servers(servers: &Map<String, Value>) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    for (name, server) in servers {
        let what = || format!("MCP server {name:?}");
        let fields = patterns::json_object(server, &what())?;
        for key in fields.keys() {
            if !matches!(
                key.as_str(),
                "type" | "command" | "args" | "env" | "url" | "headers"
            ) {
                return Err(refuse(
                    what(),
                    &format!(
                        "opencode's configuration has no place for {key:?} (it takes command, args, env, or url and headers)"
                    ),
                ));
            }
        }
        let entry = match (fields.get("command"), fields.get("url")) {
            (Some(Value::String(command)), None) => {
                let mut argv = vec![Value::String(command.clone())];
                match fields.get("args") {
                    None => {}
                    Some(Value::Array(args)) if args.iter().all(Value::is_string) => {
                        argv.extend(args.iter().cloned());
                    }
                    Some(_) => return Err(refuse(what(), "args must be a list of strings")),
                }
                let mut entry = json!({"type": "local", "command": argv, "enabled": true});
                if let Some(env) = fields.get("env") {
                    entry["environment"] = env.clone();
                }
                entry
            }
            (None, Some(Value::String(url))) => {
                let mut entry = json!({"type": "remote", "url": url, "enabled": true});
                if let Some(headers) = fields.get("headers") {
                    entry["headers"] = headers.clone();
                }
                entry
            }
            _ => {
                return Err(refuse(
                    what(),
                    "a server needs a command (a string) or a url (a string), not both",
                ));
            }
        };
        out.insert(name.clone(), entry);
    }
    Ok(out)
}

/// The session's subagents or commands (`what`) as opencode's entries by name: of each file's
/// front matter only the fields in `keep`, its body under `body`, then `finish` (which fills in
/// what opencode needs besides). Each name is checked as a file name would be, and given once.
fn entries(
    files: &[NamedFile],
    what: &str,
    keep: &[&str],
    body: &str,
    finish: fn(&mut Map<String, Value>),
) -> Result<Value> {
    let mut out = Map::new();
    for file in files {
        projectfile_provider::validate_entry_name(what, &file.name)?;
        let (fields, text) = front_matter::front_matter(&file.content);
        let mut entry = Map::new();
        for (key, value) in fields {
            let value = value.trim();
            if keep.contains(&key.as_str()) && !value.is_empty() {
                entry.insert(key, Value::String(value.to_string()));
            }
        }
        entry.insert(body.into(), Value::String(text.to_string()));
        finish(&mut entry);
        if out
            .insert(file.name.clone(), Value::Object(entry))
            .is_some()
        {
            return Err(refuse(
                format!("{what} name {:?}", file.name),
                &format!("the session names this {what} twice"),
            ));
        }
    }
    Ok(Value::Object(out))
}

/// The session's commands as `command.<name>`: the body as `template`, with its `description`
/// and `agent` (a `model` written for another CLI is left out: the session's model runs it).
fn commands(files: &[NamedFile]) -> Result<Value> {
    entries(
        files,
        "command",
        &["description", "agent"],
        "template",
        |_| {},
    )
}

/// The session's subagents as `agent.<name>`: the body as `prompt`, with its `description`,
/// `mode: "subagent"` unless the file says `primary` or `all` (`model` and `tools` written for
/// another CLI are left out). Each is checked as a neutral subagent first (front matter with a
/// `description`, which the `task` tool shows the model), as for every CLI.
fn agents(files: &[NamedFile]) -> Result<Value> {
    for file in files {
        definitions::agent(file)?;
    }
    entries(
        files,
        "subagent",
        &["description", "mode"],
        "prompt",
        |agent| {
            let mode = agent.get("mode").and_then(Value::as_str);
            if !matches!(mode, Some("primary" | "all")) {
                agent.insert("mode".into(), json!("subagent"));
            }
        },
    )
}
