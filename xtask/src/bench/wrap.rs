//! The `run` part: what `projectfile run` adds to the start of the fastest real CLI, as its user
//! feels it. `codex --version` of the pinned Codex that `cargo xtask qualify` installs (in
//! `target/qualify/npm/`, or the cache `--npm-cache` names), started directly against the same
//! started by `projectfile run --provider codex` (acquire, start, wait, release), both in the
//! same workspace, interleaved iteration by iteration; the ratio is the second's median over the
//! first's.
//!
//! Without that Codex the part says so and times a stand-in instead, `node -e ''`: the start of
//! Node.js, which is what any Node CLI's start costs at the least. Codex's `--version` adds its
//! own script and native binary to it, so the stand-in's ratio is shown but not judged against
//! the goal: it would hold `run` to a start shorter than any real CLI's. Without Node.js there
//! is nothing to wrap, and the part reports itself not measured.

use anyhow::{Context as _, Result, ensure};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::process::{Measured, Programs, Workspace, measured, median_ms};
use crate::qualify::install::{Cli, cached_pin};

/// The CLI whose start is wrapped.
struct Wrapped {
    /// What the figure is of, as printed.
    label: String,
    /// The program and its arguments.
    argv: Vec<String>,
    /// A stand-in for the real CLI, not the real CLI.
    stand_in: bool,
}

/// The pinned Codex in `npm`, else the Node.js stand-in, else `None`.
fn wrapped(npm: &Path) -> Option<Wrapped> {
    if let Some((version, mut argv)) = cached_pin(npm, Cli::Codex) {
        argv.push("--version".into());
        return Some(Wrapped {
            label: format!("codex {version} --version"),
            argv,
            stand_in: false,
        });
    }
    let node = Command::new("node")
        .args(["-e", ""])
        .output()
        .is_ok_and(|out| out.status.success());
    node.then(|| Wrapped {
        label: "node -e '' (a stand-in: no pinned Codex)".into(),
        argv: vec!["node".into(), "-e".into(), String::new()],
        stand_in: true,
    })
}

/// One process of `argv`, which must exit 0.
fn once(cmd: &mut Command, what: &str) -> Result<Measured> {
    let m = measured(cmd)?;
    ensure!(
        m.ok(),
        "{what} failed ({:?}): {}",
        m.code,
        String::from_utf8_lossy(&m.stderr).trim()
    );
    Ok(m)
}

/// The part's figures (see the module docs), `iterations` interleaved pairs; `npm` is where the
/// pinned CLIs are installed.
pub fn run_around_cli(
    programs: &Programs,
    scratch: &Path,
    npm: &Path,
    iterations: usize,
) -> Result<Value> {
    let Some(cli) = wrapped(npm) else {
        eprintln!(
            "    not measured: no pinned Codex in {} and no node",
            npm.display()
        );
        return Ok(json!({
            "measured": false,
            "reason": format!("no pinned Codex in {} and no `node` on PATH", npm.display()),
        }));
    };
    if cli.stand_in {
        eprintln!(
            "    no pinned Codex in {} (`cargo xtask qualify --provider codex` installs it, \
             or pass --npm-cache DIR): timing the stand-in `node -e ''`, shown and not judged",
            npm.display()
        );
    }
    eprintln!("    {}: {iterations} interleaved pairs", cli.label);
    let ws = Workspace::create(&scratch.join("run"))?;
    std::fs::write(ws.dir.join("AGENTS.md"), "# Rules\nBe brief.\n")?;
    let (program, args) = cli.argv.split_first().context("an empty command")?;
    // In the workspace, where `run` starts it too.
    let alone = || {
        once(
            Command::new(program).args(args).current_dir(&ws.dir),
            &cli.label,
        )
    };
    let wrapped = || {
        once(
            ws.command(programs)
                .args(["run", "--provider", "codex", "--workspace"])
                .arg(&ws.dir)
                .args(["--prompt", "Session text: answer briefly.", "--"])
                .args(&cli.argv),
            "projectfile run",
        )
    };
    // One of each first, unmeasured: the page cache then holds both sides' files.
    let version = String::from_utf8_lossy(&alone()?.stdout).trim().to_string();
    wrapped()?;
    let (mut a, mut w): (Vec<Duration>, Vec<Duration>) = (Vec::new(), Vec::new());
    for i in 0..iterations {
        if i % 2 == 0 {
            a.push(alone()?.wall);
            w.push(wrapped()?.wall);
        } else {
            w.push(wrapped()?.wall);
            a.push(alone()?.wall);
        }
    }
    ensure!(
        ws.lease_count(programs)? == 0,
        "projectfile run left a lease behind"
    );
    let (alone_ms, wrapped_ms) = (median_ms(&mut a), median_ms(&mut w));
    Ok(json!({
        "measured": true,
        "cli": cli.label,
        "stand_in": cli.stand_in,
        "printed": version,
        "iterations": iterations,
        "alone_median_ms": alone_ms,
        "run_median_ms": wrapped_ms,
        "ratio": if alone_ms > 0.0 { wrapped_ms / alone_ms } else { 0.0 },
    }))
}
