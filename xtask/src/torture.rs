//! `cargo xtask torture [--procs 64] [--seconds 30] [--seed S]`: the process torture test
//! (`tests/torture.rs`) in release with a bigger setting than CI's (16 workers, 3 seconds). Without
//! `--seed` a seed is drawn from the clock and printed, so a failure can be replayed.

use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

/// `cargo xtask torture`'s options.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Concurrent worker processes.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub procs: u32,
    /// How long the workers run, in seconds.
    #[arg(long, value_name = "N", default_value_t = 30.0)]
    pub seconds: f64,
    /// The random seed [default: drawn from the clock, and printed].
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
}

/// Runs the torture test with the given options.
pub fn run(root: &Path, options: &Options) -> Result<()> {
    let seed = options.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(7)
    });
    let (procs, seconds) = (options.procs, options.seconds);
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
        .env("PROJECTFILE_TORTURE_PROCS", procs.to_string())
        .env("PROJECTFILE_TORTURE_SECONDS", seconds.to_string())
        .env("PROJECTFILE_TORTURE_SEED", seed.to_string())
        .current_dir(root)
        .status()
        .context("run cargo test")?;
    if !status.success() {
        bail!("torture failed (replay with --seed {seed})");
    }
    Ok(())
}
