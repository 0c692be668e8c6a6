//! Claude Code's delivery cases (the shared shapes of `projectfile_conformance::delivery`): a
//! project `CLAUDE.md` makes Claude skip AGENTS.md, so the private route is taken and delivers;
//! an old Claude (below the AGENTS.md gate) takes the private route and delivers; a new one
//! delivers through the AGENTS.md block, even a 40 KiB one (Claude has no budget). Each verdict
//! is checked against `resolve_as` over the same workspace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_claude::{Claude, PROMPT_FLAG};
use projectfile_conformance::Subject;
use projectfile_conformance::delivery::{Shape, verdict_in};
use projectfile_provider::{Probes, SessionTextCarrier, VersionProbe};

fn claude(version: &str) -> Subject {
    Subject::new(Claude).with_probes(Probes {
        cli_version: VersionProbe::Known {
            version: version.to_string(),
            binary: None,
        },
    })
}

fn assert_private_route(subject: &Subject, shape: Shape) {
    let receipt = verdict_in(subject, shape);
    assert!(
        matches!(
            receipt.session_text,
            Some(SessionTextCarrier::LaunchArgument { .. })
        ),
        "{shape:?}: {:?}",
        receipt.session_text
    );
    assert!(
        receipt.delivery.delivered,
        "{shape:?}: {:?}",
        receipt.delivery
    );
    assert_eq!(receipt.delivery.via, "launch_argument");
    assert_eq!(receipt.launch_args[0], PROMPT_FLAG);
    assert_eq!(
        receipt.delivery.path.as_deref(),
        Some(receipt.launch_args[1].as_str())
    );
}

#[test]
fn a_shadowing_claude_md_takes_the_private_route_which_delivers() {
    assert_private_route(&claude("2.1.332"), Shape::ShadowingClaudeMd);
}

#[test]
fn an_old_claude_takes_the_private_route_which_delivers() {
    for shape in Shape::ALL {
        assert_private_route(&claude("2.1.233"), shape);
    }
}

#[test]
fn a_new_claude_delivers_through_the_agents_md_block() {
    for shape in [Shape::Plain, Shape::BigAgentsMd, Shape::OverrideFile] {
        let receipt = verdict_in(&claude("2.1.284"), shape);
        assert!(
            matches!(
                &receipt.session_text,
                Some(SessionTextCarrier::Block { path }) if path.as_str() == "AGENTS.md"
            ),
            "{shape:?}"
        );
        assert!(
            receipt.delivery.delivered,
            "{shape:?}: {:?}",
            receipt.delivery
        );
        assert!(receipt.launch_args.is_empty());
    }
}
