//! The delivery verdict over `MemoryFs`: one case per reason (delivered, cut by the budget with the
//! bytes needed and the launch arguments that raise it, shadowed, on demand, dropped, block
//! missing, not read, not projected), and properties: a verdict is "delivered" exactly when the
//! CLI's profile keeps the whole session text, and raising the budget to the bytes it names
//! always delivers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_core::guidance::{
    DeliveryQuery, DiscoveryProfile, GuidanceRequest, MemoryFs, OmissionReason, Undelivered, Walk,
    delivery_verdict, delivery_with_remedy, resolve_as,
};
use projectfile_core::{RelPath, SessionTextCarrier};
use proptest::prelude::*;
use rstest::rstest;

const ROOT: &str = "/ws/proj";
const HOME: &str = "/home/u";
const BEGIN: &str = "<!-- BEGIN agentworks-session-instructions created=true -->";
const END: &str = "<!-- END agentworks-session-instructions -->";
const TEXT: &str = "Answer in haiku.";

fn block(body: &str) -> String {
    format!("{BEGIN}\n{body}\n{END}\n")
}

/// Codex's shape of profile, with a small budget.
fn codex(budget: u64) -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec!["AGENTS.override.md".into(), "AGENTS.md".into()],
        first_wins: true,
        root_markers: vec![".git".into()],
        budget_bytes: Some(budget),
        truncate_at_budget: true,
        verbatim: true,
        user_files: vec![".codex/AGENTS.md".into()],
        budget_excludes_user: true,
        budget_launch_args: vec!["-c".into(), "project_doc_max_bytes={bytes}".into()],
        ..Default::default()
    }
}

/// Claude Code's shape of profile; `agents` false for a version that does not read AGENTS.md.
fn claude(agents: bool) -> DiscoveryProfile {
    let mut names = vec!["CLAUDE.md".to_string(), "CLAUDE.local.md".to_string()];
    let mut exclusive = Vec::new();
    if agents {
        names.push("AGENTS.md".into());
        exclusive = vec![
            ("CLAUDE.md".to_string(), "AGENTS.md".to_string()),
            ("CLAUDE.local.md".to_string(), "AGENTS.md".to_string()),
        ];
    }
    DiscoveryProfile {
        per_directory: names,
        exclusive_if_present: exclusive,
        exclusive_across_walk: true,
        walk: Walk::CwdUpToFsRoot,
        on_demand_subtree: true,
        strip_html_comments: true,
        ..Default::default()
    }
}

/// Pi's shape: the append file in the working directory only.
fn pi() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec!["AGENTS.md".into()],
        walk: Walk::CwdUpToFsRoot,
        extra_files: vec![".pi/APPEND_SYSTEM.md".into()],
        extra_files_at_working_dir: true,
        verbatim: true,
        ..Default::default()
    }
}

fn in_file(path: &str) -> SessionTextCarrier {
    SessionTextCarrier::Block {
        path: RelPath::new(path).unwrap(),
    }
}

struct Case {
    fs: MemoryFs,
    profile: DiscoveryProfile,
    carrier: SessionTextCarrier,
    working_dir: &'static str,
}

impl Case {
    fn new(fs: MemoryFs, profile: DiscoveryProfile, carrier: SessionTextCarrier) -> Self {
        Case {
            fs: fs.with_dir("/ws/proj/.git"),
            profile,
            carrier,
            working_dir: ROOT,
        }
    }

    fn from(mut self, working_dir: &'static str) -> Self {
        self.working_dir = working_dir;
        self
    }

    fn query(&self) -> DeliveryQuery<'_> {
        DeliveryQuery {
            root: ROOT,
            working_dir: self.working_dir,
            home_dir: Some(HOME),
            namespace: "agentworks",
            carrier: &self.carrier,
        }
    }

    fn verdict(&self) -> projectfile_core::guidance::DeliveryVerdict {
        delivery_verdict(&self.fs, &self.profile, &self.query())
    }

    fn remedied(&self) -> projectfile_core::guidance::DeliveryVerdict {
        delivery_with_remedy(&self.fs, &self.profile, &self.query())
    }
}

/// `AGENTS.md` holding the user's text (on lines of its own) and then our block.
fn agents_with_block(user: &str) -> MemoryFs {
    let user = if user.is_empty() || user.ends_with('\n') {
        user.to_string()
    } else {
        format!("{user}\n")
    };
    MemoryFs::new().with_file("/ws/proj/AGENTS.md", format!("{user}{}", block(TEXT)))
}

#[test]
fn a_block_within_the_budget_is_delivered() {
    let case = Case::new(
        agents_with_block("rules\n"),
        codex(1000),
        in_file("AGENTS.md"),
    );
    let verdict = case.verdict();
    assert!(verdict.delivered, "{verdict:?}");
    assert_eq!(verdict.via, "block");
    assert_eq!(verdict.path.as_deref(), Some("/ws/proj/AGENTS.md"));
    assert_eq!(verdict.undelivered, None);
}

#[test]
fn a_block_past_the_budget_names_the_bytes_needed_and_the_arguments() {
    let user = format!("{}\n", "u".repeat(300));
    let file = format!("{user}{}", block(TEXT));
    let case = Case::new(agents_with_block(&user), codex(200), in_file("AGENTS.md"));
    let verdict = case.verdict();
    assert!(!verdict.delivered);
    // Codex counts the file's bytes as written, markers included.
    assert_eq!(
        verdict.undelivered,
        Some(Undelivered::BudgetTruncated {
            budget_bytes: 200,
            needed_bytes: file.len() as u64
        })
    );
    assert_eq!(
        verdict.remedy_args,
        vec![
            "-c".to_string(),
            format!("project_doc_max_bytes={}", file.len())
        ]
    );
}

#[test]
fn the_remedy_delivers_with_the_arguments_and_says_why() {
    let user = format!("{}\n", "u".repeat(300));
    let file = format!("{user}{}", block(TEXT));
    let case = Case::new(agents_with_block(&user), codex(200), in_file("AGENTS.md"));
    let verdict = case.remedied();
    assert!(verdict.delivered, "{verdict:?}");
    assert_eq!(verdict.undelivered, None);
    assert_eq!(
        verdict.launch_args,
        vec![
            "-c".to_string(),
            format!("project_doc_max_bytes={}", file.len())
        ]
    );
    assert!(verdict.remedy_args.is_empty());
    let note = verdict.note.unwrap();
    assert!(
        note.contains("200") && note.contains(&file.len().to_string()),
        "{note}"
    );
    // Within the budget there is nothing to add.
    let case = Case::new(
        agents_with_block("rules\n"),
        codex(1000),
        in_file("AGENTS.md"),
    );
    let verdict = case.remedied();
    assert!(verdict.delivered && verdict.launch_args.is_empty() && verdict.note.is_none());
}

#[test]
fn no_remedy_for_a_cut_nothing_can_raise_or_another_reason() {
    let mut profile = codex(10);
    profile.budget_launch_args.clear();
    let case = Case::new(agents_with_block("rules\n"), profile, in_file("AGENTS.md"));
    let verdict = case.remedied();
    assert!(!verdict.delivered);
    assert!(verdict.launch_args.is_empty());
    assert!(
        verdict.note.unwrap().contains("no launch argument raises"),
        "the note says nothing can"
    );
    let fs = agents_with_block("").with_file("/ws/proj/AGENTS.override.md", "mine");
    let case = Case::new(fs, codex(10), in_file("AGENTS.md"));
    let verdict = case.remedied();
    assert!(!verdict.delivered);
    assert!(matches!(
        verdict.undelivered,
        Some(Undelivered::Shadowed { .. })
    ));
}

#[test]
fn user_files_do_not_count_against_a_budget_that_excludes_them() {
    let fs = agents_with_block("rules\n").with_file("/home/u/.codex/AGENTS.md", "h".repeat(5000));
    let case = Case::new(fs, codex(1000), in_file("AGENTS.md"));
    assert!(case.verdict().delivered);
}

#[test]
fn a_budget_cut_is_not_fixable_without_declared_arguments() {
    let mut profile = codex(10);
    profile.budget_launch_args.clear();
    let case = Case::new(agents_with_block("rules\n"), profile, in_file("AGENTS.md"));
    let verdict = case.verdict();
    assert!(matches!(
        verdict.undelivered,
        Some(Undelivered::BudgetTruncated { .. })
    ));
    assert!(verdict.remedy_args.is_empty());
}

#[rstest]
#[case::override_wins(
    agents_with_block("").with_file("/ws/proj/AGENTS.override.md", "mine"),
    codex(1000),
    "/ws/proj/AGENTS.override.md"
)]
#[case::claude_md_here(
    agents_with_block("").with_file("/ws/proj/CLAUDE.md", "mine"),
    claude(true),
    "/ws/proj/CLAUDE.md"
)]
#[case::claude_md_above(
    agents_with_block("").with_file("/ws/CLAUDE.local.md", "mine"),
    claude(true),
    "/ws/CLAUDE.local.md"
)]
fn a_shadowed_file_names_what_shadows_it(
    #[case] fs: MemoryFs,
    #[case] profile: DiscoveryProfile,
    #[case] by: &str,
) {
    let verdict = Case::new(fs, profile, in_file("AGENTS.md")).verdict();
    assert!(!verdict.delivered);
    assert_eq!(
        verdict.undelivered,
        Some(Undelivered::Shadowed { by: by.to_string() })
    );
}

#[test]
fn a_block_in_the_override_is_delivered() {
    let fs = MemoryFs::new()
        .with_file("/ws/proj/AGENTS.md", "theirs")
        .with_file("/ws/proj/AGENTS.override.md", block(TEXT));
    let case = Case::new(fs, codex(1000), in_file("AGENTS.override.md"));
    assert!(case.verdict().delivered);
}

#[test]
fn a_version_that_does_not_read_the_file_is_not_read() {
    let case = Case::new(agents_with_block(""), claude(false), in_file("AGENTS.md"));
    assert_eq!(case.verdict().undelivered, Some(Undelivered::NotRead));
    let case = Case::new(agents_with_block(""), claude(true), in_file("AGENTS.md"));
    assert!(case.verdict().delivered);
}

#[test]
fn a_file_below_the_working_directory_loads_on_demand() {
    let fs = MemoryFs::new().with_file("/ws/proj/sub/CLAUDE.md", block(TEXT));
    let case = Case::new(fs, claude(true), in_file("sub/CLAUDE.md"));
    assert_eq!(case.verdict().undelivered, Some(Undelivered::OnDemand));
    // Started in that folder, Claude reads it at once.
    let fs = MemoryFs::new().with_file("/ws/proj/sub/CLAUDE.md", block(TEXT));
    let case = Case::new(fs, claude(true), in_file("sub/CLAUDE.md")).from("/ws/proj/sub");
    assert!(case.verdict().delivered);
}

#[test]
fn an_append_file_is_read_only_in_the_directory_pi_starts_in() {
    let fs = MemoryFs::new().with_file("/ws/proj/.pi/APPEND_SYSTEM.md", block(TEXT));
    let case = Case::new(fs.clone(), pi(), in_file(".pi/APPEND_SYSTEM.md"));
    assert!(case.verdict().delivered);
    let case = Case::new(fs, pi(), in_file(".pi/APPEND_SYSTEM.md")).from("/ws/proj/sub");
    assert_eq!(case.verdict().undelivered, Some(Undelivered::NotRead));
}

#[test]
fn a_file_without_a_block_or_with_a_broken_one() {
    let fs = MemoryFs::new().with_file("/ws/proj/AGENTS.md", "only the user's text");
    let case = Case::new(fs, codex(1000), in_file("AGENTS.md"));
    assert_eq!(case.verdict().undelivered, Some(Undelivered::BlockMissing));
    let fs = MemoryFs::new().with_file("/ws/proj/AGENTS.md", format!("{BEGIN}\n{TEXT}\n"));
    let case = Case::new(fs, codex(1000), in_file("AGENTS.md"));
    assert_eq!(
        case.verdict().undelivered,
        Some(Undelivered::Dropped {
            omission: OmissionReason::MalformedSessionBlock
        })
    );
}

#[test]
fn an_owned_file_is_delivered_when_read_whole() {
    let fs = MemoryFs::new().with_file("/ws/proj/.cursor/rules/s.mdc", TEXT);
    let profile = DiscoveryProfile {
        extra_files: vec![".cursor/rules/*.mdc".into()],
        ..Default::default()
    };
    let carrier = SessionTextCarrier::OwnedFile {
        path: RelPath::new(".cursor/rules/s.mdc").unwrap(),
    };
    let verdict = Case::new(fs, profile, carrier).verdict();
    assert!(verdict.delivered);
    assert_eq!(verdict.via, "owned_file");
}

#[test]
fn launch_arguments_deliver_and_not_projected_does_not() {
    let carrier = SessionTextCarrier::LaunchArgument {
        private_file: "/state/s/session-instructions.md".into(),
    };
    let verdict = Case::new(MemoryFs::new(), claude(false), carrier).verdict();
    assert!(verdict.delivered);
    assert_eq!(verdict.via, "launch_argument");
    let carrier = SessionTextCarrier::NotProjected {
        reason: "no prompt file".into(),
    };
    let verdict = Case::new(MemoryFs::new(), claude(false), carrier).verdict();
    assert_eq!(
        verdict.undelivered,
        Some(Undelivered::NotProjected {
            why: "no prompt file".into()
        })
    );
}

#[test]
fn the_verdict_serialises_with_its_reason() {
    let user = "u".repeat(300);
    let case = Case::new(agents_with_block(&user), codex(100), in_file("AGENTS.md"));
    let value = serde_json::to_value(case.verdict()).unwrap();
    assert_eq!(value["undelivered"]["reason"], "budget_truncated");
    assert_eq!(value["undelivered"]["budget_bytes"], 100);
    assert_eq!(value["delivered"], false);
}

/// Whether the CLI, by `profile` with no budget in force, keeps the whole session text.
fn text_kept(fs: &MemoryFs, profile: &DiscoveryProfile, working_dir: &str) -> bool {
    let mut unlimited = profile.clone();
    unlimited.budget_bytes = Some(u64::MAX);
    let request = GuidanceRequest::new(ROOT)
        .with_working_dir(working_dir)
        .with_home_dir(HOME);
    let resolution = resolve_as(fs, &unlimited, &request);
    resolution.sources.iter().any(|s| s.body.contains(TEXT))
}

fn tree() -> impl Strategy<Value = (MemoryFs, &'static str, bool)> {
    let optional = |path: &'static str| proptest::option::of(Just(path));
    (
        0usize..400,
        optional("/ws/proj/AGENTS.override.md"),
        optional("/ws/proj/CLAUDE.md"),
        optional("/ws/CLAUDE.md"),
        optional("/ws/proj/sub/AGENTS.md"),
        prop_oneof![Just("/ws/proj"), Just("/ws/proj/sub")],
        any::<bool>(),
    )
        .prop_map(|(user, over, claude_md, above, sub, cwd, agents)| {
            let mut fs = agents_with_block(&"u".repeat(user));
            for path in [over, claude_md, above, sub].into_iter().flatten() {
                fs.add_file(path, "other");
            }
            (fs.with_dir("/ws/proj/.git"), cwd, agents)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// "Delivered" exactly when the profile keeps the whole text within its budget; a budget cut
    /// names the smallest budget that delivers (one byte less does not).
    #[test]
    fn delivered_means_the_text_is_kept((fs, cwd, agents) in tree(), budget in 1u64..600) {
        for profile in [codex(budget), claude(agents)] {
            let case = Case {
                fs: fs.clone(),
                profile: profile.clone(),
                carrier: in_file("AGENTS.md"),
                working_dir: cwd,
            };
            let verdict = case.verdict();
            let kept = text_kept(&fs, &profile, cwd);
            // With the remedy: delivered exactly when delivered already, or cut by a budget the
            // profile's arguments raise; never delivered when the text is not kept at all.
            let remedied = case.remedied();
            let fixable = matches!(verdict.undelivered, Some(Undelivered::BudgetTruncated { .. }))
                && !profile.budget_launch_args.is_empty();
            prop_assert_eq!(remedied.delivered, verdict.delivered || fixable);
            prop_assert!(!remedied.delivered || kept);
            prop_assert_eq!(remedied.launch_args.is_empty(), !fixable);
            match &verdict.undelivered {
                None => prop_assert!(verdict.delivered && kept),
                Some(Undelivered::BudgetTruncated { needed_bytes, budget_bytes }) => {
                    prop_assert!(kept && needed_bytes > budget_bytes);
                    let mut raised = profile.clone();
                    raised.budget_bytes = Some(*needed_bytes);
                    let raised = Case { profile: raised, ..case };
                    prop_assert!(raised.verdict().delivered, "{:?}", raised.verdict());
                    let mut short = raised.profile.clone();
                    short.budget_bytes = Some(needed_bytes - 1);
                    let short = Case { profile: short, ..raised };
                    prop_assert!(!short.verdict().delivered);
                }
                Some(_) => prop_assert!(!verdict.delivered && !kept),
            }
        }
    }
}
