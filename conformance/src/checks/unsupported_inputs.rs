//! Inputs the capabilities do not accept are refused, naming them, before anything is projected;
//! inputs they accept go through.

use crate::Subject;
use crate::fixture::Fixture;
use crate::tree::Tree;
use projectfile_core::Error;
use projectfile_provider::ProviderExt;
use projectfile_provider::{Capabilities, SessionRequest, SkillInput};

/// Inputs the capabilities do not accept are refused with a clear error naming them, before
/// anything is projected; inputs they accept go through.
pub fn unsupported_inputs_are_refused(subject: &Subject) {
    let caps = subject.provider.capabilities();
    let full = subject.session_for(
        &Capabilities {
            mcp: true,
            hooks: true,
            cli_config: true,
            subagents: true,
            commands: true,
            ..caps
        },
        "p",
    );
    let skill_source = Fixture::new();
    skill_source.write(
        "review/SKILL.md",
        b"---\nname: review\ndescription: r\n---\n",
    );
    let inputs: Vec<(&str, bool, SessionRequest)> = vec![
        (
            "MCP servers",
            caps.mcp,
            SessionRequest {
                mcp_servers: full.mcp_servers.clone(),
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "hooks",
            caps.hooks,
            SessionRequest {
                hooks: full.hooks.clone(),
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "CLI configuration",
            caps.cli_config,
            SessionRequest {
                cli_config: full.cli_config.clone(),
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "subagents",
            caps.subagents,
            SessionRequest {
                agents: full.agents.clone(),
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "commands",
            caps.commands,
            SessionRequest {
                commands: full.commands.clone(),
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "skills",
            caps.skills,
            SessionRequest {
                skills: vec![SkillInput {
                    name: "review".into(),
                    source: skill_source.workspace.join("review"),
                }],
                ..SessionRequest::with_prompt("p")
            },
        ),
    ];
    for (label, accepted, session) in inputs {
        let fx = Fixture::new();
        let before = Tree::capture(&fx.workspace);
        match fx.acquire_session(subject, session) {
            Ok(receipt) if accepted => assert!(fx.release(&receipt.token)),
            Ok(_) => panic!("{label}: accepted although the capabilities refuse it"),
            Err(error) if !accepted => {
                assert!(
                    matches!(&error, Error::Provider { .. })
                        && error.to_string().contains(label)
                        && error.to_string().starts_with(subject.name()),
                    "{label}: unclear refusal: {error}"
                );
            }
            Err(error) => panic!("{label}: refused although the capabilities accept it: {error}"),
        }
        assert_eq!(
            Tree::capture(&fx.workspace),
            before,
            "{label}: workspace changed"
        );
        fx.assert_no_ledger();
    }
}
