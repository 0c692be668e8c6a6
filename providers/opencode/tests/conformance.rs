//! opencode's own checks: the private configuration (`OPENCODE_CONFIG`) names the session's file
//! through `{env:…}`, carries `$schema`, the session's MCP servers in opencode's form, its
//! commands and subagents; no workspace file is written whatever the project holds; inputs
//! opencode's configuration cannot hold are refused; and `resolve --as opencode` follows the
//! first name found on the walk. The shared conformance suite runs from `tests/suite.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::core::guidance::{GuidanceRequest, StdFs, resolve_as};
use projectfile_conformance::delivery::{Shape, verdict_in};
use projectfile_conformance::{Fixture, Subject, Tree};
use projectfile_opencode::{
    CONFIG_ENV, CONFIG_FILE, INSTRUCTIONS_ENV, INSTRUCTIONS_FILE, Opencode, SCHEMA,
};
use projectfile_provider::{EnvValue, NamedFile, ProviderExt, SessionRequest, SessionTextCarrier};
use serde_json::{Value, json};

fn subject() -> Subject {
    Subject::new(Opencode)
}

fn config(fx: &Fixture, session: &SessionRequest) -> Value {
    let plan = fx.plan_session(&subject(), session);
    let file = plan
        .private_files
        .iter()
        .find(|f| f.name == CONFIG_FILE)
        .expect("the private configuration");
    serde_json::from_str(&file.content).unwrap()
}

#[test]
fn the_private_configuration_names_the_session_file_through_the_environment() {
    let fx = Fixture::new();
    let plan = fx.plan(&subject(), "Answer in haiku.");
    assert_eq!(
        plan.env,
        vec![
            (
                INSTRUCTIONS_ENV.to_string(),
                EnvValue::PrivateFilePath(INSTRUCTIONS_FILE.into())
            ),
            (
                CONFIG_ENV.to_string(),
                EnvValue::PrivateFilePath(CONFIG_FILE.into())
            ),
        ]
    );
    assert_eq!(
        plan.session_text,
        Some(SessionTextCarrier::Environment {
            private_file: INSTRUCTIONS_FILE.into(),
            var: INSTRUCTIONS_ENV.into()
        })
    );
    assert!(plan.launch_args.is_empty() && plan.blocks.is_empty() && plan.owned_files.is_empty());
    let config = config(&fx, &SessionRequest::with_prompt("x"));
    assert_eq!(
        config,
        json!({"$schema": SCHEMA, "instructions": [format!("{{env:{INSTRUCTIONS_ENV}}}")]})
    );
    // The receipt's env holds both paths, under the state directory.
    let receipt = fx.acquire(&subject(), "Answer in haiku.").unwrap();
    let file = &receipt.env[INSTRUCTIONS_ENV];
    assert!(file.starts_with(fx.state.to_str().unwrap()), "{file}");
    assert_eq!(std::fs::read_to_string(file).unwrap(), "Answer in haiku.");
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(&receipt.env[CONFIG_ENV]).unwrap()).unwrap();
    assert_eq!(config["$schema"], SCHEMA);
    assert!(receipt.delivery.delivered, "{:?}", receipt.delivery);
    assert_eq!(receipt.delivery.via, "environment");
    assert!(fx.release(&receipt.token));
    assert!(!std::path::Path::new(file).exists());
}

#[test]
fn mcp_servers_commands_and_subagents_go_in_opencode_form() {
    let fx = Fixture::new();
    let mut session = SessionRequest::with_prompt("x");
    session.mcp_servers = Some(json!({
        "docs": {"type": "stdio", "command": "docs-server", "args": ["--stdio"], "env": {"LEVEL": "1"}},
        "remote": {"url": "https://mcp.example.invalid/sse", "headers": {"A": "b"}}
    }));
    session.commands = vec![NamedFile {
        name: "ship".into(),
        content: "---\ndescription: Ship it\nmodel: sonnet\n---\nShip $ARGUMENTS now.\n".into(),
    }];
    session.agents = vec![NamedFile {
        name: "reviewer".into(),
        content:
            "---\nname: reviewer\ndescription: Reviews\ntools: Read, Grep\nmodel: opus\n---\nReview.\n"
                .into(),
    }];
    let config = config(&fx, &session);
    assert_eq!(
        config["mcp"],
        json!({
            "docs": {"type": "local", "command": ["docs-server", "--stdio"], "environment": {"LEVEL": "1"}, "enabled": true},
            "remote": {"type": "remote", "url": "https://mcp.example.invalid/sse", "headers": {"A": "b"}, "enabled": true}
        })
    );
    assert_eq!(
        config["command"],
        json!({"ship": {"description": "Ship it", "template": "Ship $ARGUMENTS now.\n"}})
    );
    assert_eq!(
        config["agent"],
        json!({"reviewer": {"description": "Reviews", "mode": "subagent", "prompt": "Review.\n"}})
    );
}

#[test]
fn what_opencode_cannot_hold_is_refused_with_nothing_written() {
    let fx = Fixture::new();
    fx.write("README.md", b"project\n");
    let before = Tree::capture(&fx.workspace);
    for (servers, needle) in [
        (json!({"a": {"command": "c", "cwd": "/x"}}), "\"cwd\""),
        (json!({"a": {"command": "c", "url": "u"}}), "not both"),
        (json!({"a": {"args": ["x"]}}), "needs a command"),
        (
            json!({"a": {"command": "c", "args": [1]}}),
            "list of strings",
        ),
    ] {
        let mut session = SessionRequest::with_prompt("p");
        session.mcp_servers = Some(servers.clone());
        let error = fx
            .acquire_session(&subject(), session)
            .unwrap_err()
            .to_string();
        assert!(error.contains(needle), "{servers}: {error}");
        assert!(error.contains("nothing was written"), "{error}");
        assert_eq!(Tree::capture(&fx.workspace), before);
    }
    let mut replace = SessionRequest::with_prompt("p");
    replace.mcp_servers = Some(json!({"a": {"command": "c"}}));
    replace.mcp_mode = projectfile_provider::McpMode::Replace;
    assert!(fx.acquire_session(&subject(), replace).is_err());
    let caps = Opencode.capabilities();
    assert!(!caps.hooks && !caps.mcp_replace && !caps.owned_files);
    fx.assert_no_ledger();
}

#[test]
fn the_workspace_stays_as_it_was_whatever_it_holds() {
    for shape in Shape::ALL {
        let receipt = verdict_in(&subject(), shape);
        assert!(
            receipt.delivery.delivered,
            "{shape:?}: {:?}",
            receipt.delivery
        );
        assert!(
            receipt.files.iter().all(|f| f.kind == "private"),
            "{shape:?}: {:?}",
            receipt.files
        );
    }
}

#[test]
fn resolve_follows_the_first_name_found_on_the_walk() {
    let fx = Fixture::new();
    fx.write("CLAUDE.md", b"project claude\n");
    fx.write("sub/AGENTS.md", b"sub agents\n");
    fx.write(".git/HEAD", b"ref: refs/heads/main\n");
    let root = fx.workspace.to_string_lossy().into_owned();
    let request = GuidanceRequest::new(root.clone())
        .with_working_dir(format!("{root}/sub"))
        .with_user_scope(false);
    let resolution = resolve_as(&StdFs, &Opencode.discovery(), &request);
    let paths: Vec<&str> = resolution.sources.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(paths, vec![format!("{root}/sub/AGENTS.md")]);
    assert!(
        resolution
            .omitted
            .iter()
            .any(|o| o.path == format!("{root}/CLAUDE.md") && o.reason.to_string() == "shadowed")
    );
}
