//! Reading a ledger's leases, and its entries' holder tokens, without serde's per-field
//! machinery: the parts of a ledger whose size grows with the sessions a workspace holds, read at
//! every command.
//!
//! [`split_leases`] finds the `leases` object of a ledger's JSON with a value scanner (strings
//! skipped to their closing quote, objects and arrays by depth), so serde reads the rest of the
//! ledger with `{}` in its place. [`read_leases`] then reads each lease of the exact shape this
//! build writes (the fields in their declared order, strings without escapes, numbers as plain
//! digits) field by field; a provider, namespace, holder, paths or texts equal byte for byte to
//! the previous lease's (one process often holds every lease, sessions share their paths) are
//! shared instead of read again, a lease with the previous one's provider, holder, paths and
//! namespace points to the same [`LeaseShape`], every lease keeps its range of one copy of the
//! leases as its JSON, and its session texts, checked, as their range of it ([`BlockTexts`]).
//! Leases whose tokens are plain and in order (as this build writes them) are kept as read
//! ([`ReadLeases`]: each token a range of that copy); any others are read into a map, which sorts
//! them and keeps the last of a token given twice, as serde's reading does (entries name no
//! holders: the leases state them). Anything else, a lease of an earlier build, a field of a later one, an escaped string, is read
//! by serde from the same bytes, so what is accepted and what it reads as is serde's answer
//! either way: the fast paths only ever accept a subset of what serde accepts and read it the
//! same (`fast_and_serde_read_alike`, `entries_read_as_serde_reads_them` and
//! `texts_out_of_order_twice_or_escaped_read_as_serde_reads_them` check both over generated
//! ledgers and their corruptions). A structure the scanner cannot follow makes these functions
//! answer `None`, and the caller lets serde read that part (and report the error).

use std::ops::Range;
use std::sync::Arc;

use crate::holder::Holder;
use crate::plan::RelPath;

use super::leases::{Leases, ReadLeases};
use super::{BlockTexts, LeaseJson, LeaseRecord, LeaseShape, Recorded};

/// The bytes that open or close a string, an object or an array.
static STRUCTURAL: [bool; 256] = {
    let mut table = [false; 256];
    table[b'"' as usize] = true;
    table[b'{' as usize] = true;
    table[b'}' as usize] = true;
    table[b'[' as usize] = true;
    table[b']' as usize] = true;
    table
};

/// Eight bytes at a time: the word tests "some byte is zero" (`(x - 0x01…) & !x & 0x80…` is
/// non-zero exactly then, its lowest set bit in the first zero byte: a borrow only runs upward)
/// and "some byte is below `n`" (the same with `n` for 1, for `n` up to 128).
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` below `n` (exact up to the first such byte).
fn below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH
}

/// The high bit of each byte of `x` equal to `byte` (exact up to the first such byte).
fn equal(x: u64, byte: u8) -> u64 {
    below(x ^ (ONES * u64::from(byte)), 1)
}

fn word(eight: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(eight);
    u64::from_le_bytes(bytes)
}

/// Whether `bytes` hold a double quote, a backslash or a control character (below a space):
/// the bytes a JSON string must escape. Eight bytes at a time; a body of eight bytes or more
/// ends with the eight bytes before its end, overlapping words already seen: no byte loop.
pub(super) fn has_special(bytes: &[u8]) -> bool {
    let special = |x: u64| below(x, 0x20) | equal(x, b'\\') | equal(x, b'"');
    let Some(last) = bytes.last_chunk::<8>() else {
        return bytes.iter().any(|b| *b < 0x20 || *b == b'\\' || *b == b'"');
    };
    let (words, _) = bytes.as_chunks::<8>();
    let mut found = special(u64::from_le_bytes(*last));
    for eight in words {
        found |= special(u64::from_le_bytes(*eight));
    }
    found != 0
}

/// Where the first double quote or backslash of `bytes` is: the end of a string, or an escape.
/// Eight bytes at a time, like [`has_special`] (no processor features to detect first).
fn quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for eight in &mut words {
        let x = word(eight);
        let found = equal(x, b'"') | equal(x, b'\\');
        if found != 0 {
            // Exact in the lowest match (the word is little-endian: byte i is bits 8i..8i+8).
            return Some(at + found.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let tail = words.remainder();
    tail.iter()
        .position(|b| *b == b'"' || *b == b'\\')
        .map(|i| at + i)
}

/// Where the first byte of `bytes` that a plain string cannot hold is: a double quote (a plain
/// string's end), a backslash or a control character. Eight bytes at a time, like
/// [`has_special`]: each test's lowest set bit is exact, so the lowest of the three is the first.
fn plain_end(bytes: &[u8]) -> Option<usize> {
    let stop = |x: u64| equal(x, b'"') | equal(x, b'\\') | below(x, 0x20);
    let (words, tail) = bytes.as_chunks::<8>();
    for (n, eight) in words.iter().enumerate() {
        let found = stop(u64::from_le_bytes(*eight));
        if found != 0 {
            return Some(n * 8 + found.trailing_zeros() as usize / 8);
        }
    }
    tail.iter()
        .position(|b| *b == b'"' || *b == b'\\' || *b < 0x20)
        .map(|i| words.len() * 8 + i)
}

/// A cursor over JSON bytes.
struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn new(bytes: &'a [u8]) -> Scan<'a> {
        Scan { bytes, at: 0 }
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// Takes `byte` after optional white space.
    fn take(&mut self, byte: u8) -> Option<()> {
        self.skip_space();
        (self.bytes.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    /// Takes `literal` exactly (no white space before it).
    fn literal(&mut self, literal: &[u8]) -> Option<()> {
        let end = self.at.checked_add(literal.len())?;
        (self.bytes.get(self.at..end) == Some(literal)).then(|| self.at = end)
    }

    /// Skips a string (at its opening quote) to past its closing quote; its range, quotes
    /// included.
    fn string(&mut self) -> Option<Range<usize>> {
        self.skip_space();
        let start = self.at;
        (self.bytes.get(start) == Some(&b'"')).then_some(())?;
        let mut at = start + 1;
        loop {
            let rest = self.bytes.get(at..)?;
            let next = quote_or_backslash(rest)?;
            at += next;
            if self.bytes[at] == b'"' {
                self.at = at + 1;
                return Some(start..self.at);
            }
            // A backslash escapes the byte after it (`\uXXXX` has no quote in its digits).
            at += 2;
        }
    }

    /// Skips one value, white space before it included; its range.
    fn value(&mut self) -> Option<Range<usize>> {
        self.skip_space();
        let start = self.at;
        match self.bytes.get(start)? {
            b'"' => self.string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    let rest = self.bytes.get(self.at..)?;
                    self.at += rest.iter().position(|b| STRUCTURAL[usize::from(*b)])?;
                    match self.bytes[self.at] {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        _ => {
                            depth = depth.checked_sub(1)?;
                            if depth == 0 {
                                self.at += 1;
                                return Some(start..self.at);
                            }
                        }
                    }
                    self.at += 1;
                }
            }
            _ => {
                let len = self.bytes[start..]
                    .iter()
                    .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                    .unwrap_or(self.bytes.len() - start);
                (len > 0).then_some(())?;
                self.at = start + len;
                Some(start..self.at)
            }
        }
    }

    /// A string without escapes or control characters (what serde reads as the bytes between
    /// the quotes); `None` for any other string.
    fn plain_str(&mut self) -> Option<&'a str> {
        let range = self.plain_string()?;
        std::str::from_utf8(self.bytes.get(range.start + 1..range.end - 1)?).ok()
    }

    /// A string without escapes or control characters at the cursor, skipped in one pass; its
    /// range, quotes included. `None` for any other string, the cursor then at its start.
    fn plain_string(&mut self) -> Option<Range<usize>> {
        self.skip_space();
        let start = self.at;
        (self.bytes.get(start) == Some(&b'"')).then_some(())?;
        let rest = self.bytes.get(start + 1..)?;
        let len = plain_end(rest)?;
        (rest.get(len) == Some(&b'"')).then_some(())?;
        self.at = start + len + 2;
        Some(start..self.at)
    }

    /// An unsigned integer written as plain digits, no leading zero, that fits in a `u64`.
    fn plain_u64(&mut self) -> Option<u64> {
        let rest = self.bytes.get(self.at..)?;
        // Up to 19 digits in one pass: below 10^19, which a u64 holds, so no step can overflow.
        let mut value = 0u64;
        let mut digits = 0;
        for byte in rest.iter().take(19) {
            let digit = byte.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            value = value * 10 + u64::from(digit);
            digits += 1;
        }
        if digits == 0 || (digits > 1 && rest[0] == b'0') {
            return None;
        }
        if rest.get(digits).is_some_and(u8::is_ascii_digit) {
            // Twenty digits or more: checked.
            let more = rest[digits..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            value = rest[digits..digits + more]
                .iter()
                .try_fold(value, |value, digit| {
                    value.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
                })?;
            digits += more;
        }
        self.at += digits;
        Some(value)
    }

    /// `"name":` exactly, as this build writes a field.
    fn field(&mut self, name: &[u8]) -> Option<()> {
        self.literal(b"\"")?;
        self.literal(name)?;
        self.literal(b"\":")
    }

    /// From the start of an object, to the value of its top-level field whose key is written as
    /// `key` (quotes included), white space before the value skipped; `None` when the object
    /// has no such key or cannot be followed.
    fn seek_field(&mut self, key: &[u8]) -> Option<()> {
        self.take(b'{')?;
        loop {
            let name = self.string()?;
            self.take(b':')?;
            if self.bytes.get(name) == Some(key) {
                self.skip_space();
                return Some(());
            }
            self.value()?;
            self.take(b',')?;
        }
    }

    /// Whether `"name":` comes next (consumed when it does).
    fn next_field(&mut self, name: &[u8]) -> bool {
        let at = self.at;
        if self.literal(b",").and_then(|()| self.field(name)).is_some() {
            return true;
        }
        self.at = at;
        false
    }
}

/// The ledger's JSON with its top-level `leases` value replaced by `{}`, and the leases that value
/// lists, in its order; `None` when `body` is not an object the scanner can follow, names no
/// leases, or a lease does not read (serde then reads the whole ledger and says why). The scan
/// stops at the end of the leases: serde reads what follows, a second `leases` included (an error).
pub(super) fn split_leases(body: &[u8]) -> Option<(Vec<u8>, Leases)> {
    let mut scan = Scan::new(body);
    scan.seek_field(b"\"leases\"")?;
    let start = scan.at;
    let leases = read_leases(&mut scan, None)?;
    let mut rest = Vec::with_capacity(body.len() - (scan.at - start) + 2);
    rest.extend_from_slice(&body[..start]);
    rest.extend_from_slice(b"{}");
    rest.extend_from_slice(&body[scan.at..]);
    Some((rest, leases))
}

/// The leases the ledger JSON at `body` of `buffer` lists, each lease's JSON a range of
/// `buffer` itself (no copy made); `None` as for [`split_leases`].
pub(super) fn leases_in(buffer: &std::sync::Arc<[u8]>, body: Range<usize>) -> Option<Leases> {
    let mut scan = Scan::new(buffer.get(body.clone())?);
    scan.seek_field(b"\"leases\"")?;
    read_leases(&mut scan, Some((buffer, body.start)))
}

/// What the leases read so far had, by the bytes it was read from: one process often holds
/// every lease, and sessions of one workspace share their paths and texts.
struct Seen<'a> {
    provider: Option<(&'a [u8], Arc<str>)>,
    workspace: Option<(&'a [u8], Arc<str>)>,
    namespace: Option<(&'a [u8], Arc<str>)>,
    holder: Option<(&'a [u8], Holder)>,
    paths: Option<(&'a [u8], Arc<[RelPath]>)>,
    texts: TextsSeen<'a>,
    /// The empty texts of the leases that put no session text in a block, one for all.
    no_texts: Option<BlockTexts>,
    /// The last lease read field by field, as the shape a following lease may repeat.
    shape: Option<Shape<'a>>,
}

impl Seen<'_> {
    /// Nothing seen yet, of leases read into `buffer`, where the bytes scanned are at `+ add -
    /// sub`.
    fn reading(buffer: &Arc<[u8]>, add: usize, sub: usize) -> Self {
        Seen {
            provider: None,
            workspace: None,
            namespace: None,
            holder: None,
            paths: None,
            texts: TextsSeen {
                last: None,
                paths: Vec::new(),
                within: (buffer.clone(), add, sub),
            },
            no_texts: None,
            shape: None,
        }
    }
}

/// The session texts read so far: the last, by the bytes it was read from (sessions of one
/// workspace often share their text), the paths already checked, and the buffer the leases are
/// read into with the offset of the bytes scanned in it (`+ add - sub`): texts are kept as their
/// range of it, not copied.
struct TextsSeen<'a> {
    last: Option<(&'a [u8], BlockTexts)>,
    paths: Vec<&'a [u8]>,
    within: (Arc<[u8]>, usize, usize),
}

/// A lease read: the shape it shares with others, its own numbers and texts.
struct ReadLease {
    shape: Arc<LeaseShape>,
    acquired_at: u64,
    seq: u64,
    block_texts: BlockTexts,
}

impl ReadLease {
    /// `record`, in a shape of its own.
    fn of(record: LeaseRecord) -> ReadLease {
        ReadLease {
            shape: Arc::new(LeaseShape::of(&record)),
            acquired_at: record.acquired_at,
            seq: record.seq,
            block_texts: record.block_texts,
        }
    }

    /// It, recorded with `json` as its JSON.
    fn recorded(self, json: LeaseJson) -> Recorded {
        Recorded::read(
            &self.shape,
            self.acquired_at,
            self.seq,
            self.block_texts,
            json,
        )
    }

    #[cfg(test)]
    fn record(&self) -> LeaseRecord {
        Recorded::read(
            &self.shape,
            self.acquired_at,
            self.seq,
            self.block_texts.clone(),
            LeaseJson::new(&Arc::from(&b""[..]), 0..0, 0),
        )
        .record()
    }
}

/// A lease read field by field, cut around what differs most between the leases of one
/// workspace, its two numbers and its session texts: its bytes up to its `acquired_at` value
/// (`{"provider":…,"acquired_at":`), from after that value up to its texts (`,"paths":…,
/// "block_texts":`), or when it has none up to its `seq` value or its end, then from after its
/// texts likewise; and what it read as. The leases of one workspace often differ in those parts
/// alone (one holder, one provider, the same paths), and a lease whose bytes match the others
/// reads as this one with its own numbers and texts: the field by field reading of bytes equal
/// to these would take the same steps and read the same values.
struct Shape<'a> {
    head: &'a [u8],
    middle: &'a [u8],
    /// With texts: the bytes after them (else none: `middle` runs to the `seq` value or the end).
    tail: Option<&'a [u8]>,
    /// Whether the last part ends at the `seq` value (else at the lease's closing brace).
    seq: bool,
    /// What the lease read had in common with others, shared by those that repeat it.
    shape: Arc<LeaseShape>,
    /// Its texts, those of a lease that repeats it without texts of its own (none).
    block_texts: BlockTexts,
}

/// The leases of the `leases` object at the cursor, which ends past it.
fn read_leases(
    scan: &mut Scan<'_>,
    within: Option<(&std::sync::Arc<[u8]>, usize)>,
) -> Option<Leases> {
    let bytes = scan.bytes;
    scan.skip_space();
    // The buffer every lease's JSON is a range of: `within`, which holds the bytes scanned from
    // the offset it gives, or one copy of the leases (and what follows them).
    let base = scan.at;
    let (shared, add, sub): (std::sync::Arc<[u8]>, usize, usize) = match within {
        Some((buffer, offset)) => (buffer.clone(), offset, 0),
        None => (bytes.get(base..)?.into(), 0, base),
    };
    scan.take(b'{')?;
    // Each lease with its token's range of `shared`, while every token is plain; with the
    // first that is not, every lease so far is given its token, and the rest follow.
    let mut in_place: Vec<(Range<usize>, Recorded)> = Vec::new();
    let mut owned: Option<Vec<(String, Recorded)>> = None;
    let mut seen = Seen::reading(&shared, add, sub);
    if scan.take(b'}').is_some() {
        return Some(Leases::new());
    }
    loop {
        // Most keys are plain, skipped in one pass; any other is skipped as a string.
        let (key, plain_key) = match scan.plain_string() {
            Some(key) => (key, true),
            None => (scan.string()?, false),
        };
        let inner = key.start + 1..key.end - 1;
        if !plain_key && owned.is_none() {
            let taken = std::mem::take(&mut in_place)
                .into_iter()
                .map(|(range, lease)| {
                    let token = shared.get(range).and_then(|t| std::str::from_utf8(t).ok());
                    token.map(|token| (token.to_string(), lease))
                });
            owned = Some(taken.collect::<Option<Vec<_>>>()?);
        }
        let token = match (&owned, plain_key) {
            (None, _) => None,
            (Some(_), true) => Some(std::str::from_utf8(&bytes[inner.clone()]).ok()?.to_string()),
            (Some(_), false) => Some(serde_json::from_slice::<String>(&bytes[key.clone()]).ok()?),
        };
        scan.take(b':')?;
        scan.skip_space();
        let start = scan.at;
        // `"<token>":` right before the value, as the writer writes it: kept with the value.
        let keyed = plain_key && start == key.end + 1;
        let lease = match fast_lease(scan, &mut seen) {
            Some(lease) => lease,
            None => {
                scan.at = start;
                let range = scan.value()?;
                ReadLease::of(serde_json::from_slice::<LeaseRecord>(&bytes[range]).ok()?)
            }
        };
        let from = if keyed { key.start } else { start };
        let json = LeaseJson::new(&shared, from + add - sub..scan.at + add - sub, start - from);
        let lease = lease.recorded(json);
        match (&mut owned, token) {
            (Some(owned), Some(token)) => owned.push((token, lease)),
            _ => {
                in_place.push((inner.start + add - sub..inner.end + add - sub, lease));
                if in_place.len() == 1 {
                    // Room for as many more leases as the bytes left would hold if each were as
                    // long as this one (a few too many when others follow them), so the list is
                    // not moved and copied as it grows.
                    let each = (scan.at - key.start).max(1);
                    in_place.reserve(bytes.len().saturating_sub(scan.at) / each);
                }
            }
        }
        scan.skip_space();
        match bytes.get(scan.at)? {
            b',' => scan.at += 1,
            b'}' => {
                scan.at += 1;
                break;
            }
            _ => return None,
        }
    }
    // Tokens out of order or twice are read as a map would insert them: it sorts them, and the
    // last of equal tokens wins.
    let owned = match owned {
        Some(owned) => owned,
        None => match ReadLeases::new(shared.clone(), in_place) {
            Ok(read) => return Some(Leases::from_read(read)),
            Err(in_place) => in_place
                .into_iter()
                .map(|(range, lease)| {
                    let token = shared.get(range).map(std::str::from_utf8)?.ok()?;
                    Some((token.to_string(), lease))
                })
                .collect::<Option<Vec<_>>>()?,
        },
    };
    Some(owned.into_iter().collect())
}

/// Reads the value at the cursor with `read`, or takes what `seen` read from the same bytes.
fn same_or<'a, T: Clone>(
    scan: &mut Scan<'a>,
    seen: &mut Option<(&'a [u8], T)>,
    read: impl FnOnce(&'a [u8]) -> Option<T>,
) -> Option<T> {
    // The value read last, byte for byte, is that value again: each is an object, an array or
    // a plain string (no escape), which ends at its own closing bracket or quote, so no scan is
    // needed to find its end.
    if let Some((last, value)) = seen
        && scan.bytes[scan.at..].starts_with(last)
    {
        scan.at += last.len();
        return Some(value.clone());
    }
    let range = scan.value()?;
    let bytes = &scan.bytes[range];
    let value = read(bytes)?;
    *seen = Some((bytes, value.clone()));
    Some(value)
}

/// A lease of the exact shape this build writes at the cursor, which ends past it; `None`
/// otherwise (serde reads it instead).
fn fast_lease<'a>(scan: &mut Scan<'a>, seen: &mut Seen<'a>) -> Option<ReadLease> {
    let start = scan.at;
    if let Some(shape) = &seen.shape
        && let Some(lease) = shape.repeated(scan, &mut seen.texts)
    {
        return Some(lease);
    }
    scan.at = start;
    let bytes = scan.bytes;
    scan.literal(b"{")?;
    scan.field(b"provider")?;
    let provider = same_or(scan, &mut seen.provider, plain_shared)?;
    scan.literal(b",")?;
    scan.field(b"holder")?;
    let holder = same_or(scan, &mut seen.holder, |bytes| {
        serde_json::from_slice(bytes).ok()
    })?;
    scan.literal(b",")?;
    scan.field(b"workspace")?;
    let workspace = same_or(scan, &mut seen.workspace, plain_shared)?;
    scan.literal(b",")?;
    scan.field(b"acquired_at")?;
    let head = start..scan.at;
    let acquired_at = scan.plain_u64()?;
    let middle_start = scan.at;
    scan.literal(b",")?;
    scan.field(b"paths")?;
    let paths = same_or(scan, &mut seen.paths, |bytes| {
        plain_paths(&mut Scan::new(bytes)).map(Arc::from)
    })?;
    scan.literal(b",")?;
    scan.field(b"namespace")?;
    let namespace = same_or(scan, &mut seen.namespace, plain_shared)?;
    // Where the part running to the end (or to the `seq` value) starts, and the part before
    // the texts when there are texts.
    let mut last_start = middle_start;
    let mut middle = None;
    let block_texts = if scan.next_field(b"block_texts") {
        middle = Some(middle_start..scan.at);
        let texts = texts(scan, &mut seen.texts)?;
        last_start = scan.at;
        texts
    } else {
        seen.no_texts.get_or_insert_with(Default::default).clone()
    };
    let (seq, last) = if scan.next_field(b"seq") {
        let last = last_start..scan.at;
        // The writer leaves a zero out.
        let seq = Some(scan.plain_u64()?).filter(|seq| *seq != 0)?;
        scan.literal(b"}")?;
        (seq, Some(last))
    } else {
        scan.literal(b"}")?;
        (0, None)
    };
    let read = LeaseShape {
        provider,
        holder,
        workspace,
        paths,
        namespace,
    };
    // The shape of the lease before, when this one has the same (one holder, one provider).
    let shape = match seen.shape.as_ref().map(|shape| &shape.shape) {
        Some(before) if **before == read => before.clone(),
        _ => Arc::new(read),
    };
    let lease = ReadLease {
        shape: shape.clone(),
        acquired_at,
        seq,
        block_texts: block_texts.clone(),
    };
    let last = &bytes[last.unwrap_or(last_start..scan.at)];
    let (middle, tail) = match middle {
        Some(middle) => (&bytes[middle], Some(last)),
        None => (last, None),
    };
    seen.shape = Some(Shape {
        head: &bytes[head],
        middle,
        tail,
        seq: seq != 0,
        shape,
        block_texts,
    });
    Some(lease)
}

/// A lease's session texts at the cursor (a `block_texts` value), or what `seen` read from the
/// same bytes; `None` when they are not plain or are empty (the writer leaves an empty map out;
/// one written anyway is serde's to read). Kept as their range of the buffer the leases are read
/// into when there is one, otherwise copied.
fn texts<'a>(scan: &mut Scan<'a>, seen: &mut TextsSeen<'a>) -> Option<BlockTexts> {
    if let Some((last, value)) = &seen.last
        && scan.bytes[scan.at..].starts_with(last)
    {
        scan.at += last.len();
        return Some(value.clone());
    }
    scan.skip_space();
    let rest = &scan.bytes[scan.at..];
    let len = plain_texts_len(rest, &mut seen.paths)?;
    let range = scan.at..scan.at + len;
    scan.at += len;
    let bytes = &rest[..len];
    let (buffer, add, sub) = &seen.within;
    let texts = BlockTexts::read(buffer, range.start + add - sub..range.end + add - sub);
    if texts.is_empty() {
        return None;
    }
    seen.last = Some((bytes, texts.clone()));
    Some(texts)
}

impl<'a> Shape<'a> {
    /// The lease at the cursor when its bytes are this shape's around numbers and texts of its
    /// own (the cursor then past it); `None` otherwise, the cursor anywhere.
    fn repeated(&self, scan: &mut Scan<'a>, seen_texts: &mut TextsSeen<'a>) -> Option<ReadLease> {
        scan.literal(self.head)?;
        let acquired_at = scan.plain_u64()?;
        scan.literal(self.middle)?;
        let block_texts = match self.tail {
            Some(tail) => {
                let texts = texts(scan, seen_texts)?;
                scan.literal(tail)?;
                texts
            }
            None => self.block_texts.clone(),
        };
        let seq = if self.seq {
            let seq = Some(scan.plain_u64()?).filter(|seq| *seq != 0)?;
            scan.literal(b"}")?;
            seq
        } else {
            0
        };
        Some(ReadLease {
            shape: self.shape.clone(),
            acquired_at,
            seq,
            block_texts,
        })
    }
}

/// `"text"`, a plain string (nothing after it), shared.
fn plain_shared(bytes: &[u8]) -> Option<Arc<str>> {
    let mut scan = Scan::new(bytes);
    let text = scan.plain_str()?;
    (scan.at == bytes.len()).then(|| text.into())
}

/// `["a","b/c"]`, plain strings that are valid relative paths.
fn plain_paths(scan: &mut Scan<'_>) -> Option<Vec<RelPath>> {
    scan.literal(b"[")?;
    let mut paths = Vec::new();
    if scan.literal(b"]").is_some() {
        return (scan.at == scan.bytes.len()).then_some(paths);
    }
    loop {
        paths.push(RelPath::new(scan.plain_str()?).ok()?);
        if scan.literal(b",").is_none() {
            scan.literal(b"]")?;
            return (scan.at == scan.bytes.len()).then_some(paths);
        }
    }
}

/// Whether `bytes` are `{"path":"text",…}` (or `{}`): plain strings, paths valid, in strictly
/// increasing order (as the writer writes a map; a path twice is serde's to read).
/// A path written as the same bytes as one of `checked` (those of the texts read before, often
/// another session's text for the same file) is not checked anew; one checked here is added.
#[cfg(test)]
pub(super) fn plain_texts_checked<'a>(bytes: &'a [u8], checked: &mut Vec<&'a [u8]>) -> Option<()> {
    (plain_texts_len(bytes, checked)? == bytes.len()).then_some(())
}

/// How many bytes of `bytes` the texts object it opens with takes, when it is one
/// [`plain_texts_checked`] accepts; `None` otherwise. One pass: what follows is not looked at.
fn plain_texts_len<'a>(bytes: &'a [u8], checked: &mut Vec<&'a [u8]>) -> Option<usize> {
    let mut scan = Scan::new(bytes);
    scan.literal(b"{")?;
    if scan.literal(b"}").is_some() {
        return Some(scan.at);
    }
    let mut last: Option<&[u8]> = None;
    loop {
        let key = scan.plain_str()?.as_bytes();
        // A handful of paths at most (one per file a session's text goes to).
        if !checked.contains(&key) {
            RelPath::new(std::str::from_utf8(key).ok()?).ok()?;
            checked.push(key);
        }
        if last.is_some_and(|last| last >= key) {
            return None;
        }
        last = Some(key);
        scan.literal(b":")?;
        scan.plain_str()?;
        if scan.literal(b",").is_none() {
            scan.literal(b"}")?;
            return Some(scan.at);
        }
    }
}

/// The entries of `{"path":"text",…}` whose strings are plain, in order: as many as read so
/// (all of them, for texts [`plain_texts_checked`] accepted).
pub(super) fn plain_entries(bytes: &[u8]) -> impl Iterator<Item = (&str, &str)> {
    let mut scan = Scan::new(bytes);
    let mut open = scan.literal(b"{").is_some() && scan.literal(b"}").is_none();
    std::iter::from_fn(move || {
        if !open {
            return None;
        }
        let mut entry = || {
            let path = scan.plain_str()?;
            scan.literal(b":")?;
            let text = scan.plain_str()?;
            Some((path, text))
        };
        let entry = entry();
        open = entry.is_some() && scan.literal(b",").is_some();
        entry
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The fast reading of `json` as one whole lease.
    fn fast_whole(json: &[u8]) -> Option<LeaseRecord> {
        let mut scan = Scan::new(json);
        let lease = fast_lease(&mut scan, &mut Seen::reading(&json.into(), 0, 0))?;
        (scan.at == json.len()).then(|| lease.record())
    }

    fn holder() -> impl Strategy<Value = Holder> {
        prop_oneof![
            (any::<u32>(), any::<u64>(), "[a-f0-9-]{0,36}", any::<u64>()).prop_map(
                |(pid, start_time, boot, pid_ns)| Holder::Process {
                    pid,
                    start_time,
                    boot_id: boot.into(),
                    pid_ns,
                    time_ns: pid_ns / 3,
                }
            ),
            ("/[a-z\"\\\\é/]{0,12}", any::<u64>(), any::<u64>()).prop_map(|(p, mnt_ns, ino)| {
                Holder::Lock {
                    path: p.into(),
                    mnt_ns,
                    dev: ino / 7,
                    ino,
                }
            }),
        ]
    }

    fn rel_path() -> impl Strategy<Value = RelPath> {
        "[a-zA-Z0-9_é\"]{1,8}(/[a-z.]{1,5}){0,2}"
            .prop_filter_map("a valid path", |p| RelPath::new(p).ok())
    }

    prop_compose! {
        fn lease()(
            provider in "[a-z\"\\\\\n]{0,8}",
            holder in holder(),
            workspace in "/[a-z\"\\\\é/ ]{0,12}",
            acquired_at in any::<u64>(),
            paths in prop::collection::vec(rel_path(), 0..3),
            namespace in "[a-z\u{e9}\\\\]{0,8}",
            block_texts in prop::collection::btree_map(rel_path(), "(?s).{0,12}", 0..3)
                .prop_map(|texts| texts.into_iter().collect::<BlockTexts>()),
            seq in prop_oneof![Just(0u64), any::<u64>()],
        ) -> LeaseRecord {
            LeaseRecord {
                provider: provider.into(),
                holder,
                workspace: workspace.into(),
                acquired_at,
                paths: paths.into(),
                namespace: namespace.into(),
                block_texts,
                seq,
            }
        }
    }

    prop_compose! {
        /// A lease of the shape the fast reader takes: every string plain.
        fn plain_lease()(
            provider in "[a-z]{0,6}",
            pid in any::<u32>(),
            start_time in any::<u64>(),
            boot in "[a-f0-9-]{0,36}",
            pid_ns in any::<u64>(),
            workspace in "/[a-z/]{0,12}",
            acquired_at in any::<u64>(),
            paths in prop::collection::vec("[a-z]{1,4}(/[a-z]{1,3}[.]?[a-z]{1,3}){0,2}", 0..3),
            namespace in "[a-z]{0,6}",
            block_texts in prop::collection::btree_map("[a-z]{1,4}", "[ -!#-\\[\\]-~]{0,12}", 0..3),
            seq in prop_oneof![Just(0u64), any::<u64>()],
        ) -> LeaseRecord {
            LeaseRecord {
                provider: provider.into(),
                holder: Holder::Process {
                    pid,
                    start_time,
                    boot_id: boot.into(),
                    pid_ns,
                    time_ns: 7,
                },
                workspace: workspace.into(),
                acquired_at,
                paths: paths.iter().map(|p| RelPath::new(p).unwrap()).collect(),
                namespace: namespace.into(),
                block_texts: block_texts
                    .into_iter()
                    .map(|(p, t)| (RelPath::new(p).unwrap(), t))
                    .collect(),
                seq,
            }
        }
    }

    proptest! {
        /// For any lease as this build writes it, and any corruption of those bytes, the fast
        /// path either declines or reads what serde reads.
        #[test]
        fn fast_and_serde_read_alike(
            lease in lease(),
            cut in any::<prop::sample::Index>(),
            byte in any::<u8>(),
            how in 0..3u8,
        ) {
            let json = serde_json::to_vec(&lease).unwrap();
            let fast = fast_whole(&json);
            if let Some(fast) = &fast {
                prop_assert_eq!(fast, &lease);
            }
            let mut bad = json.clone();
            let at = cut.index(bad.len());
            match how {
                0 => bad[at] = byte,
                1 => bad.insert(at, byte),
                _ => { bad.remove(at); }
            }
            if let Some(fast) = fast_whole(&bad) {
                let serde: LeaseRecord = serde_json::from_slice(&bad).unwrap();
                prop_assert_eq!(fast, serde);
            }
        }

        /// For any ledger's leases, the split and the reading give what serde gives.
        #[test]
        fn leases_read_as_serde_reads_them(
            leases in prop::collection::btree_map("[a-z0-9\"\\\\-]{1,10}", lease(), 0..5),
        ) {
            let mut ledger = crate::ledger::Ledger::at(std::path::Path::new("/w"));
            for (token, lease) in leases {
                ledger.leases.insert(token, Recorded::new(lease));
            }
            let json = serde_json::to_vec(&ledger).unwrap();
            let (rest, read) = split_leases(&json).unwrap();
            let serde: crate::ledger::Ledger = serde_json::from_slice(&json).unwrap();
            let rest: crate::ledger::Ledger = serde_json::from_slice(&rest).unwrap();
            prop_assert!(rest.leases.is_empty());
            prop_assert_eq!(read, serde.leases);
        }
    }

    /// `ledger`'s JSON reads as `ledger`; corrupted at `cut` with `byte` (`how`: 0 replaced, 1
    /// inserted, 2 removed, else left whole), it reads exactly when serde reads it at this
    /// build's version, and as serde reads it.
    fn read_as_serde_reads(
        ledger: &crate::ledger::Ledger,
        cut: prop::sample::Index,
        byte: u8,
        how: u8,
    ) -> Result<(), TestCaseError> {
        let json = serde_json::to_vec(ledger).unwrap();
        let file = std::path::Path::new("f");
        let read = crate::ledger::Ledger::parse(&json, file, None).unwrap();
        prop_assert_eq!(&read, ledger);
        let mut bad = json.clone();
        let at = cut.index(bad.len());
        match how {
            0 => bad[at] = byte,
            1 => bad.insert(at, byte),
            2 => {
                bad.remove(at);
            }
            _ => {}
        }
        // A version this build does not understand is refused, however it reads.
        let serde = serde_json::from_slice::<crate::ledger::Ledger>(&bad)
            .ok()
            .filter(|l| l.version == crate::ledger::LEDGER_VERSION);
        let ours = crate::ledger::Ledger::parse(&bad, file, None);
        match (ours, serde) {
            (Ok(ours), Some(serde)) => prop_assert_eq!(ours, serde),
            (Err(_), None) => {}
            (ours, serde) => prop_assert!(
                false,
                "ours {:?}, serde {:?}",
                ours.is_ok(),
                serde.is_some()
            ),
        }
        Ok(())
    }

    proptest! {
        /// For any session texts, written as the writer writes them (or with white space the
        /// reader also takes), and any path and text asked about: the texts as read answer
        /// `text_is` as reading them whole does, and as the texts they were written from do.
        #[test]
        fn a_text_compared_as_it_stands_is_the_text_read(
            texts in prop::collection::btree_map(
                prop_oneof![rel_path(), "[a-z]{1,4}".prop_filter_map("a path", |p| RelPath::new(p).ok())],
                prop_oneof!["[ -!#-\\[\\]-~]{0,12}", "(?s).{0,12}"],
                0..3,
            ),
            asked_path in prop_oneof![rel_path(), "[a-z]{1,4}".prop_filter_map("a path", |p| RelPath::new(p).ok())],
            asked_text in prop_oneof!["[ -!#-\\[\\]-~]{0,12}", "(?s).{0,12}"],
            spaced in 0..3u8,
            pick in any::<prop::sample::Index>(),
        ) {
            let listed: BlockTexts = texts.clone().into_iter().collect();
            let mut json = serde_json::to_string(&listed).unwrap();
            match spaced {
                1 => json = json.replacen('"', " \"", 1),
                2 => json = json.replacen("\":\"", "\": \"", 1),
                _ => {}
            }
            let mut asked = vec![(asked_path.clone(), asked_text.clone())];
            if !texts.is_empty() {
                let (path, text) = texts.iter().nth(pick.index(texts.len())).unwrap();
                asked.push((path.clone(), text.clone()));
                asked.push((path.clone(), asked_text.clone()));
                asked.push((asked_path.clone(), text.clone()));
                // The same length, one byte apart.
                if let Some(last) = text.chars().last() {
                    let other = if last == 'a' { 'b' } else { 'a' };
                    let mut near = text[..text.len() - last.len_utf8()].to_string();
                    near.push(other);
                    asked.push((path.clone(), near));
                }
            }
            let bytes = json.into_bytes();
            let read = plain_texts_checked(&bytes, &mut Vec::new())
                .filter(|()| bytes != b"{}")
                .map(|()| BlockTexts::read(&std::sync::Arc::from(bytes.as_slice()), 0..bytes.len()));
            for (path, text) in asked {
                let expected = texts.get(&path).map(|t| *t == text);
                prop_assert_eq!(listed.text_is(&path, &text), expected);
                if let Some(read) = &read {
                    prop_assert_eq!(read.get(&path).map(|t| t == text), expected);
                    prop_assert_eq!(read.text_is(&path, &text), expected);
                }
            }
        }
    }

    proptest! {
        /// For any ledger with leases and entries, and any corruption of its bytes, the ledger
        /// read with the holders cut out is the ledger serde reads, and it reads whenever serde
        /// reads it at this build's version (and only then).
        #[test]
        fn entries_read_as_serde_reads_them(
            leases in prop::collection::btree_map("[a-z0-9-]{1,6}", lease(), 0..3),
            entries in prop::collection::btree_map(rel_path(), crate::ledger::tests::any_entry(), 0..4),
            cut in any::<prop::sample::Index>(),
            byte in any::<u8>(),
            how in 0..4u8,
        ) {
            let mut ledger = crate::ledger::Ledger::at(std::path::Path::new("/w"));
            for (token, lease) in leases {
                ledger.leases.insert(token, Recorded::new(lease));
            }
            ledger.entries = entries;
            read_as_serde_reads(&ledger, cut, byte, how)?;
        }
    }

    proptest! {
        /// For any ledger, what is read from its JSON is written back byte for byte (each lease
        /// copied with its key), and a lease moved under another token is written under that
        /// token.
        #[test]
        fn a_read_ledger_is_written_back_byte_for_byte(
            leases in prop::collection::btree_map("[a-z0-9\"\\\\-]{1,10}", lease(), 1..5),
            entries in prop::collection::btree_map(rel_path(), crate::ledger::tests::any_entry(), 0..3),
        ) {
            let mut ledger = crate::ledger::Ledger::at(std::path::Path::new("/w"));
            for (token, lease) in leases {
                ledger.leases.insert(token, Recorded::new(lease));
            }
            ledger.entries = entries;
            let file = std::path::Path::new("f");
            let json = serde_json::to_vec(&ledger).unwrap();
            let read = crate::ledger::Ledger::parse(&json, file, None).unwrap();
            let mut written = Vec::new();
            read.write_json(&mut written, file).unwrap();
            prop_assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&json));
            let mut moved = read.clone();
            let token = moved.leases.keys().next().unwrap().to_string();
            let lease = moved.leases.remove(&token).unwrap();
            moved.leases.insert(format!("{token}-moved"), lease);
            let mut written = Vec::new();
            moved.write_json(&mut written, file).unwrap();
            let derived = serde_json::to_vec(&moved).unwrap();
            prop_assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&derived));
        }
    }

    proptest! {
        /// For any ledger whose leases share a shape (one lease's fields, each with numbers of
        /// its own, some with the holder, paths, texts or namespace of another lease), and any
        /// one-byte corruption of its bytes, the ledger reads exactly when serde reads it at this
        /// build's version, and as serde reads it.
        #[test]
        fn leases_of_one_shape_read_as_serde_reads_them(
            base in prop_oneof![3 => plain_lease(), 1 => lease()],
            other in prop_oneof![3 => plain_lease(), 1 => lease()],
            numbers in prop::collection::vec(
                (any::<u64>(), prop_oneof![Just(0u64), 1..1000u64, any::<u64>()], 0..6u8),
                1..6,
            ),
            cut in any::<prop::sample::Index>(),
            byte in any::<u8>(),
            how in 0..4u8,
        ) {
            let mut ledger = crate::ledger::Ledger::at(std::path::Path::new("/w"));
            for (i, (acquired_at, seq, mix)) in numbers.into_iter().enumerate() {
                let mut lease = LeaseRecord { acquired_at, seq, ..base.clone() };
                match mix {
                    1 => lease.holder = other.holder.clone(),
                    2 => lease.paths = other.paths.clone(),
                    3 => lease.block_texts = other.block_texts.clone(),
                    4 => lease.namespace = other.namespace.clone(),
                    _ => {}
                }
                ledger.leases.insert(format!("t{i}"), Recorded::new(lease));
            }
            read_as_serde_reads(&ledger, cut, byte, how)?;
        }
    }

    #[test]
    fn leases_of_one_shape_are_read_from_the_first() {
        let holder = r#""holder":{"kind":"process","pid":7,"start_time":9,"boot_id":"b","pid_ns":3,"time_ns":4},"workspace":"/w""#;
        let lease = |at: u64, seq: &str| {
            format!(
                r#"{{"provider":"agy",{holder},"acquired_at":{at},"paths":[],"namespace":"n"{seq}}}"#
            )
        };
        let json = format!(
            "{{{},{},{},{},{},{}}}",
            lease(1, ""),
            lease(22, ""),
            lease(333, r#","seq":4"#),
            lease(4444, r#","seq":55"#),
            lease(5, r#","block_texts":{"AGENTS.md":"one"},"seq":6"#),
            lease(7, r#","block_texts":{"AGENTS.md":"two"},"seq":8"#),
        );
        let mut scan = Scan::new(json.as_bytes());
        scan.literal(b"{").unwrap();
        let mut seen = Seen::reading(&json.as_bytes().into(), 0, 0);
        let mut read = Vec::new();
        // Where the lease each shape was cut from starts, by the lease's index: a lease read as
        // the shape of the one before it leaves the shape as it was.
        let mut starts = Vec::new();
        let mut shapes = Vec::new();
        loop {
            starts.push(scan.at);
            read.push(fast_lease(&mut scan, &mut seen).unwrap());
            let head = seen.shape.as_ref().unwrap().head.as_ptr() as usize;
            let cut_at = head - json.as_ptr() as usize;
            shapes.push(starts.iter().position(|at| *at == cut_at).unwrap());
            if scan.literal(b",").is_none() {
                break;
            }
        }
        scan.literal(b"}").unwrap();
        assert_eq!(scan.at, json.len());
        let numbers: Vec<(u64, u64)> = read.iter().map(|l| (l.acquired_at, l.seq)).collect();
        assert_eq!(
            numbers,
            [(1, 0), (22, 0), (333, 4), (4444, 55), (5, 6), (7, 8)]
        );
        assert_eq!(shapes, [0, 0, 2, 2, 4, 4]);
        let text = |i: usize| read[i].block_texts.iter().next().unwrap().1;
        assert_eq!((text(4), text(5)), ("one", "two"));
        // One holder and one provider: one shape for all, shared.
        assert!(read.iter().all(|l| Arc::ptr_eq(&l.shape, &read[0].shape)));
    }

    #[test]
    fn texts_out_of_order_twice_or_escaped_read_as_serde_reads_them() {
        let lease = |texts: &str| {
            format!(
                r#"{{"provider":"p","holder":{{"kind":"lock","path":"/l","mnt_ns":5}},"workspace":"/w","acquired_at":1,"paths":[],"namespace":"n","block_texts":{texts},"seq":2}}"#
            )
        };
        for texts in [
            r#"{"b":"1","a":"2"}"#,
            r#"{"a":"1","a":"2"}"#,
            r#"{"a":"\u0031"}"#,
            r#"{"a":"1","b":"2"}"#,
            r#"{"../x":"1"}"#,
        ] {
            // Each after a lease with plain texts of its own, so the shape read first is
            // repeated with these texts.
            let json = format!(
                r#"{{"version":1,"workspace":"/w","leases":{{"a":{},"b":{}}},"entries":{{}},"created_dirs":[],"kept":[]}}"#,
                lease(r#"{"a":"0"}"#),
                lease(texts)
            );
            let serde = serde_json::from_str::<crate::ledger::Ledger>(&json);
            let ours =
                crate::ledger::Ledger::parse(json.as_bytes(), std::path::Path::new("f"), None);
            assert_eq!(ours.is_ok(), serde.is_ok(), "{texts}");
            if let (Ok(ours), Ok(serde)) = (ours, serde) {
                assert_eq!(ours, serde, "{texts}");
                let listed = |ledger: &crate::ledger::Ledger| -> Vec<(String, String)> {
                    ledger.leases["b"]
                        .block_texts()
                        .iter()
                        .map(|(p, t)| (p.to_string(), t.to_string()))
                        .collect()
                };
                assert_eq!(listed(&ours), listed(&serde), "{texts}");
            }
        }
    }

    #[test]
    fn plain_numbers_read_as_json_numbers_that_fit_a_u64() {
        let read = |text: &str| {
            let mut scan = Scan::new(text.as_bytes());
            scan.plain_u64().map(|n| (n, scan.at))
        };
        assert_eq!(read("0"), Some((0, 1)));
        assert_eq!(read("7,"), Some((7, 1)));
        assert_eq!(
            read("1234567890123456789}"),
            Some((1_234_567_890_123_456_789, 19))
        );
        assert_eq!(read("18446744073709551615"), Some((u64::MAX, 20)));
        assert_eq!(read("18446744073709551616"), None);
        assert_eq!(read("1000000000000000000000"), None);
        assert_eq!(read("00"), None);
        assert_eq!(read("01"), None);
        assert_eq!(read(""), None);
        assert_eq!(read("-1"), None);
        assert_eq!(read("x"), None);
    }

    proptest! {
        /// For any bytes, the word-at-a-time test finds what a byte-by-byte look finds.
        #[test]
        fn special_bytes_are_found_as_one_by_one(
            bytes in prop::collection::vec(prop_oneof![any::<u8>(), Just(b'"'), Just(b'\\'), Just(0x1f), Just(0x20)], 0..40),
        ) {
            let one_by_one = bytes.iter().any(|b| *b < 0x20 || *b == b'\\' || *b == b'"');
            prop_assert_eq!(has_special(&bytes), one_by_one);
        }

        /// For any bytes, the first byte a plain string cannot hold is found where a
        /// byte-by-byte look finds it.
        #[test]
        fn plain_ends_are_found_as_one_by_one(
            bytes in prop::collection::vec(prop_oneof![any::<u8>(), Just(b'"'), Just(b'\\'), Just(0x1f), Just(0x20), Just(b'a'), Just(0xc3)], 0..48),
        ) {
            let one_by_one = bytes.iter().position(|b| *b == b'"' || *b == b'\\' || *b < 0x20);
            prop_assert_eq!(plain_end(&bytes), one_by_one);
        }

        /// For any bytes, the first quote or backslash is found where a byte-by-byte look
        /// finds it.
        #[test]
        fn quotes_and_backslashes_are_found_as_one_by_one(
            bytes in prop::collection::vec(prop_oneof![any::<u8>(), Just(b'"'), Just(b'\\'), Just(0x21), Just(0x5b), Just(0x01), Just(0)], 0..40),
        ) {
            let one_by_one = bytes.iter().position(|b| *b == b'"' || *b == b'\\');
            prop_assert_eq!(quote_or_backslash(&bytes), one_by_one);
        }
    }

    #[test]
    fn the_common_lease_takes_the_fast_path_and_shares_its_holder() {
        let lease = r#"{"provider":"codex","holder":{"kind":"process","pid":7,"start_time":9,"boot_id":"b","pid_ns":3,"time_ns":4},"workspace":"/w","acquired_at":1,"paths":["AGENTS.md"],"namespace":"agentworks","block_texts":{"AGENTS.md":"bench"},"seq":52}"#;
        let mut seen = Seen::reading(&lease.as_bytes().into(), 0, 0);
        let first = fast_lease(&mut Scan::new(lease.as_bytes()), &mut seen).unwrap();
        assert!(seen.holder.is_some() && seen.paths.is_some() && seen.texts.last.is_some());
        assert_eq!(
            first.record(),
            serde_json::from_str::<LeaseRecord>(lease).unwrap()
        );
        let second = fast_lease(&mut Scan::new(lease.as_bytes()), &mut seen).unwrap();
        assert_eq!(first.record(), second.record());
        assert!(Arc::ptr_eq(&first.shape, &second.shape));
    }

    #[test]
    fn what_the_scanner_cannot_follow_is_declined() {
        for body in [
            &b"{\"leases\":{\"a\":{}"[..],
            b"[1]",
            b"{\"x\":\"unterminated}",
            b"{\"version\":1}",
        ] {
            assert!(
                split_leases(body).is_none(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        assert!(read_leases(&mut Scan::new(b"{\"a\":1,}"), None).is_none());
        // A second `leases` is left in what serde reads, which refuses it.
        let twice = br#"{"version":1,"workspace":"/w","leases":{},"entries":{},"created_dirs":[],"kept":[],"leases":{}}"#;
        assert!(split_leases(twice).is_some());
        let error =
            crate::ledger::Ledger::parse(twice, std::path::Path::new("f"), None).unwrap_err();
        assert!(error.to_string().contains("duplicate field"), "{error}");
    }
}
