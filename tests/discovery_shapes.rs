//! `resolve --as` against what the real CLIs were measured to load: for every workspace shape of
//! `tests/data/discovery_shapes.json` and every CLI build recorded there by `cargo xtask qualify
//! --record`, the files the provider's discovery profile keeps (whole, cut by a budget, or not at
//! all) must be exactly the files that build's first request held, and for a shape marked
//! `ordered`, in the order that request held them. One insta snapshot per shape
//! holds the resolve receipts (paths relative to the shape, directory counts redacted).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

#[allow(dead_code)]
#[path = "../xtask/src/qualify/shape_format.rs"]
mod shape_format;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_projectfile");

/// `projectfile resolve --json --as <provider> --cli-version <version>` on a materialised shape.
fn resolve(base: &Path, cwd: &str, provider: &str, version: &str) -> Value {
    let out = shape_format::resolve_command(Path::new(BIN), base, cwd, provider, version)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The receipt with only the shape's own paths, made relative, and no directory count (it
/// depends on how deep the temporary directory is).
fn redacted(receipt: &Value, base: &Path) -> Value {
    let prefix = format!("{}/", base.display());
    let text = receipt.to_string().replace(&prefix, "");
    let mut value: Value = serde_json::from_str(&text).unwrap();
    for list in ["sources", "omitted"] {
        if let Some(items) = value[list].as_array_mut() {
            items.retain(|item| !item["path"].as_str().unwrap_or("").starts_with('/'));
        }
    }
    if let Some(map) = value.as_object_mut() {
        map.remove("dirs_scanned");
    }
    if let Some(sources) = value["sources"].as_array_mut() {
        for source in sources {
            let body = source["body"].as_str().unwrap_or("").to_string();
            source["body"] = Value::String(shortened(&body));
        }
    }
    value
}

/// A long body as its first and last lines around a byte count (the filler between them is
/// irrelevant, its size is in `bytes`).
fn shortened(body: &str) -> String {
    if body.len() <= 300 {
        return body.to_string();
    }
    let first = body.lines().next().unwrap_or("");
    let last = body.lines().last().unwrap_or("");
    format!("{first}\n[… {} bytes …]\n{last}", body.len())
}

#[test]
fn resolve_as_matches_what_each_cli_was_measured_to_load() {
    let root = shape_format::repository_root(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    let file = shape_format::load(&root).unwrap();
    let mut measured_builds = 0;
    for (index, shape) in file.shapes.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        shape_format::materialise(&base, index, shape).unwrap();
        let mut receipts = BTreeMap::new();
        for (build, expected) in &shape.measured {
            let (provider, version) = build.split_once(' ').unwrap();
            let receipt = resolve(&base, &shape.cwd, provider, version);
            let bodies: Vec<&str> = receipt["sources"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|s| s["body"].as_str())
                .collect();
            let text = bodies.join("\n");
            let got = shape_format::states(index, shape, &text);
            assert_eq!(&got, expected, "shape {}: resolve --as {build}", shape.name);
            if shape.ordered {
                let measured = shape.measured_order.get(build);
                assert!(
                    measured.is_some(),
                    "shape {}: no measured order for {build}",
                    shape.name
                );
                assert_eq!(
                    Some(&shape_format::order(index, shape, &text)),
                    measured,
                    "shape {}: the order of resolve --as {build}",
                    shape.name
                );
            }
            receipts.insert(build.clone(), redacted(&receipt, &base));
            measured_builds += 1;
        }
        if !receipts.is_empty() {
            insta::assert_json_snapshot!(shape.name.clone(), receipts);
        }
    }
    assert!(
        measured_builds > 0,
        "no measurement recorded in the shapes file"
    );
}
