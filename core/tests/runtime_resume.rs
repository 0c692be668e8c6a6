//! Resume boundaries: one test per rule of `can_resume`, the JSON form of an identity, and the
//! property that a native session resumes exactly when nothing about where it lives changed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::path::PathBuf;

use projectfile_core::reader::Mode;
use projectfile_core::runtime::{ResumeRule, RuntimeIdentity, SessionId, can_resume};
use proptest::prelude::*;
use rstest::rstest;

fn identity() -> RuntimeIdentity {
    let runtime = PathBuf::from("/rt/u1/crew-7/work_3aproject_3a7/codex/builder");
    RuntimeIdentity {
        user: "u1".into(),
        project: "crew-7".into(),
        session: SessionId::parse("work:project:7").unwrap(),
        provider: "codex".into(),
        mode: Mode::Builder,
        working_dir: runtime.clone(),
        runtime: Some(runtime),
        cli_home: None,
    }
}

fn failed(from: &RuntimeIdentity, to: &RuntimeIdentity) -> Vec<ResumeRule> {
    let verdict = can_resume(from, to);
    let failed: Vec<ResumeRule> = verdict
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.rule)
        .collect();
    assert_eq!(verdict.resume, failed.is_empty());
    assert_eq!(verdict.checks.len(), 7, "every rule is checked");
    failed
}

#[test]
fn the_same_private_runtime_resumes() {
    assert!(failed(&identity(), &identity()).is_empty());
}

#[rstest]
#[case::another_user(|i: &mut RuntimeIdentity| i.user = "u2".into(), &[ResumeRule::SameConversation])]
#[case::another_project(|i: &mut RuntimeIdentity| i.project = "crew-8".into(), &[ResumeRule::SameConversation])]
#[case::another_session(
    |i: &mut RuntimeIdentity| i.session = SessionId::parse("work:project:7:review").unwrap(),
    &[ResumeRule::SameConversation]
)]
#[case::another_cli(|i: &mut RuntimeIdentity| i.provider = "claude".into(), &[ResumeRule::SameProvider])]
#[case::another_mode(|i: &mut RuntimeIdentity| i.mode = Mode::Run, &[ResumeRule::SameMode])]
#[case::an_old_shared_folder_session(
    |i: &mut RuntimeIdentity| {
        i.runtime = None;
        i.working_dir = "/crews/crew-7".into();
    },
    &[ResumeRule::PrivateRuntime, ResumeRule::SameRuntime, ResumeRule::SameWorkingDirectory]
)]
#[case::a_moved_runtime(
    |i: &mut RuntimeIdentity| i.runtime = Some("/old-rt/u1/crew-7/work_3aproject_3a7/codex/builder".into()),
    &[ResumeRule::SameRuntime]
)]
#[case::codex_project_directory_override(
    |i: &mut RuntimeIdentity| i.working_dir = "/crews/crew-7".into(),
    &[ResumeRule::SameWorkingDirectory]
)]
#[case::a_private_cli_home(
    |i: &mut RuntimeIdentity| i.cli_home = Some("/rt/x/.cli-home".into()),
    &[ResumeRule::SameCliHome]
)]
fn each_rule_refuses_on_its_own(
    #[case] change: fn(&mut RuntimeIdentity),
    #[case] rules: &[ResumeRule],
) {
    let mut recorded = identity();
    change(&mut recorded);
    assert_eq!(failed(&recorded, &identity()), rules);
    // The rules are symmetric: the other way round refuses for the same reasons.
    assert_eq!(failed(&identity(), &recorded), rules);
}

#[test]
fn a_uuid_spelled_in_another_case_is_the_same_conversation() {
    let mut a = identity();
    let mut b = identity();
    a.session = SessionId::parse("product-6F9619FF-8B86-D011-B42D-00CF4FC964FF").unwrap();
    b.session = SessionId::parse("product-6f9619ff-8b86-d011-b42d-00cf4fc964ff").unwrap();
    assert!(failed(&a, &b).is_empty());
}

#[test]
fn two_shared_folder_sessions_in_one_folder_resume() {
    let mut a = identity();
    a.runtime = None;
    a.working_dir = "/crews/crew-7".into();
    assert!(failed(&a, &a.clone()).is_empty());
}

#[test]
fn identities_read_and_write_json_strictly() {
    let json = serde_json::to_value(identity()).unwrap();
    assert_eq!(json["session"], "work:project:7");
    assert_eq!(json["mode"], "builder");
    assert_eq!(json["cli_home"], serde_json::Value::Null);
    let back: RuntimeIdentity = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, identity());
    // `cli_home` may be left out; an unknown field (a typo) is refused.
    let mut without = json.clone();
    without.as_object_mut().unwrap().remove("cli_home");
    assert_eq!(
        serde_json::from_value::<RuntimeIdentity>(without).unwrap(),
        identity()
    );
    let mut typo = json;
    typo["workdir"] = serde_json::json!("/x");
    assert!(serde_json::from_value::<RuntimeIdentity>(typo).is_err());
    // The session id is canonicalised on the way in.
    let upper = serde_json::json!({
        "user": "u", "project": "p", "session": "product-6F9619FF-8B86-D011-B42D-00CF4FC964FF",
        "provider": "pi", "mode": "run", "runtime": null, "working_dir": "/w",
    });
    let parsed: RuntimeIdentity = serde_json::from_value(upper).unwrap();
    assert_eq!(
        parsed.session.as_str(),
        "product-6f9619ff-8b86-d011-b42d-00cf4fc964ff"
    );
}

fn any_identity() -> impl Strategy<Value = RuntimeIdentity> {
    let path = prop_oneof![Just("/rt/a"), Just("/rt/b"), Just("/crew")].prop_map(PathBuf::from);
    (
        prop_oneof![Just("u1"), Just("u2")],
        prop_oneof![Just("work:project:1"), Just("work:project:1:k")],
        prop_oneof![Just("codex"), Just("claude")],
        prop_oneof![Just(Mode::Builder), Just(Mode::Run)],
        proptest::option::of(path.clone()),
        path.clone(),
        proptest::option::of(path),
    )
        .prop_map(
            |(user, session, provider, mode, runtime, working_dir, cli_home)| RuntimeIdentity {
                user: user.into(),
                project: "p".into(),
                session: SessionId::parse(session).unwrap(),
                provider: provider.into(),
                mode,
                runtime,
                working_dir,
                cli_home,
            },
        )
}

proptest! {
    /// A native session resumes exactly when nothing about where it lives changed.
    #[test]
    fn resume_iff_the_identities_are_equal(a in any_identity(), b in any_identity()) {
        let verdict = can_resume(&a, &b);
        prop_assert_eq!(verdict.resume, a == b);
        prop_assert_eq!(verdict.resume, can_resume(&b, &a).resume);
    }
}
