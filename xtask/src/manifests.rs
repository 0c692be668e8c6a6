//! The workspace's manifests, read with `toml_edit` (spans kept, so a problem names its line), and
//! the house rules about them:
//!
//! - every published crate carries the full metadata (its own `description` and
//!   `documentation`; licence, authors, repository, homepage, readme, keywords, categories,
//!   `rust-version` inherited from `[workspace.package]`) and ships `LICENSE-MIT` and
//!   `LICENSE-APACHE` (docs/releasing.md);
//! - every dependency a manifest declares is used by that crate's sources (`cargo machete`-style:
//!   its name as a path, `name::…`, or in a `use`/`extern crate`, outside comments), normal
//!   dependencies by `src/`, build-dependencies by `build.rs`, dev-dependencies by `src/`, `tests/`, `examples/` or
//!   `benches/`; and every `[workspace.dependencies]` entry is used by some member.

use anyhow::{Context, Result};
use std::path::Path;
use toml_edit::{Document, Item, TableLike};

use crate::tidy::{Problem, problem};

/// One parsed manifest of the workspace.
pub struct Manifest {
    /// Its path relative to the workspace root: `Cargo.toml`, `core/Cargo.toml`, …
    pub rel: String,
    /// Its crate's directory relative to the workspace root (`""` for the root).
    pub dir: String,
    doc: Document<String>,
}

impl Manifest {
    /// Whether a `[[test]]` target named `name` runs without libtest (`harness = false`), as the
    /// conformance suite's own harness needs.
    pub fn has_harness_free_test(&self, name: &str) -> bool {
        self.doc
            .get("test")
            .and_then(Item::as_array_of_tables)
            .is_some_and(|tests| {
                tests.iter().any(|t| {
                    t.get("name").and_then(Item::as_str) == Some(name)
                        && t.get("harness").and_then(Item::as_bool) == Some(false)
                })
            })
    }

    /// Reads and parses `<dir>/Cargo.toml` (`dir` relative to `root`, `""` for the root).
    pub fn load(root: &Path, dir: &str) -> Result<Manifest> {
        let rel = if dir.is_empty() {
            "Cargo.toml".to_string()
        } else {
            format!("{dir}/Cargo.toml")
        };
        let text = std::fs::read_to_string(root.join(&rel))
            .with_context(|| format!("{rel}: cannot read"))?;
        let doc = Document::parse(text).with_context(|| format!("{rel}: not valid TOML"))?;
        Ok(Manifest {
            rel,
            dir: dir.to_string(),
            doc,
        })
    }

    /// The table at a dotted path (`workspace.dependencies`), inline or not.
    pub fn table(&self, dotted: &str) -> Option<&dyn TableLike> {
        let mut item = self.doc.as_item();
        for part in dotted.split('.') {
            item = item.get(part)?;
        }
        item.as_table_like()
    }

    /// The item at `key` in the table at `dotted`.
    pub fn get(&self, dotted: &str, key: &str) -> Option<&Item> {
        self.table(dotted)?.get(key)
    }

    /// The string at `key` in the table at `dotted`.
    pub fn str(&self, dotted: &str, key: &str) -> Option<&str> {
        self.get(dotted, key)?.as_str()
    }

    /// The 1-based line where `key` of the table at `dotted` is written.
    pub fn line(&self, dotted: &str, key: &str) -> Option<usize> {
        let (key, _) = self.table(dotted)?.get_key_value(key)?;
        let start = key.span()?.start;
        Some(self.doc.raw().get(..start)?.matches('\n').count() + 1)
    }

    /// `[package] name`.
    pub fn package_name(&self) -> Option<&str> {
        self.str("package", "name")
    }

    /// Whether this is a package that may be published (`publish` is not `false`).
    pub fn publishes(&self) -> bool {
        self.table("package").is_some()
            && self.get("package", "publish").and_then(Item::as_bool) != Some(false)
    }

    /// Whether `[package] key` is set here or inherited (`key.workspace = true`).
    fn package_has(&self, key: &str) -> Option<Inherited> {
        let item = self.get("package", key)?;
        let inherits = item
            .as_table_like()
            .and_then(|t| t.get("workspace"))
            .and_then(Item::as_bool)
            == Some(true);
        Some(if inherits {
            Inherited::FromWorkspace
        } else {
            Inherited::Own
        })
    }

    /// Every dependency this manifest declares: (section, name), the target-specific ones with
    /// their section written `target.<cfg>.<kind>`.
    pub fn dependencies(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut sections: Vec<String> = KINDS.iter().map(|k| k.to_string()).collect();
        if let Some(targets) = self.table("target") {
            for (cfg, _) in targets.iter() {
                sections.extend(KINDS.iter().map(|k| format!("target.{cfg}.{k}")));
            }
        }
        for section in sections {
            let Some(table) = self.table(&section) else {
                continue;
            };
            for (name, _) in table.iter() {
                out.push((section.clone(), name.to_string()));
            }
        }
        out
    }

    /// Whether this manifest takes `name` from `[workspace.dependencies]` in any section.
    fn inherits_dependency(&self, name: &str) -> bool {
        self.dependencies().iter().any(|(section, dep)| {
            dep == name
                && self
                    .get(section, dep)
                    .and_then(Item::as_table_like)
                    .and_then(|t| t.get("workspace"))
                    .and_then(Item::as_bool)
                    == Some(true)
        })
    }

    /// A path under this crate's directory, relative to the workspace root.
    fn path(&self, rel: &str) -> String {
        if self.dir.is_empty() {
            rel.to_string()
        } else {
            format!("{}/{rel}", self.dir)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Inherited {
    Own,
    FromWorkspace,
}

/// The dependency tables of a manifest.
const KINDS: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];

/// The root manifest and every member's, root first, then in `members` order (a `dir/*` entry
/// expands to its subdirectories holding a `Cargo.toml`, sorted).
pub fn workspace(root: &Path) -> Result<Vec<Manifest>> {
    let top = Manifest::load(root, "")?;
    let mut dirs = Vec::new();
    let members = top
        .get("workspace", "members")
        .and_then(Item::as_array)
        .context("Cargo.toml: no [workspace] members")?;
    for member in members.iter().filter_map(|m| m.as_str()) {
        match member.strip_suffix("/*") {
            Some(parent) => {
                let mut found = Vec::new();
                // A developer tool listing the repository's own folders.
                #[allow(clippy::disallowed_methods)]
                let listed = std::fs::read_dir(root.join(parent))
                    .with_context(|| format!("{parent}: cannot list"))?;
                for entry in listed {
                    let entry = entry?;
                    if entry.path().join("Cargo.toml").is_file() {
                        found.push(format!("{parent}/{}", entry.file_name().to_string_lossy()));
                    }
                }
                found.sort();
                dirs.extend(found);
            }
            None => dirs.push(member.to_string()),
        }
    }
    let mut out = vec![top];
    for dir in dirs {
        out.push(Manifest::load(root, &dir)?);
    }
    Ok(out)
}

/// What a published crate names itself.
const OWN_KEYS: [&str; 2] = ["description", "documentation"];
/// What a published crate inherits from `[workspace.package]` (or sets itself).
const SHARED_KEYS: [&str; 10] = [
    "version",
    "edition",
    "rust-version",
    "license",
    "authors",
    "repository",
    "homepage",
    "readme",
    "keywords",
    "categories",
];
/// The licence files every published crate ships.
pub const LICENSE_FILES: [&str; 2] = ["LICENSE-MIT", "LICENSE-APACHE"];

/// Every published crate has the full metadata and both licence files.
pub fn metadata_is_complete(
    root: &Path,
    manifests: &[Manifest],
    problems: &mut Vec<Problem>,
) -> Result<()> {
    let Some(top) = manifests.first() else {
        return Ok(());
    };
    for m in manifests.iter().filter(|m| m.publishes()) {
        for key in OWN_KEYS {
            if m.package_has(key) != Some(Inherited::Own) {
                problems.push(problem(&m.rel, m.line("package", "name"), format!(
                    "[package] has no `{key}`: a published crate names its own (docs/releasing.md)"
                )));
            }
        }
        for key in SHARED_KEYS {
            let ok = match m.package_has(key) {
                Some(Inherited::Own) => true,
                Some(Inherited::FromWorkspace) => top.get("workspace.package", key).is_some(),
                None => false,
            };
            if !ok {
                problems.push(problem(&m.rel, m.line("package", "name"), format!(
                    "[package] has no `{key}`: add `{key}.workspace = true` (and the key to [workspace.package]) so crates.io shows it"
                )));
            }
        }
        for file in LICENSE_FILES {
            let rel = m.path(file);
            if !root.join(&rel).is_file() {
                problems.push(problem(rel, None, format!(
                    "missing: every published crate ships both licence files; link it to the root's (`ln -s` the relative path to {file})"
                )));
            }
        }
    }
    Ok(())
}

/// Every dependency each manifest declares is used by the crate's sources; every workspace
/// dependency is used by some member.
pub fn dependencies_are_used(
    root: &Path,
    manifests: &[Manifest],
    problems: &mut Vec<Problem>,
) -> Result<()> {
    for m in manifests.iter().filter(|m| m.table("package").is_some()) {
        let code = Sources::read(root, m)?;
        for (section, name) in m.dependencies() {
            let ident = name.replace('-', "_");
            let kind = section.rsplit('.').next().unwrap_or(&section);
            let used = match kind {
                "dev-dependencies" => code.library.mentions(&ident) || code.tests.mentions(&ident),
                "build-dependencies" => code.build.mentions(&ident),
                _ => code.library.mentions(&ident),
            };
            if !used {
                let crate_name = m.package_name().unwrap_or(&m.rel);
                let where_ = match kind {
                    "dev-dependencies" => "its sources, tests, examples or benches",
                    "build-dependencies" => "its build.rs",
                    _ => "its src/",
                };
                problems.push(problem(&m.rel, m.line(&section, &name), format!(
                    "`{name}` is declared in [{section}] but nothing in {where_} uses it: remove it, or use it (`{ident}::…`) ({crate_name})"
                )));
            }
        }
    }
    let Some(top) = manifests.first() else {
        return Ok(());
    };
    if let Some(shared) = top.table("workspace.dependencies") {
        for (name, _) in shared.iter() {
            if !manifests.iter().any(|m| m.inherits_dependency(name)) {
                problems.push(problem(&top.rel, top.line("workspace.dependencies", name), format!(
                    "`{name}` is in [workspace.dependencies] but no crate uses it (`{name}.workspace = true`): remove it"
                )));
            }
        }
    }
    Ok(())
}

/// The Rust sources of one crate, in the groups its dependency kinds may be used from.
struct Sources {
    /// `src/`.
    library: Code,
    /// `tests/`, `examples/`, `benches/`.
    tests: Code,
    /// `build.rs`.
    build: Code,
}

impl Sources {
    fn read(root: &Path, m: &Manifest) -> Result<Sources> {
        let dir = root.join(&m.dir);
        Ok(Sources {
            library: Code::read(&[dir.join("src")])?,
            tests: Code::read(&[dir.join("tests"), dir.join("examples"), dir.join("benches")])?,
            build: Code::read(&[dir.join("build.rs")])?,
        })
    }
}

/// The code lines (comments left out) of a set of `.rs` files.
struct Code(String);

impl Code {
    /// Reads every `.rs` file under each of `paths` (a file or a directory; missing is empty).
    fn read(paths: &[std::path::PathBuf]) -> Result<Code> {
        let mut text = String::new();
        for path in paths.iter().filter(|p| p.exists()) {
            for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
                let entry = entry?;
                let is_rust = entry.path().extension().is_some_and(|e| e == "rs");
                if !entry.file_type().is_file() || !is_rust {
                    continue;
                }
                let source = std::fs::read_to_string(entry.path())
                    .with_context(|| format!("{}: cannot read", entry.path().display()))?;
                for line in source.lines().filter(|l| !l.trim_start().starts_with("//")) {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
        Ok(Code(text))
    }

    /// Whether the code names the crate `ident`: `ident::…`, `use ident`, `extern crate ident`.
    fn mentions(&self, ident: &str) -> bool {
        let text = &self.0;
        text.match_indices(ident).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = &text[at + ident.len()..];
            let starts_word = !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
            let is_path = after.starts_with("::");
            let head = text[..at].trim_end();
            let after_ends_word = !after.starts_with(|c: char| c.is_alphanumeric() || c == '_');
            let is_item =
                after_ends_word && (head.ends_with("use") || head.ends_with("extern crate"));
            starts_word && (is_path || is_item)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A workspace with one member `a`: `serde` used, `anyhow` named only in a comment,
    /// `tempfile` a dev-dependency no test uses, `walkdir` shared but taken by no crate.
    fn fixture(root: &Path) {
        write(
            root,
            "Cargo.toml",
            "[workspace]\nmembers = [\"crates/*\"]\n\n[workspace.dependencies]\n\
             serde = \"1\"\nwalkdir = \"2\"\n",
        );
        write(
            root,
            "crates/a/Cargo.toml",
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\npublish = false\n\n\
             [dependencies]\nserde.workspace = true\nanyhow = \"1\"\nmy-util = \"1\"\n\n\
             [dev-dependencies]\ntempfile = \"3\"\n",
        );
        write(
            root,
            "crates/a/src/lib.rs",
            "//! a\nuse serde::Serialize;\n// anyhow::Error is not a use\nuse my_util;\n",
        );
        write(root, "crates/a/tests/t.rs", "//! t\n#[test]\nfn t() {}\n");
    }

    #[test]
    fn unused_dependencies_are_named_with_their_line() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        fixture(root);
        let manifests = workspace(root).unwrap();
        let mut problems = Vec::new();
        dependencies_are_used(root, &manifests, &mut problems).unwrap();
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(list.len(), 3, "{list:#?}");
        assert!(
            list[0].starts_with("crates/a/Cargo.toml:8: `anyhow` is declared in [dependencies]"),
            "{list:#?}"
        );
        assert!(
            list[1].starts_with(
                "crates/a/Cargo.toml:12: `tempfile` is declared in [dev-dependencies]"
            ),
            "{list:#?}"
        );
        assert!(
            list[2].starts_with("Cargo.toml:6: `walkdir` is in [workspace.dependencies]"),
            "{list:#?}"
        );

        // Used, each is accepted: a dev-dependency from a test, the shared one by a member.
        write(
            root,
            "crates/a/tests/t.rs",
            "//! t\n#[test]\nfn t() { tempfile::tempdir(); }\n",
        );
        write(
            root,
            "crates/a/src/more.rs",
            "//! m\nfn f() -> anyhow::Result<()> { Ok(()) }\n",
        );
        let member = std::fs::read_to_string(root.join("crates/a/Cargo.toml")).unwrap();
        let member = member + "\n[build-dependencies]\nwalkdir.workspace = true\n";
        write(root, "crates/a/Cargo.toml", &member);
        write(
            root,
            "crates/a/build.rs",
            "//! b\nfn main() { walkdir::WalkDir::new(\".\"); }\n",
        );
        let manifests = workspace(root).unwrap();
        let mut problems = Vec::new();
        dependencies_are_used(root, &manifests, &mut problems).unwrap();
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn a_name_inside_another_word_is_not_a_use() {
        let code = Code("let my_serde = 1; not_serde::x(); use serde_json;\n".into());
        assert!(!code.mentions("serde"));
        assert!(code.mentions("serde_json"));
        assert!(Code("extern crate libc;\n".into()).mentions("libc"));
        assert!(Code("use libc::c_int;\n".into()).mentions("libc"));
    }

    #[test]
    fn published_crates_need_metadata_and_licences() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        write(
            root,
            "Cargo.toml",
            "[workspace]\nmembers = [\"a\", \"b\", \"tool\"]\n\n[workspace.package]\n\
             license = \"MIT OR Apache-2.0\"\n",
        );
        let complete = "[package]\nname = \"a\"\ndescription = \"d\"\n\
            documentation = \"https://docs.rs/a\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
            rust-version = \"1.95\"\nlicense.workspace = true\nauthors = [\"x\"]\n\
            repository = \"r\"\nhomepage = \"h\"\nreadme = \"README.md\"\nkeywords = []\n\
            categories = []\n";
        write(root, "a/Cargo.toml", complete);
        write(root, "a/LICENSE-MIT", "mit");
        write(root, "a/LICENSE-APACHE", "apache");
        // b inherits a key the workspace does not define, lacks `documentation` and licences.
        let b = complete
            .replace("name = \"a\"", "name = \"b\"")
            .replace("documentation = \"https://docs.rs/a\"\n", "")
            .replace("homepage = \"h\"", "homepage.workspace = true");
        write(root, "b/Cargo.toml", &b);
        // Not published: nothing is required.
        write(
            root,
            "tool/Cargo.toml",
            "[package]\nname = \"tool\"\npublish = false\n",
        );
        let manifests = workspace(root).unwrap();
        let mut problems = Vec::new();
        metadata_is_complete(root, &manifests, &mut problems).unwrap();
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            list,
            [
                "b/Cargo.toml:2: [package] has no `documentation`: a published crate names its own (docs/releasing.md)",
                "b/Cargo.toml:2: [package] has no `homepage`: add `homepage.workspace = true` (and the key to [workspace.package]) so crates.io shows it",
                "b/LICENSE-MIT: missing: every published crate ships both licence files; link it to the root's (`ln -s` the relative path to LICENSE-MIT)",
                "b/LICENSE-APACHE: missing: every published crate ships both licence files; link it to the root's (`ln -s` the relative path to LICENSE-APACHE)",
            ]
        );
    }
}
