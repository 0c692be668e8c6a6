//! Delivery and provider options: the acquire receipt's delivery verdict agrees with what
//! `resolve --as` says (core's `resolve_as`, the same code) over the same workspace, in the
//! workspace shapes where routes fail (a 40 KiB `AGENTS.md`, an `AGENTS.override.md`, a project
//! `CLAUDE.md`); a budget the profile's own launch arguments raise is raised; and a provider's
//! options are checked before anything is projected.
//!
//! [`delivery_verdict_agrees_with_resolve`] and [`provider_options_are_checked`] run for every
//! provider (registered in [`crate::checks::CHECKS`]); [`verdict_in`] lets a provider's own tests
//! state what its route does in each [`Shape`] (Codex: the 40 KiB file delivered with its budget
//! argument; Claude: the private route behind a `CLAUDE.md` and below the version gate).

use projectfile_core::guidance::{
    BUDGET_BYTES_PLACEHOLDER, DeliveryVerdict, DiscoveryProfile, GuidanceRequest,
    GuidanceResolution, StdFs, resolve_as,
};
use projectfile_core::projector::AcquireReceipt;
use projectfile_core::{Error, SessionRequest, SessionTextCarrier};
use projectfile_provider::ProviderExt;

use crate::{Fixture, Subject, Tree, assert_session_text_visible};

/// A workspace shape in which a route may fail to deliver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A `.git` and a short `AGENTS.md`.
    Plain,
    /// A `.git` and a 40 KiB `AGENTS.md`: past Codex's 32 KiB budget for project docs.
    BigAgentsMd,
    /// A `.git`, an `AGENTS.md` and an `AGENTS.override.md` (Codex reads the override instead).
    OverrideFile,
    /// An `AGENTS.md` and a project `CLAUDE.md` (Claude Code then skips every `AGENTS.md`).
    ShadowingClaudeMd,
}

impl Shape {
    /// Every shape.
    pub const ALL: [Shape; 4] = [
        Shape::Plain,
        Shape::BigAgentsMd,
        Shape::OverrideFile,
        Shape::ShadowingClaudeMd,
    ];

    /// Writes the shape into the fixture's workspace.
    pub fn build(self, fx: &Fixture) {
        std::fs::create_dir_all(fx.workspace.join(".git")).expect("mkdir .git");
        match self {
            Shape::Plain => fx.write("AGENTS.md", b"Project rules: be brief.\n"),
            Shape::BigAgentsMd => fx.write("AGENTS.md", forty_kib().as_bytes()),
            Shape::OverrideFile => {
                fx.write("AGENTS.md", b"Project rules: be brief.\n");
                fx.write("AGENTS.override.md", b"Local override: be precise.\n");
            }
            Shape::ShadowingClaudeMd => {
                fx.write("AGENTS.md", b"Project rules: be brief.\n");
                fx.write("CLAUDE.md", b"Claude rules of the project.\n");
            }
        }
    }
}

/// 40 KiB of plain rules, one per line.
pub fn forty_kib() -> String {
    let mut text = String::new();
    let mut line = 0;
    while text.len() < 40 * 1024 {
        line += 1;
        text.push_str(&format!(
            "Rule {line}: follow the house style in every file you touch.\n"
        ));
    }
    text
}

/// The prompt [`verdict_in`] projects.
pub const PROMPT: &str = "Delivery check: answer in haiku.";

/// Acquires [`PROMPT`] for `subject` in a fresh workspace of `shape`, asserts the receipt's
/// verdict agrees with `resolve_as` over the workspace as it stands, releases, and returns the
/// receipt.
pub fn verdict_in(subject: &Subject, shape: Shape) -> AcquireReceipt {
    let fx = Fixture::new();
    shape.build(&fx);
    let receipt = fx
        .acquire(subject, PROMPT)
        .unwrap_or_else(|e| panic!("{}: {shape:?}: acquire failed: {e}", subject.name()));
    assert_agrees(subject, &fx, &receipt, shape);
    assert!(fx.release(&receipt.token));
    receipt
}

/// The budget the verdict's launch arguments set, read back through the profile's own template
/// (so they must be the profile's arguments); `None` when it adds none.
fn raised_budget(profile: &DiscoveryProfile, verdict: &DeliveryVerdict) -> Option<u64> {
    if verdict.launch_args.is_empty() {
        return None;
    }
    assert_eq!(
        verdict.launch_args.len(),
        profile.budget_launch_args.len(),
        "the verdict's launch arguments are not the profile's: {:?}",
        verdict.launch_args
    );
    let mut bytes = None;
    for (template, arg) in profile.budget_launch_args.iter().zip(&verdict.launch_args) {
        match template.split_once(BUDGET_BYTES_PLACEHOLDER) {
            None => assert_eq!(template, arg, "not the profile's argument"),
            Some((before, after)) => {
                let number = arg
                    .strip_prefix(before)
                    .and_then(|rest| rest.strip_suffix(after))
                    .unwrap_or_else(|| panic!("{arg:?} does not follow {template:?}"));
                bytes = Some(number.parse::<u64>().expect("a byte count"));
            }
        }
    }
    bytes
}

/// Whether a resolution keeps the whole session text: a source carries the prompt and no
/// session block is cut by the budget.
fn keeps_session_text(resolution: &GuidanceResolution) -> bool {
    let cut = resolution.omitted.iter().any(|o| {
        o.path.contains("#session")
            && matches!(
                o.reason,
                projectfile_core::guidance::OmissionReason::BudgetTruncated
                    | projectfile_core::guidance::OmissionReason::BudgetExhausted
            )
    });
    !cut && resolution.sources.iter().any(|s| s.body.contains(PROMPT))
}

fn assert_agrees(subject: &Subject, fx: &Fixture, receipt: &AcquireReceipt, shape: Shape) {
    let name = subject.name();
    let verdict = &receipt.delivery;
    let carrier = receipt.session_text.as_ref().expect("a carrier");
    let profile = subject.provider.discovery_for(&receipt.probes);
    for arg in &verdict.launch_args {
        assert!(
            receipt.launch_args.contains(arg),
            "{name}: {shape:?}: the verdict's argument {arg} is not in the launch arguments"
        );
    }
    match carrier {
        SessionTextCarrier::Block { .. } | SessionTextCarrier::OwnedFile { .. } => {
            let mut effective = profile.clone();
            match raised_budget(&profile, verdict) {
                Some(bytes) => effective.budget_bytes = Some(bytes),
                None if effective.budget_bytes.is_none() => effective.budget_bytes = Some(u64::MAX),
                None => {}
            }
            let root = fx.workspace.to_string_lossy().into_owned();
            let mut request = GuidanceRequest::new(root.clone()).with_working_dir(root);
            request = match std::env::var("HOME") {
                Ok(home) if !home.is_empty() => request.with_home_dir(home),
                _ => request.with_user_scope(false),
            };
            let resolution = resolve_as(&StdFs, &effective, &request);
            assert_eq!(
                verdict.delivered,
                keeps_session_text(&resolution),
                "{name}: {shape:?}: the verdict {verdict:?} disagrees with resolve --as: {:?} / {:?}",
                resolution
                    .sources
                    .iter()
                    .map(|s| &s.path)
                    .collect::<Vec<_>>(),
                resolution.omitted
            );
            if !verdict.delivered && !profile.budget_launch_args.is_empty() {
                assert!(
                    !matches!(
                        verdict.undelivered,
                        Some(projectfile_core::guidance::Undelivered::BudgetTruncated { .. })
                    ),
                    "{name}: {shape:?}: a cut the profile's arguments raise must be raised"
                );
            }
        }
        SessionTextCarrier::LaunchArgument { .. } => {
            assert!(verdict.delivered, "{name}: {shape:?}: {verdict:?}");
            assert_session_text_visible(fx, receipt, PROMPT);
        }
        // Delivered whole: none of the shapes comes near a budget the whole prompt must fit
        // (the core tests judge that budget).
        SessionTextCarrier::Environment { .. } => {
            assert!(verdict.delivered, "{name}: {shape:?}: {verdict:?}");
            assert_session_text_visible(fx, receipt, PROMPT);
        }
        SessionTextCarrier::NotProjected { .. } => {
            assert!(!verdict.delivered, "{name}: {shape:?}: {verdict:?}");
        }
    }
    if !verdict.delivered {
        assert!(
            verdict.undelivered.is_some() && verdict.note.is_some(),
            "{name}: {shape:?}: an undelivered route says why: {verdict:?}"
        );
    }
}

/// Promise: never a route reported delivered when the CLI's profile says otherwise. In every
/// [`Shape`], the receipt's verdict agrees with `resolve_as` (with the budget its launch
/// arguments set), and a budget cut the profile can raise is raised.
pub fn delivery_verdict_agrees_with_resolve(subject: &Subject) {
    for shape in Shape::ALL {
        verdict_in(subject, shape);
    }
}

/// A provider's options are checked before anything is projected: an unknown one and an
/// unknown value are refused, naming what it takes; each declared value (and the default) is
/// accepted.
pub fn provider_options_are_checked(subject: &Subject) {
    let declared = subject.provider.options();
    let fx = Fixture::new();
    let with = |name: &str, value: &str| {
        let mut session = SessionRequest::with_prompt(PROMPT);
        session.options.insert(name.into(), value.into());
        session
    };
    let before = Tree::capture(&fx.workspace);
    for session in [with("no-such-option", "x")]
        .into_iter()
        .chain(declared.iter().map(|o| with(&o.name, "no-such-value")))
    {
        let error = fx
            .acquire_session(subject, session)
            .expect_err("an unknown option or value is refused");
        assert!(matches!(error, Error::Provider { .. }), "{error}");
        assert!(
            error.to_string().contains("nothing was projected"),
            "{error}"
        );
        assert_eq!(Tree::capture(&fx.workspace), before);
    }
    for option in &declared {
        assert!(
            option.values.contains(&option.default),
            "{}: option {} defaults to a value it does not take",
            subject.name(),
            option.name
        );
        for value in &option.values {
            let receipt = fx
                .acquire_session(subject, with(&option.name, value))
                .unwrap_or_else(|e| panic!("{}={value}: {e}", option.name));
            assert!(fx.release(&receipt.token));
        }
    }
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}
