//! The `projectfile` command line: a thin clap layer over the facade. Every command prints a human
//! summary, or with `--json` exactly one JSON object on stdout; errors go to stderr as
//! `error: <path>: <reason>` (and, with `--json`, an `"error"` object on stdout) with a non-zero
//! exit code.

mod cli;
mod linked;
mod run;
mod verbose;

use anyhow::Context as _;
use clap::{CommandFactory as _, Parser as _};
use projectfile::core::fsio::{LockNotice, LockWait};
use projectfile::core::holder::Holder;
use projectfile::core::projector::{AcquireReceipt, AcquireRequest, FileReceipt, Projector};
use projectfile::core::{Error, Namespace, Probes, SessionRequest, VersionProbe};
use projectfile::receipts::{ErrorReceipt, FragmentsReceipt, ResolveReceipt};
use std::path::PathBuf;
use std::process::ExitCode;

use cli::{Cli, Command, SessionArgs};
use verbose::Verbose;

/// Exit code for an operation that failed (usage errors exit 2, from clap).
const EXIT_FAILURE: u8 = 1;
/// Exit code for a release or strip-stale that left undos pending (cleanup deferred to the next
/// start; the receipt lists each).
const EXIT_DEFERRED: u8 = 3;

/// Success, or [`EXIT_DEFERRED`] when something could not be undone yet (each printed on stderr
/// without `--json`).
fn deferred(pending: &[projectfile::core::receipts::PendingUndo], json: bool) -> ExitCode {
    if pending.is_empty() {
        return ExitCode::SUCCESS;
    }
    if !json {
        for p in pending {
            eprintln!(
                "pending: {}: {} (the next start retries it)",
                p.path, p.reason
            );
        }
    }
    ExitCode::from(EXIT_DEFERRED)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.global.json;
    match dispatch(cli) {
        Ok(code) => code,
        Err(error) => {
            report_error(&error, json);
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// Prints `error: <path>: <reason>` on stderr, and the JSON error object on stdout with `--json`.
fn report_error(error: &anyhow::Error, json: bool) {
    let receipt = match error.downcast_ref::<Error>() {
        Some(core) => ErrorReceipt::from_core(core),
        None => ErrorReceipt::usage(format!("{error:#}")),
    };
    eprintln!("error: {}", receipt.error.message);
    if json && let Ok(text) = serde_json::to_string(&receipt) {
        println!("{text}");
    }
}

fn state_dir(explicit: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = explicit {
        return Ok(dir);
    }
    if let Some(xdg) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(xdg).join("projectfile"));
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).context(
        "no state directory: set --state-dir, PROJECTFILE_STATE_DIR, XDG_STATE_HOME or HOME",
    )?;
    Ok(PathBuf::from(home).join(".local/state/projectfile"))
}

fn projector(global: &cli::GlobalArgs) -> anyhow::Result<Projector> {
    let namespace = Namespace::new(global.namespace.clone())?;
    let wait = LockWait {
        limit: std::time::Duration::from_secs(global.wait),
        notice: Some(std::sync::Arc::new(|notice: &LockNotice| {
            let by = notice
                .holder
                .map_or_else(String::new, |pid| format!(", held by process {pid}"));
            eprintln!(
                "projectfile: waiting up to {} s for the workspace lock {}{by}",
                notice.limit.as_secs(),
                notice.path.display()
            );
        })),
        ..LockWait::default()
    };
    Ok(Projector::new(state_dir(global.state_dir.clone())?, namespace).with_lock_wait(wait))
}

fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string(value)?);
    Ok(())
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
                for p in &receipt.providers {
                    println!("{}", p.name);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions(args) => {
            clap_complete::generate(
                args.shell,
                &mut Cli::command(),
                "projectfile",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Acquire(args) => {
            let projector = projector(&global)?;
            let holder = match (args.holder_pid, &args.holder_lock) {
                (Some(pid), _) => Holder::process(pid)?,
                (None, Some(path)) => Holder::lock(absolute(path)?),
                (None, None) => Holder::calling_process()?,
            };
            let receipt = acquire(&projector, &args.session, None, holder, &log)?;
            if global.json {
                print_json(&receipt)?;
            } else {
                print_acquire(&receipt);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Release(args) => {
            let projector = projector(&global)?;
            let receipt = projector.release(&args.token)?;
            log.released(projector.state_dir(), &receipt);
            if global.json {
                print_json(&receipt)?;
            } else {
                if receipt.released {
                    println!("released {}", receipt.token);
                } else {
                    println!(
                        "nothing to release for {} (unknown or already released)",
                        receipt.token
                    );
                }
                print_files(&receipt.files);
                for w in &receipt.warnings {
                    eprintln!("warning: {}: {}", w.path, w.message);
                }
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
                println!("workspace {}", report.workspace.display());
                if report.leases.is_empty() {
                    println!("no leases");
                }
                for lease in &report.leases {
                    let state = if lease.liveness.is_alive() {
                        "live"
                    } else {
                        "stale"
                    };
                    println!(
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
                    );
                }
                for entry in &report.entries {
                    println!(
                        "{} {}: {} holder(s), {} live",
                        entry.kind, entry.path, entry.holders, entry.live_holders
                    );
                }
                for taken in &report.taken_over {
                    println!(
                        "taken over {}: the prior folder is kept at {} ({})",
                        taken.path,
                        taken.stash.display(),
                        taken.state
                    );
                }
                for kept in &report.kept {
                    println!(
                        "kept {} at {} ({})",
                        kept.path,
                        kept.kept_at.display(),
                        kept.reason
                    );
                }
                for p in &report.pending {
                    println!(
                        "pending {}: {} (the next start retries it)",
                        p.path, p.reason
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Resolve(args) => resolve(&global, &args),
        Command::Reader(command) => linked::reader_command(&command, global.json),
        Command::RemoveRuntime(args) => linked::remove_runtime(&args, global.json),
        Command::StripStale(args) => {
            let projector = projector(&global)?;
            let report = projector.strip_stale(&args.workspace)?;
            log.stripped(projector.state_dir(), &report);
            if global.json {
                print_json(&report)?;
            } else {
                for s in &report.stale_cleaned {
                    println!("cleaned {} ({}): {}", s.token, s.provider, s.reason);
                }
                print_files(&report.files);
                for w in &report.warnings {
                    eprintln!("warning: {}: {}", w.path, w.message);
                }
                if report.stale_cleaned.is_empty() && report.files.is_empty() {
                    println!("nothing stale");
                }
            }
            Ok(deferred(&report.pending, global.json))
        }
    }
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
        .with_session_namespace(global.namespace.clone());
    if let Some(cwd) = &args.cwd {
        request = request.with_working_dir(text(&absolute(cwd)?));
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
            let provider = projectfile::provider(name)
                .with_context(|| format!("{name}: no such provider in this build"))?;
            let mut profile = provider.discovery();
            if args.max_bytes.is_some() {
                profile.budget_bytes = args.max_bytes;
            }
            guidance::resolve_as(&StdFs, &profile, &request)
        }
    };
    if args.render {
        print!("{}", guidance::render_block(&resolution));
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
        for s in &resolution.sources {
            println!(
                "{:<11} {:>6} B  {}",
                serde_json::to_value(s.scope)?.as_str().unwrap_or("?"),
                s.bytes,
                s.path
            );
        }
        for o in &resolution.omitted {
            println!(
                "omitted     {:>6} B  {} ({})",
                o.bytes,
                o.path,
                serde_json::to_value(o.reason)?.as_str().unwrap_or("?")
            );
        }
        println!(
            "{} of {} bytes used; {} directories scanned",
            resolution.total_bytes, resolution.budget_bytes, resolution.dirs_scanned
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn absolute(path: &std::path::Path) -> anyhow::Result<PathBuf> {
    Ok(std::path::absolute(path)?)
}

/// Builds the session request from the command line and acquires.
/// `destination` replaces the workspace as the projection root (a linked runtime).
pub(crate) fn acquire(
    projector: &Projector,
    args: &SessionArgs,
    destination: Option<&std::path::Path>,
    holder: Holder,
    log: &Verbose,
) -> anyhow::Result<AcquireReceipt> {
    let provider = projectfile::provider(&args.provider).with_context(|| {
        let names: Vec<&str> = projectfile::providers().iter().map(|p| p.name()).collect();
        format!(
            "{}: no such provider in this build (available: {})",
            args.provider,
            names.join(", ")
        )
    })?;
    let session = session_request(args)?;
    let root = destination.unwrap_or(&args.workspace);
    let mut request = AcquireRequest::new(root, session, holder);
    if let Some(version) = &args.cli_version {
        request.probes = Probes {
            cli_version: VersionProbe::Known {
                version: version.clone(),
                binary: None,
            },
        };
    }
    request.binary_path = args.cli_binary.clone();
    log.acquiring(provider.name(), &args.workspace, &request.holder);
    let receipt = projector.acquire(provider.as_ref(), &request)?;
    log.acquired(projector.state_dir(), &receipt);
    Ok(receipt)
}

fn read_text(path: &std::path::Path, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the {what}", path.display()))
}

fn read_json(path: &std::path::Path, what: &str) -> anyhow::Result<serde_json::Value> {
    let text = read_text(path, what)?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: the {what} is not valid JSON", path.display()))
}

fn session_request(args: &SessionArgs) -> anyhow::Result<SessionRequest> {
    let prompt = match (&args.prompt, &args.prompt_file) {
        (Some(text), _) => text.clone(),
        (None, Some(path)) if path.as_os_str() == "-" => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .context("-: cannot read the prompt from standard input")?;
            text
        }
        (None, Some(path)) => read_text(path, "prompt file")?,
        (None, None) => {
            anyhow::bail!("a prompt is required: pass --prompt TEXT or --prompt-file FILE")
        }
    };
    let mut session = SessionRequest::with_prompt(prompt);
    if let Some(path) = &args.mcp_config {
        session.mcp_servers = Some(read_json(path, "MCP configuration")?);
    }
    if let Some(path) = &args.cli_config {
        session.cli_config = Some(read_json(path, "CLI configuration")?);
    }
    if let Some(path) = &args.hooks_config {
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
        session.hooks = Some(projectfile::core::HooksInput {
            config: read_json(path, "hooks configuration")?,
            script,
        });
    } else if args.hook_script.is_some() {
        anyhow::bail!("--hook-script needs --hooks-config: a script nothing runs would be dropped");
    }
    for skill in &args.skills {
        let (name, dir) = skill
            .split_once('=')
            .with_context(|| format!("{skill}: a skill is NAME=DIR"))?;
        session.skills.push(projectfile::core::SkillInput {
            name: name.to_string(),
            source: absolute(std::path::Path::new(dir))?,
        });
    }
    Ok(session)
}

fn print_files(files: &[FileReceipt]) {
    for f in files {
        println!("  {:<9} {:<7} {}", f.action, f.kind, f.path);
    }
}

fn print_acquire(receipt: &AcquireReceipt) {
    println!("token {}", receipt.token);
    println!(
        "provider {} in {}",
        receipt.provider,
        receipt.workspace.display()
    );
    print_files(&receipt.files);
    if !receipt.launch_args.is_empty() {
        println!("launch args: {}", receipt.launch_args.join(" "));
    }
    for note in &receipt.notes {
        println!("note: {note}");
    }
    for s in &receipt.stale_cleaned {
        println!(
            "cleaned stale lease {} ({}): {}",
            s.token, s.provider, s.reason
        );
    }
    for k in &receipt.kept {
        println!("kept {} at {} ({})", k.path, k.kept_at.display(), k.reason);
    }
    for w in &receipt.warnings {
        eprintln!("warning: {}: {}", w.path, w.message);
    }
}
