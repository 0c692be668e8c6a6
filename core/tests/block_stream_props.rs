//! The streaming block engine agrees with the in-memory one on every input: a file fed to
//! `block::stream::StreamScan` in chunks of any size finds the same block and the same refusal as
//! `block::find`, and the pieces `plan_upsert` / `plan_remove` give, applied to the file, are
//! byte for byte what `upsert_keeping` / `remove_keeping` return, with the same action, flags and
//! kept lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_core::Namespace;
use projectfile_core::block::stream::{self, StreamScan};
use projectfile_core::block::{self, Markers};
use proptest::prelude::*;

fn m() -> Markers {
    Markers::new(&Namespace::default())
}

const BEGIN_TRUE: &str = "<!-- BEGIN agentworks-session-instructions created=true -->";
const BEGIN_FALSE: &str = "<!-- BEGIN agentworks-session-instructions created=false -->";
const END: &str = "<!-- END agentworks-session-instructions -->";

/// One line's text: prose, blank, odd bytes, fences, our markers exact and altered, other
/// namespaces' markers, and lines a session text has.
fn line_text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => prop_oneof![
            Just("plain words"), Just(""), Just("   "), Just("Session text."), Just("keep me"),
            Just("\u{feff}bom-like"), Just("see <!-- BEGIN agentworks-session-instructions created=true --> here"),
            Just("<!-- a comment -->"), Just("agentworks-session-instructions in prose"),
        ].prop_map(|t| t.as_bytes().to_vec()),
        2 => prop_oneof![
            Just("```"), Just("````"), Just("~~~"), Just("   ```md"), Just("    ```"), Just("``` a`b"),
            Just("~~~~ x"), Just("````` "),
        ].prop_map(|t| t.as_bytes().to_vec()),
        3 => prop_oneof![Just(BEGIN_TRUE), Just(BEGIN_FALSE), Just(END)]
            .prop_map(|t| t.as_bytes().to_vec()),
        1 => prop_oneof![
            Just("<!-- BEGIN agentworks-session-instructions created=maybe -->"),
            Just(" <!-- END agentworks-session-instructions -->"),
            Just("<!-- agentworks-session-instructions -->"),
            Just("<!-- BEGIN acme-session-instructions created=true -->"),
            Just("<!-- END acme-session-instructions -->"),
        ].prop_map(|t| t.as_bytes().to_vec()),
        1 => prop::collection::vec(any::<u8>().prop_filter("one line", |b| *b != b'\n'), 0..6),
        1 => prop_oneof![
            Just(" \t<!-- END agentworks-session-instructions -->"),
            Just("   ~~~"), Just("\t```"), Just("  <!-- BEGIN agentworks-session-instructions created=true -->  "),
        ].prop_map(|t| t.as_bytes().to_vec()),
        1 => long_line(),
    ]
}

/// A line longer than any chunk and than the eight bytes the scan passes over at a time, with
/// maybe one byte a marker or a fence starts with anywhere in it.
fn long_line() -> impl Strategy<Value = Vec<u8>> {
    (
        80usize..300,
        prop::option::of((
            any::<prop::sample::Index>(),
            prop::sample::select(vec![b'<', b'`', b'~']),
        )),
    )
        .prop_map(|(len, hit)| {
            let mut line: Vec<u8> = (0..len).map(|i| b"long prose\r "[i % 12]).collect();
            if let Some((at, byte)) = hit {
                line[at.index(len)] = byte;
            }
            line
        })
}

/// Lines joined by `\n` or `\r\n`, the last one maybe unterminated, maybe after a BOM.
fn lines_of(texts: Vec<(Vec<u8>, bool)>, bom: bool, open_end: bool) -> Vec<u8> {
    let mut out = if bom {
        b"\xEF\xBB\xBF".to_vec()
    } else {
        Vec::new()
    };
    let count = texts.len();
    for (i, (text, crlf)) in texts.into_iter().enumerate() {
        out.extend_from_slice(&text);
        if !(open_end && i + 1 == count) {
            out.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        }
    }
    out
}

/// Any mix of lines, and, more often, user text around one well-formed block of ours.
fn file() -> impl Strategy<Value = Vec<u8>> {
    let texts = || prop::collection::vec((line_text(), any::<bool>()), 0..24);
    let mixed = (texts(), any::<bool>(), any::<bool>())
        .prop_map(|(texts, bom, open_end)| lines_of(texts, bom, open_end));
    let prose = || {
        prop::collection::vec(
            (
                prop_oneof![Just("a"), Just(""), Just("keep me"), Just("Session text.")],
                any::<bool>(),
            ),
            0..12,
        )
    };
    let around_block = (
        prose(),
        any::<bool>(),
        prose(),
        prose(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(before, created, body, after, crlf, bom, open_end)| {
            let mut lines: Vec<(Vec<u8>, bool)> = Vec::new();
            let text = |t: &str, c: bool| (t.as_bytes().to_vec(), c);
            lines.extend(before.into_iter().map(|(t, c)| text(t, c)));
            lines.push(text(if created { BEGIN_TRUE } else { BEGIN_FALSE }, crlf));
            lines.extend(body.into_iter().map(|(t, _)| text(t, crlf)));
            lines.push(text(END, crlf));
            lines.extend(after.into_iter().map(|(t, c)| text(t, c)));
            lines_of(lines, bom, open_end)
        });
    prop_oneof![1 => mixed, 1 => around_block]
}

/// The session texts the ledger may list.
fn ours() -> impl Strategy<Value = Option<Vec<String>>> {
    prop::option::of(prop::collection::vec(
        prop_oneof![
            Just("Session text.".to_string()),
            Just("a\nSession text.\n".to_string()),
            Just("".to_string()),
            Just("keep me".to_string()),
        ],
        0..3,
    ))
}

/// Feeds `bytes` in chunks of the sizes `cuts` (cycled), then finishes.
fn streamed(
    markers: &Markers,
    bytes: &[u8],
    cuts: &[usize],
) -> Result<stream::Scanned, block::BlockError> {
    let mut scan = StreamScan::new(markers);
    let mut rest = bytes;
    for cut in cuts.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, more) = rest.split_at((*cut).clamp(1, rest.len()));
        scan.feed(chunk)?;
        rest = more;
    }
    scan.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn the_streaming_engine_agrees_with_the_engine(
        bytes in file(),
        cuts in prop::collection::vec(prop_oneof![1usize..9, 9usize..80, 80usize..600], 1..5),
        body in prop_oneof![Just("Session text."), Just("a\nSession text.\n"), Just(""), Just("new")],
        ours in ours(),
        joined in any::<bool>(),
    ) {
        let markers = m().with_joined(joined);
        let ours: Option<Vec<&str>> = ours.as_ref().map(|v| v.iter().map(String::as_str).collect());
        let ours = ours.as_deref();
        let scanned = streamed(&markers, &bytes, &cuts);
        let found = block::find(&markers, &bytes);
        match (&scanned, &found) {
            (Ok(s), Ok(f)) => prop_assert_eq!(&s.block, f),
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            other => prop_assert!(false, "disagree: {other:?}"),
        }
        let Ok(scanned) = scanned else { return Ok(()) };
        prop_assert_eq!(scanned.len, bytes.len());
        let current = scanned
            .block
            .as_ref()
            .map_or(&[][..], |span| &bytes[span.body.clone()]);
        prop_assert_eq!(&scanned.body[..], current, "the body kept as it went by");

        let engine = block::upsert_keeping(&markers, Some(&bytes), body, ours);
        let plan = stream::plan_upsert(&markers, Some(&scanned), current, body, ours);
        match (engine, plan) {
            (Ok(e), Ok(p)) => {
                let made = p.pieces.as_ref().map_or(bytes.clone(), |ps| stream::apply(ps, &bytes));
                prop_assert_eq!(&made, &e.bytes);
                prop_assert_eq!(
                    (p.action, p.created, p.kept_lines, p.joined),
                    (e.action, e.created, e.kept_lines, e.joined)
                );
                prop_assert_eq!(p.pieces.is_none(), e.action == block::UpsertAction::Unchanged);
            }
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            other => prop_assert!(false, "upsert disagrees: {other:?}"),
        }

        let engine = block::remove_keeping(&markers, &bytes, ours).unwrap();
        let plan = stream::plan_remove(&scanned, current, ours);
        prop_assert_eq!(engine.is_some(), plan.is_some());
        if let (Some(e), Some(p)) = (engine, plan) {
            prop_assert_eq!(stream::apply(&p.pieces, &bytes), e.bytes);
            prop_assert_eq!((p.created, p.now_empty, p.kept_lines), (e.created, e.now_empty, e.kept_lines));
        }
    }

    #[test]
    fn a_missing_file_gets_the_same_new_block(body in prop_oneof![Just("x"), Just(""), Just("a\r\nb")]) {
        let markers = m();
        let engine = block::upsert(&markers, None, body).unwrap();
        let plan = stream::plan_upsert(&markers, None, b"", body, None).unwrap();
        prop_assert_eq!(stream::apply(plan.pieces.as_deref().unwrap(), b""), engine.bytes);
        prop_assert_eq!((plan.action, plan.created), (engine.action, engine.created));
    }
}
