//! Black-box tests of what a session hands a CLI besides its text, through the binary: MCP servers
//! by each CLI's route (Claude's private `--mcp-config=<file>`, Codex's `-c` TOML overrides,
//! Cursor's merge into the project's own `.cursor/mcp.json`), `--mcp-mode replace`, Claude's hooks
//! in a private `--settings` file, subagents and commands, bad input refused with nothing written,
//! and `--dry-run` for `acquire` and `run`, which changes nothing at all.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use support::{Sandbox, tree};

fn write(root: &Path, rel: &str, bytes: &[u8]) -> String {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

/// `acquire` for `provider` with `extra` flags, held by this test process: its exit status,
/// stdout as JSON (when any) and stderr.
fn acquire(sb: &Sandbox, provider: &str, extra: &[&str]) -> (i32, Value, String) {
    let out = sb
        .acquire_command(provider, "Be brief.", extra)
        .arg("--json")
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        json,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn release(sb: &Sandbox, receipt: &Value) -> Value {
    sb.json(&["release", "--token", receipt["token"].as_str().unwrap()])
}

fn servers(sb: &Sandbox, json: &str) -> String {
    write(&sb.base, "servers.json", json.as_bytes())
}

const DOCS: &str = r#"{"docs": {"command": "docs-server", "args": ["--stdio", "two words"], "env": {"LEVEL": "1"}}}"#;

#[test]
fn claude_gets_its_servers_in_a_private_file_as_one_argument() {
    let sb = Sandbox::new();
    let file = servers(&sb, DOCS);
    let before = tree(&sb.ws);
    let (code, receipt, err) = acquire(
        &sb,
        "claude",
        &["--mcp-config", &file, "--cli-version", "2.1.233"],
    );
    assert_eq!(code, 0, "{err}");
    let args: Vec<&str> = receipt["launch_args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let arg = args
        .iter()
        .find(|a| a.starts_with("--mcp-config="))
        .expect("one --mcp-config=<file> argument");
    assert!(
        !args.contains(&"--mcp-config"),
        "the flag must not stand alone: {args:?}"
    );
    assert!(
        !args.contains(&"--strict-mcp-config"),
        "merge is the default: {args:?}"
    );
    assert_eq!(
        receipt["env"]["ENABLE_TOOL_SEARCH"], "false",
        "the tools must not be deferred behind the tool search"
    );
    let path = arg.trim_start_matches("--mcp-config=");
    assert!(
        path.starts_with(sb.state.to_str().unwrap()),
        "{path} is not private"
    );
    let written: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(
        written,
        serde_json::json!({"mcpServers": serde_json::from_str::<Value>(DOCS).unwrap()})
    );
    assert_eq!(tree(&sb.ws), before, "no project file is edited");
    release(&sb, &receipt);
    assert!(
        !Path::new(path).exists(),
        "the private file outlived the session"
    );
}

#[test]
fn mcp_mode_replace_is_strict_for_claude_exclusive_for_cursor_and_refused_for_codex() {
    let sb = Sandbox::new();
    let file = servers(&sb, DOCS);
    let (code, receipt, err) = acquire(
        &sb,
        "claude",
        &[
            "--mcp-config",
            &file,
            "--mcp-mode",
            "replace",
            "--cli-version",
            "2.1.233",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        receipt["launch_args"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "--strict-mcp-config")
    );
    release(&sb, &receipt);

    let own = b"{\"mcpServers\": {\"own\": {\"command\": \"own\"}}}\n";
    write(&sb.ws, ".cursor/mcp.json", own);
    let (code, receipt, err) = acquire(
        &sb,
        "cursor",
        &["--mcp-config", &file, "--mcp-mode", "replace"],
    );
    assert_eq!(code, 0, "{err}");
    let during: Value =
        serde_json::from_slice(&std::fs::read(sb.ws.join(".cursor/mcp.json")).unwrap()).unwrap();
    assert_eq!(
        during["mcpServers"],
        serde_json::from_str::<Value>(DOCS).unwrap()
    );
    release(&sb, &receipt);
    assert_eq!(std::fs::read(sb.ws.join(".cursor/mcp.json")).unwrap(), own);

    let before = tree(&sb.ws);
    let (code, _, err) = acquire(
        &sb,
        "codex",
        &["--mcp-config", &file, "--mcp-mode", "replace"],
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("--mcp-mode replace") && err.contains("nothing was projected"),
        "{err}"
    );
    assert_eq!(tree(&sb.ws), before);
}

#[test]
fn codex_gets_toml_overrides_that_parse_back_to_the_servers() {
    let sb = Sandbox::new();
    let tricky = r#"{"docs": {"command": "say \"hi\"", "args": ["a\nb", "c=d"], "env": {"K": "v"}}, "web_2": {"url": "https://x.invalid/mcp"}}"#;
    let file = servers(&sb, tricky);
    let (code, receipt, err) = acquire(&sb, "codex", &["--mcp-config", &file]);
    assert_eq!(code, 0, "{err}");
    let args: Vec<String> = receipt["launch_args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let mut parsed = BTreeMap::new();
    for pair in args.chunks(2) {
        assert_eq!(pair[0], "-c");
        let (key, value) = pair[1].split_once('=').unwrap();
        let name = key.strip_prefix("mcp_servers.").unwrap().to_string();
        let doc: toml_edit::DocumentMut = format!("v = {value}").parse().unwrap();
        let table = doc["v"].as_inline_table().unwrap().clone();
        parsed.insert(name, table);
    }
    assert_eq!(parsed.len(), 2, "{args:?}");
    assert_eq!(parsed["docs"]["command"].as_str(), Some("say \"hi\""));
    let docs_args = parsed["docs"]["args"].as_array().unwrap();
    assert_eq!(docs_args.get(0).and_then(|v| v.as_str()), Some("a\nb"));
    assert_eq!(
        parsed["web_2"]["url"].as_str(),
        Some("https://x.invalid/mcp")
    );
    release(&sb, &receipt);
}

#[test]
fn cursor_merges_and_gives_the_projects_bytes_back() {
    let sb = Sandbox::new();
    let file = servers(&sb, DOCS);
    let own = b"{\r\n  \"mcpServers\": {\"own\": {\"command\": \"own\"}},\r\n  \"x\": 1\r\n}";
    write(&sb.ws, ".cursor/mcp.json", own);
    let before = tree(&sb.ws);
    let (code, receipt, err) = acquire(&sb, "cursor", &["--mcp-config", &file]);
    assert_eq!(code, 0, "{err}");
    let during: Value =
        serde_json::from_slice(&std::fs::read(sb.ws.join(".cursor/mcp.json")).unwrap()).unwrap();
    assert_eq!(during["mcpServers"]["own"]["command"], "own");
    assert_eq!(during["mcpServers"]["docs"]["command"], "docs-server");
    assert_eq!(during["x"], 1);
    let out = release(&sb, &receipt);
    assert!(
        out["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == ".cursor/mcp.json" && f["action"] == "restored")
    );
    assert_eq!(tree(&sb.ws), before);
}

#[test]
fn bad_mcp_input_is_refused_and_nothing_is_written() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "cursor",
            r#"{"own": {"command": "mine"}}"#,
            "\"own\" is defined by the project's file",
        ),
        ("cursor", "{not json", "not valid JSON"),
        ("claude", r#"["docs"]"#, "must be a JSON object"),
        (
            "codex",
            r#"{"docs": 7}"#,
            "server \"docs\" must be a JSON object",
        ),
        ("codex", r#"{"a.b": {"command": "x"}}"#, "not a plain name"),
        ("cursor", r#"{"a b": {"command": "x"}}"#, "not a plain name"),
        (
            "claude",
            r#"{"mcpServers": {"docs": {}}}"#,
            "not a file wrapping it",
        ),
        ("pi", DOCS, "cannot take MCP servers"),
        ("muse", DOCS, "cannot take MCP servers"),
    ];
    for (provider, json, needle) in cases {
        let sb = Sandbox::new();
        write(
            &sb.ws,
            ".cursor/mcp.json",
            b"{\"mcpServers\": {\"own\": {\"command\": \"own\"}}}\n",
        );
        let file = servers(&sb, json);
        let before = tree(&sb.ws);
        let (code, receipt, err) = acquire(
            &sb,
            provider,
            &["--mcp-config", &file, "--cli-version", "2.1.233"],
        );
        assert_ne!(code, 0, "{provider} {json}: accepted");
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains(needle), "{provider} {json}: {err}");
        assert_eq!(receipt["schema"], "projectfile.error.v1", "{receipt}");
        assert_eq!(
            tree(&sb.ws),
            before,
            "{provider} {json}: something was written"
        );
        let status = sb.json(&["status", "--workspace", sb.ws.to_str().unwrap()]);
        assert_eq!(
            status["leases"],
            serde_json::json!([]),
            "{provider}: a lease was left"
        );
    }
}

#[test]
fn claude_hooks_travel_in_a_private_settings_file() {
    let sb = Sandbox::new();
    let hooks = write(&sb.base, "hooks.json", br#"{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh"}]}]}"#);
    let script = write(&sb.base, "guard.sh", b"#!/bin/sh\nexit 0\n");
    write(&sb.ws, ".claude/settings.json", b"{\"project\": true}\n");
    let before = tree(&sb.ws);
    let (code, receipt, err) = acquire(
        &sb,
        "claude",
        &[
            "--hooks-config",
            &hooks,
            "--hook-script",
            &script,
            "--cli-version",
            "2.1.233",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let arg = receipt["launch_args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .find(|a| a.starts_with("--settings="))
        .expect("--settings=<file>");
    let settings: Value =
        serde_json::from_slice(&std::fs::read(arg.trim_start_matches("--settings=")).unwrap())
            .unwrap();
    assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], "Bash");
    let script_at = sb.ws.join(".claude/hooks/guard.sh");
    assert_eq!(std::fs::metadata(&script_at).unwrap().mode() & 0o777, 0o755);
    assert_eq!(
        std::fs::read(sb.ws.join(".claude/settings.json")).unwrap(),
        b"{\"project\": true}\n"
    );
    release(&sb, &receipt);
    assert_eq!(tree(&sb.ws), before);
}

#[test]
fn subagents_and_commands_take_over_and_restore() {
    let sb = Sandbox::new();
    let agent = write(
        &sb.base,
        "reviewer.md",
        b"---\nname: reviewer\ndescription: Reviews\n---\nReview it.\n",
    );
    let command = write(
        &sb.base,
        "ship.md",
        b"---\ndescription: Ship\n---\nShip it.\n",
    );
    write(
        &sb.ws,
        ".claude/commands/ship.md",
        b"the project's own ship\r\n",
    );
    let before = tree(&sb.ws);
    let (code, receipt, err) = acquire(
        &sb,
        "claude",
        &[
            "--agent",
            &format!("reviewer={agent}"),
            "--command",
            &format!("ship={command}"),
            "--cli-version",
            "2.1.233",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let files = receipt["files"].as_array().unwrap();
    let action = |p: &str| {
        files
            .iter()
            .find(|f| f["path"] == p)
            .map(|f| f["action"].clone())
    };
    assert_eq!(action(".claude/agents/reviewer.md"), Some("created".into()));
    assert_eq!(action(".claude/commands/ship.md"), Some("replaced".into()));
    let text = std::fs::read_to_string(sb.ws.join(".claude/agents/reviewer.md")).unwrap();
    assert!(text.starts_with("---\nname: reviewer\n"), "{text}");
    assert!(text.contains("Review it."), "{text}");
    release(&sb, &receipt);
    assert_eq!(tree(&sb.ws), before);

    for (flag, value, needle) in [
        ("--agent", format!("../x={agent}"), "subagent name"),
        ("--command", format!(".hidden={command}"), "command name"),
        ("--command", "noequals".to_string(), "NAME=FILE"),
    ] {
        let (code, _, err) = acquire(&sb, "claude", &[flag, &value, "--cli-version", "2.1.233"]);
        assert_ne!(code, 0);
        assert!(err.contains(needle), "{err}");
        assert_eq!(tree(&sb.ws), before);
    }
    let (code, _, err) = acquire(&sb, "pi", &["--agent", &format!("reviewer={agent}")]);
    assert_ne!(code, 0);
    assert!(err.contains("cannot take subagents"), "{err}");
    assert_eq!(tree(&sb.ws), before);
}

/// Every path under `root` with its bytes, mode and modification time (directories included).
fn stamped(root: &Path) -> BTreeMap<String, (Vec<u8>, u32, i64, i64)> {
    let mut out = BTreeMap::new();
    if !root.exists() {
        return out;
    }
    for (path, (bytes, mode)) in tree(root) {
        let meta = std::fs::symlink_metadata(root.join(&path)).unwrap();
        out.insert(path, (bytes, mode, meta.mtime(), meta.mtime_nsec()));
    }
    let meta = std::fs::symlink_metadata(root).unwrap();
    out.insert(".".into(), (Vec::new(), 0, meta.mtime(), meta.mtime_nsec()));
    out
}

#[test]
fn dry_runs_change_nothing_and_tell_what_a_start_would_do() {
    let sb = Sandbox::new();
    let file = servers(&sb, DOCS);
    write(
        &sb.ws,
        ".cursor/mcp.json",
        b"{\"mcpServers\": {\"own\": {\"command\": \"own\"}}}\n",
    );
    write(&sb.ws, "AGENTS.md", b"# Project\n");
    let flags = ["--mcp-config", file.as_str()];
    for provider in ["cursor", "codex", "claude"] {
        let before = (stamped(&sb.ws), stamped(&sb.state));
        let (code, dry, err) = acquire(
            &sb,
            provider,
            &[&flags[..], &["--dry-run", "--cli-version", "2.1.284"]].concat(),
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(dry["dry_run"], true);
        assert_eq!(dry["token"], "dry-run");
        assert_eq!(
            (stamped(&sb.ws), stamped(&sb.state)),
            before,
            "{provider}: a dry run changed something"
        );
        assert!(
            !sb.state.exists(),
            "{provider}: a dry run created the state directory"
        );
        // What it told is what a start does.
        let (code, real, err) = acquire(
            &sb,
            provider,
            &[&flags[..], &["--cli-version", "2.1.284"]].concat(),
        );
        assert_eq!(code, 0, "{err}");
        let token = real["token"].as_str().unwrap().to_string();
        let shown = |r: &Value| -> Vec<(String, String, String)> {
            r["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    let path = f["path"].as_str().unwrap().replace(&token, "dry-run");
                    (
                        path,
                        f["kind"].as_str().unwrap().into(),
                        f["action"].as_str().unwrap().into(),
                    )
                })
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        assert_eq!(
            shown(&dry),
            shown(&real),
            "{provider}: the dry run told another story"
        );
        let launch = |r: &Value| r["launch_args"].to_string().replace(&token, "dry-run");
        assert_eq!(launch(&dry), launch(&real));
        // A dry run while a session holds changes nothing either (no stale cleaning, no lock).
        let before = (stamped(&sb.ws), stamped(&sb.state));
        let (code, _, err) = acquire(
            &sb,
            provider,
            &[&flags[..], &["--dry-run", "--cli-version", "2.1.284"]].concat(),
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            (stamped(&sb.ws), stamped(&sb.state)),
            before,
            "{provider}: a dry run changed something"
        );
        release(&sb, &real);
        std::fs::remove_dir_all(&sb.state).unwrap();
    }
}

#[test]
fn run_dry_run_prints_the_command_and_runs_nothing() {
    let sb = Sandbox::new();
    let file = servers(&sb, DOCS);
    let marker = sb.base.join("ran");
    let before = stamped(&sb.ws);
    let out = sb
        .cmd()
        .args([
            "run",
            "--provider",
            "codex",
            "--workspace",
            sb.ws.to_str().unwrap(),
            "--prompt",
            "p",
            "--mcp-config",
            &file,
            "--dry-run",
            "--json",
            "--",
            "touch",
        ])
        .arg(&marker)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let receipt: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(receipt["dry_run"], true);
    let command: Vec<&str> = receipt["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(command[0], "touch");
    assert_eq!(command[1], marker.to_str().unwrap());
    assert_eq!(command[2], "-c");
    assert!(command[3].starts_with("mcp_servers.docs={"), "{command:?}");
    assert!(!marker.exists(), "the command ran");
    assert_eq!(stamped(&sb.ws), before);
    assert!(!sb.state.exists());
}

#[test]
fn a_dry_run_carries_the_verdict_a_start_would_report() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join(".git")).unwrap();
    std::fs::write(sb.ws.join("AGENTS.md"), "Rule: be brief.\n".repeat(2600)).unwrap();
    let before = stamped(&sb.ws);
    // Codex with a project AGENTS.md past its budget: the verdict adds the raised budget.
    let (code, dry, err) = acquire(&sb, "codex", &["--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(dry["delivery"]["delivered"], true, "{dry}");
    let raised = dry["delivery"]["launch_args"].clone();
    assert_eq!(raised[0], "-c", "{dry}");
    assert_eq!(
        dry["launch_args"], raised,
        "the receipt's arguments include the remedy"
    );
    assert_eq!(stamped(&sb.ws), before);
    let (code, real, err) = acquire(&sb, "codex", &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        real["delivery"], dry["delivery"],
        "the start reported another verdict"
    );
    release(&sb, &real);
    // agy projects no text: with --require-delivery a dry run is refused as a start would be.
    let before = (stamped(&sb.ws), stamped(&sb.state));
    let (code, refused, err) = acquire(&sb, "agy", &["--dry-run", "--require-delivery"]);
    assert_ne!(code, 0);
    assert_eq!(refused["error"]["kind"], "undelivered", "{refused}");
    assert!(
        err.contains("nothing was written: this is a dry run"),
        "{err}"
    );
    assert_eq!((stamped(&sb.ws), stamped(&sb.state)), before);
}

#[test]
fn a_dry_runs_human_output_says_what_would_be_done_not_what_was() {
    let sb = Sandbox::new();
    let out = sb
        .cmd()
        .args([
            "run",
            "--provider",
            "claude",
            "--cli-version",
            "2.1.233",
            "--workspace",
            sb.ws.to_str().unwrap(),
            "--prompt",
            "p",
            "--dry-run",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
    assert!(!files.is_empty(), "no file lines in:\n{text}");
    for line in files {
        assert!(
            line.trim_start().starts_with("would be "),
            "a dry run's file line tells of something done: {line}"
        );
    }
    assert!(text.contains("dry run: nothing was written"), "{text}");
    assert!(!sb.state.exists());
}
