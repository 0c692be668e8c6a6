//! Plan shapes more than one provider uses, so providers stay declarative and never copy logic.

use crate::error::Result;
use crate::plan::{BlockProjection, Plan, RelPath, SessionTextCarrier, SkillProjection};
use crate::provider::PlanContext;

/// The portable project instruction file.
pub const AGENTS_MD: &str = "AGENTS.md";

/// The session block in the root instruction file the CLI reads: the first of `read_instead` that
/// exists at the root (any kind: a symlink there is refused later rather than silently bypassed),
/// else `AGENTS.md`.
pub fn agents_md_block(ctx: &PlanContext<'_>, read_instead: &[&str]) -> Result<Plan> {
    let mut target = RelPath::new(AGENTS_MD)?;
    let mut notes = Vec::new();
    for name in read_instead {
        let candidate = RelPath::new(*name)?;
        if ctx.view.exists(&candidate) {
            notes.push(format!(
                "{candidate} exists at the root and is read instead of {AGENTS_MD}, so the block goes there"
            ));
            target = candidate;
            break;
        }
    }
    block_plan(ctx, target, notes)
}

/// A plan whose only projection is the session block in `path`.
pub fn block_plan(ctx: &PlanContext<'_>, path: RelPath, notes: Vec<String>) -> Result<Plan> {
    Ok(Plan {
        blocks: vec![BlockProjection {
            path: path.clone(),
            body: ctx.request.prompt.clone(),
        }],
        session_text: Some(SessionTextCarrier::Block { path }),
        notes,
        ..Plan::default()
    })
}

/// The session's skills, projected into the CLI's skills folder `skills_dir` (relative to the
/// destination root): one [`SkillProjection`] per `ctx.request.skills`, in request order.
///
/// Every provider whose CLI reads skill folders calls this with its own folder and sets
/// `Capabilities::skills`; core does the rest (see [`crate::skills`]): the copy into
/// `skills_dir/<name>/` built beside it and renamed in, the `.{namespace}-managed` marker file, the
/// take-over of a same-named folder (stashed, put back by the last session), counting across
/// sessions, refresh at each start, and removal of only what is provably ours.
///
/// | CLI | `skills_dir` | source |
/// |---|---|---|
/// | Codex | `.agents/skills` | openai/codex `codex-rs/core-skills/src/loader.rs` (`repo_agents_skill_roots`) |
/// | Claude Code | `.claude/skills` | code.claude.com/docs skills page |
/// | Pi | `.pi/skills` | badlogic/pi-mono `packages/coding-agent/docs/skills.md` |
/// | Cursor | `.cursor/skills` | cursor.com/docs/context/skills |
///
/// Refuses (before anything is written) a skill name that is not one plain folder name
/// ([`crate::skills::validate_name`]: no `/`, `..`, absolute path, control character or leading
/// `.`), and two skills with the same name.
///
/// ```
/// # use projectfile_core::{patterns, Plan, PlanContext, Result};
/// fn plan(ctx: &PlanContext<'_>) -> Result<Plan> {
///     let mut plan = patterns::agents_md_block(ctx, &[])?;
///     plan.skills = patterns::skills(ctx, ".agents/skills")?;
///     Ok(plan)
/// }
/// ```
pub fn skills(ctx: &PlanContext<'_>, skills_dir: &str) -> Result<Vec<SkillProjection>> {
    let skills_dir = RelPath::new(skills_dir)?;
    let mut out: Vec<SkillProjection> = Vec::with_capacity(ctx.request.skills.len());
    for skill in &ctx.request.skills {
        crate::skills::validate_name(&skill.name)?;
        if out.iter().any(|s| s.name == skill.name) {
            return Err(crate::error::Error::invalid(
                format!("skill name {:?}", skill.name),
                "the session names this skill twice; nothing was written",
            ));
        }
        out.push(SkillProjection {
            skills_dir: skills_dir.clone(),
            name: skill.name.clone(),
            source: skill.source.clone(),
        });
    }
    Ok(out)
}
