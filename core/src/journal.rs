//! The ledger journal: how one workspace's [`Ledger`] is kept on disk, and when a save must be
//! durable.
//!
//! `<state>/workspaces/<key>/ledger.jsonl` is append-only. Each line is one record of the ledger
//! with a check of its JSON and, last, the length of the whole line in bytes (its newline
//! included):
//!
//! ```text
//! {"check":"<16 hex digits>","ledger":<the ledger as compact JSON>,"line":<length>}
//! ```
//!
//! **Full and delta records.** A full record's JSON is the whole ledger (`{"version":1,...}`).
//! A delta record's is `{"version":2,"base":[<at>,<len>,<saved>],"gone":[<tokens>],...}`
//! followed by a full record's fields: it names a full record earlier in the file (where its
//! line starts, its length, its save number) and the tokens of that record's leases it drops,
//! lists only the leases that record lacks, and carries every other field whole. The ledger it
//! states is the base's leases less those dropped, with those it lists, and its own other fields
//! (a lease never changes once recorded, so one token is one lease). So a command that starts or
//! ends one session among hundreds appends what that session changed, not every lease again.
//! A save writes a delta against the newest full record while at most [`DELTA_CHANGES`] leases
//! are added and dropped in all since it, and a full record otherwise: when there is no full
//! record to name (a new journal, a compaction, a record from a sync slot), when the ledger has no lease left, or when the save is durable and goes to a
//! sync slot while the full record is not the journal's first (see "Sync slots": a slot's
//! delta rests only on a base written durably). A build that reads only full records refuses a delta
//! (its version is 2), rather than take its few leases for all of them. A command's ledger
//! keeps the leases it read from the full record as they were read, and what it dropped and
//! added beside them ([`crate::ledger::Leases`]): its delta is those, no token compared; a
//! ledger built otherwise is compared with the full record's tokens, both lists sorted.
//!
//! The ledger JSON ends in the record's save number, `,"saved":N}`: one more than the newest
//! record's, so of any two records the newer is the one with the higher number.
//!
//! The check is [`check64`], a 64-bit hash of the ledger JSON taken eight bytes at a time: it
//! tells a whole record from a torn, cut or overwritten one (not an adversary's: the state
//! directory is private to its user).
//!
//! **Reading** takes the last good record: the last line that is complete (ends in a newline),
//! well formed, and whose check holds, and, for a delta, whose base is one too: a whole line of
//! this build's frame, a full record, before the delta, ending in the save number the delta
//! names (a base a power loss tore or lost makes every delta on it no good record; the base is
//! read with one more sized `pread`, into the buffer its leases and their tokens then share).
//! Whatever follows it is discarded; no good record (or an empty file) means nothing is
//! recorded. Only the newest records can be bad, and none of them synced: a record whose write
//! a crash interrupted, or unsynced ones a power loss lost or tore. A synced record cannot be
//! torn, and syncing one syncs every record before it, so a good record after a bad one was
//! unsynced too, and is a state the workspace really went through (a delta with its whole base
//! states exactly what its save recorded; see durability below for why such a state is safe to
//! start from).
//!
//! **Writing** appends a record, after cutting off anything past the last good one (or the next
//! line would join a torn one; this happens only after a crash). When nothing is recorded any
//! more, the record is an empty ledger: appending costs a write, where truncating costs as much
//! as a sync on ext4. A journal grown past [`COMPACT_AT`], or past [`COMPACT_RECORDS`] records
//! of the newest full one's size when that is more (a ledger of hundreds of leases), is rewritten
//! as its newest record alone, a full one, atomically (temporary file, fsync, rename, fsync):
//! the syncs of a compaction are paid once per that many saves, never on every save (and the
//! file it replaced comes back open, for the caller to close once its lock is let go). The file is created that
//! way too, once per workspace, and then kept. Reads take the file's last [`TAIL`] bytes; when
//! the file ends in a good record of this build, its stated length says where it starts, and the
//! rest of it is read in one more `pread` of just that size (the length is trusted only when the
//! line it delimits starts a line and its check holds). Otherwise (a torn end, or an earlier
//! build's record) a tail four times longer is read while no good record ends in it, up to the
//! whole file.

//! **Durability**: a save is made durable before the workspace is touched when it records
//! something a power loss must not take: a lease that may stash a prior, write an owned file,
//! create a directory, a marker or a skill folder, put our block in a file the ledger does not
//! yet list in [`Ledger::block_files`], or write a session text into a block that the ledger
//! does not list for it yet (a start with a new text). Every other save is
//! [`Durability::Deferred`], written and not synced:
//!
//! - a start that writes private files only (under the state directory, in `sessions/<token>`):
//!   losing its record leaves a folder no lease names, which the first command after the
//!   restart lists `sessions/` for and removes (the note of the folder the lock file holds
//!   names the boot before; see the projector's `locked`);
//! - a release giving a shared block the text of a live session back: that session's lease
//!   records the text, and every record since its start keeps the lease, so whatever record a
//!   power loss leaves, the cleanup of the dead sessions tells the text's lines from the user's
//!   (see the projector's `shared_block`);
//! - a save that records an undo already durable in the workspace (a release, a cleaned stale
//!   lease): losing it brings back leases whose undo finds its work done;
//! - a start that only puts our block into files already listed: losing its record leaves a
//!   block no entry records, which the next start removes (the block says whether the file was
//!   ours to create).
//!
//! Either way the leases a power loss brings back or forgets had holders that died with the
//! machine: no process survives a reboot, and holders carry the boot id. Deferred saves are
//! synced anyway when the state directory is on a remote file system (the holder may live on
//! another machine), or when they record kept user bytes (see the projector).
//!
//! **Sync slots.** A durable save is appended to the journal like any other, unsynced, and also
//! written, synced, into one of the two slots of `ledger.sync` beside it. A slot's record is a
//! delta only when its base is the journal's first record, which was written durably (at the
//! file's creation or compaction; appends after it are not), so a power loss that takes the
//! journal's unsynced bytes leaves the base the slot's delta names; otherwise it is a full
//! record. A durable full record of [`DURABLE_BASE_FROM`] bytes or more compacts the journal
//! instead (the record alone, written durably): the durable saves after it are deltas against
//! it, each as long as what it changed, where a slot would take the whole ledger every time.
//! Each slot (a power of
//! two of at least [`SLOT_MIN`] bytes) holds a head, `slot <save number> <record length>` in
//! fixed-width digits, and the record line, written record first and head last. The slot written
//! is never the one holding the newest whole record: the other, unless the one whose head states
//! the newest holds a record that is not whole (a write cut short, which is then written over;
//! known whole when it holds, byte for byte, the record the journal read whole as its newest
//! delta's base with the number its head states; otherwise checked by reading and hashing it
//! once per process that writes a slot). So a write cut by a power loss or
//! a kill leaves the newest durable record intact in the other slot. The slot file keeps its size
//! and its blocks, written once when it is made (atomically, at the first durable save that is
//! not the journal's own creation or compaction, and again whenever a record outgrows a slot),
//! so syncing a slot writes the record's bytes alone, where syncing an append also writes the
//! journal's new size and allocation: on this project's measurements about half the time, and
//! less waiting for a whole scheduler tick on a busy machine. Reading takes the journal's newest
//! record, then the two heads (one small read each): a slot whose number is higher holds a
//! durable record the journal lost with its unsynced bytes, and is read instead, if its head,
//! its record's check and the number its JSON ends in agree, and, for a delta, its base is the
//! journal's first record, whole, of the length and number it states (otherwise its write was
//! cut, or another journal stands there, and it is passed over). The next save is numbered past every head, so it is newer than both
//! slots though the journal lost records. Slots are read only beside a journal with a record
//! (one moved aside starts the record afresh, numbered past them), only through the state
//! directory's descriptor (a link there is refused), and are synced only where the journal
//! itself is not (on a remote state directory, or for a migration, the append is synced as
//! before).
//!
//! So a session that only puts a block into a known file makes exactly the workspace's own
//! durable writes, the minimum for the same result; `core/tests/crash_points.rs` proves each
//! case by enumerating process crashes and power losses (see `projectfile_conformance::crash`).

use std::cell::{Cell, RefCell};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsio::{self, OpenTail, Root, Tail, faults};
use crate::ledger::{FolderRef, Leases, Ledger, ReadLeases, Recorded};
use crate::plan::RelPath;

/// The journal's file name inside a workspace's state directory.
pub const JOURNAL_FILE: &str = "ledger.jsonl";

/// Past this many bytes, the next save rewrites the journal as its newest record alone. Reads
/// take the file's tail, so its length costs a read nothing; a compaction costs three syncs.
pub const COMPACT_AT: u64 = 256 * 1024;

/// A journal may also grow to this many records of the newest one's size before it is
/// compacted, so a large ledger is not rewritten durably on every save.
pub const COMPACT_RECORDS: u64 = 64;

/// The journal's sync slots, beside it (see "Sync slots" in the module docs).
pub const SLOTS_FILE: &str = "ledger.sync";

/// The head of a sync slot: `slot <save number, 20 digits> <record length, 20 digits>\n`.
const SLOT_HEAD: usize = 47;

/// The smallest sync slot: a slot is a power of two at least this large that holds its head
/// and the record.
const SLOT_MIN: u64 = 4096;

/// The field a record's ledger JSON ends in: the record's save number.
const SAVED_FIELD: &[u8] = b",\"saved\":";

/// How much of the journal's end a read takes first.
pub const TAIL: u64 = 4 * 1024;

/// A record of this build: `{"check":"<16 hex>","ledger":<body>,"line":<length>}\n`.
const PREFIX: &[u8] = b"{\"check\":\"";
const MIDDLE: &[u8] = b"\",\"ledger\":";
const TRAILER: &[u8] = b",\"line\":";
const END: &[u8] = b"}\n";
/// The hex digits of a record's check.
const CHECK_HEX: usize = 16;

/// A full record's ledger JSON opens with the ledger's version (delta records' JSON rests on
/// it being 1: see [`DELTA_OPEN`]).
const FULL_OPEN: &[u8] = b"{\"version\":1";
const _: () = assert!(crate::ledger::LEDGER_VERSION == 1);

/// The length from which a durable save's full record compacts the journal rather than go to a
/// sync slot: the record is then the journal's first, written durably, and the durable saves
/// after it write deltas against it into their slots, each as long as its changes, where a slot
/// would take the whole ledger again at every one.
pub const DURABLE_BASE_FROM: usize = 16 * 1024;

/// A delta record's JSON opens with `{"version":2,"base":[<at>,<len>,<saved>],"gone":[<tokens>]`
/// and goes on with a full record's fields after the version (see "Delta records" in the module
/// docs). Version 2, so that a build that knows only full records refuses it rather than take
/// its few leases for all of them.
const DELTA_OPEN: &[u8] = b"{\"version\":2,\"base\":[";
const DELTA_GONE: &[u8] = b"],\"gone\":[";

/// A delta record is written while it adds and drops at most this many leases in all; past
/// that, the save writes a full record, the next deltas' base. So a delta costs what a few
/// leases cost to write and read, however many its base holds.
pub const DELTA_CHANGES: usize = 16;

/// Whether a save must reach the disk before the caller goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Synced before returning: the save records something a power loss must not take.
    Durable,
    /// Written, not synced: what a power loss may take is recoverable (see the module docs).
    Deferred,
}

/// The check of a record's body: a 64-bit hash taking the body eight bytes at a time. Each
/// step is a bijection of the running state for a given word and an injection of the word for a
/// given state, so two bodies of one length that differ in a single word always differ in their
/// check; a torn write (a cut, zeroed or stale blocks) also changes the length the record states.
/// It guards against accidents, not adversaries: the state directory is private to its user.
pub fn check64(body: &[u8]) -> u64 {
    check64_finding_newline::<false>(body).0
}

thread_local! {
    /// Bytes of record lines read and checked on this thread.
    static BYTES_CHECKED: Cell<u64> = const { Cell::new(0) };
}

/// How many bytes of record lines the calling thread has read back and checked: tests see a
/// base the lock file notes read without being hashed again.
pub fn bytes_checked_on_this_thread() -> u64 {
    BYTES_CHECKED.with(Cell::get)
}

/// [`check64`] of a record line's body, or `None` when the body holds a newline (a body read
/// between a line's start and its end never does; one read by a stated length may). One pass:
/// the newline search rides the hash's steps, which wait on each other's multiply anyway.
fn line_check64(body: &[u8]) -> Option<u64> {
    BYTES_CHECKED.with(|c| c.set(c.get() + body.len() as u64));
    let (check, newline) = check64_finding_newline::<true>(body);
    (!newline).then_some(check)
}

/// [`check64`] of `body`, and with `FIND_NEWLINE` whether it holds a newline byte.
fn check64_finding_newline<const FIND_NEWLINE: bool>(body: &[u8]) -> (u64, bool) {
    const MUL: u64 = 0x9e37_79b9_7f4a_7c15;
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NEWLINES: u64 = ONES * b'\n' as u64;
    let step = |state: u64, word: u64| (state ^ word).rotate_left(29).wrapping_mul(MUL);
    // A word holds a newline exactly when its XOR with newlines holds a zero byte, which sets
    // that byte's high bit here (the borrow can set more, never one without a zero byte).
    let zero_byte = |word: u64| {
        let x = word ^ NEWLINES;
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    let mut state = (body.len() as u64).wrapping_mul(MUL) ^ 0x243f_6a88_85a3_08d3;
    let mut found = 0u64;
    let (words, rest) = body.as_chunks::<8>();
    for word in words {
        let word = u64::from_le_bytes(*word);
        if FIND_NEWLINE {
            found |= zero_byte(word);
        }
        state = step(state, word);
    }
    // The last word, padded with zero bytes (never a newline).
    let mut last = [0u8; 8];
    last[..rest.len()].copy_from_slice(rest);
    let last = u64::from_le_bytes(last);
    if FIND_NEWLINE {
        found |= zero_byte(last);
    }
    state = step(state, last);
    state ^= state >> 32;
    state = state.wrapping_mul(MUL);
    (state ^ (state >> 29), found != 0)
}

/// A check as a record states it: 16 lowercase hex digits.
fn check_hex(check: u64) -> [u8; CHECK_HEX] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; CHECK_HEX];
    for (i, digit) in out.iter_mut().enumerate() {
        *digit = DIGITS[((check >> (60 - 4 * i)) & 0xf) as usize];
    }
    out
}

/// Starts a record line in `line` (emptied first): what precedes the body, with room for its
/// check. The body is appended next, then [`end_frame`] is given where it started.
fn begin_frame(line: &mut Vec<u8>) -> usize {
    line.clear();
    line.extend_from_slice(PREFIX);
    line.extend_from_slice(&[b'0'; CHECK_HEX]);
    line.extend_from_slice(MIDDLE);
    line.len()
}

/// Finishes the record line whose body starts at `body_start` and runs to the end of `line`:
/// its check (`check`, that of the body), and the trailer stating the whole line's length (so a reader at the end of the
/// file knows where it starts). Returns the body's range.
fn end_frame(line: &mut Vec<u8>, body_start: usize, check: u64) -> Range<usize> {
    let body = body_start..line.len();
    line[PREFIX.len()..PREFIX.len() + CHECK_HEX].copy_from_slice(&check_hex(check));
    line.extend_from_slice(TRAILER);
    // The length counts its own digits.
    let rest = line.len() + END.len();
    let mut length = rest + 1;
    while rest + length.to_string().len() != length {
        length += 1;
    }
    line.extend_from_slice(length.to_string().as_bytes());
    line.extend_from_slice(END);
    body
}

/// One record line for a ledger's JSON (`body`, which must hold no raw newline: compact JSON).
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(body.len() + 64);
    let start = begin_frame(&mut line);
    line.extend_from_slice(body);
    end_frame(&mut line, start, check64(body));
    line
}

/// Where a delta record's base is, as its head states it: the full record's line (where it
/// starts in the journal, its length with the newline) and its save number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BaseRef {
    at: u64,
    len: u64,
    saved: u64,
}

/// A delta record's JSON taken apart: its base, the tokens of the base's leases it drops, and
/// the rest of its JSON, from the comma before `"workspace"` to the end.
#[derive(Debug)]
struct DeltaParts<'a> {
    base: BaseRef,
    gone: Vec<&'a str>,
    rest: &'a [u8],
}

/// Whether a record's ledger JSON is a delta record's.
fn is_delta(body: &[u8]) -> bool {
    body.starts_with(DELTA_OPEN)
}

/// A token as a delta record lists it among the leases gone: written between quotes as it is,
/// so it may hold no byte JSON escapes (a token that does makes the save a full record).
fn plain_token(token: &str) -> bool {
    token.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
}

/// Takes a delta record's JSON apart; `None` unless it has the exact shape a save writes.
fn split_delta(body: &[u8]) -> Option<DeltaParts<'_>> {
    fn number(bytes: &[u8]) -> Option<(u64, &[u8])> {
        let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 20 {
            return None;
        }
        let value = std::str::from_utf8(&bytes[..digits]).ok()?.parse().ok()?;
        Some((value, &bytes[digits..]))
    }
    let rest = body.strip_prefix(DELTA_OPEN)?;
    let (at, rest) = number(rest)?;
    let (len, rest) = number(rest.strip_prefix(b",")?)?;
    let (saved, rest) = number(rest.strip_prefix(b",")?)?;
    let mut rest = rest.strip_prefix(DELTA_GONE)?;
    let mut gone = Vec::new();
    if let Some(after) = rest.strip_prefix(b"]") {
        rest = after;
    } else {
        loop {
            let inside = rest.strip_prefix(b"\"")?;
            let end = inside.iter().position(|b| *b == b'"')?;
            let token = std::str::from_utf8(&inside[..end]).ok()?;
            if !plain_token(token) {
                return None;
            }
            gone.push(token);
            rest = &inside[end + 1..];
            match rest.split_first()? {
                (b',', after) => rest = after,
                (b']', after) => {
                    rest = after;
                    break;
                }
                _ => return None,
            }
        }
    }
    rest.starts_with(b",\"workspace\":").then_some(DeltaParts {
        base: BaseRef { at, len, saved },
        gone,
        rest,
    })
}

/// The tokens of a full record's leases, in order, in one buffer: what the next delta records
/// are written against.
#[derive(Debug, Default)]
struct Tokens {
    joined: String,
    ends: Vec<usize>,
}

impl Tokens {
    fn of<'a>(tokens: impl Iterator<Item = &'a str>) -> Tokens {
        let mut out = Tokens::default();
        for token in tokens {
            out.joined.push_str(token);
            out.ends.push(out.joined.len());
        }
        out
    }

    /// In the order they were given (a ledger's: sorted).
    fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .filter_map(|(start, end)| self.joined.get(start..end))
    }
}

/// The leases of the full record the next delta records are written against.
#[derive(Debug)]
enum BaseLeases {
    /// Read from the journal: a ledger whose leases are these less those gone, plus those
    /// added ([`Leases::read_from`]), is written as those changes, no token compared.
    Read(std::rc::Rc<ReadLeases>),
    /// Otherwise (a full record this process wrote): their tokens.
    Written(Tokens),
}

impl BaseLeases {
    fn of(leases: &Leases) -> BaseLeases {
        match leases.read_from() {
            Some(read) if leases.is_as_read() => BaseLeases::Read(read.clone()),
            _ => BaseLeases::Written(Tokens::of(leases.keys())),
        }
    }

    /// The tokens, in order.
    fn tokens(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        match self {
            BaseLeases::Read(read) => Box::new(read.tokens()),
            BaseLeases::Written(tokens) => Box::new(tokens.iter()),
        }
    }
}

/// The full record the next delta records are written against.
#[derive(Debug)]
struct Base {
    at: BaseRef,
    leases: BaseLeases,
}

/// A delta record's base as read: its bytes, shared by the leases read from them.
#[derive(Debug)]
struct BaseRecord {
    bytes: std::sync::Arc<[u8]>,
    body: Range<usize>,
}

/// What [`scan`] found in a journal's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scan<'a> {
    /// The ledger JSON of the last good record, if any.
    pub last: Option<&'a [u8]>,
    /// Where the last good record ends (0 without one): everything from here on is discarded.
    pub good_len: usize,
}

/// The length a line of this build (without its newline) states in its trailer.
fn stated_length(line: &[u8]) -> Option<usize> {
    let rest = line.strip_suffix(b"}")?;
    let digits = rest.len() - rest.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let (rest, number) = rest.split_at(digits);
    if !rest.ends_with(TRAILER) || number.is_empty() || number.len() > 19 {
        return None;
    }
    std::str::from_utf8(number).ok()?.parse().ok()
}

/// The range of the ledger JSON a record line (without its newline) carries, if the line is
/// well formed and its check holds.
fn record_body(line: &[u8]) -> Option<Range<usize>> {
    record_body_as(line, false)
}

/// [`record_body`], the check taken as holding when `verified` (a line of this build known
/// whole: see [`JournalNote`]); its frame is still read as strictly.
fn record_body_as(line: &[u8], verified: bool) -> Option<Range<usize>> {
    let rest = line.strip_prefix(PREFIX)?;
    let (check, rest) = rest.split_at_checked(CHECK_HEX)?;
    rest.strip_prefix(MIDDLE)?;
    let length = stated_length(line)?;
    let start = PREFIX.len() + CHECK_HEX + MIDDLE.len();
    let end = line.len() - line.iter().rev().position(|b| *b == b',')? - 1;
    let body = line.get(start..end)?;
    let holds = length == line.len() + 1
        && (verified || line_check64(body).is_some_and(|computed| check_hex(computed) == check));
    holds.then_some(start..end)
}

/// Reads a journal (or its end: a line cut by the start of `bytes` is never a good record): its
/// last good record, found from the end, so only the newest record is read and checked.
pub fn scan(bytes: &[u8]) -> Scan<'_> {
    match scan_range(bytes) {
        Some((body, good_len)) => Scan {
            last: bytes.get(body),
            good_len,
        },
        None => Scan {
            last: None,
            good_len: 0,
        },
    }
}

/// [`scan`]'s finding as the body's range in `bytes` and where the record ends.
fn scan_range(bytes: &[u8]) -> Option<(Range<usize>, usize)> {
    scan_range_with(bytes, &mut |_, _| Ok(true)).ok().flatten()
}

/// The last record in `bytes` whose check holds and that `accept` takes (given where its line
/// starts in `bytes` and its body's range there): the body's range and where the record ends.
fn scan_range_with(
    bytes: &[u8],
    accept: &mut dyn FnMut(usize, Range<usize>) -> Result<bool>,
) -> Result<Option<(Range<usize>, usize)>> {
    // `end`: one past the newline closing the line under test.
    let Some(newline) = bytes.iter().rposition(|b| *b == b'\n') else {
        return Ok(None);
    };
    let mut end = newline + 1;
    while end > 0 {
        let start = bytes[..end - 1]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |newline| newline + 1);
        if let Some(body) = record_body(&bytes[start..end - 1]) {
            let body = start + body.start..start + body.end;
            if accept(start, body.clone())? {
                return Ok(Some((body, end)));
            }
        }
        end = start;
    }
    Ok(None)
}

/// Whether journal `bytes` record nothing: no good record, or an empty ledger as the last one
/// (a delta record always records leases: a ledger without any is saved whole).
pub fn records_nothing(bytes: &[u8]) -> bool {
    scan(bytes).last.is_none_or(|body| {
        !is_delta(body)
            && serde_json::from_slice::<Ledger>(body).is_ok_and(|ledger| ledger.is_empty())
    })
}

/// Where a journal file ends and where its last good record ends.
#[derive(Clone, Copy, Debug)]
struct Extent {
    len: u64,
    good_len: u64,
}

/// The newest record as read: the bytes read, where they start in the file, and where its
/// ledger JSON is in them.
#[derive(Debug)]
struct Newest {
    bytes: Vec<u8>,
    start: u64,
    body: Range<usize>,
    /// For a delta record: its base, read and checked.
    base: Option<Box<(BaseRef, BaseRecord)>>,
}

/// What a journal keeps of its newest record after reading or writing it, without its bytes
/// (their buffer serves the next save): enough to tell a ledger that did not change.
#[derive(Clone, Copy, Debug)]
struct Last {
    /// The check of its ledger JSON.
    check: u64,
    /// Where that JSON is in the file.
    body_at: u64,
    /// Its length.
    body_len: usize,
    /// The length of the whole record line.
    record_len: usize,
}

impl Newest {
    fn body(&self) -> &[u8] {
        self.bytes.get(self.body.clone()).unwrap_or_default()
    }

    /// For a delta record, its base's whole line (a full record of this build, read and
    /// checked), with the buffer holding it and the base's save number: what a sync slot whose
    /// head states that number holds when its write was not cut.
    fn base_line(&self) -> Option<KnownLine> {
        let (at, record) = &**self.base.as_ref()?;
        let len = usize::try_from(at.len).ok()?;
        let start = record.bytes.len().checked_sub(len)?;
        let line = start..record.bytes.len();
        record
            .bytes
            .get(line.clone())?
            .starts_with(PREFIX)
            .then(|| KnownLine {
                saved: at.saved,
                buffer: record.bytes.clone(),
                line,
            })
    }

    /// The check of its body: the one a record of this build states (it held when the record
    /// was read, so the body is not hashed a second time), computed when its head does not read.
    fn check(&self) -> u64 {
        let head = PREFIX.len() + CHECK_HEX + MIDDLE.len();
        let stated = self
            .body
            .start
            .checked_sub(head)
            .and_then(|line| self.bytes.get(line..self.body.start))
            .and_then(|head| head.strip_prefix(PREFIX)?.strip_suffix(MIDDLE))
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u64::from_str_radix(hex, 16).ok());
        stated.unwrap_or_else(|| check64(self.body()))
    }
}

/// The room a save reserves for its record when the last one had `last_len` bytes: an eighth
/// more, and a little. A buffer with a sixteenth more already is used as it is (the read
/// record's buffer, made with this room, serves a record a lease longer without moving).
fn next_record_room(last_len: usize) -> usize {
    last_len.saturating_add(last_len / 8).saturating_add(256)
}

/// The save number a record's ledger JSON ends in (`,"saved":N}`), 0 when it ends otherwise.
fn saved_number(body: &[u8]) -> u64 {
    let Some(rest) = body.strip_suffix(b"}") else {
        return 0;
    };
    let digits = rest.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let (rest, number) = rest.split_at(rest.len() - digits);
    if !rest.ends_with(SAVED_FIELD) || number.is_empty() || number.len() > 20 {
        return 0;
    }
    std::str::from_utf8(number)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Ends the ledger JSON that runs from `body_start` to the end of `line` (an object) with its
/// save number: `{...}` becomes `{...,"saved":N}`.
fn put_saved(line: &mut Vec<u8>, body_start: usize, saved: u64) {
    if line.len() > body_start && line.last() == Some(&b'}') {
        line.pop();
        // An empty object takes the field with no comma before it.
        let empty = line.len() == body_start + 1;
        line.extend_from_slice(if empty {
            &SAVED_FIELD[1..]
        } else {
            SAVED_FIELD
        });
        line.extend_from_slice(saved.to_string().as_bytes());
        line.push(b'}');
    }
}

/// Replaces the save number `put_saved` ended the JSON from `body_start` with (the end of
/// `line`) by `saved`.
fn replace_saved(line: &mut Vec<u8>, body_start: usize, saved: u64) {
    let digits = line
        .iter()
        .rev()
        .skip(1)
        .take_while(|b| b.is_ascii_digit())
        .count();
    let keep = line.len() - 1 - digits;
    if keep > body_start {
        line.truncate(keep);
        line.extend_from_slice(saved.to_string().as_bytes());
        line.push(b'}');
    }
}

/// A sync slot's head, for a record of `len` bytes with save number `saved`.
fn slot_head(saved: u64, len: usize) -> [u8; SLOT_HEAD] {
    let mut head = [b' '; SLOT_HEAD];
    let text = format!("slot {saved:020} {len:020}\n");
    if text.len() == SLOT_HEAD {
        head.copy_from_slice(text.as_bytes());
    }
    head
}

/// The save number and record length a slot head states, if it is one.
fn parse_slot_head(head: &[u8]) -> Option<(u64, usize)> {
    let rest = head.strip_prefix(b"slot ")?.strip_suffix(b"\n")?;
    let (saved, len) = (rest.get(..20)?, rest.get(21..)?);
    if rest.get(20) != Some(&b' ') || len.len() != 20 {
        return None;
    }
    let number = |digits: &[u8]| -> Option<u64> {
        digits
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| std::str::from_utf8(digits).ok()?.parse().ok())?
    };
    Some((number(saved)?, usize::try_from(number(len)?).ok()?))
}

/// The sync slots as a journal knows them: the size of each, which one's head states the newest
/// record, and whether that record is known to be whole (this process wrote it, or read it).
#[derive(Clone, Copy, Debug)]
struct Slots {
    size: u64,
    newest: Option<usize>,
    newest_whole: bool,
    /// What the newest slot's head states (save number, record length), as read.
    newest_head: Option<(u64, usize)>,
}

/// A whole record line a journal read (a delta's base), kept with its save number: the newest
/// sync slot holds it when its head states that number and length and its bytes are these.
#[derive(Debug)]
struct KnownLine {
    saved: u64,
    buffer: std::sync::Arc<[u8]>,
    line: Range<usize>,
}

/// What the sync slots hold: the slots (`None`: no usable file), the highest save number a head
/// states, and the newest intact record saved after `after`, as a [`Newest`] with its number.
struct SlotsRead {
    slots: Option<Slots>,
    highest: u64,
    newer: Option<(u64, Newest)>,
}

/// Reads the sync slots in `state` (no link followed): their heads, and a record of one only
/// when it was saved after `after` (the journal lost it: a power loss took the journal's
/// unsynced bytes). A slot counts only when its head, its record's check and the save number
/// its ledger ends in agree; anything else is a write a power loss cut, or not ours, and is
/// passed over.
fn read_slots(state: &Root, after: u64) -> Result<SlotsRead> {
    let rel = RelPath::new(SLOTS_FILE)?;
    let mut read = SlotsRead {
        slots: None,
        highest: 0,
        newer: None,
    };
    let Some(file) = state.open_file(&rel)? else {
        return Ok(read);
    };
    let size = (file.len() / 2) as u64;
    if size < SLOT_MIN {
        return Ok(read);
    }
    let display = state.display_path(&rel);
    let heads = [
        read_slot_head(&file, &display, size, 0)?,
        read_slot_head(&file, &display, size, 1)?,
    ];
    read.highest = heads
        .iter()
        .flatten()
        .map(|(saved, _)| *saved)
        .max()
        .unwrap_or(0);
    let newest = (0..2)
        .max_by_key(|i| heads[*i].map_or(0, |(saved, _)| saved))
        .filter(|i| heads[*i].is_some());
    read.slots = Some(Slots {
        size,
        newest,
        newest_whole: false,
        newest_head: newest.and_then(|i| heads[i]),
    });
    let mut newer: Vec<(usize, u64, usize)> = (0..2)
        .filter_map(|i| heads[i].map(|(saved, len)| (i, saved, len)))
        .filter(|(_, saved, _)| *saved > after)
        .collect();
    newer.sort_by_key(|(_, saved, _)| std::cmp::Reverse(*saved));
    let journal = state.display_path(&RelPath::new(JOURNAL_FILE)?);
    for (index, saved, len) in newer {
        let record = match read_slot_record(&file, &display, size, index, saved, len)? {
            Some(record) => slot_record_based(&journal, record)?,
            None => None,
        };
        if let Some(record) = record {
            read.newer = Some((saved, record));
            break;
        }
    }
    Ok(read)
}

/// The record of slot `index` (each `size` bytes) of the open slot file, whose head stated
/// save number `saved` and length `len`, when it is whole: its check holds and its JSON ends in
/// that number. `None` otherwise: a write cut short (by a power loss, or a process killed in
/// the middle of it), or not ours.
fn read_slot_record(
    file: &fsio::OpenFile,
    display: &Path,
    size: u64,
    index: usize,
    saved: u64,
    len: usize,
) -> Result<Option<Newest>> {
    if (SLOT_HEAD as u64).saturating_add(len as u64) > size {
        return Ok(None);
    }
    let at = index as u64 * size + SLOT_HEAD as u64;
    let bytes = file
        .read_vec_at(at, len)
        .map_err(|e| Error::io(display, "read", e))?;
    let line = bytes.strip_suffix(b"\n");
    let body = line
        .filter(|line| line.len() + 1 == len)
        .and_then(record_body);
    Ok(match body {
        Some(body) if bytes.get(body.clone()).map(saved_number) == Some(saved) => Some(Newest {
            bytes,
            start: 0,
            body,
            base: None,
        }),
        _ => None,
    })
}

/// A slot's record `newest` as it reads: a full record as it stands; a delta with its base, the
/// journal's first record (the one a slot's delta may rest on: written durably, at the file's
/// creation or compaction), read from the journal at `journal` and checked as any base is.
/// `None` for a delta whose base is not there whole (another journal stands there since: not
/// ours to read).
fn slot_record_based(journal: &Path, mut newest: Newest) -> Result<Option<Newest>> {
    if !is_delta(newest.body()) {
        return Ok(Some(newest));
    }
    let Some(open) = OpenTail::open(journal)? else {
        return Ok(None);
    };
    let len = open.len();
    Ok(match based_on(&open, newest.body(), len, None)? {
        Based::Delta(base) if base.0.at == 0 => {
            newest.base = Some(base);
            Some(newest)
        }
        Based::Full | Based::Delta(_) | Based::Broken => None,
    })
}

/// The save number and record length the head of slot `index` (each `size` bytes) states.
fn read_slot_head(
    file: &fsio::OpenFile,
    display: &Path,
    size: u64,
    index: usize,
) -> Result<Option<(u64, usize)>> {
    let mut head = [0u8; SLOT_HEAD];
    let at = usize::try_from(index as u64 * size).unwrap_or(usize::MAX);
    let n = file
        .read_at(at, &mut head)
        .map_err(|e| Error::io(display, "read", e))?;
    Ok(parse_slot_head(&head[..n]))
}

/// Whether slot `index` of the slot file in `state` holds a whole record.
fn slot_is_whole(state: &Root, size: u64, index: usize) -> Result<bool> {
    let rel = RelPath::new(SLOTS_FILE)?;
    let Some(file) = state.open_file(&rel)? else {
        return Ok(false);
    };
    let display = state.display_path(&rel);
    let Some((saved, len)) = read_slot_head(&file, &display, size, index)? else {
        return Ok(false);
    };
    Ok(read_slot_record(&file, &display, size, index, saved, len)?.is_some())
}

/// The newest record when the file ends in a good record of this build: its trailer says
/// where it starts, so it is read whole with at most one more `pread` of its size. The tail
/// comes back (the caller scans it) when it ends otherwise: a torn or damaged end, or an earlier
/// build's record.
fn newest_by_trailer(
    open: &OpenTail<'_>,
    mut tail: Tail,
    noted: Option<&[u8]>,
) -> Result<std::result::Result<(Extent, Newest), Tail>> {
    let Some(newline) = tail.bytes.iter().rposition(|b| *b == b'\n') else {
        return Ok(Err(tail));
    };
    let end = tail.start + newline as u64 + 1;
    let start =
        stated_length(&tail.bytes[..newline]).and_then(|length| end.checked_sub(length as u64));
    let Some(start) = start else {
        return Ok(Err(tail));
    };
    // From one byte before the line, to see it begins one (after a newline, or at the start).
    let from = start.saturating_sub(1);
    if from < tail.start {
        // A line that starts before the tail is rarely torn: a good record fills the rest. The
        // buffer becomes the next save's (see `Journal::save`): room for a record a little
        // larger.
        let whole = usize::try_from(end - from).unwrap_or(usize::MAX);
        tail = open.extend_back(tail, from, next_record_room(whole).saturating_sub(whole))?;
    }
    let read = &tail;
    let at = |offset: u64| usize::try_from(offset.checked_sub(read.start)?).ok();
    let found = match (at(start), at(end)) {
        (Some(line_at), Some(line_end)) if line_end > line_at => {
            let begins_line = start == 0 || read.bytes.get(line_at.wrapping_sub(1)) == Some(&b'\n');
            let line = read
                .bytes
                .get(line_at..line_end - 1)
                .filter(|_| begins_line);
            line.and_then(record_body)
                .map(|body| line_at + body.start..line_at + body.end)
        }
        _ => None,
    };
    let Some(body) = found else {
        return Ok(Err(tail));
    };
    let base = match based_on(open, &tail.bytes[body.clone()], start, noted)? {
        Based::Full => None,
        Based::Delta(base) => Some(base),
        // A delta whose base a power loss took: an earlier record is the newest good one.
        Based::Broken => return Ok(Err(tail)),
    };
    let extent = Extent {
        len: tail.len,
        good_len: end,
    };
    Ok(Ok((
        extent,
        Newest {
            bytes: tail.bytes,
            start: tail.start,
            body,
            base,
        },
    )))
}

/// What the lock file notes of the journal between commands: `journal <boot> <stamp> base <at>
/// <len> <saved>`, the [`FileState`](fsio::FileState) the file had when the last command let
/// the lock go, and the full record there it had read whole (its check held) or written.
///
/// A record's check tells a whole record from a torn or cut one; the bytes of a record cannot
/// change while the file keeps its state (a write changes its change time or its size, a
/// compaction its inode), and a power loss, the one thing that tears what was written, is a new
/// boot. So a command that finds the file as the note states reads the base the note names
/// without hashing it again (among 256 sessions, a fifth of what a command computes); the
/// newest record, and any base the note does not name, are checked as always. A note from
/// another boot, or of a file changed since by anyone, matches nothing.
struct JournalNote;

impl JournalNote {
    /// The note for the file in `stamp` and the full record `base`; `None` when the boot id
    /// cannot be read.
    fn text(stamp: fsio::FileState, base: &BaseRef) -> Option<Vec<u8>> {
        let boot = crate::holder::boot_stamp()?;
        Some(
            format!(
                "journal {boot} {} base {} {} {}",
                stamp.to_text(),
                base.at,
                base.len,
                base.saved
            )
            .into_bytes(),
        )
    }
}

/// What a record's JSON rests on.
enum Based {
    /// Nothing: a full record.
    Full,
    /// Its base, read and checked: a delta record.
    Delta(Box<(BaseRef, BaseRecord)>),
    /// A base that is not there whole: a delta record that is not a good record.
    Broken,
}

/// Reads the base of the record whose JSON is `body` and whose line starts at `line_start` in
/// the file `open` reads, if it is a delta record. The base must be a whole line of this
/// build's frame before it (starting a line, ending in a newline, its check holding), a full
/// record, ending in the save number the delta states; anything else is a base a power loss
/// lost or tore (or a record that is not ours), and the delta is no good record.
fn based_on(
    open: &OpenTail<'_>,
    body: &[u8],
    line_start: u64,
    noted: Option<&[u8]>,
) -> Result<Based> {
    if !is_delta(body) {
        return Ok(Based::Full);
    }
    let Some(parts) = split_delta(body) else {
        return Ok(Based::Broken);
    };
    let base = parts.base;
    let fits = base.len >= 2
        && base
            .at
            .checked_add(base.len)
            .is_some_and(|end| end <= line_start);
    let Some(len) = usize::try_from(base.len).ok().filter(|_| fits) else {
        return Ok(Based::Broken);
    };
    // From one byte before the line, to see it begins one; into the buffer its leases will
    // share.
    let from = base.at.saturating_sub(1);
    let skip = usize::from(base.at > 0);
    let bytes = open.range_shared(from, len.saturating_add(skip))?;
    let begins_line = skip == 0 || bytes.first() == Some(&b'\n');
    let line = bytes
        .get(skip..)
        .filter(|line| begins_line && line.len() == len)
        .and_then(|line| line.strip_suffix(b"\n"))
        .filter(|line| line.starts_with(PREFIX));
    // Known whole when the lock file's note names this base in the file as it stands: not
    // hashed again.
    let verified =
        noted.is_some_and(|note| JournalNote::text(open.state(), &base).as_deref() == Some(note));
    let record = line
        .and_then(|line| record_body_as(line, verified))
        .filter(|range| {
            let body = &bytes[skip + range.start..skip + range.end];
            body.starts_with(FULL_OPEN) && saved_number(body) == base.saved
        });
    Ok(match record {
        Some(range) => Based::Delta(Box::new((
            base,
            BaseRecord {
                body: skip + range.start..skip + range.end,
                bytes,
            },
        ))),
        None => Based::Broken,
    })
}

/// Reads the newest good record of the journal at `path`: its extent and the record, checked
/// once. `Ok(None)` when there is no file. A file with bytes but no good record is refused: the
/// first record of every journal is written atomically and durably, and later writes only
/// append after it or cut back to a good record, so that is damage (or not our file), and
/// treating it as empty could forget stashed user bytes.
fn read_newest(path: &Path, noted: Option<&[u8]>) -> Result<Option<(Extent, Option<Newest>)>> {
    let Some(open) = OpenTail::open(path)? else {
        return Ok(None);
    };
    let mut tail = match newest_by_trailer(&open, open.last(TAIL)?, noted)? {
        Ok((extent, newest)) => return Ok(Some((extent, Some(newest)))),
        Err(tail) => tail,
    };
    let mut reach = TAIL;
    let mut base = None;
    // Bases found not whole: the many deltas a run of saves wrote against one are passed over
    // without reading it again for each.
    let mut broken: Vec<BaseRef> = Vec::new();
    let (good_len, newest) = loop {
        let start = tail.start;
        let mut resolves = |line_at: usize, body: Range<usize>| {
            let body = &tail.bytes[body];
            let named = split_delta(body);
            if named
                .as_ref()
                .is_some_and(|parts| broken.contains(&parts.base))
            {
                return Ok(false);
            }
            Ok(match based_on(&open, body, start + line_at as u64, None)? {
                Based::Full => true,
                Based::Delta(found) => {
                    base = Some(found);
                    true
                }
                Based::Broken => {
                    broken.extend(named.map(|parts| parts.base));
                    false
                }
            })
        };
        if let Some((body, good_len)) = scan_range_with(&tail.bytes, &mut resolves)? {
            break (good_len, Some(body));
        }
        if tail.start == 0 {
            break (0, None);
        }
        // No good record ends in the tail (a large record, or a torn run): a longer one.
        reach = reach.saturating_mul(4);
        tail = open.last(reach)?;
    };
    if newest.is_none() && !tail.bytes.is_empty() {
        return Err(Error::Ledger {
            path: path.to_path_buf(),
            reason: format!(
                "its {} bytes hold no intact record, so it is damaged or not ours; refusing to guess what it recorded (move it aside to start this workspace's record afresh)",
                tail.len
            ),
        });
    }
    let extent = Extent {
        len: tail.len,
        good_len: tail.start + good_len as u64,
    };
    let newest = newest.map(|body| Newest {
        bytes: tail.bytes,
        start: tail.start,
        body,
        base,
    });
    Ok(Some((extent, newest)))
}

/// The ledger the newest record (ending at `end` in the file) states, and the base the next
/// delta record is written against: for a full record of this build, that record; for a
/// delta, its base, whose leases less those it drops and with those it adds are the
/// ledger's (the rest of the ledger is the delta's own).
fn ledger_of(
    display: &Path,
    newest: &mut Newest,
    end: u64,
    folder: Option<FolderRef<'_>>,
) -> Result<(Ledger, Option<Base>)> {
    let based = newest.base.take();
    let body = newest.body();
    let Some(based) = based else {
        let ledger = Ledger::parse(body, display, folder.map(|f| f.identity))?;
        // Where its line starts, when the frame before the body reads as one.
        let head = PREFIX.len() + CHECK_HEX + MIDDLE.len();
        let line_at = newest.body.start.checked_sub(head).filter(|at| {
            newest
                .bytes
                .get(*at..)
                .is_some_and(|b| b.starts_with(PREFIX))
        });
        let base = line_at.map(|at| newest.start + at as u64).and_then(|at| {
            Some(Base {
                at: BaseRef {
                    at,
                    len: end.checked_sub(at)?,
                    saved: saved_number(body),
                },
                leases: BaseLeases::of(&ledger.leases),
            })
        });
        return Ok((ledger, base));
    };
    let (at, base_record) = *based;
    let parts = split_delta(body).ok_or_else(|| Error::Ledger {
        path: display.to_path_buf(),
        reason: "its newest delta record cannot be taken apart".into(),
    })?;
    let mut json = Vec::with_capacity(FULL_OPEN.len() + parts.rest.len());
    json.extend_from_slice(FULL_OPEN);
    json.extend_from_slice(parts.rest);
    let mut ledger = Ledger::parse(&json, display, folder.map(|f| f.identity))?;
    let mut leases = Ledger::parse_leases(&base_record.bytes, base_record.body, display)?;
    let base_leases = BaseLeases::of(&leases);
    for token in &parts.gone {
        leases.remove(token);
    }
    // The few it adds, one at a time (`append` would build the whole map anew).
    for (token, lease) in std::mem::take(&mut ledger.leases) {
        leases.insert(token, lease);
    }
    ledger.leases = leases;
    Ok((
        ledger,
        Some(Base {
            at,
            leases: base_leases,
        }),
    ))
}

/// The ledger the journal at `path` records as its newest good record, read as a command reads
/// it (a delta record with its base), as JSON; `None` without a file or a record. For tests and
/// tools that look at a journal from outside.
pub fn read_ledger_json(path: &Path) -> Result<Option<serde_json::Value>> {
    let Some((extent, Some(mut newest))) = read_newest(path, None)? else {
        return Ok(None);
    };
    let (ledger, _) = ledger_of(path, &mut newest, extent.good_len, None)?;
    serde_json::to_value(&ledger)
        .map(Some)
        .map_err(|e| Error::Ledger {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
}

/// One workspace's journal, open under the workspace lock: what this process knows of the file.
#[derive(Debug)]
pub struct Journal {
    file: RelPath,
    display: PathBuf,
    /// Whether the file exists.
    exists: Cell<bool>,
    /// Its length.
    len: Cell<u64>,
    /// Where its last good record ends.
    good_len: Cell<u64>,
    /// The newest record (as read, or as written), to skip saving an unchanged ledger: one of
    /// the same length and check is read back and compared as bytes, so a ledger that did not
    /// change is not written again.
    last: Cell<Option<Last>>,
    /// A buffer for the next record, reused from save to save: the read record's, then each
    /// written one's, so a command's saves touch no fresh memory for their records.
    spare: RefCell<Vec<u8>>,
    /// Whether everything in it is known to be on disk.
    synced: Cell<bool>,
    /// Whether every save must be durable (a remote state directory).
    always_durable: bool,
    /// The highest save number seen: the next record's is one more.
    saved: Cell<u64>,
    /// The sync slots, once known to be there.
    slots: Cell<Option<Slots>>,
    /// The newest record's base as read, which the newest sync slot may hold (see `write_slot`).
    known_line: RefCell<Option<KnownLine>>,
    /// The full record the next delta record is written against: the newest full record in
    /// the file, once known (`None`: the next save writes a full record).
    base: RefCell<Option<Base>>,
}

impl Journal {
    /// Reads the journal in the state directory `state` (under the workspace lock): the ledger of
    /// the workspace `folder`, whose identity it must record (a key collision is refused);
    /// without `folder`, of whatever workspace it records, `None` when nothing is recorded.
    /// `always_durable`: sync every save (a remote state directory).
    #[cfg(test)]
    pub fn load(
        state: &Root,
        folder: Option<FolderRef<'_>>,
        always_durable: bool,
    ) -> Result<(Journal, Option<Ledger>)> {
        Self::load_noted(state, folder, always_durable, None)
    }

    /// [`Journal::load`] with the note the last command left of the journal (see
    /// [`JournalNote`]): a base it names in the file as it stands is not hashed again.
    pub fn load_noted(
        state: &Root,
        folder: Option<FolderRef<'_>>,
        always_durable: bool,
        noted: Option<&[u8]>,
    ) -> Result<(Journal, Option<Ledger>)> {
        let file = RelPath::new(JOURNAL_FILE)?;
        // A crash in the middle of creating or compacting it (or making its sync slots) leaves
        // a temporary file.
        state.remove_temp_files_beside(&file, &[SLOTS_FILE])?;
        Self::read_noted(state, folder, always_durable, noted)
    }

    /// [`Journal::load`] changing nothing (for `status`): a temporary file a crash left stays.
    pub fn read(
        state: &Root,
        folder: Option<FolderRef<'_>>,
        always_durable: bool,
    ) -> Result<(Journal, Option<Ledger>)> {
        Self::read_noted(state, folder, always_durable, None)
    }

    fn read_noted(
        state: &Root,
        folder: Option<FolderRef<'_>>,
        always_durable: bool,
        noted: Option<&[u8]>,
    ) -> Result<(Journal, Option<Ledger>)> {
        let file = RelPath::new(JOURNAL_FILE)?;
        let display = state.display_path(&file);
        let newest = read_newest(&display, noted)?;
        let extent = newest.as_ref().map(|(extent, _)| *extent);
        let journal = Journal {
            file,
            display,
            exists: Cell::new(extent.is_some()),
            len: Cell::new(extent.map_or(0, |e| e.len)),
            good_len: Cell::new(extent.map_or(0, |e| e.good_len)),
            last: Cell::new(None),
            spare: RefCell::new(Vec::new()),
            synced: Cell::new(false),
            always_durable,
            saved: Cell::new(0),
            slots: Cell::new(None),
            known_line: RefCell::new(None),
            base: RefCell::new(None),
        };
        if let Some((extent, Some(mut newest))) = newest {
            let saved = saved_number(newest.body());
            let slots = read_slots(state, saved)?;
            journal.known_line.replace(newest.base_line());
            journal.slots.set(slots.slots);
            journal.saved.set(saved.max(slots.highest));
            if let Some((_, mut newer)) = slots.newer {
                // A durable save the journal lost with a power loss: its slot holds it (a delta
                // with its base, the journal's first record). The journal's own newest record is
                // not it, so the next save writes whatever it has (a full record: no base is
                // kept for it).
                let (ledger, _) = ledger_of(&journal.display, &mut newer, extent.good_len, folder)?;
                journal.spare.replace(newer.bytes);
                return Ok((journal, Some(ledger)));
            }
            let (ledger, base) = ledger_of(&journal.display, &mut newest, extent.good_len, folder)?;
            journal.base.replace(base);
            let body = newest.body();
            journal.last.set(Some(Last {
                check: newest.check(),
                body_at: newest.start + newest.body.start as u64,
                body_len: body.len(),
                record_len: newest.bytes.len(),
            }));
            journal.spare.replace(newest.bytes);
            return Ok((journal, Some(ledger)));
        }
        // No record: slots left from a journal moved aside are not read, only numbered past.
        let slots = read_slots(state, u64::MAX)?;
        journal.slots.set(slots.slots);
        journal.saved.set(slots.highest);
        Ok((journal, folder.map(Ledger::new)))
    }

    /// The note for the next command (see [`JournalNote`]): the file as it stands now, and the
    /// full record the next deltas rest on, which this journal read whole or wrote. `None`
    /// when there is no such record, or the file or the boot cannot be looked at.
    pub fn note(&self, state: &Root) -> Option<Vec<u8>> {
        let base = self.base.borrow();
        let base = &base.as_ref()?.at;
        JournalNote::text(state.file_stamp(&self.file)?, base)
    }

    /// Records `ledger`, synced when `durability` (or this journal) requires it. When the save
    /// compacted the journal, the file it replaced comes back still open: its last close frees
    /// it, which the caller may put off until its lock is let go.
    pub fn save(
        &self,
        state: &Root,
        ledger: &Ledger,
        durability: Durability,
    ) -> Result<Option<fsio::OpenFile>> {
        let durable = durability == Durability::Durable || self.always_durable;
        // Nothing recorded and no file: nothing to write.
        if ledger.is_empty() && self.len.get() == 0 {
            return Ok(None);
        }
        let mut line = self.spare.take();
        // Room for the whole record at once: about the size of the last one, exactly (growing by
        // doubling would touch, and fault in, pages the record never fills).
        let last = self.last.get();
        let last_len = last.map_or(0, |l| l.record_len);
        if line.capacity() < last_len.saturating_add(last_len / 16).saturating_add(256) {
            line.reserve_exact(next_record_room(last_len));
        }
        let body_start = begin_frame(&mut line);
        // A durable save that goes to a sync slot is a delta only against the journal's first
        // record, which was written durably (a slot's record must stand when the journal's
        // unsynced bytes are lost); otherwise a full record. So is one that would compact the
        // journal (the record is then the file's only one).
        let to_slot = durable && !self.always_durable;
        let base = self.base.borrow();
        let delta = match base.as_ref() {
            Some(base)
                if (!to_slot || base.at.at == 0)
                    && self.exists.get()
                    && !ledger.leases.is_empty() =>
            {
                self.write_delta(&mut line, body_start, base, ledger)?
            }
            _ => None,
        };
        if delta.is_none() {
            line.truncate(body_start);
            // A whole record after deltas: about the size of the full record they rest on.
            if let Some(base) = base.as_ref() {
                let room = usize::try_from(base.at.len).unwrap_or(0);
                if line.capacity() - line.len() < room {
                    line.reserve_exact(next_record_room(room));
                }
            }
            ledger.write_json(&mut line, &self.display)?;
        }
        drop(base);
        // Written with the newest record's number first, to compare with it.
        put_saved(&mut line, body_start, self.saved.get());
        let unchanged = (self.synced.get() || !durable)
            && last.is_some_and(|last| self.holds(last, &line[body_start..]));
        if unchanged {
            self.spare.replace(line);
            return Ok(None);
        }
        let saved = self.saved.get().saturating_add(1);
        replace_saved(&mut line, body_start, saved);
        let check = check64(&line[body_start..]);
        let body = end_frame(&mut line, body_start, check);
        // A large durable record rests the saves after it on a durable base: the journal is
        // compacted to it, and the durable saves that follow are deltas in their slots.
        let rebase = to_slot && delta.is_none() && line.len() >= DURABLE_BASE_FROM;
        let (at, replaced) = self.write(state, &line, durable, saved, rebase)?;
        if delta.is_none() {
            // The next deltas' base.
            self.base.replace(Some(Base {
                at: BaseRef {
                    at,
                    len: line.len() as u64,
                    saved,
                },
                leases: BaseLeases::of(&ledger.leases),
            }));
        }
        self.saved.set(saved);
        self.last.set(Some(Last {
            check,
            body_at: at + body.start as u64,
            body_len: body.len(),
            record_len: line.len(),
        }));
        self.spare.replace(line);
        Ok(replaced)
    }

    /// Writes `ledger` as a delta record's JSON against `base` into `line` (from `body_start`):
    /// the tokens of the base's leases it no longer has, and its fields with only the leases the
    /// base lacks (a lease never changes once recorded: one token is one lease). `Some(())` when
    /// the delta is worth it: at most [`DELTA_CHANGES`] leases added and dropped, written after
    /// the journal's end without compacting it, and every token it drops plain
    /// ([`plain_token`]); `None` otherwise, the caller then writes a full record.
    fn write_delta(
        &self,
        line: &mut Vec<u8>,
        body_start: usize,
        base: &Base,
        ledger: &Ledger,
    ) -> Result<Option<()>> {
        // The base's tokens the ledger no longer has, and the leases it lacks: when the ledger's
        // leases are the base's as read, what it has marked gone and added since; otherwise both
        // sorted lists walked together, one comparison a step.
        let leases = &ledger.leases;
        let as_read = match (&base.leases, leases.read_from()) {
            (BaseLeases::Read(base), Some(read)) => std::rc::Rc::ptr_eq(base, read),
            _ => false,
        };
        let gone: Vec<&str> = match as_read {
            true => leases.gone().collect(),
            false => {
                let mut kept = leases.keys().peekable();
                let mut gone = Vec::new();
                for token in base.leases.tokens() {
                    while kept.next_if(|k| *k < token).is_some() {}
                    if kept.peek() != Some(&token) {
                        gone.push(token);
                    }
                }
                gone
            }
        };
        if gone
            .iter()
            .any(|token| !plain_token(token) || token.is_empty())
        {
            return Ok(None);
        }
        let mut head = Vec::with_capacity(DELTA_OPEN.len() + 64 + gone.len() * 64);
        head.extend_from_slice(DELTA_OPEN);
        let at = base.at;
        head.extend_from_slice(format!("{},{},{}", at.at, at.len, at.saved).as_bytes());
        head.extend_from_slice(DELTA_GONE);
        for (n, token) in gone.iter().enumerate() {
            if n > 0 {
                head.push(b',');
            }
            head.push(b'"');
            head.extend_from_slice(token.as_bytes());
            head.push(b'"');
        }
        head.push(b']');
        // The leases the base lacks: those added since it was read, or the tokens it does not
        // list (both sorted: walked together).
        let mut in_base = base.leases.tokens().peekable();
        let mut walked = leases.iter().filter(|(token, _)| {
            while in_base.next_if(|b| b < token).is_some() {}
            in_base.peek() != Some(token)
        });
        let mut added = leases.added();
        let which: &mut dyn Iterator<Item = (&str, &Recorded)> = match as_read {
            true => &mut added,
            false => &mut walked,
        };
        let mut count = 0;
        let mut counted = which.inspect(|_| count += 1);
        ledger.write_delta_json(line, &self.display, &head, &mut counted)?;
        let len = (line.len() - body_start) as u64;
        let limit = COMPACT_AT.max(COMPACT_RECORDS.saturating_mul(at.len));
        let worth = count + gone.len() <= DELTA_CHANGES
            && self.good_len.get().saturating_add(len).saturating_add(64) <= limit;
        Ok(worth.then_some(()))
    }

    /// Whether the newest record `last` holds `body`: the same length and check (hashed only
    /// when the lengths agree), and the same bytes read back from the file. A record that cannot
    /// be read back counts as different (and is written again).
    fn holds(&self, last: Last, body: &[u8]) -> bool {
        if last.body_len != body.len() || last.check != check64(body) {
            return false;
        }
        let Ok(Some(open)) = OpenTail::open(&self.display) else {
            return false;
        };
        open.holds_at(last.body_at, body).unwrap_or(false)
    }

    /// Appends `record` (a whole line), or rewrites the journal as it alone when the file is new,
    /// has grown past its limit, or `compact` asks it of a full record.
    /// Returns where in the file the record starts, and the file a compaction replaced, open.
    fn write(
        &self,
        state: &Root,
        record: &[u8],
        durable: bool,
        saved: u64,
        compact: bool,
    ) -> Result<(u64, Option<fsio::OpenFile>)> {
        let limit = COMPACT_AT.max(COMPACT_RECORDS.saturating_mul(record.len() as u64));
        let full = !record
            .get(PREFIX.len() + CHECK_HEX + MIDDLE.len()..)
            .is_some_and(is_delta);
        let grown = full && self.good_len.get() + record.len() as u64 > limit;
        if !self.exists.get() || (full && compact) || grown {
            // Held open across the rename, so freeing it is left to the caller (a file that
            // cannot be opened is simply freed by the rename).
            let replaced = match self.exists.get() {
                true => state.open_file(&self.file).ok().flatten(),
                false => None,
            };
            // Created, or compacted: one record, atomically and durably.
            state.write_atomic(&self.file, record, Some(0o600))?;
            self.exists.set(true);
            self.len.set(record.len() as u64);
            self.good_len.set(self.len.get());
            self.synced.set(true);
            self.note_durable();
            return Ok((0, replaced));
        }
        if self.good_len.get() < self.len.get() {
            // A torn record from a crash mid-append: cut it off, or the next line joins it.
            state.truncate(&self.file, self.good_len.get())?;
            self.len.set(self.good_len.get());
        }
        // A durable record goes to a sync slot; the journal itself is synced only where every
        // save is (a remote state directory).
        let to_slot = durable && !self.always_durable;
        state.append(&self.file, record, durable && !to_slot)?;
        let at = self.len.get();
        self.len.set(at + record.len() as u64);
        self.good_len.set(self.len.get());
        if to_slot {
            self.write_slot(state, record, saved)?;
        } else if durable {
            self.note_durable();
        }
        // Syncing the file syncs every earlier write too; an unsynced write leaves it unknown.
        self.synced.set(durable);
        Ok((at, None))
    }

    /// Writes `record` (save number `saved`) into the sync slot not holding the newest record,
    /// in place, and syncs it: the slot file's size and blocks stay as they are, so the sync
    /// writes the record's bytes alone. Without a slot file, or one too small for the record,
    /// the file is made anew (atomically, durably), the record in its first slot.
    /// Whether slot `index` (the newest) holds, byte for byte, the line this journal read whole
    /// with the number and length its head states: then it is whole, known without reading it
    /// into memory and hashing it (compared a piece at a time).
    fn holds_known_line(&self, state: &Root, slots: Slots, index: usize) -> Result<bool> {
        let known = self.known_line.borrow();
        let Some(known) = known.as_ref() else {
            return Ok(false);
        };
        let Some(line) = known.buffer.get(known.line.clone()) else {
            return Ok(false);
        };
        if slots.newest_head != Some((known.saved, line.len())) {
            return Ok(false);
        }
        let rel = RelPath::new(SLOTS_FILE)?;
        let Some(file) = state.open_file(&rel)? else {
            return Ok(false);
        };
        let at = index as u64 * slots.size + SLOT_HEAD as u64;
        file.holds_at(at, line)
            .map_err(|e| Error::io(state.display_path(&rel), "read", e))
    }

    fn write_slot(&self, state: &Root, record: &[u8], saved: u64) -> Result<()> {
        let rel = RelPath::new(SLOTS_FILE)?;
        let head = slot_head(saved, record.len());
        let need = (SLOT_HEAD + record.len()) as u64;
        match self.slots.get().filter(|slots| need <= slots.size) {
            Some(slots) => {
                // Never over the newest whole record: the slot whose head states the newest
                // is written over only when its record is not whole (a cut write; the other
                // slot's is then the newest durable one).
                let index = match slots.newest {
                    None => 0,
                    Some(newest) => {
                        let newest = newest.min(1);
                        let whole = slots.newest_whole
                            || self.holds_known_line(state, slots, newest)?
                            || slot_is_whole(state, slots.size, newest)?;
                        if whole { 1 - newest } else { newest }
                    }
                };
                // The record first, then the head that names it: a write cut in between
                // leaves a head whose record does not match it, which counts for nothing.
                let at = index as u64 * slots.size;
                state.write_at(&rel, at + SLOT_HEAD as u64, &[record], false)?;
                state.write_at(&rel, at, &[&head], true)?;
                self.slots.set(Some(Slots {
                    newest: Some(index),
                    newest_whole: true,
                    newest_head: Some((saved, record.len())),
                    ..slots
                }));
            }
            None => {
                let size = need.next_power_of_two().max(SLOT_MIN);
                let length = usize::try_from(size.saturating_mul(2)).map_err(|_| {
                    Error::io(
                        state.display_path(&rel),
                        "write",
                        std::io::ErrorKind::FileTooLarge.into(),
                    )
                })?;
                let mut bytes = vec![0u8; length];
                bytes[..SLOT_HEAD].copy_from_slice(&head);
                bytes[SLOT_HEAD..SLOT_HEAD + record.len()].copy_from_slice(record);
                state.write_atomic(&rel, &bytes, Some(0o600))?;
                self.slots.set(Some(Slots {
                    size,
                    newest: Some(0),
                    newest_whole: true,
                    newest_head: Some((saved, record.len())),
                }));
            }
        }
        if faults::tracking_durability() {
            let path = state.display_path(&rel);
            let image = fsio::read_private(&path).ok().flatten().unwrap_or_default();
            faults::note_durable(&path, image);
        }
        Ok(())
    }

    /// For the power-loss model of crash tests: the file as it stands is durable.
    fn note_durable(&self) {
        if faults::tracking_durability() {
            let image = fsio::read_private(&self.display)
                .ok()
                .flatten()
                .unwrap_or_default();
            faults::note_durable(&self.display, image);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::disallowed_methods)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn body(n: usize) -> Vec<u8> {
        format!(
            "{{\"version\":1,\"n\":{n},\"text\":\"{}\"}}",
            "x".repeat(n % 7)
        )
        .into_bytes()
    }

    #[test]
    fn frames_are_one_checked_line() {
        let line = frame(b"{\"a\":1}");
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        let found = scan(&line);
        assert_eq!(found.last, Some(&b"{\"a\":1}"[..]));
        assert_eq!(found.good_len, line.len());
        // The line is itself JSON, so `jq` reads a journal.
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["ledger"]["a"], 1);
    }

    #[test]
    fn a_flipped_byte_discards_only_its_record() {
        let mut bytes = frame(&body(1));
        let first = bytes.len();
        bytes.extend(frame(&body(2)));
        let second = bytes.len();
        bytes.extend(frame(&body(3)));
        let mut flipped = bytes.clone();
        flipped[first + 40] ^= 0x01;
        let found = scan(&flipped);
        assert_eq!(found.last, Some(&body(3)[..]));
        assert_eq!(found.good_len, bytes.len());
        let mut flipped = bytes.clone();
        flipped[second + 40] ^= 0x01;
        let found = scan(&flipped);
        assert_eq!(found.last, Some(&body(2)[..]));
        assert_eq!(found.good_len, second);
        assert_eq!(scan(b"not a journal\n").last, None);
    }

    #[test]
    fn the_newest_record_is_found_from_the_tail_or_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        // Many small records: the tail holds the newest.
        let mut bytes = Vec::new();
        for n in 0..2000 {
            bytes.extend(frame(&body(n)));
        }
        std::fs::write(&path, &bytes).unwrap();
        let (extent, last) = read_newest(&path, None).unwrap().unwrap();
        assert_eq!(last.as_ref().map(Newest::body), Some(&body(1999)[..]));
        assert_eq!(last.as_ref().map(Newest::check), Some(check64(&body(1999))));
        assert_eq!(
            (extent.len, extent.good_len),
            (bytes.len() as u64, bytes.len() as u64)
        );
        // A record longer than the tail, then a torn one: the whole file is read.
        let big = format!("{{\"big\":\"{}\"}}", "y".repeat(TAIL as usize * 2)).into_bytes();
        bytes.extend(frame(&big));
        let good = bytes.len() as u64;
        // Whole, it is found by its trailer and read back from where it starts.
        std::fs::write(&path, &bytes).unwrap();
        let (extent, last) = read_newest(&path, None).unwrap().unwrap();
        assert_eq!(last.as_ref().map(Newest::body), Some(&big[..]));
        assert_eq!(last.as_ref().map(Newest::check), Some(check64(&big)));
        assert_eq!((extent.len, extent.good_len), (good, good));
        bytes.extend_from_slice(&frame(&body(7))[..30]);
        std::fs::write(&path, &bytes).unwrap();
        let (extent, last) = read_newest(&path, None).unwrap().unwrap();
        assert_eq!(last.as_ref().map(Newest::body), Some(&big[..]));
        assert_eq!(last.as_ref().map(Newest::check), Some(check64(&big)));
        assert_eq!((extent.len, extent.good_len), (bytes.len() as u64, good));
        assert!(
            read_newest(&dir.path().join("absent"), None)
                .unwrap()
                .is_none()
        );
        // Bytes with no intact record at all: damage, refused with the path.
        std::fs::write(&path, b"{\"sha256\":\"00\",\"ledger\":{}}\n").unwrap();
        let refused = read_newest(&path, None).unwrap_err().to_string();
        assert!(refused.contains("no intact record"), "{refused}");
        std::fs::write(&path, b"").unwrap();
        assert!(read_newest(&path, None).unwrap().unwrap().1.is_none());
    }

    /// Syncs made by saving `ledger` twice through a journal, the second time changed and
    /// deferred.
    fn syncs_of_a_deferred_save(always_durable: bool) -> u64 {
        let dir = tempfile::tempdir().unwrap();
        let state = Root::create_private(dir.path()).unwrap();
        let identity = crate::ledger::FolderIdentity::made_up();
        let folder = FolderRef {
            path: Path::new("/w"),
            identity: &identity,
        };
        let (journal, ledger) = Journal::load(&state, Some(folder), always_durable).unwrap();
        let mut ledger = ledger.unwrap();
        ledger.created_dirs.insert(RelPath::new("a").unwrap());
        journal.save(&state, &ledger, Durability::Durable).unwrap();
        ledger.created_dirs.insert(RelPath::new("b").unwrap());
        let before = fsio::syncs_on_this_thread();
        journal.save(&state, &ledger, Durability::Deferred).unwrap();
        let syncs = fsio::syncs_on_this_thread() - before;
        // Whatever was synced, the newest record reads back.
        let (_, again) = Journal::load(&state, None, always_durable).unwrap();
        assert_eq!(again, Some(ledger));
        syncs
    }

    #[test]
    fn a_compaction_hands_back_the_file_it_replaced_still_open() {
        use std::os::unix::fs::MetadataExt as _;
        let (dir, state, journal, mut ledger) = fresh();
        let path = dir.path().join(JOURNAL_FILE);
        let mut replaced = Vec::new();
        for n in 0..COMPACT_AT {
            let before = std::fs::metadata(&path).ok().map(|m| (m.dev(), m.ino()));
            ledger
                .created_dirs
                .insert(RelPath::new(format!("d{n}")).unwrap());
            let kept = journal.save(&state, &ledger, Durability::Deferred).unwrap();
            let after = std::fs::metadata(&path).map(|m| (m.dev(), m.ino())).ok();
            match kept {
                // The file it names was the journal before this save, and is no longer.
                Some(file) => {
                    assert_ne!(after, before);
                    replaced.push(file);
                }
                // Appended (or created: nothing was replaced).
                None => assert!(before.is_none() || after == before, "save {n}"),
            }
            if replaced.len() == 2 {
                break;
            }
        }
        assert_eq!(replaced.len(), 2, "the journal was compacted twice");
        let (_, again) = Journal::load(&state, None, false).unwrap();
        assert_eq!(again, Some(ledger));
    }

    #[test]
    fn a_symlink_planted_at_the_journal_before_a_compaction_is_never_followed() {
        let (dir, state, journal, mut ledger) = fresh();
        let path = dir.path().join(JOURNAL_FILE);
        ledger.created_dirs.insert(RelPath::new("a").unwrap());
        journal.save(&state, &ledger, Durability::Durable).unwrap();
        // The journal's bytes moved aside and a link to them left in its place.
        let victim = dir.path().join("victim");
        std::fs::rename(&path, &victim).unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let before = std::fs::read(&victim).unwrap();
        // The next save compacts (as if the journal had grown to its limit): the file it would
        // hold open and then replace is the link, which is neither opened nor written through.
        journal.good_len.set(COMPACT_AT);
        journal.len.set(COMPACT_AT);
        ledger.created_dirs.insert(RelPath::new("b").unwrap());
        let refused = journal
            .save(&state, &ledger, Durability::Deferred)
            .unwrap_err()
            .to_string();
        assert!(refused.contains(JOURNAL_FILE), "{refused}");
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            before,
            "the link's target is untouched"
        );
        assert!(std::fs::symlink_metadata(&path).unwrap().is_symlink());
    }

    #[test]
    fn a_deferred_save_syncs_only_on_a_remote_state_directory() {
        assert_eq!(syncs_of_a_deferred_save(false), 0);
        assert_eq!(syncs_of_a_deferred_save(true), 1);
    }

    /// A journal in a fresh state directory, with the ledger it starts from.
    fn fresh() -> (tempfile::TempDir, Root, Journal, Ledger) {
        let dir = tempfile::tempdir().unwrap();
        let state = Root::create_private(dir.path()).unwrap();
        let identity = crate::ledger::FolderIdentity::made_up();
        let folder = FolderRef {
            path: Path::new("/w"),
            identity: &identity,
        };
        let (journal, ledger) = Journal::load(&state, Some(folder), false).unwrap();
        (dir, state, journal, ledger.unwrap())
    }

    /// `ledger` with one more created directory, `name`.
    fn with_dir(ledger: &Ledger, name: &str) -> Ledger {
        let mut next = ledger.clone();
        next.created_dirs.insert(RelPath::new(name).unwrap());
        next
    }

    fn load(state: &Root) -> Ledger {
        Journal::load(state, None, false).unwrap().1.unwrap()
    }

    #[test]
    fn durable_saves_go_to_a_sync_slot_written_in_place() {
        let (dir, state, journal, ledger) = fresh();
        let (journal_path, slots_path) =
            (dir.path().join(JOURNAL_FILE), dir.path().join(SLOTS_FILE));
        // The journal's creation is durable by itself; a deferred save makes no slot.
        let one = with_dir(&ledger, "a");
        journal.save(&state, &one, Durability::Durable).unwrap();
        let two = with_dir(&one, "b");
        journal.save(&state, &two, Durability::Deferred).unwrap();
        assert!(!slots_path.exists());
        // The first durable append makes the slots (file + directory), the record in the first.
        let three = with_dir(&two, "c");
        let before = fsio::syncs_on_this_thread();
        journal.save(&state, &three, Durability::Durable).unwrap();
        assert_eq!(fsio::syncs_on_this_thread() - before, 2);
        let size = std::fs::metadata(&slots_path).unwrap().len();
        assert_eq!(size, 2 * SLOT_MIN);
        // Later ones: the other slot, in place, one sync; the journal itself is not synced.
        for (n, name) in ["d", "e", "f"].iter().enumerate() {
            let next = with_dir(&load(&state), name);
            let journal_len = std::fs::metadata(&journal_path).unwrap().len();
            let before = fsio::syncs_on_this_thread();
            journal.save(&state, &next, Durability::Durable).unwrap();
            assert_eq!(fsio::syncs_on_this_thread() - before, 1, "save {n}");
            assert_eq!(std::fs::metadata(&slots_path).unwrap().len(), size);
            assert!(std::fs::metadata(&journal_path).unwrap().len() > journal_len);
            assert_eq!(load(&state), next);
        }
        // Both slots hold a record now, the newest and the one before.
        let bytes = std::fs::read(&slots_path).unwrap();
        let half = usize::try_from(size / 2).unwrap();
        let saved = |slot: &[u8]| parse_slot_head(&slot[..SLOT_HEAD]).unwrap().0;
        let mut numbers = [saved(&bytes[..half]), saved(&bytes[half..])];
        numbers.sort_unstable();
        assert_eq!(numbers[1], numbers[0] + 1);
    }

    /// A journal after three durable saves (its creation, then two into the slots, numbered 2
    /// and 3), with the journal's bytes as a power loss keeps them: its synced creation alone.
    struct Durables {
        _dir: tempfile::TempDir,
        state: Root,
        journal: Journal,
        journal_path: PathBuf,
        slots_path: PathBuf,
        synced: Vec<u8>,
        two: Ledger,
        three: Ledger,
    }

    fn three_durable_saves() -> Durables {
        let (dir, state, journal, ledger) = fresh();
        let (journal_path, slots_path) =
            (dir.path().join(JOURNAL_FILE), dir.path().join(SLOTS_FILE));
        let one = with_dir(&ledger, "a");
        journal.save(&state, &one, Durability::Durable).unwrap();
        let synced = std::fs::read(&journal_path).unwrap();
        let two = with_dir(&one, "b");
        journal.save(&state, &two, Durability::Durable).unwrap();
        let three = with_dir(&two, "c");
        journal.save(&state, &three, Durability::Durable).unwrap();
        Durables {
            _dir: dir,
            state,
            journal,
            journal_path,
            slots_path,
            synced,
            two,
            three,
        }
    }

    #[test]
    fn a_durable_record_the_journal_lost_is_read_from_its_slot() {
        let Durables {
            _dir,
            state,
            journal,
            journal_path,
            slots_path,
            synced,
            two,
            three,
        } = three_durable_saves();
        let four = with_dir(&three, "d");
        journal.save(&state, &four, Durability::Deferred).unwrap();
        std::fs::write(&journal_path, &synced).unwrap();
        // The newest durable record comes back from its slot; the deferred one is lost.
        assert_eq!(load(&state), three);
        // A save after that is newer than either slot, though the journal lost records.
        let (journal, _) = Journal::load(&state, None, false).unwrap();
        let five = with_dir(&three, "e");
        journal.save(&state, &five, Durability::Deferred).unwrap();
        assert_eq!(load(&state), five);
        // A slot whose write was cut counts for nothing: the other one's record is read.
        std::fs::write(&journal_path, &synced).unwrap();
        cut_slot(&slots_path, 3);
        assert_eq!(load(&state), two);
        // Slots are read only beside a journal: moved aside, nothing is recorded.
        std::fs::remove_file(&journal_path).unwrap();
        let (_, none) = Journal::load(&state, None, false).unwrap();
        assert_eq!(none, None);
    }

    /// Cuts the record of the slot whose head states save number `saved` (its head kept).
    fn cut_slot(slots_path: &Path, saved: u64) {
        let mut bytes = std::fs::read(slots_path).unwrap();
        let half = bytes.len() / 2;
        let at = if parse_slot_head(&bytes[..SLOT_HEAD]).map(|h| h.0) == Some(saved) {
            0
        } else {
            half
        };
        assert_eq!(
            parse_slot_head(&bytes[at..at + SLOT_HEAD]).unwrap().0,
            saved
        );
        bytes[at + SLOT_HEAD + 40] ^= 0x20;
        std::fs::write(slots_path, &bytes).unwrap();
    }

    #[test]
    fn a_slot_whose_write_was_cut_is_written_over_never_the_whole_one() {
        let Durables {
            _dir,
            state,
            journal: _,
            journal_path,
            slots_path,
            synced,
            two,
            three,
        } = three_durable_saves();
        // The write of the third's slot was cut (its head reached the disk, not its record):
        // the second is the newest durable record, in the other slot.
        cut_slot(&slots_path, 3);
        let (journal, _) = Journal::load(&state, None, false).unwrap();
        let four = with_dir(&three, "d");
        journal.save(&state, &four, Durability::Durable).unwrap();
        // The fourth went over the cut slot; its own write is cut too. The second survives.
        cut_slot(&slots_path, 4);
        std::fs::write(&journal_path, &synced).unwrap();
        assert_eq!(load(&state), two);
    }

    /// A durable start, a deferred end (a delta on the start's record) and another durable
    /// start, as a session among others runs: the newest slot is told whole by the record the
    /// journal read for it (the delta's base), compared with it byte for byte, so the next
    /// durable save writes the other slot without hashing it; with that slot's write cut, the
    /// comparison fails and the cut slot is the one written over.
    #[test]
    fn the_newest_slot_is_told_whole_by_the_record_the_journal_read_for_it() {
        for cut in [false, true] {
            let (dir, state, journal, ledger) = fresh();
            let slots_path = dir.path().join(SLOTS_FILE);
            let heads = || {
                let bytes = std::fs::read(&slots_path).unwrap();
                let half = bytes.len() / 2;
                [&bytes[..SLOT_HEAD], &bytes[half..half + SLOT_HEAD]]
                    .map(|head| parse_slot_head(head).map(|(saved, _)| saved))
            };
            let base = toggled(&toggled(&ledger, 0), 1);
            journal.save(&state, &base, Durability::Durable).unwrap();
            // A record of no lease after the journal's first: the next durable save has no
            // durable base to write a delta against, and its slot takes a full record.
            journal
                .save(&state, &with_dir(&ledger, "a"), Durability::Deferred)
                .unwrap();
            let started = toggled(&base, 2);
            journal.save(&state, &started, Durability::Durable).unwrap();
            assert_eq!(heads(), [Some(3), None]);
            assert!(!is_delta_line(lines(dir.path()).last().unwrap()));
            let ended = toggled(&started, 2);
            journal.save(&state, &ended, Durability::Deferred).unwrap();
            assert!(is_delta_line(lines(dir.path()).last().unwrap()));
            if cut {
                cut_slot(&slots_path, 3);
            }
            let (journal, read) = Journal::load(&state, None, false).unwrap();
            assert_eq!(read.unwrap(), ended);
            let slots = journal.slots.get().unwrap();
            assert_eq!(slots.newest, Some(0));
            assert_eq!(
                journal.holds_known_line(&state, slots, 0).unwrap(),
                !cut,
                "cut: {cut}"
            );
            journal
                .save(&state, &toggled(&ended, 3), Durability::Durable)
                .unwrap();
            let expected = if cut {
                [Some(5), None]
            } else {
                [Some(3), Some(5)]
            };
            assert_eq!(heads(), expected, "cut: {cut}");
        }
    }

    /// A ledger of `n` leases, whose full record is longer than [`DURABLE_BASE_FROM`] when `n`
    /// is a hundred or more.
    fn many(ledger: &Ledger, n: u64) -> Ledger {
        (0..n).fold(ledger.clone(), |l, i| toggled(&l, i))
    }

    /// The record line slot `index` holds (as its head states its length).
    fn slot_line(slots_path: &Path, index: usize) -> Vec<u8> {
        let bytes = std::fs::read(slots_path).unwrap();
        let at = index * (bytes.len() / 2);
        let (_, len) = parse_slot_head(&bytes[at..at + SLOT_HEAD]).unwrap();
        bytes[at + SLOT_HEAD..at + SLOT_HEAD + len].to_vec()
    }

    /// A journal whose first record, written durably, holds many leases.
    struct Many {
        dir: tempfile::TempDir,
        state: Root,
        journal: Journal,
        ledger: Ledger,
        big: Ledger,
        journal_path: PathBuf,
        slots_path: PathBuf,
        /// The journal's bytes then: what a power loss leaves of the file.
        first: Vec<u8>,
    }

    fn many_first() -> Many {
        let (dir, state, journal, ledger) = fresh();
        let (journal_path, slots_path) =
            (dir.path().join(JOURNAL_FILE), dir.path().join(SLOTS_FILE));
        let big = many(&ledger, 120);
        journal.save(&state, &big, Durability::Durable).unwrap();
        let first = std::fs::read(&journal_path).unwrap();
        assert!(first.len() >= DURABLE_BASE_FROM);
        Many {
            dir,
            state,
            journal,
            ledger,
            big,
            journal_path,
            slots_path,
            first,
        }
    }

    #[test]
    fn a_durable_save_among_many_leases_puts_a_delta_on_a_durable_base_in_its_slot() {
        let Many {
            dir,
            state,
            journal,
            big,
            journal_path,
            slots_path,
            first,
            ..
        } = many_first();
        let started = toggled(&big, 500);
        journal.save(&state, &started, Durability::Durable).unwrap();
        // The slot took a delta on that record, as long as the change, not the whole ledger.
        let line = slot_line(&slots_path, 0);
        assert!(is_delta_line(&line), "{}", String::from_utf8_lossy(&line));
        assert!(line.len() < 2048, "{} bytes", line.len());
        assert_eq!(lines(dir.path()).last().unwrap(), &line);
        // A power loss takes the journal's unsynced bytes: the slot's delta and its base, the
        // journal's first record, read back the durable save.
        std::fs::write(&journal_path, &first).unwrap();
        assert_eq!(load(&state), started);
        // The next save, numbered past the slot, rests on what was read.
        let (journal, read) = Journal::load(&state, None, false).unwrap();
        let ended = toggled(&read.unwrap(), 500);
        journal.save(&state, &ended, Durability::Deferred).unwrap();
        assert_eq!(load(&state), ended);
    }

    #[test]
    fn a_large_durable_record_with_no_durable_base_compacts_the_journal() {
        let Many {
            dir,
            state,
            journal,
            ledger,
            big,
            journal_path,
            ..
        } = many_first();
        // A record of no lease after it: a full record, appended, the next deltas' base.
        let none = with_dir(&ledger, "a");
        journal.save(&state, &none, Durability::Deferred).unwrap();
        assert_eq!(lines(dir.path()).len(), 2);
        // A durable save of many leases: no durable base to write a delta on, so the journal
        // becomes its record alone, written durably.
        let again = with_dir(&big, "b");
        journal.save(&state, &again, Durability::Durable).unwrap();
        assert_eq!(lines(dir.path()).len(), 1);
        let compacted = std::fs::read(&journal_path).unwrap();
        // The durable save after it is a delta on it, in a slot, read back after a power loss.
        let started = toggled(&again, 500);
        journal.save(&state, &started, Durability::Durable).unwrap();
        assert!(is_delta_line(lines(dir.path()).last().unwrap()));
        std::fs::write(&journal_path, &compacted).unwrap();
        assert_eq!(load(&state), started);
        // A small durable record still goes to a slot whole (no compaction for it).
        let (dir, state, journal, ledger) = fresh();
        journal
            .save(&state, &toggled(&ledger, 1), Durability::Durable)
            .unwrap();
        journal.save(&state, &none, Durability::Deferred).unwrap();
        journal
            .save(&state, &toggled(&ledger, 2), Durability::Durable)
            .unwrap();
        assert_eq!(lines(dir.path()).len(), 3);
        let line = slot_line(&dir.path().join(SLOTS_FILE), 0);
        assert!(!is_delta_line(&line));
    }

    #[test]
    fn a_slot_delta_whose_base_is_not_the_journals_first_record_is_passed_over() {
        let Many {
            dir,
            state,
            journal,
            big,
            journal_path,
            slots_path,
            first,
            ..
        } = many_first();
        journal
            .save(&state, &toggled(&big, 500), Durability::Durable)
            .unwrap();
        let line = slot_line(&slots_path, 0);
        let body = record_body(line.strip_suffix(b"\n").unwrap()).unwrap();
        let body = line[body].to_vec();
        let saved = saved_number(&body);
        // Lies a slot's delta may tell of its base, each made to check: another place, another
        // length, another save number; and a first record that is another journal's.
        let at = format!("\"base\":[0,{},", first.len());
        let text = String::from_utf8(body.clone()).unwrap();
        assert!(text.contains(&at), "{text}");
        let lies = [
            text.replacen(&at, &format!("\"base\":[1,{},", first.len() - 1), 1),
            text.replacen(&at, &format!("\"base\":[0,{},", first.len() + 1), 1),
            text.replacen(&format!("{at}1]"), &format!("{at}7]"), 1),
        ];
        for lie in lies {
            assert_ne!(lie, text);
            let lied = frame(lie.as_bytes());
            let mut slots = std::fs::read(&slots_path).unwrap();
            slots[..SLOT_HEAD].copy_from_slice(&slot_head(saved, lied.len()));
            slots[SLOT_HEAD..SLOT_HEAD + lied.len()].copy_from_slice(&lied);
            std::fs::write(&slots_path, &slots).unwrap();
            std::fs::write(&journal_path, &first).unwrap();
            assert_eq!(load(&state), big, "{lie}");
        }
        // The slot's own delta, put back, reads again on its base.
        let mut slots = std::fs::read(&slots_path).unwrap();
        let framed = frame(&body);
        slots[..SLOT_HEAD].copy_from_slice(&slot_head(saved, framed.len()));
        slots[SLOT_HEAD..SLOT_HEAD + framed.len()].copy_from_slice(&framed);
        std::fs::write(&slots_path, &slots).unwrap();
        assert_eq!(load(&state), toggled(&big, 500));
        // Another journal at the same place, its one record numbered as the base: not the base
        // the slot names (another length), so the slot is passed over.
        let (other_dir, other_state, other_journal, _) = fresh();
        let other = with_dir(&big, "other");
        other_journal
            .save(&other_state, &other, Durability::Durable)
            .unwrap();
        let other_bytes = std::fs::read(other_dir.path().join(JOURNAL_FILE)).unwrap();
        let number = |line: &[u8]| {
            let line = line.strip_suffix(b"\n").unwrap();
            saved_number(&line[record_body(line).unwrap()])
        };
        assert_eq!((number(&other_bytes), number(&first)), (1, 1));
        assert_ne!(other_bytes.len(), first.len());
        std::fs::write(&journal_path, &other_bytes).unwrap();
        assert_eq!(load(&state), other);
        let _ = dir;
    }

    #[test]
    fn a_symlink_or_fifo_planted_at_the_sync_slots_is_never_followed() {
        let (dir, state, journal, ledger) = fresh();
        let one = with_dir(&ledger, "a");
        journal.save(&state, &one, Durability::Durable).unwrap();
        let two = with_dir(&one, "b");
        journal.save(&state, &two, Durability::Durable).unwrap();
        // The slots swapped for a link to a file of the same bytes.
        let slots_path = dir.path().join(SLOTS_FILE);
        let elsewhere = dir.path().join("elsewhere");
        std::fs::rename(&slots_path, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &slots_path).unwrap();
        let before = std::fs::read(&elsewhere).unwrap();
        let refused = Journal::load(&state, None, false).unwrap_err().to_string();
        assert!(refused.contains(SLOTS_FILE), "{refused}");
        let three = with_dir(&two, "c");
        assert!(journal.save(&state, &three, Durability::Durable).is_err());
        assert_eq!(std::fs::read(&elsewhere).unwrap(), before);
        assert!(slots_path.is_symlink());
        // A FIFO there is refused at once, not waited on.
        std::fs::remove_file(&slots_path).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &slots_path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let refused = Journal::load(&state, None, false).unwrap_err().to_string();
        assert!(refused.contains(SLOTS_FILE), "{refused}");
    }

    /// Saves, through `journal`, each ledger `next` makes from the one before (from `first`,
    /// given the save's number and its step), durably when its step says so, up to save
    /// `lost_after`; each reads back as saved. The ledgers (`first` included) and the index of
    /// the last made durable (the first save creates the journal, durably).
    fn save_each<T>(
        state: &Root,
        journal: &Journal,
        first: Ledger,
        steps: &[(bool, T)],
        lost_after: usize,
        next: impl Fn(&Ledger, usize, &T) -> Ledger,
    ) -> std::result::Result<(Vec<Ledger>, usize), TestCaseError> {
        let mut saved = vec![first];
        let mut last_durable = 0;
        let lost_after = lost_after.min(steps.len().saturating_sub(1));
        for (n, (durable, step)) in steps.iter().enumerate().take(lost_after + 1) {
            let ledger = next(&saved[saved.len() - 1], n, step);
            journal.save(state, &ledger, durability(*durable)).unwrap();
            prop_assert_eq!(&load(state), &ledger);
            saved.push(ledger);
            if *durable || n == 0 {
                last_durable = saved.len() - 1;
            }
        }
        Ok((saved, last_durable))
    }

    /// The durability a test's save asks for.
    fn durability(durable: bool) -> Durability {
        match durable {
            true => Durability::Durable,
            false => Durability::Deferred,
        }
    }

    /// A power loss, then the journal read back: one of the ledgers `saved`, the newest equal to
    /// it no older than `last_durable` (a ledger can be saved twice: a lease taken then dropped;
    /// no journal at all reads as an empty one, which no file is written for).
    fn read_back_after_power_loss(
        state: &Root,
        saved: &[Ledger],
        last_durable: usize,
    ) -> std::result::Result<(), TestCaseError> {
        faults::power_loss();
        faults::track_durability(false);
        let read = Journal::load(state, None, false).unwrap().1;
        // No journal is a ledger that recorded nothing: saving one writes no file.
        let at = saved.iter().rposition(|l| match &read {
            Some(read) => read == l,
            None => l.is_empty(),
        });
        prop_assert!(
            at.is_some_and(|at| at >= last_durable),
            "read back {:?} of {} saves, the last durable {}",
            at,
            saved.len() - 1,
            last_durable
        );
        Ok(())
    }

    /// [`check64`] as first written: a byte-wise copy into each word. The one-pass reader must
    /// agree with it on every body, or records written by earlier builds stop reading.
    fn check64_as_first_written(body: &[u8]) -> u64 {
        const MUL: u64 = 0x9e37_79b9_7f4a_7c15;
        let step = |state: u64, word: u64| (state ^ word).rotate_left(29).wrapping_mul(MUL);
        let mut state = (body.len() as u64).wrapping_mul(MUL) ^ 0x243f_6a88_85a3_08d3;
        let mut words = body.chunks_exact(8);
        for word in &mut words {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(word);
            state = step(state, u64::from_le_bytes(bytes));
        }
        let mut last = [0u8; 8];
        last[..words.remainder().len()].copy_from_slice(words.remainder());
        state = step(state, u64::from_le_bytes(last));
        state ^= state >> 32;
        state = state.wrapping_mul(MUL);
        state ^ (state >> 29)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// For any body, and any bytes forced to a newline (or to the bytes around one in a
        /// word's arithmetic: 0x09, 0x0b, 0x8a, 0x00), the line check is the check when the
        /// body holds no newline and none otherwise, and the hex a record states is the check's.
        #[test]
        fn a_line_check_is_the_check_of_a_body_without_newlines(
            mut body in proptest::collection::vec(any::<u8>(), 0..200),
            forced in proptest::collection::vec((any::<usize>(), prop::sample::select(vec![b'\n', 0x09, 0x0b, 0x8a, 0x00])), 0..4),
        ) {
            for (at, byte) in forced {
                if !body.is_empty() {
                    let at = at % body.len();
                    body[at] = byte;
                }
            }
            let check = check64(&body);
            prop_assert_eq!(check, check64_as_first_written(&body));
            let expected = (!body.contains(&b'\n')).then_some(check);
            prop_assert_eq!(line_check64(&body), expected);
            prop_assert_eq!(check_hex(check).to_vec(), format!("{check:016x}").into_bytes());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// For any run of saves, durable or not, of records small or large enough to outgrow a
        /// slot, and a power loss after any of them (each journal and slot file back to what was
        /// synced, with a torn half of what was written since), the ledger read back is one that
        /// was saved, never older than the last durable save.
        #[test]
        fn a_power_loss_never_takes_a_durable_save(
            saves in proptest::collection::vec((any::<bool>(), 0usize..3), 1..10),
            lost_after in 0usize..10,
        ) {
            faults::track_durability(true);
            let (_dir, state, journal, ledger) = fresh();
            let (saved, last_durable) =
                save_each(&state, &journal, ledger, &saves, lost_after, |last, n, grow| {
                    // A directory name of up to about 6 KB: records that outgrow a 4 KiB slot.
                    with_dir(last, &format!("d{n}{}", "x".repeat(grow * 3000)))
                })?;
            read_back_after_power_loss(&state, &saved, last_durable)?;
        }

        #[test]
        fn save_numbers_end_the_json_and_read_back(numbers in proptest::collection::vec(any::<u64>(), 1..4)) {
            let mut line = b"xx{\"a\":1}".to_vec();
            put_saved(&mut line, 2, numbers[0]);
            prop_assert_eq!(saved_number(&line[2..]), numbers[0]);
            for n in &numbers[1..] {
                replace_saved(&mut line, 2, *n);
                prop_assert_eq!(saved_number(&line[2..]), *n);
                let value: serde_json::Value = serde_json::from_slice(&line[2..]).unwrap();
                prop_assert_eq!(value["saved"].as_u64(), Some(*n));
            }
            let head = slot_head(numbers[0], numbers.len());
            prop_assert_eq!(parse_slot_head(&head), Some((numbers[0], numbers.len())));
        }
    }

    /// A lease numbered `n`, with its token.
    fn lease(n: u64) -> (String, crate::ledger::Recorded) {
        let record = crate::ledger::LeaseRecord {
            provider: "codex".into(),
            holder: crate::holder::Holder::Process {
                pid: 1000 + u32::try_from(n).unwrap(),
                start_time: 7,
                boot_id: "boot".into(),
                pid_ns: 1,
                time_ns: 2,
            },
            workspace: "/w".into(),
            acquired_at: 1,
            paths: vec![RelPath::new("AGENTS.md").unwrap()].into(),
            namespace: "agentworks".into(),
            block_texts: Default::default(),
            seq: n + 1,
        };
        (
            format!("pf1-0000000000000000-{n:032x}"),
            crate::ledger::Recorded::new(record),
        )
    }

    /// `ledger` with lease `n` added, or taken out when it has it.
    fn toggled(ledger: &Ledger, n: u64) -> Ledger {
        let mut next = ledger.clone();
        let (token, lease) = lease(n);
        if next.leases.remove(&token).is_none() {
            next.leases.insert(token, lease);
        }
        next
    }

    /// The record lines of the journal in `dir` (none without one).
    fn lines(dir: &Path) -> Vec<Vec<u8>> {
        let bytes = std::fs::read(dir.join(JOURNAL_FILE)).unwrap_or_default();
        bytes
            .split_inclusive(|b| *b == b'\n')
            .map(<[u8]>::to_vec)
            .collect()
    }

    /// Whether a record line is a delta record's.
    fn is_delta_line(line: &[u8]) -> bool {
        record_body(line.strip_suffix(b"\n").unwrap_or(line))
            .is_some_and(|body| is_delta(&line[body]))
    }

    #[test]
    fn a_save_among_many_leases_writes_only_what_changed() {
        let (dir, state, journal, mut ledger) = fresh();
        for n in 0..256 {
            let (token, lease) = lease(n);
            ledger.leases.insert(token, lease);
        }
        journal.save(&state, &ledger, Durability::Durable).unwrap();
        let full = lines(dir.path()).last().unwrap().len();
        // Read back as a later command does: one lease more, then one less.
        let (journal, read) = Journal::load(&state, None, false).unwrap();
        let one_more = toggled(&read.unwrap(), 999);
        journal
            .save(&state, &one_more, Durability::Deferred)
            .unwrap();
        let one_less = toggled(&one_more, 5);
        journal
            .save(&state, &one_less, Durability::Deferred)
            .unwrap();
        let written = lines(dir.path());
        assert!(written.len() >= 3, "{} lines", written.len());
        let (added, dropped) = (&written[written.len() - 2], &written[written.len() - 1]);
        assert!(is_delta_line(added) && is_delta_line(dropped));
        assert!(
            added.len() * 50 < full && dropped.len() * 50 < full,
            "records of {} and {} bytes beside a full one of {full}",
            added.len(),
            dropped.len()
        );
        assert_eq!(load(&state), one_less);
        // A build that knows only full records refuses a delta rather than take it whole.
        let body = record_body(&dropped[..dropped.len() - 1]).unwrap();
        let refused = Ledger::parse(&dropped[body], Path::new("j"), None).unwrap_err();
        assert!(refused.to_string().contains("version 2"), "{refused}");
    }

    #[test]
    fn a_delta_whose_base_is_damaged_is_passed_over_for_the_last_whole_state() {
        let (dir, state, journal, mut ledger) = fresh();
        let mut saved = Vec::new();
        // A full record with leases, deltas on it, a second full one (more changes than a
        // delta carries), deltas on that.
        for n in 0..3 {
            ledger = toggled(&ledger, n);
        }
        journal.save(&state, &ledger, Durability::Durable).unwrap();
        for step in 0..(DELTA_CHANGES as u64 + 4) {
            ledger = toggled(&ledger, 100 + step);
            journal.save(&state, &ledger, Durability::Deferred).unwrap();
            saved.push(ledger.clone());
        }
        let written = lines(dir.path());
        let fulls: Vec<usize> = (0..written.len())
            .filter(|i| !is_delta_line(&written[*i]))
            .collect();
        assert!(fulls.len() >= 2, "{fulls:?}");
        assert!(is_delta_line(written.last().unwrap()));
        // The newest full record loses a byte: every delta on it goes with it, and the newest
        // record whose base is whole is read, the state saved just before that full record.
        let second = fulls[fulls.len() - 1];
        let at: usize = written[..second].iter().map(Vec::len).sum::<usize>() + 60;
        let path = dir.path().join(JOURNAL_FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[at] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        let read = load(&state);
        // `second` counts the first full record, so saved[second - 2] is the save before it.
        assert_eq!(read, saved[second - 2]);
        // The next save cuts what followed and writes a full record: a whole state again.
        let (journal, read) = Journal::load(&state, None, false).unwrap();
        let next = toggled(&read.unwrap(), 7);
        journal.save(&state, &next, Durability::Deferred).unwrap();
        assert_eq!(load(&state), next);
    }

    #[test]
    fn a_damaged_base_is_read_once_however_many_deltas_name_it() {
        let (dir, state, journal, mut ledger) = fresh();
        for n in 0..64 {
            ledger = toggled(&ledger, n);
        }
        journal.save(&state, &ledger, Durability::Durable).unwrap();
        let before_base = ledger.clone();
        // More changes than a delta carries: a full record, the base of what follows.
        for n in 100..120 {
            ledger = toggled(&ledger, n);
        }
        journal.save(&state, &ledger, Durability::Deferred).unwrap();
        let written = lines(dir.path());
        assert!(!is_delta_line(&written[written.len() - 1]));
        let base_at: usize = written[..written.len() - 1].iter().map(Vec::len).sum();
        let base_len = written[written.len() - 1].len();
        for _ in 0..200 {
            ledger = toggled(&ledger, 999);
            journal.save(&state, &ledger, Durability::Deferred).unwrap();
        }
        let path = dir.path().join(JOURNAL_FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[base_at + 60] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        let before = fsio::bytes_read_on_this_thread();
        assert_eq!(load(&state), before_base);
        let read = fsio::bytes_read_on_this_thread() - before;
        // The tail read longer and longer back to a whole record (at most about the file twice
        // over), and the base once: not once for each of the 200 deltas on it.
        assert!(
            read < 3 * bytes.len() as u64 + 2 * base_len as u64,
            "read {read} bytes of a {}-byte journal to pass over 200 deltas on one {base_len}-byte base",
            bytes.len()
        );
    }

    #[test]
    fn a_delta_naming_a_base_it_cannot_have_is_no_record() {
        let (dir, state, journal, mut ledger) = fresh();
        for n in 0..4 {
            ledger = toggled(&ledger, n);
            journal.save(&state, &ledger, Durability::Deferred).unwrap();
        }
        let before = ledger.clone();
        ledger = toggled(&ledger, 50);
        journal.save(&state, &ledger, Durability::Deferred).unwrap();
        let written = lines(dir.path());
        let newest = written.last().unwrap();
        let body = record_body(&newest[..newest.len() - 1]).unwrap();
        let parts = split_delta(&newest[body.clone()]).unwrap();
        let delta_at: u64 = written[..written.len() - 1]
            .iter()
            .map(|l| l.len() as u64)
            .sum();
        let previous_at = delta_at - written[written.len() - 2].len() as u64;
        let base = parts.base;
        // Each lie, its check made to hold: the newest record is then the one before.
        for (at, len, saved) in [
            (base.at + 1, base.len, base.saved),
            (base.at, base.len + 1, base.saved),
            (base.at, base.len, base.saved + 1),
            (
                previous_at,
                written[written.len() - 2].len() as u64,
                base.saved + 4,
            ),
            (delta_at, newest.len() as u64, base.saved + 5),
            (u64::MAX - 2, 4, base.saved),
        ] {
            let json = String::from_utf8(newest[body.clone()].to_vec()).unwrap();
            let lie = json.replacen(
                &format!("[{},{},{}]", base.at, base.len, base.saved),
                &format!("[{at},{len},{saved}]"),
                1,
            );
            let mut bytes: Vec<u8> = written[..written.len() - 1].concat();
            bytes.extend(frame(lie.as_bytes()));
            std::fs::write(dir.path().join(JOURNAL_FILE), &bytes).unwrap();
            assert_eq!(load(&state), before, "base [{at},{len},{saved}]");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// For any run of saves that add and drop leases (durable or not) and a power loss after
        /// any of them, the ledger read back is one that was saved, never older than the last
        /// durable save; and for any byte then damaged anywhere in the journal, what is read
        /// is still a ledger that was saved, or a refusal: never a mix of two.
        #[test]
        fn deltas_read_back_as_saved_through_power_loss_and_damage(
            saves in proptest::collection::vec((any::<bool>(), 0u64..24), 1..40),
            lost_after in 0usize..40,
            damage in any::<prop::sample::Index>(),
        ) {
            faults::track_durability(true);
            let (dir, state, journal, ledger) = fresh();
            let (saved, last_durable) =
                save_each(&state, &journal, ledger, &saves, lost_after, |last, _, lease| {
                    toggled(last, *lease)
                })?;
            read_back_after_power_loss(&state, &saved, last_durable)?;
            // Then a byte flipped anywhere in the journal.
            let path = dir.path().join(JOURNAL_FILE);
            let mut bytes = std::fs::read(&path).unwrap();
            let at = damage.index(bytes.len());
            bytes[at] ^= 0x20;
            std::fs::write(&path, &bytes).unwrap();
            if let Ok((_, read)) = Journal::load(&state, None, false) {
                prop_assert!(
                    saved.iter().any(|l| Some(l) == read.as_ref()) || read.is_none(),
                    "byte {} damaged: read back a ledger never saved",
                    at
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// For any run of commands, each reading the journal afresh, changing the leases it read
        /// (several added and dropped, some taken again) and saving (durable or not), every
        /// command reads what the one before saved and writes a delta of its changes against
        /// the full record it read; after a power loss, what is read back is a ledger that was
        /// saved, never older than the last durable save.
        #[test]
        fn commands_that_each_read_the_journal_save_what_they_changed(
            first in proptest::collection::btree_set(0u64..40, 0..24),
            commands in proptest::collection::vec(
                (any::<bool>(), proptest::collection::vec(0u64..40, 1..4)),
                1..24,
            ),
            lost_after in 0usize..24,
        ) {
            let tokens = |ledger: &Ledger| -> BTreeSet<String> {
                ledger.leases.keys().map(str::to_string).collect()
            };
            faults::track_durability(true);
            let (dir, state, journal, mut ledger) = fresh();
            for n in first {
                let (token, lease) = lease(n);
                ledger.leases.insert(token, lease);
            }
            journal.save(&state, &ledger, Durability::Durable).unwrap();
            // The leases of the full record the next delta is written against, when the journal
            // ends with one a command reads as its base, and those of them dropped since.
            let mut base = Some(tokens(&ledger)).filter(|_| !lines(dir.path()).is_empty());
            let mut dropped: BTreeSet<String> = BTreeSet::new();
            let mut saved = vec![ledger];
            let mut last_durable = 0;
            let lost_after = lost_after.min(commands.len() - 1);
            for (durable, toggles) in commands.iter().take(lost_after + 1) {
                let identity = crate::ledger::FolderIdentity::made_up();
                let folder = FolderRef {
                    path: Path::new("/w"),
                    identity: &identity,
                };
                let (journal, read) = Journal::load(&state, Some(folder), false).unwrap();
                let mut ledger = read.unwrap();
                prop_assert_eq!(&ledger, saved.last().unwrap());
                for n in toggles {
                    ledger = toggled(&ledger, *n);
                    if let Some(base) = &base {
                        dropped.extend(base.difference(&tokens(&ledger)).cloned());
                    }
                }
                let lines_before = lines(dir.path()).len();
                let bytes_before = std::fs::read(dir.path().join(JOURNAL_FILE)).unwrap_or_default();
                journal.save(&state, &ledger, durability(*durable)).unwrap();
                let after = lines(dir.path());
                // A ledger the newest record holds already is not written again.
                let written =
                    std::fs::read(dir.path().join(JOURNAL_FILE)).unwrap_or_default() != bytes_before;
                let appended = after.len() == lines_before + 1 && lines_before > 0;
                let delta = appended && is_delta_line(after.last().unwrap());
                // What a delta against the base lists: every lease of the base dropped since
                // (taken again or not), and every lease it does not hold as it was.
                if let (Some(base), false, true) = (&base, *durable, appended) {
                    let now = tokens(&ledger);
                    let added = now.iter().filter(|t| !base.contains(*t) || dropped.contains(*t));
                    let changes = dropped.len() + added.count();
                    let expected = changes <= DELTA_CHANGES && !now.is_empty();
                    prop_assert_eq!(delta, expected, "{} changes", changes);
                }
                if written && !delta {
                    // A full record (appended, or the journal compacted to it), or a durable
                    // save to a slot, which the next command reads without a base.
                    base = (!*durable).then(|| tokens(&ledger));
                    dropped.clear();
                }
                if *durable {
                    last_durable = saved.len();
                }
                saved.push(ledger);
            }
            read_back_after_power_loss(&state, &saved, last_durable)?;
        }
    }

    /// A body of about `size` bytes.
    fn sized_body(n: usize, size: usize) -> Vec<u8> {
        format!("{{\"n\":{n},\"text\":\"{}\"}}", "y".repeat(size)).into_bytes()
    }

    #[test]
    fn a_line_in_another_framing_is_no_record() {
        // A line framed as unreleased builds once did (a SHA-256 and no trailer) is not read.
        let mut bytes = b"{\"sha256\":\"".to_vec();
        bytes.extend_from_slice(&[b'0'; 64]);
        bytes.extend_from_slice(b"\",\"ledger\":");
        bytes.extend_from_slice(&body(1));
        bytes.extend_from_slice(b"}\n");
        assert_eq!(scan(&bytes).last, None);
        bytes.extend(frame(&body(2)));
        let found = scan(&bytes);
        assert_eq!(found.last, Some(&body(2)[..]));
        assert_eq!(found.good_len, bytes.len());
        // A line of ours is valid JSON, with its length in its trailer.
        let line = frame(&body(3));
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["line"], line.len());
        assert_eq!(value["check"], format!("{:016x}", check64(&body(3))));
    }

    #[test]
    fn a_trailer_that_lies_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        let good = frame(&sized_body(1, TAIL as usize * 3));
        // A line whose stated length points into the middle of the record before it.
        let liar = b"{\"check\":\"0000000000000000\",\"ledger\":{},\"line\":100}\n";
        for tail in [&liar[..], b"garbage,\"line\":99999999}\n", b"x\n"] {
            let mut bytes = good.clone();
            bytes.extend_from_slice(tail);
            std::fs::write(&path, &bytes).unwrap();
            let (extent, last) = read_newest(&path, None).unwrap().unwrap();
            assert_eq!(
                last.as_ref().map(Newest::body),
                Some(&sized_body(1, TAIL as usize * 3)[..])
            );
            assert_eq!(extent.good_len, good.len() as u64);
        }
    }

    proptest! {
        /// For any sequence of records and any cut or garbage after them, the scan returns the
        /// last record written whole, and where the good records end.
        #[test]
        fn a_torn_tail_gives_the_last_whole_record(
            count in 0usize..6,
            cut in any::<prop::sample::Index>(),
            garbage in prop::collection::vec(any::<u8>(), 0..80),
        ) {
            let mut bytes = Vec::new();
            let mut ends = vec![0usize];
            for n in 0..count {
                bytes.extend(frame(&body(n)));
                ends.push(bytes.len());
            }
            let cut = cut.index(bytes.len() + 1);
            let mut torn = bytes[..cut].to_vec();
            torn.extend_from_slice(&garbage);
            let found = scan(&torn);
            // The records whose bytes are all there survive (garbage that happens to finish a
            // cut record with its newline finishes it); garbage never passes as a record.
            let whole = ends
                .iter()
                .rposition(|end| torn.get(..*end) == Some(&bytes[..*end]))
                .unwrap_or(0);
            prop_assert_eq!(found.good_len, ends[whole]);
            let expected = whole.checked_sub(1).map(body);
            prop_assert_eq!(found.last.map(<[u8]>::to_vec), expected);
        }

        /// Reading a journal file from its end finds what scanning all of it finds, for records
        /// of any size against the tail read first, and lines that are no record, then any cut
        /// or garbage.
        #[test]
        fn reading_from_the_end_finds_what_a_whole_scan_finds(
            records in prop::collection::vec((0usize..3 * TAIL as usize, any::<bool>()), 0..5),
            cut in any::<prop::sample::Index>(),
            garbage in prop::collection::vec(
                prop::sample::select(vec![b'\n', b'}', b',', b'"', b':', b'1', b'0', b'x']),
                0..40,
            ),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(JOURNAL_FILE);
            let mut bytes = Vec::new();
            for (n, (size, ours)) in records.iter().enumerate() {
                let body = sized_body(n, *size);
                if *ours {
                    bytes.extend(frame(&body));
                } else {
                    // Framed otherwise: no record.
                    bytes.extend_from_slice(&body);
                    bytes.push(b'\n');
                }
            }
            let cut = cut.index(bytes.len() + 1);
            bytes.truncate(cut);
            bytes.extend_from_slice(&garbage);
            std::fs::write(&path, &bytes).unwrap();
            let whole = scan(&bytes);
            match read_newest(&path, None) {
                Ok(Some((extent, newest))) => {
                    prop_assert_eq!(newest.as_ref().map(Newest::body), whole.last);
                    prop_assert_eq!(extent.good_len, whole.good_len as u64);
                    prop_assert_eq!(extent.len, bytes.len() as u64);
                }
                Ok(None) => prop_assert!(false, "the file exists"),
                Err(_) => prop_assert!(whole.last.is_none() && !bytes.is_empty()),
            }
        }
    }
}
