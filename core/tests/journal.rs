//! The ledger journal through the projector (docs/promises.md, promises 6 and 8; benchmark (a)):
//! a session that only puts a block into a file the ledger already lists makes exactly the
//! workspace's own durable writes; a power loss that takes its unsynced record leaves a block the
//! next start removes; a text a release gives back syncs nothing of the ledger and is still told
//! from the user's lines after a power loss, by the lease that put it there; a user's line equal
//! to a session text stays; a torn record is discarded and cut off.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::{Fixture, HolderProcess, Subject};
use projectfile_core::testing::fsio::{self, faults};
use projectfile_core::testing::journal::{self, JOURNAL_FILE};
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
    fx.write("AGENTS.md", &with_line_in_block(&with_block, "user line"));
    // The machine goes down: the journal loses what was not synced, the start's record with it.
    assert!(faults::power_loss().contains(&journal_path(&fx)));
    holder.kill9();
    faults::track_durability(false);

    // The next start reads the start's record from its slot: the dead session's block goes, its
    // text told from the user's line, which stays.
    assert_a_session_leaves_the_users_line_alone(&fx, &["third text"]);
    fx.assert_no_ledger();
}

/// A session starts and ends; then AGENTS.md holds the user's text and the line "user line"
/// they wrote inside the block, and none of `gone` nor any block.
fn assert_a_session_leaves_the_users_line_alone(fx: &Fixture, gone: &[&str]) {
    let next = fx.acquire(&codex(), "next").unwrap();
    assert!(fx.release(&next.token));
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert!(
        text.starts_with("# House rules\r\nkeep it green\r\n"),
        "{text}"
    );
    assert!(text.contains("user line\r\n"), "{text}");
    for ours in gone.iter().chain(&["session-instructions"]) {
        assert!(!text.contains(ours), "{ours} left in {text}");
    }
}

/// Puts `line` (with `\r\n`) as the first line inside the session block of `bytes`.
fn with_line_in_block(bytes: &[u8], line: &str) -> Vec<u8> {
    let begin = bytes
        .windows(b"BEGIN".len())
        .position(|w| w == b"BEGIN")
        .unwrap();
    let after_begin = begin + bytes[begin..].iter().position(|b| *b == b'\n').unwrap() + 1;
    let mut edited = bytes[..after_begin].to_vec();
    edited.extend_from_slice(line.as_bytes());
    edited.extend_from_slice(b"\r\n");
    edited.extend_from_slice(&bytes[after_begin..]);
    edited
}

#[test]
fn giving_a_block_its_live_sessions_text_back_makes_only_the_workspaces_own_syncs() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", USER);
    let subject = codex();
    let warm = fx.acquire(&subject, "warm").unwrap();
    assert!(fx.release(&warm.token));
    let older = fx.acquire(&subject, "older text").unwrap();
    let newer = fx.acquire(&subject, "newer text").unwrap();
    // The block holds the newer text; its session ends and the older session's text comes back:
    // that text is recorded, durably, by the older session's own lease, so the rewrite of
    // AGENTS.md (file + directory) is all the release syncs.
    let (_, n) = syncs(|| assert!(fx.release(&newer.token)));
    assert_eq!(n, 2, "the release giving the block back");
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert!(
        text.contains("older text") && !text.contains("newer text"),
        "{text}"
    );
    assert!(fx.release(&older.token));
    assert_eq!(fx.read("AGENTS.md").unwrap(), USER);
    fx.assert_no_ledger();
}

/// Three sessions held by processes start with the texts `first`, "second text" and "third
/// text"; the third ends, then the second: the block gets the second text back, then the first,
/// with no record of either synced (the third start's record, the last one synced, lists the
/// third text and the second, what the block held). Then the machine goes down, and every holder
/// with it. Returns AGENTS.md, whose block holds the first text, which the journal now records
/// only as the text of the first session's lease.
fn give_back_twice_then_lose_power(fx: &Fixture, first: &str) -> Vec<u8> {
    faults::track_durability(true);
    fx.write("AGENTS.md", USER);
    let subject = codex();
    let warm = fx.acquire(&subject, "warm").unwrap();
    assert!(fx.release(&warm.token));
    let holders = [
        HolderProcess::spawn(),
        HolderProcess::spawn(),
        HolderProcess::spawn(),
    ];
    let tokens: Vec<String> = [first, "second text", "third text"]
        .iter()
        .zip(&holders)
        .map(|(text, holder)| {
            fx.acquire_as(&subject, text, holder.holder())
                .unwrap()
                .token
        })
        .collect();
    assert!(fx.release(&tokens[2]));
    assert!(fx.release(&tokens[1]));
    let held = fx.read("AGENTS.md").unwrap();
    let first_lines = first.replace('\n', "\r\n");
    assert!(
        String::from_utf8_lossy(&held).contains(&first_lines),
        "{}",
        String::from_utf8_lossy(&held)
    );
    faults::power_loss();
    for holder in holders {
        holder.kill9();
    }
    faults::track_durability(false);
    held
}

#[test]
fn a_text_given_back_is_told_from_the_users_lines_by_its_lease_after_a_power_loss() {
    let fx = Fixture::new();
    let held = give_back_twice_then_lose_power(&fx, "first text\nin two lines");
    fx.write("AGENTS.md", &with_line_in_block(&held, "user line"));

    // The next start cleans the dead sessions up: the first session's lease says which text it
    // put there, so its lines go and the user's line stays.
    assert_a_session_leaves_the_users_line_alone(
        &fx,
        &["first text", "in two lines", "second text", "third text"],
    );
    fx.assert_no_ledger();
}

#[test]
fn a_text_given_back_stays_told_from_the_users_lines_when_its_cleanup_must_wait() {
    let fx = Fixture::new();
    let held = give_back_twice_then_lose_power(&fx, "first text");
    let with_user_line = with_line_in_block(&held, "user line");
    // The user has cut the block's END line: the cleanup cannot take the block out and must
    // wait for the next start.
    let text = String::from_utf8(with_user_line.clone()).unwrap();
    let end = text.find("<!-- END").unwrap();
    let cut = format!(
        "{}{}",
        &text[..end],
        &text[end..][text[end..].find('\n').unwrap() + 1..]
    );
    fx.write("AGENTS.md", cut.as_bytes());
    let stripped = fx.projector.strip_stale(&fx.workspace).unwrap();
    assert!(!stripped.pending.is_empty(), "{stripped:?}");
    // The user puts the END line back: the dead sessions' leases are gone with the first
    // cleanup, so the next one tells the first text by what that cleanup listed.
    fx.write("AGENTS.md", &with_user_line);
    let stripped = fx.projector.strip_stale(&fx.workspace).unwrap();
    assert!(stripped.pending.is_empty(), "{stripped:?}");
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert!(text.contains("user line\r\n"), "{text}");
    for ours in [
        "first text",
        "second text",
        "third text",
        "session-instructions",
    ] {
        assert!(!text.contains(ours), "{ours} left in {text}");
    }
}

#[test]
fn a_users_line_equal_to_another_live_sessions_text_stays() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", USER);
    let subject = codex();
    let other = fx.acquire(&subject, "be brief").unwrap();
    let newest = fx.acquire(&subject, "newest text").unwrap();
    // The user writes, inside the block, the very line the other live session's text is.
    let bytes = fx.read("AGENTS.md").unwrap();
    fx.write("AGENTS.md", &with_line_in_block(&bytes, "be brief"));
    // The block holds the newest text, as listed: the other session's text is not taken for
    // ours, so the user's line stays when the block is given that text back...
    assert!(fx.release(&newest.token));
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert_eq!(text.matches("be brief").count(), 2, "{text}");
    // ...and when the last session ends.
    assert!(fx.release(&other.token));
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert_eq!(text, "# House rules\r\nkeep it green\r\nbe brief\r\n");
    fx.assert_no_ledger();
}

/// The next session's text is a line the user wrote inside the block: the block held the first
/// text, so the line is the user's and moves out of the block, before it. When the user also
/// changed our line, no text listed is in the block whole, and the texts of sessions released are
/// tried: never the one about to be written.
#[rstest::rstest]
#[case::as_we_wrote_it(false)]
#[case::with_our_line_edited(true)]
fn a_users_line_equal_to_the_next_sessions_text_stays(#[case] edit_ours: bool) {
    let fx = Fixture::new();
    fx.write("AGENTS.md", USER);
    let subject = codex();
    let first = fx.acquire(&subject, "first text").unwrap();
    let mut text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    if edit_ours {
        text = text.replacen("first text", "first text, edited", 1);
    }
    fx.write(
        "AGENTS.md",
        &with_line_in_block(text.as_bytes(), "be brief"),
    );
    let next = fx.acquire(&subject, "be brief").unwrap();
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert_eq!(text.matches("be brief").count(), 2, "{text}");
    assert!(fx.release(&next.token));
    assert!(fx.release(&first.token));
    let text = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    let edited = if edit_ours {
        "first text, edited\r\n"
    } else {
        ""
    };
    assert_eq!(
        text,
        format!("# House rules\r\nkeep it green\r\nbe brief\r\n{edited}")
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

/// A live session, and beside its state a private folder no lease names: what a power loss can
/// leave (the release's record on disk, its `rm -r` not). The session's token, the `sessions/`
/// folder and the folder left.
fn a_session_and_a_folder_left(fx: &Fixture) -> (String, PathBuf, PathBuf) {
    let a = fx.acquire(&codex(), "first").unwrap();
    let state = journal_path(fx).with_file_name("sessions");
    let left = state.join("pf1-0000000000000000-00000000000000000000000000000000");
    std::fs::create_dir_all(&left).unwrap();
    std::fs::write(left.join("prompt.md"), b"old session text").unwrap();
    (a.token, state, left)
}

#[test]
fn a_private_directory_no_lease_names_is_swept() {
    let fx = Fixture::new();
    let (token, _, left) = a_session_and_a_folder_left(&fx);
    assert!(fx.release(&token));
    assert!(!left.exists(), "swept at the next save");
    fx.assert_no_ledger();
}

/// The note the lock file holds for `sessions/` as it is now, written in the boot `boot`: what a
/// command leaves when the folder is swept (`sessions <boot id> <dev> <ino> <links> <size>
/// <mtime> <ctime>`, padded with spaces).
fn sessions_note(sessions: &std::path::Path, boot: &str) -> Vec<u8> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(sessions).unwrap();
    let note = format!(
        "sessions {boot} {} {} {} {} {}.{} {}.{}",
        m.dev(),
        m.ino(),
        m.nlink(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec()
    );
    let mut padded = note.into_bytes();
    padded.resize(fsio::LOCK_NOTE_LEN, b' ');
    padded
}

/// A private folder no lease names is left by a power loss, and a power loss is a new boot: a
/// note of `sessions/` from another boot has the folder listed and swept, while a note from this
/// boot that matches the folder as it is spares the listing (the folder left as the note says).
/// The note is the lock file's content; a folder made since (by hand, above) changes the stamp,
/// which `a_private_directory_no_lease_names_is_swept` covers.
#[rstest::rstest]
#[case::noted_in_another_boot(false)]
#[case::noted_in_this_boot(true)]
fn a_sessions_note_from_another_boot_has_the_folder_swept(#[case] this_boot: bool) {
    let fx = Fixture::new();
    let (token, state, left) = a_session_and_a_folder_left(&fx);
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let boot = if this_boot {
        boot.trim().to_string()
    } else {
        "00000000-0000-0000-0000-000000000000".to_string()
    };
    let lock = journal_path(&fx).with_file_name("lock");
    std::fs::write(&lock, sessions_note(&state, &boot)).unwrap();
    assert!(fx.release(&token));
    assert_eq!(
        left.exists(),
        this_boot,
        "listed and swept only after another boot"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// For any order in which sessions with texts of their own start and end: after a start the
    /// block holds that session's text; after an end it keeps a text a live session put there,
    /// or is given the newest live session's; after the last end the file is the user's bytes.
    #[test]
    fn an_end_leaves_the_block_a_live_sessions_text_the_newest_when_it_must_change(
        steps in proptest::collection::vec((proptest::prelude::any::<bool>(), 0usize..8), 1..14)
    ) {
        let fx = Fixture::new();
        fx.write("AGENTS.md", USER);
        let subject = codex();
        let text = |n: usize| format!("session text number {n} here");
        // Live sessions, oldest first: (token, text).
        let mut live: Vec<(String, String)> = Vec::new();
        let mut held: Option<String> = None;
        for (n, (start, pick)) in steps.into_iter().enumerate() {
            if start || live.is_empty() {
                let token = fx.acquire(&subject, &text(n)).unwrap().token;
                live.push((token, text(n)));
                held = Some(text(n));
            } else {
                let (token, _) = live.remove(pick % live.len());
                assert!(fx.release(&token));
                held = match held {
                    Some(h) if live.iter().any(|(_, t)| *t == h) => Some(h),
                    _ => live.last().map(|(_, t)| t.clone()),
                };
            }
            let file = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
            match &held {
                Some(h) => {
                    let h = h.clone();
                    proptest::prop_assert!(file.contains(&h), "{h:?} not in {file:?}");
                    let others = file.matches("session text number").count();
                    proptest::prop_assert_eq!(others, 1, "{}", file);
                }
                None => proptest::prop_assert_eq!(file.as_bytes(), USER),
            }
        }
        for (token, _) in live {
            assert!(fx.release(&token));
        }
        proptest::prop_assert_eq!(fx.read("AGENTS.md").unwrap(), USER);
    }
}

/// The full record the journal's newest deltas rest on: its line's length.
fn base_line_len(fx: &Fixture) -> usize {
    let bytes = std::fs::read(journal_path(fx)).unwrap();
    bytes
        .split_inclusive(|b| *b == b'\n')
        .rfind(|line| line.windows(13).any(|w| w == b"{\"version\":1,"))
        .map(<[u8]>::len)
        .unwrap()
}

/// Bytes of records read back and checked by `f`, on this thread.
fn checked(f: impl FnOnce()) -> u64 {
    let before = journal::bytes_checked_on_this_thread();
    f();
    journal::bytes_checked_on_this_thread() - before
}

/// The lock file notes the journal as the last command left it: the next command reads the full
/// record its newest delta rests on without hashing it again. Once anyone changes the file (here
/// a byte flipped and put back: the same bytes, another state), the record is
/// hashed again; so is it after a power loss, which is a new boot.
#[test]
fn a_base_the_lock_file_notes_is_hashed_again_only_once_the_journal_changed() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", USER);
    let subject = codex();
    let mut live = Vec::new();
    for _ in 0..40 {
        live.push(fx.acquire(&subject, "one text for all").unwrap().token);
    }
    let cycle = || {
        let token = fx.acquire(&subject, "one text for all").unwrap().token;
        assert!(fx.release(&token));
    };
    // One cycle leaves the note naming the base the next deltas rest on.
    cycle();
    let base = base_line_len(&fx) as u64;
    assert!(base > 8 * 1024, "{base} bytes");
    let noted = checked(cycle);
    assert!(noted < base, "{noted} bytes checked, the base is {base}");
    // Flipped and put back: the bytes as they were, the file not as the note states.
    let path = journal_path(&fx);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - base as usize / 2;
    bytes[at] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();
    bytes[at] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();
    let changed = checked(cycle);
    assert!(
        changed >= base,
        "{changed} bytes checked, the base is {base}"
    );
    // A power loss is a new boot: a note of the boot before names nothing.
    assert!(checked(cycle) < base);
    faults::power_loss();
    let restarted = checked(cycle);
    assert!(
        restarted >= base,
        "{restarted} bytes checked, the base is {base}"
    );
    for token in live {
        assert!(fx.release(&token));
    }
    assert_eq!(fx.read("AGENTS.md").unwrap(), USER);
}
