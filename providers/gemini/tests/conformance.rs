//! Gemini CLI's own placement checks (the facts of its docs page the plan relies on). The shared
//! conformance suite runs from `tests/suite.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::core::{NamedFile, SessionRequest};
use projectfile_conformance::{Fixture, Subject};
use projectfile_gemini::{COMMANDS_DIR, CONTEXT_FILE, Gemini, SETTINGS_FILE};
use serde_json::{Value, json};

fn subject() -> Subject {
    Subject::new(Gemini)
}

fn with_servers(servers: Value) -> SessionRequest {
    SessionRequest {
        mcp_servers: Some(servers),
        ..SessionRequest::with_prompt("session text")
    }
}

#[test]
fn the_block_goes_into_gemini_md_and_the_users_bytes_come_back() {
    let fx = Fixture::new();
    fx.write(CONTEXT_FILE, b"# Project\r\nrules\r\n");
    fx.write("AGENTS.md", b"not read by gemini\n");
    let receipt = fx.acquire(&subject(), "session text").unwrap();
    let text = String::from_utf8(fx.read(CONTEXT_FILE).unwrap()).unwrap();
    assert!(text.starts_with("# Project\r\nrules\r\n"), "{text}");
    assert!(text.contains("session text"));
    assert_eq!(fx.read("AGENTS.md").unwrap(), b"not read by gemini\n");
    assert!(receipt.delivery.delivered, "{:?}", receipt.delivery);
    assert!(fx.release(&receipt.token));
    assert_eq!(fx.read(CONTEXT_FILE).unwrap(), b"# Project\r\nrules\r\n");
}

#[test]
fn session_servers_are_merged_trusted_unless_the_host_said_otherwise() {
    let fx = Fixture::new();
    fx.write(
        SETTINGS_FILE,
        br#"{"context": {"fileName": ["AGENTS.md"]}, "mcpServers": {"own": {"command": "own"}}}"#,
    );
    let session = with_servers(json!({
        "docs": {"command": "docs-server"},
        "careful": {"command": "careful-server", "trust": false}
    }));
    let receipt = fx.acquire_session(&subject(), session).unwrap();
    let merged: Value = serde_json::from_slice(&fx.read(SETTINGS_FILE).unwrap()).unwrap();
    assert_eq!(merged["mcpServers"]["docs"]["trust"], json!(true));
    assert_eq!(merged["mcpServers"]["careful"]["trust"], json!(false));
    assert_eq!(merged["mcpServers"]["own"], json!({"command": "own"}));
    assert_eq!(merged["context"]["fileName"], json!(["AGENTS.md"]));
    assert!(receipt.launch_args.is_empty(), "{:?}", receipt.launch_args);
    assert!(fx.release(&receipt.token));
    assert_eq!(
        fx.read(SETTINGS_FILE).unwrap(),
        br#"{"context": {"fileName": ["AGENTS.md"]}, "mcpServers": {"own": {"command": "own"}}}"#
    );
}

#[test]
fn servers_and_hooks_share_the_settings_file() {
    let fx = Fixture::new();
    let session = SessionRequest {
        hooks: Some(projectfile_conformance::core::HooksInput {
            config: json!({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "\"$GEMINI_PROJECT_DIR\"/.gemini/hooks/start.sh"}]}]}}),
            script: Some(projectfile_conformance::core::HookScript {
                name: "start.sh".into(),
                content: "#!/bin/sh\ntrue\n".into(),
            }),
            format: Default::default(),
        }),
        ..with_servers(json!({"docs": {"command": "docs-server"}}))
    };
    let receipt = fx.acquire_session(&subject(), session).unwrap();
    let merged: Value = serde_json::from_slice(&fx.read(SETTINGS_FILE).unwrap()).unwrap();
    assert!(merged["mcpServers"]["docs"].is_object(), "{merged}");
    assert!(merged["hooks"]["SessionStart"].is_array(), "{merged}");
    assert_eq!(fx.mode(".gemini/hooks/start.sh"), Some(0o755));
    assert!(fx.release(&receipt.token));
    assert!(fx.read(SETTINGS_FILE).is_none());
    assert!(fx.read(".gemini/hooks/start.sh").is_none());
}

#[test]
fn commands_are_toml_and_neutral_markdown_is_converted() {
    let fx = Fixture::new();
    let toml = NamedFile {
        name: "review".into(),
        content: "prompt = \"Review {{args}}\"\n".into(),
    };
    let session = SessionRequest {
        commands: vec![toml],
        ..SessionRequest::with_prompt("p")
    };
    let plan = fx.plan_session(&subject(), &session);
    assert_eq!(
        plan.owned_files[0].path.as_str(),
        format!("{COMMANDS_DIR}/review.toml")
    );
    let markdown = SessionRequest {
        commands: vec![NamedFile {
            name: "ship".into(),
            content: "---\ndescription: d\n---\nShip $ARGUMENTS.\n".into(),
        }],
        ..SessionRequest::with_prompt("p")
    };
    let receipt = fx.acquire_session(&subject(), markdown).unwrap();
    let written =
        String::from_utf8(fx.read(&format!("{COMMANDS_DIR}/ship.toml")).unwrap()).unwrap();
    assert!(
        written.contains("prompt = \"\"\"\nShip {{args}}.\n\"\"\""),
        "{written}"
    );
    assert!(written.contains("description = \"d\""), "{written}");
    assert!(!written.contains("$ARGUMENTS"), "{written}");
    assert!(fx.release(&receipt.token));
    assert!(fx.read(&format!("{COMMANDS_DIR}/ship.toml")).is_none());
}

#[test]
fn subagents_and_replace_are_refused_with_the_reason() {
    let fx = Fixture::new();
    let agents = SessionRequest {
        agents: vec![NamedFile {
            name: "reviewer".into(),
            content: "---\nname: reviewer\n---\nReview.\n".into(),
        }],
        ..SessionRequest::with_prompt("p")
    };
    let error = fx
        .acquire_session(&subject(), agents)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("subagents (") && error.contains("--private-cli-home"),
        "{error}"
    );
    let mut replace = with_servers(json!({"docs": {"command": "d"}}));
    replace.mcp_mode = projectfile_conformance::core::McpMode::Replace;
    let error = fx
        .acquire_session(&subject(), replace)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("--mcp-mode replace") && error.contains(SETTINGS_FILE),
        "{error}"
    );
    assert!(fx.read(SETTINGS_FILE).is_none());
}
