//! Resume boundaries: whether a native CLI session (Claude's `--resume`, Codex's `resume`, Pi's
//! `--session`, …) recorded under one [`RuntimeIdentity`] may be resumed under another.
//!
//! A native session belongs to the directory it ran in and the CLI home it was stored in. Resuming
//! it elsewhere would let the old session's working directory override the new one (Codex in
//! particular records a project-directory override, `--cd`, with the session), or would not find
//! it at all. So [`can_resume`] allows it only when every rule holds:
//!
//! | rule | holds when |
//! |---|---|
//! | [`ResumeRule::SameConversation`] | same user, project and (canonical) session id |
//! | [`ResumeRule::SameProvider`] | same CLI |
//! | [`ResumeRule::SameMode`] | same mode: a Builder session never resumes in Run, nor the reverse |
//! | [`ResumeRule::PrivateRuntime`] | both ran in a private runtime, or both in a shared folder: an old shared-folder session cannot override a private runtime's working directory |
//! | [`ResumeRule::SameRuntime`] | the same runtime directory |
//! | [`ResumeRule::SameWorkingDirectory`] | the same working directory (for Codex: its `--cd` project-directory override, when the host passed one) |
//! | [`ResumeRule::SameCliHome`] | the same CLI home (a private `.cli-home` holds the native session; another home does not) |
//!
//! Otherwise the host starts a fresh native session and gives it the saved application history.
//! Paths compare exactly as written: pass the canonical paths the `run` receipt reports. Anything
//! else about a launch (the prompt, skills, profile definitions, the day) does not matter, so
//! same-mode private sessions keep native resume across restarts.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Mode, SessionId};

/// Where one launch's native CLI session lives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RuntimeIdentity {
    /// The user.
    pub user: String,
    /// The project (Crew, Code project or workflow) id.
    pub project: String,
    /// The session id, canonical (a UUID lower-cased).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub session: SessionId,
    /// The provider (CLI) name.
    pub provider: String,
    /// The session mode.
    pub mode: Mode,
    /// The private runtime directory; `null` for a session that ran in a shared folder (the
    /// project's own directory).
    pub runtime: Option<PathBuf>,
    /// The directory the CLI ran in: the runtime, the shared folder, or Codex's `--cd`
    /// project-directory override when the host passed one.
    pub working_dir: PathBuf,
    /// The CLI's home when it was private to the runtime (`run --private-cli-home`), else `null`.
    #[serde(default)]
    pub cli_home: Option<PathBuf>,
}

/// One rule of [`can_resume`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ResumeRule {
    /// Same user, project and session.
    SameConversation,
    /// Same CLI.
    SameProvider,
    /// Same mode.
    SameMode,
    /// Both in a private runtime, or both in a shared folder.
    PrivateRuntime,
    /// Same runtime directory.
    SameRuntime,
    /// Same working directory (Codex's project-directory override included).
    SameWorkingDirectory,
    /// Same CLI home.
    SameCliHome,
}

/// One rule checked, with a sentence saying why it holds or not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResumeCheck {
    /// The rule.
    pub rule: ResumeRule,
    /// Whether it holds.
    pub passed: bool,
    /// Why (for people; do not parse).
    pub detail: String,
}

/// The answer of [`can_resume`]: `resume` is true only when every check passed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResumeVerdict {
    /// Whether the native session may be resumed; false: start fresh from the saved history.
    pub resume: bool,
    /// Every rule, in the order of the table in the docs.
    pub checks: Vec<ResumeCheck>,
}

fn show(path: &Option<PathBuf>) -> String {
    match path {
        Some(path) => path.display().to_string(),
        None => "none".to_string(),
    }
}

fn check(rule: ResumeRule, passed: bool, yes: String, no: String) -> ResumeCheck {
    ResumeCheck {
        rule,
        passed,
        detail: if passed { yes } else { no },
    }
}

/// Whether a native session recorded under `from` may resume under `to` (see the module docs).
/// Pure: compares the two identities, touches nothing.
pub fn can_resume(from: &RuntimeIdentity, to: &RuntimeIdentity) -> ResumeVerdict {
    let same_conversation =
        from.user == to.user && from.project == to.project && from.session == to.session;
    let checks = vec![
        check(
            ResumeRule::SameConversation,
            same_conversation,
            "same user, project and session".to_string(),
            format!(
                "a different conversation ({}/{}/{} vs {}/{}/{})",
                from.user, from.project, from.session, to.user, to.project, to.session
            ),
        ),
        check(
            ResumeRule::SameProvider,
            from.provider == to.provider,
            format!("same CLI ({})", to.provider),
            format!(
                "a {} session cannot be resumed by {}",
                from.provider, to.provider
            ),
        ),
        check(
            ResumeRule::SameMode,
            from.mode == to.mode,
            format!("same mode ({})", to.mode),
            format!(
                "a {} session cannot override the working directory of a {} launch",
                from.mode, to.mode
            ),
        ),
        check(
            ResumeRule::PrivateRuntime,
            from.runtime.is_some() == to.runtime.is_some(),
            "both in the same kind of place (private runtime or shared folder)".to_string(),
            match from.runtime {
                None => "the session ran in a shared folder; it cannot override the private \
                         runtime's working directory"
                    .to_string(),
                Some(_) => "the session ran in a private runtime; it cannot move into a shared \
                            folder"
                    .to_string(),
            },
        ),
        check(
            ResumeRule::SameRuntime,
            from.runtime == to.runtime,
            format!("same runtime ({})", show(&to.runtime)),
            format!(
                "the session lives in runtime {}, the launch uses {}",
                show(&from.runtime),
                show(&to.runtime)
            ),
        ),
        check(
            ResumeRule::SameWorkingDirectory,
            from.working_dir == to.working_dir,
            format!("same working directory ({})", to.working_dir.display()),
            format!(
                "the session ran in {} (for Codex, its project-directory override); resuming \
                 it would override the new working directory {}",
                from.working_dir.display(),
                to.working_dir.display()
            ),
        ),
        check(
            ResumeRule::SameCliHome,
            from.cli_home == to.cli_home,
            format!("same CLI home ({})", show(&to.cli_home)),
            format!(
                "the session is stored in CLI home {}, the launch uses {}",
                show(&from.cli_home),
                show(&to.cli_home)
            ),
        ),
    ];
    ResumeVerdict {
        resume: checks.iter().all(|c| c.passed),
        checks,
    }
}
