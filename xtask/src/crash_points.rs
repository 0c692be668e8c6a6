//! `cargo xtask crash-points`: runs every crash-point enumeration (core's, and each provider's
//! conformance check `crash_points_leave_the_users_bytes`) with its output shown, and prints
//! how many crash points, lost-state-directory points and power-loss points were checked, per
//! run and in total.
//!
//! Each enumeration prints one line `crash points: <who> / <setup>: N (per phase), S state-loss
//! points, and M power-loss points` (see `projectfile_conformance::crash::CrashReport`'s
//! `Display`).

use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

/// Substrings naming every crash-point test: core's (`*_survives_a_crash_at_every_point`) and
/// the conformance check. `cargo xtask ci` skips them in its workspace test run and runs them
/// here.
pub const TEST_NAMES: [&str; 2] = [
    "survives_a_crash_at_every_point",
    "crash_points_leave_the_users_bytes",
];

/// One enumeration's line, parsed.
#[derive(Debug, PartialEq, Eq)]
struct Counted {
    who: String,
    crash_points: u64,
    state_loss_points: u64,
    power_loss_points: u64,
}

/// Parses `crash points: WHO: N (…), S state-loss points, and M power-loss points`.
fn parse(line: &str) -> Option<Counted> {
    let rest = line.trim().strip_prefix("crash points: ")?;
    let (who, counts) = rest.rsplit_once(": ")?;
    let (crash, rest) = counts.split_once(' ')?;
    let (before, power) = rest
        .strip_suffix(" power-loss points")?
        .rsplit_once(", and ")?;
    let state = before
        .strip_suffix(" state-loss points")?
        .rsplit_once(", ")?
        .1;
    Some(Counted {
        who: who.to_string(),
        crash_points: crash.parse().ok()?,
        state_loss_points: state.parse().ok()?,
        power_loss_points: power.parse().ok()?,
    })
}

/// The test runs that enumerate crash points: (package, cargo test arguments after `-p`).
fn runs(root: &Path) -> Result<Vec<Vec<String>>> {
    let mut runs = vec![vec![
        "projectfile-core".to_string(),
        "--test".into(),
        "crash_points".into(),
        TEST_NAMES[0].into(),
    ]];
    for provider in crate::provider_names(root)? {
        runs.push(vec![
            format!("projectfile-{provider}"),
            "--test".into(),
            "suite".into(),
            TEST_NAMES[1].into(),
        ]);
    }
    Ok(runs)
}

/// Runs one enumeration (`cargo test` for `run`'s package and arguments, output captured) and
/// returns the counts it printed.
fn enumerate(root: &Path, run: &[String]) -> Result<Vec<Counted>> {
    let (package, rest) = run.split_first().context("a run names its package")?;
    let mut args = vec!["test", "--all-features", "-p", package.as_str()];
    args.extend(rest.iter().map(String::as_str));
    args.extend(["--", "--nocapture"]);
    eprintln!("$ cargo {}", args.join(" "));
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(&args)
        .current_dir(root)
        .output()
        .with_context(|| format!("run cargo {}", args.join(" ")))?;
    let text = String::from_utf8_lossy(&out.stderr);
    let found: Vec<Counted> = text.lines().filter_map(parse).collect();
    if !out.status.success() {
        eprintln!("{text}{}", String::from_utf8_lossy(&out.stdout));
        bail!("cargo {} failed with {}", args.join(" "), out.status);
    }
    if found.is_empty() {
        bail!("cargo {} printed no crash-point count", args.join(" "));
    }
    Ok(found)
}

/// Every enumeration, as many at once as the machine has processors (each is mostly one test on
/// one thread; the tests are built before, so no `cargo` waits on another's build lock), then
/// the table of their counts.
pub fn run(root: &Path) -> Result<()> {
    let runs = runs(root)?;
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(runs.len())
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Result<Vec<Counted>>>>> =
        runs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(run) = runs.get(i) else { break };
                    let result = enumerate(root, run);
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(result);
                    }
                }
            });
        }
    });
    let mut counted = Vec::new();
    for (run, slot) in runs.iter().zip(results) {
        let result = slot
            .into_inner()
            .ok()
            .flatten()
            .with_context(|| format!("the enumeration {run:?} did not finish"))?;
        counted.extend(result?);
    }
    counted.sort_by(|a, b| a.who.cmp(&b.who));
    println!();
    println!(
        "{:<60} {:>10} {:>10} {:>10}",
        "enumeration", "crash", "state loss", "power loss"
    );
    for c in &counted {
        println!(
            "{:<60} {:>10} {:>10} {:>10}",
            c.who, c.crash_points, c.state_loss_points, c.power_loss_points
        );
    }
    let crash: u64 = counted.iter().map(|c| c.crash_points).sum();
    let state: u64 = counted.iter().map(|c| c.state_loss_points).sum();
    let power: u64 = counted.iter().map(|c| c.power_loss_points).sum();
    println!("{:<60} {:>10} {:>10} {:>10}", "total", crash, state, power);
    println!(
        "\n{crash} crash points, {state} lost-state-directory points and {power} power-loss points enumerated, in {} runs; every one left the user's bytes intact",
        counted.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_parsed() {
        let line = "crash points: codex / user AGENTS.md: 32 (acquire 7, refresh 5), 38 state-loss points, and 38 power-loss points";
        assert_eq!(
            parse(line),
            Some(Counted {
                who: "codex / user AGENTS.md".to_string(),
                crash_points: 32,
                state_loss_points: 38,
                power_loss_points: 38,
            })
        );
        assert_eq!(parse("test crash_points ... ok"), None);
        assert_eq!(
            parse("crash points: x: many, some state-loss points, and some power-loss points"),
            None
        );
    }
}
