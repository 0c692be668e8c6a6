//! Crash-point enumeration (docs/promises.md, promises 6, 8 and 16): for the Codex provider and for a test-only
//! provider whose plan has a block, an owned file and a marker, crash after every possible number
//! of mutating file operations in acquire, refresh, release, last release and a start over stale
//! leftovers, and prove that the next start and the remaining releases leave exactly the user's
//! bytes, no temporary files and a clean state directory. The driver is
//! `projectfile_conformance::crash`, so every provider can run the same enumeration.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::Fixture;
use projectfile_conformance::crash::{CrashReport, enumerate_crash_points};
use projectfile_core::ProviderExt;
use projectfile_core::guidance::DiscoveryProfile;
use projectfile_core::{
    BlockProjection, MarkerKind, MarkerProjection, OwnedFileProjection, OwnedRole, Plan,
    PlanContext, Probes, Provider, ProviderSpec, RelPath, SessionTextCarrier,
};
use std::os::unix::fs::PermissionsExt;

/// A test-only provider with every projection kind: the session block in `AGENTS.md`, the session
/// text again in an owned file two directories deep (like Cursor's rule file), and a `.git`
/// directory marker (like Cursor's temporary `.git`).
struct BlockOwnedMarker;

const OWNED: &str = ".tool/rules/session.mdc";

const SPEC: ProviderSpec = ProviderSpec::new("block-owned-marker", DiscoveryProfile::default)
    .session_text_in_file()
    .writes_owned_files()
    .creates_markers();

impl Provider for BlockOwnedMarker {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    fn session_plan(&self, ctx: &PlanContext<'_>) -> projectfile_provider::Result<Plan> {
        let owned = RelPath::new(OWNED)?;
        Ok(Plan {
            blocks: vec![BlockProjection {
                path: RelPath::new("AGENTS.md")?,
                body: ctx.request.prompt.clone(),
            }],
            owned_files: vec![OwnedFileProjection {
                path: owned.clone(),
                content: format!("---\nalwaysApply: true\n---\n{}\n", ctx.request.prompt),
                mode: None,
                role: OwnedRole::Instructions,
            }],
            markers: vec![MarkerProjection {
                path: RelPath::new(".git")?,
                kind: MarkerKind::Dir,
            }],
            session_text: Some(SessionTextCarrier::OwnedFile { path: owned }),
            ..Plan::default()
        })
    }
}

fn run(provider: &dyn Provider, label: &str, setup: &dyn Fn(&Fixture)) -> CrashReport {
    let report = enumerate_crash_points(provider, &Probes::default(), setup);
    // Printed with --nocapture; `cargo xtask crash-points` (run by `cargo xtask ci`) sums them.
    eprintln!("crash points: {} / {label}: {report}", provider.name());
    for phase in &report.phases {
        assert!(
            phase.crash_points > 0,
            "{label}: phase {} has no crash point",
            phase.phase.name()
        );
    }
    report
}

fn empty(_: &Fixture) {}

const AGENTS_CRLF: &[u8] = b"# Rules\r\nUse tabs.\r\nno final newline";

// One test per workspace, so the harness runs them in parallel (fault injection is per thread).

#[test]
fn codex_empty_workspace_survives_a_crash_at_every_point() {
    let n = run(&projectfile_codex::Codex, "empty workspace", &empty).total();
    assert!(n >= 20, "only {n} crash points");
}

#[test]
fn codex_user_agents_md_survives_a_crash_at_every_point() {
    let n = run(
        &projectfile_codex::Codex,
        "user AGENTS.md",
        &|fx: &Fixture| {
            fx.write("AGENTS.md", AGENTS_CRLF);
            fx.write("src/main.rs", b"fn main() {}\n");
        },
    )
    .total();
    assert!(n >= 20, "only {n} crash points");
}

#[test]
fn codex_agents_override_survives_a_crash_at_every_point() {
    let n = run(
        &projectfile_codex::Codex,
        "AGENTS.override.md",
        &|fx: &Fixture| {
            fx.write("AGENTS.md", b"base\n");
            fx.write("AGENTS.override.md", b"\xEF\xBB\xBFoverride\n");
        },
    )
    .total();
    assert!(n >= 20, "only {n} crash points");
}

#[test]
fn block_owned_marker_empty_workspace_survives_a_crash_at_every_point() {
    let n = run(&BlockOwnedMarker, "empty workspace", &empty).total();
    assert!(n >= 40, "only {n} crash points");
}

#[test]
fn block_owned_marker_over_user_files_survives_a_crash_at_every_point() {
    let n = run(
        &BlockOwnedMarker,
        "user files everywhere",
        &|fx: &Fixture| {
            fx.write("AGENTS.md", AGENTS_CRLF);
            fx.write(OWNED, b"the user's own rule file\n");
            std::fs::set_permissions(
                fx.workspace.join(OWNED),
                std::fs::Permissions::from_mode(0o640),
            )
            .unwrap();
            std::fs::create_dir(fx.workspace.join(".git")).unwrap();
        },
    )
    .total();
    assert!(n >= 40, "only {n} crash points");
}

#[test]
fn block_owned_marker_with_existing_parent_survives_a_crash_at_every_point() {
    let n = run(
        &BlockOwnedMarker,
        "parent directory exists",
        &|fx: &Fixture| {
            fx.write(".tool/keep.txt", b"keep\n");
        },
    )
    .total();
    assert!(n >= 40, "only {n} crash points");
}
