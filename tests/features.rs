//! The facade registers exactly the providers whose Cargo features are enabled, in a stable order,
//! and the `projectfile providers --json` command lists exactly those.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

/// Every provider feature with its `cfg!`, in registration order.
fn enabled() -> Vec<&'static str> {
    [
        ("claude", cfg!(feature = "claude")),
        ("codex", cfg!(feature = "codex")),
        ("cursor", cfg!(feature = "cursor")),
        ("pi", cfg!(feature = "pi")),
        ("muse", cfg!(feature = "muse")),
        ("agy", cfg!(feature = "agy")),
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
