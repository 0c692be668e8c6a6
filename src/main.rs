//! The `projectfile` command line: a thin clap layer over the facade. Every command prints a human
//! summary, or with `--json` exactly one JSON object on stdout; errors go to stderr as
//! `error: <path>: <reason>` (and, with `--json`, an `"error"` object on stdout) with a non-zero
//! exit code. All output goes through [`output`], which never panics on a closed pipe.

#![deny(clippy::print_stdout, clippy::print_stderr)] // enforces the sentence above

mod cli;
mod failure;
mod linked;
mod output;
mod run;
mod strict_json;
mod verbose;

use anyhow::Context as _;
use clap::{CommandFactory as _, Parser as _};
use projectfile::core::holder::Holder;
use projectfile::core::projector::{AcquireReceipt, AcquireRequest, FileReceipt, Projector};
use projectfile::core::projector::{LockNotice, LockWait};
use projectfile::core::{
    Error, HooksFormat, Namespace, Probes, ProviderExt, SessionRequest, VersionProbe, definitions,
};
use projectfile::receipts::{CompletionsReceipt, FragmentsReceipt, RenderReceipt, ResolveReceipt};
use std::path::PathBuf;
use std::process::ExitCode;

use cli::{Cli, Command, SessionArgs};
use failure::CliError;
use verbose::Verbose;

/// Success, or exit code 3 ([`failure::DEFERRED`]) when something could not be undone yet (each
/// printed on stderr without `--json`).
fn deferred(pending: &[projectfile::core::receipts::PendingUndo], json: bool) -> ExitCode {
    if pending.is_empty() {
        return ExitCode::SUCCESS;
    }
    if !json {
        for p in pending {
            output::stderr(format_args!(
                "pending: {}: {} (the next start retries it)",
                p.path, p.reason
            ));
        }
    }
    ExitCode::from(failure::DEFERRED)
}

/// The command line's work, from parsing to the exit code. std's runtime has already opened
/// `/dev/null` on any closed standard descriptor and set `SIGPIPE` to be ignored (so writing to
/// a closed pipe is an error we report; a command `run` starts gets the default back).
fn main() -> ExitCode {
    panic_if_asked();
    // One command per process: a lock wait blocks this thread (see the function).
    projectfile::core::one_command_per_process();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return failure::report_clap(&error, failure::json_requested()),
    };
    let json = cli.global.json;
    match dispatch(cli) {
        Ok(code) => code,
        Err(error) => failure::report(&error, json),
    }
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

/// The state directory, made absolute before anything is derived from it: paths under it are
/// recorded, handed to commands that run in the workspace, and checked from other directories.
fn state_dir(explicit: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let dir = match explicit {
        Some(dir) => dir,
        None => default_state_dir()?,
    };
    if dir.as_os_str().is_empty() {
        anyhow::bail!("the state directory is empty: pass --state-dir DIR");
    }
    std::path::absolute(&dir).with_context(|| {
        format!(
            "{}: cannot make the state directory absolute",
            dir.display()
        )
    })
}

fn default_state_dir() -> anyhow::Result<PathBuf> {
    // XDG: a relative XDG_STATE_HOME is invalid and ignored.
    if let Some(xdg) = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|v| v.is_absolute())
    {
        return Ok(xdg.join("projectfile"));
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).context(
        "no state directory: set --state-dir, PROJECTFILE_STATE_DIR, XDG_STATE_HOME or HOME",
    )?;
    Ok(PathBuf::from(home).join(".local/state/projectfile"))
}

fn projector(global: &cli::GlobalArgs) -> anyhow::Result<Projector> {
    let namespace = Namespace::new(global.namespace.clone())?;
    let dir = state_dir(global.state_dir.clone())?;
    usable_state_dir(global.state_dir.as_deref().unwrap_or(&dir))?;
    let wait = LockWait {
        limit: std::time::Duration::from_secs(global.wait),
        notice: Some(std::sync::Arc::new(|notice: &LockNotice| {
            let by = notice
                .holder
                .map_or_else(String::new, |pid| format!(", held by process {pid}"));
            output::stderr(format_args!(
                "projectfile: waiting up to {} s for the workspace lock {}{by}",
                notice.limit.as_secs(),
                notice.path.display()
            ));
        })),
        ..LockWait::default()
    };
    Ok(Projector::new(dir, namespace).with_lock_wait(wait))
}

/// Refuses a state directory that is, or lies under, something other than a directory, naming
/// the path as the user gave it (not a directory derived from it).
fn usable_state_dir(given: &std::path::Path) -> Result<(), CliError> {
    let existing = given.ancestors().find_map(|p| {
        let p = if p.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            p
        };
        std::fs::metadata(p).ok().map(|meta| (p, meta))
    });
    match existing {
        Some((found, meta)) if !meta.is_dir() => Err(CliError::io(
            given,
            if found == given {
                "not a directory: the state directory must be a directory, or not exist yet".into()
            } else {
                format!(
                    "the state directory cannot be created: {} is not a directory",
                    found.display()
                )
            },
        )),
        _ => Ok(()),
    }
}

pub(crate) fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    output::json(value, "the receipt")
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let global = cli.global;
    let log = Verbose::new(global.verbose);
    let projector = |global: &cli::GlobalArgs| -> anyhow::Result<Projector> {
        let projector = projector(global)?;
        log.context(projector.state_dir(), projector.namespace().as_str());
        Ok(projector)
    };
    match cli.command {
        Command::Providers => {
            let receipt = projectfile::receipts::providers_of_this_build();
            if global.json {
                print_json(&receipt)?;
            } else {
                let mut text = output::Text::default();
                for p in &receipt.providers {
                    text.line(&p.name);
                }
                text.print("the provider list")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions(args) => completions(args.shell, global.json),
        Command::Acquire(args) => {
            let projector = projector(&global)?;
            let holder = match (args.holder_pid, &args.holder_lock) {
                (Some(pid), _) => Holder::process(pid)?,
                (None, Some(path)) => Holder::held_lock(absolute(path)?)?,
                (None, None) => Holder::calling_process()?,
            };
            let session = session_request(&args.session)?;
            if args.dry_run {
                let receipt = dry_run(&projector, &args.session, session, holder)?;
                return print_dry_run(&receipt, global.json);
            }
            let (receipt, _) = acquire(&projector, &args.session, session, None, holder, &log)?;
            let delivered = if global.json {
                print_json(&receipt)
            } else {
                acquire_text(&receipt)
                    .print("the receipt")
                    .map_err(Into::into)
            };
            print_warnings(&receipt.warnings);
            match delivered {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(lost) => Err(undo_undelivered(&projector, &receipt.token, &lost)),
            }
        }
        Command::Release(args) => {
            let projector = projector(&global)?;
            let receipt = match &args.workspace {
                Some(dir) => {
                    let folder = projectfile::core::workspace::Workspace::open(dir)?;
                    projector.release_in(&args.token, &folder)?
                }
                None => projector.release(&args.token)?,
            };
            log.released(projector.state_dir(), &receipt);
            if global.json {
                print_json(&receipt)?;
            } else {
                let mut text = output::Text::default();
                if receipt.released {
                    text.line(format_args!("released {}", receipt.token));
                } else {
                    text.line(format_args!(
                        "nothing to release for {} (unknown or already released)",
                        receipt.token
                    ));
                }
                file_lines(&mut text, &receipt.files, false);
                print_warnings(&receipt.warnings);
                text.print("the receipt")?;
            }
            Ok(deferred(&receipt.pending, global.json))
        }
        Command::Run(args) => {
            let projector = projector(&global)?;
            run::run(&projector, &args, global.json, &log)
        }
        Command::Status(args) => {
            let projector = projector(&global)?;
            let report = projector.status(&args.workspace)?;
            log.status(projector.state_dir(), &report);
            if global.json {
                print_json(&report)?;
            } else {
                print_warnings(&report.warnings);
                status_text(&report).print("the status")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Resolve(args) => resolve(&global, &args),
        Command::Reader(command) => linked::reader_command(&command, global.json),
        Command::RemoveRuntime(args) => linked::remove_runtime(&args, global.json),
        Command::Runtime(command) => linked::runtime_command(&command, global.json),
        Command::StripStale(args) => {
            let projector = projector(&global)?;
            let report = projector.strip_stale(&args.workspace)?;
            log.stripped(projector.state_dir(), &report);
            if global.json {
                print_json(&report)?;
            } else {
                let mut text = output::Text::default();
                for s in &report.stale_cleaned {
                    text.line(format_args!(
                        "cleaned {} ({}): {}",
                        s.token, s.provider, s.reason
                    ));
                }
                file_lines(&mut text, &report.files, false);
                print_warnings(&report.warnings);
                if report.stale_cleaned.is_empty() && report.files.is_empty() {
                    text.line("nothing stale");
                }
                text.print("the report")?;
            }
            Ok(deferred(&report.pending, global.json))
        }
    }
}

/// `projectfile completions SHELL`: the script, or with `--json` the receipt holding it.
fn completions(shell: clap_complete::Shell, json: bool) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "projectfile", &mut script);
    if json {
        print_json(&CompletionsReceipt {
            schema: projectfile::receipts::schema::COMPLETIONS,
            shell: shell.to_string(),
            script: String::from_utf8_lossy(&script).into_owned(),
        })?;
    } else {
        output::stdout(script, "the completion script")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `projectfile resolve`.
fn resolve(global: &cli::GlobalArgs, args: &cli::ResolveArgs) -> anyhow::Result<ExitCode> {
    use projectfile::core::guidance::{self, GuidanceRequest, StdFs};
    let text = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let root = absolute(&args.workspace)?;
    if !root.is_dir() {
        return Err(Error::Unsafe {
            path: root,
            reason: "the workspace is not a directory".into(),
        }
        .into());
    }
    let mut request = GuidanceRequest::new(text(&root))
        .with_max_depth(args.max_depth)
        .with_max_dirs(args.max_dirs)
        .with_user_scope(!args.no_user)
        .with_ancestors(!args.no_ancestors)
        .with_subtree(!args.no_subtree)
        .with_allow_outside_tree(args.allow_outside_tree)
        .with_session_namespace(global.namespace.clone());
    if let Some(cwd) = &args.cwd {
        request = request.with_working_dir(text(&working_dir(&root, cwd)?));
    }
    let home = args
        .home
        .clone()
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
    if let Some(home) = home {
        request = request.with_home_dir(text(&home));
    }
    if let Some(max) = args.max_bytes {
        request = request.with_max_bytes(max);
    }
    let resolution = match &args.as_provider {
        None => guidance::resolve(&StdFs, &request),
        Some(name) => {
            let provider = known_provider(name)?;
            let mut profile = match &args.cli_version {
                Some(version) => provider.discovery_for(&projectfile::core::Probes {
                    cli_version: projectfile::core::VersionProbe::Known {
                        version: version.clone(),
                        binary: None,
                    },
                }),
                None => provider.discovery(),
            };
            if args.max_bytes.is_some() {
                profile.budget_bytes = args.max_bytes;
            } else if profile.budget_bytes.is_none() {
                // The CLI has no byte budget of its own: it loads everything it finds.
                profile.budget_bytes = Some(u64::MAX);
            }
            guidance::resolve_as(&StdFs, &profile, &request)
        }
    };
    if args.render {
        let mut block = guidance::render_block(&resolution);
        if !block.is_empty() && !block.ends_with('\n') {
            block.push('\n');
        }
        if global.json {
            print_json(&RenderReceipt {
                schema: projectfile::receipts::schema::RENDER,
                block,
            })?;
        } else {
            output::stdout(block, "the rendered guidance")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.fragments {
        print_json(&FragmentsReceipt {
            schema: projectfile::receipts::schema::FRAGMENTS,
            fragments: guidance::prompt_fragments(&resolution),
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    if global.json {
        print_json(&ResolveReceipt {
            schema: projectfile::receipts::schema::RESOLVE,
            as_provider: args.as_provider.clone(),
            resolution,
        })?;
    } else {
        print_resolution(&resolution)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `resolve`'s human summary: each source and omission, then the budget line.
fn print_resolution(
    resolution: &projectfile::core::guidance::GuidanceResolution,
) -> anyhow::Result<()> {
    let mut text = output::Text::default();
    for s in &resolution.sources {
        text.line(format_args!("{:<11} {:>6} B  {}", s.scope, s.bytes, s.path));
    }
    for o in &resolution.omitted {
        let by = o
            .shadowed_by
            .as_deref()
            .map(|by| format!(" by {by}"))
            .unwrap_or_default();
        text.line(format_args!(
            "omitted     {:>6} B  {} ({}{by})",
            o.bytes, o.path, o.reason
        ));
    }
    text.line(budget_line(resolution));
    text.print("the resolution")?;
    Ok(())
}

/// The closing line of `resolve`'s text output: what the budget let through and what it cut, the
/// same figures as the JSON (`budget_used_bytes() + cut_bytes` is what the sources held).
fn budget_line(resolution: &projectfile::core::guidance::GuidanceResolution) -> String {
    let used = resolution.budget_used_bytes();
    let mut line = if resolution.budget_bytes == u64::MAX {
        format!("{used} bytes used (no budget)")
    } else {
        format!("{used} of {} budget bytes used", resolution.budget_bytes)
    };
    if used > resolution.budget_bytes {
        line.push_str(" (over: the first source is always kept whole)");
    }
    if resolution.cut_bytes > 0 {
        line.push_str(&format!(
            "; {} bytes cut by the budget",
            resolution.cut_bytes
        ));
    }
    if resolution.unbudgeted_bytes > 0 {
        line.push_str(&format!(
            "; {} bytes of user files outside the budget",
            resolution.unbudgeted_bytes
        ));
    }
    let dirs = resolution.dirs_scanned;
    let noun = if dirs == 1 {
        "directory"
    } else {
        "directories"
    };
    line.push_str(&format!("; {dirs} {noun} scanned"));
    line
}

fn absolute(path: &std::path::Path) -> anyhow::Result<PathBuf> {
    Ok(std::path::absolute(path)?)
}

/// `resolve --cwd`: the working directory, which must lie inside the workspace `root` (after
/// resolving symbolic links), written under `root` as the user named it.
fn working_dir(root: &std::path::Path, cwd: &std::path::Path) -> anyhow::Result<PathBuf> {
    // Read-only: compares two real paths to confine the resolver's working directory.
    #[allow(clippy::disallowed_methods)]
    let canonical = |p: &std::path::Path| {
        std::fs::canonicalize(p).map_err(|e| CliError::io(p, format!("cannot resolve: {e}")))
    };
    let (real_root, real_cwd) = (canonical(root)?, canonical(cwd)?);
    match real_cwd.strip_prefix(&real_root) {
        Ok(inside) => Ok(root.join(inside)),
        Err(_) => Err(CliError::usage_at(
            cwd,
            format!(
                "--cwd is outside the workspace {}: the working directory must lie inside it",
                root.display()
            ),
        )
        .into()),
    }
}

/// The provider called `name`. The argument parser already refused names not in this build, so
/// this only fails if a caller skipped it; the refusal is the same bad usage.
fn known_provider(name: &str) -> Result<Box<dyn projectfile::core::Provider>, CliError> {
    projectfile::provider(name).ok_or_else(|| {
        let names: Vec<&str> = projectfile::providers().iter().map(|p| p.name()).collect();
        CliError::usage(
            name,
            format!(
                "no such provider in this build (available: {})",
                names.join(", ")
            ),
        )
    })
}

/// What acquiring `session` would do ([`Projector::dry_run`]), changing nothing.
pub(crate) fn dry_run(
    projector: &Projector,
    args: &SessionArgs,
    session: SessionRequest,
    holder: Holder,
) -> anyhow::Result<AcquireReceipt> {
    let provider = known_provider(&args.provider)?;
    Ok(projector.dry_run(
        provider.as_ref(),
        &acquire_request(args, session, None, holder),
    )?)
}

/// Prints a dry run's receipt (with `--json`, the JSON object; else the summary).
pub(crate) fn print_dry_run(receipt: &AcquireReceipt, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        print_json(receipt)?;
    } else {
        let mut text = acquire_text(receipt);
        if !receipt.command.is_empty() {
            text.line(format_args!("would run: {}", receipt.command.join(" ")));
        }
        text.line("dry run: nothing was written, no lease was taken");
        text.print("the receipt")?;
    }
    print_warnings(&receipt.warnings);
    Ok(ExitCode::SUCCESS)
}

/// The acquire request the command line describes.
fn acquire_request(
    args: &SessionArgs,
    session: SessionRequest,
    destination: Option<Destination<'_>>,
    holder: Holder,
) -> AcquireRequest {
    let root = destination.map_or(args.workspace.as_path(), |d| d.root);
    let mut request = AcquireRequest::new(root, session, holder);
    request.cli_home = destination.and_then(|d| d.cli_home).map(str::to_string);
    if let Some(version) = &args.cli_version {
        request.probes = Probes {
            cli_version: VersionProbe::Known {
                version: version.clone(),
                binary: None,
            },
        };
    }
    request.binary_path = args.cli_binary.clone();
    request.require_delivery = args.require_delivery;
    request
}

/// Where a linked runtime projects instead of the workspace: its folder, and the CLI's private
/// home inside it when the launch gives the CLI one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Destination<'a> {
    /// The projection root.
    pub root: &'a std::path::Path,
    /// The CLI's private home, relative to `root`.
    pub cli_home: Option<&'a str>,
}

/// Acquires `session` as the command line asks ([`session_request`] builds it first, so a refused
/// prompt or configuration stops the command before anything is created).
/// `destination` replaces the workspace as the projection root (a linked runtime). With the
/// receipt comes a handle on the folder projected into, for the release to find it by.
pub(crate) fn acquire(
    projector: &Projector,
    args: &SessionArgs,
    session: SessionRequest,
    destination: Option<Destination<'_>>,
    holder: Holder,
    log: &Verbose,
) -> anyhow::Result<(AcquireReceipt, projectfile::core::workspace::Workspace)> {
    let provider = known_provider(&args.provider)?;
    let request = acquire_request(args, session, destination, holder);
    log.acquiring(provider.name(), &args.workspace, &request.holder);
    let (receipt, workspace) = projector.acquire_holding(provider.as_ref(), &request)?;
    log.acquired(projector.state_dir(), &receipt);
    Ok((receipt, workspace))
}

/// The most bytes one input (session text, a definition, a configuration) may hold. A larger one
/// is refused after reading one byte past it, so `--prompt-file /dev/zero` ends at once instead of
/// filling memory; no CLI reads instructions of that size.
pub(crate) const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Reads `reader` as UTF-8 text of at most [`MAX_INPUT_BYTES`]; `Ok(None)` when it holds more.
pub(crate) fn read_bounded(reader: impl std::io::Read) -> std::io::Result<Option<String>> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut reader.take(MAX_INPUT_BYTES + 1), &mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Ok(None);
    }
    String::from_utf8(bytes).map(Some).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// [`read_bounded`] of the file at `path`, as the `what` of an error.
fn read_text(path: &std::path::Path, what: &str) -> Result<String, CliError> {
    text_or_error(open_input(path).and_then(read_bounded), path, what)
}

/// How long an input FIFO is given for a writer to come (one started just after this command).
const FIFO_WRITER_WAIT_MS: i32 = 5_000;

/// Opens an input file the command line names without blocking in the open, then makes reads
/// block: a pipe with a writer (`--prompt-file <(cmd)`) is read to its end. A FIFO is given
/// [`FIFO_WRITER_WAIT_MS`] for a writer to write (or come and go); one nobody writes to then
/// reads as empty instead of hanging the command.
fn open_input(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{FileType, Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    if FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) == FileType::Fifo {
        use std::os::fd::AsRawFd as _;
        let mut ready = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for a descriptor this function owns. Data, or a writer that
        // came and went, ends the wait early; its end (or an error) only ends the waiting: the
        // read below says what there is.
        unsafe { libc::poll(&mut ready, 1, FIFO_WRITER_WAIT_MS) };
    }
    rustix::fs::fcntl_setfl(&fd, rustix::fs::fcntl_getfl(&fd)? - OFlags::NONBLOCK)?;
    Ok(std::fs::File::from(fd))
}

/// What [`read_bounded`] gave, as the text or an error naming `path` and `what` was read.
fn text_or_error(
    read: std::io::Result<Option<String>>,
    path: &std::path::Path,
    what: &str,
) -> Result<String, CliError> {
    match read {
        Ok(Some(text)) => Ok(text),
        Ok(None) => Err(CliError::invalid(
            path,
            format!(
                "the {what} is larger than {} MiB, the most an input may hold",
                MAX_INPUT_BYTES >> 20
            ),
        )),
        Err(e) => Err(CliError::io(path, format!("cannot read the {what}: {e}"))),
    }
}

fn read_json(path: &std::path::Path, what: &str) -> Result<serde_json::Value, CliError> {
    let text = read_text(path, what)?;
    strict_json::parse(&text)
        .map_err(|e| CliError::invalid(path, format!("the {what} is not valid JSON: {e}")))
}

/// The session instructions, from `--prompt`, `--prompt-file` or standard input (`-`). An empty
/// or blank prompt is refused (exit 2): it would project an empty block and tell the CLI nothing,
/// which is never what a host meant.
fn read_prompt(args: &SessionArgs) -> anyhow::Result<String> {
    let (prompt, file) = match (&args.prompt, &args.prompt_file) {
        (Some(text), _) => (text.clone(), None),
        (None, Some(path)) if path.as_os_str() == "-" => (
            text_or_error(read_bounded(std::io::stdin()), path, "prompt")?,
            Some(path),
        ),
        (None, Some(path)) => (read_text(path, "prompt file")?, Some(path)),
        (None, None) => {
            return Err(CliError::usage(
                "--prompt",
                "a prompt is required: pass --prompt TEXT or --prompt-file FILE",
            )
            .into());
        }
    };
    if prompt.trim().is_empty() {
        let reason = "the session instructions are empty: pass the text the session should project";
        return Err(match file {
            Some(path) => CliError::usage_at(path, reason),
            None => CliError::usage("--prompt", reason),
        }
        .into());
    }
    Ok(prompt)
}

/// The session the command line describes: prompt, configuration files, skills.
pub(crate) fn session_request(args: &SessionArgs) -> anyhow::Result<SessionRequest> {
    let mut session = SessionRequest::with_prompt(read_prompt(args)?);
    if let Some(path) = &args.mcp_config {
        session.mcp_servers = Some(read_json(path, "MCP configuration")?);
    }
    if let Some(path) = &args.cli_config {
        session.cli_config = Some(read_json(path, "CLI configuration")?);
    }
    if let Some(path) = args.hooks.as_ref().or(args.hooks_config.as_ref()) {
        let script = match &args.hook_script {
            Some(script) => Some(projectfile::core::HookScript {
                name: script
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .with_context(|| {
                        format!("{}: a hook script needs a file name", script.display())
                    })?,
                content: read_text(script, "hook script")?,
            }),
            None => None,
        };
        let config = read_json(path, "hooks configuration")?;
        let neutral = args.hooks.is_some() || definitions::is_neutral_hooks(&config);
        if neutral {
            // Checked here too, so a malformed file is bad usage whatever the provider.
            definitions::neutral_hooks(&config)
                .map_err(|e| CliError::invalid(path, e.to_string()))?;
        }
        session.hooks = Some(projectfile::core::HooksInput {
            config,
            script,
            format: match neutral {
                true => HooksFormat::Neutral,
                false => HooksFormat::Cli,
            },
        });
    } else if args.hook_script.is_some() {
        return Err(CliError::usage(
            "--hook-script",
            "needs --hooks or --hooks-config: a script nothing runs would be dropped",
        )
        .into());
    }
    if args.mcp_mode == "replace" {
        session.mcp_mode = projectfile::core::McpMode::Replace;
    }
    session.agents = named_files(&args.agents, "subagent")?;
    session.commands = named_files(&args.commands, "command")?;
    session.options = provider_options(args)?;
    for skill in &args.skills {
        let (name, dir) = skill
            .split_once('=')
            .ok_or_else(|| CliError::usage(skill, "a skill is NAME=DIR"))?;
        session.skills.push(projectfile::core::SkillInput {
            name: name.to_string(),
            source: absolute(std::path::Path::new(dir))?,
        });
    }
    Ok(session)
}

/// `--agent` / `--command` values (`NAME=FILE`), each file read whole.
fn named_files(values: &[String], what: &str) -> anyhow::Result<Vec<projectfile::core::NamedFile>> {
    let mut files = Vec::with_capacity(values.len());
    for value in values {
        let (name, file) = value
            .split_once('=')
            .ok_or_else(|| CliError::usage(value, format!("a {what} is NAME=FILE")))?;
        files.push(projectfile::core::NamedFile {
            name: name.to_string(),
            content: read_text(std::path::Path::new(file), what)?,
        });
    }
    Ok(files)
}

/// `--provider-option PROVIDER.NAME=VALUE`: this provider's options, checked against what it
/// declares (bad usage otherwise); those of another provider of this build are left out.
fn provider_options(
    args: &SessionArgs,
) -> Result<std::collections::BTreeMap<String, String>, CliError> {
    let provider = known_provider(&args.provider)?;
    let mut options = std::collections::BTreeMap::new();
    for spec in &args.provider_options {
        let bad = |reason: &str| CliError::usage(format!("--provider-option {spec}"), reason);
        let Some((key, value)) = spec.split_once('=') else {
            return Err(bad("an option is PROVIDER.NAME=VALUE"));
        };
        let Some((owner, name)) = key.split_once('.') else {
            return Err(bad("an option is PROVIDER.NAME=VALUE"));
        };
        known_provider(owner).map_err(|e| bad(&e.to_string()))?;
        if owner != args.provider {
            continue;
        }
        options.insert(name.to_string(), value.to_string());
    }
    let request = SessionRequest {
        options,
        ..SessionRequest::default()
    };
    request
        .check_options(provider.name(), &provider.options())
        .map_err(|e| CliError::usage("--provider-option", e.to_string()))?;
    Ok(request.options)
}

fn status_text(report: &projectfile::core::projector::StatusReport) -> output::Text {
    let mut text = output::Text::default();
    text.line(format_args!("workspace {}", report.workspace.display()));
    if report.leases.is_empty() {
        text.line("no leases");
    }
    for lease in &report.leases {
        use projectfile::core::holder::Liveness;
        let state = match &lease.liveness {
            Liveness::Alive => "live".to_string(),
            Liveness::Dead { reason } => format!("stale: {reason}"),
            Liveness::Unknown { reason } => format!("never stripped: {reason}"),
        };
        text.line(format_args!(
            "lease {} {} {} ({state}): {}",
            lease.token,
            lease.provider,
            lease.holder.describe(),
            lease
                .paths
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for entry in &report.entries {
        text.line(format_args!(
            "{} {}: {} holder(s), {} live",
            entry.kind, entry.path, entry.holders, entry.live_holders
        ));
    }
    for taken in &report.taken_over {
        text.line(format_args!(
            "taken over {}: the prior folder is kept at {} ({})",
            taken.path,
            taken.stash.display(),
            taken.state
        ));
    }
    for kept in &report.kept {
        text.line(format_args!(
            "kept {} at {} ({})",
            kept.path,
            kept.kept_at.display(),
            kept.reason
        ));
    }
    for p in &report.pending {
        text.line(format_args!(
            "pending {}: {} (the next start retries it)",
            p.path, p.reason
        ));
    }
    text
}

/// One line per file: `  written   private /path`; a dry run's say what would be done
/// (`  would be written private /path`), since nothing was.
fn file_lines(text: &mut output::Text, files: &[FileReceipt], dry_run: bool) {
    let would = if dry_run { "would be " } else { "" };
    for f in files {
        let action = format!("{would}{}", f.action);
        text.line(format_args!("  {action:<9} {:<7} {}", f.kind, f.path));
    }
}

fn print_warnings(warnings: &[projectfile::core::projector::Warning]) {
    for w in warnings {
        output::stderr(format_args!("warning: {}: {}", w.path, w.message));
    }
}

/// A session whose receipt could not be delivered is undone: nobody holds its token.
fn undo_undelivered(projector: &Projector, token: &str, lost: &anyhow::Error) -> anyhow::Error {
    match projector.release(token) {
        Ok(_) => anyhow::anyhow!("{lost:#}; the session {token} was released, nothing is left"),
        Err(error) => anyhow::anyhow!(
            "{lost:#}; releasing the session {token} failed too ({error}); its projections are cleaned once its holder is gone"
        ),
    }
}

/// `session text: delivered (block /ws/AGENTS.md)`, or `NOT delivered` with the reason.
fn delivery_line(text: &mut output::Text, delivery: &projectfile::core::guidance::DeliveryVerdict) {
    let state = if delivery.delivered {
        "delivered"
    } else {
        "NOT delivered"
    };
    let route = match &delivery.path {
        Some(path) => format!("{} {path}", delivery.via),
        None => delivery.via.clone(),
    };
    match &delivery.note {
        Some(note) => text.line(format_args!("session text: {state} ({route}): {note}")),
        None => text.line(format_args!("session text: {state} ({route})")),
    }
}

fn acquire_text(receipt: &AcquireReceipt) -> output::Text {
    let mut text = output::Text::default();
    text.line(format_args!("token {}", receipt.token));
    text.line(format_args!(
        "provider {} in {}",
        receipt.provider,
        receipt.workspace.display()
    ));
    file_lines(&mut text, &receipt.files, receipt.dry_run);
    if !receipt.launch_args.is_empty() {
        text.line(format_args!(
            "launch args: {}",
            receipt.launch_args.join(" ")
        ));
    }
    delivery_line(&mut text, &receipt.delivery);
    for note in &receipt.notes {
        text.line(format_args!("note: {note}"));
    }
    for s in &receipt.stale_cleaned {
        text.line(format_args!(
            "cleaned stale lease {} ({}): {}",
            s.token, s.provider, s.reason
        ));
    }
    for k in &receipt.kept {
        text.line(format_args!(
            "kept {} at {} ({})",
            k.path,
            k.kept_at.display(),
            k.reason
        ));
    }
    text
}
