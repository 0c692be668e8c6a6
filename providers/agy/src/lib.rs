//! The agy (Google Antigravity CLI) provider. agy gets **no prompt file**: the receipt says plainly
//! that the session text was not projected ([`SessionTextCarrier::NotProjected`] plus a note), so
//! the host delivers it another way (e.g. as the first message). What agy does take is the
//! session's hooks, as owned files counted per workspace: the first session writes them, later
//! sessions hold them, and the last one restores the project's own bytes (or removes ours).
//!
//! | input | file | role |
//! |---|---|---|
//! | hooks configuration | `.agents/hooks.json` (as given: an object of named hooks) | `HooksConfig` |
//! | hook script | `.agents/hooks/<name>`, mode 0755 | `HookScript` |
//!
//! # Decisions (unconfirmed paths)
//!
//! - **`.agents/hooks.json` is UNCONFIRMED.** No first-party source was found. A validator measured
//!   against agy 1.1.25 loads hooks from `<customization root>/hooks.json` with `.agents/` as the
//!   root; an author on agy 1.1.11 saw it load hooks only from plugins. So whether the file is read
//!   depends on the version.
//! - **`.agents/hooks/<name>` for the script is UNCONFIRMED**, chosen to sit beside the config in
//!   agy's customization root (a published kit keeps its hook material under `.agents/hooks/`).
//!   The hooks configuration should run it by that path.
//! - The whole file is owned (the project's own `.agents/hooks.json` is set aside and put back by
//!   the last session, promise 12), rather than merging a named key into it.
//!
//! [`SessionTextCarrier::NotProjected`]: projectfile_provider::SessionTextCarrier::NotProjected
//!
//! # Facts relied on
//!
//! Every source is third-party.
//!
//! | fact | source | confirmed? |
//! |---|---|---|
//! | `agy` is Google's Antigravity CLI, successor to Gemini CLI, sharing `~/.gemini/` | docs.claude-mem.ai/antigravity-cli/setup; docs.rs safe-chains `targets/agy` | PARTLY |
//! | No prompt file for agy (hooks are counted per workspace) | docs/promises.md, promise 17 | design decision |
//! | Project hooks: `<root>/.agents/hooks.json` (also `.agent/`, `_agents/`, `_agent/`); global `~/.gemini/config/hooks.json` or `~/.gemini/antigravity-cli/hooks.json` | stbenjam/skillsaw `docs/rules/antigravity-hooks-valid.md` ("Measured against agy 1.1.25"); docs.rs agent-config `docs/agents/antigravitycli.md` | PARTLY |
//! | Format: top-level object of named hooks, each mapping events (`PreToolUse`, `PostToolUse`, `PreInvocation`, `PostInvocation`, `Stop`, `SessionStart`) to handlers; strict JSON, a load error drops the whole file silently | skillsaw `antigravity-hooks-valid.md` | PARTLY |
//! | agy 1.1.11 loaded hooks only from plugins ("loaded 0 named hooks from 0 hooks.json file(s)") | michaelAGI/toolahead release v0.7.0 | CONFLICTING, version-dependent |
//! | `.agents/hooks/` holds hook material in a published kit | vudovn/ag-kit `.agents/hooks/README.md` | PARTLY |
//! | Instructions: project `AGENTS.md` or `GEMINI.md`; global `~/.gemini/GEMINI.md` | docs.rs agent-config antigravitycli.md | PARTLY; not used (no prompt file) |
//! | MCP: `.agents/mcp_config.json` (in a customization root: `.agents/`, `.agent/`, `_agents/`, `_agent/`), key `mcpServers`; a syntax error or a non-object root or `mcpServers` is startup-fatal, a malformed server is dropped silently | docs.rs agent-config 0.2.0; stbenjam/skillsaw `docs/rules/antigravity-mcp-valid.md` ("Measured against agy 1.1.26"); qiita.com/DaiGuard/items/f95a6523db57b30a7df0 | PARTLY (third parties); the session's servers are merged into the project's file (core's merged JSON kind), the project's bytes restored by the last session |
//! | agy also loads MCP servers from its global config and plugins (`~/.gemini/config/plugins`) | qiita.com/DaiGuard/items/f95a6523db57b30a7df0 (`/mcp` listing) | PARTLY: so `--mcp-mode replace` is refused (the session's servers cannot be made the only ones) |
//! | Print mode (`agy -p`) "reports no workspace and runs commands in its own scratch directory" (1.1.11) | hermes-agent antigravity-cli skill; toolahead v0.7.0 | PARTLY: project hooks may not apply there |
//! | An environment variable that moves agy's home (`~/.gemini/`) | — | NOT found: the Gemini CLI has none (agent-config docs: "There is no `GEMINI_HOME` env var"); one host passes a `--gemini_dir=` flag instead (omnigent-ai/omnigent `dev/verify_agy_gemini_dir.py`), unconfirmed; `run --private-cli-home` is refused for agy |

use projectfile_provider::DiscoveryProfile;
use projectfile_provider::Input;
use projectfile_provider::{Plan, PlanContext, Provider, ProviderSpec, Result, mcp, patterns};

/// The project hooks configuration (unconfirmed; see the module docs).
pub const HOOKS_FILE: &str = ".agents/hooks.json";
/// Where the session's hook script goes (unconfirmed; see the module docs).
pub const HOOK_SCRIPT_DIR: &str = ".agents/hooks";
/// The project MCP configuration the session's servers are merged into (partly confirmed; see
/// the module docs).
pub const MCP_FILE: &str = ".agents/mcp_config.json";
/// Why the session text is not projected.
pub const NOT_PROJECTED: &str =
    "agy takes no per-session prompt file or flag that projectfile can rely on";

/// agy, as data.
pub const SPEC: ProviderSpec = ProviderSpec::new("agy", discovery)
    .takes_hooks()
    .takes_mcp()
    .writes_owned_files()
    .refusing(&[
        (
            Input::Subagents,
            "no source confirms where agy reads a project's subagents",
        ),
        (
            Input::Commands,
            "no source confirms where agy reads a project's commands",
        ),
    ]);

/// The agy provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct Agy;

/// How agy discovers instruction files.
fn discovery() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec![patterns::AGENTS_MD.into(), "GEMINI.md".into()],
        user_files: vec![".gemini/GEMINI.md".into()],
        ..DiscoveryProfile::default()
    }
}

impl Provider for Agy {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        let mut plan = patterns::not_projected_plan(NOT_PROJECTED);
        plan.owned_files = patterns::hook_files(
            ctx,
            HOOKS_FILE,
            HOOK_SCRIPT_DIR,
            patterns::Dialect::Unconfirmed("agy"),
        )?;
        if !plan.owned_files.is_empty() {
            plan.notes.push(format!(
                "hooks go to {HOOKS_FILE} (scripts under {HOOK_SCRIPT_DIR}/); agy's reading of that path is unconfirmed and version-dependent"
            ));
        }
        if let Some(merged) = mcp::merged_file(ctx, MCP_FILE)? {
            plan.notes.push(format!(
                "the session's MCP servers are merged into the project's {MCP_FILE} (partly confirmed: measured by a third party on agy 1.1.26); its own bytes come back with the last session"
            ));
            plan.merged_json.push(merged);
        }
        Ok(plan)
    }
}
