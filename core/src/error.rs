//! The error type of the core crate: one enum, every variant names the path it is about and the
//! reason in one sentence, so a host can print `error: <path>: <reason>` and nothing else.

use std::path::PathBuf;

/// Result alias used throughout the core crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while planning, projecting or releasing.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operating-system call failed on `path`.
    #[error("{}: {action}: {source}", path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A path between the workspace root and the target, or the target itself, is a symlink.
    #[error("{}: refusing to write through a symlink ({detail})", path.display())]
    Symlink { path: PathBuf, detail: String },
    /// The target exists but is not what we can safely edit (a directory, a device, a hard-linked
    /// file whose other names would be split from it).
    #[error("{}: {reason}", path.display())]
    Unsafe { path: PathBuf, reason: String },
    /// A session block in `path` is malformed; the file was left untouched.
    #[error("{}:{line}: {reason}; the file was left untouched", path.display())]
    Malformed {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    /// The ledger under the state directory could not be read or understood.
    #[error("{}: ledger is unreadable: {reason}", path.display())]
    Ledger { path: PathBuf, reason: String },
    /// The request itself is invalid (bad namespace, bad relative path, unsupported input).
    #[error("{}: {reason}", subject)]
    Invalid { subject: String, reason: String },
    /// The provider refused the session request.
    #[error("{provider}: {reason}")]
    Provider { provider: String, reason: String },
    /// Another process held the workspace lock longer than we were asked to wait; nothing was
    /// changed.
    #[error("{}: {reason}", path.display())]
    Busy { path: PathBuf, reason: String },
    /// The host required delivery (`--require-delivery`) and the CLI's discovery profile says the
    /// session text would not reach the model; everything the session projected was undone.
    #[error("{}: {reason}", path.display())]
    Undelivered { path: PathBuf, reason: String },
    /// The workspace folder a lease was taken in is no longer where it was recorded (moved
    /// elsewhere or deleted) and was not found beside it; nothing was changed. `path` is where
    /// it was last seen.
    #[error("{}: {reason}", path.display())]
    WorkspaceLost { path: PathBuf, reason: String },
}

impl From<projectfile_provider::Error> for Error {
    fn from(error: projectfile_provider::Error) -> Self {
        match error {
            projectfile_provider::Error::Invalid { subject, reason } => {
                Error::Invalid { subject, reason }
            }
            projectfile_provider::Error::Provider { provider, reason } => {
                Error::Provider { provider, reason }
            }
        }
    }
}

impl Error {
    /// Shorthand for an [`Error::Io`].
    pub fn io(path: impl Into<PathBuf>, action: &'static str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            action,
            source,
        }
    }

    /// Shorthand for an [`Error::Invalid`].
    pub fn invalid(subject: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Invalid {
            subject: subject.into(),
            reason: reason.into(),
        }
    }

    /// The path this error is about, when it is about one.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Error::Io { path, .. }
            | Error::Symlink { path, .. }
            | Error::Unsafe { path, .. }
            | Error::Malformed { path, .. }
            | Error::Ledger { path, .. }
            | Error::Busy { path, .. }
            | Error::Undelivered { path, .. }
            | Error::WorkspaceLost { path, .. } => Some(path),
            // A value refused is about a path when it names one (`/proc/<pid>` for a holder).
            Error::Invalid { subject, .. } if subject.starts_with('/') => {
                Some(std::path::Path::new(subject))
            }
            Error::Invalid { .. } | Error::Provider { .. } => None,
        }
    }

    /// A short stable machine-readable kind, used in the CLI's JSON error object.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Io { .. } => "io",
            Error::Symlink { .. } => "symlink",
            Error::Unsafe { .. } => "unsafe_target",
            Error::Malformed { .. } => "malformed_block",
            Error::Ledger { .. } => "ledger",
            Error::Invalid { .. } => "invalid",
            Error::Provider { .. } => "provider",
            Error::Busy { .. } => "busy",
            Error::Undelivered { .. } => "undelivered",
            Error::WorkspaceLost { .. } => "workspace_lost",
        }
    }
}
