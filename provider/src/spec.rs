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
use crate::provider::{BinarySpec, Capabilities, Input, ProviderOption};

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
    options: fn() -> Vec<ProviderOption>,
    refusals: &'static [(Input, &'static str)],
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
            options: Vec::new,
            refusals: &[],
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

    /// `--mcp-mode replace` is honoured: the CLI can be given the session's MCP servers alone.
    pub const fn replaces_mcp(mut self) -> Self {
        self.capabilities.mcp_replace = true;
        self
    }

    /// The provider projects subagent definitions into a folder its CLI reads.
    pub const fn takes_subagents(mut self) -> Self {
        self.capabilities.subagents = true;
        self
    }

    /// The provider projects commands (slash commands) into a folder its CLI reads.
    pub const fn takes_commands(mut self) -> Self {
        self.capabilities.commands = true;
        self
    }

    /// The provider projects subagent definitions into its CLI's private home, when the session
    /// gives the CLI one (`run --private-cli-home`; [`PlanContext::cli_home`](crate::PlanContext)),
    /// and refuses them, naming that way, otherwise.
    pub const fn takes_subagents_in_cli_home(mut self) -> Self {
        self.capabilities.subagents_in_cli_home = true;
        self
    }

    /// The provider projects commands into its CLI's private home, as
    /// [`ProviderSpec::takes_subagents_in_cli_home`].
    pub const fn takes_commands_in_cli_home(mut self) -> Self {
        self.capabilities.commands_in_cli_home = true;
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

    /// The options a host may set for a session (`--provider-option NAME.OPTION=VALUE`), typed
    /// by the values each takes, as `options` returns them; core refuses any other option or
    /// value before planning, and the plan reads the chosen one with `SessionRequest::option`.
    pub const fn with_options(mut self, options: fn() -> Vec<ProviderOption>) -> Self {
        self.options = options;
        self
    }

    /// Why the provider refuses inputs its CLI has but cannot take from a session (Gemini CLI's
    /// project agents reach the model only once the user acknowledged them in the CLI's own
    /// home): each refusal of such an input names the reason. An input the spec takes is never
    /// refused, whatever is listed here.
    pub const fn refusing(mut self, refusals: &'static [(Input, &'static str)]) -> Self {
        self.refusals = refusals;
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

    /// The reasons given for refused inputs (none unless [`ProviderSpec::refusing`]).
    pub const fn refusals(&self) -> &'static [(Input, &'static str)] {
        self.refusals
    }

    /// The options a host may set for a session (none unless [`ProviderSpec::with_options`]).
    pub fn options(&self) -> Vec<ProviderOption> {
        (self.options)()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::patterns::tests::Empty;
    use crate::plan::{Plan, RelPath, SkillProjection};
    use crate::provider::{
        Namespace, PlanContext, Probes, Provider, ProviderExt, SessionRequest, SkillInput,
    };
    use std::path::{Path, PathBuf};

    const WITH_SKILLS: ProviderSpec = ProviderSpec::new("with-skills", DiscoveryProfile::default)
        .session_text_in_file()
        .skills_in(".x/skills");
    const WITHOUT: ProviderSpec =
        ProviderSpec::new("without", DiscoveryProfile::default).session_text_in_file();

    /// Plans the AGENTS.md block, and (when `sneaks_skills`) puts skills in its session plan.
    struct Subject {
        spec: &'static ProviderSpec,
        sneaks_skills: bool,
    }

    impl Provider for Subject {
        fn spec(&self) -> &'static ProviderSpec {
            self.spec
        }
        fn session_plan(&self, ctx: &PlanContext<'_>) -> crate::Result<Plan> {
            let mut plan = crate::patterns::agents_md_block(ctx, &[])?;
            if self.sneaks_skills {
                plan.skills = crate::patterns::skills(ctx, ".elsewhere")?;
            }
            Ok(plan)
        }
    }

    fn plan(subject: &Subject, request: &SessionRequest) -> crate::Result<Plan> {
        subject.plan(&PlanContext {
            root: Path::new("/ws"),
            namespace: &Namespace::default(),
            request,
            probes: &Probes::default(),
            view: &Empty,
            home: None,
            cli_home: None,
        })
    }

    fn with_skill() -> SessionRequest {
        SessionRequest {
            skills: vec![SkillInput {
                name: "review".into(),
                source: PathBuf::from("/src/review"),
            }],
            ..SessionRequest::with_prompt("p")
        }
    }

    #[test]
    fn capabilities_follow_from_the_setters() {
        assert_eq!(
            Capabilities {
                session_text_file: true,
                skills: true,
                ..Capabilities::NONE
            },
            WITH_SKILLS.capabilities()
        );
        assert_eq!(WITHOUT.skills_dir(), None);
        assert!(!WITHOUT.capabilities().skills);
        const ALL: ProviderSpec = ProviderSpec::new("all", DiscoveryProfile::default)
            .session_text_as_launch_arg()
            .takes_mcp()
            .takes_hooks()
            .takes_cli_config()
            .writes_owned_files()
            .creates_markers()
            .probes_binary(BinarySpec {
                name: "all",
                version_args: &["-V"],
            })
            .with_cli_home_env("ALL_HOME")
            .with_options(|| {
                vec![ProviderOption {
                    name: "mode".into(),
                    values: vec!["a".into(), "b".into()],
                    default: "a".into(),
                    help: "which".into(),
                }]
            });
        assert_eq!(ALL.options()[0].usage(), "mode=a|b");
        assert!(WITHOUT.options().is_empty());
        let caps = ALL.capabilities();
        assert!(caps.session_text_launch_arg && caps.mcp && caps.hooks && caps.cli_config);
        assert!(caps.owned_files && caps.markers);
        assert!(!caps.session_text_file && !caps.skills);
        assert_eq!(ALL.binary().map(|b| b.name), Some("all"));
        assert_eq!(ALL.cli_home_env(), Some("ALL_HOME"));
        assert_eq!(ALL.name(), "all");
    }

    #[test]
    fn a_refusal_names_the_providers_reason() {
        const REFUSING: ProviderSpec = ProviderSpec::new("refusing", DiscoveryProfile::default)
            .session_text_in_file()
            .refusing(&[(
                Input::Subagents,
                "its CLI reads them only once acknowledged",
            )]);
        let subject = Subject {
            spec: &REFUSING,
            sneaks_skills: false,
        };
        let request = SessionRequest {
            agents: vec![crate::provider::NamedFile {
                name: "a".into(),
                content: "x".into(),
            }],
            commands: vec![crate::provider::NamedFile {
                name: "c".into(),
                content: "x".into(),
            }],
            ..SessionRequest::with_prompt("p")
        };
        let text = plan(&subject, &request).unwrap_err().to_string();
        assert!(
            text.contains("subagents (its CLI reads them only once acknowledged)"),
            "{text}"
        );
        assert!(text.contains(", commands;"), "{text}");
        assert_eq!(REFUSING.refusals().len(), 1);
        assert!(WITHOUT.refusals().is_empty());
    }

    #[test]
    fn the_spec_folder_gets_the_session_skills() {
        let subject = Subject {
            spec: &WITH_SKILLS,
            sneaks_skills: false,
        };
        let plan = plan(&subject, &with_skill()).unwrap();
        assert_eq!(
            plan.skills,
            vec![SkillProjection {
                skills_dir: RelPath::new(".x/skills").unwrap(),
                name: "review".into(),
                source: PathBuf::from("/src/review"),
            }]
        );
        assert_eq!(plan.blocks.len(), 1, "the session plan is kept");
    }

    #[test]
    fn skills_without_a_folder_are_refused_naming_the_provider() {
        let subject = Subject {
            spec: &WITHOUT,
            sneaks_skills: false,
        };
        let error = plan(&subject, &with_skill()).unwrap_err();
        assert!(matches!(error, Error::Provider { .. }), "{error}");
        let text = error.to_string();
        assert!(
            text.starts_with("without") && text.contains("skills"),
            "{text}"
        );
    }

    #[test]
    fn a_session_plan_cannot_place_skills_itself() {
        let subject = Subject {
            spec: &WITH_SKILLS,
            sneaks_skills: true,
        };
        let error = plan(&subject, &with_skill()).unwrap_err();
        assert!(matches!(error, Error::Provider { .. }), "{error}");
        assert!(error.to_string().contains("skills_in"), "{error}");
    }
}
