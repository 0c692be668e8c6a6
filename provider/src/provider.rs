//! The provider contract: the [`Provider`] trait (and [`ProviderExt`], what every provider answers
//! from it), its flat [`Capabilities`], the [`SessionRequest`] a host hands in, the read-only
//! [`WorkspaceView`] and [`Probes`] a provider plans from, and the [`Namespace`] that names our
//! markers.
//!
//! A provider is data plus one pure function: a constant [`ProviderSpec`], and, given a
//! [`PlanContext`], the part of the [`Plan`] that varies with the session. It never reads the
//! world outside its context, and never writes, renames or removes anything; core applies the
//! plan.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use crate::discovery::DiscoveryProfile;
use crate::error::{Error, Result};
use crate::patterns;
pub use crate::plan::{EntryKind, Namespace};
use crate::plan::{Plan, RelPath};
pub use crate::spec::ProviderSpec;

/// What a provider supports. Flat booleans, so the conformance suite can pick its checks and a host
/// can refuse a request before planning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Capabilities {
    /// The session text is projected into a file the CLI reads (a block or an owned file).
    pub session_text_file: bool,
    /// The session text may instead travel as a launch argument (a private file).
    pub session_text_launch_arg: bool,
    /// Skills folders are projected.
    pub skills: bool,
    /// MCP server configuration is accepted.
    pub mcp: bool,
    /// Hooks configuration (and a hook script) is accepted.
    pub hooks: bool,
    /// CLI configuration is accepted.
    pub cli_config: bool,
    /// The plan may contain owned files.
    pub owned_files: bool,
    /// The plan may contain markers.
    pub markers: bool,
    /// `--mcp-mode replace` is honoured: the CLI gets only the session's MCP servers.
    #[serde(default)]
    pub mcp_replace: bool,
    /// Subagent definitions are projected into a folder the CLI reads.
    #[serde(default)]
    pub subagents: bool,
    /// Commands (slash commands) are projected into a folder the CLI reads.
    #[serde(default)]
    pub commands: bool,
    /// Subagent definitions are projected into the CLI's own home, which a session has only
    /// when it gives the CLI a private one (`run --private-cli-home`); refused otherwise.
    #[serde(default)]
    pub subagents_in_cli_home: bool,
    /// Commands are projected into the CLI's own home, as [`Capabilities::subagents_in_cli_home`].
    #[serde(default)]
    pub commands_in_cli_home: bool,
}

impl Capabilities {
    /// Nothing supported: where a [`ProviderSpec`] starts.
    pub const NONE: Capabilities = Capabilities {
        session_text_file: false,
        session_text_launch_arg: false,
        skills: false,
        mcp: false,
        hooks: false,
        cli_config: false,
        owned_files: false,
        markers: false,
        mcp_replace: false,
        subagents: false,
        commands: false,
        subagents_in_cli_home: false,
        commands_in_cli_home: false,
    };
}

/// A skill a session brings: a folder holding a `SKILL.md` and its files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillInput {
    /// The folder name the skill is projected under.
    pub name: String,
    /// The folder to copy from.
    pub source: PathBuf,
}

/// Hooks a session brings: the configuration and, optionally, the script it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HooksInput {
    /// The hooks configuration: in the CLI's own format, or neutral ([`HooksInput::format`]).
    pub config: serde_json::Value,
    /// The hook script's file name and content, if any.
    pub script: Option<HookScript>,
    /// Which format `config` is in.
    #[serde(default)]
    pub format: HooksFormat,
}

/// The format of a session's hooks configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HooksFormat {
    /// The CLI's own format, written as given (`--hooks-config`).
    #[default]
    Cli,
    /// The neutral format, converted to each CLI's events and file (`--hooks`; see
    /// [`crate::definitions`]).
    Neutral,
}

/// A hook script the hooks configuration refers to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookScript {
    /// File name (no directories).
    pub name: String,
    /// Script text.
    pub content: String,
}

/// How the session's MCP servers meet the ones the CLI already knows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpMode {
    /// The CLI keeps the project's (and user's) servers and gets the session's too; a name both
    /// define is refused.
    #[default]
    Merge,
    /// The CLI gets the session's servers alone (where it can: see each provider).
    Replace,
}

/// An input a session may bring, as a provider names it when it says why it refuses it
/// ([`ProviderSpec::refusing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    /// MCP servers (`--mcp-config`).
    McpServers,
    /// `--mcp-mode replace`.
    McpReplace,
    /// Hooks (`--hooks-config`).
    Hooks,
    /// CLI configuration (`--cli-config`).
    CliConfig,
    /// Skills (`--skill`).
    Skills,
    /// Subagents (`--agent`).
    Subagents,
    /// Commands (`--command`).
    Commands,
}

/// A file a session brings under a name (a subagent or a command): projected as `<name>.md`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedFile {
    /// The name, one plain file name without the `.md` extension.
    pub name: String,
    /// The file's text.
    pub content: String,
}

/// What one session hands in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRequest {
    /// The session instructions.
    pub prompt: String,
    /// MCP servers, as a JSON object keyed by server name.
    pub mcp_servers: Option<serde_json::Value>,
    /// Merge the session's MCP servers with the CLI's own (default) or give it only them.
    #[serde(default)]
    pub mcp_mode: McpMode,
    /// Subagent definitions.
    #[serde(default)]
    pub agents: Vec<NamedFile>,
    /// Commands (slash commands).
    #[serde(default)]
    pub commands: Vec<NamedFile>,
    /// Hooks configuration and script.
    pub hooks: Option<HooksInput>,
    /// CLI configuration, as a JSON object.
    pub cli_config: Option<serde_json::Value>,
    /// Skills to project.
    pub skills: Vec<SkillInput>,
    /// Provider options by name (`prompt` → `replace`), each one the provider declares
    /// ([`ProviderExt::options`]); checked by [`SessionRequest::check_options`] before planning.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub options: std::collections::BTreeMap<String, String>,
}

impl SessionRequest {
    /// A request carrying only a prompt.
    pub fn with_prompt(prompt: impl Into<String>) -> Self {
        SessionRequest {
            prompt: prompt.into(),
            ..SessionRequest::default()
        }
    }

    /// Refuses inputs the provider cannot take, naming each one, instead of dropping them silently.
    /// `why` gives the provider's reason for an input it refuses (see
    /// [`ProviderSpec::refusing`]); it is added to that input's name.
    pub fn check_supported(
        &self,
        provider: &str,
        caps: &Capabilities,
        why: &[(Input, &str)],
        cli_home: bool,
    ) -> Result<()> {
        let mut refused: Vec<String> = Vec::new();
        let mut refuse = |input: Input, name: &str| {
            refused.push(match why.iter().find(|(i, _)| *i == input) {
                Some((_, reason)) => format!("{name} ({reason})"),
                None => name.to_string(),
            });
        };
        if self.mcp_servers.is_some() && !caps.mcp {
            refuse(Input::McpServers, "MCP servers");
        }
        if self.hooks.is_some() && !caps.hooks {
            refuse(Input::Hooks, "hooks");
        }
        if self.cli_config.is_some() && !caps.cli_config {
            refuse(Input::CliConfig, "CLI configuration");
        }
        if !self.skills.is_empty() && !caps.skills {
            refuse(Input::Skills, "skills");
        }
        let home_only = |kinds: &str| {
            format!(
                "{kinds} ({provider} reads them only from its own home, and nothing is written into the user's: give the session a private one with `run --runtime-root … --private-cli-home`)"
            )
        };
        if !self.agents.is_empty() && !caps.subagents {
            match caps.subagents_in_cli_home {
                true if cli_home => {}
                true => refuse(Input::Subagents, &home_only("subagents")),
                false => refuse(Input::Subagents, "subagents"),
            }
        }
        if !self.commands.is_empty() && !caps.commands {
            match caps.commands_in_cli_home {
                true if cli_home => {}
                true => refuse(Input::Commands, &home_only("commands")),
                false => refuse(Input::Commands, "commands"),
            }
        }
        if self.mcp_servers.is_some()
            && caps.mcp
            && self.mcp_mode == McpMode::Replace
            && !caps.mcp_replace
        {
            let general = "its CLI cannot be limited to the session's MCP servers";
            let reason = why
                .iter()
                .find(|(i, _)| *i == Input::McpReplace)
                .map_or(general, |(_, reason)| reason);
            refused.push(format!("`--mcp-mode replace` ({reason})"));
        }
        if refused.is_empty() {
            Ok(())
        } else {
            Err(Error::Provider {
                provider: provider.to_string(),
                reason: format!(
                    "this provider cannot take {}; nothing was projected",
                    refused.join(", ")
                ),
            })
        }
    }
}

impl SessionRequest {
    /// Refuses an option `declared` does not name, or a value it does not list, naming what the
    /// provider takes instead of dropping it silently.
    pub fn check_options(&self, provider: &str, declared: &[ProviderOption]) -> Result<()> {
        for (name, value) in &self.options {
            let refuse = |reason: String| Error::Provider {
                provider: provider.to_string(),
                reason: format!("{reason}; nothing was projected"),
            };
            let Some(option) = declared.iter().find(|o| o.name == *name) else {
                let known: Vec<String> = declared.iter().map(ProviderOption::usage).collect();
                return Err(refuse(match known.is_empty() {
                    true => format!("no option `{name}`: this provider takes none"),
                    false => format!("no option `{name}` (it takes {})", known.join(", ")),
                }));
            };
            if !option.values.iter().any(|v| v == value) {
                return Err(refuse(format!(
                    "option `{name}` takes {}, not `{value}`",
                    option.values.join(" or ")
                )));
            }
        }
        Ok(())
    }

    /// The value of option `name` for this session: the one given, else `default`.
    pub fn option<'a>(&'a self, name: &str, default: &'a str) -> &'a str {
        self.options.get(name).map_or(default, String::as_str)
    }
}

/// An option a provider declares, typed by the values it takes (the host passes
/// `--provider-option <provider>.<name>=<value>`, or `SessionBuilder::provider_option`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProviderOption {
    /// The option's name, without the provider (`prompt`).
    pub name: String,
    /// Every value it takes.
    pub values: Vec<String>,
    /// The value when none is given (one of `values`).
    pub default: String,
    /// What it chooses, for `--help` and the providers receipt.
    pub help: String,
}

impl ProviderOption {
    /// `name=a|b`, as an error message lists it.
    pub fn usage(&self) -> String {
        format!("{}={}", self.name, self.values.join("|"))
    }
}

/// Read-only questions a provider may ask about the destination while planning.
pub trait WorkspaceView {
    /// What `path` is, without following symlinks.
    fn kind(&self, path: &RelPath) -> EntryKind;

    /// Whether `path` exists in any form.
    fn exists(&self, path: &RelPath) -> bool {
        self.kind(path) != EntryKind::Missing
    }

    /// Read-only look outside the root: for each directory strictly above the root, nearest
    /// first and up to and including `/`, the absolute paths of the entries among `names` that
    /// exist there in any form (file, directory, symlink, even a dangling one). `names` are
    /// relative paths such as `CLAUDE.md` or `.claude/CLAUDE.md`; anything that is not a valid
    /// [`RelPath`] is ignored. Nothing is opened for writing and nothing is followed but the
    /// directories on the way, exactly as the CLI itself would.
    ///
    /// Claude Code uses this: it skips `AGENTS.md` when a `CLAUDE.md` exists in the working
    /// directory *or any directory above it*, which a view confined to the root cannot see.
    fn found_above_root(&self, names: &[&str]) -> Vec<PathBuf>;
}

/// What core found out about the CLI binary, when the provider asked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum VersionProbe {
    /// The provider did not ask, or the host gave nothing and nothing was probed.
    #[default]
    NotProbed,
    /// The version the host passed, or `--version` printed.
    Known {
        version: String,
        binary: Option<PathBuf>,
    },
    /// The binary was found but its version could not be read.
    Unreadable { binary: PathBuf, reason: String },
    /// No binary was found.
    Missing { reason: String },
}

impl VersionProbe {
    /// The parsed version, when known and valid semver.
    pub fn semver(&self) -> Option<semver::Version> {
        match self {
            VersionProbe::Known { version, .. } => semver::Version::parse(version).ok(),
            _ => None,
        }
    }
}

/// What core probed for the provider before planning.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Probes {
    /// The CLI binary's version.
    pub cli_version: VersionProbe,
}

/// Which binary to probe and how, declared by a provider that needs its CLI's version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinarySpec {
    /// The binary's name on `PATH`.
    pub name: &'static str,
    /// The arguments that print its version.
    pub version_args: &'static [&'static str],
}

/// Everything a provider plans from.
pub struct PlanContext<'a> {
    /// The destination root (the workspace, or a private runtime), canonical.
    pub root: &'a Path,
    /// The namespace naming our markers.
    pub namespace: &'a Namespace,
    /// What the session hands in.
    pub request: &'a SessionRequest,
    /// What core probed.
    pub probes: &'a Probes,
    /// Read-only questions about the destination.
    pub view: &'a dyn WorkspaceView,
    /// The user's home directory as the CLI will see it, when known: the CLI's user files (its
    /// own memory file, say) live there and are not the project's. A provider never reads the
    /// environment itself; core fills this in.
    pub home: Option<&'a Path>,
    /// The CLI's private home, relative to the root, when the session gives it one (`run
    /// --runtime-root … --private-cli-home`): the folder the provider's home variable names
    /// ([`ProviderSpec::with_cli_home_env`]), where a plan may put what the CLI reads only from
    /// its home. `None` otherwise: nothing is ever written into the user's real home.
    pub cli_home: Option<&'a RelPath>,
}

/// The adapter for one CLI: a constant [`ProviderSpec`] and the plan of what varies with the
/// session. Everything else a host asks a provider ([`ProviderExt`]: its name, capabilities,
/// discovery profile, binary, the whole plan) follows from these two and cannot be answered
/// otherwise.
///
/// ```
/// use projectfile_provider::{
///     DiscoveryProfile, Plan, PlanContext, Provider, ProviderSpec, Result, patterns,
/// };
///
/// fn discovery() -> DiscoveryProfile {
///     DiscoveryProfile {
///         per_directory: vec![patterns::AGENTS_MD.into()],
///         ..DiscoveryProfile::default()
///     }
/// }
///
/// pub const SPEC: ProviderSpec = ProviderSpec::new("my-cli", discovery)
///     .session_text_in_file()
///     .skills_in(".agents/skills");
///
/// pub struct MyCli;
///
/// impl Provider for MyCli {
///     fn spec(&self) -> &'static ProviderSpec {
///         &SPEC
///     }
///
///     fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
///         patterns::agents_md_block(ctx, &[])
///     }
/// }
/// ```
pub trait Provider: Send + Sync {
    /// What the provider is, as data.
    fn spec(&self) -> &'static ProviderSpec;

    /// Where the session text and the session's own files go for one session: everything but
    /// the skills, which the spec's skills folder places ([`ProviderExt::plan`] adds them). Pure:
    /// reads only `ctx`.
    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan>;

    /// How the CLI core probed discovers instruction files, for a CLI whose discovery changed
    /// between versions (Claude Code reads `AGENTS.md` only from some version on). Default: the
    /// spec's profile.
    fn discovery_for(&self, probes: &Probes) -> DiscoveryProfile {
        let _ = probes;
        self.spec().discovery()
    }
}

/// What every [`Provider`] answers, derived from its spec and its session plan. Implemented for
/// every provider and for nothing else (no provider can answer differently from its spec).
pub trait ProviderExt: Provider {
    /// The provider's name (`codex`, `claude`, …), as used on the command line.
    fn name(&self) -> &'static str {
        self.spec().name()
    }

    /// What this provider supports.
    fn capabilities(&self) -> Capabilities {
        self.spec().capabilities()
    }

    /// How this provider's CLI discovers instruction files (its newest known behaviour).
    fn discovery(&self) -> DiscoveryProfile {
        self.spec().discovery()
    }

    /// The binary to probe for its version before planning, if the plan depends on it.
    fn binary(&self) -> Option<BinarySpec> {
        self.spec().binary()
    }

    /// The environment variable that moves the CLI's home or configuration folder, when the CLI
    /// has one (see [`ProviderSpec::with_cli_home_env`]).
    fn cli_home_env(&self) -> Option<&'static str> {
        self.spec().cli_home_env()
    }

    /// The options a host may set for a session (typed by their values; see
    /// [`ProviderSpec::with_options`]); core refuses any other option, or value, before planning.
    fn options(&self) -> Vec<ProviderOption> {
        self.spec().options()
    }

    /// The plan for one session: inputs the provider cannot take refused, naming each; the
    /// [session plan](Provider::session_plan); the session's skills in the spec's skills folder.
    fn plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {
        let spec = self.spec();
        ctx.request.check_supported(
            spec.name(),
            &spec.capabilities(),
            spec.refusals(),
            ctx.cli_home.is_some(),
        )?;
        let mut plan = self.session_plan(ctx)?;
        if !plan.skills.is_empty() {
            return Err(Error::Provider {
                provider: spec.name().to_string(),
                reason: "the session plan names skills itself; skills go to the folder the spec names (`ProviderSpec::skills_in`)".to_string(),
            });
        }
        if let Some(dir) = spec.skills_dir() {
            plan.skills = patterns::skills(ctx, dir)?;
        }
        Ok(plan)
    }
}

impl<P: Provider + ?Sized> ProviderExt for P {}
