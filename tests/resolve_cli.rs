//! `projectfile resolve --as` on the real file system: the budget figures add up in JSON and in
//! text (what the budget let through plus what it cut is what the sources held), a file another
//! one takes the place of is listed as `shadowed` with that file, a version-specific profile
//! follows `--cli-version`, and text beside an import on its line is kept.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod support;

use serde_json::Value;
use support::{BIN, Sandbox};

fn resolve(sb: &Sandbox, args: &[&str]) -> (Value, String) {
    let run = |json: bool| {
        let mut cmd = std::process::Command::new(BIN);
        cmd.args(["resolve", "--workspace"]).arg(&sb.ws);
        cmd.arg("--home").arg(sb.base.join("home")).args(args);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    (serde_json::from_str(&run(true)).unwrap(), run(false))
}

fn block(text: &str) -> String {
    format!(
        "<!-- BEGIN agentworks-session-instructions created=false -->\n{text}\n<!-- END agentworks-session-instructions -->\n"
    )
}

#[test]
fn codex_budget_figures_add_up_in_json_and_text() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.ws.join(".git")).unwrap();
    let user = "Rule: keep the house style.\n".repeat(1600);
    let file = format!("{user}{}", block("Session text."));
    std::fs::write(sb.ws.join("AGENTS.md"), &file).unwrap();
    let (json, text) = resolve(&sb, &["--as", "codex"]);
    let used = json["total_bytes"].as_u64().unwrap();
    let cut = json["cut_bytes"].as_u64().unwrap();
    assert_eq!(json["budget_bytes"], 32768);
    assert_eq!(used, 32768, "Codex reads up to its budget, never past it");
    // Codex counts the file as written: kept plus cut is the whole file.
    assert_eq!(used + cut, file.len() as u64);
    let omitted = json["omitted"].as_array().unwrap();
    assert!(omitted.iter().any(|o| o["reason"] == "budget_exhausted"
        && o["path"].as_str().unwrap().ends_with("AGENTS.md#session")));
    assert!(
        text.contains(&format!(
            "32768 of 32768 budget bytes used; {cut} bytes cut by the budget"
        )),
        "{text}"
    );
}

#[test]
fn claude_lists_agents_md_as_shadowed_by_claude_md() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), "portable rules\n").unwrap();
    std::fs::write(sb.ws.join("CLAUDE.local.md"), "my notes\n").unwrap();
    let (json, text) = resolve(&sb, &["--as", "claude"]);
    let agents = sb.ws.join("AGENTS.md").display().to_string();
    let local = sb.ws.join("CLAUDE.local.md").display().to_string();
    let omitted = json["omitted"].as_array().unwrap();
    assert!(
        omitted.iter().any(|o| o["path"] == agents.as_str()
            && o["reason"] == "shadowed"
            && o["shadowed_by"] == local.as_str()),
        "{json}"
    );
    assert!(
        text.contains(&format!("{agents} (shadowed by {local})")),
        "{text}"
    );
    assert!(text.contains("bytes used (no budget)"), "{text}");
}

#[test]
fn claude_before_the_gate_does_not_read_agents_md() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), "portable rules\n").unwrap();
    let sources = |version: &str| {
        let (json, _) = resolve(&sb, &["--as", "claude", "--cli-version", version]);
        json["sources"].as_array().unwrap().len()
    };
    assert_eq!(sources("2.1.280"), 0);
    assert_eq!(sources("2.1.281"), 1);
}

#[test]
fn claude_files_below_the_working_directory_are_on_demand() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.ws.join("sub")).unwrap();
    std::fs::write(sb.ws.join("sub/CLAUDE.md"), "sub rules\n").unwrap();
    let (json, _) = resolve(&sb, &["--as", "claude"]);
    assert_eq!(json["sources"].as_array().unwrap().len(), 0);
    assert!(
        json["omitted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["reason"] == "on_demand")
    );
}

/// Text on the same line as an `@import` is sent with the imported file by every CLI that imports
/// (measured with Claude Code 2.1.332, Gemini CLI 0.61.0, Qwen Code 0.24.4 and Copilot CLI
/// 1.0.102): `resolve --as` keeps it, the import replaced in its place.
#[test]
fn text_beside_an_import_on_its_line_is_kept() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.ws.join(".git")).unwrap();
    std::fs::write(sb.ws.join("style.md"), "STYLE-TEXT\n").unwrap();
    let line = "Always use tabs SAME-LINE, see @./style.md and keep AFTER-IMPORT\n";
    for (provider, file) in [
        ("claude", "CLAUDE.md"),
        ("gemini", "GEMINI.md"),
        ("qwen", "QWEN.md"),
        ("copilot", "AGENTS.md"),
    ] {
        std::fs::write(sb.ws.join(file), line).unwrap();
        let (json, _) = resolve(&sb, &["--as", provider, "--no-user"]);
        let body = json["sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["path"].as_str().unwrap().ends_with(file))
            .map(|s| s["body"].as_str().unwrap().to_string())
            .unwrap_or_default();
        assert!(
            body.contains("Always use tabs SAME-LINE, see STYLE-TEXT")
                && body.contains(" and keep AFTER-IMPORT"),
            "{provider}: {json}"
        );
        std::fs::remove_file(sb.ws.join(file)).unwrap();
    }
}
