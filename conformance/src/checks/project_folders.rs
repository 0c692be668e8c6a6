//! Promise 11: the project's own instruction files and CLI folders are never replaced or removed,
//! and CLAUDE.md is never written.

use crate::Subject;
use crate::fixture::Fixture;
use crate::tree::Tree;

/// Promise 11: the project's own instruction files and CLI folders are never replaced or removed,
/// and CLAUDE.md is never written.
pub fn project_folders_are_never_replaced(subject: &Subject) {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"# project agents\n");
    fx.write(".claude/settings.json", b"{\"project\": true}\n");
    fx.write(
        ".claude/skills/review/SKILL.md",
        b"---\nname: review\n---\n",
    );
    fx.write(
        ".cursor/rules/house.mdc",
        b"---\nalwaysApply: true\n---\nhouse\n",
    );
    fx.write(".cursor/mcp.json", b"{\"mcpServers\": {}}\n");
    fx.write(".pi/SYSTEM.md", b"pi system\n");
    fx.write(".codex/config.toml", b"model = \"x\"\n");
    fx.write(".agents/skills/lint/SKILL.md", b"lint\n");
    fx.write(".agents/hooks.json", b"{\"project\": {}}\n");
    fx.write(".pi/APPEND_SYSTEM.md", b"pi append\r\nno final newline");
    fx.write_mode(".cursor/hooks.json", b"{\"version\": 1}", 0o600);
    fx.write_mode(".cursor/mcp.json", b"{\"mcpServers\": {}}\n", 0o640);
    let before = Tree::capture(&fx.workspace);
    // Every input the provider accepts, so owned configuration files are exercised too.
    let a = fx
        .acquire_session(subject, subject.full_session("one"))
        .unwrap();
    assert!(
        fx.read("CLAUDE.md").is_none(),
        "CLAUDE.md must never be written"
    );
    let b = fx
        .acquire_session(subject, subject.full_session("two"))
        .unwrap();
    fx.release(&b.token);
    fx.release(&a.token);
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}
