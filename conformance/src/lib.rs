//! The shared conformance suite: check functions that take a provider (a [`Subject`]) and run on
//! the real file system, each proving one promise of docs/promises.md for that provider. Checks
//! that do not apply to a provider's [`Capabilities`] or plan (a block check for a provider whose
//! carrier is a launch argument or nothing at all, a marker check for a provider without markers)
//! return early and say so on stderr; where they apply, they assert.
//!
//! Checks that exercise owned files use [`Subject::full_session`]: the prompt plus every input the
//! capabilities accept (MCP servers, hooks with a script, CLI configuration), so every owned file a
//! provider can write is covered. [`fixtures`] holds the standard fixture workspaces and the
//! snapshot helper providers use with insta.
//!
//! A provider runs the whole suite from its own tests with one line:
//!
//! ```text
//! projectfile_conformance::conformance_tests!(projectfile_codex::Codex);
//! ```
//!
//! which generates one `#[test]` per check, so a failure names the promise it broke. Differences
//! between providers (a probed CLI version, say) are passed in the [`Subject`], not hidden: the
//! macro's optional second argument is the [`Probes`] to plan with (Claude runs the suite once as
//! a binary that reads AGENTS.md and once as one that does not).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The suite plays the user: it writes fixture files directly, outside the projector.
#![allow(clippy::disallowed_methods)]

pub mod crash;
pub mod delivery;
pub mod facts;
pub mod fixtures;
pub mod runtime;
pub mod session_inputs;
pub mod skills;
pub mod tree;

use projectfile_core::holder::Holder;
use projectfile_core::projector::{AcquireReceipt, AcquireRequest, Projector};
use projectfile_core::{
    Capabilities, Error, HookScript, HooksInput, LaunchArg, Namespace, OwnedRole, Plan,
    PlanContext, Probes, Provider, SessionRequest, SessionTextCarrier, SkillInput, fsio::Root,
};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

pub use delivery::{delivery_verdict_agrees_with_resolve, provider_options_are_checked};
pub use runtime::cli_home_is_declared_or_refused;
pub use session_inputs::*;
pub use skills::*;
pub use tree::Tree;

/// The provider under test and the parameters that make its plan what the check needs.
pub struct Subject {
    /// The provider.
    pub provider: Box<dyn Provider>,
    /// Probes to hand in (e.g. a CLI version), so no real binary is needed.
    pub probes: Probes,
    /// The CLI binary core probes when `probes` leave the version `NotProbed`.
    pub binary_path: Option<PathBuf>,
}

impl Subject {
    /// A subject with default probes.
    pub fn new(provider: impl Provider + 'static) -> Subject {
        Subject {
            provider: Box::new(provider),
            probes: Probes::default(),
            binary_path: None,
        }
    }

    /// The same subject with the given probes.
    pub fn with_probes(mut self, probes: Probes) -> Subject {
        self.probes = probes;
        self
    }

    /// The same subject probing this binary (core runs it with the provider's version arguments).
    pub fn with_binary(mut self, path: impl Into<PathBuf>) -> Subject {
        self.binary_path = Some(path.into());
        self
    }

    /// The provider's name.
    pub fn name(&self) -> &'static str {
        self.provider.name()
    }

    /// A request carrying the prompt and every other input the provider's capabilities accept
    /// (MCP servers, hooks with a script, CLI configuration; skills have checks of their own), so checks
    /// exercise every projection the provider can make.
    pub fn full_session(&self, prompt: &str) -> SessionRequest {
        full_session(&self.provider.capabilities(), prompt)
    }
}

/// The hook script name [`full_session`] brings.
pub const HOOK_SCRIPT_NAME: &str = "guard.sh";

/// A request with `prompt` and every input `caps` accepts except skills (MCP servers, hooks with
/// a script, CLI configuration, a subagent, a command).
pub fn full_session(caps: &Capabilities, prompt: &str) -> SessionRequest {
    let mut session = SessionRequest::with_prompt(prompt);
    if caps.mcp {
        session.mcp_servers = Some(serde_json::json!({
            "docs": {"command": "docs-server", "args": ["--stdio"], "env": {"LEVEL": "1"}},
            "remote": {"url": "https://mcp.example.invalid/sse"}
        }));
    }
    if caps.hooks {
        session.hooks = Some(HooksInput {
            config: serde_json::json!({
                "version": 1,
                "hooks": {"beforeShellExecution": [{"command": "guard.sh"}]}
            }),
            script: Some(HookScript {
                name: HOOK_SCRIPT_NAME.to_string(),
                content: "#!/bin/sh\necho '{\"permission\": \"allow\"}'\n".to_string(),
            }),
        });
    }
    if caps.cli_config {
        session.cli_config = Some(serde_json::json!({
            "version": 1,
            "permissions": {"allow": ["Shell(ls)"], "deny": []}
        }));
    }
    session_inputs::add_named_files(caps, &mut session);
    session
}

/// A temporary workspace and state directory.
pub struct Fixture {
    _dir: tempfile::TempDir,
    /// The temporary directory holding `workspace`, `state` and `outside`.
    pub base: PathBuf,
    /// The workspace.
    pub workspace: PathBuf,
    /// The state directory.
    pub state: PathBuf,
    /// Somewhere outside the workspace.
    pub outside: PathBuf,
    /// Where skill sources are made (outside the workspace, apart from `outside`).
    pub sources: PathBuf,
    /// A projector on `state`.
    pub projector: Projector,
}

impl Fixture {
    /// A fresh, empty workspace.
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical tempdir");
        let workspace = base.join("workspace");
        let state = base.join("state");
        let outside = base.join("outside");
        let sources = base.join("sources");
        for d in [&workspace, &state, &outside, &sources] {
            std::fs::create_dir(d).expect("mkdir");
        }
        Fixture {
            _dir: dir,
            base,
            projector: Projector::new(&state, Namespace::default()),
            workspace,
            state,
            outside,
            sources,
        }
    }

    /// Writes a user file (creating parents).
    pub fn write(&self, rel: &str, bytes: &[u8]) {
        let path = self.workspace.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir -p");
        }
        std::fs::write(path, bytes).expect("write fixture");
    }

    /// Writes a user file with these permission bits.
    pub fn write_mode(&self, rel: &str, bytes: &[u8], mode: u32) {
        self.write(rel, bytes);
        std::fs::set_permissions(
            self.workspace.join(rel),
            std::fs::Permissions::from_mode(mode),
        )
        .expect("chmod fixture");
    }

    /// The permission bits of a workspace path, `None` when absent.
    pub fn mode(&self, rel: &str) -> Option<u32> {
        std::fs::symlink_metadata(self.workspace.join(rel))
            .ok()
            .map(|m| m.permissions().mode() & 0o7777)
    }

    /// Reads a workspace file, `None` when absent.
    pub fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.workspace.join(rel)).ok()
    }

    /// Acquires for `subject` with `prompt`, held by `holder`.
    pub fn acquire_as(
        &self,
        subject: &Subject,
        prompt: &str,
        holder: Holder,
    ) -> Result<AcquireReceipt, Error> {
        self.acquire_session_as(subject, SessionRequest::with_prompt(prompt), holder)
    }

    /// Acquires for `subject` with a whole session request, held by `holder`.
    pub fn acquire_session_as(
        &self,
        subject: &Subject,
        session: SessionRequest,
        holder: Holder,
    ) -> Result<AcquireReceipt, Error> {
        let mut request = AcquireRequest::new(&self.workspace, session, holder);
        request.probes = subject.probes.clone();
        request.binary_path = subject.binary_path.clone();
        self.projector.acquire(subject.provider.as_ref(), &request)
    }

    /// What acquiring a whole session request would do ([`Projector::dry_run`]), held by this
    /// test process; nothing is written.
    pub fn dry_run_session(
        &self,
        subject: &Subject,
        session: SessionRequest,
    ) -> Result<AcquireReceipt, Error> {
        let holder = Holder::current_process().expect("holder");
        let mut request = AcquireRequest::new(&self.workspace, session, holder);
        request.probes = subject.probes.clone();
        request.binary_path = subject.binary_path.clone();
        self.projector.dry_run(subject.provider.as_ref(), &request)
    }

    /// Acquires a whole session request held by this test process.
    pub fn acquire_session(
        &self,
        subject: &Subject,
        session: SessionRequest,
    ) -> Result<AcquireReceipt, Error> {
        self.acquire_session_as(subject, session, Holder::current_process().expect("holder"))
    }

    /// Acquires held by this test process.
    pub fn acquire(&self, subject: &Subject, prompt: &str) -> Result<AcquireReceipt, Error> {
        self.acquire_as(subject, prompt, Holder::current_process().expect("holder"))
    }

    /// Releases, asserting success, and returns whether a lease was released.
    pub fn release(&self, token: &str) -> bool {
        self.projector.release(token).expect("release").released
    }

    /// The plan the provider would make for this workspace now (no I/O beyond reading).
    pub fn plan(&self, subject: &Subject, prompt: &str) -> Plan {
        self.plan_session(subject, &SessionRequest::with_prompt(prompt))
    }

    /// The plan for a whole session request, with the subject's probes as given (no probing).
    pub fn plan_session(&self, subject: &Subject, request: &SessionRequest) -> Plan {
        let root = Root::open(&self.workspace).expect("open workspace");
        subject
            .provider
            .plan(&PlanContext {
                root: &self.workspace,
                namespace: &Namespace::default(),
                request,
                probes: &subject.probes,
                view: &root,
            })
            .expect("plan")
    }

    /// Asserts the state directory holds no ledger (nothing recorded for any workspace).
    pub fn assert_no_ledger(&self) {
        let leftovers = state_leftovers(&self.state);
        assert!(leftovers.is_empty(), "state leftovers: {leftovers:?}");
    }
}

impl Default for Fixture {
    fn default() -> Self {
        Fixture::new()
    }
}

/// Files under a state directory that record something: everything but the workspace locks,
/// ledger journals whose newest record is an empty ledger, and the `paths/` notes of which folder
/// each path named (all kept once a workspace has been used).
pub fn state_leftovers(state: &Path) -> Vec<PathBuf> {
    use projectfile_core::journal::{JOURNAL_FILE, records_nothing};
    walk_files(state)
        .into_iter()
        .filter(|p| match p.file_name().and_then(|n| n.to_str()) {
            // Which folder each path named: kept, like the lock file.
            _ if p.parent().and_then(Path::file_name) == Some(std::ffi::OsStr::new("paths")) => {
                false
            }
            Some("lock") => false,
            Some(JOURNAL_FILE) => !std::fs::read(p).is_ok_and(|b| records_nothing(&b)),
            _ => true,
        })
        .collect()
}

/// Every entry under `dir` that is not a directory (files, symlinks, …), never following a link.
fn walk_files(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| !entry.file_type().is_dir())
        .map(walkdir::DirEntry::into_path)
        .collect()
}

/// A child process that lives until killed, to hold leases.
pub struct HolderProcess {
    child: Child,
}

impl HolderProcess {
    /// Spawns `sleep`.
    pub fn spawn() -> HolderProcess {
        let child = Command::new("sleep")
            .arg("3600")
            .spawn()
            .expect("spawn sleep");
        HolderProcess { child }
    }

    /// Its holder identity.
    pub fn holder(&self) -> Holder {
        Holder::process(self.child.id()).expect("holder")
    }

    /// SIGKILLs it and reaps it.
    pub fn kill9(mut self) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).expect("pid");
        rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("kill -9");
        self.child.wait().expect("reap");
    }
}

impl Drop for HolderProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the session text must be visible while a session holds, for a receipt.
pub fn assert_session_text_visible(fixture: &Fixture, receipt: &AcquireReceipt, prompt: &str) {
    match &receipt.session_text {
        Some(SessionTextCarrier::Block { path }) | Some(SessionTextCarrier::OwnedFile { path }) => {
            let bytes = fixture
                .read(path.as_str())
                .unwrap_or_else(|| panic!("{path} is missing while the session holds"));
            assert!(
                String::from_utf8_lossy(&bytes).contains(prompt),
                "{path} does not carry the session text"
            );
        }
        Some(SessionTextCarrier::LaunchArgument { .. }) => {
            let found = receipt
                .launch_args
                .iter()
                .any(|arg| std::fs::read_to_string(arg).is_ok_and(|text| text.contains(prompt)));
            assert!(
                found,
                "no launch argument names a file carrying the session text"
            );
        }
        Some(SessionTextCarrier::NotProjected { reason }) => {
            assert!(
                !reason.is_empty(),
                "a provider that does not project says why"
            );
        }
        None => panic!("the receipt does not say where the session text went"),
    }
}

/// The bytes core writes for an owned file: the planned content, stamped with our provenance
/// marker where the format carries one (see `projectfile_core::generated`).
pub fn as_written(owned: &projectfile_core::OwnedFileProjection) -> Vec<u8> {
    projectfile_core::generated::stamp(
        &owned.content,
        &owned.path,
        owned.role,
        &Namespace::default(),
    )
    .into_bytes()
}

/// The files a plan edits in place (blocks), which is where user bytes meet ours.
fn block_targets(plan: &Plan) -> Vec<String> {
    plan.blocks.iter().map(|b| b.path.to_string()).collect()
}

/// Says on stderr that a check does not apply to this subject, and why. Checks call it instead of
/// passing without asserting anything.
pub fn skip(subject: &Subject, check: &str, why: &str) {
    eprintln!("{}: {check} skipped: {why}", subject.name());
}

/// User files that must survive byte for byte.
pub const TRICKY_CONTENTS: &[(&str, &[u8])] = &[
    ("lf", b"# Rules\n\nUse tabs.\n"),
    ("crlf", b"# Rules\r\n\r\nUse tabs.\r\n"),
    ("no final newline", b"# Rules\nUse tabs."),
    ("utf-8 bom", b"\xEF\xBB\xBF# Rules\nUse tabs.\n"),
    ("invalid utf-8", b"# R\xFFules\n\xC3\x28 broken\n"),
    ("nul bytes", b"a\0b\nc\0\n"),
    ("empty", b""),
    ("trailing blank lines", b"text\n\n\n"),
    ("lone cr", b"old mac\rstyle\r"),
];

/// Promise 1: bytes outside our block never change; acquire then release gives the file back.
pub fn user_bytes_round_trip(subject: &Subject) {
    let probe = Fixture::new();
    let targets = block_targets(&probe.plan(subject, "x"));
    if targets.is_empty() {
        skip(subject, "user_bytes_round_trip", "the plan has no blocks");
    }
    for target in targets {
        for (label, bytes) in TRICKY_CONTENTS {
            let fx = Fixture::new();
            fx.write(&target, bytes);
            let before = Tree::capture(&fx.workspace);
            let receipt = fx.acquire(subject, "Session text: be brief.").unwrap();
            assert_session_text_visible(&fx, &receipt, "Session text: be brief.");
            assert!(fx.release(&receipt.token));
            assert_eq!(
                Tree::capture(&fx.workspace),
                before,
                "{target} ({label}) changed"
            );
            fx.assert_no_ledger();
        }
    }
}

/// Promise 3 and 11: in an empty workspace, everything we create is gone after the last release.
pub fn nothing_left_in_empty_workspace(subject: &Subject) {
    let fx = Fixture::new();
    let before = Tree::capture(&fx.workspace);
    let receipt = fx.acquire(subject, "hello").unwrap();
    assert_session_text_visible(&fx, &receipt, "hello");
    assert!(fx.release(&receipt.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

/// Promise 2: edits the user makes outside the block while a session runs are kept. (Owned
/// files: [`owned_file_user_edit_is_set_aside`].)
pub fn user_edits_are_kept(subject: &Subject) {
    let probe = Fixture::new();
    let targets = block_targets(&probe.plan(subject, "x"));
    if targets.is_empty() {
        skip(subject, "user_edits_are_kept", "the plan has no blocks");
    }
    for target in targets {
        let fx = Fixture::new();
        fx.write(&target, b"original\n");
        let receipt = fx.acquire(subject, "session").unwrap();
        let mut edited = b"prepended by the user\n".to_vec();
        edited.extend(fx.read(&target).unwrap());
        edited.extend(b"appended by the user\n");
        fx.write(&target, &edited);
        assert!(fx.release(&receipt.token));
        assert_eq!(
            fx.read(&target).unwrap(),
            b"prepended by the user\noriginal\nappended by the user\n".to_vec(),
            "{target}: the user's edits must survive the release"
        );
    }
}

/// Promise 3: the projection stays while any lease holds it, whichever order they end in.
pub fn overlapping_sessions_release_in_either_order(subject: &Subject) {
    for first_released_is_a in [true, false] {
        let fx = Fixture::new();
        fx.write("README.md", b"project\n");
        let before = Tree::capture(&fx.workspace);
        let a = fx.acquire(subject, "session A").unwrap();
        let b = fx.acquire(subject, "session B").unwrap();
        assert_session_text_visible(&fx, &b, "session B");
        let (first, second) = if first_released_is_a {
            (&a, &b)
        } else {
            (&b, &a)
        };
        assert!(fx.release(&first.token));
        // Still held by the other session: its projection is still there.
        let still = fx.acquire(subject, "session C").unwrap();
        assert_session_text_visible(&fx, &still, "session C");
        assert!(fx.release(&still.token));
        if let Some(SessionTextCarrier::Block { path } | SessionTextCarrier::OwnedFile { path }) =
            &second.session_text
        {
            assert!(
                fx.read(path.as_str()).is_some(),
                "{path} vanished while a lease holds it"
            );
        }
        assert!(fx.release(&second.token));
        assert_eq!(Tree::capture(&fx.workspace), before);
        fx.assert_no_ledger();
    }
}

/// Promise 4: release is idempotent; unknown tokens are not an error.
pub fn release_is_idempotent(subject: &Subject) {
    let fx = Fixture::new();
    let receipt = fx.acquire(subject, "x").unwrap();
    assert!(fx.release(&receipt.token));
    assert!(!fx.release(&receipt.token));
    assert!(!fx.release("pf1-0000000000000000-00000000000000000000000000000000"));
    assert!(!fx.release("not a token"));
}

/// Promise 5: each start refreshes the projection, so a changed prompt is picked up.
pub fn start_refreshes_the_text(subject: &Subject) {
    let fx = Fixture::new();
    let a = fx.acquire(subject, "first prompt").unwrap();
    let b = fx.acquire(subject, "second prompt").unwrap();
    assert_session_text_visible(&fx, &b, "second prompt");
    if let Some(SessionTextCarrier::Block { path } | SessionTextCarrier::OwnedFile { path }) =
        &b.session_text
    {
        let text = String::from_utf8_lossy(&fx.read(path.as_str()).unwrap()).into_owned();
        assert!(
            !text.contains("first prompt"),
            "{path} still carries the old prompt"
        );
    }
    fx.release(&a.token);
    fx.release(&b.token);
}

/// Promise 6: a holder killed with SIGKILL leaves leftovers that the next start cleans, and a live
/// holder's projection is never touched.
pub fn sigkilled_holder_is_cleaned_at_next_start(subject: &Subject) {
    let fx = Fixture::new();
    fx.write("notes.txt", b"mine\n");
    let before = Tree::capture(&fx.workspace);
    let live = HolderProcess::spawn();
    let doomed = HolderProcess::spawn();
    let kept = fx
        .acquire_as(subject, "live session", live.holder())
        .unwrap();
    let dead = fx
        .acquire_as(subject, "doomed session", doomed.holder())
        .unwrap();
    doomed.kill9();
    let next = fx.acquire(subject, "next session").unwrap();
    assert!(
        next.stale_cleaned.iter().any(|s| s.token == dead.token),
        "the dead holder's lease was not cleaned"
    );
    assert!(
        !next.stale_cleaned.iter().any(|s| s.token == kept.token),
        "a live holder's lease was cleaned"
    );
    assert!(
        !fx.release(&dead.token),
        "a cleaned lease is already released"
    );
    assert!(fx.release(&next.token));
    // The live session still holds: its projection is there.
    if let Some(SessionTextCarrier::Block { path } | SessionTextCarrier::OwnedFile { path }) =
        &kept.session_text
    {
        assert!(
            fx.read(path.as_str()).is_some(),
            "{path} was removed under a live holder"
        );
    }
    live.kill9();
    let report = fx.projector.strip_stale(&fx.workspace).unwrap();
    assert_eq!(report.stale_cleaned.len(), 1);
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

/// Promise 7: concurrent starts and ends from many threads never lose an update.
pub fn concurrent_sessions_never_lose_an_update(subject: &Subject) {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"user rules\r\nno final newline");
    fx.write(".pi/keep.txt", b"keep\n");
    let before = Tree::capture(&fx.workspace);
    std::thread::scope(|scope| {
        for worker in 0..8 {
            let fx = &fx;
            scope.spawn(move || {
                for round in 0..4 {
                    let prompt = format!("worker {worker} round {round}");
                    let receipt = fx.acquire(subject, &prompt).unwrap();
                    assert!(fx.release(&receipt.token));
                }
            });
        }
    });
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

/// Promise 8: no temporary files are left beside what we wrote.
pub fn no_temporary_files_left(subject: &Subject) {
    let fx = Fixture::new();
    let a = fx.acquire(subject, "one").unwrap();
    let b = fx.acquire(subject, "two").unwrap();
    let temps: Vec<String> = Tree::capture(&fx.workspace)
        .paths()
        .filter(|p| p.contains(projectfile_core::fsio::TEMP_INFIX))
        .map(str::to_string)
        .collect();
    assert!(temps.is_empty(), "temporary files left: {temps:?}");
    fx.release(&a.token);
    fx.release(&b.token);
}

/// The malformed files the engine must refuse, each with the line the error must name.
pub const MALFORMED: &[(&str, &str, usize)] = &[
    (
        "unterminated",
        "user text\n<!-- BEGIN agentworks-session-instructions created=false -->\nbody\nmore user text\n",
        2,
    ),
    (
        "two begins",
        "<!-- BEGIN agentworks-session-instructions created=false -->\n<!-- BEGIN agentworks-session-instructions created=false -->\nx\n<!-- END agentworks-session-instructions -->\n",
        2,
    ),
    (
        "end before begin",
        "a\n<!-- END agentworks-session-instructions -->\n<!-- BEGIN agentworks-session-instructions created=false -->\nx\n<!-- END agentworks-session-instructions -->\n",
        2,
    ),
    (
        "marker in a fence",
        "```\n<!-- BEGIN agentworks-session-instructions created=false -->\n```\n",
        2,
    ),
    (
        "altered marker",
        "a\n<!-- BEGIN agentworks-session-instructions created=perhaps -->\nx\n<!-- END agentworks-session-instructions -->\n",
        2,
    ),
];

/// Promise 9: malformed markers are refused with an error naming the file and line; the file is
/// left untouched and nothing else is projected.
pub fn malformed_markers_are_refused(subject: &Subject) {
    let probe = Fixture::new();
    let targets = block_targets(&probe.plan(subject, "x"));
    if targets.is_empty() {
        skip(
            subject,
            "malformed_markers_are_refused",
            "the plan has no blocks",
        );
    }
    for target in targets {
        for (label, text, line) in MALFORMED {
            let fx = Fixture::new();
            fx.write(&target, text.as_bytes());
            let before = Tree::capture(&fx.workspace);
            let error = fx.acquire(subject, "x").expect_err(label);
            match &error {
                Error::Malformed {
                    path, line: got, ..
                } => {
                    assert!(path.ends_with(&target), "{label}: error names {path:?}");
                    assert_eq!(got, line, "{label}: wrong line in {error}");
                }
                other => panic!("{label}: expected a malformed-block error, got {other}"),
            }
            assert!(error.to_string().contains(&format!(":{line}:")), "{error}");
            assert_eq!(
                Tree::capture(&fx.workspace),
                before,
                "{label}: workspace changed"
            );
            fx.assert_no_ledger();
        }
    }
}

/// Promise 10: nothing is written through a symlink, at the target or on the way to it.
pub fn symlinks_are_refused(subject: &Subject) {
    let probe = Fixture::new();
    let session = subject.full_session("x");
    let plan = probe.plan_session(subject, &session);
    let mut targets: Vec<String> = block_targets(&plan);
    targets.extend(plan.owned_files.iter().map(|o| o.path.to_string()));
    if targets.is_empty() {
        skip(
            subject,
            "symlinks_are_refused",
            "the plan writes no file in the workspace",
        );
    }
    for target in targets {
        // The target itself links outside (and a dangling link).
        for dangling in [false, true] {
            let fx = Fixture::new();
            let secret = fx.outside.join("secret.md");
            if !dangling {
                std::fs::write(&secret, b"outside\n").unwrap();
            }
            let link = fx.workspace.join(&target);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(&secret, &link).unwrap();
            let before = Tree::capture(&fx.workspace);
            let error = fx
                .acquire_session(subject, session.clone())
                .expect_err("symlinked target");
            assert!(matches!(error, Error::Symlink { .. }), "{target}: {error}");
            assert_eq!(Tree::capture(&fx.workspace), before);
            if !dangling {
                assert_eq!(std::fs::read(&secret).unwrap(), b"outside\n");
            } else {
                assert!(
                    !secret.exists(),
                    "a file was created through a dangling link"
                );
            }
            fx.assert_no_ledger();
        }
        // A directory on the way links outside.
        if let Some((first, _)) = target.split_once('/') {
            let fx = Fixture::new();
            std::os::unix::fs::symlink(&fx.outside, fx.workspace.join(first)).unwrap();
            let error = fx
                .acquire_session(subject, session.clone())
                .expect_err("symlinked directory");
            assert!(matches!(error, Error::Symlink { .. }), "{target}: {error}");
            assert!(
                std::fs::read_dir(&fx.outside).unwrap().next().is_none(),
                "something was written outside the workspace"
            );
            fx.assert_no_ledger();
        }
    }
}

/// Promise 11: the project's own instruction files and CLI folders are never replaced or removed,
/// and CLAUDE.md is never written.
pub fn project_folders_are_never_replaced(subject: &Subject) {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"# project agents\n");
    fx.write(".claude/settings.json", b"{\"project\": true}\n");
    fx.write(
        ".claude/skills/review/SKILL.md",
        b"---\nname: review\n---\n",
    );
    fx.write(
        ".cursor/rules/house.mdc",
        b"---\nalwaysApply: true\n---\nhouse\n",
    );
    fx.write(".cursor/mcp.json", b"{\"mcpServers\": {}}\n");
    fx.write(".pi/SYSTEM.md", b"pi system\n");
    fx.write(".codex/config.toml", b"model = \"x\"\n");
    fx.write(".agents/skills/lint/SKILL.md", b"lint\n");
    fx.write(".agents/hooks.json", b"{\"project\": {}}\n");
    fx.write(".pi/APPEND_SYSTEM.md", b"pi append\r\nno final newline");
    fx.write_mode(".cursor/hooks.json", b"{\"version\": 1}", 0o600);
    fx.write_mode(".cursor/mcp.json", b"{\"mcpServers\": {}}\n", 0o640);
    let before = Tree::capture(&fx.workspace);
    // Every input the provider accepts, so owned configuration files are exercised too.
    let a = fx
        .acquire_session(subject, subject.full_session("one"))
        .unwrap();
    assert!(
        fx.read("CLAUDE.md").is_none(),
        "CLAUDE.md must never be written"
    );
    let b = fx
        .acquire_session(subject, subject.full_session("two"))
        .unwrap();
    fx.release(&b.token);
    fx.release(&a.token);
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

/// Promise 16: no CLI reads the priors folder. A workspace whose priors folder holds every
/// instruction file, rule file and skill folder name a CLI looks for resolves, by the provider's
/// own discovery profile, exactly as it does without it; and the provider's skills folder is
/// never inside it.
pub fn priors_are_read_by_no_cli(subject: &Subject) {
    use projectfile_core::guidance::{GuidanceRequest, StdFs, resolve_as};
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"# the project's rules\n");
    let resolved = |fx: &Fixture| {
        let request = GuidanceRequest::new(fx.workspace.to_string_lossy().into_owned())
            .with_home_dir(fx.outside.to_string_lossy().into_owned())
            .with_user_scope(false);
        resolve_as(&StdFs, &subject.provider.discovery(), &request)
            .sources
            .into_iter()
            .map(|s| (s.path, s.body))
            .collect::<Vec<_>>()
    };
    let before = resolved(&fx);
    let top =
        projectfile_core::projector::priors::dir_name(&projectfile_core::Namespace::default());
    for name in [
        "AGENTS.md",
        "AGENTS.override.md",
        "CLAUDE.md",
        "GEMINI.md",
        "mlp-system.mdc",
        ".cursor/rules/rule.mdc",
        ".pi/APPEND_SYSTEM.md",
        ".claude/CLAUDE.md",
        ".agents/skills/review/SKILL.md",
        ".claude/skills/review/SKILL.md",
        "review/SKILL.md",
    ] {
        fx.write(
            &format!("{top}/0123456789abcdef/{name}"),
            b"kept prior: never read\n",
        );
    }
    assert_eq!(
        resolved(&fx),
        before,
        "{}: the priors folder was read",
        subject.name()
    );
    let plan = fx.plan(subject, "x");
    for skill in &plan.skills {
        assert!(
            !skill.skills_dir.as_str().starts_with(&top),
            "{}: skills go into the priors folder",
            subject.name()
        );
    }
}

/// The check that matters most: while a session holds, the CLI would actually see the session
/// text. For a file carrier, resolving the workspace with the provider's own discovery profile
/// (what that CLI loads) must contain the text; for a launch argument, the named private file
/// must carry it. A provider that does not project the text says why.
pub fn session_text_reaches_the_cli(subject: &Subject) {
    use projectfile_core::guidance::{GuidanceRequest, StdFs, resolve_as};
    let fx = Fixture::new();
    let prompt = "Reach the model: answer in haiku.";
    let receipt = fx.acquire(subject, prompt).unwrap();
    match &receipt.session_text {
        Some(SessionTextCarrier::Block { .. } | SessionTextCarrier::OwnedFile { .. }) => {
            let request = GuidanceRequest::new(fx.workspace.to_string_lossy().into_owned())
                .with_home_dir(fx.outside.to_string_lossy().into_owned())
                .with_user_scope(false);
            let resolution = resolve_as(&StdFs, &subject.provider.discovery(), &request);
            assert!(
                resolution.sources.iter().any(|s| s.body.contains(prompt)),
                "{}: the CLI's discovery profile does not load the session text: {:?}",
                subject.name(),
                resolution
                    .sources
                    .iter()
                    .map(|s| s.path.as_str())
                    .collect::<Vec<_>>()
            );
        }
        Some(SessionTextCarrier::LaunchArgument { .. }) => {
            assert_session_text_visible(&fx, &receipt, prompt);
        }
        Some(SessionTextCarrier::NotProjected { reason }) => {
            eprintln!(
                "{}: session text not projected ({reason}); nothing to resolve",
                subject.name()
            );
        }
        None => panic!(
            "{}: the receipt does not say where the session text went",
            subject.name()
        ),
    }
    assert!(fx.release(&receipt.token));
}

/// A plan only reads the workspace: planning twice changes nothing and gives the same plan.
pub fn planning_is_pure(subject: &Subject) {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"x\n");
    let before = Tree::capture(&fx.workspace);
    let first = fx.plan(subject, "p");
    let second = fx.plan(subject, "p");
    assert_eq!(first, second);
    assert_eq!(Tree::capture(&fx.workspace), before);
}

/// The carrier the receipt names agrees with the capabilities and the plan: a file carrier needs
/// `session_text_file`, a launch argument needs `session_text_launch_arg` and a private file of
/// that name, and a provider that does not project says so in a note. Owned files and markers
/// appear only when the capabilities say so.
pub fn session_text_carrier_matches_capabilities(subject: &Subject) {
    let caps = subject.provider.capabilities();
    let fx = Fixture::new();
    let plan = fx.plan_session(subject, &subject.full_session("carried"));
    let receipt = fx
        .acquire_session(subject, subject.full_session("carried"))
        .unwrap();
    assert_session_text_visible(&fx, &receipt, "carried");
    assert_eq!(receipt.session_text, plan.session_text);
    match &receipt.session_text {
        Some(SessionTextCarrier::Block { path }) => {
            assert!(
                caps.session_text_file,
                "a block carrier needs session_text_file"
            );
            assert!(plan.blocks.iter().any(|b| &b.path == path));
        }
        Some(SessionTextCarrier::OwnedFile { path }) => {
            assert!(
                caps.session_text_file,
                "an owned-file carrier needs session_text_file"
            );
            assert!(caps.owned_files, "an owned-file carrier needs owned_files");
            assert!(
                plan.owned_files
                    .iter()
                    .any(|o| &o.path == path && o.role == OwnedRole::Instructions)
            );
        }
        Some(SessionTextCarrier::LaunchArgument { private_file }) => {
            assert!(
                caps.session_text_launch_arg,
                "a launch-argument carrier needs session_text_launch_arg"
            );
            assert!(plan.private_files.iter().any(|f| &f.name == private_file));
            assert!(
                plan.launch_args
                    .contains(&LaunchArg::PrivateFilePath(private_file.clone()))
            );
        }
        Some(SessionTextCarrier::NotProjected { .. }) => {
            assert!(
                receipt.notes.iter().any(|n| n.contains("not projected")),
                "the receipt must say plainly that the session text was not projected: {:?}",
                receipt.notes
            );
        }
        None => panic!("the receipt does not say where the session text went"),
    }
    if !caps.owned_files {
        assert!(
            plan.owned_files.is_empty(),
            "owned files without the capability"
        );
    }
    if !caps.markers {
        assert!(plan.markers.is_empty(), "markers without the capability");
    }
    assert!(fx.release(&receipt.token));
}

/// Inputs the capabilities do not accept are refused with a clear error naming them, before
/// anything is projected; inputs they accept go through.
pub fn unsupported_inputs_are_refused(subject: &Subject) {
    let caps = subject.provider.capabilities();
    let full = full_session(
        &Capabilities {
            mcp: true,
            hooks: true,
            cli_config: true,
            subagents: true,
            commands: true,
            ..caps
        },
        "p",
    );
    let skill_source = Fixture::new();
    skill_source.write(
        "review/SKILL.md",
        b"---\nname: review\ndescription: r\n---\n",
    );
    let inputs: Vec<(&str, bool, SessionRequest)> = vec![
        (
            "MCP servers",
            caps.mcp,
            SessionRequest {
                mcp_servers: full.mcp_servers.clone(),
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "hooks",
            caps.hooks,
            SessionRequest {
                hooks: full.hooks.clone(),
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "CLI configuration",
            caps.cli_config,
            SessionRequest {
                cli_config: full.cli_config.clone(),
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "subagents",
            caps.subagents,
            SessionRequest {
                agents: full.agents.clone(),
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "commands",
            caps.commands,
            SessionRequest {
                commands: full.commands.clone(),
                ..SessionRequest::with_prompt("p")
            },
        ),
        (
            "skills",
            caps.skills,
            SessionRequest {
                skills: vec![SkillInput {
                    name: "review".into(),
                    source: skill_source.workspace.join("review"),
                }],
                ..SessionRequest::with_prompt("p")
            },
        ),
    ];
    for (label, accepted, session) in inputs {
        let fx = Fixture::new();
        let before = Tree::capture(&fx.workspace);
        match fx.acquire_session(subject, session) {
            Ok(receipt) if accepted => assert!(fx.release(&receipt.token)),
            Ok(_) => panic!("{label}: accepted although the capabilities refuse it"),
            Err(error) if !accepted => {
                assert!(
                    matches!(&error, Error::Provider { .. })
                        && error.to_string().contains(label)
                        && error.to_string().starts_with(subject.name()),
                    "{label}: unclear refusal: {error}"
                );
            }
            Err(error) if label == "skills" => {
                // Skills have checks of their own; a provider that accepts them is checked there.
                skip(
                    subject,
                    "unsupported_inputs_are_refused (skills)",
                    &error.to_string(),
                );
            }
            Err(error) => panic!("{label}: refused although the capabilities accept it: {error}"),
        }
        assert_eq!(
            Tree::capture(&fx.workspace),
            before,
            "{label}: workspace changed"
        );
        fx.assert_no_ledger();
    }
}

/// Promises 6, 8 and 16 under crashes, power losses and a lost state directory: with every input the provider
/// accepts but skills (see [`Subject::full_session`]; skill folders have their own crash checks),
/// [`crash::enumerate_crash_points_with`] stops the process model after every mutating file
/// operation of every phase, and loses power there too, over an empty workspace and over one
/// where the user has their own file at every path the plan writes. Prints the counts.
pub fn crash_points_leave_the_users_bytes(subject: &Subject) {
    let session = |prompt: &str| subject.full_session(prompt);
    let provider = subject.provider.as_ref();
    let empty = crash::enumerate_crash_points_with(provider, &subject.probes, &|_| {}, &session);
    let plan = Fixture::new().plan_session(subject, &session("the plan's paths"));
    let users_files = |fx: &Fixture| {
        for block in &plan.blocks {
            fx.write(
                block.path.as_str(),
                b"# The user's own\r\nrules, no final newline",
            );
        }
        for owned in &plan.owned_files {
            fx.write_mode(owned.path.as_str(), b"the user's own file\n", 0o640);
        }
    };
    let over_users =
        crash::enumerate_crash_points_with(provider, &subject.probes, &users_files, &session);
    // Printed with --nocapture; `cargo xtask crash-points` (run by `cargo xtask ci`) sums them.
    let name = match &subject.probes.cli_version {
        projectfile_core::VersionProbe::Known { version, .. } => {
            format!("{} (CLI {version})", subject.name())
        }
        _ => subject.name().to_string(),
    };
    eprintln!("crash points: {name} / full session, empty workspace: {empty}");
    eprintln!("crash points: {name} / full session, over the user's files: {over_users}");
    for report in [&empty, &over_users] {
        assert!(
            report.phases.iter().all(|p| p.crash_points > 0),
            "{}: a phase with no crash point: {report}",
            subject.name()
        );
    }
}

/// Promise 3 and 11 with every input the provider accepts: each owned file holds exactly the
/// planned bytes (and mode) while the session holds, and nothing is left after the release.
pub fn every_input_leaves_nothing_behind(subject: &Subject) {
    let fx = Fixture::new();
    let session = subject.full_session("every input");
    let plan = fx.plan_session(subject, &session);
    let before = Tree::capture(&fx.workspace);
    let receipt = fx.acquire_session(subject, session).unwrap();
    assert_session_text_visible(&fx, &receipt, "every input");
    for owned in &plan.owned_files {
        let path = owned.path.as_str();
        assert_eq!(
            fx.read(path).as_deref(),
            Some(as_written(owned).as_slice()),
            "{path} does not hold the planned content"
        );
        if let Some(mode) = owned.mode {
            assert_eq!(fx.mode(path), Some(mode), "{path} has the wrong mode");
        }
    }
    assert!(fx.release(&receipt.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

/// The prior content every owned file gets in [`owned_files_restore_prior_content_and_mode`].
fn prior_of(path: &str) -> Vec<u8> {
    format!("\u{feff}project's own {path}\r\nno final newline").into_bytes()
}

/// Promise 12: an owned file's prior content and mode are restored exactly by the last session,
/// whichever session ends first; an overlapping session does not disturb them.
pub fn owned_files_restore_prior_content_and_mode(subject: &Subject) {
    let probe = Fixture::new();
    let session = subject.full_session("owned");
    let plan = probe.plan_session(subject, &session);
    if plan.owned_files.is_empty() {
        skip(
            subject,
            "owned_files_restore_prior_content_and_mode",
            "the plan has no owned files",
        );
        return;
    }
    for first_released_is_a in [true, false] {
        let fx = Fixture::new();
        for (i, owned) in plan.owned_files.iter().enumerate() {
            // A different mode per file (and one the hook script's 0755 would overwrite).
            let mode = [0o640, 0o600, 0o700, 0o444][i % 4];
            fx.write_mode(owned.path.as_str(), &prior_of(owned.path.as_str()), mode);
        }
        let before = Tree::capture(&fx.workspace);
        let a = fx.acquire_session(subject, session.clone()).unwrap();
        let b = fx
            .acquire_session(subject, subject.full_session("owned again"))
            .unwrap();
        let later = fx.plan_session(subject, &subject.full_session("owned again"));
        for owned in &later.owned_files {
            let path = owned.path.as_str();
            assert_eq!(
                fx.read(path).as_deref(),
                Some(as_written(owned).as_slice()),
                "{path}: the newest session's content is not in place"
            );
            if let Some(mode) = owned.mode {
                assert_eq!(
                    fx.mode(path),
                    Some(mode),
                    "{path}: planned mode not applied"
                );
            } else {
                assert_eq!(
                    fx.mode(path),
                    Some(before_mode(&before, path)),
                    "{path}: the prior mode should be kept while ours is written"
                );
            }
        }
        let (first, second) = if first_released_is_a {
            (&a, &b)
        } else {
            (&b, &a)
        };
        let released = fx.projector.release(&first.token).unwrap();
        assert!(released.released);
        for owned in &later.owned_files {
            assert_ne!(
                fx.read(owned.path.as_str()),
                Some(prior_of(owned.path.as_str())),
                "{}: restored while another session holds it",
                owned.path
            );
        }
        let last = fx.projector.release(&second.token).unwrap();
        assert!(
            last.kept.is_empty() && released.kept.is_empty(),
            "nothing was edited"
        );
        for owned in &plan.owned_files {
            assert!(
                last.files
                    .iter()
                    .any(|f| f.path == owned.path.as_str() && f.action == "restored"),
                "{}: the last release does not report the restore",
                owned.path
            );
        }
        assert_eq!(
            Tree::capture(&fx.workspace),
            before,
            "prior content or mode lost"
        );
        fx.assert_no_ledger();
    }
}

fn before_mode(tree: &Tree, path: &str) -> u32 {
    match tree.0.get(path) {
        Some(tree::Node::File { mode, .. }) => *mode,
        other => panic!("{path}: expected a file in the snapshot, found {other:?}"),
    }
}

/// Promises 2, 12 and 13 for owned files, by the one undo rule: a file the user edited during the
/// session is not ours any more. With no prior content it stays where the user put it, through a
/// refresh and the last release, and is reported in `kept` (kept in place). Where the project's
/// prior content must come back, the prior comes back and the edit is set aside under the state
/// directory, reported with where it went.
pub fn owned_file_user_edit_is_set_aside(subject: &Subject) {
    let probe = Fixture::new();
    let session = subject.full_session("edited");
    let plan = probe.plan_session(subject, &session);
    if plan.owned_files.is_empty() {
        skip(
            subject,
            "owned_file_user_edit_is_set_aside",
            "the plan has no owned files",
        );
        return;
    }
    for owned in &plan.owned_files {
        let path = owned.path.as_str();
        for with_prior in [false, true] {
            let edit = format!("the user's edit of {path}\n");
            // Edited, then released by the only session.
            let fx = Fixture::new();
            if with_prior {
                fx.write_mode(path, &prior_of(path), 0o640);
            }
            let before = Tree::capture(&fx.workspace);
            let receipt = fx.acquire_session(subject, session.clone()).unwrap();
            fx.write(path, edit.as_bytes());
            let released = fx.projector.release(&receipt.token).unwrap();
            assert_kept(&released.kept, path, &edit);
            assert_edit_outcome(&fx, &before, path, &edit, with_prior);

            // Edited while held, then a second session starts: the edit is not refreshed away.
            let fx = Fixture::new();
            if with_prior {
                fx.write_mode(path, &prior_of(path), 0o640);
            }
            let before = Tree::capture(&fx.workspace);
            let a = fx.acquire_session(subject, session.clone()).unwrap();
            fx.write(path, edit.as_bytes());
            let b = fx.acquire_session(subject, session.clone()).unwrap();
            assert_kept(&b.kept, path, &edit);
            assert_eq!(fx.read(path).as_deref(), Some(edit.as_bytes()), "{path}");
            assert!(fx.release(&a.token));
            let last = fx.projector.release(&b.token).unwrap();
            assert_kept(&last.kept, path, &edit);
            assert_edit_outcome(&fx, &before, path, &edit, with_prior);
        }
    }
}

/// After the last release of an edited owned file: with a prior, the workspace is as it was
/// before the session; without one, it is that plus the user's edit, in place.
fn assert_edit_outcome(fx: &Fixture, before: &Tree, path: &str, edit: &str, with_prior: bool) {
    let now = Tree::capture(&fx.workspace);
    if with_prior {
        assert_eq!(&now, before, "{path}: the prior state is not back");
        return;
    }
    assert_eq!(
        fx.read(path).as_deref(),
        Some(edit.as_bytes()),
        "{path}: the edit moved"
    );
    for (p, node) in &before.0 {
        assert_eq!(now.0.get(p), Some(node), "{path}: {p} changed");
    }
}

fn assert_kept(kept: &[projectfile_core::ledger::KeptRecord], path: &str, edit: &str) {
    let record = kept
        .iter()
        .find(|k| k.path.as_str() == path)
        .unwrap_or_else(|| panic!("{path}: the user's edit is not reported in kept: {kept:?}"));
    assert_eq!(
        std::fs::read(&record.kept_at).unwrap(),
        edit.as_bytes(),
        "{path}: the kept copy does not hold the user's bytes"
    );
    assert!(!record.reason.is_empty());
}

/// Markers are counted: created once by the first session when absent, held by the others, and
/// removed only when the last holder ends, whichever ended first. A path the project already has
/// (empty or not, directory or file) is reported `exists` and never touched.
pub fn markers_are_counted(subject: &Subject) {
    let probe = Fixture::new();
    let plan = probe.plan(subject, "x");
    if plan.markers.is_empty() {
        skip(subject, "markers_are_counted", "the plan has no markers");
        return;
    }
    for marker in &plan.markers {
        let path = marker.path.as_str();
        // Absent: three sessions share one marker.
        let fx = Fixture::new();
        fx.write("README.md", b"project\n");
        let before = Tree::capture(&fx.workspace);
        let receipts: Vec<AcquireReceipt> = ["a", "b", "c"]
            .iter()
            .map(|p| fx.acquire(subject, p).unwrap())
            .collect();
        let actions: Vec<&str> = receipts
            .iter()
            .map(|r| {
                r.files
                    .iter()
                    .find(|f| f.path == path && f.kind == "marker")
                    .map(|f| f.action.as_str())
                    .unwrap_or("missing")
            })
            .collect();
        assert_eq!(actions, ["created", "held", "held"], "{path}");
        // The creator ends first: the others still hold it.
        for (i, receipt) in receipts.iter().enumerate() {
            assert!(
                fx.read_kind(path).is_some(),
                "{path} gone before session {i} ended"
            );
            assert!(fx.release(&receipt.token));
        }
        assert!(
            fx.read_kind(path).is_none(),
            "{path} left after the last session"
        );
        assert_eq!(Tree::capture(&fx.workspace), before);
        fx.assert_no_ledger();

        // Present: the project's own, as an empty directory, a full directory, or a file.
        let owns: [(&str, ProjectOwn<'_>); 3] = [
            ("empty directory", &|fx: &Fixture| {
                std::fs::create_dir(fx.workspace.join(path)).unwrap()
            }),
            ("directory", &|fx: &Fixture| {
                fx.write(&format!("{path}/HEAD"), b"ref: refs/heads/main\n")
            }),
            ("file", &|fx: &Fixture| {
                fx.write(path, b"gitdir: /elsewhere\n")
            }),
        ];
        for (label, make) in owns {
            let fx = Fixture::new();
            make(&fx);
            let before = Tree::capture(&fx.workspace);
            let receipts: Vec<AcquireReceipt> = ["a", "b", "c"]
                .iter()
                .map(|p| fx.acquire(subject, p).unwrap())
                .collect();
            for r in &receipts {
                assert!(
                    r.files
                        .iter()
                        .any(|f| f.path == path && f.kind == "marker" && f.action == "exists"),
                    "{path} ({label}): the project's own is not reported as existing"
                );
            }
            for r in &receipts {
                assert!(fx.release(&r.token));
            }
            assert_eq!(
                Tree::capture(&fx.workspace),
                before,
                "{path} ({label}) was touched"
            );
            fx.assert_no_ledger();
        }
    }
}

/// Puts the project's own entry at a marker path.
type ProjectOwn<'a> = &'a dyn Fn(&Fixture);

impl Fixture {
    /// What is at a workspace path, without following symlinks: `None` when absent.
    pub fn read_kind(&self, rel: &str) -> Option<std::fs::FileType> {
        std::fs::symlink_metadata(self.workspace.join(rel))
            .ok()
            .map(|m| m.file_type())
    }
}

/// The launch-argument route: the private file named by the launch arguments exists under the
/// state directory (never in the workspace), holds the session text with mode 0600, follows its
/// flag, is separate per session, and is gone after that session's release; the workspace is
/// not edited at all when the plan projects nothing else.
pub fn launch_arg_private_file_lives_while_held(subject: &Subject) {
    let probe = Fixture::new();
    let plan = probe.plan(subject, "x");
    if plan.private_files.is_empty() {
        skip(
            subject,
            "launch_arg_private_file_lives_while_held",
            "the plan has no private files",
        );
        return;
    }
    let edits_nothing =
        plan.blocks.is_empty() && plan.owned_files.is_empty() && plan.markers.is_empty();
    let fx = Fixture::new();
    fx.write("README.md", b"project\n");
    let before = Tree::capture(&fx.workspace);
    let a = fx.acquire(subject, "private text A").unwrap();
    let b = fx.acquire(subject, "private text B").unwrap();
    let file_of = |receipt: &AcquireReceipt, prompt: &str| -> PathBuf {
        let at = plan
            .launch_args
            .iter()
            .position(|arg| matches!(arg, LaunchArg::PrivateFilePath(_)))
            .expect("a launch argument names the private file");
        assert_eq!(receipt.launch_args.len(), plan.launch_args.len());
        if let Some(LaunchArg::Literal(flag)) = at.checked_sub(1).map(|i| &plan.launch_args[i]) {
            assert_eq!(
                &receipt.launch_args[at - 1],
                flag,
                "the flag precedes the path"
            );
        }
        let path = PathBuf::from(&receipt.launch_args[at]);
        assert!(path.is_absolute(), "{path:?} is not absolute");
        assert!(
            path.starts_with(&fx.state),
            "{path:?} is not under the state directory"
        );
        assert!(
            !path.starts_with(&fx.workspace),
            "{path:?} is in the workspace"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), prompt);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{path:?} is readable by others");
        path
    };
    let file_a = file_of(&a, "private text A");
    let file_b = file_of(&b, "private text B");
    assert_ne!(file_a, file_b, "sessions share a private file");
    if edits_nothing {
        assert_eq!(
            Tree::capture(&fx.workspace),
            before,
            "the workspace was edited"
        );
    }
    assert!(fx.release(&a.token));
    assert!(!file_a.exists(), "{file_a:?} outlives its session");
    assert!(file_b.exists(), "{file_b:?} removed with another session");
    assert!(fx.release(&b.token));
    assert!(!file_b.exists(), "{file_b:?} outlives its session");
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}

/// Generates one `#[test]` per conformance check for a provider value (and, optionally, probes).
#[macro_export]
macro_rules! conformance_tests {
    ($provider:expr) => {
        $crate::conformance_tests!($provider, $crate::__default_probes());
    };
    ($provider:expr, $probes:expr) => {
        $crate::conformance_tests!(@checks $provider, $probes;
            user_bytes_round_trip,
            nothing_left_in_empty_workspace,
            user_edits_are_kept,
            overlapping_sessions_release_in_either_order,
            release_is_idempotent,
            start_refreshes_the_text,
            sigkilled_holder_is_cleaned_at_next_start,
            concurrent_sessions_never_lose_an_update,
            no_temporary_files_left,
            malformed_markers_are_refused,
            symlinks_are_refused,
            project_folders_are_never_replaced,
            planning_is_pure,
            session_text_reaches_the_cli,
            priors_are_read_by_no_cli,
            session_text_carrier_matches_capabilities,
            unsupported_inputs_are_refused,
            every_input_leaves_nothing_behind,
            owned_files_restore_prior_content_and_mode,
            owned_file_user_edit_is_set_aside,
            markers_are_counted,
            launch_arg_private_file_lives_while_held,
            skills_are_projected_marked_and_removed,
            skill_take_over_restores_the_projects_folder,
            skill_refresh_and_user_files,
            skill_hostile_names_are_refused,
            skill_source_symlinks_are_refused,
            skill_lost_state_dir,
            skill_crash_leftovers_are_cleaned,
            generated_config_is_removed_only_when_ours,
            crash_points_leave_the_users_bytes,
            cli_home_is_declared_or_refused,
            merged_json_keeps_the_projects_entries,
            merged_json_clash_is_refused,
            merged_json_user_edit_and_lost_state,
            mcp_bad_input_is_refused,
            named_files_take_over_and_restore,
            dry_run_changes_nothing,
            delivery_verdict_agrees_with_resolve,
            provider_options_are_checked,
        );
    };
    (@checks $provider:expr, $probes:expr; $($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                let subject = $crate::Subject::new($provider).with_probes($probes);
                $crate::$check(&subject);
            }
        )*
    };
}

#[doc(hidden)]
pub fn __default_probes() -> Probes {
    Probes::default()
}
