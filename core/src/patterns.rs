//! Plan shapes more than one provider uses, so providers stay declarative and never copy logic.

use crate::error::Result;
use crate::plan::{BlockProjection, Plan, RelPath, SessionTextCarrier};
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
