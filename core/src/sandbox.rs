//! The Landlock sandbox a session's CLI runs in, built from the session mode: Builder reads and
//! writes the real target, Run only reads it, both read and write their own runtime.
//!
//! # Policy
//!
//! [`SandboxPolicy::grants`] resolves the grants (every path canonicalised):
//!
//! - the runtime: read/write (everything Landlock controls);
//! - the real target (the project, or a workflow): read/write in Builder, read (and execute) in
//!   Run;
//! - system defaults, unless [`SandboxPolicy::without_system_defaults`]: read and execute on
//!   [`SYSTEM_READ_EXEC`] (`/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`, `/opt`), read on
//!   [`SYSTEM_READ`] (`/proc`, `/sys`, `/run`), and on [`SYSTEM_DEVICE`] (`/dev`) read, write,
//!   truncate and device ioctls but no creating or removing (so `/dev/null` and the terminal work);
//!   paths that do not exist are skipped;
//! - whatever the host adds ([`SandboxPolicy::with_read`], [`SandboxPolicy::with_read_write`]),
//!   typically the CLI's private home and the step's output folder;
//! - each attached folder ([`SandboxPolicy::with_attached`]) separately by its access: one
//!   attached with [`AttachAccess::FollowMode`] is granted like the target (read/write in
//!   Builder, read in Run), one attached [`AttachAccess::ReadOnly`] is read in both modes.
//!
//! Landlock grants add up, so a read-only grant inside a writable one would be writable after
//! all: [`SandboxPolicy::grants`] refuses an attached folder whose grant is read-only but that
//! equals or lies inside a write grant of the same policy (the runtime, the Builder target, the
//! output folder, a writable attachment or a host read/write grant), and one that contains the
//! runtime or lies inside it.
//!
//! `/tmp` is deliberately not granted: it is shared by every session (and often holds other
//! runtimes), so a Run session could write elsewhere through it. Point `TMPDIR` at a directory
//! inside the runtime instead. In Run mode, no write-capable grant other than the runtime may
//! overlap the real target (equal, inside it, or containing it), and the runtime may not contain
//! the target: [`SandboxPolicy::grants`] refuses such a policy, so Run's final policy holds no
//! workspace write grant other than its runtime. Landlock checks the resolved path, so a link
//! into an ungranted folder stays denied, and `project/` inside the writable runtime is only as
//! writable as the target's own grant.
//!
//! # What Landlock does not cover
//!
//! Landlock (up to ABI 7) does not control metadata changes: `chmod`, `chown`, `utimes` and
//! extended attributes still succeed on files a Run session can only read (checked on this
//! project's test kernel: `chmod 000` and `touch` on a project file succeed under a Run policy,
//! while the content cannot change). Closing that needs a seccomp filter or the bridge guard; it
//! is not done here. A session can also remove or replace the `project/` link inside its own
//! writable runtime; the next launch then fails link verification instead of following it.
//!
//! # Enforcement
//!
//! The filesystem rights handled are those of Landlock ABI 5 ([`TARGET_ABI`]: files, directories,
//! `refer`, `truncate`, device ioctls). A kernel at ABI 5 or later enforces the policy fully; one
//! between [`SandboxPolicy::min_abi`] (default [`DEFAULT_MIN_ABI`], 3: below it `truncate(2)` is
//! not controlled, so a Run session could empty project files) and 5 enforces it partially; a
//! kernel below the minimum, or without Landlock, or a build without the `landlock` feature, fails
//! [`SandboxPolicy::prepare`] unless the host set `allow_unsandboxed`, in which case the status
//! says [`Enforcement::NotEnforced`]. The [`SandboxStatus`] is meant for the launch receipt.
//!
//! # Applying it to the CLI only
//!
//! `projectfile run` itself must stay unsandboxed (it releases leases after the child exits), so
//! the ruleset is applied in the child between `fork` and `exec`: [`SandboxPolicy::prepare`]
//! builds the whole ruleset in the parent (opening every granted path and loading the rules into
//! a Landlock ruleset file descriptor, which is close-on-exec), and [`PreparedSandbox::install`]
//! registers a `pre_exec` hook that only calls `landlock_restrict_self` (via
//! `RulesetCreated::restrict_self`: two `prctl`/syscalls, no allocation, errors built from
//! `errno`). Code in a `pre_exec` hook must be async-signal-safe because the parent may have had
//! other threads holding locks at `fork`; the hook does not allocate or lock, which is the
//! property that matters, but it relies on the `landlock` crate keeping `restrict_self` free of
//! allocation (true for 0.4.8). `restrict_self` also sets `no_new_privs`, so set-uid programs do
//! not gain privileges inside the sandbox. The restriction is inherited by everything the CLI
//! starts. If the hook fails, `spawn` fails: the CLI never runs with less confinement than the
//! status says.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::reader::Mode;

/// The Landlock ABI whose filesystem rights this policy handles; at or above it, enforcement is
/// full.
pub const TARGET_ABI: u8 = 5;
/// The default minimum ABI: 3, the first that controls truncation.
pub const DEFAULT_MIN_ABI: u8 = 3;

/// System directories granted read and execute.
pub const SYSTEM_READ_EXEC: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];
/// System directories granted read only.
pub const SYSTEM_READ: &[&str] = &["/proc", "/sys", "/run"];
/// Device directories granted read, write, truncate and ioctl (no create or remove).
pub const SYSTEM_DEVICE: &[&str] = &["/dev"];

/// How an attached folder's grant is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum AttachAccess {
    /// Like `project/`: read/write in Builder, read-only in Run (`run --attach`).
    FollowMode,
    /// Read-only in both modes (`run --attach-read-only`).
    ReadOnly,
}

impl AttachAccess {
    /// The sandbox grant this access resolves to in `mode`.
    pub fn grant(self, mode: Mode) -> GrantAccess {
        match (self, mode) {
            (AttachAccess::FollowMode, Mode::Builder) => GrantAccess::ReadWrite,
            _ => GrantAccess::Read,
        }
    }
}

/// What a grant allows beneath its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum GrantAccess {
    /// Read files, list directories, execute.
    Read,
    /// Everything Landlock controls: read, write, create, rename, link, remove, truncate.
    ReadWrite,
    /// Read and write existing files (no create, remove or rename), truncate, device ioctls.
    Device,
}

impl GrantAccess {
    /// Whether this access lets the sandboxed process change files.
    pub fn writes(self) -> bool {
        matches!(self, GrantAccess::ReadWrite | GrantAccess::Device)
    }
}

/// One path the sandboxed process may use, and how.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Grant {
    /// The path (canonical once resolved by [`SandboxPolicy::grants`]).
    pub path: PathBuf,
    /// What is allowed beneath it.
    pub access: GrantAccess,
}

/// How much of the policy the kernel enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Enforcement {
    /// Every right the policy handles is enforced.
    Full,
    /// The kernel is at or above the minimum ABI but below [`TARGET_ABI`]: newer rights are not.
    Partial,
    /// Nothing is enforced; only possible when the host allowed running unsandboxed.
    NotEnforced,
}

/// What a launch was sandboxed with, for the receipt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SandboxStatus {
    /// Full, partial or none.
    pub enforcement: Enforcement,
    /// The session mode the policy was built from.
    pub mode: Mode,
    /// The kernel's Landlock ABI, `None` when it has no Landlock (or is not Linux).
    pub kernel_abi: Option<u8>,
    /// The minimum ABI the policy required.
    pub min_abi: u8,
    /// The ABI whose rights the policy handles.
    pub target_abi: u8,
    /// Whether the host allowed running unsandboxed.
    pub unsandboxed_allowed: bool,
    /// One sentence saying why enforcement is what it is.
    pub detail: String,
    /// The resolved grants.
    pub grants: Vec<Grant>,
}

/// The sandbox policy for one session launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxPolicy {
    mode: Mode,
    runtime: PathBuf,
    target: PathBuf,
    extra: Vec<Grant>,
    attached: Vec<(String, PathBuf, AttachAccess)>,
    system_defaults: bool,
    min_abi: u8,
    allow_unsandboxed: bool,
}

impl SandboxPolicy {
    /// The policy for `mode`: `runtime` read/write, `target` (the real project or workflow)
    /// read/write in Builder and read-only in Run, plus the system defaults.
    pub fn new(mode: Mode, runtime: impl Into<PathBuf>, target: impl Into<PathBuf>) -> Self {
        SandboxPolicy {
            mode,
            runtime: runtime.into(),
            target: target.into(),
            extra: Vec::new(),
            attached: Vec::new(),
            system_defaults: true,
            min_abi: DEFAULT_MIN_ABI,
            allow_unsandboxed: false,
        }
    }

    /// Adds a read (and execute) grant.
    pub fn with_read(mut self, path: impl Into<PathBuf>) -> Self {
        self.extra.push(Grant {
            path: path.into(),
            access: GrantAccess::Read,
        });
        self
    }

    /// Adds a read/write grant. In Run mode it must not overlap the real target.
    pub fn with_read_write(mut self, path: impl Into<PathBuf>) -> Self {
        self.extra.push(Grant {
            path: path.into(),
            access: GrantAccess::ReadWrite,
        });
        self
    }

    /// Adds a grant with any access.
    pub fn with_grant(mut self, grant: Grant) -> Self {
        self.extra.push(grant);
        self
    }

    /// Adds the folder attached as `name`, granted by `access` in the policy's mode (see the
    /// module docs).
    pub fn with_attached(
        mut self,
        name: &str,
        path: impl Into<PathBuf>,
        access: AttachAccess,
    ) -> Self {
        self.attached.push((name.to_string(), path.into(), access));
        self
    }

    /// Leaves out the system defaults (for hosts that list every path themselves).
    pub fn without_system_defaults(mut self) -> Self {
        self.system_defaults = false;
        self
    }

    /// Sets the minimum Landlock ABI (1 to [`TARGET_ABI`]) the kernel must enforce.
    pub fn min_abi(mut self, abi: u8) -> Self {
        self.min_abi = abi;
        self
    }

    /// Whether a kernel that cannot enforce the minimum ABI may run the CLI unsandboxed.
    pub fn allow_unsandboxed(mut self, allow: bool) -> Self {
        self.allow_unsandboxed = allow;
        self
    }

    /// The session mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Resolves and checks the grants: every path canonicalised (the runtime, the target and
    /// host grants must exist; missing system defaults are skipped); in Run mode, refuses any
    /// write-capable grant other than the runtime that overlaps the target, and a runtime that
    /// contains the target.
    pub fn grants(&self) -> Result<Vec<Grant>> {
        let runtime = canonical(&self.runtime, "sandbox runtime")?;
        let target = canonical(&self.target, "sandbox target")?;
        let mut grants = Vec::new();
        if self.system_defaults {
            for (paths, access) in [
                (SYSTEM_READ_EXEC, GrantAccess::Read),
                (SYSTEM_READ, GrantAccess::Read),
                (SYSTEM_DEVICE, GrantAccess::Device),
            ] {
                for path in paths {
                    // Landlock grants name real paths; a system path is resolved, never written.
                    #[allow(clippy::disallowed_methods)]
                    if let Ok(path) = std::fs::canonicalize(path) {
                        grants.push(Grant { path, access });
                    }
                }
            }
        }
        grants.push(Grant {
            path: runtime.clone(),
            access: GrantAccess::ReadWrite,
        });
        grants.push(Grant {
            path: target.clone(),
            access: match self.mode {
                Mode::Builder => GrantAccess::ReadWrite,
                Mode::Run => GrantAccess::Read,
            },
        });
        for grant in &self.extra {
            grants.push(Grant {
                path: canonical(&grant.path, "sandbox grant")?,
                access: grant.access,
            });
        }
        let attached = self.attached_grants(&runtime)?;
        for (_, grant) in &attached {
            if grant.access.writes() {
                grants.push(grant.clone());
            }
        }
        for (name, grant) in &attached {
            if grant.access.writes() {
                continue;
            }
            let covering = grants
                .iter()
                .find(|g| g.access == GrantAccess::ReadWrite && grant.path.starts_with(&g.path));
            if let Some(covering) = covering {
                return Err(Error::Unsafe {
                    path: grant.path.clone(),
                    reason: format!(
                        "the folder attached as {name:?} must be read-only in this launch, but it \
                         lies inside {}, which this launch may write; attach a folder outside it",
                        covering.path.display()
                    ),
                });
            }
        }
        grants.extend(attached.into_iter().map(|(_, grant)| grant));
        if self.mode == Mode::Run {
            if target.starts_with(&runtime) {
                return Err(Error::Unsafe {
                    path: runtime,
                    reason: format!(
                        "a Run session's runtime must not contain the real target {}",
                        target.display()
                    ),
                });
            }
            let overlapping = grants.iter().find(|grant| {
                grant.access.writes()
                    && grant.path != runtime
                    && (grant.path.starts_with(&target) || target.starts_with(&grant.path))
            });
            if let Some(grant) = overlapping {
                return Err(Error::Unsafe {
                    path: grant.path.clone(),
                    reason: format!(
                        "a Run session may only read the real target {}, but this grant would \
                         let it write there",
                        target.display()
                    ),
                });
            }
        }
        grants.dedup();
        Ok(grants)
    }

    /// The attached folders' grants, canonical, in this policy's mode; refuses one that contains
    /// the runtime or lies inside it.
    fn attached_grants(&self, runtime: &Path) -> Result<Vec<(String, Grant)>> {
        let mut out = Vec::with_capacity(self.attached.len());
        for (name, path, access) in &self.attached {
            let path = canonical(path, "attached folder")?;
            if path.starts_with(runtime) || runtime.starts_with(&path) {
                return Err(Error::Unsafe {
                    path,
                    reason: format!(
                        "the folder attached as {name:?} contains or lies inside the runtime {}",
                        runtime.display()
                    ),
                });
            }
            out.push((
                name.clone(),
                Grant {
                    path,
                    access: access.grant(self.mode),
                },
            ));
        }
        Ok(out)
    }

    /// Resolves the grants, decides the enforcement from the kernel's ABI, and builds the
    /// Landlock ruleset in this (parent) process. Fails when the kernel cannot enforce the
    /// minimum ABI and the host did not allow running unsandboxed.
    pub fn prepare(&self) -> Result<PreparedSandbox> {
        if !(1..=TARGET_ABI).contains(&self.min_abi) {
            return Err(Error::invalid(
                format!("landlock min_abi {}", self.min_abi),
                format!("the minimum Landlock ABI must be between 1 and {TARGET_ABI}"),
            ));
        }
        let grants = self.grants()?;
        let kernel = kernel_abi();
        let decided = if cfg!(all(feature = "landlock", target_os = "linux")) {
            enforcement_for(kernel, self.min_abi, self.allow_unsandboxed)
        } else if self.allow_unsandboxed {
            Ok((
                Enforcement::NotEnforced,
                "this build has no Landlock support (the `landlock` feature is off); running \
                 unsandboxed as the host allowed"
                    .to_string(),
            ))
        } else {
            Err(
                "this build has no Landlock support (the `landlock` feature is off); refusing to \
                 launch unsandboxed because the host did not allow it"
                    .to_string(),
            )
        };
        let (enforcement, detail) = decided.map_err(|reason| Error::Unsafe {
            path: self.runtime.clone(),
            reason,
        })?;
        let status = SandboxStatus {
            enforcement,
            mode: self.mode,
            kernel_abi: kernel,
            min_abi: self.min_abi,
            target_abi: TARGET_ABI,
            unsandboxed_allowed: self.allow_unsandboxed,
            detail,
            grants,
        };
        #[cfg(all(feature = "landlock", target_os = "linux"))]
        let ruleset = match enforcement {
            Enforcement::NotEnforced => None,
            Enforcement::Full | Enforcement::Partial => Some(imp::build(&status.grants)?),
        };
        Ok(PreparedSandbox {
            status,
            runtime: self.runtime.clone(),
            #[cfg(all(feature = "landlock", target_os = "linux"))]
            ruleset,
        })
    }

    /// Prepares the policy and restricts the *calling thread* (and everything it later starts).
    /// Only for a process that is about to become the CLI (a forked child or a dedicated launcher);
    /// never call it in a host that must keep writing elsewhere.
    pub fn apply(&self) -> Result<SandboxStatus> {
        self.prepare()?.restrict_current_thread()
    }
}

#[allow(clippy::disallowed_methods)] // Landlock grants name real paths; resolving writes nothing
fn canonical(path: &Path, what: &str) -> Result<PathBuf> {
    if !path.is_absolute() {
        return Err(Error::invalid(
            format!("{what} {}", path.display()),
            "a sandbox path must be absolute",
        ));
    }
    std::fs::canonicalize(path).map_err(|source| Error::io(path, "resolve sandbox path", source))
}

/// The pure enforcement decision: full at or above [`TARGET_ABI`], partial at or above
/// `min_abi`, otherwise an error unless `allow_unsandboxed`. Returns the enforcement and one
/// sentence for the receipt, or the reason for refusing.
pub fn enforcement_for(
    kernel_abi: Option<u8>,
    min_abi: u8,
    allow_unsandboxed: bool,
) -> std::result::Result<(Enforcement, String), String> {
    match kernel_abi {
        Some(abi) if abi >= TARGET_ABI => Ok((
            Enforcement::Full,
            format!("the kernel's Landlock ABI {abi} enforces every right the policy handles"),
        )),
        Some(abi) if abi >= min_abi => Ok((
            Enforcement::Partial,
            format!(
                "the kernel's Landlock ABI {abi} meets the minimum {min_abi} but not {TARGET_ABI}, \
                 so rights newer than ABI {abi} are not enforced"
            ),
        )),
        _ => {
            let found = match kernel_abi {
                Some(abi) => format!("the kernel's Landlock ABI is {abi}"),
                None => "the kernel has no usable Landlock".to_string(),
            };
            if allow_unsandboxed {
                Ok((
                    Enforcement::NotEnforced,
                    format!(
                        "{found}, below the minimum {min_abi}; running unsandboxed as the host \
                         allowed"
                    ),
                ))
            } else {
                Err(format!(
                    "{found}, below the minimum {min_abi}; refusing to launch unsandboxed \
                     because the host did not allow it"
                ))
            }
        }
    }
}

/// The running kernel's Landlock ABI version, `None` when Landlock is not built in, not enabled,
/// or this is not Linux.
pub fn kernel_abi() -> Option<u8> {
    #[cfg(target_os = "linux")]
    {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_long = 1;
        // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only returns
        // the ABI version (or -1 with errno); it reads no memory and creates no descriptor.
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        if version <= 0 {
            None
        } else {
            Some(u8::try_from(version).unwrap_or(u8::MAX))
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// A policy whose ruleset is built and ready to be applied.
#[derive(Debug)]
pub struct PreparedSandbox {
    status: SandboxStatus,
    #[cfg_attr(not(all(feature = "landlock", target_os = "linux")), allow(dead_code))]
    runtime: PathBuf,
    #[cfg(all(feature = "landlock", target_os = "linux"))]
    ruleset: Option<landlock::RulesetCreated>,
}

impl PreparedSandbox {
    /// What the launch will be sandboxed with.
    pub fn status(&self) -> &SandboxStatus {
        &self.status
    }

    /// Registers a `pre_exec` hook on `command` that restricts the child right before `exec`
    /// (see the module docs for the async-signal-safety argument). If restricting fails in the
    /// child, `spawn` returns the error and nothing runs. Returns the status for the receipt.
    pub fn install(self, command: &mut Command) -> SandboxStatus {
        #[cfg(all(feature = "landlock", target_os = "linux"))]
        if let Some(ruleset) = self.ruleset {
            use std::os::unix::process::CommandExt;
            let mut slot = Some(ruleset);
            // SAFETY: the hook runs in the forked child before exec. It only moves a value out of
            // an `Option` and calls `restrict_self`, which performs `prctl(PR_SET_NO_NEW_PRIVS)`
            // and `landlock_restrict_self` and builds its result (or an errno-based error) without
            // allocating or taking locks.
            unsafe {
                command.pre_exec(move || imp::restrict_in_child(&mut slot));
            }
        }
        #[cfg(not(all(feature = "landlock", target_os = "linux")))]
        let _ = command;
        self.status
    }

    /// Restricts the calling thread (and everything it later starts) now.
    pub fn restrict_current_thread(self) -> Result<SandboxStatus> {
        #[cfg(all(feature = "landlock", target_os = "linux"))]
        if let Some(ruleset) = self.ruleset {
            imp::restrict_now(ruleset, &self.runtime)?;
        }
        Ok(self.status)
    }
}

#[cfg(all(feature = "landlock", target_os = "linux"))]
mod imp {
    use landlock::{
        ABI, Access, AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
        RulesetCreatedAttr, RulesetStatus,
    };

    use std::path::Path;

    use super::{Grant, GrantAccess};
    use crate::error::{Error, Result};

    fn file_rights() -> BitFlags<AccessFs> {
        AccessFs::ReadFile
            | AccessFs::WriteFile
            | AccessFs::Execute
            | AccessFs::Truncate
            | AccessFs::IoctlDev
    }

    /// Builds the ruleset in the parent: handles every ABI-5 filesystem right (best effort on an
    /// older kernel) and adds one rule per grant.
    pub(super) fn build(grants: &[Grant]) -> Result<RulesetCreated> {
        let abi = ABI::V5;
        let all = AccessFs::from_all(abi);
        let fail =
            |path: &std::path::Path, what: &str, err: &dyn std::fmt::Display| Error::Unsafe {
                path: path.to_path_buf(),
                reason: format!("cannot {what} the Landlock ruleset: {err}"),
            };
        let root = std::path::Path::new("/");
        let mut ruleset = Ruleset::default()
            .handle_access(all)
            .map_err(|e| fail(root, "configure", &e))?
            .create()
            .map_err(|e| fail(root, "create", &e))?;
        for grant in grants {
            let mut access = match grant.access {
                GrantAccess::Read => AccessFs::from_read(abi),
                GrantAccess::ReadWrite => all,
                GrantAccess::Device => {
                    AccessFs::ReadFile
                        | AccessFs::WriteFile
                        | AccessFs::ReadDir
                        | AccessFs::Truncate
                        | AccessFs::IoctlDev
                }
            };
            if !grant.path.is_dir() {
                access &= file_rights();
            }
            let fd =
                PathFd::new(&grant.path).map_err(|e| fail(&grant.path, "open a path for", &e))?;
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| fail(&grant.path, "add a rule to", &e))?;
        }
        Ok(ruleset)
    }

    /// The `pre_exec` body: no allocation, no locks.
    pub(super) fn restrict_in_child(slot: &mut Option<RulesetCreated>) -> std::io::Result<()> {
        match slot.take() {
            None => Err(std::io::Error::from_raw_os_error(libc::EINVAL)),
            Some(ruleset) => match ruleset.restrict_self() {
                Ok(status) if status.ruleset != RulesetStatus::NotEnforced => Ok(()),
                Ok(_) => Err(std::io::Error::from_raw_os_error(libc::EPERM)),
                Err(_) => Err(std::io::Error::last_os_error()),
            },
        }
    }

    pub(super) fn restrict_now(ruleset: RulesetCreated, runtime: &Path) -> Result<()> {
        let refuse = |reason: String| Error::Unsafe {
            path: runtime.to_path_buf(),
            reason,
        };
        let restricted = ruleset
            .restrict_self()
            .map_err(|e| refuse(format!("cannot apply the Landlock ruleset: {e}")))?;
        if restricted.ruleset == RulesetStatus::NotEnforced {
            return Err(refuse(
                "the kernel did not enforce the Landlock ruleset".to_string(),
            ));
        }
        Ok(())
    }
}
