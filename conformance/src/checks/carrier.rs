//! Where the session text goes: the CLI would really see it, and the carrier the receipt names
//! agrees with the capabilities and the plan.

use crate::Subject;
use crate::fixture::Fixture;
use crate::fixture::assert_session_text_visible;
use projectfile_provider::ProviderExt;
use projectfile_provider::{LaunchArg, OwnedRole, SessionTextCarrier};

/// The check that matters most: while a session holds, the CLI would actually see the session
/// text. For a file carrier, resolving the workspace with the provider's own discovery profile
/// (what that CLI loads) must contain the text; for a launch argument or the environment, the
/// named private file must carry it. A provider that does not project the text says why.
pub fn session_text_reaches_the_cli(subject: &Subject) {
    use projectfile_core::guidance::{GuidanceRequest, StdFs, resolve_as};
    let fx = Fixture::new();
    let prompt = "Reach the model: answer in haiku.";
    let receipt = fx.acquire(subject, prompt).unwrap();
    match &receipt.session_text {
        Some(SessionTextCarrier::Block { .. } | SessionTextCarrier::OwnedFile { .. }) => {
            let request = GuidanceRequest::new(fx.workspace.to_string_lossy().into_owned())
                .with_home_dir(fx.outside.to_string_lossy().into_owned())
                .with_user_scope(false);
            let resolution = resolve_as(&StdFs, &subject.provider.discovery(), &request);
            assert!(
                resolution.sources.iter().any(|s| s.body.contains(prompt)),
                "{}: the CLI's discovery profile does not load the session text: {:?}",
                subject.name(),
                resolution
                    .sources
                    .iter()
                    .map(|s| s.path.as_str())
                    .collect::<Vec<_>>()
            );
        }
        Some(
            SessionTextCarrier::LaunchArgument { .. } | SessionTextCarrier::Environment { .. },
        ) => {
            assert_session_text_visible(&fx, &receipt, prompt);
        }
        Some(SessionTextCarrier::NotProjected { reason }) => {
            eprintln!(
                "{}: session text not projected ({reason}); nothing to resolve",
                subject.name()
            );
        }
        None => panic!(
            "{}: the receipt does not say where the session text went",
            subject.name()
        ),
    }
    assert!(fx.release(&receipt.token));
}

/// The carrier the receipt names agrees with the capabilities and the plan: a file carrier needs
/// `session_text_file`, a launch argument needs `session_text_launch_arg` and a private file of
/// that name, and a provider that does not project says so in a note. Owned files and markers
/// appear only when the capabilities say so.
pub fn session_text_carrier_matches_capabilities(subject: &Subject) {
    let caps = subject.provider.capabilities();
    let fx = Fixture::new();
    let plan = fx.plan_session(subject, &subject.full_session("carried"));
    let receipt = fx
        .acquire_session(subject, subject.full_session("carried"))
        .unwrap();
    assert_session_text_visible(&fx, &receipt, "carried");
    assert_eq!(receipt.session_text, plan.session_text);
    match &receipt.session_text {
        Some(SessionTextCarrier::Block { path }) => {
            assert!(
                caps.session_text_file,
                "a block carrier needs session_text_file"
            );
            assert!(plan.blocks.iter().any(|b| &b.path == path));
        }
        Some(SessionTextCarrier::OwnedFile { path }) => {
            assert!(
                caps.session_text_file,
                "an owned-file carrier needs session_text_file"
            );
            assert!(caps.owned_files, "an owned-file carrier needs owned_files");
            assert!(
                plan.owned_files
                    .iter()
                    .any(|o| &o.path == path && o.role == OwnedRole::Instructions)
            );
        }
        Some(SessionTextCarrier::LaunchArgument { private_file }) => {
            assert!(
                caps.session_text_launch_arg,
                "a launch-argument carrier needs session_text_launch_arg"
            );
            assert!(plan.private_files.iter().any(|f| &f.name == private_file));
            assert!(
                plan.launch_args
                    .contains(&LaunchArg::PrivateFilePath(private_file.clone()))
            );
        }
        Some(SessionTextCarrier::Environment { private_file, var }) => {
            assert!(
                caps.session_text_launch_arg,
                "an environment carrier needs session_text_launch_arg (a private file given at launch)"
            );
            assert!(plan.private_files.iter().any(|f| &f.name == private_file));
            assert!(
                plan.env.iter().any(|(name, _)| name == var),
                "the plan does not set {var}, through which the CLI finds the session text"
            );
        }
        Some(SessionTextCarrier::NotProjected { .. }) => {
            assert!(
                receipt.notes.iter().any(|n| n.contains("not projected")),
                "the receipt must say plainly that the session text was not projected: {:?}",
                receipt.notes
            );
        }
        None => panic!("the receipt does not say where the session text went"),
    }
    if !caps.owned_files {
        assert!(
            plan.owned_files.is_empty(),
            "owned files without the capability"
        );
    }
    if !caps.markers {
        assert!(plan.markers.is_empty(), "markers without the capability");
    }
    assert!(fx.release(&receipt.token));
}
