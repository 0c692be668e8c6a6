//! The stable-toolchain twin of the `guidance_imports` fuzz target (`fuzz/`): arbitrary bytes and
//! arbitrary trees (files with `@import` lines, symlinks, directories, unreadable files, session
//! blocks, comments) go into the resolver, which must never panic, must be deterministic, and must
//! keep its budget (except for a lone first source).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_core::guidance::MemoryFs;
use projectfile_core::guidance::fuzzing::{check_resolver, decode, path};
use proptest::prelude::*;

/// Contents worth meeting: imports of every shape, our session blocks (closed, open, doubled),
/// comments, fences, BOMs, invalid UTF-8.
fn content() -> impl Strategy<Value = Vec<u8>> {
    let pieces = prop_oneof![
        Just(b"@AGENTS.md\n".to_vec()),
        Just(b"@../AGENTS.md\n".to_vec()),
        Just(b"@./x.md\n".to_vec()),
        Just(b"@~/CLAUDE.md\n".to_vec()),
        Just(b"@/ws/a/b/x.md\n".to_vec()),
        Just(b"@b/x.md\n".to_vec()),
        Just(b"@\n".to_vec()),
        Just(b"<!-- BEGIN agentworks-session-instructions created=true -->\n".to_vec()),
        Just(b"<!-- END agentworks-session-instructions -->\n".to_vec()),
        Just(b"<!-- comment\n".to_vec()),
        Just(b"-->\n".to_vec()),
        Just(b"```\n".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"\xFF\xFE".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"text ".to_vec()),
        prop::collection::vec(any::<u8>(), 0..8),
    ];
    prop::collection::vec(pieces, 0..8).prop_map(|p| p.concat())
}

#[derive(Clone, Debug)]
enum Item {
    File(u8, u8, Vec<u8>),
    Link(u8, u8, String),
    Dir(u8, u8),
    Unreadable(u8, u8, u64),
}

fn tree() -> impl Strategy<Value = Vec<Item>> {
    let item = prop_oneof![
        6 => (any::<u8>(), any::<u8>(), content()).prop_map(|(a, b, c)| Item::File(a, b, c)),
        2 => (any::<u8>(), any::<u8>(), prop_oneof![
            Just("AGENTS.md".to_string()),
            Just("..".to_string()),
            Just("../..".to_string()),
            Just("/ws".to_string()),
            Just("self".to_string()),
            Just("/home/u/.claude/CLAUDE.md".to_string()),
            "[a-z./]{0,12}",
        ]).prop_map(|(a, b, t)| Item::Link(a, b, t)),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Item::Dir(a, b)),
        1 => (any::<u8>(), any::<u8>(), 0u64..(8 << 20)).prop_map(|(a, b, n)| Item::Unreadable(a, b, n)),
    ];
    prop::collection::vec(item, 0..24)
}

fn build(items: &[Item]) -> MemoryFs {
    let mut fs = MemoryFs::new();
    for item in items {
        match item {
            Item::File(a, b, c) => {
                fs.add_file(&path(*a, *b), c.clone());
            }
            Item::Link(a, b, t) => {
                fs.add_symlink(&path(*a, *b), t);
            }
            Item::Dir(a, b) => {
                fs.add_dir(&path(*a, *b));
            }
            Item::Unreadable(a, b, n) => {
                fs.add_unreadable(&path(*a, *b), *n);
            }
        }
    }
    fs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Arbitrary bytes, decoded exactly as the fuzz target decodes them (the same function).
    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..512), knobs in any::<[u8; 3]>()) {
        prop_assert_eq!(check_resolver(&decode(&data), knobs), Ok(()));
    }

    /// Structured trees whose files import each other, cycle, escape and carry session blocks.
    #[test]
    fn arbitrary_trees_never_panic(items in tree(), knobs in any::<[u8; 3]>()) {
        prop_assert_eq!(check_resolver(&build(&items), knobs), Ok(()));
    }
}
