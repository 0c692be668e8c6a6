//! Black-box tests of the neutral session definitions: every provider is handed the same neutral
//! command, subagent and hooks files and either projects each converted to its CLI's own form
//! (the matrix and every converted file are a snapshot) or refuses it, naming the kind and the
//! provider, with the workspace untouched; while a session runs git sees nothing of ours but the
//! block, and after it the workspace is byte for byte as before. Also: a neutral hooks file
//! handed in as the CLI's own format is converted all the same, a malformed one is refused, so
//! is a subagent without front matter or a `description` by every provider, the hook script is
//! named by its projected path, and Gemini CLI's subagents go to a private CLI home only.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use support::{RUNTIME_ID, Sandbox, tree};

const COMMAND: &str = "---\ndescription: Ship the change\nargument-hint: <what>\n---\nShip $ARGUMENTS, then say MARK-CMD.\n";
const AGENT: &str = "---\nname: reviewer\ndescription: Reviews a change (MARK-AGENT)\ntools: Read, Grep\nmodel: inherit\n---\nYou review changes.\n";
const HOOKS: &str = r#"{"hooks": {
  "session_start": [{"command": "echo started"}],
  "user_prompt_submit": [{"command": "echo prompt"}],
  "before_tool": [{"matcher": "Bash", "command": "{{hook_script}} check", "timeout": 5}],
  "after_tool": [{"command": "echo after"}],
  "stop": [{"command": "echo stop"}],
  "session_end": [{"command": "echo end"}]
}}"#;

/// Writes the three neutral files and the hook script into the sandbox's base folder.
fn write_inputs(sb: &Sandbox) {
    std::fs::write(sb.base.join("command.md"), COMMAND).unwrap();
    std::fs::write(sb.base.join("agent.md"), AGENT).unwrap();
    std::fs::write(sb.base.join("hooks.json"), HOOKS).unwrap();
    std::fs::write(sb.base.join("guard.sh"), "#!/bin/sh\nexit 0\n").unwrap();
}

/// The arguments bringing `kind` (`command`, `agent` or `hooks`).
fn kind_args(sb: &Sandbox, kind: &str) -> Vec<String> {
    let at = |file: &str| sb.base.join(file).display().to_string();
    match kind {
        "command" => vec!["--command".into(), format!("ship={}", at("command.md"))],
        "agent" => vec!["--agent".into(), format!("reviewer={}", at("agent.md"))],
        _ => vec![
            "--hooks".into(),
            at("hooks.json"),
            "--hook-script".into(),
            at("guard.sh"),
        ],
    }
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap())
}

/// A workspace with a tracked `AGENTS.md` (in a git repository when git is here).
fn workspace(sb: &Sandbox) -> bool {
    std::fs::write(sb.ws.join("AGENTS.md"), b"# rules\n").unwrap();
    let has_git = git(&sb.ws, &["init", "-q"]).is_some()
        && git(&sb.ws, &["add", "AGENTS.md"]).is_some()
        && git(&sb.ws, &["commit", "-q", "-m", "init"]).is_some();
    if !has_git {
        eprintln!("no git here: git's view not tested");
    }
    has_git
}

/// What a file of ours says in the snapshot: the paths under the state directory or the
/// temporary folder replaced by a name that does not vary between runs.
fn stable(sb: &Sandbox, text: &str) -> String {
    let session = format!("{}/workspaces/", sb.state.display());
    let mut out = String::new();
    let mut rest = text;
    // `<state>/workspaces/<key>/sessions/<token>/`: the key and the token vary.
    while let Some(at) = rest.find(&session) {
        out.push_str(&rest[..at]);
        let after = &rest[at + session.len()..];
        let skip: usize = after.split('/').take(3).map(|s| s.len() + 1).sum();
        out.push_str("<session>/");
        rest = &after[skip.min(after.len())..];
    }
    out.push_str(rest);
    out.replace(&sb.base.display().to_string(), "<tmp>")
}

/// Every provider this build has.
fn providers(sb: &Sandbox) -> Vec<String> {
    sb.json(&["providers"])["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_provider_converts_or_refuses_the_same_neutral_definitions() {
    let mut report = String::new();
    let sb0 = Sandbox::new();
    for provider in providers(&sb0) {
        for kind in ["command", "agent", "hooks"] {
            let sb = Sandbox::new();
            write_inputs(&sb);
            let has_git = workspace(&sb);
            let before = tree(&sb.ws);
            let args = kind_args(&sb, kind);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = sb
                .acquire_command(&provider, "Be brief.", &args)
                .arg("--json")
                .output()
                .unwrap();
            if !out.status.success() {
                let error: Value = serde_json::from_slice(&out.stdout).unwrap();
                let message = error["error"]["message"].as_str().unwrap().to_string();
                assert_eq!(out.status.code(), Some(1), "{provider} {kind}: {message}");
                assert!(
                    message.contains(&provider),
                    "{provider} {kind}: the refusal does not name the provider: {message}"
                );
                let named = match kind {
                    "command" => "command",
                    "agent" => "subagent",
                    _ => "hooks",
                };
                assert!(
                    message.contains(named),
                    "{provider} {kind}: {message} does not name {named}"
                );
                assert_eq!(
                    tree(&sb.ws),
                    before,
                    "{provider} {kind}: refused, yet touched"
                );
                report.push_str(&format!("## {provider} {kind}: refused\n{message}\n\n"));
                continue;
            }
            let receipt: Value = serde_json::from_slice(&out.stdout).unwrap();
            report.push_str(&format!("## {provider} {kind}: projected\n"));
            for file in receipt["files"].as_array().unwrap() {
                let path = file["path"].as_str().unwrap();
                let ours = file["kind"] == "owned" || file["kind"] == "merged";
                if ours && !path.contains("mlp-system") {
                    let text = std::fs::read_to_string(sb.ws.join(path)).unwrap();
                    assert!(
                        !text.contains("session_start") && !text.contains("before_tool"),
                        "{provider}: {path} holds neutral event names:\n{text}"
                    );
                    report.push_str(&format!("### {path}\n{}\n", stable(&sb, &text)));
                }
            }
            for arg in receipt["launch_args"].as_array().unwrap() {
                let arg = arg.as_str().unwrap();
                report.push_str(&format!("arg: {}\n", stable(&sb, arg)));
                if let Some((_, file)) = arg.split_once("config_file=") {
                    report.push_str(&format!(
                        "### <private role file>\n{}\n",
                        std::fs::read_to_string(file).unwrap()
                    ));
                }
                if let Some(file) = arg.strip_prefix("--settings=") {
                    report.push_str(&format!(
                        "### <private settings file>\n{}\n",
                        stable(&sb, &std::fs::read_to_string(file).unwrap())
                    ));
                }
            }
            if let Some(env) = receipt["env"].as_object() {
                for (name, value) in env {
                    let value = value.as_str().unwrap();
                    let private = Path::new(value);
                    if private.starts_with(&sb.state) && private.is_file() {
                        report.push_str(&format!(
                            "### <private file in ${name}>\n{}\n",
                            stable(&sb, &std::fs::read_to_string(private).unwrap())
                        ));
                    }
                }
            }
            report.push('\n');
            if has_git {
                let status =
                    git(&sb.ws, &["status", "--porcelain", "--untracked-files=all"]).unwrap();
                for line in status.lines() {
                    assert!(
                        line.starts_with(" M "),
                        "{provider} {kind}: git sees {line:?} during the session:\n{status}"
                    );
                }
            }
            let token = receipt["token"].as_str().unwrap();
            let released = sb
                .cmd()
                .args(["release", "--token", token])
                .output()
                .unwrap();
            assert!(released.status.success(), "{provider} {kind}: release");
            assert_eq!(
                tree(&sb.ws),
                before,
                "{provider} {kind}: not byte for byte after"
            );
        }
    }
    insta::assert_snapshot!(report);
}

#[test]
fn a_neutral_hooks_file_given_as_the_clis_own_is_converted_all_the_same() {
    let sb = Sandbox::new();
    write_inputs(&sb);
    std::fs::write(
        sb.base.join("neutral.json"),
        r#"{"hooks": {"session_start": [{"command": "echo hi"}]}}"#,
    )
    .unwrap();
    let hooks = sb.base.join("neutral.json").display().to_string();
    let out = sb
        .acquire_command("cursor", "x", &["--hooks-config", &hooks, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written: Value =
        serde_json::from_slice(&std::fs::read(sb.ws.join(".cursor/hooks.json")).unwrap()).unwrap();
    assert_eq!(
        written,
        serde_json::json!({"version": 1, "hooks": {"sessionStart": [{"command": "echo hi"}]}})
    );
    // A file in Cursor's own format is written as it is.
    let own = r#"{"version": 1, "hooks": {"stop": [{"command": "echo own"}]}}"#;
    std::fs::write(sb.base.join("own.json"), own).unwrap();
    let sb2 = Sandbox::new();
    let own_path = sb.base.join("own.json").display().to_string();
    let out = sb2
        .acquire_command("cursor", "x", &["--hooks-config", &own_path])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written: Value =
        serde_json::from_slice(&std::fs::read(sb2.ws.join(".cursor/hooks.json")).unwrap()).unwrap();
    assert_eq!(written, serde_json::from_str::<Value>(own).unwrap());
}

#[test]
fn malformed_neutral_hooks_are_refused_and_touch_nothing() {
    for (config, says) in [
        (
            r#"{"hooks": {"session_begin": [{"command": "x"}]}}"#,
            "session_begin",
        ),
        (
            r#"{"hooks": {"stop": [{"command": "x", "matcher": "Bash"}]}}"#,
            "matcher",
        ),
        (r#"{"hooks": {"stop": [{}]}}"#, "command"),
        (
            r#"{"hooks": {"stop": [{"command": "a"}], "stop": [{"command": "b"}]}}"#,
            r#"the key "stop" is given twice in one object ("hooks" in the document)"#,
        ),
    ] {
        let sb = Sandbox::new();
        std::fs::write(sb.ws.join("AGENTS.md"), "# mine\n").unwrap();
        let before = tree(&sb.ws);
        std::fs::write(sb.base.join("h.json"), config).unwrap();
        let path = sb.base.join("h.json").display().to_string();
        let out = sb
            .acquire_command("claude", "x", &["--hooks", &path])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{config}: {stderr}");
        assert!(stderr.contains(says), "{config}: {stderr}");
        assert_eq!(tree(&sb.ws), before);
        assert!(!sb.state.join("workspaces").exists() || tree(&sb.ws) == before);
    }
}

#[test]
fn the_hook_script_is_named_by_the_path_it_is_projected_to() {
    let sb = Sandbox::new();
    write_inputs(&sb);
    let args = kind_args(&sb, "hooks");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sb.acquire_command("cursor", "x", &args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = sb.ws.join(".cursor/hooks/guard.sh");
    let written: Value =
        serde_json::from_slice(&std::fs::read(sb.ws.join(".cursor/hooks.json")).unwrap()).unwrap();
    assert_eq!(
        written["hooks"]["preToolUse"][0]["command"],
        format!("{} check", script.display())
    );
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "the script runs");
}

#[test]
fn gemini_subagents_go_to_a_private_cli_home_and_nowhere_else() {
    let sb = Sandbox::new();
    write_inputs(&sb);
    std::fs::write(sb.ws.join("GEMINI.md"), "# mine\n").unwrap();
    let before = tree(&sb.ws);
    let agent = format!("reviewer={}", sb.base.join("agent.md").display());
    // Without a private home: refused, naming the way.
    let out = sb
        .acquire_command("gemini", "x", &["--agent", &agent])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--private-cli-home"), "{stderr}");
    assert_eq!(tree(&sb.ws), before);
    // With one: the agent is in $GEMINI_CLI_HOME/.gemini/agents/ while the command runs, with
    // only the keys Gemini CLI's schema takes.
    let runtime = sb.base.join("runtimes");
    let out = sb
        .session("run", "gemini", "x")
        .args(["--agent", &agent, "--runtime-root"])
        .arg(&runtime)
        .args(RUNTIME_ID)
        .args([
            "--private-cli-home",
            "--",
            "sh",
            "-c",
            "cat \"$GEMINI_CLI_HOME/.gemini/agents/reviewer.md\"",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with(
            "---\nname: reviewer\ndescription: \"Reviews a change (MARK-AGENT)\"\n---\n"
        ),
        "{stdout}"
    );
    assert!(
        !stdout.contains("tools:") && !stdout.contains("model:"),
        "{stdout}"
    );
    assert_eq!(tree(&sb.ws), before, "the workspace is untouched");
    let leftovers: Vec<String> = tree(&runtime)
        .into_keys()
        .filter(|path| path.ends_with("reviewer.md"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A name of the longest accepted length (200 bytes) works for every provider that takes the
/// kind: every file and temporary name made from it fits the file system, and the release leaves
/// the workspace as it was. One byte more is refused, naming the limit, before anything is made.
#[test]
fn the_longest_accepted_name_works_and_one_byte_more_is_refused() {
    let sb = Sandbox::new();
    let longest = "a".repeat(200);
    let skill = sb.base.join("skill");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        format!("---\nname: {longest}\ndescription: d\n---\nx\n"),
    )
    .unwrap();
    std::fs::write(sb.base.join("command.md"), COMMAND).unwrap();
    std::fs::write(
        sb.base.join("agent.md"),
        format!("---\nname: {longest}\ndescription: Reviews\n---\nYou review.\n"),
    )
    .unwrap();
    let input = |flag: &str, name: &str| {
        let file = match flag {
            "--skill" => skill.display().to_string(),
            "--command" => sb.base.join("command.md").display().to_string(),
            _ => sb.base.join("agent.md").display().to_string(),
        };
        [flag.to_string(), format!("{name}={file}")]
    };
    let before = tree(&sb.ws);
    for provider in providers(&sb) {
        for flag in ["--skill", "--command", "--agent"] {
            let out = sb
                .session("acquire", &provider, "x")
                .args(input(flag, &longest))
                .arg("--json")
                .output()
                .unwrap();
            let receipt: Value = serde_json::from_slice(&out.stdout).unwrap();
            if !out.status.success() {
                // A provider refusing the kind (or the name's form) says why, as invalid input.
                assert_ne!(
                    receipt["error"]["kind"], "io",
                    "{provider} {flag}: {receipt}"
                );
                continue;
            }
            sb.json(&["release", "--token", receipt["token"].as_str().unwrap()]);
            assert_eq!(tree(&sb.ws), before, "{provider} {flag}");
        }
    }
    let out = sb
        .session("acquire", "claude", "x")
        .args(input("--command", &"a".repeat(201)))
        .arg("--json")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 200 bytes"),
        "{error}"
    );
    assert_eq!(tree(&sb.ws), before);
}

#[test]
fn a_subagent_without_front_matter_or_description_is_refused_by_every_provider() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), "# mine\n").unwrap();
    let before = tree(&sb.ws);
    for (text, says) in [
        ("You review changes.\n", "front matter"),
        (
            "---\nname: reviewer\n---\nYou review changes.\n",
            "description",
        ),
    ] {
        std::fs::write(sb.base.join("agent.md"), text).unwrap();
        let agent = format!("reviewer={}", sb.base.join("agent.md").display());
        for provider in providers(&sb) {
            let out = sb
                .session("acquire", &provider, "x")
                .args(["--agent", &agent, "--json"])
                .output()
                .unwrap();
            let receipt: Value = serde_json::from_slice(&out.stdout).unwrap();
            // Refused as invalid input (this agent) or as a kind the provider cannot take.
            assert_eq!(out.status.code(), Some(1), "{provider} {text:?}: {receipt}");
            let message = receipt["error"]["message"].as_str().unwrap();
            assert!(
                message.contains(says) || receipt["error"]["kind"] == "provider",
                "{provider} {text:?}: {message}"
            );
            assert_eq!(tree(&sb.ws), before, "{provider} {text:?}");
        }
    }
}
