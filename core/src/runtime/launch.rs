//! One launch in a linked runtime: what it asks to link ([`LaunchLinks`]: the project, an
//! optional step output folder, attached folders), the open runtime it gets ([`Launch`]: the
//! levels opened without following a link, the launch lock, the verified links), its private
//! folders (`.tmp`, `.cli-home`), its sandbox policy and its receipt.
//!
//! # Attached folders
//!
//! `attached/<name>` links a folder the host attaches to this launch ([`Attachment`]). Its grant
//! follows the mode ([`AttachAccess::FollowMode`]: read/write in Builder, read-only in Run) or is
//! read-only in both ([`AttachAccess::ReadOnly`]). A name is one plain folder name: 1 to 64
//! characters from `[A-Za-z0-9._-]`, not starting with `.`, not `project`, `output` or
//! `attached` (in any case), and unique among the launch's attachments without regard to case (so
//! it names one folder on a case-insensitive file system too). An attached folder may not contain
//! the runtime or lie inside it.
//!
//! # The launch's links
//!
//! A launch's runtime holds exactly the links the launch asked for: a link we made and no longer
//! want (an `output/` of a run without `--output`, the previous `--output` left by a killed run,
//! an attachment of an earlier launch) is removed or replaced, never followed; a link, file or
//! folder we did not make where one of our links goes fails the launch with nothing changed. How
//! "we made it" is proven is in core's private `fsio::links::launch`. When the launch ends
//! ([`Launch::close`], or dropping the [`Launch`]), `output/` and the attachments are unlinked
//! again; `project/` stays.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::{Mode, OUTPUT_LINK, PROJECT_LINK, Runtime, RuntimeIdentity, RuntimeKey};
use crate::error::{Error, Result};
use crate::fsio::links::{self, ATTACHED_DIR, LaunchLock, Levels, LinkRecord, WantedLink};
use crate::provider::ProviderExt;
pub use crate::sandbox::AttachAccess;
use crate::sandbox::{GrantAccess, SandboxPolicy, SandboxStatus};

/// The runtime's private temporary folder (point `TMPDIR` at it: `/tmp` is not granted).
pub const TEMP_DIR: &str = ".tmp";
/// The runtime's private CLI home (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`, … when asked for).
pub const CLI_HOME_DIR: &str = ".cli-home";
/// Environment variables a CLI home may never be declared as: the launch sets or relies on them.
const NOT_A_CLI_HOME: [&str; 4] = ["HOME", "PATH", "TMPDIR", "PWD"];

/// The variable that gives `provider`'s CLI a private home (see
/// [`ProviderExt::cli_home_env`]), or the refusal for a provider that
/// declares none (or declares something that is not a plain environment variable name).
pub fn private_cli_home_env(provider: &dyn crate::Provider) -> Result<&'static str> {
    let name = provider.name();
    match provider.cli_home_env() {
        Some(var)
            if !var.is_empty()
                && !var.starts_with(|c: char| c.is_ascii_digit())
                && var
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
                && !NOT_A_CLI_HOME.contains(&var) =>
        {
            Ok(var)
        }
        Some(var) => Err(Error::Provider {
            provider: name.to_string(),
            reason: format!(
                "declares {var:?} as its CLI home variable, which is not a plain environment \
                 variable name this launch may set"
            ),
        }),
        None => Err(Error::Provider {
            provider: name.to_string(),
            reason: "has no known environment variable that moves its home or configuration \
                     folder, so it cannot get a private CLI home; launch it without \
                     --private-cli-home"
                .to_string(),
        }),
    }
}

/// How long a launch (or a removal) waits by default for another launch of the same runtime.
pub const DEFAULT_LAUNCH_WAIT: Duration = Duration::from_secs(10);

/// The longest attached-folder name.
const ATTACH_NAME_MAX: usize = 64;
/// Names an attached folder may not take, compared without case.
const RESERVED_NAMES: [&str; 3] = [PROJECT_LINK, OUTPUT_LINK, ATTACHED_DIR];

/// A folder attached to a launch as `attached/<name>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attachment {
    name: String,
    target: PathBuf,
    access: AttachAccess,
}

impl Attachment {
    /// Checks `name` (see the module docs) and builds the attachment.
    pub fn new(name: &str, target: impl Into<PathBuf>, access: AttachAccess) -> Result<Self> {
        check_name(name)?;
        Ok(Attachment {
            name: name.to_string(),
            target: target.into(),
            access,
        })
    }

    /// Parses `NAME=DIR` (the `run --attach` argument).
    pub fn parse(spec: &str, access: AttachAccess) -> Result<Self> {
        match spec.split_once('=') {
            Some((name, dir)) if !dir.is_empty() => Attachment::new(name, dir, access),
            _ => Err(Error::invalid(
                format!("attached folder {spec:?}"),
                "expected NAME=DIR",
            )),
        }
    }

    /// The name (`attached/<name>`).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The folder as given.
    pub fn target(&self) -> &Path {
        &self.target
    }
    /// How its grant is chosen.
    pub fn access(&self) -> AttachAccess {
        self.access
    }
}

fn check_name(name: &str) -> Result<()> {
    let refuse = |reason: &str| {
        Err(Error::invalid(
            format!("attached folder name {name:?}"),
            format!(
                "{reason}; a name is one plain folder name of 1 to {ATTACH_NAME_MAX} characters \
                 from [A-Za-z0-9._-], not starting with `.`"
            ),
        ))
    };
    if name.is_empty() || name.len() > ATTACH_NAME_MAX {
        return refuse("the name is empty or too long");
    }
    if name.starts_with('.') {
        return refuse("the name starts with `.`");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return refuse("the name holds a character other than [A-Za-z0-9._-]");
    }
    if RESERVED_NAMES.iter().any(|r| r.eq_ignore_ascii_case(name)) {
        return Err(Error::invalid(
            format!("attached folder name {name:?}"),
            "the name clashes with a runtime link (project, output, attached); choose another",
        ));
    }
    Ok(())
}

/// What one launch asks to link into its runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchLinks {
    project: PathBuf,
    output: Option<PathBuf>,
    attached: Vec<Attachment>,
}

impl LaunchLinks {
    /// `project/` linking `project`, nothing else.
    pub fn new(project: impl Into<PathBuf>) -> Self {
        LaunchLinks {
            project: project.into(),
            output: None,
            attached: Vec::new(),
        }
    }

    /// Adds `output/` linking a step's output folder.
    pub fn with_output(mut self, output: impl Into<PathBuf>) -> Self {
        self.output = Some(output.into());
        self
    }

    /// Adds an attached folder.
    pub fn with_attached(mut self, attachment: Attachment) -> Self {
        self.attached.push(attachment);
        self
    }

    /// The attached folders, in the order given.
    pub fn attached(&self) -> &[Attachment] {
        &self.attached
    }

    /// Checks the names (each valid, none twice without regard to case) and resolves every
    /// target to a canonical directory, changing nothing. Returns the links to make.
    pub fn resolve(&self) -> Result<Vec<WantedLink>> {
        for (i, a) in self.attached.iter().enumerate() {
            check_name(&a.name)?;
            if self.attached[..i]
                .iter()
                .any(|b| b.name.eq_ignore_ascii_case(&a.name))
            {
                return Err(Error::invalid(
                    format!("attached folder name {:?}", a.name),
                    "the name is given twice (names are compared without case); each attached \
                     folder needs its own name",
                ));
            }
        }
        let mut wanted = vec![WantedLink {
            slot: PROJECT_LINK.to_string(),
            target: resolve_dir(&self.project, "project")?,
        }];
        if let Some(output) = &self.output {
            wanted.push(WantedLink {
                slot: OUTPUT_LINK.to_string(),
                target: resolve_dir(output, "output folder")?,
            });
        }
        for a in &self.attached {
            wanted.push(WantedLink {
                slot: format!("{ATTACHED_DIR}/{}", a.name),
                target: resolve_dir(&a.target, "attached folder")?,
            });
        }
        Ok(wanted)
    }
}

fn resolve_dir(path: &Path, what: &str) -> Result<PathBuf> {
    // A link target the host named (the project, an output or attached folder): resolved once
    // into the root a link points at, never a path below a root that is then written or removed.
    #[allow(clippy::disallowed_methods)]
    let canonical =
        std::fs::canonicalize(path).map_err(|e| Error::io(path, "resolve the folder", e))?;
    if !canonical.is_dir() {
        return Err(Error::Unsafe {
            path: canonical,
            reason: format!("the {what} must be a directory"),
        });
    }
    Ok(canonical)
}

/// An attached folder as linked for a launch, for the receipt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AttachedLink {
    /// The name: the link is `<runtime>/attached/<name>`.
    pub name: String,
    /// How the grant was asked for: `follow_mode` (`--attach`) or `read_only`
    /// (`--attach-read-only`).
    pub access: AttachAccess,
    /// The grant in this launch's mode: `read_write` or `read` (what the sandbox grants with
    /// `--sandbox`; without it, nothing is enforced).
    pub grant: GrantAccess,
    /// The verified link.
    pub link: LinkRecord,
}

/// What a launch in a linked runtime used, for the `run` receipt: the runtime, its verified links,
/// the mode, its identity and the sandbox it ran under.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LinkedReceipt {
    /// The runtime directory: the projection destination and the command's working directory.
    pub runtime: PathBuf,
    /// The session mode.
    pub mode: Mode,
    /// The verified `project/` link.
    pub project: LinkRecord,
    /// The verified `output/` link, if any.
    pub output: Option<LinkRecord>,
    /// The attached folders, with their grants.
    pub attached: Vec<AttachedLink>,
    /// Where this launch's native CLI session lives: keep it to ask `runtime can-resume` later.
    pub identity: RuntimeIdentity,
    /// The Landlock policy the command ran under, `None` without `--sandbox`.
    pub sandbox: Option<SandboxStatus>,
}

/// An open runtime, locked for one launch, holding exactly the links the launch asked for.
/// Dropping it unlinks `output/` and the attachments (as [`Launch::close`] does) and releases the
/// launch lock.
#[derive(Debug)]
pub struct Launch {
    runtime: Runtime,
    levels: Levels,
    lock: Option<LaunchLock>,
    project: LinkRecord,
    output: Option<LinkRecord>,
    attached: Vec<AttachedLink>,
}

impl Launch {
    pub(super) fn open(
        root: &Path,
        key: RuntimeKey,
        links: &LaunchLinks,
        wait: Duration,
    ) -> Result<Launch> {
        let wanted = links.resolve()?;
        let levels = super::create_levels(root, &key)?;
        let runtime = levels.path();
        if let Some(inside) = wanted.iter().find(|w| {
            w.slot.starts_with(ATTACHED_DIR)
                && (w.target.starts_with(runtime) || runtime.starts_with(&w.target))
        }) {
            return Err(Error::Unsafe {
                path: inside.target.clone(),
                reason: format!(
                    "the folder attached as {} contains or lies inside the runtime {}; attach a \
                     folder outside it",
                    inside.slot,
                    runtime.display()
                ),
            });
        }
        let lock = links::lock_launch(levels.fd(), levels.path(), wait)?;
        let mut verified = links::reconcile(&levels, &wanted)?.into_iter();
        let mode = key.mode();
        let (Some(project), output) = (
            verified.next(),
            match links.output {
                Some(_) => verified.next(),
                None => None,
            },
        ) else {
            return Err(Error::io(
                levels.path().join(PROJECT_LINK),
                "verify link",
                std::io::Error::from(std::io::ErrorKind::NotFound),
            ));
        };
        let attached = links
            .attached
            .iter()
            .zip(verified)
            .map(|(a, link)| AttachedLink {
                name: a.name.clone(),
                access: a.access,
                grant: a.access.grant(mode),
                link,
            })
            .collect();
        Ok(Launch {
            runtime: Runtime {
                root: levels.root().to_path_buf(),
                dir: levels.path().to_path_buf(),
                key,
            },
            levels,
            lock: Some(lock),
            project,
            output,
            attached,
        })
    }

    /// The runtime.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }
    /// The runtime directory: the projection destination and the CLI's working directory.
    pub fn dir(&self) -> &Path {
        self.levels.path()
    }
    /// The verified `project/` link.
    pub fn project(&self) -> &LinkRecord {
        &self.project
    }
    /// The verified `output/` link, if any.
    pub fn output(&self) -> Option<&LinkRecord> {
        self.output.as_ref()
    }
    /// The attached folders.
    pub fn attached(&self) -> &[AttachedLink] {
        &self.attached
    }

    /// Creates (when missing, mode 0700) the private folder `name` in the runtime ([`TEMP_DIR`],
    /// [`CLI_HOME_DIR`]) without following a link, and returns its path.
    pub fn private_dir(&self, name: &str) -> Result<PathBuf> {
        links::private_dir(&self.levels, name)
    }

    /// Checks that the runtime directory is still the one this launch opened: every level walked
    /// again from the root without following a link must lead to the same directory (device and
    /// inode). Call right before starting the CLI, after anything that used the runtime's path.
    pub fn check_unchanged(&self) -> Result<()> {
        let walked = super::find_levels(self.runtime.root(), self.runtime.key())?;
        let now = walked.as_ref().map(Levels::identity).transpose()?;
        if now != Some(self.levels.identity()?) {
            return Err(Error::Unsafe {
                path: self.dir().to_path_buf(),
                reason: "the runtime directory was replaced while the launch was being \
                         prepared; refusing to start the command"
                    .to_string(),
            });
        }
        Ok(())
    }

    /// The Landlock policy of this launch: the runtime read/write, the project by mode, `output/`
    /// read/write, each attached folder by its grant.
    pub fn sandbox_policy(&self) -> SandboxPolicy {
        let mut policy =
            SandboxPolicy::new(self.runtime.key().mode(), self.dir(), &self.project.target);
        if let Some(output) = &self.output {
            policy = policy.with_read_write(&output.target);
        }
        for a in &self.attached {
            policy = policy.with_attached(&a.name, &a.link.target, a.access);
        }
        policy
    }

    /// The identity of this launch's native CLI session (see [`RuntimeIdentity`]): the CLI runs in
    /// `working_dir` (the runtime, unless the host starts it elsewhere) with its home in
    /// `cli_home` when the runtime gives it a private one.
    pub fn identity(&self, working_dir: &Path, cli_home: Option<&Path>) -> RuntimeIdentity {
        let key = self.runtime.key();
        RuntimeIdentity {
            user: key.user().to_string(),
            project: key.project().to_string(),
            session: key.session().clone(),
            provider: key.provider().to_string(),
            mode: key.mode(),
            runtime: Some(self.dir().to_path_buf()),
            working_dir: working_dir.to_path_buf(),
            cli_home: cli_home.map(Path::to_path_buf),
        }
    }

    /// The receipt of this launch.
    pub fn receipt(
        &self,
        identity: RuntimeIdentity,
        sandbox: Option<SandboxStatus>,
    ) -> LinkedReceipt {
        LinkedReceipt {
            runtime: self.dir().to_path_buf(),
            mode: self.runtime.key().mode(),
            project: self.project.clone(),
            output: self.output.clone(),
            attached: self.attached.clone(),
            identity,
            sandbox,
        }
    }

    /// Ends the launch: unlinks `output/` and the attachments (only where exactly our link still
    /// stands) and releases the launch lock. Returns a sentence per link left alone because
    /// something else stands there now (the next launch refuses it).
    pub fn close(mut self) -> Result<Vec<String>> {
        let leftovers = links::release_links(&self.levels, &[PROJECT_LINK]);
        self.lock = None;
        leftovers
    }
}

impl Drop for Launch {
    fn drop(&mut self) {
        if self.lock.is_some() {
            // Best effort on an early return: whatever is left is recorded as ours and the next
            // launch removes it.
            let _ = links::release_links(&self.levels, &[PROJECT_LINK]);
        }
    }
}
