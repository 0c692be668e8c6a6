//! The block engine over a file read in chunks, so a large file is neither held whole nor read
//! twice: [`StreamScan`] is fed the file's bytes in order, a chunk at a time, and finds exactly what
//! the whole-file scan finds (both drive the same `Scanner`); [`plan_upsert`] and
//! [`plan_remove`] then say how the new file is made of ranges of the old one and a few new
//! bytes ([`Piece`]), which a caller copies without reading them again (the kernel copies ranges
//! of a file). Applying a plan to the file's bytes gives exactly what [`upsert_keeping`] and
//! [`remove_keeping`] give; `core/tests/block_stream_props.rs` checks it on every kind of input.
//!
//! Lines are held one at a time, so the memory a scan takes is that of the file's longest line
//! (a few dozen bytes for marker lines; a file of one huge line is held whole, as before).
//!
//! [`upsert_keeping`]: super::upsert_keeping
//! [`remove_keeping`]: super::remove_keeping

use std::ops::Range;

use super::{
    BOM, BlockError, BlockSpan, Line, Markers, Prev, Scanner, UpsertAction, file_terminator,
    render_body, user_lines,
};

/// What a streaming scan found in a whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scanned {
    /// The file's length.
    pub len: usize,
    /// The block of the namespace, if any.
    pub block: Option<BlockSpan>,
    /// The line a fenced code block still open at the end opens on.
    pub open_fence: Option<usize>,
    /// The file's first line terminator is `\r\n`.
    first_crlf: bool,
    /// The block's BEGIN line ends in `\r\n`.
    begin_crlf: bool,
    /// The bytes before the block's separator are empty, a BOM alone, or end a line (nothing
    /// must come between them and lines put there).
    before_ends_line: bool,
    /// The block's body (`block.body` of the file), kept as it went by.
    pub body: Vec<u8>,
    /// The file ends a line: it is empty, a BOM alone, or its last byte is `\n`.
    ends_line: bool,
}

/// A scan fed a file's bytes in order.
pub struct StreamScan<'m> {
    scanner: Scanner<'m>,
    /// The byte a marker line of these markers starts with (`<`, or `#`).
    opener: u8,
    /// The current line's bytes so far.
    partial: Vec<u8>,
    /// Offset of the current line's first byte.
    start: usize,
    number: usize,
    prev: Prev,
    first_crlf: Option<bool>,
    /// The file's first bytes (up to 3), for a BOM.
    head: Vec<u8>,
    /// The last bytes (up to 3) before the current line.
    tail: Vec<u8>,
    begin_crlf: bool,
    before_ends_line: bool,
    /// The lines of the open (or last) block's body so far.
    body: Vec<u8>,
}

impl<'m> StreamScan<'m> {
    /// A scan for the block of `markers`' namespace (one block at most, as the engine wants).
    pub fn new(markers: &'m Markers) -> Self {
        StreamScan {
            opener: markers.opener(),
            scanner: Scanner::new(markers, false),
            partial: Vec::new(),
            start: 0,
            number: 0,
            prev: Prev::default(),
            first_crlf: None,
            head: Vec::with_capacity(3),
            tail: Vec::with_capacity(3),
            begin_crlf: false,
            before_ends_line: true,
            body: Vec::new(),
        }
    }

    /// The next bytes of the file; the first malformed marker found refuses, as [`find`] does.
    ///
    /// [`find`]: super::find
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), BlockError> {
        if self.head.len() < 3 {
            let take = (3 - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
        }
        let mut rest = chunk;
        if !self.partial.is_empty() {
            // A line begun in an earlier chunk.
            let Some(len) = line_len(rest) else {
                self.partial.extend_from_slice(rest);
                return Ok(());
            };
            let mut whole = std::mem::take(&mut self.partial);
            whole.extend_from_slice(&rest[..len]);
            self.line(&whole)?;
            whole.clear();
            self.partial = whole;
            rest = &rest[len..];
        }
        while !rest.is_empty() {
            // Lines before the next byte that can start a marker or a fence change nothing but
            // the counts: passed over whole.
            let Some(hit) = next_interesting(rest, self.opener) else {
                let whole_lines = rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                self.pass_over(&rest[..whole_lines]);
                self.partial.extend_from_slice(&rest[whole_lines..]);
                return Ok(());
            };
            let start = rest[..hit]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            self.pass_over(&rest[..start]);
            let Some(len) = line_len(&rest[start..]) else {
                self.partial.extend_from_slice(&rest[start..]);
                return Ok(());
            };
            self.line(&rest[start..start + len])?;
            rest = &rest[start + len..];
        }
        Ok(())
    }

    /// Whole lines (`lines` ends in `\n`, or is empty) that hold no byte a marker or a fence
    /// starts with: they are plain text to the scanner, and change nothing but the counts (and
    /// the body, inside a block).
    fn pass_over(&mut self, lines: &[u8]) {
        let Some(&last) = lines.last() else {
            return;
        };
        debug_assert_eq!(last, b'\n');
        if self.first_crlf.is_none() {
            let first = lines.iter().position(|&b| b == b'\n').unwrap_or(0);
            self.first_crlf = Some(first > 0 && lines[first - 1] == b'\r');
        }
        self.number += newlines(lines);
        if self.scanner.is_inside() {
            self.body.extend_from_slice(lines);
        }
        // The last of the lines, without its `\n` (and, on line 1, a BOM).
        let from = lines[..lines.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let mut last_text = &lines[from..lines.len() - 1];
        if self.start + from == 0 {
            last_text = last_text.strip_prefix(BOM).unwrap_or(last_text);
        }
        self.prev = Prev::of(last_text);
        self.start += lines.len();
        self.note_tail(lines);
    }

    /// Keeps the last three bytes before the next line.
    fn note_tail(&mut self, bytes: &[u8]) {
        if bytes.len() >= 3 {
            self.tail.clear();
        } else {
            let excess = (self.tail.len() + bytes.len()).saturating_sub(3);
            self.tail.drain(..excess);
        }
        self.tail
            .extend_from_slice(&bytes[bytes.len().saturating_sub(3)..]);
    }

    /// The end of the file.
    pub fn finish(mut self) -> Result<Scanned, BlockError> {
        if !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.line(&last)?;
        }
        let found = self.scanner.finish()?;
        Ok(Scanned {
            len: self.start,
            block: found.blocks.into_iter().next(),
            open_fence: found.open_fence,
            first_crlf: self.first_crlf.unwrap_or(false),
            begin_crlf: self.begin_crlf,
            before_ends_line: self.before_ends_line,
            body: self.body,
            ends_line: self.start == 0
                || (self.start == BOM.len() && self.head == BOM)
                || self.tail.last() == Some(&b'\n'),
        })
    }

    /// Scans one whole line, `bytes` (with its `\n`, unless it is the file's unterminated last).
    fn line(&mut self, bytes: &[u8]) -> Result<(), BlockError> {
        let content = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        self.number += 1;
        let bom = if self.number == 1 && content.starts_with(BOM) {
            BOM.len()
        } else {
            0
        };
        let line = Line {
            number: self.number,
            text_start: self.start + bom,
            content_end: self.start + content.len(),
            end: self.start + bytes.len(),
        };
        let text = content.get(bom..).unwrap_or_default();
        if self.first_crlf.is_none() && content.len() < bytes.len() {
            self.first_crlf = Some(content.ends_with(b"\r"));
        }
        let was_inside = self.scanner.is_inside();
        self.scanner.feed(&line, text, self.prev)?;
        if let Some(separator) = self.scanner.opened_on(self.number) {
            self.note_begin(line.text_start, separator, text.ends_with(b"\r"));
            self.body.clear();
        } else if was_inside && self.scanner.is_inside() {
            self.body.extend_from_slice(bytes);
        }
        self.prev = Prev::of(text);
        self.start = line.end;
        self.note_tail(bytes);
        Ok(())
    }

    /// A BEGIN line at `at` whose separator is `separator` bytes: what a rewrite needs to know of
    /// the bytes before it.
    fn note_begin(&mut self, at: usize, separator: usize, crlf: bool) {
        self.begin_crlf = crlf;
        let cut = at - separator;
        // `tail` holds the bytes just before this line, which starts at `at` (line 1: a BOM or
        // nothing is before `at`, and the separator is empty).
        let last = self
            .tail
            .len()
            .checked_sub(separator + 1)
            .and_then(|i| self.tail.get(i));
        self.before_ends_line =
            cut == 0 || (cut == BOM.len() && self.head == BOM) || last == Some(&b'\n');
    }
}

/// The length of the first line of `bytes` with its `\n`; `None` when it has no `\n`. The search
/// is std's `memchr` (through `BufRead::skip_until`), a word at a time rather than a byte.
fn line_len(bytes: &[u8]) -> Option<usize> {
    let mut rest = bytes;
    let len = std::io::BufRead::skip_until(&mut rest, b'\n').unwrap_or(bytes.len());
    (bytes.get(len.checked_sub(1)?) == Some(&b'\n')).then_some(len)
}

/// Where the next byte that may start a marker line (`opener`: `<`, or `#`) or a fence (`` ` ``,
/// `~`) is. A line without one is plain text to the scanner whatever else it holds.
fn next_interesting(bytes: &[u8], opener: u8) -> Option<usize> {
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let word = word_of(word);
        let hits = bytes_equal(word, opener) | bytes_equal(word, b'`') | bytes_equal(word, b'~');
        if hits != 0 {
            return Some(at + (hits.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = words.remainder();
    rest.iter()
        .position(|b| *b == opener || matches!(b, b'`' | b'~'))
        .map(|i| at + i)
}

/// How many `\n` bytes `bytes` holds.
fn newlines(bytes: &[u8]) -> usize {
    let mut words = bytes.chunks_exact(8);
    let mut count = 0;
    for word in &mut words {
        count += bytes_equal(word_of(word), b'\n').count_ones() as usize;
    }
    count + words.remainder().iter().filter(|&&b| b == b'\n').count()
}

// Eight bytes at a time ("SWAR"): the portable build targets plain x86-64, where a byte loop is
// not turned into vector instructions; this is four times faster on a large file.

const LOW_BITS: u64 = 0x7F7F_7F7F_7F7F_7F7F;

fn word_of(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

/// The high bit of each byte of `word` that equals `byte` (exactly: no false hits).
fn bytes_equal(word: u64, byte: u8) -> u64 {
    let x = word ^ (u64::from(byte) * 0x0101_0101_0101_0101);
    !((((x & LOW_BITS) + LOW_BITS) | x) | LOW_BITS)
}

/// One piece of a rewritten file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// These bytes of the file as it was.
    Original(Range<usize>),
    /// New bytes.
    New(Vec<u8>),
}

/// What [`plan_upsert`] decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpsertPlan {
    /// The new file; `None` when it stays as it is.
    pub pieces: Option<Vec<Piece>>,
    /// What happened.
    pub action: UpsertAction,
    /// The block's `created=` flag.
    pub created: bool,
    /// How many lines of the old body were the user's and moved out of the block.
    pub kept_lines: usize,
    /// Inserted after text without a final newline (see [`super::Upserted::joined`]).
    pub joined: bool,
}

/// What [`plan_remove`] decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemovePlan {
    /// The file without the block.
    pub pieces: Vec<Piece>,
    /// The removed block's `created=` flag.
    pub created: bool,
    /// `created` is true and nothing at all is left: the caller deletes the file.
    pub now_empty: bool,
    /// How many lines of the body were the user's and stayed in the file.
    pub kept_lines: usize,
}

/// [`upsert_keeping`](super::upsert_keeping) as pieces: `scanned` is the file (`None`: there is
/// none), `current` the bytes of its block's body (`span.body`; empty without a block).
pub fn plan_upsert(
    markers: &Markers,
    scanned: Option<&Scanned>,
    current: &[u8],
    body: &str,
    ours: Option<&[&str]>,
) -> Result<UpsertPlan, BlockError> {
    super::validate_body(markers, body)?;
    let (len, created, term, ends_line) = match scanned {
        None => (0, true, file_terminator(b""), true),
        Some(scanned) => {
            if let Some(span) = &scanned.block {
                return Ok(refresh(scanned, span, current, body, ours));
            }
            if let Some(fence) = scanned.open_fence {
                return Err(BlockError::new(
                    fence,
                    format!(
                        "the file ends inside the fenced code block that opens on line {fence}, so a block appended after it would read as code"
                    ),
                ));
            }
            let term: &[u8] = if scanned.first_crlf { b"\r\n" } else { b"\n" };
            (scanned.len, false, term, scanned.ends_line)
        }
    };
    let mut block = term.to_vec();
    for piece in [markers.begin(created).as_bytes(), term] {
        block.extend_from_slice(piece);
    }
    block.extend_from_slice(&render_body(body, term));
    block.extend_from_slice(markers.end.as_bytes());
    block.extend_from_slice(term);
    let mut pieces = Vec::with_capacity(2);
    if len > 0 {
        pieces.push(Piece::Original(0..len));
    }
    pieces.push(Piece::New(block));
    Ok(UpsertPlan {
        pieces: Some(pieces),
        action: UpsertAction::Inserted,
        created,
        kept_lines: 0,
        joined: !ends_line,
    })
}

/// The user's lines in a block body, with their count.
fn kept(current: &[u8], ours: Option<&[&str]>) -> (Vec<u8>, usize) {
    match ours {
        None => (Vec::new(), 0),
        Some(ours) => {
            let lines = user_lines(current, ours);
            (lines.concat(), lines.len())
        }
    }
}

fn refresh(
    scanned: &Scanned,
    span: &BlockSpan,
    current: &[u8],
    body: &str,
    ours: Option<&[&str]>,
) -> UpsertPlan {
    let term: &[u8] = if scanned.begin_crlf { b"\r\n" } else { b"\n" };
    let rendered = render_body(body, term);
    let (kept, kept_lines) = kept(current, ours);
    if current == rendered.as_slice() && kept.is_empty() {
        return UpsertPlan {
            pieces: None,
            action: UpsertAction::Unchanged,
            created: span.created,
            kept_lines: 0,
            joined: false,
        };
    }
    let mut pieces = Vec::with_capacity(5);
    if kept.is_empty() {
        pieces.push(Piece::Original(0..span.body.start));
    } else {
        // The user's lines, then one separator, then the BEGIN line (see `refresh` in the engine).
        pieces.push(Piece::Original(0..span.range.start));
        let mut moved = glue_for(scanned, term).to_vec();
        moved.extend_from_slice(&kept);
        moved.extend_from_slice(term);
        pieces.push(Piece::New(moved));
        pieces.push(Piece::Original(span.lines.start..span.body.start));
    }
    pieces.push(Piece::New(rendered));
    pieces.push(Piece::Original(span.body.end..scanned.len));
    UpsertPlan {
        pieces: Some(pieces),
        action: UpsertAction::Refreshed,
        created: span.created,
        kept_lines,
        joined: false,
    }
}

/// What must come between the bytes before the block and lines put there (the engine's `glue`).
fn glue_for<'t>(scanned: &Scanned, term: &'t [u8]) -> &'t [u8] {
    if scanned.before_ends_line { b"" } else { term }
}

/// [`remove_keeping`](super::remove_keeping) as pieces; `None` when the file has no block.
pub fn plan_remove(scanned: &Scanned, current: &[u8], ours: Option<&[&str]>) -> Option<RemovePlan> {
    let span = scanned.block.as_ref()?;
    let (kept, kept_lines) = kept(current, ours);
    let term: &[u8] = if scanned.begin_crlf { b"\r\n" } else { b"\n" };
    let mut pieces = Vec::with_capacity(3);
    if span.range.start > 0 {
        pieces.push(Piece::Original(0..span.range.start));
    }
    let after = span.range.end < scanned.len;
    // Lines after the block (kept from it, or typed after END) stay on lines of their own.
    if !kept.is_empty() || after {
        let mut moved = glue_for(scanned, term).to_vec();
        moved.extend_from_slice(&kept);
        if !moved.is_empty() {
            pieces.push(Piece::New(moved));
        }
    }
    if after {
        pieces.push(Piece::Original(span.range.end..scanned.len));
    }
    Some(RemovePlan {
        now_empty: span.created && pieces.is_empty(),
        pieces,
        created: span.created,
        kept_lines,
    })
}

/// How many bytes `pieces` make.
pub fn length(pieces: &[Piece]) -> u64 {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Original(range) => range.len() as u64,
            Piece::New(bytes) => bytes.len() as u64,
        })
        .sum()
}

/// The bytes `pieces` make of `original` (for tests, and for a caller that holds the file).
pub fn apply(pieces: &[Piece], original: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Original(range) => {
                out.extend_from_slice(original.get(range.clone()).unwrap_or_default());
            }
            Piece::New(bytes) => out.extend_from_slice(bytes),
        }
    }
    out
}

/// [`apply`] on a buffer holding `original`, edited in place when the pieces keep the original
/// ranges in order (a rewrite: a block put in, refreshed or taken out), so a large file is not
/// held twice; otherwise built anew.
pub fn apply_owned(pieces: &[Piece], mut original: Vec<u8>) -> Vec<u8> {
    // The edits: each original range from `from` up to the next kept range is replaced by the
    // new bytes between them.
    let mut edits: Vec<(std::ops::Range<usize>, Vec<u8>)> = Vec::new();
    let mut from = 0usize;
    let mut inserted: Vec<u8> = Vec::new();
    for piece in pieces {
        match piece {
            Piece::New(bytes) => inserted.extend_from_slice(bytes),
            Piece::Original(range) => {
                if range.start < from || range.end < range.start || range.end > original.len() {
                    return apply(pieces, &original);
                }
                if range.start > from || !inserted.is_empty() {
                    edits.push((from..range.start, std::mem::take(&mut inserted)));
                }
                from = range.end;
            }
        }
    }
    edits.push((from..original.len(), inserted));
    for (range, bytes) in edits.into_iter().rev() {
        original.splice(range, bytes);
    }
    original
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn some_piece(len: usize) -> impl Strategy<Value = Piece> {
        prop_oneof![
            (0..=len, 0..=len).prop_map(|(a, b)| Piece::Original(a.min(b)..a.max(b))),
            prop::collection::vec(any::<u8>(), 0..5).prop_map(Piece::New),
        ]
    }

    proptest! {
        /// Editing in place makes the same bytes as building anew, whatever the pieces.
        #[test]
        fn apply_in_place_agrees_with_apply(
            (original, pieces) in prop::collection::vec(any::<u8>(), 0..40).prop_flat_map(|o| {
                let len = o.len();
                (Just(o), prop::collection::vec(some_piece(len), 0..6))
            })
        ) {
            prop_assert_eq!(apply_owned(&pieces, original.clone()), apply(&pieces, &original));
        }
    }

    #[test]
    fn bytes_equal_finds_exactly_the_equal_bytes() {
        for target in [b'\n', b'<', b'`', b'~', 0, 0x80, 0xFF] {
            for value in 0..=255u8 {
                for at in 0..8 {
                    let mut word = [0x41u8; 8];
                    word[at] = value;
                    let hits = bytes_equal(u64::from_le_bytes(word), target);
                    let mut expected = 0u64;
                    for (i, b) in word.iter().enumerate() {
                        if *b == target {
                            expected |= 0x80 << (8 * i);
                        }
                    }
                    assert_eq!(
                        hits, expected,
                        "{value:#x} at {at}, looking for {target:#x}"
                    );
                }
            }
        }
    }

    proptest! {
        /// The eight-bytes-at-a-time searches agree with plain ones.
        #[test]
        fn word_searches_agree_with_byte_searches(
            bytes in prop::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'<'), Just(b'`'), Just(b'~'), any::<u8>()],
                0..200,
            )
        ) {
            let plain = bytes.iter().position(|b| matches!(b, b'<' | b'`' | b'~'));
            prop_assert_eq!(next_interesting(&bytes, b'<'), plain);
            let hashed = bytes.iter().position(|b| matches!(b, b'#' | b'`' | b'~'));
            prop_assert_eq!(next_interesting(&bytes, b'#'), hashed);
            prop_assert_eq!(newlines(&bytes), bytes.iter().filter(|&&b| b == b'\n').count());
        }
    }
}
