//! The CLI cache: pinned versions of the real CLIs from the npm registry, installed with `npm`
//! into `target/qualify/npm/<package>@<version>/` (outside git) and reused when present.
//!
//! Installs run with `--ignore-scripts`: no package's install script runs. Claude Code's script
//! only copies its platform binary over a placeholder, and opencode's (`opencode-ai`) and
//! Copilot's (`@github/copilot`) launchers only find theirs, so each binary is taken from its
//! platform package directly (`@anthropic-ai/claude-code-linux-<arch>/claude`,
//! `opencode-linux-<arch>/bin/opencode`, `@github/copilot-linux-<arch>/copilot`, which npm
//! installs as optional dependencies); Codex's, Pi's, Gemini CLI's (`bundle/gemini.js`) and Qwen
//! Code's (`cli-entry.js`) entry points are Node scripts run with the system `node`. Gemini CLI
//! and Qwen Code run that way (measured with 0.61.0 and 0.24.4); only Qwen Code's bundled ripgrep
//! is left without its executable bit, and it falls back to its own search.
//! Without the registry, a version already in the cache is used and a missing one is reported
//! "not installed" with npm's reason, never guessed.

#![allow(clippy::disallowed_methods)] // xtask writes its own cache under target/

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};

/// A CLI the qualification knows how to drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cli {
    Claude,
    Codex,
    Pi,
    Gemini,
    Qwen,
    Opencode,
    Copilot,
}

impl Cli {
    /// The projectfile provider name.
    pub fn provider(self) -> &'static str {
        match self {
            Cli::Claude => "claude",
            Cli::Codex => "codex",
            Cli::Pi => "pi",
            Cli::Gemini => "gemini",
            Cli::Qwen => "qwen",
            Cli::Opencode => "opencode",
            Cli::Copilot => "copilot",
        }
    }

    /// The npm package.
    pub fn package(self) -> &'static str {
        match self {
            Cli::Claude => "@anthropic-ai/claude-code",
            Cli::Codex => "@openai/codex",
            Cli::Pi => "@mariozechner/pi-coding-agent",
            Cli::Gemini => "@google/gemini-cli",
            Cli::Qwen => "@qwen-code/qwen-code",
            Cli::Opencode => "opencode-ai",
            Cli::Copilot => "@github/copilot",
        }
    }

    /// The command name on PATH.
    pub fn command(self) -> &'static str {
        self.provider()
    }
}

/// Which version to install.
#[derive(Clone, Copy, Debug)]
pub enum Pin {
    /// Exactly this one.
    Exact(&'static str),
    /// The newest release whose version starts with this prefix (`2.1.`), as the registry lists.
    NewestOf(&'static str),
}

/// The versions qualified, in table order: Claude Code below the AGENTS.md gate (2.1.233), on
/// either side of the measured gate (2.1.280, 2.1.281), at the route gate (2.1.284) and the
/// newest 2.1.x; Codex 0.171.0; Pi 0.73.1; Gemini CLI 0.61.0; Qwen Code 0.24.4; opencode 1.18.33;
/// Copilot CLI 1.0.102.
pub const PINS: &[(Cli, Pin)] = &[
    (Cli::Claude, Pin::Exact("2.1.233")),
    (Cli::Claude, Pin::Exact("2.1.280")),
    (Cli::Claude, Pin::Exact("2.1.281")),
    (Cli::Claude, Pin::Exact("2.1.284")),
    (Cli::Claude, Pin::NewestOf("2.1.")),
    (Cli::Codex, Pin::Exact("0.171.0")),
    (Cli::Pi, Pin::Exact("0.73.1")),
    (Cli::Gemini, Pin::Exact("0.61.0")),
    (Cli::Qwen, Pin::Exact("0.24.4")),
    (Cli::Opencode, Pin::Exact("1.18.33")),
    (Cli::Copilot, Pin::Exact("1.0.102")),
];

/// A CLI ready to run.
#[derive(Clone, Debug)]
pub struct Installed {
    pub cli: Cli,
    pub version: String,
    /// The program and the arguments that start it (`node <script>` for Node entry points).
    pub argv: Vec<String>,
    /// A directory holding a `<command>` launcher, put first on PATH so `projectfile` probes
    /// this exact binary.
    pub bin_dir: PathBuf,
}

/// A pinned CLI that could not be installed, and why.
#[derive(Clone, Debug)]
pub struct Missing {
    pub cli: Cli,
    pub version: String,
    pub reason: String,
}

/// Where the pinned CLIs are installed: `target/qualify/npm/`, or a cache given with
/// `--npm-cache`, which is only read (a pin missing there is reported, never installed).
#[derive(Clone, Copy, Debug)]
pub struct Cache<'a> {
    pub npm: &'a Path,
    pub read_only: bool,
}

fn cache_dir(npm: &Path, package: &str, version: &str) -> PathBuf {
    npm.to_path_buf()
        .join(format!("{}@{version}", package.replace('/', "+")))
}

/// The version a pin names, asking the registry for `NewestOf` (or, offline, the newest cached).
fn resolve_pin(cache: Cache<'_>, cli: Cli, pin: Pin) -> Result<String> {
    let prefix = match pin {
        Pin::Exact(version) => return Ok(version.to_string()),
        Pin::NewestOf(prefix) => prefix,
    };
    let newest = |versions: Vec<String>| {
        versions
            .into_iter()
            .filter(|v| {
                v.starts_with(prefix) && v[prefix.len()..].bytes().all(|b| b.is_ascii_digit())
            })
            .max_by_key(|v| v[prefix.len()..].parse::<u64>().unwrap_or(0))
    };
    // A read-only cache is used as it is: the registry is not asked.
    let listed = (!cache.read_only).then(|| {
        Command::new("npm")
            .args(["view", cli.package(), "versions", "--json"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
    });
    if let Some(Ok(out)) = listed
        && out.status.success()
        && let Ok(versions) = serde_json::from_slice::<Vec<String>>(&out.stdout)
        && let Some(version) = newest(versions)
    {
        return Ok(version);
    }
    let cached = std::fs::read_dir(cache.npm)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix(&format!("{}@", cli.package().replace('/', "+")))
                .map(str::to_string)
        })
        .collect();
    newest(cached).with_context(|| {
        format!(
            "{}: the registry did not list its versions and none is cached",
            cli.package()
        )
    })
}

/// Where the runnable entry point of an installed package is.
fn entry_point(cli: Cli, dir: &Path) -> Result<Vec<String>> {
    let modules = dir.join("node_modules");
    let text = |p: PathBuf| p.to_string_lossy().into_owned();
    let arch = || match std::env::consts::ARCH {
        "x86_64" => Ok("x64"),
        "aarch64" => Ok("arm64"),
        other => bail!("{}: no platform package for {other}", cli.provider()),
    };
    let binary = |path: String| {
        let binary = modules.join(path);
        binary.is_file().then(|| vec![text(binary)])
    };
    let found = match cli {
        Cli::Claude => binary(format!(
            "@anthropic-ai/claude-code-linux-{}/claude",
            arch()?
        )),
        Cli::Opencode => binary(format!("opencode-linux-{}/bin/opencode", arch()?)),
        Cli::Copilot => binary(format!("@github/copilot-linux-{}/copilot", arch()?)),
        Cli::Codex => node_script(&modules, "@openai/codex/bin/codex.js"),
        Cli::Pi => node_script(&modules, "@mariozechner/pi-coding-agent/dist/cli.js"),
        Cli::Gemini => node_script(&modules, "@google/gemini-cli/bundle/gemini.js"),
        Cli::Qwen => node_script(&modules, "@qwen-code/qwen-code/cli-entry.js"),
    };
    found.with_context(|| {
        format!(
            "{}: the installed package has no entry point",
            dir.display()
        )
    })
}

/// `node <script>` for a Node entry point under `modules`, when it is installed.
fn node_script(modules: &Path, script: &str) -> Option<Vec<String>> {
    let script = modules.join(script);
    script
        .is_file()
        .then(|| vec!["node".into(), script.to_string_lossy().into_owned()])
}

fn npm_install(dir: &Path, package: &str, version: &str) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    std::fs::write(dir.join("package.json"), "{\"private\": true}\n")?;
    eprintln!("qualify: npm install {package}@{version}");
    let out = Command::new("npm")
        .args([
            "install",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--loglevel=error",
            &format!("{package}@{version}"),
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .context("npm: cannot run (is Node.js installed?)")?;
    if !out.status.success() {
        let reason = String::from_utf8_lossy(&out.stderr);
        let reason = reason
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("failed");
        bail!("npm install {package}@{version}: {reason}");
    }
    Ok(())
}

/// A launcher script named like the CLI, so `projectfile` finds and probes this exact build.
fn launcher(root: &Path, cli: Cli, version: &str, argv: &[String]) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = root
        .join("target/qualify/bin")
        .join(format!("{}-{version}", cli.command()));
    std::fs::create_dir_all(&dir)?;
    let quoted: Vec<String> = argv
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let path = dir.join(cli.command());
    std::fs::write(
        &path,
        format!("#!/bin/sh\nexec {} \"$@\"\n", quoted.join(" ")),
    )?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(dir)
}

/// The first pin of `cli` with an exact version that is installed in the cache `npm`, with the
/// program and arguments that start it; `None` when none is. Reads only: installs nothing and
/// writes no launcher (what `cargo xtask bench` runs to time a real CLI's start).
pub fn cached_pin(npm: &Path, cli: Cli) -> Option<(String, Vec<String>)> {
    PINS.iter().find_map(|&(pinned, pin)| match pin {
        Pin::Exact(version) if pinned == cli => {
            let dir = cache_dir(npm, cli.package(), version);
            let argv = entry_point(cli, &dir).ok()?;
            Some((version.to_string(), argv))
        }
        _ => None,
    })
}

/// Installs (or finds in the cache) one pin.
pub fn install(
    root: &Path,
    cache: Cache<'_>,
    cli: Cli,
    pin: Pin,
) -> std::result::Result<Installed, Missing> {
    let version = resolve_pin(cache, cli, pin).map_err(|err| Missing {
        cli,
        version: format!("{pin:?}"),
        reason: format!("{err:#}"),
    })?;
    let missing = |err: anyhow::Error| Missing {
        cli,
        version: version.clone(),
        reason: format!("{err:#}"),
    };
    let dir = cache_dir(cache.npm, cli.package(), &version);
    let argv = match entry_point(cli, &dir) {
        Ok(argv) => argv,
        Err(err) if cache.read_only => return Err(missing(err)),
        Err(_) => {
            npm_install(&dir, cli.package(), &version).map_err(missing)?;
            entry_point(cli, &dir).map_err(missing)?
        }
    };
    let bin_dir = launcher(root, cli, &version, &argv).map_err(missing)?;
    Ok(Installed {
        cli,
        version,
        argv,
        bin_dir,
    })
}
