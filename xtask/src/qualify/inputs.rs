//! What else a session brings reaches the CLI where it lists it (Gemini CLI and Qwen Code): a
//! skill (`--skill`, its description in the skills the CLI lists), a command (`--command`, run
//! as `/<name> <args>`: its expanded prompt is the user turn) and, for Qwen Code, a subagent
//! (`--agent`, its description in the agent tool's). Each brings a unique marker in the text only
//! that listing shows (a skill's folder name also appears in the CLI's directory listing, so the
//! marker is in its description), and each has its negative control: the same CLI, shape and
//! turn with no session must not show the marker.

#![allow(clippy::disallowed_methods)] // xtask writes its scratch inputs under the temp dir

use std::path::Path;

use anyhow::Result;

use super::install::{Cli, Installed};
use super::launch;
use super::routes::{self, Bench, Check, RouteRow, Shape};

/// The inputs checked for one CLI (none for the CLIs qualified before these checks).
pub fn check(bench: &Bench<'_>, cli: &Installed) -> Vec<RouteRow> {
    let mut inputs: Vec<Input> = match cli.cli {
        Cli::Gemini | Cli::Qwen => vec![Input::Skill, Input::Command],
        _ => Vec::new(),
    };
    if cli.cli == Cli::Qwen {
        inputs.push(Input::Agent);
    }
    inputs
        .into_iter()
        .map(|input| {
            let workspace = input.workspace();
            routes::guard(cli, workspace, reach(bench, cli, input))
        })
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Input {
    Skill,
    Command,
    Agent,
}

/// The name every input is projected under.
const NAME: &str = "pfqinput";

impl Input {
    fn workspace(self) -> &'static str {
        match self {
            Input::Skill => "AGENTS.md, session skill",
            Input::Command => "AGENTS.md, session command run as /pfqinput",
            Input::Agent => "AGENTS.md, session subagent",
        }
    }

    /// The file the session brings, carrying `marker`, written under `dir`; the acquire
    /// arguments naming it.
    fn bring(self, cli: Cli, dir: &Path, marker: &str) -> Result<Vec<String>> {
        let (flag, path, text) = match self {
            Input::Skill => (
                "--skill",
                dir.join(NAME),
                format!(
                    "---\nname: {NAME}\ndescription: Qualification skill {marker}; never needed.\n---\nDo nothing.\n"
                ),
            ),
            Input::Agent => (
                "--agent",
                dir.join(format!("{NAME}.md")),
                format!(
                    "---\nname: {NAME}\ndescription: Qualification agent {marker}; never needed.\n---\nDo nothing.\n"
                ),
            ),
            // Gemini CLI reads TOML commands only; Qwen Code reads Markdown (and TOML).
            Input::Command if cli == Cli::Gemini => (
                "--command",
                dir.join(format!("{NAME}.toml")),
                format!(
                    "description = \"Qualification\"\nprompt = \"Command {marker}: {{{{args}}}}\"\n"
                ),
            ),
            Input::Command => (
                "--command",
                dir.join(format!("{NAME}.md")),
                format!("---\ndescription: Qualification\n---\nCommand {marker}: {{{{args}}}}\n"),
            ),
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

    fn route(self, cli: Cli) -> &'static str {
        match (self, cli) {
            (Input::Skill, Cli::Gemini) => "skill: .gemini/skills/<name>/",
            (Input::Skill, _) => "skill: .qwen/skills/<name>/",
            (Input::Command, Cli::Gemini) => "command: .gemini/commands/<name>.toml",
            (Input::Command, _) => "command: .qwen/commands/<name>.md",
            (Input::Agent, _) => "agent: .qwen/agents/<name>.md",
        }
    }

    /// The user turn: the command's invocation, else the usual turn.
    fn turn(self) -> String {
        match self {
            Input::Command => format!("/{NAME} now"),
            _ => launch::USER_TURN.to_string(),
        }
    }
}

fn reach(bench: &Bench<'_>, cli: &Installed, input: Input) -> Result<RouteRow> {
    let shape: Shape = routes::shape_agents;
    let s = bench.scratch(cli)?;
    shape(&s.ws, &s.home)?;
    let marker = bench.marker();
    let extra = input.bring(cli.cli, &s.base, &marker)?;
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let session = routes::acquire(bench, cli, &s, "Session text: answer briefly.", &extra)?;
    let mut argv = cli.argv.clone();
    argv.extend(launch::turn_args(cli.cli, bench.capture, &input.turn()));
    argv.extend(session.launch_args.iter().cloned());
    let outcome = launch::run(&argv, &s.ws, &session.env, bench.capture);
    routes::release(bench, &s, &session.token, &session.env)?;
    let after = routes::tree(&s.ws)?;
    // The control: the same shape and turn, no session.
    let c = bench.scratch(cli)?;
    shape(&c.ws, &c.home)?;
    let env = launch::environment(cli, &c.home, bench.capture);
    let mut argv = cli.argv.clone();
    argv.extend(launch::turn_args(cli.cli, bench.capture, &input.turn()));
    let control = launch::run(&argv, &c.ws, &env, bench.capture)?;
    let control_clean = control.reached_model() && !control.model_text().contains(&marker);
    let changed = routes::tree_difference(&after, &routes::tree(&c.ws)?);
    let check = Check {
        route: input.route(cli.cli),
        workspace: input.workspace(),
        marker: &marker,
        expected: true,
        // The receipt's verdict is about the session text, not this input.
        receipt: None,
        control_clean,
        note: changed.clone().unwrap_or_default(),
    };
    let mut row = routes::row(cli, &outcome?, check);
    row.ok &= changed.is_none();
    Ok(row)
}
