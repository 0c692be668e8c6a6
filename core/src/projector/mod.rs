//! The projector: applies plans under the workspace lock (acquire), takes them out again
//! (release), and reports and cleans crash leftovers (status, strip-stale).
//!
//! Every operation takes the workspace's exclusive lock, reads the ledger, cleans leftovers whose
//! holders are dead, does its work, and writes the ledger back, so concurrent processes never lose
//! an update. Acquire records its intent in the ledger *before* touching the workspace, so a crash
//! at any point leaves something the next start can clean: a lease whose holder is dead. Which
//! records are synced first, and why the others may wait, is the `journal`'s to say.
//!
//! Each kind of projection lives in a module of its own behind one trait (`kind`'s
//! `Projection`: record the intent, apply, undo, report status), and all of them follow one undo
//! rule: remove or replace only what is provably ours, leave whatever is not where the user put
//! it, and report it (`kind` says it in full):
//!
//! | module | kind |
//! |---|---|
//! | `shared_block` | our marked block in a shared file |
//! | `owned_file` | a file written whole, its prior content taken over |
//! | [`merged_json`] | a JSON file the session's entries are merged into (then projected as an owned file) |
//! | `marker` | an empty file or folder whose presence we create |
//! | `skill_folder` | a projected skill folder, a same-named folder taken over |
//! | `private_file` | a session's files under the state directory |
//! | `created_dir` | directories created on the way to a projected path |
//!
//! `priors` keeps what was taken over inside the workspace; `locked` is one locked
//! workspace and the state-directory layout; `delivery` is the receipt's delivery verdict (the
//! provider's discovery profile over the workspace after projection, the launch arguments that
//! fix a route, `require_delivery`); [`dry_run`] tells what an acquire would do, changing nothing.

mod created_dir;
mod delivery;
pub mod dry_run;
mod git_exclude;
mod kind;
mod locked;
mod made;
mod marker;
pub mod merged_json;
mod owned_file;
mod plan_check;
pub(crate) mod priors;
mod private_file;
mod shared_block;
mod skill_folder;

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::block::{self, Markers};
use crate::error::{Error, Result};
use crate::fsio;
pub use crate::fsio::{LockNotice, LockWait};
use crate::holder::{Holder, Liveness, LivenessCheck};
use crate::journal::Durability;
use crate::ledger::{EntryRecord, FolderRef, LeaseRecord, Ledger, Recorded, workspace_key};
use crate::plan::{Plan, RelPath};
use crate::provider::{
    Namespace, PlanContext, Probes, Provider, ProviderExt, SessionRequest, VersionProbe,
    WorkspaceView,
};
use crate::receipts::schema;
pub use crate::receipts::{
    AcquireReceipt, EntryStatus, FileAction, FileKind, FileReceipt, LeaseStatus, PendingUndo,
    PriorState, ReleaseReceipt, StaleCleaned, StatusReport, StripReport, TakenOver, Warning,
};
use crate::workspace::Workspace;

use created_dir::CreatedDirs;
use kind::{Cx, Entry, Outcome, Projection, stricter};
use locked::{Access, Locked};
use marker::Marker;
use owned_file::OwnedFile;
use private_file::PrivateFiles;
use shared_block::SharedBlock;
use skill_folder::{SkillFolder, skill_path};

/// What a host asks for when a session starts.
#[derive(Clone, Debug)]
pub struct AcquireRequest {
    /// The workspace (any path to it; it is canonicalized).
    pub workspace: PathBuf,
    /// What the session brings.
    pub session: SessionRequest,
    /// What keeps the lease alive.
    pub holder: Holder,
    /// Probes the host already knows (e.g. the CLI version); anything `NotProbed` that the
    /// provider needs is probed by core.
    pub probes: Probes,
    /// An explicit path to the CLI binary, used when probing its version.
    pub binary_path: Option<PathBuf>,
    /// The user's home directory as the CLI will see it, handed to the provider
    /// ([`PlanContext::home`]): the CLI's user files there are not the project's.
    /// [`AcquireRequest::new`] takes it from `$HOME` (unset or empty: `None`).
    pub home: Option<PathBuf>,
    /// The CLI's private home, when the session gives it one (`run --runtime-root …
    /// --private-cli-home`): a folder relative to the destination root (a plan writes nowhere
    /// else; anything but a plain relative path is refused), handed to the provider
    /// ([`PlanContext::cli_home`]) for what the CLI reads only from its home.
    pub cli_home: Option<String>,
    /// Fail, with everything undone ([`Error::Undelivered`]), when the receipt's delivery
    /// verdict says the session text would not reach the model.
    pub require_delivery: bool,
}

impl AcquireRequest {
    /// A request with default probes.
    pub fn new(workspace: impl Into<PathBuf>, session: SessionRequest, holder: Holder) -> Self {
        AcquireRequest {
            workspace: workspace.into(),
            session,
            holder,
            probes: Probes::default(),
            binary_path: None,
            home: std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(PathBuf::from),
            cli_home: None,
            require_delivery: false,
        }
    }
}

/// Applies plans. Cheap to build; holds no open files between calls.
#[derive(Clone, Debug)]
pub struct Projector {
    state_dir: PathBuf,
    namespace: Namespace,
    markers: Markers,
    wait: LockWait,
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Projector {
    /// A projector keeping its ledgers under `state_dir`, marking blocks with `namespace`.
    pub fn new(state_dir: impl Into<PathBuf>, namespace: Namespace) -> Projector {
        let markers = Markers::new(&namespace);
        Projector {
            state_dir: state_dir.into(),
            namespace,
            markers,
            wait: LockWait::default(),
        }
    }

    /// This projector, waiting for another process's workspace lock as `wait` says (by default
    /// at most [`LockWait::DEFAULT_LIMIT`], telling no one).
    pub fn with_lock_wait(mut self, wait: LockWait) -> Projector {
        self.wait = wait;
        self
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// The namespace.
    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    /// The lock file under `state_dir` that serializes every operation on the workspace
    /// `canonical` (a path [`Projector::canonical_workspace`] returned).
    pub fn lock_path(state_dir: &Path, canonical: &Path) -> PathBuf {
        state_dir
            .join("workspaces")
            .join(workspace_key(canonical))
            .join("lock")
    }

    /// Canonicalizes a workspace path, requiring a directory.
    pub fn canonical_workspace(workspace: &Path) -> Result<PathBuf> {
        Ok(Workspace::open(workspace)?.path)
    }

    /// Locks `workspace` (creating its state directory), and loads its ledger.
    fn lock(&self, workspace: &Workspace) -> Result<Locked> {
        let (canonical, key) = (&workspace.path, workspace.key());
        // Asked before the lock (see `path_noted`): a note already right is left as it is.
        let noted = locked::path_noted(&self.state_dir, canonical, &key);
        let opened = Locked::open(&self.state_dir, &key, Access::Create(workspace), &self.wait)?;
        let mut locked = opened.ok_or_else(|| {
            // Unreachable: with a workspace, `Locked::open` always has a ledger (maybe empty).
            Error::invalid(canonical.display().to_string(), "no ledger was loaded")
        })?;
        // Under the lock of the folder the path names now.
        if !noted {
            let moved = locked::remember_path(&self.state_dir, canonical, &key)?;
            locked.fs_warnings.extend(moved);
        }
        Ok(locked)
    }

    /// The context one operation on `locked` works in.
    fn cx<'a>(&'a self, locked: &'a mut Locked, out: &'a mut Outcome) -> Cx<'a> {
        Cx {
            l: locked,
            ns: &self.namespace,
            markers: &self.markers,
            out,
        }
    }

    /// Probes the CLI's version when the provider needs it and the host did not say.
    fn probe(provider: &dyn Provider, request: &AcquireRequest) -> Probes {
        let mut probes = request.probes.clone();
        let Some(spec) = provider.binary() else {
            return probes;
        };
        if probes.cli_version != VersionProbe::NotProbed {
            return probes;
        }
        let binary = match &request.binary_path {
            Some(path) => Ok(path.clone()),
            None => which::which(spec.name),
        };
        probes.cli_version = match binary {
            Err(e) => VersionProbe::Missing {
                reason: format!("{} was not found on PATH: {e}", spec.name),
            },
            Ok(binary) => match std::process::Command::new(&binary)
                .args(spec.version_args)
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output()
            {
                Err(e) => VersionProbe::Unreadable {
                    binary,
                    reason: format!("it could not be run: {e}"),
                },
                Ok(out) => {
                    let text = String::from_utf8_lossy(&out.stdout);
                    match parse_version(&text) {
                        Some(version) if out.status.success() => VersionProbe::Known {
                            version,
                            binary: Some(binary),
                        },
                        _ => VersionProbe::Unreadable {
                            binary,
                            reason: format!(
                                "`{} {}` printed no version ({:?})",
                                spec.name,
                                spec.version_args.join(" "),
                                text.trim()
                            ),
                        },
                    }
                }
            },
        };
        probes
    }

    /// The plan `provider` makes for `request` in its workspace now, projecting nothing: what
    /// [`Projector::acquire`] would apply if the workspace stayed as it is (the inputs checked
    /// and the CLI probed the same way). Reads only; takes no lock.
    pub fn plan(&self, provider: &dyn Provider, request: &AcquireRequest) -> Result<Plan> {
        request.holder.validate()?;
        self.check_request(provider, request)?;
        let probes = Self::probe(provider, request);
        let workspace = Workspace::open(&request.workspace)?;
        self.plan_in(provider, request, &workspace.path, &probes, &workspace.root)
    }

    /// The provider's plan from the one context core builds (the only place a [`PlanContext`]
    /// is made), checked.
    fn plan_in(
        &self,
        provider: &dyn Provider,
        request: &AcquireRequest,
        root: &Path,
        probes: &Probes,
        view: &dyn WorkspaceView,
    ) -> Result<Plan> {
        let cli_home = match &request.cli_home {
            None => None,
            Some(home) => Some(RelPath::new(home)?),
        };
        let plan = provider.plan(&PlanContext {
            root,
            namespace: &self.namespace,
            request: &request.session,
            probes,
            view,
            home: request.home.as_deref(),
            cli_home: cli_home.as_ref(),
        })?;
        plan_check::validate_plan(provider.name(), &plan, &self.namespace)?;
        Ok(plan)
    }

    /// Starts a session: cleans stale leftovers, plans, projects, and returns the receipt.
    pub fn acquire(
        &self,
        provider: &dyn Provider,
        request: &AcquireRequest,
    ) -> Result<AcquireReceipt> {
        Ok(self.acquire_holding(provider, request)?.0)
    }

    /// [`Projector::acquire`], with a handle on the workspace folder the session was started in:
    /// kept for the release ([`Projector::release_in`]), it finds the folder wherever it is
    /// renamed or moved to meanwhile, and knows when it was deleted.
    pub fn acquire_holding(
        &self,
        provider: &dyn Provider,
        request: &AcquireRequest,
    ) -> Result<(AcquireReceipt, Workspace)> {
        // A holder that is not alive now would make the lease stale at once.
        request.holder.validate()?;
        self.check_request(provider, request)?;
        let probes = Self::probe(provider, request);
        let workspace = Workspace::open(&request.workspace)?;
        let (canonical, key) = (workspace.path.clone(), workspace.key());
        let mut locked = self.lock(&workspace)?;
        // Validated above: its leases (this session's and any earlier) are not to be stripped.
        locked.liveness.assume_alive(&request.holder);
        let mut outcome = Outcome::default();
        outcome.warnings.append(&mut locked.fs_warnings);
        // What the projection writes is kept for the delivery verdict (see `delivery`).
        locked.written = Some(Default::default());
        self.strip_stale_locked(&mut self.cx(&mut locked, &mut outcome));

        let plan = self.plan_for_start(
            provider,
            request,
            &canonical,
            &probes,
            &locked.root,
            &locked.ledger,
        )?;
        let token = format!("pf1-{key}-{}", fsio::random_hex(16)?);
        let lease = LeaseRecord {
            provider: provider.name().into(),
            holder: request.holder.clone(),
            workspace: canonical.to_str().unwrap_or_default().into(),
            acquired_at: now_secs(),
            paths: plan_paths(&plan)?.into(),
            namespace: self.namespace.as_str().into(),
            block_texts: session_contents(&plan)
                .map(|(path, text)| (path.clone(), text.to_string()))
                .collect(),
            seq: next_seq(&locked.ledger),
        };
        locked
            .ledger
            .leases
            .insert(token.clone(), Recorded::new(lease));
        let mut cx = self.cx(&mut locked, &mut outcome);
        if let Err(error) = apply_plan(&mut cx, &token, &plan) {
            // Nothing is left half done: forget entries this token recorded but never applied,
            // undo what it did apply, and keep the ledger true.
            for path in std::mem::take(&mut cx.out.unapplied) {
                cx.l.ledger.entries.remove(&path);
            }
            release_token(&mut cx, &token);
            // What the record of made paths still names of this start goes with it.
            priors::recover(&mut cx);
            let _ = cx.save(Durability::Deferred);
            return Err(error);
        }
        let private_dir = cx.l.session_path(&token)?;
        let mut launch_args = launch_args(&plan, &private_dir);
        let shared: Vec<(&RelPath, &str)> = session_contents(&plan).collect();
        SharedBlock::warn_shared(&mut cx, &token, &shared);
        // What the start just wrote is judged from what it wrote, not read again.
        let written = delivery::WrittenFs::new(&canonical, cx.l.written.take().unwrap_or_default());
        let session = delivery::Session {
            root: &canonical,
            namespace: self.namespace.as_str(),
            carrier: plan.session_text.as_ref(),
            private_dir: &private_dir,
            private_bytes: delivery::private_bytes(&plan),
            done: &outcome.files,
        };
        // The start is done and recorded. The verdict only reads (what this start wrote, from
        // `written`; the files it did not write, as any reader would, between others' atomic
        // renames), so the workspace lock is let go first, and the next command waits for one
        // thing less; unless delivery is required, when a refusal undoes the start under it.
        let held = request.require_delivery.then_some(locked);
        let delivery = delivery::judge(&written, provider, &probes, session);
        if let Some(mut locked) = held
            && !delivery.delivered
        {
            let mut cx = self.cx(&mut locked, &mut outcome);
            return Err(undo_undelivered(&mut cx, &token, &canonical, &delivery));
        }
        launch_args.extend(delivery.launch_args.iter().cloned());
        let env = launch_env(&plan, &private_dir, &delivery);
        warn_delivery(&mut outcome, &delivery, provider, &probes, request);
        let receipt = AcquireReceipt {
            schema: schema::ACQUIRE,
            token,
            provider: provider.name().to_string(),
            workspace: canonical,
            holder: request.holder.clone(),
            files: outcome.files,
            launch_args,
            env,
            session_text: plan.session_text.clone(),
            delivery,
            probes,
            notes: plan.notes.clone(),
            stale_cleaned: outcome.stale,
            kept: outcome.kept,
            warnings: outcome.warnings,
            linked: None,
            dry_run: false,
            command: Vec::new(),
        };
        Ok((receipt, workspace))
    }

    /// Refuses a request the provider cannot take, a malformed MCP server map (whatever route the
    /// provider takes it by), or a prompt carrying our marker lines.
    fn check_request(&self, provider: &dyn Provider, request: &AcquireRequest) -> Result<()> {
        request.session.check_supported(
            provider.name(),
            &provider.capabilities(),
            provider.spec().refusals(),
            request.cli_home.is_some(),
        )?;
        request
            .session
            .check_options(provider.name(), &provider.options())?;
        if let Some(servers) = &request.session.mcp_servers {
            crate::mcp::validate(servers)?;
        }
        block::validate_body(&self.markers, &request.session.prompt).map_err(|e| {
            Error::invalid(
                "the session prompt",
                format!(
                    "line {}: {}; a prompt cannot carry our marker lines",
                    e.line, e.reason
                ),
            )
        })
    }

    /// The plan a start applies: the provider's ([`Projector::plan_in`]), with its merged JSON
    /// files turned into owned files (read from the project's own file, or the prior the
    /// sessions took over), checked again as a whole.
    fn plan_for_start(
        &self,
        provider: &dyn Provider,
        request: &AcquireRequest,
        canonical: &Path,
        probes: &Probes,
        root: &fsio::Root,
        ledger: &Ledger,
    ) -> Result<Plan> {
        let mut plan = self.plan_in(provider, request, canonical, probes, root)?;
        let blocks = plan.blocks.len();
        if !plan.merged_json.is_empty() {
            merged_json::into_owned(root, ledger, &mut plan)?;
        }
        // What the session creates is hidden from git while it lives.
        git_exclude::add_to_plan(root, &mut plan, ledger, &self.namespace)?;
        if !plan.merged_json.is_empty() || plan.blocks.len() != blocks {
            plan_check::validate_plan(provider.name(), &plan, &self.namespace)?;
        }
        Ok(plan)
    }

    /// What [`Projector::acquire`] would do, as its receipt marked `dry_run`, changing nothing:
    /// no lease, no state directory, lock file or ledger record, no file in the workspace. The
    /// ledger is read when one exists (under its lock when the lock file exists, so a start in
    /// progress is waited for, as `status` does); the holder is not checked (nothing will hold
    /// anything). Private files are shown under the token [`dry_run::DRY_RUN_TOKEN`].
    pub fn dry_run(
        &self,
        provider: &dyn Provider,
        request: &AcquireRequest,
    ) -> Result<AcquireReceipt> {
        self.check_request(provider, request)?;
        let probes = Self::probe(provider, request);
        let workspace = Workspace::open(&request.workspace)?;
        let (canonical, key) = (workspace.path.clone(), workspace.key());
        // The lock (when its file exists) is held until `opened` drops, after the plan is read.
        let mut opened = Locked::open(
            &self.state_dir,
            &key,
            Access::ReadOnly(&workspace),
            &self.wait,
        )?;
        let warnings = opened
            .as_mut()
            .map(|l| std::mem::take(&mut l.fs_warnings))
            .unwrap_or_default();
        let empty = Ledger::new(FolderRef::of(&workspace));
        let ledger = opened.as_ref().map_or(&empty, |l| &l.ledger);
        let root = &workspace.root;
        let plan = self.plan_for_start(provider, request, &canonical, &probes, root, ledger)?;
        let private_dir = self
            .state_dir
            .join("workspaces")
            .join(&key)
            .join(locked::session_dir(dry_run::DRY_RUN_TOKEN)?.as_str());
        let view = dry_run::View {
            root,
            ledger,
            ns: &self.namespace,
            markers: &self.markers,
        };
        let files = dry_run::predict(&view, &plan, &private_dir)?;
        let projected = dry_run::Projected::new(&view, &plan, &canonical)?;
        let session = delivery::Session {
            root: &canonical,
            namespace: self.namespace.as_str(),
            carrier: plan.session_text.as_ref(),
            private_dir: &private_dir,
            private_bytes: delivery::private_bytes(&plan),
            done: &[],
        };
        let delivery = delivery::judge(&projected, provider, &probes, session);
        if !delivery.delivered && request.require_delivery {
            return Err(undelivered(
                &canonical,
                &delivery,
                "a start would be refused (nothing was written: this is a dry run)",
            ));
        }
        let mut launch_args = launch_args(&plan, &private_dir);
        launch_args.extend(delivery.launch_args.iter().cloned());
        let env = launch_env(&plan, &private_dir, &delivery);
        let mut notes = plan.notes.clone();
        notes.extend(dry_run::stale_note(ledger));
        drop(opened);
        Ok(AcquireReceipt {
            schema: schema::ACQUIRE,
            token: dry_run::DRY_RUN_TOKEN.to_string(),
            provider: provider.name().to_string(),
            workspace: canonical,
            holder: request.holder.clone(),
            files,
            launch_args,
            env,
            session_text: plan.session_text.clone(),
            delivery,
            probes,
            notes,
            stale_cleaned: Vec::new(),
            kept: Vec::new(),
            warnings,
            linked: None,
            dry_run: true,
            command: Vec::new(),
        })
    }

    /// Ends a session. Unknown or already released tokens are not an error (`released: false`).
    ///
    /// The session's workspace folder is found where the ledger last saw it or where the session
    /// was acquired (or beside either, renamed), its identity checked; a folder found nowhere is
    /// [`Error::WorkspaceLost`] (nothing changed, the lease stays recorded), never a silent
    /// no-op. [`Projector::release_in`] tells where it is now.
    pub fn release(&self, token: &str) -> Result<ReleaseReceipt> {
        self.release_from(token, None)
    }

    /// [`Projector::release`] of a session whose workspace folder is `workspace` now: a handle
    /// kept since [`Projector::acquire_holding`] (which follows the folder through renames and
    /// moves), or one opened on the path the host says it moved to. A folder of another identity
    /// is not taken for it.
    pub fn release_in(&self, token: &str, workspace: &Workspace) -> Result<ReleaseReceipt> {
        self.release_from(token, Some(workspace))
    }

    fn release_from(&self, token: &str, hint: Option<&Workspace>) -> Result<ReleaseReceipt> {
        let mut receipt = ReleaseReceipt {
            schema: schema::RELEASE,
            token: token.to_string(),
            released: false,
            workspace: None,
            files: Vec::new(),
            kept: Vec::new(),
            stale_cleaned: Vec::new(),
            warnings: Vec::new(),
            pending: Vec::new(),
        };
        let Some(key) = token_key(token) else {
            return Ok(receipt);
        };
        let access = Access::Existing { token, hint };
        let Some(mut locked) = Locked::open(&self.state_dir, key, access, &self.wait)? else {
            return Ok(receipt);
        };
        receipt.workspace = Some(locked.ledger.workspace.clone());
        let mut outcome = Outcome::default();
        outcome.warnings.append(&mut locked.fs_warnings);
        let mut cx = self.cx(&mut locked, &mut outcome);
        if cx.l.ledger.leases.contains_key(token) {
            release_token(&mut cx, token);
            receipt.released = true;
        }
        // A block no entry records is a start's to remove (or strip-stale's), not a release's:
        // a release touches what its own lease and dead ones hold, nothing else.
        cx.l.unrecorded_blocks.clear();
        self.strip_stale_locked(&mut cx);
        cx.save(Durability::Deferred)?;
        receipt.files = outcome.files;
        receipt.kept = outcome.kept;
        receipt.stale_cleaned = outcome.stale;
        receipt.warnings = outcome.warnings;
        receipt.pending = outcome.pending;
        Ok(receipt)
    }

    /// Cleans every lease whose holder is dead, then every entry no live lease holds, then the
    /// priors no ledger names (a lost state directory).
    fn strip_stale_locked(&self, cx: &mut Cx<'_>) {
        let check = &mut cx.l.liveness;
        let dead: Vec<(String, String, String)> =
            cx.l.ledger
                .leases
                .iter()
                .filter_map(|(token, lease)| match check.liveness(lease.holder()) {
                    // A holder that cannot be judged from here is never taken for dead.
                    Liveness::Alive | Liveness::Unknown { .. } => None,
                    Liveness::Dead { reason } => {
                        Some((token.to_string(), lease.provider().to_string(), reason))
                    }
                })
                .collect();
        // Every dead lease goes before any entry is undone: a block is given back the text of a
        // session that lives, and told from the user's lines by every dead one's.
        for (token, provider, reason) in dead {
            forget_lease(cx, &token);
            cx.out.stale.push(StaleCleaned {
                token,
                provider,
                reason,
            });
        }
        undo_orphans(cx);
        strip_unrecorded_blocks(cx);
        // Every write happens under this lock, so a temporary file found now was left by a process
        // killed mid-write; beside a path others still hold, nothing above has removed it.
        for (path, entry) in &cx.l.ledger.entries {
            cx.l.remove_temp_files(path);
            if let Some(prior) = priors::prior_of(entry) {
                let _ = priors::remove_temp_files(&cx.l.root, prior, path);
            }
        }
        priors::recover(cx);
    }

    /// Cleans leftovers whose holders are dead; never touches a live holder's projections.
    pub fn strip_stale(&self, workspace: &Path) -> Result<StripReport> {
        let workspace = Workspace::open(workspace)?;
        let canonical = workspace.path.clone();
        let mut locked = self.lock(&workspace)?;
        let mut outcome = Outcome::default();
        outcome.warnings.append(&mut locked.fs_warnings);
        let mut cx = self.cx(&mut locked, &mut outcome);
        self.strip_stale_locked(&mut cx);
        cx.save(Durability::Deferred)?;
        Ok(StripReport {
            schema: schema::STRIP_STALE,
            workspace: canonical,
            stale_cleaned: outcome.stale,
            files: outcome.files,
            kept: outcome.kept,
            warnings: outcome.warnings,
            pending: outcome.pending,
        })
    }

    /// Leases, holders, liveness and leftovers of a workspace. Changes nothing: no state
    /// directory, lock file or ledger is created.
    pub fn status(&self, workspace: &Path) -> Result<StatusReport> {
        let workspace = Workspace::open(workspace)?;
        let (canonical, key) = (workspace.path.clone(), workspace.key());
        let opened = Locked::open(
            &self.state_dir,
            &key,
            Access::ReadOnly(&workspace),
            &self.wait,
        )?;
        let warnings: Vec<Warning> = locked::earlier_folder(&self.state_dir, &canonical, &key)
            .into_iter()
            .collect();
        let Some(mut locked) = opened else {
            return Ok(StatusReport {
                warnings,
                schema: schema::STATUS,
                workspace: canonical,
                leases: Vec::new(),
                entries: Vec::new(),
                created_dirs: Vec::new(),
                stale: Vec::new(),
                kept: Vec::new(),
                taken_over: Vec::new(),
                pending: Vec::new(),
            });
        };
        let mut outcome = Outcome::default();
        let cx = self.cx(&mut locked, &mut outcome);
        let ledger = &cx.l.ledger;
        let mut stale = Vec::new();
        let mut check = LivenessCheck::new();
        let leases: Vec<LeaseStatus> = ledger
            .leases
            .iter()
            .map(|(token, lease)| {
                let liveness = check.liveness(lease.holder());
                if liveness.is_dead() {
                    stale.push(token.to_string());
                }
                LeaseStatus {
                    token: token.to_string(),
                    provider: lease.provider().to_string(),
                    holder: lease.holder().clone(),
                    liveness,
                    acquired_at: lease.acquired_at(),
                    paths: lease.paths().to_vec(),
                }
            })
            .collect();
        let dead: std::collections::BTreeSet<String> = stale.iter().cloned().collect();
        let entries = ledger
            .entries
            .iter()
            .map(|(path, entry)| {
                let (mut holders, mut live_holders) = (0, 0);
                for (token, _) in crate::ledger::leases_holding(&ledger.leases, path) {
                    holders += 1;
                    live_holders += usize::from(!dead.contains(token));
                }
                if live_holders == 0 {
                    stale.push(path.to_string());
                }
                EntryStatus {
                    path: path.clone(),
                    kind: entry_kind(entry),
                    holders,
                    live_holders,
                }
            })
            .collect();
        let taken_over = ledger
            .entries
            .iter()
            .filter_map(|(path, record)| entry_status(&cx, Entry { path, record }))
            .collect();
        Ok(StatusReport {
            schema: schema::STATUS,
            workspace: canonical,
            leases,
            entries,
            created_dirs: ledger.created_dirs.iter().cloned().collect(),
            stale,
            kept: ledger.kept.clone(),
            taken_over,
            pending: ledger
                .pending
                .iter()
                .map(|(path, reason)| PendingUndo {
                    path: cx.shown(path),
                    reason: reason.clone(),
                })
                .collect(),
            warnings,
        })
    }
}

/// The plan's launch arguments, with private files named by their path in `session_dir`.
fn launch_args(plan: &Plan, session_dir: &Path) -> Vec<String> {
    let path = |name: &str| session_dir.join(name).display().to_string();
    plan.launch_args
        .iter()
        .map(|arg| arg.render(path))
        .collect()
}

/// The plan's environment, with private paths in `session_dir`, and the variables the delivery
/// verdict adds (a budget the profile raises through the environment: Copilot's prompt limit).
fn launch_env(
    plan: &Plan,
    session_dir: &Path,
    delivery: &crate::guidance::DeliveryVerdict,
) -> std::collections::BTreeMap<String, String> {
    let mut env: std::collections::BTreeMap<String, String> = plan
        .env
        .iter()
        .map(|(name, value)| (name.clone(), value.render(session_dir)))
        .collect();
    env.extend(delivery.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

/// Every path a plan projects into the workspace.
fn plan_paths(plan: &Plan) -> Result<Vec<RelPath>> {
    let mut paths: Vec<RelPath> = Vec::new();
    paths.extend(plan.blocks.iter().map(|b| b.path.clone()));
    paths.extend(plan.owned_files.iter().map(|o| o.path.clone()));
    paths.extend(plan.markers.iter().map(|m| m.path.clone()));
    for skill in &plan.skills {
        paths.push(skill_path(skill)?);
    }
    Ok(paths)
}

/// Records the intent of every projection of `plan` in the ledger, saves it (durably when any
/// asks), then applies each. On error the caller undoes this token.
fn apply_plan(cx: &mut Cx<'_>, token: &str, plan: &Plan) -> Result<()> {
    let paths = plan_paths(plan)?;
    let mut intent = CreatedDirs::record(cx, token, &paths)?;
    for block in &plan.blocks {
        intent = stricter(intent, SharedBlock::record(cx, token, block)?);
    }
    for owned in &plan.owned_files {
        intent = stricter(intent, OwnedFile::record(cx, token, owned)?);
    }
    for marker in &plan.markers {
        intent = stricter(intent, Marker::record(cx, token, marker)?);
    }
    for skill in &plan.skills {
        intent = stricter(intent, SkillFolder::record(cx, token, skill)?);
    }
    intent = stricter(
        intent,
        PrivateFiles::record(cx, token, &plan.private_files)?,
    );
    cx.save(intent)?;
    // What this start makes where nothing stood is recorded in the workspace before it is
    // made: a lost state directory cannot leave it behind.
    made::note_start(cx, plan)?;
    // Every write happens under the lock, so a temporary file beside a planned path was left by a
    // process killed mid-write (whose record may be gone with a lost state directory).
    for path in &paths {
        cx.l.remove_temp_files(path);
    }

    CreatedDirs::apply(cx, token, &paths)?;
    for block in &plan.blocks {
        SharedBlock::apply(cx, token, block)?;
    }
    for owned in &plan.owned_files {
        OwnedFile::apply(cx, token, owned)?;
    }
    for marker in &plan.markers {
        Marker::apply(cx, token, marker)?;
    }
    PrivateFiles::apply(cx, token, &plan.private_files)?;
    // What owned files last wrote must be recorded before a skill's own saves.
    if !plan.owned_files.is_empty() {
        cx.save(Durability::Durable)?;
    }
    for skill in &plan.skills {
        SkillFolder::apply(cx, token, skill)?;
    }
    cx.save(Durability::Deferred)
}

/// `acquire --require-delivery` and the text would not reach the model: undoes everything
/// `token` applied and returns the error saying why.
fn undo_undelivered(
    cx: &mut Cx<'_>,
    token: &str,
    workspace: &Path,
    delivery: &crate::guidance::DeliveryVerdict,
) -> Error {
    release_token(cx, token);
    priors::recover(cx);
    let undone = match cx.save(Durability::Deferred) {
        Err(e) => format!("undoing it could not be recorded ({e})"),
        Ok(()) if !cx.out.pending.is_empty() => format!(
            "{} undo(s) are left pending, for the next start to retry",
            cx.out.pending.len()
        ),
        Ok(()) => "everything the session projected was undone".to_string(),
    };
    undelivered(workspace, delivery, &undone)
}

/// The refusal of a session whose text would not reach the model while delivery was required;
/// `then` says what became of it.
fn undelivered(workspace: &Path, delivery: &crate::guidance::DeliveryVerdict, then: &str) -> Error {
    let path = delivery
        .path
        .as_ref()
        .map_or_else(|| workspace.to_path_buf(), PathBuf::from);
    let why = delivery.note.clone().unwrap_or_default();
    Error::Undelivered {
        path,
        reason: format!(
            "the session text would not reach the model ({} route): {why}; delivery was required, so {then}",
            delivery.via
        ),
    }
}

/// What a start warns of about its delivery: a route that does not deliver
/// ([`warn_undelivered`]), a session text holding an import ([`warn_imports`]).
fn warn_delivery(
    out: &mut Outcome,
    delivery: &crate::guidance::DeliveryVerdict,
    provider: &dyn Provider,
    probes: &Probes,
    request: &AcquireRequest,
) {
    warn_undelivered(out, delivery);
    warn_imports(out, delivery, provider, probes, &request.session.prompt);
}

/// A file route that does not deliver is also a warning (a provider that projects nothing says
/// so in its notes).
fn warn_undelivered(out: &mut Outcome, delivery: &crate::guidance::DeliveryVerdict) {
    if delivery.delivered || delivery.via == "not_projected" {
        return;
    }
    let why = delivery.note.clone().unwrap_or_default();
    out.warn(
        delivery.path.clone().unwrap_or_default(),
        format!("the session text will not reach the model: {why}"),
    );
}

/// A session text that reaches a CLI reading `@path` imports, holding one: the CLI sends the
/// named file's text in its place (Gemini CLI, when there is no such file, a note that the
/// import failed), so the model does not see the text as written.
fn warn_imports(
    out: &mut Outcome,
    delivery: &crate::guidance::DeliveryVerdict,
    provider: &dyn Provider,
    probes: &Probes,
    text: &str,
) {
    if !delivery.delivered || !text.contains('@') {
        return;
    }
    if let Some(import) = crate::guidance::first_import(text)
        && provider.discovery_for(probes).imports
    {
        out.warn(
            delivery.path.clone().unwrap_or_default(),
            format!(
                "the session text holds `@{import}`, which the CLI reads as an import: it sends the file's text in its place (or a note that the import failed); put it in backticks to keep it as written"
            ),
        );
    }
}

/// The order of a lease taken now: one more than that of every lease recorded.
fn next_seq(ledger: &crate::ledger::Ledger) -> u64 {
    ledger
        .leases
        .values()
        .map(Recorded::seq)
        .max()
        .unwrap_or(0)
        .saturating_add(1)
}

/// What a session puts in each file other sessions may share: its text in each block, its
/// content in each file written whole. Its lease records them (`LeaseRecord::block_texts`), so
/// the newest live session's comes back when another ends.
fn session_contents(plan: &Plan) -> impl Iterator<Item = (&RelPath, &str)> {
    let blocks = plan.blocks.iter().map(|b| (&b.path, b.body.as_str()));
    let owned = plan
        .owned_files
        .iter()
        .map(|o| (&o.path, o.content.as_str()));
    blocks.chain(owned)
}

/// Removes `token`'s lease and undoes every entry it was the last holder of.
fn release_token(cx: &mut Cx<'_>, token: &str) {
    if forget_lease(cx, token) {
        undo_orphans(cx);
    }
}

/// Removes `token`'s lease (and with it its hold on every entry its paths name) and its private
/// files; whether there was such a lease. The entries it was the last holder of are left for
/// [`undo_orphans`].
fn forget_lease(cx: &mut Cx<'_>, token: &str) -> bool {
    let Some(lease) = cx.l.ledger.leases.remove(token) else {
        return false;
    };
    // The block a released session's text is in may still hold it (see `shared_block`).
    let ns = lease.namespace();
    for (path, text) in lease.block_texts().iter() {
        // Every path was checked when the lease was recorded or read.
        if let Ok(path) = RelPath::new(path) {
            cx.l.released_texts
                .push((path, ns.to_string(), text.to_string()));
        }
    }
    if token_key(token).is_some()
        && let Err(e) = PrivateFiles::undo(cx, token)
    {
        cx.l.sessions_unswept();
        let shown = cx.l.session_path(token).unwrap_or_default();
        cx.warn(shown.display(), e.to_string());
    }
    true
}

/// Undoes every entry no lease holds any more, then removes directories we created that no
/// entry needs and that are empty. An entry that cannot be undone safely stays recorded and is
/// reported; it is retried at the next start.
fn undo_orphans(cx: &mut Cx<'_>) {
    let ledger = &cx.l.ledger;
    // One walk of the leases per entry: whether any holds it, and a block's live namespaces.
    let mut blocks: Vec<(RelPath, std::collections::BTreeSet<String>)> = Vec::new();
    let mut orphans: Vec<RelPath> = Vec::new();
    // Owned files still held whose content a session released here may have put there.
    let mut shared_owned: Vec<(RelPath, String)> = Vec::new();
    for (path, entry) in &ledger.entries {
        let is_block = matches!(entry, EntryRecord::Block { .. });
        // (Once per command: an undo run again after stale cleaning finds it done.)
        if let EntryRecord::Owned { namespace, .. } = entry
            && cx.l.released_texts.iter().any(|(p, _, _)| p == path)
            && !cx.out.files.iter().any(|f| f.path == path.as_str())
            && crate::ledger::leases_holding(&ledger.leases, path)
                .next()
                .is_some()
        {
            shared_owned.push((path.clone(), namespace.clone()));
        }
        let mut held = false;
        let mut namespaces = shared_block::LiveNamespaces::default();
        for (_, lease) in crate::ledger::leases_holding(&ledger.leases, path) {
            held = true;
            if !is_block {
                break;
            }
            namespaces.note(lease.namespace());
        }
        if is_block {
            blocks.push((path.clone(), namespaces.into_set()));
        }
        if !held {
            orphans.push(path.clone());
        }
    }
    // Blocks: one per namespace, each out once no holder of its own namespace is left.
    for (path, live) in blocks {
        shared_block::release_namespaces(cx, &path, live);
    }
    for (path, ns) in shared_owned {
        if let Err(e) = cx.in_namespace(&ns, |cx| OwnedFile::give_back(cx, &path)) {
            cx.warn(
                cx.shown(&path),
                format!("the file could not be given a live session's content back: {e}"),
            );
        }
    }
    for path in orphans {
        let Some(record) = cx.l.ledger.entries.get(&path).cloned() else {
            continue;
        };
        let entry = Entry {
            path: &path,
            record: &record,
        };
        match cx.in_namespace(record.namespace(), |cx| undo_entry(cx, entry)) {
            Ok(()) => {
                cx.l.ledger.entries.remove(&path);
                cx.settled(&path);
                cx.l.remove_temp_files(&path);
            }
            Err(e) => cx.pending(&path, &e),
        }
    }
    let mut dirs: Vec<RelPath> = cx.l.ledger.created_dirs.iter().cloned().collect();
    // Deepest first.
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for dir in dirs {
        if let Err(e) = CreatedDirs::undo(cx, &dir) {
            cx.warn(cx.shown(&dir), e.to_string());
        }
    }
}

/// Undoes one entry by its kind.
fn undo_entry(cx: &mut Cx<'_>, entry: Entry<'_>) -> Result<()> {
    match entry.record {
        EntryRecord::Block { .. } => SharedBlock::undo(cx, entry),
        EntryRecord::Owned { .. } => OwnedFile::undo(cx, entry),
        EntryRecord::Marker { .. } => Marker::undo(cx, entry),
        EntryRecord::Skill { .. } => SkillFolder::undo(cx, entry),
    }
}

/// What `status` shows of one entry's prior, by its kind.
fn entry_status(cx: &Cx<'_>, entry: Entry<'_>) -> Option<TakenOver> {
    match entry.record {
        EntryRecord::Block { .. } => SharedBlock::status(cx, entry),
        EntryRecord::Owned { .. } => OwnedFile::status(cx, entry),
        EntryRecord::Marker { .. } => Marker::status(cx, entry),
        EntryRecord::Skill { .. } => SkillFolder::status(cx, entry),
    }
}

/// The receipt kind of an entry.
fn entry_kind(entry: &EntryRecord) -> FileKind {
    match entry {
        EntryRecord::Block { .. } => FileKind::Block,
        EntryRecord::Owned { .. } => FileKind::Owned,
        EntryRecord::Marker { .. } => FileKind::Marker,
        EntryRecord::Skill { .. } => FileKind::Skill,
    }
}

/// Removes the block from each file the ledger lists that no entry records: its lease's record
/// was lost to a power loss (the lease died with the machine).
fn strip_unrecorded_blocks(cx: &mut Cx<'_>) {
    for path in std::mem::take(&mut cx.l.unrecorded_blocks) {
        if cx.l.ledger.entries.contains_key(&path) {
            continue;
        }
        // Every namespace that ever wrote a block there, and this command's.
        let mut namespaces: Vec<String> =
            cx.l.ledger
                .block_bodies
                .get(&path)
                .map(|by_ns| by_ns.keys().cloned().collect())
                .unwrap_or_default();
        if !namespaces.iter().any(|ns| ns == cx.ns.as_str()) {
            namespaces.push(cx.ns.as_str().to_string());
        }
        for ns in namespaces {
            match cx.in_namespace(&ns, |cx| SharedBlock::take_out(cx, &path)) {
                Ok(true) => cx.warn(
                    cx.shown(&path),
                    "removed a session block no lease records (its record was lost, as a power loss can do); the file is as the user left it",
                ),
                Ok(false) => {}
                Err(e) => cx.warn(cx.shown(&path), e.to_string()),
            }
        }
        // A crash mid-write of that block left its temporary file too.
        cx.l.remove_temp_files(&path);
    }
}

/// The workspace key a token names, if it is shaped like one of ours.
fn token_key(token: &str) -> Option<&str> {
    let rest = token.strip_prefix("pf1-")?;
    let (key, random) = rest.split_once('-')?;
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(key, 16) && hex(random, 32)).then_some(key)
}

/// The first `MAJOR.MINOR.PATCH` (with optional pre-release) in a `--version` output, e.g.
/// `2.1.284 (Claude Code)` → `2.1.284`.
pub fn parse_version(text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .map(|word| word.trim_start_matches('v'))
        .find(|word| semver::Version::parse(word).is_ok())
        .map(str::to_string)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_found_in_version_output() {
        assert_eq!(
            parse_version("2.1.284 (Claude Code)").as_deref(),
            Some("2.1.284")
        );
        assert_eq!(
            parse_version("codex-cli v0.46.0\n").as_deref(),
            Some("0.46.0")
        );
        assert_eq!(parse_version("garbage"), None);
        assert_eq!(parse_version(""), None);
    }

    #[test]
    fn tokens_name_their_workspace() {
        let t = format!("pf1-{}-{}", "0123456789abcdef", "0".repeat(32));
        assert_eq!(token_key(&t), Some("0123456789abcdef"));
        assert_eq!(token_key("pf1-zz-00"), None);
        assert_eq!(token_key("nope"), None);
        assert_eq!(token_key("pf1-../../etc-0"), None);
    }
}
