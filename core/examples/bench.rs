//! In-process benchmarks for `cargo xtask bench` (see BENCHMARKS.md), each measured against a
//! bare baseline in the same run and printed as one JSON object on stdout:
//!
//! - `bench acquire --dir D [--iterations N]`: acquire+release of one AGENTS.md block (Codex, durable)
//!   against the bare minimum I/O for the same result: read the file and durably rewrite it
//!   (temporary file, fsync, rename, fsync of the directory), twice. Also counts the syncs each
//!   side makes per cycle (ours through `fsio::syncs_on_this_thread`), and ours in the very first
//!   cycle, which records the file in the ledger durably.
//! - `bench resolve --dir D [--iterations N]`: guidance resolution over a generated tree of 4,020
//!   directories against a bare walk that lists every directory (`read_dir` + `file_type`).
//!
//! Runs alternate ours and the baseline and report medians, so drift (page cache, other load)
//! hits both. Not a test: nothing here asserts a time.
// The benchmark plays the user: it builds and resets its fixture folders directly.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

use projectfile_core::Namespace;
use projectfile_core::guidance::{GuidanceRequest, StdFs, resolve};
use projectfile_core::holder::Holder;
use projectfile_core::projector::{AcquireRequest, Projector};
use projectfile_core::testing::fsio;
use projectfile_core::{Provider, SessionRequest};
use serde_json::json;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn median(v: &mut [Duration]) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e6
}

fn p90(v: &mut [Duration]) -> f64 {
    v.sort();
    v[(v.len() * 9 / 10).min(v.len() - 1)].as_secs_f64() * 1e6
}

/// Peak resident set size of this process so far, in KiB.
fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The bare minimum durable rewrite: temporary file beside, write, fsync, rename, fsync dir.
/// Returns how many syncs it made.
fn durable_rewrite(dir: &std::fs::File, dir_path: &Path, name: &str, bytes: &[u8], n: u64) -> u64 {
    let temp = dir_path.join(format!(".{name}.bench-tmp.{n}"));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&temp)
        .unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
    drop(f);
    std::fs::rename(&temp, dir_path.join(name)).unwrap();
    dir.sync_all().unwrap();
    2
}

fn read(path: &Path) -> Vec<u8> {
    let mut v = Vec::new();
    std::fs::File::open(path)
        .unwrap()
        .read_to_end(&mut v)
        .unwrap();
    v
}

fn bench_acquire(dir: &Path, iterations: usize) -> serde_json::Value {
    let ws = dir.join("ws");
    let state = dir.join("state");
    let base = dir.join("baseline");
    for d in [&ws, &state, &base] {
        std::fs::create_dir_all(d).unwrap();
    }
    let ws = ws.canonicalize().unwrap();
    let mut user = Vec::new();
    for i in 0..80 {
        user.extend_from_slice(
            format!("- rule {i}: keep the build green and the diff small.\n").as_bytes(),
        );
    }
    std::fs::write(ws.join("AGENTS.md"), &user).unwrap();
    std::fs::write(base.join("AGENTS.md"), &user).unwrap();
    let prompt = "Session: answer briefly, cite files, never guess.";
    let with_block = {
        let mut v = user.clone();
        v.extend_from_slice(
            format!(
                "\n<!-- BEGIN agentworks-session-instructions created=false -->\n{prompt}\n<!-- END agentworks-session-instructions -->\n"
            )
            .as_bytes(),
        );
        v
    };
    let projector = Projector::new(&state, Namespace::default());
    let codex = projectfile_codex::Codex;
    let me = Holder::current_process().unwrap();
    let request = AcquireRequest::new(&ws, SessionRequest::with_prompt(prompt), me);
    let base_dir = std::fs::File::open(&base).unwrap();

    let mut ours = Vec::with_capacity(iterations);
    let mut bare = Vec::with_capacity(iterations);
    let mut our_syncs = Vec::with_capacity(iterations);
    let mut bare_syncs = Vec::with_capacity(iterations);
    let mut first_syncs = None;
    let mut n = 0;
    let warmup = 5;
    for i in 0..iterations + warmup {
        // Ours: acquire + release through the library.
        let syncs = fsio::syncs_on_this_thread();
        let t = Instant::now();
        let receipt = projector
            .acquire(&codex as &dyn Provider, &request)
            .unwrap();
        let released = projector.release(&receipt.token).unwrap();
        let ours_t = t.elapsed();
        let synced = fsio::syncs_on_this_thread() - syncs;
        assert!(released.released);
        first_syncs.get_or_insert(synced);

        // Bare: read + durable rewrite, twice.
        let t = Instant::now();
        let a = read(&base.join("AGENTS.md"));
        assert_eq!(a.len(), user.len());
        n += 1;
        let mut bare_synced = durable_rewrite(&base_dir, &base, "AGENTS.md", &with_block, n);
        let b = read(&base.join("AGENTS.md"));
        assert_eq!(b.len(), with_block.len());
        n += 1;
        bare_synced += durable_rewrite(&base_dir, &base, "AGENTS.md", &user, n);
        let bare_t = t.elapsed();

        if i >= warmup {
            ours.push(ours_t);
            bare.push(bare_t);
            our_syncs.push(synced);
            bare_syncs.push(bare_synced);
        }
    }
    assert_eq!(
        read(&ws.join("AGENTS.md")),
        user,
        "the workspace did not round-trip"
    );
    let ours_med = median(&mut ours);
    let bare_med = median(&mut bare);
    let per_cycle = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len() as f64;
    json!({
        "bench": "acquire_release",
        "iterations": iterations,
        "ours_median_us": ours_med,
        "ours_p90_us": p90(&mut ours),
        "baseline_median_us": bare_med,
        "baseline_p90_us": p90(&mut bare),
        "ratio": ours_med / bare_med,
        "target_ratio": 1.5,
        "syncs_per_cycle": { "ours": per_cycle(&our_syncs), "baseline": per_cycle(&bare_syncs) },
        "syncs_first_cycle": first_syncs,
        "peak_rss_kib": vm_hwm_kib(),
    })
}

/// 20 × 20 × 10 minus one per leaf group: 20 + 400 + 3,600 = 4,020 directories, with instruction
/// files in about one directory in ten.
fn generate_tree(root: &Path) -> usize {
    let mut dirs = 0;
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join("AGENTS.md"), b"# Root rules\nBuild with cargo.\n").unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    for a in 0..20 {
        let da = root.join(format!("pkg{a:02}"));
        std::fs::create_dir(&da).unwrap();
        dirs += 1;
        std::fs::write(da.join("lib.rs"), b"// code\n").unwrap();
        if a % 3 == 0 {
            std::fs::write(da.join("AGENTS.md"), format!("Package {a} rules.\n")).unwrap();
        }
        for b in 0..20 {
            let db = da.join(format!("mod{b:02}"));
            std::fs::create_dir(&db).unwrap();
            dirs += 1;
            std::fs::write(db.join("mod.rs"), b"// code\n").unwrap();
            if (a + b) % 10 == 0 {
                std::fs::write(db.join("AGENTS.md"), format!("Module {a}/{b} rules.\n")).unwrap();
            }
            for c in 0..9 {
                let dc = db.join(format!("part{c}"));
                std::fs::create_dir(&dc).unwrap();
                dirs += 1;
                std::fs::write(dc.join("x.rs"), b"// code\n").unwrap();
                if (a + b + c) % 37 == 0 {
                    std::fs::write(dc.join("CLAUDE.md"), format!("Part {a}/{b}/{c}.\n")).unwrap();
                }
            }
        }
    }
    dirs
}

/// The bare walk: every directory listed once, each entry's type from the listing.
fn bare_walk(root: &Path) -> (usize, usize) {
    let mut stack: Vec<PathBuf> = vec![root.to_path_buf()];
    let (mut dirs, mut entries) = (0, 0);
    while let Some(dir) = stack.pop() {
        dirs += 1;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            entries += 1;
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            }
        }
    }
    (dirs, entries)
}

fn bench_resolve(dir: &Path, iterations: usize) -> serde_json::Value {
    let root = dir.join("tree");
    let generated = if root.join("AGENTS.md").is_file() {
        bare_walk(&root).0 - 1
    } else {
        generate_tree(&root)
    };
    let root = root.canonicalize().unwrap();
    let request = GuidanceRequest::new(root.to_str().unwrap())
        .with_max_dirs(10_000)
        .with_max_depth(8)
        .with_max_bytes(1 << 20);
    let mut ours = Vec::with_capacity(iterations);
    let mut bare = Vec::with_capacity(iterations);
    let mut scanned = 0;
    let mut sources = 0;
    let mut walked = (0, 0);
    for i in 0..iterations + 3 {
        let t = Instant::now();
        let resolution = resolve(&StdFs, &request);
        let o = t.elapsed();
        let t = Instant::now();
        walked = bare_walk(&root);
        let b = t.elapsed();
        scanned = resolution.dirs_scanned;
        sources = resolution.sources.len();
        if i >= 3 {
            ours.push(o);
            bare.push(b);
        }
    }
    let ours_med = median(&mut ours);
    let bare_med = median(&mut bare);
    json!({
        "bench": "resolve_tree",
        "iterations": iterations,
        "directories": generated,
        "dirs_scanned": scanned,
        "sources": sources,
        "bare_walk_dirs": walked.0,
        "bare_walk_entries": walked.1,
        "ours_median_us": ours_med,
        "ours_p90_us": p90(&mut ours),
        "baseline_median_us": bare_med,
        "baseline_p90_us": p90(&mut bare),
        "ratio": ours_med / bare_med,
        "target_ratio": 1.3,
        "peak_rss_kib": vm_hwm_kib(),
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = PathBuf::from(arg(&args, "--dir").unwrap_or_else(|| ".bench".into()));
    let iterations: usize = arg(&args, "--iterations")
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let out = match args.first().map(String::as_str) {
        Some("acquire") => bench_acquire(&dir.join("acquire"), iterations),
        Some("resolve") => bench_resolve(&dir.join("resolve"), iterations),
        _ => {
            eprintln!("usage: bench (acquire|resolve) [--dir D] [--iterations N]");
            std::process::exit(2);
        }
    };
    println!("{out}");
}
