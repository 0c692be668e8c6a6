//! What a command costs follows the work it does, not the number of live leases nor the size of
//! the user's file: counted, never timed. Each distinct holder's `/proc` entry is read once per
//! command however many leases name it (`holder::proc_reads_on_this_thread`), the journal of a
//! workspace with many leases is not rewritten durably on every command
//! (`fsio::syncs_on_this_thread`), and a start reads the file it puts its block in once
//! (`fsio::bytes_read_on_this_thread`), its delivery verdict included: the verdict takes what the
//! start wrote instead of reading the file again (`StdFs::reads_on_this_thread`). The journal's
//! newest record is read once, in one sized read past the tail, however large it is
//! (`fsio::bytes_read_on_this_thread`), and each lease is serialised once per command however
//! often the command saves (`ledger::leases_serialised_on_this_thread`). A session started and
//! ended among hundreds appends delta records of what it changed (the journal's length). A command opens each
//! folder it needs once (`fsio::dir_opens_on_this_thread`), and an acquire does not read again
//! the holder its request was built with moments before.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_core::guidance::{DiscoveryProfile, FileReads, OmissionReason, StdFs, Undelivered};
use projectfile_core::holder::{self, Holder};
use projectfile_core::projector::{AcquireRequest, Projector};
use projectfile_core::testing::{fsio, journal, ledger};
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

/// The same block, judged by a Codex-shaped discovery profile: AGENTS.md read whole, verbatim,
/// within a budget of 32 KiB that launch arguments raise.
struct BudgetedBlock;

/// Codex's shape of discovery, reading AGENTS.md.
fn codex_shaped() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec!["AGENTS.override.md".into(), "AGENTS.md".into()],
        first_wins: true,
        budget_bytes: Some(32 * 1024),
        truncate_at_budget: true,
        verbatim: true,
        budget_launch_args: vec!["-c".into(), "project_doc_max_bytes={bytes}".into()],
        ..Default::default()
    }
}

const BUDGETED_BLOCK: ProviderSpec =
    ProviderSpec::new("budgeted-block", codex_shaped).session_text_in_file();

impl Provider for BudgetedBlock {
    fn spec(&self) -> &'static ProviderSpec {
        &BUDGETED_BLOCK
    }

    fn session_plan(&self, ctx: &PlanContext<'_>) -> projectfile_provider::Result<Plan> {
        Block.session_plan(ctx)
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

/// Each distinct holder is read once per command; a lease read from the journal is never
/// serialised again (its bytes are kept), and a new one once however often its command saves (a
/// start saves its intent, then what it wrote).
#[test]
fn a_holder_shared_by_many_leases_is_read_once_per_command() {
    let setup = with_leases(64);
    // The holder is read when the request is built, and the acquire takes that answer.
    let before = holder::proc_reads_on_this_thread();
    let me = Holder::current_process().unwrap();
    let request = AcquireRequest::new(&setup.ws, SessionRequest::with_prompt("one more"), me);
    let serialised = ledger::leases_serialised_on_this_thread();
    let receipt = setup.projector.acquire(&Block, &request).unwrap();
    assert_eq!(
        holder::proc_reads_on_this_thread() - before,
        1,
        "building the holder, then acquire"
    );
    let serialised = ledger::leases_serialised_on_this_thread() - serialised;
    assert_eq!(serialised, 1, "leases serialised by acquire: its own");
    let before = holder::proc_reads_on_this_thread();
    let status = setup.projector.status(&setup.ws).unwrap();
    assert_eq!(status.leases.len(), 65);
    assert_eq!(holder::proc_reads_on_this_thread() - before, 1, "status");
    let before = holder::proc_reads_on_this_thread();
    let serialised = ledger::leases_serialised_on_this_thread();
    assert!(setup.projector.release(&receipt.token).unwrap().released);
    assert_eq!(holder::proc_reads_on_this_thread() - before, 1, "release");
    let serialised = ledger::leases_serialised_on_this_thread() - serialised;
    assert_eq!(serialised, 0, "leases serialised by release");
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

/// One start in a workspace whose AGENTS.md holds `user`: the bytes fsio read, what the
/// resolver's file system read, and the receipt.
fn start_reads(user: &[u8]) -> (u64, FileReads, projectfile_core::projector::AcquireReceipt) {
    let setup = with_leases(0);
    std::fs::write(setup.ws.join("AGENTS.md"), user).unwrap();
    let me = Holder::current_process().unwrap();
    let request = AcquireRequest::new(&setup.ws, SessionRequest::with_prompt("once"), me);
    let (fsio_before, std_before) = (
        fsio::bytes_read_on_this_thread(),
        StdFs::reads_on_this_thread(),
    );
    let receipt = setup.projector.acquire(&BudgetedBlock, &request).unwrap();
    let std_after = StdFs::reads_on_this_thread();
    let read = fsio::bytes_read_on_this_thread() - fsio_before;
    let std_reads = FileReads {
        files: std_after.files - std_before.files,
        bytes: std_after.bytes - std_before.bytes,
    };
    let written = std::fs::metadata(setup.ws.join("AGENTS.md")).unwrap().len();
    if !receipt.delivery.launch_args.is_empty() {
        // Verbatim: the text ends with the file, so the budget raised to deliver it is the
        // file's size: the verdict judged every byte written.
        let raised = format!("project_doc_max_bytes={written}");
        assert_eq!(receipt.delivery.launch_args, ["-c", raised.as_str()]);
    }
    assert!(setup.projector.release(&receipt.token).unwrap().released);
    assert!(
        std::fs::read(setup.ws.join("AGENTS.md")).unwrap() == user,
        "not byte-exact"
    );
    (read, std_reads, receipt)
}

#[test]
fn a_start_and_its_delivery_verdict_read_agents_md_once() {
    let line = b"- a rule of the project, kept byte for byte by every session\n";
    let none = FileReads::default();
    // Small, large but still read by the CLI (the verdict needs every byte), and over the
    // 4 MiB the CLI reads at all (the verdict needs the size alone).
    for size in [1 << 10, (4 << 20) - (64 << 10), 5 << 20] {
        let user: Vec<u8> = line.iter().copied().cycle().take(size).collect();
        let (read, std_reads, receipt) = start_reads(&user);
        let size = size as u64;
        assert!(
            (size..size + 64 * 1024).contains(&read),
            "acquire read {read} bytes of a {size}-byte file and its small state"
        );
        assert_eq!(
            std_reads, none,
            "the verdict read the file again ({size} bytes)"
        );
        let verdict = &receipt.delivery;
        if size > 4 << 20 {
            assert_eq!(
                verdict.undelivered,
                Some(Undelivered::Dropped {
                    omission: OmissionReason::FileTooLarge
                }),
                "{verdict:?}"
            );
        } else {
            assert!(verdict.delivered, "{verdict:?}");
            // Past the budget, delivered only with the launch arguments that raise it.
            assert_eq!(
                verdict.launch_args.is_empty(),
                size < 32 * 1024,
                "{verdict:?}"
            );
        }
    }
}

/// The length of the newest line of the journal of the workspace `setup` holds (with that of
/// its base, a full record, when it is a delta record), and the file's length.
fn newest_journal_line(setup: &Setup) -> (u64, u64) {
    let workspaces = setup._dir.path().join("state").join("workspaces");
    let key = std::fs::read_dir(&workspaces)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let bytes = std::fs::read(key.path().join(journal::JOURNAL_FILE)).unwrap();
    let line = bytes[..bytes.len() - 1]
        .rsplit(|b| *b == b'\n')
        .next()
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(line).unwrap();
    let base = value["ledger"]["base"][1].as_u64().unwrap_or(0);
    (line.len() as u64 + 1 + base, bytes.len() as u64)
}

#[test]
fn a_command_reads_the_newest_record_once_however_large() {
    let setup = with_leases(256);
    let (record, file) = newest_journal_line(&setup);
    assert!(record > 16 * journal::TAIL, "a record of {record} bytes");
    assert!(file > 4 * record, "a journal of {file} bytes");
    let before = fsio::bytes_read_on_this_thread();
    let status = setup.projector.status(&setup.ws).unwrap();
    assert_eq!(status.leases.len(), 256);
    let read = fsio::bytes_read_on_this_thread() - before;
    // The end of the file, then the rest of the newest record (and its base): nothing read
    // twice.
    assert!(
        read <= record + journal::TAIL,
        "status read {read} bytes for a newest record of {record}"
    );
}

/// The journal's length in the workspace `setup` holds.
fn journal_len(setup: &Setup) -> u64 {
    newest_journal_line(setup).1
}

/// A session started and ended among 256 others appends what it changed, not every lease again:
/// delta records, each naming the newest full record.
#[test]
fn a_session_among_many_appends_what_it_changed() {
    let setup = with_leases(256);
    let me = Holder::current_process().unwrap();
    let pair = || {
        let request = AcquireRequest::new(
            &setup.ws,
            SessionRequest::with_prompt("one more"),
            me.clone(),
        );
        let receipt = setup.projector.acquire(&Block, &request).unwrap();
        assert!(setup.projector.release(&receipt.token).unwrap().released);
    };
    pair();
    let (newest, _) = newest_journal_line(&setup);
    let before = journal_len(&setup);
    pair();
    let appended = journal_len(&setup) - before;
    // A full record holds the 256 leases; the pair's records, the few changed since it.
    let full = newest_journal_line(&setup).0;
    eprintln!("a pair appended {appended} bytes; the newest record and its base: {newest}");
    assert!(appended > 0);
    assert!(
        appended * 4 < full,
        "a pair appended {appended} bytes beside a full record of about {full}"
    );
}

/// Directory descriptors an acquire and a release of the block ask for, the workspace's state
/// made by an earlier session: each folder on the way once. No descriptor is duplicated or
/// reopened around a walk or a listing, the state folders a save sweeps (`sessions`,
/// `kept`) are looked for once per command while nothing was made there, the workspace root is
/// listed for temporary files once while nothing was written there, and the workspace's state
/// folder, there already, is opened without a `mkdir` walk.
#[test]
fn a_command_opens_each_folder_it_needs_once() {
    let setup = with_leases(0);
    let me = Holder::current_process().unwrap();
    let request = AcquireRequest::new(&setup.ws, SessionRequest::with_prompt("first"), me.clone());
    let first = setup.projector.acquire(&Block, &request).unwrap();
    assert!(setup.projector.release(&first.token).unwrap().released);
    // A second text, so the journal's sync slots are there too (made once per workspace).
    let request = AcquireRequest::new(&setup.ws, SessionRequest::with_prompt("second"), me.clone());
    let second = setup.projector.acquire(&Block, &request).unwrap();
    assert!(setup.projector.release(&second.token).unwrap().released);

    let request = AcquireRequest::new(&setup.ws, SessionRequest::with_prompt("counted"), me);
    let before = fsio::dir_opens_on_this_thread();
    let receipt = setup.projector.acquire(&Block, &request).unwrap();
    let acquire = fsio::dir_opens_on_this_thread() - before;
    let before = fsio::dir_opens_on_this_thread();
    assert!(setup.projector.release(&receipt.token).unwrap().released);
    let release = fsio::dir_opens_on_this_thread() - before;
    eprintln!("directory descriptors: acquire {acquire}, release {release}");
    // Before: 19 for the acquire (the state folders looked for after each of its two saves, the
    // workspace root listed twice, the state subfolders walked with `mkdir` before being
    // opened, every listing reopening its folder); 11 for the release.
    assert!(
        acquire <= 13,
        "acquire opened {acquire} directory descriptors"
    );
    assert!(
        release <= 11,
        "release opened {release} directory descriptors"
    );
}
