//! The test harness a provider's suite runs under (`harness = false`, built on `libtest-mimic`,
//! so `cargo test` and `cargo nextest` list, filter and run each check as its own test).
//!
//! For each subject it registers the checks of [`crate::checks::CHECKS`] that apply, named
//! `<group>::<check>` (or `<check>` for a lone subject), and `facts_are_recorded` once for the
//! provider's docs page. The checks that do not apply are not tests: the harness lists them on
//! stderr with the reason, so a run says what it did not check instead of passing it.

use std::process::ExitCode;
use std::sync::Arc;

use libtest_mimic::{Arguments, Trial};
use projectfile_provider::ProviderExt;

use crate::Subject;
use crate::checks::{Skipped, select};

/// One subject of a suite: a group name (`""` for a lone subject) and the subject.
pub type Group = (&'static str, Subject);

/// The trials for `groups`, and the checks that do not apply (with the test name each would
/// have had). `facts` is the provider's `src/lib.rs`, checked once by `facts_are_recorded`.
pub fn trials(groups: Vec<Group>, facts: Option<&'static str>) -> (Vec<Trial>, Vec<String>) {
    let mut trials = Vec::new();
    let mut skipped = Vec::new();
    let provider = groups.first().map(|(_, subject)| subject.provider.name());
    for (group, subject) in groups {
        let name = |check: &str| match group {
            "" => check.to_string(),
            group => format!("{group}::{check}"),
        };
        let (apply, not) = select(&subject);
        let subject = Arc::new(subject);
        for check in apply {
            let subject = Arc::clone(&subject);
            let run = check.run;
            trials.push(Trial::test(name(check.name), move || {
                run(&subject);
                Ok(())
            }));
        }
        for Skipped { check, reason } in not {
            skipped.push(format!("{}: {reason}", name(check.name)));
        }
    }
    if let (Some(source), Some(provider)) = (facts, provider) {
        trials.push(Trial::test("facts_are_recorded", move || {
            crate::facts::facts_are_recorded(provider, source);
            Ok(())
        }));
    }
    (trials, skipped)
}

/// Runs the suite for `groups` with the command line's arguments; what `conformance_suite!`'s
/// `main` returns.
pub fn run(groups: Vec<Group>, facts: Option<&'static str>) -> ExitCode {
    let args = Arguments::from_args();
    let (trials, skipped) = trials(groups, facts);
    if !args.list && !skipped.is_empty() {
        eprintln!("checks that do not apply, not run:");
        for line in &skipped {
            eprintln!("  {line}");
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}
