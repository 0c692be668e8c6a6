//! The typed host API: start a session as a [`Lease`] guard and end it by releasing the guard.
//!
//! ```no_run
//! use projectfile::host::{Host, SessionBuilder};
//!
//! # fn main() -> projectfile::core::Result<()> {
//! let host = Host::new("/var/lib/myhost/projectfile");
//! let mut lease = host.acquire(SessionBuilder::new("codex", "/home/ada/src/app").prompt("Be brief."))?;
//! // Launch the CLI with the plan's arguments and environment, in the workspace.
//! let status = lease.command("codex", ["--full-auto"]).status();
//! let receipt = lease.release()?; // or just drop the lease
//! # let _ = (status, receipt);
//! # Ok(())
//! # }
//! ```
//!
//! # Releasing
//!
//! - [`Lease::release`] releases and returns the [`ReleaseReceipt`]. Calling it again is fine: the
//!   second call asks core again and gets `released: false` (release by token is idempotent).
//! - Dropping a lease that was not released releases it, best effort. A drop cannot return an
//!   error, so a failed release is reported to the host's drop-error hook
//!   ([`Host::on_drop_error`]); the default hook prints
//!   `warning: projectfile: release of <token> on drop failed: <error>` on stderr. The lease then
//!   stays recorded and is cleaned as stale once its holder is gone.
//! - Dropping a lease after [`Lease::release`] succeeded does nothing.
//! - [`Lease::into_token`] disarms the guard and hands the token over (to another process, or to
//!   release later with [`Host::release`]).
//!
//! # Holders
//!
//! By default the lease is held by the calling process: if the host dies without releasing, the
//! next start in that workspace cleans up. Pass [`SessionBuilder::holder`] to tie the lease to the
//! CLI's own process or to a lock file instead (see [`Holder`]).

use projectfile_core::ProviderExt;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use projectfile_core::guidance::DeliveryVerdict;
use projectfile_core::holder::Holder;
use projectfile_core::projector::{
    AcquireReceipt, AcquireRequest, Projector, ReleaseReceipt, StatusReport, StripReport,
};
use projectfile_core::{
    Error, HooksInput, Namespace, Probes, Result, SessionRequest, SkillInput, VersionProbe,
};

/// Called with the token and the error when a dropped [`Lease`] could not be released.
pub type DropErrorHook = Arc<dyn Fn(&str, &Error) + Send + Sync>;

fn eprint_drop_error(token: &str, error: &Error) {
    // Best effort and never a panic: a drop hook must not fail on a closed stderr.
    let mut err = std::io::stderr().lock();
    let _ = std::io::Write::write_fmt(
        &mut err,
        format_args!("warning: projectfile: release of {token} on drop failed: {error}\n"),
    );
}

/// A host: where leases are recorded (the state directory), how our markers are named (the
/// namespace), and what happens when a dropped lease cannot be released. Cheap to clone.
#[derive(Clone)]
pub struct Host {
    projector: Projector,
    on_drop_error: DropErrorHook,
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Host")
            .field("state_dir", &self.projector.state_dir())
            .field("namespace", self.projector.namespace())
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A host keeping its records under `state_dir`, with the default namespace (`agentworks`).
    ///
    /// A relative `state_dir` is made absolute here, against the current directory, before
    /// anything is derived from it: paths under it (a private prompt file) are handed to commands
    /// that run in the workspace. Only if the current directory cannot be read is it kept as given.
    pub fn new(state_dir: impl Into<PathBuf>) -> Host {
        let state_dir = state_dir.into();
        let state_dir = std::path::absolute(&state_dir).unwrap_or(state_dir);
        Host {
            projector: Projector::new(state_dir, Namespace::default()),
            on_drop_error: Arc::new(eprint_drop_error),
        }
    }

    /// The same host marking its blocks with `namespace` (see [`Namespace::new`]).
    #[must_use]
    pub fn namespace(self, namespace: Namespace) -> Host {
        Host {
            projector: Projector::new(self.projector.state_dir(), namespace),
            on_drop_error: self.on_drop_error,
        }
    }

    /// The same host reporting failed releases of dropped leases to `hook` instead of stderr.
    #[must_use]
    pub fn on_drop_error(self, hook: impl Fn(&str, &Error) + Send + Sync + 'static) -> Host {
        Host {
            projector: self.projector,
            on_drop_error: Arc::new(hook),
        }
    }

    /// The projector underneath, for what this API does not wrap.
    pub fn projector(&self) -> &Projector {
        &self.projector
    }

    /// Starts a session: finds the provider in this build, cleans stale leftovers, projects, and
    /// returns the lease guard. Nothing is left half done when it fails.
    pub fn acquire(&self, session: SessionBuilder) -> Result<Lease> {
        let provider = crate::provider(&session.provider).ok_or_else(|| {
            let names: Vec<&str> = crate::providers().iter().map(|p| p.name()).collect();
            Error::Provider {
                provider: session.provider.clone(),
                reason: format!(
                    "no such provider in this build (available: {})",
                    names.join(", ")
                ),
            }
        })?;
        let holder = match session.holder {
            Some(holder) => holder,
            None => Holder::current_process()?,
        };
        let mut request = AcquireRequest::new(session.workspace, session.request, holder);
        request.probes = session.probes;
        request.binary_path = session.binary_path;
        request.require_delivery = session.require_delivery;
        let (receipt, folder) = self
            .projector
            .acquire_holding(provider.as_ref(), &request)?;
        Ok(Lease {
            folder,
            projector: self.projector.clone(),
            on_drop_error: Arc::clone(&self.on_drop_error),
            receipt,
            armed: true,
        })
    }

    /// Releases a lease by its token (one handed over with [`Lease::into_token`], or read from
    /// another process). Releasing an unknown or already released token is not an error.
    pub fn release(&self, token: &str) -> Result<ReleaseReceipt> {
        self.projector.release(token)
    }

    /// Leases, holders, liveness and leftovers of a workspace. Changes nothing.
    pub fn status(&self, workspace: &Path) -> Result<StatusReport> {
        self.projector.status(workspace)
    }

    /// Cleans leftovers whose holders are dead; never touches a live holder's projections.
    pub fn strip_stale(&self, workspace: &Path) -> Result<StripReport> {
        self.projector.strip_stale(workspace)
    }
}

/// What one session asks for: the provider, the workspace, the inputs and the holder.
#[derive(Clone, Debug)]
#[must_use = "a session request does nothing until passed to Host::acquire"]
pub struct SessionBuilder {
    provider: String,
    workspace: PathBuf,
    request: SessionRequest,
    holder: Option<Holder>,
    probes: Probes,
    binary_path: Option<PathBuf>,
    require_delivery: bool,
}

impl SessionBuilder {
    /// A session for `provider` (`codex`, `claude`, …) in `workspace`, with an empty prompt.
    pub fn new(provider: impl Into<String>, workspace: impl Into<PathBuf>) -> SessionBuilder {
        SessionBuilder {
            provider: provider.into(),
            workspace: workspace.into(),
            request: SessionRequest::default(),
            holder: None,
            probes: Probes::default(),
            binary_path: None,
            require_delivery: false,
        }
    }

    /// The session instructions.
    pub fn prompt(mut self, text: impl Into<String>) -> SessionBuilder {
        self.request.prompt = text.into();
        self
    }

    /// MCP servers, a JSON object keyed by server name. Refused by providers without `mcp`.
    pub fn mcp_servers(mut self, servers: serde_json::Value) -> SessionBuilder {
        self.request.mcp_servers = Some(servers);
        self
    }

    /// CLI configuration, a JSON object. Refused by providers without `cli_config`.
    pub fn cli_config(mut self, config: serde_json::Value) -> SessionBuilder {
        self.request.cli_config = Some(config);
        self
    }

    /// Hooks configuration and script, in the CLI's own format or the neutral one (the
    /// [`HooksInput::format`] says which; docs/session-definitions.md). Refused by providers
    /// without `hooks`.
    pub fn hooks(mut self, hooks: HooksInput) -> SessionBuilder {
        self.request.hooks = Some(hooks);
        self
    }

    /// A subagent to project under `name` (repeatable): neutral Markdown, front matter with a
    /// `description`, then its system prompt, converted to each CLI's form. Refused by providers
    /// whose CLI reads none.
    pub fn agent(mut self, name: impl Into<String>, content: impl Into<String>) -> SessionBuilder {
        self.request.agents.push(crate::core::NamedFile {
            name: name.into(),
            content: content.into(),
        });
        self
    }

    /// A command to project under `name` (repeatable), run as `/name`: neutral Markdown whose body
    /// is the prompt, `$ARGUMENTS` standing for what follows the command, converted to each
    /// CLI's form. Refused by providers whose CLI reads none.
    pub fn command(
        mut self,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> SessionBuilder {
        self.request.commands.push(crate::core::NamedFile {
            name: name.into(),
            content: content.into(),
        });
        self
    }

    /// A skill folder to project under `name` (repeatable). Refused by providers without `skills`.
    pub fn skill(mut self, name: impl Into<String>, source: impl Into<PathBuf>) -> SessionBuilder {
        self.request.skills.push(SkillInput {
            name: name.into(),
            source: source.into(),
        });
        self
    }

    /// What keeps the lease alive [default: the calling process].
    pub fn holder(mut self, holder: Holder) -> SessionBuilder {
        self.holder = Some(holder);
        self
    }

    /// The CLI's version, when the host knows it (skips probing `--version`).
    pub fn cli_version(mut self, version: impl Into<String>) -> SessionBuilder {
        self.probes.cli_version = VersionProbe::Known {
            version: version.into(),
            binary: None,
        };
        self
    }

    /// The CLI binary to probe, instead of looking it up on `PATH`.
    pub fn cli_binary(mut self, path: impl Into<PathBuf>) -> SessionBuilder {
        self.binary_path = Some(path.into());
        self
    }

    /// Sets a provider option (`prompt` → `replace` for claude); the provider's declared options
    /// and values are checked at acquire (an unknown one fails, kind `provider`).
    pub fn provider_option(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> SessionBuilder {
        self.request.options.insert(name.into(), value.into());
        self
    }

    /// Fail with everything undone ([`Error::Undelivered`], kind `undelivered`) when the session
    /// text would not reach the model ([`Lease::delivery`] would say not delivered). Off by
    /// default: the session starts and its delivery verdict says why.
    pub fn require_delivery(mut self, required: bool) -> SessionBuilder {
        self.require_delivery = required;
        self
    }
}

/// One session's hold on a workspace: its projections stay while the lease lives.
///
/// Release it with [`Lease::release`]; a lease dropped unreleased is released best effort, and a
/// failure is reported to the host's drop-error hook (see the [module docs](self)).
#[must_use = "dropping a Lease releases it at once; keep it for the life of the session"]
pub struct Lease {
    projector: Projector,
    /// The workspace folder, held open since the acquire: the release finds it wherever it was
    /// renamed or moved to meanwhile.
    folder: projectfile_core::workspace::Workspace,
    on_drop_error: DropErrorHook,
    receipt: AcquireReceipt,
    armed: bool,
}

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lease")
            .field("token", &self.receipt.token)
            .field("provider", &self.receipt.provider)
            .field("workspace", &self.receipt.workspace)
            .field("released", &!self.armed)
            .finish_non_exhaustive()
    }
}

impl Lease {
    /// The lease token.
    pub fn token(&self) -> &str {
        &self.receipt.token
    }

    /// What `acquire` did (schema `projectfile.acquire.v1`).
    pub fn receipt(&self) -> &AcquireReceipt {
        &self.receipt
    }

    /// The canonical workspace.
    pub fn workspace(&self) -> &Path {
        &self.receipt.workspace
    }

    /// Whether the session text reaches the model, and if not why (the receipt's `delivery`).
    /// Launch arguments the route needs are already in [`Lease::launch_args`].
    pub fn delivery(&self) -> &DeliveryVerdict {
        &self.receipt.delivery
    }

    /// Arguments to append to the CLI's command line.
    pub fn launch_args(&self) -> &[String] {
        &self.receipt.launch_args
    }

    /// Environment to set for the CLI.
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.receipt.env
    }

    /// `program args…` followed by the plan's launch arguments, with the plan's environment, to
    /// run in the workspace: the command `projectfile run` would start.
    pub fn command<I, S>(&self, program: impl AsRef<OsStr>, args: I) -> std::process::Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = std::process::Command::new(program);
        command
            .args(args)
            .args(&self.receipt.launch_args)
            .envs(&self.receipt.env)
            .current_dir(&self.receipt.workspace);
        command
    }

    /// Whether [`Lease::release`] has succeeded (a dropped lease is then left alone).
    pub fn is_released(&self) -> bool {
        !self.armed
    }

    /// Releases the lease. Calling it again is fine (`released: false` the second time). When it
    /// fails the lease stays armed: dropping it tries once more.
    pub fn release(&mut self) -> Result<ReleaseReceipt> {
        let receipt = self
            .projector
            .release_in(&self.receipt.token, &self.folder)?;
        self.armed = false;
        Ok(receipt)
    }

    /// Disarms the guard and returns the token: the lease lives on until released by token
    /// ([`Host::release`], `projectfile release`) or until its holder dies.
    pub fn into_token(mut self) -> String {
        self.armed = false;
        std::mem::take(&mut self.receipt.token)
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.armed = false;
        if let Err(error) = self.projector.release_in(&self.receipt.token, &self.folder) {
            (self.on_drop_error)(&self.receipt.token, &error);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Env {
        _dir: tempfile::TempDir,
        ws: PathBuf,
        state: PathBuf,
    }

    fn env() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        std::fs::create_dir(&ws).unwrap();
        Env {
            ws,
            state: base.join("state"),
            _dir: dir,
        }
    }

    /// A host whose drop errors are collected.
    fn host(env: &Env) -> (Host, Arc<Mutex<Vec<String>>>) {
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&errors);
        let host = Host::new(&env.state).on_drop_error(move |token, error| {
            sink.lock().unwrap().push(format!("{token}: {error}"));
        });
        (host, errors)
    }

    /// Makes any later release of `lease`'s workspace fail: its ledger names no workspace.
    fn break_ledger(env: &Env, lease_workspace: &Path) {
        let key = projectfile_core::testing::ledger::workspace_key(lease_workspace);
        let dir = env.state.join("workspaces").join(key);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(projectfile_core::testing::journal::JOURNAL_FILE),
            projectfile_core::testing::journal::frame(b"{}"),
        )
        .unwrap();
    }

    #[test]
    fn a_relative_state_dir_is_made_absolute_before_anything_is_derived() {
        let host = Host::new("relative-state");
        let expected = std::env::current_dir().unwrap().join("relative-state");
        assert!(
            format!("{host:?}").contains(&format!("{expected:?}")),
            "{host:?}"
        );
    }

    #[cfg(feature = "gemini")]
    #[test]
    fn a_host_hands_neutral_definitions_and_gets_the_clis_form() {
        let env = env();
        let (host, errors) = host(&env);
        let lease = host
            .acquire(
                SessionBuilder::new("gemini", &env.ws)
                    .prompt("be brief")
                    .command("ship", "---\ndescription: Ship\n---\nShip $ARGUMENTS.\n")
                    .hooks(HooksInput {
                        config: serde_json::json!({"hooks": {"stop": [{"command": "true"}]}}),
                        script: None,
                        format: crate::core::HooksFormat::Neutral,
                    }),
            )
            .unwrap();
        let command = std::fs::read_to_string(env.ws.join(".gemini/commands/ship.toml")).unwrap();
        assert!(command.contains("Ship {{args}}."), "{command}");
        let settings = std::fs::read_to_string(env.ws.join(".gemini/settings.json")).unwrap();
        assert!(settings.contains("AfterAgent"), "{settings}");
        // A subagent Gemini CLI reads only from its home: refused without a private one.
        let refused = host.acquire(
            SessionBuilder::new("gemini", &env.ws)
                .prompt("x")
                .agent("reviewer", "---\ndescription: Reviews\n---\nReview.\n"),
        );
        assert!(
            refused
                .unwrap_err()
                .to_string()
                .contains("--private-cli-home")
        );
        drop(lease);
        assert!(!env.ws.join(".gemini").exists());
        assert!(errors.lock().unwrap().is_empty());
    }

    #[cfg(feature = "codex")]
    #[test]
    fn drop_releases() {
        let env = env();
        let (host, errors) = host(&env);
        let lease = host
            .acquire(SessionBuilder::new("codex", &env.ws).prompt("be brief"))
            .unwrap();
        let agents = std::fs::read_to_string(env.ws.join("AGENTS.md")).unwrap();
        assert!(agents.contains("be brief"));
        let token = lease.token().to_string();
        drop(lease);
        assert!(!env.ws.join("AGENTS.md").exists(), "drop did not release");
        assert!(!host.release(&token).unwrap().released);
        assert!(errors.lock().unwrap().is_empty());
    }

    #[cfg(feature = "codex")]
    #[test]
    fn release_twice_is_fine_and_drop_after_release_does_nothing() {
        let env = env();
        let (host, errors) = host(&env);
        let mut lease = host
            .acquire(SessionBuilder::new("codex", &env.ws).prompt("x"))
            .unwrap();
        assert!(lease.release().unwrap().released);
        assert!(lease.is_released());
        assert!(!lease.release().unwrap().released, "second release");
        assert!(!env.ws.join("AGENTS.md").exists());
        // Any release attempted from here on would fail; dropping must not attempt one.
        let workspace = lease.workspace().to_path_buf();
        break_ledger(&env, &workspace);
        drop(lease);
        assert!(errors.lock().unwrap().is_empty(), "{:?}", errors.lock());
    }

    #[cfg(feature = "codex")]
    #[test]
    fn a_failed_release_on_drop_is_reported_to_the_hook() {
        let env = env();
        let (host, errors) = host(&env);
        let lease = host
            .acquire(SessionBuilder::new("codex", &env.ws).prompt("x"))
            .unwrap();
        let token = lease.token().to_string();
        let workspace = lease.workspace().to_path_buf();
        break_ledger(&env, &workspace);
        drop(lease);
        let errors = errors.lock().unwrap();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with(&token), "{errors:?}");
        assert!(errors[0].contains("ledger"), "{errors:?}");
    }

    #[cfg(feature = "codex")]
    #[test]
    fn a_failed_explicit_release_stays_armed() {
        let env = env();
        let (host, errors) = host(&env);
        let mut lease = host
            .acquire(SessionBuilder::new("codex", &env.ws).prompt("x"))
            .unwrap();
        let workspace = lease.workspace().to_path_buf();
        break_ledger(&env, &workspace);
        assert!(lease.release().is_err());
        assert!(!lease.is_released());
        drop(lease);
        assert_eq!(errors.lock().unwrap().len(), 1, "drop retried once");
    }

    #[cfg(feature = "codex")]
    #[test]
    fn into_token_hands_the_lease_over() {
        let env = env();
        let (host, errors) = host(&env);
        let lease = host
            .acquire(SessionBuilder::new("codex", &env.ws).prompt("handed over"))
            .unwrap();
        let token = lease.into_token();
        assert!(
            env.ws.join("AGENTS.md").exists(),
            "still held after into_token"
        );
        assert!(host.release(&token).unwrap().released);
        assert!(!env.ws.join("AGENTS.md").exists());
        assert!(errors.lock().unwrap().is_empty());
    }

    #[cfg(feature = "codex")]
    #[test]
    fn command_carries_the_plan() {
        let env = env();
        let (host, _) = host(&env);
        let mut lease = host
            .acquire(SessionBuilder::new("codex", &env.ws).prompt("from the plan"))
            .unwrap();
        let out = lease.command("cat", ["AGENTS.md"]).output().unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("from the plan"));
        lease.release().unwrap();
    }

    #[cfg(feature = "codex")]
    #[test]
    fn delivery_is_reported_and_can_be_required() {
        let env = env();
        let (host, _) = host(&env);
        let lease = host
            .acquire(SessionBuilder::new("codex", &env.ws).prompt("delivered"))
            .unwrap();
        assert!(lease.delivery().delivered, "{:?}", lease.delivery());
        drop(lease);
        // Codex's profile drops an AGENTS.md larger than a file is read: nothing can deliver
        // through it.
        let big = format!("# Rules\n{}", "x".repeat(4 * 1024 * 1024));
        std::fs::write(env.ws.join("AGENTS.md"), &big).unwrap();
        let lease = host
            .acquire(SessionBuilder::new("codex", &env.ws).prompt("lost"))
            .unwrap();
        assert!(!lease.delivery().delivered);
        drop(lease);
        let error = host
            .acquire(
                SessionBuilder::new("codex", &env.ws)
                    .prompt("lost")
                    .require_delivery(true),
            )
            .unwrap_err();
        assert_eq!(error.kind(), "undelivered", "{error}");
        assert_eq!(
            std::fs::read(env.ws.join("AGENTS.md")).unwrap(),
            big.as_bytes()
        );
        assert!(host.status(&env.ws).unwrap().leases.is_empty());
    }

    #[cfg(feature = "claude")]
    #[test]
    fn provider_options_choose_and_are_checked() {
        let env = env();
        let (host, _) = host(&env);
        let old = || {
            SessionBuilder::new("claude", &env.ws)
                .prompt("x")
                .cli_version("2.1.233")
        };
        let lease = host
            .acquire(old().provider_option("prompt", "replace"))
            .unwrap();
        assert_eq!(lease.launch_args()[0], "--system-prompt-file");
        drop(lease);
        let error = host
            .acquire(old().provider_option("prompt", "overwrite"))
            .unwrap_err();
        assert_eq!(error.kind(), "provider", "{error}");
        assert!(error.to_string().contains("append or replace"), "{error}");
    }

    #[test]
    fn unknown_providers_are_named() {
        let env = env();
        let (host, _) = host(&env);
        let error = host
            .acquire(SessionBuilder::new("no-such-cli", &env.ws).prompt("x"))
            .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("no-such-cli: no such provider in this build"),
            "{error}"
        );
    }

    #[cfg(feature = "codex")]
    #[test]
    fn namespace_names_the_markers() {
        let env = env();
        let (host, _) = host(&env);
        let host = host.namespace(Namespace::new("acme").unwrap());
        let lease = host
            .acquire(SessionBuilder::new("codex", &env.ws).prompt("x"))
            .unwrap();
        let agents = std::fs::read_to_string(env.ws.join("AGENTS.md")).unwrap();
        assert!(
            agents.contains("BEGIN acme-session-instructions"),
            "{agents}"
        );
        drop(lease);
    }
}
