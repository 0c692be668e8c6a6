//! Lease holders: what keeps a lease alive, and whether it still lives.
//!
//! A process holder is identified by pid **and** the process's start time (clock ticks since boot,
//! field 22 of `/proc/<pid>/stat`) **and** the boot id (`/proc/sys/kernel/random/boot_id`), so a
//! reused pid or a reboot can never keep a dead lease alive. A lock holder is alive while some
//! process holds an exclusive lock on the named regular file.
//!
//! A holder is checked twice, and neither check ever blocks:
//! - **at acquire** ([`Holder::validate`]): a pid must name a running process that is not a zombie
//!   (`/proc/<pid>/stat` state `Z` or `X`), and a lock must be a regular file, not a symlink, that
//!   some process holds locked now; anything else is refused, since the lease would be stale at
//!   once. [`Holder::process`] and [`Holder::held_lock`] build validated holders.
//! - **later, by every command** ([`Holder::liveness`]): the same facts, read without following a
//!   final symlink and without opening anything that could block (a holder file replaced by a FIFO
//!   makes the lease stale; it never hangs `status`, `acquire` or `release`).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsio::{self, HolderLockState};

/// What keeps a lease alive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Holder {
    /// A live process.
    Process {
        /// Process id.
        pid: u32,
        /// Start time in clock ticks since boot.
        start_time: u64,
        /// The boot this process belongs to.
        boot_id: String,
    },
    /// Whoever holds an exclusive lock on this file.
    Lock {
        /// The lock file.
        path: PathBuf,
    },
}

/// Whether a holder lives, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Liveness {
    /// The holder lives; its lease must not be touched.
    Alive,
    /// The holder is gone; its lease is stale.
    Dead {
        /// Why: `no such process`, `pid reused`, `rebooted`, `zombie`, `lock released`.
        reason: String,
    },
}

impl Liveness {
    /// Whether this is [`Liveness::Alive`].
    pub fn is_alive(&self) -> bool {
        matches!(self, Liveness::Alive)
    }
}

/// The current boot id.
pub fn boot_id() -> Result<String> {
    let path = Path::new("/proc/sys/kernel/random/boot_id");
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| Error::io(path, "read the boot id", e))
}

/// State and start time of `pid` from `/proc/<pid>/stat`; `None` when there is no such process.
fn proc_stat(pid: u32) -> Result<Option<(char, u64)>> {
    let path = PathBuf::from(format!("/proc/{pid}/stat"));
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, "read", e)),
    };
    // The command name (field 2) is in parentheses and may itself contain spaces or ')'; the
    // fields after the last ')' start with field 3 (state). Field 22 (start time) is index 19.
    let parse = || -> Option<(char, u64)> {
        let rest = &text[text.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let state = fields.first()?.chars().next()?;
        let start = fields.get(19)?.parse().ok()?;
        Some((state, start))
    };
    match parse() {
        Some(v) => Ok(Some(v)),
        None => Err(Error::Invalid {
            subject: path.display().to_string(),
            reason: "unexpected format".to_string(),
        }),
    }
}

/// The parent pid of `pid` (field 4 of `/proc/<pid>/stat`).
fn parent_of(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Whether two processes run the same executable with the same command line (a fork that did not
/// exec).
fn same_program(a: u32, b: u32) -> bool {
    let cmdline = |pid: u32| std::fs::read(format!("/proc/{pid}/cmdline")).ok();
    let exe = |pid: u32| std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    match (cmdline(a), cmdline(b), exe(a), exe(b)) {
        (Some(ca), Some(cb), Some(ea), Some(eb)) => ca == cb && ea == eb,
        _ => false,
    }
}

impl Holder {
    /// The process `pid` as a holder. Fails when there is no such process, or when it has exited
    /// and only its zombie is left.
    pub fn process(pid: u32) -> Result<Holder> {
        let refuse = |reason: String| Error::invalid(format!("/proc/{pid}"), reason);
        match proc_stat(pid)? {
            Some(('Z' | 'X', _)) => Err(refuse(format!(
                "process {pid} has exited (a zombie not yet reaped by its parent); a lease needs a live holder"
            ))),
            Some((_, start_time)) => Ok(Holder::Process {
                pid,
                start_time,
                boot_id: boot_id()?,
            }),
            None => Err(refuse(format!(
                "no such process {pid}; a lease needs a live holder"
            ))),
        }
    }

    /// The calling process as a holder.
    pub fn current_process() -> Result<Holder> {
        Holder::process(std::process::id())
    }

    /// The holder a command-line `acquire` names when the host names none: the nearest ancestor,
    /// starting at the parent, that is not a fork of its own parent.
    ///
    /// A process that forked without exec (a shell's pipeline or command-substitution subshell,
    /// as in `T=$(projectfile acquire … | jq -r .token)`) has the same executable and command line
    /// as its parent and exits as soon as the pipeline does; naming it would make the lease stale
    /// at once. Skipping such forks names the shell or program that actually asked. Erring
    /// towards a longer-lived ancestor never strips a live session.
    pub fn calling_process() -> Result<Holder> {
        let mut pid = std::os::unix::process::parent_id();
        for _ in 0..32 {
            let Some(parent) = parent_of(pid) else {
                break;
            };
            if parent <= 1 || !same_program(pid, parent) {
                break;
            }
            pid = parent;
        }
        Holder::process(pid)
    }

    /// A lock file as a holder, unchecked: alive while some process holds an exclusive lock on it.
    /// [`Holder::held_lock`] is the checked form; an acquire checks either with
    /// [`Holder::validate`].
    pub fn lock(path: impl Into<PathBuf>) -> Holder {
        Holder::Lock { path: path.into() }
    }

    /// A lock file as a holder, checked now: it must be a regular file (not a symlink, FIFO,
    /// socket, device or directory) that some process holds locked. The path should be absolute:
    /// it is recorded and checked again later from other working directories.
    pub fn held_lock(path: impl Into<PathBuf>) -> Result<Holder> {
        let holder = Holder::lock(path);
        holder.validate()?;
        Ok(holder)
    }

    /// Refuses a holder that is not alive now, with `<path>: <reason>` (`/proc/<pid>` for a
    /// process): a lease taken for it would be stale at once. Unlike [`Holder::liveness`], an
    /// answer that cannot be known (a `/proc` or lock file that cannot be read) is a refusal too.
    pub fn validate(&self) -> Result<()> {
        match self.check()? {
            Liveness::Alive => Ok(()),
            Liveness::Dead { reason } => Err(match self {
                Holder::Process { pid, .. } => Error::invalid(
                    format!("/proc/{pid}"),
                    format!("{reason}; a lease needs a live holder"),
                ),
                Holder::Lock { path } => Error::Unsafe {
                    path: path.clone(),
                    reason: format!("{reason}; a lease needs a live holder"),
                },
            }),
        }
    }

    /// Whether the holder still lives. Errors reading `/proc` or the lock file count as alive, so
    /// a lease is never stripped on a guess. Never blocks.
    pub fn liveness(&self) -> Liveness {
        match (self.check(), self) {
            (Ok(Liveness::Dead { reason }), Holder::Lock { path }) => Liveness::Dead {
                reason: format!("holder lock {}: {reason}", path.display()),
            },
            (Ok(liveness), _) => liveness,
            (Err(_), _) => Liveness::Alive,
        }
    }

    /// The liveness, with the errors that keep it from being known.
    fn check(&self) -> Result<Liveness> {
        let dead = |reason: String| Ok(Liveness::Dead { reason });
        match self {
            Holder::Process {
                pid,
                start_time,
                boot_id: recorded_boot,
            } => {
                if &boot_id()? != recorded_boot {
                    return dead("rebooted since the lease was taken".to_string());
                }
                match proc_stat(*pid)? {
                    None => dead(format!("process {pid} has exited")),
                    Some((_, start)) if start != *start_time => {
                        dead(format!("process {pid} has exited and its pid was reused"))
                    }
                    Some(('Z' | 'X', _)) => dead(format!("process {pid} has exited (zombie)")),
                    Some(_) => Ok(Liveness::Alive),
                }
            }
            Holder::Lock { path } => match fsio::holder_lock_state(path)? {
                HolderLockState::Held => Ok(Liveness::Alive),
                HolderLockState::Free => dead("nobody holds a lock on it".to_string()),
                HolderLockState::Missing => dead("no such file".to_string()),
                HolderLockState::NotAFile(what) => {
                    dead(format!("it is {what}, not a regular lock file"))
                }
            },
        }
    }

    /// A short human description.
    pub fn describe(&self) -> String {
        match self {
            Holder::Process { pid, .. } => format!("process {pid}"),
            Holder::Lock { path } => format!("lock on {}", path.display()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn current_process_is_alive() {
        let me = Holder::current_process().unwrap();
        assert_eq!(me.liveness(), Liveness::Alive);
    }

    #[test]
    fn reused_pid_is_dead() {
        let Holder::Process {
            pid,
            start_time,
            boot_id,
        } = Holder::current_process().unwrap()
        else {
            unreachable!()
        };
        let forged = Holder::Process {
            pid,
            start_time: start_time + 1,
            boot_id,
        };
        assert!(!forged.liveness().is_alive());
    }

    #[test]
    fn other_boot_is_dead() {
        let Holder::Process {
            pid, start_time, ..
        } = Holder::current_process().unwrap()
        else {
            unreachable!()
        };
        let forged = Holder::Process {
            pid,
            start_time,
            boot_id: "not-this-boot".into(),
        };
        assert!(!forged.liveness().is_alive());
    }

    #[test]
    fn exited_process_is_dead() {
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let holder = Holder::process(child.id()).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!holder.liveness().is_alive());
    }

    #[test]
    fn calling_process_skips_forked_subshells() {
        // `sh -c '… | cat'`: the left side of the pipe runs in a forked subshell of `sh`.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("echo $$; (cat /proc/self/stat > /dev/null; echo $(sh -c 'echo $PPID')) | cat")
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let mut lines = text.lines();
        let shell: u32 = lines.next().unwrap().parse().unwrap();
        let forked: u32 = lines.next().unwrap().parse().unwrap();
        assert_ne!(shell, forked, "the pipeline side is a forked subshell");
        // The forked subshell is gone now; but the rule itself is checked on live processes:
        assert!(same_program(std::process::id(), std::process::id()));
        assert_eq!(
            parent_of(std::process::id()),
            Some(std::os::unix::process::parent_id())
        );
    }

    #[test]
    fn lock_holder_lives_while_locked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("holder.lock");
        let holder = Holder::lock(&path);
        assert!(!holder.liveness().is_alive(), "missing file: no holder");
        let guard = fsio::hold_lock(&path).unwrap();
        assert!(holder.liveness().is_alive());
        drop(guard);
        assert!(!holder.liveness().is_alive());
    }

    #[test]
    fn only_a_held_regular_file_validates_and_nothing_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let held = dir.path().join("held");
        let _guard = fsio::hold_lock(&held).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&held, &link).unwrap();
        for (path, words) in [
            (fifo.as_path(), "FIFO"),
            (dir.path(), "directory"),
            (link.as_path(), "symlink"),
            (Path::new("/dev/null"), "device"),
            (&dir.path().join("missing"), "no such file"),
        ] {
            let holder = Holder::lock(path);
            let error = holder.validate().unwrap_err().to_string();
            assert!(
                error.starts_with(&format!("{}: ", path.display())) && error.contains(words),
                "{error}"
            );
            assert!(!holder.liveness().is_alive(), "{}", path.display());
        }
        assert!(Holder::held_lock(&held).is_ok());
    }

    #[test]
    fn a_zombie_is_refused_and_dead() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let holder = Holder::process(child.id()).unwrap_or_else(|_| Holder::Process {
            pid: child.id(),
            start_time: 0,
            boot_id: boot_id().unwrap(),
        });
        while !matches!(proc_stat(child.id()), Ok(Some(('Z', _)))) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let error = Holder::process(child.id()).unwrap_err().to_string();
        assert!(error.contains("zombie"), "{error}");
        assert!(holder.validate().is_err());
        child.wait().unwrap();
    }
}
