//! `cargo xtask tidy`: the project's house rules, checked over the source tree (and run as a
//! test, as rust-analyzer does, so `cargo test` enforces them too).
//!
//! - the manifests ([`manifests`]): every published crate has the full metadata and both licence
//!   files; every declared dependency is used, and every workspace dependency by some crate;
//! - every crate under `providers/` is registered: workspace dependency, facade feature (in
//!   `default` too), optional facade dependency, a line in the registry of `src/lib.rs`; it has a
//!   `tests/suite.rs` running the shared suite under its own harness (a `[[test]]` with
//!   `harness = false`), a `//!` docs page whose `# Facts relied on` table is
//!   filled in (no `TODO(maintainer)` left), and it depends only on `projectfile-provider` and
//!   the pure crates of [`PROVIDER_PURE_DEPENDENCIES`] (its tests may use anything), and its
//!   sources name none of the standard library's modules that reach the outside world
//!   (`provider_purity`: `std::env`, `std::fs`, `std::process`, `std::net`, …);
//! - every `.rs` file starts with a `//!` doc;
//! - library code outside `core/src/fsio/` never writes, renames, removes or creates files
//!   itself (tests, examples, xtask and the conformance suite's fixtures are exempt; clippy's
//!   `disallowed-methods` enforces the std calls at compile time, this catches the rest);
//! - every `allow(clippy::disallowed_methods)` outside `core/src/fsio/`, test files and test
//!   modules says why in a `//` comment (a write, a following walk or a resolution by path is a
//!   decision someone must be able to review);
//! - no placeholder macros and no ignored tests anywhere;
//! - in `core/src`, no function longer than 110 lines and no circle among the top-level modules
//!   (`structure`).

use anyhow::{Context, Result};
use std::fmt;
use std::path::Path;

use crate::manifests::{self, Manifest};

// The facts-table rules, shared with the conformance suite's `facts_are_recorded` check (the
// same source file, so both say the same thing; xtask still depends on none of our crates). A
// plain comment: an outer doc here would make rustdoc resolve the module's own links from tidy.
#[path = "../../conformance/src/facts.rs"]
#[allow(dead_code)]
mod facts;
mod provider_purity;
mod structure;

/// Provider crates that are still placeholders while their issue lands them. They are skipped
/// only while they implement no `Provider`; from then on every rule applies. Remove a name when
/// its provider lands.
const PLACEHOLDERS: &[&str] = &[];

/// One broken rule: where, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Relative to the workspace root.
    pub path: String,
    /// 1-based line, when it is about one.
    pub line: Option<usize>,
    /// One sentence.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

pub(crate) fn problem(
    path: impl Into<String>,
    line: Option<usize>,
    message: impl Into<String>,
) -> Problem {
    Problem {
        path: path.into(),
        line,
        message: message.into(),
    }
}

fn read(root: &Path, rel: &str) -> Result<String> {
    std::fs::read_to_string(root.join(rel)).with_context(|| format!("{rel}: cannot read"))
}

/// Runs every check; the problems found, in a stable order.
pub fn check(root: &Path) -> Result<Vec<Problem>> {
    let mut problems = Vec::new();
    providers_are_registered(root, &mut problems)?;
    let manifests = manifests::workspace(root)?;
    manifests::metadata_is_complete(root, &manifests, &mut problems)?;
    manifests::dependencies_are_used(root, &manifests, &mut problems)?;
    let files = rust_files(root)?;
    modules_have_docs(root, &files, &mut problems)?;
    writes_go_through_fsio(root, &files, &mut problems)?;
    no_placeholders(root, &files, &mut problems)?;
    allowed_disallowed_methods_say_why(root, &files, &mut problems)?;
    structure::function_lengths(root, &files, &mut problems)?;
    structure::no_import_circles(root, &files, &mut problems)?;
    provider_purity::providers_read_only_their_context(root, &files, &mut problems)?;
    Ok(problems)
}

/// `cargo xtask tidy`.
pub fn run(root: &Path) -> Result<()> {
    let problems = check(root)?;
    if problems.is_empty() {
        eprintln!("tidy: ok");
        return Ok(());
    }
    for p in &problems {
        eprintln!("{p}");
    }
    anyhow::bail!("tidy: {} problem(s)", problems.len())
}

/// Every `.rs` file of the workspace, relative to `root`, sorted; `target/` and hidden
/// directories (`.git`, …) are skipped.
#[allow(clippy::disallowed_methods)] // a developer tool listing the repository's own sources
pub fn rust_files(root: &Path) -> Result<Vec<String>> {
    let skipped = |entry: &walkdir::DirEntry| {
        let name = entry.file_name().to_string_lossy();
        entry.depth() > 0
            && entry.file_type().is_dir()
            && (name == "target" || name.starts_with('.'))
    };
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| !skipped(e))
    {
        let entry = entry.with_context(|| format!("{}: cannot list", root.display()))?;
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file() && name.ends_with(".rs") {
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    out.sort();
    Ok(out)
}

/// The crates under `providers/` (directories holding a `Cargo.toml`), sorted.
#[allow(clippy::disallowed_methods)] // a developer tool listing the repository's own folders
pub fn provider_dirs(root: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let dir = root.join("providers");
    for entry in
        std::fs::read_dir(&dir).with_context(|| format!("{}: cannot list", dir.display()))?
    {
        let entry = entry?;
        if entry.path().join("Cargo.toml").is_file() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// `my-cli` → `projectfile_my_cli`.
pub fn crate_ident(name: &str) -> String {
    format!("projectfile_{}", name.replace('-', "_"))
}

/// Whether the array at `key` of the table at `dotted` holds the string `value`.
fn array_has(manifest: &Manifest, dotted: &str, key: &str, value: &str) -> bool {
    manifest
        .get(dotted, key)
        .and_then(toml_edit::Item::as_array)
        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(value)))
}

/// The `field` of the dependency `key` of the table at `dotted` (`path`, `optional`, …).
fn dependency_field<'a>(
    manifest: &'a Manifest,
    dotted: &str,
    key: &str,
    field: &str,
) -> Option<&'a toml_edit::Item> {
    manifest.get(dotted, key)?.as_table_like()?.get(field)
}

/// Registration, conformance, docs page and dependency direction of every provider.
pub fn providers_are_registered(root: &Path, problems: &mut Vec<Problem>) -> Result<()> {
    let manifest = Manifest::load(root, "")?;
    let registry = read(root, "src/lib.rs")?;
    let providers = provider_dirs(root)?;

    for name in &providers {
        let dir = format!("providers/{name}");
        let lib_rel = format!("{dir}/src/lib.rs");
        let lib = read(root, &lib_rel).unwrap_or_default();
        if PLACEHOLDERS.contains(&name.as_str()) && !lib.contains("impl Provider for") {
            continue;
        }
        let package = format!("projectfile-{name}");
        let path = dependency_field(&manifest, "workspace.dependencies", &package, "path");
        if path.and_then(toml_edit::Item::as_str) != Some(dir.as_str()) {
            problems.push(problem(
                "Cargo.toml",
                None,
                format!("{dir} is not registered: add `{package} = {{ path = \"{dir}\", version = \"0.1.0\" }}` to [workspace.dependencies] (or run `cargo xtask new-provider` for new providers)"),
            ));
        }
        if !array_has(&manifest, "features", name, &format!("dep:{package}")) {
            problems.push(problem(
                "Cargo.toml",
                None,
                format!("{dir} has no feature: add `{name} = [\"dep:{package}\"]` to [features]"),
            ));
        }
        if !array_has(&manifest, "features", "default", name) {
            problems.push(problem(
                "Cargo.toml",
                None,
                format!(
                    "{dir} is not in the default features: add \"{name}\" to `default = [...]`"
                ),
            ));
        }
        let optional = dependency_field(&manifest, "dependencies", &package, "optional");
        if optional.and_then(toml_edit::Item::as_bool) != Some(true) {
            problems.push(problem(
                "Cargo.toml",
                None,
                format!("{dir} is not a facade dependency: add `{package} = {{ workspace = true, optional = true }}` to [dependencies]"),
            ));
        }
        let cfg = format!("#[cfg(feature = \"{name}\")]");
        let lines: Vec<&str> = registry.lines().collect();
        let registered = lines.iter().enumerate().any(|(i, l)| {
            l.trim() == cfg
                && lines
                    .get(i + 1)
                    .is_some_and(|next| next.contains(&format!("{}::", crate_ident(name))))
        });
        if !registered {
            problems.push(problem(
                "src/lib.rs",
                None,
                format!("{dir} is not registered in the provider registry: add `{cfg}` and `out.push(Box::new({}::…));` to providers()", crate_ident(name)),
            ));
        }
        let own = Manifest::load(root, &dir)?;
        if own.package_name() != Some(package.as_str()) {
            problems.push(problem(
                &own.rel,
                own.line("package", "name"),
                format!("the package must be named `{package}`"),
            ));
        }
        provider_dependencies_are_the_contract(&own, problems);
        suite_is_run(root, &dir, name, &own, problems);
        for gap in facts::missing_facts(name, &lib) {
            let (path, line, message) = split_located(&gap);
            problems.push(problem(path, line, message));
        }
    }

    // The other way round: nothing registered for a provider that does not exist.
    if let Some(features) = manifest.table("features") {
        for (feature, item) in features.iter() {
            let enabled = item.as_array().into_iter().flatten();
            for name in enabled.filter_map(|v| v.as_str()?.strip_prefix("dep:projectfile-")) {
                if !providers.iter().any(|p| p == name) {
                    problems.push(problem(
                        "Cargo.toml",
                        manifest.line("features", feature),
                        format!(
                            "feature for projectfile-{name}, but providers/{name} does not exist"
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// What a provider crate may depend on besides the contract: pure data crates, which can read
/// neither the environment nor the file system.
pub const PROVIDER_PURE_DEPENDENCIES: &[&str] = &["serde", "serde_json", "semver"];

/// A provider runs the shared suite: `tests/suite.rs` calls `conformance_suite!` and its
/// manifest declares that target with `harness = false` (the suite brings its own harness).
fn suite_is_run(root: &Path, dir: &str, name: &str, own: &Manifest, problems: &mut Vec<Problem>) {
    let suite_rel = format!("{dir}/tests/suite.rs");
    match std::fs::read_to_string(root.join(&suite_rel)) {
        Ok(text) if text.contains("conformance_suite!") => {}
        _ => problems.push(problem(
            suite_rel,
            None,
            format!("missing: the provider must run the shared suite: `projectfile_conformance::conformance_suite!({}::…);`", crate_ident(name)),
        )),
    }
    if !own.has_harness_free_test("suite") {
        problems.push(problem(
            &own.rel,
            None,
            "missing: the shared suite runs under its own harness: add `[[test]]` with `name = \"suite\"` and `harness = false`".to_string(),
        ));
    }
}

/// A provider crate's `[dependencies]` are `projectfile-provider` and pure crates only: not core
/// (whose I/O a provider must never reach), not another provider, nothing that does I/O.
fn provider_dependencies_are_the_contract(own: &Manifest, problems: &mut Vec<Problem>) {
    // Normal, build and target-specific dependencies all reach the provider's code; only its
    // tests (dev-dependencies) may use the engine and fixtures.
    let shipped: Vec<(String, String)> = own
        .dependencies()
        .into_iter()
        .filter(|(section, _)| !section.ends_with("dev-dependencies"))
        .collect();
    if !shipped
        .iter()
        .any(|(section, dep)| section == "dependencies" && dep == "projectfile-provider")
    {
        problems.push(problem(
            &own.rel,
            None,
            "a provider depends on the contract: add `projectfile-provider.workspace = true` to [dependencies]",
        ));
    }
    for (section, dep) in shipped {
        let allowed = section == "dependencies"
            && (dep == "projectfile-provider"
                || PROVIDER_PURE_DEPENDENCIES.contains(&dep.as_str()));
        if !allowed {
            problems.push(problem(
                &own.rel,
                own.line(&section, &dep),
                format!(
                    "a provider depends only on projectfile-provider (and the pure crates {}), not on {dep} in [{section}]: shared plan shapes go to projectfile_provider::patterns, and whatever needs I/O is core's, handed in through the PlanContext",
                    PROVIDER_PURE_DEPENDENCIES.join(", ")
                ),
            ));
        }
    }
}

/// `path:line: message` or `path: message` back into its parts.
fn split_located(text: &str) -> (String, Option<usize>, String) {
    let Some((path, rest)) = text.split_once(": ") else {
        return (String::new(), None, text.to_string());
    };
    match path.rsplit_once(':') {
        Some((file, line)) if line.parse::<usize>().is_ok() => {
            (file.to_string(), line.parse().ok(), rest.to_string())
        }
        _ => (path.to_string(), None, rest.to_string()),
    }
}

/// Every `.rs` file starts with a `//!` doc.
pub fn modules_have_docs(root: &Path, files: &[String], problems: &mut Vec<Problem>) -> Result<()> {
    for rel in files {
        let text = read(root, rel)?;
        if !text.starts_with("//!") {
            problems.push(problem(
                rel.clone(),
                Some(1),
                "every module starts with a `//!` doc saying what it is for",
            ));
        }
    }
    Ok(())
}

/// Library sources that must not touch the file system themselves.
fn is_library_source(rel: &str) -> bool {
    let in_providers_src = rel.starts_with("providers/") && rel.split('/').nth(2) == Some("src");
    (rel.starts_with("src/") || rel.starts_with("core/src/") || in_providers_src)
        && !rel.starts_with("core/src/fsio/")
}

/// Calls that write, rename, remove, create or link, outside `core/src/fsio`.
const WRITES: &[&str] = &[
    "fs::write(",
    "fs::rename(",
    "fs::remove_file(",
    "fs::remove_dir(",
    "fs::remove_dir_all(",
    "fs::create_dir(",
    "fs::create_dir_all(",
    "fs::copy(",
    "fs::hard_link(",
    "fs::set_permissions(",
    "fs::symlink(",
    "File::create(",
    "File::create_new(",
    "OpenOptions",
    "renameat",
    "unlinkat",
    "mkdirat",
    "linkat(",
    "symlinkat",
    "OFlags::CREATE",
    "OFlags::WRONLY",
    "OFlags::RDWR",
    "O_CREAT",
    "O_WRONLY",
    "O_RDWR",
];

/// No library code outside `core/src/fsio` writes files directly (test modules exempt).
pub fn writes_go_through_fsio(
    root: &Path,
    files: &[String],
    problems: &mut Vec<Problem>,
) -> Result<()> {
    for rel in files.iter().filter(|r| is_library_source(r)) {
        let text = read(root, rel)?;
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("#[cfg(test)]") {
                break; // the test module, by convention last in the file
            }
            if code.starts_with("//") {
                continue;
            }
            if let Some(call) = WRITES.iter().find(|w| code.contains(*w)) {
                problems.push(problem(
                    rel.clone(),
                    Some(i + 1),
                    format!("`{call}` outside core/src/fsio: write, rename, remove and create through projectfile_core::fsio (the one chokepoint)"),
                ));
            }
        }
    }
    Ok(())
}

/// Whether `rel` is a test file (an integration test, its support code, a test fixture).
fn is_test_file(rel: &str) -> bool {
    rel.starts_with("tests/") || rel.contains("/tests/")
}

/// Whether a trimmed line is a plain `//` comment with some text (not a doc comment).
fn is_reason(line: &str) -> bool {
    line.starts_with("//")
        && !line.starts_with("///")
        && !line.starts_with("//!")
        && !line.trim_start_matches('/').trim().is_empty()
}

/// Every `#[allow(…clippy::disallowed_methods…)]` (or `#![allow(…)]`) outside `core/src/fsio/`,
/// test files and test modules (`#[cfg(test)]` right above) carries its reason: a `//` comment
/// after the attribute on its last line, or on the line just above it.
pub fn allowed_disallowed_methods_say_why(
    root: &Path,
    files: &[String],
    problems: &mut Vec<Problem>,
) -> Result<()> {
    for rel in files
        .iter()
        .filter(|r| !r.starts_with("core/src/fsio/") && !is_test_file(r))
    {
        let text = read(root, rel)?;
        let lines: Vec<&str> = text.lines().collect();
        let mut at = 0;
        while at < lines.len() {
            let code = lines[at].trim_start();
            if !(code.starts_with("#[allow(") || code.starts_with("#![allow(")) {
                at += 1;
                continue;
            }
            let start = at;
            let mut end = at;
            while !lines[end].contains(")]") && end + 1 < lines.len() {
                end += 1;
            }
            at = end + 1;
            if !lines[start..=end]
                .iter()
                .any(|l| l.contains("clippy::disallowed_methods"))
            {
                continue;
            }
            let above = start.checked_sub(1).map_or("", |a| lines[a].trim_start());
            let trailing = lines[end]
                .split_once(")]")
                .map_or("", |(_, rest)| rest.trim_start());
            if above.starts_with("#[cfg(test)]") || is_reason(above) || is_reason(trailing) {
                continue;
            }
            problems.push(problem(
                rel.clone(),
                Some(start + 1),
                "`allow(clippy::disallowed_methods)` without a reason: say why this code may write, walk or resolve by path outside projectfile_core::fsio, in a `// …` comment on the line above (or after the attribute)",
            ));
        }
    }
    Ok(())
}

/// The strings this check refuses, spelled so that this file does not contain them.
fn placeholders() -> [String; 3] {
    [
        format!("{}!(", "todo"),
        format!("{}!(", "unimplemented"),
        format!("#[{}", "ignore"),
    ]
}

/// No placeholder macros and no ignored tests in any `.rs` file.
pub fn no_placeholders(root: &Path, files: &[String], problems: &mut Vec<Problem>) -> Result<()> {
    let banned = placeholders();
    for rel in files {
        let text = read(root, rel)?;
        for (i, line) in text.lines().enumerate() {
            if let Some(found) = banned.iter().find(|b| line.contains(b.as_str())) {
                problems.push(problem(
                    rel.clone(),
                    Some(i + 1),
                    format!("`{found}` is not allowed: finish the code, or record what is missing as data (a conformance or tidy check says what to fill in)"),
                ));
            }
        }
    }
    Ok(())
}

/// Copies the workspace's source files (what git tracks plus untracked files it does not
/// ignore; without git, a walk skipping `target/` and `.git`) into `dest`. For tests that
/// change a scratch copy of the workspace.
#[cfg(test)]
#[allow(clippy::disallowed_methods)] // xtask copies the repository into its own scratch folder
pub fn copy_workspace(root: &Path, dest: &Path) -> Result<()> {
    let listed = std::process::Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output();
    use std::path::PathBuf;
    let files: Vec<PathBuf> = match listed {
        Ok(out) if out.status.success() => out
            .stdout
            .split(|b| *b == 0)
            .filter(|f| !f.is_empty())
            .map(|f| PathBuf::from(String::from_utf8_lossy(f).into_owned()))
            .collect(),
        _ => {
            let mut all = Vec::new();
            fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
                for entry in std::fs::read_dir(dir)? {
                    let entry = entry?;
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let kind = entry.file_type()?;
                    if kind.is_dir() {
                        if name != "target" && name != ".git" {
                            walk(root, &entry.path(), out)?;
                        }
                    } else if kind.is_file() {
                        let path = entry.path();
                        out.push(path.strip_prefix(root).unwrap_or(&path).to_path_buf());
                    }
                }
                Ok(())
            }
            walk(root, root, &mut all)?;
            all
        }
    };
    for rel in files {
        let from = root.join(&rel);
        if !from.is_file() {
            continue; // deleted in the work tree
        }
        let to = dest.join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(&from, &to).with_context(|| format!("copy {}", rel.display()))?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn tidy() {
        let problems = check(&crate::workspace_root()).unwrap();
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(list.is_empty(), "cargo xtask tidy:\n{}", list.join("\n"));
    }

    #[test]
    fn an_unregistered_provider_is_named() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        copy_workspace(&crate::workspace_root(), root).unwrap();
        crate::scaffold::new_provider(root, "zeta").unwrap();
        // Take the registry lines back out of src/lib.rs.
        let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
        let unregistered: String = lib
            .lines()
            .filter(|l| !l.contains("feature = \"zeta\"") && !l.contains("projectfile_zeta::"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_ne!(lib, unregistered);
        std::fs::write(root.join("src/lib.rs"), unregistered).unwrap();

        let mut problems = Vec::new();
        providers_are_registered(root, &mut problems).unwrap();
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert!(
            list.iter().any(|p| p.starts_with(
                "src/lib.rs: providers/zeta is not registered in the provider registry"
            )),
            "{list:#?}"
        );
        // The scaffold's facts are still to fill in, and tidy says so.
        assert!(
            list.iter()
                .any(|p| p.starts_with("providers/zeta/src/lib.rs:") && p.contains("fill in")),
            "{list:#?}"
        );
        // Everything else about it is registered.
        assert!(
            !list.iter().any(|p| p.starts_with("Cargo.toml")),
            "{list:#?}"
        );
    }

    #[test]
    fn a_provider_reaching_past_the_contract_is_named() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        copy_workspace(&crate::workspace_root(), root).unwrap();
        let manifest = root.join("providers/codex/Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let reaching = text
            .replace(
                "projectfile-provider.workspace = true",
                "projectfile-core.workspace = true",
            )
            .replace(
                "[dev-dependencies]",
                "[target.'cfg(unix)'.dependencies]\nlibc.workspace = true\n\n[build-dependencies]\nwhich.workspace = true\n\n[dev-dependencies]\ntempfile.workspace = true",
            );
        assert_ne!(text, reaching);
        std::fs::write(&manifest, reaching).unwrap();
        let mut problems = Vec::new();
        providers_are_registered(root, &mut problems).unwrap();
        let about = |needle: &str| {
            problems
                .iter()
                .any(|p| p.path == "providers/codex/Cargo.toml" && p.message.contains(needle))
        };
        assert!(
            about("add `projectfile-provider.workspace = true`"),
            "{problems:#?}"
        );
        assert!(
            about("not on projectfile-core in [dependencies]"),
            "{problems:#?}"
        );
        assert!(
            about("not on libc in [target.cfg(unix).dependencies]"),
            "{problems:#?}"
        );
        assert!(
            about("not on which in [build-dependencies]"),
            "{problems:#?}"
        );
        // The tests may use anything.
        assert!(!about("tempfile"), "{problems:#?}");
    }

    #[test]
    fn a_provider_not_running_the_suite_under_its_harness_is_named() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        copy_workspace(&crate::workspace_root(), root).unwrap();
        let manifest = root.join("providers/codex/Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let libtest = text.replace("harness = false", "harness = true");
        assert_ne!(text, libtest);
        std::fs::write(&manifest, libtest).unwrap();
        std::fs::remove_file(root.join("providers/codex/tests/suite.rs")).unwrap();
        let mut problems = Vec::new();
        providers_are_registered(root, &mut problems).unwrap();
        let named = |path: &str, needle: &str| {
            problems
                .iter()
                .any(|p| p.path == path && p.message.contains(needle))
        };
        assert!(
            named(
                "providers/codex/tests/suite.rs",
                "conformance_suite!(projectfile_codex::…)"
            ),
            "{problems:#?}"
        );
        assert!(
            named("providers/codex/Cargo.toml", "`harness = false`"),
            "{problems:#?}"
        );
        assert_eq!(problems.len(), 2, "{problems:#?}");
    }

    #[test]
    fn a_feature_for_a_missing_provider_is_named() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        copy_workspace(&crate::workspace_root(), root).unwrap();
        std::fs::remove_dir_all(root.join("providers/codex")).unwrap();
        let mut problems = Vec::new();
        providers_are_registered(root, &mut problems).unwrap();
        assert!(
            problems
                .iter()
                .any(|p| p.path == "Cargo.toml"
                    && p.message.contains("providers/codex does not exist")),
            "{problems:#?}"
        );
    }

    #[test]
    fn direct_writes_outside_fsio_are_named() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        std::fs::create_dir_all(root.join("core/src/fsio")).unwrap();
        std::fs::create_dir_all(root.join("providers/x/src")).unwrap();
        std::fs::create_dir_all(root.join("providers/x/tests")).unwrap();
        let write = format!("//! x\nfn f() {{ std::{}\"a\", b\"\"); }}\n", "fs::write(");
        let in_tests = format!(
            "//! x\n#[cfg(test)]\nmod t {{ fn f() {{ std::{}); }} }}\n",
            "fs::write("
        );
        std::fs::write(root.join("providers/x/src/lib.rs"), &write).unwrap();
        std::fs::write(root.join("providers/x/tests/t.rs"), &write).unwrap();
        std::fs::write(root.join("core/src/fsio/mod.rs"), &write).unwrap();
        std::fs::write(root.join("core/src/ok.rs"), &in_tests).unwrap();
        let files = rust_files(root).unwrap();
        let mut problems = Vec::new();
        writes_go_through_fsio(root, &files, &mut problems).unwrap();
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(problems[0].path, "providers/x/src/lib.rs");
        assert_eq!(problems[0].line, Some(2));
    }

    #[test]
    fn an_allowed_following_call_without_a_reason_is_named() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        for dir in ["src", "core/src/fsio", "tests"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        let allow = "#[allow(clippy::disallowed_methods)]";
        let cases = [
            (
                "src/bare.rs",
                format!("//! x\n/// doc\n{allow}\nfn f() {{}}\n"),
            ),
            (
                "src/multi.rs",
                "//! x\n#![allow(\n    clippy::unwrap_used,\n    clippy::disallowed_methods\n)]\n"
                    .to_string(),
            ),
            (
                "src/above.rs",
                format!("//! x\n// names a root once\n{allow}\nfn f() {{}}\n"),
            ),
            (
                "src/after.rs",
                format!("//! x\n{allow} // read-only listing\nfn f() {{}}\n"),
            ),
            (
                "src/test_mod.rs",
                format!("//! x\n#[cfg(test)]\n{allow}\nmod tests {{}}\n"),
            ),
            (
                "src/other.rs",
                "//! x\n#[allow(clippy::unwrap_used)]\nfn f() {}\n".to_string(),
            ),
            (
                "core/src/fsio/mod.rs",
                format!("//! x\n{allow}\nfn f() {{}}\n"),
            ),
            ("tests/t.rs", format!("//! x\n{allow}\nfn f() {{}}\n")),
        ];
        for (rel, text) in &cases {
            std::fs::write(root.join(rel), text).unwrap();
        }
        let files = rust_files(root).unwrap();
        let mut problems = Vec::new();
        allowed_disallowed_methods_say_why(root, &files, &mut problems).unwrap();
        let named: Vec<(String, Option<usize>)> =
            problems.iter().map(|p| (p.path.clone(), p.line)).collect();
        assert_eq!(
            named,
            vec![
                ("src/bare.rs".to_string(), Some(3)),
                ("src/multi.rs".to_string(), Some(2)),
            ]
        );
    }

    #[test]
    fn undocumented_modules_and_placeholders_are_named() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "// not a module doc\n").unwrap();
        let body = format!("//! b\nfn f() {{ {}) }}\n", placeholders()[0]);
        std::fs::write(root.join("src/b.rs"), body).unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::write(root.join("target/debug/c.rs"), "generated\n").unwrap();
        let files = rust_files(root).unwrap();
        assert_eq!(files, ["src/a.rs", "src/b.rs"]);
        let mut problems = Vec::new();
        modules_have_docs(root, &files, &mut problems).unwrap();
        no_placeholders(root, &files, &mut problems).unwrap();
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(list.len(), 2, "{list:#?}");
        assert!(list[0].starts_with("src/a.rs:1: every module starts"));
        assert!(list[1].starts_with("src/b.rs:2: `"));
    }
}
