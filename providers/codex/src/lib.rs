//! The Codex CLI provider: the session text is a block in the root `AGENTS.md`, or in
//! `AGENTS.override.md` when the root has one, because Codex reads the override instead; the
//! session's skills are projected into `.agents/skills/<name>/`.
//!
//! # Facts relied on
//!
//! | fact | source |
//! |---|---|
//! | Codex reads `AGENTS.md` from the project root down to the working directory and concatenates them root first | openai/codex `codex-rs/core/src/project_doc.rs` (`discover_project_doc_paths`), `docs/agents_md.md` |
//! | In each directory `AGENTS.override.md` is read *instead of* `AGENTS.md` when present | openai/codex `docs/agents_md.md` ("If an AGENTS.override.md exists, Codex uses it instead") |
//! | The project root is the nearest ancestor with a `.git` (the default `project_root_markers`) | openai/codex `docs/agents_md.md`, `docs/config.md` |
//! | Project docs are budgeted at 32 KiB (`project_doc_max_bytes` = 32768) | openai/codex `docs/config.md` |
//! | Codex does not strip HTML comments, so marker lines reach the model and must read sensibly | seed 000 and DESIGN.md section 6 |
//! | Project skills are read from `.agents/skills/` in every directory from the project root down to the working directory; hidden entries are skipped | openai/codex `codex-rs/core-skills/src/loader.rs` (`repo_agents_skill_roots()`; research/codex.md) |

use projectfile_core::guidance::DiscoveryProfile;
use projectfile_core::{Capabilities, Plan, PlanContext, Provider, Result, patterns};

/// The file Codex reads in a directory when present, instead of `AGENTS.md`.
pub const OVERRIDE_FILE: &str = "AGENTS.override.md";
/// The portable instruction file.
pub const AGENTS_FILE: &str = patterns::AGENTS_MD;
/// Where Codex reads project skills (at the project root; it also reads deeper ones).
pub const SKILLS_DIR: &str = ".agents/skills";

/// The Codex provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct Codex;

impl Provider for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            session_text_file: true,
            skills: true,
            ..Capabilities::default()
        }
    }

    fn discovery(&self) -> DiscoveryProfile {
        DiscoveryProfile {
            per_directory: vec![OVERRIDE_FILE.into(), AGENTS_FILE.into()],
            first_wins: true,
            root_markers: vec![".git".into()],
            budget_bytes: Some(32 * 1024),
            ..DiscoveryProfile::default()
        }
    }

    fn plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        let mut plan = patterns::agents_md_block(ctx, &[OVERRIDE_FILE])?;
        plan.skills = patterns::skills(ctx, SKILLS_DIR)?;
        Ok(plan)
    }
}
