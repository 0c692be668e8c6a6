//! Conformance checks where a provider meets a linked runtime: the private CLI home a launch can
//! give the CLI through the variable the provider declares.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use projectfile_core::reader::Mode;
use projectfile_core::runtime::{
    CLI_HOME_DIR, LaunchLinks, Runtime, RuntimeKey, SessionId, private_cli_home_env,
};

use crate::Subject;
use crate::fixture::Fixture;

/// A provider either declares the variable that moves its CLI's home (in its spec,
/// [`with_cli_home_env`](projectfile_provider::ProviderSpec::with_cli_home_env)) or is refused a
/// private home with an error naming it. A declared variable is a plain environment variable name that
/// the plan never sets itself, and a launch gives it a home inside the runtime, private (0700),
/// that outlives the launch (native sessions and the login live there).
pub fn cli_home_is_declared_or_refused(subject: &Subject) {
    let name = subject.name();
    let var = match private_cli_home_env(subject.provider.as_ref()) {
        Ok(var) => var,
        Err(e) => {
            let message = e.to_string();
            assert_eq!(e.kind(), "provider", "{name}: {message}");
            assert!(message.starts_with(&format!("{name}: ")), "{message}");
            assert!(message.contains("private CLI home"), "{message}");
            return;
        }
    };
    let fx = Fixture::new();
    let plan = fx.plan_session(subject, &subject.full_session("cli home"));
    assert!(
        plan.env.iter().all(|(key, _)| key != var),
        "{name}: the plan sets {var} itself, so a private home would fight it"
    );
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    std::fs::create_dir(base.join("project")).unwrap();
    let session = SessionId::parse("work:project:1").unwrap();
    let key = RuntimeKey::new("u", "p", session, name, Mode::Run).unwrap();
    let links = LaunchLinks::new(base.join("project"));
    let launch = Runtime::launch(&base.join("rt"), key.clone(), &links, Duration::ZERO).unwrap();
    let home = launch.private_dir(CLI_HOME_DIR).unwrap();
    assert_eq!(home.parent(), Some(launch.dir()), "{name}");
    let mode = std::fs::metadata(&home).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{name}: the CLI home must be private");
    std::fs::write(home.join("auth.json"), "{}").unwrap();
    launch.close().unwrap();
    let links = LaunchLinks::new(base.join("project"));
    let again = Runtime::launch(&base.join("rt"), key, &links, Duration::ZERO).unwrap();
    assert_eq!(again.private_dir(CLI_HOME_DIR).unwrap(), home);
    assert!(
        home.join("auth.json").exists(),
        "{name}: the home must persist"
    );
}
