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
2 bad usage; `run` exits with the command's own status (128+N when killed by signal N).";

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
The lease lives while its holder lives: by default the process that called projectfile (the
parent), or the process named by --holder-pid, or whoever holds an exclusive lock on
--holder-lock. A dead holder's projections are cleaned at the next start.

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
    /// Print a shell completion script.
    #[command(after_help = "\
Examples:
  projectfile completions bash > ~/.local/share/bash-completion/completions/projectfile
  projectfile completions zsh > \"${fpath[1]}/_projectfile\"
  projectfile completions fish > ~/.config/fish/completions/projectfile.fish")]
    Completions(CompletionsArgs),
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
    /// A skill folder to project, as NAME=DIR (repeatable).
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
    /// The process whose life keeps the lease alive [default: the calling process].
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
    /// Run CMD in the current directory instead of the workspace.
    #[arg(long)]
    pub keep_cwd: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Commands that take only a workspace.
#[derive(Args, Debug)]
pub struct WorkspaceArgs {
    /// The project folder.
    #[arg(long, value_name = "DIR")]
    pub workspace: PathBuf,
}
