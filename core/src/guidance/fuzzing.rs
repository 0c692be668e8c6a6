//! What the `guidance_imports` fuzz target (`fuzz/`) and its stable proptest twin
//! (`core/tests/guidance_fuzz_props.rs`) share: how bytes become a [`MemoryFs`] tree, and the
//! property the resolver must keep over any tree. Not part of the stable API.
//!
//! A tree is a list of records `[kind][path selector][path selector][length][content…]`. Paths
//! come from a small alphabet ([`path`]) so records meet each other (the same directories, the
//! instruction file names, `..`, the home directory); contents are raw bytes, optionally led by
//! an `@import` line naming another alphabet path, so imports chain, cycle and escape.

use super::{DiscoveryProfile, GuidanceRequest, MemoryFs, Walk, resolve, resolve_as};

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

/// The alphabet path two selector bytes name.
pub fn path(a: u8, b: u8) -> String {
    let dir = DIRS[usize::from(a) % DIRS.len()];
    let name = NAMES[usize::from(b) % NAMES.len()];
    format!("{}/{name}", dir.trim_end_matches('/'))
}

/// Decodes `data` as records into a tree.
pub fn decode(mut data: &[u8]) -> MemoryFs {
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

/// The property: over `fs`, with a budget of `knobs[0] * 16` bytes, `knobs[1] % 8` import hops
/// and the profile switches in `knobs[2]`'s bits, the seed's rules and a profile with imports,
/// subtree, comments and budgets are deterministic and keep the budget (except for a lone first
/// source). `Err` says which part broke; a panic inside the resolver is the other failure the
/// callers catch.
pub fn check_resolver(fs: &MemoryFs, knobs: [u8; 3]) -> Result<(), String> {
    let max = u64::from(knobs[0]) * 16;
    let request = GuidanceRequest::new("/ws")
        .with_working_dir("/ws/a")
        .with_home_dir("/home/u")
        .with_max_bytes(max)
        .with_max_import_hops(usize::from(knobs[1] % 8));
    let first = resolve(fs, &request);
    if first != resolve(fs, &request) {
        return Err("resolution is not deterministic".into());
    }
    if first.sources.len() > 1 && first.total_bytes > first.budget_bytes {
        return Err(format!(
            "{} bytes over a budget of {}",
            first.total_bytes, first.budget_bytes
        ));
    }
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
        walk: match (bit(1), bit(7)) {
            (_, true) => Walk::AboveRootToCwd,
            (true, false) => Walk::CwdUpToFsRoot,
            (false, false) => Walk::RootToCwd,
        },
        names_across_walk: bit(7),
        lossy_utf8: bit(7),
        marked_root_files: if bit(7) {
            vec![".qwen/QWEN.local.md".into()]
        } else {
            Vec::new()
        },
        include_subtree: bit(2),
        strip_html_comments: bit(3),
        dedupe_bodies: bit(4),
        truncate_at_budget: bit(5),
        budget_bytes: bit(6).then_some(max),
        exclusive_if_present: vec![("CLAUDE.md".into(), "AGENTS.md".into())],
        ..DiscoveryProfile::default()
    };
    if resolve_as(fs, &profile, &request) != resolve_as(fs, &profile, &request) {
        return Err("profile resolution is not deterministic".into());
    }
    Ok(())
}
