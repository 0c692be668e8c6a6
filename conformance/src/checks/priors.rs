//! Promise 16: no CLI reads the priors folder.

use crate::Subject;
use crate::fixture::Fixture;
use projectfile_provider::ProviderExt;

/// Promise 16: no CLI reads the priors folder. A workspace whose priors folder holds every
/// instruction file, rule file and skill folder name a CLI looks for resolves, by the provider's
/// own discovery profile, exactly as it does without it; and the provider's skills folder is
/// never inside it.
pub fn priors_are_read_by_no_cli(subject: &Subject) {
    use projectfile_core::guidance::{GuidanceRequest, StdFs, resolve_as};
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"# the project's rules\n");
    let resolved = |fx: &Fixture| {
        let request = GuidanceRequest::new(fx.workspace.to_string_lossy().into_owned())
            .with_home_dir(fx.outside.to_string_lossy().into_owned())
            .with_user_scope(false);
        resolve_as(&StdFs, &subject.provider.discovery(), &request)
            .sources
            .into_iter()
            .map(|s| (s.path, s.body))
            .collect::<Vec<_>>()
    };
    let before = resolved(&fx);
    let top = projectfile_core::testing::priors::dir_name(&projectfile_core::Namespace::default());
    for name in [
        "AGENTS.md",
        "AGENTS.override.md",
        "CLAUDE.md",
        "GEMINI.md",
        "mlp-system.mdc",
        ".cursor/rules/rule.mdc",
        ".pi/APPEND_SYSTEM.md",
        ".claude/CLAUDE.md",
        ".agents/skills/review/SKILL.md",
        ".claude/skills/review/SKILL.md",
        "review/SKILL.md",
        "CONTEXT.md",
        ".github/copilot-instructions.md",
        ".github/instructions/rule.instructions.md",
        ".claude/rules/rule.md",
    ] {
        fx.write(
            &format!("{top}/0123456789abcdef/{name}"),
            b"kept prior: never read\n",
        );
    }
    assert_eq!(
        resolved(&fx),
        before,
        "{}: the priors folder was read",
        subject.name()
    );
    let plan = fx.plan(subject, "x");
    for skill in &plan.skills {
        assert!(
            !skill.skills_dir.as_str().starts_with(&top),
            "{}: skills go into the priors folder",
            subject.name()
        );
    }
}
