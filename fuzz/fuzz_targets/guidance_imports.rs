//! Fuzz target: the guidance resolver (imports, session blocks, comments, budgets, symlinks) over
//! a `MemoryFs` decoded from the input never panics, and is deterministic.
//!
//! The input is a list of records: `[kind][path selector][path selector][length][content…]`.
//! Paths are built from a small alphabet so records meet each other (the same directories, the
//! instruction file names, `..`, the home directory); contents are raw bytes, optionally led by an
//! `@import` line naming another alphabet path, so imports chain, cycle and escape.
#![no_main]

use libfuzzer_sys::fuzz_target;
use projectfile_core::guidance::{
    DiscoveryProfile, GuidanceRequest, MemoryFs, Walk, resolve, resolve_as,
};

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
                let target = String::from_utf8_lossy(content);
                fs.add_symlink(&p, &target);
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

fuzz_target!(|data: &[u8]| {
    let fs = decode(data);
    let max = data.first().map_or(32 * 1024, |b| u64::from(*b) * 16);
    let request = GuidanceRequest::new("/ws")
        .with_working_dir("/ws/a")
        .with_home_dir("/home/u")
        .with_max_bytes(max)
        .with_max_import_hops(usize::from(data.get(1).copied().unwrap_or(4) % 8));
    let first = resolve(&fs, &request);
    assert_eq!(
        first,
        resolve(&fs, &request),
        "resolution is not deterministic"
    );
    assert!(first.sources.len() <= 1 || first.total_bytes <= first.budget_bytes);
    let bit = |n: usize| data.get(2).is_some_and(|b| b & (1 << n) != 0);
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
    let as_cli = resolve_as(&fs, &profile, &request);
    assert_eq!(
        as_cli,
        resolve_as(&fs, &profile, &request),
        "not deterministic"
    );
});
