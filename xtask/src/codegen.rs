//! `cargo xtask codegen [--check]`: the JSON Schemas of the receipts, `docs/schema/<name>.json`,
//! generated from the Rust types the CLI serializes.
//!
//! xtask depends on none of our crates, so it runs the generator instead:
//! `cargo run -p projectfile --all-features --bin projectfile-schemas` prints one JSON object
//! keyed by schema name. `codegen` writes each schema (pretty, with a final newline) and removes
//! files no schema produces any more; `codegen --check` writes nothing and fails, naming each file,
//! when the committed files differ (CI runs it).
#![allow(clippy::disallowed_methods)] // xtask writes the project's own generated files

use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::Path;

/// Where the schemas live, relative to the workspace root.
pub const SCHEMA_DIR: &str = "docs/schema";

/// Runs the generator and returns `file name → content`.
fn generate(root: &Path) -> Result<BTreeMap<String, String>> {
    let args = [
        "run",
        "--quiet",
        "-p",
        "projectfile",
        "--all-features",
        "--bin",
        "projectfile-schemas",
    ];
    eprintln!("$ cargo {}", args.join(" "));
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .current_dir(root)
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("run the schema generator")?;
    if !out.status.success() {
        bail!("the schema generator failed with {}", out.status);
    }
    render(&out.stdout)
}

/// The generator's output (`{"projectfile.acquire.v1": {...}, ...}`) as files.
pub fn render(generated: &[u8]) -> Result<BTreeMap<String, String>> {
    let value: serde_json::Value =
        serde_json::from_slice(generated).context("the schema generator printed invalid JSON")?;
    let map = value
        .as_object()
        .context("the schema generator must print one JSON object")?;
    let mut files = BTreeMap::new();
    for (name, schema) in map {
        if !name.starts_with("projectfile.") || name.contains('/') {
            bail!("{name}: not a schema name");
        }
        files.insert(
            format!("{name}.json"),
            serde_json::to_string_pretty(schema)? + "\n",
        );
    }
    Ok(files)
}

/// What differs between the generated files and `dir`: one sentence per file.
pub fn differences(dir: &Path, files: &BTreeMap<String, String>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (name, text) in files {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(current) if current == *text => {}
            Ok(_) => out.push(format!("{SCHEMA_DIR}/{name}: out of date")),
            Err(_) => out.push(format!("{SCHEMA_DIR}/{name}: missing")),
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") && !files.contains_key(&name) {
                out.push(format!(
                    "{SCHEMA_DIR}/{name}: no receipt has this schema any more"
                ));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Writes `files` into `dir`, removing stale schema files.
pub fn write(dir: &Path, files: &BTreeMap<String, String>) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, text) in files {
        std::fs::write(dir.join(name), text).with_context(|| format!("write {name}"))?;
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") && !files.contains_key(&name) {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// `cargo xtask codegen [--check]`.
pub fn run(root: &Path, check: bool) -> Result<()> {
    let files = generate(root)?;
    let dir = root.join(SCHEMA_DIR);
    let diff = differences(&dir, &files)?;
    if check {
        if diff.is_empty() {
            eprintln!("codegen: {} schemas up to date", files.len());
            return Ok(());
        }
        for d in &diff {
            eprintln!("{d}");
        }
        bail!(
            "codegen: the committed schemas differ from the receipt types; run `cargo xtask codegen` and commit docs/schema"
        );
    }
    write(&dir, &files)?;
    for d in &diff {
        eprintln!("updated {d}");
    }
    eprintln!("codegen: {} schemas in {SCHEMA_DIR}", files.len());
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn check_names_every_difference_and_write_fixes_them() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().join("schema");
        let files =
            render(br#"{"projectfile.a.v1": {"type": "object"}, "projectfile.b.v1": {}}"#).unwrap();
        assert_eq!(
            files["projectfile.a.v1.json"],
            "{\n  \"type\": \"object\"\n}\n"
        );
        let missing = differences(&dir, &files).unwrap();
        assert_eq!(
            missing,
            [
                "docs/schema/projectfile.a.v1.json: missing",
                "docs/schema/projectfile.b.v1.json: missing"
            ]
        );
        write(&dir, &files).unwrap();
        assert!(differences(&dir, &files).unwrap().is_empty());

        std::fs::write(dir.join("projectfile.b.v1.json"), "{}").unwrap();
        std::fs::write(dir.join("projectfile.old.v1.json"), "{}\n").unwrap();
        assert_eq!(
            differences(&dir, &files).unwrap(),
            [
                "docs/schema/projectfile.b.v1.json: out of date",
                "docs/schema/projectfile.old.v1.json: no receipt has this schema any more"
            ]
        );
        write(&dir, &files).unwrap();
        assert!(differences(&dir, &files).unwrap().is_empty());
        assert!(!dir.join("projectfile.old.v1.json").exists());
    }

    #[test]
    fn the_generator_output_must_be_schemas() {
        assert!(render(b"[]").is_err());
        assert!(render(b"not json").is_err());
        assert!(render(br#"{"../evil": {}}"#).is_err());
    }
}
