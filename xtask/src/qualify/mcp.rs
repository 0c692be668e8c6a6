//! The MCP route check: a session's MCP server reaches the CLI's tool list. A tiny stdio MCP
//! server ([`PROBE_SERVER`], a Node script: the CLIs run on Node, so it is always there) exposes one
//! tool with a unique name; the session brings it with `projectfile acquire --mcp-config` (Claude:
//! a private `--mcp-config=<file>`; Codex: `-c mcp_servers.<name>=…` overrides; Gemini CLI: merged
//! into the project's `.gemini/settings.json` with `"trust": true`; Qwen Code: a private
//! `--mcp-config=<file>`, its tools deferred behind `tool_search` but named in the request;
//! opencode: `mcp` in the private `OPENCODE_CONFIG`; Copilot: `--additional-mcp-config @<file>`),
//! the CLI runs one
//! turn against the capture endpoint, and the tool's name is looked for in the model request it
//! sent (the tool list). The negative control runs the same CLI with no session: the name must be
//! absent.
//!
//! Claude Code 2.1.332 defers MCP tools behind its tool search unless `ENABLE_TOOL_SEARCH=false`
//! (then they are sent in `tools` directly, as 2.1.233 and 2.1.284 do); the qualification
//! environment sets it ([`super::launch::environment`]).

#![allow(clippy::disallowed_methods)] // xtask writes its scratch files under the temp dir

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::install::{Cli, Installed};
use super::routes::{self, Bench, RouteRow};

/// A stdio MCP server (newline-delimited JSON-RPC 2.0) with one tool, named by its first argument.
pub const PROBE_SERVER: &str = r#"// projectfile qualification: a stdio MCP server exposing one uniquely named tool.
const tool = process.argv[2];
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (msg.id === undefined || msg.id === null) return;
  const reply = (result) => send({ jsonrpc: "2.0", id: msg.id, result });
  switch (msg.method) {
    case "initialize":
      return reply({
        protocolVersion: (msg.params && msg.params.protocolVersion) || "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "projectfile-qualify-probe", version: "1.0.0" },
      });
    case "tools/list":
      return reply({ tools: [{
        name: tool,
        description: "Qualification probe tool " + tool + "; never needed.",
        inputSchema: { type: "object", properties: {} },
      }] });
    case "tools/call":
      return reply({ content: [{ type: "text", text: "ok" }] });
    case "ping":
      return reply({});
    default:
      return send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "method not found" } });
  }
});
"#;

/// `node` on `PATH` (absolute, so the CLI's own environment for MCP servers does not matter).
fn node() -> Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("node"))
        .find(|candidate| candidate.is_file())
        .context("node is not on PATH: the probe MCP server cannot run")
}

/// Writes the probe server and a `--mcp-config` map naming it with `tool` into `dir`; returns
/// the map's path.
pub fn write_probe(dir: &Path, tool: &str) -> Result<PathBuf> {
    let script = dir.join("mcp-probe.js");
    std::fs::write(&script, PROBE_SERVER)?;
    let servers = serde_json::json!({
        "pfqprobe": {
            "command": node()?.to_string_lossy(),
            "args": [script.to_string_lossy(), tool],
        }
    });
    let map = dir.join("mcp-servers.json");
    std::fs::write(&map, servers.to_string())?;
    Ok(map)
}

/// The MCP checks for every CLI but Pi (which has no MCP): through `acquire` and a launch with
/// the receipt's arguments and env, as a host does; and through `projectfile run`, with no
/// `ENABLE_TOOL_SEARCH` in the caller's environment (the receipt's `env` must bring what the CLI
/// needs).
pub fn check(bench: &Bench<'_>, cli: &Installed) -> Vec<RouteRow> {
    if cli.cli == Cli::Pi {
        return Vec::new();
    }
    let acquired = "AGENTS.md, session MCP server";
    let run = "AGENTS.md, session MCP server, projectfile run";
    vec![
        routes::guard(cli, acquired, route(bench, cli, acquired)),
        routes::guard(cli, run, run_route(bench, cli, run)),
    ]
}

/// The workspace shape of the MCP checks.
fn shape(cli: &Installed) -> routes::Shape {
    if cli.cli == Cli::Codex {
        routes::shape_git_agents
    } else {
        routes::shape_agents
    }
}

/// `projectfile run … --mcp-config <probe> -- <cli> <turn>`: the caller's environment without
/// `ENABLE_TOOL_SEARCH`, so only the receipt's `env` can turn the deferral off.
fn run_route(bench: &Bench<'_>, cli: &Installed, workspace: &str) -> Result<RouteRow> {
    let shape = shape(cli);
    let s = bench.scratch(cli)?;
    shape(&s.ws, &s.home)?;
    let tool = format!("pfq_tool_{}", bench.marker().to_lowercase());
    let map = write_probe(&s.base, &tool)?;
    let mut argv = vec![
        bench.projectfile.to_string_lossy().into_owned(),
        "run".into(),
    ];
    argv.extend(routes::session_args(
        cli,
        &s,
        "Session text: answer briefly.",
    ));
    argv.extend(["--mcp-config".into(), map.to_string_lossy().into_owned()]);
    argv.push("--".into());
    argv.push(cli.cli.command().into());
    argv.extend(super::launch::cli_args(cli.cli, bench.capture));
    let mut env = super::launch::environment(cli, &s.home, bench.capture);
    env.retain(|(key, _)| key != "ENABLE_TOOL_SEARCH");
    let outcome = super::launch::run(&argv, &s.ws, &env, bench.capture)?;
    let control = bench.control(cli, shape, &tool)?;
    let check = routes::Check {
        route: "mcp: projectfile run --mcp-config",
        workspace,
        marker: &tool,
        expected: true,
        receipt: None,
        control_clean: control,
        note: format!("tool {tool} looked for; ENABLE_TOOL_SEARCH only from the receipt's env"),
    };
    Ok(routes::row(cli, &outcome, check))
}

fn route(bench: &Bench<'_>, cli: &Installed, workspace: &str) -> Result<RouteRow> {
    let shape = shape(cli);
    let s = bench.scratch(cli)?;
    shape(&s.ws, &s.home)?;
    let tool = format!("pfq_tool_{}", bench.marker().to_lowercase());
    let map = write_probe(&s.base, &tool)?;
    let map = map.to_string_lossy().into_owned();
    let extra = ["--mcp-config", map.as_str()];
    let session = routes::acquire(bench, cli, &s, "Session text: answer briefly.", &extra)?;
    let outcome = routes::launch_in_session(bench, cli, &s, &session, &session.launch_args);
    routes::release(bench, &s, &session.token, &session.env)?;
    let control = bench.control(cli, shape, &tool)?;
    let route = match cli.cli {
        Cli::Claude | Cli::Qwen => "mcp: private --mcp-config=<file>",
        Cli::Gemini => "mcp: merged .gemini/settings.json, \"trust\": true",
        Cli::Opencode => "mcp: `mcp` in the private OPENCODE_CONFIG",
        Cli::Copilot => "mcp: --additional-mcp-config @<file>",
        _ => "mcp: -c mcp_servers.<name>=<TOML>",
    };
    let check = routes::Check {
        route,
        workspace,
        marker: &tool,
        expected: true,
        // The receipt's verdict is about the session text, not the tools.
        receipt: None,
        control_clean: control,
        note: format!("tool {tool} looked for in the model request"),
    };
    Ok(routes::row(cli, &outcome?, check))
}
