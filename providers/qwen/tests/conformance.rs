//! Qwen Code's own placement checks (the facts of its docs page the plan relies on). The shared
//! conformance suite runs from `tests/suite.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::core::{McpMode, NamedFile, SessionRequest};
use projectfile_conformance::{Fixture, Subject};
use projectfile_qwen::{AGENTS_DIR, ALLOW_FLAG, COMMANDS_DIR, CONTEXT_FILE, MCP_FLAG, Qwen};
use serde_json::json;

fn subject() -> Subject {
    Subject::new(Qwen)
}

#[test]
fn the_block_goes_into_qwen_md_and_agents_md_is_left_alone() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"shared rules\n");
    let receipt = fx.acquire(&subject(), "session text").unwrap();
    let text = String::from_utf8(fx.read(CONTEXT_FILE).unwrap()).unwrap();
    assert!(text.contains("session text"), "{text}");
    assert_eq!(fx.read("AGENTS.md").unwrap(), b"shared rules\n");
    assert!(receipt.delivery.delivered, "{:?}", receipt.delivery);
    assert!(fx.release(&receipt.token));
    assert!(fx.read(CONTEXT_FILE).is_none());
}

#[test]
fn mcp_servers_go_in_a_private_file_and_replace_names_them() {
    let fx = Fixture::new();
    let mut session = SessionRequest {
        mcp_servers: Some(
            json!({"docs": {"command": "docs-server"}, "web": {"url": "http://x.invalid"}}),
        ),
        ..SessionRequest::with_prompt("p")
    };
    let receipt = fx.acquire_session(&subject(), session.clone()).unwrap();
    assert_eq!(receipt.launch_args.len(), 1, "{:?}", receipt.launch_args);
    let (flag, file) = receipt.launch_args[0].split_once('=').unwrap();
    assert_eq!(flag, MCP_FLAG);
    let config: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    assert!(config["mcpServers"]["docs"].is_object() && config["mcpServers"]["web"].is_object());
    assert!(fx.release(&receipt.token));

    session.mcp_mode = McpMode::Replace;
    let receipt = fx.acquire_session(&subject(), session).unwrap();
    assert_eq!(
        receipt.launch_args[1..],
        [format!("{ALLOW_FLAG}=docs"), format!("{ALLOW_FLAG}=web")]
    );
    assert!(fx.release(&receipt.token));
}

#[test]
fn agents_and_commands_take_the_folders_and_formats_qwen_reads() {
    let fx = Fixture::new();
    let session = SessionRequest {
        agents: vec![NamedFile {
            name: "reviewer".into(),
            content: "---\nname: reviewer\ndescription: Reviews\n---\nReview.\n".into(),
        }],
        commands: vec![
            NamedFile {
                name: "ship".into(),
                content: "---\ndescription: Ship\n---\nShip {{args}}.\n".into(),
            },
            NamedFile {
                name: "old".into(),
                content: "prompt = \"Old {{args}}\"\n".into(),
            },
        ],
        ..SessionRequest::with_prompt("p")
    };
    let plan = fx.plan_session(&subject(), &session);
    let paths: Vec<&str> = plan.owned_files.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            format!("{AGENTS_DIR}/reviewer.md"),
            format!("{COMMANDS_DIR}/ship.md"),
            format!("{COMMANDS_DIR}/old.toml"),
        ]
    );
    let claude_style = SessionRequest {
        commands: vec![NamedFile {
            name: "fix".into(),
            content: "Fix $ARGUMENTS.\n".into(),
        }],
        ..SessionRequest::with_prompt("p")
    };
    // A neutral command: `$ARGUMENTS` becomes the `{{args}}` Qwen Code replaces.
    let receipt = fx.acquire_session(&subject(), claude_style).unwrap();
    let written = String::from_utf8(fx.read(&format!("{COMMANDS_DIR}/fix.md")).unwrap()).unwrap();
    assert!(written.ends_with("Fix {{args}}.\n"), "{written}");
    assert!(!written.contains("$ARGUMENTS"), "{written}");
    assert!(fx.release(&receipt.token));
    assert!(fx.read(&format!("{COMMANDS_DIR}/fix.md")).is_none());
}
