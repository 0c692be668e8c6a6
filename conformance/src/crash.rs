//! Crash-point enumeration: for one provider and one starting workspace, crash the process model
//! after every possible number `k` of mutating file operations in every step of a session history,
//! then prove that the next start and the remaining releases leave exactly the user's bytes.
//!
//! The history is seven steps, each run against a fresh [`Fixture`] with the steps before it done
//! normally:
//!
//! | phase | step that crashes | the session whose holder dies |
//! |---|---|---|
//! | `acquire` | the first session's acquire | the first |
//! | `refresh` | a second session's acquire while the first lives | the second |
//! | `release` | the release of the first of two live sessions | the first |
//! | `release-newest` | the release of the newer of two live sessions (a block is given the older one's text back) | the newer |
//! | `last-release` | the release of the last live session | that one |
//! | `start-over-stale` | a start that must first clean a dead session's leftovers | the new one |
//! | `start-again` | a start after an earlier session came and went | the new one |
//!
//! For each phase, `k` runs from 0 (the first mutating operation fails) upwards, with
//! [`faults::arm`]: the `k`-th operation and every later one fail as if the process had died
//! there. The crashed session's holder (a real child process) is then SIGKILLed, a new session
//! starts (held by this live test process), and every remaining lease is released. Checked along
//! the way:
//!
//! - right after the crash: every user file is still there, and each file the plan touches holds
//!   either the user's bytes or the user's bytes plus our block (or our owned content); only our
//!   temporary files and our own projections may be extra;
//! - after the next start: no temporary file anywhere in the workspace, and the projection present;
//! - after each release: the projection present exactly while a live lease holds it, the
//!   workspace byte for byte as the user left it once none does;
//! - at the end: no ledger, stash, kept bytes or temporary files under the state directory.
//!
//! `k` stops growing when the step completes without reaching its countdown: that `k` is the
//! number of mutating operations the step makes, and every smaller `k` was a crash point.
//!
//! Every phase is then enumerated again as a **power loss** ([`Mode::PowerLoss`]): at each `k`,
//! and once more after the step completes, the ledger journal loses what was appended to it
//! since its last sync (keeping a torn half of it, see [`faults::power_loss`]) and *every*
//! holder dies, as no process outlives a reboot. Workspace writes are all synced, so they stay.
//! The next start must still clean up to exactly the user's bytes. This is what lets a release
//! record its undo without syncing the journal.
//!
//! And once more as a **lost state directory** ([`Mode::StateLoss`]): at each `k`, and once more
//! after the step completes, the process dies as in a crash and the whole state directory is
//! deleted (every lease record, the ledger, `kept/`). No ledger is left to say what is ours, yet
//! every byte of the user's must come back: the project's own files and folders we took over
//! are put back from the workspace's priors folder by the next start, and what our own markers
//! prove ours goes with the next session, and so does what the sessions created where nothing
//! stood (recorded inside the workspace, beside the priors): the workspace is back byte for byte,
//! with nothing of ours left.
//!
//! In the crash and lost-state enumerations, at every odd `k` the workspace folder is also
//! renamed (to a sibling) before the next start: the next start goes through the new path, and
//! the releases by token that follow find the folder there (a workspace is its folder, not its
//! path).
//!
//! Call [`enumerate_crash_points`] from a provider's tests (see `core/tests/crash_points.rs`).

use crate::tree::{Node, Tree};
use crate::{Fixture, HolderProcess};
use projectfile_core::block::{self, Markers};
use projectfile_core::holder::Holder;
use projectfile_core::projector::{AcquireReceipt, AcquireRequest};
use projectfile_core::testing::fsio::{TEMP_INFIX, faults};
use projectfile_core::testing::priors;
use projectfile_core::{Error, MarkerKind, Namespace, Plan, Probes, Provider, SessionRequest};
use projectfile_provider::ProviderExt;
use std::collections::BTreeSet;

/// The steps of the history a crash can interrupt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The first session's acquire.
    Acquire,
    /// A second session's acquire while the first lives (the block is refreshed).
    Refresh,
    /// The release of the first of two live sessions.
    Release,
    /// The release of the newer of two live sessions: a shared block is given the older
    /// session's text back.
    ReleaseNewest,
    /// The release of the last live session (the projection comes out).
    LastRelease,
    /// A start that first cleans the leftovers of a session whose holder died.
    StartOverStale,
    /// A start after an earlier session was acquired and released (the files it used are known).
    StartAgain,
}

impl Phase {
    /// Every phase, in history order.
    pub const ALL: [Phase; 7] = [
        Phase::Acquire,
        Phase::Refresh,
        Phase::Release,
        Phase::ReleaseNewest,
        Phase::LastRelease,
        Phase::StartOverStale,
        Phase::StartAgain,
    ];

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Acquire => "acquire",
            Phase::Refresh => "refresh",
            Phase::Release => "release",
            Phase::ReleaseNewest => "release-newest",
            Phase::LastRelease => "last-release",
            Phase::StartOverStale => "start-over-stale",
            Phase::StartAgain => "start-again",
        }
    }
}

/// What a crash takes with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The process dies: what it wrote stays (in the page cache), its session's holder dies.
    ProcessCrash,
    /// The machine loses power: unsynced journal appends are lost or torn, every holder dies.
    PowerLoss,
    /// The process dies and the state directory is deleted: every record is gone.
    StateLoss,
}

/// What one phase enumerated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseReport {
    /// The phase.
    pub phase: Phase,
    /// How many crash points (values of `k` that crashed the step) were checked.
    pub crash_points: u64,
    /// How many power-loss points were checked (every crash point, and the step's end).
    pub power_loss_points: u64,
    /// How many lost-state-directory points were checked (every crash point, and the step's
    /// end).
    pub state_loss_points: u64,
}

/// What [`enumerate_crash_points`] checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashReport {
    /// One entry per phase.
    pub phases: Vec<PhaseReport>,
}

impl CrashReport {
    /// Every crash point of every phase.
    pub fn total(&self) -> u64 {
        self.phases.iter().map(|p| p.crash_points).sum()
    }

    /// Every power-loss point of every phase.
    pub fn power_losses(&self) -> u64 {
        self.phases.iter().map(|p| p.power_loss_points).sum()
    }

    /// Every lost-state-directory point of every phase.
    pub fn state_losses(&self) -> u64 {
        self.phases.iter().map(|p| p.state_loss_points).sum()
    }
}

impl std::fmt::Display for CrashReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .phases
            .iter()
            .map(|p| format!("{} {}", p.phase.name(), p.crash_points))
            .collect();
        write!(
            f,
            "{} ({}), {} state-loss points, and {} power-loss points",
            self.total(),
            parts.join(", "),
            self.state_losses(),
            self.power_losses()
        )
    }
}

/// A bound on `k`, so a step that never completes fails the test instead of looping forever.
const MAX_OPERATIONS: u64 = 10_000;

/// The prompts of the sessions, each distinct so a stale text is recognisable.
const PROMPTS: [&str; 3] = [
    "Session A: answer briefly.",
    "Session B: cite files.",
    "Next start: be exact.",
];

/// Enumerates every crash point of every [`Phase`] for `provider` over the workspace `setup`
/// makes (the user's files), each session asking for its prompt alone, asserting the promises
/// above at each one. Panics on the first broken promise, naming the phase and `k`.
pub fn enumerate_crash_points(
    provider: &dyn Provider,
    probes: &Probes,
    setup: &dyn Fn(&Fixture),
) -> CrashReport {
    enumerate_crash_points_with(provider, probes, setup, &|prompt| {
        SessionRequest::with_prompt(prompt)
    })
}

/// [`enumerate_crash_points`] with the request each session makes for its prompt (e.g. one
/// with every input the provider accepts, so owned configuration and hook files crash too).
pub fn enumerate_crash_points_with(
    provider: &dyn Provider,
    probes: &Probes,
    setup: &dyn Fn(&Fixture),
    session: &dyn Fn(&str) -> SessionRequest,
) -> CrashReport {
    let mut report = CrashReport::default();
    for phase in Phase::ALL {
        let mut points = [0u64; 3];
        for (mode, count) in [Mode::ProcessCrash, Mode::PowerLoss, Mode::StateLoss]
            .into_iter()
            .zip(points.iter_mut())
        {
            let mut k = 0;
            loop {
                assert!(
                    k < MAX_OPERATIONS,
                    "{}: {} never completed",
                    provider.name(),
                    phase.name()
                );
                let run = Run::new(provider, probes, setup, session, mode);
                let crashed = run.crash_at(phase, k);
                if crashed || mode != Mode::ProcessCrash {
                    *count += 1;
                }
                if !crashed {
                    break;
                }
                k += 1;
            }
        }
        report.phases.push(PhaseReport {
            phase,
            crash_points: points[0],
            power_loss_points: points[1],
            state_loss_points: points[2],
        });
    }
    faults::track_durability(false);
    report
}

/// One session of the history.
struct Session {
    holder: Option<HolderProcess>,
    token: Option<String>,
    /// Its holder lives and its lease was not released.
    live: bool,
    prompt: &'static str,
}

/// One fixture and the sessions of one history.
struct Run<'a> {
    mode: Mode,
    session: &'a dyn Fn(&str) -> SessionRequest,
    provider: &'a dyn Provider,
    probes: &'a Probes,
    fx: Fixture,
    original: Tree,
    plan: Plan,
    /// Owned contents any session may have written.
    owned_contents: BTreeSet<Vec<u8>>,
    sessions: Vec<Session>,
    /// The prompt of the latest acquire that completed (what the projection should carry).
    latest: Option<&'static str>,
    /// The state directory was deleted: earlier sessions' leases are gone with it.
    leases_lost: bool,
}

impl<'a> Run<'a> {
    fn new(
        provider: &'a dyn Provider,
        probes: &'a Probes,
        setup: &dyn Fn(&Fixture),
        session: &'a dyn Fn(&str) -> SessionRequest,
        mode: Mode,
    ) -> Run<'a> {
        faults::track_durability(mode == Mode::PowerLoss);
        let fx = Fixture::new();
        setup(&fx);
        let original = Tree::capture(&fx.workspace);
        let plan = plan_for(&fx, provider, probes, &session(PROMPTS[0]));
        let owned_contents = PROMPTS
            .iter()
            .flat_map(|p| plan_for(&fx, provider, probes, &session(p)).owned_files)
            .map(|o| crate::as_written(&o))
            .collect();
        let sessions = PROMPTS[..2]
            .iter()
            .map(|prompt| Session {
                holder: Some(HolderProcess::spawn()),
                token: None,
                live: false,
                prompt,
            })
            .collect();
        Run {
            mode,
            session,
            provider,
            probes,
            fx,
            original,
            plan,
            owned_contents,
            sessions,
            latest: None,
            leases_lost: false,
        }
    }

    fn context(&self, phase: Phase, k: u64) -> String {
        let what = match self.mode {
            Mode::ProcessCrash => "crash",
            Mode::PowerLoss => "power loss",
            Mode::StateLoss => "lost state directory",
        };
        format!(
            "{} phase {} {what} after {k} operations",
            self.provider.name(),
            phase.name()
        )
    }

    fn acquire(&self, prompt: &str, holder: Holder) -> Result<AcquireReceipt, Error> {
        let mut request = AcquireRequest::new(&self.fx.workspace, (self.session)(prompt), holder);
        request.probes = self.probes.clone();
        self.fx.projector.acquire(self.provider, &request)
    }

    /// Runs session `i`'s acquire.
    fn acquire_session(&mut self, i: usize) -> Result<(), Error> {
        let holder = self.sessions[i]
            .holder
            .as_ref()
            .map(HolderProcess::holder)
            .expect("a session acquires while its holder lives");
        let receipt = self.acquire(self.sessions[i].prompt, holder)?;
        self.sessions[i].token = Some(receipt.token);
        self.sessions[i].live = true;
        self.latest = Some(self.sessions[i].prompt);
        Ok(())
    }

    /// Runs session `i`'s release.
    fn release_session(&mut self, i: usize) -> Result<(), Error> {
        let token = self.sessions[i].token.clone().expect("a token to release");
        let receipt = self.fx.projector.release(&token)?;
        assert!(
            receipt.released || self.leases_lost,
            "session {i} was released before"
        );
        self.sessions[i].live = false;
        // A shared block holds the newest live session's text again.
        if self.latest == Some(self.sessions[i].prompt)
            && let Some(newest) = self.sessions.iter().rev().find(|s| s.live)
        {
            self.latest = Some(newest.prompt);
        }
        Ok(())
    }

    fn kill_holder(&mut self, i: usize) {
        if let Some(holder) = self.sessions[i].holder.take() {
            holder.kill9();
        }
        self.sessions[i].live = false;
    }

    /// Runs the history up to `phase` normally, then `phase` with a crash after `k` operations.
    /// Returns whether it crashed (false: `k` reached past the step's last operation; in
    /// [`Mode::PowerLoss`] the power is then lost after the step).
    fn crash_at(mut self, phase: Phase, k: u64) -> bool {
        let ctx = self.context(phase, k);
        // The steps before the crash, done normally.
        match phase {
            Phase::Acquire => {}
            Phase::Refresh => self.acquire_session(0).expect("first acquire"),
            Phase::Release | Phase::ReleaseNewest | Phase::LastRelease => {
                self.acquire_session(0).expect("first acquire");
                self.acquire_session(1).expect("second acquire");
                if phase == Phase::LastRelease {
                    self.release_session(0).expect("first release");
                }
            }
            Phase::StartOverStale => {
                self.acquire_session(0).expect("first acquire");
                self.kill_holder(0);
            }
            Phase::StartAgain => {
                self.acquire_session(0).expect("first acquire");
                self.release_session(0).expect("first release");
            }
        }
        let crashing = match phase {
            Phase::Acquire | Phase::Release => 0,
            Phase::Refresh
            | Phase::ReleaseNewest
            | Phase::LastRelease
            | Phase::StartOverStale
            | Phase::StartAgain => 1,
        };

        let _ = faults::take_seen();
        faults::arm(k);
        let result = match phase {
            Phase::Acquire | Phase::Refresh | Phase::StartOverStale | Phase::StartAgain => {
                self.acquire_session(crashing)
            }
            Phase::Release | Phase::ReleaseNewest | Phase::LastRelease => {
                self.release_session(crashing)
            }
        };
        let crashed = faults::crashed();
        faults::disarm();
        let seen = faults::take_seen();

        if !crashed {
            if let Err(e) = result {
                panic!("{ctx}: the step failed without a crash: {e}");
            }
            assert!(
                seen <= k,
                "{ctx}: {seen} operations ran but the countdown never hit"
            );
            if self.mode == Mode::ProcessCrash {
                self.finish(&ctx);
                return false;
            }
        }
        match self.mode {
            // The process died mid-step: its session's holder dies with it.
            Mode::ProcessCrash => self.kill_holder(crashing),
            // The machine went down: unsynced journal bytes are lost, and every holder with it.
            Mode::PowerLoss => {
                faults::power_loss();
                for i in 0..self.sessions.len() {
                    self.kill_holder(i);
                }
            }
            // The process died (if it did) and the whole state directory went with it.
            Mode::StateLoss => {
                if crashed {
                    self.kill_holder(crashing);
                }
                std::fs::remove_dir_all(&self.fx.state)
                    .unwrap_or_else(|e| panic!("{ctx}: delete the state directory: {e}"));
                self.leases_lost = true;
            }
        }
        // At every other point the folder is also renamed before the next command: a workspace is
        // its folder, whatever it is called now.
        if k % 2 == 1 && self.mode != Mode::PowerLoss {
            let renamed = self.fx.base.join(format!("workspace-renamed-{k}"));
            std::fs::rename(&self.fx.workspace, &renamed)
                .unwrap_or_else(|e| panic!("{ctx}: rename the workspace: {e}"));
            self.fx.workspace = renamed;
        }
        self.assert_consistent(&ctx, true);

        // The next start, by a live holder, cleans what the crash left.
        let me = Holder::current_process().expect("this process as holder");
        let next = self
            .acquire(PROMPTS[2], me)
            .unwrap_or_else(|e| panic!("{ctx}: the next start failed: {e}"));
        self.latest = Some(PROMPTS[2]);
        self.assert_consistent(&ctx, false);
        self.assert_projected(&ctx, "after the next start");

        // The remaining releases: every other live session, then the next start's.
        for i in 0..self.sessions.len() {
            if self.sessions[i].live {
                self.release_session(i)
                    .unwrap_or_else(|e| panic!("{ctx}: release of session {i}: {e}"));
                self.assert_projected(&ctx, &format!("after releasing session {i}"));
            }
        }
        // A crashed session's token may be released again: never an error.
        for session in &self.sessions {
            if let Some(token) = &session.token {
                self.fx
                    .projector
                    .release(token)
                    .unwrap_or_else(|e| panic!("{ctx}: a second release failed: {e}"));
            }
        }
        let receipt = self
            .fx
            .projector
            .release(&next.token)
            .unwrap_or_else(|e| panic!("{ctx}: the last release failed: {e}"));
        assert!(receipt.released, "{ctx}: the next start's lease was lost");
        assert!(
            receipt.warnings.is_empty(),
            "{ctx}: warnings: {:?}",
            receipt.warnings
        );
        // With the state directory lost too: what the sessions made is recorded in the workspace,
        // so nothing of ours is left either.
        self.assert_clean(&ctx);
        crashed
    }

    /// After a step completed without crashing: the rest of the history, then the clean check.
    fn finish(&mut self, ctx: &str) {
        for i in 0..self.sessions.len() {
            if self.sessions[i].live {
                self.assert_projected(ctx, "while a session lives");
                self.release_session(i)
                    .unwrap_or_else(|e| panic!("{ctx}: release of session {i}: {e}"));
            }
        }
        // A dead session's leftovers (start-over-stale) are cleaned by now; strip-stale is a no-op.
        self.fx
            .projector
            .strip_stale(&self.fx.workspace)
            .unwrap_or_else(|e| panic!("{ctx}: strip-stale failed: {e}"));
        self.assert_clean(ctx);
    }

    /// The projection is present exactly while a live lease holds it. Called only while one does.
    fn assert_projected(&self, ctx: &str, when: &str) {
        let tree = Tree::capture(&self.fx.workspace);
        let markers = Markers::new(&Namespace::default());
        for b in &self.plan.blocks {
            let bytes = file_bytes(&tree, b.path.as_str())
                .unwrap_or_else(|| panic!("{ctx}: {when}: {} is missing", b.path));
            let span = block::find(&markers, bytes)
                .unwrap_or_else(|e| panic!("{ctx}: {when}: {} is malformed: {e}", b.path));
            assert!(span.is_some(), "{ctx}: {when}: no block in {}", b.path);
            let latest = self.latest.expect("a session acquired");
            assert!(
                String::from_utf8_lossy(bytes).contains(latest),
                "{ctx}: {when}: {} does not carry the latest prompt",
                b.path
            );
        }
        for o in &self.plan.owned_files {
            let bytes = file_bytes(&tree, o.path.as_str())
                .unwrap_or_else(|| panic!("{ctx}: {when}: {} is missing", o.path));
            assert!(
                self.owned_contents.contains(bytes),
                "{ctx}: {when}: {} does not hold our content",
                o.path
            );
        }
        for m in &self.plan.markers {
            if self.original.0.contains_key(m.path.as_str()) {
                continue;
            }
            let node = tree.0.get(m.path.as_str());
            let ok = match m.kind {
                MarkerKind::Dir => matches!(node, Some(Node::Dir { .. })),
                MarkerKind::File => matches!(node, Some(Node::File { .. })),
            };
            assert!(ok, "{ctx}: {when}: marker {} is missing", m.path);
        }
    }

    /// Every user byte is where the user left it; only our projections (and, right after a crash,
    /// our temporary files) may be extra.
    fn assert_consistent(&self, ctx: &str, temps_allowed: bool) {
        let raw = Tree::capture(&self.fx.workspace);
        for path in raw.paths().filter(|p| p.contains(TEMP_INFIX)) {
            assert!(
                temps_allowed,
                "{ctx}: a temporary file is left behind: {path}"
            );
        }
        // The project's own content we took over is in the priors folder meanwhile.
        let tree = folded(&raw);
        let markers = Markers::new(&Namespace::default());
        let blocks: BTreeSet<&str> = self.plan.blocks.iter().map(|b| b.path.as_str()).collect();
        let owned = self.owned_paths();
        let mut ours: BTreeSet<String> = BTreeSet::new();
        for p in self.plan_paths() {
            ours.insert(p.clone());
            let mut at = p.as_str();
            while let Some((parent, _)) = at.rsplit_once('/') {
                ours.insert(parent.to_string());
                at = parent;
            }
        }
        for (path, node) in &self.original.0 {
            assert!(
                tree.0.contains_key(path),
                "{ctx}: the user's {path} vanished"
            );
            if !blocks.contains(path.as_str()) && !owned.contains(path.as_str()) {
                assert_eq!(
                    tree.0.get(path),
                    Some(node),
                    "{ctx}: the user's {path} changed"
                );
            }
        }
        for (path, node) in &tree.0 {
            if path.contains(TEMP_INFIX) {
                continue;
            }
            let before = self.original.0.get(path);
            if blocks.contains(path.as_str()) {
                let Node::File { bytes, mode } = node else {
                    panic!("{ctx}: {path} is no longer a file");
                };
                // A block put after text without a final newline ends the user's last line.
                let joined =
                    matches!(before, Some(Node::File { bytes: b, .. }) if !block::ends_line(b));
                let removed = block::remove(&markers.with_joined(joined), bytes)
                    .unwrap_or_else(|e| panic!("{ctx}: {path} is malformed: {e}"));
                match (before, removed) {
                    (Some(Node::File { bytes: b, mode: m }), None) => {
                        assert_eq!((bytes, mode), (b, m), "{ctx}: {path} changed");
                    }
                    (Some(Node::File { bytes: b, mode: m }), Some(r)) => {
                        assert_eq!(&r.bytes, b, "{ctx}: user bytes of {path} changed");
                        assert_eq!(mode, m, "{ctx}: the mode of {path} changed");
                    }
                    (None, Some(r)) => {
                        assert!(r.now_empty, "{ctx}: {path} holds bytes that are not ours");
                    }
                    (None, None) => panic!("{ctx}: {path} was created without a block"),
                    (Some(other), _) => panic!("{ctx}: {path} was {other:?}"),
                }
            } else if owned.contains(path.as_str()) {
                let Node::File { bytes, .. } = node else {
                    panic!("{ctx}: {path} is no longer a file");
                };
                let is_original = before == Some(node);
                assert!(
                    is_original || self.owned_contents.contains(bytes),
                    "{ctx}: {path} holds neither the user's bytes nor ours"
                );
            } else if before.is_none() {
                assert!(
                    ours.contains(path),
                    "{ctx}: {path} appeared and is not ours"
                );
            }
        }
    }

    fn owned_paths(&self) -> BTreeSet<&str> {
        self.plan
            .owned_files
            .iter()
            .map(|o| o.path.as_str())
            .collect()
    }

    fn plan_paths(&self) -> Vec<String> {
        let p = &self.plan;
        p.blocks
            .iter()
            .map(|b| b.path.to_string())
            .chain(p.owned_files.iter().map(|o| o.path.to_string()))
            .chain(p.markers.iter().map(|m| m.path.to_string()))
            .collect()
    }

    /// Nothing of ours is left: the workspace is byte for byte the original and the state
    /// directory holds no ledger, stash, kept bytes or temporary files.
    fn assert_clean(&self, ctx: &str) {
        let tree = Tree::capture(&self.fx.workspace);
        if tree != self.original {
            let diff: Vec<&String> = tree
                .0
                .keys()
                .chain(self.original.0.keys())
                .filter(|k| tree.0.get(*k) != self.original.0.get(*k))
                .collect();
            panic!("{ctx}: the workspace is not as the user left it; differs at {diff:?}");
        }
        let leftovers = crate::state_leftovers(&self.fx.state);
        assert!(
            leftovers.is_empty(),
            "{ctx}: state leftovers: {leftovers:?}"
        );
    }
}

/// The workspace as the user sees it with every prior in the priors folder back at its own
/// path (where nothing else stands), and the priors folder itself left out.
fn folded(tree: &Tree) -> Tree {
    let top = format!("{}/", priors::dir_name(&Namespace::default()));
    let mut out = std::collections::BTreeMap::new();
    let mut moves: Vec<(String, String)> = Vec::new();
    for (path, node) in &tree.0 {
        let Some(rest) = path.strip_prefix(&top) else {
            if format!("{path}/") != top {
                out.insert(path.clone(), node.clone());
            }
            continue;
        };
        if let (Some(id), Node::File { bytes, .. }) = (rest.strip_suffix("/manifest.json"), node)
            && let Ok(manifest) = serde_json::from_slice::<serde_json::Value>(bytes)
            && let Some(original) = manifest["path"].as_str()
        {
            let name = original.rsplit('/').next().unwrap_or(original);
            moves.push((format!("{top}{id}/{name}"), original.to_string()));
        }
    }
    for (from, to) in moves {
        if out.contains_key(&to) {
            continue;
        }
        for (path, node) in &tree.0 {
            if let Some(rest) = path.strip_prefix(from.as_str())
                && (rest.is_empty() || rest.starts_with('/'))
            {
                out.insert(format!("{to}{rest}"), node.clone());
            }
        }
    }
    Tree(out)
}

fn file_bytes<'t>(tree: &'t Tree, path: &str) -> Option<&'t Vec<u8>> {
    match tree.0.get(path) {
        Some(Node::File { bytes, .. }) => Some(bytes),
        _ => None,
    }
}

fn plan_for(
    fx: &Fixture,
    provider: &dyn Provider,
    probes: &Probes,
    request: &SessionRequest,
) -> Plan {
    let mut acquire = AcquireRequest::new(
        &fx.workspace,
        request.clone(),
        Holder::current_process().expect("holder"),
    );
    acquire.probes = probes.clone();
    let mut plan = fx.projector.plan(provider, &acquire).expect("plan");
    // Merged JSON files are owned files whose content core derives from the project's file.
    projectfile_core::projector::merged_json::resolve_for_first_start(&fx.workspace, &mut plan)
        .expect("merge");
    plan
}
