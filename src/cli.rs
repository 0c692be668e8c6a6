//! Command-line definitions (clap): every command, flag and its help text, with examples.

use clap::{ArgMatches, Args, FromArgMatches, Parser, Subcommand};
use projectfile::core::ProviderExt;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Examples:
  projectfile run --provider codex --workspace ~/src/app --prompt 'Answer in French.' -- codex
  TOKEN=$(projectfile acquire --provider codex --workspace . --prompt-file p.md --json | jq -r .token)
  projectfile release --token \"$TOKEN\"
  projectfile status --workspace . --json
  projectfile -v acquire --provider codex --workspace . --prompt 'Be brief.' --holder-pid $$
  projectfile completions bash > ~/.local/share/bash-completion/completions/projectfile

With --json every command prints one object whose \"schema\" field names its shape and version
(projectfile.acquire.v1, …; see docs/receipts.md), failures included.

Exit codes: 0 success; 1 the operation failed (stderr: `error: <path>: <reason>`); 2 bad usage
(an unknown command, flag or provider, a missing or refused value such as an empty prompt);
3 `release` or `strip-stale` left cleanup pending (the receipt's `pending` lists what and why; the
next start retries it); `run` exits with the command's own status (128+N when killed by signal N).";

/// The providers compiled into this build, as the accepted values of a provider argument: an
/// unknown name is bad usage (exit 2), and completions offer the names.
fn provider_names() -> clap::builder::PossibleValuesParser {
    let names: Vec<&'static str> = projectfile::providers().iter().map(|p| p.name()).collect();
    clap::builder::PossibleValuesParser::new(names)
}

/// Project per-session instructions, skills and configuration into the files each AI coding CLI
/// reads, and take them out again without losing a byte of the project.
#[derive(Parser, Debug)]
#[command(name = "projectfile", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Args, Debug)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Where leases and ledgers live [default: $XDG_STATE_HOME/projectfile or ~/.local/state/projectfile].
    #[arg(long, global = true, env = "PROJECTFILE_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Names our markers: `<!-- BEGIN {NS}-session-instructions … -->`.
    #[arg(
        long,
        global = true,
        env = "PROJECTFILE_NAMESPACE",
        default_value = "agentworks",
        value_name = "NS"
    )]
    pub namespace: String,
    /// Print exactly one JSON object on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Log each step (state, lock, stale cleaning, plan, writes, release) to stderr.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Wait at most SECS for another process holding the workspace lock, then fail with nothing
    /// changed; after a second of waiting, one stderr line names the lock and its holder.
    #[arg(long, global = true, value_name = "SECS", default_value_t = 30)]
    pub wait: u64,
}

/// A command's own arguments, added to its clap definition only when clap builds that command:
/// when it is the one invoked, or for help and completions, which build the whole tree. A
/// command line then costs the building of its own command, not of every command's arguments
/// and help texts (half the heap and a quarter of the page faults at start; BENCHMARKS.md). The
/// definition stays the derived one; this only says when clap reads it.
#[derive(Debug)]
pub struct Deferred<T>(pub T);

impl<T> std::ops::Deref for Deferred<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: FromArgMatches> FromArgMatches for Deferred<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Deferred)
    }
    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Deferred)
    }
    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }
    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}

impl<T: Args> Args for Deferred<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.defer(|cmd| keeping_about(cmd, T::augment_args))
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        cmd.defer(|cmd| keeping_about(cmd, T::augment_args_for_update))
    }
    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

/// `augment` (an arguments struct's) applied to `cmd`, whose about texts (the command's doc
/// comment, set when the command was declared) stay: built eagerly, the command's own texts are
/// set after its arguments struct's, and so win over that struct's doc comment; this keeps it so.
fn keeping_about(cmd: clap::Command, augment: fn(clap::Command) -> clap::Command) -> clap::Command {
    let about = cmd.get_about().cloned();
    let long_about = cmd.get_long_about().cloned();
    let cmd = augment(cmd);
    let cmd = match about {
        Some(text) => cmd.about(text),
        None => cmd.about(None::<&'static str>),
    };
    match long_about {
        Some(text) => cmd.long_about(text),
        None => cmd.long_about(None::<&'static str>),
    }
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the providers compiled into this build, with their capabilities.
    #[command(after_help = "\
Prints one name per line; with --json, each provider's capabilities and discovery profile
(schema projectfile.providers.v1).

Examples:
  projectfile providers
  projectfile providers --json | jq -r '.providers[] | select(.capabilities.skills) | .name'")]
    Providers,
    /// Start a session: project its instructions and print a lease token.
    #[command(after_help = "\
The lease lives while its holder lives: by default the program that called projectfile (the
parent, skipping forked subshells such as the left side of `$(projectfile acquire … | jq …)`),
or the process named by --holder-pid, or whoever holds an exclusive lock on --holder-lock.
A dead holder's projections are cleaned at the next start.

The holder is checked first, since a lease for a dead holder would be stale at once: a pid must
be a running process (not a zombie, nor one thread of a process); --holder-lock must be a regular file (not a symlink, FIFO, socket,
device or directory) that another process holds locked (flock) now. Otherwise acquire refuses
with `error: <path>: <reason>` and changes nothing.

The receipt's `delivery` says whether the CLI, started in the workspace, shows the session text to
the model, judged by its discovery profile (as `resolve --as` does), and the launch arguments
added to make it (Codex's raised budget for a large AGENTS.md). --require-delivery fails instead
of starting a session whose text would not arrive.

Examples:
  projectfile acquire --provider codex --workspace . --prompt 'Use tabs.' --holder-pid $$ --json
  projectfile acquire --provider claude --workspace . --prompt-file p.md --require-delivery \
    --provider-option claude.prompt=replace --json
  projectfile acquire --provider claude --workspace . --prompt-file p.md --mcp-config servers.json \\
    --agent reviewer=reviewer.md --command ship=ship.md --dry-run --json")]
    Acquire(Deferred<Box<AcquireArgs>>),
    /// End a session by its token. Releasing twice, or an unknown token, is not an error.
    #[command(after_help = "\
The session's workspace folder is found where it was last seen, or renamed beside it (its identity
is checked: a folder deleted and created again at that path is not it). When it moved elsewhere,
the release fails (exit 1, kind `workspace_lost`, nothing changed) and says where it was last
seen: pass --workspace with its new path, or let the next start or strip-stale there clean it
once the session's holder has ended.

Examples:
  projectfile release --token pf1-… --json
  projectfile -v release --token \"$TOKEN\"
  projectfile release --token \"$TOKEN\" --workspace ~/src/renamed-project")]
    Release(Deferred<ReleaseArgs>),
    /// Acquire with this process as holder, run CMD with the plan's launch arguments, forward
    /// SIGINT/SIGTERM/SIGHUP/SIGQUIT, release, and exit with CMD's status.
    #[command(after_help = "\
CMD runs in the workspace (unless --keep-cwd) with the plan's launch arguments appended.

With --runtime-root, CMD runs in a private runtime <root>/<user>/<project>/<session>/<provider>/<mode>
whose project/ links the workspace. output/ (--output) and attached/NAME (--attach,
--attach-read-only) link what this launch asks for and nothing else: a link projectfile made for an
earlier launch is removed or replaced, anything it did not make there fails the launch, and no
level of the runtime is ever followed through a link.

Output: CMD inherits stdin, stdout and stderr, so its own output goes where projectfile's goes.
With --json, the first line of stdout is projectfile's one JSON object: the acquire receipt,
printed just before CMD starts, or the error object if CMD cannot start (then it never runs).
If that line cannot be written (the reader of stdout is gone), CMD does not run. The session is
released whatever happens, output included.

Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to CMD while it runs. Before CMD starts
(while waiting for the workspace lock or a runtime in use, say) one ends the wait: CMD does not
run, anything acquired is released, and the exit status is 128+N.

Examples:
  projectfile run --provider codex --workspace /tmp/demo --prompt 'Be brief.' -- cat AGENTS.md
  projectfile run --provider claude --workspace . --prompt 'Be brief.' --mcp-config servers.json \\
    --dry-run --json -- claude -p 'hi'      # what it would launch; nothing is written or run
  projectfile run --provider claude --workspace ~/crew --prompt 'Be brief.' --runtime-root ~/rt \\
    --user u1 --project-id crew-7 --session-id work:project:7 --mode run \\
    --attach-read-only docs=~/docs --private-cli-home --sandbox --json -- claude -p 'hi'")]
    Run(Deferred<Box<RunArgs>>),
    /// Show leases, holders, liveness and stale leftovers of a workspace. Changes nothing.
    #[command(after_help = "Example:\n  projectfile status --workspace . --json")]
    Status(Deferred<WorkspaceArgs>),
    /// Clean leftovers whose holders are dead; never touches a live holder's projections.
    #[command(
        after_help = "Examples:\n  projectfile strip-stale --workspace .\n  projectfile strip-stale --workspace . --json"
    )]
    StripStale(Deferred<WorkspaceArgs>),
    /// Resolve which guidance files are active for a workspace, in order, with a receipt of what
    /// was dropped and why (or, with --as, what one CLI would load).
    #[command(after_help = "\
Scopes, broadest first: user (files under --home), ancestor (directories above the workspace),
workspace (root down to --cwd), scoped (the subtree below --cwd), editor_pack; our own session
blocks are reported as scope `session`, apart from the user's guidance.

Guidance stays inside its own tree (the workspace for project files, the home directory for user
files, an ancestor file's own directory): an `@import` or a symlinked instruction file that leads
elsewhere is not read, and is listed as omitted `outside_tree` with the path it named and where it
leads, so a host can show it and ask. --allow-outside-tree reads it (after the user approved).

Examples:
  projectfile resolve --workspace . --json
  projectfile resolve --workspace . --cwd ./services/api --render
  projectfile resolve --workspace . --as codex --json")]
    Resolve(Deferred<ResolveArgs>),
    /// The reader role: pick a turn's mode, wrap or strip the reader notice, print refusal hints.
    #[command(subcommand)]
    Reader(ReaderCommand),
    /// Remove a private runtime (its links are removed, never followed).
    #[command(after_help = "\
Every level below the runtime root, and the root itself, is walked without following a link: a
level replaced by a symlink fails with `error: <path>: <reason>` and nothing is removed. A runtime
a launch is using is refused after --runtime-wait seconds. Exits 0 when the runtime was removed or
was not there.

Example:
  projectfile remove-runtime --runtime-root /var/rt --user u1 --project-id p1 \\
    --session-id work:project:42 --provider codex --mode run")]
    RemoveRuntime(Deferred<RemoveRuntimeArgs>),
    /// Private runtimes: the identity a launch records, and whether a native CLI session may
    /// resume under another identity.
    #[command(subcommand)]
    Runtime(RuntimeCommand),
    /// Print a shell completion script.
    #[command(after_help = "\
Examples:
  projectfile completions bash > ~/.local/share/bash-completion/completions/projectfile
  projectfile completions zsh > \"${fpath[1]}/_projectfile\"
  projectfile completions fish > ~/.config/fish/completions/projectfile.fish")]
    Completions(Deferred<CompletionsArgs>),
}

/// `reader …`.
#[derive(Subcommand, Debug)]
pub enum ReaderCommand {
    /// Decide a turn's mode: trusted access selects Builder; a pinned Run request or a read-only
    /// channel downgrades it; guests always get Run; nothing promotes a reader.
    #[command(
        after_help = "Example:\n  projectfile reader mode --access owner --route read-only-channel --json"
    )]
    Mode {
        /// owner, editor or reader.
        #[arg(long, value_parser = ["owner", "editor", "reader"])]
        access: String,
        /// chat, read-only-channel or guest-call.
        #[arg(long, default_value = "chat", value_parser = ["chat", "read-only-channel", "guest-call"])]
        route: String,
        /// The caller pinned Run.
        #[arg(long)]
        pinned_run: bool,
        /// crew or workflow.
        #[arg(long, default_value = "crew", value_parser = ["crew", "workflow"])]
        product: String,
    },
    /// Put the reader notice in front of the message on stdin (for a read-only turn).
    Wrap {
        /// reader or shared-channel wording.
        #[arg(long, default_value = "reader", value_parser = ["reader", "shared-channel"])]
        kind: String,
        /// crew or workflow.
        #[arg(long, default_value = "crew", value_parser = ["crew", "workflow"])]
        product: String,
    },
    /// Strip the reader notice from the text on stdin (exactly once; what the user typed comes back).
    Strip,
    /// Print the refusal hint for a read-only session.
    Hint {
        /// reader or shared-channel wording.
        #[arg(long, default_value = "reader", value_parser = ["reader", "shared-channel"])]
        kind: String,
        /// crew or workflow.
        #[arg(long, default_value = "crew", value_parser = ["crew", "workflow"])]
        product: String,
    },
}

/// Which runtime: the flags naming one.
#[derive(Args, Debug)]
pub struct RuntimeKeyArgs {
    /// The runtime root (a real folder, not a symlink).
    #[arg(long, value_name = "DIR")]
    pub runtime_root: PathBuf,
    /// The user.
    #[arg(long)]
    pub user: String,
    /// The project id.
    #[arg(long, value_name = "ID")]
    pub project_id: String,
    /// The session id (see `run --help`: UUIDs are compared without case).
    #[arg(long, value_name = "ID")]
    pub session_id: String,
    /// The provider the runtime was made for.
    #[arg(long, value_parser = provider_names())]
    pub provider: String,
    /// builder or run.
    #[arg(long, value_parser = ["builder", "run"])]
    pub mode: String,
}

/// `remove-runtime`.
#[derive(Args, Debug)]
pub struct RemoveRuntimeArgs {
    #[command(flatten)]
    pub key: RuntimeKeyArgs,
    /// Seconds to wait for a launch using the runtime to finish.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub runtime_wait: u64,
}

/// `runtime …`.
#[derive(Subcommand, Debug)]
pub enum RuntimeCommand {
    /// Print the identity a launch with these flags records (user, project, canonical session,
    /// provider, mode, runtime, working directory, CLI home). Creates nothing.
    #[command(after_help = "\
The JSON (schema projectfile.runtime_identity.v1) is what `run --json` reports as
`linked.identity`; give it to `runtime can-resume`.

Example:
  projectfile runtime identity --runtime-root /var/rt --user u1 --project-id p1 \\
    --session-id product-6F9619FF-8B86-D011-B42D-00CF4FC964FF --provider codex --mode run --json")]
    Identity(Deferred<RuntimeIdentityArgs>),
    /// Say whether a native CLI session recorded under one identity may resume under another.
    #[command(after_help = "\
Each side is an identity as JSON: inline, `@FILE`, or `@-` for standard input. It may be the
identity itself, the output of `runtime identity --json`, or a whole `run --json` receipt (its
`linked.identity`). A session that ran in a shared folder has `\"runtime\": null`; for Codex,
`working_dir` is its --cd project-directory override when the host passed one.

Resume only when every rule holds: same user, project and session; same CLI; same mode; both in
a private runtime (or both in a shared folder); same runtime; same working directory; same CLI
home. Otherwise start a fresh native session from the saved history. Exits 0 either way: read
`resume` (or the first line).

Example:
  projectfile runtime can-resume --from @saved-identity.json \\
    --to \"$(projectfile runtime identity --runtime-root /var/rt --user u1 --project-id p1 \\
           --session-id work:project:42 --provider codex --mode run --json)\" --json")]
    CanResume(Deferred<CanResumeArgs>),
}

/// `runtime identity`.
#[derive(Args, Debug)]
pub struct RuntimeIdentityArgs {
    #[command(flatten)]
    pub key: RuntimeKeyArgs,
    /// The launch gives the CLI a private home (`run --private-cli-home`).
    #[arg(long)]
    pub private_cli_home: bool,
    /// Where the CLI runs, when not in the runtime (`run --keep-cwd`, Codex's --cd).
    #[arg(long, value_name = "DIR")]
    pub working_dir: Option<PathBuf>,
}

/// `runtime can-resume`.
#[derive(Args, Debug)]
pub struct CanResumeArgs {
    /// The identity the native session was recorded under: JSON, @FILE or @-.
    #[arg(long, value_name = "JSON")]
    pub from: String,
    /// The identity of the new launch: JSON, @FILE or @-.
    #[arg(long, value_name = "JSON")]
    pub to: String,
}

/// `completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `resolve`.
#[derive(Args, Debug)]
pub struct ResolveArgs {
    /// The workspace root.
    #[arg(long, value_name = "DIR")]
    pub workspace: PathBuf,
    /// The working directory, inside the workspace [default: the workspace].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The home directory for user-scope files [default: $HOME].
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Byte budget of the kept sources [default: 32768, or the CLI's own with --as].
    #[arg(long, value_name = "N")]
    pub max_bytes: Option<u64>,
    /// Maximum depth of the subtree scan.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub max_depth: usize,
    /// Maximum directories of the subtree scan.
    #[arg(long, value_name = "N", default_value_t = 4000)]
    pub max_dirs: usize,
    /// Skip user-scope files.
    #[arg(long)]
    pub no_user: bool,
    /// Skip the directories above the workspace.
    #[arg(long)]
    pub no_ancestors: bool,
    /// Skip the subtree below the working directory.
    #[arg(long)]
    pub no_subtree: bool,
    /// Answer what this provider's CLI would load, by its discovery profile.
    #[arg(long = "as", value_name = "PROVIDER", value_parser = provider_names())]
    pub as_provider: Option<String>,
    /// With --as: the CLI's version, for a CLI whose discovery changed between versions
    /// (claude reads AGENTS.md from 2.1.281) [default: its newest known behaviour].
    #[arg(long, value_name = "VERSION", requires = "as_provider")]
    pub cli_version: Option<String>,
    /// Print the single rendered guidance block (with --json, as the render receipt).
    #[arg(long, conflicts_with = "fragments")]
    pub render: bool,
    /// Print the prompt fragments (one per source) as JSON.
    #[arg(long)]
    pub fragments: bool,
    /// Also read imports and instruction files that lead (through `..`, an absolute path, `~/`
    /// or a symlink) outside the tree of the file naming them. Without it they are not read and
    /// are listed in `omitted` as `outside_tree`, with where they lead, for a host to ask.
    #[arg(long)]
    pub allow_outside_tree: bool,
}

/// What a session brings, shared by `acquire` and `run`.
#[derive(Args, Debug)]
pub struct SessionArgs {
    /// The provider (CLI) to project for: see `projectfile providers`.
    #[arg(long, value_name = "P", value_parser = provider_names())]
    pub provider: String,
    /// The project folder the CLI will run in.
    #[arg(long, value_name = "DIR")]
    pub workspace: PathBuf,
    /// The session instructions (not empty: an empty or blank prompt is refused, exit 2).
    #[arg(
        long,
        value_name = "TEXT",
        conflicts_with = "prompt_file",
        required_unless_present = "prompt_file"
    )]
    pub prompt: Option<String>,
    /// Read the session instructions from a file (`-` for standard input); not empty.
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<PathBuf>,
    /// MCP servers, a JSON file `{"name": {...}}` (names: letters, digits, '_', '-'). Claude and
    /// qwen get them in a private file (`--mcp-config=<file>`), Codex as `-c mcp_servers.<name>=…`
    /// overrides, Cursor, agy and gemini merged into the project's own file for the session (its
    /// bytes come back at the end; gemini's with "trust": true); muse and pi refuse them.
    #[arg(long, value_name = "FILE")]
    pub mcp_config: Option<PathBuf>,
    /// merge: the CLI keeps its own MCP servers and gets the session's too (a name both define is
    /// refused); replace: only the session's (claude: --strict-mcp-config; qwen:
    /// --allowed-mcp-server-names; cursor: the project's .cursor/mcp.json holds the session's
    /// alone; codex, agy and gemini cannot, and refuse).
    #[arg(long, value_name = "MODE", default_value = "merge", value_parser = ["merge", "replace"], requires = "mcp_config")]
    pub mcp_mode: String,
    /// A subagent to project, as NAME=FILE (repeatable). FILE is neutral Markdown: front matter
    /// with `description:` (and optionally `name:`, `tools:`, `model:`), then the system prompt.
    /// Converted for each CLI (claude: .claude/agents/NAME.md, cursor: .cursor/agents/, qwen:
    /// .qwen/agents/, copilot: .github/agents/NAME.agent.md, opencode: its private configuration,
    /// gemini: only into a private CLI home, `run --runtime-root … --private-cli-home`); refused
    /// where the CLI reads none. A same-named file there is taken over and put back by the last
    /// session. See docs/session-definitions.md.
    #[arg(long = "agent", value_name = "NAME=FILE")]
    pub agents: Vec<String>,
    /// A command (slash command) to project, as NAME=FILE (repeatable). FILE is neutral Markdown:
    /// optional front matter (`description:`, `argument-hint:`), then the prompt, `$ARGUMENTS`
    /// standing for what follows `/NAME`. Converted for each CLI (claude: .claude/commands/NAME.md,
    /// cursor: .cursor/commands/, pi: .pi/prompts/, gemini: .gemini/commands/NAME.toml, qwen:
    /// .qwen/commands/, `$ARGUMENTS` becoming {{args}}; opencode: its private configuration); a
    /// TOML file with a `prompt` is taken as gemini's and qwen's own form. Refused where the CLI
    /// reads none. A same-named file there is taken over and put back by the last session.
    #[arg(long = "command", value_name = "NAME=FILE")]
    pub commands: Vec<String>,
    /// Hooks, a neutral JSON file converted to each CLI's events and file:
    /// {"hooks": {"session_start": [{"command": "…"}], "user_prompt_submit": […],
    /// "before_tool": [{"matcher": "…", "command": "…", "timeout": SECONDS}], "after_tool": […],
    /// "stop": […], "session_end": […]}}. An event the CLI lacks is refused, naming it. A
    /// command may name the hook script as {{hook_script}}. See docs/session-definitions.md.
    #[arg(long, value_name = "FILE", conflicts_with = "hooks_config")]
    pub hooks: Option<PathBuf>,
    /// Hooks configuration, a JSON file in the CLI's own format, written as given (a file in the
    /// neutral format of --hooks is converted as --hooks would).
    #[arg(long, value_name = "FILE")]
    pub hooks_config: Option<PathBuf>,
    /// The script the hooks run: projected into the CLI's hooks folder, mode 0755.
    #[arg(long, value_name = "FILE")]
    pub hook_script: Option<PathBuf>,
    /// CLI configuration, a JSON file.
    #[arg(long, value_name = "FILE")]
    pub cli_config: Option<PathBuf>,
    /// A skill folder to project, as NAME=DIR (repeatable): copied into the CLI's skills folder
    /// as NAME/ with a `.{NS}-managed` marker file. A same-named folder there is taken over and put
    /// back by the last session. NAME is one plain folder name; DIR may not contain symlinks.
    #[arg(long = "skill", value_name = "NAME=DIR")]
    pub skills: Vec<String>,
    /// The CLI's version, when the host knows it (skips probing `--version`).
    #[arg(long, value_name = "VERSION")]
    pub cli_version: Option<String>,
    /// The CLI binary to probe, instead of looking it up on PATH.
    #[arg(long, value_name = "PATH")]
    pub cli_binary: Option<PathBuf>,
    /// A provider option, PROVIDER.NAME=VALUE (repeatable), e.g. `claude.prompt=replace`: the
    /// options each provider takes, and their values, are listed by `projectfile providers` in
    /// its JSON receipt (`options`). An option for
    /// another provider of this build is ignored, so a host can pass one set to every launch; an
    /// unknown option or value of this provider is refused (exit 2).
    #[arg(long = "provider-option", value_name = "OPTION")]
    pub provider_options: Vec<String>,
    /// Fail (exit 1, error kind `undelivered`) with everything undone when the receipt's
    /// `delivery` verdict says the session text would not reach the model. Without it the
    /// session starts and the receipt (and a warning) says why the text is not delivered.
    #[arg(long)]
    pub require_delivery: bool,
}

/// `acquire`.
#[derive(Args, Debug)]
pub struct AcquireArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The process whose life keeps the lease alive [default: the calling program].
    #[arg(long, value_name = "PID", conflicts_with = "holder_lock")]
    pub holder_pid: Option<u32>,
    /// A regular file the host keeps exclusively locked (flock) while the session lives; it must
    /// be locked already when acquire runs.
    #[arg(long, value_name = "PATH")]
    pub holder_lock: Option<PathBuf>,
    /// Print the receipt a start would print (files with the actions they would get, launch
    /// arguments, env), marked `"dry_run": true`, and change nothing: no file, no lease, no state
    /// directory or lock file. The token is `dry-run` (releasing it does nothing).
    #[arg(long)]
    pub dry_run: bool,
}

/// `release`.
#[derive(Args, Debug)]
pub struct ReleaseArgs {
    /// The token `acquire` printed.
    #[arg(long, value_name = "T")]
    pub token: String,
    /// Where the session's workspace folder is now, when it moved since the session started
    /// (its identity is checked: another folder there is never touched, and the session's own is
    /// looked for where it was last seen).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<std::path::PathBuf>,
}

/// `run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// Run CMD in the current directory instead of the workspace (or runtime).
    #[arg(long)]
    pub keep_cwd: bool,
    /// Print what would be launched (the acquire receipt marked `"dry_run": true`, with the whole
    /// `command` line) and run nothing, changing nothing. Not with --runtime-root (a runtime is
    /// made by the launch).
    #[arg(long, conflicts_with = "runtime_root")]
    pub dry_run: bool,
    #[command(flatten)]
    pub linked: LinkedArgs,
    /// The command and its arguments (any bytes: they are passed on as given).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

/// A private linked runtime for `run`: the session is projected into
/// `<runtime-root>/<user>/<project>/<session>/<provider>/<mode>/`, whose `project/` links the
/// workspace, so the real project is never a projection destination.
#[derive(Args, Debug)]
pub struct LinkedArgs {
    /// Run in a private runtime under DIR instead of the workspace itself.
    #[arg(long, value_name = "DIR", requires_all = ["user", "project_id", "session_id"])]
    pub runtime_root: Option<PathBuf>,
    /// The user the runtime belongs to.
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
    /// The project id the runtime belongs to.
    #[arg(long, value_name = "ID")]
    pub project_id: Option<String>,
    /// The session id: work:project:<id>, code:project:<id> or product-<uuid>, optionally
    /// :<key>. A UUID is compared without case (lower-cased); the rest is kept as given.
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
    /// The session mode: builder reads and writes the project, run only reads it.
    #[arg(long, value_name = "MODE", default_value = "builder", value_parser = ["builder", "run"])]
    pub mode: String,
    /// A workflow step's output folder, linked as `output/` (writable in both modes). A run
    /// without it has no `output/`: a link an earlier launch left is removed.
    #[arg(long, value_name = "DIR", requires = "runtime_root")]
    pub output: Option<PathBuf>,
    /// Attach a folder as `attached/NAME` (repeatable): read/write in builder mode, read-only in
    /// run mode. NAME is one plain folder name ([A-Za-z0-9._-], not project or output).
    #[arg(long = "attach", value_name = "NAME=DIR", requires = "runtime_root")]
    pub attach: Vec<String>,
    /// Attach a folder as `attached/NAME`, read-only in both modes (repeatable).
    #[arg(
        long = "attach-read-only",
        value_name = "NAME=DIR",
        requires = "runtime_root"
    )]
    pub attach_read_only: Vec<String>,
    /// Give the CLI a private home in the runtime (`<runtime>/.cli-home`, mode 0700) through its
    /// variable: CODEX_HOME, CLAUDE_CONFIG_DIR, PI_CODING_AGENT_DIR or CURSOR_CONFIG_DIR (muse and
    /// agy have none and are refused). Seed its login there first: see README.
    #[arg(long, requires = "runtime_root")]
    pub private_cli_home: bool,
    /// Seconds to wait for another launch of the same runtime to finish.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub runtime_wait: u64,
    /// Apply the Landlock policy of the mode to CMD before it starts (Linux).
    #[arg(long, requires = "runtime_root")]
    pub sandbox: bool,
    /// With --sandbox: run even when the kernel cannot enforce the policy (the receipt says so).
    #[arg(long, requires = "sandbox")]
    pub allow_unsandboxed: bool,
    /// With --sandbox: the lowest Landlock ABI accepted.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub min_abi: u8,
    /// With --sandbox: also let CMD read (and execute) PATH, e.g. where the CLI is installed
    /// when that is outside the system folders (repeatable).
    #[arg(long, value_name = "PATH", requires = "sandbox")]
    pub sandbox_read: Vec<PathBuf>,
    /// With --sandbox: also let CMD write PATH, e.g. the CLI's own home (repeatable). In run mode
    /// it may not overlap the project.
    #[arg(long, value_name = "PATH", requires = "sandbox")]
    pub sandbox_write: Vec<PathBuf>,
}

/// Commands that take only a workspace.
#[derive(Args, Debug)]
pub struct WorkspaceArgs {
    /// The project folder.
    #[arg(long, value_name = "DIR")]
    pub workspace: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    /// clap's own consistency checks over the whole definition, every deferred command's
    /// arguments included (building the tree runs each command's deferred part).
    #[test]
    fn the_definition_passes_claps_checks_with_every_command_built() {
        Cli::command().debug_assert();
    }

    /// A deferred command's arguments reach it: the parsed values come out of the matches that
    /// the deferred part defined.
    #[test]
    fn a_deferred_commands_arguments_are_parsed() {
        let cli = Cli::try_parse_from(["projectfile", "release", "--token", "pf1-x", "--json"]);
        let parsed = cli.map(|cli| (cli.command, cli.global.json));
        let token = match &parsed {
            Ok((Command::Release(args), true)) => Some(args.token.as_str()),
            _ => None,
        };
        assert_eq!(token, Some("pf1-x"), "release parsed as {parsed:?}");
    }
}
