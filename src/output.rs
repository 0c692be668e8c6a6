//! The command line's own output. Every line is written with `writeln!`-style calls on a locked
//! handle and flushed, so an output that cannot take it (a pipe whose reader is gone, a full disk)
//! is an error the command handles, never the panic `println!` raises: `acquire` undoes the
//! session whose receipt it could not deliver, `run` releases whatever happens.
//!
//! Standard error is best effort: a failure to report is not reported, and never panics.
//!
//! A standard output that was *closed* when the process started counts as one that cannot take
//! the output. Rust's runtime opens `/dev/null` on a closed descriptor 0, 1 or 2 before `main`
//! (so a file opened later can never land on descriptor 1 and receive the receipt), which would
//! make the receipt vanish silently; so a constructor that runs before the runtime records
//! whether descriptor 1 was open (Linux, `.init_array`). A host that redirects to `/dev/null` on
//! purpose still gets a working command.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether descriptor 1 was closed when the process started, before Rust's runtime put
/// `/dev/null` there.
static STDOUT_CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static RECORD_STDOUT_AT_START: extern "C" fn() = record_stdout_at_start;

#[cfg(target_os = "linux")]
extern "C" fn record_stdout_at_start() {
    // SAFETY: `fcntl(F_GETFD)` only reads the descriptor table; it fails (EBADF) on a closed one.
    if unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) } == -1 {
        STDOUT_CLOSED_AT_START.store(true, Ordering::Relaxed);
    }
}

/// Standard output refused the bytes: `stdout: cannot write <what> (<reason>)`.
#[derive(Debug)]
pub struct OutputError {
    what: &'static str,
    source: std::io::Error,
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stdout: cannot write {} ({})", self.what, self.source)
    }
}

/// The I/O error is part of the message, not a separate cause, so `{:#}` does not repeat it.
impl std::error::Error for OutputError {}

/// Writes `bytes` to standard output and flushes them; `what` names them in the error.
pub fn stdout(bytes: impl AsRef<[u8]>, what: &'static str) -> Result<(), OutputError> {
    if STDOUT_CLOSED_AT_START.load(Ordering::Relaxed) {
        return Err(OutputError {
            what,
            source: std::io::Error::other("standard output was closed when projectfile started"),
        });
    }
    let mut out = std::io::stdout().lock();
    out.write_all(bytes.as_ref())
        .and_then(|()| out.flush())
        .map_err(|source| OutputError { what, source })
}

/// Writes `value` as one line of JSON on standard output (`what` names it in the error).
pub fn json(value: &impl serde::Serialize, what: &'static str) -> anyhow::Result<()> {
    let mut line = serde_json::to_string(value)?;
    line.push('\n');
    Ok(stdout(&line, what)?)
}

/// Writes `line` and a line break to standard error, best effort, in one write: standard error
/// is unbuffered, and a line formatted straight to it would go out a piece at a time (one system
/// call each, and pieces another process's lines could come between).
pub fn stderr(line: impl std::fmt::Display) {
    let line = format!("{line}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// A text buffer for a command's human output, written at once by [`stdout`].
#[derive(Default)]
pub struct Text(String);

impl Text {
    /// Appends one line.
    pub fn line(&mut self, line: impl std::fmt::Display) {
        use std::fmt::Write as _;
        let _ = writeln!(self.0, "{line}");
    }

    /// Writes the text to standard output; `what` names it in the error.
    pub fn print(&self, what: &'static str) -> Result<(), OutputError> {
        stdout(&self.0, what)
    }
}
