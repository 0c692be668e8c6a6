//! `projectfile run`: acquire with this process as holder, run the command with the plan's launch
//! arguments, forward termination signals, release, and exit with the command's status.
//!
//! Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process *by another process* are
//! forwarded to the child. Signals the terminal sends to the whole foreground process group
//! (Ctrl-C) reach the child directly, so they are not forwarded a second time (told apart by
//! `si_code == SI_KERNEL`). If this process is killed outright (SIGKILL), its lease goes stale and
//! the next start cleans it.

use anyhow::Context as _;
use projectfile::core::holder::Holder;
use projectfile::core::projector::Projector;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::cli::RunArgs;
use crate::verbose::Verbose;

/// The child's pid once spawned (0 before).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// A forwardable signal that arrived before the child existed (0: none).
static PENDING: AtomicI32 = AtomicI32::new(0);

const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

extern "C" fn forward(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler; only async-signal-safe
    // calls (atomics, kill) are made here.
    let code = if info.is_null() {
        0
    } else {
        unsafe { (*info).si_code }
    };
    if code == libc::SI_KERNEL {
        return; // From the terminal: the child's process group received it too.
    }
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill is async-signal-safe; a failure (child already gone) is harmless.
        unsafe {
            libc::kill(child, signal);
        }
    } else {
        PENDING.store(signal, Ordering::SeqCst);
    }
}

fn install_forwarding() -> anyhow::Result<()> {
    for signal in FORWARDED {
        // SAFETY: a zeroed sigaction is a valid starting value; we set the handler, SA_SIGINFO
        // and SA_RESTART, and an empty mask, then install it for a catchable signal.
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = forward as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
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
pub fn run(
    projector: &Projector,
    args: &RunArgs,
    json: bool,
    log: &Verbose,
) -> anyhow::Result<ExitCode> {
    let session = crate::session_request(&args.session)?;
    install_forwarding()?;
    let holder = Holder::current_process()?;
    let workspace = Projector::canonical_workspace(&args.session.workspace)?;
    let linked = crate::linked::open(&args.linked, &args.session.provider, &workspace)?;
    let destination = linked.as_ref().map(|l| l.dir());
    let mut receipt = crate::acquire(projector, &args.session, session, destination, holder, log)?;
    // After acquire: the sandboxed CLI must read the session's private files (a prompt file
    // named in the launch arguments lives under the state directory, outside every grant).
    let sandbox = match &linked {
        Some(l) => {
            match crate::linked::sandbox(&args.linked, l, &private_dirs(projector, &receipt)) {
                Ok(sandbox) => sandbox,
                Err(e) => {
                    // Nothing ran: undo the session before reporting.
                    let _ = projector.release(&receipt.token);
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
                    let _ = projector.release(&receipt.token);
                    return Err(e);
                }
            }
        }
        None => None,
    };
    if json {
        // One JSON object (an acquire receipt), printed before the command runs so a host can
        // read where the session text went while the command is still running.
        println!("{}", serde_json::to_string(&receipt)?);
    }
    let status = spawn_and_wait(args, &receipt, sandbox, tmp, log);
    let released = projector.release(&receipt.token);
    if let Some(linked) = linked
        && let Err(e) = crate::linked::close(linked)
    {
        eprintln!("error: {e:#}");
    }
    let status = status?;
    match released {
        Ok(receipt) => log.released(projector.state_dir(), &receipt),
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(1));
        }
    }
    Ok(status)
}

/// The folders holding the session's private files: the launch arguments that name a file under
/// the state directory.
fn private_dirs(
    projector: &Projector,
    receipt: &projectfile::core::projector::AcquireReceipt,
) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = receipt
        .launch_args
        .iter()
        .map(std::path::Path::new)
        .filter(|path| path.is_absolute() && path.starts_with(projector.state_dir()))
        .filter_map(|path| path.parent().map(std::path::Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

fn spawn_and_wait(
    args: &RunArgs,
    receipt: &projectfile::core::projector::AcquireReceipt,
    sandbox: Option<projectfile::core::sandbox::PreparedSandbox>,
    tmp: Option<std::path::PathBuf>,
    log: &Verbose,
) -> anyhow::Result<ExitCode> {
    let pending = PENDING.swap(0, Ordering::SeqCst);
    if pending != 0 {
        return Ok(ExitCode::from(128u8.saturating_add(pending as u8)));
    }
    let Some((program, rest)) = args.command.split_first() else {
        anyhow::bail!("run needs a command after `--`");
    };
    let cwd = if args.keep_cwd {
        std::env::current_dir().context("cannot read the current directory")?
    } else {
        receipt.workspace.clone()
    };
    let search_path = match receipt.env.get("PATH") {
        Some(planned) => Some(std::ffi::OsString::from(planned)),
        None => std::env::var_os("PATH"),
    };
    let resolved = resolve_program(program, search_path.as_deref(), &cwd)?;
    let mut command = std::process::Command::new(&resolved);
    // The command sees the name it was given, as with a PATH search of its own.
    std::os::unix::process::CommandExt::arg0(&mut command, program);
    command
        .args(rest)
        .args(&receipt.launch_args)
        .envs(&receipt.env);
    if !args.keep_cwd {
        command.current_dir(&receipt.workspace);
    }
    if let Some(sandbox) = sandbox {
        // /tmp is not granted (it is shared); the runtime's own `.tmp` holds the command's
        // temporary files.
        if let Some(tmp) = &tmp {
            command.env("TMPDIR", tmp);
        }
        sandbox.install(&mut command);
    }
    log.say(
        "run",
        format_args!(
            "{program} {}",
            rest.iter()
                .chain(&receipt.launch_args)
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        ),
    );
    let mut child = command
        .spawn()
        .with_context(|| format!("{program}: cannot run the command"))?;
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    let pending = PENDING.swap(0, Ordering::SeqCst);
    if pending != 0 {
        // SAFETY: kill on our own child's pid.
        unsafe {
            libc::kill(child.id() as i32, pending);
        }
    }
    let status = child.wait().context("cannot wait for the command")?;
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

/// The file `run` executes for `program`, found once the way `execvp` finds it, so the child is
/// started with one `execve` instead of one per PATH entry: a name holding a `/` is used as it is
/// (relative to `cwd`, where the command runs); otherwise the first executable regular file of
/// that name in `search_path` (the command's own PATH), with a relative entry taken from `cwd`.
fn resolve_program(
    program: &str,
    search_path: Option<&std::ffi::OsStr>,
    cwd: &std::path::Path,
) -> anyhow::Result<std::path::PathBuf> {
    if program.is_empty() {
        anyhow::bail!("run needs a command after `--`, not an empty name");
    }
    if program.contains('/') {
        return Ok(cwd.join(program));
    }
    let Some(search_path) = search_path.filter(|p| !p.is_empty()) else {
        anyhow::bail!(
            "{program}: cannot run the command: PATH is not set, and the name has no `/`"
        );
    };
    which::which_in(program, Some(search_path), cwd).map_err(|e| {
        anyhow::anyhow!(
            "{program}: cannot run the command: not found in PATH ({e}): {}",
            search_path.to_string_lossy()
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::disallowed_methods)] // fixtures are written directly
mod tests {
    use super::resolve_program;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn programs_resolve_like_execvp() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("first"), dir.path().join("second"));
        for d in [&first, &second] {
            std::fs::create_dir(d).unwrap();
        }
        // Not executable in `first`, executable in `second`: the executable one is taken.
        std::fs::write(first.join("tool"), "#!/bin/sh\n").unwrap();
        std::fs::write(second.join("tool"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(second.join("tool"), PermissionsExt::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([&first, &second]).unwrap();
        let found = resolve_program("tool", Some(&path), dir.path()).unwrap();
        assert_eq!(found, second.join("tool"));
        // A name with a slash is used as given, from the command's directory.
        assert_eq!(
            resolve_program("./tool", Some(&path), &second).unwrap(),
            second.join("./tool")
        );
        // A relative PATH entry is taken from the command's directory.
        let relative = std::ffi::OsString::from("second");
        let found = resolve_program("tool", Some(&relative), dir.path()).unwrap();
        assert_eq!(
            std::fs::canonicalize(found).unwrap(),
            std::fs::canonicalize(second.join("tool")).unwrap()
        );
        let missing = resolve_program("no-such-tool", Some(&path), dir.path()).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("no-such-tool: cannot run the command"),
            "{missing}"
        );
        assert!(resolve_program("tool", None, dir.path()).is_err());
    }
}
