//! The discovery differential: workspace shapes (nested and parent-folder files, override files,
//! `CLAUDE.md` variants, user files under a private home, imports, files near and over a budget,
//! a run from a subfolder) are written out with a unique marker at the start and the end of every
//! file; each installed CLI runs one turn in the shape, and which files reached its request (whole,
//! cut, or not at all) is compared with what `projectfile resolve --as <provider>` lists for the
//! same shape. For a shape marked `ordered`, the order the files reached the request in must be
//! the order `resolve --as` lists them in too.
//!
//! The shapes live in `tests/data/discovery_shapes.json` (read here and by the facade's
//! `tests/discovery_shapes.rs`); `cargo xtask qualify --record` writes what each CLI loaded into
//! the file's `measured` maps, which that test then holds `resolve --as` to without any CLI.

#![allow(clippy::disallowed_methods)] // xtask writes its scratch shapes and the recorded data file

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde::Serialize;
use serde_json::Value;

use super::capture::Capture;
use super::install::Installed;
use super::launch;
pub use super::shape_format::{
    SHAPES_FILE, ShapesFile, load, materialise, order, resolve_command, states,
};

/// One comparison.
#[derive(Clone, Debug, Serialize)]
pub struct DiffRow {
    pub provider: String,
    pub version: String,
    pub shape: String,
    /// What the CLI's first request held, per file.
    pub cli: BTreeMap<String, String>,
    /// What `resolve --as` lists, per file.
    pub resolve: BTreeMap<String, String>,
    /// For an `ordered` shape, the files in the order the CLI's request held them (else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cli_order: Vec<String>,
    /// For an `ordered` shape, the files in the order `resolve --as` lists them (else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resolve_order: Vec<String>,
    pub agree: bool,
    pub note: String,
}

/// The text of every source `resolve --as` keeps for the shape at `base`.
fn resolved_text(projectfile: &Path, cli: &Installed, base: &Path, cwd: &str) -> Result<String> {
    let out = resolve_command(projectfile, base, cwd, cli.cli.provider(), &cli.version).output()?;
    if !out.status.success() {
        bail!(
            "resolve --as {}: {}",
            cli.cli.provider(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let receipt: Value = serde_json::from_slice(&out.stdout)?;
    Ok(receipt["sources"]
        .as_array()
        .map(|sources| {
            sources
                .iter()
                .filter_map(|s| s["body"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default())
}

/// Runs every shape for one CLI.
pub fn differential(
    projectfile: &Path,
    capture: &Capture,
    scratch: &Path,
    file: &ShapesFile,
    cli: &Installed,
) -> Vec<DiffRow> {
    let mut rows = Vec::new();
    for (index, shape) in file.shapes.iter().enumerate() {
        if !shape.runs_with(cli.cli.provider()) {
            continue;
        }
        let base: PathBuf = scratch.join(format!(
            "shape-{}-{}-{index}",
            cli.cli.provider(),
            cli.version
        ));
        let attempt = || -> Result<DiffRow> {
            if base.exists() {
                std::fs::remove_dir_all(&base)?;
            }
            materialise(&base, index, shape)?;
            launch::prepare_home(cli.cli, &base.join("home"), capture)?;
            let env = launch::environment(cli, &base.join("home"), capture);
            let mut argv = cli.argv.clone();
            argv.extend(launch::cli_args(cli.cli, capture));
            let outcome = launch::run(&argv, &base.join(&shape.cwd), &env, capture)?;
            let model_text = outcome.model_text();
            let cli_states = states(index, shape, &model_text);
            let resolved = resolved_text(projectfile, cli, &base, &shape.cwd)?;
            let resolve_states = states(index, shape, &resolved);
            let (cli_order, resolve_order) = if shape.ordered {
                (
                    order(index, shape, &model_text),
                    order(index, shape, &resolved),
                )
            } else {
                (Vec::new(), Vec::new())
            };
            let reached = outcome.reached_model();
            Ok(DiffRow {
                provider: cli.cli.provider().into(),
                version: cli.version.clone(),
                shape: shape.name.clone(),
                agree: reached && cli_states == resolve_states && cli_order == resolve_order,
                note: if reached {
                    String::new()
                } else {
                    format!("no model request ({})", outcome.stderr_tail)
                },
                cli: cli_states,
                resolve: resolve_states,
                cli_order,
                resolve_order,
            })
        };
        rows.push(attempt().unwrap_or_else(|err| DiffRow {
            provider: cli.cli.provider().into(),
            version: cli.version.clone(),
            shape: shape.name.clone(),
            cli: BTreeMap::new(),
            resolve: BTreeMap::new(),
            cli_order: Vec::new(),
            resolve_order: Vec::new(),
            agree: false,
            note: format!("{err:#}"),
        }));
    }
    rows
}

/// Writes what each CLI loaded into the data file's `measured` maps (and, for an `ordered`
/// shape, the order it loaded them in into `measured_order`).
pub fn record(root: &Path, rows: &[DiffRow]) -> Result<()> {
    let mut file = load(root)?;
    for row in rows.iter().filter(|r| r.note.is_empty()) {
        if let Some(shape) = file.shapes.iter_mut().find(|s| s.name == row.shape) {
            let build = format!("{} {}", row.provider, row.version);
            if shape.ordered {
                shape
                    .measured_order
                    .insert(build.clone(), row.cli_order.clone());
            }
            shape.measured.insert(build, row.cli.clone());
        }
    }
    let text = serde_json::to_string_pretty(&file)? + "\n";
    std::fs::write(root.join(SHAPES_FILE), text)?;
    Ok(())
}
