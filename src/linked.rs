//! Linked private runtimes and the reader role on the command line: `run --runtime-root …`
//! projects into a private runtime whose `project/` links the workspace (and `output/` a step's
//! output folder, `attached/NAME` each attached folder), optionally with a private CLI home and
//! under the Landlock policy of the session mode; `reader …`, `remove-runtime` and `runtime …`
//! give hosts the mode rule, the notice, cleanup, identities and resume boundaries.

use anyhow::Context as _;
use projectfile::core::projector::AcquireReceipt;
use projectfile::core::reader::{self, Access, Mode, Notice, NoticeKind, Product, Route};
use projectfile::core::runtime::{
    self, AttachAccess, Attachment, CLI_HOME_DIR, Launch, LaunchLinks, Runtime, RuntimeIdentity,
    RuntimeKey, SessionId, TEMP_DIR,
};
use projectfile::core::sandbox::{PreparedSandbox, SandboxStatus};
use projectfile::receipts::{
    self, CanResumeReceipt, RemoveRuntimeReceipt, RuntimeIdentityReceipt, schema,
};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::cli::{
    CanResumeArgs, LinkedArgs, ReaderCommand, RemoveRuntimeArgs, RuntimeCommand,
    RuntimeIdentityArgs, RuntimeKeyArgs,
};
use crate::failure::CliError;
use crate::output;

/// A runtime opened, locked and linked for one launch.
#[derive(Debug)]
pub struct LinkedRuntime {
    launch: Launch,
    /// The CLI home variable and the private folder it names, with `--private-cli-home`.
    cli_home: Option<(&'static str, PathBuf)>,
}

impl LinkedRuntime {
    /// The runtime directory: the projection destination and the command's working directory.
    pub fn dir(&self) -> &Path {
        self.launch.dir()
    }

    /// The CLI's private home inside the runtime, with `--private-cli-home`.
    pub fn cli_home_dir(&self) -> Option<&Path> {
        self.cli_home.as_ref().map(|(_, dir)| dir.as_path())
    }
}

fn mode_of(name: &str) -> anyhow::Result<Mode> {
    Mode::from_name(name).with_context(|| format!("{name}: a mode is builder or run"))
}

/// A flag's value the command refuses before doing anything: bad usage (exit 2, kind `usage`),
/// with core's reason.
fn refused(flag: &str, error: projectfile::core::Error) -> CliError {
    CliError::usage(flag, error.to_string())
}

fn key(
    user: &str,
    project: &str,
    session: &str,
    provider: &str,
    mode: Mode,
) -> anyhow::Result<RuntimeKey> {
    let session = SessionId::parse(session).map_err(|e| refused("--session-id", e))?;
    Ok(RuntimeKey::new(user, project, session, provider, mode)
        .map_err(|e| refused("--user/--project-id", e))?)
}

fn key_of(args: &RuntimeKeyArgs) -> anyhow::Result<RuntimeKey> {
    key(
        &args.user,
        &args.project_id,
        &args.session_id,
        &args.provider,
        mode_of(&args.mode)?,
    )
}

/// The CLI home variable of `provider`, refused when it has none.
fn cli_home_var(provider: &str) -> anyhow::Result<&'static str> {
    let provider = projectfile::provider(provider)
        .with_context(|| format!("{provider}: no such provider in this build"))?;
    Ok(runtime::private_cli_home_env(provider.as_ref())?)
}

/// Everything this launch asks to link, checked before anything is made.
fn launch_links(args: &LinkedArgs, workspace: &Path) -> anyhow::Result<LaunchLinks> {
    let mut links = LaunchLinks::new(workspace);
    if let Some(output) = &args.output {
        links = links.with_output(output);
    }
    for (specs, access) in [
        (&args.attach, AttachAccess::FollowMode),
        (&args.attach_read_only, AttachAccess::ReadOnly),
    ] {
        let flag = match access {
            AttachAccess::ReadOnly => "--attach-read-only",
            _ => "--attach",
        };
        for spec in specs {
            let attachment = Attachment::parse(spec, access).map_err(|e| refused(flag, e))?;
            links = links.with_attached(attachment);
        }
    }
    // Names that clash are refused values too; a folder that cannot be found is not.
    links.resolve().map_err(|e| match e {
        projectfile::core::Error::Invalid { .. } => refused("--attach", e).into(),
        other => anyhow::Error::from(other),
    })?;
    Ok(links)
}

/// Opens the runtime for this launch: checks every flag, then opens the levels without following
/// a link, takes the launch lock, and leaves exactly this launch's links; `None` when `run` is not
/// linked. Anything we did not make where one of our links goes fails here, before anything is
/// projected.
pub fn open(
    args: &LinkedArgs,
    provider: &str,
    workspace: &Path,
) -> anyhow::Result<Option<LinkedRuntime>> {
    let Some(root) = &args.runtime_root else {
        return Ok(None);
    };
    let mode = mode_of(&args.mode)?;
    let (Some(user), Some(project), Some(session)) =
        (&args.user, &args.project_id, &args.session_id)
    else {
        anyhow::bail!("--runtime-root needs --user, --project-id and --session-id");
    };
    let key = key(user, project, session, provider, mode)?;
    let cli_home_var = match args.private_cli_home {
        true => Some(cli_home_var(provider)?),
        false => None,
    };
    let links = launch_links(args, workspace)?;
    let root = std::path::absolute(root)?;
    let wait = Duration::from_secs(args.runtime_wait);
    let launch = Runtime::launch(&root, key, &links, wait)?;
    let cli_home = match cli_home_var {
        Some(var) => Some((var, launch.private_dir(CLI_HOME_DIR)?)),
        None => None,
    };
    Ok(Some(LinkedRuntime { launch, cli_home }))
}

/// Builds the Landlock policy for the launch when `--sandbox` was given; `private` are the
/// session's private folders the CLI reads (its prompt file).
pub fn sandbox(
    args: &LinkedArgs,
    linked: &LinkedRuntime,
    private: &[std::path::PathBuf],
) -> anyhow::Result<Option<PreparedSandbox>> {
    if !args.sandbox {
        return Ok(None);
    }
    let mut policy = linked
        .launch
        .sandbox_policy()
        .min_abi(args.min_abi)
        .allow_unsandboxed(args.allow_unsandboxed);
    for path in args.sandbox_read.iter().chain(private) {
        policy = policy.with_read(path);
    }
    for path in &args.sandbox_write {
        policy = policy.with_read_write(path);
    }
    Ok(Some(policy.prepare()?))
}

/// After the acquire: sets the private CLI home in the receipt's `env`, fills `linked`, and
/// checks the runtime is still the one opened. Returns the runtime's temporary folder when the
/// command is sandboxed (`/tmp` is not granted). An error here means the command must not run.
pub fn finish(
    linked: &LinkedRuntime,
    receipt: &mut AcquireReceipt,
    keep_cwd: bool,
    sandbox: Option<&SandboxStatus>,
) -> anyhow::Result<Option<PathBuf>> {
    if let Some((var, dir)) = &linked.cli_home {
        if let Some(planned) = receipt.env.get(*var)
            && Path::new(planned) != dir
        {
            anyhow::bail!(
                "{var}: the plan already sets it to {planned}; cannot also give the CLI a \
                 private home"
            );
        }
        receipt
            .env
            .insert(var.to_string(), dir.to_string_lossy().into_owned());
    }
    let working_dir = match keep_cwd {
        true => std::env::current_dir().context("cannot read the current directory")?,
        false => receipt.workspace.clone(),
    };
    let identity = linked.launch.identity(
        &working_dir,
        linked.cli_home.as_ref().map(|(_, dir)| dir.as_path()),
    );
    receipt.linked = Some(linked.launch.receipt(identity, sandbox.cloned()));
    let tmp = match sandbox {
        Some(_) => Some(linked.launch.private_dir(TEMP_DIR)?),
        None => None,
    };
    linked.launch.check_unchanged()?;
    Ok(tmp)
}

/// Ends the launch: unlinks `output/` and the attachments and releases the runtime.
pub fn close(linked: LinkedRuntime) -> anyhow::Result<()> {
    for leftover in linked.launch.close()? {
        output::stderr(format_args!("warning: {leftover}"));
    }
    Ok(())
}

fn notice(kind: &str, product: &str) -> Notice {
    Notice {
        kind: if kind == "shared-channel" {
            NoticeKind::SharedChannel
        } else {
            NoticeKind::Reader
        },
        product: if product == "workflow" {
            Product::Workflow
        } else {
            Product::Crew
        },
    }
}

fn stdin_text() -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("-: cannot read standard input as UTF-8")?;
    Ok(text)
}

/// `projectfile reader …`.
pub fn reader_command(command: &ReaderCommand, json: bool) -> anyhow::Result<ExitCode> {
    match command {
        ReaderCommand::Mode {
            access,
            route,
            pinned_run,
            product,
        } => {
            let request = reader::TurnRequest {
                access: match access.as_str() {
                    "owner" => Access::Owner,
                    "editor" => Access::Editor,
                    _ => Access::Reader,
                },
                pinned_run: *pinned_run,
                route: match route.as_str() {
                    "read-only-channel" => Route::ReadOnlyChannel,
                    "guest-call" => Route::GuestCall,
                    _ => Route::Chat,
                },
                product: if product == "workflow" {
                    Product::Workflow
                } else {
                    Product::Crew
                },
            };
            let turn = reader::select_mode(request);
            let terminal = reader::terminal_allowed(request.access);
            if json {
                crate::print_json(&receipts::ReaderModeReceipt {
                    schema: schema::READER_MODE,
                    mode: turn.mode,
                    read_only: turn.read_only,
                    notice: turn.notice,
                    terminal_allowed: terminal,
                })?;
            } else {
                let line = format!(
                    "{} ({}), terminal {}\n",
                    turn.mode.as_str(),
                    if turn.read_only {
                        "read-only"
                    } else {
                        "read-write"
                    },
                    if terminal { "allowed" } else { "refused" }
                );
                output::stdout(line, "the mode")?;
            }
        }
        // wrap and strip are filters: without --json they print the text byte for byte, with no
        // newline added, so `strip` gives back exactly what `wrap` was given.
        ReaderCommand::Wrap { kind, product } => {
            let notice = notice(kind, product);
            let text = reader::wrap_message(notice, &stdin_text()?);
            if json {
                crate::print_json(&receipts::ReaderWrapReceipt {
                    schema: schema::READER_WRAP,
                    notice,
                    text,
                })?;
            } else {
                output::stdout(text, "the message")?;
            }
        }
        ReaderCommand::Strip => {
            let input = stdin_text()?;
            let text = reader::strip_notice(&input);
            if json {
                crate::print_json(&receipts::ReaderStripReceipt {
                    schema: schema::READER_STRIP,
                    stripped: reader::has_notice(&input),
                    text,
                })?;
            } else {
                output::stdout(text, "the message")?;
            }
        }
        ReaderCommand::Hint { kind, product } => {
            let notice = notice(kind, product);
            let hint = reader::refusal_hint(notice);
            if json {
                crate::print_json(&receipts::ReaderHintReceipt {
                    schema: schema::READER_HINT,
                    notice,
                    hint: hint.to_string(),
                })?;
            } else {
                output::stdout(format!("{hint}\n"), "the hint")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `projectfile remove-runtime`.
pub fn remove_runtime(args: &RemoveRuntimeArgs, json: bool) -> anyhow::Result<ExitCode> {
    let root = std::path::absolute(&args.key.runtime_root)?;
    let runtime = Runtime::locate(&root, key_of(&args.key)?)?;
    let removed = runtime.remove_waiting(Duration::from_secs(args.runtime_wait))?;
    if json {
        crate::print_json(&RemoveRuntimeReceipt {
            schema: schema::REMOVE_RUNTIME,
            runtime: runtime.dir().to_path_buf(),
            removed,
        })?;
    } else {
        let said = if removed { "removed" } else { "no runtime at" };
        output::stdout(
            format!("{said} {}\n", runtime.dir().display()),
            "the receipt",
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `projectfile runtime …`.
pub fn runtime_command(command: &RuntimeCommand, json: bool) -> anyhow::Result<ExitCode> {
    match command {
        RuntimeCommand::Identity(args) => identity(args, json),
        RuntimeCommand::CanResume(args) => can_resume(args, json),
    }
}

/// The identity a launch with these flags records; touches nothing. The runtime path is the one
/// a launch reports: the root's parent folders resolved once, when they exist.
fn identity(args: &RuntimeIdentityArgs, json: bool) -> anyhow::Result<ExitCode> {
    let key = key_of(&args.key)?;
    let cli_home_var = match args.private_cli_home {
        true => Some(cli_home_var(key.provider())?),
        false => None,
    };
    let root = resolved_root(&std::path::absolute(&args.key.runtime_root)?);
    let runtime = Runtime::locate(&root, key.clone())?;
    let dir = runtime.dir().to_path_buf();
    let identity = RuntimeIdentity {
        user: key.user().to_string(),
        project: key.project().to_string(),
        session: key.session().clone(),
        provider: key.provider().to_string(),
        mode: key.mode(),
        runtime: Some(dir.clone()),
        working_dir: match &args.working_dir {
            Some(dir) => std::path::absolute(dir)?,
            None => dir.clone(),
        },
        cli_home: cli_home_var.map(|_| dir.join(CLI_HOME_DIR)),
    };
    if json {
        crate::print_json(&RuntimeIdentityReceipt {
            schema: schema::RUNTIME_IDENTITY,
            identity,
        })?;
    } else {
        let text = format!("{}\n", serde_json::to_string_pretty(&identity)?);
        output::stdout(text, "the identity")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `root` with its parent folders resolved (as a launch resolves them), when they exist.
fn resolved_root(root: &Path) -> PathBuf {
    // Read-only: names the runtime root as a launch would; nothing below it is walked from this.
    #[allow(clippy::disallowed_methods)]
    match (root.parent(), root.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|parent| parent.join(name))
            .unwrap_or_else(|_| root.to_path_buf()),
        _ => root.to_path_buf(),
    }
}

fn can_resume(args: &CanResumeArgs, json: bool) -> anyhow::Result<ExitCode> {
    let from = identity_arg("--from", &args.from)?;
    let to = identity_arg("--to", &args.to)?;
    let verdict = runtime::can_resume(&from, &to);
    if json {
        crate::print_json(&CanResumeReceipt {
            schema: schema::CAN_RESUME,
            resume: verdict.resume,
            from,
            to,
            checks: verdict.checks,
        })?;
    } else {
        let mut text = output::Text::default();
        text.line(format_args!(
            "resume: {}",
            if verdict.resume {
                "yes"
            } else {
                "no (start a fresh native session from the saved history)"
            }
        ));
        for check in &verdict.checks {
            let rule = serde_json::to_value(check.rule)?;
            let mark = if check.passed { "ok" } else { "NO" };
            text.line(format_args!(
                "  {mark:<2} {}: {}",
                rule.as_str().unwrap_or("?"),
                check.detail
            ));
        }
        text.print("the verdict")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads one identity argument: inline JSON, `@FILE` or `@-` (read up to the input limit); the
/// identity itself, a `runtime identity --json` receipt, or a whole `run --json` receipt
/// (`linked.identity`). Inline text that is not an identity is bad usage (exit 2); a file's, an
/// invalid input (exit 1).
fn identity_arg(flag: &str, text: &str) -> anyhow::Result<RuntimeIdentity> {
    let (source, file) = match text.strip_prefix('@') {
        Some("-") => (
            crate::text_or_error(
                crate::read_bounded(std::io::stdin()),
                Path::new("-"),
                "identity",
            )?,
            Some(Path::new("-")),
        ),
        Some(path) => (
            crate::read_text(Path::new(path), "identity")?,
            Some(Path::new(path)),
        ),
        None => (text.to_string(), None),
    };
    let refuse = |reason: String| match file {
        Some(path) => CliError::invalid(path, format!("{flag}: {reason}")),
        None => CliError::usage(flag, reason),
    };
    let mut value: serde_json::Value = serde_json::from_str(&source)
        .map_err(|e| refuse(format!("the identity is not valid JSON: {e}")))?;
    if let Some(inner) = value.pointer("/linked/identity") {
        value = inner.clone();
    }
    if let Some(object) = value.as_object_mut()
        && object.get("schema").and_then(|s| s.as_str()) == Some(schema::RUNTIME_IDENTITY)
    {
        object.remove("schema");
    }
    Ok(serde_json::from_value(value).map_err(|e| {
        refuse(format!(
            "not a runtime identity (user, project, session, provider, mode, runtime, \
             working_dir, cli_home): {e}"
        ))
    })?)
}
