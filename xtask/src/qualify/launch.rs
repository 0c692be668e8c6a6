//! Running one real CLI for one turn, pointed only at the capture endpoint, with a private home.
//!
//! What each CLI reads and how it is pointed at loopback (read from each package's docs and
//! defaults before running it):
//!
//! - **Claude Code**: `ANTHROPIC_BASE_URL` (the Messages API root) and `ANTHROPIC_API_KEY` (a
//!   dummy); `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`, `DISABLE_AUTOUPDATER`,
//!   `DISABLE_TELEMETRY` and `DISABLE_ERROR_REPORTING` switch off every other request;
//!   `ENABLE_TOOL_SEARCH=false` makes 2.1.332 send MCP tools in `tools` as older builds do; `-p` runs
//!   one turn and exits. Its user files live under `$HOME/.claude`.
//! - **Codex**: a custom model provider given with `-c model_providers.qualify={…}` whose
//!   `base_url` is the endpoint, `wire_api = "responses"`, and `-c model_provider=qualify`;
//!   `CODEX_HOME` (its user files and sessions) is inside the private home; `codex exec
//!   --skip-git-repo-check` runs one turn, stdin closed.
//! - **Pi**: a provider `qualify` in `$HOME/.pi/agent/models.json` (`api: openai-responses`,
//!   `baseUrl` the endpoint); `PI_OFFLINE`, `PI_SKIP_VERSION_CHECK` and `PI_TELEMETRY=0` switch off
//!   its startup requests; `-p --no-session` runs one turn.
//! - **Gemini CLI**: `GOOGLE_GEMINI_BASE_URL` (the Gemini API root) and `GEMINI_API_KEY` (a dummy),
//!   with `security.auth.selectedType = "gemini-api-key"` in `$HOME/.gemini/settings.json` (without
//!   it the CLI refuses to start: "Invalid auth method selected") and
//!   `privacy.usageStatisticsEnabled = false` (else it tries `play.googleapis.com`);
//!   `GEMINI_CLI_TRUST_WORKSPACE=true` trusts the workspace (an untrusted one stops `-p` with exit
//!   55 and hides every project file); `-m gemini-2.5-flash -p` runs one turn. It talks the
//!   Gemini API (`:streamGenerateContent?alt=sse`).
//! - **Qwen Code**: `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL` (chat completions);
//!   `$HOME/.qwen/settings.json` sets `privacy.usageStatisticsEnabled = false` (else it tries an
//!   `aliyuncs.com` host) and turns managed auto-memory off (else a second, background model
//!   request follows the turn); `-p` runs one turn.
//! - **opencode**: an `@ai-sdk/openai-compatible` provider `qualify` whose `baseURL` is the
//!   endpoint, given inline with `OPENCODE_CONFIG_CONTENT` (which leaves `OPENCODE_CONFIG` to the
//!   session), as the default `model`, with `autoupdate` and `share` off;
//!   `OPENCODE_DISABLE_MODELS_FETCH`, `OPENCODE_DISABLE_AUTOUPDATE`,
//!   `OPENCODE_DISABLE_LSP_DOWNLOAD` and `OPENCODE_DISABLE_DEFAULT_PLUGINS` switch off the fetches
//!   they name; `opencode run TEXT` runs one turn. It still tries the npm registry for the
//!   plugin package of its config folders (refused by the proxy).
//! - **Copilot CLI**: `COPILOT_OFFLINE=true` (no GitHub login, telemetry, web tools or update)
//!   with a custom provider, `COPILOT_PROVIDER_BASE_URL` the endpoint (chat completions),
//!   `COPILOT_PROVIDER_API_KEY` a dummy, `COPILOT_MODEL`; `COPILOT_AUTO_UPDATE=false`; `-s -p TEXT`
//!   runs one turn. Its state lives under `$HOME/.copilot`.
//!
//! Every CLI also gets `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY` pointing at the endpoint (which
//! refuses and records any `CONNECT`) and `NO_PROXY` for loopback, so nothing a CLI might still
//! try leaves the machine. The environment is cleared first: no credentials of the caller reach
//! the CLI.

#![allow(clippy::disallowed_methods)] // xtask writes the CLIs' private homes under target/

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

use super::capture::{Capture, Captured};
use super::install::{Cli, Installed};

/// The user turn every CLI is given.
pub const USER_TURN: &str = "Reply with one word.";
/// How long one CLI turn may take before it is stopped.
const TURN_TIMEOUT: Duration = Duration::from_secs(120);

/// What one launch produced.
#[derive(Debug)]
pub struct Outcome {
    /// The exit status, or `None` when it had to be stopped.
    pub status: Option<i32>,
    /// Every request the endpoint recorded during the launch.
    pub requests: Vec<Captured>,
    /// The last lines of standard error, for the report.
    pub stderr_tail: String,
    /// Standard output (`projectfile run --json` prints its acquire receipt first).
    pub stdout: String,
}

impl Outcome {
    /// The model requests, joined: where a marker is looked for.
    pub fn model_text(&self) -> String {
        self.requests
            .iter()
            .filter(|r| r.is_model_call())
            .map(|r| r.body.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The characters of the system prompt (Anthropic Messages' `system`, a string or text
    /// blocks) of the first model request carrying `marker` (else the first model request).
    pub fn system_chars(&self, marker: &str) -> Option<usize> {
        let calls: Vec<&Captured> = self.requests.iter().filter(|r| r.is_model_call()).collect();
        let call = calls
            .iter()
            .find(|r| r.body.contains(marker))
            .or(calls.first())?;
        let body: serde_json::Value = serde_json::from_str(&call.body).ok()?;
        match &body["system"] {
            serde_json::Value::String(text) => Some(text.chars().count()),
            serde_json::Value::Array(blocks) => Some(
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .map(|t| t.chars().count())
                    .sum(),
            ),
            _ => None,
        }
    }

    /// Whether at least one model request was recorded.
    pub fn reached_model(&self) -> bool {
        self.requests.iter().any(Captured::is_model_call)
    }

    /// The hosts the CLI tried to reach through the proxy (refused), each once.
    pub fn stray(&self) -> Vec<String> {
        let mut hosts: Vec<String> = self
            .requests
            .iter()
            .filter(|r| r.method == "CONNECT")
            .map(|r| r.path.clone())
            .collect();
        hosts.sort();
        hosts.dedup();
        hosts
    }
}

/// The CLI's own arguments for one non-interactive turn against the endpoint.
pub fn cli_args(cli: Cli, capture: &Capture) -> Vec<String> {
    turn_args(cli, capture, USER_TURN)
}

/// [`cli_args`] with another user turn (a slash command, say).
pub fn turn_args(cli: Cli, capture: &Capture, turn: &str) -> Vec<String> {
    match cli {
        Cli::Claude => vec!["-p".into(), turn.into()],
        Cli::Codex => vec![
            "exec".into(),
            "--skip-git-repo-check".into(),
            "-c".into(),
            format!(
                "model_providers.qualify={{name=\"qualify\",base_url=\"{}/v1\",env_key=\"QUALIFY_API_KEY\",wire_api=\"responses\"}}",
                capture.base_url()
            ),
            "-c".into(),
            "model_provider=qualify".into(),
            "-c".into(),
            "model=qualify-model".into(),
            turn.into(),
        ],
        Cli::Pi => vec![
            "-p".into(),
            "--provider".into(),
            "qualify".into(),
            "--model".into(),
            "qualify-model".into(),
            "--no-session".into(),
            turn.into(),
        ],
        Cli::Gemini => vec![
            "-m".into(),
            "gemini-2.5-flash".into(),
            "-p".into(),
            turn.into(),
        ],
        Cli::Qwen => vec!["-p".into(), turn.into()],
        Cli::Opencode => vec!["run".into(), turn.into()],
        Cli::Copilot => vec!["-s".into(), "-p".into(), turn.into()],
    }
}

/// opencode's inline configuration: a chat-completions provider on the endpoint, as the model.
fn opencode_config(capture: &Capture) -> String {
    serde_json::json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"qualify": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "qualify",
            "options": {"baseURL": format!("{}/v1", capture.base_url()), "apiKey": "qualify-not-a-key"},
            "models": {"qualify-model": {"name": "qualify-model"}}
        }},
        "model": "qualify/qualify-model",
        "autoupdate": false,
        "share": "disabled"
    })
    .to_string()
}

/// Prepares `home` for `cli`: the files that point it at the endpoint.
pub fn prepare_home(cli: Cli, home: &Path, capture: &Capture) -> Result<()> {
    std::fs::create_dir_all(home.join(".codex"))?;
    if cli == Cli::Pi {
        let agent = home.join(".pi/agent");
        std::fs::create_dir_all(&agent)?;
        let models = serde_json::json!({"providers": {"qualify": {
            "baseUrl": format!("{}/v1", capture.base_url()),
            "api": "openai-responses",
            "apiKey": "qualify-not-a-key",
            "models": [{"id": "qualify-model"}]
        }}});
        std::fs::write(agent.join("models.json"), models.to_string())?;
    }
    let settings = match cli {
        Cli::Gemini => Some((
            ".gemini",
            serde_json::json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": false}
            }),
        )),
        Cli::Qwen => Some((
            ".qwen",
            serde_json::json!({
                "privacy": {"usageStatisticsEnabled": false},
                "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
                "general": {"enableAutoUpdate": false}
            }),
        )),
        _ => None,
    };
    if let Some((dir, value)) = settings {
        std::fs::create_dir_all(home.join(dir))?;
        std::fs::write(home.join(dir).join("settings.json"), value.to_string())?;
    }
    Ok(())
}

/// The whole environment a launch gets (the caller's is cleared).
pub fn environment(installed: &Installed, home: &Path, capture: &Capture) -> Vec<(String, String)> {
    let base = capture.base_url();
    let home_text = home.to_string_lossy().into_owned();
    let mut env: Vec<(String, String)> = vec![
        (
            "PATH".into(),
            format!(
                "{}:/usr/local/bin:/usr/bin:/bin",
                installed.bin_dir.display()
            ),
        ),
        ("HOME".into(), home_text.clone()),
        ("LANG".into(), "C.UTF-8".into()),
        ("HTTPS_PROXY".into(), base.clone()),
        ("HTTP_PROXY".into(), base.clone()),
        ("ALL_PROXY".into(), base.clone()),
        ("NO_PROXY".into(), "127.0.0.1,localhost".into()),
    ];
    let own: &[(&str, String)] = match installed.cli {
        Cli::Claude => &[
            ("ANTHROPIC_BASE_URL", base.clone()),
            ("ANTHROPIC_API_KEY", "qualify-not-a-key".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
            // 2.1.332 defers MCP tools behind its tool search otherwise (see `mcp`).
            ("ENABLE_TOOL_SEARCH", "false".into()),
        ],
        Cli::Codex => &[
            ("CODEX_HOME", format!("{home_text}/.codex")),
            ("QUALIFY_API_KEY", "qualify-not-a-key".into()),
        ],
        Cli::Pi => &[
            ("PI_OFFLINE", "1".into()),
            ("PI_SKIP_VERSION_CHECK", "1".into()),
            ("PI_TELEMETRY", "0".into()),
        ],
        Cli::Gemini => &[
            ("GOOGLE_GEMINI_BASE_URL", base.clone()),
            ("GEMINI_API_KEY", "qualify-not-a-key".into()),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
        ],
        Cli::Qwen => &[
            ("OPENAI_BASE_URL", format!("{base}/v1")),
            ("OPENAI_API_KEY", "qualify-not-a-key".into()),
            ("OPENAI_MODEL", "qualify-model".into()),
        ],
        Cli::Opencode => &[
            ("OPENCODE_CONFIG_CONTENT", opencode_config(capture)),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
            ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".into()),
            ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()),
        ],
        Cli::Copilot => &[
            ("COPILOT_OFFLINE", "true".into()),
            ("COPILOT_PROVIDER_BASE_URL", format!("{base}/v1")),
            ("COPILOT_PROVIDER_API_KEY", "qualify-not-a-key".into()),
            ("COPILOT_MODEL", "qualify-model".into()),
            ("COPILOT_AUTO_UPDATE", "false".into()),
        ],
    };
    env.extend(own.iter().map(|(k, v)| (k.to_string(), v.clone())));
    env
}

/// Runs `argv` in `cwd` with `env`, stops it after the timeout, and collects what the endpoint
/// recorded meanwhile.
pub fn run(
    argv: &[String],
    cwd: &Path,
    env: &[(String, String)],
    capture: &Capture,
) -> Result<Outcome> {
    let (program, args) = argv.split_first().context("an empty command")?;
    capture.drain();
    let mut child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("{program}: cannot start"))?;
    let reader = read_all(child.stderr.take());
    let out_reader = read_all(child.stdout.take());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status.code();
        }
        if started.elapsed() > TURN_TIMEOUT {
            // SIGTERM first: `projectfile run` forwards it and releases its lease.
            // SAFETY: a signal to our own child's pid.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            std::thread::sleep(Duration::from_secs(3));
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = reader.join().unwrap_or_default();
    let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
    Ok(Outcome {
        status,
        requests: capture.drain(),
        stderr_tail: tail.into_iter().rev().collect::<Vec<_>>().join(" | "),
        stdout: out_reader.join().unwrap_or_default(),
    })
}

/// Reads a child's pipe to its end on a thread of its own.
fn read_all(pipe: Option<impl std::io::Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}
