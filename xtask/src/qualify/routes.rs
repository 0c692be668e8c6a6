//! The route checks: for each installed CLI, a session with a unique marker is projected by the
//! real `projectfile` binary into a workspace shape, the CLI runs one turn against the capture
//! endpoint, and the marker is looked for in the requests it sent. Each check has a negative
//! control, the same shape and CLI with no session, which must not show the marker: proof the
//! check can fail.
//!
//! Plain routes go through `projectfile acquire`, a launch with the receipt's `launch_args` and
//! `env` (as a host does) and `projectfile release`; linked runtimes go through `projectfile run
//! --runtime-root` in both modes (builder, and run under `--sandbox`). After a plain route's
//! release the workspace must be byte for byte what the control run left of the same shape (the
//! CLI without a session): projectfile left nothing behind and lost nothing, whatever the CLI
//! writes on its own.

#![allow(clippy::disallowed_methods)] // xtask writes its scratch workspaces under target/

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

use super::capture::Capture;
use super::install::{Cli, Installed};
use super::launch::{self, Outcome};

/// One row of the route table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RouteRow {
    pub provider: String,
    pub version: String,
    /// Where the session text went (`block AGENTS.md`, `launch_argument`, …) or the fact checked.
    pub route: String,
    pub workspace: String,
    pub delivered: bool,
    pub expected: bool,
    /// What the acquire receipt's `delivery` verdict said (`None`: the row checks a fact, not a
    /// launch the receipt describes).
    pub receipt: Option<bool>,
    /// The negative control stayed clean (the marker was absent without a session).
    pub control_clean: bool,
    /// `delivered == expected`, the receipt's verdict agrees, the control clean, and the CLI
    /// reached the endpoint.
    pub ok: bool,
    pub note: String,
}

/// The shared pieces of every check.
pub struct Bench<'a> {
    pub root: &'a Path,
    pub projectfile: &'a Path,
    /// Where the pinned CLIs are installed (read by the sandboxed runs).
    pub npm: &'a Path,
    pub capture: &'a Capture,
    pub scratch: PathBuf,
    pub counter: std::cell::Cell<u32>,
}

/// A fresh scratch folder with `ws/`, `home/` and `state/`.
pub(super) struct Scratch {
    pub ws: PathBuf,
    pub home: PathBuf,
    pub state: PathBuf,
    pub base: PathBuf,
}

impl Bench<'_> {
    pub(super) fn scratch(&self, cli: &Installed) -> Result<Scratch> {
        let n = self.counter.get() + 1;
        self.counter.set(n);
        let base = self.scratch.join(format!("{n:04}"));
        if base.exists() {
            std::fs::remove_dir_all(&base)?;
        }
        let scratch = Scratch {
            ws: base.join("ws"),
            home: base.join("home"),
            state: base.join("state"),
            base,
        };
        for dir in [&scratch.ws, &scratch.home, &scratch.state] {
            std::fs::create_dir_all(dir)?;
        }
        launch::prepare_home(cli.cli, &scratch.home, self.capture)?;
        Ok(scratch)
    }

    pub(super) fn marker(&self) -> String {
        format!("PFQMARK{:04}X", self.counter.get())
    }

    fn projectfile(&self, args: &[&str], env: &[(String, String)]) -> Result<Value> {
        let out = Command::new(self.projectfile)
            .args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("{}: cannot run", self.projectfile.display()))?;
        if !out.status.success() {
            bail!(
                "projectfile {}: {}",
                args.first().copied().unwrap_or(""),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        serde_json::from_slice(&out.stdout).context("projectfile printed no JSON")
    }

    /// `projectfile resolve --json --as <the CLI's provider>` over the scratch workspace, started
    /// in `cwd`, with the scratch home.
    fn resolve_as(
        &self,
        cli: &Installed,
        s: &Scratch,
        cwd: &Path,
        env: &[(String, String)],
    ) -> Result<Value> {
        let (ws, cwd, home) = (
            s.ws.to_string_lossy(),
            cwd.to_string_lossy(),
            s.home.to_string_lossy(),
        );
        let args = ["resolve", "--json", "--as", cli.cli.provider()];
        let paths = ["--workspace", &ws, "--cwd", &cwd, "--home", &home];
        let all: Vec<&str> = args.iter().chain(paths.iter()).copied().collect();
        self.projectfile(&all, env)
    }

    /// Runs the CLI with no session in a fresh copy of the shape: the marker must not appear.
    pub(super) fn control(&self, cli: &Installed, shape: Shape, marker: &str) -> Result<bool> {
        self.control_tree(cli, shape, marker)
            .map(|(clean, _)| clean)
    }

    /// [`Bench::control`], and the workspace as that run left it.
    pub(super) fn control_tree(
        &self,
        cli: &Installed,
        shape: Shape,
        marker: &str,
    ) -> Result<(bool, Tree)> {
        let (outcome, tree) = self.bare_tree(cli, shape)?;
        let clean = outcome.reached_model() && !outcome.model_text().contains(marker);
        Ok((clean, tree))
    }

    /// Runs the CLI with no session in a fresh copy of the shape.
    pub(super) fn bare(&self, cli: &Installed, shape: Shape) -> Result<Outcome> {
        self.bare_tree(cli, shape).map(|(outcome, _)| outcome)
    }

    /// [`Bench::bare`], and the workspace as that run left it.
    fn bare_tree(&self, cli: &Installed, shape: Shape) -> Result<(Outcome, Tree)> {
        let scratch = self.scratch(cli)?;
        shape(&scratch.ws, &scratch.home)?;
        let env = launch::environment(cli, &scratch.home, self.capture);
        let mut argv = cli.argv.clone();
        argv.extend(launch::cli_args(cli.cli, self.capture));
        let outcome = launch::run(&argv, &scratch.ws, &env, self.capture)?;
        Ok((outcome, tree(&scratch.ws)?))
    }
}

/// A workspace as files and folders relative to it, each file with its bytes (links by target).
pub(super) type Tree = BTreeMap<PathBuf, Option<Vec<u8>>>;

/// Every file, folder and link below `dir`, not following links.
pub(super) fn tree(dir: &Path) -> Result<Tree> {
    let mut out = Tree::new();
    for entry in walkdir::WalkDir::new(dir).follow_links(false).min_depth(1) {
        let entry = entry?;
        let rel = entry.path().strip_prefix(dir)?.to_path_buf();
        let kind = entry.file_type();
        let bytes = if kind.is_file() {
            Some(std::fs::read(entry.path())?)
        } else if kind.is_symlink() {
            Some(
                std::fs::read_link(entry.path())?
                    .into_os_string()
                    .into_encoded_bytes(),
            )
        } else {
            None
        };
        out.insert(rel, bytes);
    }
    Ok(out)
}

/// `None` when `after` is `control`, else the paths that differ, for the note.
pub(super) fn tree_difference(after: &Tree, control: &Tree) -> Option<String> {
    let differ: Vec<String> = after
        .keys()
        .chain(control.keys())
        .filter(|path| after.get(*path) != control.get(*path))
        .map(|path| path.display().to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    (!differ.is_empty()).then(|| {
        format!(
            "the workspace after release is not what the CLI alone leaves: {}",
            differ.join(", ")
        )
    })
}

/// Writes a workspace shape into `ws` (and, for user files, `home`).
pub(super) type Shape = fn(&Path, &Path) -> Result<()>;

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text).with_context(|| format!("{}: cannot write", path.display()))
}

const RULES: &str = "Project rules: keep answers short.\n";

pub(super) fn shape_agents(ws: &Path, _: &Path) -> Result<()> {
    write(&ws.join("AGENTS.md"), RULES)
}
pub(super) fn shape_git_agents(ws: &Path, home: &Path) -> Result<()> {
    std::fs::create_dir_all(ws.join(".git"))?;
    shape_agents(ws, home)
}
fn shape_git_only(ws: &Path, _: &Path) -> Result<()> {
    Ok(std::fs::create_dir_all(ws.join(".git"))?)
}
fn shape_override(ws: &Path, home: &Path) -> Result<()> {
    shape_git_agents(ws, home)?;
    write(
        &ws.join("AGENTS.override.md"),
        "Local override: be precise.\n",
    )
}
fn shape_claude_md(ws: &Path, home: &Path) -> Result<()> {
    shape_agents(ws, home)?;
    write(&ws.join("CLAUDE.md"), "Claude rules of the project.\n")
}
fn shape_empty(_: &Path, _: &Path) -> Result<()> {
    Ok(())
}
/// A git repository as git finds one (`HEAD`, `objects/`, `refs/`), which opencode and Copilot
/// ask git for (an empty `.git` folder is none to them).
fn shape_repo(ws: &Path, _: &Path) -> Result<()> {
    for dir in ["objects", "refs"] {
        std::fs::create_dir_all(ws.join(".git").join(dir))?;
    }
    write(&ws.join(".git/HEAD"), "ref: refs/heads/main\n")
}
fn shape_repo_agents(ws: &Path, home: &Path) -> Result<()> {
    shape_repo(ws, home)?;
    shape_agents(ws, home)
}
/// A project `CLAUDE.md` (carrying [`USER_MARKER`]) and no `AGENTS.md`, in a repository.
fn shape_repo_claude(ws: &Path, home: &Path) -> Result<()> {
    shape_repo(ws, home)?;
    write(
        &ws.join("CLAUDE.md"),
        &format!("Claude rules of the project {USER_MARKER}.\n"),
    )
}
/// [`shape_repo_claude`] with an `AGENTS.md`: what a block route would leave opencode.
fn shape_repo_claude_agents(ws: &Path, home: &Path) -> Result<()> {
    shape_repo_claude(ws, home)?;
    shape_agents(ws, home)
}
/// The user's own file the opencode check looks for: a project `CLAUDE.md` opencode would drop
/// for any `AGENTS.md`.
const USER_MARKER: &str = "PFQUSERCLAUDEX";
/// A project `AGENTS.md` of `kib` KiB of prose.
fn prose(kib: usize) -> String {
    let line = "Filler line to bring this file near the budget, no instructions here.\n";
    line.repeat(kib * 1024 / line.len())
}
/// A 480 KiB `AGENTS.md`: past Copilot's prompt limit (about 448 KiB of prose with its own
/// prompt and tools).
fn shape_copilot_budget(ws: &Path, home: &Path) -> Result<()> {
    shape_repo(ws, home)?;
    write(&ws.join("AGENTS.md"), &prose(480))
}
/// A project AGENTS.md of 40 KiB (more than Codex's 32 KiB budget).
fn shape_codex_budget(ws: &Path, home: &Path) -> Result<()> {
    shape_git_only(ws, home)?;
    let mut text = String::new();
    let mut line = 0;
    while text.len() < 40 * 1024 {
        line += 1;
        text.push_str(&format!(
            "Rule {line}: follow the house style in every file you touch.\n"
        ));
    }
    write(&ws.join("AGENTS.md"), &text)
}
fn shape_pi_append(ws: &Path, _: &Path) -> Result<()> {
    write(
        &ws.join(".pi/APPEND_SYSTEM.md"),
        "Project append: be kind.\n",
    )
}

fn shape_gemini(ws: &Path, _: &Path) -> Result<()> {
    write(&ws.join("GEMINI.md"), RULES)
}
fn shape_git_gemini(ws: &Path, home: &Path) -> Result<()> {
    std::fs::create_dir_all(ws.join(".git"))?;
    shape_gemini(ws, home)
}
/// No git root, and a subfolder to start Gemini CLI in.
fn shape_gemini_sub(ws: &Path, home: &Path) -> Result<()> {
    std::fs::create_dir_all(ws.join("sub"))?;
    shape_gemini(ws, home)
}
fn shape_qwen(ws: &Path, _: &Path) -> Result<()> {
    write(&ws.join("QWEN.md"), RULES)
}
fn shape_git_qwen_agents(ws: &Path, home: &Path) -> Result<()> {
    shape_git_agents(ws, home)?;
    shape_qwen(ws, home)
}
/// A project whose own `.qwen/settings.json` names `AGENTS.md` alone as its context file.
fn shape_qwen_file_name(ws: &Path, home: &Path) -> Result<()> {
    shape_git_agents(ws, home)?;
    write(
        &ws.join(".qwen/settings.json"),
        "{\"context\": {\"fileName\": [\"AGENTS.md\"]}}\n",
    )
}

/// The global append text the Pi check looks for (in the user's own file).
const PI_GLOBAL_MARKER: &str = "PFQGLOBALAPPENDX";

fn shape_pi_global(ws: &Path, home: &Path) -> Result<()> {
    shape_pi_append(ws, home)?;
    write(
        &home.join(".pi/agent/APPEND_SYSTEM.md"),
        &format!("User global append {PI_GLOBAL_MARKER}.\n"),
    )
}

/// The user's global append file alone, no project one.
fn shape_pi_user_global(ws: &Path, home: &Path) -> Result<()> {
    shape_pi_global(ws, home)?;
    Ok(std::fs::remove_file(ws.join(".pi/APPEND_SYSTEM.md"))?)
}

/// The route checks for one CLI.
pub fn check_cli(bench: &Bench<'_>, cli: &Installed) -> Vec<RouteRow> {
    let mut rows = Vec::new();
    let plain: Vec<(&str, Shape)> = match cli.cli {
        Cli::Codex => vec![
            ("AGENTS.md, .git", shape_git_agents),
            ("no AGENTS.md, .git", shape_git_only),
            ("AGENTS.md and AGENTS.override.md", shape_override),
        ],
        Cli::Claude => vec![
            ("AGENTS.md", shape_agents),
            ("AGENTS.md and a project CLAUDE.md", shape_claude_md),
        ],
        Cli::Pi => vec![
            ("empty", shape_empty),
            ("own .pi/APPEND_SYSTEM.md", shape_pi_append),
        ],
        Cli::Gemini => vec![
            ("no GEMINI.md, .git", shape_git_only),
            ("GEMINI.md, .git", shape_git_gemini),
            ("GEMINI.md, no git root", shape_gemini),
        ],
        Cli::Qwen => vec![
            ("no QWEN.md, .git", shape_git_only),
            ("QWEN.md and AGENTS.md, .git", shape_git_qwen_agents),
            ("QWEN.md, no git root", shape_qwen),
        ],
        Cli::Opencode | Cli::Copilot => vec![
            ("empty", shape_empty),
            ("AGENTS.md", shape_agents),
            ("git repository, AGENTS.md", shape_repo_agents),
            ("git repository, project CLAUDE.md", shape_repo_claude),
        ],
    };
    for (workspace, shape) in plain {
        rows.push(guard(
            cli,
            workspace,
            plain_route(bench, cli, workspace, shape, &[]),
        ));
    }
    rows.extend(super::mcp::check(bench, cli));
    rows.extend(super::inputs::check(bench, cli));
    match cli.cli {
        Cli::Codex => rows.extend(codex_budget(bench, cli)),
        Cli::Pi => rows.push(guard(cli, "user global append", pi_global(bench, cli))),
        Cli::Gemini => {
            let workspace = "GEMINI.md, no git root, started in sub/";
            rows.push(guard(
                cli,
                workspace,
                gemini_subfolder(bench, cli, workspace),
            ));
        }
        Cli::Qwen => {
            let workspace = "AGENTS.md, .qwen/settings.json naming AGENTS.md alone";
            rows.push(guard(cli, workspace, qwen_file_name(bench, cli, workspace)));
        }
        Cli::Opencode => {
            let workspace = "project CLAUDE.md, session";
            rows.push(guard(cli, workspace, user_file_kept(bench, cli, workspace)));
        }
        Cli::Copilot => rows.extend(copilot_budget(bench, cli)),
        Cli::Claude => {
            // The private route with the replacing flag (provider option prompt=replace).
            let workspace = "AGENTS.md and a project CLAUDE.md, claude.prompt=replace";
            let replace = ["--provider-option", "claude.prompt=replace"];
            let row = plain_route(bench, cli, workspace, shape_claude_md, &replace);
            rows.push(guard(cli, workspace, row));
        }
    }
    let runtime_shape: Shape = if cli.cli == Cli::Codex {
        shape_git_agents
    } else {
        shape_agents
    };
    for (mode, sandbox) in [("builder", false), ("run", true)] {
        let workspace = format!(
            "linked runtime, {mode}{}",
            if sandbox { ", sandbox" } else { "" }
        );
        let row = runtime_route(bench, cli, &workspace, runtime_shape, mode, sandbox);
        rows.push(guard(cli, &workspace, row));
    }
    rows
}

/// A check that could not run is a failed row with the reason.
pub(super) fn guard(cli: &Installed, workspace: &str, row: Result<RouteRow>) -> RouteRow {
    row.unwrap_or_else(|err| RouteRow {
        provider: cli.cli.provider().into(),
        version: cli.version.clone(),
        route: "-".into(),
        workspace: workspace.into(),
        delivered: false,
        expected: true,
        receipt: None,
        control_clean: false,
        ok: false,
        note: format!("{err:#}"),
    })
}

#[derive(Clone)]
pub(super) struct Session {
    pub token: String,
    via: String,
    pub launch_args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The receipt's `delivery.delivered`.
    pub delivered: Option<bool>,
    /// The launch arguments the verdict added (`delivery.launch_args`).
    verdict_args: Vec<String>,
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The arguments every session command takes: state directory, provider, workspace, prompt.
pub(super) fn session_args(cli: &Installed, s: &Scratch, prompt: &str) -> Vec<String> {
    vec![
        "--state-dir".into(),
        s.state.to_string_lossy().into_owned(),
        "--provider".into(),
        cli.cli.provider().into(),
        "--workspace".into(),
        s.ws.to_string_lossy().into_owned(),
        "--prompt".into(),
        prompt.into(),
    ]
}

pub(super) fn acquire(
    bench: &Bench<'_>,
    cli: &Installed,
    s: &Scratch,
    prompt: &str,
    extra: &[&str],
) -> Result<Session> {
    let env = launch::environment(cli, &s.home, bench.capture);
    let pid = std::process::id().to_string();
    let mut args = vec!["acquire".to_string(), "--json".into()];
    args.extend(session_args(cli, s, prompt));
    args.extend(["--holder-pid".into(), pid]);
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let receipt = bench.projectfile(&args, &env)?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let carrier = &receipt["session_text"];
    let via = match carrier["via"].as_str() {
        Some("block") | Some("owned_file") => {
            format!("{} {}", text(&carrier["via"]), text(&carrier["path"]))
        }
        Some("environment") => format!("environment {}", text(&carrier["var"])),
        Some(other) => other.to_string(),
        None => "none".into(),
    };
    let mut session_env = env;
    if let Some(map) = receipt["env"].as_object() {
        session_env.extend(map.iter().map(|(k, v)| (k.clone(), text(v))));
    }
    Ok(Session {
        token: text(&receipt["token"]),
        via,
        launch_args: strings(&receipt["launch_args"]),
        env: session_env,
        delivered: receipt["delivery"]["delivered"].as_bool(),
        verdict_args: strings(&receipt["delivery"]["launch_args"]),
    })
}

/// The session text carrying `marker`.
fn marker_prompt(marker: &str) -> String {
    format!("Session marker {marker}: answer briefly.")
}

/// A fresh marker and a session carrying it (`extra`: more `acquire` arguments).
fn marked_session(
    bench: &Bench<'_>,
    cli: &Installed,
    s: &Scratch,
    extra: &[&str],
) -> Result<(String, Session)> {
    let marker = bench.marker();
    let session = acquire(bench, cli, s, &marker_prompt(&marker), extra)?;
    Ok((marker, session))
}

pub(super) fn release(
    bench: &Bench<'_>,
    s: &Scratch,
    token: &str,
    env: &[(String, String)],
) -> Result<()> {
    bench
        .projectfile(
            &[
                "release",
                "--json",
                "--state-dir",
                &s.state.to_string_lossy(),
                "--token",
                token,
            ],
            env,
        )
        .map(|_| ())
}

/// Launches the CLI with `launch_args` (the receipt's, or some of them) and the session's env.
pub(super) fn launch_in_session(
    bench: &Bench<'_>,
    cli: &Installed,
    s: &Scratch,
    session: &Session,
    launch_args: &[String],
) -> Result<Outcome> {
    let mut argv = cli.argv.clone();
    argv.extend(launch::cli_args(cli.cli, bench.capture));
    argv.extend(launch_args.iter().cloned());
    launch::run(&argv, &s.ws, &session.env, bench.capture)
}

/// What one row checks, apart from what the CLI sent.
pub(super) struct Check<'a> {
    pub route: &'a str,
    pub workspace: &'a str,
    pub marker: &'a str,
    pub expected: bool,
    /// The receipt's verdict for this launch, when the launch is the one the receipt describes.
    pub receipt: Option<bool>,
    pub control_clean: bool,
    pub note: String,
}

pub(super) fn row(cli: &Installed, outcome: &Outcome, check: Check<'_>) -> RouteRow {
    let Check {
        route,
        workspace,
        marker,
        expected,
        receipt,
        control_clean,
        note,
    } = check;
    let delivered = outcome.model_text().contains(marker);
    let reached = outcome.reached_model();
    let mut parts = Vec::new();
    if !reached {
        parts.push(format!("no model request ({})", outcome.stderr_tail));
    }
    let stray = outcome.stray();
    if !stray.is_empty() {
        parts.push(format!("refused on the way out: {}", stray.join(", ")));
    }
    if receipt.is_some_and(|said| said != delivered) {
        parts.push("the receipt's delivery verdict disagrees with the CLI".into());
    }
    if !note.is_empty() {
        parts.push(note);
    }
    let note = parts.join("; ");
    RouteRow {
        provider: cli.cli.provider().into(),
        version: cli.version.clone(),
        route: route.into(),
        workspace: workspace.into(),
        delivered,
        expected,
        receipt,
        control_clean,
        ok: reached
            && delivered == expected
            && receipt.is_none_or(|said| said == delivered)
            && control_clean,
        note,
    }
}

fn plain_route(
    bench: &Bench<'_>,
    cli: &Installed,
    workspace: &str,
    shape: Shape,
    extra: &[&str],
) -> Result<RouteRow> {
    let s = bench.scratch(cli)?;
    shape(&s.ws, &s.home)?;
    let (marker, session) = marked_session(bench, cli, &s, extra)?;
    let outcome = launch_in_session(bench, cli, &s, &session, &session.launch_args);
    release(bench, &s, &session.token, &session.env)?;
    let after = tree(&s.ws)?;
    let (control, control_tree) = bench.control_tree(cli, shape, &marker)?;
    let outcome = outcome?;
    let changed = tree_difference(&after, &control_tree);
    let mut route = session.via.clone();
    if let Some(flag) = session.launch_args.first().filter(|a| a.starts_with("--")) {
        route.push_str(&format!(" {flag}"));
    }
    // What each Claude flag does to Claude Code's own system prompt: the private file's text is
    // in the system prompt, after (append) or instead of (replace) Claude Code's own.
    let note = match outcome.system_chars(&marker) {
        Some(chars) if session.via == "launch_argument" => format!(
            "system prompt sent: {chars} characters, {} of them the session text",
            marker_prompt(&marker).chars().count()
        ),
        _ => String::new(),
    };
    let note = [note, changed.clone().unwrap_or_default()]
        .into_iter()
        .filter(|n| !n.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let check = Check {
        route: &route,
        workspace,
        marker: &marker,
        expected: true,
        receipt: session.delivered,
        control_clean: control,
        note,
    };
    let mut row = row(cli, &outcome, check);
    row.ok &= changed.is_none();
    Ok(row)
}

/// A route the receipt judges from the workspace root, launched elsewhere: with a session's
/// `GEMINI.md` block in a workspace without a git root, Gemini CLI started in `sub/` reads only
/// `sub/`, so the text does not arrive (expected "no"), and `resolve --as gemini --cwd sub` says
/// so.
fn gemini_subfolder(bench: &Bench<'_>, cli: &Installed, workspace: &str) -> Result<RouteRow> {
    let s = bench.scratch(cli)?;
    shape_gemini_sub(&s.ws, &s.home)?;
    let (marker, session) = marked_session(bench, cli, &s, &[])?;
    let sub = s.ws.join("sub");
    let resolved = bench.resolve_as(cli, &s, &sub, &session.env);
    let read = resolved.map(|r| {
        r["sources"].as_array().is_some_and(|sources| {
            sources
                .iter()
                .any(|s| s["path"].as_str().is_some_and(|p| p.contains("#session")))
        })
    });
    let mut argv = cli.argv.clone();
    argv.extend(launch::cli_args(cli.cli, bench.capture));
    argv.extend(session.launch_args.iter().cloned());
    let outcome = launch::run(&argv, &sub, &session.env, bench.capture);
    release(bench, &s, &session.token, &session.env)?;
    let control = bench.control(cli, shape_gemini_sub, &marker)?;
    let not_read = matches!(read, Ok(false));
    let check = Check {
        route: &format!("{} (started in sub/)", session.via),
        workspace,
        marker: &marker,
        expected: false,
        receipt: None,
        control_clean: control,
        note: format!(
            "resolve --as gemini --cwd sub reports the block not read: {}",
            if not_read { "yes" } else { "NO" }
        ),
    };
    let mut row = row(cli, &outcome?, check);
    row.ok &= not_read;
    Ok(row)
}

/// A known gap, measured: a project whose `.qwen/settings.json` sets `context.fileName` to
/// `AGENTS.md` alone hides `QWEN.md`, so the block does not arrive (expected "no"); the receipt,
/// which reads no settings, says delivered (noted, not judged).
fn qwen_file_name(bench: &Bench<'_>, cli: &Installed, workspace: &str) -> Result<RouteRow> {
    let s = bench.scratch(cli)?;
    shape_qwen_file_name(&s.ws, &s.home)?;
    let (marker, session) = marked_session(bench, cli, &s, &[])?;
    let outcome = launch_in_session(bench, cli, &s, &session, &session.launch_args);
    release(bench, &s, &session.token, &session.env)?;
    let control = bench.control(cli, shape_qwen_file_name, &marker)?;
    let said = session
        .delivered
        .map_or("nothing", |d| if d { "delivered" } else { "not delivered" });
    let check = Check {
        route: &session.via,
        workspace,
        marker: &marker,
        expected: false,
        receipt: None,
        control_clean: control,
        note: format!("a known gap: the receipt, which reads no settings, said {said}"),
    };
    Ok(row(cli, &outcome?, check))
}

/// opencode keeps reading the project's own `CLAUDE.md` while a session holds (the session's
/// text is in a private configuration); the control, the same workspace with an `AGENTS.md`
/// (what a block route would create), shows opencode then drops the `CLAUDE.md`.
fn user_file_kept(bench: &Bench<'_>, cli: &Installed, workspace: &str) -> Result<RouteRow> {
    let s = bench.scratch(cli)?;
    shape_repo_claude(&s.ws, &s.home)?;
    let (marker, session) = marked_session(bench, cli, &s, &[])?;
    let outcome = launch_in_session(bench, cli, &s, &session, &session.launch_args);
    release(bench, &s, &session.token, &session.env)?;
    let outcome = outcome?;
    let control = bench.bare(cli, shape_repo_claude_agents)?;
    let control_clean = control.reached_model() && !control.model_text().contains(USER_MARKER);
    let session_text = outcome.model_text().contains(&marker);
    let check = Check {
        route: "user CLAUDE.md (project's own, no AGENTS.md)",
        workspace,
        marker: USER_MARKER,
        expected: true,
        receipt: None,
        control_clean,
        note: format!(
            "the session text arrived with it: {}; the control adds an AGENTS.md, which hides the CLAUDE.md",
            if session_text { "yes" } else { "NO" }
        ),
    };
    let mut row = row(cli, &outcome, check);
    row.ok &= session_text;
    Ok(row)
}

/// The Copilot budget case: a 480 KiB project `AGENTS.md`, past the prompt limit. The receipt's
/// `env` raises the limit (`COPILOT_PROVIDER_MAX_PROMPT_TOKENS`) and says delivered: launched with
/// it the session text arrives; launched without it Copilot sends nothing at all and exits 1
/// (the reason the variable is there).
fn copilot_budget(bench: &Bench<'_>, cli: &Installed) -> Vec<RouteRow> {
    const RAISE: &str = "COPILOT_PROVIDER_MAX_PROMPT_TOKENS";
    let workspace = "AGENTS.md of 480 KiB, git repository";
    let attempt = || -> Result<Vec<RouteRow>> {
        let s = bench.scratch(cli)?;
        shape_copilot_budget(&s.ws, &s.home)?;
        let (marker, session) = marked_session(bench, cli, &s, &[])?;
        let raised = session
            .env
            .iter()
            .find(|(k, _)| k == RAISE)
            .map(|(_, v)| v.clone());
        let mut bare = session.clone();
        bare.env.retain(|(k, _)| k != RAISE);
        let plain = launch_in_session(bench, cli, &s, &bare, &session.launch_args);
        let with = launch_in_session(bench, cli, &s, &session, &session.launch_args);
        release(bench, &s, &session.token, &session.env)?;
        // Over the limit the control sends nothing either: clean when the marker is absent.
        let control_clean = !bench
            .bare(cli, shape_copilot_budget)?
            .model_text()
            .contains(&marker);
        let plain = plain?;
        let sent_nothing = !plain.reached_model() && plain.status == Some(1);
        let route = format!("{} without the receipt's {RAISE}", session.via);
        let mut first = RouteRow {
            provider: cli.cli.provider().into(),
            version: cli.version.clone(),
            route,
            workspace: workspace.into(),
            delivered: plain.model_text().contains(&marker),
            expected: false,
            receipt: None,
            control_clean,
            ok: false,
            note: format!(
                "Copilot sent no request and exited {:?} ({})",
                plain.status, plain.stderr_tail
            ),
        };
        first.ok = sent_nothing && !first.delivered && control_clean;
        let route = format!(
            "{} + {RAISE}={}",
            session.via,
            raised.as_deref().unwrap_or("(not in the receipt's env)")
        );
        let mut second = row(
            cli,
            &with?,
            Check {
                route: &route,
                workspace,
                marker: &marker,
                expected: true,
                receipt: session.delivered,
                control_clean,
                note: String::new(),
            },
        );
        second.ok &= raised.is_some();
        Ok(vec![first, second])
    };
    attempt().unwrap_or_else(|err| vec![guard(cli, workspace, Err(err))])
}

/// The Codex budget case: a 40 KiB project AGENTS.md. The receipt adds
/// `-c project_doc_max_bytes=<n>` and says delivered: launched with the receipt's arguments the
/// text arrives; launched without that argument the block is past the 32 KiB Codex reads (the
/// reason the argument is there), and `resolve --as codex` reports the cut.
fn codex_budget(bench: &Bench<'_>, cli: &Installed) -> Vec<RouteRow> {
    let workspace = "AGENTS.md of 40 KiB, .git";
    let attempt = || -> Result<Vec<RouteRow>> {
        let s = bench.scratch(cli)?;
        shape_codex_budget(&s.ws, &s.home)?;
        let (marker, session) = marked_session(bench, cli, &s, &[])?;
        let resolved = bench.resolve_as(cli, &s, &s.ws, &session.env);
        let cut = resolved.map(|r| budget_cut_session(&r)).unwrap_or(false);
        let without: Vec<String> = session
            .launch_args
            .iter()
            .filter(|a| !session.verdict_args.contains(a))
            .cloned()
            .collect();
        let plain = launch_in_session(bench, cli, &s, &session, &without);
        let raised = launch_in_session(bench, cli, &s, &session, &session.launch_args);
        release(bench, &s, &session.token, &session.env)?;
        let control = bench.control(cli, shape_codex_budget, &marker)?;
        let note = format!(
            "resolve --as codex reports the block cut at the default budget: {}",
            if cut { "yes" } else { "NO" }
        );
        let route = format!("{} without the receipt's budget argument", session.via);
        let mut first = row(
            cli,
            &plain?,
            Check {
                route: &route,
                workspace,
                marker: &marker,
                expected: false,
                receipt: None,
                control_clean: control,
                note,
            },
        );
        first.ok &= cut;
        let raises = session
            .verdict_args
            .iter()
            .any(|a| a.starts_with("project_doc_max_bytes="));
        let route = format!("{} + {}", session.via, session.verdict_args.join(" "));
        let mut second = row(
            cli,
            &raised?,
            Check {
                route: &route,
                workspace,
                marker: &marker,
                expected: true,
                receipt: session.delivered,
                control_clean: control,
                note: String::new(),
            },
        );
        second.ok &= raises;
        Ok(vec![first, second])
    };
    attempt().unwrap_or_else(|err| vec![guard(cli, workspace, Err(err))])
}

/// Whether a resolve receipt lists a session block as cut by the budget.
fn budget_cut_session(receipt: &Value) -> bool {
    receipt["omitted"].as_array().is_some_and(|omitted| {
        omitted.iter().any(|o| {
            o["path"].as_str().is_some_and(|p| p.contains("#session"))
                && o["reason"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("budget_"))
        })
    })
}

/// Pi reads the project's `.pi/APPEND_SYSTEM.md` instead of the user's global one: while a
/// session holds, the user's global append text does not reach the model (expected "no").
fn pi_global(bench: &Bench<'_>, cli: &Installed) -> Result<RouteRow> {
    let s = bench.scratch(cli)?;
    shape_pi_global(&s.ws, &s.home)?;
    let session = acquire(bench, cli, &s, "Session text.", &[])?;
    let outcome = launch_in_session(bench, cli, &s, &session, &session.launch_args);
    release(bench, &s, &session.token, &session.env)?;
    // The control: without our file in the project, the user's global append does arrive.
    let control = bench.bare(cli, shape_pi_user_global)?;
    let control_clean = control.model_text().contains(PI_GLOBAL_MARKER);
    let note =
        "the user's ~/.pi/agent/APPEND_SYSTEM.md is hidden while the project has one".to_string();
    let check = Check {
        route: "user ~/.pi/agent/APPEND_SYSTEM.md",
        workspace: "own .pi/APPEND_SYSTEM.md + user global append",
        marker: PI_GLOBAL_MARKER,
        expected: false,
        receipt: None,
        control_clean,
        note,
    };
    Ok(row(cli, &outcome?, check))
}

fn runtime_route(
    bench: &Bench<'_>,
    cli: &Installed,
    workspace: &str,
    shape: Shape,
    mode: &str,
    sandbox: bool,
) -> Result<RouteRow> {
    let s = bench.scratch(cli)?;
    shape(&s.ws, &s.home)?;
    let marker = bench.marker();
    let runtime_root = s.base.join("runtimes");
    let session_id = format!("code:project:q{}", bench.counter.get());
    let mut argv = vec![
        bench.projectfile.to_string_lossy().into_owned(),
        "run".into(),
        "--json".into(),
    ];
    argv.extend(session_args(cli, &s, &marker_prompt(&marker)));
    argv.extend(
        [
            "--runtime-root",
            &runtime_root.to_string_lossy(),
            "--user",
            "qualify",
            "--project-id",
            "p1",
            "--session-id",
            &session_id,
            "--mode",
            mode,
        ]
        .map(String::from),
    );
    if sandbox {
        let cache = bench.root.join("target/qualify");
        argv.extend([
            "--sandbox".into(),
            "--sandbox-read".into(),
            bench.npm.to_string_lossy().into_owned(),
        ]);
        argv.extend([
            "--sandbox-read".into(),
            cache.join("bin").to_string_lossy().into_owned(),
        ]);
        argv.extend([
            "--sandbox-write".into(),
            s.home.to_string_lossy().into_owned(),
        ]);
    }
    argv.push("--".into());
    argv.push(cli.cli.command().into());
    argv.extend(launch::cli_args(cli.cli, bench.capture));
    let env = launch::environment(cli, &s.home, bench.capture);
    let outcome = launch::run(&argv, &s.ws, &env, bench.capture)?;
    let control = bench.control(cli, shape, &marker)?;
    let note = match outcome.status {
        Some(0) | None => String::new(),
        Some(code) => format!("run exited {code}"),
    };
    // `run --json` prints its acquire receipt as the first line, before the CLI's own output.
    let receipt = outcome
        .stdout
        .lines()
        .next()
        .and_then(|line| serde_json::from_str::<Value>(line).ok())
        .and_then(|r| r["delivery"]["delivered"].as_bool());
    let route = format!("run --runtime-root --mode {mode}");
    let check = Check {
        route: &route,
        workspace,
        marker: &marker,
        expected: true,
        receipt,
        control_clean: control,
        note,
    };
    Ok(row(cli, &outcome, check))
}
