//! Lease holders: what keeps a lease alive, and whether it still lives.
//!
//! A process holder is identified by pid **and** the process's start time (clock ticks since boot,
//! field 22 of `/proc/<pid>/stat`) **and** the boot id (`/proc/sys/kernel/random/boot_id`), so a
//! reused pid or a reboot can never keep a dead lease alive. A lock holder is alive while some
//! process holds an exclusive lock on the named regular file.
//!
//! **Namespaces.** A pid means something only in its PID namespace, a start time only in its
//! time namespace, and a lock file's path only in its mount namespace; a container is all three.
//! So a process holder also records the PID and time namespaces its pid and start time were read
//! in (the inode numbers of `/proc/self/ns/pid` and `/proc/self/ns/time` of the process that
//! recorded it, whose `/proc` must be its own PID namespace's), and a lock holder the mount
//! namespace its path was given in. A holder is judged where it lives:
//!
//! - recorded in the namespaces of the process judging it: as above;
//! - a process of a PID namespace *below* the judge's (a container's, seen from the host): every
//!   process of that namespace is visible here, each with its pid at every level
//!   (`/proc/<pid>/status`, `NSpid`), so the holder is found by its pid at that namespace's level
//!   and its start time, or known gone;
//! - anything else (a PID namespace above or beside the judge's, or one no process visible here
//!   belongs to any more; another time namespace; a lock path in another mount namespace not
//!   held now): it **cannot be judged from here** ([`Liveness::Unknown`]). `status` says so,
//!   and nothing strips it; `release --token` ends it.
//!
//! A holder is checked twice, and neither check ever blocks:
//! - **at acquire** ([`Holder::validate`]): a pid must name a running process that is not a zombie
//!   (`/proc/<pid>/stat` state `Z` or `X`), and a lock must be a regular file, not a symlink, that
//!   some process holds locked now; anything else is refused, since the lease would be stale at
//!   once. [`Holder::process`] and [`Holder::held_lock`] build validated holders, and the first
//!   validation of such a holder on the same thread within 100 ms (no other holder read in
//!   between) takes the answer they read instead of reading it again.
//! - **later, by every command** ([`Holder::liveness`]): the same facts, read without following a
//!   final symlink and without opening anything that could block (a holder file replaced by a FIFO
//!   makes the lease stale; it never hangs `status`, `acquire` or `release`).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsio::{self, HolderLockState};

/// What keeps a lease alive.
// Read from JSON through `HolderFields` (the same form as written), not derived: see there why.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Holder {
    /// A live process.
    Process {
        /// Process id, in the PID namespace `pid_ns`.
        pid: u32,
        /// Start time in clock ticks since boot, as read in the time namespace `time_ns`.
        start_time: u64,
        /// The boot this process belongs to.
        boot_id: std::sync::Arc<str>,
        /// The PID namespace `pid` is a number of (the inode of `/proc/self/ns/pid` of the
        /// process that recorded it).
        pid_ns: u64,
        /// The time namespace `start_time` was read in (0 on a kernel without them).
        time_ns: u64,
    },
    /// Whoever holds an exclusive lock on this file.
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The mount namespace the path was given in (0 when it could not be read).
        mnt_ns: u64,
        /// The device of the file the path named when it was given (0 when none was read): a
        /// lock still held on that file keeps the lease after another file took its path.
        #[serde(default)]
        dev: u64,
        /// That file's inode number (0 when none was read).
        #[serde(default)]
        ino: u64,
    },
}

/// The JSON form of a [`Holder`] read field by field. serde reads an internally tagged enum by
/// first buffering each object whole (every key and string allocated twice); a ledger holds one
/// holder per lease, so that was most of what reading a ledger of many leases cost.
#[derive(Deserialize)]
struct HolderFields {
    kind: HolderKind,
    pid: Option<u32>,
    start_time: Option<u64>,
    boot_id: Option<String>,
    pid_ns: Option<u64>,
    time_ns: Option<u64>,
    path: Option<PathBuf>,
    mnt_ns: Option<u64>,
    dev: Option<u64>,
    ino: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum HolderKind {
    Process,
    Lock,
}

impl<'de> Deserialize<'de> for Holder {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let fields = HolderFields::deserialize(deserializer)?;
        let missing = |name: &'static str| D::Error::missing_field(name);
        Ok(match fields.kind {
            HolderKind::Process => Holder::Process {
                pid: fields.pid.ok_or_else(|| missing("pid"))?,
                start_time: fields.start_time.ok_or_else(|| missing("start_time"))?,
                boot_id: fields.boot_id.ok_or_else(|| missing("boot_id"))?.into(),
                pid_ns: fields.pid_ns.ok_or_else(|| missing("pid_ns"))?,
                time_ns: fields.time_ns.ok_or_else(|| missing("time_ns"))?,
            },
            HolderKind::Lock => Holder::Lock {
                path: fields.path.ok_or_else(|| missing("path"))?,
                mnt_ns: fields.mnt_ns.ok_or_else(|| missing("mnt_ns"))?,
                dev: fields.dev.unwrap_or(0),
                ino: fields.ino.unwrap_or(0),
            },
        })
    }
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
    /// Whether the holder lives cannot be told from here (it lives in a namespace this process
    /// cannot see into, or what would tell could not be read): its lease is never taken for
    /// stale.
    Unknown {
        /// Why it cannot be judged, and what would.
        reason: String,
    },
}

impl Liveness {
    /// Whether this is [`Liveness::Alive`].
    pub fn is_alive(&self) -> bool {
        matches!(self, Liveness::Alive)
    }

    /// Whether this is [`Liveness::Dead`]: the only answer that makes a lease stale.
    pub fn is_dead(&self) -> bool {
        matches!(self, Liveness::Dead { .. })
    }
}

thread_local! {
    /// Files under `/proc` this module has opened on this thread.
    static PROC_READS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many files under `/proc` (a process's `stat`, `cmdline`, the boot id) this module has
/// opened on the calling thread: tests check that a command reads each holder once.
pub fn proc_reads_on_this_thread() -> u64 {
    PROC_READS.with(std::cell::Cell::get)
}

/// Room for any `/proc/<pid>/stat`: 52 fields of at most 20 digits and a command name of at most
/// 64 bytes fit in 1,200.
const PROC_STAT_ROOM: usize = 2048;

/// Reads the small `/proc` file `path` with one `read` into `buf` (procfs generates the whole
/// text on the first read when it fits), and the rest, if any, with more. `Ok(None)`: no such
/// file (the process is gone).
fn read_proc<'b>(path: &Path, buf: &'b mut Vec<u8>) -> std::io::Result<Option<&'b [u8]>> {
    use std::io::Read as _;
    PROC_READS.with(|c| c.set(c.get() + 1));
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    buf.clear();
    buf.resize(PROC_STAT_ROOM, 0);
    let mut filled = 0;
    loop {
        let n = file.read(&mut buf[filled..])?;
        filled += n;
        if n == 0 || buf[..filled].ends_with(b"\n") {
            break;
        }
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
    }
    Ok(Some(&buf[..filled]))
}

/// The boot id, read once per process (it cannot change while the process runs).
static BOOT_ID: std::sync::OnceLock<std::sync::Arc<str>> = std::sync::OnceLock::new();

/// The current boot id.
pub fn boot_id() -> Result<std::sync::Arc<str>> {
    if let Some(id) = BOOT_ID.get() {
        return Ok(id.clone());
    }
    let path = Path::new("/proc/sys/kernel/random/boot_id");
    let mut buf = Vec::new();
    let text = match read_proc(path, &mut buf) {
        Ok(Some(bytes)) => String::from_utf8_lossy(bytes).trim().to_string(),
        Ok(None) => {
            let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
            return Err(Error::io(path, "read the boot id", missing));
        }
        Err(e) => return Err(Error::io(path, "read the boot id", e)),
    };
    // A file that reads otherwise (empty where a sandbox masks it) names no boot: taken for one,
    // every lease would look rebooted.
    if !is_boot_id(&text) {
        let masked = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("it reads {text:?}, not a boot id (masked here?)"),
        );
        return Err(Error::io(path, "read the boot id", masked));
    }
    Ok(BOOT_ID.get_or_init(|| text.into()).clone())
}

/// Whether `text` has the form of a boot id: a UUID in lower-case hex, as the kernel writes it.
fn is_boot_id(text: &str) -> bool {
    text.len() == 36
        && text.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
        })
}

/// Whether a process `pid` of this PID namespace exists, asked of the kernel rather than of
/// `/proc` (which `hidepid` may keep from showing it): `Some(false)` only when there is none.
fn exists_here(pid: u32) -> Option<bool> {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)?;
    match rustix::process::test_kill_process(pid) {
        Ok(()) | Err(rustix::io::Errno::PERM) => Some(true),
        Err(rustix::io::Errno::SRCH) => Some(false),
        Err(_) => None,
    }
}

/// The boot as notes left between commands name it: the boot id, and in the crash tests the
/// count of the power losses they modelled (each a restart; none outside them). A note naming
/// another boot was left before a power loss. `None` when the boot id cannot be read.
pub(crate) fn boot_stamp() -> Option<String> {
    let boot = boot_id().ok()?;
    Some(match crate::fsio::faults::restarts() {
        0 => boot.to_string(),
        restarts => format!("{boot}+{restarts}"),
    })
}

/// The namespaces this process reads `/proc` in, read once per process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct View {
    /// The inode of `/proc/self/ns/pid` (0 when it cannot be read).
    pid_ns: u64,
    /// Whether `/proc` is this PID namespace's own (`NSpid` of `/proc/self/status` has one
    /// entry): only then are the pids under it this namespace's.
    own_proc: bool,
    /// The inode of `/proc/self/ns/time` (0 on a kernel without time namespaces).
    time_ns: u64,
    /// The inode of `/proc/self/ns/mnt` (0 when it cannot be read).
    mnt_ns: u64,
}

static VIEW: std::sync::OnceLock<View> = std::sync::OnceLock::new();

/// The inode number of the initial PID namespace, fixed by the kernel (`PROC_PID_INIT_INO`,
/// `include/linux/proc_ns.h`).
const INITIAL_PID_NS: u64 = 0xEFFF_FFFC;

/// The inode number of the namespace file `path` (`/proc/<pid>/ns/<kind>`), 0 when it cannot
/// be read.
fn ns_inode(path: &str) -> u64 {
    rustix::fs::stat(path).map_or(0, |stat| stat.st_ino)
}

/// The pids of the process whose `/proc/<pid>/status` text is `status`, one per PID namespace
/// from the one `/proc` belongs to down to its own (`NSpid`); empty when the line is missing.
fn ns_pids(status: &[u8]) -> Vec<u32> {
    status
        .split(|b| *b == b'\n')
        .find_map(|line| line.strip_prefix(b"NSpid:"))
        .map(|pids| {
            pids.split(u8::is_ascii_whitespace)
                .filter(|field| !field.is_empty())
                .filter_map(|field| std::str::from_utf8(field).ok()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// This process's [`View`].
fn view() -> View {
    *VIEW.get_or_init(|| {
        let mut buf = Vec::new();
        let own_proc = match read_proc(Path::new("/proc/self/status"), &mut buf) {
            // A kernel before 4.1 writes no `NSpid`: it has one PID namespace as far as `/proc`
            // tells, and it is this one.
            Ok(Some(status)) => ns_pids(status).len() <= 1,
            _ => false,
        };
        View {
            pid_ns: ns_inode("/proc/self/ns/pid"),
            own_proc,
            time_ns: ns_inode("/proc/self/ns/time"),
            mnt_ns: ns_inode("/proc/self/ns/mnt"),
        }
    })
}

/// Whether the process recorded as `pid` of the PID namespace `pid_ns` with start time `start`
/// lives, for a namespace other than this process's: found among the processes visible here
/// (a namespace below this one shows all of its own), or `Unknown` when no process of that
/// namespace is visible here. `start` is `None` for a holder recorded in another time namespace,
/// whose start time reads otherwise here: a pid found is then `Unknown`, one not found dead.
fn foreign_liveness(pid: u32, start: Option<u64>, pid_ns: u64) -> Result<Liveness> {
    let proc_dir = fsio::open_dir_following(Path::new("/proc"))?;
    let listing = rustix::fs::Dir::read_from(&proc_dir)
        .map_err(|e| Error::io("/proc", "list", std::io::Error::from(e)))?;
    let mut buf = Vec::new();
    // Processes in a namespace below this one (more than one pid), with their pids.
    let mut below: Vec<(u32, Vec<u32>)> = Vec::new();
    for entry in listing.flatten() {
        let Some(q) = entry
            .file_name()
            .to_str()
            .ok()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(Some(status)) = read_proc(Path::new(&format!("/proc/{q}/status")), &mut buf) else {
            continue;
        };
        let pids = ns_pids(status);
        if pids.len() > 1 {
            below.push((q, pids));
        }
    }
    // The level of `pid_ns` below this namespace: that of a process whose own namespace it is.
    let level = below.iter().find_map(|(q, pids)| {
        (ns_inode(&format!("/proc/{q}/ns/pid")) == pid_ns).then(|| pids.len() - 1)
    });
    let Some(level) = level else {
        // Every PID namespace descends from the initial one, whose `/proc` shows every process
        // of every namespace: seen from there, a namespace no process lives in is gone, and so
        // is every process of it. From anywhere else it may be above or beside this one.
        let here = view();
        if here.own_proc && here.pid_ns == INITIAL_PID_NS {
            return Ok(Liveness::Dead {
                reason: format!(
                    "process {pid} of PID namespace {pid_ns} has exited: no process lives in that namespace any more (seen from the initial PID namespace, which sees them all)"
                ),
            });
        }
        return Ok(Liveness::Unknown {
            reason: format!(
                "process {pid} lives in another PID namespace (ns {pid_ns}), above or beside this one or gone: it cannot be judged from here; `projectfile release --token` ends its lease"
            ),
        });
    };
    // Its pid at that level and its start time (another namespace at the same depth may use
    // the same pid for another process).
    for (q, pids) in &below {
        if pids.get(level) != Some(&pid) {
            continue;
        }
        let Some(start) = start else {
            return Ok(Liveness::Unknown {
                reason: format!(
                    "process {pid} of PID namespace {pid_ns} was recorded in another time namespace, where start times read otherwise: it cannot be judged from here"
                ),
            });
        };
        match proc_stat(*q)? {
            Some(('Z' | 'X', found)) if found == start && has_exited(*q) => {
                return Ok(Liveness::Dead {
                    reason: format!("process {pid} of PID namespace {pid_ns} has exited (zombie)"),
                });
            }
            Some((_, found)) if found == start => return Ok(Liveness::Alive),
            _ => {}
        }
    }
    Ok(Liveness::Dead {
        reason: format!("process {pid} of PID namespace {pid_ns} has exited"),
    })
}

/// The fields after the command name of a `/proc/<pid>/stat` text, from field 3 (state) on.
/// The command name (field 2) is in parentheses and may itself contain spaces or ')', so the
/// fields start after the last ')'.
fn stat_fields(text: &[u8]) -> Option<impl Iterator<Item = &[u8]>> {
    let close = text.iter().rposition(|b| *b == b')')?;
    Some(
        text[close + 1..]
            .split(u8::is_ascii_whitespace)
            .filter(|field| !field.is_empty()),
    )
}

/// State and start time of `pid`; `None` when there is no such process.
///
/// Read from `/proc/<pid>/task/<pid>/stat`, the file of the process's first thread, which gives
/// the same state and start time as `/proc/<pid>/stat` (both are that thread's) without the
/// kernel summing every thread's counters to write it: a host with many threads (the one a
/// benchmark runs from, an editor) costs each command one thread's worth.
fn proc_stat(pid: u32) -> Result<Option<(char, u64)>> {
    Ok(thread_stat(pid)?.map(|(state, start, _)| (state, start)))
}

/// [`proc_stat`], and whether `pid` is the id of a thread that is not its process's first: its
/// exit signal (field 38) is -1, which the kernel gives every thread made with `CLONE_THREAD`, and
/// no process.
fn thread_stat(pid: u32) -> Result<Option<(char, u64, bool)>> {
    let path = PathBuf::from(format!("/proc/{pid}/task/{pid}/stat"));
    let mut buf = Vec::new();
    let text = match read_proc(&path, &mut buf) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(e) => return Err(Error::io(path, "read", e)),
    };
    // Field 3 is the state, field 22 the start time (index 19 after the state), field 38 the
    // exit signal (16 after the start time).
    let parse = || -> Option<(char, u64, bool)> {
        let mut fields = stat_fields(text)?;
        let state = char::from(*fields.next()?.first()?);
        let start = std::str::from_utf8(fields.nth(18)?).ok()?.parse().ok()?;
        let thread = fields.nth(15).is_some_and(|signal| signal == b"-1");
        Some((state, start, thread))
    };
    match parse() {
        Some(v) => Ok(Some(v)),
        None => Err(Error::Invalid {
            subject: path.display().to_string(),
            reason: "unexpected format".to_string(),
        }),
    }
}

/// Whether `pid`, whose first thread is a zombie (`Z`, or `X` going), has exited: its other
/// threads have too. A process whose main thread called `pthread_exit` while others run shows
/// its first thread as a zombie and is alive; `Threads:` in `/proc/<pid>/status` counts the
/// group's threads still there (1, the zombie leader itself, once all have exited).
fn has_exited(pid: u32) -> bool {
    status_number(pid, b"Threads:").is_none_or(|n| n <= 1)
}

/// A number field of `/proc/<pid>/status` (`field` with its colon); `None` when the process or
/// the field is not there.
fn status_number(pid: u32, field: &[u8]) -> Option<u64> {
    let mut buf = Vec::new();
    let text = read_proc(Path::new(&format!("/proc/{pid}/status")), &mut buf).ok()??;
    text.split(|b| *b == b'\n')
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| std::str::from_utf8(rest).ok())
        .and_then(|n| n.trim().parse::<u64>().ok())
}

/// The parent pid of `pid` (field 4 of `/proc/<pid>/stat`).
fn parent_of(pid: u32) -> Option<u32> {
    let mut buf = Vec::new();
    let text = read_proc(Path::new(&format!("/proc/{pid}/stat")), &mut buf).ok()??;
    let parent = stat_fields(text)?.nth(1)?;
    std::str::from_utf8(parent).ok()?.parse().ok()
}

/// Whether two processes run the same executable with the same command line (a fork that did not
/// exec).
fn same_program(a: u32, b: u32) -> bool {
    let cmdline = |pid: u32| {
        let mut buf = Vec::new();
        let path = format!("/proc/{pid}/cmdline");
        read_proc(Path::new(&path), &mut buf)
            .ok()?
            .map(<[u8]>::to_vec)
    };
    let exe = |pid: u32| std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    match (cmdline(a), cmdline(b), exe(a), exe(b)) {
        (Some(ca), Some(cb), Some(ea), Some(eb)) => ca == cb && ea == eb,
        _ => false,
    }
}

/// How long a holder validated on building stays validated for [`Holder::validate`]: the time
/// between building a request's holder and starting its acquire, with room for a loaded machine.
const FRESH_FOR: std::time::Duration = std::time::Duration::from_millis(100);

thread_local! {
    /// The holder [`Holder::process`] or [`Holder::held_lock`] built and validated last on this
    /// thread, and when.
    static JUST_VALIDATED: std::cell::RefCell<Option<(Holder, std::time::Instant)>> =
        const { std::cell::RefCell::new(None) };
}

/// Takes the holder kept by [`Holder::validated_now`], if any: any holder read makes it stale.
fn forget_validated() -> Option<(Holder, std::time::Instant)> {
    JUST_VALIDATED.with(|slot| slot.borrow_mut().take())
}

impl Holder {
    /// The process `pid` as a holder. Fails when there is no such process, when it has exited
    /// and only its zombie is left, or when `pid` is the id of one of a process's threads.
    pub fn process(pid: u32) -> Result<Holder> {
        let refuse = |reason: String| Error::invalid(format!("/proc/{pid}"), reason);
        forget_validated();
        let here = view();
        if !here.own_proc {
            return Err(refuse(format!(
                "/proc here is not this PID namespace's own, so process {pid} cannot be looked up; mount one for it (e.g. `unshare --pid --fork --mount-proc`)"
            )));
        }
        match thread_stat(pid)? {
            Some(('Z' | 'X', _, _)) if has_exited(pid) => Err(refuse(format!(
                "process {pid} has exited (a zombie not yet reaped by its parent); a lease needs a live holder"
            ))),
            // A thread's id has a `/proc/<tid>` of its own, hidden from listings: it names one
            // thread of a process, whose end would end the lease while the process lives on.
            Some((_, _, true)) => {
                let group = status_number(pid, b"Tgid:").map_or("?".to_string(), |g| g.to_string());
                Err(refuse(format!(
                    "{pid} is a thread of process {group}, not a process; name the process ({group})"
                )))
            }
            Some((_, start_time, false)) => Ok(Holder::Process {
                pid,
                start_time,
                boot_id: boot_id()?,
                pid_ns: here.pid_ns,
                time_ns: here.time_ns,
            }
            .validated_now()),
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
        use std::os::unix::fs::MetadataExt as _;
        let path = path.into();
        // The file itself, as well as its path (a regular file only; a link is never followed).
        let (dev, ino) = std::fs::symlink_metadata(&path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map_or((0, 0), |meta| (meta.dev(), meta.ino()));
        Holder::Lock {
            path,
            mnt_ns: view().mnt_ns,
            dev,
            ino,
        }
    }

    /// A lock file as a holder, checked now: it must be a regular file (not a symlink, FIFO,
    /// socket, device or directory) that some process holds locked. The path should be absolute:
    /// it is recorded and checked again later from other working directories.
    pub fn held_lock(path: impl Into<PathBuf>) -> Result<Holder> {
        let holder = Holder::lock(path);
        holder.validate()?;
        Ok(holder.validated_now())
    }

    /// Remembers that this holder was just found alive: the next [`Holder::validate`] of it on
    /// this thread, within [`FRESH_FOR`], takes that answer instead of asking again.
    fn validated_now(self) -> Holder {
        let now = std::time::Instant::now();
        JUST_VALIDATED.with(|slot| *slot.borrow_mut() = Some((self.clone(), now)));
        self
    }

    /// Whether this holder was built and found alive on this thread within [`FRESH_FOR`], with
    /// no holder read since; the answer is taken once.
    fn just_validated(&self) -> bool {
        match forget_validated() {
            Some((holder, at)) => &holder == self && at.elapsed() <= FRESH_FOR,
            None => false,
        }
    }

    /// Refuses a holder that is not alive now, with `<path>: <reason>` (`/proc/<pid>` for a
    /// process): a lease taken for it would be stale at once. Unlike [`Holder::liveness`], an
    /// answer that cannot be known (a `/proc` or lock file that cannot be read) is a refusal too.
    ///
    /// A holder [`Holder::process`] or [`Holder::held_lock`] built on this thread moments ago
    /// (within 100 ms) was found alive then, by the same reads: its first validation takes
    /// that answer (a holder can die right after any check; a lease whose holder died is stale
    /// and the next command strips it).
    pub fn validate(&self) -> Result<()> {
        if self.just_validated() {
            return Ok(());
        }
        match self.check()? {
            Liveness::Alive => Ok(()),
            Liveness::Dead { reason } => Err(match self {
                Holder::Process { pid, .. } => Error::invalid(
                    format!("/proc/{pid}"),
                    format!("{reason}; a lease needs a live holder"),
                ),
                Holder::Lock { path, .. } => Error::Unsafe {
                    path: path.clone(),
                    reason: format!("{reason}; a lease needs a live holder"),
                },
            }),
            Liveness::Unknown { reason } => Err(Error::invalid(
                self.describe(),
                format!("{reason}; a lease needs a holder this process can see alive"),
            )),
        }
    }

    /// Whether the holder still lives. An error reading `/proc` or the lock file is no answer
    /// ([`Liveness::Unknown`]), so a lease is never stripped on a guess. Never blocks.
    pub fn liveness(&self) -> Liveness {
        match (self.check(), self) {
            (Ok(Liveness::Dead { reason }), Holder::Lock { path, .. }) => Liveness::Dead {
                reason: format!("holder lock {}: {reason}", path.display()),
            },
            (Ok(liveness), _) => liveness,
            (Err(e), _) => Liveness::Unknown {
                reason: format!("its liveness could not be read: {e}"),
            },
        }
    }

    /// The liveness, with the errors that keep it from being known.
    fn check(&self) -> Result<Liveness> {
        // A newer answer than the one kept: the kept one is no longer the latest.
        forget_validated();
        let dead = |reason: String| Ok(Liveness::Dead { reason });
        match self {
            Holder::Process {
                pid,
                start_time,
                boot_id: recorded_boot,
                pid_ns,
                time_ns,
            } => {
                // A boot id that cannot be read here is no answer (an error: `Unknown`); one
                // recorded that is not a boot id names no boot a holder of ours lived in.
                if &boot_id()? != recorded_boot {
                    return dead("rebooted since the lease was taken".to_string());
                }
                let here = view();
                // In another time namespace start times read otherwise, so only a holder that
                // is gone altogether can be told.
                let start = (*time_ns == here.time_ns).then_some(*start_time);
                if *pid_ns != here.pid_ns {
                    return foreign_liveness(*pid, start, *pid_ns);
                }
                if !here.own_proc {
                    return Ok(Liveness::Unknown {
                        reason: format!(
                            "/proc here is not this PID namespace's own, so process {pid} cannot be looked up"
                        ),
                    });
                }
                let stat = proc_stat(*pid)?;
                if stat.is_none() && exists_here(*pid) != Some(false) {
                    return Ok(Liveness::Unknown {
                        reason: format!(
                            "process {pid} exists but /proc here does not show it (mounted with hidepid?): it cannot be judged"
                        ),
                    });
                }
                let Some(start_time) = start else {
                    return match stat {
                        None => dead(format!("process {pid} has exited")),
                        Some(_) => Ok(Liveness::Unknown {
                            reason: format!(
                                "process {pid} was recorded in another time namespace, where start times read otherwise: it cannot be judged from here"
                            ),
                        }),
                    };
                };
                match stat {
                    None => dead(format!("process {pid} has exited")),
                    Some((_, start)) if start != start_time => {
                        dead(format!("process {pid} has exited and its pid was reused"))
                    }
                    Some(('Z' | 'X', _)) if has_exited(*pid) => {
                        dead(format!("process {pid} has exited (zombie)"))
                    }
                    Some(_) => Ok(Liveness::Alive),
                }
            }
            Holder::Lock {
                path,
                mnt_ns,
                dev,
                ino,
            } => match fsio::holder_lock_state(path)? {
                HolderLockState::Held => Ok(Liveness::Alive),
                // The path may name another file, or none, in another mount namespace.
                _ if *mnt_ns != view().mnt_ns => Ok(Liveness::Unknown {
                    reason: format!(
                        "lock {} was given in another mount namespace, where its path may name another file: it cannot be judged from here",
                        path.display()
                    ),
                }),
                // The file given may have lost its path (deleted, or renamed away, and another
                // regular file or none there now) while its holder kept its lock: a lock still
                // held on it is the holder alive. A path swapped for what can never be a lock
                // file (a FIFO, …) is not given this benefit: the lease is stale.
                HolderLockState::Free | HolderLockState::Missing
                    if *ino != 0 && fsio::lock_holder_of(*dev, *ino).is_some() =>
                {
                    Ok(Liveness::Alive)
                }
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
            Holder::Lock { path, .. } => format!("lock on {}", path.display()),
        }
    }
}

/// Liveness for one command: each distinct holder is checked once, however many leases name it,
/// so what a command costs follows the work it does, not how many sessions are live. Build one
/// per command (under the workspace lock): a holder can die between commands, not within the
/// answer a command acts on.
#[derive(Debug, Default)]
pub struct LivenessCheck {
    answers: std::collections::HashMap<Holder, Liveness>,
    /// The holder asked last and its answer: the leases of one holder come in a row, and
    /// comparing is cheaper than hashing.
    last: Option<(Holder, Liveness)>,
}

impl LivenessCheck {
    /// A check that has asked nothing yet.
    pub fn new() -> LivenessCheck {
        LivenessCheck::default()
    }

    /// Records `holder` as alive without asking again: it was just validated
    /// ([`Holder::validate`]) by the command this check belongs to.
    pub fn assume_alive(&mut self, holder: &Holder) {
        self.answers.insert(holder.clone(), Liveness::Alive);
        self.last = None;
    }

    /// Whether `holder` lives: [`Holder::liveness`], asked once per distinct holder.
    pub fn liveness(&mut self, holder: &Holder) -> Liveness {
        if let Some((last, answer)) = &self.last
            && last == holder
        {
            return answer.clone();
        }
        let answer = match self.answers.get(holder) {
            Some(known) => known.clone(),
            None => {
                let answer = holder.liveness();
                self.answers.insert(holder.clone(), answer.clone());
                answer
            }
        };
        self.last = Some((holder.clone(), answer.clone()));
        answer
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
            pid_ns,
            time_ns,
        } = Holder::current_process().unwrap()
        else {
            unreachable!()
        };
        let forged = Holder::Process {
            pid,
            start_time: start_time + 1,
            boot_id,
            pid_ns,
            time_ns,
        };
        assert!(!forged.liveness().is_alive());
    }

    #[test]
    fn other_boot_is_dead() {
        let Holder::Process {
            pid,
            start_time,
            pid_ns,
            time_ns,
            ..
        } = Holder::current_process().unwrap()
        else {
            unreachable!()
        };
        let forged = Holder::Process {
            pid,
            start_time,
            boot_id: "not-this-boot".into(),
            pid_ns,
            time_ns,
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
    fn each_distinct_holder_is_read_once_per_check() {
        let me = Holder::current_process().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let gone = Holder::process(child.id()).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        let _ = boot_id().unwrap();
        let before = proc_reads_on_this_thread();
        let mut check = LivenessCheck::new();
        for _ in 0..64 {
            assert!(check.liveness(&me).is_alive());
            assert!(!check.liveness(&gone).is_alive());
        }
        // One `stat` per distinct holder; the boot id was read once for the whole process.
        assert_eq!(proc_reads_on_this_thread() - before, 2);
        let before = proc_reads_on_this_thread();
        for _ in 0..8 {
            assert!(me.liveness().is_alive());
        }
        assert_eq!(
            proc_reads_on_this_thread() - before,
            8,
            "without a check: one read each"
        );
    }

    #[test]
    fn holders_read_back_as_written() {
        for holder in [
            Holder::Process {
                pid: 7,
                start_time: 99,
                boot_id: "b-1".into(),
                pid_ns: 4026531836,
                time_ns: 4026531834,
            },
            Holder::lock("/run/x.lock"),
        ] {
            let text = serde_json::to_string(&holder).unwrap();
            assert_eq!(serde_json::from_str::<Holder>(&text).unwrap(), holder);
        }
        let text =
            r#"{"kind":"process","pid":7,"start_time":99,"boot_id":"b","pid_ns":1,"time_ns":2}"#;
        assert!(serde_json::from_str::<Holder>(text).is_ok());
        for (text, refusal) in [
            (
                r#"{"kind":"process","pid":7,"boot_id":"b","pid_ns":1,"time_ns":2}"#,
                "missing field `start_time`",
            ),
            // A holder without its namespaces cannot be judged: it is no holder of this build.
            (
                r#"{"kind":"process","pid":7,"start_time":99,"boot_id":"b"}"#,
                "missing field `pid_ns`",
            ),
            (r#"{"kind":"lock","mnt_ns":3}"#, "missing field `path`"),
            (r#"{"kind":"lock","path":"/x"}"#, "missing field `mnt_ns`"),
            (r#"{"kind":"pipe","path":"/x"}"#, "unknown variant `pipe`"),
            (r#"{"pid":7}"#, "missing field `kind`"),
        ] {
            let error = serde_json::from_str::<Holder>(text)
                .unwrap_err()
                .to_string();
            assert!(error.contains(refusal), "{text}: {error}");
        }
    }

    #[test]
    fn stat_fields_survive_hostile_command_names() {
        let text = b"42 (a) b) c (d)) S 1 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2\n";
        let mut fields = stat_fields(text).unwrap();
        assert_eq!(fields.next().unwrap(), b"S");
        assert_eq!(fields.nth(18).unwrap(), b"987654");
        assert!(stat_fields(b"no parenthesis").is_none());
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
    fn a_holder_just_built_is_validated_from_what_building_it_read_once() {
        let me = Holder::current_process().unwrap();
        let built = proc_reads_on_this_thread();
        me.validate().unwrap();
        assert_eq!(proc_reads_on_this_thread(), built, "taken from the build");
        me.validate().unwrap();
        assert_eq!(proc_reads_on_this_thread(), built + 1, "taken once");
        let again = Holder::current_process().unwrap();
        assert!(again.liveness().is_alive());
        let read = proc_reads_on_this_thread();
        again.validate().unwrap();
        assert_eq!(
            proc_reads_on_this_thread(),
            read + 1,
            "a holder read in between voids it"
        );
        let other = Holder::current_process().unwrap();
        let read = proc_reads_on_this_thread();
        Holder::Process {
            pid: std::process::id(),
            start_time: 1,
            boot_id: boot_id().unwrap(),
            pid_ns: view().pid_ns,
            time_ns: view().time_ns,
        }
        .validate()
        .unwrap_err();
        other.validate().unwrap();
        assert_eq!(
            proc_reads_on_this_thread(),
            read + 2,
            "another holder's validation voids it"
        );
    }

    #[test]
    fn a_process_with_many_threads_reads_as_its_whole_process_file_says() {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                })
            })
            .collect();
        let pid = std::process::id();
        let whole = std::fs::read(format!("/proc/{pid}/stat")).unwrap();
        let mut fields = stat_fields(&whole).unwrap();
        let state = char::from(fields.next().unwrap()[0]);
        let start: u64 = std::str::from_utf8(fields.nth(18).unwrap())
            .unwrap()
            .parse()
            .unwrap();
        let (read_state, read_start) = proc_stat(pid).unwrap().unwrap();
        assert_eq!(read_start, start);
        assert!(matches!(state, 'R' | 'S') && matches!(read_state, 'R' | 'S'));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for thread in threads {
            thread.join().unwrap();
        }
    }

    #[test]
    fn a_thread_is_refused_naming_its_process() {
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || stop_rx.recv().ok());
        let pid = std::process::id();
        // Any thread of this process but the main one (the test harness has others too).
        let tid = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|entry| entry.unwrap().file_name().to_str()?.parse::<u32>().ok())
            .find(|tid| *tid != pid)
            .unwrap();
        let error = Holder::process(tid).unwrap_err().to_string();
        assert!(
            error.contains(&format!("{tid} is a thread of process {pid}")),
            "{error}"
        );
        assert!(Holder::process(pid).is_ok());
        stop_tx.send(()).unwrap();
        thread.join().unwrap();
    }

    #[test]
    fn a_zombie_is_refused_and_dead() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let holder = Holder::process(child.id()).unwrap_or_else(|_| Holder::Process {
            pid: child.id(),
            start_time: 0,
            boot_id: boot_id().unwrap(),
            pid_ns: view().pid_ns,
            time_ns: view().time_ns,
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
