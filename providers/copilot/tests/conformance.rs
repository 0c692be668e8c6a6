//! Copilot's own checks: the session text in a private `*.instructions.md` whose folder
//! `COPILOT_CUSTOM_INSTRUCTIONS_DIRS` names, the MCP servers as `--additional-mcp-config
//! @<file>`, the subagents as `.github/agents/<name>.agent.md`; a project whose instruction files
//! with the session text pass the prompt limit gets the limit raised in the receipt's `env`;
//! what Copilot cannot take in `-p` mode is refused; `resolve --as copilot` reads every name in
//! a folder. The shared conformance suite runs from `tests/suite.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::core::guidance::{GuidanceRequest, StdFs, Undelivered, resolve_as};
use projectfile_conformance::{Fixture, Subject, Tree};
use projectfile_copilot::{
    Copilot, INSTRUCTIONS_DIRS_ENV, INSTRUCTIONS_FILE, MCP_FILE, MCP_FLAG, PROMPT_BUDGET_BYTES,
    PROMPT_TOKENS_ENV,
};
use projectfile_provider::{
    EnvValue, HooksInput, LaunchArg, McpMode, NamedFile, ProviderExt, SessionRequest,
    SessionTextCarrier,
};
use serde_json::json;

fn subject() -> Subject {
    Subject::new(Copilot)
}

#[test]
fn the_session_text_is_a_private_instructions_file_in_the_folder_the_variable_names() {
    let fx = Fixture::new();
    let mut session = SessionRequest::with_prompt("Answer in haiku.");
    session.mcp_servers = Some(json!({"docs": {"command": "docs-server"}}));
    session.agents = vec![NamedFile {
        name: "reviewer".into(),
        content: "---\nname: reviewer\ndescription: Reviews\n---\nReview.\n".into(),
    }];
    let plan = fx.plan_session(&subject(), &session);
    assert_eq!(
        plan.env,
        vec![(INSTRUCTIONS_DIRS_ENV.to_string(), EnvValue::PrivateDir)]
    );
    assert_eq!(
        plan.session_text,
        Some(SessionTextCarrier::Environment {
            private_file: INSTRUCTIONS_FILE.into(),
            var: INSTRUCTIONS_DIRS_ENV.into()
        })
    );
    assert_eq!(
        plan.launch_args,
        vec![
            LaunchArg::Literal(MCP_FLAG.into()),
            LaunchArg::PrefixedPrivateFile {
                prefix: "@".into(),
                name: MCP_FILE.into()
            }
        ]
    );
    assert_eq!(
        plan.owned_files[0].path.as_str(),
        ".github/agents/reviewer.agent.md"
    );
    let receipt = fx.acquire_session(&subject(), session).unwrap();
    let dir = std::path::PathBuf::from(&receipt.env[INSTRUCTIONS_DIRS_ENV]);
    assert!(dir.starts_with(&fx.state), "{}", dir.display());
    assert_eq!(
        std::fs::read_to_string(dir.join(INSTRUCTIONS_FILE)).unwrap(),
        "Answer in haiku."
    );
    // Nothing else in the folder looks like an instructions file to Copilot.
    let others: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".instructions.md") && n != INSTRUCTIONS_FILE)
        .collect();
    assert!(others.is_empty(), "{others:?}");
    let mcp = &receipt.launch_args[1];
    assert_eq!(
        mcp,
        &format!("@{}", dir.join(MCP_FILE).display()),
        "one argument, the file after @"
    );
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mcp[1..]).unwrap()).unwrap();
    assert_eq!(
        config,
        json!({"mcpServers": {"docs": {"command": "docs-server"}}})
    );
    assert!(receipt.delivery.delivered);
    assert!(fx.release(&receipt.token));
    assert!(!dir.exists());
}

/// A project `AGENTS.md` of `bytes` (lines of prose).
fn agents_md(fx: &Fixture, bytes: usize) {
    let line = "Filler line to bring this file near the budget, no instructions here.\n";
    fx.write("AGENTS.md", line.repeat(bytes / line.len()).as_bytes());
}

#[test]
fn over_the_prompt_limit_the_receipt_raises_it_through_the_environment() {
    let fx = Fixture::new();
    agents_md(&fx, PROMPT_BUDGET_BYTES as usize + 4096);
    let receipt = fx.acquire(&subject(), "Answer in haiku.").unwrap();
    let delivery = &receipt.delivery;
    assert!(delivery.delivered, "{delivery:?}");
    let raised: u64 = delivery.env[PROMPT_TOKENS_ENV].parse().unwrap();
    assert!(raised > PROMPT_BUDGET_BYTES, "{raised}");
    assert_eq!(receipt.env[PROMPT_TOKENS_ENV], raised.to_string());
    assert!(receipt.warnings.is_empty(), "{:?}", receipt.warnings);
    assert!(fx.release(&receipt.token));
    // Within the limit nothing is added.
    let fx = Fixture::new();
    agents_md(&fx, 64 * 1024);
    let receipt = fx.acquire(&subject(), "Answer in haiku.").unwrap();
    assert!(receipt.delivery.delivered && receipt.delivery.env.is_empty());
    assert!(!receipt.env.contains_key(PROMPT_TOKENS_ENV));
    assert!(fx.release(&receipt.token));
}

#[test]
fn resolve_sends_nothing_over_the_limit() {
    let fx = Fixture::new();
    agents_md(&fx, PROMPT_BUDGET_BYTES as usize + 4096);
    fx.write("CLAUDE.md", b"claude rules\n");
    let root = fx.workspace.to_string_lossy().into_owned();
    let request = GuidanceRequest::new(root).with_user_scope(false);
    let resolution = resolve_as(&StdFs, &Copilot.discovery(), &request);
    assert!(resolution.sources.is_empty());
    assert_eq!(resolution.omitted.len(), 2, "{:?}", resolution.omitted);
    let mut profile = Copilot.discovery();
    profile.budget_env.clear();
    let fx2 = Fixture::new();
    agents_md(&fx2, PROMPT_BUDGET_BYTES as usize + 4096);
    let query_carrier = SessionTextCarrier::Environment {
        private_file: INSTRUCTIONS_FILE.into(),
        var: INSTRUCTIONS_DIRS_ENV.into(),
    };
    let root = fx2.workspace.to_string_lossy().into_owned();
    let verdict = projectfile_conformance::core::guidance::delivery_with_remedy(
        &StdFs,
        &profile,
        &projectfile_conformance::core::guidance::DeliveryQuery {
            root: &root,
            working_dir: &root,
            home_dir: None,
            namespace: "agentworks",
            carrier: &query_carrier,
            private_bytes: 10,
        },
    );
    assert!(matches!(
        verdict.undelivered,
        Some(Undelivered::BudgetTruncated { .. })
    ));
}

#[test]
fn what_copilot_cannot_take_in_prompt_mode_is_refused() {
    let fx = Fixture::new();
    fx.write("README.md", b"project\n");
    let before = Tree::capture(&fx.workspace);
    let mut hooks = SessionRequest::with_prompt("p");
    hooks.hooks = Some(HooksInput {
        config: json!({"version": 1, "hooks": {}}),
        script: None,
        format: Default::default(),
    });
    let mut commands = SessionRequest::with_prompt("p");
    commands.commands = vec![NamedFile {
        name: "ship".into(),
        content: "Ship.\n".into(),
    }];
    let mut replace = SessionRequest::with_prompt("p");
    replace.mcp_servers = Some(json!({"a": {"command": "c"}}));
    replace.mcp_mode = McpMode::Replace;
    for session in [hooks, commands, replace] {
        let error = fx.acquire_session(&subject(), session).unwrap_err();
        assert!(error.to_string().contains("copilot"), "{error}");
        assert_eq!(Tree::capture(&fx.workspace), before);
    }
    fx.assert_no_ledger();
}

#[test]
fn resolve_reads_every_name_of_a_folder() {
    let fx = Fixture::new();
    fx.write(".git/HEAD", b"ref: refs/heads/main\n");
    fx.write("AGENTS.md", b"agents\n");
    fx.write("CLAUDE.md", b"claude\n");
    fx.write("GEMINI.md", b"gemini\n");
    fx.write(".github/copilot-instructions.md", b"copilot\n");
    fx.write("CLAUDE.local.md", b"not read\n");
    let root = fx.workspace.to_string_lossy().into_owned();
    let request = GuidanceRequest::new(root.clone()).with_user_scope(false);
    let resolution = resolve_as(&StdFs, &Copilot.discovery(), &request);
    let paths: Vec<String> = resolution.sources.iter().map(|s| s.path.clone()).collect();
    let expected: Vec<String> = [
        ".github/copilot-instructions.md",
        "AGENTS.md",
        "CLAUDE.md",
        "GEMINI.md",
    ]
    .iter()
    .map(|p| format!("{root}/{p}"))
    .collect();
    assert_eq!(paths, expected);
}
