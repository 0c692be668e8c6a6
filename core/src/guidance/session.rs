//! Detection of our own projected session blocks inside a guidance file, so the resolver can
//! report them apart from the user's guidance.
//!
//! The block engine's own scanner ([`crate::block::find_all`]) reads them, so the resolver and
//! the engine agree on every line: what a block is, which marker lines are altered, where fenced
//! code hides a marker. Detection runs *before* HTML comments are stripped, because stripping would
//! remove the marker lines and leave the block body looking like user text. Unlike the engine, a
//! reader accepts several blocks of one namespace in a file.
//!
//! A malformed file yields no ranges at all: we never guess which bytes are ours.

use std::ops::Range;

use crate::block::{Markers, find_all};
use crate::plan::Namespace;

/// Why a file's session markers could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MalformedBlock {
    /// 1-based line of the offending marker.
    pub line: usize,
    /// One sentence.
    pub reason: String,
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

/// Scans `text` for session blocks of namespace `namespace` (none for a name that is not a valid
/// namespace: no marker line can name it).
pub fn scan_session_blocks(text: &str, namespace: &str) -> SessionScan {
    let Ok(namespace) = Namespace::new(namespace) else {
        return SessionScan::default();
    };
    match find_all(&Markers::new(&namespace), text.as_bytes()) {
        Ok(spans) => SessionScan {
            blocks: spans
                .into_iter()
                .map(|span| SessionBlock {
                    range: span.lines,
                    body: span.body,
                    created: span.created,
                })
                .collect(),
            malformed: None,
        },
        Err(e) => SessionScan {
            blocks: Vec::new(),
            malformed: Some(MalformedBlock {
                line: e.line,
                reason: e.reason,
            }),
        },
    }
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
