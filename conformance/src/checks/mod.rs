//! The conformance checks, one file per promise, and the registry that says which apply to a
//! provider.
//!
//! Every check is a function taking a [`Subject`] that runs on the real file system and asserts.
//! [`CHECKS`] registers each with what it [`Needs`]: nothing (it holds for every provider), a
//! capability of the provider's spec (skills, owned files, markers), or something
//! the provider's plan holds for a full session (blocks in a shared file, files in the workspace,
//! a private file). [`select`] splits the registry for one subject into the checks that apply
//! and those that do not, each with the reason; the harness runs the first as tests and lists
//! the second, so a check never passes without asserting anything. A check that applies may
//! still fail because the plan does not hold what the capability promises (a provider claiming
//! markers whose plan has none fails `markers_are_counted`).

use projectfile_provider::{Capabilities, OwnedRole, Plan, ProviderExt, SessionTextCarrier};

use crate::Subject;
use crate::fixture::Fixture;

pub mod carrier;
pub mod cli_home;
pub mod concurrency;
pub mod crash_points;
pub mod delivery;
pub mod empty_workspace;
pub mod every_input;
pub mod generated_config;
pub mod idempotent_release;
pub mod malformed_markers;
pub mod markers;
pub mod no_temporary_files;
pub mod overlapping_sessions;
pub mod owned_file_edits;
pub mod owned_files;
pub mod planning;
pub mod priors;
pub mod private_file;
pub mod project_folders;
pub mod refresh;
pub mod session_inputs;
pub mod sigkill;
pub mod skill_folders;
pub mod symlinks;
pub mod unsupported_inputs;
pub mod user_bytes;
pub mod user_edits;

/// A capability of the provider's spec that a check needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// `Capabilities::skills` (a skills folder in the spec).
    Skills,
    /// `Capabilities::owned_files`.
    OwnedFiles,
    /// `Capabilities::markers`.
    Markers,
    /// `Capabilities::mcp`.
    Mcp,
    /// `Capabilities::subagents` or `Capabilities::commands`.
    NamedFiles,
}

impl Capability {
    fn holds(self, caps: &Capabilities) -> bool {
        match self {
            Capability::Skills => caps.skills,
            Capability::OwnedFiles => caps.owned_files,
            Capability::Markers => caps.markers,
            Capability::Mcp => caps.mcp,
            Capability::NamedFiles => caps.subagents || caps.commands,
        }
    }

    fn missing(self) -> &'static str {
        match self {
            Capability::Skills => "the provider takes no skills (its spec names no skills folder)",
            Capability::OwnedFiles => "the provider writes no owned files",
            Capability::Markers => "the provider creates no markers",
            Capability::Mcp => "the provider takes no MCP servers",
            Capability::NamedFiles => "the provider takes no subagents or commands",
        }
    }
}

/// Something the provider's plan for a full session ([`Subject::full_session`]) holds, that a
/// check needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanHolds {
    /// A block in a shared file.
    Blocks,
    /// A file in the workspace: a block or an owned file.
    WorkspaceFiles,
    /// The session text in a private file (the launch-argument or environment route).
    PrivateFiles,
    /// An owned file holding configuration (MCP servers, hooks, CLI configuration), for a session
    /// that brings every configuration input the provider takes.
    ConfigurationFiles,
    /// A project JSON file the session's entries are merged into (the MCP route of Cursor, agy).
    MergedJson,
}

impl PlanHolds {
    fn holds(self, plan: &Plan) -> bool {
        match self {
            PlanHolds::Blocks => !plan.blocks.is_empty(),
            PlanHolds::WorkspaceFiles => !plan.blocks.is_empty() || !plan.owned_files.is_empty(),
            // The session text's own private file (MCP servers or hooks may bring others).
            PlanHolds::PrivateFiles => matches!(
                plan.session_text,
                Some(
                    SessionTextCarrier::LaunchArgument { .. }
                        | SessionTextCarrier::Environment { .. }
                )
            ),
            // Subagents and commands are not configuration (their own checks cover them).
            PlanHolds::ConfigurationFiles => plan.owned_files.iter().any(|o| {
                !matches!(
                    o.role,
                    OwnedRole::Instructions | OwnedRole::Subagent | OwnedRole::Command
                )
            }),
            PlanHolds::MergedJson => !plan.merged_json.is_empty(),
        }
    }

    fn missing(self) -> &'static str {
        match self {
            PlanHolds::Blocks => "the plan has no blocks",
            PlanHolds::WorkspaceFiles => "the plan writes no file in the workspace",
            PlanHolds::PrivateFiles => "the plan has no private files",
            PlanHolds::ConfigurationFiles => {
                "the plan writes no configuration file (the provider takes no MCP servers, hooks or CLI configuration)"
            }
            PlanHolds::MergedJson => "the plan merges no JSON file",
        }
    }
}

/// What a check needs of a provider to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing: it holds for every provider.
    Nothing,
    /// A capability of the spec.
    Capability(Capability),
    /// Something in the plan for a full session.
    Plan(PlanHolds),
}

/// One registered check.
#[derive(Clone, Copy, Debug)]
pub struct Check {
    /// Its name, the test's name.
    pub name: &'static str,
    /// What it needs to apply.
    pub needs: Needs,
    /// The check.
    pub run: fn(&Subject),
}

/// Registers `module::check` under the check's own name.
macro_rules! check {
    ($module:ident :: $check:ident, $needs:expr) => {
        Check {
            name: stringify!($check),
            needs: $needs,
            run: $module::$check,
        }
    };
}

use Capability as C;
use Needs::{Capability as Cap, Nothing, Plan as InPlan};
use PlanHolds as P;

/// Every check of the suite, with what it needs.
pub const CHECKS: &[Check] = &[
    check!(user_bytes::user_bytes_round_trip, InPlan(P::Blocks)),
    check!(empty_workspace::nothing_left_in_empty_workspace, Nothing),
    check!(user_edits::user_edits_are_kept, InPlan(P::Blocks)),
    check!(
        overlapping_sessions::overlapping_sessions_release_in_either_order,
        Nothing
    ),
    check!(idempotent_release::release_is_idempotent, Nothing),
    check!(refresh::start_refreshes_the_text, Nothing),
    check!(sigkill::sigkilled_holder_is_cleaned_at_next_start, Nothing),
    check!(
        concurrency::concurrent_sessions_never_lose_an_update,
        Nothing
    ),
    check!(no_temporary_files::no_temporary_files_left, Nothing),
    check!(
        malformed_markers::malformed_markers_are_refused,
        InPlan(P::Blocks)
    ),
    check!(symlinks::symlinks_are_refused, InPlan(P::WorkspaceFiles)),
    check!(project_folders::project_folders_are_never_replaced, Nothing),
    check!(planning::planning_is_pure, Nothing),
    check!(carrier::session_text_reaches_the_cli, Nothing),
    check!(priors::priors_are_read_by_no_cli, Nothing),
    check!(carrier::session_text_carrier_matches_capabilities, Nothing),
    check!(unsupported_inputs::unsupported_inputs_are_refused, Nothing),
    check!(every_input::every_input_leaves_nothing_behind, Nothing),
    check!(
        owned_files::owned_files_restore_prior_content_and_mode,
        Cap(C::OwnedFiles)
    ),
    check!(
        owned_file_edits::owned_file_user_edit_is_set_aside,
        Cap(C::OwnedFiles)
    ),
    check!(markers::markers_are_counted, Cap(C::Markers)),
    check!(
        private_file::launch_arg_private_file_lives_while_held,
        InPlan(P::PrivateFiles)
    ),
    check!(
        skill_folders::skills_are_projected_marked_and_removed,
        Cap(C::Skills)
    ),
    check!(
        skill_folders::skill_take_over_restores_the_projects_folder,
        Cap(C::Skills)
    ),
    check!(skill_folders::skill_refresh_and_user_files, Cap(C::Skills)),
    check!(
        skill_folders::skill_hostile_names_are_refused,
        Cap(C::Skills)
    ),
    check!(
        skill_folders::skill_source_symlinks_are_refused,
        Cap(C::Skills)
    ),
    check!(skill_folders::skill_lost_state_dir, Cap(C::Skills)),
    check!(
        skill_folders::skill_crash_leftovers_are_cleaned,
        Cap(C::Skills)
    ),
    check!(
        generated_config::generated_config_is_removed_only_when_ours,
        InPlan(P::ConfigurationFiles)
    ),
    check!(crash_points::crash_points_leave_the_users_bytes, Nothing),
    check!(cli_home::cli_home_is_declared_or_refused, Nothing),
    check!(delivery::delivery_verdict_agrees_with_resolve, Nothing),
    check!(delivery::provider_options_are_checked, Nothing),
    check!(
        session_inputs::merged_json_keeps_the_projects_entries,
        InPlan(P::MergedJson)
    ),
    check!(
        session_inputs::merged_json_clash_is_refused,
        InPlan(P::MergedJson)
    ),
    check!(
        session_inputs::merged_json_user_edit_and_lost_state,
        InPlan(P::MergedJson)
    ),
    check!(session_inputs::mcp_bad_input_is_refused, Cap(C::Mcp)),
    check!(
        session_inputs::named_files_take_over_and_restore,
        Cap(C::NamedFiles)
    ),
    check!(
        session_inputs::neutral_definitions_are_converted_or_refused,
        Nothing
    ),
    check!(session_inputs::dry_run_changes_nothing, Nothing),
];

/// Why `needs` does not hold for `subject`, or `None` when it does. `plan` is the subject's
/// plan for a full session in an empty workspace, made once by [`select`].
fn unmet(needs: Needs, subject: &Subject, plan: &Plan) -> Option<&'static str> {
    match needs {
        Needs::Nothing => None,
        Needs::Capability(cap) => {
            (!cap.holds(&subject.provider.capabilities())).then(|| cap.missing())
        }
        Needs::Plan(holds) => (!holds.holds(plan)).then(|| holds.missing()),
    }
}

/// A registered check that does not apply to a subject, and why.
#[derive(Clone, Copy, Debug)]
pub struct Skipped {
    /// The check.
    pub check: &'static Check,
    /// Why it does not apply.
    pub reason: &'static str,
}

/// The checks of [`CHECKS`] that apply to `subject`, and those that do not with the reason, both
/// in registry order.
pub fn select(subject: &Subject) -> (Vec<&'static Check>, Vec<Skipped>) {
    let plan = Fixture::new().plan_session(subject, &subject.full_session("x"));
    let mut apply = Vec::new();
    let mut skipped = Vec::new();
    for check in CHECKS {
        match unmet(check.needs, subject, &plan) {
            None => apply.push(check),
            Some(reason) => skipped.push(Skipped { check, reason }),
        }
    }
    (apply, skipped)
}

/// The files the subject's plan edits in place (blocks), which is where user bytes meet ours.
/// The checks calling it are registered for plans with blocks ([`PlanHolds::Blocks`]), so none
/// is a failure, not a pass.
pub(crate) fn block_targets(subject: &Subject) -> Vec<String> {
    let targets: Vec<String> = Fixture::new()
        .plan(subject, "x")
        .blocks
        .iter()
        .map(|b| b.path.to_string())
        .collect();
    assert!(
        !targets.is_empty(),
        "{}: registered for this provider, but the plan has no blocks",
        subject.name()
    );
    targets
}
