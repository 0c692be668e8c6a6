//! `cargo xtask qualify [--provider P] [--quick] [--record]`: live qualification against the real
//! CLIs.
//!
//! 1. Installs the pinned CLIs from the npm registry into `target/qualify/npm/` ([`install`]).
//! 2. Starts the capture endpoint on loopback ([`capture`]).
//! 3. Route checks ([`routes`]): a session with a unique marker, projected by this worktree's
//!    `projectfile` binary, for every route (the `AGENTS.md` block, the override file, the private
//!    file with either Claude flag, Pi's append file, the Codex budget case with and without the
//!    raised budget, linked runtimes in builder mode and in run mode under the sandbox), each
//!    with a negative control; the acquire receipt's delivery verdict must agree with what the
//!    CLI sent.
//!    The MCP check ([`mcp`]): a session's MCP server's one uniquely named tool reaches the
//!    CLI's tool list (every CLI but Pi, which has none), with a control. The inputs check
//!    ([`inputs`]), for all seven CLIs: a session's skill (where the CLI lists skills), command,
//!    subagent and hook, each from its neutral definition, converted by `projectfile acquire`:
//!    the command's expanded prompt (`$ARGUMENTS` replaced) and the subagent's description reach
//!    the request, the `session_start` hook's file appears, each with a control; a kind the CLI
//!    cannot take is refused (exit 1, error kind `provider`, the kind and the provider named,
//!    the workspace untouched); Gemini CLI's subagent goes through a runtime with a private CLI
//!    home.
//! 4. The discovery differential ([`shapes`]): every shape of `tests/data/discovery_shapes.json`,
//!    what each CLI loaded against what `projectfile resolve --as` lists.
//! 5. Prints both tables and writes `target/qualify/results.json`.
//!
//! `--quick` only runs the capture endpoint's self-test with a fake client (no registry, no CLI);
//! `--record` also writes what each CLI loaded into the shapes file; `--mcp-only` runs only the
//! MCP check, `--inputs-only` only the inputs check; `--npm-cache DIR` runs CLIs another worktree
//! installed, without touching them. Exit status: failure when any row fails. Without the
//! registry, cached CLIs still run and missing ones are listed as such.

#![allow(clippy::disallowed_methods)] // xtask writes its results under target/

mod capture;
mod inputs;
pub(crate) mod install;
mod launch;
mod mcp;
mod routes;
mod shape_format;
mod shapes;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use install::{Installed, Missing};
use routes::RouteRow;
use shapes::DiffRow;

/// Options of `cargo xtask qualify`.
#[derive(Debug, Default, clap::Args)]
pub struct Options {
    /// Only this provider's CLI: claude, codex, pi, gemini, qwen, opencode or copilot (cursor,
    /// muse and agy are not on the npm registry).
    #[arg(long, value_name = "NAME", value_parser = ["claude", "codex", "pi", "gemini", "qwen", "opencode", "copilot"])]
    provider: Option<String>,
    /// Only the capture endpoint's self-test with a fake client (no CLI, no network).
    #[arg(long)]
    quick: bool,
    /// Write what each CLI loaded into tests/data/discovery_shapes.json.
    #[arg(long)]
    record: bool,
    /// Use the pinned CLIs installed under DIR (another worktree's `target/qualify/npm`) as they
    /// are: nothing is installed there and the registry is not asked; pins missing there are
    /// listed as not installed.
    #[arg(long, value_name = "DIR")]
    npm_cache: Option<PathBuf>,
    /// Only the MCP check (a session's MCP server reaches the CLI's tool list), not the other
    /// routes nor the discovery differential.
    #[arg(long, conflicts_with = "record")]
    mcp_only: bool,
    /// Only the inputs check (a session's skill, command, subagent and hook, from the neutral
    /// definitions, reach each CLI or are refused), not the other routes nor the discovery
    /// differential.
    #[arg(long, conflicts_with_all = ["record", "mcp_only"])]
    inputs_only: bool,
}

/// `cargo xtask qualify`.
pub fn run(root: &Path, options: &Options) -> Result<()> {
    if options.quick {
        return quick();
    }
    crate::cargo(
        root,
        &[
            "build",
            "--quiet",
            "-p",
            "projectfile",
            "--bin",
            "projectfile",
        ],
    )?;
    let projectfile = root.join("target/debug/projectfile");
    let own_cache = root.join("target/qualify/npm");
    let cache = install::Cache {
        npm: options.npm_cache.as_deref().unwrap_or(&own_cache),
        read_only: options.npm_cache.is_some(),
    };
    let mut installed: Vec<Installed> = Vec::new();
    let mut missing: Vec<Missing> = Vec::new();
    for (cli, pin) in install::PINS {
        if options
            .provider
            .as_deref()
            .is_some_and(|p| p != cli.provider())
        {
            continue;
        }
        match install::install(root, cache, *cli, *pin) {
            Ok(found) => installed.push(found),
            Err(why) => missing.push(why),
        }
    }
    let capture = capture::Capture::start()?;
    // Outside any git repository (this worktree's `.git` would become Codex's project root).
    let scratch = std::env::temp_dir().join(format!("projectfile-qualify-{}", std::process::id()));
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch)?;
    }
    let bench = routes::Bench {
        root,
        projectfile: &projectfile,
        npm: cache.npm,
        capture: &capture,
        scratch: scratch.clone(),
        counter: std::cell::Cell::new(0),
    };
    let shapes_file = shapes::load(root)?;
    let mut route_rows = Vec::new();
    let mut diff_rows = Vec::new();
    for cli in &installed {
        eprintln!("qualify: {} {}", cli.cli.provider(), cli.version);
        if options.mcp_only {
            route_rows.extend(mcp::check(&bench, cli));
            continue;
        }
        if options.inputs_only {
            route_rows.extend(inputs::check(&bench, cli));
            continue;
        }
        route_rows.extend(routes::check_cli(&bench, cli));
        diff_rows.extend(shapes::differential(
            &projectfile,
            &capture,
            &scratch,
            &shapes_file,
            cli,
        ));
    }
    print!("{}", render(&installed, &missing, &route_rows, &diff_rows));
    write_results(root, &installed, &missing, &route_rows, &diff_rows)?;
    if options.record {
        shapes::record(root, &diff_rows)?;
        eprintln!(
            "qualify: recorded the measurements in {}",
            shapes::SHAPES_FILE
        );
    }
    std::fs::remove_dir_all(&scratch).ok();
    let failed =
        route_rows.iter().filter(|r| !r.ok).count() + diff_rows.iter().filter(|r| !r.agree).count();
    if failed > 0 {
        bail!("qualify: {failed} check(s) failed (see the tables and target/qualify/results.json)");
    }
    Ok(())
}

fn quick() -> Result<()> {
    let results = capture::self_test()?;
    println!("capture endpoint self-test (fake client, loopback only)");
    for (name, passed) in &results {
        println!("  {:<40} {}", name, if *passed { "ok" } else { "FAIL" });
    }
    if results.iter().any(|(_, passed)| !passed) {
        bail!("qualify --quick: the capture endpoint failed its self-test");
    }
    Ok(())
}

fn yes(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

fn ok(value: bool) -> &'static str {
    if value { "ok" } else { "FAIL" }
}

/// The two tables and the list of CLIs, as printed and as pasted into QUALIFICATION.md.
fn render(
    installed: &[Installed],
    missing: &[Missing],
    routes: &[RouteRow],
    diffs: &[DiffRow],
) -> String {
    let mut out = String::new();
    out.push_str("CLIs qualified:\n");
    for cli in installed {
        out.push_str(&format!(
            "  {} {} ({})\n",
            cli.cli.provider(),
            cli.version,
            cli.cli.package()
        ));
    }
    for m in missing {
        out.push_str(&format!(
            "  {} {}: NOT INSTALLED: {}\n",
            m.cli.provider(),
            m.version,
            m.reason
        ));
    }
    out.push_str(
        "\nRoutes (session text found in the CLI's first request; receipt: what the acquire receipt's delivery verdict said, which must agree):\n\n",
    );
    out.push_str(
        "| provider | version | route | workspace | delivered | expected | receipt | control | verdict |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|---|\n");
    for r in routes {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.provider,
            r.version,
            r.route,
            r.workspace,
            yes(r.delivered),
            yes(r.expected),
            r.receipt.map_or("-", yes),
            if r.control_clean { "clean" } else { "FAIL" },
            ok(r.ok)
        ));
    }
    let notes: Vec<&RouteRow> = routes.iter().filter(|r| !r.note.is_empty()).collect();
    for r in notes {
        out.push_str(&format!(
            "\n- {} {} {}: {}",
            r.provider, r.version, r.workspace, r.note
        ));
    }
    out.push_str(
        "\n\nDiscovery differential (files in the CLI's first request vs `resolve --as`):\n\n",
    );
    out.push_str("| provider | version | shape | CLI loaded | resolve --as | verdict |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for d in diffs {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            d.provider,
            d.version,
            d.shape,
            summary(&d.cli, &d.cli_order),
            summary(&d.resolve, &d.resolve_order),
            if d.agree { "agree" } else { "DISAGREE" }
        ));
    }
    for d in diffs.iter().filter(|d| !d.note.is_empty()) {
        out.push_str(&format!(
            "\n- {} {} {}: {}",
            d.provider, d.version, d.shape, d.note
        ));
    }
    out.push('\n');
    out
}

/// `path` for a whole file, `path (cut)` for a partial one; absent files are left out. In path
/// order, or in `order` (an `ordered` shape's), joined with ` → `.
fn summary(states: &std::collections::BTreeMap<String, String>, order: &[String]) -> String {
    if !order.is_empty() {
        let loaded: Vec<String> = order
            .iter()
            .map(|p| match states.get(p).map(String::as_str) {
                Some("partial") => format!("{p} (cut)"),
                _ => p.clone(),
            })
            .collect();
        return loaded.join(" → ");
    }
    let loaded: Vec<String> = states
        .iter()
        .filter(|(_, s)| s.as_str() != "absent")
        .map(|(p, s)| {
            if s == "partial" {
                format!("{p} (cut)")
            } else {
                p.clone()
            }
        })
        .collect();
    if loaded.is_empty() {
        "-".into()
    } else {
        loaded.join(", ")
    }
}

fn write_results(
    root: &Path,
    installed: &[Installed],
    missing: &[Missing],
    routes: &[RouteRow],
    diffs: &[DiffRow],
) -> Result<PathBuf> {
    let path = root.join("target/qualify/results.json");
    let value = serde_json::json!({
        "schema": "projectfile.qualify.v1",
        "date_unix": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        "installed": installed.iter().map(|i| serde_json::json!({"provider": i.cli.provider(), "package": i.cli.package(), "version": i.version})).collect::<Vec<_>>(),
        "not_installed": missing.iter().map(|m| serde_json::json!({"provider": m.cli.provider(), "version": m.version, "reason": m.reason})).collect::<Vec<_>>(),
        "not_on_the_registry": ["cursor", "muse", "agy"],
        "routes": routes,
        "differential": diffs,
    });
    std::fs::create_dir_all(root.join("target/qualify"))?;
    std::fs::write(&path, serde_json::to_string_pretty(&value)? + "\n")?;
    eprintln!("qualify: wrote {}", path.display());
    Ok(path)
}
