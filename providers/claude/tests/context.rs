//! Claude plans from its context alone: the user's memory file is recognised by the home
//! directory core hands in ([`PlanContext::home`]), never by the provider reading `$HOME`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_claude::{Claude, PRIVATE_FILE};
use projectfile_provider::{
    EntryKind, Namespace, Plan, PlanContext, Probes, ProviderExt, RelPath, SessionRequest,
    SessionTextCarrier, VersionProbe, WorkspaceView,
};
use std::path::{Path, PathBuf};

/// A workspace with nothing at its root and these files in the directories above it.
struct FoundAbove(Vec<PathBuf>);

impl WorkspaceView for FoundAbove {
    fn kind(&self, _: &RelPath) -> EntryKind {
        EntryKind::Missing
    }

    fn found_above_root(&self, names: &[&str]) -> Vec<PathBuf> {
        self.0
            .iter()
            .filter(|found| names.iter().any(|name| found.ends_with(name)))
            .cloned()
            .collect()
    }
}

/// Claude's plan, as a binary that reads AGENTS.md, for a workspace under `/home/u/work/ws`.
fn plan(home: Option<&Path>, above: &[&str]) -> Plan {
    let probes = Probes {
        cli_version: VersionProbe::Known {
            version: "2.1.284".into(),
            binary: None,
        },
    };
    let view = FoundAbove(above.iter().map(PathBuf::from).collect());
    Claude
        .plan(&PlanContext {
            root: Path::new("/home/u/work/ws"),
            namespace: &Namespace::default(),
            request: &SessionRequest::with_prompt("session text"),
            probes: &probes,
            view: &view,
            home,
            cli_home: None,
        })
        .unwrap()
}

fn takes_private_file(plan: &Plan) -> bool {
    plan.session_text
        == Some(SessionTextCarrier::LaunchArgument {
            private_file: PRIVATE_FILE.into(),
        })
}

#[test]
fn the_user_memory_file_under_the_home_in_the_context_does_not_count() {
    let plan = plan(Some(Path::new("/home/u")), &["/home/u/.claude/CLAUDE.md"]);
    assert_eq!(
        plan.session_text,
        Some(SessionTextCarrier::Block {
            path: RelPath::new("AGENTS.md").unwrap()
        }),
        "{plan:#?}"
    );
}

#[test]
fn without_a_home_the_same_file_is_a_project_file_above_the_root() {
    for home in [None, Some(Path::new("/home/other"))] {
        let plan = plan(home, &["/home/u/.claude/CLAUDE.md"]);
        assert!(takes_private_file(&plan), "{home:?}: {plan:#?}");
        assert!(
            plan.notes
                .iter()
                .any(|n| n.contains("/home/u/.claude/CLAUDE.md")),
            "{home:?}: {:?}",
            plan.notes
        );
    }
}

#[test]
fn a_project_claude_md_above_the_root_counts_whatever_the_home() {
    let plan = plan(Some(Path::new("/home/u")), &["/home/u/work/CLAUDE.md"]);
    assert!(takes_private_file(&plan), "{plan:#?}");
}
