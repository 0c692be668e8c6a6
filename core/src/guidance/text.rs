//! Line-level text rules of the seed: fence detection, block-level HTML comment stripping, and the
//! `@path` import target of one line.
//!
//! Lines are split with [`str::lines`] (a `\r` before each `\n` is dropped) and re-joined with `\n`
//! only when a rule actually has work to do; text without `<!--` (or without `@`) is returned
//! unchanged, byte for byte, as in the seed.

use std::borrow::Cow;

/// Whether a trimmed line opens or closes a fence. Seed semantics: any line starting with three
/// backticks or three tildes toggles, whatever the other fence's character or length.
pub(crate) fn is_fence(trimmed: &str) -> bool {
    trimmed.starts_with("```") || trimmed.starts_with("~~~")
}

/// Strips block-level HTML comments outside fenced code blocks.
///
/// Seed semantics, quirks included: a line whose trimmed text *starts* with `<!--` is dropped whole
/// (text after a closing `-->` on the same line is dropped too); when it does not close on that
/// line, every following line up to and including the one containing `-->` is dropped. Fence lines
/// are checked first, so a fence line inside an open comment is kept and toggles the fence.
/// Comments that start mid-line are kept.
pub(crate) fn strip_comments(text: &str) -> Cow<'_, str> {
    if !text.contains("<!--") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut first = true;
    let mut push = |line: &str| {
        if !first {
            out.push('\n');
        }
        first = false;
        out.push_str(line);
    };
    let mut in_fence = false;
    let mut in_comment = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if is_fence(trimmed) {
            in_fence = !in_fence;
            push(line);
            continue;
        }
        if in_fence {
            push(line);
            continue;
        }
        if in_comment {
            if trimmed.contains("-->") {
                in_comment = false;
            }
            continue;
        }
        if trimmed.starts_with("<!--") {
            if !trimmed.contains("-->") {
                in_comment = true;
            }
            continue;
        }
        push(line);
    }
    Cow::Owned(out)
}

/// The first import of `text` outside a fence: what a CLI that reads imports replaces with a
/// file's text.
pub(crate) fn first_import(text: &str) -> Option<&str> {
    let mut in_fence = false;
    for line in text.lines() {
        if is_fence(line.trim()) {
            in_fence = !in_fence;
        } else if !in_fence && let Some((_, path)) = import_target(line) {
            return Some(path);
        }
    }
    None
}

/// The import on a line: where its `@` is, and the path after it; or `None`.
///
/// Seed semantics: an import is `@` at the start of the line or after a space or tab, outside a
/// backtick code span (an even number of backticks before it), running to the next space or tab
/// (a backtick abandons it). A line carries at most one import: when several appear, the *last*
/// one is the candidate. The candidate must be non-empty and contain a `.`; otherwise the line has
/// no import at all.
pub(crate) fn import_target(line: &str) -> Option<(usize, &str)> {
    let mut ticks = 0usize;
    let mut candidate: Option<&str> = None;
    let mut collecting: Option<usize> = None;
    let mut prev = ' ';
    for (index, ch) in line.char_indices() {
        if ch == '`' {
            ticks += 1;
            collecting = None;
        } else if let Some(start) = collecting {
            if ch == ' ' || ch == '\t' {
                candidate = Some(&line[start..index]);
                collecting = None;
            }
        } else if ch == '@'
            && ticks.is_multiple_of(2)
            && (prev == ' ' || prev == '\t' || index == 0)
        {
            collecting = Some(index + ch.len_utf8());
        }
        prev = ch;
    }
    if let Some(start) = collecting
        && start < line.len()
    {
        candidate = Some(&line[start..]);
    }
    let value = candidate?;
    if value.is_empty() || !value.contains('.') {
        return None;
    }
    // The `@` just before the path (a subslice of `line`).
    let at = (value.as_ptr() as usize - line.as_ptr() as usize).checked_sub(1)?;
    Some((at, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_block_comments_outside_fences() {
        let text =
            "a\n<!-- note -->\nb\n<!--\nmulti\n-->\nc\n```\n<!-- kept -->\n```\nx <!-- mid --> y";
        assert_eq!(
            strip_comments(text),
            "a\nb\nc\n```\n<!-- kept -->\n```\nx <!-- mid --> y"
        );
        assert!(matches!(
            strip_comments("no comments\r\n"),
            Cow::Borrowed(_)
        ));
        assert_eq!(strip_comments("<!-- a --> tail\nkeep"), "keep");
    }

    #[test]
    fn the_first_import_outside_a_fence_is_found() {
        assert_eq!(
            first_import("Install @types/node.js now"),
            Some("types/node.js")
        );
        assert_eq!(first_import("```\n@a.md\n```\nsee @b.md"), Some("b.md"));
        assert_eq!(first_import("mail x@y.com, `@a.md`"), None);
    }

    #[test]
    fn import_targets() {
        let target = |line| import_target(line).map(|(_, path)| path);
        assert_eq!(import_target("see @a.md for more"), Some((4, "a.md")));
        assert_eq!(target("@docs/a.md"), Some("docs/a.md"));
        assert_eq!(target("see @a.md for more"), Some("a.md"));
        assert_eq!(target("mail x@y.com"), None);
        assert_eq!(target("`@a.md`"), None);
        assert_eq!(target("`code` @a.md"), Some("a.md"));
        assert_eq!(target("@a.md @b.md"), Some("b.md"));
        assert_eq!(target("@a.md @user"), None);
        assert_eq!(target("@noext"), None);
        assert_eq!(target("@a.md @ x"), None);
        assert_eq!(target("@a.md`x"), None);
        assert_eq!(target("\t@a.md"), Some("a.md"));
    }
}
