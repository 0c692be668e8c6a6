//! The block engine over a file read in chunks, so a large file is neither held whole nor read
//! twice: [`StreamScan`] is fed the file's bytes in order, a chunk at a time, and finds exactly what
//! the whole-file scan finds (both drive the same [`Scanner`]); [`plan_upsert`] and
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
    BOM, BlockError, BlockSpan, Line, Markers, Scanner, UpsertAction, file_terminator, render_body,
    user_lines,
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
}

/// A scan fed a file's bytes in order.
pub struct StreamScan<'m> {
    scanner: Scanner<'m>,
    /// The current line's bytes so far.
    partial: Vec<u8>,
    /// Offset of the current line's first byte.
    start: usize,
    number: usize,
    prev_cr: bool,
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
            scanner: Scanner::new(markers, false),
            partial: Vec::new(),
            start: 0,
            number: 0,
            prev_cr: false,
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
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<(), BlockError> {
        while !chunk.is_empty() {
            let take = 3usize.saturating_sub(self.head.len()).min(chunk.len());
            let (first, _) = chunk.split_at(take);
            self.head.extend_from_slice(first);
            match chunk.iter().position(|&b| b == b'\n') {
                Some(newline) => {
                    let (line, rest) = chunk.split_at(newline + 1);
                    self.partial.extend_from_slice(line);
                    self.line()?;
                    chunk = rest;
                }
                None => {
                    self.partial.extend_from_slice(chunk);
                    chunk = &[];
                }
            }
        }
        Ok(())
    }

    /// The end of the file.
    pub fn finish(mut self) -> Result<Scanned, BlockError> {
        if !self.partial.is_empty() {
            self.line()?;
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
        })
    }

    /// The line held in `partial` (with its `\n`, if it has one) is whole: scan it.
    fn line(&mut self) -> Result<(), BlockError> {
        let bytes = std::mem::take(&mut self.partial);
        let content = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
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
        self.scanner.feed(&line, text, self.prev_cr)?;
        if let Some(separator) = self.scanner.opened_on(self.number) {
            self.note_begin(line.text_start, separator, text.ends_with(b"\r"));
            self.body.clear();
        } else if was_inside && self.scanner.is_inside() {
            self.body.extend_from_slice(&bytes);
        }
        self.prev_cr = text.ends_with(b"\r");
        self.start = line.end;
        let keep = bytes.len().min(3);
        self.tail.extend_from_slice(&bytes[bytes.len() - keep..]);
        let excess = self.tail.len().saturating_sub(3);
        self.tail.drain(..excess);
        self.partial = bytes;
        self.partial.clear();
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
    let (len, created, term) = match scanned {
        None => (0, true, file_terminator(b"")),
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
            (scanned.len, false, term)
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
    if !kept.is_empty() {
        let mut moved = glue_for(scanned, term).to_vec();
        moved.extend_from_slice(&kept);
        pieces.push(Piece::New(moved));
    }
    if span.range.end < scanned.len {
        pieces.push(Piece::Original(span.range.end..scanned.len));
    }
    Some(RemovePlan {
        now_empty: span.created && pieces.is_empty(),
        pieces,
        created: span.created,
        kept_lines,
    })
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
