//! Promises 6, 8 and 16 under crashes, power losses and a lost state directory, at every mutating
//! file operation of a full session.

use crate::Subject;
use crate::crash;
use crate::fixture::Fixture;

/// Promises 6, 8 and 16 under crashes, power losses and a lost state directory: with every input the provider
/// accepts but skills (see [`Subject::full_session`]; skill folders have their own crash checks),
/// [`crash::enumerate_crash_points_with`] stops the process model after every mutating file
/// operation of every phase, and loses power there too, over an empty workspace and over one
/// where the user has their own file at every path the plan writes. Prints the counts.
pub fn crash_points_leave_the_users_bytes(subject: &Subject) {
    let session = |prompt: &str| subject.full_session(prompt);
    let provider = subject.provider.as_ref();
    let empty = crash::enumerate_crash_points_with(provider, &subject.probes, &|_| {}, &session);
    let plan = Fixture::new().plan_session(subject, &session("the plan's paths"));
    let users_files = |fx: &Fixture| {
        for block in &plan.blocks {
            fx.write(
                block.path.as_str(),
                b"# The user's own\r\nrules, no final newline",
            );
        }
        for owned in &plan.owned_files {
            fx.write_mode(owned.path.as_str(), b"the user's own file\n", 0o640);
        }
    };
    let over_users =
        crash::enumerate_crash_points_with(provider, &subject.probes, &users_files, &session);
    // Printed with --nocapture; `cargo xtask crash-points` (run by `cargo xtask ci`) sums them.
    let name = match &subject.probes.cli_version {
        projectfile_core::VersionProbe::Known { version, .. } => {
            format!("{} (CLI {version})", subject.name())
        }
        _ => subject.name().to_string(),
    };
    eprintln!("crash points: {name} / full session, empty workspace: {empty}");
    eprintln!("crash points: {name} / full session, over the user's files: {over_users}");
    for report in [&empty, &over_users] {
        assert!(
            report.phases.iter().all(|p| p.crash_points > 0),
            "{}: a phase with no crash point: {report}",
            subject.name()
        );
    }
}
