//! The format of `tests/data/discovery_shapes.json` and how a shape becomes files: shared, by
//! path, between `cargo xtask qualify` (which runs the real CLIs on the shapes) and the facade's
//! `tests/discovery_shapes.rs` (which holds `resolve --as` to what the CLIs were measured to load).
//!
//! Every file of shape `s` gets two markers, `PFQS{s}F{f}A` first and `PFQS{s}F{f}Z` last (`f`:
//! the file's index in path order); a file is `full` in a text holding its end marker, `partial`
//! when only the start is there (cut by a budget), `absent` otherwise. A shape marked `ordered`
//! also records the order the files reached the model in: the files whose start marker is in the
//! text, by where that marker first appears.

#![allow(clippy::disallowed_methods)] // writes scratch shapes for the qualification and the tests

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

/// Where the shapes are kept, relative to the repository root.
pub const SHAPES_FILE: &str = "tests/data/discovery_shapes.json";

/// The data file.
#[derive(Debug, Deserialize, Serialize)]
pub struct ShapesFile {
    pub about: Vec<String>,
    pub shapes: Vec<ShapeSpec>,
}

/// One workspace shape.
#[derive(Debug, Deserialize, Serialize)]
pub struct ShapeSpec {
    pub name: String,
    pub about: String,
    /// Where the CLI starts, relative to the shape's base (`ws` is the workspace).
    pub cwd: String,
    /// The providers whose CLIs run this shape (every CLI when empty): a shape about one CLI's
    /// own files need not cost every other CLI a turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<String>,
    /// Directories to create (e.g. `ws/.git`).
    #[serde(default)]
    pub dirs: Vec<String>,
    /// Files, relative to the base (`home/…` is the private home, top-level names sit above the
    /// workspace).
    pub files: BTreeMap<String, FileSpec>,
    /// The order the files reach the model in is measured and checked too (see [`order`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ordered: bool,
    /// `"<provider> <version>"` → file → `full`, `partial` or `absent`, as measured.
    #[serde(default)]
    pub measured: BTreeMap<String, BTreeMap<String, String>>,
    /// For an `ordered` shape, `"<provider> <version>"` → the files that reached the model, in
    /// the order they did, as measured.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub measured_order: BTreeMap<String, Vec<String>>,
}

/// A file's content: a text between the markers, or a full spec.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum FileSpec {
    Text(String),
    Spec {
        /// The text; with `raw`, `{start}` and `{end}` stand for the markers.
        #[serde(default)]
        text: String,
        /// Filler bytes added before the end marker.
        #[serde(default)]
        pad: usize,
        /// The text is the whole file (front matter must come first).
        #[serde(default)]
        raw: bool,
        /// Bytes that are not UTF-8 (`ff fe`) stand on a line of their own before the end marker.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        invalid_utf8: bool,
    },
}

impl ShapeSpec {
    /// Whether `provider`'s CLI runs this shape.
    pub fn runs_with(&self, provider: &str) -> bool {
        self.providers.is_empty() || self.providers.iter().any(|p| p == provider)
    }
}

/// The two markers of file `file` of shape `shape`.
pub fn markers(shape: usize, file: usize) -> (String, String) {
    (
        format!("PFQS{shape}F{file}A"),
        format!("PFQS{shape}F{file}Z"),
    )
}

fn filler(bytes: usize) -> String {
    let line = "Filler line to bring this file near the budget, no instructions here.\n";
    let mut out = String::with_capacity(bytes + line.len());
    while out.len() + line.len() <= bytes {
        out.push_str(line);
    }
    while out.len() < bytes {
        out.push('.');
    }
    out
}

/// The text of one file (without the bytes an `invalid_utf8` file adds, see [`bytes`]).
pub fn content(spec: &FileSpec, start: &str, end: &str) -> String {
    match spec {
        FileSpec::Text(text) => format!("{start}\n{text}{end}\n"),
        FileSpec::Spec {
            text,
            pad,
            raw: false,
            ..
        } => format!("{start}\n{text}{}{end}\n", filler(*pad)),
        FileSpec::Spec {
            text, raw: true, ..
        } => text.replace("{start}", start).replace("{end}", end),
    }
}

/// The bytes one file is written with.
pub fn bytes(spec: &FileSpec, start: &str, end: &str) -> Vec<u8> {
    let text = content(spec, start, end);
    match spec {
        FileSpec::Spec {
            invalid_utf8: true, ..
        } => {
            let cut = text.rfind(end).unwrap_or(text.len());
            let mut out = text.as_bytes()[..cut].to_vec();
            out.extend_from_slice(b"\xff\xfe\n");
            out.extend_from_slice(&text.as_bytes()[cut..]);
            out
        }
        _ => text.into_bytes(),
    }
}

/// `full` when the end marker arrived, `partial` when only the start did, else `absent`.
pub fn state(text: &str, start: &str, end: &str) -> &'static str {
    if text.contains(end) {
        "full"
    } else if text.contains(start) {
        "partial"
    } else {
        "absent"
    }
}

/// Writes shape `index` under `base`.
pub fn materialise(base: &Path, index: usize, shape: &ShapeSpec) -> Result<()> {
    for dir in ["ws", "home"]
        .iter()
        .map(|d| d.to_string())
        .chain(shape.dirs.iter().cloned())
    {
        std::fs::create_dir_all(base.join(dir))?;
    }
    std::fs::create_dir_all(base.join(&shape.cwd))?;
    for (file, (path, spec)) in shape.files.iter().enumerate() {
        let (start, end) = markers(index, file);
        let full = base.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&full, bytes(spec, &start, &end))
            .with_context(|| format!("{}: cannot write", full.display()))?;
    }
    Ok(())
}

/// The state of every file of shape `index` in `text`.
pub fn states(index: usize, shape: &ShapeSpec, text: &str) -> BTreeMap<String, String> {
    shape
        .files
        .keys()
        .enumerate()
        .map(|(file, path)| {
            let (start, end) = markers(index, file);
            (path.clone(), state(text, &start, &end).to_string())
        })
        .collect()
}

/// The files of shape `index` whose start marker is in `text`, in the order those markers first
/// appear (an imported file inlined into its importer comes after it, as a CLI that lists it
/// after its importer sends it).
pub fn order(index: usize, shape: &ShapeSpec, text: &str) -> Vec<String> {
    let mut found: Vec<(usize, String)> = shape
        .files
        .keys()
        .enumerate()
        .filter_map(|(file, path)| {
            let (start, _) = markers(index, file);
            text.find(&start).map(|at| (at, path.clone()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, path)| path).collect()
}

/// `projectfile resolve --json --as <provider> --cli-version <version>` for the shape written at
/// `base`, started in `base/<cwd>`, with `base/home` as the home directory.
pub fn resolve_command(
    bin: &Path,
    base: &Path,
    cwd: &str,
    provider: &str,
    version: &str,
) -> Command {
    let mut command = Command::new(bin);
    command
        .args([
            "resolve",
            "--json",
            "--as",
            provider,
            "--cli-version",
            version,
        ])
        .arg("--workspace")
        .arg(base.join("ws"))
        .arg("--cwd")
        .arg(base.join(cwd))
        .arg("--home")
        .arg(base.join("home"))
        .stdin(Stdio::null());
    command
}

/// The nearest of `start` and its ancestors holding [`SHAPES_FILE`] (for tests, which start from
/// their crate's folder).
#[cfg_attr(not(test), allow(dead_code))]
pub fn repository_root(start: &Path) -> Option<std::path::PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(SHAPES_FILE).is_file())
        .map(Path::to_path_buf)
}

/// Reads the data file.
pub fn load(root: &Path) -> Result<ShapesFile> {
    let path = root.join(SHAPES_FILE);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a shapes file", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_tell_whole_cut_and_absent_files_apart() {
        let (start, end) = markers(3, 1);
        let text = content(
            &FileSpec::Spec {
                text: "x\n".into(),
                pad: 100,
                raw: false,
                invalid_utf8: false,
            },
            &start,
            &end,
        );
        assert!(text.len() > 100);
        assert_eq!(state(&text, &start, &end), "full");
        assert_eq!(state(&text[..50], &start, &end), "partial");
        assert_eq!(state("", &start, &end), "absent");
        // Markers of other files never match by prefix.
        let (other, _) = markers(3, 11);
        assert_eq!(state(&other, &start, &end), "absent");
    }

    #[test]
    fn invalid_utf8_bytes_stand_before_the_end_marker() {
        let spec = FileSpec::Spec {
            text: "x\n".into(),
            pad: 0,
            raw: false,
            invalid_utf8: true,
        };
        let written = bytes(&spec, "A", "Z");
        assert!(String::from_utf8(written.clone()).is_err());
        assert_eq!(written, b"A\nx\n\xff\xfe\nZ\n");
        let lossy = String::from_utf8_lossy(&written);
        assert_eq!(state(&lossy, "A", "Z"), "full");
    }

    #[test]
    fn order_follows_the_first_start_marker() {
        let mut files = BTreeMap::new();
        for name in ["a", "b", "c"] {
            files.insert(name.to_string(), FileSpec::Text(String::new()));
        }
        let shape = ShapeSpec {
            name: "t".into(),
            about: String::new(),
            cwd: "ws".into(),
            providers: Vec::new(),
            dirs: Vec::new(),
            files,
            ordered: true,
            measured: BTreeMap::new(),
            measured_order: BTreeMap::new(),
        };
        let (a, _) = markers(0, 0);
        let (b, _) = markers(0, 1);
        let text = format!("{b} x {a} y {b}");
        assert_eq!(
            order(0, &shape, &text),
            vec!["b".to_string(), "a".to_string()]
        );
    }

    #[test]
    fn raw_files_keep_their_front_matter_first() {
        let spec = FileSpec::Spec {
            text: "---\npaths: [x]\n---\n{start} {end}\n".into(),
            pad: 0,
            raw: true,
            invalid_utf8: false,
        };
        assert!(content(&spec, "A", "Z").starts_with("---\n"));
    }

    #[test]
    fn the_shapes_file_parses() -> Result<()> {
        let root = repository_root(Path::new(env!("CARGO_MANIFEST_DIR")))
            .context("no shapes file above the crate")?;
        let file = load(&root)?;
        assert!(file.shapes.len() >= 10);
        Ok(())
    }
}
