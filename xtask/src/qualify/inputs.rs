//! What else a session brings, from the neutral definitions, proven with each runnable CLI:
//!
//! - a **skill** (`--skill`, a `SKILL.md` folder) listed by the CLIs that list skills (Gemini CLI,
//!   Qwen Code, opencode, Copilot): its description carries the marker (a skill's folder name
//!   also appears in a CLI's directory listing, so the marker is in the description);
//! - a **command** (`--command NAME=FILE`, the neutral Markdown: front matter `description`,
//!   `argument-hint`, body `Command MARKER: $ARGUMENTS`) that `projectfile acquire` converts to
//!   the CLI's own form; the turn invokes it (`/pfqinput now`; opencode: `run --command pfqinput
//!   now`) and the row passes when the request holds `Command MARKER: now`, the placeholder
//!   replaced by what followed the name;
//! - a **subagent** (`--agent NAME=FILE`, front matter `name` and `description` holding the
//!   marker, the body its system prompt) whose description reaches the request's tool or agent
//!   list; Gemini CLI takes one only in a private CLI home, so its row launches through
//!   `projectfile run --runtime-root … --private-cli-home` (the home seeded with the settings the
//!   CLI needs, as a host seeds its login);
//! - a **hook** (`--hooks FILE`, the neutral JSON, one `session_start` handler whose command
//!   creates a file outside the workspace): the row passes when that file exists after the
//!   one-turn launch, for the CLIs that run a session-start hook in that mode (Claude Code, Gemini
//!   CLI, Qwen Code).
//!
//! A kind a CLI cannot take is a refusal row: the acquire must fail as docs/session-definitions.md
//! says (exit 1, error kind `provider`) with a message naming the kind and the provider, and leave
//! the workspace byte for byte as it was. Every projected row
//! has its negative control (the same CLI, shape and turn with no session must not show the
//! marker, or leave the hook's file), is released, and the workspace after the release must be
//! byte for byte what the control run left ([`routes::tree_difference`]).

#![allow(clippy::disallowed_methods)] // xtask writes its scratch inputs under the temp dir

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

use super::install::{Cli, Installed};
use super::launch::{self, Outcome};
use super::routes::{self, Bench, Check, RouteRow, Scratch, Shape};

/// The inputs checked for one CLI, each projected or refused as that CLI's provider does.
pub fn check(bench: &Bench<'_>, cli: &Installed) -> Vec<RouteRow> {
    let mut rows = Vec::new();
    for input in [Input::Skill, Input::Command, Input::Agent, Input::Hook] {
        for &way in input.ways(cli.cli) {
            let workspace = input.workspace(way);
            let row = match way {
                Way::Projected => reach(bench, cli, input),
                Way::Refused => refused(bench, cli, input),
                Way::PrivateHome => private_home(bench, cli, input),
            };
            rows.push(routes::guard(cli, &workspace, row));
        }
    }
    rows
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Input {
    Skill,
    Command,
    Agent,
    Hook,
}

/// How a CLI takes an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// `projectfile acquire` projects it; the CLI shows it.
    Projected,
    /// `projectfile acquire` refuses it: exit 1, error kind `provider`, nothing written.
    Refused,
    /// Only in a private CLI home (`run --runtime-root … --private-cli-home`).
    PrivateHome,
}

/// The name every input is projected under (a lower-case slug: Gemini CLI's agent names must be).
const NAME: &str = "pfqinput";
/// What follows the command's name in the turn, and replaces `$ARGUMENTS`.
const ARGS: &str = "now";

impl Input {
    /// How `cli` takes this input (none: not checked for that CLI).
    fn ways(self, cli: Cli) -> &'static [Way] {
        use Cli::*;
        match (self, cli) {
            (Input::Skill, Gemini | Qwen | Opencode | Copilot) => &[Way::Projected],
            (Input::Skill, Claude | Codex | Pi) => &[],
            (Input::Command, Claude | Pi | Gemini | Qwen | Opencode) => &[Way::Projected],
            (Input::Command, Codex | Copilot) => &[Way::Refused],
            (Input::Agent, Claude | Qwen | Copilot | Opencode | Codex) => &[Way::Projected],
            // Refused by `acquire`, taken in a private CLI home.
            (Input::Agent, Gemini) => &[Way::Refused, Way::PrivateHome],
            (Input::Agent, Pi) => &[Way::Refused],
            (Input::Hook, Claude | Gemini | Qwen) => &[Way::Projected],
            (Input::Hook, Codex | Copilot | Pi | Opencode) => &[Way::Refused],
        }
    }

    /// The kind as `projectfile` names it in a refusal.
    fn kind(self) -> &'static str {
        match self {
            Input::Skill => "skill",
            Input::Command => "command",
            Input::Agent => "agent",
            Input::Hook => "hook",
        }
    }

    fn workspace(self, way: Way) -> String {
        let what = match self {
            Input::Skill => "session skill".to_string(),
            Input::Command => format!("session command run as /{NAME} {ARGS}"),
            Input::Agent => "session subagent".to_string(),
            Input::Hook => "session session_start hook".to_string(),
        };
        match way {
            Way::Projected => format!("AGENTS.md, {what}"),
            Way::Refused => format!("AGENTS.md, {what} (refused)"),
            Way::PrivateHome => format!("AGENTS.md, {what}, runtime with a private CLI home"),
        }
    }

    /// The neutral file the session brings, carrying `marker`, written under `dir`; the acquire
    /// arguments naming it. `hook_file`: the file the hook's command creates.
    fn bring(self, dir: &Path, marker: &str, hook_file: &Path) -> Result<Vec<String>> {
        let (flag, path, text) = match self {
            Input::Skill => (
                "--skill",
                dir.join(NAME),
                format!(
                    "---\nname: {NAME}\ndescription: Qualification skill {marker}; never needed.\n---\nDo nothing.\n"
                ),
            ),
            Input::Command => (
                "--command",
                dir.join(format!("{NAME}.md")),
                format!(
                    "---\ndescription: Qualification command\nargument-hint: WHEN\n---\nCommand {marker}: $ARGUMENTS\n"
                ),
            ),
            Input::Agent => (
                "--agent",
                dir.join(format!("{NAME}-agent.md")),
                format!(
                    "---\nname: {NAME}\ndescription: Qualification agent {marker}; never needed.\n---\nDo nothing.\n"
                ),
            ),
            Input::Hook => {
                let command = format!("touch '{}'", hook_file.display());
                let hooks = serde_json::json!({"hooks": {"session_start": [{"command": command}]}});
                let path = dir.join("hooks.json");
                std::fs::write(&path, hooks.to_string())?;
                return Ok(vec!["--hooks".into(), path.to_string_lossy().into_owned()]);
            }
        };
        let file = if self == Input::Skill {
            std::fs::create_dir_all(&path)?;
            path.join("SKILL.md")
        } else {
            path.clone()
        };
        std::fs::write(&file, text)?;
        Ok(vec![
            flag.to_string(),
            format!("{NAME}={}", path.to_string_lossy()),
        ])
    }

    /// Where the CLI's own form of the input lands.
    fn route(self, cli: Cli) -> &'static str {
        match (self, cli) {
            (Input::Skill, Cli::Gemini) => "skill: .gemini/skills/<name>/",
            (Input::Skill, Cli::Qwen) => "skill: .qwen/skills/<name>/",
            (Input::Skill, Cli::Opencode) => "skill: .agents/skills/<name>/",
            (Input::Skill, _) => "skill: .github/skills/<name>/",
            (Input::Command, Cli::Claude) => "command: .claude/commands/<name>.md",
            (Input::Command, Cli::Pi) => "command: .pi/prompts/<name>.md",
            (Input::Command, Cli::Gemini) => "command: .gemini/commands/<name>.toml",
            (Input::Command, Cli::Qwen) => "command: .qwen/commands/<name>.md",
            (Input::Command, Cli::Opencode) => "command: command.<name> in the private config",
            (Input::Agent, Cli::Claude) => "agent: .claude/agents/<name>.md",
            (Input::Agent, Cli::Qwen) => "agent: .qwen/agents/<name>.md",
            (Input::Agent, Cli::Copilot) => "agent: .github/agents/<name>.agent.md",
            (Input::Agent, Cli::Opencode) => "agent: agent.<name> in the private config",
            (Input::Agent, Cli::Codex) => "agent: -c agents.<name>.* overrides",
            (Input::Agent, Cli::Gemini) => "agent: <cli home>/.gemini/agents/<name>.md",
            (Input::Hook, Cli::Claude) => "hook: SessionStart in a private --settings file",
            (Input::Hook, Cli::Gemini) => "hook: SessionStart in .gemini/settings.json",
            (Input::Hook, Cli::Qwen) => "hook: SessionStart in .qwen/settings.json",
            (input, _) => input.kind(),
        }
    }

    /// The CLI's arguments for the turn: the command's invocation, else the usual turn.
    fn turn(self, cli: Cli, bench: &Bench<'_>) -> Vec<String> {
        match (self, cli) {
            (Input::Command, Cli::Opencode) => {
                ["run", "--command", NAME, ARGS].map(String::from).to_vec()
            }
            (Input::Command, _) => {
                launch::turn_args(cli, bench.capture, &format!("/{NAME} {ARGS}"))
            }
            _ => launch::turn_args(cli, bench.capture, launch::USER_TURN),
        }
    }

    /// What the request must hold: the command's expanded prompt, else the marker itself.
    fn needle(self, marker: &str) -> String {
        match self {
            Input::Command => format!("Command {marker}: {ARGS}"),
            _ => marker.to_string(),
        }
    }
}

const SHAPE: Shape = routes::shape_agents;

/// The file a hook of scratch `s` creates: beside the workspace, never in it.
fn hook_file(s: &Scratch, marker: &str) -> PathBuf {
    s.base.join(format!("hook-ran-{marker}"))
}

/// A projected input: acquire, one turn, release; the control without a session.
fn reach(bench: &Bench<'_>, cli: &Installed, input: Input) -> Result<RouteRow> {
    let s = bench.scratch(cli)?;
    SHAPE(&s.ws, &s.home)?;
    let marker = bench.marker();
    let hook = hook_file(&s, &marker);
    let extra = input.bring(&s.base, &marker, &hook)?;
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let session = routes::acquire(bench, cli, &s, "Session text: answer briefly.", &extra)?;
    let mut argv = cli.argv.clone();
    argv.extend(input.turn(cli.cli, bench));
    argv.extend(session.launch_args.iter().cloned());
    let outcome = launch::run(&argv, &s.ws, &session.env, bench.capture);
    let hook_ran = hook.exists();
    routes::release(bench, &s, &session.token, &session.env)?;
    let after = routes::tree(&s.ws)?;
    // The control: the same shape and turn, no session.
    let c = bench.scratch(cli)?;
    SHAPE(&c.ws, &c.home)?;
    let env = launch::environment(cli, &c.home, bench.capture);
    let mut argv = cli.argv.clone();
    argv.extend(input.turn(cli.cli, bench));
    let control = launch::run(&argv, &c.ws, &env, bench.capture)?;
    // A CLI may answer an unknown command itself, without a request (Claude Code 2.1.233): the
    // command's control is clean when no request holds the marker.
    let control_clean = (control.reached_model() || input == Input::Command)
        && !control.model_text().contains(&marker)
        && !hook_file(&c, &marker).exists();
    let mut notes: Vec<String> = Vec::new();
    if !control.reached_model() {
        let said = match control.stderr_tail.trim() {
            "" => control.stdout.lines().next().unwrap_or_default(),
            tail => tail,
        };
        notes.push(format!("the control sent no model request ({said})"));
    }
    let changed = routes::tree_difference(&after, &routes::tree(&c.ws)?);
    notes.extend(changed.clone());
    let needle = input.needle(&marker);
    let check = Check {
        route: input.route(cli.cli),
        workspace: &input.workspace(Way::Projected),
        marker: &needle,
        expected: true,
        // The receipt's verdict is about the session text, not this input.
        receipt: None,
        control_clean,
        note: notes.join("; "),
    };
    let outcome = outcome?;
    let mut row = routes::row(cli, &outcome, check);
    if input == Input::Hook {
        hook_row(&mut row, &outcome, hook_ran, control_clean);
    }
    row.ok &= changed.is_none();
    Ok(row)
}

/// A hook's row says whether its file appeared, not whether a marker was sent.
fn hook_row(row: &mut RouteRow, outcome: &Outcome, ran: bool, control_clean: bool) {
    row.delivered = ran;
    row.ok = outcome.reached_model() && ran && control_clean;
    let said = if ran {
        "the session_start hook's file appeared"
    } else {
        "the session_start hook's file did NOT appear"
    };
    row.note = [said, row.note.as_str()]
        .into_iter()
        .filter(|n| !n.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
}

/// The exit status of a refused kind (docs/session-definitions.md: "exit 1, error kind
/// `provider`").
const REFUSED_EXIT: i32 = 1;

/// A refused input: the acquire fails with [`REFUSED_EXIT`] and error kind `provider`, naming the
/// kind and the provider, nothing written.
fn refused(bench: &Bench<'_>, cli: &Installed, input: Input) -> Result<RouteRow> {
    let s = bench.scratch(cli)?;
    SHAPE(&s.ws, &s.home)?;
    let before = routes::tree(&s.ws)?;
    let marker = bench.marker();
    let extra = input.bring(&s.base, &marker, &hook_file(&s, &marker))?;
    let env = launch::environment(cli, &s.home, bench.capture);
    let mut args = vec!["acquire".to_string(), "--json".into()];
    args.extend(routes::session_args(
        cli,
        &s,
        "Session text: answer briefly.",
    ));
    args.extend(["--holder-pid".into(), std::process::id().to_string()]);
    args.extend(extra);
    let out = Command::new(bench.projectfile)
        .args(&args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("{}: cannot run", bench.projectfile.display()))?;
    let code = out.status.code();
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    if code == Some(0) {
        // Projected after all: release it, and the row fails.
        let token = printed["token"].as_str().unwrap_or_default();
        routes::release(bench, &s, token, &env)?;
    }
    let message = printed["error"]["message"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(&out.stderr).trim().to_string());
    let lower = message.to_lowercase();
    let named = lower.contains(input.kind()) && lower.contains(cli.cli.provider());
    let error_kind = printed["error"]["kind"].as_str().unwrap_or("none");
    let changed = routes::tree_difference(&routes::tree(&s.ws)?, &before);
    let mut notes = vec![format!(
        "exit {}, error kind {error_kind}: {message}",
        exit_text(code)
    )];
    if !named {
        notes.push(format!(
            "the message does not name the kind ({}) and the provider",
            input.kind()
        ));
    }
    notes.extend(changed.clone());
    Ok(RouteRow {
        provider: cli.cli.provider().into(),
        version: cli.version.clone(),
        route: format!("{}: refused by acquire", input.kind()),
        workspace: input.workspace(Way::Refused),
        // Delivered: projected (the acquire succeeded).
        delivered: code == Some(0),
        expected: false,
        receipt: None,
        // No CLI runs: nothing to control.
        control_clean: true,
        ok: code == Some(REFUSED_EXIT) && error_kind == "provider" && named && changed.is_none(),
        note: notes.join("; "),
    })
}

fn exit_text(code: Option<i32>) -> String {
    code.map_or_else(|| "by signal".into(), |c| c.to_string())
}

/// An input only a private CLI home takes: `projectfile run --runtime-root … --private-cli-home`
/// with the input, the home seeded first with the CLI's own settings (what the qualification's
/// home holds: the endpoint's auth choice), one turn; the control is the same CLI without a
/// session.
fn private_home(bench: &Bench<'_>, cli: &Installed, input: Input) -> Result<RouteRow> {
    let s = bench.scratch(cli)?;
    SHAPE(&s.ws, &s.home)?;
    let marker = bench.marker();
    let extra = input.bring(&s.base, &marker, &hook_file(&s, &marker))?;
    let before = routes::tree(&s.ws)?;
    let runtime_root = s.base.join("runtimes");
    std::fs::create_dir_all(&runtime_root)?;
    let session_id = format!("code:project:q{}", bench.counter.get());
    let linked: Vec<String> = [
        "--runtime-root",
        &runtime_root.to_string_lossy(),
        "--user",
        "qualify",
        "--project-id",
        "p1",
        "--session-id",
        &session_id,
        "--mode",
        "builder",
        "--private-cli-home",
    ]
    .map(String::from)
    .to_vec();
    let env = launch::environment(cli, &s.home, bench.capture);
    // Where the run will put the CLI's home, to seed it.
    let mut identity = vec![
        "runtime".to_string(),
        "identity".into(),
        "--json".into(),
        "--provider".into(),
        cli.cli.provider().into(),
    ];
    identity.extend(linked.iter().cloned());
    let identity = Command::new(bench.projectfile)
        .args(&identity)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()?;
    let identity: Value = serde_json::from_slice(&identity.stdout)
        .context("projectfile runtime identity printed no JSON")?;
    let Some(cli_home) = identity["cli_home"].as_str().map(PathBuf::from) else {
        bail!("projectfile runtime identity names no CLI home: {identity}");
    };
    seed_cli_home(cli.cli, &s.home, &cli_home)?;
    let mut argv = vec![
        bench.projectfile.to_string_lossy().into_owned(),
        "run".into(),
        "--json".into(),
    ];
    argv.extend(routes::session_args(
        cli,
        &s,
        "Session text: answer briefly.",
    ));
    argv.extend(linked);
    argv.extend(extra);
    argv.push("--".into());
    argv.push(cli.cli.command().into());
    argv.extend(input.turn(cli.cli, bench));
    let outcome = launch::run(&argv, &s.ws, &env, bench.capture)?;
    let after = routes::tree(&s.ws)?;
    let c = bench.scratch(cli)?;
    SHAPE(&c.ws, &c.home)?;
    let control_env = launch::environment(cli, &c.home, bench.capture);
    let mut control_argv = cli.argv.clone();
    control_argv.extend(input.turn(cli.cli, bench));
    let control = launch::run(&control_argv, &c.ws, &control_env, bench.capture)?;
    let control_clean = control.reached_model() && !control.model_text().contains(&marker);
    // The CLI ran in the runtime, not in the workspace: the workspace is back as it was.
    let changed = routes::tree_difference(&after, &before);
    let mut notes = Vec::new();
    if let Some(code) = outcome.status.filter(|c| *c != 0) {
        notes.push(format!("run exited {code}"));
    }
    notes.extend(changed.clone());
    let check = Check {
        route: input.route(cli.cli),
        workspace: &input.workspace(Way::PrivateHome),
        marker: &input.needle(&marker),
        expected: true,
        receipt: None,
        control_clean,
        note: notes.join("; "),
    };
    let mut row = routes::row(cli, &outcome, check);
    row.ok &= changed.is_none();
    Ok(row)
}

/// Copies into a private CLI home what the qualification's own home gives the CLI (Gemini CLI:
/// `.gemini/settings.json` with the auth choice, without which it refuses to start).
fn seed_cli_home(cli: Cli, home: &Path, cli_home: &Path) -> Result<()> {
    let files: &[&str] = match cli {
        Cli::Gemini => &[".gemini/settings.json"],
        _ => &[],
    };
    for file in files {
        let to = cli_home.join(file);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(home.join(file), &to)
            .with_context(|| format!("{}: cannot seed", to.display()))?;
    }
    Ok(())
}
