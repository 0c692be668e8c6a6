//! Example-based tests of the block engine: every malformed kind (with its line), CRLF, BOM, no
//! final newline, invalid UTF-8, NUL bytes, empty and absent files, refresh, Go-written blocks and
//! removal of files we created.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_core::Namespace;
use projectfile_core::block::{
    BlockError, Markers, UpsertAction, find, remove, upsert, validate_body,
};
use rstest::rstest;

const B_TRUE: &str = "<!-- BEGIN agentworks-session-instructions created=true -->";
const B_FALSE: &str = "<!-- BEGIN agentworks-session-instructions created=false -->";
const END: &str = "<!-- END agentworks-session-instructions -->";

fn m() -> Markers {
    Markers::new(&Namespace::default())
}

/// Builds a file from lines joined with `\n`, substituting `{T}`, `{F}` and `{E}` for the markers.
fn doc(lines: &[&str]) -> Vec<u8> {
    lines
        .iter()
        .map(|l| {
            l.replace("{T}", B_TRUE)
                .replace("{F}", B_FALSE)
                .replace("{E}", END)
        })
        .collect::<Vec<_>>()
        .join("\n")
        .into_bytes()
}

/// The markers a file holding a block put by `up` is read with afterwards.
fn after(up: &projectfile_core::block::Upserted) -> Markers {
    m().with_joined(up.joined)
}

fn roundtrip(original: &[u8], body: &str) -> Vec<u8> {
    let up = upsert(&m(), Some(original), body).unwrap();
    assert_eq!(up.action, UpsertAction::Inserted);
    assert!(!up.created);
    let span = find(&after(&up), &up.bytes)
        .unwrap()
        .expect("block present");
    assert!(!span.created);
    let removed = remove(&after(&up), &up.bytes)
        .unwrap()
        .expect("block present");
    assert_eq!(
        removed.bytes, original,
        "round trip must give the original bytes"
    );
    assert!(!removed.now_empty);
    up.bytes
}

#[test]
fn marker_lines_are_exact() {
    let m = m();
    assert_eq!(m.begin_line(true), B_TRUE);
    assert_eq!(m.begin_line(false), B_FALSE);
    assert_eq!(m.end_line(), END);
    assert_eq!(m.namespace(), "agentworks");
    let other = Markers::new(&Namespace::new("acme").unwrap());
    assert_eq!(
        other.begin_line(true),
        "<!-- BEGIN acme-session-instructions created=true -->"
    );
    assert_eq!(other.end_line(), "<!-- END acme-session-instructions -->");
}

// ---------------------------------------------------------------------------------------------
// Malformed input: refused by find, upsert and remove alike, naming the line.
// ---------------------------------------------------------------------------------------------

#[rstest]
#[case::unterminated(&["# A", "", "{F}", "body"], 3, "no END")]
#[case::unterminated_at_eof_without_newline(&["{T}"], 1, "no END")]
#[case::nested_begin(&["x", "{F}", "a", "{T}", "b", "{E}", "{E}"], 4, "second BEGIN marker before the END of the block that starts on line 2")]
#[case::nested_same_flag(&["{F}", "{F}", "{E}"], 2, "second BEGIN")]
#[case::two_blocks(&["{F}", "a", "{E}", "text", "{F}", "b", "{E}"], 5, "second block of this namespace (the first spans lines 1 to 3)")]
#[case::end_before_begin(&["x", "{E}", "{F}", "{E}"], 2, "END marker with no BEGIN")]
#[case::end_alone(&["{E}"], 1, "END marker with no BEGIN")]
#[case::second_end(&["{F}", "{E}", "{E}"], 3, "already ended on line 2")]
#[case::marker_in_backtick_fence(&["a", "```md", "{F}", "x", "{E}", "```"], 3, "fenced code block that opens on line 2")]
#[case::marker_in_tilde_fence(&["~~~~", "~~~", "{E}", "~~~~"], 3, "opens on line 1")]
#[case::end_in_fence_after_block(&["{F}", "b", "{E}", "  ```", "{E}"], 5, "opens on line 4")]
#[case::altered_in_unclosed_fence(&["```", "<!-- BEGIN agentworks-session-instructions -->"], 2, "fenced code block")]
#[case::altered_created_maybe(&["<!-- BEGIN agentworks-session-instructions created=maybe -->"], 1, "altered marker line")]
#[case::altered_missing_close(&["a", "<!-- END agentworks-session-instructions"], 2, "altered")]
#[case::altered_trailing_space(&["{F}", "b", "<!-- END agentworks-session-instructions --> "], 3, "whitespace")]
#[case::altered_leading_space(&[" <!-- BEGIN agentworks-session-instructions created=true -->"], 1, "whitespace")]
#[case::altered_tab_indent(&["\t{E}"], 1, "whitespace")]
#[case::altered_case(&["<!-- begin agentworks-session-instructions created=true -->"], 1, "altered")]
#[case::altered_ns_case(&["<!-- BEGIN AgentWorks-session-instructions created=true -->", "{E}"], 2, "END marker with no BEGIN")]
#[case::altered_extra_attribute(&["<!-- BEGIN agentworks-session-instructions created=true by=go -->"], 1, "altered")]
#[case::altered_inside_block(&["{F}", "<!-- agentworks-session-instructions -->", "{E}"], 2, "inside the block that starts on line 1")]
#[case::altered_double_cr(&["{F}\r\r", "{E}"], 1, "altered")]
fn malformed_is_refused(#[case] lines: &[&str], #[case] line: usize, #[case] reason: &str) {
    let bytes = doc(lines);
    let check = |err: BlockError, op: &str| {
        assert_eq!(err.line, line, "{op}: {err}");
        assert!(err.reason.contains(reason), "{op}: {err}");
        assert_eq!(err.to_string(), format!("line {line}: {}", err.reason));
    };
    check(find(&m(), &bytes).unwrap_err(), "find");
    check(upsert(&m(), Some(&bytes), "p").unwrap_err(), "upsert");
    check(remove(&m(), &bytes).unwrap_err(), "remove");
    // The same refusal with CRLF line endings.
    let crlf = String::from_utf8(bytes).unwrap().replace('\n', "\r\n");
    check(find(&m(), crlf.as_bytes()).unwrap_err(), "find crlf");
}

#[test]
fn upsert_refuses_to_append_inside_an_open_fence() {
    let bytes = doc(&["# Notes", "", "```sh", "echo hi", ""]);
    assert_eq!(find(&m(), &bytes).unwrap(), None);
    assert_eq!(remove(&m(), &bytes).unwrap(), None);
    let err = upsert(&m(), Some(&bytes), "p").unwrap_err();
    assert_eq!(err.line, 3);
    assert!(err.reason.contains("opens on line 3"), "{err}");
    // A closed fence is fine, including a longer closing run and trailing whitespace.
    let closed = doc(&["```sh", "echo", "````  ", "after"]);
    roundtrip(&closed, "p");
    // A closing line with text after it does not close; nor does a shorter run.
    let open = doc(&["````", "```", "```` x", "z"]);
    assert_eq!(upsert(&m(), Some(&open), "p").unwrap_err().line, 1);
    // Four spaces of indent is not a fence.
    roundtrip(&doc(&["    ```", "code"]), "p");
}

#[test]
fn fences_after_the_block_do_not_stop_a_refresh() {
    let first = upsert(&m(), Some(b"intro\n"), "one").unwrap().bytes;
    let mut edited = first.clone();
    edited.extend_from_slice(b"```\nunclosed code the user is typing\n");
    let up = upsert(&m(), Some(&edited), "two").unwrap();
    assert_eq!(up.action, UpsertAction::Refreshed);
    let removed = remove(&m(), &up.bytes).unwrap().unwrap();
    assert_eq!(
        removed.bytes,
        b"intro\n```\nunclosed code the user is typing\n"
    );
}

#[test]
fn fences_inside_the_body_are_ours_and_ignored() {
    let body = "Use this:\n```\n<!-- not ours -->\n";
    let bytes = roundtrip(b"# Project\n", body);
    let span = find(&m(), &bytes).unwrap().unwrap();
    assert_eq!(&bytes[span.body.clone()], body.as_bytes());
    // The user's text after END starts with fences closed.
    let mut edited = bytes.clone();
    edited.extend_from_slice(b"plain\n");
    assert_eq!(
        upsert(&m(), Some(&edited), body).unwrap().action,
        UpsertAction::Unchanged
    );
}

// ---------------------------------------------------------------------------------------------
// Not markers: user text.
// ---------------------------------------------------------------------------------------------

#[rstest]
#[case::prose_mention(b"We use agentworks-session-instructions blocks.\n".as_slice())]
#[case::inline_marker_after_text(b"see <!-- BEGIN agentworks-session-instructions created=true --> here\n".as_slice())]
#[case::other_namespace_block(b"<!-- BEGIN acme-session-instructions created=true -->\nx\n<!-- END acme-session-instructions -->\n".as_slice())]
#[case::longer_namespace(b"<!-- END my-agentworks-session-instructions -->\n".as_slice())]
#[case::other_namespace_altered(b"<!-- BEGIN acme-session-instructions created=maybe -->\n".as_slice())]
#[case::bom_not_at_start(b"x\n\xEF\xBB\xBF<!-- END agentworks-session-instructions -->\n".as_slice())]
#[case::html_comment(b"<!-- a comment -->\n".as_slice())]
fn user_text_that_is_not_a_marker(#[case] bytes: &[u8]) {
    assert_eq!(find(&m(), bytes).unwrap(), None);
    roundtrip(bytes, "prompt");
}

#[test]
fn overlapping_namespaces_stay_apart() {
    let a = Markers::new(&Namespace::new("a").unwrap());
    let long = Markers::new(&Namespace::new("a-session-instructions-b").unwrap());
    let with_long = upsert(&long, Some(b"top\n"), "long body").unwrap().bytes;
    assert_eq!(find(&a, &with_long).unwrap(), None);
    let both = upsert(&a, Some(&with_long), "short body").unwrap().bytes;
    assert!(find(&long, &both).unwrap().is_some());
    assert_eq!(remove(&a, &both).unwrap().unwrap().bytes, with_long);
    let default_in_works = Markers::new(&Namespace::new("works").unwrap());
    let agentworks = upsert(&m(), None, "x").unwrap().bytes;
    assert_eq!(find(&default_in_works, &agentworks).unwrap(), None);
}

// ---------------------------------------------------------------------------------------------
// Insert layout and round trips on awkward bytes.
// ---------------------------------------------------------------------------------------------

#[test]
fn insert_layout_lf() {
    let up = upsert(&m(), Some(b"abc"), "hello").unwrap();
    assert_eq!(
        up.bytes,
        format!("abc\n{B_FALSE}\nhello\n{END}\n").as_bytes()
    );
    let up = upsert(&m(), Some(b"abc\n"), "hello\n").unwrap();
    assert_eq!(
        up.bytes,
        format!("abc\n\n{B_FALSE}\nhello\n{END}\n").as_bytes()
    );
    let span = find(&m(), &up.bytes).unwrap().unwrap();
    assert_eq!(span.begin_line, 3);
    assert_eq!(span.end_line, 5);
    assert_eq!(span.range, 4..up.bytes.len());
    assert_eq!(&up.bytes[span.body], b"hello\n");
}

#[test]
fn insert_layout_crlf_converts_the_body() {
    let up = upsert(&m(), Some(b"# T\r\nline\r\n"), "a\nb\r\nc").unwrap();
    assert_eq!(
        up.bytes,
        format!("# T\r\nline\r\n\r\n{B_FALSE}\r\na\r\nb\r\nc\r\n{END}\r\n").as_bytes()
    );
    roundtrip(b"# T\r\nline\r\n", "a\nb\r\nc");
    // The style is the first terminator's.
    let up = upsert(&m(), Some(b"a\r\nb\nc"), "x").unwrap();
    assert!(
        up.bytes
            .ends_with(format!("c\r\n{B_FALSE}\r\nx\r\n{END}\r\n").as_bytes())
    );
    let up = upsert(&m(), Some(b"a\nb\r\n"), "x").unwrap();
    assert!(
        up.bytes
            .ends_with(format!("b\r\n\n{B_FALSE}\nx\n{END}\n").as_bytes())
    );
}

#[test]
fn text_ending_in_a_lone_cr_keeps_it() {
    let bytes = roundtrip(b"abc\r", "x");
    assert_eq!(bytes, format!("abc\r\n{B_FALSE}\nx\n{END}\n").as_bytes());
    roundtrip(b"a\r\nb\r", "x");
    roundtrip(b"\r", "x");
    roundtrip(b"\r\r\n\r", "x");
}

#[rstest]
#[case::empty_existing(b"".as_slice())]
#[case::no_final_newline(b"# Title\nsome text".as_slice())]
#[case::blank_lines(b"\n\n\n".as_slice())]
#[case::bom_only(b"\xEF\xBB\xBF".as_slice())]
#[case::bom_text(b"\xEF\xBB\xBF# Titel \xC3\xA4\r\n".as_slice())]
#[case::invalid_utf8(b"\xFF\xFE\xC3(\x80 broken \xED\xA0\x80\n".as_slice())]
#[case::nul_bytes(b"a\0b\n\0\0\0".as_slice())]
#[case::mixed(b"\0\r\n\xFF\r\r\n\n\xEF\xBB\xBF".as_slice())]
#[case::only_spaces(b"   ".as_slice())]
fn round_trip_on_awkward_bytes(#[case] original: &[u8]) {
    roundtrip(original, "Be brief.\nUse tabs.");
    roundtrip(original, "");
    roundtrip(original, "\u{0}nul and ```unclosed fence");
}

#[test]
fn empty_existing_file_is_not_created_by_us() {
    let up = upsert(&m(), Some(b""), "p").unwrap();
    assert!(!up.created);
    assert_eq!(up.bytes, format!("\n{B_FALSE}\np\n{END}\n").as_bytes());
    let removed = remove(&m(), &up.bytes).unwrap().unwrap();
    assert_eq!(removed.bytes, b"");
    assert!(!removed.created);
    assert!(!removed.now_empty);
}

#[test]
fn empty_body_renders_no_lines() {
    let up = upsert(&m(), None, "").unwrap();
    assert_eq!(up.bytes, format!("\n{B_TRUE}\n{END}\n").as_bytes());
    let span = find(&m(), &up.bytes).unwrap().unwrap();
    assert!(span.body.is_empty());
}

#[test]
fn bom_before_a_marker_on_line_one_still_counts() {
    let bytes = [
        b"\xEF\xBB\xBF".as_slice(),
        doc(&["{T}", "p", "{E}", ""]).as_slice(),
    ]
    .concat();
    let span = find(&m(), &bytes).unwrap().unwrap();
    assert_eq!((span.begin_line, span.end_line), (1, 3));
    assert_eq!(span.range, 3..bytes.len());
    let removed = remove(&m(), &bytes).unwrap().unwrap();
    assert_eq!(removed.bytes, b"\xEF\xBB\xBF");
    assert!(removed.created);
    assert!(!removed.now_empty, "the BOM is user text and stays");
    // An altered marker after a BOM is refused too.
    let altered = b"\xEF\xBB\xBF<!-- END agentworks-session-instructions--> \n";
    assert_eq!(find(&m(), altered).unwrap_err().line, 1);
}

// ---------------------------------------------------------------------------------------------
// Created files: removal deletes only when nothing else is left.
// ---------------------------------------------------------------------------------------------

#[test]
fn created_file_now_empty_vs_user_text_kept() {
    let up = upsert(&m(), None, "prompt").unwrap();
    assert_eq!(up.action, UpsertAction::Inserted);
    assert!(up.created);
    assert_eq!(up.bytes, format!("\n{B_TRUE}\nprompt\n{END}\n").as_bytes());
    let removed = remove(&m(), &up.bytes).unwrap().unwrap();
    assert!(removed.created);
    assert!(removed.now_empty);
    assert_eq!(removed.bytes, b"");

    // The user appended after END: kept, so the file stays.
    let mut appended = up.bytes.clone();
    appended.extend_from_slice(b"my notes\n");
    let removed = remove(&m(), &appended).unwrap().unwrap();
    assert!(removed.created);
    assert!(!removed.now_empty);
    assert_eq!(removed.bytes, b"my notes\n");

    // The user prepended a heading: every byte of it is kept, including its newline.
    let prepended = [b"# Mine\n".as_slice(), &up.bytes].concat();
    let removed = remove(&m(), &prepended).unwrap().unwrap();
    assert_eq!(removed.bytes, b"# Mine\n");
    // Text typed onto our blank line is a line of the user's: it keeps its line end.
    let prepended = [b"no newline\r".as_slice(), &up.bytes].concat();
    assert_eq!(
        remove(&m(), &prepended).unwrap().unwrap().bytes,
        b"no newline\r\n"
    );
}

// ---------------------------------------------------------------------------------------------
// Refresh.
// ---------------------------------------------------------------------------------------------

#[test]
fn refresh_replaces_only_the_body_and_keeps_text_after_end() {
    let first = upsert(&m(), Some(b"# Project\n"), "old prompt").unwrap();
    let mut edited = first.bytes.clone();
    edited.extend_from_slice(b"added during the session\n");
    let edited = [b"top line\n".as_slice(), &edited].concat();

    let same = upsert(&m(), Some(&edited), "old prompt").unwrap();
    assert_eq!(same.action, UpsertAction::Unchanged);
    assert_eq!(same.bytes, edited);

    let up = upsert(&m(), Some(&edited), "new prompt\nline two\n").unwrap();
    assert_eq!(up.action, UpsertAction::Refreshed);
    assert!(!up.created);
    assert_eq!(
        up.bytes,
        format!(
            "top line\n# Project\n\n{B_FALSE}\nnew prompt\nline two\n{END}\nadded during the session\n"
        )
        .as_bytes()
    );
    let removed = remove(&m(), &up.bytes).unwrap().unwrap();
    assert_eq!(
        removed.bytes,
        b"top line\n# Project\nadded during the session\n"
    );
}

#[test]
fn refresh_keeps_created_flag_and_block_style() {
    let created = upsert(&m(), None, "a").unwrap();
    let up = upsert(&m(), Some(&created.bytes), "b").unwrap();
    assert_eq!(up.action, UpsertAction::Refreshed);
    assert!(up.created);
    assert!(remove(&m(), &up.bytes).unwrap().unwrap().now_empty);

    // A CRLF block stays CRLF even if the user prepends LF text.
    let crlf = upsert(&m(), Some(b"x\r\n"), "a").unwrap().bytes;
    let edited = [b"lf\n".as_slice(), &crlf].concat();
    let up = upsert(&m(), Some(&edited), "b\nc").unwrap();
    assert_eq!(
        up.bytes,
        format!("lf\nx\r\n\r\n{B_FALSE}\r\nb\r\nc\r\n{END}\r\n").as_bytes()
    );
    assert_eq!(
        remove(&m(), &up.bytes).unwrap().unwrap().bytes,
        b"lf\nx\r\n"
    );
}

// ---------------------------------------------------------------------------------------------
// Blocks written by the earlier Go implementation.
// ---------------------------------------------------------------------------------------------

#[test]
fn go_style_block_with_blank_line_separator() {
    let go = doc(&["# Project", "", "{F}", "Go prompt", "{E}", ""]);
    let span = find(&m(), &go).unwrap().unwrap();
    assert_eq!(
        (span.begin_line, span.end_line, span.created),
        (3, 5, false)
    );
    // Exactly one terminator before BEGIN is ours.
    assert_eq!(remove(&m(), &go).unwrap().unwrap().bytes, b"# Project\n");
    let up = upsert(&m(), Some(&go), "new").unwrap();
    assert_eq!(up.action, UpsertAction::Refreshed);
    assert_eq!(up.bytes, doc(&["# Project", "", "{F}", "new", "{E}", ""]));
}

#[test]
fn go_style_created_block_at_offset_zero() {
    let go = doc(&["{T}", "Go prompt", "{E}", ""]);
    let span = find(&m(), &go).unwrap().unwrap();
    assert_eq!(span.range, 0..go.len());
    let removed = remove(&m(), &go).unwrap().unwrap();
    assert!(removed.now_empty);
    // Without a final newline after END.
    let go = doc(&["{T}", "Go prompt", "{E}"]);
    assert!(remove(&m(), &go).unwrap().unwrap().now_empty);
    // CRLF throughout, with two blank lines before.
    let go = doc(&["text", "", "", "{F}", "p", "{E}", "tail"]);
    let go = String::from_utf8(go).unwrap().replace('\n', "\r\n");
    let removed = remove(&m(), go.as_bytes()).unwrap().unwrap();
    assert_eq!(removed.bytes, b"text\r\n\r\ntail");
}

#[test]
fn go_style_lf_block_after_crlf_text_removes_only_the_lf() {
    let go = b"a\r\n\r\n<!-- BEGIN agentworks-session-instructions created=false -->\np\n<!-- END agentworks-session-instructions -->\n";
    assert_eq!(remove(&m(), go).unwrap().unwrap().bytes, b"a\r\n\r");
    // The CRLF block of the same file removes the whole CRLF separator.
    let go = b"a\r\n\r\n<!-- BEGIN agentworks-session-instructions created=false -->\r\np\r\n<!-- END agentworks-session-instructions -->\r\n";
    assert_eq!(remove(&m(), go).unwrap().unwrap().bytes, b"a\r\n");
}

// ---------------------------------------------------------------------------------------------
// Bodies.
// ---------------------------------------------------------------------------------------------

#[rstest]
#[case::exact_end("intro\n<!-- END agentworks-session-instructions -->\n", 2)]
#[case::exact_begin("<!-- BEGIN agentworks-session-instructions created=true -->", 1)]
#[case::altered("a\nb\n  <!-- agentworks-session-instructions -->  ", 3)]
#[case::crlf_end("a\r\n<!-- END agentworks-session-instructions -->\r\n", 2)]
#[case::double_cr("a\n<!-- END agentworks-session-instructions -->\r\r\n", 2)]
fn bodies_with_marker_lines_are_refused(#[case] body: &str, #[case] line: usize) {
    let err = validate_body(&m(), body).unwrap_err();
    assert_eq!(err.line, line, "{err}");
    assert!(err.reason.contains("session text"), "{err}");
    let up = upsert(&m(), Some(b"x\n"), body).unwrap_err();
    assert_eq!(up, err);
    assert!(upsert(&m(), None, body).is_err());
}

#[rstest]
#[case::empty("")]
#[case::prose("Mention agentworks-session-instructions freely.")]
#[case::other_namespace("<!-- END acme-session-instructions -->")]
#[case::fences("```\nunclosed")]
fn bodies_without_marker_lines_are_fine(#[case] body: &str) {
    validate_body(&m(), body).unwrap();
    roundtrip(b"# P\n", body);
}

// ---------------------------------------------------------------------------------------------
// Snapshots of the rendered block, one line per row, `\r` shown escaped.
// ---------------------------------------------------------------------------------------------

fn visible(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .split_inclusive('\n')
        .map(|line| format!("{line:?}\n"))
        .collect()
}

#[test]
fn snapshot_lf_file() {
    let up = upsert(
        &m(),
        Some(b"# Project\n\nRun `make test`.\n"),
        "You are in a session.\nBe brief.",
    )
    .unwrap();
    insta::assert_snapshot!("lf_file", visible(&up.bytes));
}

#[test]
fn snapshot_crlf_file() {
    let up = upsert(
        &m(),
        Some(b"# Project\r\n\r\nRun `make test`."),
        "You are in a session.\nBe brief.\n",
    )
    .unwrap();
    insta::assert_snapshot!("crlf_file", visible(&up.bytes));
}

#[test]
fn snapshot_created_file() {
    let up = upsert(&m(), None, "You are in a session.").unwrap();
    insta::assert_snapshot!("created_file", visible(&up.bytes));
}

#[rstest]
#[case::lf(b"# mine\n".as_slice())]
#[case::crlf(b"# mine\r\nsecond\r\n".as_slice())]
#[case::with_bom(b"\xEF\xBB\xBF# mine\n".as_slice())]
fn deleting_our_blank_line_keeps_the_final_newline(#[case] user: &[u8]) {
    let up = upsert(&m(), Some(user), "prompt").unwrap();
    // The user deletes the blank line we put before BEGIN (`sed -i '/^$/d'`).
    let term: &[u8] = if user.ends_with(b"\r\n") {
        b"\r\n"
    } else {
        b"\n"
    };
    let mut edited = user.to_vec();
    edited.extend_from_slice(&up.bytes[user.len() + term.len()..]);
    assert!(
        !edited
            .windows(2 * term.len())
            .any(|w| w == [term, term].concat())
    );
    let removed = remove(&m(), &edited).unwrap().unwrap();
    assert_eq!(removed.bytes, user, "the user's final newline is theirs");
    // A refresh after the edit keeps it too.
    let refreshed = upsert(&m(), Some(&edited), "another prompt").unwrap();
    assert_eq!(remove(&m(), &refreshed.bytes).unwrap().unwrap().bytes, user);
}

#[test]
fn text_without_a_final_newline_makes_the_line_end_ours() {
    let up = upsert(&m(), Some(b"# mine"), "prompt").unwrap();
    assert_eq!(
        up.bytes,
        format!("# mine\n{B_FALSE}\nprompt\n{END}\n").as_bytes()
    );
    assert!(
        up.joined,
        "the insertion says the line end before BEGIN is ours"
    );
    // Whatever the line before BEGIN comes to hold, its line end is ours.
    let mut edited = b"# mine, edited".to_vec();
    edited.extend_from_slice(&up.bytes[b"# mine".len()..]);
    assert_eq!(
        remove(&after(&up), &edited).unwrap().unwrap().bytes,
        b"# mine, edited"
    );
    // After text that ends its line, the block is not joined.
    assert!(!upsert(&m(), Some(b"# mine\n"), "prompt").unwrap().joined);
    assert!(!upsert(&m(), Some(b""), "prompt").unwrap().joined);
    assert!(!upsert(&m(), None, "prompt").unwrap().joined);
}

/// A block put after text without a final newline takes that line end when it goes, but a line
/// the user typed after the block keeps a line of its own: `*.log` and `/secret.env` stay two
/// patterns of an exclude file, two lines of AGENTS.md, in both engines and in CRLF files.
#[rstest]
#[case::exclude_lf(true, b"*.log".as_slice(), b"/secret.env\n".as_slice(), b"*.log\n/secret.env\n".as_slice())]
#[case::markdown_lf(
    false,
    b"no final newline",
    b"user line after block\n",
    b"no final newline\nuser line after block\n"
)]
#[case::markdown_crlf(
    false,
    b"# a\r\nno final newline",
    b"after",
    b"# a\r\nno final newline\r\nafter"
)]
fn a_line_typed_after_a_joined_block_keeps_its_own_line(
    #[case] exclude: bool,
    #[case] user: &[u8],
    #[case] typed: &[u8],
    #[case] expected: &[u8],
) {
    use projectfile_core::block::stream;
    let markers = if exclude {
        Markers::for_git_exclude(&Namespace::default())
    } else {
        m()
    };
    let up = upsert(&markers, Some(user), "/.gemini/").unwrap();
    assert!(up.joined);
    let markers = markers.with_joined(true);
    let mut file = up.bytes.clone();
    file.extend_from_slice(typed);
    assert_eq!(
        visible(&remove(&markers, &file).unwrap().unwrap().bytes),
        visible(expected)
    );
    // The streaming engine, a chunk at a time, gives the same bytes.
    let mut scan = stream::StreamScan::new(&markers);
    for chunk in file.chunks(7) {
        scan.feed(chunk).unwrap();
    }
    let scanned = scan.finish().unwrap();
    let current = &file[scanned.block.as_ref().unwrap().body.clone()];
    let plan = stream::plan_remove(&scanned, current, None).unwrap();
    assert_eq!(
        visible(&stream::apply(&plan.pieces, &file)),
        visible(expected)
    );
    // With nothing typed after it, the user's text comes back without a final newline.
    assert_eq!(remove(&markers, &up.bytes).unwrap().unwrap().bytes, user);
}

#[test]
fn git_exclude_markers_are_comments_and_round_trip() {
    let x = Markers::for_git_exclude(&Namespace::default());
    assert_eq!(
        x.begin_line(false),
        "# BEGIN agentworks-session-excludes created=false"
    );
    assert_eq!(x.end_line(), "# END agentworks-session-excludes");
    // An exclude file as `git init` writes it, with a line a Markdown scan would take for a fence.
    let user = b"# git ls-files --others --exclude-from=.git/info/exclude\n# Lines that start with '#' are comments.\n```\n*.log\n";
    let up = upsert(&x, Some(user), "/.cursor/\n/.agentworks-priors/").unwrap();
    assert_eq!(up.action, UpsertAction::Inserted);
    let text = String::from_utf8(up.bytes.clone()).unwrap();
    assert!(
        text.ends_with("\n\n# BEGIN agentworks-session-excludes created=false\n/.cursor/\n/.agentworks-priors/\n# END agentworks-session-excludes\n"),
        "{text}"
    );
    assert_eq!(remove(&x, &up.bytes).unwrap().unwrap().bytes, user);
    // The Markdown markers are another namespace's business entirely, and ours theirs.
    assert_eq!(find(&m(), &up.bytes).unwrap(), None);
    // An altered marker line is refused, naming its line.
    let altered = text.replace("created=false", "created=maybe");
    let error = remove(&x, altered.as_bytes()).unwrap_err();
    assert_eq!(error.line, 6, "{error}");
    // Another namespace's exclude block is the user's text.
    let other = Markers::for_git_exclude(&Namespace::new("acme").unwrap());
    let theirs = upsert(&other, Some(user), "/x").unwrap().bytes;
    let both = upsert(&x, Some(&theirs), "/y").unwrap().bytes;
    assert_eq!(remove(&x, &both).unwrap().unwrap().bytes, theirs);
}
