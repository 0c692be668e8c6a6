//! The ledger journal through the projector (docs/promises.md, promises 6 and 8; benchmark (a)):
//! a session that only puts a block into a file the ledger already lists makes exactly the
//! workspace's own durable writes; a power loss that takes its unsynced record leaves a block the
//! next start removes; a torn record is discarded and cut off; a `ledger.json` from an earlier
//! build is taken over without losing its leases.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::{Fixture, HolderProcess, Subject, state_leftovers};
use projectfile_core::testing::fsio::{self, faults};
use projectfile_core::testing::journal::{self, JOURNAL_FILE, LEGACY_LEDGER_FILE};
use projectfile_core::testing::ledger::workspace_key;
use std::path::PathBuf;

const USER: &[u8] = b"# House rules\r\nkeep it green\r\n";

fn codex() -> Subject {
    Subject::new(projectfile_codex::Codex)
}

fn journal_path(fx: &Fixture) -> PathBuf {
    fx.state
        .join("workspaces")
        .join(workspace_key(&fx.workspace))
        .join(JOURNAL_FILE)
}

/// Syncs made by `f` on this thread.
fn syncs<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = fsio::syncs_on_this_thread();
    let out = f();
    (out, fsio::syncs_on_this_thread() - before)
}

#[test]
fn a_session_in_a_known_file_makes_only_the_workspaces_own_syncs() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", USER);
    let subject = codex();
    // The first session records AGENTS.md durably: the journal's creation (file + directory)
    // before the block goes in, then the block's write and its removal (file + directory each).
    let (_, first) = syncs(|| {
        let a = fx.acquire(&subject, "first").unwrap();
        assert!(fx.release(&a.token));
    });
    assert_eq!(first, 6, "the first cycle");
    // A new session text is listed durably before it is written (a refresh or a release tells
    // the user's lines in the block from ours by it). The first time, the journal's sync slots
    // are made for it (file + directory, once per workspace)...
    let (_, n) = syncs(|| {
        let a = fx.acquire(&subject, "new").unwrap();
        assert!(fx.release(&a.token));
    });
    assert_eq!(n, 6, "the first new text");
    // ...and from then on a slot is written in place: one sync more.
    let (_, n) = syncs(|| {
        let a = fx.acquire(&subject, "again").unwrap();
        assert!(fx.release(&a.token));
    });
    assert_eq!(n, 5, "a new text");
    // Every later one with that text: the two durable rewrites of AGENTS.md and nothing else,
    // the bare minimum.
    for cycle in 0..5 {
        let (_, n) = syncs(|| {
            let a = fx.acquire(&subject, "again").unwrap();
            assert!(fx.release(&a.token));
        });
        assert_eq!(n, 4, "cycle {cycle}");
    }
    assert_eq!(fx.read("AGENTS.md").unwrap(), USER);
    fx.assert_no_ledger();
}

#[test]
fn a_power_loss_that_takes_a_start_record_leaves_a_block_the_next_start_removes() {
    faults::track_durability(true);
    let fx = Fixture::new();
    fx.write("AGENTS.md", USER);
    let subject = codex();
    let a = fx.acquire(&subject, "first").unwrap();
    assert!(fx.release(&a.token));
    // The same text again: nothing new to list, so the start's record is not synced.
    let holder = HolderProcess::spawn();
    fx.acquire_as(&subject, "first", holder.holder()).unwrap();
    assert_ne!(fx.read("AGENTS.md").unwrap(), USER, "the block is in");
    // The machine goes down: the start's record was never synced, its holder dies.
    assert_eq!(faults::power_loss(), vec![journal_path(&fx)]);
    holder.kill9();
    faults::track_durability(false);

    let next = fx.acquire(&subject, "next").unwrap();
    assert!(
        next.warnings
            .iter()
            .any(|w| w.message.contains("no lease records")),
        "{:?}",
        next.warnings
    );
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert!(text.contains("next") && !text.contains("first"), "{text}");
    assert!(fx.release(&next.token));
    assert_eq!(fx.read("AGENTS.md").unwrap(), USER);
    fx.assert_no_ledger();
}

#[test]
fn a_power_loss_after_a_new_text_keeps_it_listed_through_the_sync_slot() {
    faults::track_durability(true);
    let fx = Fixture::new();
    fx.write("AGENTS.md", USER);
    let subject = codex();
    for text in ["first", "second"] {
        let a = fx.acquire(&subject, text).unwrap();
        assert!(fx.release(&a.token));
    }
    // A new text, held by a process that dies with the machine: listed durably in a sync slot,
    // the journal's copy of the record left unsynced.
    let holder = HolderProcess::spawn();
    fx.acquire_as(&subject, "third text", holder.holder())
        .unwrap();
    // The user writes a line inside the block while the session runs.
    let with_block = fx.read("AGENTS.md").unwrap();
    let begin = with_block
        .windows(b"BEGIN".len())
        .position(|w| w == b"BEGIN")
        .unwrap();
    let after_begin = begin
        + with_block[begin..]
            .iter()
            .position(|b| *b == b'\n')
            .unwrap()
        + 1;
    let mut edited = with_block[..after_begin].to_vec();
    edited.extend_from_slice(b"user line\r\n");
    edited.extend_from_slice(&with_block[after_begin..]);
    fx.write("AGENTS.md", &edited);
    // The machine goes down: the journal loses what was not synced, the start's record with it.
    assert!(faults::power_loss().contains(&journal_path(&fx)));
    holder.kill9();
    faults::track_durability(false);

    // The next start reads the start's record from its slot: the dead session's block goes, its
    // text told from the user's line, which stays.
    let next = fx.acquire(&subject, "next").unwrap();
    assert!(fx.release(&next.token));
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert!(
        text.starts_with("# House rules\r\nkeep it green\r\n"),
        "{text}"
    );
    assert!(text.contains("user line\r\n"), "{text}");
    assert!(
        !text.contains("third text") && !text.contains("session-instructions"),
        "{text}"
    );
    fx.assert_no_ledger();
}

#[test]
fn a_torn_record_is_discarded_and_cut_off() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", USER);
    let subject = codex();
    let a = fx.acquire(&subject, "held").unwrap();
    // A process killed in the middle of its append leaves half a record.
    let path = journal_path(&fx);
    let mut bytes = std::fs::read(&path).unwrap();
    let good = bytes.len();
    let torn = journal::frame(b"{\"version\":1}");
    bytes.extend_from_slice(&torn[..torn.len() / 2]);
    std::fs::write(&path, &bytes).unwrap();

    assert!(fx.release(&a.token), "the lease survives the torn record");
    assert_eq!(fx.read("AGENTS.md").unwrap(), USER);
    let after = std::fs::read(&path).unwrap();
    assert_eq!(&after[..good], &bytes[..good], "good records are kept");
    assert_eq!(
        journal::scan(&after).good_len,
        after.len(),
        "the torn bytes are gone"
    );
    let b = fx.acquire(&subject, "again").unwrap();
    assert!(fx.release(&b.token));
    fx.assert_no_ledger();
}

#[test]
fn a_ledger_from_an_earlier_build_is_taken_over() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", USER);
    let subject = codex();
    let a = fx.acquire(&subject, "from the old build").unwrap();
    // Turn the journal into the single pretty-printed `ledger.json` earlier builds wrote.
    let path = journal_path(&fx);
    let bytes = std::fs::read(&path).unwrap();
    let body = journal::scan(&bytes).last.unwrap().to_vec();
    let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let legacy = path.with_file_name(LEGACY_LEDGER_FILE);
    std::fs::write(&legacy, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();

    assert!(fx.release(&a.token), "the old build's lease is found");
    assert_eq!(fx.read("AGENTS.md").unwrap(), USER);
    assert!(!legacy.exists(), "the old ledger is gone once migrated");
    assert!(state_leftovers(&fx.state).is_empty());
}

#[test]
fn a_damaged_journal_is_refused_and_nothing_is_touched() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", USER);
    let subject = codex();
    let a = fx.acquire(&subject, "held").unwrap();
    let with_block = fx.read("AGENTS.md").unwrap();
    // Something overwrote the whole journal: no intact record is left to trust.
    let path = journal_path(&fx);
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    std::fs::write(&path, vec![b'#'; len]).unwrap();

    for refused in [
        fx.acquire(&subject, "another").unwrap_err(),
        fx.projector.release(&a.token).unwrap_err(),
        fx.projector.status(&fx.workspace).unwrap_err(),
    ] {
        assert_eq!(refused.kind(), "ledger", "{refused}");
        assert!(refused.to_string().contains(JOURNAL_FILE), "{refused}");
    }
    assert_eq!(fx.read("AGENTS.md").unwrap(), with_block, "left as it was");
    assert_eq!(std::fs::read(&path).unwrap(), vec![b'#'; len]);
}

#[test]
fn a_private_directory_no_lease_names_is_swept() {
    let fx = Fixture::new();
    let subject = codex();
    let a = fx.acquire(&subject, "first").unwrap();
    // What a power loss can leave: the release's record on disk, its `rm -r` not.
    let state = journal_path(&fx).with_file_name("sessions");
    let left = state.join("pf1-0000000000000000-00000000000000000000000000000000");
    std::fs::create_dir_all(&left).unwrap();
    std::fs::write(left.join("prompt.md"), b"old session text").unwrap();
    assert!(fx.release(&a.token));
    assert!(!left.exists(), "swept at the next save");
    fx.assert_no_ledger();
}
