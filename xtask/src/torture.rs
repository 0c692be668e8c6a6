//! `cargo xtask torture [--procs 64] [--seconds 30] [--seed S]`: the process torture test
//! (`tests/torture.rs`) in release with a bigger setting than CI's (16 workers, 3 seconds). Without
//! `--seed` a seed is drawn from the clock and printed, so a failure can be replayed.

use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

/// Runs the torture test with the given flags.
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let mut procs = "64".to_string();
    let mut seconds = "30".to_string();
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7)
        .to_string();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .with_context(|| format!("{flag} needs a value"))?
            .clone();
        match flag.as_str() {
            "--procs" => procs = value,
            "--seconds" => seconds = value,
            "--seed" => seed = value,
            other => bail!("unknown torture option {other} (use --procs N, --seconds N, --seed S)"),
        }
    }
    for (name, v) in [
        ("--procs", &procs),
        ("--seconds", &seconds),
        ("--seed", &seed),
    ] {
        v.parse::<f64>()
            .with_context(|| format!("{name} {v}: not a number"))?;
    }
    eprintln!("torture: {procs} workers, {seconds} s, seed {seed}");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "test",
            "--release",
            "-p",
            "projectfile",
            "--test",
            "torture",
        ])
        .args(["--", "--nocapture"])
        .env("PROJECTFILE_TORTURE_PROCS", &procs)
        .env("PROJECTFILE_TORTURE_SECONDS", &seconds)
        .env("PROJECTFILE_TORTURE_SEED", &seed)
        .current_dir(root)
        .status()
        .context("run cargo test")?;
    if !status.success() {
        bail!("torture failed (replay with --seed {seed})");
    }
    Ok(())
}
