//! The alarm that ends a lock wait made on the calling thread: a per-thread POSIX timer that
//! sends `SIGALRM` to the waiting thread alone, and the no-op handler (installed without
//! `SA_RESTART`) that makes the blocked `flock` return `EINTR` when it fires.
//!
//! A process that runs one command and exits (see [`crate::one_command_per_process`]) waits for
//! a lock this way instead of starting a waiter thread: no thread spawned and torn down (a
//! stack mapped and unmapped, TLB shootdowns while two threads exist), no channel wake-ups, on
//! every contended acquire and release.
//!
//! Why `timer_create` with `SIGEV_THREAD_ID` rather than `setitimer(ITIMER_REAL)`: the timer is
//! this wait's own, so there is no process-wide timer to save, pause and put back (an
//! `ITIMER_REAL` a host had armed would lose the time spent waiting), its signal goes to the
//! waiting thread and no other (a process-directed `SIGALRM` may be delivered to any thread
//! that does not block it, leaving the `flock` uninterrupted), several threads can wait at once
//! each with its own timer, and it counts on `CLOCK_MONOTONIC`, the clock [`Instant`] reads.
//!
//! What is shared is the `SIGALRM` disposition: the first wait installs the no-op handler and
//! keeps the one it replaced, the last one to finish puts that back. Each wait unblocks
//! `SIGALRM` on its own thread for its duration, and blocks it again after if it was blocked.
//! The timer is deleted before either is restored, and a signal it had already sent is
//! delivered to the no-op handler on the way out of `timer_delete` (it is unblocked then), so
//! no `SIGALRM` of ours outlives the wait to reach the handler put back.
//!
//! The timer repeats every [`ALARM_REPEAT`] once it has fired: a signal that lands between the
//! clock check and the moment `flock` is entered is lost, and the next one, that much later,
//! ends the wait instead.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the timer fires again once its deadline has passed: the most a wait can overshoot
/// its deadline when the first signal lands just before `flock` is entered.
pub(super) const ALARM_REPEAT: Duration = Duration::from_millis(20);

/// Whether the lock waits of this process were given up ([`interrupt_lock_waits`]).
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Gives up every lock wait of this process, now and later: one on the calling thread (see
/// [`crate::one_command_per_process`]) or polling ends with [`crate::Error::Busy`], nothing
/// changed. One atomic store, so a signal handler may call it; for a wait blocked in `flock` to
/// see it, that handler must be installed without `SA_RESTART` (so the `flock` returns `EINTR`).
pub fn interrupt_lock_waits() {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Lets the lock waits of this process wait again after [`interrupt_lock_waits`] (a command
/// that gave up its start waits for the lock to undo what it did).
pub fn resume_lock_waits() {
    INTERRUPTED.store(false, std::sync::atomic::Ordering::SeqCst);
}

/// Whether [`interrupt_lock_waits`] was called (and [`resume_lock_waits`] not since).
pub(crate) fn lock_waits_interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}

/// Whether lock waits in this process block on the calling thread (see
/// [`crate::one_command_per_process`]); otherwise a waiter thread waits.
static ON_CALLING_THREAD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

thread_local! {
    /// Test hook: lock waits on this thread block on it, as a one-command process's do.
    static ON_THIS_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes every later lock wait of this process block on the thread that waits.
pub(crate) fn wait_on_calling_thread() {
    ON_CALLING_THREAD.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Runs `f` with lock waits on the calling thread made on that thread, as in a process that
/// called [`crate::one_command_per_process`] (the rest of the process keeps its way).
pub fn with_lock_wait_on_calling_thread<T>(f: impl FnOnce() -> T) -> T {
    ON_THIS_THREAD.with(|c| c.set(true));
    let out = f();
    ON_THIS_THREAD.with(|c| c.set(false));
    out
}

/// Whether a lock wait starting now on this thread blocks on it.
pub(super) fn waits_on_calling_thread() -> bool {
    ON_CALLING_THREAD.load(std::sync::atomic::Ordering::Relaxed)
        || ON_THIS_THREAD.with(std::cell::Cell::get)
}

/// The `SIGALRM` disposition while waits are under way: how many, and the handler they
/// replaced (put back when the count returns to zero).
static HANDLER: Mutex<(usize, Option<libc::sigaction>)> = Mutex::new((0, None));

extern "C" fn interrupt(_: libc::c_int) {}

/// One wait's alarm: its timer, and whether it unblocked `SIGALRM` on this thread. Dropping it
/// deletes the timer, then restores the thread's mask and (for the last wait) the handler.
pub(super) struct LockAlarm {
    timer: libc::timer_t,
    was_blocked: bool,
}

impl LockAlarm {
    /// Installs the handler (first wait only), unblocks `SIGALRM` on this thread and creates
    /// the timer, disarmed. On failure nothing is left changed.
    pub(super) fn start() -> std::io::Result<LockAlarm> {
        install_handler()?;
        let was_blocked = match unblock_alarm() {
            Ok(was_blocked) => was_blocked,
            Err(e) => {
                release_handler();
                return Err(e);
            }
        };
        match create_timer() {
            Ok(timer) => Ok(LockAlarm { timer, was_blocked }),
            Err(e) => {
                restore_mask(was_blocked);
                release_handler();
                Err(e)
            }
        }
    }

    /// Fires at `deadline`, then every [`ALARM_REPEAT`]; no deadline: never.
    pub(super) fn arm(&self, deadline: Option<Instant>) -> std::io::Result<()> {
        let first = match deadline {
            // A zero value disarms: a deadline already reached fires at once instead.
            Some(at) => at
                .saturating_duration_since(Instant::now())
                .max(Duration::from_nanos(1)),
            None => Duration::ZERO,
        };
        let repeat = if deadline.is_some() {
            ALARM_REPEAT
        } else {
            Duration::ZERO
        };
        let spec = libc::itimerspec {
            it_interval: timespec(repeat),
            it_value: timespec(first),
        };
        // SAFETY: `self.timer` is a live timer this value created and alone deletes (on drop);
        // `spec` is a valid `itimerspec` and a null old value is allowed.
        let rc = unsafe { libc::timer_settime(self.timer, 0, &spec, std::ptr::null_mut()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

impl Drop for LockAlarm {
    fn drop(&mut self) {
        // SAFETY: `self.timer` is live and deleted here once; nothing uses it afterwards. A
        // failure cannot happen for a valid id and would leave only an unarmed-or-not timer.
        unsafe {
            libc::timer_delete(self.timer);
        }
        restore_mask(self.was_blocked);
        release_handler();
    }
}

/// A `timespec` for `d`, its seconds capped at what `time_t` holds.
// `c_long` is `i32` on 32-bit targets, where the nanoseconds' conversion is fallible.
#[allow(clippy::unnecessary_fallible_conversions)]
fn timespec(d: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: libc::time_t::try_from(d.as_secs()).unwrap_or(libc::time_t::MAX),
        // Below one billion: fits every `c_long`, so the fallback is never taken.
        tv_nsec: libc::c_long::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}

/// Counts one more wait; the first installs the no-op `SIGALRM` handler, keeping the old one.
fn install_handler() -> std::io::Result<()> {
    let mut handler = HANDLER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if handler.0 == 0 {
        // SAFETY: a zeroed `sigaction` is a valid starting value; we set a handler that does
        // nothing (async-signal-safe), no flags (so no `SA_RESTART`: the interrupted `flock`
        // returns `EINTR`) and an empty mask, and install it for `SIGALRM`, a catchable signal;
        // `previous` is written by the kernel.
        let (rc, previous) = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = interrupt as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = 0;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            let rc = libc::sigaction(libc::SIGALRM, &action, &mut previous);
            (rc, previous)
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        handler.1 = Some(previous);
    }
    handler.0 += 1;
    Ok(())
}

/// Counts one wait fewer; the last puts back the `SIGALRM` handler the first one replaced.
fn release_handler() {
    let mut handler = HANDLER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    handler.0 = handler.0.saturating_sub(1);
    if handler.0 == 0
        && let Some(previous) = handler.1.take()
    {
        // SAFETY: `previous` is the disposition the kernel reported for `SIGALRM` when the
        // first wait replaced it, so it is valid to install again.
        unsafe {
            libc::sigaction(libc::SIGALRM, &previous, std::ptr::null_mut());
        }
    }
}

/// The signal set holding `SIGALRM` alone.
fn alarm_set() -> libc::sigset_t {
    // SAFETY: `sigemptyset` initialises the zeroed set; `SIGALRM` is a valid signal number.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGALRM);
        set
    }
}

/// Unblocks `SIGALRM` on this thread; whether it was blocked.
fn unblock_alarm() -> std::io::Result<bool> {
    let set = alarm_set();
    // SAFETY: both sets are valid `sigset_t`s owned here; `old` is written by the call.
    let (rc, old) = unsafe {
        let mut old: libc::sigset_t = std::mem::zeroed();
        let rc = libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, &mut old);
        (rc, old)
    };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    // SAFETY: `old` was filled in by `pthread_sigmask`.
    Ok(unsafe { libc::sigismember(&old, libc::SIGALRM) } == 1)
}

/// Blocks `SIGALRM` on this thread again when it was blocked before the wait.
fn restore_mask(was_blocked: bool) {
    if was_blocked {
        let set = alarm_set();
        // SAFETY: `set` is a valid `sigset_t`; a null old set is allowed.
        unsafe {
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
    }
}

/// A disarmed `CLOCK_MONOTONIC` timer that sends `SIGALRM` to this thread alone.
fn create_timer() -> std::io::Result<libc::timer_t> {
    // SAFETY: a zeroed `sigevent` is valid (integers and a null value); we ask for
    // `SIGEV_THREAD_ID` delivery of `SIGALRM` to this thread's id, which is alive while the
    // timer exists (the timer is deleted on this thread, by `LockAlarm`'s drop). `timer` is
    // written by the call.
    let (rc, timer) = unsafe {
        let mut event: libc::sigevent = std::mem::zeroed();
        event.sigev_notify = libc::SIGEV_THREAD_ID;
        event.sigev_signo = libc::SIGALRM;
        event.sigev_notify_thread_id = libc::gettid();
        let mut timer: libc::timer_t = std::ptr::null_mut();
        let rc = libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer);
        (rc, timer)
    };
    if rc == 0 {
        Ok(timer)
    } else {
        Err(std::io::Error::last_os_error())
    }
}
