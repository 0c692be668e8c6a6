//! The shared conformance suite: checks that take a provider (a [`Subject`]) and run on the real
//! file system, each proving one promise of docs/promises.md for that provider.
//!
//! - [`fixture`]: the temporary workspace, state directory and projector every check runs in,
//!   and the assertions several promises share.
//! - [`checks`]: one file per promise, and the registry ([`checks::CHECKS`]) saying what each
//!   check needs: nothing, a capability of the provider's spec, or something its plan holds.
//! - [`harness`]: the test harness that runs, for a provider, exactly the checks that apply and
//!   lists the others with the reason, plus `facts_are_recorded` ([`facts`]) for its docs page.
//! - [`fixtures`]: the standard fixture workspaces and the snapshot helper providers use with
//!   insta; [`crash`]: the crash-point enumeration; [`tree`]: byte-exact tree pictures.
//!
//! Checks that exercise owned files use [`Subject::full_session`]: the prompt plus every input the
//! capabilities accept (MCP servers, hooks with a script, CLI configuration), so every owned file a
//! provider can write is covered.
//!
//! A provider runs the whole suite from a test target of its own with `harness = false`
//! (`tests/suite.rs`):
//!
//! ```text
//! projectfile_conformance::conformance_suite!(projectfile_codex::Codex);
//! ```
//!
//! which runs one test per check that applies, so a failure names the promise it broke.
//! Differences between providers (a probed CLI version, say) are passed in the [`Subject`], not
//! hidden: the macro also takes named subjects (Claude runs the suite once as a binary that reads
//! AGENTS.md and once as one that does not):
//!
//! ```text
//! projectfile_conformance::conformance_suite! {
//!     reads_agents_md => Subject::new(Claude).with_probes(known("2.1.284")),
//!     old_binary => Subject::new(Claude).with_probes(known("2.1.233")),
//! }
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The suite plays the user: it writes fixture files directly, outside the projector.
#![allow(clippy::disallowed_methods)]

pub mod checks;
pub mod crash;
pub mod facts;
pub mod fixture;
pub mod fixtures;
pub mod harness;
pub mod tree;

use projectfile_provider::{
    Capabilities, HookScript, HooksInput, NamedFile, Probes, Provider, ProviderExt, SessionRequest,
};
use std::path::PathBuf;

/// The delivery checks' workspace shapes and verdicts, for a provider's own tests.
pub use checks::delivery;
pub use checks::malformed_markers::MALFORMED;
pub use checks::skill_folders::{skill_session, skill_source};
pub use checks::user_bytes::TRICKY_CONTENTS;
pub use fixture::{
    Fixture, HolderProcess, as_written, assert_session_text_visible, environment_file,
    state_leftovers,
};
/// The engine the suite drives, for a provider's own tests (a provider crate depends on the
/// contract alone, so its tests reach core through here).
pub use projectfile_core as core;
pub use tree::Tree;

/// The provider under test and the parameters that make its plan what the check needs.
pub struct Subject {
    /// The provider.
    pub provider: Box<dyn Provider>,
    /// Probes to hand in (e.g. a CLI version), so no real binary is needed.
    pub probes: Probes,
    /// The CLI binary core probes when `probes` leave the version `NotProbed`.
    pub binary_path: Option<PathBuf>,
    /// The command a session brings, when the suite's Markdown one does not fit the CLI.
    pub command: Option<NamedFile>,
}

impl Subject {
    /// A subject with default probes.
    pub fn new(provider: impl Provider + 'static) -> Subject {
        Subject {
            provider: Box::new(provider),
            probes: Probes::default(),
            binary_path: None,
            command: None,
        }
    }

    /// The same subject bringing `command` in its sessions instead of the suite's Markdown one
    /// ([`checks::session_inputs::session_command`]), for a CLI that reads commands in another
    /// format (Gemini CLI: TOML only).
    pub fn with_command(mut self, command: NamedFile) -> Subject {
        self.command = Some(command);
        self
    }

    /// The command this subject's sessions bring.
    pub fn command(&self) -> NamedFile {
        self.command
            .clone()
            .unwrap_or_else(checks::session_inputs::session_command)
    }

    /// The same subject with the given probes.
    pub fn with_probes(mut self, probes: Probes) -> Subject {
        self.probes = probes;
        self
    }

    /// The same subject probing this binary (core runs it with the provider's version arguments).
    pub fn with_binary(mut self, path: impl Into<PathBuf>) -> Subject {
        self.binary_path = Some(path.into());
        self
    }

    /// The provider's name.
    pub fn name(&self) -> &'static str {
        self.provider.name()
    }

    /// A request carrying the prompt and every other input the provider's capabilities accept
    /// (MCP servers, hooks with a script, CLI configuration; skills have checks of their own), so checks
    /// exercise every projection the provider can make.
    pub fn full_session(&self, prompt: &str) -> SessionRequest {
        self.session_for(&self.provider.capabilities(), prompt)
    }

    /// [`full_session`] for `caps` (which may claim more than the provider takes), with this
    /// subject's command.
    pub fn session_for(&self, caps: &Capabilities, prompt: &str) -> SessionRequest {
        let mut session = full_session(caps, prompt);
        if caps.commands {
            session.commands = vec![self.command()];
        }
        session
    }
}

/// The hook script name [`full_session`] brings.
pub const HOOK_SCRIPT_NAME: &str = "guard.sh";

/// A request with `prompt` and every input `caps` accepts except skills (MCP servers, hooks with
/// a script, CLI configuration, a subagent, a command).
pub fn full_session(caps: &Capabilities, prompt: &str) -> SessionRequest {
    let mut session = SessionRequest::with_prompt(prompt);
    if caps.mcp {
        session.mcp_servers = Some(serde_json::json!({
            "docs": {"command": "docs-server", "args": ["--stdio"], "env": {"LEVEL": "1"}},
            "remote": {"url": "https://mcp.example.invalid/sse"}
        }));
    }
    if caps.hooks {
        session.hooks = Some(HooksInput {
            config: serde_json::json!({
                "version": 1,
                "hooks": {"beforeShellExecution": [{"command": "guard.sh"}]}
            }),
            script: Some(HookScript {
                name: HOOK_SCRIPT_NAME.to_string(),
                content: "#!/bin/sh\necho '{\"permission\": \"allow\"}'\n".to_string(),
            }),
            format: Default::default(),
        });
    }
    if caps.cli_config {
        session.cli_config = Some(serde_json::json!({
            "version": 1,
            "permissions": {"allow": ["Shell(ls)"], "deny": []}
        }));
    }
    checks::session_inputs::add_named_files(caps, &mut session);
    session
}

/// The `main` of a provider's suite (a test target with `harness = false`): runs every check
/// of [`checks::CHECKS`] that applies to each subject, lists the others with the reason, and
/// checks that the provider's `src/lib.rs` records its facts (`facts_are_recorded`).
///
/// `conformance_suite!(Provider)` runs one subject with default probes; named subjects,
/// `name => subject, …`, run the suite once per subject, each test named `name::check`.
#[macro_export]
macro_rules! conformance_suite {
    ($provider:expr) => {
        $crate::conformance_suite! { "" => $crate::Subject::new($provider) }
    };
    ($($group:ident => $subject:expr),+ $(,)?) => {
        $crate::conformance_suite! { $(stringify!($group) => $subject),+ }
    };
    ($($group:expr => $subject:expr),+ $(,)?) => {
        fn main() -> ::std::process::ExitCode {
            $crate::harness::run(
                vec![$(($group, $subject)),+],
                Some(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs"))),
            )
        }
    };
}
