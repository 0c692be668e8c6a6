//! The projector: applies plans under the workspace lock (acquire), takes them out again
//! (release), and reports and cleans crash leftovers (status, strip-stale).
//!
//! Every operation takes the workspace's exclusive lock, reads the ledger, cleans leftovers whose
//! holders are dead, does its work, and writes the ledger back, so concurrent processes never lose
//! an update. Acquire records its intent in the ledger *before* touching the workspace, so a crash
//! at any point leaves something the next start can clean: a lease whose holder is dead. Which
//! records are synced first, and why the others may wait, is [`crate::journal`]'s to say.

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::block::{self, Markers, UpsertAction};
use crate::error::{Error, Result};
use crate::fsio::{self, LockGuard, Root};
use crate::generated::{self, Provenance};
use crate::holder::{Holder, Liveness, LivenessCheck};
use crate::journal::{Durability, Journal};
use crate::ledger::{EntryRecord, KeptRecord, LeaseRecord, Ledger, Stash, workspace_key};
use crate::plan::{LaunchArg, MarkerKind, OwnedRole, Plan, RelPath, SessionTextCarrier};
use crate::provider::{
    EntryKind, Namespace, PlanContext, Probes, Provider, SessionRequest, VersionProbe,
};
use crate::skills::{self, PriorAt};

/// Schema names of the receipts, stable for hosts in other languages.
pub mod schema {
    /// [`super::AcquireReceipt`].
    pub const ACQUIRE: &str = "projectfile.acquire.v1";
    /// [`super::ReleaseReceipt`].
    pub const RELEASE: &str = "projectfile.release.v1";
    /// [`super::StatusReport`].
    pub const STATUS: &str = "projectfile.status.v1";
    /// [`super::StripReport`].
    pub const STRIP_STALE: &str = "projectfile.strip_stale.v1";
}

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
        }
    }
}

/// One path the receipt reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileReceipt {
    /// Relative to the workspace (or absolute, for private files).
    pub path: String,
    /// `block`, `owned`, `marker`, `skill`, `dir` or `private`.
    pub kind: &'static str,
    /// What happened: `inserted`, `refreshed`, `unchanged`, `created`, `replaced`, `written`,
    /// `exists` (a project's own path left alone), `held` (already ours, counted once more),
    /// `removed`, `restored`, `kept`; for skills also `taken_over` (a same-named folder moved
    /// into the stash) and `reclaimed` (a leftover of ours whose record was lost, proven by its
    /// marker's manifest).
    pub action: &'static str,
}

/// A stale lease cleaned before this operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StaleCleaned {
    /// Its token.
    pub token: String,
    /// Its provider.
    pub provider: String,
    /// Why its holder counts as dead.
    pub reason: String,
}

/// A problem met while cleaning that did not stop the operation (the path is left as it was).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Warning {
    /// The path concerned.
    pub path: String,
    /// One sentence.
    pub message: String,
}

/// What `acquire` did.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AcquireReceipt {
    /// [`schema::ACQUIRE`].
    pub schema: &'static str,
    /// The lease token; release with it.
    pub token: String,
    /// The provider.
    pub provider: String,
    /// The canonical workspace.
    pub workspace: PathBuf,
    /// The lease holder.
    pub holder: Holder,
    /// Every path touched.
    pub files: Vec<FileReceipt>,
    /// Arguments to append to the CLI's command line.
    pub launch_args: Vec<String>,
    /// Environment to set for the CLI.
    pub env: BTreeMap<String, String>,
    /// Where the session text went.
    pub session_text: Option<SessionTextCarrier>,
    /// What core probed.
    pub probes: Probes,
    /// Plain sentences from the provider.
    pub notes: Vec<String>,
    /// Stale leases cleaned first.
    pub stale_cleaned: Vec<StaleCleaned>,
    /// User bytes set aside during this operation.
    pub kept: Vec<KeptRecord>,
    /// Cleaning problems that did not stop the operation.
    pub warnings: Vec<Warning>,
    /// `run` in a linked runtime: the runtime, its links and the sandbox (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linked: Option<crate::runtime::LinkedReceipt>,
}

/// What `release` did.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReleaseReceipt {
    /// [`schema::RELEASE`].
    pub schema: &'static str,
    /// The token asked for.
    pub token: String,
    /// Whether a live lease was released (false: unknown or already released; not an error).
    pub released: bool,
    /// The workspace, when the token named one.
    pub workspace: Option<PathBuf>,
    /// Every path touched.
    pub files: Vec<FileReceipt>,
    /// User bytes set aside.
    pub kept: Vec<KeptRecord>,
    /// Stale leases cleaned along the way.
    pub stale_cleaned: Vec<StaleCleaned>,
    /// Cleaning problems that did not stop the release.
    pub warnings: Vec<Warning>,
}

/// One lease as `status` shows it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LeaseStatus {
    /// Its token.
    pub token: String,
    /// Its provider.
    pub provider: String,
    /// Its holder.
    pub holder: Holder,
    /// Whether the holder lives.
    pub liveness: Liveness,
    /// Seconds since the epoch.
    pub acquired_at: u64,
    /// The paths it holds.
    pub paths: Vec<RelPath>,
}

/// One projected path as `status` shows it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EntryStatus {
    /// The path.
    pub path: RelPath,
    /// `block`, `owned`, `marker` or `skill`.
    pub kind: &'static str,
    /// How many leases hold it.
    pub holders: usize,
    /// How many of them are alive.
    pub live_holders: usize,
}

/// A folder we took over (a same-named skill folder of the project's, or an earlier version's),
/// kept until the last session ends.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TakenOver {
    /// The skill folder, relative to the workspace.
    pub path: RelPath,
    /// Where its prior contents are kept (absolute, under the state directory).
    pub stash: PathBuf,
    /// `stashed` (whole in the stash), `moving` (at a hidden name beside the folder: a move was
    /// interrupted) or `in_place` (not moved yet: the folder there is still the prior).
    pub state: &'static str,
}

/// What `status` reports.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatusReport {
    /// [`schema::STATUS`].
    pub schema: &'static str,
    /// The canonical workspace.
    pub workspace: PathBuf,
    /// Leases.
    pub leases: Vec<LeaseStatus>,
    /// Projected paths.
    pub entries: Vec<EntryStatus>,
    /// Directories we created.
    pub created_dirs: Vec<RelPath>,
    /// Leftovers the next start would clean (tokens of dead leases, paths without live holders).
    pub stale: Vec<String>,
    /// User bytes set aside so far.
    pub kept: Vec<KeptRecord>,
    /// Folders taken over, and where their prior contents are kept.
    pub taken_over: Vec<TakenOver>,
}

/// What `strip-stale` did.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StripReport {
    /// [`schema::STRIP_STALE`].
    pub schema: &'static str,
    /// The canonical workspace.
    pub workspace: PathBuf,
    /// Leases cleaned.
    pub stale_cleaned: Vec<StaleCleaned>,
    /// Paths touched.
    pub files: Vec<FileReceipt>,
    /// User bytes set aside.
    pub kept: Vec<KeptRecord>,
    /// Problems that did not stop the cleaning.
    pub warnings: Vec<Warning>,
}

/// Applies plans. Cheap to build; holds no open files between calls.
#[derive(Clone, Debug)]
pub struct Projector {
    state_dir: PathBuf,
    namespace: Namespace,
    markers: Markers,
}

/// One workspace, locked, with its ledger loaded.
struct Locked {
    root: Root,
    state: Root,
    ledger: Ledger,
    /// Where the ledger is kept.
    journal: Journal,
    /// How many kept records a durable save has recorded (more must be saved durably).
    kept_durable: std::cell::Cell<usize>,
    /// Files of [`Ledger::block_files`] no entry recorded when the ledger was read: each may
    /// hold a block whose lease's record a power loss took, checked by the next strip.
    unrecorded_blocks: Vec<RelPath>,
    /// Warnings about the file systems of the state directory and the workspace.
    fs_warnings: Vec<Warning>,
    /// This command's answers on which holders live, each asked once.
    liveness: LivenessCheck,
    _lock: LockGuard,
}

/// What undoing entries produced.
#[derive(Default)]
struct Outcome {
    files: Vec<FileReceipt>,
    kept: Vec<KeptRecord>,
    warnings: Vec<Warning>,
    stale: Vec<StaleCleaned>,
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn rel(text: &str) -> Result<RelPath> {
    RelPath::new(text)
}

impl Projector {
    /// A projector keeping its ledgers under `state_dir`, marking blocks with `namespace`.
    pub fn new(state_dir: impl Into<PathBuf>, namespace: Namespace) -> Projector {
        let markers = Markers::new(&namespace);
        Projector {
            state_dir: state_dir.into(),
            namespace,
            markers,
        }
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// The namespace.
    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    fn workspaces_dir(&self) -> PathBuf {
        self.state_dir.join("workspaces")
    }

    /// Canonicalizes a workspace path, requiring a directory.
    #[allow(clippy::disallowed_methods)] // names the root once; nothing below it is resolved so
    pub fn canonical_workspace(workspace: &Path) -> Result<PathBuf> {
        let canonical = workspace
            .canonicalize()
            .map_err(|e| Error::io(workspace, "resolve the workspace", e))?;
        if !canonical.is_dir() {
            return Err(Error::Unsafe {
                path: canonical,
                reason: "the workspace is not a directory".to_string(),
            });
        }
        require_utf8(&canonical, "the workspace")?;
        Ok(canonical)
    }

    /// Locks the workspace `canonical` (creating its state directory) and loads its ledger.
    fn lock(&self, canonical: &Path) -> Result<Locked> {
        let key = workspace_key(canonical);
        self.lock_key(&key, Some(canonical))?.ok_or_else(|| {
            // Unreachable: with `canonical`, `lock_key` always has a ledger (maybe empty).
            Error::invalid(canonical.display().to_string(), "no ledger was loaded")
        })
    }

    /// Locks the workspace whose state directory is `key` and loads its ledger. Without
    /// `canonical` (a release knows only its token's key), the workspace is the one the ledger
    /// records, and `Ok(None)` means nothing is recorded there.
    fn lock_key(&self, key: &str, canonical: Option<&Path>) -> Result<Option<Locked>> {
        let state_path = self.workspaces_dir().join(key);
        require_utf8(&state_path, "the state directory")?;
        let state = match canonical {
            Some(_) => Root::create_private(&state_path)?,
            // A release of a token never recorded here creates nothing.
            None if !state_path.exists() => return Ok(None),
            None => Root::open(&state_path)?,
        };
        // Locks and atomic renames must be real: refuse or warn on remote file systems.
        let mut fs_warnings = Vec::new();
        let mut check = |path: &Path, role| -> Result<bool> {
            let family = fsio::file_system_family(path)?;
            if let Some(message) = fsio::apply_policy(family, path, role)? {
                let path = path.display().to_string();
                fs_warnings.push(Warning { path, message });
            }
            Ok(family.is_some())
        };
        let remote_state = check(&state_path, fsio::FsRole::State)?;
        let lock = fsio::lock_exclusive(&state_path.join("lock"))?;
        let (journal, ledger) = Journal::load(&state, canonical, remote_state)?;
        let Some(ledger) = ledger else {
            return Ok(None);
        };
        if workspace_key(&ledger.workspace) != key {
            return Err(Error::Ledger {
                path: journal.path().to_path_buf(),
                reason: format!(
                    "it records {}, whose key is not {key}",
                    ledger.workspace.display()
                ),
            });
        }
        check(&ledger.workspace, fsio::FsRole::Workspace)?;
        let unrecorded_blocks = ledger
            .block_files
            .iter()
            .filter(|path| !ledger.entries.contains_key(*path))
            .cloned()
            .collect();
        Ok(Some(Locked {
            root: Root::open(&ledger.workspace)?,
            kept_durable: std::cell::Cell::new(ledger.kept.len()),
            unrecorded_blocks,
            state,
            ledger,
            journal,
            fs_warnings,
            liveness: LivenessCheck::new(),
            _lock: lock,
        }))
    }

    /// Saves the ledger, then sweeps what it no longer names from the state directory.
    fn save(&self, locked: &Locked, durability: Durability) -> Result<()> {
        let orphan_stashes = orphan_stashes(&locked.state, &locked.ledger);
        // Forgetting a stash must be on disk before the stash goes (else a power loss could
        // bring back a ledger naming a removed stash), and kept bytes must stay findable.
        let durability =
            if !orphan_stashes.is_empty() || locked.ledger.kept.len() > locked.kept_durable.get() {
                Durability::Durable
            } else {
                durability
            };
        locked
            .journal
            .save(&locked.state, &locked.ledger, durability)?;
        if durability == Durability::Durable {
            locked.kept_durable.set(locked.ledger.kept.len());
        }
        // Only now that no saved ledger names them may unused stashes go (a crash before this
        // point leaves a ledger that still finds its stash).
        sweep_state(&locked.state, &locked.ledger, &orphan_stashes);
        Ok(())
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

    /// Starts a session: cleans stale leftovers, plans, projects, and returns the receipt.
    pub fn acquire(
        &self,
        provider: &dyn Provider,
        request: &AcquireRequest,
    ) -> Result<AcquireReceipt> {
        // A holder that is not alive now would make the lease stale at once.
        request.holder.validate()?;
        request
            .session
            .check_supported(provider.name(), &provider.capabilities())?;
        block::validate_body(&self.markers, &request.session.prompt).map_err(|e| {
            Error::invalid(
                "the session prompt",
                format!(
                    "line {}: {}; a prompt cannot carry our marker lines",
                    e.line, e.reason
                ),
            )
        })?;
        let probes = Self::probe(provider, request);
        let canonical = Self::canonical_workspace(&request.workspace)?;
        let mut locked = self.lock(&canonical)?;
        // Validated above: its leases (this session's and any earlier) are not to be stripped.
        locked.liveness.assume_alive(&request.holder);
        let mut outcome = Outcome::default();
        outcome.warnings.append(&mut locked.fs_warnings);
        self.strip_stale_locked(&mut locked, &mut outcome);

        let plan = provider.plan(&PlanContext {
            root: &canonical,
            namespace: &self.namespace,
            request: &request.session,
            probes: &probes,
            view: &locked.root,
        })?;
        validate_plan(provider.name(), &plan)?;

        let token = format!(
            "pf1-{}-{}",
            workspace_key(&canonical),
            fsio::random_hex(16)?
        );
        let private_dir = if plan.private_files.is_empty() {
            None
        } else {
            Some(locked.state.path().join("sessions").join(&token))
        };
        let mut paths: Vec<RelPath> = Vec::new();
        paths.extend(plan.blocks.iter().map(|b| b.path.clone()));
        paths.extend(plan.owned_files.iter().map(|o| o.path.clone()));
        paths.extend(plan.markers.iter().map(|m| m.path.clone()));
        for skill in &plan.skills {
            paths.push(skill.skills_dir.join(&skill.name)?);
        }
        locked.ledger.leases.insert(
            token.clone(),
            LeaseRecord {
                provider: provider.name().to_string(),
                holder: request.holder.clone(),
                acquired_at: now_secs(),
                paths: Vec::new(),
                private_dir: private_dir.clone(),
            },
        );

        let mut pending = std::collections::BTreeSet::new();
        let applied = self.apply(
            &mut locked,
            &token,
            &plan,
            &paths,
            &mut pending,
            &mut outcome,
        );
        if let Err(error) = applied {
            // Nothing is left half done: forget entries this token recorded but never applied,
            // undo what it did apply, and keep the ledger true.
            // (A stash these entries named goes once a saved ledger no longer names it.)
            for path in &pending {
                locked.ledger.entries.remove(path);
            }
            let mut ignored = Outcome::default();
            self.release_token(&mut locked, &token, &mut ignored);
            let _ = self.save(&locked, Durability::Deferred);
            return Err(error);
        }

        let launch_args = plan
            .launch_args
            .iter()
            .map(|arg| match arg {
                LaunchArg::Literal(text) => text.clone(),
                LaunchArg::PrivateFilePath(name) => private_dir
                    .as_ref()
                    .map(|d| d.join(name).display().to_string())
                    .unwrap_or_default(),
            })
            .collect();
        let holder = request.holder.clone();
        Ok(AcquireReceipt {
            schema: schema::ACQUIRE,
            token,
            provider: provider.name().to_string(),
            workspace: canonical,
            holder,
            files: outcome.files,
            launch_args,
            env: plan.env.iter().cloned().collect(),
            session_text: plan.session_text.clone(),
            probes,
            notes: plan.notes.clone(),
            stale_cleaned: outcome.stale,
            kept: outcome.kept,
            warnings: outcome.warnings,
            linked: None,
        })
    }

    /// Records the intent in the ledger, then applies each projection. On error the caller undoes
    /// this token.
    fn apply(
        &self,
        locked: &mut Locked,
        token: &str,
        plan: &Plan,
        paths: &[RelPath],
        pending: &mut std::collections::BTreeSet<RelPath>,
        outcome: &mut Outcome,
    ) -> Result<()> {
        // Stash prior contents of owned files we do not hold yet, before the ledger names them.
        let mut stashes: BTreeMap<RelPath, Option<Stash>> = BTreeMap::new();
        // Owned files we find proven ours by their marker but unrecorded (a lost state directory):
        // replaced, and removed by the last session, instead of kept as a prior.
        let mut reclaimed_owned = std::collections::BTreeSet::new();
        for owned in &plan.owned_files {
            if locked.ledger.entries.contains_key(&owned.path) {
                continue;
            }
            let prior = match locked.root.read(&owned.path)? {
                None => None,
                Some(snapshot)
                    if generated::provenance(&snapshot.bytes, &self.namespace)
                        == Provenance::Proven =>
                {
                    reclaimed_owned.insert(owned.path.clone());
                    None
                }
                Some(snapshot) => {
                    let file = format!("{}.{}", fsio::random_hex(8)?, owned.path.file_name());
                    let stash_dir = rel("stash")?;
                    locked.state.create_dir(&stash_dir)?;
                    locked.state.write_atomic(
                        &stash_dir.join(&file)?,
                        &snapshot.bytes,
                        Some(0o600),
                    )?;
                    Some(Stash {
                        file,
                        mode: snapshot.mode,
                    })
                }
            };
            stashes.insert(owned.path.clone(), prior);
        }

        // Intent: the lease, its paths, the entries it holds, the directories it may create.
        let ledger = &mut locked.ledger;
        if let Some(lease) = ledger.leases.get_mut(token) {
            lease.paths = paths.to_vec();
        }
        let blocks_known = plan
            .blocks
            .iter()
            .all(|b| ledger.block_files.contains(&b.path));
        ledger
            .block_files
            .extend(plan.blocks.iter().map(|b| b.path.clone()));
        for block in &plan.blocks {
            if !ledger.entries.contains_key(&block.path) {
                pending.insert(block.path.clone());
            }
            ledger
                .entries
                .entry(block.path.clone())
                .or_insert_with(|| EntryRecord::Block {
                    holders: Default::default(),
                })
                .holders_mut()
                .insert(token.to_string());
        }
        for owned in &plan.owned_files {
            if !ledger.entries.contains_key(&owned.path) {
                pending.insert(owned.path.clone());
            }
            let entry =
                ledger
                    .entries
                    .entry(owned.path.clone())
                    .or_insert_with(|| EntryRecord::Owned {
                        holders: Default::default(),
                        role: owned.role,
                        prior: stashes.get(&owned.path).cloned().flatten(),
                        written: String::new(),
                        written_mode: None,
                        writing: None,
                    });
            entry.holders_mut().insert(token.to_string());
            if let EntryRecord::Owned {
                written, writing, ..
            } = entry
            {
                // A write a crash interrupted may have landed; if the file holds it, it is ours.
                if let Some(interrupted) = writing.take()
                    && let Ok(Some(now)) = locked.root.read(&owned.path)
                    && now.bytes == interrupted.as_bytes()
                {
                    *written = interrupted;
                }
                *writing = Some(owned.content.clone());
            }
        }
        let mut new_markers = Vec::new();
        for marker in &plan.markers {
            if let Some(entry) = ledger.entries.get_mut(&marker.path) {
                entry.holders_mut().insert(token.to_string());
                outcome.files.push(FileReceipt {
                    path: marker.path.to_string(),
                    kind: "marker",
                    action: "held",
                });
            } else if locked.root.kind(&marker.path) == EntryKind::Missing {
                pending.insert(marker.path.clone());
                ledger.entries.insert(
                    marker.path.clone(),
                    EntryRecord::Marker {
                        holders: [token.to_string()].into(),
                        marker: marker.kind,
                    },
                );
                new_markers.push(marker.clone());
            } else {
                outcome.files.push(FileReceipt {
                    path: marker.path.to_string(),
                    kind: "marker",
                    action: "exists",
                });
            }
        }
        // Skill folders: a new entry records what stands there now (and, for a take-over, where
        // the prior will be kept) before anything is touched.
        let mut reclaimed = std::collections::BTreeSet::new();
        for skill in &plan.skills {
            let path = skill.skills_dir.join(&skill.name)?;
            if let Some(entry) = ledger.entries.get_mut(&path) {
                entry.holders_mut().insert(token.to_string());
                continue;
            }
            let initial = skills::classify(&locked.root, &path, &self.namespace)?;
            if let skills::Initial::Leftover(_, created) = &initial {
                reclaimed.insert(path.clone());
                ledger.created_dirs.extend(created.iter().cloned());
            }
            ledger.entries.insert(
                path.clone(),
                skills::new_entry(&path, token, &skill.source, &initial)?,
            );
        }
        // Directories that are missing now are ours to create (and, later, to remove).
        let mut to_create = Vec::new();
        for path in paths {
            for dir in path.ancestors() {
                match locked.root.kind(&dir) {
                    EntryKind::Missing => {
                        if !to_create.contains(&dir) {
                            to_create.push(dir.clone());
                        }
                        ledger.created_dirs.insert(dir);
                    }
                    EntryKind::Dir => {}
                    EntryKind::Symlink => {
                        return Err(Error::Symlink {
                            path: locked.root.display_path(&dir),
                            detail: "a directory on the way to the target is a symlink".into(),
                        });
                    }
                    EntryKind::File | EntryKind::Other => {
                        return Err(Error::Unsafe {
                            path: locked.root.display_path(&dir),
                            reason: "a file stands where a directory is needed".into(),
                        });
                    }
                }
            }
        }
        // The intent reaches the disk before the workspace is touched, unless all a power loss
        // could take from it is a block in a file the durable ledger already lists (see
        // `journal`): the next start finds and removes such a block by itself.
        let only_known_blocks = blocks_known
            && plan.owned_files.is_empty()
            && plan.markers.is_empty()
            && plan.skills.is_empty()
            && plan.private_files.is_empty()
            && to_create.is_empty();
        let intent = if only_known_blocks {
            Durability::Deferred
        } else {
            Durability::Durable
        };
        self.save(locked, intent)?;

        for dir in &to_create {
            if locked.root.create_dir(dir)? {
                outcome.files.push(FileReceipt {
                    path: dir.to_string(),
                    kind: "dir",
                    action: "created",
                });
            }
        }
        for block in &plan.blocks {
            let current = locked.root.read(&block.path)?;
            let upserted = block::upsert(
                &self.markers,
                current.as_ref().map(|s| s.bytes.as_slice()),
                &block.body,
            )
            .map_err(|e| Error::Malformed {
                path: locked.root.display_path(&block.path),
                line: e.line,
                reason: e.reason,
            })?;
            if upserted.action != UpsertAction::Unchanged {
                locked
                    .root
                    .write_atomic(&block.path, &upserted.bytes, None)?;
            }
            pending.remove(&block.path);
            outcome.files.push(FileReceipt {
                path: block.path.to_string(),
                kind: "block",
                action: match upserted.action {
                    UpsertAction::Inserted if current.is_none() => "created",
                    UpsertAction::Inserted => "inserted",
                    UpsertAction::Refreshed => "refreshed",
                    UpsertAction::Unchanged => "unchanged",
                },
            });
        }
        for owned in &plan.owned_files {
            let current = locked.root.read(&owned.path)?;
            // What we write: the content with our marker where its format allows.
            let content =
                generated::stamp(&owned.content, &owned.path, owned.role, &self.namespace);
            let Some(EntryRecord::Owned {
                written,
                written_mode,
                prior,
                writing,
                ..
            }) = locked.ledger.entries.get_mut(&owned.path)
            else {
                return Err(Error::invalid(
                    owned.path.to_string(),
                    "the plan names this path twice with different kinds",
                ));
            };
            let first = stashes.contains_key(&owned.path);
            let action = if first {
                if prior.is_some() {
                    "replaced"
                } else if reclaimed_owned.contains(&owned.path) {
                    "reclaimed"
                } else {
                    "created"
                }
            } else {
                // Held already: a user edit since our last write is set aside, not lost.
                let ours = current.as_ref().is_some_and(|s| {
                    s.bytes == written.as_bytes()
                        || generated::provenance(&s.bytes, &self.namespace) == Provenance::Proven
                });
                if let (false, Some(snapshot)) = (ours, &current) {
                    let kept = keep_aside(
                        &locked.state,
                        &owned.path,
                        &snapshot.bytes,
                        "the file was edited during the session and a new session refreshed it",
                    )?;
                    outcome.kept.push(kept.clone());
                    locked.ledger.kept.push(kept);
                }
                let current_is_content = current
                    .as_ref()
                    .is_some_and(|s| s.bytes == content.as_bytes());
                if current_is_content && *written == content && *written_mode == owned.mode {
                    "unchanged"
                } else {
                    "refreshed"
                }
            };
            let mode = owned.mode.or(prior.as_ref().map(|p| p.mode));
            if action != "unchanged" {
                *written = content.clone();
                *written_mode = owned.mode;
                locked
                    .root
                    .write_atomic(&owned.path, content.as_bytes(), mode)?;
            }
            *writing = None;
            pending.remove(&owned.path);
            outcome.files.push(FileReceipt {
                path: owned.path.to_string(),
                kind: "owned",
                action,
            });
        }
        for marker in &new_markers {
            locked.root.create_marker(&marker.path, marker.kind)?;
            pending.remove(&marker.path);
            outcome.files.push(FileReceipt {
                path: marker.path.to_string(),
                kind: "marker",
                action: "created",
            });
        }
        if !plan.private_files.is_empty() {
            let sessions = rel("sessions")?;
            locked.state.create_dir(&sessions)?;
            let dir = sessions.join(token)?;
            locked.state.create_dir(&dir)?;
            for file in &plan.private_files {
                let path = dir.join(&file.name)?;
                locked
                    .state
                    .write_atomic(&path, file.content.as_bytes(), Some(0o600))?;
                outcome.files.push(FileReceipt {
                    path: locked.state.display_path(&path).display().to_string(),
                    kind: "private",
                    action: "written",
                });
            }
        }
        // Owned files' `written` changed: record it.
        if !plan.owned_files.is_empty() {
            self.save(locked, Durability::Durable)?;
        }
        // Each skill records its own progress in the ledger; what it set aside is saved after.
        let mut kept_any = false;
        for skill in &plan.skills {
            let path = skill.skills_dir.join(&skill.name)?;
            let mut report = skills::Report::default();
            let result = {
                let mut cx = skills::Cx {
                    root: &locked.root,
                    state: &locked.state,
                    namespace: &self.namespace,
                    report: &mut report,
                };
                let (state, journal) = (&locked.state, &locked.journal);
                skills::project(
                    &mut cx,
                    &mut locked.ledger,
                    &path,
                    &skill.source,
                    &|ledger| journal.save(state, ledger, Durability::Durable),
                )
            };
            let kept = report.kept.clone();
            kept_any |= !kept.is_empty();
            outcome.absorb(report);
            locked.ledger.kept.extend(kept);
            let action = result?;
            outcome.files.push(FileReceipt {
                path: path.to_string(),
                kind: "skill",
                action: if reclaimed.contains(&path) {
                    "reclaimed"
                } else {
                    action
                },
            });
        }
        if kept_any {
            self.save(locked, Durability::Durable)?;
        }
        Ok(())
    }

    /// Ends a session. Unknown or already released tokens are not an error (`released: false`).
    pub fn release(&self, token: &str) -> Result<ReleaseReceipt> {
        let mut receipt = ReleaseReceipt {
            schema: schema::RELEASE,
            token: token.to_string(),
            released: false,
            workspace: None,
            files: Vec::new(),
            kept: Vec::new(),
            stale_cleaned: Vec::new(),
            warnings: Vec::new(),
        };
        let Some(key) = token_key(token) else {
            return Ok(receipt);
        };
        let mut locked = match self.lock_key(key, None) {
            Ok(Some(locked)) => locked,
            Ok(None) => return Ok(receipt),
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                // The workspace is gone; nothing of ours can be left in it.
                return Ok(receipt);
            }
            Err(e) => return Err(e),
        };
        receipt.workspace = Some(locked.ledger.workspace.clone());
        let mut outcome = Outcome::default();
        outcome.warnings.append(&mut locked.fs_warnings);
        if locked.ledger.leases.contains_key(token) {
            self.release_token(&mut locked, token, &mut outcome);
            receipt.released = true;
        }
        // A block no entry records is a start's to remove (or strip-stale's), not a release's:
        // a release touches what its own lease and dead ones hold, nothing else.
        locked.unrecorded_blocks.clear();
        self.strip_stale_locked(&mut locked, &mut outcome);
        self.save(&locked, Durability::Deferred)?;
        receipt.files = outcome.files;
        receipt.kept = outcome.kept;
        receipt.stale_cleaned = outcome.stale;
        receipt.warnings = outcome.warnings;
        Ok(receipt)
    }

    /// Removes `token`'s lease and undoes every entry it was the last holder of.
    fn release_token(&self, locked: &mut Locked, token: &str, outcome: &mut Outcome) {
        let Some(lease) = locked.ledger.leases.remove(token) else {
            return;
        };
        for entry in locked.ledger.entries.values_mut() {
            entry.holders_mut().remove(token);
        }
        if let Some(dir) = &lease.private_dir {
            match fsio::remove_private_tree(dir) {
                Ok(()) => outcome.files.push(FileReceipt {
                    path: dir.display().to_string(),
                    kind: "private",
                    action: "removed",
                }),
                Err(e) => outcome.warnings.push(Warning {
                    path: dir.display().to_string(),
                    message: e.to_string(),
                }),
            }
        }
        self.undo_orphans(locked, outcome);
    }

    /// Undoes every entry no lease holds any more, then removes directories we created that no
    /// entry needs and that are empty. An entry that cannot be undone safely stays recorded and
    /// is reported; it is retried at the next start.
    fn undo_orphans(&self, locked: &mut Locked, outcome: &mut Outcome) {
        let leases = &locked.ledger.leases;
        for entry in locked.ledger.entries.values_mut() {
            entry.holders_mut().retain(|t| leases.contains_key(t));
        }
        let orphans: Vec<RelPath> = locked
            .ledger
            .entries
            .iter()
            .filter(|(_, e)| e.holders().is_empty())
            .map(|(p, _)| p.clone())
            .collect();
        for path in orphans {
            let Some(entry) = locked.ledger.entries.get(&path).cloned() else {
                continue;
            };
            match self.undo_entry(locked, &path, &entry, outcome) {
                Ok(()) => {
                    locked.ledger.entries.remove(&path);
                    let _ = locked.root.remove_temp_files(&path);
                }
                Err(e) => outcome.warnings.push(Warning {
                    path: locked.root.display_path(&path).display().to_string(),
                    message: e.to_string(),
                }),
            }
        }
        let mut dirs: Vec<RelPath> = locked.ledger.created_dirs.iter().cloned().collect();
        // Deepest first.
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        for dir in dirs {
            let prefix = format!("{dir}/");
            let needed = locked
                .ledger
                .entries
                .keys()
                .any(|p| p.as_str().starts_with(&prefix));
            if needed {
                continue;
            }
            match locked.root.remove_dir_if_empty(&dir) {
                Ok(removed) => {
                    if removed {
                        outcome.files.push(FileReceipt {
                            path: dir.to_string(),
                            kind: "dir",
                            action: "removed",
                        });
                    }
                    // Removed, gone, or holding the user's files now: no longer ours either way.
                    locked.ledger.created_dirs.remove(&dir);
                }
                Err(e) => outcome.warnings.push(Warning {
                    path: locked.root.display_path(&dir).display().to_string(),
                    message: e.to_string(),
                }),
            }
        }
    }

    fn undo_entry(
        &self,
        locked: &mut Locked,
        path: &RelPath,
        entry: &EntryRecord,
        outcome: &mut Outcome,
    ) -> Result<()> {
        match entry {
            EntryRecord::Block { .. } => {
                let Some(current) = locked.root.read(path)? else {
                    return Ok(());
                };
                let removed =
                    block::remove(&self.markers, &current.bytes).map_err(|e| Error::Malformed {
                        path: locked.root.display_path(path),
                        line: e.line,
                        reason: e.reason,
                    })?;
                let Some(removed) = removed else {
                    return Ok(());
                };
                if removed.now_empty {
                    locked.root.remove_file(path)?;
                    outcome.files.push(FileReceipt {
                        path: path.to_string(),
                        kind: "block",
                        action: "removed",
                    });
                } else {
                    locked.root.write_atomic(path, &removed.bytes, None)?;
                    outcome.files.push(FileReceipt {
                        path: path.to_string(),
                        kind: "block",
                        action: "restored",
                    });
                }
                Ok(())
            }
            EntryRecord::Owned {
                prior,
                written,
                written_mode: _,
                role: _,
                writing,
                ..
            } => {
                let current = locked.root.read(path)?;
                let prior_bytes = match prior {
                    Some(stash) => {
                        let stash_path = locked.state.path().join("stash").join(&stash.file);
                        match fsio::read_private(&stash_path)? {
                            Some(bytes) => Some((bytes, stash.mode, stash_path)),
                            None => {
                                return Err(Error::Ledger {
                                    path: stash_path,
                                    reason: "the stashed prior content is missing; the file is left as it is".into(),
                                });
                            }
                        }
                    }
                    None => None,
                };
                if let Some(snapshot) = &current {
                    // Ours: what the ledger says we wrote or was about to write, or content our
                    // marker proves (the ledger may lag a write by a crash).
                    let ours = snapshot.bytes == written.as_bytes()
                        || writing
                            .as_ref()
                            .is_some_and(|w| snapshot.bytes == w.as_bytes())
                        || generated::provenance(&snapshot.bytes, &self.namespace)
                            == Provenance::Proven;
                    let already_restored = prior_bytes
                        .as_ref()
                        .is_some_and(|(bytes, _, _)| *bytes == snapshot.bytes);
                    if !ours && !already_restored {
                        let kept = keep_aside(
                            &locked.state,
                            path,
                            &snapshot.bytes,
                            "the file was edited during the session; the prior content was restored",
                        )?;
                        outcome.kept.push(kept.clone());
                        locked.ledger.kept.push(kept);
                    }
                }
                match &prior_bytes {
                    Some((bytes, mode, _)) => {
                        // The stash itself goes when the ledger that forgets this entry is saved.
                        locked.root.write_atomic(path, bytes, Some(*mode))?;
                        outcome.files.push(FileReceipt {
                            path: path.to_string(),
                            kind: "owned",
                            action: "restored",
                        });
                    }
                    None => {
                        if locked.root.remove_file(path)? {
                            outcome.files.push(FileReceipt {
                                path: path.to_string(),
                                kind: "owned",
                                action: "removed",
                            });
                        }
                    }
                }
                Ok(())
            }
            EntryRecord::Skill { .. } => {
                let mut report = skills::Report::default();
                let result = skills::undo(
                    &mut skills::Cx {
                        root: &locked.root,
                        state: &locked.state,
                        namespace: &self.namespace,
                        report: &mut report,
                    },
                    path,
                    entry,
                );
                locked.ledger.kept.extend(report.kept.iter().cloned());
                outcome.absorb(report);
                result
            }
            EntryRecord::Marker { marker, .. } => {
                let removed = match marker {
                    MarkerKind::Dir => match locked.root.dir_is_empty(path) {
                        Some(true) => locked.root.remove_dir_if_empty(path)?,
                        _ => false,
                    },
                    MarkerKind::File => match locked.root.read(path) {
                        Ok(Some(s)) if s.bytes.is_empty() => locked.root.remove_file(path)?,
                        _ => false,
                    },
                };
                outcome.files.push(FileReceipt {
                    path: path.to_string(),
                    kind: "marker",
                    action: if removed { "removed" } else { "kept" },
                });
                Ok(())
            }
        }
    }

    /// Cleans every lease whose holder is dead, then every entry no live lease holds.
    fn strip_stale_locked(&self, locked: &mut Locked, outcome: &mut Outcome) {
        let check = &mut locked.liveness;
        let dead: Vec<(String, String, String)> = locked
            .ledger
            .leases
            .iter()
            .filter_map(|(token, lease)| match check.liveness(&lease.holder) {
                Liveness::Alive => None,
                Liveness::Dead { reason } => Some((token.clone(), lease.provider.clone(), reason)),
            })
            .collect();
        for (token, provider, reason) in dead {
            self.release_token(locked, &token, outcome);
            outcome.stale.push(StaleCleaned {
                token,
                provider,
                reason,
            });
        }
        self.undo_orphans(locked, outcome);
        // A block in a listed file that no entry records: its lease's record was lost to a power
        // loss (the lease died with the machine).
        for path in std::mem::take(&mut locked.unrecorded_blocks) {
            if locked.ledger.entries.contains_key(&path) {
                continue;
            }
            let unrecorded = EntryRecord::Block {
                holders: Default::default(),
            };
            let before = outcome.files.len();
            let undone = self.undo_entry(locked, &path, &unrecorded, outcome);
            // A crash mid-write of that block left its temporary file too.
            let _ = locked.root.remove_temp_files(&path);
            let display = locked.root.display_path(&path).display().to_string();
            match undone {
                Ok(()) if outcome.files.len() > before => outcome.warnings.push(Warning {
                    path: display,
                    message: "removed a session block no lease records (its record was lost, as a power loss can do); the file is as the user left it".to_string(),
                }),
                Ok(()) => {}
                Err(e) => outcome.warnings.push(Warning {
                    path: display,
                    message: e.to_string(),
                }),
            }
        }
        // Every write happens under this lock, so a temporary file found now was left by a process
        // killed mid-write; beside a path others still hold, nothing above has removed it.
        for path in locked.ledger.entries.keys() {
            let _ = locked.root.remove_temp_files(path);
        }
    }

    /// Cleans leftovers whose holders are dead; never touches a live holder's projections.
    pub fn strip_stale(&self, workspace: &Path) -> Result<StripReport> {
        let canonical = Self::canonical_workspace(workspace)?;
        let mut locked = self.lock(&canonical)?;
        let mut outcome = Outcome::default();
        outcome.warnings.append(&mut locked.fs_warnings);
        self.strip_stale_locked(&mut locked, &mut outcome);
        self.save(&locked, Durability::Deferred)?;
        Ok(StripReport {
            schema: schema::STRIP_STALE,
            workspace: canonical,
            stale_cleaned: outcome.stale,
            files: outcome.files,
            kept: outcome.kept,
            warnings: outcome.warnings,
        })
    }

    /// Leases, holders, liveness and leftovers of a workspace. Changes nothing.
    pub fn status(&self, workspace: &Path) -> Result<StatusReport> {
        let canonical = Self::canonical_workspace(workspace)?;
        let locked = self.lock(&canonical)?;
        let ledger = &locked.ledger;
        let mut stale = Vec::new();
        let mut check = LivenessCheck::new();
        let leases: Vec<LeaseStatus> = ledger
            .leases
            .iter()
            .map(|(token, lease)| {
                let liveness = check.liveness(&lease.holder);
                if !liveness.is_alive() {
                    stale.push(token.clone());
                }
                LeaseStatus {
                    token: token.clone(),
                    provider: lease.provider.clone(),
                    holder: lease.holder.clone(),
                    liveness,
                    acquired_at: lease.acquired_at,
                    paths: lease.paths.clone(),
                }
            })
            .collect();
        let dead: std::collections::BTreeSet<String> = stale.iter().cloned().collect();
        let entries = ledger
            .entries
            .iter()
            .map(|(path, entry)| {
                let live_holders = entry
                    .holders()
                    .iter()
                    .filter(|t| !dead.contains(*t) && ledger.leases.contains_key(*t))
                    .count();
                if live_holders == 0 {
                    stale.push(path.to_string());
                }
                EntryStatus {
                    path: path.clone(),
                    kind: entry.kind_name(),
                    holders: entry.holders().len(),
                    live_holders,
                }
            })
            .collect();
        let taken_over = ledger
            .entries
            .iter()
            .filter_map(|(path, entry)| {
                skills::prior_status(&locked.root, &locked.state, path, entry).map(|(stash, at)| {
                    TakenOver {
                        path: path.clone(),
                        stash,
                        state: match at {
                            PriorAt::Stash => "stashed",
                            PriorAt::Hidden => "moving",
                            PriorAt::NotMoved => "in_place",
                        },
                    }
                })
            })
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
        })
    }
}

impl Outcome {
    /// Takes in what a skill operation reported.
    fn absorb(&mut self, report: skills::Report) {
        self.files
            .extend(report.files.into_iter().map(|(path, action)| FileReceipt {
                path,
                kind: "skill",
                action,
            }));
        self.kept.extend(report.kept);
        self.warnings.extend(
            report
                .warnings
                .into_iter()
                .map(|(path, message)| Warning { path, message }),
        );
    }
}

/// Refuses a path that is not valid UTF-8: the ledger and every receipt record paths as JSON
/// text, which cannot hold it, so nothing is started that could not be recorded.
fn require_utf8(path: &Path, what: &str) -> Result<()> {
    if path.to_str().is_some() {
        return Ok(());
    }
    Err(Error::Unsafe {
        path: path.to_path_buf(),
        reason: format!(
            "{what}'s path is not valid UTF-8, and the ledger and receipts record paths as JSON text; use a path that is"
        ),
    })
}

/// The workspace key a token names, if it is shaped like one of ours.
fn token_key(token: &str) -> Option<&str> {
    let rest = token.strip_prefix("pf1-")?;
    let (key, random) = rest.split_once('-')?;
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(key, 16) && hex(random, 32)).then_some(key)
}

/// Stashed prior contents in `stash/` that no entry of `ledger` names: restored by a release,
/// unused by a failed acquire, or left by a crash between the stash write and the ledger write.
fn orphan_stashes(state: &Root, ledger: &Ledger) -> Vec<String> {
    let Ok(dir) = rel("stash") else {
        return Vec::new();
    };
    let named: std::collections::BTreeSet<&str> = ledger
        .entries
        .values()
        .filter_map(|entry| match entry {
            EntryRecord::Owned {
                prior: Some(stash), ..
            } => Some(stash.file.as_str()),
            _ => None,
        })
        .collect();
    state
        .file_names(&dir)
        .into_iter()
        .filter(|name| !named.contains(name.as_str()))
        .collect()
}

/// Removes what the saved ledger no longer names under a workspace's state directory: the
/// `orphans` of `stash/`, our temporary files in `kept/` (left by a crash mid-write), and the
/// private directories in `sessions/` no lease names (a power loss can keep one whose removal
/// was not yet on disk while the release's record was). Runs under the workspace lock right
/// after a save, so nothing else writes there; best effort, a failure is retried at the next
/// save. Kept user bytes are never removed.
// KNOWN GAP (docs/threat-model.md, "removal that follows a link"): `sessions/` is listed by path.
#[allow(clippy::disallowed_methods)]
fn sweep_state(state: &Root, ledger: &Ledger, orphans: &[String]) {
    let (Ok(stash), Ok(kept)) = (rel("stash"), rel("kept")) else {
        return;
    };
    if let Ok(sessions) = std::fs::read_dir(state.path().join("sessions")) {
        let named: std::collections::BTreeSet<&Path> = ledger
            .leases
            .values()
            .filter_map(|lease| lease.private_dir.as_deref())
            .collect();
        for dir in sessions.flatten().map(|entry| entry.path()) {
            if !named.contains(dir.as_path()) {
                let _ = fsio::remove_private_tree(&dir);
            }
        }
    }
    let temps = state
        .file_names(&kept)
        .into_iter()
        .filter(|name| name.contains(fsio::TEMP_INFIX));
    let doomed = orphans
        .iter()
        .filter_map(|name| stash.join(name).ok())
        .chain(temps.filter_map(|name| kept.join(&name).ok()));
    for path in doomed {
        let _ = state.remove_file(&path);
    }
}

/// Sets user bytes aside under the state directory's `kept/` and returns the record.
fn keep_aside(state: &Root, path: &RelPath, bytes: &[u8], reason: &str) -> Result<KeptRecord> {
    let kept_dir = rel("kept")?;
    state.create_dir(&kept_dir)?;
    let name = format!(
        "{}-{}.{}",
        now_secs(),
        fsio::random_hex(4)?,
        path.as_str().replace('/', "__")
    );
    let file = kept_dir.join(&name)?;
    state.write_atomic(&file, bytes, Some(0o600))?;
    Ok(KeptRecord {
        path: path.clone(),
        kept_at: state.display_path(&file),
        reason: reason.to_string(),
    })
}

/// Refuses a plan that names one path twice, or a private file name that is not a plain name.
fn validate_plan(provider: &str, plan: &Plan) -> Result<()> {
    let mut seen: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let all = plan
        .blocks
        .iter()
        .map(|b| &b.path)
        .chain(plan.owned_files.iter().map(|o| &o.path))
        .chain(plan.markers.iter().map(|m| &m.path));
    for path in all {
        if !seen.insert(path.to_string()) {
            return Err(Error::Provider {
                provider: provider.to_string(),
                reason: format!("the plan names {path} twice"),
            });
        }
    }
    let mut skill_paths = Vec::new();
    for skill in &plan.skills {
        skills::validate_name(&skill.name)?;
        let path = skill.skills_dir.join(&skill.name)?;
        if !seen.insert(path.to_string()) {
            return Err(Error::Provider {
                provider: provider.to_string(),
                reason: format!("the plan names {path} twice"),
            });
        }
        skill_paths.push(path);
    }
    // Nothing else may live inside a skill folder, nor a skill folder inside another.
    for skill in &skill_paths {
        let prefix = format!("{skill}/");
        if let Some(inside) = seen.iter().find(|p| p.starts_with(&prefix)) {
            return Err(Error::Provider {
                provider: provider.to_string(),
                reason: format!("the plan puts {inside} inside the skill folder {skill}"),
            });
        }
    }
    for file in &plan.private_files {
        if file.name.is_empty() || file.name.contains('/') || file.name.starts_with('.') {
            return Err(Error::Provider {
                provider: provider.to_string(),
                reason: format!("private file name {:?} is not a plain file name", file.name),
            });
        }
    }
    for owned in &plan.owned_files {
        if owned.role == OwnedRole::HookScript && owned.mode.is_none() {
            return Err(Error::Provider {
                provider: provider.to_string(),
                reason: format!("hook script {} needs explicit mode bits", owned.path),
            });
        }
    }
    Ok(())
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
