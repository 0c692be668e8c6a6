//! The Codex CLI provider: the session text is a block in the root `AGENTS.md`, or in
//! `AGENTS.override.md` when the root has one, because Codex reads the override instead.
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
//! | Skills live in `.agents/skills/` | DESIGN.md section 6 (to confirm with issue 4) |

use projectfile_core::guidance::DiscoveryProfile;
use projectfile_core::{Capabilities, Plan, PlanContext, Provider, Result, patterns};

/// The file Codex reads in a directory when present, instead of `AGENTS.md`.
pub const OVERRIDE_FILE: &str = "AGENTS.override.md";
/// The portable instruction file.
pub const AGENTS_FILE: &str = patterns::AGENTS_MD;

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
        patterns::agents_md_block(ctx, &[OVERRIDE_FILE])
    }
}
