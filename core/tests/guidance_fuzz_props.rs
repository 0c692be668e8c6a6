//! The stable-toolchain twin of the `guidance_imports` fuzz target (`fuzz/`): arbitrary bytes and
//! arbitrary trees (files with `@import` lines, symlinks, directories, unreadable files, session
//! blocks, comments) go into the resolver, which must never panic, must be deterministic, and must
//! keep its budget (except for a lone first source).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_core::guidance::{
    DiscoveryProfile, GuidanceRequest, MemoryFs, Walk, resolve, resolve_as,
};
use proptest::prelude::*;

const DIRS: &[&str] = &[
    "/ws",
    "/ws/a",
    "/ws/a/b",
    "/ws/.claude",
    "/home/u",
    "/home/u/.claude",
    "/",
    "/ws/node_modules",
];
const NAMES: &[&str] = &[
    "AGENTS.md",
    "CLAUDE.md",
    "AGENTS.override.md",
    "x.md",
    "..",
    "b",
    "GEMINI.md",
    ".cursorrules",
];

fn path(a: u8, b: u8) -> String {
    let dir = DIRS[usize::from(a) % DIRS.len()];
    let name = NAMES[usize::from(b) % NAMES.len()];
    format!("{}/{name}", dir.trim_end_matches('/'))
}

/// The same decoding as the fuzz target: `[kind][a][b][len][content…]` records.
fn decode(mut data: &[u8]) -> MemoryFs {
    let mut fs = MemoryFs::new();
    while let [kind, a, b, len, rest @ ..] = data {
        let len = usize::from(*len).min(rest.len());
        let (content, tail) = rest.split_at(len);
        data = tail;
        let p = path(*a, *b);
        match kind % 6 {
            0 | 1 => {
                fs.add_file(&p, content.to_vec());
            }
            2 => {
                let mut text = format!("@{}\n", path(*b, *a)).into_bytes();
                text.extend_from_slice(content);
                fs.add_file(&p, text);
            }
            3 => {
                fs.add_symlink(&p, &String::from_utf8_lossy(content));
            }
            4 => {
                fs.add_dir(&p);
            }
            _ => {
                fs.add_unreadable(&p, (len as u64) << 16);
            }
        }
    }
    fs
}

fn check(fs: &MemoryFs, knobs: &[u8; 3]) {
    let max = u64::from(knobs[0]) * 16;
    let request = GuidanceRequest::new("/ws")
        .with_working_dir("/ws/a")
        .with_home_dir("/home/u")
        .with_max_bytes(max)
        .with_max_import_hops(usize::from(knobs[1] % 8));
    let first = resolve(fs, &request);
    assert_eq!(
        first,
        resolve(fs, &request),
        "resolution is not deterministic"
    );
    assert!(first.sources.len() <= 1 || first.total_bytes <= first.budget_bytes);
    let bit = |n: u8| knobs[2] & (1 << n) != 0;
    let profile = DiscoveryProfile {
        per_directory: vec![
            "AGENTS.override.md".into(),
            "AGENTS.md".into(),
            "CLAUDE.md".into(),
        ],
        first_wins: bit(0),
        root_markers: vec![".git".into()],
        imports: true,
        user_files: vec![".claude/CLAUDE.md".into()],
        extra_files: vec![".cursor/rules/*.mdc".into(), ".cursorrules".into()],
        walk: if bit(1) {
            Walk::CwdUpToFsRoot
        } else {
            Walk::RootToCwd
        },
        include_subtree: bit(2),
        strip_html_comments: bit(3),
        dedupe_bodies: bit(4),
        truncate_at_budget: bit(5),
        budget_bytes: bit(6).then_some(max),
        exclusive_if_present: vec![("CLAUDE.md".into(), "AGENTS.md".into())],
        ..DiscoveryProfile::default()
    };
    let as_cli = resolve_as(fs, &profile, &request);
    assert_eq!(as_cli, resolve_as(fs, &profile, &request));
}

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

    /// Arbitrary bytes, decoded exactly as the fuzz target decodes them.
    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..512), knobs in any::<[u8; 3]>()) {
        check(&decode(&data), &knobs);
    }

    /// Structured trees whose files import each other, cycle, escape and carry session blocks.
    #[test]
    fn arbitrary_trees_never_panic(items in tree(), knobs in any::<[u8; 3]>()) {
        check(&build(&items), &knobs);
    }
}
