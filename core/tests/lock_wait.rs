//! The workspace lock's wait, against real processes holding it (`flock(1)` children): a waiter
//! sleeps in the kernel's queue for the lock (seen in `/proc/locks`), so it proceeds the moment
//! the holder lets go; a signal does not end the wait; at its limit it gives up with `Busy`
//! naming the holder, having told its notice once and changed nothing, and the wait it abandons
//! never keeps the lock once the holder lets go. Nothing is timed: each test follows the order of
//! events the kernel reports.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use projectfile_core::Error;
use projectfile_core::testing::fsio::{LockGuard, LockNotice, LockWait, lock_file_in};

/// One entry of `/proc/locks` on a file: who holds it, or who waits for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    Held(u32),
    Waiting(u32),
}

/// The `flock` entries `/proc/locks` lists for the file at `path`.
fn entries(path: &Path) -> Vec<Entry> {
    let dev = std::fs::metadata(path).unwrap().dev();
    let (major, minor) = (
        ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
        (dev & 0xff) | ((dev >> 12) & !0xff),
    );
    let ino = std::fs::metadata(path).unwrap().ino();
    let device = format!("{major:02x}:{minor:02x}:{ino}");
    let text = std::fs::read_to_string("/proc/locks").unwrap();
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                [_, "->", "FLOCK", _, _, pid, dev, ..] if *dev == device => {
                    Some(Entry::Waiting(pid.parse().unwrap()))
                }
                [_, "FLOCK", _, _, pid, dev, ..] if *dev == device => {
                    Some(Entry::Held(pid.parse().unwrap()))
                }
                _ => None,
            }
        })
        .collect()
}

/// Waits (at most a minute, so a broken build fails instead of hanging) until `what` holds.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < Duration::from_secs(60), "never: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn me() -> u32 {
    std::process::id()
}

/// A process holding the lock: `flock -o LOCK cat`, holding it until its standard input closes.
struct Holder {
    child: Child,
}

impl Holder {
    fn hold(lock: &Path) -> Holder {
        let child = Command::new("flock")
            .arg("-o")
            .arg(lock)
            .arg("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        eventually("the holder takes the lock", || {
            entries(lock).contains(&Entry::Held(pid))
        });
        Holder { child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .args([sig, &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Lets go: `cat` ends with its input, then `flock` exits.
    fn release(mut self) {
        drop(self.child.stdin.take());
        self.child.wait().unwrap();
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A folder with a lock file in it.
struct Place {
    dir: tempfile::TempDir,
    lock: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("lock");
        std::fs::write(&lock, b"the lock's own bytes\n").unwrap();
        Place { dir, lock }
    }

    fn take(&self, wait: &LockWait) -> projectfile_core::Result<LockGuard> {
        let guard = lock_file_in(self.dir.path(), "lock", wait)?;
        Ok(guard.expect("the lock file exists"))
    }

    /// What a third process sees: can it take the lock now? A sibling test's child between its
    /// fork and its exec holds a copy of every descriptor, ours too, so a lock just let go can
    /// look held for that moment: callers that expect it free wait for it
    /// ([`Place::becomes_free`]).
    fn free_for_another_process(&self) -> bool {
        Command::new("flock")
            .arg("-n")
            .arg(&self.lock)
            .arg("true")
            .status()
            .unwrap()
            .success()
    }

    /// Waits until another process can take the lock (see [`Place::free_for_another_process`]);
    /// fails if it never can.
    fn becomes_free(&self) {
        eventually("another process can take the lock", || {
            self.free_for_another_process()
        });
    }
}

#[test]
fn a_waiter_sleeps_in_the_kernels_queue_and_proceeds_when_the_holder_lets_go() {
    let place = Place::new();
    let holder = Holder::hold(&place.lock);
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| place.take(&LockWait::at_most(Duration::from_secs(600))));
        eventually(
            "the waiter queues for the lock in the kernel (a polling waiter never does)",
            || entries(&place.lock).contains(&Entry::Waiting(me())),
        );
        holder.release();
        let guard = waiter.join().unwrap().unwrap();
        assert_eq!(entries(&place.lock), vec![Entry::Held(me())]);
        drop(guard);
        // Let go at once, but another test of this binary spawning a process at that moment
        // keeps the lock's open file in its child until the child's `exec` closes it: waited for.
        eventually("the lock is let go", || entries(&place.lock).is_empty());
    });
}

#[test]
fn a_limit_past_what_the_clock_counts_waits_for_as_long_as_it_takes() {
    let place = Place::new();
    let holder = Holder::hold(&place.lock);
    let dir = place.dir.path().to_path_buf();
    // Not scoped: a wait that never ends fails this test instead of hanging it.
    let waiter = std::thread::spawn(move || {
        let wait = LockWait {
            limit: Duration::MAX,
            notice_after: Duration::MAX,
            notice: Some(Arc::new(|n: &LockNotice| panic!("told {n:?}"))),
        };
        lock_file_in(&dir, "lock", &wait).map(|guard| guard.is_some())
    });
    eventually("the waiter queues for the lock", || {
        entries(&place.lock).contains(&Entry::Waiting(me()))
    });
    holder.release();
    eventually("the waiter takes the lock", || waiter.is_finished());
    assert!(waiter.join().unwrap().unwrap());
    place.becomes_free();
}

fn recording(limit: Duration) -> (LockWait, Arc<Mutex<Vec<LockNotice>>>) {
    let notices = Arc::new(Mutex::new(Vec::new()));
    let seen = notices.clone();
    let wait = LockWait {
        limit,
        notice_after: Duration::from_millis(50),
        notice: Some(Arc::new(move |n: &LockNotice| {
            seen.lock().unwrap().push(n.clone())
        })),
    };
    (wait, notices)
}

/// Gives up on a stopped holder: `Busy` naming it, one notice, the lock file as it was.
fn give_up_on_a_stopped_holder(place: &Place, holder: &Holder) {
    holder.signal("-STOP");
    let before = std::fs::read(&place.lock).unwrap();
    let (wait, notices) = recording(Duration::from_millis(300));
    let err = place.take(&wait).unwrap_err();
    let Error::Busy { path, reason } = &err else {
        panic!("not busy: {err}");
    };
    assert_eq!(path, &place.lock);
    assert!(
        reason.contains(&format!("process {}", holder.pid())),
        "{err}"
    );
    assert!(reason.contains("nothing was changed"), "{err}");
    let notices = notices.lock().unwrap();
    assert_eq!(notices.len(), 1, "told once: {notices:?}");
    assert_eq!(notices[0].path, place.lock);
    assert_eq!(notices[0].holder, Some(holder.pid()));
    assert_eq!(std::fs::read(&place.lock).unwrap(), before);
    holder.signal("-CONT");
}

#[test]
fn giving_up_names_the_holder_tells_once_and_the_abandoned_wait_never_keeps_the_lock() {
    let place = Place::new();
    let holder = Holder::hold(&place.lock);
    give_up_on_a_stopped_holder(&place, &holder);
    // The wait given up is still queued in the kernel (this is the case that could leak: it
    // is granted the lock once the holder goes, with nobody left to release it).
    assert!(
        entries(&place.lock).contains(&Entry::Waiting(me())),
        "{:?}",
        entries(&place.lock)
    );
    assert!(!place.free_for_another_process());
    holder.release();
    eventually("the abandoned wait lets the lock go", || {
        entries(&place.lock).is_empty()
    });
    place.becomes_free();
    // And this process can take it again, at once.
    drop(place.take(&LockWait::at_most(Duration::ZERO)).unwrap());
}

#[test]
fn a_zero_limit_gives_up_at_once_and_queues_nothing() {
    let place = Place::new();
    let holder = Holder::hold(&place.lock);
    let err = place.take(&LockWait::at_most(Duration::ZERO)).unwrap_err();
    assert!(matches!(err, Error::Busy { .. }), "{err}");
    // Only the holder's lock is listed: no wait of ours is queued. (The kernel has been seen to
    // list one `flock` holder's lock twice for a moment, so it is not counted.)
    let listed = entries(&place.lock);
    assert!(
        !listed.is_empty() && listed.iter().all(|e| *e == Entry::Held(holder.pid())),
        "{listed:?}"
    );
    holder.release();
}

#[test]
fn the_polling_fallback_keeps_the_same_promises() {
    use projectfile_core::testing::fsio::with_polled_lock_wait;
    let place = Place::new();
    let holder = Holder::hold(&place.lock);
    with_polled_lock_wait(|| give_up_on_a_stopped_holder(&place, &holder));
    // Nothing queued, nothing kept.
    assert_eq!(entries(&place.lock), vec![Entry::Held(holder.pid())]);
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            with_polled_lock_wait(|| place.take(&LockWait::at_most(Duration::from_secs(600))))
        });
        holder.release();
        drop(waiter.join().unwrap().unwrap());
    });
    place.becomes_free();
}

static INTERRUPTIONS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn count_interruption(_: libc::c_int) {
    INTERRUPTIONS.fetch_add(1, Ordering::SeqCst);
}

/// The threads of this process that are in the `flock` system call now, on a descriptor of the
/// file `lock` (tests run as threads of one process under `cargo test`, and other tests' waits
/// are in `flock` too, on their own files).
fn threads_in_flock(lock: &Path) -> Vec<libc::pid_t> {
    let lock = std::fs::canonicalize(lock).unwrap();
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| {
            let task = task.ok()?;
            let syscall = std::fs::read_to_string(task.path().join("syscall")).ok()?;
            let mut fields = syscall.split_whitespace();
            let number: libc::c_long = fields.next()?.parse().ok()?;
            let fd = i64::from_str_radix(fields.next()?.trim_start_matches("0x"), 16).ok()?;
            let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
            (number == libc::SYS_flock && target == lock)
                .then(|| task.file_name().to_str()?.parse().ok())?
        })
        .collect()
}

#[test]
fn a_signal_during_the_wait_does_not_end_it() {
    // A handler without SA_RESTART: a blocking `flock` it interrupts returns EINTR.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = count_interruption as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = 0;
        libc::sigemptyset(&mut action.sa_mask);
        assert_eq!(
            libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut()),
            0
        );
    }
    let place = Place::new();
    let holder = Holder::hold(&place.lock);
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| place.take(&LockWait::at_most(Duration::from_secs(600))));
        let mut blocked = Vec::new();
        eventually("a thread of this process blocks in flock", || {
            blocked = threads_in_flock(&place.lock);
            !blocked.is_empty()
        });
        for round in 1..=3 {
            for &tid in &blocked {
                let sent = unsafe {
                    libc::syscall(
                        libc::SYS_tgkill,
                        libc::getpid(),
                        tid,
                        libc::SIGUSR1 as libc::c_long,
                    )
                };
                assert_eq!(sent, 0);
            }
            eventually("the signal is handled", || {
                INTERRUPTIONS.load(Ordering::SeqCst) >= round * blocked.len()
            });
            eventually("the wait goes on, queued in the kernel again", || {
                !threads_in_flock(&place.lock).is_empty()
                    && entries(&place.lock).contains(&Entry::Waiting(me()))
            });
            assert!(!waiter.is_finished());
        }
        holder.release();
        drop(waiter.join().unwrap().unwrap());
    });
}

#[test]
fn threads_of_one_process_take_turns_and_lose_no_update() {
    const THREADS: usize = 8;
    const TURNS: usize = 5;
    let place = Place::new();
    let counter = place.lock.with_file_name("counter");
    std::fs::write(&counter, b"0").unwrap();
    let holder = Holder::hold(&place.lock);
    let inside = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                scope.spawn(|| {
                    for _ in 0..TURNS {
                        let guard = place
                            .take(&LockWait::at_most(Duration::from_secs(600)))
                            .unwrap();
                        assert!(!inside.swap(true, Ordering::SeqCst), "two threads inside");
                        let n: usize = std::fs::read_to_string(&counter).unwrap().parse().unwrap();
                        std::thread::yield_now();
                        std::fs::write(&counter, (n + 1).to_string()).unwrap();
                        inside.store(false, Ordering::SeqCst);
                        drop(guard);
                    }
                })
            })
            .collect();
        eventually("several threads queue for the lock", || {
            entries(&place.lock)
                .iter()
                .filter(|e| **e == Entry::Waiting(me()))
                .count()
                >= 2
        });
        holder.release();
        for worker in workers {
            worker.join().unwrap();
        }
    });
    assert_eq!(
        std::fs::read_to_string(&counter).unwrap(),
        (THREADS * TURNS).to_string()
    );
    place.becomes_free();
}

/// The waits on the calling thread below share the process's `SIGALRM` disposition and
/// `/proc/self/timers` with each other: one at a time (the tests above never touch either).
static CALLING_THREAD_TESTS: Mutex<()> = Mutex::new(());

/// The POSIX timers this process has (`/proc/self/timers`).
fn timers() -> usize {
    std::fs::read_to_string("/proc/self/timers")
        .unwrap()
        .lines()
        .filter(|line| line.starts_with("ID:"))
        .count()
}

/// The process's `SIGALRM` disposition: its handler and whether it restarts system calls.
fn alarm_disposition() -> (usize, bool) {
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::sigaction(libc::SIGALRM, std::ptr::null(), &mut action) },
        0
    );
    (action.sa_sigaction, action.sa_flags & libc::SA_RESTART != 0)
}

/// Whether the thread `tid` of this process has a signal pending.
fn signal_pending(tid: libc::pid_t) -> bool {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigPnd:"))
        .is_some_and(|mask| mask.trim().chars().any(|c| c != '0'))
}

fn tgkill(tid: libc::pid_t, signal: libc::c_int) {
    let sent = unsafe {
        libc::syscall(
            libc::SYS_tgkill,
            libc::getpid(),
            tid,
            signal as libc::c_long,
        )
    };
    assert_eq!(sent, 0);
}

#[test]
fn a_wait_on_the_calling_thread_blocks_that_thread_in_the_queue_through_signals() {
    use projectfile_core::testing::fsio::with_lock_wait_on_calling_thread;
    let _one_at_a_time = CALLING_THREAD_TESTS.lock().unwrap();
    let disposition = alarm_disposition();
    let place = Place::new();
    let holder = Holder::hold(&place.lock);
    let waiting_thread = std::sync::atomic::AtomicI32::new(0);
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            waiting_thread.store(unsafe { libc::gettid() }, Ordering::SeqCst);
            let wait = LockWait {
                limit: Duration::from_secs(600),
                notice_after: Duration::from_secs(600),
                notice: Some(Arc::new(|n: &LockNotice| panic!("told {n:?}"))),
            };
            with_lock_wait_on_calling_thread(|| place.take(&wait))
        });
        let mut tid = 0;
        eventually("the waiting thread itself blocks in flock", || {
            tid = waiting_thread.load(Ordering::SeqCst);
            tid != 0 && threads_in_flock(&place.lock) == vec![tid]
        });
        assert!(entries(&place.lock).contains(&Entry::Waiting(me())));
        assert_eq!(timers(), 1, "the wait's own timer");
        // A stray SIGALRM (the alarm's own signal, early) and a harmless one do not end it.
        for signal in [libc::SIGALRM, libc::SIGWINCH, libc::SIGALRM] {
            tgkill(tid, signal);
            eventually(
                "the signal is taken and the wait goes on in the queue",
                || {
                    !signal_pending(tid)
                        && threads_in_flock(&place.lock) == vec![tid]
                        && entries(&place.lock).contains(&Entry::Waiting(me()))
                },
            );
            assert!(!waiter.is_finished());
        }
        holder.release();
        let guard = waiter.join().unwrap().unwrap();
        assert_eq!(entries(&place.lock), vec![Entry::Held(me())]);
        drop(guard);
    });
    place.becomes_free();
    assert_eq!(timers(), 0, "the timer is deleted");
    assert_eq!(alarm_disposition(), disposition, "the handler is put back");
}

static HOST_ALARMS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn count_host_alarm(_: libc::c_int) {
    HOST_ALARMS.fetch_add(1, Ordering::SeqCst);
}

/// Whether `SIGALRM` is blocked on the calling thread.
fn alarm_blocked() -> bool {
    unsafe {
        let mut mask: libc::sigset_t = std::mem::zeroed();
        assert_eq!(
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask),
            0
        );
        libc::sigismember(&mask, libc::SIGALRM) == 1
    }
}

/// Sets whether `SIGALRM` is blocked on the calling thread.
fn block_alarm(block: bool) {
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGALRM);
        let how = if block {
            libc::SIG_BLOCK
        } else {
            libc::SIG_UNBLOCK
        };
        assert_eq!(libc::pthread_sigmask(how, &set, std::ptr::null_mut()), 0);
    }
}

#[test]
fn waits_on_calling_threads_give_up_at_their_limits_and_put_the_signal_state_back() {
    use projectfile_core::testing::fsio::with_lock_wait_on_calling_thread;
    let _one_at_a_time = CALLING_THREAD_TESTS.lock().unwrap();
    // A host's own SIGALRM handler, restarting system calls: while the waits last it must not
    // run, and after them it must be the one installed again.
    let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = count_host_alarm as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGALRM, &action, &mut previous), 0);
    }
    let host = alarm_disposition();
    let place = Place::new();
    let holder = Holder::hold(&place.lock);
    let holder_pid = holder.pid();
    // Two waits at once, overlapping, ending at different times; one on a thread that blocks
    // SIGALRM, which it still blocks afterwards. Not scoped: a wait that never ends fails this
    // test instead of hanging it.
    let waits: Vec<_> = [(true, 300), (false, 600)]
        .into_iter()
        .map(|(blocked, limit)| {
            let dir = place.dir.path().to_path_buf();
            std::thread::spawn(move || {
                block_alarm(blocked);
                let (wait, notices) = recording(Duration::from_millis(limit));
                let err = with_lock_wait_on_calling_thread(|| lock_file_in(&dir, "lock", &wait))
                    .unwrap_err();
                assert!(matches!(err, Error::Busy { .. }), "{err}");
                assert!(err.to_string().contains("nothing was changed"), "{err}");
                assert_eq!(notices.lock().unwrap().len(), 1, "told once");
                assert_eq!(notices.lock().unwrap()[0].holder, Some(holder_pid));
                assert_eq!(alarm_blocked(), blocked, "the thread's mask is put back");
            })
        })
        .collect();
    eventually("both waits end", || waits.iter().all(|w| w.is_finished()));
    for wait in waits {
        wait.join().unwrap();
    }
    assert_eq!(alarm_disposition(), host, "the host's handler is put back");
    assert_eq!(
        HOST_ALARMS.load(Ordering::SeqCst),
        0,
        "an alarm reached the host"
    );
    assert_eq!(timers(), 0, "the timers are deleted");
    // A wait given up on this thread left nothing in the kernel's queue.
    assert_eq!(entries(&place.lock), vec![Entry::Held(holder.pid())]);
    holder.release();
    place.becomes_free();
    unsafe {
        assert_eq!(
            libc::sigaction(libc::SIGALRM, &previous, std::ptr::null_mut()),
            0
        );
    }
}
