//! The facade registers exactly the providers whose Cargo features are enabled, in a stable order,
//! and the `projectfile providers --json` command lists exactly those; a Rust host that turns the
//! default features off and picks one provider compiles none of the command line's crates.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile::core::ProviderExt;

/// Every provider feature with its `cfg!`, in registration order.
fn enabled() -> Vec<&'static str> {
    [
        ("claude", cfg!(feature = "claude")),
        ("codex", cfg!(feature = "codex")),
        ("cursor", cfg!(feature = "cursor")),
        ("pi", cfg!(feature = "pi")),
        ("muse", cfg!(feature = "muse")),
        ("agy", cfg!(feature = "agy")),
        ("gemini", cfg!(feature = "gemini")),
        ("qwen", cfg!(feature = "qwen")),
        ("opencode", cfg!(feature = "opencode")),
        ("copilot", cfg!(feature = "copilot")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect()
}

#[test]
fn registry_matches_the_enabled_features() {
    let names: Vec<&str> = projectfile::providers().iter().map(|p| p.name()).collect();
    assert_eq!(names, enabled());
    for name in enabled() {
        assert_eq!(projectfile::provider(name).map(|p| p.name()), Some(name));
    }
    assert!(projectfile::provider("nope").is_none());
}

#[cfg(feature = "cli")]
#[test]
fn providers_command_lists_exactly_the_enabled_providers() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_projectfile"))
        .args(["providers", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = value["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, enabled());
}

/// The crates only the `projectfile` binary needs (the `cli` feature).
const CLI_CRATES: [&str; 3] = ["clap", "clap_complete", "anyhow"];

/// The normal and build dependency tree (what gets compiled) of a host crate generated in a
/// temporary directory, depending on the facade by path with `facade_features`.
fn host_tree(facade_features: &str) -> Vec<String> {
    let facade = env!("CARGO_MANIFEST_DIR");
    let host = tempfile::tempdir().unwrap();
    std::fs::create_dir(host.path().join("src")).unwrap();
    std::fs::write(
        host.path().join("Cargo.toml"),
        format!(
            "[package]\nname = \"minimal-host\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
             publish = false\n\n[dependencies]\nprojectfile = {{ path = {facade:?}, {facade_features} }}\n\n\
             [workspace]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        host.path().join("src/main.rs"),
        "fn main() { assert!(projectfile::provider(\"codex\").is_some()); }\n",
    )
    .unwrap();
    // The workspace's lock file pins the same versions, so this resolves offline.
    std::fs::copy(
        std::path::Path::new(facade).join("Cargo.lock"),
        host.path().join("Cargo.lock"),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "--edges",
            "normal,build",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}"])
        .current_dir(host.path())
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo tree failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_host_with_one_provider_compiles_no_cli_crate() {
    let tree = host_tree("default-features = false, features = [\"codex\"]");
    assert!(tree.iter().any(|c| c == "projectfile-codex"), "{tree:?}");
    assert!(tree.iter().any(|c| c == "projectfile-core"), "{tree:?}");
    for name in CLI_CRATES
        .iter()
        .chain(&["projectfile-claude", "projectfile-cursor"])
    {
        assert!(
            !tree.iter().any(|c| c == name),
            "{name} is in a library-only host's tree: {tree:?}"
        );
    }
}

#[test]
fn the_default_features_bring_the_cli() {
    // The same check the other way round, so the one above cannot pass by reading nothing.
    let tree = host_tree("features = []");
    for name in CLI_CRATES {
        assert!(tree.iter().any(|c| c == name), "{name} missing: {tree:?}");
    }
}
