//! The fixture every check runs in: a temporary workspace beside its own state directory and a
//! projector on it ([`Fixture`]), helpers that play the user (write, chmod, read), a holder
//! process to kill ([`HolderProcess`]), what a state directory may keep after the last release
//! ([`state_leftovers`]), and the assertions several promises share.

use projectfile_core::Error;
use projectfile_core::holder::Holder;
use projectfile_core::projector::{AcquireReceipt, AcquireRequest, Projector};
use projectfile_core::receipts::FileKind;
use projectfile_provider::{Namespace, Plan, SessionRequest, SessionTextCarrier};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use crate::Subject;

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

    /// Acquires a whole session request held by this test process.
    pub fn acquire_session(
        &self,
        subject: &Subject,
        session: SessionRequest,
    ) -> Result<AcquireReceipt, Error> {
        self.acquire_session_as(subject, session, Holder::current_process().expect("holder"))
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

    /// The plan for a whole session request, as an acquire by this fixture would make it now
    /// (the same probes and binary; nothing projected).
    pub fn plan_session(&self, subject: &Subject, request: &SessionRequest) -> Plan {
        let mut acquire = AcquireRequest::new(
            &self.workspace,
            request.clone(),
            Holder::current_process().expect("holder"),
        );
        acquire.probes = subject.probes.clone();
        acquire.binary_path = subject.binary_path.clone();
        self.projector
            .plan(subject.provider.as_ref(), &acquire)
            .expect("plan")
    }

    /// Asserts the state directory holds no ledger (nothing recorded for any workspace).
    pub fn assert_no_ledger(&self) {
        let leftovers = state_leftovers(&self.state);
        assert!(leftovers.is_empty(), "state leftovers: {leftovers:?}");
    }

    /// What is at a workspace path, without following symlinks: `None` when absent.
    pub fn read_kind(&self, rel: &str) -> Option<std::fs::FileType> {
        std::fs::symlink_metadata(self.workspace.join(rel))
            .ok()
            .map(|m| m.file_type())
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
    use projectfile_core::testing::journal::{JOURNAL_FILE, SLOTS_FILE, records_nothing};
    walk_files(state)
        .into_iter()
        .filter(|p| match p.file_name().and_then(|n| n.to_str()) {
            // Which folder each path named: kept, like the lock file.
            _ if p.parent().and_then(Path::file_name) == Some(std::ffi::OsStr::new("paths")) => {
                false
            }
            Some("lock") => false,
            // The journal's sync slots: records older than the journal's newest, never read
            // back while the journal holds a newer one.
            Some(SLOTS_FILE) => false,
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
        Some(SessionTextCarrier::Environment { private_file, var }) => {
            let file = environment_file(receipt, private_file, var);
            assert!(
                std::fs::read_to_string(&file).is_ok_and(|text| text.contains(prompt)),
                "{}: the private file {var} leads to does not carry the session text",
                file.display()
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

/// The private file `private_file` of an environment carrier: the receipt's private file of that
/// name, under the state directory, which the receipt's `var` names itself, or its folder (the
/// session's private directory), or, through the private files that variable names, by its path.
pub fn environment_file(receipt: &AcquireReceipt, private_file: &str, var: &str) -> PathBuf {
    let file = receipt
        .files
        .iter()
        .filter(|f| f.kind == FileKind::Private)
        .map(|f| PathBuf::from(&f.path))
        .find(|p| p.file_name().is_some_and(|n| n == private_file))
        .unwrap_or_else(|| panic!("the receipt lists no private file {private_file}"));
    assert!(file.is_absolute(), "{}: not absolute", file.display());
    let value = receipt
        .env
        .get(var)
        .unwrap_or_else(|| panic!("the receipt's env does not set {var}"));
    let value = Path::new(value);
    assert!(
        value == file || Some(value) == file.parent(),
        "{var}={} names neither {} nor its folder",
        value.display(),
        file.display()
    );
    file
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
