//! `cargo xtask new-provider NAME`: scaffolds `providers/NAME/` from the closest existing pattern
//! (the session block in the root `AGENTS.md`) and registers it everywhere a provider must be:
//! the workspace dependency, the facade's feature (in `default` too) and optional dependency, and
//! the registry in `src/lib.rs`. CI picks it up by itself (`cargo xtask ci` walks `providers/`).
//!
//! The generated crate builds and passes the shared conformance suite as it is; what its
//! maintainer must still do is marked `TODO(maintainer)`, which the suite's
//! `facts_are_recorded` test and `cargo xtask tidy` refuse, each naming the line to fill in.
#![allow(clippy::disallowed_methods)] // xtask writes the project's own source files

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value};

use crate::manifests::{LICENSE_FILES, Manifest};
use crate::tidy::{crate_ident, provider_dirs};

/// Names that would collide with a crate or feature of ours.
const RESERVED: &[&str] = &[
    "provider",
    "core",
    "conformance",
    "xtask",
    "default",
    "schema",
    "landlock",
    "host",
    "receipts",
];

/// Checks a provider name: 1 to 32 lowercase ASCII letters, digits and single `-` between them,
/// starting with a letter; not a provider that exists, nor a name we use for something else.
pub fn validate_name(root: &Path, name: &str) -> Result<()> {
    let shape = !name.is_empty()
        && name.len() <= 32
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.ends_with('-')
        && !name.contains("--");
    if !shape {
        bail!(
            "{name:?}: a provider name is 1 to 32 lowercase ASCII letters, digits and single '-' between them, starting with a letter (the CLI's name, e.g. `gemini` or `qwen-code`)"
        );
    }
    if RESERVED.contains(&name) {
        bail!(
            "{name}: the name is taken by a crate or feature of projectfile; pick the CLI's own name"
        );
    }
    if root.join("providers").join(name).exists() {
        bail!("{name}: providers/{name} already exists");
    }
    let manifest = Manifest::load(root, "")?;
    let package = format!("projectfile-{name}");
    let taken = manifest.get("features", name).is_some()
        || manifest.get("workspace.dependencies", &package).is_some()
        || manifest.get("dependencies", &package).is_some();
    if taken {
        bail!(
            "{name}: Cargo.toml already names a feature or crate {name}; remove it first or pick another name"
        );
    }
    Ok(())
}

/// `my-cli` → `MyCli`.
pub fn type_name(name: &str) -> String {
    name.split('-')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

fn cargo_toml(name: &str) -> String {
    format!(
        r#"[package]
name = "projectfile-{name}"
description = "The projectfile provider for the {name} CLI: where it reads session instructions, skills and configuration"
version.workspace = true
edition.workspace = true
rust-version.workspace = true
license.workspace = true
authors.workspace = true
repository.workspace = true
homepage.workspace = true
documentation = "https://docs.rs/projectfile-{name}"
readme.workspace = true
keywords.workspace = true
categories.workspace = true

[dependencies]
projectfile-provider.workspace = true

[dev-dependencies]
projectfile-conformance.workspace = true

# The shared conformance suite brings its own harness: it runs the checks the provider's
# capabilities and plan make apply, and lists the others.
[[test]]
name = "suite"
harness = false

[lints]
workspace = true
"#
    )
}

fn lib_rs(name: &str) -> String {
    let ty = type_name(name);
    let todo = "TODO(maintainer)";
    format!(
        r#"//! The {name} CLI provider. {todo}: say in one sentence where the session text goes and why
//! (see `providers/codex/src/lib.rs`).
//!
//! {todo}: delete this paragraph once the provider is finished. `cargo xtask new-provider`
//! generated it from the closest existing pattern, the session block in the root `AGENTS.md`
//! ([`patterns::agents_md_block`]). Make the spec, the discovery profile and the session plan say
//! what the CLI really does, record each fact they rely on in the table below with its source, and
//! resolve every to-do marker: this crate's `facts_are_recorded` test and `cargo xtask tidy` fail,
//! naming each line, until then. The guide is `docs/adding-a-provider.md`.
//!
//! # Facts relied on
//!
//! | fact | source |
//! |---|---|
//! | {todo}: the instruction files the CLI reads, in what order, and whether the first one found wins | {todo}: its docs page or source file |
//! | {todo}: how it finds the project root (e.g. the nearest `.git`) | {todo} |
//! | {todo}: its byte budget for instruction files, if it has one | {todo} |
//! | {todo}: whether it strips HTML comments before the model sees them (if not, our marker lines reach the model) | {todo} |
//! | {todo}: where it reads skills, MCP servers, hooks and its configuration, if at all | {todo} |

use projectfile_provider::{{
    DiscoveryProfile, Plan, PlanContext, Provider, ProviderSpec, Result, patterns,
}};

/// The {name} CLI, as data: what it takes and how it finds instruction files.
// {todo}: chain what the CLI really takes (`.skills_in(dir)` where it reads skills, then
// `.takes_mcp()`, `.takes_hooks()`, `.takes_cli_config()`, `.writes_owned_files()`,
// `.creates_markers()`, `.with_cli_home_env(VAR)`, `.probes_binary(…)`) and plan each one; the
// conformance suite picks its checks from these.
pub const SPEC: ProviderSpec = ProviderSpec::new("{name}", discovery).session_text_in_file();

/// The {name} provider.
#[derive(Clone, Copy, Debug, Default)]
pub struct {ty};

/// How the CLI discovers instruction files.
fn discovery() -> DiscoveryProfile {{
    // {todo}: how the CLI discovers instruction files, from the facts table.
    DiscoveryProfile {{
        per_directory: vec![patterns::AGENTS_MD.into()],
        root_markers: vec![".git".into()],
        ..DiscoveryProfile::default()
    }}
}}

impl Provider for {ty} {{
    fn spec(&self) -> &'static ProviderSpec {{
        &SPEC
    }}

    fn session_plan(&self, ctx: &PlanContext<'_>) -> Result<Plan> {{
        // {todo}: the closest existing pattern, the block in the root AGENTS.md; keep it only
        // if the CLI reads that file (list any file it reads instead, as Codex does).
        patterns::agents_md_block(ctx, &[])
    }}
}}
"#
    )
}

fn suite_rs(name: &str) -> String {
    let ident = crate_ident(name);
    let ty = type_name(name);
    format!(
        r#"//! The shared conformance suite for {name}: every check its capabilities and plan make apply,
//! and `facts_are_recorded`, which fails until the facts its plan relies on are recorded with
//! their sources (a `harness = false` target run by the suite's own harness).

projectfile_conformance::conformance_suite!({ident}::{ty});
"#
    )
}

/// The table at a dotted path (`workspace.dependencies`) of the root manifest.
fn table_mut<'a>(doc: &'a mut DocumentMut, dotted: &str) -> Result<&'a mut Table> {
    let mut table = doc.as_table_mut();
    for part in dotted.split('.') {
        table = table
            .get_mut(part)
            .and_then(Item::as_table_mut)
            .with_context(|| format!("Cargo.toml: no [{dotted}]"))?;
    }
    Ok(table)
}

/// Inserts `key = item` into `table` right after the last entry for which `after` holds, so a
/// new provider's line sits with the others; the entries after it keep their text and comments.
fn insert_after_last(
    table: &mut Table,
    section: &str,
    after: impl Fn(&str, &Item) -> bool,
    key: &str,
    item: Item,
) -> Result<()> {
    let keys: Vec<String> = table.iter().map(|(k, _)| k.to_string()).collect();
    let anchor = keys
        .iter()
        .rposition(|k| table.get(k).is_some_and(|i| after(k, i)))
        .with_context(|| {
            format!("Cargo.toml: no provider entry in [{section}] to add `{key}` after")
        })?;
    let moved: Vec<(toml_edit::Key, Item)> = keys[anchor + 1..]
        .iter()
        .filter_map(|k| table.remove_entry(k))
        .collect();
    table.insert(key, item);
    for (k, v) in moved {
        table.insert_formatted(&k, v);
    }
    Ok(())
}

/// `{ a = b, … }` as a TOML item.
fn inline(fields: &[(&str, Value)]) -> Item {
    let mut table = InlineTable::new();
    for (k, v) in fields {
        table.insert(*k, v.clone());
    }
    Item::Value(Value::InlineTable(table))
}

/// The root manifest with `name` registered: workspace dependency (at the workspace version),
/// feature, default feature, optional facade dependency. Everything else is kept as written.
pub fn register_in_manifest(manifest: &str, name: &str) -> Result<String> {
    let mut doc: DocumentMut = manifest.parse().context("Cargo.toml: not valid TOML")?;
    let package = format!("projectfile-{name}");
    let version = doc
        .get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("version"))
        .and_then(Item::as_str)
        .context("Cargo.toml: no `version` in [workspace.package]")?
        .to_string();
    let is_provider = |k: &str, i: &Item| {
        let path = i.get("path").and_then(Item::as_str);
        k.starts_with("projectfile-") && path.is_some_and(|p| p.starts_with("providers/"))
    };
    insert_after_last(
        table_mut(&mut doc, "workspace.dependencies")?,
        "workspace.dependencies",
        is_provider,
        &package,
        inline(&[
            ("path", format!("providers/{name}").into()),
            ("version", version.into()),
        ]),
    )?;
    let is_provider_feature = |_: &str, i: &Item| {
        let values = i.as_array().into_iter().flatten();
        values
            .filter_map(Value::as_str)
            .any(|v| v.starts_with("dep:projectfile-"))
    };
    let features = table_mut(&mut doc, "features")?;
    let enabled = Item::Value(Value::Array(Array::from_iter([format!("dep:{package}")])));
    insert_after_last(features, "features", is_provider_feature, name, enabled)?;
    features
        .get_mut("default")
        .and_then(Item::as_array_mut)
        .context("Cargo.toml: no `default = [...]` in [features]")?
        .push(name);
    let is_optional_provider = |k: &str, i: &Item| {
        k.starts_with("projectfile-") && i.get("optional").and_then(Item::as_bool) == Some(true)
    };
    insert_after_last(
        table_mut(&mut doc, "dependencies")?,
        "dependencies",
        is_optional_provider,
        &package,
        inline(&[("workspace", true.into()), ("optional", true.into())]),
    )?;
    Ok(doc.to_string())
}

/// The facade's `src/lib.rs` with `name` pushed onto the registry in `providers()`.
pub fn register_in_registry(registry: &str, name: &str) -> Result<String> {
    let lines: Vec<&str> = registry.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("pub fn providers()"))
        .context("src/lib.rs: no `pub fn providers()` registry")?;
    let end = lines[start..]
        .iter()
        .position(|l| l.trim() == "out")
        .map(|i| start + i)
        .context("src/lib.rs: providers() must end with `out`")?;
    let mut out = String::new();
    for (i, l) in registry.split_inclusive('\n').enumerate() {
        if i == end {
            out.push_str(&format!(
                "    #[cfg(feature = \"{name}\")]\n    out.push(Box::new({}::{}));\n",
                crate_ident(name),
                type_name(name)
            ));
        }
        out.push_str(l);
    }
    Ok(out)
}

/// Generates `providers/NAME` and registers it; returns the files written, relative to `root`.
pub fn new_provider(root: &Path, name: &str) -> Result<Vec<PathBuf>> {
    validate_name(root, name)?;
    let manifest_path = root.join("Cargo.toml");
    let registry_path = root.join("src/lib.rs");
    // Compute every change before writing anything, so a refusal leaves the tree as it was.
    let manifest = register_in_manifest(&std::fs::read_to_string(&manifest_path)?, name)?;
    let registry = register_in_registry(&std::fs::read_to_string(&registry_path)?, name)?;
    let dir = PathBuf::from("providers").join(name);
    let files = [
        (dir.join("Cargo.toml"), cargo_toml(name)),
        (dir.join("src/lib.rs"), lib_rs(name)),
        (dir.join("tests/suite.rs"), suite_rs(name)),
        (PathBuf::from("Cargo.toml"), manifest),
        (PathBuf::from("src/lib.rs"), registry),
    ];
    for (rel, text) in &files {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text).with_context(|| format!("write {}", rel.display()))?;
    }
    let mut written: Vec<PathBuf> = files.into_iter().map(|(rel, _)| rel).collect();
    // The licence files, linked to the root's (`cargo package` packs their content).
    for file in LICENSE_FILES {
        let rel = dir.join(file);
        std::os::unix::fs::symlink(Path::new("../..").join(file), root.join(&rel))
            .with_context(|| format!("link {}", rel.display()))?;
        written.push(rel);
    }
    Ok(written)
}

/// `cargo xtask new-provider NAME`.
pub fn run(root: &Path, name: &str) -> Result<()> {
    let written = new_provider(root, name)?;
    for rel in &written {
        eprintln!("wrote {}", rel.display());
    }
    let known = provider_dirs(root)?;
    eprintln!(
        "\nproviders/{name} is registered ({} providers now). Next:\n  \
         1. record the CLI's facts with their sources in providers/{name}/src/lib.rs, and make\n     \
         its SPEC, discovery() and session_plan() say what it does (docs/adding-a-provider.md);\n  \
         2. cargo xtask conformance --provider {name}   (fails on each TODO(maintainer) left)\n  \
         3. cargo xtask tidy",
        known.len()
    );
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn names_are_validated() {
        let root = crate::workspace_root();
        for good in ["acme", "qwen-code", "x1", "a-b-c"] {
            validate_name(&root, good).unwrap();
        }
        for bad in [
            "", "Gemini", "1x", "-x", "x-", "a--b", "a_b", "a b", "é", "a/b", "../x", "core",
            "schema", "default",
        ] {
            assert!(validate_name(&root, bad).is_err(), "{bad:?} accepted");
        }
        for existing in ["codex", "gemini", "qwen"] {
            let taken = validate_name(&root, existing).unwrap_err().to_string();
            assert!(taken.contains("already exists"), "{taken}");
        }
        assert!(
            validate_name(&root, "Bad")
                .unwrap_err()
                .to_string()
                .contains("lowercase")
        );
    }

    #[test]
    fn type_names_are_camel_case() {
        assert_eq!(type_name("codex"), "Codex");
        assert_eq!(type_name("qwen-code"), "QwenCode");
        assert_eq!(type_name("a1-b2"), "A1B2");
    }

    #[test]
    fn registration_edits_only_what_it_must() {
        let root = crate::workspace_root();
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let edited = register_in_manifest(&manifest, "qwen-code").unwrap();
        let added: Vec<&str> = edited
            .lines()
            .filter(|l| !manifest.lines().any(|m| m == *l))
            .collect();
        assert_eq!(added.len(), 4, "{added:#?}");
        assert!(added.contains(
            &"projectfile-qwen-code = { path = \"providers/qwen-code\", version = \"0.1.0\" }"
        ));
        assert!(added.contains(&"qwen-code = [\"dep:projectfile-qwen-code\"]"));
        assert!(added.contains(&"projectfile-qwen-code = { workspace = true, optional = true }"));
        assert!(
            added
                .iter()
                .any(|l| l.starts_with("default = [") && l.ends_with(", \"qwen-code\"]"))
        );
        assert_eq!(edited.lines().count(), manifest.lines().count() + 3);

        let registry = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
        let edited = register_in_registry(&registry, "qwen-code").unwrap();
        assert!(edited.contains(
            "    #[cfg(feature = \"qwen-code\")]\n    out.push(Box::new(projectfile_qwen_code::QwenCode));\n    out\n}"
        ));
    }

    /// Scaffolds a provider in a copy of the workspace, then builds it and runs its conformance
    /// suite there, and runs the facade built with only that provider. Slow on purpose: this is
    /// the proof that `cargo xtask new-provider` gives a crate that builds, is registered, and
    /// fails only on what its maintainer must fill in. It builds into the workspace's own `target/`,
    /// so the dependencies the tests were built with are not compiled again.
    #[test]
    fn a_scaffolded_provider_builds_and_fails_only_on_its_facts() {
        let root = crate::workspace_root();
        let scratch = tempfile::tempdir().unwrap();
        let copy = scratch.path();
        crate::tidy::copy_workspace(&root, copy).unwrap();
        let written = new_provider(copy, "acme-cli").unwrap();
        assert_eq!(written.len(), 7);
        assert!(validate_name(copy, "acme-cli").is_err(), "exists now");

        // The generated code is formatted as `cargo fmt --check` wants it.
        let fmt = std::process::Command::new("rustfmt")
            .args(["--edition", "2024", "--check"])
            .arg(copy.join("providers/acme-cli/src/lib.rs"))
            .arg(copy.join("providers/acme-cli/tests/suite.rs"))
            .arg(copy.join("src/lib.rs"))
            .output()
            .unwrap();
        assert!(
            fmt.status.success(),
            "generated code is not rustfmt-clean:\n{}",
            String::from_utf8_lossy(&fmt.stdout)
        );

        // Tidy flags exactly the maintainer's to-do list, in the new provider only.
        let problems = crate::tidy::check(copy).unwrap();
        assert!(!problems.is_empty());
        for p in &problems {
            assert_eq!(p.path, "providers/acme-cli/src/lib.rs", "{p}");
            assert!(p.message.contains("fill in"), "{p}");
        }

        // The workspace's own build folder: the dependencies the tests were built with are
        // reused where the copy resolves them alike (cargo holds no lock on it while tests run).
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let run = |args: &[&str]| {
            std::process::Command::new(&cargo)
                .args(args)
                .current_dir(copy)
                .env("CARGO_TARGET_DIR", &target)
                .env_remove("RUSTFLAGS")
                .output()
                .unwrap()
        };

        // Its conformance run: every shared check passes; only the facts check fails, saying what.
        let test = run(&["test", "-p", "projectfile-acme-cli", "--no-fail-fast"]);
        // The suite's harness pads test names into a column: one space between words here.
        let stdout: String = String::from_utf8_lossy(&test.stdout)
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") + "\n")
            .collect();
        let stderr = String::from_utf8_lossy(&test.stderr);
        assert!(
            !test.status.success(),
            "the unfilled scaffold must fail:\n{stdout}\n{stderr}"
        );
        assert!(
            stdout.contains("test facts_are_recorded ... FAILED"),
            "{stdout}\n{stderr}"
        );
        assert!(
            stdout.contains("acme-cli: the provider is not finished; fill in:"),
            "{stdout}"
        );
        assert!(
            stdout.contains(
                "providers/acme-cli/src/lib.rs:1: fill in what this TODO(maintainer) asks"
            ),
            "{stdout}"
        );
        let failed: Vec<&str> = stdout
            .lines()
            .filter(|l| l.starts_with("test ") && l.ends_with("FAILED"))
            .collect();
        assert_eq!(failed, ["test facts_are_recorded ... FAILED"], "{stdout}");
        assert!(
            stdout.contains("test user_bytes_round_trip ... ok"),
            "the shared suite did not run:\n{stdout}"
        );

        // The facade built with only this provider lists it. Asked through an example of the
        // copy's own: a `projectfile` binary built here would replace, in the shared build
        // folder, the one the workspace's other tests are running.
        std::fs::write(
            copy.join("examples/scaffold_lists.rs"),
            "use projectfile::core::ProviderExt as _;\n\nfn main() {\n    for p in projectfile::providers() {\n        println!(\"{}\", p.name());\n    }\n}\n",
        )
        .unwrap();
        let listed = run(&[
            "run",
            "--quiet",
            "-p",
            "projectfile",
            "--no-default-features",
            "--features",
            "acme-cli",
            "--example",
            "scaffold_lists",
        ]);
        assert!(
            listed.status.success(),
            "{}",
            String::from_utf8_lossy(&listed.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&listed.stdout), "acme-cli\n");
    }
}
