//! The suite checks itself on two made-up providers: one that writes generated configuration and
//! takes skills into `.cursor/skills` (so the configuration and skill checks are registered and
//! run), and one that takes neither (so they are not, and the refusal of skills it cannot take is
//! exercised). Then the registry itself: which checks each provider gets, and that a check a
//! provider's capabilities register fails when its plan does not keep the capability's promise.
//!
//! A `harness = false` target: the suite's own harness runs it, with the registry tests added.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

use libtest_mimic::{Arguments, Trial};
use projectfile_conformance::checks::{CHECKS, select};
use projectfile_conformance::{Subject, harness};
use projectfile_core::guidance::DiscoveryProfile;
use projectfile_core::{
    OwnedFileProjection, OwnedRole, Plan, PlanContext, Provider, ProviderSpec, RelPath,
    SessionTextCarrier, patterns,
};
use std::panic::AssertUnwindSafe;
use std::process::ExitCode;

/// Cursor-shaped: session text in an owned `.mdc`, MCP, CLI and hooks configuration as owned JSON
/// files, a hook script, skills in `.cursor/skills`.
#[derive(Clone, Copy, Default)]
struct Configures;

const CONFIGURES: ProviderSpec = ProviderSpec::new("configures", || DiscoveryProfile {
    extra_files: vec![".cursor/rules/*.mdc".into()],
    ..DiscoveryProfile::default()
})
.session_text_in_file()
.skills_in(".cursor/skills")
.takes_mcp()
.takes_hooks()
.takes_cli_config()
.writes_owned_files();

impl Provider for Configures {
    fn spec(&self) -> &'static ProviderSpec {
        &CONFIGURES
    }
    fn session_plan(&self, ctx: &PlanContext<'_>) -> projectfile_provider::Result<Plan> {
        let owned = |path: &str, content: String, mode, role| OwnedFileProjection {
            path: RelPath::new(path).unwrap(),
            content,
            mode,
            role,
        };
        let mdc = ".cursor/rules/mlp-system.mdc";
        let mut files = vec![owned(
            mdc,
            format!("---\nalwaysApply: true\n---\n{}\n", ctx.request.prompt),
            None,
            OwnedRole::Instructions,
        )];
        if let Some(servers) = &ctx.request.mcp_servers {
            let json = serde_json::json!({ "mcpServers": servers });
            files.push(owned(
                ".cursor/mcp.json",
                format!("{json:#}\n"),
                None,
                OwnedRole::McpConfig,
            ));
        }
        if let Some(cli) = &ctx.request.cli_config {
            files.push(owned(
                ".cursor/cli.json",
                format!("{cli:#}\n"),
                None,
                OwnedRole::CliConfig,
            ));
        }
        if let Some(hooks) = &ctx.request.hooks {
            // It takes hooks in its own format only: neutral ones are refused, naming them.
            if hooks.format == projectfile_provider::HooksFormat::Neutral {
                return Err(projectfile_provider::Error::invalid(
                    "the session's neutral hooks",
                    "configures takes hooks in its own format only; nothing was written",
                ));
            }
            files.push(owned(
                ".cursor/hooks.json",
                format!("{:#}\n", hooks.config),
                None,
                OwnedRole::HooksConfig,
            ));
            if let Some(script) = &hooks.script {
                files.push(owned(
                    &format!(".cursor/hooks/{}", script.name),
                    script.content.clone(),
                    Some(0o755),
                    OwnedRole::HookScript,
                ));
            }
        }
        Ok(Plan {
            owned_files: files,
            session_text: Some(SessionTextCarrier::OwnedFile {
                path: RelPath::new(mdc).unwrap(),
            }),
            ..Plan::default()
        })
    }
}

/// Takes only the session text, as a block.
#[derive(Clone, Copy, Default)]
struct Plain;

const PLAIN: ProviderSpec = ProviderSpec::new("plain", || DiscoveryProfile {
    per_directory: vec!["AGENTS.md".into()],
    ..DiscoveryProfile::default()
})
.session_text_in_file();

impl Provider for Plain {
    fn spec(&self) -> &'static ProviderSpec {
        &PLAIN
    }
    fn session_plan(&self, ctx: &PlanContext<'_>) -> projectfile_provider::Result<Plan> {
        patterns::agents_md_block(ctx, &[])
    }
}

/// Claims markers and owned files but plans neither: a liar the registry must not excuse.
#[derive(Clone, Copy, Default)]
struct Claims;

const CLAIMS: ProviderSpec = ProviderSpec::new("claims", || DiscoveryProfile {
    per_directory: vec!["AGENTS.md".into()],
    ..DiscoveryProfile::default()
})
.session_text_in_file()
.writes_owned_files()
.creates_markers();

impl Provider for Claims {
    fn spec(&self) -> &'static ProviderSpec {
        &CLAIMS
    }
    fn session_plan(&self, ctx: &PlanContext<'_>) -> projectfile_provider::Result<Plan> {
        patterns::agents_md_block(ctx, &[])
    }
}

/// The names of the checks `select` applies to `subject`, and of those it skips.
fn selected(subject: &Subject) -> (Vec<&'static str>, Vec<&'static str>) {
    let (apply, skipped) = select(subject);
    (
        apply.iter().map(|c| c.name).collect(),
        skipped.iter().map(|s| s.check.name).collect(),
    )
}

const SKILL_CHECKS: [&str; 7] = [
    "skills_are_projected_marked_and_removed",
    "skill_take_over_restores_the_projects_folder",
    "skill_refresh_and_user_files",
    "skill_hostile_names_are_refused",
    "skill_source_symlinks_are_refused",
    "skill_lost_state_dir",
    "skill_crash_leftovers_are_cleaned",
];

/// A provider that takes only the session text gets no check of what it cannot do, and each
/// skipped one says why.
fn plain_gets_no_check_of_what_it_cannot_do() {
    let subject = Subject::new(Plain);
    let (apply, skipped) = selected(&subject);
    for name in SKILL_CHECKS.iter().chain(&[
        "owned_files_restore_prior_content_and_mode",
        "owned_file_user_edit_is_set_aside",
        "markers_are_counted",
        "launch_arg_private_file_lives_while_held",
        "generated_config_is_removed_only_when_ours",
    ]) {
        assert!(skipped.contains(name), "{name} registered for plain");
        assert!(!apply.contains(name), "{name} registered for plain");
    }
    for name in [
        "user_bytes_round_trip",
        "user_edits_are_kept",
        "malformed_markers_are_refused",
        "symlinks_are_refused",
        "unsupported_inputs_are_refused",
        "crash_points_leave_the_users_bytes",
    ] {
        assert!(apply.contains(&name), "{name} not registered for plain");
    }
    let (_, with_reasons) = select(&subject);
    let reason = |name: &str| {
        with_reasons
            .iter()
            .find(|s| s.check.name == name)
            .unwrap()
            .reason
    };
    assert!(reason("skill_lost_state_dir").contains("skills"));
    assert!(reason("markers_are_counted").contains("markers"));
    assert!(reason("launch_arg_private_file_lives_while_held").contains("private files"));
}

/// A provider that takes configuration and skills gets those checks, and no block check where
/// its plan has no block.
fn configures_gets_its_capabilities_checked() {
    let (apply, skipped) = selected(&Subject::new(Configures));
    for name in SKILL_CHECKS.iter().chain(&[
        "owned_files_restore_prior_content_and_mode",
        "owned_file_user_edit_is_set_aside",
        "generated_config_is_removed_only_when_ours",
    ]) {
        assert!(apply.contains(name), "{name} not registered for configures");
    }
    for name in [
        "user_bytes_round_trip",
        "user_edits_are_kept",
        "malformed_markers_are_refused",
        "markers_are_counted",
    ] {
        assert!(skipped.contains(&name), "{name} registered for configures");
    }
}

/// Every registered check is either run or listed as skipped, once, for every subject.
fn the_registry_is_split_not_filtered() {
    let mut names: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CHECKS.len(), "two checks share a name");
    for subject in [
        Subject::new(Plain),
        Subject::new(Configures),
        Subject::new(Claims),
    ] {
        let (apply, skipped) = selected(&subject);
        let mut all: Vec<&str> = apply.into_iter().chain(skipped).collect();
        all.sort_unstable();
        assert_eq!(all, names, "{}", subject.name());
    }
}

/// A capability registers its checks, so a provider claiming markers and owned files whose plan
/// has neither fails them instead of passing them by default.
fn a_claimed_capability_is_checked_not_excused() {
    let subject = Subject::new(Claims);
    let (apply, _) = select(&subject);
    for name in [
        "markers_are_counted",
        "owned_files_restore_prior_content_and_mode",
        "owned_file_user_edit_is_set_aside",
    ] {
        let check = apply
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{name} not registered for a provider claiming it"));
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| (check.run)(&subject)));
        assert!(
            outcome.is_err(),
            "{name} passed for a provider that plans none"
        );
    }
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let groups = vec![
        ("configures", Subject::new(Configures)),
        ("plain", Subject::new(Plain)),
    ];
    let (mut trials, _) = harness::trials(groups, None);
    let registry: [(&str, fn()); 4] = [
        (
            "plain_gets_no_check_of_what_it_cannot_do",
            plain_gets_no_check_of_what_it_cannot_do,
        ),
        (
            "configures_gets_its_capabilities_checked",
            configures_gets_its_capabilities_checked,
        ),
        (
            "the_registry_is_split_not_filtered",
            the_registry_is_split_not_filtered,
        ),
        (
            "a_claimed_capability_is_checked_not_excused",
            a_claimed_capability_is_checked_not_excused,
        ),
    ];
    for (name, test) in registry {
        trials.push(Trial::test(format!("registry::{name}"), move || {
            test();
            Ok(())
        }));
    }
    libtest_mimic::run(&args, trials).exit_code()
}
