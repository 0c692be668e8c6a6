//! Property tests of the guidance resolver over random `MemoryFs` trees: the budget is never
//! exceeded except by a lone first source, sources come in scope-then-depth order, no two sources
//! share a body, resolution is deterministic, and adding `ln -s AGENTS.md CLAUDE.md` everywhere
//! changes no source.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use projectfile_core::guidance::{
    CappedRead, EntryKind, FsEntry, FsStat, GuidanceFs, GuidanceRequest, GuidanceResolution,
    GuidanceScope, MemoryFs, resolve,
};
use proptest::prelude::*;

const BEGIN: &str = "<!-- BEGIN agentworks-session-instructions created=true -->";
const END: &str = "<!-- END agentworks-session-instructions -->";

#[derive(Clone, Debug)]
enum Content {
    Text(String),
    Bytes(Vec<u8>),
    LinkToAgents,
}

#[derive(Clone, Debug)]
struct Entry {
    base: &'static str,
    dirs: Vec<&'static str>,
    name: &'static str,
    content: Content,
}

fn content() -> impl Strategy<Value = Content> {
    let texts: Vec<String> = vec![
        "alpha".into(),
        "beta".into(),
        "  alpha \n".into(),
        "<!-- note -->\nalpha".into(),
        "gamma\n@shared.md".into(),
        "@../shared.md\ndelta".into(),
        "@docs/x.md".into(),
        "".into(),
        "   \n".into(),
        format!("user\n{BEGIN}\nsession text\n{END}\n"),
        format!("{BEGIN}\nother session\n{END}"),
        format!("open {BEGIN}\n{BEGIN}\nnever closed"),
        "x".repeat(60),
        "y".repeat(150),
        "```\n@shared.md\n```\nfenced".into(),
        "<!--\nmulti\n-->\nepsilon".into(),
    ];
    prop_oneof![
        8 => proptest::sample::select(texts).prop_map(Content::Text),
        1 => Just(Content::Bytes(b"\xff\xfe".to_vec())),
        2 => Just(Content::LinkToAgents),
    ]
}

fn entry() -> impl Strategy<Value = Entry> {
    (
        proptest::sample::select(vec![
            "/ws/proj", "/ws/proj", "/ws/proj", "/ws/proj", "/ws", "/home/u",
        ]),
        proptest::collection::vec(
            proptest::sample::select(vec![
                "a",
                "b",
                "c",
                ".h",
                "node_modules",
                ".codex",
                ".claude",
            ]),
            0..4,
        ),
        proptest::sample::select(vec![
            "AGENTS.md",
            "AGENTS.md",
            "CLAUDE.md",
            "AGENTS.override.md",
            "CLAUDE.local.md",
            "shared.md",
            "docs/x.md",
            ".cursorrules",
            ".cursor/rules/x.mdc",
            ".cursor/rules/y.mdc",
        ]),
        content(),
    )
        .prop_map(|(base, dirs, name, content)| Entry {
            base,
            dirs,
            name,
            content,
        })
}

#[derive(Clone, Debug)]
struct World {
    entries: Vec<Entry>,
    dir_links: Vec<(Vec<&'static str>, &'static str)>,
    request: GuidanceRequest,
}

fn dir_of(entry: &Entry) -> String {
    let mut dir = entry.base.to_string();
    for part in &entry.dirs {
        dir.push('/');
        dir.push_str(part);
    }
    dir
}

impl World {
    fn fs(&self) -> MemoryFs {
        let mut fs = MemoryFs::new();
        for entry in &self.entries {
            let path = format!("{}/{}", dir_of(entry), entry.name);
            match &entry.content {
                Content::Text(text) => fs.add_file(&path, text.as_str()),
                Content::Bytes(bytes) => fs.add_file(&path, bytes.clone()),
                Content::LinkToAgents => fs.add_symlink(&path, "AGENTS.md"),
            };
        }
        for (dirs, target) in &self.dir_links {
            let mut path = "/ws/proj".to_string();
            for part in dirs {
                path.push('/');
                path.push_str(part);
            }
            path.push_str("/link");
            fs.add_symlink(&path, target);
        }
        fs
    }
}

fn world() -> impl Strategy<Value = World> {
    (
        proptest::collection::vec(entry(), 0..30),
        proptest::collection::vec(
            (
                proptest::collection::vec(proptest::sample::select(vec!["a", "b"]), 0..3),
                proptest::sample::select(vec![".", "..", "/ws/proj", "a"]),
            ),
            0..3,
        ),
        proptest::sample::select(vec!["/ws/proj", "/ws/proj/", "/ws/proj/a", "/ws/proj/a/b"]),
        0u64..400,
        0usize..12,
        0usize..5,
        0usize..5,
        any::<bool>(),
    )
        .prop_map(
            |(entries, dir_links, cwd, budget, max_dirs, max_depth, hops, home)| {
                let mut request = GuidanceRequest::new("/ws/proj")
                    .with_working_dir(cwd)
                    .with_max_bytes(budget)
                    .with_max_dirs(max_dirs)
                    .with_max_depth(max_depth)
                    .with_max_import_hops(hops);
                if home {
                    request = request.with_home_dir("/home/u");
                }
                World {
                    entries,
                    dir_links,
                    request,
                }
            },
        )
}

/// A `MemoryFs` whose listings also claim every guidance name exists (as an entry of kind
/// `Other`, which neither the walk nor a glob takes), so the resolver cannot skip any read.
struct EveryNameListed(MemoryFs);

impl GuidanceFs for EveryNameListed {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.0.read(path)
    }
    fn read_capped(&self, path: &Path, cap: u64) -> io::Result<CappedRead> {
        self.0.read_capped(path, cap)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<FsEntry>> {
        let mut entries = self.0.list_dir(path)?;
        for name in [
            "AGENTS.md",
            "CLAUDE.md",
            "AGENTS.override.md",
            "CLAUDE.local.md",
        ] {
            if !entries.iter().any(|e| e.name == name) {
                entries.push(FsEntry {
                    name: OsString::from(name),
                    kind: EntryKind::Other,
                });
            }
        }
        Ok(entries)
    }
    fn stat(&self, path: &Path) -> io::Result<FsStat> {
        self.0.stat(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.0.canonicalize(path)
    }
}

fn is_session(scope: GuidanceScope) -> bool {
    scope == GuidanceScope::Session
}

fn check_invariants(world: &World, resolution: &GuidanceResolution) -> Result<(), TestCaseError> {
    // Budget: never exceeded, except by a lone first source.
    let sum: u64 = resolution.sources.iter().map(|s| s.bytes).sum();
    prop_assert_eq!(sum, resolution.total_bytes);
    prop_assert_eq!(resolution.budget_bytes, world.request.max_bytes);
    prop_assert!(
        resolution.total_bytes <= resolution.budget_bytes || resolution.sources.len() == 1,
        "budget exceeded: {} > {}",
        resolution.total_bytes,
        resolution.budget_bytes
    );
    for source in &resolution.sources {
        prop_assert_eq!(source.bytes, source.body.len() as u64);
        prop_assert!(!source.body.is_empty());
        prop_assert_eq!(source.body.trim(), source.body.as_str());
    }
    // Order: (scope, depth) never decreases over the user's sources.
    let order: Vec<(GuidanceScope, i32)> = resolution
        .sources
        .iter()
        .filter(|s| !is_session(s.scope))
        .map(|s| (s.scope, s.depth))
        .collect();
    prop_assert!(
        order.windows(2).all(|w| w[0] <= w[1]),
        "out of order: {:?}",
        order
    );
    for source in &resolution.sources {
        if source.scope == GuidanceScope::Scoped {
            prop_assert!(source.depth >= 1 && source.depth as usize <= world.request.max_depth);
        }
        // A session source names the file it came through and carries its path.
        if is_session(source.scope) {
            let host = source.imported_from.as_deref().unwrap_or("");
            prop_assert!(!host.is_empty());
            prop_assert!(source.path.contains("#session"));
        } else {
            prop_assert!(source.imported_from.is_none());
        }
    }
    // Dedupe: no two user sources share a body; no two session sources either; paths unique.
    for session in [false, true] {
        let mut bodies = HashSet::new();
        for source in resolution
            .sources
            .iter()
            .filter(|s| is_session(s.scope) == session)
        {
            prop_assert!(
                bodies.insert(&source.body),
                "duplicate body {:?}",
                source.body
            );
        }
    }
    let mut paths = HashSet::new();
    for source in &resolution.sources {
        prop_assert!(paths.insert(&source.path), "duplicate path {}", source.path);
    }
    // Each (path, reason) is named once.
    let mut notices = HashSet::new();
    for omission in &resolution.omitted {
        prop_assert!(notices.insert((&omission.path, omission.reason)));
    }
    // The walk is bounded: 4 user files + 1 ancestor + at most 3 chain dirs + max_dirs.
    prop_assert!(resolution.dirs_scanned <= (4 + 1 + 3 + world.request.max_dirs) as u64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold(world in world()) {
        let fs = world.fs();
        let resolution = resolve(&fs, &world.request);
        check_invariants(&world, &resolution)?;
    }

    #[test]
    fn resolution_is_deterministic(world in world()) {
        let first = resolve(&world.fs(), &world.request);
        let second = resolve(&world.fs(), &world.request);
        prop_assert_eq!(&first, &second);
        let json = serde_json::to_string(&first).unwrap();
        prop_assert_eq!(json, serde_json::to_string(&second).unwrap());
    }

    /// Skipping names a directory listing rules out is an optimisation only: forcing every read
    /// gives the same resolution.
    #[test]
    fn listing_shortcut_is_invisible(world in world()) {
        let fs = world.fs();
        let fast = resolve(&fs, &world.request);
        let slow = resolve(&EveryNameListed(fs), &world.request);
        prop_assert_eq!(fast, slow);
    }

    /// Adding `CLAUDE.md -> AGENTS.md` beside every `AGENTS.md` that has no `CLAUDE.md` (outside
    /// `~/.claude`) changes no source: the copy is always a duplicate (or as empty or unreadable as
    /// the original).
    #[test]
    fn symlinked_copies_change_no_source(world in world()) {
        let fs = world.fs();
        let before = resolve(&fs, &world.request);
        let mut linked = world.clone();
        let dirs_with_claude: HashSet<String> = world
            .entries
            .iter()
            .filter(|e| e.name == "CLAUDE.md")
            .map(dir_of)
            .collect();
        for entry in &world.entries {
            let dir = dir_of(entry);
            // `~/.claude/CLAUDE.md` is a user-scope file in its own right, not a copy.
            if entry.name == "AGENTS.md"
                && !dirs_with_claude.contains(&dir)
                && dir != "/home/u/.claude"
            {
                let mut copy = entry.clone();
                copy.name = "CLAUDE.md";
                copy.content = Content::LinkToAgents;
                linked.entries.push(copy);
            }
        }
        let after = resolve(&linked.fs(), &world.request);
        prop_assert_eq!(&before.sources, &after.sources);
        prop_assert_eq!(before.total_bytes, after.total_bytes);
        prop_assert_eq!(before.dirs_scanned, after.dirs_scanned);
    }
}
