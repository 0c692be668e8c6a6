//! `projectfile run`: acquire with this process as holder, run the command with the plan's launch
//! arguments, forward termination signals, release, and exit with the command's status.
//!
//! Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process *by another process* are
//! forwarded to the child. Signals the terminal sends to the whole foreground process group
//! (Ctrl-C) reach the child directly, so they are not forwarded a second time (told apart by
//! `si_code == SI_KERNEL`). Before the command has started, any of them (the terminal's too)
//! means it will not: a lock wait under way is given up, whatever was acquired is released, and
//! the exit status is 128+N. If this process is killed outright (SIGKILL), its lease goes stale
//! and the next start cleans it.

use anyhow::Context as _;
use projectfile::core::holder::Holder;
use projectfile::core::projector::{AcquireReceipt, Projector};
use projectfile::core::runtime::CLI_HOME_DIR;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use crate::cli::RunArgs;
use crate::output;
use crate::verbose::Verbose;

/// The child's pid once spawned (0 before).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// A forwardable signal that arrived before the child existed (0: none).
static PENDING: AtomicI32 = AtomicI32::new(0);
/// Whether the child was started: from then on a signal no longer gives up lock waits (the
/// release after the command must finish).
static STARTED: AtomicBool = AtomicBool::new(false);

const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

extern "C" fn forward(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler; only async-signal-safe
    // calls (atomics, kill) are made here.
    let code = if info.is_null() {
        0
    } else {
        unsafe { (*info).si_code }
    };
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        if code == libc::SI_KERNEL {
            return; // From the terminal: the child's process group received it too.
        }
        // SAFETY: kill is async-signal-safe; a failure (child already gone) is harmless.
        unsafe {
            libc::kill(child, signal);
        }
    } else if !STARTED.load(Ordering::SeqCst) {
        // No child yet (the terminal's signals too: nobody else got them). The command will not
        // start, and a lock wait under way is given up (an atomic store).
        PENDING.store(signal, Ordering::SeqCst);
        projectfile::core::interrupt_lock_waits();
    }
}

fn install_forwarding() -> anyhow::Result<()> {
    for signal in FORWARDED {
        // SAFETY: a zeroed sigaction is a valid starting value; we set the handler, SA_SIGINFO
        // and an empty mask, then install it for a catchable signal. No SA_RESTART: a lock wait
        // blocked in `flock` must return (EINTR) to see that it was given up; std retries the
        // calls it makes on EINTR (waiting for the child, writing the output).
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = forward as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error())
                .context("cannot install signal forwarding");
        }
    }
    Ok(())
}

/// Runs the `run` command.
///
/// Output contract: the command inherits stdin, stdout and stderr. With `--json`, stdout carries
/// exactly one JSON line from `projectfile` itself before anything of the command's: the acquire
/// receipt, printed once the command is known to be startable and just before it starts, or the
/// error object when it never starts. If that line cannot be written, the command does not run.
/// The session is released whatever happens, output included.
pub fn run(
    projector: &Projector,
    args: &RunArgs,
    json: bool,
    log: &Verbose,
) -> anyhow::Result<ExitCode> {
    let session = crate::session_request(&args.session)?;
    let holder = Holder::current_process()?;
    if args.dry_run {
        let mut receipt = crate::dry_run(projector, &args.session, session, holder)?;
        // JSON text: an argument that is not UTF-8 is shown with replacement characters.
        receipt.command = args
            .command
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        receipt.command.extend(receipt.launch_args.iter().cloned());
        return crate::print_dry_run(&receipt, json);
    }
    install_forwarding()?;
    let workspace = Projector::canonical_workspace(&args.session.workspace)?;
    let linked = match crate::linked::open(&args.linked, &args.session.provider, &workspace) {
        Ok(linked) => linked,
        Err(e) => return before_start(e, json),
    };
    let destination = linked.as_ref().map(|l| crate::Destination {
        root: l.dir(),
        cli_home: l.cli_home_dir().map(|_| CLI_HOME_DIR),
    });
    let (mut receipt, folder) =
        match crate::acquire(projector, &args.session, session, destination, holder, log) {
            Ok(acquired) => acquired,
            Err(e) => return before_start(e, json),
        };
    // After acquire: the sandboxed CLI must read the session's private files (a prompt file
    // named in the launch arguments lives under the state directory, outside every grant).
    let sandbox = match &linked {
        Some(l) => {
            match crate::linked::sandbox(&args.linked, l, &private_dirs(projector, &receipt)) {
                Ok(sandbox) => sandbox,
                Err(e) => {
                    // Nothing ran: undo the session before reporting.
                    let _ = release(projector, &receipt.token, &folder);
                    return Err(e);
                }
            }
        }
        None => None,
    };
    let tmp = match &linked {
        Some(l) => {
            let status = sandbox.as_ref().map(|s| s.status());
            match crate::linked::finish(l, &mut receipt, args.keep_cwd, status) {
                Ok(tmp) => tmp,
                Err(e) => {
                    // Nothing ran: undo the session before reporting.
                    let _ = release(projector, &receipt.token, &folder);
                    return Err(e);
                }
            }
        }
        None => None,
    };
    // Nothing between the acquire above and the release below may return early. The release
    // goes through the folder handle kept since the acquire: the folder renamed or moved while
    // the command ran is still found, and one deleted is known gone.
    let outcome = start_and_wait(args, &receipt, &folder, sandbox, tmp, json, log);
    let released = release(projector, &receipt.token, &folder);
    if let Some(linked) = linked
        && let Err(e) = crate::linked::close(linked)
    {
        output::stderr(format_args!("error: {e:#}"));
    }
    let released = match released {
        Ok(receipt) => {
            log.released(projector.state_dir(), &receipt);
            Some(receipt.pending)
        }
        Err(e) => {
            output::stderr(format_args!("error: {e}"));
            None
        }
    };
    match outcome {
        // The command succeeded but the release left undos pending: say so (exit 3), as
        // `release` does; a failing command's own status wins.
        Ok(status)
            if status == ExitCode::SUCCESS && released.as_ref().is_some_and(|p| !p.is_empty()) =>
        {
            Ok(crate::deferred(
                released.as_deref().unwrap_or_default(),
                false,
            ))
        }
        Ok(status) if released.is_some() => Ok(status),
        Ok(_) => Ok(ExitCode::from(crate::failure::FAILURE)),
        // Nothing was printed on stdout yet: the caller prints the one error object.
        Err(Failed::BeforeReceipt(error)) => Err(error),
        Err(Failed::AfterReceipt(error)) => {
            output::stderr(format_args!("error: {error:#}"));
            Ok(ExitCode::from(crate::failure::FAILURE))
        }
    }
}

/// Releases the session. A signal that arrived before the command started gave up the lock
/// waits of this process; the release waits again as any release does (a signal arriving now,
/// during its wait, gives it up: the lease is then stale, its holder gone, and the next start
/// cleans it).
fn release(
    projector: &Projector,
    token: &str,
    folder: &projectfile::core::workspace::Workspace,
) -> projectfile::core::Result<projectfile::core::projector::ReleaseReceipt> {
    projectfile::core::resume_lock_waits();
    projector.release_in(token, folder)
}

/// A failure before the session was acquired. When a forwarded signal arrived meanwhile (giving
/// up any lock wait), the failure is reported as any other and the exit status is the signal's,
/// 128+N, as the command's would have been; otherwise it is the caller's to report.
fn before_start(error: anyhow::Error, json: bool) -> anyhow::Result<ExitCode> {
    let pending = PENDING.load(Ordering::SeqCst);
    if pending == 0 {
        return Err(error);
    }
    let _ = crate::failure::report(&error, json);
    Ok(ExitCode::from(128u8.saturating_add(pending as u8)))
}

/// The folders holding the session's private files (named by launch arguments or by the
/// environment, whatever their form: `<path>`, `--flag=<path>`, `@<path>`): the receipt's
/// private files under the state directory.
fn private_dirs(projector: &Projector, receipt: &AcquireReceipt) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = receipt
        .files
        .iter()
        .filter(|file| file.kind == projectfile::core::receipts::FileKind::Private)
        .map(|file| std::path::Path::new(&file.path))
        .filter(|path| path.is_absolute() && path.starts_with(projector.state_dir()))
        .filter_map(|path| path.parent().map(std::path::Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Why the command did not run to its end, and whether the receipt was already on stdout (then
/// the error goes to stderr only, so stdout keeps exactly one JSON object).
enum Failed {
    BeforeReceipt(anyhow::Error),
    AfterReceipt(anyhow::Error),
}

/// Builds the command, makes sure it can start, prints the receipt (with `--json`), starts it and
/// waits for it.
fn start_and_wait(
    args: &RunArgs,
    receipt: &AcquireReceipt,
    folder: &projectfile::core::workspace::Workspace,
    sandbox: Option<projectfile::core::sandbox::PreparedSandbox>,
    tmp: Option<std::path::PathBuf>,
    json: bool,
    log: &Verbose,
) -> Result<ExitCode, Failed> {
    let pending = PENDING.swap(0, Ordering::SeqCst);
    if pending != 0 {
        return Ok(ExitCode::from(128u8.saturating_add(pending as u8)));
    }
    let mut command =
        build_command(args, receipt, folder, sandbox, tmp).map_err(Failed::BeforeReceipt)?;
    if json {
        // The one JSON object (an acquire receipt), printed before the command runs so a host can
        // read where the session text went while the command is still running.
        crate::output::json(receipt, "the receipt").map_err(Failed::BeforeReceipt)?;
    }
    let program = command.get_program().to_string_lossy().into_owned();
    log.say(
        "run",
        format_args!(
            "{program} {}",
            command
                .get_args()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        ),
    );
    let mut child = command
        .spawn()
        .with_context(|| format!("{program}: cannot run the command"))
        .map_err(Failed::AfterReceipt)?;
    STARTED.store(true, Ordering::SeqCst);
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    let pending = PENDING.swap(0, Ordering::SeqCst);
    if pending != 0 {
        // SAFETY: kill on our own child's pid.
        unsafe {
            libc::kill(child.id() as i32, pending);
        }
    }
    let status = child
        .wait()
        .context("cannot wait for the command")
        .map_err(Failed::AfterReceipt)?;
    CHILD.store(0, Ordering::SeqCst);
    use std::os::unix::process::ExitStatusExt as _;
    let code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    log.say("run", format_args!("the command exited with status {code}"));
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// The command with the plan's launch arguments, environment and working directory, its program
/// located now (`<program>: cannot run the command: …` when it is missing or not executable), so
/// a command that cannot start is refused before the receipt is printed.
fn build_command(
    args: &RunArgs,
    receipt: &AcquireReceipt,
    folder: &projectfile::core::workspace::Workspace,
    sandbox: Option<projectfile::core::sandbox::PreparedSandbox>,
    tmp: Option<std::path::PathBuf>,
) -> anyhow::Result<std::process::Command> {
    let Some((program, rest)) = args.command.split_first() else {
        anyhow::bail!("run needs a command after `--`");
    };
    let cwd = if args.keep_cwd {
        std::env::current_dir().context("cannot read the current directory")?
    } else {
        receipt.workspace.clone()
    };
    let search = receipt
        .env
        .get("PATH")
        .map(std::ffi::OsString::from)
        .or_else(|| std::env::var_os("PATH"));
    let located = which::which_in(program, search, &cwd).map_err(|_| {
        let program = program.to_string_lossy();
        let reason = if program.contains('/') {
            "no executable file there"
        } else {
            "no executable file by that name on PATH"
        };
        anyhow::anyhow!("{program}: cannot run the command: {reason}")
    })?;
    let mut command = std::process::Command::new(located);
    // The command sees its name as typed (a multi-call binary dispatches on it).
    std::os::unix::process::CommandExt::arg0(&mut command, program);
    command
        .args(rest)
        .args(&receipt.launch_args)
        .envs(&receipt.env);
    if !args.keep_cwd {
        // The folder the session went into, wherever it is now: a folder swapped in at its path
        // since the acquire is not it.
        match folder.handle_path() {
            Some(handle) => command.current_dir(handle),
            None => command.current_dir(&receipt.workspace),
        };
    }
    if let Some(sandbox) = sandbox {
        // /tmp is not granted (it is shared); the runtime's own `.tmp` holds the command's
        // temporary files.
        if let Some(tmp) = &tmp {
            command.env("TMPDIR", tmp);
        }
        sandbox.install(&mut command);
    }
    Ok(command)
}
