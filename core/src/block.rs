//! The block engine: pure bytes in, bytes out. Finds, inserts, refreshes and removes the marked
//! session block in a shared file without changing one byte outside it.
//!
//! Nothing here touches the file system: every function takes the file's bytes and returns new
//! bytes (or a [`BlockError`] naming the line that stopped it). [`stream`] is the same engine fed
//! a file a chunk at a time, for files too large to hold. The user's bytes are never required
//! to be UTF-8; CRLF, a missing final newline, a UTF-8 BOM, invalid UTF-8 and NUL bytes are all
//! carried through untouched.
//!
//! # The block
//!
//! ```text
//! <user text><T>
//! <!-- BEGIN {ns}-session-instructions created=true|false --><T>
//! <body lines, each ending in T>
//! <!-- END {ns}-session-instructions --><T>
//! <text the user appended after the block while the session ran>
//! ```
//!
//! `T` is the block's line terminator: `\r\n` when the file's first line terminator is `\r\n`,
//! otherwise `\n`. The body's own `\n` and `\r\n` line ends are rendered as `T`, and a body that does
//! not end with a newline gets one; an empty body renders as no lines at all.
//!
//! # Why removal is unambiguous
//!
//! [`upsert`] appends the block after the user's text with **exactly one** separator `T` before the
//! BEGIN line, always, even when the user's text is empty (a file we create therefore starts with a
//! blank line). After text that ends its last line (or none), that separator is a blank line of
//! ours; after text without a final newline it ends the user's last line, and the insertion says
//! so ([`Upserted::joined`]), for the caller to keep ([`Markers::with_joined`]). [`remove`] takes
//! away exactly that one separator — `\r\n` when the BEGIN line ends in `\r\n` and the two bytes
//! before BEGIN are `\r\n`, otherwise a single `\n` if the byte before BEGIN is `\n`, otherwise
//! nothing — plus the block through END's own line terminator, and it takes the separator only
//! while it is ours: the line before BEGIN is still our blank line, or the block is `joined`. A
//! user who deletes our blank line (`sed '/^$/d'`) keeps the line end before BEGIN, which is
//! theirs; text typed onto our blank line is a line of the user's and keeps its line end. So
//! `remove(upsert(x)) == x` for every `x` the engine accepts (with the `joined` the insertion
//! said), and text the user prepends to the file, appends after END, or edits before BEGIN while
//! the block is present survives byte for byte. One line end is the exception, on purpose: text
//! appended after a `joined` block starts a line of its own, so the line end the block took from
//! the user's last line stays (`*.log` and a `/secret.env` typed after the block remain two
//! patterns, never `*.log/secret.env`).

//! # Refusals
//!
//! Malformed markers are refused, never guessed at ([`BlockError`] names the 1-based line):
//! an unterminated block, a second BEGIN before END (nested), two blocks of the namespace in one
//! file, an END with no open block, a marker line inside a fenced code block of the user's text, and
//! an altered marker line: any line whose whitespace-trimmed text starts with `<!--` and names
//! `{ns}-session-instructions` (not as the tail of a longer namespace) but is not exactly a BEGIN or
//! END line. Exact marker lines of *other* namespaces, and prose that mentions the tag without
//! starting with `<!--`, are plain user text. A trailing `\r` (CRLF) is not an alteration; a UTF-8
//! BOM before a marker on line 1 is user text and the marker still counts. Fenced code blocks
//! (```` ``` ```` or `~~~`, up to three spaces of indent, CommonMark-style closing) are tracked in the
//! user's text only; the body between BEGIN and END is ours and fences there are ignored. [`upsert`]
//! also refuses to append after user text that ends inside an open fence, since the block would read
//! as code, and refuses a body that contains a marker line (see [`validate_body`]).
//!
//! # Lines the user wrote inside the block
//!
//! [`remove_keeping`] and [`upsert_keeping`] are told which session texts the block may hold from
//! us. When the body differs from all of them, a line-level diff (the longest common subsequence
//! of lines, after the common head and tail are set aside) tells the user's lines from ours: ours
//! go, the user's move out of the block, in order, to just before where the BEGIN line was. A body
//! too large to diff within [`DIFF_BUDGET`] line comparisons is kept whole. Marker lines are never
//! guessed at: an altered one is refused as above.

use std::ops::Range;

use crate::plan::Namespace;

pub mod stream;

const BOM: &[u8] = b"\xEF\xBB\xBF";
const TAG_SUFFIX: &str = "-session-instructions";
/// The tag of the block that keeps what sessions create out of git's sight (see
/// [`Markers::for_git_exclude`]).
const EXCLUDE_TAG_SUFFIX: &str = "-session-excludes";

/// How marker lines are written: as HTML comments (Markdown instruction files), or as `#`
/// comments (git's exclude file, where a line is a pattern unless it starts with `#`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Html,
    Hash,
}

impl Style {
    /// What a marker line of this style opens and closes with.
    fn delimiters(self) -> (&'static str, &'static str) {
        match self {
            Style::Html => ("<!--", " -->"),
            Style::Hash => ("#", ""),
        }
    }
}

/// Whether `user`, the bytes before a block, end a line (nothing, a BOM alone, or `\n` last),
/// so the separator put after them is a blank line of ours; otherwise (no final newline) it ends
/// the user's last line, and the block is `joined` ([`Upserted::joined`]).
pub fn ends_line(user: &[u8]) -> bool {
    user.is_empty() || user == BOM || user.ends_with(b"\n")
}

/// The exact marker lines of one namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Markers {
    ns: String,
    tag: String,
    begin_true: String,
    begin_false: String,
    end: String,
    /// The separator before a BEGIN line is ours whatever the line before it holds: the block
    /// was put after text without a final newline (see "Why removal is unambiguous").
    joined: bool,
    style: Style,
}

impl Markers {
    /// The marker lines of `ns`: HTML comments naming `{ns}-session-instructions`.
    pub fn new(ns: &Namespace) -> Markers {
        Markers::styled(ns, TAG_SUFFIX, Style::Html)
    }

    /// The marker lines of the block of git patterns `ns`'s sessions put in a repository's
    /// `info/exclude`: `#` comments naming `{ns}-session-excludes`, which git reads as comments.
    /// In that file a line starting with a fence is a pattern like any other: no fence is
    /// tracked.
    pub fn for_git_exclude(ns: &Namespace) -> Markers {
        Markers::styled(ns, EXCLUDE_TAG_SUFFIX, Style::Hash)
    }

    fn styled(ns: &Namespace, suffix: &str, style: Style) -> Markers {
        let ns = ns.as_str().to_string();
        let tag = format!("{ns}{suffix}");
        let (open, close) = style.delimiters();
        Markers {
            begin_true: format!("{open} BEGIN {tag} created=true{close}"),
            begin_false: format!("{open} BEGIN {tag} created=false{close}"),
            joined: false,
            end: format!("{open} END {tag}{close}"),
            ns,
            tag,
            style,
        }
    }

    /// The byte a marker line starts with (after any indent): `<`, or `#`.
    pub(crate) fn opener(&self) -> u8 {
        self.style.delimiters().0.as_bytes()[0]
    }

    /// Whether fenced code blocks of the user's text are tracked (Markdown files).
    fn tracks_fences(&self) -> bool {
        self.style == Style::Html
    }

    /// The namespace these markers belong to.
    pub fn namespace(&self) -> &str {
        &self.ns
    }

    /// The BEGIN line, without a line terminator.
    pub fn begin_line(&self, created: bool) -> String {
        self.begin(created).to_string()
    }

    /// The END line, without a line terminator.
    pub fn end_line(&self) -> String {
        self.end.clone()
    }

    fn begin(&self, created: bool) -> &str {
        if created {
            &self.begin_true
        } else {
            &self.begin_false
        }
    }

    /// These markers, for a file whose block was put after text without a final newline
    /// (`joined`, as [`Upserted::joined`] said when it was): the line end before its BEGIN line
    /// is ours whatever that line comes to hold. Without it, the line end before BEGIN is ours
    /// only while the line is the blank line we put there.
    pub fn with_joined(&self, joined: bool) -> Markers {
        Markers {
            joined,
            ..self.clone()
        }
    }

    /// What one line is to us. `text` is the line without its `\n` (and, on line 1, without a BOM).
    fn classify(&self, text: &[u8]) -> LineKind {
        let exact = text.strip_suffix(b"\r").unwrap_or(text);
        if exact == self.begin_true.as_bytes() {
            LineKind::Begin { created: true }
        } else if exact == self.begin_false.as_bytes() {
            LineKind::Begin { created: false }
        } else if exact == self.end.as_bytes() {
            LineKind::End
        } else if self.is_marker_like(text) {
            LineKind::Altered
        } else {
            LineKind::Text
        }
    }

    /// A line whose trimmed text starts with our comment opener (`<!--`, or `#`) and names our
    /// tag (not as the tail of a longer namespace), and is not a marker line of another
    /// namespace.
    fn is_marker_like(&self, text: &[u8]) -> bool {
        let trimmed = text.trim_ascii();
        let (open, _) = self.style.delimiters();
        trimmed.starts_with(open.as_bytes())
            && contains_tag(trimmed, self.tag.as_bytes())
            && !self.is_foreign_marker(trimmed)
    }

    /// An exact BEGIN or END line of a different, valid namespace (`trimmed` already trimmed).
    fn is_foreign_marker(&self, trimmed: &[u8]) -> bool {
        let (open, close) = self.style.delimiters();
        let begin = format!("{open} BEGIN ");
        let end = format!("{open} END ");
        let inner = if let Some(rest) = trimmed.strip_prefix(begin.as_bytes()) {
            rest.strip_suffix(format!(" created=true{close}").as_bytes())
                .or_else(|| rest.strip_suffix(format!(" created=false{close}").as_bytes()))
        } else if let Some(rest) = trimmed.strip_prefix(end.as_bytes()) {
            rest.strip_suffix(close.as_bytes())
        } else {
            None
        };
        let suffix = &self.tag[self.ns.len()..];
        inner
            .and_then(|inner| inner.strip_suffix(suffix.as_bytes()))
            .is_some_and(|ns| is_valid_namespace(ns) && ns != self.ns.as_bytes())
    }

    /// The reason for an altered marker line.
    fn altered_reason(&self, text: &[u8]) -> String {
        let trimmed = text.trim_ascii();
        let exact_when_trimmed = [&self.begin_true, &self.begin_false, &self.end]
            .iter()
            .any(|m| m.as_bytes() == trimmed);
        if exact_when_trimmed {
            format!(
                "an altered marker line: whitespace before or after a `{}` marker, which must stand alone on its line",
                self.tag
            )
        } else {
            format!(
                "an altered marker line: a line that starts with `{open}` and names `{tag}` must read exactly `{t}`, `{f}` or `{e}`",
                open = self.style.delimiters().0,
                tag = self.tag,
                t = self.begin_true,
                f = self.begin_false,
                e = self.end,
            )
        }
    }
}

impl Default for Markers {
    /// The markers of the default namespace `agentworks`.
    fn default() -> Self {
        Markers::new(&Namespace::default())
    }
}

/// Where a block sits in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSpan {
    /// The `created=` flag on the BEGIN line.
    pub created: bool,
    /// 1-based line number of the BEGIN line.
    pub begin_line: usize,
    /// 1-based line number of the END line.
    pub end_line: usize,
    /// The bytes [`remove`] takes out: the one separator before BEGIN (if any) through the END
    /// line's terminator (if any).
    pub range: Range<usize>,
    /// The bytes strictly between the BEGIN line's terminator and the END line.
    pub body: Range<usize>,
    /// From the start of the BEGIN line (after a BOM on line 1) through the END line's
    /// terminator: the block's own lines, without the separator before them.
    pub lines: Range<usize>,
}

/// A malformed block (or a body that would make one); the input was not changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct BlockError {
    /// 1-based line number: in the file, or, for a refused body, in the body.
    pub line: usize,
    /// One plain sentence fragment saying what is wrong.
    pub reason: String,
}

impl BlockError {
    fn new(line: usize, reason: impl Into<String>) -> Self {
        BlockError {
            line,
            reason: reason.into(),
        }
    }
}

/// What [`upsert`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UpsertAction {
    /// No block was present; one was appended.
    Inserted,
    /// A block was present and its body changed.
    Refreshed,
    /// A block was present with exactly this body; the bytes are unchanged.
    Unchanged,
}

/// The result of [`upsert`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upserted {
    /// The new file content.
    pub bytes: Vec<u8>,
    /// What happened.
    pub action: UpsertAction,
    /// The block's `created=` flag (kept from the existing block on refresh).
    pub created: bool,
    /// How many lines of the old body were the user's and moved out of the block
    /// ([`upsert_keeping`]).
    pub kept_lines: usize,
    /// The block was inserted after text without a final newline: the separator ends the
    /// user's last line, so it is ours whatever that line comes to hold. The caller keeps this
    /// and scans the file with [`Markers::with_joined`] while the block is there.
    pub joined: bool,
}

/// The result of [`remove`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Removed {
    /// The file content without the block.
    pub bytes: Vec<u8>,
    /// The removed block's `created=` flag.
    pub created: bool,
    /// `created` is true and nothing at all is left: the caller deletes the file.
    pub now_empty: bool,
    /// How many lines of the body were the user's and stayed in the file ([`remove_keeping`]).
    pub kept_lines: usize,
}

/// Finds the block of `markers`' namespace in `bytes`, refusing malformed markers.
pub fn find(markers: &Markers, bytes: &[u8]) -> Result<Option<BlockSpan>, BlockError> {
    scan(markers, bytes).map(|scan| scan.block)
}

/// Every block of `markers`' namespace in `bytes`, in order, by the same rules as [`find`] but
/// accepting more than one (a reader of guidance files may meet a file holding blocks an earlier
/// implementation wrote twice; the block engine itself refuses such a file). The one scanner both
/// the block engine and the guidance resolver use.
pub fn find_all(markers: &Markers, bytes: &[u8]) -> Result<Vec<BlockSpan>, BlockError> {
    scan_blocks(markers, bytes, true).map(|scan| scan.blocks)
}

/// Inserts the block after the user's text, or refreshes the body of the block already present.
///
/// `existing` `None` means the file does not exist (the block gets `created=true`); `Some(b"")` is
/// an existing empty file (`created=false`). On refresh only the body bytes change: the block stays
/// where it is, keeps its `created=` flag and its line terminator, and text after END survives.
pub fn upsert(
    markers: &Markers,
    existing: Option<&[u8]>,
    body: &str,
) -> Result<Upserted, BlockError> {
    upsert_keeping(markers, existing, body, None)
}

/// [`upsert`], where a refreshed block's body is compared with `ours`, the session texts it may
/// hold from us (`None`: no record, the whole body counts as ours). Lines that are not ours move
/// out of the block, to just before its BEGIN line (see the module docs).
pub fn upsert_keeping(
    markers: &Markers,
    existing: Option<&[u8]>,
    body: &str,
    ours: Option<&[&str]>,
) -> Result<Upserted, BlockError> {
    validate_body(markers, body)?;
    let (user, created) = match existing {
        None => (&[][..], true),
        Some(bytes) => {
            let scan = scan(markers, bytes)?;
            if let Some(span) = scan.block {
                let kept = user_lines_of(bytes, &span, ours);
                return Ok(refresh(bytes, &span, body, &kept));
            }
            if let Some(fence) = scan.open_fence {
                return Err(BlockError::new(
                    fence,
                    format!(
                        "the file ends inside the fenced code block that opens on line {fence}, so a block appended after it would read as code"
                    ),
                ));
            }
            (bytes, false)
        }
    };
    let term = file_terminator(user);
    let rendered = render_body(body, term);
    let begin = markers.begin(created).as_bytes();
    let end = markers.end.as_bytes();
    let mut out = Vec::with_capacity(
        user.len() + 3 * term.len() + begin.len() + rendered.len() + end.len() + term.len(),
    );
    out.extend_from_slice(user);
    out.extend_from_slice(term);
    out.extend_from_slice(begin);
    out.extend_from_slice(term);
    out.extend_from_slice(&rendered);
    out.extend_from_slice(end);
    out.extend_from_slice(term);
    Ok(Upserted {
        bytes: out,
        action: UpsertAction::Inserted,
        created,
        kept_lines: 0,
        joined: !ends_line(user),
    })
}

/// Removes the block: the one separator before BEGIN, BEGIN through END, and END's terminator.
/// `None` when no block is present.
pub fn remove(markers: &Markers, bytes: &[u8]) -> Result<Option<Removed>, BlockError> {
    remove_keeping(markers, bytes, None)
}

/// [`remove`], where the block's body is compared with `ours`, the session texts it may hold from
/// us (`None`: no record, the whole body counts as ours). Lines that are not ours stay in the
/// file, in order, where the block was.
pub fn remove_keeping(
    markers: &Markers,
    bytes: &[u8],
    ours: Option<&[&str]>,
) -> Result<Option<Removed>, BlockError> {
    let Some(span) = scan(markers, bytes)?.block else {
        return Ok(None);
    };
    let kept = user_lines_of(bytes, &span, ours);
    let before = bytes.get(..span.range.start).unwrap_or_default();
    let after = bytes.get(span.range.end..).unwrap_or_default();
    let mut out = Vec::with_capacity(before.len() + kept.bytes.len() + after.len() + 2);
    out.extend_from_slice(before);
    // A block put after text without a final newline took that text's line end with it; lines
    // that follow (kept from the block, or typed after END) keep theirs on a line of their own.
    if !kept.bytes.is_empty() || !after.is_empty() {
        out.extend_from_slice(glue(before, block_terminator(bytes, &span)));
    }
    out.extend_from_slice(&kept.bytes);
    out.extend_from_slice(after);
    let now_empty = span.created && out.is_empty();
    Ok(Some(Removed {
        bytes: out,
        created: span.created,
        now_empty,
        kept_lines: kept.lines,
    }))
}

/// At most this many line comparisons are spent telling the user's lines in a block from ours;
/// past it, a changed body is kept whole (about 4 MiB of memory at the limit).
pub const DIFF_BUDGET: usize = 1 << 20;

/// Lines of a block body that are not ours, with their own terminators.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct UserLines {
    bytes: Vec<u8>,
    lines: usize,
}

/// The lines of the block `span` in `bytes` that none of `ours` accounts for.
fn user_lines_of(bytes: &[u8], span: &BlockSpan, ours: Option<&[&str]>) -> UserLines {
    let Some(ours) = ours else {
        return UserLines::default();
    };
    let body = bytes.get(span.body.clone()).unwrap_or_default();
    let found = user_lines(body, ours);
    UserLines {
        lines: found.len(),
        bytes: found.concat(),
    }
}

/// The lines of `body` (each with its terminator) that are not lines of any text in `ours`,
/// taken out text by text by a longest-common-subsequence match on the line contents (a line's
/// `\r\n` or `\n` does not count).
pub fn user_lines<'a>(body: &'a [u8], ours: &[&str]) -> Vec<&'a [u8]> {
    let mut left: Vec<&[u8]> = body.split_inclusive(|&b| b == b'\n').collect();
    for text in ours {
        if left.is_empty() {
            break;
        }
        let theirs: Vec<&[u8]> = body_lines(text).collect();
        left = unmatched(&left, &theirs);
    }
    left
}

/// Whether every line of `text` is a line of `body`, in order (a longest common subsequence
/// of the two takes all of `text`, compared as [`user_lines`] compares): the block body holds
/// that text whole, whatever lines were added around or between its lines. An empty text is
/// held by no body; past [`DIFF_BUDGET`] nothing is held.
pub fn holds_whole(body: &[u8], text: &str) -> bool {
    let theirs: Vec<&[u8]> = body_lines(text).collect();
    if theirs.is_empty() {
        return false;
    }
    let lines: Vec<&[u8]> = body
        .split_inclusive(|&b| b == b'\n')
        .map(line_key)
        .collect();
    // The text's lines outside a longest common subsequence with the body's: none.
    unmatched(&theirs, &lines).is_empty()
}

/// A line's content without its `\n` or `\r\n`.
fn line_key(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The lines of `lines` outside a longest common subsequence with `ours` (compared by
/// [`line_key`]). Past [`DIFF_BUDGET`], every line between the common head and tail is kept.
fn unmatched<'a>(lines: &[&'a [u8]], ours: &[&[u8]]) -> Vec<&'a [u8]> {
    let head = lines
        .iter()
        .zip(ours)
        .take_while(|(a, b)| line_key(a) == **b)
        .count();
    let (lines_mid, ours_mid) = (&lines[head..], &ours[head..]);
    let tail = lines_mid
        .iter()
        .rev()
        .zip(ours_mid.iter().rev())
        .take_while(|(a, b)| line_key(a) == **b)
        .count();
    let a = &lines_mid[..lines_mid.len() - tail];
    let b = &ours_mid[..ours_mid.len() - tail];
    if b.is_empty() || a.is_empty() {
        return a.to_vec();
    }
    if a.len().saturating_mul(b.len()) > DIFF_BUDGET {
        return a.to_vec();
    }
    // table[i][j]: the LCS length of a[i..] and b[j..].
    let width = b.len() + 1;
    let mut table = vec![0u32; (a.len() + 1) * width];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            table[i * width + j] = if line_key(a[i]) == b[j] {
                table[(i + 1) * width + j + 1] + 1
            } else {
                table[(i + 1) * width + j].max(table[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() {
        if j < b.len() && line_key(a[i]) == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && table[i * width + j + 1] >= table[(i + 1) * width + j] {
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out
}

/// What must come between the user's text `before` and lines appended after it: nothing when it
/// is empty (or only a BOM) or ends a line, else `term`.
fn glue<'t>(before: &[u8], term: &'t [u8]) -> &'t [u8] {
    if before.is_empty() || before == BOM || before.ends_with(b"\n") {
        b""
    } else {
        term
    }
}

/// Refuses a body with any marker-like line of this namespace (exact or altered), which would end,
/// nest or corrupt the block. The error's line is 1-based within the body.
pub fn validate_body(markers: &Markers, body: &str) -> Result<(), BlockError> {
    for (index, line) in body_lines(body).enumerate() {
        // The line is checked as it reads in an LF block and in a CRLF block.
        let mut crlf = line.to_vec();
        crlf.push(b'\r');
        let bad = [line, crlf.as_slice()]
            .into_iter()
            .any(|text| markers.classify(text) != LineKind::Text);
        if bad {
            return Err(BlockError::new(
                index + 1,
                format!(
                    "the session text contains a marker line naming `{}`, which would break the block",
                    markers.tag
                ),
            ));
        }
    }
    Ok(())
}

/// The body as it is rendered with terminator `term`.
fn render_body(body: &str, term: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / 16 + term.len());
    for line in body_lines(body) {
        out.extend_from_slice(line);
        out.extend_from_slice(term);
    }
    out
}

/// The body's lines without their `\n` or `\r\n`; an empty body has none, and a final line without
/// a newline counts as a line.
fn body_lines(body: &str) -> impl Iterator<Item = &[u8]> {
    let bytes = body.as_bytes();
    let trimmed = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let lines = if bytes.is_empty() {
        None
    } else {
        Some(trimmed.split(|&b| b == b'\n'))
    };
    lines
        .into_iter()
        .flatten()
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
}

fn refresh(bytes: &[u8], span: &BlockSpan, body: &str, kept: &UserLines) -> Upserted {
    let term = block_terminator(bytes, span);
    let rendered = render_body(body, term);
    let current = bytes.get(span.body.clone()).unwrap_or_default();
    if current == rendered.as_slice() && kept.bytes.is_empty() {
        return Upserted {
            bytes: bytes.to_vec(),
            action: UpsertAction::Unchanged,
            created: span.created,
            kept_lines: 0,
            joined: false,
        };
    }
    let mut out = Vec::with_capacity(bytes.len() + rendered.len() + kept.bytes.len());
    if kept.bytes.is_empty() {
        out.extend_from_slice(bytes.get(..span.body.start).unwrap_or_default());
    } else {
        // The user's lines, then one separator, then the BEGIN line: `remove` takes exactly the
        // separator and the block, so the user's lines stay.
        let before = bytes.get(..span.range.start).unwrap_or_default();
        out.extend_from_slice(before);
        out.extend_from_slice(glue(before, term));
        out.extend_from_slice(&kept.bytes);
        out.extend_from_slice(term);
        let begin = span.range.start + separator_len(bytes, span);
        out.extend_from_slice(bytes.get(begin..span.body.start).unwrap_or_default());
    }
    out.extend_from_slice(&rendered);
    out.extend_from_slice(bytes.get(span.body.end..).unwrap_or_default());
    Upserted {
        bytes: out,
        action: UpsertAction::Refreshed,
        created: span.created,
        kept_lines: kept.lines,
        joined: false,
    }
}

/// How many bytes of `span.range` before the BEGIN line are the separator (0, 1 or 2).
fn separator_len(bytes: &[u8], span: &BlockSpan) -> usize {
    let from = span.range.start;
    match bytes.get(from..from + 2) {
        Some(b"\r\n") => 2,
        Some([b'\n', _]) => 1,
        _ => 0,
    }
}

/// The terminator of an existing block: that of its BEGIN line.
fn block_terminator(bytes: &[u8], span: &BlockSpan) -> &'static [u8] {
    // The BEGIN line always ends in `\n` (END follows it); look at the byte before that.
    let crlf = span
        .body
        .start
        .checked_sub(2)
        .and_then(|i| bytes.get(i))
        .is_some_and(|&b| b == b'\r');
    if crlf { b"\r\n" } else { b"\n" }
}

/// `\r\n` when the first line terminator of `bytes` is `\r\n`, else `\n`.
fn file_terminator(bytes: &[u8]) -> &'static [u8] {
    match bytes.iter().position(|&b| b == b'\n') {
        Some(i) if i > 0 && bytes.get(i - 1) == Some(&b'\r') => b"\r\n",
        _ => b"\n",
    }
}

fn is_namespace_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
}

/// The same rule as [`Namespace::new`].
fn is_valid_namespace(ns: &[u8]) -> bool {
    (1..=64).contains(&ns.len())
        && ns.iter().all(|&b| is_namespace_byte(b))
        && ns.first().is_some_and(|b| b.is_ascii_alphanumeric())
}

/// `tag` occurs in `hay` not preceded by a namespace byte (so `xagentworks-…` is not ours).
fn contains_tag(hay: &[u8], tag: &[u8]) -> bool {
    if tag.is_empty() || hay.len() < tag.len() {
        return false;
    }
    hay.windows(tag.len()).enumerate().any(|(i, window)| {
        window == tag && (i == 0 || hay.get(i - 1).is_none_or(|&b| !is_namespace_byte(b)))
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LineKind {
    /// A BEGIN line, with its `created=` flag.
    Begin {
        created: bool,
    },
    End,
    Altered,
    Text,
}

/// One line of the file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Line {
    /// 1-based.
    number: usize,
    /// First byte of the line's text (after a BOM on line 1).
    text_start: usize,
    /// Offset of the `\n` (or the end of the input).
    content_end: usize,
    /// Offset after the `\n` (or the end of the input).
    end: usize,
}

fn lines(bytes: &[u8]) -> impl Iterator<Item = Line> + '_ {
    let mut pos = 0usize;
    let mut number = 0usize;
    std::iter::from_fn(move || {
        if pos >= bytes.len() {
            return None;
        }
        let start = pos;
        let rest = bytes.get(start..).unwrap_or_default();
        let (content_end, end) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (start + i, start + i + 1),
            None => (bytes.len(), bytes.len()),
        };
        number += 1;
        let text_start = if number == 1 && rest.starts_with(BOM) {
            (start + BOM.len()).min(content_end)
        } else {
            start
        };
        pos = end;
        Some(Line {
            number,
            text_start,
            content_end,
            end,
        })
    })
}

/// An open fenced code block in the user's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fence {
    ch: u8,
    len: usize,
    line: usize,
}

/// Up to three spaces of indent, then the rest of the line.
fn strip_fence_indent(text: &[u8]) -> Option<&[u8]> {
    let indent = text.iter().take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    text.get(indent..)
}

fn fence_run(text: &[u8]) -> Option<(u8, usize, &[u8])> {
    let rest = strip_fence_indent(text)?;
    let ch = *rest.first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.iter().take_while(|&&b| b == ch).count();
    if len < 3 {
        return None;
    }
    Some((ch, len, rest.get(len..).unwrap_or_default()))
}

fn opens_fence(text: &[u8], line: usize) -> Option<Fence> {
    let (ch, len, info) = fence_run(text)?;
    if ch == b'`' && info.contains(&b'`') {
        return None;
    }
    Some(Fence { ch, len, line })
}

fn closes_fence(text: &[u8], fence: &Fence) -> bool {
    fence_run(text).is_some_and(|(ch, len, rest)| {
        ch == fence.ch && len >= fence.len && rest.iter().all(|b| b.is_ascii_whitespace())
    })
}

/// What a whole-file scan found.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Scan {
    block: Option<BlockSpan>,
    /// The line a fenced code block that is still open at the end of the file opens on.
    open_fence: Option<usize>,
}

/// What a whole-file scan accepting several blocks found.
pub(crate) struct Blocks {
    pub(crate) blocks: Vec<BlockSpan>,
    pub(crate) open_fence: Option<usize>,
}

/// The one-block scan the engine uses: a second block of the namespace is refused.
fn scan(markers: &Markers, bytes: &[u8]) -> Result<Scan, BlockError> {
    let found = scan_blocks(markers, bytes, false)?;
    Ok(Scan {
        block: found.blocks.into_iter().next(),
        open_fence: found.open_fence,
    })
}

enum State {
    Outside {
        fence: Option<Fence>,
    },
    Inside {
        begin: Line,
        created: bool,
        /// Bytes before the BEGIN line's text that the separator takes (0, 1 or 2).
        separator: usize,
    },
}

fn scan_blocks(markers: &Markers, bytes: &[u8], many: bool) -> Result<Blocks, BlockError> {
    let mut scanner = Scanner::new(markers, many);
    let mut prev = Prev::default();
    for line in lines(bytes) {
        let text = bytes
            .get(line.text_start..line.content_end)
            .unwrap_or_default();
        scanner.feed(&line, text, prev)?;
        prev = Prev::of(text);
    }
    scanner.finish()
}

/// What the scanner needs to know of the line before the one it is fed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Prev {
    /// It ended in `\r\n`.
    pub(crate) cr: bool,
    /// It is blank: nothing but its terminator (after a BOM on line 1).
    pub(crate) blank: bool,
}

impl Prev {
    /// The line whose text (without its `\n`, and on line 1 without a BOM) is `text`.
    pub(crate) fn of(text: &[u8]) -> Prev {
        Prev {
            cr: text.ends_with(b"\r"),
            blank: text.is_empty() || text == b"\r",
        }
    }
}

/// The scan's line-by-line state machine. The whole-file scan above and the streaming scan
/// ([`stream`]) both feed it, so they find and refuse exactly the same things.
pub(crate) struct Scanner<'m> {
    markers: &'m Markers,
    many: bool,
    state: State,
    blocks: Vec<BlockSpan>,
}

impl<'m> Scanner<'m> {
    pub(crate) fn new(markers: &'m Markers, many: bool) -> Self {
        Scanner {
            markers,
            many,
            state: State::Outside { fence: None },
            blocks: Vec::new(),
        }
    }

    /// The next line: its place, its text (without the `\n`, and on line 1 without a BOM), and
    /// what the line before it was.
    pub(crate) fn feed(&mut self, line: &Line, text: &[u8], prev: Prev) -> Result<(), BlockError> {
        let kind = self.markers.classify(text);
        let state = std::mem::replace(&mut self.state, State::Outside { fence: None });
        self.state = match state {
            State::Outside { fence: Some(fence) } => {
                if kind != LineKind::Text {
                    return Err(BlockError::new(
                        line.number,
                        format!(
                            "a marker line inside the fenced code block that opens on line {}",
                            fence.line
                        ),
                    ));
                }
                let fence = if closes_fence(text, &fence) {
                    None
                } else {
                    Some(fence)
                };
                State::Outside { fence }
            }
            State::Outside { fence: None } => self.outside(line, text, kind, prev)?,
            State::Inside {
                begin,
                created,
                separator,
            } => match kind {
                LineKind::Begin { .. } => {
                    return Err(BlockError::new(
                        line.number,
                        format!(
                            "a second BEGIN marker before the END of the block that starts on line {}",
                            begin.number
                        ),
                    ));
                }
                LineKind::Altered => {
                    return Err(BlockError::new(
                        line.number,
                        format!(
                            "{} (inside the block that starts on line {})",
                            self.markers.altered_reason(text),
                            begin.number
                        ),
                    ));
                }
                LineKind::End => {
                    self.blocks.push(span(&begin, separator, line, created));
                    State::Outside { fence: None }
                }
                LineKind::Text => State::Inside {
                    begin,
                    created,
                    separator,
                },
            },
        };
        Ok(())
    }

    /// A line outside any block and any fence.
    fn outside(
        &self,
        line: &Line,
        text: &[u8],
        kind: LineKind,
        prev: Prev,
    ) -> Result<State, BlockError> {
        match kind {
            LineKind::Begin { created } => {
                if let Some(first) = self.blocks.first().filter(|_| !self.many) {
                    return Err(BlockError::new(
                        line.number,
                        format!(
                            "a second block of this namespace (the first spans lines {} to {})",
                            first.begin_line, first.end_line
                        ),
                    ));
                }
                // The one separator before BEGIN: `\r\n` when the BEGIN line and the line before
                // it both end in `\r\n`, else the `\n` ending the line before (none on line 1).
                // It is ours while that line is the blank line we put there, or whatever the line
                // holds when the block was put after text without a final newline (`joined`): a
                // user who deleted our blank line keeps the line end before BEGIN, which is
                // theirs, and text typed onto our blank line becomes a line of the user's, with
                // its line end.
                let separator = match (line.number > 1, prev.cr && text.ends_with(b"\r")) {
                    (false, _) => 0,
                    _ if !prev.blank && !self.markers.joined => 0,
                    (true, true) => 2,
                    (true, false) => 1,
                };
                Ok(State::Inside {
                    begin: *line,
                    created,
                    separator,
                })
            }
            LineKind::End => {
                let reason = match self.blocks.last() {
                    Some(first) => format!(
                        "an END marker with no open block (the block that starts on line {} already ended on line {})",
                        first.begin_line, first.end_line
                    ),
                    None => "an END marker with no BEGIN marker before it".to_string(),
                };
                Err(BlockError::new(line.number, reason))
            }
            LineKind::Altered => Err(BlockError::new(
                line.number,
                self.markers.altered_reason(text),
            )),
            LineKind::Text => Ok(State::Outside {
                fence: opens_fence(text, line.number).filter(|_| self.markers.tracks_fences()),
            }),
        }
    }

    /// Whether a block is open (its END not yet seen).
    pub(crate) fn is_inside(&self) -> bool {
        matches!(self.state, State::Inside { .. })
    }

    /// `Some(separator)` when the line numbered `number` opened the block now open (the bytes
    /// before it that the block's separator takes).
    pub(crate) fn opened_on(&self, number: usize) -> Option<usize> {
        match &self.state {
            State::Inside {
                begin, separator, ..
            } if begin.number == number => Some(*separator),
            _ => None,
        }
    }

    /// The end of the input: an open block is unterminated.
    pub(crate) fn finish(self) -> Result<Blocks, BlockError> {
        match self.state {
            State::Inside { begin, .. } => Err(BlockError::new(
                begin.number,
                "a BEGIN marker with no END marker after it (an unterminated block)",
            )),
            State::Outside { fence } => Ok(Blocks {
                blocks: self.blocks,
                open_fence: fence.map(|f| f.line),
            }),
        }
    }
}

fn span(begin: &Line, separator: usize, end: &Line, created: bool) -> BlockSpan {
    let at = begin.text_start;
    BlockSpan {
        created,
        begin_line: begin.number,
        end_line: end.number,
        range: at - separator..end.end,
        body: begin.end..end.text_start,
        lines: at..end.end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() -> Markers {
        Markers::default()
    }

    #[test]
    fn classify_exact_crlf_altered_and_foreign() {
        let m = m();
        assert_eq!(
            m.classify(b"<!-- BEGIN agentworks-session-instructions created=true -->"),
            LineKind::Begin { created: true }
        );
        assert_eq!(
            m.classify(b"<!-- END agentworks-session-instructions -->\r"),
            LineKind::End
        );
        assert_eq!(
            m.classify(b"<!-- END agentworks-session-instructions -->\r\r"),
            LineKind::Altered
        );
        assert_eq!(
            m.classify(b"<!-- BEGIN agentworks-session-instructions created=maybe -->"),
            LineKind::Altered
        );
        assert_eq!(
            m.classify(b"see <!-- BEGIN agentworks-session-instructions created=true -->"),
            LineKind::Text
        );
        assert_eq!(
            m.classify(b"<!-- BEGIN xagentworks-session-instructions created=true -->"),
            LineKind::Text
        );
        let short = Markers::new(&Namespace::new("a").unwrap_or_default());
        assert_eq!(
            short.classify(b"<!-- END a-session-instructions-b-session-instructions -->"),
            LineKind::Text
        );
        assert_eq!(
            short.classify(b"<!-- END a-session-instructions-b -->"),
            LineKind::Altered
        );
    }

    #[test]
    fn fences() {
        assert_eq!(
            opens_fence(b"```rust", 1),
            Some(Fence {
                ch: b'`',
                len: 3,
                line: 1
            })
        );
        assert_eq!(opens_fence(b"   ~~~~", 2).map(|f| f.len), Some(4));
        assert_eq!(opens_fence(b"    ```", 1), None);
        assert_eq!(opens_fence(b"``` a`b", 1), None);
        assert_eq!(opens_fence(b"``", 1), None);
        let f = Fence {
            ch: b'`',
            len: 4,
            line: 1,
        };
        assert!(closes_fence(b"````\r", &f));
        assert!(closes_fence(b"  ````` ", &f));
        assert!(!closes_fence(b"```", &f));
        assert!(!closes_fence(b"~~~~", &f));
        assert!(!closes_fence(b"```` x", &f));
    }

    #[test]
    fn lines_split_and_bom() {
        let bytes = b"\xEF\xBB\xBFa\r\nb\nc";
        let got: Vec<_> = lines(bytes)
            .map(|l| (l.number, l.text_start, l.content_end, l.end))
            .collect();
        assert_eq!(got, vec![(1, 3, 5, 6), (2, 6, 7, 8), (3, 8, 9, 9)]);
        assert_eq!(lines(b"").count(), 0);
        assert_eq!(lines(b"\n").count(), 1);
    }

    #[test]
    fn body_lines_and_render() {
        assert_eq!(render_body("", b"\n"), b"");
        assert_eq!(render_body("a", b"\r\n"), b"a\r\n");
        assert_eq!(render_body("a\r\nb\n", b"\n"), b"a\nb\n");
        assert_eq!(render_body("\n\n", b"\n"), b"\n\n");
    }
}
