//! The two command lines a host runs for every session, `acquire` and `release`, read without
//! clap: even building only the named subcommand (see the parent module) was a third of the
//! instructions of an `acquire` process and most of its allocations, and it touched clap's code,
//! pages the rest of the command never needs. [`parse`] takes a deliberately narrow set of
//! command lines: every option spelled out in full (`--name VALUE` or `--name=VALUE`), each at
//! most once, every value non-empty, UTF-8 and not starting with `-`. Anything else (help,
//! `--version`, `--`, a short option other than `-v`, an unknown or repeated option, a value clap
//! would refuse, another subcommand) returns `None`, and the parent module's clap parsers have the
//! last word, printing what they always printed. Whatever this accepts means exactly what it
//! means to the full [`Cli`] (property tests in the parent module compare the two).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use crate::cli::{AcquireArgs, Cli, Command, GlobalArgs, ReleaseArgs, SessionArgs};

/// The environment variables clap reads for the global options (see [`GlobalArgs`]).
const STATE_DIR_ENV: &str = "PROJECTFILE_STATE_DIR";
const NAMESPACE_ENV: &str = "PROJECTFILE_NAMESPACE";
/// [`GlobalArgs`]' defaults, as its clap attributes give them.
const DEFAULT_NAMESPACE: &str = "agentworks";
const DEFAULT_WAIT_SECS: u64 = 30;
/// `--mcp-mode`'s default and the values it takes.
const DEFAULT_MCP_MODE: &str = "merge";
const MCP_MODES: [&str; 2] = ["merge", "replace"];

/// `args` (program name first) as the full [`Cli`] reads them, with `env` standing for the
/// process environment; `None` for any command line outside the narrow set the module docs name.
pub(super) fn parse(args: &[OsString], env: &dyn Fn(&str) -> Option<OsString>) -> Option<Cli> {
    let mut global = Globals::default();
    let mut command: Option<Session> = None;
    let mut tokens = args.iter().skip(1);
    while let Some(token) = tokens.next() {
        let token = token.to_str()?;
        if !token.starts_with('-') {
            if command.is_some() {
                return None;
            }
            command = Some(Session::named(token)?);
            continue;
        }
        let mut option = Given::of(token, &mut tokens);
        if global.take(&mut option)? {
            continue;
        }
        match command.as_mut()? {
            Session::Acquire(acquire) => acquire.take(&mut option)?,
            Session::Release(token) => {
                (option.name == "--token").then_some(())?;
                set(token, option.value()?.to_owned())?;
            }
        }
    }
    let global = global.finish(env)?;
    let command = match command? {
        Session::Acquire(acquire) => Command::Acquire(Box::new(acquire.finish()?)),
        Session::Release(token) => Command::Release(ReleaseArgs {
            token: token?,
            workspace: None,
        }),
    };
    Some(Cli { global, command })
}

/// The subcommand named, with what its options gave so far.
enum Session {
    Acquire(Box<Acquire>),
    Release(Option<String>),
}

impl Session {
    fn named(name: &str) -> Option<Session> {
        match name {
            "acquire" => Some(Session::Acquire(Box::default())),
            "release" => Some(Session::Release(None)),
            _ => None,
        }
    }
}

/// One option token: its `--name`, and its value when written inline (`--name=VALUE`); a value
/// given as the next token is taken from `rest` only when the option takes one.
struct Given<'a, 'r> {
    name: &'a str,
    inline: Option<&'a str>,
    rest: &'r mut dyn Iterator<Item = &'a OsString>,
}

impl<'a, 'r> Given<'a, 'r> {
    fn of(token: &'a str, rest: &'r mut dyn Iterator<Item = &'a OsString>) -> Given<'a, 'r> {
        let (name, inline) = match token.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (token, None),
        };
        Given { name, inline, rest }
    }

    /// The option's value: inline or the next token; `None` (clap's call) when missing, empty,
    /// not UTF-8 or starting with `-`.
    fn value(&mut self) -> Option<&'a str> {
        let value = match self.inline.take() {
            Some(value) => value,
            None => self.rest.next()?.to_str()?,
        };
        (!value.is_empty() && !value.starts_with('-')).then_some(value)
    }

    /// A flag: no inline value (`--json=1` is clap's to refuse).
    fn flag(&self) -> Option<bool> {
        self.inline.is_none().then_some(true)
    }
}

/// Sets `slot` once; a second time is `None` (clap refuses a repeated option).
fn set<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    match slot {
        Some(_) => None,
        None => {
            *slot = Some(value);
            Some(())
        }
    }
}

/// Adds one value of a repeatable option.
fn push(values: &mut Vec<String>, value: &str) -> Option<()> {
    values.push(value.to_owned());
    Some(())
}

/// Sets a flag once.
fn raise(flag: &mut bool, option: &Given) -> Option<()> {
    option.flag()?;
    (!*flag).then_some(())?;
    *flag = true;
    Some(())
}

/// A number clap's integer parser reads the same: ASCII digits only.
fn number<T: std::str::FromStr>(text: &str) -> Option<T> {
    text.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| text.parse().ok())?
}

/// The global options as given.
#[derive(Default)]
struct Globals {
    state_dir: Option<PathBuf>,
    namespace: Option<String>,
    json: bool,
    verbose: bool,
    wait: Option<u64>,
}

impl Globals {
    /// Takes `option` when it is a global one: `Some(true)` taken, `Some(false)` not global,
    /// `None` refused.
    fn take(&mut self, option: &mut Given) -> Option<bool> {
        match option.name {
            "--state-dir" => set(&mut self.state_dir, option.value()?.into())?,
            "--namespace" => set(&mut self.namespace, option.value()?.to_owned())?,
            "--json" => raise(&mut self.json, option)?,
            "-v" | "--verbose" => raise(&mut self.verbose, option)?,
            "--wait" => set(&mut self.wait, number(option.value()?)?)?,
            _ => return Some(false),
        }
        Some(true)
    }

    /// The options with clap's environment variables and defaults filled in. An environment
    /// value clap might refuse (empty, or not UTF-8 where a string is wanted) is `None`.
    fn finish(self, env: &dyn Fn(&str) -> Option<OsString>) -> Option<GlobalArgs> {
        let state_dir = match self.state_dir {
            Some(dir) => Some(dir),
            None => match env(STATE_DIR_ENV) {
                Some(value) => Some(non_empty(value)?.into()),
                None => None,
            },
        };
        let namespace = match self.namespace {
            Some(namespace) => namespace,
            None => match env(NAMESPACE_ENV) {
                Some(value) => non_empty(value)?.into_string().ok()?,
                None => DEFAULT_NAMESPACE.to_owned(),
            },
        };
        Some(GlobalArgs {
            state_dir,
            namespace,
            json: self.json,
            verbose: self.verbose,
            wait: self.wait.unwrap_or(DEFAULT_WAIT_SECS),
        })
    }
}

fn non_empty(value: OsString) -> Option<OsString> {
    (!OsStr::is_empty(&value)).then_some(value)
}

/// `acquire`'s options as given.
#[derive(Default)]
struct Acquire {
    provider: Option<String>,
    workspace: Option<PathBuf>,
    prompt: Option<String>,
    prompt_file: Option<PathBuf>,
    mcp_config: Option<PathBuf>,
    mcp_mode: Option<String>,
    agents: Vec<String>,
    commands: Vec<String>,
    hooks_config: Option<PathBuf>,
    hook_script: Option<PathBuf>,
    cli_config: Option<PathBuf>,
    skills: Vec<String>,
    cli_version: Option<String>,
    cli_binary: Option<PathBuf>,
    provider_options: Vec<String>,
    require_delivery: bool,
    holder_pid: Option<u32>,
    holder_lock: Option<PathBuf>,
    dry_run: bool,
}

impl Acquire {
    fn take(&mut self, option: &mut Given) -> Option<()> {
        match option.name {
            "--provider" => set(&mut self.provider, provider(option.value()?)?),
            "--workspace" => set(&mut self.workspace, option.value()?.into()),
            "--prompt" => set(&mut self.prompt, option.value()?.to_owned()),
            "--prompt-file" => set(&mut self.prompt_file, option.value()?.into()),
            "--mcp-config" => set(&mut self.mcp_config, option.value()?.into()),
            "--mcp-mode" => set(&mut self.mcp_mode, mcp_mode(option.value()?)?),
            "--agent" => push(&mut self.agents, option.value()?),
            "--command" => push(&mut self.commands, option.value()?),
            "--hooks-config" => set(&mut self.hooks_config, option.value()?.into()),
            "--hook-script" => set(&mut self.hook_script, option.value()?.into()),
            "--cli-config" => set(&mut self.cli_config, option.value()?.into()),
            "--skill" => push(&mut self.skills, option.value()?),
            "--cli-version" => set(&mut self.cli_version, option.value()?.to_owned()),
            "--cli-binary" => set(&mut self.cli_binary, option.value()?.into()),
            "--provider-option" => push(&mut self.provider_options, option.value()?),
            "--require-delivery" => raise(&mut self.require_delivery, option),
            "--holder-pid" => set(&mut self.holder_pid, number(option.value()?)?),
            "--holder-lock" => set(&mut self.holder_lock, option.value()?.into()),
            "--dry-run" => raise(&mut self.dry_run, option),
            _ => None,
        }
    }

    /// The arguments, or `None` where clap's rules (required, conflicting or requiring options)
    /// would refuse them.
    fn finish(self) -> Option<AcquireArgs> {
        let prompt_given = self.prompt.is_some() != self.prompt_file.is_some();
        let holder_given_once = self.holder_pid.is_none() || self.holder_lock.is_none();
        let mode_has_config = self.mcp_mode.is_none() || self.mcp_config.is_some();
        (prompt_given && holder_given_once && mode_has_config).then_some(())?;
        Some(AcquireArgs {
            session: SessionArgs {
                provider: self.provider?,
                workspace: self.workspace?,
                prompt: self.prompt,
                prompt_file: self.prompt_file,
                mcp_config: self.mcp_config,
                mcp_mode: self.mcp_mode.unwrap_or_else(|| DEFAULT_MCP_MODE.to_owned()),
                agents: self.agents,
                commands: self.commands,
                hooks_config: self.hooks_config,
                hook_script: self.hook_script,
                cli_config: self.cli_config,
                skills: self.skills,
                cli_version: self.cli_version,
                cli_binary: self.cli_binary,
                provider_options: self.provider_options,
                require_delivery: self.require_delivery,
            },
            holder_pid: self.holder_pid,
            holder_lock: self.holder_lock,
            dry_run: self.dry_run,
        })
    }
}

/// A provider of this build, by name (clap's possible values).
fn provider(name: &str) -> Option<String> {
    use projectfile::core::ProviderExt as _;
    projectfile::providers()
        .iter()
        .any(|p| p.name() == name)
        .then(|| name.to_owned())
}

fn mcp_mode(mode: &str) -> Option<String> {
    MCP_MODES.contains(&mode).then(|| mode.to_owned())
}
