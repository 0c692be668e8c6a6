//! The shared conformance suite: check functions that take a provider (a [`Subject`]) and run on
//! the real file system, each proving one promise of DESIGN.md section 4 for that provider. Checks
//! that do not apply to a provider's [`Capabilities`](projectfile_core::Capabilities) or plan return
//! early and say so on stderr.
//!
//! A provider runs the whole suite from its own tests with one line:
//!
//! ```ignore
//! projectfile_conformance::conformance_tests!(projectfile_codex::Codex);
//! ```
//!
//! which generates one `#[test]` per check, so a failure names the promise it broke. Differences
//! between providers (a probed CLI version, say) are passed in the [`Subject`], not hidden.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The suite plays the user: it writes fixture files directly, outside the projector.
#![allow(clippy::disallowed_methods)]

pub mod crash;
pub mod tree;

use projectfile_core::holder::Holder;
use projectfile_core::projector::{AcquireReceipt, AcquireRequest, Projector};
use projectfile_core::{
    Error, Namespace, Plan, PlanContext, Probes, Provider, SessionRequest, SessionTextCarrier,
    fsio::Root,
};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

pub use tree::Tree;

/// The provider under test and the parameters that make its plan what the check needs.
pub struct Subject {
    /// The provider.
    pub provider: Box<dyn Provider>,
    /// Probes to hand in (e.g. a CLI version), so no real binary is needed.
    pub probes: Probes,
}

impl Subject {
    /// A subject with default probes.
    pub fn new(provider: impl Provider + 'static) -> Subject {
        Subject {
            provider: Box::new(provider),
            probes: Probes::default(),
        }
    }

    /// The same subject with the given probes.
    pub fn with_probes(mut self, probes: Probes) -> Subject {
        self.probes = probes;
        self
    }

    fn name(&self) -> &'static str {
        self.provider.name()
    }
}

/// A temporary workspace and state directory.
pub struct Fixture {
    _dir: tempfile::TempDir,
    /// The workspace.
    pub workspace: PathBuf,
    /// The state directory.
    pub state: PathBuf,
    /// Somewhere outside the workspace.
    pub outside: PathBuf,
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
        for d in [&workspace, &state, &outside] {
            std::fs::create_dir(d).expect("mkdir");
        }
        Fixture {
            _dir: dir,
            projector: Projector::new(&state, Namespace::default()),
            workspace,
            state,
            outside,
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
        let mut request =
            AcquireRequest::new(&self.workspace, SessionRequest::with_prompt(prompt), holder);
        request.probes = subject.probes.clone();
        self.projector.acquire(subject.provider.as_ref(), &request)
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
        let root = Root::open(&self.workspace).expect("open workspace");
        let request = SessionRequest::with_prompt(prompt);
        subject
            .provider
            .plan(&PlanContext {
                root: &self.workspace,
                namespace: &Namespace::default(),
                request: &request,
                probes: &subject.probes,
                view: &root,
            })
            .expect("plan")
    }

    /// Asserts the state directory holds no ledger (nothing recorded for any workspace).
    pub fn assert_no_ledger(&self) {
        let leftovers: Vec<PathBuf> = walk_files(&self.state)
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|n| n != "lock"))
            .collect();
        assert!(leftovers.is_empty(), "state leftovers: {leftovers:?}");
    }
}

impl Default for Fixture {
    fn default() -> Self {
        Fixture::new()
    }
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => out.extend(walk_files(&path)),
                Ok(_) => out.push(path),
                Err(_) => {}
            }
        }
    }
    out
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

/// The files a plan edits in place (blocks), which is where user bytes meet ours.
fn block_targets(plan: &Plan) -> Vec<String> {
    plan.blocks.iter().map(|b| b.path.to_string()).collect()
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
        eprintln!(
            "{}: no block targets; round trip of shared files does not apply",
            subject.name()
        );
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

/// Promise 2: edits the user makes outside the block while a session runs are kept.
pub fn user_edits_are_kept(subject: &Subject) {
    let probe = Fixture::new();
    for target in block_targets(&probe.plan(subject, "x")) {
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
    for target in block_targets(&probe.plan(subject, "x")) {
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
    let plan = probe.plan(subject, "x");
    let mut targets: Vec<String> = block_targets(&plan);
    targets.extend(plan.owned_files.iter().map(|o| o.path.to_string()));
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
            let error = fx.acquire(subject, "x").expect_err("symlinked target");
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
            let error = fx.acquire(subject, "x").expect_err("symlinked directory");
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
    std::fs::set_permissions(
        fx.workspace.join(".cursor/mcp.json"),
        std::os::unix::fs::PermissionsExt::from_mode(0o640),
    )
    .unwrap();
    let before = Tree::capture(&fx.workspace);
    let a = fx.acquire(subject, "one").unwrap();
    assert!(
        fx.read("CLAUDE.md").is_none(),
        "CLAUDE.md must never be written"
    );
    let b = fx.acquire(subject, "two").unwrap();
    fx.release(&b.token);
    fx.release(&a.token);
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
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
