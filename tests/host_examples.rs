//! The two minimal hosts in `examples/` work: the Rust one (`examples/host.rs`, compiled here as
//! a module and run in-process) and the shell one (`examples/host.sh`, run with `sh` against the
//! binary under test).
#![cfg(feature = "codex")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

#[path = "../examples/host.rs"]
mod host_example;

#[test]
fn the_rust_host_example_runs() {
    host_example::main().unwrap();
}

#[cfg(feature = "cli")]
#[test]
fn the_shell_host_example_runs() {
    let scratch = tempfile::tempdir().unwrap();
    let workspace = scratch.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    std::fs::write(workspace.join("AGENTS.md"), "# House rules\n").unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/host.sh");
    let out = std::process::Command::new("sh")
        .arg(script)
        .arg(&workspace)
        .env("PROJECTFILE", env!("CARGO_BIN_EXE_projectfile"))
        .env("PROJECTFILE_STATE_DIR", scratch.path().join("state"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    // The acquire receipt, the CLI's output (the block inside AGENTS.md), the release receipt.
    assert!(
        lines[0].contains("\"schema\":\"projectfile.acquire.v1\""),
        "{stdout}"
    );
    assert!(stdout.contains("# House rules"), "{stdout}");
    assert!(stdout.contains("Answer in one sentence."), "{stdout}");
    let last = lines.last().unwrap();
    assert!(
        last.contains("\"schema\":\"projectfile.release.v1\""),
        "{stdout}"
    );
    assert!(last.contains("\"released\":true"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("AGENTS.md")).unwrap(),
        "# House rules\n",
        "the shell host left the block behind"
    );
}
