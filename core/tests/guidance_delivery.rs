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
            private_bytes: 0,
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
        verdict
            .note
            .unwrap()
            .contains("nothing raises this CLI's budget"),
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

/// The verdict as it was judged before it read each file once: a whole [`resolve_as`] for the
/// profile's budget, another for the bytes needed, and the whole route again for the raised
/// budget. The oracle of `one_reading_judges_as_the_full_resolves`.
mod full_resolves {
    use projectfile_core::SessionTextCarrier;
    use projectfile_core::guidance::{
        DeliveryQuery, DeliveryVerdict, DiscoveryProfile, GuidanceRequest, GuidanceResolution,
        GuidanceScope, MemoryFs, OmissionReason, Undelivered, budget_launch_args, resolve_as,
    };

    fn verdict(via: &str, path: Option<String>, why: Option<Undelivered>) -> DeliveryVerdict {
        DeliveryVerdict {
            via: via.to_string(),
            path,
            delivered: why.is_none(),
            note: why.as_ref().map(Undelivered::describe),
            undelivered: why,
            remedy_args: Vec::new(),
            launch_args: Vec::new(),
            remedy_env: Default::default(),
            env: Default::default(),
        }
    }

    fn join(root: &str, rel: &str) -> String {
        format!("{}/{rel}", root.trim_end_matches('/'))
    }

    pub fn judge(
        fs: &MemoryFs,
        profile: &DiscoveryProfile,
        query: &DeliveryQuery<'_>,
    ) -> DeliveryVerdict {
        match query.carrier {
            SessionTextCarrier::Block { path } => file_verdict(
                fs,
                profile,
                query,
                "block",
                &join(query.root, path.as_str()),
                true,
            ),
            SessionTextCarrier::OwnedFile { path } => file_verdict(
                fs,
                profile,
                query,
                "owned_file",
                &join(query.root, path.as_str()),
                false,
            ),
            SessionTextCarrier::LaunchArgument { private_file } => {
                verdict("launch_argument", Some(private_file.clone()), None)
            }
            // The oracle's profiles have no budget the whole prompt must fit.
            SessionTextCarrier::Environment { private_file, .. } => {
                verdict("environment", Some(private_file.clone()), None)
            }
            SessionTextCarrier::NotProjected { reason } => verdict(
                "not_projected",
                None,
                Some(Undelivered::NotProjected {
                    why: reason.clone(),
                }),
            ),
        }
    }

    pub fn with_remedy(
        fs: &MemoryFs,
        profile: &DiscoveryProfile,
        query: &DeliveryQuery<'_>,
    ) -> DeliveryVerdict {
        let first = judge(fs, profile, query);
        let Some(Undelivered::BudgetTruncated {
            budget_bytes,
            needed_bytes,
        }) = first.undelivered
        else {
            return first;
        };
        if first.remedy_args.is_empty() {
            return first;
        }
        let mut raised = profile.clone();
        raised.budget_bytes = Some(needed_bytes);
        let mut again = judge(fs, &raised, query);
        if !again.delivered {
            return first;
        }
        again.note = Some(format!(
            "the CLI reads {budget_bytes} bytes of instruction files by default and the session text ends at byte {needed_bytes}: delivered with the launch arguments `{}`, which raise that budget",
            first.remedy_args.join(" ")
        ));
        again.launch_args = first.remedy_args;
        again
    }

    fn request_for(query: &DeliveryQuery<'_>) -> GuidanceRequest {
        let request = GuidanceRequest::new(query.root)
            .with_max_bytes(u64::MAX)
            .with_working_dir(query.working_dir)
            .with_session_namespace(query.namespace);
        match query.home_dir {
            Some(home) => request.with_home_dir(home),
            None => request.with_user_scope(false),
        }
    }

    fn is_target(source_path: &str, file: &str, block: bool) -> bool {
        if !block {
            return source_path == file;
        }
        source_path
            .strip_prefix(file)
            .is_some_and(|rest| rest == "#session" || rest.starts_with("#session-"))
    }

    fn without_subtree_unless_below(
        profile: &DiscoveryProfile,
        working_dir: &str,
        file: &str,
    ) -> DiscoveryProfile {
        let mut profile = profile.clone();
        let base = working_dir.trim_end_matches('/');
        let below = file.rsplit_once('/').is_some_and(|(dir, _)| {
            dir.strip_prefix(base)
                .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'))
        });
        if !below {
            profile.include_subtree = false;
            profile.on_demand_subtree = false;
        }
        profile
    }

    fn file_verdict(
        fs: &MemoryFs,
        profile: &DiscoveryProfile,
        query: &DeliveryQuery<'_>,
        via: &str,
        file: &str,
        block: bool,
    ) -> DeliveryVerdict {
        let profile = &without_subtree_unless_below(profile, query.working_dir, file);
        let request = request_for(query);
        let resolution = resolve_as(fs, profile, &request);
        let path = Some(file.to_string());
        let cut = resolution.omitted.iter().any(|o| {
            is_target(&o.path, file, block)
                && matches!(
                    o.reason,
                    OmissionReason::BudgetTruncated | OmissionReason::BudgetExhausted
                )
        });
        if cut {
            let needed = needed_bytes(fs, profile, &request, file, block);
            let why = Undelivered::BudgetTruncated {
                budget_bytes: resolution.budget_bytes,
                needed_bytes: needed,
            };
            let mut cut = verdict(via, path, Some(why));
            cut.remedy_args = budget_launch_args(profile, needed).unwrap_or_default();
            if cut.remedy_args.is_empty() {
                let note = cut.note.take().unwrap_or_default();
                cut.note = Some(format!("{note}; nothing raises this CLI's budget"));
            }
            return cut;
        }
        let kept = resolution
            .sources
            .iter()
            .any(|s| is_target(&s.path, file, block));
        let duplicate = resolution
            .omitted
            .iter()
            .any(|o| is_target(&o.path, file, block) && o.reason == OmissionReason::DuplicateBody);
        if kept || duplicate {
            return verdict(via, path, None);
        }
        verdict(via, path, Some(why_absent(&resolution, file)))
    }

    fn why_absent(resolution: &GuidanceResolution, file: &str) -> Undelivered {
        for omission in resolution.omitted.iter().filter(|o| o.path == file) {
            match omission.reason {
                OmissionReason::Shadowed => {
                    return Undelivered::Shadowed {
                        by: omission.shadowed_by.clone().unwrap_or_default(),
                    };
                }
                OmissionReason::OnDemand => return Undelivered::OnDemand,
                OmissionReason::BudgetTruncated
                | OmissionReason::BudgetExhausted
                | OmissionReason::DuplicateBody => {}
                other => return Undelivered::Dropped { omission: other },
            }
        }
        let file_read = resolution.sources.iter().any(|s| s.path == file)
            || resolution.omitted.iter().any(|o| o.path == file);
        if file_read {
            Undelivered::BlockMissing
        } else {
            Undelivered::NotRead
        }
    }

    fn needed_bytes(
        fs: &MemoryFs,
        profile: &DiscoveryProfile,
        request: &GuidanceRequest,
        file: &str,
        block: bool,
    ) -> u64 {
        let mut unlimited = profile.clone();
        unlimited.budget_bytes = Some(u64::MAX);
        let resolution = resolve_as(fs, &unlimited, request);
        let mut running = 0u64;
        let mut needed = 0u64;
        for source in &resolution.sources {
            if !(profile.budget_excludes_user && source.scope == GuidanceScope::User) {
                running = running.saturating_add(source.bytes);
            }
            if is_target(&source.path, file, block) {
                needed = running;
            }
        }
        needed
    }
}

/// Claude Code's shape with imports, deduplication and a whole-source budget its launch
/// arguments raise: the paths the other profiles leave untried.
fn budgeted_importer(budget: u64) -> DiscoveryProfile {
    DiscoveryProfile {
        imports: true,
        dedupe_bodies: true,
        budget_bytes: Some(budget),
        user_files: vec![".claude/CLAUDE.md".into()],
        budget_launch_args: vec!["--budget={bytes}".into()],
        ..claude(true)
    }
}

/// A text an instruction file may hold: plain, empty, blank, a comment, an import, our block
/// (well-formed or not), or the session text itself.
fn some_text() -> impl Strategy<Value = String> {
    prop_oneof![
        (1usize..300).prop_map(|n| "u".repeat(n)),
        Just(String::new()),
        Just("  \n\t\n".to_string()),
        Just("<!-- a comment -->\nrules".to_string()),
        Just("see\n@docs/x.md\n".to_string()),
        Just("@AGENTS.md\n".to_string()),
        Just(block(TEXT)),
        Just(block("")),
        Just(format!("{BEGIN}\nunterminated\n")),
        Just(TEXT.to_string()),
        Just("other".to_string()),
    ]
}

/// A workspace under `/ws/proj` (with `.git`), its parent and the home directory, each file
/// present or not with one of [`some_text`].
fn workspace() -> impl Strategy<Value = MemoryFs> {
    const PATHS: [&str; 11] = [
        "/ws/proj/AGENTS.override.md",
        "/ws/proj/CLAUDE.md",
        "/ws/proj/CLAUDE.local.md",
        "/ws/CLAUDE.md",
        "/ws/AGENTS.md",
        "/ws/proj/sub/AGENTS.md",
        "/ws/proj/docs/x.md",
        "/ws/proj/.pi/APPEND_SYSTEM.md",
        "/home/u/.codex/AGENTS.md",
        "/home/u/.claude/CLAUDE.md",
        "/home/u/.pi/agent/APPEND_SYSTEM.md",
    ];
    (
        some_text(),
        proptest::option::of(Just(())),
        proptest::collection::vec(proptest::option::of(some_text()), PATHS.len()),
    )
        .prop_map(|(user, with_block, others)| {
            let agents = match with_block {
                Some(()) => format!("{user}\n{}", block(TEXT)),
                None => user,
            };
            let mut fs = MemoryFs::new().with_file("/ws/proj/AGENTS.md", agents);
            for (path, text) in PATHS.iter().zip(others) {
                if let Some(text) = text {
                    fs.add_file(path, text);
                }
            }
            fs.with_dir("/ws/proj/.git")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Judging every budget over one reading of the files answers exactly as the whole
    /// resolutions did, for every profile shape, carrier and working directory, with and
    /// without the remedy.
    #[test]
    fn one_reading_judges_as_the_full_resolves(
        fs in workspace(),
        budget in 1u64..700,
        cwd in prop_oneof![Just("/ws/proj"), Just("/ws/proj/sub"), Just("/ws")],
        carrier in prop_oneof![
            Just(in_file("AGENTS.md")),
            Just(in_file(".pi/APPEND_SYSTEM.md")),
            Just(SessionTextCarrier::OwnedFile { path: RelPath::new("CLAUDE.md").unwrap() }),
        ],
    ) {
        let profiles = [codex(budget), claude(true), claude(false), pi(), budgeted_importer(budget)];
        for profile in profiles {
            let case = Case { fs: fs.clone(), profile, carrier: carrier.clone(), working_dir: cwd };
            let query = case.query();
            prop_assert_eq!(case.verdict(), full_resolves::judge(&case.fs, &case.profile, &query));
            prop_assert_eq!(
                case.remedied(),
                full_resolves::with_remedy(&case.fs, &case.profile, &query)
            );
        }
    }
}
