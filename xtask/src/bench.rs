//! `cargo xtask bench [--quick] [--cycles N]`: the benchmark suite of BENCHMARKS.md, a
//! benchmark and never a timed test. It builds the `projectfile` binary and the `bench` example of
//! projectfile-core in release, runs them, prints a table and writes `target/bench.json`.
//!
//! - (a) acquire+release of one AGENTS.md block, durable, as a ratio to the bare minimum I/O (read +
//!   durable atomic rewrite, twice) measured in the same run (`core/examples/bench.rs acquire`);
//! - (b) 64 processes cycling acquire/release on one workspace: throughput, and zero lost updates
//!   (every release finds its lease, the file ends byte for byte as it began, no lease is left);
//! - (c) resolve over a generated 4,020-directory tree as a ratio to a bare walk listing every
//!   directory (`core/examples/bench.rs resolve`);
//! - (d) CLI process start to JSON out: `providers --json`, `acquire --json`, `release --json`,
//!   median of N runs;
//! - (e) peak memory of each, from `wait4`'s `ru_maxrss` (the examples also report their `VmHWM`).
//!
//! Scratch space is `.bench/` at the repository root (git-ignored), recreated on every run.
// xtask sets up benchmark fixtures directly; the fsio chokepoint is for the product's own writes.
#![allow(clippy::disallowed_methods)]

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one measured process did.
struct Measured {
    ok: bool,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    wall: Duration,
    /// Peak resident set size in KiB.
    max_rss_kib: u64,
}

/// Runs `cmd` to completion, timing it from spawn to exit and reading its peak memory from
/// `wait4` (getrusage of that one child).
#[allow(clippy::zombie_processes)] // reaped by wait4, which std cannot do with rusage
fn measured(cmd: &mut Command) -> Result<Measured> {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("spawn {cmd:?}"))?;
    let mut out = child.stdout.take().context("stdout")?;
    let mut err = child.stderr.take().context("stderr")?;
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let mut stderr = Vec::new();
    let _ = err.read_to_end(&mut stderr);
    let stdout = reader.join().unwrap_or_default();
    let pid = i32::try_from(child.id()).context("pid")?;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter; `pid` is our own child, not yet reaped
    // (std's Child is never waited on after this).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed();
    if got != pid {
        bail!(
            "wait4 failed for {cmd:?}: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(Measured {
        ok: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        stdout,
        stderr,
        wall,
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
    })
}

fn json_of(m: &Measured, what: &str) -> Result<Value> {
    if !m.ok {
        bail!(
            "{what} failed: {}",
            String::from_utf8_lossy(&m.stderr).trim()
        );
    }
    serde_json::from_slice(&m.stdout).with_context(|| format!("{what}: parse JSON"))
}

fn median_ms(v: &mut [Duration]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| if p.is_absolute() { p } else { root.join(p) })
        .unwrap_or_else(|| root.join("target"))
}

struct Options {
    quick: bool,
    cycles: u64,
    procs: usize,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options {
        quick: false,
        cycles: 10,
        procs: 64,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--cycles" => o.cycles = it.next().context("--cycles N")?.parse()?,
            "--procs" => o.procs = it.next().context("--procs N")?.parse()?,
            other => bail!("unknown bench option {other} (use --quick, --cycles N, --procs N)"),
        }
    }
    Ok(o)
}

/// Runs the suite.
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let opts = parse(args)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for build in [
        [
            "build",
            "--release",
            "-p",
            "projectfile",
            "--bin",
            "projectfile",
        ],
        [
            "build",
            "--release",
            "-p",
            "projectfile-core",
            "--example",
            "bench",
        ],
    ] {
        eprintln!("$ cargo {}", build.join(" "));
        let status = Command::new(&cargo)
            .args(build)
            .current_dir(root)
            .status()?;
        if !status.success() {
            bail!("cargo {} failed", build.join(" "));
        }
    }
    let target = target_dir(root);
    let bin = target.join("release/projectfile");
    let example = target.join("release/examples/bench");
    let scratch = root.join(".bench");
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch).context("clear .bench")?;
    }
    std::fs::create_dir_all(&scratch)?;
    let iterations = if opts.quick { "40" } else { "200" };
    let resolve_iterations = if opts.quick { "10" } else { "40" };

    // (a) acquire+release against the bare minimum I/O.
    eprintln!("(a) acquire+release vs bare durable rewrites, {iterations} iterations");
    let a = measured(
        Command::new(&example)
            .args(["acquire", "--iterations", iterations, "--dir"])
            .arg(&scratch),
    )?;
    let mut a_json = json_of(&a, "bench acquire")?;
    a_json["process_peak_rss_kib"] = json!(a.max_rss_kib);

    // (c) resolve against a bare walk.
    eprintln!("(c) resolve over 4,020 directories vs a bare walk, {resolve_iterations} iterations");
    let c = measured(
        Command::new(&example)
            .args(["resolve", "--iterations", resolve_iterations, "--dir"])
            .arg(&scratch),
    )?;
    let mut c_json = json_of(&c, "bench resolve")?;
    c_json["process_peak_rss_kib"] = json!(c.max_rss_kib);

    // (d) CLI start to JSON out.
    let runs = if opts.quick { 15 } else { 50 };
    eprintln!("(d) CLI start to JSON out, median of {runs}");
    let d_json = cli_latency(&bin, &scratch, runs)?;

    // (b) 64 processes cycling.
    let cycles = if opts.quick { 3 } else { opts.cycles };
    eprintln!(
        "(b) {} processes cycling acquire/release, {cycles} cycles each",
        opts.procs
    );
    let b_json = cycling(&bin, &scratch, opts.procs, cycles)?;

    let report = json!({
        "schema": "projectfile.bench.v1",
        "quick": opts.quick,
        "acquire_release": a_json,
        "cycling": b_json,
        "resolve": c_json,
        "cli": d_json,
    });
    print_table(&report);
    let out = target.join("bench.json");
    std::fs::create_dir_all(&target)?;
    std::fs::write(&out, serde_json::to_string_pretty(&report)? + "\n")?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn mib(kib: &Value) -> String {
    format!("{:.1} MiB", f(kib) / 1024.0)
}

fn print_table(r: &Value) {
    let a = &r["acquire_release"];
    let b = &r["cycling"];
    let c = &r["resolve"];
    let d = &r["cli"];
    let verdict = |ratio: f64, target: f64| if ratio <= target { "met" } else { "MISSED" };
    println!();
    println!(
        "{:<44} {:>12} {:>12} {:>8} {:>8} {:>7} {:>10}",
        "benchmark", "ours", "baseline", "ratio", "target", "", "peak RSS"
    );
    let ar = f(&a["ratio"]);
    println!(
        "{:<44} {:>9.0} us {:>9.0} us {:>7.2}x {:>7.1}x {:>7} {:>10}",
        "(a) acquire+release, durable (median)",
        f(&a["ours_median_us"]),
        f(&a["baseline_median_us"]),
        ar,
        1.5,
        verdict(ar, 1.5),
        mib(&a["process_peak_rss_kib"]),
    );
    println!(
        "{:<44} {:>12.1} {:>12.1}",
        "    syncs per cycle (fsync + fdatasync)",
        f(&a["syncs_per_cycle"]["ours"]),
        f(&a["syncs_per_cycle"]["baseline"]),
    );
    println!(
        "{:<44} {:>8.0} /s {:>12} {:>8} {:>8} {:>7} {:>10}",
        format!(
            "(b) {} procs cycling: {} cycles, {} lost",
            b["procs"], b["cycles"], b["lost_updates"]
        ),
        f(&b["cycles_per_second"]),
        "",
        "",
        "0 lost",
        if b["lost_updates"] == 0 {
            "met"
        } else {
            "MISSED"
        },
        mib(&b["peak_rss_kib"]),
    );
    let cr = f(&c["ratio"]);
    println!(
        "{:<44} {:>9.1} ms {:>9.1} ms {:>7.2}x {:>7.1}x {:>7} {:>10}",
        format!("(c) resolve, {} dirs (median)", c["directories"]),
        f(&c["ours_median_us"]) / 1e3,
        f(&c["baseline_median_us"]) / 1e3,
        cr,
        1.3,
        verdict(cr, 1.3),
        mib(&c["process_peak_rss_kib"]),
    );
    for (name, key) in [
        ("(d) `providers --json` start to exit", "providers"),
        ("(d) `acquire --json` start to exit", "acquire"),
        ("(d) `release --json` start to exit", "release"),
    ] {
        println!(
            "{:<44} {:>9.2} ms {:>12} {:>8} {:>8} {:>7} {:>10}",
            name,
            f(&d[key]["median_ms"]),
            "",
            "",
            "few ms",
            "",
            mib(&d[key]["peak_rss_kib"]),
        );
    }
    println!();
}

fn cli_latency(bin: &Path, scratch: &Path, runs: usize) -> Result<Value> {
    let ws = scratch.join("cli/ws");
    let state = scratch.join("cli/state");
    std::fs::create_dir_all(&ws)?;
    std::fs::write(ws.join("AGENTS.md"), b"# Rules\nBe brief.\n")?;
    let me = std::process::id().to_string();
    let mut out = serde_json::Map::new();
    let (mut prov, mut acq, mut rel) = (Vec::new(), Vec::new(), Vec::new());
    let (mut prov_rss, mut acq_rss, mut rel_rss) = (0, 0, 0);
    for _ in 0..runs {
        let p = measured(Command::new(bin).args(["providers", "--json"]))?;
        json_of(&p, "providers")?;
        prov.push(p.wall);
        prov_rss = prov_rss.max(p.max_rss_kib);
        let a = measured(
            Command::new(bin)
                .env("PROJECTFILE_STATE_DIR", &state)
                .args(["acquire", "--provider", "codex", "--json", "--workspace"])
                .arg(&ws)
                .args(["--prompt", "Session text.", "--holder-pid", &me]),
        )?;
        let token = json_of(&a, "acquire")?["token"]
            .as_str()
            .context("token")?
            .to_string();
        acq.push(a.wall);
        acq_rss = acq_rss.max(a.max_rss_kib);
        let r = measured(
            Command::new(bin)
                .env("PROJECTFILE_STATE_DIR", &state)
                .args(["release", "--json", "--token", &token]),
        )?;
        json_of(&r, "release")?;
        rel.push(r.wall);
        rel_rss = rel_rss.max(r.max_rss_kib);
    }
    for (key, v, rss) in [
        ("providers", &mut prov, prov_rss),
        ("acquire", &mut acq, acq_rss),
        ("release", &mut rel, rel_rss),
    ] {
        out.insert(
            key.into(),
            json!({"runs": runs, "median_ms": median_ms(v), "peak_rss_kib": rss}),
        );
    }
    Ok(Value::Object(out))
}

fn cycling(bin: &Path, scratch: &Path, procs: usize, cycles: u64) -> Result<Value> {
    let ws = scratch.join("cycling/ws");
    let state = scratch.join("cycling/state");
    std::fs::create_dir_all(&ws)?;
    let original = b"# Team rules\r\nUse tabs.\r\nno final newline".to_vec();
    std::fs::write(ws.join("AGENTS.md"), &original)?;
    let me = std::process::id().to_string();
    let lost = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let peak = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let workers: Vec<_> = (0..procs)
        .map(|w| {
            let (bin, ws, state, me) = (bin.to_path_buf(), ws.clone(), state.clone(), me.clone());
            let (lost, done, failed, errors, peak) = (
                lost.clone(),
                done.clone(),
                failed.clone(),
                errors.clone(),
                peak.clone(),
            );
            std::thread::spawn(move || {
                let cycle = |i: u64| -> Result<()> {
                    let a = measured(
                        Command::new(&bin)
                            .env("PROJECTFILE_STATE_DIR", &state)
                            .args(["acquire", "--provider", "codex", "--json", "--workspace"])
                            .arg(&ws)
                            .args(["--prompt", &format!("worker {w} cycle {i}")])
                            .args(["--holder-pid", &me]),
                    )?;
                    peak.fetch_max(a.max_rss_kib, Ordering::Relaxed);
                    let token = json_of(&a, "acquire")?["token"]
                        .as_str()
                        .context("token")?
                        .to_string();
                    let r = measured(
                        Command::new(&bin)
                            .env("PROJECTFILE_STATE_DIR", &state)
                            .args(["release", "--json", "--token", &token]),
                    )?;
                    peak.fetch_max(r.max_rss_kib, Ordering::Relaxed);
                    if json_of(&r, "release")?["released"] != true {
                        lost.fetch_add(1, Ordering::Relaxed);
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                };
                for i in 0..cycles {
                    if let Err(e) = cycle(i) {
                        failed.store(true, Ordering::Relaxed);
                        if let Ok(mut v) = errors.lock() {
                            v.push(format!("{e:#}"));
                        }
                        return;
                    }
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    let elapsed = start.elapsed().as_secs_f64();
    if failed.load(Ordering::Relaxed) {
        bail!(
            "cycling failed: {:?}",
            errors.lock().map(|v| v.clone()).unwrap_or_default()
        );
    }
    let after = std::fs::read(ws.join("AGENTS.md"))?;
    let status = json_of(
        &measured(
            Command::new(bin)
                .env("PROJECTFILE_STATE_DIR", &state)
                .args(["status", "--json", "--workspace"])
                .arg(&ws),
        )?,
        "status",
    )?;
    let leases_left = status["leases"].as_array().map_or(0, Vec::len);
    let mut lost_updates = lost.load(Ordering::Relaxed);
    if after != original {
        lost_updates += 1;
    }
    lost_updates += leases_left as u64;
    let total = done.load(Ordering::Relaxed);
    Ok(json!({
        "procs": procs,
        "cycles": total,
        "seconds": elapsed,
        "cycles_per_second": total as f64 / elapsed,
        "lost_updates": lost_updates,
        "file_byte_exact": after == original,
        "leases_left": leases_left,
        "peak_rss_kib": peak.load(Ordering::Relaxed),
    }))
}
