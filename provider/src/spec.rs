//! A provider as data: the constant [`ProviderSpec`] that says everything about a CLI that does
//! not depend on the session (its name, what it takes, how it finds instruction files, where it
//! reads skills, which binary to probe, which variable moves its home).
//!
//! A spec is built in a `const` by chained calls, so each fact is written once and what follows
//! from it follows by construction: a provider with a skills folder takes skills
//! ([`Capabilities::skills`]) and gets them planned there ([`crate::patterns::skills`]), and one
//! without cannot claim to.
//!
//! ```
//! use projectfile_provider::{DiscoveryProfile, ProviderSpec, patterns};
//!
//! fn discovery() -> DiscoveryProfile {
//!     DiscoveryProfile {
//!         per_directory: vec![patterns::AGENTS_MD.into()],
//!         ..DiscoveryProfile::default()
//!     }
//! }
//!
//! pub const SPEC: ProviderSpec = ProviderSpec::new("my-cli", discovery)
//!     .session_text_in_file()
//!     .skills_in(".agents/skills")
//!     .with_cli_home_env("MY_CLI_HOME");
//!
//! assert!(SPEC.capabilities().skills);
//! assert_eq!(SPEC.skills_dir(), Some(".agents/skills"));
//! ```

use crate::discovery::DiscoveryProfile;
use crate::provider::{BinarySpec, Capabilities};

/// Everything about a provider that does not depend on the session. Build it with
/// [`ProviderSpec::new`] and the chained setters, in a `const`.
#[derive(Clone, Copy, Debug)]
pub struct ProviderSpec {
    name: &'static str,
    capabilities: Capabilities,
    discovery: fn() -> DiscoveryProfile,
    skills_dir: Option<&'static str>,
    binary: Option<BinarySpec>,
    cli_home_env: Option<&'static str>,
}

impl ProviderSpec {
    /// A provider named `name` (as on the command line: `codex`, `claude`, …) whose CLI
    /// discovers instruction files as `discovery` returns (its newest known behaviour), taking
    /// nothing yet.
    pub const fn new(name: &'static str, discovery: fn() -> DiscoveryProfile) -> Self {
        ProviderSpec {
            name,
            capabilities: Capabilities::NONE,
            discovery,
            skills_dir: None,
            binary: None,
            cli_home_env: None,
        }
    }

    /// The session text is projected into a file the CLI reads (a block or an owned file).
    pub const fn session_text_in_file(mut self) -> Self {
        self.capabilities.session_text_file = true;
        self
    }

    /// The session text may travel as a launch argument (a private file).
    pub const fn session_text_as_launch_arg(mut self) -> Self {
        self.capabilities.session_text_launch_arg = true;
        self
    }

    /// The CLI reads project skills from `dir` (relative to the destination root): the provider
    /// takes skills, and every plan projects the session's skills there.
    pub const fn skills_in(mut self, dir: &'static str) -> Self {
        self.capabilities.skills = true;
        self.skills_dir = Some(dir);
        self
    }

    /// The provider takes MCP server configuration.
    pub const fn takes_mcp(mut self) -> Self {
        self.capabilities.mcp = true;
        self
    }

    /// The provider takes hooks configuration (and a hook script).
    pub const fn takes_hooks(mut self) -> Self {
        self.capabilities.hooks = true;
        self
    }

    /// The provider takes CLI configuration.
    pub const fn takes_cli_config(mut self) -> Self {
        self.capabilities.cli_config = true;
        self
    }

    /// Its plans may contain owned files.
    pub const fn writes_owned_files(mut self) -> Self {
        self.capabilities.owned_files = true;
        self
    }

    /// Its plans may contain markers.
    pub const fn creates_markers(mut self) -> Self {
        self.capabilities.markers = true;
        self
    }

    /// Core probes this binary's version before planning (the plan depends on it).
    pub const fn probes_binary(mut self, binary: BinarySpec) -> Self {
        self.binary = Some(binary);
        self
    }

    /// The environment variable that moves the CLI's home or configuration folder (its
    /// settings, login and native sessions): a linked runtime can then give the CLI a private
    /// home (`run --private-cli-home`). Without it, that is refused.
    pub const fn with_cli_home_env(mut self, var: &'static str) -> Self {
        self.cli_home_env = Some(var);
        self
    }

    /// The provider's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// What the provider takes.
    pub const fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    /// How the CLI discovers instruction files (its newest known behaviour).
    pub fn discovery(&self) -> DiscoveryProfile {
        (self.discovery)()
    }

    /// Where the CLI reads project skills, if it reads any.
    pub const fn skills_dir(&self) -> Option<&'static str> {
        self.skills_dir
    }

    /// The binary core probes before planning, if any.
    pub const fn binary(&self) -> Option<BinarySpec> {
        self.binary
    }

    /// The variable that moves the CLI's home, if it has one.
    pub const fn cli_home_env(&self) -> Option<&'static str> {
        self.cli_home_env
    }
}
