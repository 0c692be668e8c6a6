//! What a command costs follows the work it does, not the number of live leases nor the size of
//! the user's file: counted, never timed. Each distinct holder's `/proc` entry is read once per
//! command however many leases name it (`holder::proc_reads_on_this_thread`), the journal of a
//! workspace with many leases is not rewritten durably on every command
//! (`fsio::syncs_on_this_thread`), and a start reads the file it puts its block in once
//! (`fsio::bytes_read_on_this_thread`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_core::guidance::DiscoveryProfile;
use projectfile_core::holder::{self, Holder};
use projectfile_core::projector::{AcquireRequest, Projector};
use projectfile_core::testing::{fsio, journal};
use projectfile_core::{
    Namespace, Plan, PlanContext, Provider, ProviderSpec, RelPath, SessionRequest, patterns,
};

/// The session block in AGENTS.md, as Codex has it.
struct Block;

const BLOCK: ProviderSpec =
    ProviderSpec::new("block", DiscoveryProfile::default).session_text_in_file();

impl Provider for Block {
    fn spec(&self) -> &'static ProviderSpec {
        &BLOCK
    }

    fn session_plan(&self, ctx: &PlanContext<'_>) -> projectfile_provider::Result<Plan> {
        patterns::block_plan(ctx, RelPath::new(patterns::AGENTS_MD)?, Vec::new())
    }
}

/// Nothing projected: a lease and nothing else, as an Agy session without hooks.
struct LeaseOnly;

const LEASE_ONLY: ProviderSpec = ProviderSpec::new("lease-only", DiscoveryProfile::default);

impl Provider for LeaseOnly {
    fn spec(&self) -> &'static ProviderSpec {
        &LEASE_ONLY
    }

    fn session_plan(&self, _: &PlanContext<'_>) -> projectfile_provider::Result<Plan> {
        Ok(patterns::not_projected_plan("nothing to project"))
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    ws: std::path::PathBuf,
    projector: Projector,
}

/// A workspace holding `leases` live leases, all held by this process.
fn with_leases(leases: usize) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("AGENTS.md"), "# Rules\n").unwrap();
    let projector = Projector::new(dir.path().join("state"), Namespace::default());
    let me = Holder::current_process().unwrap();
    for i in 0..leases {
        let session = SessionRequest::with_prompt(format!("background {i}"));
        let request = AcquireRequest::new(&ws, session, me.clone());
        projector.acquire(&LeaseOnly, &request).unwrap();
    }
    Setup {
        _dir: dir,
        ws,
        projector,
    }
}

#[test]
fn a_holder_shared_by_many_leases_is_read_once_per_command() {
    let setup = with_leases(64);
    let me = Holder::current_process().unwrap();
    let request = AcquireRequest::new(&setup.ws, SessionRequest::with_prompt("one more"), me);
    let before = holder::proc_reads_on_this_thread();
    let receipt = setup.projector.acquire(&Block, &request).unwrap();
    assert_eq!(holder::proc_reads_on_this_thread() - before, 1, "acquire");
    let before = holder::proc_reads_on_this_thread();
    let status = setup.projector.status(&setup.ws).unwrap();
    assert_eq!(status.leases.len(), 65);
    assert_eq!(holder::proc_reads_on_this_thread() - before, 1, "status");
    let before = holder::proc_reads_on_this_thread();
    assert!(setup.projector.release(&receipt.token).unwrap().released);
    assert_eq!(holder::proc_reads_on_this_thread() - before, 1, "release");
}

/// Syncs (`fsync` + `fdatasync`) of `sessions` acquire + release pairs of the block, after a
/// first one has made AGENTS.md and the session text known to the ledger (a new text is listed
/// durably once, see the journal).
fn syncs_of_sessions(setup: &Setup, sessions: u64) -> u64 {
    let me = Holder::current_process().unwrap();
    let session = |prompt: &str| {
        AcquireRequest::new(&setup.ws, SessionRequest::with_prompt(prompt), me.clone())
    };
    let first = setup
        .projector
        .acquire(&Block, &session("one more"))
        .unwrap();
    setup.projector.release(&first.token).unwrap();
    let before = fsio::syncs_on_this_thread();
    for _ in 0..sessions {
        let receipt = setup
            .projector
            .acquire(&Block, &session("one more"))
            .unwrap();
        assert!(setup.projector.release(&receipt.token).unwrap().released);
    }
    fsio::syncs_on_this_thread() - before
}

#[test]
fn many_live_leases_add_no_sync_to_a_session_but_a_rare_compaction() {
    const SESSIONS: u64 = 40;
    let none = syncs_of_sessions(&with_leases(0), SESSIONS);
    assert_eq!(none, 4 * SESSIONS, "two durable rewrites of AGENTS.md each");
    // 256 leases make a ledger record of more than 64 KiB: the journal is compacted (2 syncs)
    // once per `COMPACT_RECORDS` saves, not on every one.
    let many = syncs_of_sessions(&with_leases(256), SESSIONS);
    let saves = 2 * SESSIONS;
    let compactions = saves / (journal::COMPACT_RECORDS - 1) + 1;
    assert!(
        many <= none + 2 * compactions,
        "{many} syncs for {SESSIONS} sessions with 256 leases, {none} with none"
    );
}

#[test]
fn a_start_reads_its_file_once() {
    let setup = with_leases(0);
    let agents = setup.ws.join("AGENTS.md");
    let line = b"- a rule of the project, kept byte for byte by every session\n";
    let user: Vec<u8> = line.iter().copied().cycle().take(4 << 20).collect();
    std::fs::write(&agents, &user).unwrap();
    let me = Holder::current_process().unwrap();
    let session =
        || AcquireRequest::new(&setup.ws, SessionRequest::with_prompt("once"), me.clone());
    // A first session lists AGENTS.md in the ledger; after its release, every start checks the
    // file for a block a power loss may have left before it puts its own in.
    let first = setup.projector.acquire(&Block, &session()).unwrap();
    assert!(setup.projector.release(&first.token).unwrap().released);
    let before = fsio::bytes_read_on_this_thread();
    let receipt = setup.projector.acquire(&Block, &session()).unwrap();
    let read = fsio::bytes_read_on_this_thread() - before;
    let size = user.len() as u64;
    assert!(
        (size..size + 64 * 1024).contains(&read),
        "acquire read {read} bytes of a {size}-byte file and its small state"
    );
    let before = fsio::bytes_read_on_this_thread();
    assert!(setup.projector.release(&receipt.token).unwrap().released);
    let read = fsio::bytes_read_on_this_thread() - before;
    assert!(
        (size..size + 64 * 1024).contains(&read),
        "release read {read}"
    );
    assert!(std::fs::read(&agents).unwrap() == user, "not byte-exact");
}
