//! The process entry point. The binary is `#![no_main]`: std's runtime start-up would, before
//! our first line, read all of `/proc/self/maps` (glibc's `pthread_getattr_np`, to place the
//! main thread's stack guard) and set up an alternate signal stack, about a tenth of the
//! instructions and twenty of the system calls of a whole `acquire`. What of it a command needs
//! is done here instead:
//!
//! - standard input, output and error are open: a closed one is opened on `/dev/null`, so no file
//!   we open later can take its number and receive what we print;
//! - `SIGPIPE` is ignored, so writing to a closed pipe is an error we report, not a silent death
//!   (children get the default back: std resets it before exec);
//! - a panic exits with status 101 after its message (which names the thread `<unnamed>`, not
//!   `main`: naming the main thread is std's runtime's, with no stable way to do it here);
//! - at exit, standard output is flushed.
//!
//! Arguments still reach `std::env::args_os`: on glibc std reads them from `.init_array`. The
//! unwinder is linked in statically (see below), so the process loads libc and nothing else.
//! What is given up is std's message for a stack overflow on the main thread (it still stops
//! the process, by SIGSEGV).

use std::process::ExitCode;

// The unwinder (`_Unwind_*`, for panics and backtraces), linked in statically as `gcc
// -static-libgcc` does, so the process maps no `libgcc_s.so.1`: one library fewer to load and
// relocate at every start, and none of its start-up probing of the CPU (each CPUID traps to the
// hypervisor in a virtual machine). Whole archive: its objects must be taken before the linker
// meets std's `-lgcc_s`, which `--as-needed` then drops.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[link(name = "gcc_eh", kind = "static", modifiers = "+whole-archive")]
unsafe extern "C" {}

/// What glibc's start-up in a static executable records as the program's folder (`$ORIGIN`):
/// unknown, the value glibc's own `_dl_get_origin` gives when it cannot tell. glibc's asks the
/// kernel at every start (`readlink("/proc/self/exe")`, whose lookup builds a fresh `/proc`
/// entry for each new process: about a tenth of an empty static program's start on the
/// benchmark machine), for one use: expanding `$ORIGIN` in the search path of a library the
/// process loads, and a static `projectfile` loads none of its own (the C library's name
/// services load theirs by name, from the system's folders). Defined here, the linker takes
/// this definition and leaves glibc's out; only a static link (`build.rs`) has it.
#[cfg(static_glibc)]
#[unsafe(no_mangle)]
extern "C" fn _dl_get_origin() -> *const libc::c_char {
    usize::MAX as *const libc::c_char
}

/// The C entry point: prepares the process, runs the command line, exits with its code.
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    if let Err(e) = projectfile::core::open_standard_descriptors() {
        crate::output::stderr(format_args!("error: {e}"));
        return libc::EXIT_FAILURE;
    }
    // SAFETY: installs the SIG_IGN disposition for SIGPIPE before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    // A panic (std's `println!` on a closed pipe is one) ends the process as under std's own
    // runtime: the message on stderr and status 101, never an unwind out of this function.
    let code = std::panic::catch_unwind(|| {
        panic_if_asked();
        crate::cli_main()
    })
    .map_or(PANIC_STATUS, status);
    // What `print!` left in std's buffer (a failure to write it is not ours to report here).
    let _ = std::io::Write::flush(&mut std::io::stdout());
    std::process::exit(code)
}

/// The exit status of a process whose main thread panicked, as under std's runtime.
const PANIC_STATUS: i32 = 101;

/// The number an [`ExitCode`] stands for (std has no stable way to ask; every code we make comes
/// from a `u8`).
fn status(code: ExitCode) -> i32 {
    (0..=u8::MAX)
        .find(|n| ExitCode::from(*n) == code)
        .map_or(libc::EXIT_FAILURE, i32::from)
}

/// Debug builds only: panics when `PROJECTFILE_PANIC_FOR_TESTS` is set, so a test can prove
/// through the binary that a panic is reported and exits 101 (the library itself never panics on
/// purpose, so there is no input that would show it).
#[cfg(debug_assertions)]
#[allow(clippy::panic)]
fn panic_if_asked() {
    if std::env::var_os("PROJECTFILE_PANIC_FOR_TESTS").is_some() {
        panic!("a panic asked for by the test");
    }
}

#[cfg(not(debug_assertions))]
fn panic_if_asked() {}
