//! The text reaches the model, provably, through the binary: every acquire receipt carries a
//! delivery verdict that agrees with `resolve --as` over the same workspace; a budget the CLI's
//! own arguments raise is raised (Codex and a 40 KiB AGENTS.md); `--require-delivery` fails with
//! everything undone; `run` prints the verdict and never starts a command it refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod support;

use serde_json::Value;
use support::{Sandbox, me, tree};

/// A project AGENTS.md of 40 KiB (more than Codex's 32 KiB budget) and a `.git`.
fn big_agents_md(sb: &Sandbox) {
    std::fs::create_dir(sb.ws.join(".git")).unwrap();
    let text = projectfile_conformance::delivery::forty_kib();
    std::fs::write(sb.ws.join("AGENTS.md"), text).unwrap();
}

/// `acquire --json` held by this test, asserting success.
fn acquire(sb: &Sandbox, provider: &str, prompt: &str, extra: &[&str]) -> Value {
    let out = sb
        .session("acquire", provider, prompt)
        .args(["--holder-pid", &me(), "--json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `resolve --as provider --json` over the sandbox's workspace, with extra arguments.
fn resolve_as(sb: &Sandbox, provider: &str, extra: &[&str]) -> Value {
    let ws = sb.ws.to_string_lossy().into_owned();
    let mut args = vec!["resolve", "--workspace", &ws, "--as", provider];
    args.extend_from_slice(extra);
    sb.json(&args)
}

/// Whether a resolution keeps a source holding `text`, and no session block is cut by the
/// budget (a block cut in its end marker still shows the text, but not whole).
fn keeps(resolution: &Value, text: &str) -> bool {
    let cut = resolution["omitted"].as_array().unwrap().iter().any(|o| {
        o["path"].as_str().unwrap().contains("#session")
            && o["reason"].as_str().unwrap().starts_with("budget_")
    });
    !cut && resolution["sources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["body"].as_str().unwrap().contains(text))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn codex_with_a_40_kib_agents_md_is_delivered_by_raising_its_budget() {
    let sb = Sandbox::new();
    big_agents_md(&sb);
    let prompt = "Session text past the budget: answer in French.";
    let receipt = acquire(&sb, "codex", prompt, &[]);
    let size = std::fs::metadata(sb.ws.join("AGENTS.md")).unwrap().len();
    let raise = vec!["-c".to_string(), format!("project_doc_max_bytes={size}")];
    let delivery = &receipt["delivery"];
    assert_eq!(delivery["delivered"], true, "{delivery}");
    assert_eq!(delivery["via"], "block");
    assert_eq!(strings(&delivery["launch_args"]), raise);
    assert_eq!(strings(&receipt["launch_args"]), raise, "{receipt}");
    assert!(
        delivery["note"].as_str().unwrap().contains("32768"),
        "{delivery}"
    );
    // The verdict agrees with `resolve --as codex`: cut at the default budget, whole at the
    // raised one.
    assert!(!keeps(&resolve_as(&sb, "codex", &[]), prompt));
    let raised = resolve_as(&sb, "codex", &["--max-bytes", &size.to_string()]);
    assert!(keeps(&raised, prompt), "{raised}");
    let one_less = resolve_as(&sb, "codex", &["--max-bytes", &(size - 1).to_string()]);
    assert!(
        !keeps(&one_less, prompt),
        "the budget named is the smallest"
    );
}

#[test]
fn a_route_that_delivers_at_once_needs_no_arguments() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.ws.join(".git")).unwrap();
    std::fs::write(sb.ws.join("AGENTS.md"), "Project rules.\n").unwrap();
    let receipt = acquire(&sb, "codex", "Small and delivered.", &[]);
    assert_eq!(receipt["delivery"]["delivered"], true);
    assert_eq!(receipt["launch_args"], serde_json::json!([]));
    assert!(receipt["delivery"].get("launch_args").is_none());
    assert_eq!(
        receipt["delivery"]["path"],
        sb.ws.join("AGENTS.md").to_string_lossy().as_ref()
    );
    assert!(keeps(
        &resolve_as(&sb, "codex", &["--no-user"]),
        "Small and delivered."
    ));
}

/// An AGENTS.md larger than a file is read (4 MiB): Codex's profile drops it, and nothing on the
/// command line changes that.
fn too_large_agents_md(sb: &Sandbox) {
    std::fs::create_dir(sb.ws.join(".git")).unwrap();
    let big = format!("# Rules\n{}\n", "x".repeat(4 * 1024 * 1024));
    std::fs::write(sb.ws.join("AGENTS.md"), big).unwrap();
}

#[test]
fn an_undeliverable_route_is_reported_and_warned() {
    let sb = Sandbox::new();
    too_large_agents_md(&sb);
    let out = sb
        .session("acquire", "codex", "Never seen.")
        .args(["--holder-pid", &me(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let receipt: Value = serde_json::from_slice(&out.stdout).unwrap();
    let delivery = &receipt["delivery"];
    assert_eq!(delivery["delivered"], false, "{delivery}");
    assert_eq!(delivery["undelivered"]["reason"], "dropped");
    assert_eq!(delivery["undelivered"]["omission"], "file_too_large");
    assert!(delivery.get("launch_args").is_none());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning:") && stderr.contains("will not reach the model"),
        "{stderr}"
    );
    // `resolve --as codex` says the same.
    let resolved = resolve_as(&sb, "codex", &[]);
    assert!(!keeps(&resolved, "Never seen."));
    assert!(
        resolved["omitted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["reason"] == "file_too_large"),
        "{resolved}"
    );
}

#[test]
fn require_delivery_fails_with_everything_undone() {
    let sb = Sandbox::new();
    too_large_agents_md(&sb);
    let before = tree(&sb.ws);
    let ws = sb.ws.to_string_lossy().into_owned();
    let out = sb
        .session("acquire", "codex", "Never seen.")
        .args(["--holder-pid", &me(), "--require-delivery", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["schema"], "projectfile.error.v1");
    assert_eq!(error["error"]["kind"], "undelivered");
    let agents = sb.ws.join("AGENTS.md").to_string_lossy().into_owned();
    assert_eq!(error["error"]["path"], agents.as_str());
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("file_too_large"), "{message}");
    assert!(message.contains("undone"), "{message}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!("error: {agents}: ")),
        "{stderr}"
    );
    // Nothing is left: the workspace as it was, no lease, no entry.
    assert_eq!(tree(&sb.ws), before);
    let status = sb.json(&["status", "--workspace", &ws]);
    assert_eq!(status["leases"], serde_json::json!([]), "{status}");
    assert_eq!(status["entries"], serde_json::json!([]), "{status}");
}

#[test]
fn require_delivery_lets_a_delivered_route_start() {
    let sb = Sandbox::new();
    big_agents_md(&sb);
    let receipt = acquire(&sb, "codex", "Delivered.", &["--require-delivery"]);
    assert_eq!(receipt["delivery"]["delivered"], true);
    let token = receipt["token"].as_str().unwrap();
    assert_eq!(sb.json(&["release", "--token", token])["released"], true);
}

#[test]
fn the_text_summary_says_whether_the_text_is_delivered() {
    let sb = Sandbox::new();
    big_agents_md(&sb);
    let ws = sb.ws.to_string_lossy().into_owned();
    let out = sb
        .session("acquire", "codex", "Shown.")
        .args(["--holder-pid", &me()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("session text: delivered (block {ws}/AGENTS.md)")),
        "{stdout}"
    );
    assert!(stdout.contains("launch args: -c project_doc_max_bytes="));
}

#[test]
fn run_prints_the_verdict_and_passes_the_raised_budget() {
    let sb = Sandbox::new();
    big_agents_md(&sb);
    // `echo` shows the launch arguments it was given after its own.
    let out = sb
        .session("run", "codex", "Run me.")
        .args(["--json", "--", "echo", "args:"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    let receipt: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(receipt["delivery"]["delivered"], true);
    let echoed = lines.next().unwrap();
    assert!(
        echoed.starts_with("args: -c project_doc_max_bytes="),
        "{echoed}"
    );
}

#[test]
fn run_with_require_delivery_never_starts_a_refused_command() {
    let sb = Sandbox::new();
    too_large_agents_md(&sb);
    let before = tree(&sb.ws);
    let witness = sb.base.join("ran");
    let out = sb
        .session("run", "codex", "Never seen.")
        .args(["--require-delivery", "--json", "--", "touch"])
        .arg(&witness)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["error"]["kind"], "undelivered");
    assert!(!witness.exists(), "the refused command ran");
    assert_eq!(tree(&sb.ws), before);
}

/// The text between our markers in `file`.
fn block_text(file: &std::path::Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let begin = text.find("<!-- BEGIN").expect("a block");
    let body = &text[begin..];
    let start = body.find('\n').unwrap() + 1;
    let end = body.find("<!-- END").unwrap();
    body[start..end].to_string()
}

#[test]
fn a_shared_block_warns_and_gives_a_live_session_its_text_back() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), "The user's rules.\n").unwrap();
    let before = tree(&sb.ws);
    let agents = sb.ws.join("AGENTS.md");
    let a = acquire(&sb, "codex", "Text of session A.", &[]);
    assert_eq!(a["warnings"], serde_json::json!([]));
    let a_token = a["token"].as_str().unwrap();
    let b = acquire(&sb, "codex", "Text of session B.", &[]);
    let b_token = b["token"].as_str().unwrap();
    assert_eq!(block_text(&agents), "Text of session B.\n");
    // B is told that A shares the block with another text, by token.
    let warnings = b["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| {
            let message = w["message"].as_str().unwrap();
            message.contains(a_token) && message.contains("one session text")
        }),
        "{warnings:?}"
    );
    // B ends: the block holds A's text again, for A's remaining life.
    let released = sb.json(&["release", "--token", b_token]);
    assert_eq!(block_text(&agents), "Text of session A.\n");
    assert!(
        released["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "AGENTS.md" && f["action"] == "refreshed"),
        "{released}"
    );
    let resolved = resolve_as(&sb, "codex", &["--no-user"]);
    assert!(keeps(&resolved, "Text of session A."));
    assert!(!keeps(&resolved, "Text of session B."));
    // A ends: the file is as the user left it.
    sb.json(&["release", "--token", a_token]);
    assert_eq!(tree(&sb.ws), before);
}

#[test]
fn a_shared_block_warning_names_the_newest_three_and_counts_the_rest() {
    let sb = Sandbox::new();
    let sessions: Vec<serde_json::Value> = (0..6)
        .map(|n| acquire(&sb, "codex", &format!("Text {n}."), &[]))
        .collect();
    let token = |n: usize| sessions[n]["token"].as_str().unwrap().to_string();
    let message = sessions[5]["warnings"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    // The three newest others by name, newest first, and the other two counted.
    let at = |n: usize| message.find(&token(n));
    assert!(
        matches!((at(4), at(3), at(2)), (Some(a), Some(b), Some(c)) if a < b && b < c),
        "{message}"
    );
    for older in [0, 1] {
        assert!(!message.contains(&token(older)), "{message}");
    }
    assert!(
        message.contains(" and 2 more share this block"),
        "{message}"
    );
    for n in 0..6 {
        sb.json(&["release", "--token", &token(n)]);
    }
}

#[test]
fn a_shared_block_warning_counts_only_the_sessions_with_another_text() {
    let sb = Sandbox::new();
    // Runs of one text, as the leases read from one record share them.
    let texts = [
        "Text A.", "Text A.", "Text A.", "Text B.", "Text B.", "Text A.",
    ];
    let sessions: Vec<serde_json::Value> = texts
        .iter()
        .map(|text| acquire(&sb, "codex", text, &[]))
        .collect();
    let token = |n: usize| sessions[n]["token"].as_str().unwrap().to_string();
    let message = |n: usize| {
        sessions[n]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["message"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    // The first B is warned of the three A sessions, the second of the same three (not of B).
    for n in [3, 4] {
        let message = message(n);
        for other in 0..3 {
            assert!(message.contains(&token(other)), "{message}");
        }
        assert!(!message.contains(" more "), "{message}");
        assert!(!message.contains(&token(3 + 4 - n)), "{message}");
    }
    // The last A is warned of the two B sessions only.
    let last = message(5);
    assert!(
        last.contains(&token(3)) && last.contains(&token(4)),
        "{last}"
    );
    for a in 0..3 {
        assert!(!last.contains(&token(a)), "{last}");
    }
    for n in 0..6 {
        sb.json(&["release", "--token", &token(n)]);
    }
}

#[test]
fn the_newest_live_text_comes_back_and_user_lines_in_the_block_stay() {
    let sb = Sandbox::new();
    let agents = sb.ws.join("AGENTS.md");
    let a = acquire(&sb, "codex", "Text A.", &[]);
    let b = acquire(&sb, "codex", "Text B.", &[]);
    let c = acquire(&sb, "codex", "Text C.", &[]);
    // C's warning names both others.
    let message = c["warnings"][0]["message"].as_str().unwrap().to_string();
    for other in [&a, &b] {
        assert!(
            message.contains(other["token"].as_str().unwrap()),
            "{message}"
        );
    }
    // The user writes a line inside the block while the sessions run.
    let text = std::fs::read_to_string(&agents).unwrap();
    let edited = text.replace("Text C.\n", "Text C.\nThe user's own line.\n");
    assert_ne!(edited, text);
    std::fs::write(&agents, &edited).unwrap();
    sb.json(&["release", "--token", c["token"].as_str().unwrap()]);
    assert_eq!(block_text(&agents), "Text B.\n", "the newest live text");
    let now = std::fs::read_to_string(&agents).unwrap();
    assert!(now.contains("The user's own line.\n"), "{now}");
    // A session that does not hold the block's text ends: nothing changes.
    sb.json(&["release", "--token", a["token"].as_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&agents).unwrap(), now);
    sb.json(&["release", "--token", b["token"].as_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(&agents).unwrap(),
        "The user's own line.\n"
    );
}

#[test]
fn sessions_with_one_text_share_a_block_without_a_warning() {
    let sb = Sandbox::new();
    let a = acquire(&sb, "codex", "The same text.", &[]);
    let b = acquire(&sb, "codex", "The same text.", &[]);
    assert_eq!(b["warnings"], serde_json::json!([]));
    let released = sb.json(&["release", "--token", b["token"].as_str().unwrap()]);
    assert_eq!(released["files"], serde_json::json!([]), "{released}");
    sb.json(&["release", "--token", a["token"].as_str().unwrap()]);
    assert!(!sb.ws.join("AGENTS.md").exists());
}

#[test]
fn a_dead_sessions_text_is_replaced_by_the_live_one_at_the_next_start() {
    let sb = Sandbox::new();
    let agents = sb.ws.join("AGENTS.md");
    let a = acquire(&sb, "codex", "Text of the live session.", &[]);
    // B is held by a process that dies.
    let mut holder = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = holder.id().to_string();
    let out = sb
        .session("acquire", "codex", "Text of the dead session.")
        .args(["--holder-pid", &pid, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(block_text(&agents), "Text of the dead session.\n");
    holder.kill().unwrap();
    holder.wait().unwrap();
    let cleaned = sb.json(&["strip-stale", "--workspace", &sb.ws.to_string_lossy()]);
    assert_eq!(cleaned["stale_cleaned"].as_array().unwrap().len(), 1);
    assert_eq!(block_text(&agents), "Text of the live session.\n");
    sb.json(&["release", "--token", a["token"].as_str().unwrap()]);
    assert!(!agents.exists());
}

#[test]
fn claudes_fallback_flag_is_a_provider_option() {
    let sb = Sandbox::new();
    let old = ["--cli-version", "2.1.233"];
    let default = acquire(&sb, "claude", "Appended.", &old);
    assert_eq!(default["launch_args"][0], "--append-system-prompt-file");
    let mut replace = old.to_vec();
    replace.extend(["--provider-option", "claude.prompt=replace"]);
    // An option for another provider of this build is left out.
    replace.extend(["--provider-option", "codex.anything=at-all"]);
    let replaced = acquire(&sb, "claude", "Replacing.", &replace);
    assert_eq!(replaced["launch_args"][0], "--system-prompt-file");
    let file = replaced["launch_args"][1].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(file).unwrap(), "Replacing.");
    assert_eq!(replaced["delivery"]["delivered"], true);
    assert_eq!(replaced["delivery"]["path"], file);
    assert!(
        replaced["notes"][0]
            .as_str()
            .unwrap()
            .contains("prompt=replace"),
        "{replaced}"
    );
}

#[test]
fn unknown_provider_options_are_bad_usage_and_change_nothing() {
    let sb = Sandbox::new();
    for (spec, says) in [
        ("claude.prompt=overwrite", "takes append or replace"),
        ("claude.flag=replace", "no option `flag`"),
        ("nosuch.prompt=replace", "no such provider"),
        ("claude-prompt-replace", "PROVIDER.NAME=VALUE"),
    ] {
        let out = sb
            .session("acquire", "claude", "Refused.")
            .args(["--holder-pid", &me(), "--json", "--provider-option", spec])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{spec}: {out:?}");
        let error: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(error["error"]["kind"], "usage");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{spec}: {message}");
    }
    assert!(tree(&sb.ws).is_empty());
    assert!(!sb.state.exists(), "nothing was created");
}

#[test]
fn providers_list_their_options() {
    let sb = Sandbox::new();
    let providers = sb.json(&["providers"]);
    let list = providers["providers"].as_array().unwrap();
    let claude = list.iter().find(|p| p["name"] == "claude").unwrap();
    let option = &claude["options"][0];
    assert_eq!(option["name"], "prompt");
    assert_eq!(option["values"], serde_json::json!(["append", "replace"]));
    assert_eq!(option["default"], "append");
    let codex = list.iter().find(|p| p["name"] == "codex").unwrap();
    assert_eq!(codex["options"], serde_json::json!([]));
}

/// An AGENTS.md holding a byte that is not UTF-8 is sent by every CLI measured, the bad byte as
/// U+FFFD (Codex 0.171.0, Claude Code 2.1.332, Pi 0.73.1): the session text in it arrives, and
/// `resolve --as` keeps the file.
#[test]
fn an_agents_md_that_is_not_utf8_still_delivers() {
    for provider in ["codex", "claude", "pi"] {
        let sb = Sandbox::new();
        std::fs::create_dir(sb.ws.join(".git")).unwrap();
        std::fs::write(sb.ws.join("AGENTS.md"), b"# caf\xE9 rules\n").unwrap();
        let receipt = sb.acquired(provider, "Arrives.", &[]);
        assert_eq!(
            receipt["delivery"]["delivered"], true,
            "{provider}: {receipt}"
        );
        let resolved = resolve_as(&sb, provider, &["--no-user"]);
        assert!(
            keeps(&resolved, "caf\u{FFFD} rules"),
            "{provider}: {resolved}"
        );
        sb.json(&["release", "--token", receipt["token"].as_str().unwrap()]);
    }
}

/// A session text holding an `@path` import, for a CLI that reads imports in it (Gemini CLI
/// 0.61.0 put an "Import failed" note in place of `@types/node.js`, measured): the receipt warns,
/// naming the import. In backticks, or for a CLI that reads none, it does not.
#[test]
fn an_import_in_the_session_text_is_warned_of_where_the_cli_reads_imports() {
    for (provider, prompt, warned) in [
        ("gemini", "Install @types/node.js and ping @team.lead", true),
        ("gemini", "Install `@types/node.js` first", false),
        ("qwen", "Read @notes.md first", true),
        ("codex", "Install @types/node.js", false),
    ] {
        let sb = Sandbox::new();
        let receipt = sb.acquired(provider, prompt, &[]);
        let warning = receipt["warnings"].as_array().unwrap().iter().any(|w| {
            w["message"]
                .as_str()
                .unwrap()
                .contains("reads as an import")
        });
        assert_eq!(warning, warned, "{provider} {prompt:?}: {receipt}");
        sb.json(&["release", "--token", receipt["token"].as_str().unwrap()]);
    }
}

/// A file a session writes whole and others share (Cursor's rule file, Gemini CLI's merged
/// `settings.json`) is as a shared block: when the session whose content it holds ends, it gets
/// the content of the newest live session back, and the last end leaves the project as it was.
#[test]
fn a_shared_owned_file_gives_a_live_session_its_content_back() {
    let sb = Sandbox::new();
    let rule = sb.ws.join(".cursor/rules/mlp-system.mdc");
    let a = acquire(&sb, "cursor", "Text A.", &[]);
    let b = acquire(&sb, "cursor", "Text B.", &[]);
    assert!(std::fs::read_to_string(&rule).unwrap().contains("Text B."));
    // B is told that A shares the file with other content, by token.
    let warnings = b["warnings"].to_string();
    assert!(
        warnings.contains(a["token"].as_str().unwrap()) && warnings.contains("other content"),
        "{warnings}"
    );
    sb.json(&["release", "--token", b["token"].as_str().unwrap()]);
    let now = std::fs::read_to_string(&rule).unwrap();
    assert!(now.contains("Text A.") && !now.contains("Text B."), "{now}");
    sb.json(&["release", "--token", a["token"].as_str().unwrap()]);
    assert!(!rule.exists());

    let sb = Sandbox::new();
    std::fs::create_dir(sb.ws.join(".gemini")).unwrap();
    std::fs::write(
        sb.ws.join(".gemini/settings.json"),
        "{\"theme\": \"dark\"}\n",
    )
    .unwrap();
    let before = tree(&sb.ws);
    let servers = |name: &str| {
        let file = sb.base.join(format!("{name}.json"));
        std::fs::write(&file, format!("{{\"{name}\": {{\"command\": \"echo\"}}}}")).unwrap();
        file
    };
    let (srv_a, srv_b) = (servers("srvA"), servers("srvB"));
    let a = acquire(
        &sb,
        "gemini",
        "x",
        &["--mcp-config", srv_a.to_str().unwrap()],
    );
    let b = acquire(
        &sb,
        "gemini",
        "x",
        &["--mcp-config", srv_b.to_str().unwrap()],
    );
    let settings = || -> Value {
        serde_json::from_slice(&std::fs::read(sb.ws.join(".gemini/settings.json")).unwrap())
            .unwrap()
    };
    assert!(settings()["mcpServers"].get("srvB").is_some());
    sb.json(&["release", "--token", b["token"].as_str().unwrap()]);
    let now = settings();
    assert!(now["mcpServers"].get("srvA").is_some(), "{now}");
    assert!(now["mcpServers"].get("srvB").is_none(), "{now}");
    assert_eq!(now["theme"], "dark");
    sb.json(&["release", "--token", a["token"].as_str().unwrap()]);
    assert_eq!(tree(&sb.ws), before);
}

/// A start onto a shared file written whole that the user edited leaves the edit: its text is not
/// there, so it is not delivered (`--require-delivery` refuses it, undone), and no warning claims
/// the file holds it. A release then gives nothing back over the edit, and says so once.
#[test]
fn a_shared_owned_file_the_user_edited_is_not_delivered_nor_given_back() {
    let sb = Sandbox::new();
    let rule = sb.ws.join(".cursor/rules/mlp-system.mdc");
    let a = acquire(&sb, "cursor", "Text A.", &[]);
    let edit = "---\nalwaysApply: true\n---\nThe user's own rule.\n";
    std::fs::write(&rule, edit).unwrap();
    let out = sb
        .cmd()
        .args(["--json", "acquire", "--provider", "cursor", "--workspace"])
        .arg(&sb.ws)
        .args([
            "--prompt",
            "Text B.",
            "--require-delivery",
            "--holder-pid",
            &me(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["error"]["kind"], "undelivered", "{error}");
    let b = acquire(&sb, "cursor", "Text B.", &[]);
    assert_eq!(b["delivery"]["delivered"], false, "{b}");
    assert_eq!(
        b["delivery"]["undelivered"]["reason"], "edited_by_user",
        "{b}"
    );
    assert!(
        !b["warnings"].to_string().contains("holds this session's"),
        "{b}"
    );
    assert_eq!(std::fs::read_to_string(&rule).unwrap(), edit);
    let end = sb.json(&["release", "--token", b["token"].as_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&rule).unwrap(), edit);
    let listed = end["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == ".cursor/rules/mlp-system.mdc")
        .count();
    assert!(listed <= 1, "{end}");
    sb.json(&["release", "--token", a["token"].as_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(&rule).unwrap(),
        edit,
        "the edit stands"
    );

    // The user edits the file while it holds the newest session's content: that session's end
    // gives nothing back over the edit, and says so once.
    let a = acquire(&sb, "cursor", "Text A.", &[]);
    let b = acquire(&sb, "cursor", "Text B.", &[]);
    std::fs::write(&rule, edit).unwrap();
    let end = sb.json(&["release", "--token", b["token"].as_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&rule).unwrap(), edit);
    assert_eq!(end["files"].as_array().unwrap().len(), 1, "{end}");
    assert_eq!(end["kept"].as_array().unwrap().len(), 1, "{end}");
    sb.json(&["release", "--token", a["token"].as_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&rule).unwrap(), edit);
}
