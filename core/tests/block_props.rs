//! Property tests of the block engine: insert-then-remove gives back every input byte for byte,
//! a modelled session history (starts, ends, user edits outside the block) ends with exactly the
//! user's bytes, and arbitrary input never panics and never changes bytes outside a block.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_core::Namespace;
use projectfile_core::block::{Markers, UpsertAction, find, remove, upsert, validate_body};
use proptest::prelude::*;

const BOM: &[u8] = b"\xEF\xBB\xBF";

fn m() -> Markers {
    Markers::new(&Namespace::default())
}

/// Free bytes: anything but backticks and tildes (so they can never form a fence), weighted
/// towards the awkward ones. They never name our tag, so they hold no marker-like line.
fn free_bytes() -> impl Strategy<Value = Vec<u8>> {
    let segment = prop_oneof![
        4 => any::<u8>()
            .prop_filter("no fence bytes", |b| *b != b'`' && *b != b'~')
            .prop_map(|b| vec![b]),
        2 => Just(b"\n".to_vec()),
        2 => Just(b"\r\n".to_vec()),
        1 => Just(b"\r".to_vec()),
        1 => Just(b"\0".to_vec()),
        1 => Just(b"\xFF".to_vec()),
        1 => Just(BOM.to_vec()),
        1 => Just(b"<!--".to_vec()),
        1 => Just(b"text ".to_vec()),
        1 => Just("h\u{e4}llo".as_bytes().to_vec()),
    ];
    prop::collection::vec(segment, 0..12).prop_map(|parts| parts.concat())
}

/// A self-contained piece of structure that starts and ends with a line terminator, so it reads
/// the same whatever comes before or after it.
fn structured(term: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let fenced = (
        prop_oneof![Just("```"), Just("````"), Just("~~~"), Just("~~~~")],
        prop_oneof![Just(""), Just("md"), Just(" rust")],
        free_bytes(),
    )
        .prop_map(move |(fence, info, inside)| {
            let mut out = format!("{term}{fence}{info}{term}").into_bytes();
            out.extend_from_slice(&inside);
            // The closing run is at least as long as the opening one.
            out.extend_from_slice(format!("{term}{fence}{fence}{term}").as_bytes());
            out
        });
    let fixed = prop_oneof![
        Just(format!(
            "{term}We keep agentworks-session-instructions blocks short.{term}"
        )),
        Just(format!(
            "{term}see <!-- BEGIN agentworks-session-instructions created=true --> inline{term}"
        )),
        Just(format!(
            "{term}<!-- BEGIN acme-session-instructions created=true -->{term}theirs{term}<!-- END acme-session-instructions -->{term}"
        )),
        Just(format!("{term}<!-- END my-agentworks-session-instructions -->{term}")),
        Just(format!("{term}<!-- a comment -->{term}")),
    ]
    .prop_map(String::into_bytes);
    prop_oneof![fenced, fixed]
}

/// User bytes without marker-like lines of our namespace and with balanced fences, including `\r`,
/// `\n`, NUL, 0xFF, BOMs, fenced code and other namespaces' blocks. Concatenating any two of them
/// (a prepend, an append) keeps those properties.
fn user_bytes() -> impl Strategy<Value = Vec<u8>> {
    let part = prop_oneof![
        3 => free_bytes(),
        1 => structured("\n"),
        1 => structured("\r\n"),
    ];
    prop::collection::vec(part, 0..6).prop_map(|parts| parts.concat())
}

/// A session prompt; those with a marker line are skipped by the caller.
fn body() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "(?s)[a-z <>!`~\\-\n\r\t\u{0}\u{e4}]{0,60}",
        1 => Just(String::new()),
        1 => Just("Be brief.\n```\nunclosed fence in our body".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// (1) remove(upsert(x)) == x for every marker-free x and every body.
    #[test]
    fn insert_then_remove_is_identity(x in user_bytes(), body in body()) {
        prop_assume!(validate_body(&m(), &body).is_ok());
        prop_assert_eq!(find(&m(), &x).unwrap(), None);
        let up = upsert(&m(), Some(&x), &body).unwrap();
        prop_assert_eq!(up.action, UpsertAction::Inserted);
        prop_assert!(!up.created);
        prop_assert!(up.bytes.starts_with(&x));
        let after = m().with_joined(up.joined);
        let span = find(&after, &up.bytes).unwrap().unwrap();
        prop_assert_eq!(span.range.end, up.bytes.len());
        // Refreshing with the same body changes nothing.
        let again = upsert(&after, Some(&up.bytes), &body).unwrap();
        prop_assert_eq!(again.action, UpsertAction::Unchanged);
        prop_assert_eq!(&again.bytes, &up.bytes);
        let removed = remove(&after, &up.bytes).unwrap().unwrap();
        prop_assert_eq!(&removed.bytes, &x);
        prop_assert!(!removed.created);
        prop_assert!(!removed.now_empty);
    }

    /// (1b) A file we create goes away entirely.
    #[test]
    fn created_then_removed_is_empty(body in body()) {
        prop_assume!(validate_body(&m(), &body).is_ok());
        let up = upsert(&m(), None, &body).unwrap();
        prop_assert!(up.created);
        let removed = remove(&m(), &up.bytes).unwrap().unwrap();
        prop_assert!(removed.now_empty);
        prop_assert!(removed.bytes.is_empty());
    }

    /// (2) A history of starts, ends and user edits outside the block ends with the original
    /// bytes plus the user's edits, and a block is present exactly while a lease is live.
    #[test]
    fn session_history_keeps_user_edits(
        original in prop::option::of(user_bytes()),
        ops in prop::collection::vec(op(), 0..16),
    ) {
        let mut file = original.clone();
        let mut model = Model { user: original, live: 0, created: false, after: 0, joined: false };
        for op in ops {
            // Read as the engine's caller reads it: with what the insertion said.
            let markers = m().with_joined(model.joined);
            match op {
                Op::Start(body) => {
                    if validate_body(&markers, &body).is_err() {
                        continue;
                    }
                    let up = upsert(&markers, file.as_deref(), &body).unwrap();
                    if model.live == 0 {
                        prop_assert_eq!(up.action, UpsertAction::Inserted);
                        prop_assert_eq!(up.created, file.is_none());
                        model.created = up.created;
                        model.joined = up.joined;
                    } else {
                        prop_assert_ne!(up.action, UpsertAction::Inserted);
                        prop_assert_eq!(up.created, model.created);
                    }
                    model.live += 1;
                    file = Some(up.bytes);
                }
                Op::End => {
                    if model.live == 0 {
                        if let Some(bytes) = &file {
                            prop_assert_eq!(remove(&markers, bytes).unwrap(), None);
                        }
                        continue;
                    }
                    model.live -= 1;
                    if model.live == 0 {
                        file = release(&markers, file, &mut model)?;
                    }
                }
                Op::Prepend(bytes) => {
                    // Onto our blank line as the file's first line (the user's text before the
                    // block is none, or a BOM): typed text becomes a line of the user's with our
                    // line end (`block_engine` holds that case); not modelled here.
                    if model.live > 0 && matches!(model.before(), b"" | BOM) {
                        continue;
                    }
                    file = Some(prepend(&bytes, file.as_deref()));
                    model.user = Some(prepend(&bytes, model.user.as_deref()));
                }
                Op::Append(bytes) => {
                    file = Some(append(file.as_deref(), &bytes));
                    model.user = Some(append(model.user.as_deref(), &bytes));
                    if model.live > 0 {
                        model.after += bytes.len();
                    }
                }
                Op::DeleteOurBlankLine => {
                    // The user's bytes are unchanged: the blank line was ours (there is none
                    // after text without a final newline: that line end is the user's line's).
                    if !model.joined
                        && let Some(bytes) = &file
                        && let Some(fewer) = without_our_blank_line(&markers, bytes)
                    {
                        file = Some(fewer);
                    }
                }
            }
            check(&m().with_joined(model.joined), file.as_deref(), &model)?;
        }
        while model.live > 0 {
            model.live -= 1;
            if model.live == 0 {
                file = release(&m().with_joined(model.joined), file, &mut model)?;
            }
        }
        prop_assert_eq!(file, model.user);
    }

    /// (3) User text that ends inside an open fence is refused, naming the fence's line.
    #[test]
    fn open_fence_at_the_end_is_refused(
        x in user_bytes(),
        fence in prop_oneof![Just("```"), Just("~~~~"), Just("   ```")],
        tail in free_bytes(),
    ) {
        let mut bytes = x;
        bytes.push(b'\n');
        let line = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
        bytes.extend_from_slice(fence.as_bytes());
        bytes.extend_from_slice(&tail);
        let err = upsert(&m(), Some(&bytes), "p").unwrap_err();
        prop_assert_eq!(err.line, line);
        prop_assert_eq!(find(&m(), &bytes).unwrap(), None);
    }

    /// (4) Any bytes at all, marker lines mixed in: no panic; whatever succeeds changes nothing
    /// outside the block.
    #[test]
    fn arbitrary_bytes_never_panic_and_keep_the_outside(x in noisy_bytes(), body in body()) {
        let markers = m();
        let found = find(&markers, &x);
        let removed = remove(&markers, &x);
        prop_assert_eq!(found.is_ok(), removed.is_ok());
        if let (Ok(Some(span)), Ok(Some(removed))) = (&found, &removed) {
            let mut outside = x[..span.range.start].to_vec();
            outside.extend_from_slice(&x[span.range.end..]);
            prop_assert_eq!(&removed.bytes, &outside);
            prop_assert!(span.range.start <= span.body.start);
            prop_assert!(span.body.end <= span.range.end);
        }
        if let Ok(up) = upsert(&markers, Some(&x), &body) {
            let after = remove(&markers.with_joined(up.joined), &up.bytes).unwrap().unwrap();
            match up.action {
                UpsertAction::Inserted => prop_assert_eq!(&after.bytes, &x),
                UpsertAction::Refreshed | UpsertAction::Unchanged => {
                    let before = removed.unwrap().unwrap();
                    prop_assert_eq!(&after.bytes, &before.bytes);
                    prop_assert_eq!(after.created, before.created);
                }
            }
        }
    }
}

/// Bytes with marker lines, altered markers and fences mixed into arbitrary bytes.
fn noisy_bytes() -> impl Strategy<Value = Vec<u8>> {
    let part = prop_oneof![
        3 => prop::collection::vec(any::<u8>(), 0..8),
        2 => Just(b"\n".to_vec()),
        1 => Just(b"\r\n".to_vec()),
        1 => Just(b"<!-- BEGIN agentworks-session-instructions created=true -->".to_vec()),
        1 => Just(b"<!-- BEGIN agentworks-session-instructions created=false -->".to_vec()),
        2 => Just(b"<!-- END agentworks-session-instructions -->".to_vec()),
        1 => Just(b"<!-- BEGIN agentworks-session-instructions -->".to_vec()),
        1 => Just(b"```".to_vec()),
        1 => Just(b"~~~".to_vec()),
        1 => Just(BOM.to_vec()),
    ];
    prop::collection::vec(part, 0..16).prop_map(|parts| parts.concat())
}

#[derive(Clone, Debug)]
enum Op {
    Start(String),
    End,
    Prepend(Vec<u8>),
    Append(Vec<u8>),
    /// The user deletes the blank line we put between their text and the block (`sed
    /// '/^$/d'`, an editor's "trim blank lines"), where it is one.
    DeleteOurBlankLine,
}

/// `bytes` without the blank line right before the block's BEGIN line, when there is one and the
/// line before it is not blank too (two blank lines in a row would not tell ours from the user's).
fn without_our_blank_line(markers: &Markers, bytes: &[u8]) -> Option<Vec<u8>> {
    let span = find(markers, bytes).unwrap()?;
    let begin = span.lines.start;
    let before = &bytes[..begin];
    let blank = [b"\r\n".as_slice(), b"\n"]
        .into_iter()
        .find(|term| before.ends_with(term) && before.len() > term.len())?;
    let rest = &before[..before.len() - blank.len()];
    // The line before ours ends in `\n` and is not blank itself (a byte order mark alone on a
    // line is a blank line too).
    let line = rest.strip_prefix(b"\xef\xbb\xbf").unwrap_or(rest);
    let ends_text = rest.ends_with(b"\n")
        && !rest.ends_with(b"\n\n")
        && !rest.ends_with(b"\n\r\n")
        && line != b"\n"
        && line != b"\r\n";
    ends_text.then(|| [rest, &bytes[begin..]].concat())
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => body().prop_map(Op::Start),
        3 => Just(Op::End),
        1 => user_bytes().prop_map(Op::Prepend),
        1 => user_bytes().prop_map(Op::Append),
        1 => Just(Op::DeleteOurBlankLine),
    ]
}

/// The user-visible file (`None`: no file), the live-lease count and the live block's flag.
struct Model {
    user: Option<Vec<u8>>,
    live: usize,
    created: bool,
    /// How many of `user`'s bytes were appended after the live block.
    after: usize,
    /// What the live block's insertion said (see `Upserted::joined`).
    joined: bool,
}

impl Model {
    /// The user's bytes before the live block.
    fn before(&self) -> &[u8] {
        let user = self.user.as_deref().unwrap_or_default();
        &user[..user.len() - self.after]
    }

    /// The user's bytes once the live block in `file` is taken out. A block put after text
    /// without a final newline took that line's end with it; text the user typed after the block
    /// keeps its own line, so that line end stays (the block's terminator).
    fn user_without(&self, markers: &Markers, file: &[u8]) -> Vec<u8> {
        let user = self.user.as_deref().unwrap_or_default();
        if !(self.joined && self.after > 0) {
            return user.to_vec();
        }
        let span = find(markers, file).unwrap().unwrap();
        let crlf = file[..span.body.start].ends_with(b"\r\n");
        let term: &[u8] = if crlf { b"\r\n" } else { b"\n" };
        [self.before(), term, &user[user.len() - self.after..]].concat()
    }
}

fn prepend(bytes: &[u8], to: Option<&[u8]>) -> Vec<u8> {
    [bytes, to.unwrap_or_default()].concat()
}

fn append(to: Option<&[u8]>, bytes: &[u8]) -> Vec<u8> {
    [to.unwrap_or_default(), bytes].concat()
}

/// The last release: removes the block, and the file when we created it and nothing is left.
fn release(
    markers: &Markers,
    file: Option<Vec<u8>>,
    model: &mut Model,
) -> Result<Option<Vec<u8>>, TestCaseError> {
    let bytes = file.unwrap_or_default();
    let removed = remove(markers, &bytes).unwrap().unwrap();
    prop_assert_eq!(removed.created, model.created);
    let user = model.user_without(markers, &bytes);
    model.user = None;
    let expect_gone = model.created && user.is_empty();
    prop_assert_eq!(removed.now_empty, expect_gone);
    prop_assert_eq!(&removed.bytes, &user);
    model.user = if expect_gone { None } else { Some(user) };
    model.after = 0;
    Ok(if removed.now_empty {
        None
    } else {
        Some(removed.bytes)
    })
}

/// A block is present exactly while a lease is live, and taking it out leaves the user's bytes.
fn check(markers: &Markers, file: Option<&[u8]>, model: &Model) -> Result<(), TestCaseError> {
    let Some(bytes) = file else {
        prop_assert_eq!(model.live, 0);
        prop_assert_eq!(model.user.as_deref(), None);
        return Ok(());
    };
    let span = find(markers, bytes).unwrap();
    prop_assert_eq!(span.is_some(), model.live > 0);
    if model.live > 0 {
        let removed = remove(markers, bytes).unwrap().unwrap();
        prop_assert_eq!(removed.bytes, model.user_without(markers, bytes));
    } else {
        prop_assert_eq!(Some(bytes), model.user.as_deref());
    }
    Ok(())
}
