//! The JSON receipts of the `projectfile` commands, with their versioned schema names.
//!
//! Every command's `--json` output is exactly one object whose `"schema"` field names its shape
//! and version (`projectfile.acquire.v1`, …). The shapes of `acquire`, `release`, `status` and
//! `strip-stale` are core's own receipt types ([`projectfile_core::projector`]); this module adds
//! the facade's: [`ProvidersReceipt`], [`ResolveReceipt`], [`FragmentsReceipt`] and
//! [`ErrorReceipt`]. `run --json` prints an acquire receipt before the command starts.
//!
//! Stability: a `v1` shape only grows (new fields, new string values where documented as open);
//! renaming or removing a field, or changing its type, ships as `v2`. `docs/receipts.md`
//! documents every field; `docs/schema/*.json` are JSON Schemas generated from these very types
//! (with the `schema` feature: `json_schemas`, written by `cargo xtask codegen`).

use projectfile_core::Capabilities;
use projectfile_core::guidance::{DiscoveryProfile, GuidanceResolution, PromptFragment};
use serde::Serialize;

/// The schema name of every receipt, as it appears in its `"schema"` field.
pub mod schema {
    pub use projectfile_core::projector::schema::{ACQUIRE, RELEASE, STATUS, STRIP_STALE};

    /// [`super::ProvidersReceipt`].
    pub const PROVIDERS: &str = "projectfile.providers.v1";
    /// [`super::ResolveReceipt`].
    pub const RESOLVE: &str = "projectfile.resolve.v1";
    /// [`super::FragmentsReceipt`].
    pub const FRAGMENTS: &str = "projectfile.fragments.v1";
    /// [`super::ErrorReceipt`].
    pub const ERROR: &str = "projectfile.error.v1";

    /// Every schema name, in the order `docs/receipts.md` documents them.
    pub const ALL: [&str; 8] = [
        ACQUIRE,
        RELEASE,
        STATUS,
        STRIP_STALE,
        PROVIDERS,
        RESOLVE,
        FRAGMENTS,
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

/// What went wrong, for a host.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorDetail {
    /// A stable machine-readable kind: `io`, `symlink`, `unsafe_target`, `malformed_block`,
    /// `ledger`, `invalid`, `provider` (core's errors), or `usage` (anything the command line
    /// itself refused: an unknown provider, an unreadable prompt file, …).
    pub kind: &'static str,
    /// The path the error is about, when it is about one.
    pub path: Option<String>,
    /// The one-sentence message, exactly as printed on stderr after `error: `.
    pub message: String,
}

/// Any command's `--json` output when it fails (exit code 1).
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
    pub fn usage(message: impl Into<String>) -> ErrorReceipt {
        ErrorReceipt {
            schema: schema::ERROR,
            error: ErrorDetail {
                kind: "usage",
                path: None,
                message: message.into(),
            },
        }
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
