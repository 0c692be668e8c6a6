//! Every JSON receipt the `projectfile` commands print, with its versioned schema name: the one
//! place their shapes and names are defined.
//!
//! Every command's `--json` output is exactly one object whose `"schema"` field names its shape
//! and version (`projectfile.acquire.v1`, …): [`AcquireReceipt`], [`ReleaseReceipt`],
//! [`StatusReport`], [`StripReport`], [`ProvidersReceipt`], [`ResolveReceipt`],
//! [`FragmentsReceipt`], [`RenderReceipt`], the reader role's [`ReaderModeReceipt`],
//! [`ReaderWrapReceipt`], [`ReaderStripReceipt`] and [`ReaderHintReceipt`], the runtime commands'
//! [`RemoveRuntimeReceipt`], [`RuntimeIdentityReceipt`] and [`CanResumeReceipt`],
//! [`CompletionsReceipt`] and [`ErrorReceipt`]. `run --json` prints an acquire receipt before the
//! command starts.
//!
//! Stability: a `v1` shape only grows (new fields, new values of [`FileAction`] and the other
//! enums where documented as open); renaming or removing a field, or changing its type, ships as
//! `v2`. `docs/receipts.md` documents every field; `docs/schema/*.json` are JSON Schemas
//! generated from these very types (with the `schema` feature: [`json_schemas`], written by
//! `cargo xtask codegen`).

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::guidance::{DeliveryVerdict, DiscoveryProfile, GuidanceResolution, PromptFragment};
use crate::holder::{Holder, Liveness};
pub use crate::ledger::KeptRecord;
use crate::plan::{RelPath, SessionTextCarrier};
use crate::provider::{Capabilities, Probes, Provider, ProviderExt};
use crate::reader::{Mode, Notice};
use crate::runtime::{ResumeCheck, RuntimeIdentity};

/// The schema name of every receipt, as it appears in its `"schema"` field.
pub mod schema {
    /// [`super::AcquireReceipt`].
    pub const ACQUIRE: &str = "projectfile.acquire.v1";
    /// [`super::ReleaseReceipt`].
    pub const RELEASE: &str = "projectfile.release.v1";
    /// [`super::StatusReport`].
    pub const STATUS: &str = "projectfile.status.v1";
    /// [`super::StripReport`].
    pub const STRIP_STALE: &str = "projectfile.strip_stale.v1";
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

/// What kind of projection a path of a receipt is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// Our marked block in a shared file.
    Block,
    /// A file written whole and owned while sessions run.
    Owned,
    /// A file or folder whose presence we created.
    Marker,
    /// A projected skill folder.
    Skill,
    /// A directory we created on the way to a projected path.
    Dir,
    /// A file in the session's private directory under the state directory.
    Private,
}

/// What happened to a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileAction {
    /// A block was appended to a file that existed.
    Inserted,
    /// A projection of ours was brought up to date.
    Refreshed,
    /// A projection of ours already held exactly this.
    Unchanged,
    /// Created: the path did not exist.
    Created,
    /// The project's own file was moved aside (into the priors folder) and ours written there.
    Replaced,
    /// A private file was written.
    Written,
    /// The project's own path was left alone (a marker that already existed).
    Exists,
    /// Already ours, counted once more.
    Held,
    /// Ours, removed.
    Removed,
    /// The block was taken out and the rest of the file kept, or the prior content put back.
    Restored,
    /// Not provably ours any more (the user changed it): left where the user put it.
    Kept,
    /// A same-named folder of the project's was moved into the priors folder and ours put there.
    TakenOver,
    /// A leftover of ours whose record was lost, proven ours by its own marker.
    Reclaimed,
}

/// The enums of the receipts print as their JSON strings.
macro_rules! receipt_strings {
    ($ty:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            /// The string the JSON receipt holds.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $text),+
                }
            }
        }

        impl PartialEq<&str> for $ty {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }
    };
}

receipt_strings!(FileKind {
    Block => "block",
    Owned => "owned",
    Marker => "marker",
    Skill => "skill",
    Dir => "dir",
    Private => "private",
});

receipt_strings!(FileAction {
    Inserted => "inserted",
    Refreshed => "refreshed",
    Unchanged => "unchanged",
    Created => "created",
    Replaced => "replaced",
    Written => "written",
    Exists => "exists",
    Held => "held",
    Removed => "removed",
    Restored => "restored",
    Kept => "kept",
    TakenOver => "taken_over",
    Reclaimed => "reclaimed",
});

receipt_strings!(PriorState {
    Stashed => "stashed",
    InPlace => "in_place",
});

/// One path the receipt reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileReceipt {
    /// Relative to the workspace (or absolute, for private files).
    pub path: String,
    /// `block`, `owned`, `marker`, `skill`, `dir` or `private`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub kind: FileKind,
    /// What happened: `inserted`, `refreshed`, `unchanged`, `created`, `replaced`, `written`,
    /// `exists` (a project's own path left alone), `held` (already ours, counted once more),
    /// `removed`, `restored`, `kept` (not provably ours any more: left where the user put it);
    /// for skills also `taken_over` (a same-named folder moved into the priors folder) and
    /// `reclaimed` (a leftover of ours whose record was lost, proven by its marker's manifest).
    /// An open set: a later `v1` may add values.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub action: FileAction,
}

/// A stale lease cleaned before this operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StaleCleaned {
    /// Its token.
    pub token: String,
    /// Its provider.
    pub provider: String,
    /// Why its holder counts as dead.
    pub reason: String,
}

/// A problem met while cleaning that did not stop the operation (the path is left as it was).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Warning {
    /// The path concerned.
    pub path: String,
    /// One sentence.
    pub message: String,
}

/// An undo that could not be done: the entry stays recorded and the next start retries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PendingUndo {
    /// The path concerned (absolute).
    pub path: String,
    /// Why it could not be undone (the error, one sentence).
    pub reason: String,
}

/// What `acquire` did.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcquireReceipt {
    /// [`schema::ACQUIRE`].
    pub schema: &'static str,
    /// The lease token; release with it.
    pub token: String,
    /// The provider.
    pub provider: String,
    /// The canonical workspace.
    pub workspace: PathBuf,
    /// The lease holder.
    pub holder: Holder,
    /// Every path touched.
    pub files: Vec<FileReceipt>,
    /// Arguments to append to the CLI's command line.
    pub launch_args: Vec<String>,
    /// Environment to set for the CLI.
    pub env: BTreeMap<String, String>,
    /// Where the session text went.
    pub session_text: Option<SessionTextCarrier>,
    /// Whether the session text reaches the model through that route, judged by the provider's
    /// discovery profile over the destination as it stands after projection (the same code as
    /// `resolve --as`), for a CLI started in the destination. Launch arguments the route needs
    /// (Codex's raised budget) are in its `launch_args` and already in `launch_args` above.
    pub delivery: DeliveryVerdict,
    /// What core probed.
    pub probes: Probes,
    /// Plain sentences from the provider.
    pub notes: Vec<String>,
    /// Stale leases cleaned first.
    pub stale_cleaned: Vec<StaleCleaned>,
    /// User bytes set aside or left in place during this operation.
    pub kept: Vec<KeptRecord>,
    /// Cleaning problems that did not stop the operation.
    pub warnings: Vec<Warning>,
    /// `run` in a linked runtime: the runtime, its links and the sandbox (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linked: Option<crate::runtime::LinkedReceipt>,
    /// `true` for `--dry-run`: what a start would do, with nothing done (no lease: `token` is
    /// `dry-run`, which releases nothing). Absent otherwise.
    #[serde(default, skip_serializing_if = "is_false")]
    pub dry_run: bool,
    /// `run --dry-run`: the command line `run` would start (CMD, then the launch arguments).
    /// Absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
}

/// `serde`'s test for leaving a `false` flag out of a receipt.
fn is_false(flag: &bool) -> bool {
    !*flag
}

/// What `release` did.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReleaseReceipt {
    /// [`schema::RELEASE`].
    pub schema: &'static str,
    /// The token asked for.
    pub token: String,
    /// Whether a live lease was released (false: unknown or already released; not an error).
    pub released: bool,
    /// The workspace, when the token named one.
    pub workspace: Option<PathBuf>,
    /// Every path touched.
    pub files: Vec<FileReceipt>,
    /// User bytes set aside or left in place.
    pub kept: Vec<KeptRecord>,
    /// Stale leases cleaned along the way.
    pub stale_cleaned: Vec<StaleCleaned>,
    /// Cleaning problems that did not stop the release.
    pub warnings: Vec<Warning>,
    /// What could not be undone now (cleanup deferred to the next start): the CLI exits 3.
    /// Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingUndo>,
}

/// One lease as `status` shows it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LeaseStatus {
    /// Its token.
    pub token: String,
    /// Its provider.
    pub provider: String,
    /// Its holder.
    pub holder: Holder,
    /// Whether the holder lives.
    pub liveness: Liveness,
    /// Seconds since the epoch.
    pub acquired_at: u64,
    /// The paths it holds.
    pub paths: Vec<RelPath>,
}

/// One projected path as `status` shows it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EntryStatus {
    /// The path.
    pub path: RelPath,
    /// `block`, `owned`, `marker` or `skill`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub kind: FileKind,
    /// How many leases hold it.
    pub holders: usize,
    /// How many of them are alive.
    pub live_holders: usize,
}

/// Where the prior content of a taken-over path is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorState {
    /// Whole in its keeping place (the priors folder in the workspace).
    Stashed,
    /// Not moved yet: what stands at the path is still the prior.
    InPlace,
}

/// A path we took over (the project's own file or folder, or an earlier version's), whose prior
/// content is kept until the last session ends.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TakenOver {
    /// The path, relative to the workspace.
    pub path: RelPath,
    /// Where its prior content is kept (absolute: inside the workspace's priors folder).
    pub stash: PathBuf,
    /// `stashed` (whole in the priors folder) or `in_place` (not moved yet: what stands at the
    /// path is still the prior).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub state: PriorState,
}

/// What `status` reports.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatusReport {
    /// [`schema::STATUS`].
    pub schema: &'static str,
    /// The canonical workspace.
    pub workspace: PathBuf,
    /// Leases.
    pub leases: Vec<LeaseStatus>,
    /// Projected paths.
    pub entries: Vec<EntryStatus>,
    /// Directories we created.
    pub created_dirs: Vec<RelPath>,
    /// Leftovers the next start would clean (tokens of dead leases, paths without live holders).
    pub stale: Vec<String>,
    /// User bytes set aside so far.
    pub kept: Vec<KeptRecord>,
    /// Paths taken over, and where their prior contents are kept.
    pub taken_over: Vec<TakenOver>,
    /// Undos that failed and wait for the next start, with the reason. Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingUndo>,
    /// What else is worth knowing: the path named another folder before (a deleted and
    /// re-created checkout), whose record is kept apart and not applied here. Absent when
    /// empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
}

/// What `strip-stale` did.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StripReport {
    /// [`schema::STRIP_STALE`].
    pub schema: &'static str,
    /// The canonical workspace.
    pub workspace: PathBuf,
    /// Leases cleaned.
    pub stale_cleaned: Vec<StaleCleaned>,
    /// Paths touched.
    pub files: Vec<FileReceipt>,
    /// User bytes set aside or left in place.
    pub kept: Vec<KeptRecord>,
    /// Problems that did not stop the cleaning.
    pub warnings: Vec<Warning>,
    /// What could not be undone now (cleanup deferred to the next start): the CLI exits 3.
    /// Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingUndo>,
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
    /// The options a host may set for a session (`--provider-option <name>.<option>=<value>`).
    pub options: Vec<crate::provider::ProviderOption>,
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
    /// The receipt listing `providers`, in their order.
    pub fn of(providers: &[Box<dyn Provider>]) -> ProvidersReceipt {
        ProvidersReceipt {
            schema: schema::PROVIDERS,
            providers: providers
                .iter()
                .map(|p| ProviderInfo {
                    name: p.name().to_string(),
                    capabilities: p.capabilities(),
                    discovery: p.discovery(),
                    cli_home_env: p.cli_home_env().map(str::to_string),
                    options: p.options(),
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
    /// The provider whose discovery profile was used (`--as`); absent for the default
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
    /// `ledger`, `invalid`, `provider`, `busy`, `undelivered` (`acquire --require-delivery`: the
    /// session text would not reach the model, nothing was left; core's errors, and files the
    /// command line reads),
    /// or `usage` (exit code 2: the arguments were refused before anything was done: an unknown
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
    pub fn from_core(error: &crate::Error) -> ErrorReceipt {
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
#[allow(clippy::unwrap_used)]
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

    #[test]
    fn kinds_and_actions_print_as_their_json_strings() {
        fn check<T: Serialize + std::fmt::Display>(all: &[T]) {
            for value in all {
                let json = serde_json::to_string(value).unwrap();
                assert_eq!(json, format!("\"{value}\""));
            }
        }
        check(FileKind::ALL);
        check(FileAction::ALL);
        check(PriorState::ALL);
        assert_eq!(FileAction::TakenOver.as_str(), "taken_over");
        assert_eq!(format!("{:<6}|", FileKind::Dir), "dir   |");
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
