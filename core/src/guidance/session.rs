//! Detection of our own projected session blocks inside a guidance file, so the resolver can
//! report them apart from the user's guidance.
//!
//! A block is the lines, exactly,
//! `<!-- BEGIN {ns}-session-instructions created=true -->` (or `created=false`) …
//! `<!-- END {ns}-session-instructions -->`. This is a deliberately small, line-exact reader; the
//! full block engine lives in `crate::block`. Detection runs *before* HTML comments are stripped,
//! because stripping would remove the marker lines and leave the block body looking like user text.
//!
//! Rules:
//! - a marker line must match exactly; a single trailing `\r` (CRLF file) is allowed;
//! - outside a block, fences are tracked like the comment stripper does, and a marker line inside a
//!   fence is malformed (the block engine refuses such a file too);
//! - inside a block, fences are not tracked (the body is ours) and only the END line closes it;
//! - malformed: a BEGIN inside an open block, an END without a BEGIN, a BEGIN never closed, a marker
//!   inside a fence, or a line that starts like one of our markers but is not exactly one.
//!
//! A malformed file yields no ranges at all: we never guess which bytes are ours.

use std::ops::Range;

/// Why a file's session markers could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MalformedBlock {
    /// 1-based line of the offending marker.
    pub line: usize,
    /// One sentence.
    pub reason: &'static str,
}

/// One well-formed session block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionBlock {
    /// From the start of the BEGIN line to the end of the END line, its line break included.
    pub range: Range<usize>,
    /// The lines between the markers (untrimmed).
    pub body: Range<usize>,
    /// The BEGIN marker said `created=true`.
    pub created: bool,
}

/// The result of scanning one text for session blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionScan {
    /// The well-formed blocks, in order; empty when `malformed` is set.
    pub blocks: Vec<SessionBlock>,
    /// The first malformation found, if any.
    pub malformed: Option<MalformedBlock>,
}

enum Line {
    Begin(bool),
    End,
    Altered,
    Text,
}

fn classify(line: &str, begin_prefix: &str, end_line: &str) -> Line {
    let content = line.strip_suffix('\n').unwrap_or(line);
    let content = content.strip_suffix('\r').unwrap_or(content);
    if let Some(rest) = content.strip_prefix(begin_prefix) {
        return match rest {
            " created=true -->" => Line::Begin(true),
            " created=false -->" => Line::Begin(false),
            _ => Line::Altered,
        };
    }
    if content == end_line {
        return Line::End;
    }
    let trimmed = content.trim();
    if trimmed.starts_with(begin_prefix) || trimmed.starts_with(end_line.trim_end_matches(" -->")) {
        return Line::Altered;
    }
    Line::Text
}

/// Scans `text` for session blocks of namespace `namespace`.
pub fn scan_session_blocks(text: &str, namespace: &str) -> SessionScan {
    let begin_prefix = format!("<!-- BEGIN {namespace}-session-instructions");
    let end_line = format!("<!-- END {namespace}-session-instructions -->");
    let mut scan = SessionScan::default();
    if !text.contains(&begin_prefix) && !text.contains(&end_line[..end_line.len() - 4]) {
        return scan;
    }
    let malformed = |line: usize, reason: &'static str| SessionScan {
        blocks: Vec::new(),
        malformed: Some(MalformedBlock { line, reason }),
    };
    let mut in_fence = false;
    // (start of BEGIN line, start of body, created, BEGIN line number)
    let mut open: Option<(usize, usize, bool, usize)> = None;
    let mut offset = 0usize;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let number = index + 1;
        let start = offset;
        offset += line.len();
        let kind = classify(line, &begin_prefix, &end_line);
        if let Some((block_start, body_start, created, _)) = open {
            match kind {
                Line::End => {
                    scan.blocks.push(SessionBlock {
                        range: block_start..offset,
                        body: body_start..start,
                        created,
                    });
                    open = None;
                }
                Line::Begin(_) => return malformed(number, "a session block opens inside another"),
                Line::Altered => return malformed(number, "a session marker line was altered"),
                Line::Text => {}
            }
            continue;
        }
        if super::text::is_fence(line.trim()) {
            in_fence = !in_fence;
            continue;
        }
        match kind {
            Line::Text => {}
            _ if in_fence => {
                return malformed(number, "a session marker sits inside a fenced code block");
            }
            Line::Begin(created) => open = Some((start, offset, created, number)),
            Line::End => return malformed(number, "a session block ends without a beginning"),
            Line::Altered => return malformed(number, "a session marker line was altered"),
        }
    }
    if let Some((_, _, _, number)) = open {
        return malformed(number, "a session block is never closed");
    }
    scan
}

/// The byte ranges of the well-formed session blocks in `text` (each from the start of its BEGIN
/// line through the line break of its END line), or none when any marker is malformed.
pub fn session_block_ranges(text: &str, namespace: &str) -> Vec<Range<usize>> {
    scan_session_blocks(text, namespace)
        .blocks
        .into_iter()
        .map(|block| block.range)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: &str = "<!-- BEGIN agentworks-session-instructions created=true -->";
    const E: &str = "<!-- END agentworks-session-instructions -->";

    #[test]
    fn finds_blocks() {
        let text = format!("user\n{B}\nours\n{E}\ntail");
        let ranges = session_block_ranges(&text, "agentworks");
        assert_eq!(ranges.len(), 1);
        let cut = format!("{}{}", &text[..ranges[0].start], &text[ranges[0].end..]);
        assert_eq!(cut, "user\ntail");
        let scan = scan_session_blocks(&text, "agentworks");
        assert_eq!(&text[scan.blocks[0].body.clone()], "ours\n");
        assert!(scan.blocks[0].created);
    }

    #[test]
    fn crlf_and_other_namespace() {
        let text = "<!-- BEGIN x-session-instructions created=false -->\r\nbody\r\n<!-- END x-session-instructions -->\r\n";
        assert_eq!(session_block_ranges(text, "x"), vec![0..text.len()]);
        assert!(session_block_ranges(text, "agentworks").is_empty());
    }

    #[test]
    fn malformed_cases() {
        for (text, line) in [
            (format!("{B}\nbody"), 1),
            (format!("a\n{E}"), 2),
            (format!("{B}\n{B}\n{E}"), 2),
            (format!("```\n{B}\n{E}\n```"), 2),
            (format!(" {B}\nx\n{E}"), 1),
            (format!("{B}\nx\n{E} "), 3),
            (
                "<!-- BEGIN agentworks-session-instructions created=maybe -->".to_string(),
                1,
            ),
        ] {
            let scan = scan_session_blocks(&text, "agentworks");
            assert!(scan.blocks.is_empty(), "{text}");
            assert_eq!(scan.malformed.map(|m| m.line), Some(line), "{text}");
        }
    }

    #[test]
    fn fence_inside_block_does_not_matter() {
        let text = format!("{B}\n```\nunclosed\n{E}\nafter");
        assert_eq!(session_block_ranges(&text, "agentworks").len(), 1);
    }
}
