//! Linked private runtimes: a stable directory per (user, project, session, provider, mode) with
//! `project/` linked to the real folder and, per launch, `output/` (a workflow step's output
//! folder) and `attached/<name>` (attached folders) linked to theirs.
//!
//! # Identity
//!
//! A [`RuntimeKey`] maps to `<root>/<user>/<project>/<session>/<provider>/<mode>`, each level an
//! exact, reversible encoding of one key component ([`encode_component`]): bytes outside
//! `[a-z0-9-]` (and a `.` at the start of a component) become `_xx` hex, so names are
//! filesystem-safe, readable, the same on case-insensitive file systems, and never `.`/`..`.
//! Because every component is encoded injectively into its own level, two different keys never
//! share a directory ([`RuntimeKey::from_relative_dir`] decodes a path back to its key), and the
//! same key always finds the same directory, so native resume survives restarts while a different
//! mode gets a different runtime. No hash is involved, so there is nothing to collide.
//!
//! # Session ids: one conversation, one identity
//!
//! [`SessionId::parse`] gives every spelling of one conversation the same canonical form, and the
//! runtime directory is derived from that form only:
//!
//! | given | canonical |
//! |---|---|
//! | `product-<UUID>` in any mix of upper and lower case | `product-<uuid>`, the UUID lower-cased (UUIDs compare without case) |
//! | `work:project:<id>` / `code:project:<id>` where `<id>` has the UUID form | the UUID lower-cased |
//! | any other `<id>` | kept exactly as given (`Crew-7` and `crew-7` are two projects) |
//! | `:<conversation key>` | kept exactly as given |
//! | the prefixes `work:project:`, `code:project:`, `product-` | lower case only; anything else is refused |
//!
//! So `product-6F9619FF-8B86-D011-B42D-00CF4FC964FF` and `product-6f9619ff-8b86-d011-b42d-00cf4fc964ff`
//! are one runtime. [`SessionId::as_str`] and the JSON form are the canonical text.
//!
//! # Links
//!
//! `project/` links the whole real folder; `output/` links a workflow step's output folder;
//! `attached/<name>` links an attached folder. The link operations live in core's private
//! `fsio::links`, which walks every level below the root (and the root itself) without
//! following a link; [`Runtime::launch`] opens the levels, takes the launch lock and leaves the
//! runtime holding exactly the links the launch asked for (see [`launch`]). Providers plan into
//! [`Runtime::project_root`] (the runtime itself), never into the linked project: fsio refuses to
//! write through a symlink, so a plan path under `project/` fails.
//!
//! # Resume
//!
//! [`RuntimeIdentity`] is what a launch records about where a native CLI session lives, and
//! [`can_resume`] says whether one recorded under one identity may resume under another (see
//! [`resume`]).

use std::ffi::OsStr;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fsio::links;
/// What a runtime link names, as read back from the file system.
pub use crate::fsio::links::{LinkRecord, WantedLink};
pub use crate::reader::Mode;

pub mod launch;
pub mod resume;

pub use launch::{
    AttachAccess, AttachedLink, Attachment, CLI_HOME_DIR, DEFAULT_LAUNCH_WAIT, Launch, LaunchLinks,
    LinkedReceipt, TEMP_DIR, private_cli_home_env,
};
pub use resume::{ResumeCheck, ResumeRule, ResumeVerdict, RuntimeIdentity, can_resume};

/// The name of the link to the real project folder inside a runtime.
pub const PROJECT_LINK: &str = "project";
/// The name of the link to a workflow step's output folder inside a runtime.
pub const OUTPUT_LINK: &str = "output";

/// The longest directory name most file systems accept (`NAME_MAX`).
const NAME_MAX: usize = 255;
/// The longest id or conversation key a [`SessionId`] accepts.
const PART_MAX: usize = 64;

/// Which conversation registry form a session id has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    /// `work:project:<id>`: a Crew's main chat.
    Work,
    /// `code:project:<id>`: a Code project's main chat.
    Code,
    /// `product-<uuid>`: an extra chat.
    Product,
}

/// A validated session id from the conversation registry, in its canonical form:
/// `work:project:<id>`, `code:project:<id>` or `product-<uuid>`, optionally followed by one
/// `:<conversation key>` (for example `work:project:42:review`). `<id>` and the key are 1 to 64
/// characters from `[A-Za-z0-9._-]`; `<uuid>` is the 8-4-4-4-12 hex form. A UUID is lower-cased
/// (see the module docs for the whole mapping), so two spellings of one UUID are one id.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionId {
    text: String,
    kind: SessionKind,
    id_start: usize,
    id_end: usize,
}

impl SessionId {
    /// Parses and validates `text` into its canonical form; anything but the forms above is
    /// refused.
    pub fn parse(text: &str) -> Result<SessionId> {
        let refuse = |reason: &str| {
            Err(Error::invalid(
                format!("session id {text:?}"),
                format!(
                    "{reason}; expected work:project:<id>, code:project:<id> or product-<uuid>, \
                     optionally followed by :<conversation key>"
                ),
            ))
        };
        let (kind, prefix) = if text.starts_with("work:project:") {
            (SessionKind::Work, "work:project:")
        } else if text.starts_with("code:project:") {
            (SessionKind::Code, "code:project:")
        } else if text.starts_with("product-") {
            (SessionKind::Product, "product-")
        } else {
            return refuse("unknown session id form");
        };
        let rest = &text[prefix.len()..];
        let (id, suffix) = match rest.split_once(':') {
            Some((id, suffix)) => (id, Some(suffix)),
            None => (rest, None),
        };
        match kind {
            SessionKind::Product if !is_uuid(id) => {
                return refuse("the part after product- is not a uuid");
            }
            SessionKind::Work | SessionKind::Code if !is_part(id) => {
                return refuse("the project id must be 1 to 64 characters from [A-Za-z0-9._-]");
            }
            _ => {}
        }
        if let Some(suffix) = suffix
            && !is_part(suffix)
        {
            return refuse(
                "the conversation key must be one part of 1 to 64 characters from [A-Za-z0-9._-]",
            );
        }
        let mut canonical = String::with_capacity(text.len());
        canonical.push_str(prefix);
        if is_uuid(id) {
            canonical.push_str(&id.to_ascii_lowercase());
        } else {
            canonical.push_str(id);
        }
        if let Some(suffix) = suffix {
            canonical.push(':');
            canonical.push_str(suffix);
        }
        Ok(SessionId {
            text: canonical,
            kind,
            id_start: prefix.len(),
            id_end: prefix.len() + id.len(),
        })
    }

    /// The registry form.
    pub fn kind(&self) -> SessionKind {
        self.kind
    }

    /// The project id (`work:`/`code:`) or the uuid (`product-`).
    pub fn id(&self) -> &str {
        &self.text[self.id_start..self.id_end]
    }

    /// The `:suffix` conversation key, when present.
    pub fn conversation_key(&self) -> Option<&str> {
        self.text.get(self.id_end + 1..)
    }

    /// The canonical text (a UUID lower-cased, everything else as given).
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

fn is_part(text: &str) -> bool {
    (1..=PART_MAX).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl FromStr for SessionId {
    type Err = Error;
    fn from_str(text: &str) -> Result<Self> {
        SessionId::parse(text)
    }
}

impl TryFrom<String> for SessionId {
    type Error = Error;
    fn try_from(text: String) -> Result<Self> {
        SessionId::parse(&text)
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> String {
        id.text
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({:?})", self.text)
    }
}

/// Encodes one key component as a directory name, reversibly: `[a-z0-9-]` bytes stay, a `.` stays
/// unless it is the first byte, every other byte becomes `_` and two lower-case hex digits. The
/// result is never empty for a non-empty input, never `.` or `..`, never holds `/`, and is the same
/// on case-insensitive file systems (upper case is escaped).
pub fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, byte) in text.bytes().enumerate() {
        if byte.is_ascii_lowercase()
            || byte.is_ascii_digit()
            || byte == b'-'
            || (byte == b'.' && i > 0)
        {
            out.push(char::from(byte));
        } else {
            out.push('_');
            out.push(hex_digit(byte >> 4));
            out.push(hex_digit(byte & 0x0f));
        }
    }
    out
}

fn hex_digit(nibble: u8) -> char {
    char::from(if nibble < 10 {
        b'0' + nibble
    } else {
        b'a' + nibble - 10
    })
}

/// Decodes what [`encode_component`] produced; `None` for anything it cannot have produced.
pub fn decode_component(name: &str) -> Option<String> {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        if byte == b'_' {
            let hi = hex_value(*bytes.get(i + 1)?)?;
            let lo = hex_value(*bytes.get(i + 2)?)?;
            let value = hi << 4 | lo;
            let plain = value.is_ascii_lowercase()
                || value.is_ascii_digit()
                || value == b'-'
                || (value == b'.' && !out.is_empty());
            if plain {
                return None; // not canonical: the encoder would have kept it as is
            }
            out.push(value);
            i += 3;
        } else if byte.is_ascii_lowercase()
            || byte.is_ascii_digit()
            || byte == b'-'
            || (byte == b'.' && i > 0)
        {
            out.push(byte);
            i += 1;
        } else {
            return None;
        }
    }
    if out.is_empty() {
        return None;
    }
    String::from_utf8(out).ok()
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

/// Everything that identifies one private runtime.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "RawKey")]
pub struct RuntimeKey {
    user: String,
    project: String,
    session: SessionId,
    provider: String,
    mode: Mode,
}

#[derive(Deserialize)]
struct RawKey {
    user: String,
    project: String,
    session: SessionId,
    provider: String,
    mode: Mode,
}

impl TryFrom<RawKey> for RuntimeKey {
    type Error = Error;
    fn try_from(raw: RawKey) -> Result<Self> {
        RuntimeKey::new(raw.user, raw.project, raw.session, raw.provider, raw.mode)
    }
}

impl RuntimeKey {
    /// Validates a key: user, project and provider must be non-empty and encode to a directory
    /// name of at most 255 bytes (about 85 bytes of arbitrary text, or 255 of `[a-z0-9-]`).
    pub fn new(
        user: impl Into<String>,
        project: impl Into<String>,
        session: SessionId,
        provider: impl Into<String>,
        mode: Mode,
    ) -> Result<RuntimeKey> {
        let key = RuntimeKey {
            user: user.into(),
            project: project.into(),
            session,
            provider: provider.into(),
            mode,
        };
        for (what, text) in [
            ("user", &key.user),
            ("project", &key.project),
            ("session", &key.session.text),
            ("provider", &key.provider),
        ] {
            if text.is_empty() {
                return Err(Error::invalid(
                    format!("runtime {what}"),
                    format!("the {what} of a runtime key must not be empty"),
                ));
            }
            if encode_component(text).len() > NAME_MAX {
                return Err(Error::invalid(
                    format!("runtime {what} {text:?}"),
                    format!("the {what} is too long to name a runtime directory"),
                ));
            }
        }
        Ok(key)
    }

    /// The user the runtime belongs to.
    pub fn user(&self) -> &str {
        &self.user
    }
    /// The project (Crew, Code project or workflow) id.
    pub fn project(&self) -> &str {
        &self.project
    }
    /// The chat or session id.
    pub fn session(&self) -> &SessionId {
        &self.session
    }
    /// The provider (CLI) name.
    pub fn provider(&self) -> &str {
        &self.provider
    }
    /// The session mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The directory names, root first: user, project, session, provider, mode.
    pub fn components(&self) -> [String; 5] {
        [
            encode_component(&self.user),
            encode_component(&self.project),
            encode_component(&self.session.text),
            encode_component(&self.provider),
            self.mode.as_str().to_string(),
        ]
    }

    /// The runtime directory relative to the runtime root.
    pub fn relative_dir(&self) -> PathBuf {
        self.components().iter().collect()
    }

    /// Decodes a path produced by [`RuntimeKey::relative_dir`] back into its key (for listing and
    /// collecting runtimes); anything else is refused.
    pub fn from_relative_dir(rel: &Path) -> Result<RuntimeKey> {
        let refuse = || {
            Error::invalid(
                rel.display().to_string(),
                "not a runtime directory path (user/project/session/provider/mode)",
            )
        };
        let names: Vec<&str> = rel
            .components()
            .map(|c| match c {
                Component::Normal(name) => name.to_str().ok_or_else(refuse),
                _ => Err(refuse()),
            })
            .collect::<Result<_>>()?;
        let [user, project, session, provider, mode] = names.as_slice() else {
            return Err(refuse());
        };
        let decode = |name: &str| decode_component(name).ok_or_else(refuse);
        let mode = Mode::from_name(mode).ok_or_else(refuse)?;
        let key = RuntimeKey::new(
            decode(user)?,
            decode(project)?,
            SessionId::parse(&decode(session)?)?,
            decode(provider)?,
            mode,
        )?;
        // A folder named after a non-canonical spelling (an upper-case UUID) is not the
        // directory of the key it decodes to.
        if key
            .components()
            .iter()
            .map(String::as_str)
            .ne(names.iter().copied())
        {
            return Err(refuse());
        }
        Ok(key)
    }
}

/// One private runtime directory and its identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runtime {
    root: PathBuf,
    key: RuntimeKey,
    dir: PathBuf,
}

impl Runtime {
    /// Where the runtime for `key` lives under `root`, without touching the file system. `root`
    /// must be absolute.
    pub fn locate(root: &Path, key: RuntimeKey) -> Result<Runtime> {
        if !root.is_absolute() {
            return Err(Error::invalid(
                root.display().to_string(),
                "the runtime root must be an absolute path",
            ));
        }
        let dir = root.join(key.relative_dir());
        Ok(Runtime {
            root: root.to_path_buf(),
            key,
            dir,
        })
    }

    /// Creates (when missing) the runtime directory for `key` under `root`, mode 0700, walking
    /// every level from the root down without following a link and refusing any level, the root
    /// included, that is a symlink or not a directory (the root's parent folders are the host's
    /// choice and are resolved once, so [`Runtime::dir`] is the same canonical path at every
    /// launch).
    pub fn open(root: &Path, key: RuntimeKey) -> Result<Runtime> {
        let levels = create_levels(root, &key)?;
        Ok(Runtime {
            root: levels.root().to_path_buf(),
            dir: levels.path().to_path_buf(),
            key,
        })
    }

    /// Opens the runtime for a launch: the levels (created when missing), the launch lock (waiting
    /// at most `wait` for another launch of this runtime), and exactly the links in `links` (see
    /// [`launch`]). Every target is resolved and every name checked before anything is created.
    pub fn launch(
        root: &Path,
        key: RuntimeKey,
        links: &LaunchLinks,
        wait: std::time::Duration,
    ) -> Result<Launch> {
        Launch::open(root, key, links, wait)
    }

    /// The runtime root this runtime lives under.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The identity.
    pub fn key(&self) -> &RuntimeKey {
        &self.key
    }
    /// The runtime directory: the CLI's working directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The destination root providers plan into: the runtime directory itself, never the linked
    /// project (the real project's instruction files and CLI folders are not destinations).
    pub fn project_root(&self) -> &Path {
        &self.dir
    }
    /// `<runtime>/project`.
    pub fn project_link(&self) -> PathBuf {
        self.dir.join(PROJECT_LINK)
    }
    /// `<runtime>/output`.
    pub fn output_link(&self) -> PathBuf {
        self.dir.join(OUTPUT_LINK)
    }

    /// The levels of this runtime, walked from the root without following a link (a missing
    /// level is an error naming it).
    fn walk(&self) -> Result<links::Levels> {
        match find_levels(&self.root, &self.key) {
            Ok(Some(levels)) => Ok(levels),
            Ok(None) => Err(Error::io(
                &self.dir,
                "open runtime directory",
                std::io::Error::from(std::io::ErrorKind::NotFound),
            )),
            Err(e) => Err(e),
        }
    }

    /// Creates `project/` linking the real folder when absent, and verifies it (see
    /// [`links::ensure_link`]); anything else in its place fails. [`Runtime::launch`] does this
    /// (and more) for a whole launch.
    pub fn link_project(&self, real: &Path) -> Result<LinkRecord> {
        let levels = self.walk()?;
        links::ensure_link_in(levels.fd(), levels.path(), PROJECT_LINK, real)
    }
    /// Verifies `project/` without creating it.
    pub fn verify_project(&self, real: &Path) -> Result<LinkRecord> {
        let levels = self.walk()?;
        links::verify_link_in(levels.fd(), levels.path(), PROJECT_LINK, real)
    }
    /// Creates `output/` linking a step's output folder when absent, and verifies it.
    pub fn link_output(&self, real: &Path) -> Result<LinkRecord> {
        let levels = self.walk()?;
        links::ensure_link_in(levels.fd(), levels.path(), OUTPUT_LINK, real)
    }
    /// Verifies `output/` without creating it.
    pub fn verify_output(&self, real: &Path) -> Result<LinkRecord> {
        let levels = self.walk()?;
        links::verify_link_in(levels.fd(), levels.path(), OUTPUT_LINK, real)
    }
    /// Removes `output/` when it links exactly `recorded_target` (the [`LinkRecord::target`] of the
    /// previous invocation), so the next invocation can link its own output folder. The output
    /// folder itself is never touched.
    pub fn unlink_output(&self, recorded_target: &Path) -> Result<bool> {
        match find_levels(&self.root, &self.key)? {
            Some(levels) => {
                links::remove_link_in(levels.fd(), levels.path(), OUTPUT_LINK, recorded_target)
            }
            None => Ok(false),
        }
    }

    /// Removes the runtime directory and its links without deleting or following into the
    /// targets, then removes identity levels left empty (never the root). Every level, the root
    /// included, is walked without following a link: a level replaced by a symlink fails with an
    /// error naming it and nothing is removed. A runtime a launch is using (its launch lock is
    /// held) is refused after waiting at most [`DEFAULT_LAUNCH_WAIT`]. Returns whether the runtime
    /// existed.
    pub fn remove(&self) -> Result<bool> {
        self.remove_waiting(DEFAULT_LAUNCH_WAIT)
    }

    /// [`Runtime::remove`], waiting at most `wait` for a launch using the runtime to finish.
    pub fn remove_waiting(&self, wait: std::time::Duration) -> Result<bool> {
        let Some(levels) = find_levels(&self.root, &self.key)? else {
            return Ok(false);
        };
        let _lock = links::lock_launch(levels.fd(), levels.path(), wait)?;
        levels.remove_deepest_and_prune()
    }
}

/// Opens the existing levels of `key` under `root`, without following a link at any level;
/// `Ok(None)` when one is missing (see [`links::open_levels`]).
pub(crate) fn find_levels(root: &Path, key: &RuntimeKey) -> Result<Option<links::Levels>> {
    let components = key.components();
    let names: Vec<&OsStr> = components.iter().map(OsStr::new).collect();
    links::open_levels(root, &names, false)
}

/// Opens the levels of `key` under `root`, creating the missing ones (mode 0700), without
/// following a link at any level.
pub(crate) fn create_levels(root: &Path, key: &RuntimeKey) -> Result<links::Levels> {
    let components = key.components();
    let names: Vec<&OsStr> = components.iter().map(OsStr::new).collect();
    match links::open_levels(root, &names, true)? {
        Some(levels) => Ok(levels),
        None => Err(Error::io(
            root,
            "open runtime directory",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )),
    }
}
