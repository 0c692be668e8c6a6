//! Promise 9: a shared file with malformed markers is refused, naming the file and line, and left
//! untouched.

use crate::Subject;
use crate::checks::block_targets;
use crate::fixture::Fixture;
use crate::tree::Tree;
use projectfile_core::Error;

/// The malformed files the engine must refuse, each with the line the error must name.
pub const MALFORMED: &[(&str, &str, usize)] = &[
    (
        "unterminated",
        "user text\n<!-- BEGIN agentworks-session-instructions created=false -->\nbody\nmore user text\n",
        2,
    ),
    (
        "two begins",
        "<!-- BEGIN agentworks-session-instructions created=false -->\n<!-- BEGIN agentworks-session-instructions created=false -->\nx\n<!-- END agentworks-session-instructions -->\n",
        2,
    ),
    (
        "end before begin",
        "a\n<!-- END agentworks-session-instructions -->\n<!-- BEGIN agentworks-session-instructions created=false -->\nx\n<!-- END agentworks-session-instructions -->\n",
        2,
    ),
    (
        "marker in a fence",
        "```\n<!-- BEGIN agentworks-session-instructions created=false -->\n```\n",
        2,
    ),
    (
        "altered marker",
        "a\n<!-- BEGIN agentworks-session-instructions created=perhaps -->\nx\n<!-- END agentworks-session-instructions -->\n",
        2,
    ),
];

/// Promise 9: malformed markers are refused with an error naming the file and line; the file is
/// left untouched and nothing else is projected.
pub fn malformed_markers_are_refused(subject: &Subject) {
    for target in block_targets(subject) {
        for (label, text, line) in MALFORMED {
            let fx = Fixture::new();
            fx.write(&target, text.as_bytes());
            let before = Tree::capture(&fx.workspace);
            let error = fx.acquire(subject, "x").expect_err(label);
            match &error {
                Error::Malformed {
                    path, line: got, ..
                } => {
                    assert!(path.ends_with(&target), "{label}: error names {path:?}");
                    assert_eq!(got, line, "{label}: wrong line in {error}");
                }
                other => panic!("{label}: expected a malformed-block error, got {other}"),
            }
            assert!(error.to_string().contains(&format!(":{line}:")), "{error}");
            assert_eq!(
                Tree::capture(&fx.workspace),
                before,
                "{label}: workspace changed"
            );
            fx.assert_no_ledger();
        }
    }
}
