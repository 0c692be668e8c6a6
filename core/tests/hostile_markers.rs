//! Hostile marker lines in a real workspace, through the projector and the Codex provider
//! (docs/promises.md, promise 9). Each test's name states the outcome; every refusal is an error naming
//! the file and the line, with the workspace left byte for byte as it was and no ledger kept.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

use projectfile_conformance::{Fixture, Subject, Tree};
use projectfile_core::Error;
use projectfile_core::guidance::{GuidanceRequest, StdFs, resolve};

const BEGIN_F: &str = "<!-- BEGIN agentworks-session-instructions created=false -->";
const BEGIN_T: &str = "<!-- BEGIN agentworks-session-instructions created=true -->";
const END: &str = "<!-- END agentworks-session-instructions -->";

fn codex() -> Subject {
    Subject::new(projectfile_codex::Codex)
}

/// Acquire must refuse `text` with a malformed-block error at `line`, leaving everything as it was.
fn assert_refused(text: &[u8], line: usize) -> String {
    let fx = Fixture::new();
    fx.write("AGENTS.md", text);
    let before = Tree::capture(&fx.workspace);
    let error = fx.acquire(&codex(), "session").expect_err("refused");
    let message = error.to_string();
    match &error {
        Error::Malformed {
            path, line: got, ..
        } => {
            assert!(path.ends_with("AGENTS.md"), "{message}");
            assert_eq!(*got, line, "{message}");
        }
        other => panic!("expected a malformed-block error, got {other}"),
    }
    assert!(message.contains(&format!("AGENTS.md:{line}:")), "{message}");
    assert!(message.contains("left untouched"), "{message}");
    assert_eq!(message.lines().count(), 1, "one sentence: {message}");
    assert_eq!(
        Tree::capture(&fx.workspace),
        before,
        "the workspace changed"
    );
    fx.assert_no_ledger();
    // The resolver reads the same file without panicking and keeps the user's text as guidance.
    let resolution = resolve(
        &StdFs,
        &GuidanceRequest::new(fx.workspace.to_str().unwrap()),
    );
    assert!(!resolution.sources.is_empty() || !resolution.omitted.is_empty());
    message
}

#[test]
fn unterminated_block_with_user_text_below_is_refused_at_its_begin_line() {
    let text = format!("# Rules\n{BEGIN_F}\nsession text\n\n## User section below\nkeep me\n");
    let message = assert_refused(text.as_bytes(), 2);
    assert!(
        message.contains("unterminated") || message.contains("no END"),
        "{message}"
    );
}

#[test]
fn two_begins_and_one_end_are_refused_at_the_second_begin() {
    let text = format!("top\n{BEGIN_F}\na\n{BEGIN_T}\nb\n{END}\nbottom\n");
    assert_refused(text.as_bytes(), 4);
}

#[test]
fn end_before_begin_is_refused_at_the_stray_end() {
    let text = format!("top\n{END}\nmiddle\n{BEGIN_F}\nx\n{END}\n");
    assert_refused(text.as_bytes(), 2);
}

#[test]
fn lone_end_is_refused() {
    assert_refused(format!("a\nb\n{END}\n").as_bytes(), 3);
}

#[test]
fn marker_with_trailing_spaces_is_refused_as_altered() {
    let text = format!("top\n{BEGIN_F}  \nx\n{END}\n");
    let message = assert_refused(text.as_bytes(), 2);
    assert!(message.contains("altered"), "{message}");
}

#[test]
fn marker_with_leading_space_is_refused_as_altered() {
    let text = format!("top\n{BEGIN_F}\nx\n {END}\n");
    assert_refused(text.as_bytes(), 4);
}

#[test]
fn marker_with_trailing_tab_and_crlf_is_refused_as_altered() {
    let text = format!("top\r\n{BEGIN_F}\t\r\nx\r\n{END}\r\n");
    assert_refused(text.as_bytes(), 2);
}

#[test]
fn marker_inside_a_code_fence_is_refused() {
    let text = format!("# Docs\n\n```markdown\n{BEGIN_F}\nexample\n{END}\n```\n");
    let message = assert_refused(text.as_bytes(), 4);
    assert!(
        message.contains("fence") || message.contains("code"),
        "{message}"
    );
}

#[test]
fn marker_inside_a_tilde_fence_is_refused() {
    let text = format!("~~~\n{END}\n~~~\n");
    assert_refused(text.as_bytes(), 2);
}

#[test]
fn file_ending_inside_an_open_fence_is_refused_at_the_fence() {
    // No block yet, but appending one would put it inside the user's code block.
    assert_refused(b"# Rules\n```sh\necho unclosed\n", 2);
}

#[test]
fn crlf_markers_are_recognised_refreshed_and_removed_leaving_the_crlf_bytes_exact() {
    // A block left by the earlier implementation (or a crash) in a CRLF file, no lease recorded:
    // it is ours, so a start refreshes it in place and the last release takes it out.
    let fx = Fixture::new();
    let user = b"# Rules\r\nUse tabs.\r\n".to_vec();
    let mut text = user.clone();
    text.extend_from_slice(format!("\r\n{BEGIN_F}\r\nold session\r\n{END}\r\n").as_bytes());
    fx.write("AGENTS.md", &text);
    let receipt = fx.acquire(&codex(), "new session").unwrap();
    let now = fx.read("AGENTS.md").unwrap();
    let expected = [
        user.as_slice(),
        format!("\r\n{BEGIN_F}\r\nnew session\r\n{END}\r\n").as_bytes(),
    ]
    .concat();
    assert_eq!(
        String::from_utf8_lossy(&now),
        String::from_utf8_lossy(&expected)
    );
    assert!(fx.release(&receipt.token));
    assert_eq!(fx.read("AGENTS.md").unwrap(), user);
    fx.assert_no_ledger();
}

#[test]
fn crlf_user_file_gets_a_crlf_block_and_round_trips() {
    let fx = Fixture::new();
    let user = b"line one\r\nline two".to_vec();
    fx.write("AGENTS.md", &user);
    let receipt = fx.acquire(&codex(), "a\nb").unwrap();
    let now = String::from_utf8(fx.read("AGENTS.md").unwrap()).unwrap();
    assert!(
        now.contains(&format!("\r\n{BEGIN_F}\r\na\r\nb\r\n{END}\r\n")),
        "{now:?}"
    );
    assert!(fx.release(&receipt.token));
    assert_eq!(fx.read("AGENTS.md").unwrap(), user);
}

#[test]
fn marker_lines_of_another_namespace_are_user_text_and_survive() {
    let fx = Fixture::new();
    let user = "<!-- BEGIN acme-session-instructions created=true -->\ntheirs\n<!-- END acme-session-instructions -->\n";
    fx.write("AGENTS.md", user.as_bytes());
    let receipt = fx.acquire(&codex(), "ours").unwrap();
    assert!(fx.release(&receipt.token));
    assert_eq!(fx.read("AGENTS.md").unwrap(), user.as_bytes());
}

#[test]
fn a_prompt_carrying_our_marker_line_is_refused_before_anything_is_touched() {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"user\n");
    let before = Tree::capture(&fx.workspace);
    let error = fx
        .acquire(&codex(), &format!("hello\n{END}\ninjected"))
        .expect_err("refused");
    assert!(matches!(error, Error::Invalid { .. }), "{error}");
    assert!(error.to_string().contains("line 2"), "{error}");
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}
