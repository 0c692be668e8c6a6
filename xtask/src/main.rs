//! xtask: project automation, run as `cargo xtask <command>` (clap; `cargo xtask --help`).
//!
//! - `ci`: everything CI checks (fmt, tidy, clippy, the docs with warnings denied, each provider
//!   feature alone, the tests, the crash-point counts, the receipts' schemas).
//! - `conformance --provider NAME`: the shared conformance suite for one provider (the checks its
//!   capabilities make apply), and its own conformance checks.
//! - `new-provider NAME`: scaffold and register `providers/NAME` ([`scaffold`]).
//! - `tidy`: the house rules over the source tree and the manifests ([`tidy`]; also a test).
//! - `codegen [--check]`: the receipts' JSON Schemas in `docs/schema` ([`codegen`]).
//! - `bench [--quick] [--only PARTS] [--dir DIR] [--npm-cache DIR]`: the benchmark suite, failing
//!   when a performance goal is missed ([`mod@bench`], BENCHMARKS.md).
//! - `torture [--procs N] [--seconds N] [--seed S]`: the process torture test, bigger ([`torture`]).
//! - `crash-points`: every crash-point enumeration, with the counts ([`crash_points`]).
//! - `qualify [--provider P] [--quick] [--record]`: live qualification against the real CLIs
//!   ([`qualify`], QUALIFICATION.md).
//!
//! xtask depends on nothing of ours at build time: it drives cargo.

mod bench;
mod codegen;
mod crash_points;
mod manifests;
mod qualify;
mod scaffold;
mod tidy;
mod torture;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Every provider crate under `providers/`, by directory name, sorted.
fn provider_names(root: &Path) -> Result<Vec<String>> {
    tidy::provider_dirs(root)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn cargo(root: &Path, args: &[&str]) -> Result<()> {
    cargo_with_env(root, args, &[])
}

fn cargo_with_env(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<()> {
    let shown: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v:?} ")).collect();
    eprintln!("$ {}cargo {}", shown.concat(), args.join(" "));
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root)
        .status()
        .with_context(|| format!("run cargo {}", args.join(" ")))?;
    if !status.success() {
        bail!("cargo {} failed with {status}", args.join(" "));
    }
    Ok(())
}

/// Project automation for projectfile. Run from anywhere in the repository.
#[derive(Parser, Debug)]
#[command(name = "xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

/// The tasks.
#[derive(Subcommand, Debug)]
enum Task {
    /// Everything CI checks, failing fast: fmt, tidy, clippy, the docs (warnings denied), each
    /// provider feature alone, all tests, the crash-point counts, the receipts' schemas.
    Ci,
    /// The shared conformance suite for one provider.
    Conformance {
        /// The provider: a directory under providers/.
        #[arg(long, value_name = "NAME")]
        provider: String,
    },
    /// Scaffold providers/NAME and register it (docs/adding-a-provider.md).
    NewProvider {
        /// The CLI's name: lowercase letters, digits and single '-' (e.g. `qwen-code`).
        name: String,
    },
    /// Check the house rules: registration, metadata, dependencies, docs, the I/O chokepoint.
    Tidy,
    /// Write the receipts' JSON Schemas in docs/schema (or, with --check, fail if they differ).
    Codegen {
        /// Write nothing; fail, naming each file, when the committed schemas are out of date.
        #[arg(long)]
        check: bool,
    },
    /// The benchmark suite (the release binary; the library in profile `library`): a table, every
    /// goal's ratio against its limit, and target/bench.json; fails when a goal is missed.
    Bench(bench::Options),
    /// The process torture test (tests/torture.rs), in release, bigger than CI's.
    Torture(torture::Options),
    /// Every crash-point enumeration, with the counts.
    CrashPoints,
    /// Live qualification against the real CLIs from the npm registry (QUALIFICATION.md).
    Qualify(qualify::Options),
}

fn main() -> ExitCode {
    // Help and usage errors exit here (0 and 2), from clap, without a backtrace.
    let cli = Cli::parse();
    match run(cli.task, &workspace_root()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(task: Task, root: &Path) -> Result<()> {
    match task {
        Task::Ci => ci(root),
        Task::Conformance { provider } => {
            let known = provider_names(root)?;
            if !known.contains(&provider) {
                bail!("{provider}: no such provider (known: {})", known.join(", "));
            }
            let package = format!("projectfile-{provider}");
            let mut args = vec!["test", "-p", &package, "--test", "suite"];
            // The provider's own conformance checks, when it has some.
            let own = root
                .join("providers")
                .join(&provider)
                .join("tests/conformance.rs");
            if own.is_file() {
                args.extend(["--test", "conformance"]);
            }
            cargo(root, &args)
        }
        Task::NewProvider { name } => scaffold::run(root, &name),
        Task::Tidy => tidy::run(root),
        Task::Codegen { check } => codegen::run(root, check),
        Task::Bench(options) => bench::run(root, &options),
        Task::Torture(options) => torture::run(root, &options),
        Task::CrashPoints => crash_points::run(root),
        Task::Qualify(options) => qualify::run(root, &options),
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
    // Warnings in the docs (a broken intra-doc link, …) fail like any other.
    cargo_with_env(
        root,
        &["doc", "--workspace", "--all-features", "--no-deps"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    // The binary with each provider alone, then the library alone as a host depends on it.
    let mut feature_sets: Vec<String> = provider_names(root)?
        .iter()
        .map(|provider| format!("cli,{provider}"))
        .collect();
    feature_sets.push("codex".into());
    for features in &feature_sets {
        let check = ["check", "-p", "projectfile", "--no-default-features"];
        cargo(root, &[&check[..], &["--features", features]].concat())?;
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
