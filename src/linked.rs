//! Linked private runtimes and the reader role on the command line: `run --runtime-root …`
//! projects into a private runtime whose `project/` links the workspace (and `output/` a step's
//! output folder), optionally under the Landlock policy of the session mode; `reader …` and
//! `remove-runtime` give hosts the mode rule, the notice and cleanup.

use anyhow::Context as _;
use projectfile::core::fsio::links::LinkRecord;
use projectfile::core::reader::{self, Access, Mode, Notice, NoticeKind, Product, Route};
use projectfile::core::runtime::{Runtime, RuntimeKey, SessionId};
use projectfile::core::sandbox::{PreparedSandbox, SandboxPolicy};
use serde::Serialize;
use std::io::Read as _;
use std::path::Path;
use std::process::ExitCode;

use crate::cli::{LinkedArgs, ReaderCommand, RemoveRuntimeArgs};
use crate::output;

/// A runtime opened and linked for one launch.
#[derive(Debug, Serialize)]
pub struct LinkedRuntime {
    /// The runtime directory: the projection destination and the command's working directory.
    pub dir: std::path::PathBuf,
    /// The verified `project/` link.
    pub project: LinkRecord,
    /// The verified `output/` link, if any.
    pub output: Option<LinkRecord>,
    /// The session mode.
    pub mode: Mode,
}

fn mode_of(name: &str) -> anyhow::Result<Mode> {
    Mode::from_name(name).with_context(|| format!("{name}: a mode is builder or run"))
}

fn key(
    user: &str,
    project: &str,
    session: &str,
    provider: &str,
    mode: Mode,
) -> anyhow::Result<RuntimeKey> {
    let session = SessionId::parse(session)?;
    Ok(RuntimeKey::new(user, project, session, provider, mode)?)
}

/// Opens the runtime and creates or verifies its links; `None` when `run` is not linked. A link
/// replaced by another link, a file or a directory fails here, before anything is projected.
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
    let root = std::path::absolute(root)?;
    let runtime = Runtime::open(&root, key(user, project, session, provider, mode)?)?;
    let project = runtime.link_project(workspace)?;
    let output = match &args.output {
        Some(dir) => Some(runtime.link_output(dir)?),
        None => None,
    };
    Ok(Some(LinkedRuntime {
        dir: runtime.dir().to_path_buf(),
        project,
        output,
        mode,
    }))
}

/// Removes the `output/` link after the launch, so the next invocation links its own folder.
pub fn close(linked: &LinkedRuntime) -> anyhow::Result<()> {
    if let Some(output) = &linked.output {
        projectfile::core::fsio::links::remove_link(&linked.dir, "output", &output.target)?;
    }
    Ok(())
}

/// Builds the Landlock policy for the launch when `--sandbox` was given.
pub fn sandbox(
    args: &LinkedArgs,
    linked: &LinkedRuntime,
) -> anyhow::Result<Option<PreparedSandbox>> {
    if !args.sandbox {
        return Ok(None);
    }
    let mut policy = SandboxPolicy::new(linked.mode, &linked.dir, &linked.project.target)
        .min_abi(args.min_abi)
        .allow_unsandboxed(args.allow_unsandboxed);
    if let Some(output) = &linked.output {
        policy = policy.with_read_write(&output.target);
    }
    Ok(Some(policy.prepare()?))
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
                output::json(
                    &serde_json::json!({
                        "schema": "projectfile.reader_mode.v1",
                        "mode": turn.mode,
                        "read_only": turn.read_only,
                        "notice": turn.notice,
                        "terminal_allowed": terminal,
                    }),
                    "the receipt",
                )?;
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
        ReaderCommand::Wrap { kind, product } => {
            let text = reader::wrap_message(notice(kind, product), &stdin_text()?);
            output::stdout(text, "the message")?;
        }
        ReaderCommand::Strip => {
            output::stdout(reader::strip_notice(&stdin_text()?), "the message")?;
        }
        ReaderCommand::Hint { kind, product } => {
            let hint = format!("{}\n", reader::refusal_hint(notice(kind, product)));
            output::stdout(hint, "the hint")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `projectfile remove-runtime`.
pub fn remove_runtime(args: &RemoveRuntimeArgs, json: bool) -> anyhow::Result<ExitCode> {
    let mode = mode_of(&args.mode)?;
    let root = std::path::absolute(&args.runtime_root)?;
    let runtime = Runtime::locate(
        &root,
        key(
            &args.user,
            &args.project_id,
            &args.session_id,
            &args.provider,
            mode,
        )?,
    )?;
    let existed = runtime.remove()?;
    if json {
        output::json(
            &serde_json::json!({
                "schema": "projectfile.remove_runtime.v1",
                "runtime": runtime.dir(),
                "removed": existed,
            }),
            "the receipt",
        )?;
    } else {
        let said = if existed { "removed" } else { "no runtime at" };
        output::stdout(
            format!("{said} {}\n", runtime.dir().display()),
            "the receipt",
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
