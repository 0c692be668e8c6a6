//! Golden cases for the guidance resolver on `MemoryFs`: one case per resolution rule (and per
//! addition: session blocks, unreadable and non-UTF-8 files, discovery profiles), each
//! snapshotted as JSON (the resolution plus its rendered block) under `tests/snapshots/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use projectfile_core::guidance::{
    DiscoveryProfile, GuidanceRequest, GuidanceResolution, MemoryFs, OmissionReason, Walk,
    prompt_fragments, render_block, resolve, resolve_as,
};
use rstest::rstest;
use serde_json::json;

const ROOT: &str = "/ws/proj";
const HOME: &str = "/home/u";
const BEGIN: &str = "<!-- BEGIN agentworks-session-instructions created=true -->";
const END: &str = "<!-- END agentworks-session-instructions -->";

struct Case {
    fs: MemoryFs,
    request: GuidanceRequest,
    profile: Option<DiscoveryProfile>,
}

impl Case {
    fn new(fs: MemoryFs) -> Self {
        Case {
            fs,
            request: GuidanceRequest::new(ROOT),
            profile: None,
        }
    }
    fn request(mut self, edit: impl FnOnce(GuidanceRequest) -> GuidanceRequest) -> Self {
        self.request = edit(self.request);
        self
    }
    fn profile(mut self, profile: DiscoveryProfile) -> Self {
        self.profile = Some(profile);
        self
    }
    fn run(&self) -> GuidanceResolution {
        match &self.profile {
            Some(profile) => resolve_as(&self.fs, profile, &self.request),
            None => resolve(&self.fs, &self.request),
        }
    }
}

fn block(body: &str) -> String {
    format!("{BEGIN}\n{body}\n{END}\n")
}

fn per_directory_order() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/CLAUDE.local.md", "local notes")
            .with_file("/ws/proj/AGENTS.override.md", "override")
            .with_file("/ws/proj/CLAUDE.md", "claude")
            .with_file("/ws/proj/AGENTS.md", "agents")
            .with_file("/ws/proj/README.md", "not guidance"),
    )
}

fn user_scope() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/home/u/.codex/AGENTS.override.md", "codex override")
            .with_file("/home/u/.codex/AGENTS.md", "codex agents")
            .with_file("/home/u/.agents/AGENTS.md", "portable user")
            .with_file("/home/u/.claude/CLAUDE.md", "claude user")
            .with_file("/home/u/AGENTS.md", "home root is not a user-scope file")
            .with_file("/ws/proj/AGENTS.md", "project"),
    )
    .request(|r| r.with_home_dir("/home/u/"))
}

fn user_scope_without_home() -> Case {
    let mut case = user_scope();
    case.request = GuidanceRequest::new(ROOT);
    case
}

fn user_scope_switched_off() -> Case {
    user_scope().request(|r| r.with_user_scope(false))
}

fn ancestors() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/AGENTS.md", "file-system root: never read")
            .with_file("/ws/AGENTS.md", "ancestor")
            .with_file("/ws/CLAUDE.local.md", "ancestor local")
            .with_file("/ws/proj/AGENTS.md", "workspace"),
    )
}

fn ancestors_switched_off() -> Case {
    ancestors().request(|r| r.with_ancestors(false))
}

fn workspace_chain_to_working_dir() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", "root")
            .with_file("/ws/proj/a/AGENTS.md", "a")
            .with_file("/ws/proj/a/b/AGENTS.md", "a/b (working dir)")
            .with_file("/ws/proj/a/b/c/AGENTS.md", "below the working dir: scoped")
            .with_file(
                "/ws/proj/side/AGENTS.md",
                "beside the working dir: never read",
            ),
    )
    .request(|r| r.with_working_dir("/ws/proj/a/b/"))
}

fn working_dir_outside_root() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", "root")
            .with_file("/ws/proj/sub/AGENTS.md", "not below the working dir")
            .with_file(
                "/elsewhere/AGENTS.md",
                "working dir itself: not in the chain",
            )
            .with_file("/elsewhere/x/AGENTS.md", "below the working dir: scoped"),
    )
    .request(|r| r.with_working_dir("/elsewhere"))
}

fn scoped_breadth_first() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/b/AGENTS.md", "b")
            .with_file("/ws/proj/a/AGENTS.md", "a")
            .with_file("/ws/proj/a/x/AGENTS.md", "a/x")
            .with_file("/ws/proj/b/y/CLAUDE.md", "b/y")
            .with_file("/ws/proj/a/x/deep/AGENTS.override.md", "a/x/deep")
            .with_file("/ws/proj/node_modules/AGENTS.md", "skipped: node_modules")
            .with_file("/ws/proj/target/AGENTS.md", "skipped: target")
            .with_file("/ws/proj/vendor/AGENTS.md", "skipped: vendor")
            .with_file("/ws/proj/.hidden/AGENTS.md", "skipped: hidden")
            .with_file("/ws/proj/a/__pycache__/AGENTS.md", "skipped: __pycache__")
            .with_symlink("/ws/proj/link", "a")
            .with_symlink("/ws/proj/loop", ".")
            .with_file("/ws/proj/file-not-dir", "x"),
    )
}

fn custom_skip_list() -> Case {
    scoped_breadth_first().request(|r| r.with_skip_dirs(["a"]))
}

fn subtree_switched_off() -> Case {
    scoped_breadth_first().request(|r| r.with_subtree(false))
}

fn max_depth() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/d1/AGENTS.md", "depth 1")
            .with_file("/ws/proj/d1/d2/AGENTS.md", "depth 2 (found, not listed)")
            .with_file("/ws/proj/d1/d2/d3/AGENTS.md", "depth 3: beyond max_depth"),
    )
    .request(|r| r.with_max_depth(2))
}

fn max_dirs() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/a/AGENTS.md", "a")
            .with_file("/ws/proj/b/AGENTS.md", "b")
            .with_file("/ws/proj/c/AGENTS.md", "c: beyond max_dirs")
            .with_file("/ws/proj/a/n/AGENTS.md", "a/n: beyond max_dirs"),
    )
    .request(|r| r.with_max_dirs(2))
}

fn editor_packs() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", "agents")
            .with_file("/ws/proj/.github/copilot-instructions.md", "copilot")
            .with_file(
                "/ws/proj/.cursor/rules/b.mdc",
                "---\nalwaysApply: true\n---\nrule b",
            )
            .with_file("/ws/proj/.cursor/rules/a.mdc", "rule a")
            .with_file("/ws/proj/.cursor/rules/notes.md", "not an .mdc")
            .with_dir("/ws/proj/.cursor/rules/dir.mdc")
            .with_file("/ws/proj/.cursor/rules/same.mdc", "agents")
            .with_file(
                "/ws/proj/.cursor/rules/empty.mdc",
                "<!-- only a comment -->",
            )
            .with_file("/ws/proj/.cursorrules", "cursorrules")
            .with_file("/abs/pack.md", "absolute pack path used as given"),
    )
}

fn custom_editor_packs() -> Case {
    // Only `*` makes an entry a glob (seed): `?.mdc` is a literal name; `AGENTS.md` was already
    // read as a directory file, so `seen_paths` skips it.
    editor_packs().request(|r| {
        r.with_editor_packs([
            ".cursor/rules/b*",
            ".cursor/rules/?.mdc",
            "AGENTS.md",
            "/abs/pack.md",
        ])
    })
}

fn file_too_large() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", vec![b'a'; 4 * 1024 * 1024 + 1])
            .with_file("/ws/proj/CLAUDE.md", "small")
            .with_file("/ws/proj/.cursorrules", vec![b' '; 4 * 1024 * 1024 + 7]),
    )
}

fn duplicate_bodies() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", "shared rules\n")
            .with_symlink("/ws/proj/CLAUDE.md", "AGENTS.md")
            .with_file("/ws/proj/AGENTS.override.md", "  shared rules  ")
            .with_file(
                "/ws/proj/pkg/AGENTS.md",
                "<!-- maintainer note -->\nshared rules",
            )
            .with_file("/ws/proj/pkg/CLAUDE.md", "pkg only"),
    )
}

fn empty_files_skipped_silently() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", " \n\t\n")
            .with_file("/ws/proj/CLAUDE.md", "<!--\nonly a comment\n-->\n")
            .with_file("/ws/proj/CLAUDE.local.md", "")
            .with_file("/ws/proj/AGENTS.override.md", "kept"),
    )
}

fn html_comments() -> Case {
    let text = [
        "# Rules",
        "<!-- single-line maintainer note -->",
        "keep 1",
        "  <!-- indented",
        "     multi-line note",
        "  -->",
        "keep 2",
        "inline <!-- mid-line comments stay --> text",
        "<!-- closes --> but the tail of this line is dropped too",
        "```html",
        "<!-- inside a fence: kept -->",
        "```",
        "~~~",
        "<!-- tilde fence: kept -->",
        "~~~",
        "<!-- opened",
        "```",
        "a fence line inside an open comment is kept and toggles the fence",
        "-->",
        "```",
        "after",
    ]
    .join("\n");
    Case::new(MemoryFs::new().with_file("/ws/proj/AGENTS.md", text))
}

fn imports() -> Case {
    let agents = [
        "# Project",
        "@docs/style.md",
        "See @docs/inline.md for details (the whole line is replaced)",
        "Literal in a code span: `@docs/style.md`",
        "```",
        "@docs/style.md inside a fence stays",
        "```",
        "@no-dot-means-no-import",
        "@docs/missing.md",
        "@docs/a.md @docs/b.md",
        "@/abs/shared.md",
        "@~/personal.md",
        "email me at someone@example.com",
        "@docs/cycle-a.md",
    ]
    .join("\n");
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", agents)
            .with_file("/ws/proj/docs/style.md", "STYLE\n@nested/deeper.md")
            .with_file(
                "/ws/proj/docs/nested/deeper.md",
                "DEEPER (relative to style.md)",
            )
            .with_file("/ws/proj/docs/inline.md", "INLINE")
            .with_file(
                "/ws/proj/docs/a.md",
                "A: not imported, the last import wins",
            )
            .with_file("/ws/proj/docs/b.md", "B")
            .with_file(
                "/abs/shared.md",
                "ABSOLUTE <!-- a --> stays\n<!-- dropped -->",
            )
            .with_file("/home/u/personal.md", "PERSONAL")
            .with_file("/ws/proj/docs/cycle-a.md", "CYCLE-A\n@cycle-b.md")
            .with_file(
                "/ws/proj/docs/cycle-b.md",
                "CYCLE-B\n@cycle-a.md\n@../AGENTS.md",
            ),
    )
    .request(|r| r.with_home_dir(HOME).with_subtree(false))
}

/// The same imports with the user's approval to leave the tree: everything is inlined.
fn imports_allowed_outside_tree() -> Case {
    imports().request(|r| r.with_allow_outside_tree(true))
}

/// Every way out of a tree, none of them read: `@../`, `@/abs`, `@~/` from a project file, a
/// chain that leaves at hop 2, a symlinked instruction file and editor pack pointing out, a
/// symlinked directory on the way to the working directory, a user file importing outside home
/// and an ancestor file importing outside its own directory. Ways that stay inside are read.
fn outside_tree() -> Case {
    let agents = [
        "# Project",
        "@../secret/id_rsa",
        "@/etc/secret.md",
        "@~/.ssh/id_rsa",
        "@docs/hop1.md",
        "@docs/../docs/inside.md",
        "@docs/linked-in.md",
    ]
    .join("\n");
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", agents)
            .with_file("/ws/secret/id_rsa", "PRIVATE KEY 1")
            .with_file("/etc/secret.md", "PRIVATE KEY 2")
            .with_file("/home/u/.ssh/id_rsa", "PRIVATE KEY 3")
            .with_file("/ws/proj/docs/hop1.md", "HOP 1\n@hop2.md")
            .with_file("/ws/proj/docs/hop2.md", "HOP 2\n@../../secret/id_rsa")
            .with_file("/ws/proj/docs/inside.md", "INSIDE")
            .with_symlink("/ws/proj/docs/linked-in.md", "inside-target.md")
            .with_file("/ws/proj/docs/inside-target.md", "LINKED INSIDE")
            .with_symlink("/ws/proj/CLAUDE.md", "/home/u/.ssh/id_rsa")
            .with_symlink("/ws/proj/.cursorrules", "../secret/id_rsa")
            .with_symlink("/ws/proj/sub", "/ws/elsewhere")
            .with_file(
                "/ws/elsewhere/AGENTS.md",
                "PRIVATE KEY 4 (through a linked dir)",
            )
            .with_file(
                "/home/u/.claude/CLAUDE.md",
                "USER\n@~/notes.md\n@/etc/secret.md",
            )
            .with_file("/home/u/notes.md", "USER NOTES")
            .with_file(
                "/ws/AGENTS.md",
                "ANCESTOR\n@proj/docs/inside.md\n@../etc/secret.md",
            ),
    )
    .request(|r| r.with_home_dir(HOME).with_working_dir("/ws/proj/sub"))
}

fn import_hops() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", "root\n@h1.md")
            .with_file("/ws/proj/h1.md", "hop 1\n@h2.md")
            .with_file("/ws/proj/h2.md", "hop 2\n@h3.md")
            .with_file("/ws/proj/h3.md", "hop 3\n@h4.md")
            .with_file("/ws/proj/h4.md", "hop 4\n@h5.md")
            .with_file("/ws/proj/h5.md", "hop 5: beyond the limit"),
    )
}

fn import_hops_custom() -> Case {
    import_hops().request(|r| r.with_max_import_hops(1))
}

fn import_of_bad_files() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file(
                "/ws/proj/AGENTS.md",
                "@locked.md\n@latin1.md\n@huge.md\n@blank.md\nend",
            )
            .with_unreadable("/ws/proj/locked.md", 10)
            .with_file("/ws/proj/latin1.md", b"caf\xe9".to_vec())
            .with_file("/ws/proj/huge.md", vec![b'x'; 4 * 1024 * 1024 + 1])
            .with_file("/ws/proj/blank.md", "\n\n")
            .with_file("/ws/proj/pkg/AGENTS.md", "@../locked.md"),
    )
}

fn user_scope_imports_relative_to_the_file() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/home/u/.claude/CLAUDE.md", "user\n@rules.md")
            .with_file("/home/u/.claude/rules.md", "from ~/.claude/rules.md")
            .with_file(
                "/home/u/rules.md",
                "from ~/rules.md (the seed's code would pick this)",
            ),
    )
    .request(|r| r.with_home_dir(HOME))
}

fn budget() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", "a".repeat(40))
            .with_file("/ws/proj/CLAUDE.md", "b".repeat(30))
            .with_file("/ws/proj/a/AGENTS.md", "c".repeat(5))
            .with_file("/ws/proj/b/AGENTS.md", "d".repeat(20))
            .with_file("/ws/proj/.cursorrules", "e".repeat(5)),
    )
    .request(|r| r.with_max_bytes(50))
}

fn budget_first_source_always_kept() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", "x".repeat(100))
            .with_file("/ws/proj/CLAUDE.md", "y"),
    )
    .request(|r| r.with_max_bytes(10))
}

fn unreadable_and_not_utf8() -> Case {
    Case::new(
        MemoryFs::new()
            .with_unreadable("/ws/proj/AGENTS.md", 42)
            .with_file("/ws/proj/CLAUDE.md", b"\xff\xfe binary".to_vec())
            .with_symlink("/ws/proj/AGENTS.override.md", "AGENTS.override.md")
            .with_symlink("/ws/proj/CLAUDE.local.md", "gone.md")
            .with_dir("/ws/proj/pkg/AGENTS.md")
            .with_file("/ws/proj/pkg/CLAUDE.md", "\u{feff}BOM removed"),
    )
}

fn crlf() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", "line 1\r\nline 2\r\n")
            .with_file(
                "/ws/proj/CLAUDE.md",
                "line 1\r\n<!-- note -->\r\nline 2\r\n",
            ),
    )
}

fn session_block() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file(
                "/ws/proj/AGENTS.md",
                format!("# User rules\nbe nice\n\n{}", block("Session: fix bug 42")),
            )
            .with_symlink("/ws/proj/CLAUDE.md", "AGENTS.md"),
    )
}

fn session_block_only() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/AGENTS.md", block("Only ours"))
            .with_file("/ws/proj/pkg/AGENTS.md", block("")),
    )
}

fn session_block_malformed() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file(
                "/ws/proj/AGENTS.md",
                format!("user text\n{BEGIN}\nnever closed"),
            )
            .with_file("/ws/proj/CLAUDE.md", format!("stray end\n{END}\n"))
            .with_file(
                "/ws/proj/AGENTS.override.md",
                format!("```\n{BEGIN}\n```\nin a fence\n{END}"),
            ),
    )
}

fn session_block_custom_namespace() -> Case {
    Case::new(MemoryFs::new().with_file(
        "/ws/proj/AGENTS.md",
        format!(
            "user\n<!-- BEGIN acme-session-instructions created=false -->\nacme session\n<!-- END acme-session-instructions -->\n{}",
            block("agentworks block: user text under namespace acme, markers stripped as comments")
        ),
    ))
    .request(|r| r.with_session_namespace("acme"))
}

fn session_block_in_import() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/pkg/CLAUDE.md", "pkg rules\n@../shared.md")
            .with_file(
                "/ws/proj/shared.md",
                format!("shared rules\n{}", block("session text via an import")),
            )
            .with_file(
                "/ws/proj/AGENTS.md",
                format!("{}\n{}", block("first"), block("second")),
            ),
    )
}

fn everything() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/home/u/.claude/CLAUDE.md", "user")
            .with_file("/ws/AGENTS.md", "ancestor")
            .with_file("/ws/proj/AGENTS.md", "workspace")
            .with_file("/ws/proj/src/AGENTS.md", "scoped")
            .with_file("/ws/proj/.cursorrules", "pack"),
    )
    .request(|r| r.with_home_dir(HOME))
}

// --- discovery profiles -------------------------------------------------------------------------

fn codex() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec!["AGENTS.override.md".into(), "AGENTS.md".into()],
        first_wins: true,
        root_markers: vec![".git".into()],
        budget_bytes: Some(32 * 1024),
        truncate_at_budget: true,
        user_files: vec![
            ".codex/AGENTS.override.md".into(),
            ".codex/AGENTS.md".into(),
        ],
        ..Default::default()
    }
}

fn claude() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec![
            "CLAUDE.md".into(),
            ".claude/CLAUDE.md".into(),
            "CLAUDE.local.md".into(),
            "AGENTS.md".into(),
        ],
        exclusive_if_present: vec![
            ("CLAUDE.md".into(), "AGENTS.md".into()),
            (".claude/CLAUDE.md".into(), "AGENTS.md".into()),
        ],
        walk: Walk::CwdUpToFsRoot,
        imports: true,
        max_import_hops: Some(5),
        strip_html_comments: true,
        user_files: vec![".claude/CLAUDE.md".into()],
        ..Default::default()
    }
}

fn pi() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec!["AGENTS.md".into(), "CLAUDE.md".into()],
        first_wins: true,
        walk: Walk::CwdUpToFsRoot,
        extra_files: vec![".pi/APPEND_SYSTEM.md".into()],
        ..Default::default()
    }
}

fn cursor() -> DiscoveryProfile {
    DiscoveryProfile {
        extra_files: vec![".cursor/rules/*.mdc".into(), "AGENTS.md".into()],
        ..Default::default()
    }
}

/// As `providers/gemini` declares it (measured with Gemini CLI 0.61.0).
fn gemini() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec!["GEMINI.md".into()],
        root_markers: vec![".git".into()],
        imports: true,
        max_import_hops: Some(5),
        user_files: vec![".gemini/GEMINI.md".into()],
        on_demand_subtree: true,
        lossy_utf8: true,
        ..Default::default()
    }
}

/// As `providers/qwen` declares it (measured with Qwen Code 0.24.4).
fn qwen() -> DiscoveryProfile {
    DiscoveryProfile {
        per_directory: vec!["QWEN.md".into(), "AGENTS.md".into()],
        names_across_walk: true,
        root_markers: vec![".git".into()],
        walk: Walk::AboveRootToCwd,
        imports: true,
        max_import_hops: Some(5),
        user_files: vec![".qwen/QWEN.md".into(), ".qwen/AGENTS.md".into()],
        marked_root_files: vec![".qwen/QWEN.local.md".into()],
        extra_files: vec![".qwen/rules/*.md".into(), ".qwen/rules/*/*.md".into()],
        on_demand_path_rules: true,
        lossy_utf8: true,
        ..Default::default()
    }
}

/// Gemini CLI's and Qwen Code's files around the shared profile tree: above the git root, at
/// it, in the working directory and below it, the user's, a local file, rules, and a file that is
/// not UTF-8.
fn gemini_qwen_tree() -> MemoryFs {
    profile_tree()
        .with_file("/ws/GEMINI.md", "gemini above the repo")
        .with_file("/ws/QWEN.md", "qwen above the repo")
        .with_file("/GEMINI.md", "at the file-system root")
        .with_file(
            "/ws/proj/GEMINI.md",
            b"gemini root \xff\xfe not utf-8".to_vec(),
        )
        .with_file("/ws/proj/QWEN.md", "qwen root\n@docs/x.md")
        .with_file("/ws/proj/sub/GEMINI.md", "gemini sub")
        .with_file("/ws/proj/sub/QWEN.md", b"qwen sub \xc3".to_vec())
        .with_file("/ws/proj/sub/deeper/GEMINI.md", "gemini below cwd")
        .with_file("/home/u/.gemini/GEMINI.md", "gemini user")
        .with_file("/home/u/.qwen/QWEN.md", "qwen user")
        .with_file("/home/u/.qwen/AGENTS.md", "qwen user agents")
        .with_file("/ws/proj/.qwen/QWEN.local.md", "qwen local")
        .with_file("/ws/proj/.qwen/rules/a.md", "rule a")
        .with_file("/ws/proj/.qwen/rules/nested/b.md", "rule b")
        .with_file(
            "/ws/proj/.qwen/rules/scoped.md",
            "---\npaths:\n  - src/**\n---\nscoped",
        )
}

fn profile_gemini() -> Case {
    Case::new(gemini_qwen_tree())
        .request(|_| profile_request())
        .profile(gemini())
}

fn profile_qwen() -> Case {
    Case::new(gemini_qwen_tree())
        .request(|_| profile_request())
        .profile(qwen())
}

/// Without a git root Qwen Code walks up to the folder above the home directory when it starts
/// below it (here `/home`), and reads no `.qwen/QWEN.local.md`; rules hang off the working
/// directory.
fn profile_qwen_without_git() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/QWEN.md", "at the file-system root")
            .with_file("/home/QWEN.md", "above the home")
            .with_file("/home/u/QWEN.md", "the home itself")
            .with_file("/home/u/proj/QWEN.md", "project")
            .with_file("/home/u/proj/.qwen/QWEN.local.md", "no git root: not read")
            .with_file(
                "/home/u/proj/.qwen/rules/r.md",
                "rule of the working directory",
            ),
    )
    .request(|_| GuidanceRequest::new("/home/u/proj").with_home_dir("/home/u"))
    .profile(qwen())
}

/// Outside the home directory and without a git root, Qwen Code walks up to the top.
fn profile_qwen_outside_home() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/QWEN.md", "at the file-system root: never")
            .with_file("/srv/QWEN.md", "top")
            .with_file("/srv/proj/QWEN.md", "project"),
    )
    .request(|_| GuidanceRequest::new("/srv/proj").with_home_dir("/home/u"))
    .profile(qwen())
}

fn profile_tree() -> MemoryFs {
    MemoryFs::new()
        .with_file("/home/u/.codex/AGENTS.override.md", "codex user override")
        .with_file("/home/u/.codex/AGENTS.md", "codex user (shadowed)")
        .with_file(
            "/home/u/.claude/CLAUDE.md",
            "claude user\n<!-- stripped by claude -->",
        )
        .with_file("/ws/AGENTS.md", "above the repo")
        .with_dir("/ws/proj/.git")
        .with_file(
            "/ws/proj/AGENTS.md",
            "root agents <!-- kept by codex -->\n@docs/x.md",
        )
        .with_file("/ws/proj/AGENTS.override.md", "root override")
        .with_file("/ws/proj/CLAUDE.md", "root claude\n@docs/x.md")
        .with_file("/ws/proj/docs/x.md", "imported x")
        .with_file("/ws/proj/sub/AGENTS.md", "sub agents")
        .with_file("/ws/proj/sub/.claude/CLAUDE.md", "sub dot-claude")
        .with_file("/ws/proj/sub/CLAUDE.local.md", "sub local")
        .with_file("/ws/proj/sub/deeper/AGENTS.md", "below cwd")
        .with_file("/ws/proj/.pi/APPEND_SYSTEM.md", "pi append")
        .with_file("/ws/proj/.cursor/rules/r.mdc", "cursor rule")
}

fn profile_request() -> GuidanceRequest {
    GuidanceRequest::new(ROOT)
        .with_working_dir("/ws/proj/sub")
        .with_home_dir(HOME)
}

fn profile_codex() -> Case {
    Case::new(profile_tree())
        .request(|_| profile_request())
        .profile(codex())
}

fn profile_codex_without_marker() -> Case {
    Case::new(profile_tree_without_git())
        .request(|_| profile_request())
        .profile(codex())
}

fn profile_tree_without_git() -> MemoryFs {
    // Same tree, no `.git` anywhere: Codex reads only the working directory.
    let mut fs = MemoryFs::new();
    fs.add_file("/ws/proj/AGENTS.md", "root agents")
        .add_file("/ws/proj/sub/AGENTS.md", "sub agents")
        .add_file("/ws/proj/sub/AGENTS.override.md", "sub override");
    fs
}

fn profile_codex_git_file_marker() -> Case {
    Case::new(
        MemoryFs::new()
            .with_file("/ws/proj/.git", "gitdir: /elsewhere")
            .with_file("/ws/proj/AGENTS.md", "root agents")
            .with_file("/ws/proj/sub/AGENTS.md", "sub agents"),
    )
    .request(|_| profile_request())
    .profile(codex())
}

fn profile_codex_truncates() -> Case {
    let mut profile = codex();
    profile.budget_bytes = Some(30);
    Case::new(
        MemoryFs::new()
            .with_dir("/ws/proj/.git")
            .with_file(
                "/ws/proj/AGENTS.md",
                format!("{}\n{}", "u".repeat(20), block("s".repeat(20).as_str())),
            )
            .with_file("/ws/proj/sub/AGENTS.md", "dropped"),
    )
    .request(|_| profile_request())
    .profile(profile)
}

fn profile_claude() -> Case {
    Case::new(profile_tree())
        .request(|_| profile_request())
        .profile(claude())
}

fn profile_pi() -> Case {
    Case::new(profile_tree())
        .request(|_| profile_request())
        .profile(pi())
}

fn profile_cursor() -> Case {
    Case::new(profile_tree())
        .request(|_| profile_request())
        .profile(cursor())
}

fn profile_with_subtree_and_dedupe() -> Case {
    let mut profile = claude();
    profile.include_subtree = true;
    profile.dedupe_bodies = true;
    Case::new(
        profile_tree()
            .with_file("/ws/proj/sub/deeper/CLAUDE.md", "sub local")
            .with_file("/ws/proj/sub/deeper/more/CLAUDE.md", "deeper still"),
    )
    .request(|_| profile_request())
    .profile(profile)
}

#[rstest]
#[case::per_directory_order("per_directory_order", per_directory_order())]
#[case::user_scope("user_scope", user_scope())]
#[case::user_scope_without_home("user_scope_without_home", user_scope_without_home())]
#[case::user_scope_switched_off("user_scope_switched_off", user_scope_switched_off())]
#[case::ancestors("ancestors", ancestors())]
#[case::ancestors_switched_off("ancestors_switched_off", ancestors_switched_off())]
#[case::workspace_chain("workspace_chain_to_working_dir", workspace_chain_to_working_dir())]
#[case::working_dir_outside_root("working_dir_outside_root", working_dir_outside_root())]
#[case::scoped_breadth_first("scoped_breadth_first", scoped_breadth_first())]
#[case::custom_skip_list("custom_skip_list", custom_skip_list())]
#[case::subtree_switched_off("subtree_switched_off", subtree_switched_off())]
#[case::max_depth("max_depth", max_depth())]
#[case::max_dirs("max_dirs", max_dirs())]
#[case::editor_packs("editor_packs", editor_packs())]
#[case::custom_editor_packs("custom_editor_packs", custom_editor_packs())]
#[case::file_too_large("file_too_large", file_too_large())]
#[case::duplicate_bodies("duplicate_bodies", duplicate_bodies())]
#[case::empty_files("empty_files_skipped_silently", empty_files_skipped_silently())]
#[case::html_comments("html_comments", html_comments())]
#[case::imports("imports", imports())]
#[case::imports_allowed_outside_tree(
    "imports_allowed_outside_tree",
    imports_allowed_outside_tree()
)]
#[case::outside_tree("outside_tree", outside_tree())]
#[case::import_hops("import_hops", import_hops())]
#[case::import_hops_custom("import_hops_custom", import_hops_custom())]
#[case::import_of_bad_files("import_of_bad_files", import_of_bad_files())]
#[case::user_imports(
    "user_scope_imports_relative_to_the_file",
    user_scope_imports_relative_to_the_file()
)]
#[case::budget("budget", budget())]
#[case::budget_first_kept("budget_first_source_always_kept", budget_first_source_always_kept())]
#[case::unreadable_and_not_utf8("unreadable_and_not_utf8", unreadable_and_not_utf8())]
#[case::crlf("crlf", crlf())]
#[case::session_block("session_block", session_block())]
#[case::session_block_only("session_block_only", session_block_only())]
#[case::session_block_malformed("session_block_malformed", session_block_malformed())]
#[case::session_block_namespace("session_block_custom_namespace", session_block_custom_namespace())]
#[case::session_block_in_import("session_block_in_import", session_block_in_import())]
#[case::everything("everything", everything())]
#[case::profile_codex("profile_codex", profile_codex())]
#[case::profile_codex_without_marker(
    "profile_codex_without_marker",
    profile_codex_without_marker()
)]
#[case::profile_codex_git_file("profile_codex_git_file_marker", profile_codex_git_file_marker())]
#[case::profile_codex_truncates("profile_codex_truncates", profile_codex_truncates())]
#[case::profile_claude("profile_claude", profile_claude())]
#[case::profile_pi("profile_pi", profile_pi())]
#[case::profile_cursor("profile_cursor", profile_cursor())]
#[case::profile_gemini("profile_gemini", profile_gemini())]
#[case::profile_qwen("profile_qwen", profile_qwen())]
#[case::profile_qwen_without_git("profile_qwen_without_git", profile_qwen_without_git())]
#[case::profile_qwen_outside_home("profile_qwen_outside_home", profile_qwen_outside_home())]
#[case::profile_subtree_dedupe(
    "profile_with_subtree_and_dedupe",
    profile_with_subtree_and_dedupe()
)]
fn golden(#[case] name: &str, #[case] case: Case) {
    let resolution = case.run();
    // Resolution is deterministic and survives a JSON round trip unchanged.
    assert_eq!(resolution, case.run());
    let value = serde_json::to_value(&resolution).unwrap();
    let back: GuidanceResolution = serde_json::from_value(value).unwrap();
    assert_eq!(back, resolution);
    insta::assert_json_snapshot!(
        name,
        json!({ "resolution": resolution, "rendered": render_block(&resolution) })
    );
}

#[test]
fn prompt_fragments_one_per_source() {
    let resolution = everything().run();
    insta::assert_json_snapshot!("prompt_fragments", prompt_fragments(&resolution));
}

#[test]
fn exactly_four_mib_is_read() {
    let fs = MemoryFs::new().with_file("/ws/proj/AGENTS.md", vec![b'a'; 4 * 1024 * 1024]);
    let resolution = resolve(&fs, &GuidanceRequest::new(ROOT));
    assert_eq!(resolution.sources.len(), 1);
    assert_eq!(resolution.sources[0].bytes, 4 * 1024 * 1024);
    assert!(resolution.omitted.is_empty());
}

#[test]
fn empty_resolution_renders_nothing() {
    let resolution = resolve(&MemoryFs::new(), &GuidanceRequest::new(ROOT));
    assert_eq!(render_block(&resolution), "");
    assert!(prompt_fragments(&resolution).is_empty());
    assert_eq!(resolution.dirs_scanned, 2);
}

#[test]
fn request_defaults_and_json() {
    let request: GuidanceRequest =
        serde_json::from_value(json!({ "workspace_root": "/ws/proj" })).unwrap();
    assert_eq!(request, GuidanceRequest::new("/ws/proj"));
    assert_eq!(request.max_bytes, 32_768);
    assert_eq!(request.max_depth, 8);
    assert_eq!(request.max_dirs, 4_000);
    assert_eq!(request.max_import_hops, 4);
    assert_eq!(request.namespace(), "agentworks");
    insta::assert_json_snapshot!("request_defaults", request);
}

fn qwen_like() -> DiscoveryProfile {
    DiscoveryProfile {
        walk: Walk::AboveRootToCwd,
        names_across_walk: true,
        lossy_utf8: true,
        marked_root_files: vec![".qwen/QWEN.local.md".into()],
        ..Default::default()
    }
}

#[test]
fn profile_defaults_and_json() {
    let profile: DiscoveryProfile = serde_json::from_value(json!({
        "per_directory": ["AGENTS.md"],
        "exclusive_if_present": [["CLAUDE.md", "AGENTS.md"]],
        "walk": "cwd_up_to_fs_root",
    }))
    .unwrap();
    assert_eq!(profile.walk, Walk::CwdUpToFsRoot);
    assert_eq!(
        profile.exclusive_if_present,
        vec![("CLAUDE.md".to_string(), "AGENTS.md".to_string())]
    );
    assert!(!profile.first_wins && !profile.imports && profile.budget_bytes.is_none());
    assert_eq!(DiscoveryProfile::default().walk, Walk::RootToCwd);
    let qwen: DiscoveryProfile = serde_json::from_value(json!({
        "walk": "above_root_to_cwd",
        "names_across_walk": true,
        "lossy_utf8": true,
        "marked_root_files": [".qwen/QWEN.local.md"],
    }))
    .unwrap();
    assert_eq!(qwen, self::qwen_like());
    let default = DiscoveryProfile::default();
    assert!(!default.lossy_utf8 && !default.names_across_walk);
    assert!(default.marked_root_files.is_empty());
}

#[test]
fn reasons_serialize_as_the_seed_spells_them() {
    let reasons = [
        OmissionReason::FileTooLarge,
        OmissionReason::DuplicateBody,
        OmissionReason::BudgetExhausted,
        OmissionReason::BudgetTruncated,
        OmissionReason::Unreadable,
        OmissionReason::NotUtf8,
        OmissionReason::MalformedSessionBlock,
    ];
    for reason in reasons {
        assert_eq!(
            serde_json::to_value(reason).unwrap(),
            json!(reason.as_str())
        );
    }
}

/// No byte of a file outside its tree reaches the sources, the rendered block or the prompt
/// fragments, whichever way it was reached; with the user's approval, every one of them does.
#[test]
fn outside_tree_bytes_never_reach_the_prompt_unless_allowed() {
    let case = outside_tree();
    let refused = case.run();
    let text = |resolution: &GuidanceResolution| {
        let mut all = render_block(resolution);
        for fragment in prompt_fragments(resolution) {
            all.push_str(&fragment.body);
        }
        for source in &resolution.sources {
            all.push_str(&source.body);
        }
        all
    };
    assert!(!text(&refused).contains("PRIVATE KEY"), "{refused:#?}");
    assert!(
        refused
            .omitted
            .iter()
            .all(|o| o.reason == OmissionReason::OutsideTree && o.resolves_to.is_some())
    );
    let allowed = case.request(|r| r.with_allow_outside_tree(true)).run();
    let allowed_text = text(&allowed);
    for n in 1..=4 {
        assert!(
            allowed_text.contains(&format!("PRIVATE KEY {n}")),
            "key {n} missing once allowed"
        );
    }
}
