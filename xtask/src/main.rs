//! xtask: project automation, run as `cargo xtask <command>`.
//!
//! - `ci`: everything CI checks (fmt, clippy, each provider feature alone, the tests, the
//!   crash-point counts, the receipts' schemas).
//! - `conformance --provider NAME`: the shared conformance suite for one provider.
//! - `new-provider NAME`: scaffold and register `providers/NAME` ([`scaffold`]).
//! - `tidy`: the house rules over the source tree ([`tidy`]; also a test).
//! - `codegen [--check]`: the receipts' JSON Schemas in `docs/schema` ([`codegen`]).
//! - `bench [--quick]`: the benchmark suite (see `bench.rs`, BENCHMARKS.md).
//! - `torture [--procs N] [--seconds N] [--seed S]`: the process torture test, bigger.
//! - `crash-points`: every crash-point enumeration, with the counts ([`crash_points`]).
//!
//! xtask depends on nothing of ours at build time: it drives cargo.

mod bench;
mod codegen;
mod crash_points;
mod scaffold;
mod tidy;
mod torture;

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every provider crate under `providers/`, by directory name.
#[allow(clippy::disallowed_methods)] // a developer tool listing the repository's own folders
fn provider_names(root: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(root.join("providers")).context("read providers/")? {
        let entry = entry?;
        if entry.path().join("Cargo.toml").is_file() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok(names)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn cargo(root: &Path, args: &[&str]) -> Result<()> {
    eprintln!("$ cargo {}", args.join(" "));
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .current_dir(root)
        .status()
        .with_context(|| format!("run cargo {}", args.join(" ")))?;
    if !status.success() {
        bail!("cargo {} failed with {status}", args.join(" "));
    }
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    match args.first().map(String::as_str) {
        Some("ci") => ci(&root),
        Some("conformance") => {
            let provider = match args.get(1).map(String::as_str) {
                Some("--provider") => args.get(2).cloned(),
                Some(other) => other.strip_prefix("--provider=").map(str::to_string),
                None => None,
            }
            .context("usage: cargo xtask conformance --provider NAME")?;
            let known = provider_names(&root)?;
            if !known.contains(&provider) {
                bail!("{provider}: no such provider (known: {})", known.join(", "));
            }
            cargo(
                &root,
                &[
                    "test",
                    "-p",
                    &format!("projectfile-{provider}"),
                    "--test",
                    "conformance",
                ],
            )
        }
        Some("new-provider") => {
            let name = args
                .get(1)
                .context("usage: cargo xtask new-provider NAME")?;
            scaffold::run(&root, name)
        }
        Some("tidy") => tidy::run(&root),
        Some("codegen") => match args.get(1).map(String::as_str) {
            None => codegen::run(&root, false),
            Some("--check") => codegen::run(&root, true),
            Some(other) => bail!("{other}: usage: cargo xtask codegen [--check]"),
        },
        Some("bench") => bench::run(&root, &args[1..]),
        Some("torture") => torture::run(&root, &args[1..]),
        Some("crash-points") => crash_points::run(&root),
        _ => {
            eprintln!(
                "usage: cargo xtask <command>\n\n\
                 commands:\n  \
                 ci                            fmt, clippy, each provider feature alone, all tests,\n                                \
                 the crash-point counts, the schemas\n  \
                 conformance --provider NAME   the shared conformance suite for one provider\n  \
                 new-provider NAME             scaffold providers/NAME and register it\n  \
                 tidy                          check the house rules (registration, docs, I/O chokepoint)\n  \
                 codegen [--check]             write (or check) the receipts' JSON Schemas in docs/schema\n  \
                 bench [--quick]               benchmarks in release; table + target/bench.json\n  \
                 torture [--procs 64] [--seconds 30] [--seed S]\n                                \
                 the process torture test, bigger than CI's\n  \
                 crash-points                  every crash-point enumeration, with the counts"
            );
            bail!("unknown or missing command")
        }
    }
}

/// What CI runs, in order, failing fast.
fn ci(root: &Path) -> Result<()> {
    cargo(root, &["fmt", "--all", "--check"])?;
    tidy::run(root)?;
    cargo(
        root,
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    for provider in provider_names(root)? {
        cargo(
            root,
            &[
                "check",
                "-p",
                "projectfile",
                "--no-default-features",
                "--features",
                &provider,
            ],
        )?;
    }
    // Every test but the crash-point enumerations, which run next with their counts shown.
    let mut test = vec!["test", "--workspace", "--all-features", "--"];
    for name in crash_points::TEST_NAMES {
        test.extend(["--skip", name]);
    }
    cargo(root, &test)?;
    crash_points::run(root)?;
    // After the tests, whose build already holds the generator.
    codegen::run(root, true)
}
