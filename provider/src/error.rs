//! The error of the provider contract: a request or a plan a provider refuses, naming what it is
//! about and why in one sentence (`<subject>: <reason>`). Core converts it into its own error
//! with `From`, keeping the variant's meaning.

/// Result alias of the provider contract.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a provider, or a contract type's validation, refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The input is invalid (a bad namespace, relative path or skill name, a configuration that
    /// is not a JSON object).
    #[error("{subject}: {reason}")]
    Invalid { subject: String, reason: String },
    /// The provider cannot take the session request.
    #[error("{provider}: {reason}")]
    Provider { provider: String, reason: String },
}

impl Error {
    /// Shorthand for an [`Error::Invalid`].
    pub fn invalid(subject: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Invalid {
            subject: subject.into(),
            reason: reason.into(),
        }
    }
}
