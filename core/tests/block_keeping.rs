//! Property and example tests of the block engine's undo rule (docs/promises.md, promise 2):
//! lines the user writes inside our block are told from ours by a line diff against the session
//! texts we wrote, and survive a release and a refresh in order, just before where the block
//! was; our lines go; a body too large to diff is kept whole.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_core::Namespace;
use projectfile_core::block::{
    DIFF_BUDGET, Markers, UpsertAction, find, holds_whole, remove_keeping, upsert, upsert_keeping,
    user_lines, validate_body,
};
use proptest::prelude::*;

fn m() -> Markers {
    Markers::new(&Namespace::default())
}

/// The user's text around the block: no marker lines, no fences, awkward bytes.
fn user_text() -> impl Strategy<Value = Vec<u8>> {
    let part = prop_oneof![
        3 => "[a-z #]{0,12}".prop_map(String::into_bytes),
        2 => Just(b"\n".to_vec()),
        2 => Just(b"\r\n".to_vec()),
        1 => Just(b"\xEF\xBB\xBF".to_vec()),
        1 => Just(b"\xFF\0".to_vec()),
    ];
    prop::collection::vec(part, 0..8).prop_map(|parts| parts.concat())
}

/// A session text: lines of letters (never `user:`).
fn session_text() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-z ]{0,10}", 0..8).prop_map(|lines| lines.join("\n"))
}

/// Lines the user writes, each recognisably theirs.
fn user_written() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-z]{1,6}", 1..5)
        .prop_map(|words| words.into_iter().map(|w| format!("user: {w}\n")).collect())
}

/// `file` with `lines` inserted among the body lines of its block at the given positions, and
/// the user's lines in the order they now stand.
fn write_inside_ordered(file: &[u8], lines: &[String], at: &[usize]) -> (Vec<u8>, Vec<String>) {
    let edited = write_inside(file, lines, at);
    let span = find(&m(), &edited).unwrap().unwrap();
    let order = edited[span.body.clone()]
        .split_inclusive(|&b| b == b'\n')
        .filter(|line| line.starts_with(b"user: "))
        .map(|line| String::from_utf8_lossy(line).into_owned())
        .collect();
    (edited, order)
}

/// `file` with `lines` inserted among the body lines of its block at the given positions.
fn write_inside(file: &[u8], lines: &[String], at: &[usize]) -> Vec<u8> {
    let span = find(&m(), file).unwrap().unwrap();
    let body = &file[span.body.clone()];
    let mut body_lines: Vec<Vec<u8>> = body
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    for (line, pos) in lines.iter().zip(at) {
        let pos = pos % (body_lines.len() + 1);
        body_lines.insert(pos, line.clone().into_bytes());
    }
    [
        &file[..span.body.start],
        &body_lines.concat(),
        &file[span.body.end..],
    ]
    .concat()
}

/// What the user's text becomes with `lines` kept after it.
fn expected(user: &[u8], lines: &[String]) -> Vec<u8> {
    let kept: Vec<u8> = lines.concat().into_bytes();
    let glue: &[u8] = if user.is_empty() || user == b"\xEF\xBB\xBF" || user.ends_with(b"\n") {
        b""
    } else if first_terminator_is_crlf(user) {
        b"\r\n"
    } else {
        b"\n"
    };
    [user, glue, &kept].concat()
}

fn first_terminator_is_crlf(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .position(|&b| b == b'\n')
        .is_some_and(|i| i > 0 && bytes[i - 1] == b'\r')
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Lines written inside the block survive the release, in order, where the block was.
    #[test]
    fn user_lines_survive_the_release(
        user in user_text(),
        ours in session_text(),
        lines in user_written(),
        at in prop::collection::vec(0usize..20, 5),
    ) {
        prop_assume!(validate_body(&m(), &ours).is_ok());
        let up = upsert(&m(), Some(&user), &ours).unwrap();
        let mk = m().with_joined(up.joined);
        let file = up.bytes;
        let (edited, lines) = write_inside_ordered(&file, &lines, &at);
        let removed = remove_keeping(&mk, &edited, Some(&[ours.as_str()])).unwrap().unwrap();
        prop_assert_eq!(&removed.bytes, &expected(&user, &lines));
        prop_assert_eq!(removed.kept_lines, lines.len());
        prop_assert!(!removed.now_empty);
    }

    /// A refresh moves them out of the block; the next release keeps them too.
    #[test]
    fn user_lines_survive_a_refresh(
        user in user_text(),
        ours in session_text(),
        next in session_text(),
        lines in user_written(),
        at in prop::collection::vec(0usize..20, 5),
    ) {
        prop_assume!(validate_body(&m(), &ours).is_ok() && validate_body(&m(), &next).is_ok());
        let up = upsert(&m(), Some(&user), &ours).unwrap();
        let mk = m().with_joined(up.joined);
        let file = up.bytes;
        let (edited, lines) = write_inside_ordered(&file, &lines, &at);
        let refreshed = upsert_keeping(&mk, Some(&edited), &next, Some(&[ours.as_str()])).unwrap();
        prop_assert_eq!(refreshed.kept_lines, lines.len());
        let span = find(&mk, &refreshed.bytes).unwrap().unwrap();
        let body = String::from_utf8_lossy(&refreshed.bytes[span.body.clone()]).into_owned();
        prop_assert!(!body.contains("user: "), "{}", body);
        let removed = remove_keeping(&mk, &refreshed.bytes, Some(&[next.as_str()])).unwrap().unwrap();
        prop_assert_eq!(&removed.bytes, &expected(&user, &lines));
    }

    /// A block body holds the text we wrote whole, whatever lines the user writes around and
    /// between its lines; with one of its lines deleted (one no other line of it repeats), or
    /// changed, it does not.
    #[test]
    fn a_body_holds_our_text_whole_until_a_line_of_it_goes(
        user in user_text(),
        ours in session_text(),
        lines in user_written(),
        at in prop::collection::vec(0usize..20, 5),
        cut in 0usize..8,
    ) {
        prop_assume!(validate_body(&m(), &ours).is_ok());
        let file = upsert(&m(), Some(&user), &ours).unwrap().bytes;
        let edited = write_inside(&file, &lines, &at);
        let span = find(&m(), &edited).unwrap().unwrap();
        let body = &edited[span.body.clone()];
        let text_lines: Vec<&str> = ours.strip_suffix('\n').unwrap_or(&ours).split('\n').collect();
        prop_assert_eq!(holds_whole(body, &ours), !ours.is_empty());
        // A line of ours that occurs once goes: the body no longer holds the text.
        let cut = cut % text_lines.len();
        let line = text_lines[cut];
        prop_assume!(!ours.is_empty() && text_lines.iter().filter(|l| **l == line).count() == 1);
        let mut removed = false;
        let without: Vec<u8> = body
            .split_inclusive(|&b| b == b'\n')
            .filter(|l| {
                let key = l.strip_suffix(b"\n").unwrap_or(l);
                let key = key.strip_suffix(b"\r").unwrap_or(key);
                let drop = !removed && key == line.as_bytes();
                removed |= drop;
                !drop
            })
            .flat_map(<[u8]>::to_vec)
            .collect();
        prop_assert!(!holds_whole(&without, &ours));
    }

    /// Lines of ours the user deleted are simply gone: nothing is kept, nothing is invented.
    #[test]
    fn deleted_lines_of_ours_leave_nothing(
        user in user_text(),
        ours in session_text(),
        drop in prop::collection::vec(any::<bool>(), 8),
    ) {
        prop_assume!(validate_body(&m(), &ours).is_ok());
        let up = upsert(&m(), Some(&user), &ours).unwrap();
        let mk = m().with_joined(up.joined);
        let file = up.bytes;
        let span = find(&m(), &file).unwrap().unwrap();
        let kept_body: Vec<u8> = file[span.body.clone()]
            .split_inclusive(|&b| b == b'\n')
            .zip(drop.iter().chain(std::iter::repeat(&false)))
            .filter(|(_, d)| !**d)
            .flat_map(|(line, _)| line.to_vec())
            .collect();
        let edited = [&file[..span.body.start], &kept_body, &file[span.body.end..]].concat();
        let removed = remove_keeping(&mk, &edited, Some(&[ours.as_str()])).unwrap().unwrap();
        prop_assert_eq!(&removed.bytes, &user);
        prop_assert_eq!(removed.kept_lines, 0);
    }
}

#[test]
fn an_earlier_text_of_ours_is_recognised_too() {
    let up = upsert(&m(), Some(b"top\n"), "old line\n").unwrap();
    let mk = m().with_joined(up.joined);
    let file = up.bytes;
    // A crash left the older text in the block while the ledger lists the new one first.
    let removed = remove_keeping(&mk, &file, Some(&["new line", "old line\n"]))
        .unwrap()
        .unwrap();
    assert_eq!(removed.bytes, b"top\n");
    assert_eq!(removed.kept_lines, 0);
}

#[test]
fn without_a_record_the_whole_body_counts_as_ours() {
    let up = upsert(&m(), Some(b"top\n"), "ours\n").unwrap();
    let mk = m().with_joined(up.joined);
    let file = up.bytes;
    let edited = write_inside(&file, &["user: mine\n".to_string()], &[0]);
    let removed = remove_keeping(&mk, &edited, None).unwrap().unwrap();
    assert_eq!(removed.bytes, b"top\n");
}

#[test]
fn a_created_file_keeps_the_users_lines_and_is_not_removed() {
    let up = upsert(&m(), None, "ours").unwrap();
    let mk = m().with_joined(up.joined);
    let file = up.bytes;
    let edited = write_inside(&file, &["user: notes\n".to_string()], &[1]);
    let removed = remove_keeping(&mk, &edited, Some(&["ours"]))
        .unwrap()
        .unwrap();
    assert_eq!(removed.bytes, b"user: notes\n");
    assert!(!removed.now_empty);
    assert!(removed.created);
}

#[test]
fn crlf_and_a_missing_final_newline_are_kept_exact() {
    let up = upsert(&m(), Some(b"a\r\nb"), "x\ny").unwrap();
    let mk = m().with_joined(up.joined);
    let file = up.bytes;
    let edited = write_inside(&file, &["user: z\r\n".to_string()], &[1]);
    let removed = remove_keeping(&mk, &edited, Some(&["x\ny"]))
        .unwrap()
        .unwrap();
    assert_eq!(removed.bytes, b"a\r\nb\r\nuser: z\r\n");
}

#[test]
fn a_block_without_a_separator_keeps_the_users_lines_on_refresh() {
    // BEGIN at byte 0, with no blank line before it (the user deleted it).
    let file = b"<!-- BEGIN agentworks-session-instructions created=false -->\nours\nuser: mine\n<!-- END agentworks-session-instructions -->\ntail\n";
    let up = upsert_keeping(&m(), Some(file), "next", Some(&["ours"])).unwrap();
    assert_eq!(up.action, UpsertAction::Refreshed);
    let removed = remove_keeping(&m(), &up.bytes, Some(&["next"]))
        .unwrap()
        .unwrap();
    assert_eq!(removed.bytes, b"user: mine\ntail\n");
}

#[test]
fn a_changed_line_of_ours_is_the_users() {
    let up = upsert(&m(), Some(b""), "one\ntwo\nthree").unwrap();
    let mk = m().with_joined(up.joined);
    let file = up.bytes;
    let text = String::from_utf8(file)
        .unwrap()
        .replace("two\n", "two, edited\n");
    let removed = remove_keeping(&mk, text.as_bytes(), Some(&["one\ntwo\nthree"]))
        .unwrap()
        .unwrap();
    assert_eq!(removed.bytes, b"two, edited\n");
}

#[test]
fn a_body_too_large_to_diff_is_kept_whole() {
    // Our lines in reverse order, between two lines of the user's: only one of ours can be
    // matched, so an exact diff keeps all but one line; past the budget the body is kept whole.
    let lines = |n: usize| -> (String, Vec<u8>) {
        let ours: String = (0..n).map(|i| format!("ours {i}\n")).collect();
        let reversed: String = (0..n).rev().map(|i| format!("ours {i}\n")).collect();
        (ours, format!("head\n{reversed}tail\n").into_bytes())
    };
    let (ours, body) = lines(1100);
    const { assert!(1102 * 1100 > DIFF_BUDGET) };
    assert_eq!(user_lines(&body, &[ours.as_str()]).len(), 1102);
    let (ours, body) = lines(500);
    const { assert!(502 * 500 < DIFF_BUDGET) };
    assert_eq!(user_lines(&body, &[ours.as_str()]).len(), 501);
}
