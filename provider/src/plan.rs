//! Plan types: what a provider asks core to project for one session, as plain data.
//!
//! A [`Plan`] names every path it touches relative to the destination root (the workspace, or a
//! private runtime), says what kind of projection each one is, and carries the launch arguments and
//! environment the CLI must be started with. Core validates and applies plans; providers never touch
//! the file system.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::error::{Error, Result};

/// The namespace that names our markers: `<!-- BEGIN {ns}-session-instructions … -->` and the
/// skill marker file `.{ns}-managed`. Default `agentworks`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Namespace(String);

impl Namespace {
    /// The default namespace, as the earlier Go implementation wrote it.
    pub const DEFAULT: &'static str = "agentworks";

    /// Validates a namespace: 1 to 64 ASCII letters, digits, `.`, `_` or `-`, starting with a letter
    /// or digit. Anything else could change how a marker line parses.
    pub fn new(text: impl Into<String>) -> Result<Self> {
        let text = text.into();
        let valid = !text.is_empty()
            && text.len() <= 64
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
            && text.as_bytes()[0].is_ascii_alphanumeric();
        if valid {
            Ok(Namespace(text))
        } else {
            Err(Error::invalid(
                format!("namespace {text:?}"),
                "a namespace is 1 to 64 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit",
            ))
        }
    }

    /// The namespace text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name of the marker file placed in every projected skill folder.
    pub fn skill_marker(&self) -> String {
        format!(".{}-managed", self.0)
    }
}

impl Default for Namespace {
    fn default() -> Self {
        Namespace(Self::DEFAULT.to_string())
    }
}

impl TryFrom<String> for Namespace {
    type Error = Error;
    fn try_from(value: String) -> Result<Self> {
        Namespace::new(value)
    }
}

impl From<Namespace> for String {
    fn from(value: Namespace) -> String {
        value.0
    }
}

/// What kind of entry a path is, as seen without following symlinks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// Nothing there.
    Missing,
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (never followed).
    Symlink,
    /// Anything else (socket, device, fifo), or a path whose parent is not a plain directory.
    Other,
}

/// A validated path relative to the destination root, with `/` separators.
///
/// It is never empty, never absolute, and holds no `.`, `..` or empty components, no NUL and no
/// control characters, so joining it to the root can never leave the root lexically.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(try_from = "String", into = "String")]
pub struct RelPath(String);

impl RelPath {
    /// Validates `text` as a relative path.
    pub fn new(text: impl Into<String>) -> Result<Self> {
        let text = text.into();
        let refuse = |reason: &str| Err(Error::invalid(format!("{text:?}"), reason.to_string()));
        if text.is_empty() {
            return refuse("a projected path must not be empty");
        }
        if text.starts_with('/') {
            return refuse("a projected path must be relative to the workspace");
        }
        if text.chars().any(|c| c.is_control()) {
            return refuse("a projected path must not contain control characters");
        }
        for component in text.split('/') {
            match component {
                "" => return refuse("a projected path must not contain empty components"),
                "." | ".." => return refuse("a projected path must not contain `.` or `..`"),
                _ => {}
            }
        }
        Ok(RelPath(text))
    }

    /// The path as a string with `/` separators.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The components, root first.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }

    /// The parent directory, or `None` for a path directly under the root.
    pub fn parent(&self) -> Option<RelPath> {
        self.0
            .rfind('/')
            .map(|cut| RelPath(self.0[..cut].to_string()))
    }

    /// The last component.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// `self/child`, validated.
    pub fn join(&self, child: &str) -> Result<RelPath> {
        RelPath::new(format!("{}/{}", self.0, child))
    }

    /// Every ancestor directory of this path, shallowest first (excluding the root and the path).
    pub fn ancestors(&self) -> Vec<RelPath> {
        let mut out = Vec::new();
        let mut at = 0;
        while let Some(offset) = self.0[at..].find('/') {
            let end = at + offset;
            out.push(RelPath(self.0[..end].to_string()));
            at = end + 1;
        }
        out
    }
}

impl TryFrom<String> for RelPath {
    type Error = Error;
    fn try_from(value: String) -> Result<Self> {
        RelPath::new(value)
    }
}

impl From<RelPath> for String {
    fn from(value: RelPath) -> String {
        value.0
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// The session block appended to a shared file (AGENTS.md, `.pi/APPEND_SYSTEM.md`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockProjection {
    /// The shared file, relative to the destination root.
    pub path: RelPath,
    /// The text between the markers.
    pub body: String,
}

/// What an owned file is for; it decides how its receipt reads and whether the content is
/// generated configuration (removed only when recognisably ours).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnedRole {
    /// The session text in a file of its own (Cursor's `mlp-system.mdc`).
    Instructions,
    /// MCP server configuration.
    McpConfig,
    /// CLI configuration.
    CliConfig,
    /// Hooks configuration.
    HooksConfig,
    /// A hook script the hooks configuration runs.
    HookScript,
    /// A subagent definition the CLI reads from the project (Claude's `.claude/agents/<name>.md`).
    Subagent,
    /// A command (slash command) the CLI reads from the project (`.claude/commands/<name>.md`,
    /// `.cursor/commands/<name>.md`).
    Command,
}

/// A uniquely named file written whole, counted across sessions, prior content restored by the last
/// session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnedFileProjection {
    /// The file, relative to the destination root.
    pub path: RelPath,
    /// The whole content we write.
    pub content: String,
    /// Mode bits for the file (e.g. `0o755` for a hook script); `None` keeps the prior file's
    /// mode, or the default for a new file.
    pub mode: Option<u32>,
    /// What the file is for.
    pub role: OwnedRole,
}

/// What kind of marker to create.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkerKind {
    /// An empty directory.
    Dir,
    /// An empty file.
    File,
}

/// A file or folder whose presence we create and count (Cursor's temporary `.git`). It is created
/// only when the path is absent, and removed only by the last session of those that created it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarkerProjection {
    /// The marker, relative to the destination root.
    pub path: RelPath,
    /// File or directory.
    pub kind: MarkerKind,
}

/// A file written in the session's private area under the state directory, never in the project
/// (Claude's `--system-prompt-file`). Removed on release.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrivateFile {
    /// The file name inside the session's private directory.
    pub name: String,
    /// The content.
    pub content: String,
}

/// One launch argument.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LaunchArg {
    /// A literal argument.
    Literal(String),
    /// The absolute path of the named [`PrivateFile`], filled in by core.
    PrivateFilePath(String),
    /// `<flag>=<absolute path of the named PrivateFile>` as ONE argument, for a CLI whose flag
    /// takes several values and would read the next argument as another one (Claude's
    /// `--mcp-config`).
    FlagWithPrivateFile {
        /// The flag, e.g. `--mcp-config`.
        flag: String,
        /// The private file's name.
        name: String,
    },
    /// `<prefix><absolute path of the named PrivateFile>` as ONE argument, for a CLI that marks a
    /// value as a file to read by a prefix (Copilot's `--additional-mcp-config @<file>`).
    PrefixedPrivateFile {
        /// The prefix, e.g. `@`.
        prefix: String,
        /// The private file's name.
        name: String,
    },
}

impl LaunchArg {
    /// The private file this argument names, if any.
    pub fn private_file(&self) -> Option<&str> {
        match self {
            LaunchArg::Literal(_) => None,
            LaunchArg::PrivateFilePath(name)
            | LaunchArg::FlagWithPrivateFile { name, .. }
            | LaunchArg::PrefixedPrivateFile { name, .. } => Some(name),
        }
    }

    /// The argument, with `path` giving the absolute path of a private file by its name.
    pub fn render(&self, path: impl Fn(&str) -> String) -> String {
        match self {
            LaunchArg::Literal(text) => text.clone(),
            LaunchArg::PrivateFilePath(name) => path(name),
            LaunchArg::FlagWithPrivateFile { flag, name } => format!("{flag}={}", path(name)),
            LaunchArg::PrefixedPrivateFile { prefix, name } => format!("{prefix}{}", path(name)),
        }
    }
}

/// The value of one environment variable a plan sets for the CLI: literal, or a path core fills
/// in (the receipt's `env` shows the path), like [`LaunchArg`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvValue {
    /// A literal value (`ENABLE_TOOL_SEARCH=false`).
    Literal(String),
    /// The absolute path of the named [`PrivateFile`] (opencode's `OPENCODE_CONFIG=<file>`).
    PrivateFilePath(String),
    /// The absolute path of the session's private directory, which holds its private files and
    /// nothing else (Copilot's `COPILOT_CUSTOM_INSTRUCTIONS_DIRS=<dir>`, searched for
    /// `*.instructions.md`). Valid only in a plan that writes a private file.
    PrivateDir,
}

impl EnvValue {
    /// The private file this value names, if any.
    pub fn private_file(&self) -> Option<&str> {
        match self {
            EnvValue::PrivateFilePath(name) => Some(name),
            EnvValue::Literal(_) | EnvValue::PrivateDir => None,
        }
    }

    /// The value, with `dir` the session's private directory.
    pub fn render(&self, dir: &std::path::Path) -> String {
        match self {
            EnvValue::Literal(text) => text.clone(),
            EnvValue::PrivateFilePath(name) => dir.join(name).display().to_string(),
            EnvValue::PrivateDir => dir.display().to_string(),
        }
    }
}

impl From<&str> for EnvValue {
    fn from(value: &str) -> Self {
        EnvValue::Literal(value.to_string())
    }
}

impl From<String> for EnvValue {
    fn from(value: String) -> Self {
        EnvValue::Literal(value)
    }
}

/// A JSON file the project may already have, into whose object under `key` core merges the
/// session's `entries` for the session (Cursor's `.cursor/mcp.json`, key `mcpServers`).
///
/// Core reads the project's own file (or, while sessions run, the prior it took over), refuses a
/// name both define, and projects the result as an owned file: the project's exact bytes are
/// taken over and come back at the last release, and an edit made during the session is set
/// aside, as for every owned file. With `replace`, the file holds the session's entries alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedJsonProjection {
    /// The file, relative to the destination root.
    pub path: RelPath,
    /// The top-level key whose object is merged (`mcpServers`).
    pub key: String,
    /// The session's entries, by name.
    pub entries: serde_json::Map<String, serde_json::Value>,
    /// Ignore the project's own entries: the file holds the session's alone.
    pub replace: bool,
    /// What the file is for.
    pub role: OwnedRole,
    /// Top-level entries a file the sessions make themselves (no project file, or `replace`)
    /// starts with: what the CLI would otherwise write into it on reading it (Qwen Code adds its
    /// settings format's `"$version"`), which would leave the file no longer provably ours. Never
    /// added to the project's own file, whose format the CLI reads as it is.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub created_with: serde_json::Map<String, serde_json::Value>,
}

/// How the session text reaches the CLI, so a receipt and the conformance suite can say where to
/// look for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "via")]
pub enum SessionTextCarrier {
    /// In the block of this file.
    Block { path: RelPath },
    /// In this owned file.
    OwnedFile { path: RelPath },
    /// In a private file passed on the command line.
    LaunchArgument { private_file: String },
    /// In a private file the CLI finds through the environment variable `var` of the receipt's
    /// `env` (opencode's instructions named in a private `OPENCODE_CONFIG`, Copilot's
    /// `COPILOT_CUSTOM_INSTRUCTIONS_DIRS`).
    Environment { private_file: String, var: String },
    /// Not projected at all: the host must deliver it another way.
    NotProjected { reason: String },
}

/// A skill to project: a folder copied whole into the CLI's skills folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillProjection {
    /// The skills folder of the CLI (e.g. `.agents/skills`).
    pub skills_dir: RelPath,
    /// The skill's folder name inside it.
    pub name: String,
    /// Where the skill's files are read from.
    pub source: std::path::PathBuf,
}

/// The longest name accepted for a skill, subagent or command, in bytes: the names made from it
/// must fit a file name's 255 bytes on Linux too (the file's extension, such as `.agent.md`, and
/// the temporary name `.{name}.projectfile-tmp.{16 hex}` a write goes through, 34 bytes more).
pub const MAX_SKILL_NAME_BYTES: usize = 200;

/// Refuses a skill name that is not one plain, visible folder name: empty, longer than
/// [`MAX_SKILL_NAME_BYTES`],
/// holding `/` or `\`, `..`, a control character, starting with `.` (hidden names are skipped by
/// the CLIs' skill loaders and are where our temporary folders live), or holding `.projectfile-`
/// (the infix of our temporary and prior names, so one skill's leftovers never match another's).
pub fn validate_skill_name(name: &str) -> Result<()> {
    validate_entry_name("skill", name)
}

/// [`validate_skill_name`]'s rules for any entry a session projects under a name of its own into
/// a folder the CLI reads (`what`: `skill`, `subagent`, `command`), named in the refusal.
pub fn validate_entry_name(what: &str, name: &str) -> Result<()> {
    let refuse = |reason: &str| {
        Err(Error::invalid(
            format!("{what} name {name:?}"),
            format!("{reason}; nothing was written"),
        ))
    };
    if name.is_empty() {
        return refuse(&format!("a {what} name must not be empty"));
    }
    if name.len() > MAX_SKILL_NAME_BYTES {
        return refuse(&format!(
            "a {what} name must be at most {MAX_SKILL_NAME_BYTES} bytes (the files and temporary names made from it must fit the file system's 255)"
        ));
    }
    if name.contains('/') || name.contains('\\') {
        return refuse(&format!(
            "a {what} name is one plain name: it must not contain '/' or '\\' (no absolute or nested paths)"
        ));
    }
    if name.contains("..") {
        return refuse(&format!("a {what} name must not contain '..'"));
    }
    if name.chars().any(char::is_control) {
        return refuse(&format!(
            "a {what} name must not contain control characters"
        ));
    }
    if name.starts_with('.') {
        return refuse(&format!(
            "a {what} name must not start with '.' (hidden names are not read by the CLIs)"
        ));
    }
    if name.contains(".projectfile-") {
        return refuse(&format!(
            "a {what} name must not contain '.projectfile-' (reserved for our temporary names)"
        ));
    }
    Ok(())
}

/// Everything a provider asks for, for one session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Blocks appended to shared files.
    pub blocks: Vec<BlockProjection>,
    /// Files written whole and owned while the session lives.
    pub owned_files: Vec<OwnedFileProjection>,
    /// JSON files whose object core merges the session's entries into (projected as owned files).
    pub merged_json: Vec<MergedJsonProjection>,
    /// Files or folders whose presence is created and counted.
    pub markers: Vec<MarkerProjection>,
    /// Skills copied into the CLI's skills folder.
    pub skills: Vec<SkillProjection>,
    /// Files in the session's private area.
    pub private_files: Vec<PrivateFile>,
    /// Arguments to append to the CLI's command line.
    pub launch_args: Vec<LaunchArg>,
    /// Environment variables to set for the CLI (a value may be a private file's path).
    pub env: Vec<(String, EnvValue)>,
    /// Where the session text goes.
    pub session_text: Option<SessionTextCarrier>,
    /// Plain sentences for the receipt (e.g. why a path was chosen).
    pub notes: Vec<String>,
}
