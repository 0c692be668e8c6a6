//! Command-line definitions (clap): every command, flag and its help text, with examples.

use clap::{Args, Parser, Subcommand};
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
(projectfile.acquire.v1, …; see docs/receipts.md).

Exit codes: 0 success; 1 the operation failed (stderr: `error: <path>: <reason>`);
2 bad usage; 3 `release` or `strip-stale` left cleanup pending (the receipt's `pending` lists what
and why; the next start retries it); `run` exits with the command's own status (128+N when killed
by signal N).";

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

Example:
  projectfile acquire --provider codex --workspace . --prompt 'Use tabs.' --holder-pid $$ --json")]
    Acquire(AcquireArgs),
    /// End a session by its token. Releasing twice, or an unknown token, is not an error.
    #[command(after_help = "\
Examples:
  projectfile release --token pf1-… --json
  projectfile -v release --token \"$TOKEN\"")]
    Release(ReleaseArgs),
    /// Acquire with this process as holder, run CMD with the plan's launch arguments, forward
    /// SIGINT/SIGTERM/SIGHUP/SIGQUIT, release, and exit with CMD's status.
    #[command(after_help = "\
CMD runs in the workspace (unless --keep-cwd) with the plan's launch arguments appended.

Example:
  projectfile run --provider codex --workspace /tmp/demo --prompt 'Be brief.' -- cat AGENTS.md")]
    Run(RunArgs),
    /// Show leases, holders, liveness and stale leftovers of a workspace. Changes nothing.
    #[command(after_help = "Example:\n  projectfile status --workspace . --json")]
    Status(WorkspaceArgs),
    /// Clean leftovers whose holders are dead; never touches a live holder's projections.
    #[command(
        after_help = "Examples:\n  projectfile strip-stale --workspace .\n  projectfile strip-stale --workspace . --json"
    )]
    StripStale(WorkspaceArgs),
    /// Resolve which guidance files are active for a workspace, in order, with a receipt of what
    /// was dropped and why (or, with --as, what one CLI would load).
    #[command(after_help = "\
Scopes, broadest first: user (files under --home), ancestor (directories above the workspace),
workspace (root down to --cwd), scoped (the subtree below --cwd), editor_pack; our own session
blocks are reported as scope `session`, apart from the user's guidance.

Examples:
  projectfile resolve --workspace . --json
  projectfile resolve --workspace . --cwd ./services/api --render
  projectfile resolve --workspace . --as codex --json")]
    Resolve(ResolveArgs),
    /// The reader role: pick a turn's mode, wrap or strip the reader notice, print refusal hints.
    #[command(subcommand)]
    Reader(ReaderCommand),
    /// Remove a private runtime (its links are removed, never followed).
    #[command(
        after_help = "Example:\n  projectfile remove-runtime --runtime-root /var/rt --user u1 --project-id p1 \\\n    --session-id work:project:42 --provider codex --mode run"
    )]
    RemoveRuntime(RemoveRuntimeArgs),
    /// Print a shell completion script.
    #[command(after_help = "\
Examples:
  projectfile completions bash > ~/.local/share/bash-completion/completions/projectfile
  projectfile completions zsh > \"${fpath[1]}/_projectfile\"
  projectfile completions fish > ~/.config/fish/completions/projectfile.fish")]
    Completions(CompletionsArgs),
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

/// `remove-runtime`.
#[derive(Args, Debug)]
pub struct RemoveRuntimeArgs {
    /// The runtime root.
    #[arg(long, value_name = "DIR")]
    pub runtime_root: PathBuf,
    /// The user.
    #[arg(long)]
    pub user: String,
    /// The project id.
    #[arg(long, value_name = "ID")]
    pub project_id: String,
    /// The session id.
    #[arg(long, value_name = "ID")]
    pub session_id: String,
    /// The provider.
    #[arg(long)]
    pub provider: String,
    /// builder or run.
    #[arg(long, value_parser = ["builder", "run"])]
    pub mode: String,
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
    /// The working directory [default: the workspace].
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
    #[arg(long = "as", value_name = "PROVIDER")]
    pub as_provider: Option<String>,
    /// Print the single rendered guidance block.
    #[arg(long, conflicts_with = "fragments")]
    pub render: bool,
    /// Print the prompt fragments (one per source) as JSON.
    #[arg(long)]
    pub fragments: bool,
}

/// What a session brings, shared by `acquire` and `run`.
#[derive(Args, Debug)]
pub struct SessionArgs {
    /// The provider (CLI) to project for: see `projectfile providers`.
    #[arg(long, value_name = "P")]
    pub provider: String,
    /// The project folder the CLI will run in.
    #[arg(long, value_name = "DIR")]
    pub workspace: PathBuf,
    /// The session instructions.
    #[arg(
        long,
        value_name = "TEXT",
        conflicts_with = "prompt_file",
        required_unless_present = "prompt_file"
    )]
    pub prompt: Option<String>,
    /// Read the session instructions from a file (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<PathBuf>,
    /// MCP servers, a JSON file `{"name": {...}}`.
    #[arg(long, value_name = "FILE")]
    pub mcp_config: Option<PathBuf>,
    /// Hooks configuration, a JSON file in the CLI's own format.
    #[arg(long, value_name = "FILE")]
    pub hooks_config: Option<PathBuf>,
    /// The script the hooks configuration runs.
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
}

/// `acquire`.
#[derive(Args, Debug)]
pub struct AcquireArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The process whose life keeps the lease alive [default: the calling program].
    #[arg(long, value_name = "PID", conflicts_with = "holder_lock")]
    pub holder_pid: Option<u32>,
    /// A file the host keeps exclusively locked (flock) while the session lives.
    #[arg(long, value_name = "PATH")]
    pub holder_lock: Option<PathBuf>,
}

/// `release`.
#[derive(Args, Debug)]
pub struct ReleaseArgs {
    /// The token `acquire` printed.
    #[arg(long, value_name = "T")]
    pub token: String,
}

/// `run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// Run CMD in the current directory instead of the workspace (or runtime).
    #[arg(long)]
    pub keep_cwd: bool,
    #[command(flatten)]
    pub linked: LinkedArgs,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
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
    /// The session id: work:project:<id>, code:project:<id> or product-<uuid>, optionally :<key>.
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
    /// The session mode: builder reads and writes the project, run only reads it.
    #[arg(long, value_name = "MODE", default_value = "builder", value_parser = ["builder", "run"])]
    pub mode: String,
    /// A workflow step's output folder, linked as `output/` (writable in both modes).
    #[arg(long, value_name = "DIR", requires = "runtime_root")]
    pub output: Option<PathBuf>,
    /// Apply the Landlock policy of the mode to CMD before it starts (Linux).
    #[arg(long, requires = "runtime_root")]
    pub sandbox: bool,
    /// With --sandbox: run even when the kernel cannot enforce the policy (the receipt says so).
    #[arg(long, requires = "sandbox")]
    pub allow_unsandboxed: bool,
    /// With --sandbox: the lowest Landlock ABI accepted.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub min_abi: u8,
}

/// Commands that take only a workspace.
#[derive(Args, Debug)]
pub struct WorkspaceArgs {
    /// The project folder.
    #[arg(long, value_name = "DIR")]
    pub workspace: PathBuf,
}
