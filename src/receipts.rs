//! The JSON receipts of the `projectfile` commands, with their versioned schema names.
//!
//! Every command's `--json` output is exactly one object whose `"schema"` field names its shape
//! and version (`projectfile.acquire.v1`, …). The shapes of `acquire`, `release`, `status` and
//! `strip-stale` are core's own receipt types ([`projectfile_core::projector`]); this module adds
//! the facade's: [`ProvidersReceipt`], [`ResolveReceipt`], [`FragmentsReceipt`],
//! [`RenderReceipt`], [`ReaderModeReceipt`], [`ReaderWrapReceipt`], [`ReaderStripReceipt`],
//! [`ReaderHintReceipt`], [`CompletionsReceipt`], [`ErrorReceipt`], and the runtime commands'
//! [`RemoveRuntimeReceipt`], [`RuntimeIdentityReceipt`] and [`CanResumeReceipt`].
//! `run --json` prints an acquire receipt before the command starts.
//!
//! Stability: a `v1` shape only grows (new fields, new string values where documented as open);
//! renaming or removing a field, or changing its type, ships as `v2`. `docs/receipts.md`
//! documents every field; `docs/schema/*.json` are JSON Schemas generated from these very types
//! (with the `schema` feature: `json_schemas`, written by `cargo xtask codegen`).

use projectfile_core::Capabilities;
use projectfile_core::guidance::{DiscoveryProfile, GuidanceResolution, PromptFragment};
use projectfile_core::reader::{Mode, Notice};
use projectfile_core::runtime::{ResumeCheck, RuntimeIdentity};
use serde::Serialize;
use std::path::PathBuf;

/// The schema name of every receipt, as it appears in its `"schema"` field.
pub mod schema {
    pub use projectfile_core::projector::schema::{ACQUIRE, RELEASE, STATUS, STRIP_STALE};

    /// [`super::ProvidersReceipt`].
    pub const PROVIDERS: &str = "projectfile.providers.v1";
    /// [`super::ResolveReceipt`].
    pub const RESOLVE: &str = "projectfile.resolve.v1";
    /// [`super::FragmentsReceipt`].
    pub const FRAGMENTS: &str = "projectfile.fragments.v1";
    /// [`super::RenderReceipt`].
    pub const RENDER: &str = "projectfile.render.v1";
    /// [`super::ReaderModeReceipt`].
    pub const READER_MODE: &str = "projectfile.reader_mode.v1";
    /// [`super::ReaderWrapReceipt`].
    pub const READER_WRAP: &str = "projectfile.reader_wrap.v1";
    /// [`super::ReaderStripReceipt`].
    pub const READER_STRIP: &str = "projectfile.reader_strip.v1";
    /// [`super::ReaderHintReceipt`].
    pub const READER_HINT: &str = "projectfile.reader_hint.v1";
    /// [`super::RemoveRuntimeReceipt`].
    pub const REMOVE_RUNTIME: &str = "projectfile.remove_runtime.v1";
    /// [`super::CompletionsReceipt`].
    pub const COMPLETIONS: &str = "projectfile.completions.v1";
    /// [`super::ErrorReceipt`].
    pub const ERROR: &str = "projectfile.error.v1";
    /// [`super::RuntimeIdentityReceipt`].
    pub const RUNTIME_IDENTITY: &str = "projectfile.runtime_identity.v1";
    /// [`super::CanResumeReceipt`].
    pub const CAN_RESUME: &str = "projectfile.can_resume.v1";

    /// Every schema name, in the order `docs/receipts.md` documents them.
    pub const ALL: [&str; 17] = [
        ACQUIRE,
        RELEASE,
        STATUS,
        STRIP_STALE,
        PROVIDERS,
        RESOLVE,
        FRAGMENTS,
        RENDER,
        READER_MODE,
        READER_WRAP,
        READER_STRIP,
        READER_HINT,
        REMOVE_RUNTIME,
        RUNTIME_IDENTITY,
        CAN_RESUME,
        COMPLETIONS,
        ERROR,
    ];
}

/// One provider compiled into this build.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProviderInfo {
    /// The name used on the command line (`--provider`, `--as`).
    pub name: String,
    /// What it supports.
    pub capabilities: Capabilities,
    /// How its CLI discovers instruction files.
    pub discovery: DiscoveryProfile,
    /// The environment variable `run --private-cli-home` sets to give the CLI a private home
    /// (`CODEX_HOME`, …); `null` when the CLI has none (the flag is refused).
    pub cli_home_env: Option<String>,
}

/// `projectfile providers --json`.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProvidersReceipt {
    /// [`schema::PROVIDERS`].
    pub schema: &'static str,
    /// The providers compiled into this build, in a stable order.
    pub providers: Vec<ProviderInfo>,
}

impl ProvidersReceipt {
    /// The providers of this build.
    pub fn of_this_build() -> ProvidersReceipt {
        ProvidersReceipt {
            schema: schema::PROVIDERS,
            providers: crate::providers()
                .iter()
                .map(|p| ProviderInfo {
                    name: p.name().to_string(),
                    capabilities: p.capabilities(),
                    discovery: p.discovery(),
                    cli_home_env: p.cli_home_env().map(str::to_string),
                })
                .collect(),
        }
    }
}

/// `projectfile resolve --json`: the guidance resolution, with the provider it was resolved as.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResolveReceipt {
    /// [`schema::RESOLVE`].
    pub schema: &'static str,
    /// The provider whose discovery profile was used (`--as`); absent for the seed's default
    /// resolution.
    #[serde(rename = "as", skip_serializing_if = "Option::is_none")]
    pub as_provider: Option<String>,
    /// What loaded, in order, and what did not.
    #[serde(flatten)]
    pub resolution: GuidanceResolution,
}

/// `projectfile resolve --fragments`: one prompt fragment per kept source.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FragmentsReceipt {
    /// [`schema::FRAGMENTS`].
    pub schema: &'static str,
    /// The fragments, in the resolution's order.
    pub fragments: Vec<PromptFragment>,
}

/// `projectfile resolve --render --json`: the rendered guidance block.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RenderReceipt {
    /// [`schema::RENDER`].
    pub schema: &'static str,
    /// The block exactly as `resolve --render` prints it: empty when no guidance is active,
    /// otherwise ending with a newline.
    pub block: String,
}

/// `projectfile reader mode --json`: a turn's session mode.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReaderModeReceipt {
    /// [`schema::READER_MODE`].
    pub schema: &'static str,
    /// The session mode: `builder` or `run`.
    pub mode: Mode,
    /// Whether the turn is read-only (write grants dropped, the notice added).
    pub read_only: bool,
    /// The notice to put in front of the message; `null` for a read-write turn.
    pub notice: Option<Notice>,
    /// Whether the caller's access level may open a terminal.
    pub terminal_allowed: bool,
}

/// `projectfile reader wrap --json`: the message behind the reader notice.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReaderWrapReceipt {
    /// [`schema::READER_WRAP`].
    pub schema: &'static str,
    /// The notice used.
    pub notice: Notice,
    /// The notice followed by the message read on stdin, byte for byte.
    pub text: String,
}

/// `projectfile reader strip --json`: the message without its reader notice.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReaderStripReceipt {
    /// [`schema::READER_STRIP`].
    pub schema: &'static str,
    /// Whether the text started with a notice, which was removed.
    pub stripped: bool,
    /// The text read on stdin without its leading notice (unchanged when there was none).
    pub text: String,
}

/// `projectfile reader hint --json`: the refusal hint of a read-only session.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReaderHintReceipt {
    /// [`schema::READER_HINT`].
    pub schema: &'static str,
    /// The notice whose wording the hint uses.
    pub notice: Notice,
    /// The sentence the session repeats when it refuses a write.
    pub hint: String,
}

/// `projectfile remove-runtime --json`.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoveRuntimeReceipt {
    /// [`schema::REMOVE_RUNTIME`].
    pub schema: &'static str,
    /// The runtime directory (absolute).
    pub runtime: PathBuf,
    /// Whether it existed and was removed (`false`: there was nothing to remove).
    pub removed: bool,
}

/// `projectfile completions SHELL --json`.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompletionsReceipt {
    /// [`schema::COMPLETIONS`].
    pub schema: &'static str,
    /// The shell: `bash`, `zsh`, `fish`, `elvish` or `powershell`.
    pub shell: String,
    /// The completion script, as `completions SHELL` prints it.
    pub script: String,
}

/// `projectfile runtime identity --json`: the identity a launch records.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RuntimeIdentityReceipt {
    /// [`schema::RUNTIME_IDENTITY`].
    pub schema: &'static str,
    /// The identity (the same fields as `run --json`'s `linked.identity`).
    #[serde(flatten)]
    pub identity: RuntimeIdentity,
}

/// `projectfile runtime can-resume --json`.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CanResumeReceipt {
    /// [`schema::CAN_RESUME`].
    pub schema: &'static str,
    /// Whether the native session may resume; false: start a fresh one from the saved history.
    pub resume: bool,
    /// The identity the native session was recorded under.
    pub from: RuntimeIdentity,
    /// The identity of the new launch.
    pub to: RuntimeIdentity,
    /// Every rule, checked.
    pub checks: Vec<ResumeCheck>,
}

/// What went wrong, for a host.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorDetail {
    /// A stable machine-readable kind: `io`, `symlink`, `unsafe_target`, `malformed_block`,
    /// `ledger`, `invalid`, `provider` (core's errors, and files the command line reads), or
    /// `usage` (exit code 2: the arguments were refused before anything was done: an unknown
    /// provider, an empty prompt, `resolve --cwd` outside the workspace, a flag clap refused).
    pub kind: &'static str,
    /// The path the error is about, when it is about one.
    pub path: Option<String>,
    /// The one-sentence message, exactly as printed on stderr after `error: `.
    pub message: String,
}

/// Any command's `--json` output when it fails (exit code 1, or 2 for kind `usage`).
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorReceipt {
    /// [`schema::ERROR`].
    pub schema: &'static str,
    /// The error.
    pub error: ErrorDetail,
}

impl ErrorReceipt {
    /// The receipt for a core error.
    pub fn from_core(error: &projectfile_core::Error) -> ErrorReceipt {
        ErrorReceipt {
            schema: schema::ERROR,
            error: ErrorDetail {
                kind: error.kind(),
                path: error.path().map(|p| p.display().to_string()),
                message: error.to_string(),
            },
        }
    }

    /// The receipt for an error the command line raised itself.
    pub fn new(kind: &'static str, path: Option<String>, message: String) -> ErrorReceipt {
        ErrorReceipt {
            schema: schema::ERROR,
            error: ErrorDetail {
                kind,
                path,
                message,
            },
        }
    }

    /// The receipt for bad usage (kind `usage`, exit code 2).
    pub fn usage(message: impl Into<String>) -> ErrorReceipt {
        ErrorReceipt::new("usage", None, message.into())
    }
}

/// The JSON Schema (draft 2020-12, describing the serialized form) of every receipt, keyed by its
/// schema name, in [`schema::ALL`] order. Each schema's `"schema"` property is pinned to its name
/// with `const`, so a validator tells `v1` from `v2`.
#[cfg(feature = "schema")]
pub fn json_schemas() -> Vec<(&'static str, serde_json::Value)> {
    use projectfile_core::projector::{AcquireReceipt, ReleaseReceipt, StatusReport, StripReport};
    use serde_json::Value;

    fn one<T: schemars::JsonSchema>(name: &'static str, title: &str) -> (&'static str, Value) {
        let schema = schemars::generate::SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator()
            .into_root_schema_for::<T>();
        let mut value = schema.to_value();
        if let Some(object) = value.as_object_mut() {
            object.insert("title".into(), Value::from(format!("{name}: {title}")));
            if let Some(Value::Object(field)) = object
                .get_mut("properties")
                .and_then(|p| p.get_mut("schema"))
            {
                field.remove("type");
                field.insert("const".into(), Value::from(name));
            }
        }
        (name, value)
    }

    vec![
        one::<AcquireReceipt>(schema::ACQUIRE, "what `acquire` (and `run --json`) did"),
        one::<ReleaseReceipt>(schema::RELEASE, "what `release` did"),
        one::<StatusReport>(schema::STATUS, "what `status` reports"),
        one::<StripReport>(schema::STRIP_STALE, "what `strip-stale` did"),
        one::<ProvidersReceipt>(schema::PROVIDERS, "the providers of this build"),
        one::<ResolveReceipt>(schema::RESOLVE, "which guidance files are active"),
        one::<FragmentsReceipt>(schema::FRAGMENTS, "one prompt fragment per source"),
        one::<RenderReceipt>(schema::RENDER, "the rendered guidance block"),
        one::<ReaderModeReceipt>(schema::READER_MODE, "a turn's session mode"),
        one::<ReaderWrapReceipt>(schema::READER_WRAP, "a message behind the reader notice"),
        one::<ReaderStripReceipt>(schema::READER_STRIP, "a message without its reader notice"),
        one::<ReaderHintReceipt>(
            schema::READER_HINT,
            "the refusal hint of a read-only session",
        ),
        one::<RemoveRuntimeReceipt>(schema::REMOVE_RUNTIME, "what `remove-runtime` did"),
        one::<RuntimeIdentityReceipt>(
            schema::RUNTIME_IDENTITY,
            "the identity a linked launch records",
        ),
        one::<CanResumeReceipt>(schema::CAN_RESUME, "whether a native session may resume"),
        one::<CompletionsReceipt>(schema::COMPLETIONS, "a shell completion script"),
        one::<ErrorReceipt>(schema::ERROR, "why a command failed"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_name_is_versioned_and_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for name in schema::ALL {
            assert!(name.starts_with("projectfile."), "{name}");
            assert!(name.ends_with(".v1"), "{name}");
            assert!(seen.insert(name), "{name} twice");
        }
    }

    #[cfg(feature = "schema")]
    #[test]
    fn every_schema_pins_its_name() {
        let schemas = json_schemas();
        assert_eq!(schemas.len(), schema::ALL.len());
        for ((name, value), expected) in schemas.iter().zip(schema::ALL) {
            assert_eq!(*name, expected);
            assert_eq!(value["properties"]["schema"]["const"], *name, "{name}");
            let required = value["required"].as_array().cloned().unwrap_or_default();
            assert!(
                required.iter().any(|r| r == "schema"),
                "{name}: `schema` must be required"
            );
        }
    }
}
