//! Promise 13: generated configuration is removed only when recognisably ours. Registered for
//! providers that take configuration (MCP servers, hooks or CLI configuration).

use projectfile_core::{HookScript, HooksInput, OwnedRole, RelPath, SessionRequest};
use projectfile_provider::ProviderExt;

use crate::Subject;
use crate::checks::skill_folders::me;
use crate::fixture::Fixture;
use crate::tree::Tree;

/// A session bringing every kind of configuration the provider takes, or `None` when it takes none.
pub fn config_session(subject: &Subject, prompt: &str) -> Option<SessionRequest> {
    let caps = subject.provider.capabilities();
    let mut session = SessionRequest::with_prompt(prompt);
    if caps.mcp {
        session.mcp_servers = Some(serde_json::json!({"probe": {"command": "true", "args": []}}));
    }
    if caps.hooks {
        session.hooks = Some(HooksInput {
            config: serde_json::json!({"version": 1, "hooks": {}}),
            script: Some(HookScript {
                name: "probe-hook.sh".into(),
                content: "#!/bin/sh\nexit 0\n".into(),
            }),
            format: Default::default(),
        });
    }
    if caps.cli_config {
        session.cli_config = Some(serde_json::json!({"permissions": {"allow": [], "deny": []}}));
    }
    (caps.mcp || caps.hooks || caps.cli_config).then_some(session)
}

/// Rule 8: generated configuration is removed only when recognisably ours: the project's own is
/// put back, a user's edit is kept and reported, and with a lost state directory content we cannot
/// prove ours is left as it was.
pub fn generated_config_is_removed_only_when_ours(subject: &Subject) {
    let session = config_session(subject, "config session").unwrap_or_else(|| {
        panic!(
            "{}: registered for this provider, but it takes no configuration",
            subject.name()
        )
    });
    let probe = Fixture::new();
    let configs: Vec<RelPath> = probe
        .plan_session(subject, &session)
        .owned_files
        .iter()
        .filter(|o| o.role != OwnedRole::Instructions)
        .map(|o| o.path.clone())
        .collect();
    assert!(
        !configs.is_empty(),
        "{}: registered for this provider, but its plan writes no configuration file",
        subject.name()
    );
    // The project's own files come back; a user's edit is kept and reported: in place where no
    // prior must come back there, set aside where one must.
    let fx = Fixture::new();
    fx.write(configs[0].as_str(), b"{\"the project's own\": true}\n");
    let before = Tree::capture(&fx.workspace);
    let a = fx
        .acquire_session_as(subject, session.clone(), me())
        .unwrap();
    let edited = configs.last().unwrap();
    fx.write(edited.as_str(), b"the user's edit\n");
    let end = fx.projector.release(&a.token).unwrap();
    let now = Tree::capture(&fx.workspace);
    for (path, node) in &before.0 {
        assert_eq!(
            now.0.get(path),
            Some(node),
            "{path}: the project's own is not back"
        );
    }
    // An edit with no prior stays in place; one over a prior is set aside and the prior is back.
    let expected: &[u8] = if edited != &configs[0] {
        b"the user's edit\n"
    } else {
        b"{\"the project's own\": true}\n"
    };
    assert_eq!(
        fx.read(edited.as_str()).as_deref(),
        Some(expected),
        "{edited}: an edit with no prior stays; one over a prior is set aside"
    );
    let kept = end
        .kept
        .iter()
        .find(|k| &k.path == edited)
        .unwrap_or_else(|| panic!("the edit of {edited} was not reported: {:?}", end.kept));
    assert_eq!(std::fs::read(&kept.kept_at).unwrap(), b"the user's edit\n");

    // A lost state directory: what we cannot prove ours is left as it was.
    let fx = Fixture::new();
    let a = fx
        .acquire_session_as(subject, session.clone(), me())
        .unwrap();
    std::fs::remove_dir_all(&fx.state).unwrap();
    assert!(!fx.release(&a.token));
    fx.write(configs[0].as_str(), b"changed after the state was lost\n");
    let leftovers: Vec<Option<Vec<u8>>> = configs.iter().map(|c| fx.read(c.as_str())).collect();
    let b = fx.acquire_session_as(subject, session, me()).unwrap();
    assert!(fx.release(&b.token));
    assert_eq!(
        fx.read(configs[0].as_str()).unwrap(),
        b"changed after the state was lost\n",
        "unprovable content must be left as it was"
    );
    for (config, leftover) in configs.iter().zip(leftovers) {
        let now = fx.read(config.as_str());
        assert!(
            now.is_none() || now == leftover,
            "{config}: a leftover is either proven ours and removed, or left exactly as it was"
        );
    }
}
