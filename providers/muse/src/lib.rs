//! The Muse Code provider: the session text is a block in the root `AGENTS.md`, exactly like
//! Codex and through the same core code ([`patterns::agents_md_block`]), except that no override
//! file is known for Muse, so the block always goes to `AGENTS.md`.
//!
//! # Facts relied on
//!
//! No first-party Muse Code documentation or source was found;
//! everything below comes from third-party integrations. Verify on a real `muse` binary (a canary
//! word in AGENTS.md and `muse exec`) before relying on it.
//!
//! | fact | source | confirmed? |
//! |---|---|---|
//! | `muse` is Meta's "Muse Code" terminal coding agent | hypery11/oh-my-musecode README; pypi muse-cli README ("The name muse belongs to Muse Code on many machines") | PARTLY (third parties) |
//! | Non-interactive runs: `muse exec <prompt>` | github.github.io/spec-kit/integrations/muse.html | PARTLY |
//! | Reads `AGENTS.md`, falling back to `CLAUDE.md` | stbenjam/skillsaw Muse rules module ("Muse Code reads AGENTS.md for portable instructions"); a second repository's comment ("reads AGENTS.md (falling back to CLAUDE.md)") | PARTLY (two independent third parties) |
//! | The session text goes in an `AGENTS.md` block, as for Codex | docs/promises.md, promise 17 | design decision |
//! | Directory walk, root detection, `AGENTS.override.md`, byte budget, HTML-comment handling | — | NOT found |
//! | Skills in `.agents/skills/<name>/SKILL.md` | spec-kit muse integration page | PARTLY |
//! | Project hooks in `.muse/hooks.json` (Claude-like shape) | stbenjam/skillsaw `docs/rules/muse-hooks-valid.md` | PARTLY; not projected (hooks are refused) |
//! | MCP servers, subagents, commands: where a project declares them for Muse | — | NOT found (no first-party documentation; searched for a `.muse/` MCP file and found none): `--mcp-config`, `--agent` and `--command` are refused for muse |
//! | An environment variable that moves Muse's home or config folder | — | NOT found: no first-party documentation; `run --private-cli-home` is refused for muse |

use projectfile_provider::DiscoveryProfile;
use projectfile_provider::Input;
use projectfile_provider::{Plan, PlanContext, Provider, ProviderSpec, Result, patterns};

/// Where the CLI reads project skills; each session skill is projected into `.agents/skills/<name>/`.
pub const SKILLS_DIR: &str = ".agents/skills";

/// Muse Code, as data.
pub const SPEC: ProviderSpec = ProviderSpec::new("muse", discovery)
    .session_text_in_file()
    .skills_in(SKILLS_DIR)
    .refusing(&[
        (Input::Hooks, MUSE_UNKNOWN),
        (Input::Subagents, MUSE_UNKNOWN),
        (Input::Commands, MUSE_UNKNOWN),
    ]);

/// Why Muse takes no hooks, subagents or commands.
const MUSE_UNKNOWN: &str = "no first-party documentation says where a Muse project declares them";

/// The Muse Code provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct Muse;

/// How Muse Code discovers instruction files: only the root-level files are known; the walk is
/// not (see the facts table).
fn discovery() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec![patterns::AGENTS_MD.into(), "CLAUDE.md".into()],
        first_wins: true,
        ..DiscoveryProfile::default()
    }
}

impl Provider for Muse {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        patterns::agents_md_block(ctx, &[])
    }
}
