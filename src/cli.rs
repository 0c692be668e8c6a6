//! Command-line definitions (clap): every command, flag and its help text, with examples.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Examples:
  projectfile run --provider codex --workspace ~/src/app --prompt 'Answer in French.' -- codex
  TOKEN=$(projectfile acquire --provider codex --workspace . --prompt-file p.md --json | jq -r .token)
  projectfile release --token \"$TOKEN\"
  projectfile status --workspace . --json

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
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the providers compiled into this build, with their capabilities.
    #[command(after_help = "Example:\n  projectfile providers --json")]
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
    #[command(after_help = "Example:\n  projectfile release --token pf1-… --json")]
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
    #[command(after_help = "Example:\n  projectfile strip-stale --workspace .")]
    StripStale(WorkspaceArgs),
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
