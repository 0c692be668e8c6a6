//! Promise 1: the bytes of a shared file outside our block never change; acquire then release
//! gives the file back byte for byte, whatever its line endings and encoding.

use crate::Subject;
use crate::checks::block_targets;
use crate::fixture::Fixture;
use crate::fixture::assert_session_text_visible;
use crate::tree::Tree;

/// User files that must survive byte for byte.
pub const TRICKY_CONTENTS: &[(&str, &[u8])] = &[
    ("lf", b"# Rules\n\nUse tabs.\n"),
    ("crlf", b"# Rules\r\n\r\nUse tabs.\r\n"),
    ("no final newline", b"# Rules\nUse tabs."),
    ("utf-8 bom", b"\xEF\xBB\xBF# Rules\nUse tabs.\n"),
    ("invalid utf-8", b"# R\xFFules\n\xC3\x28 broken\n"),
    ("nul bytes", b"a\0b\nc\0\n"),
    ("empty", b""),
    ("trailing blank lines", b"text\n\n\n"),
    ("lone cr", b"old mac\rstyle\r"),
];

/// Promise 1: bytes outside our block never change; acquire then release gives the file back.
pub fn user_bytes_round_trip(subject: &Subject) {
    for target in block_targets(subject) {
        for (label, bytes) in TRICKY_CONTENTS {
            let fx = Fixture::new();
            fx.write(&target, bytes);
            let before = Tree::capture(&fx.workspace);
            let receipt = fx.acquire(subject, "Session text: be brief.").unwrap();
            assert_session_text_visible(&fx, &receipt, "Session text: be brief.");
            assert!(fx.release(&receipt.token));
            assert_eq!(
                Tree::capture(&fx.workspace),
                before,
                "{target} ({label}) changed"
            );
            fx.assert_no_ledger();
        }
    }
}
