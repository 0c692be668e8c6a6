//! How the `projectfile` command line fails: its exit codes, the errors it raises itself (apart
//! from core's [`projectfile::core::Error`]), and how any failure is reported: one line
//! `error: <path>: <reason>` on stderr and, with `--json`, the error receipt on stdout.
//!
//! | code | when |
//! |---|---|
//! | 0 | success |
//! | 1 | the operation failed ([`FAILURE`]): core refused or an I/O error, nothing left half done |
//! | 2 | bad usage ([`USAGE`]): clap refused the arguments, or a value the command refuses before doing anything (an unknown provider, an empty prompt, `resolve --cwd` outside the workspace); error kind `usage` |
//! | 3 | cleanup deferred ([`DEFERRED`]): `release` or `strip-stale` could not undo everything now; the receipt's `pending` lists each undo, and the next start retries it |
//! | N | `run`: the command's own status, 128+S when it was killed by signal S |

use projectfile::core::Error;
use projectfile::receipts::ErrorReceipt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code of an operation that failed.
pub const FAILURE: u8 = 1;
/// Exit code of bad usage.
pub const USAGE: u8 = 2;
/// Exit code of a release or strip-stale that left undos pending (cleanup deferred to the next
/// start; the receipt lists each).
pub const DEFERRED: u8 = 3;

/// An error the command line raises itself, with its exit code and receipt kind.
#[derive(Debug)]
pub struct CliError {
    /// The receipt's `error.kind`: `usage` (exit 2), or core's `io` and `invalid` (exit 1).
    kind: &'static str,
    /// What the error is about, printed first.
    path: Option<PathBuf>,
    /// Why, one sentence.
    reason: String,
}

impl CliError {
    /// Bad usage (exit 2), about an argument value (`--prompt`, a provider name, …).
    pub fn usage(subject: impl std::fmt::Display, reason: impl Into<String>) -> CliError {
        CliError {
            kind: "usage",
            path: None,
            reason: format!("{subject}: {}", reason.into()),
        }
    }

    /// Bad usage (exit 2) about a path the user gave.
    pub fn usage_at(path: &Path, reason: impl Into<String>) -> CliError {
        CliError {
            kind: "usage",
            path: Some(path.to_path_buf()),
            reason: reason.into(),
        }
    }

    /// A file the command line reads could not be read (exit 1, kind `io`).
    pub fn io(path: &Path, reason: impl Into<String>) -> CliError {
        CliError {
            kind: "io",
            path: Some(path.to_path_buf()),
            reason: reason.into(),
        }
    }

    /// A file the command line reads holds something it cannot use (exit 1, kind `invalid`).
    pub fn invalid(path: &Path, reason: impl Into<String>) -> CliError {
        CliError {
            kind: "invalid",
            path: Some(path.to_path_buf()),
            reason: reason.into(),
        }
    }

    /// The exit code this error ends the process with.
    pub fn exit_code(&self) -> u8 {
        if self.kind == "usage" { USAGE } else { FAILURE }
    }

    fn receipt(&self) -> ErrorReceipt {
        ErrorReceipt::new(
            self.kind,
            self.path.as_ref().map(|p| p.display().to_string()),
            self.to_string(),
        )
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{}: {}", path.display(), self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for CliError {}

/// Reports `error` (stderr, and stdout with `--json`) and returns the exit code for it.
pub fn report(error: &anyhow::Error, json: bool) -> ExitCode {
    let (receipt, code) = if let Some(core) = error.downcast_ref::<Error>() {
        (ErrorReceipt::from_core(core), FAILURE)
    } else if let Some(cli) = error.downcast_ref::<CliError>() {
        (cli.receipt(), cli.exit_code())
    } else {
        // Anything else is an I/O error met on the way (reading standard input, spawning).
        (ErrorReceipt::new("io", None, format!("{error:#}")), FAILURE)
    };
    print(&receipt, json);
    ExitCode::from(code)
}

/// Reports an argument error from clap: its own message and usage on stderr (or the help, exit
/// 0), and with `--json` the error receipt, kind `usage`, on stdout.
pub fn report_clap(error: &clap::Error, json: bool) -> ExitCode {
    let code = error.exit_code();
    // Printing can only fail on a closed stream; the exit code still says what happened.
    let _ = error.print();
    if code != 0 && json {
        let receipt = ErrorReceipt::new("usage", None, clap_message(&error.to_string()));
        // Best effort: the exit code still says what happened.
        let _ = crate::output::json(&receipt, "the error receipt");
    }
    ExitCode::from(u8::try_from(code).unwrap_or(USAGE))
}

/// Clap's error as one line: the error and its details (valid values, tips), without the usage
/// and the pointer to `--help`.
fn clap_message(rendered: &str) -> String {
    let lines: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    let message = lines.join("; ");
    match message.strip_prefix("error: ") {
        Some(rest) => rest.to_string(),
        None if message.is_empty() => "bad usage".to_string(),
        None => message,
    }
}

fn print(receipt: &ErrorReceipt, json: bool) {
    crate::output::stderr(format_args!("error: {}", receipt.error.message));
    if json {
        // Best effort: when stdout itself is what failed, stderr has said it.
        let _ = crate::output::json(receipt, "the error receipt");
    }
}

/// Whether the command line asks for `--json` (before any `--`), for errors met before the
/// arguments are parsed.
pub fn json_requested() -> bool {
    std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}
