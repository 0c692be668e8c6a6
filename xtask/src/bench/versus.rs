//! The process-level benchmarks: projectfile as a user runs it, one process per command, against
//! the minimal C program doing the same durable I/O (`xtask/bench/minimal.c`), interleaved
//! iteration by iteration.
//!
//! - acquire + release of a small AGENTS.md against `minimal add` + `minimal remove`;
//! - the same over AGENTS.md of 1 KiB, 1 MiB, 10 MiB and 100 MiB, with each process's peak memory;
//! - one more acquire + release with 0, 16, 64 and 256 live leases already held, against the same
//!   with none;
//! - 64 processes cycling acquire/release on one workspace against 64 processes cycling
//!   `minimal -l LOCK add/remove` on one file (flock around the same durable I/O), alternating
//!   rounds; zero lost updates and both files byte-exact at the end.

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use std::io::{BufRead as _, Write as _};
use std::path::Path;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::process::{self, Pair, Programs, Workspace, interleaved, ratio, summary};

/// The session text every measured acquire projects.
const PROMPT: &str = "Session text: answer briefly, keep the user's bytes.";

/// Writes `size` bytes of plain Markdown lines (no marker), ending in a newline, to `path`, a
/// line at a time: the benchmark keeps its own memory small, because a child's peak memory as
/// `wait4` reports it starts from the memory of the process that spawned it.
pub fn write_user_text(path: &Path, size: usize) -> Result<()> {
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("create {}", path.display()))?,
    );
    let head = b"# Team rules\n\n";
    let mut written = 0;
    let mut n = 0;
    let mut line = Vec::with_capacity(128);
    while written + 1 < size {
        line.clear();
        if n == 0 {
            line.extend_from_slice(head);
        } else {
            line.extend_from_slice(
                format!(
                    "- Rule {n}: keep every byte of the project exactly as the user left it.\n"
                )
                .as_bytes(),
            );
        }
        n += 1;
        let take = line.len().min(size - 1 - written);
        out.write_all(&line[..take])?;
        written += take;
    }
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// Whether two files hold the same bytes, compared a block at a time.
pub fn same_bytes(a: &Path, b: &Path) -> Result<bool> {
    let open = |p: &Path| {
        std::fs::File::open(p)
            .map(std::io::BufReader::new)
            .with_context(|| format!("open {}", p.display()))
    };
    let (mut a, mut b) = (open(a)?, open(b)?);
    loop {
        let (x, y) = (a.fill_buf()?.to_vec(), b.fill_buf()?);
        let n = x.len().min(y.len());
        if x[..n] != y[..n] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(x.is_empty() && y.is_empty());
        }
        a.consume(n);
        b.consume(n);
    }
}

/// projectfile against the minimal program on an AGENTS.md holding `content`, `iterations`
/// interleaved pairs each; both files must end as they began.
pub fn against_minimal(
    programs: &Programs,
    base: &Path,
    original: &Path,
    iterations: usize,
) -> Result<Value> {
    let ws = Workspace::create(&base.join("ours"))?;
    let ours_file = ws.dir.join("AGENTS.md");
    let minimal_dir = base.join("minimal");
    std::fs::create_dir_all(&minimal_dir)?;
    let minimal_file = minimal_dir.join("AGENTS.md");
    std::fs::copy(original, &ours_file)?;
    std::fs::copy(original, &minimal_file)?;
    let mut ours = || process::ours(programs, &ws, PROMPT);
    let mut minimal = || process::minimal(programs, &minimal_file, PROMPT, None, false);
    let samples = interleaved(iterations, &mut [&mut ours, &mut minimal])?;
    let memory = programs.for_memory(&base.join("peak"));
    let ours_memory = process::ours(&memory, &ws, PROMPT)?;
    let minimal_memory = process::minimal(&memory, &minimal_file, PROMPT, None, false)?;
    let byte_exact = same_bytes(&ours_file, original)?;
    ensure!(
        byte_exact,
        "{}: not byte-exact after the benchmark",
        ours_file.display()
    );
    ensure!(
        same_bytes(&minimal_file, original)?,
        "{}: the minimal program did not restore it",
        minimal_file.display()
    );
    let (o, m) = (
        summary(&samples[0], &ours_memory),
        summary(&samples[1], &minimal_memory),
    );
    Ok(json!({
        "bytes": std::fs::metadata(original)?.len(),
        "ratio": ratio(&o, &m),
        "ours": o,
        "minimal": m,
        "byte_exact": byte_exact,
    }))
}

/// The file-size curve: one [`against_minimal`] per `(label, bytes, iterations)`.
pub fn file_sizes(
    programs: &Programs,
    scratch: &Path,
    sizes: &[(&str, usize, usize)],
) -> Result<Value> {
    let mut out = Vec::new();
    for &(label, bytes, iterations) in sizes {
        eprintln!("    AGENTS.md of {label}, {iterations} interleaved pairs");
        let base = scratch.join(format!("size-{label}"));
        std::fs::create_dir_all(&base)?;
        let original = base.join("original.md");
        write_user_text(&original, bytes)?;
        let mut row = against_minimal(programs, &base, &original, iterations)?;
        row["label"] = json!(label);
        out.push(row);
        // The next size needs the disk space.
        std::fs::remove_dir_all(&base).with_context(|| format!("clear {}", base.display()))?;
    }
    Ok(Value::Array(out))
}

/// Processes that live until dropped: the distinct live holders of the lease curve.
struct Sleepers(Vec<Child>);

impl Sleepers {
    fn spawn(n: usize) -> Result<Sleepers> {
        let mut all = Sleepers(Vec::with_capacity(n));
        for _ in 0..n {
            all.0.push(
                Command::new("sleep")
                    .arg("3600")
                    .spawn()
                    .context("spawn sleep")?,
            );
        }
        Ok(all)
    }
}

impl Drop for Sleepers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// One point of the lease curve: a workspace with `leases` live leases already held (by this
/// process, or with `distinct` each by its own live process). Codex leases (the curve) share
/// the measured session's block in AGENTS.md: every lease holds that file's entry; with
/// [`Texts::Measured`] the measured session's text is theirs (so among them the measured
/// session finds the block in place and leaves it, where alone it adds and removes it), with
/// [`Texts::OwnEach`] each has a text of its own, which the ledger records per lease and the
/// measured session's start puts in the block (a point beside the curve). Agy leases touch no
/// file of the workspace (Agy sessions without hooks project nothing): beside them the measured
/// Codex session does the same I/O as alone, and only the leases differ.
///
/// Claude leases keep the session text in a private folder each, under the state directory:
/// their points measure a Claude session among them, against a Claude session with none.
struct LeasePoint {
    leases: usize,
    distinct: bool,
    provider: &'static str,
    texts: Texts,
    ws: Workspace,
    _holders: Sleepers,
}

impl LeasePoint {
    /// The provider of the measured session: Claude among Claude leases, Codex otherwise.
    fn measured(&self) -> &'static str {
        if self.provider == "claude" {
            "claude"
        } else {
            "codex"
        }
    }
}

/// The session texts of a lease point's Codex leases.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Texts {
    /// The measured session's own text.
    Measured,
    /// A text of its own for each lease.
    OwnEach,
}

impl LeasePoint {
    fn prepare(
        programs: &Programs,
        scratch: &Path,
        leases: usize,
        distinct: bool,
        provider: &'static str,
        texts: Texts,
    ) -> Result<Self> {
        let name = format!(
            "leases-{provider}-{leases}{}{}",
            if distinct { "-distinct" } else { "" },
            if texts == Texts::OwnEach {
                "-texts"
            } else {
                ""
            }
        );
        let ws = Workspace::create(&scratch.join(name))?;
        write_user_text(&ws.dir.join("AGENTS.md"), 1024)?;
        let holders = Sleepers::spawn(if distinct { leases } else { 0 })?;
        for i in 0..leases {
            let pid = match holders.0.get(i) {
                Some(child) => child.id().to_string(),
                None => programs.holder_pid.clone(),
            };
            let text = match (provider, texts) {
                ("agy", _) | (_, Texts::OwnEach) => format!("background lease {i}"),
                _ => PROMPT.to_string(),
            };
            ws.acquire(programs, provider, &text, &pid)?;
        }
        Ok(LeasePoint {
            leases,
            distinct,
            provider,
            texts,
            ws,
            _holders: holders,
        })
    }
}

/// The live-lease curve: one more Codex acquire + release at each of `counts` Codex leases
/// sharing its block and text, held by this process, and at the largest count: held by as many
/// distinct processes, each lease with its own text, Agy leases, and Claude sessions among
/// Claude leases; ratios to the point with none measuring the same provider.
pub fn live_leases(
    programs: &Programs,
    scratch: &Path,
    counts: &[usize],
    iterations: usize,
) -> Result<Value> {
    let mut points = Vec::new();
    // The curve: Codex sessions sharing the measured session's block and text, as a host that
    // starts many sessions of one CLI on one workspace has them.
    for &n in counts {
        points.push(LeasePoint::prepare(
            programs,
            scratch,
            n,
            false,
            "codex",
            Texts::Measured,
        )?);
    }
    if let Some(&most) = counts.iter().max().filter(|n| **n > 0) {
        // Beside the curve: distinct holders, a text of its own for each, Agy leases.
        for (distinct, provider, texts) in [
            (true, "codex", Texts::Measured),
            (false, "codex", Texts::OwnEach),
            (false, "agy", Texts::Measured),
        ] {
            points.push(LeasePoint::prepare(
                programs, scratch, most, distinct, provider, texts,
            )?);
        }
        for n in [0, most] {
            points.push(LeasePoint::prepare(
                programs,
                scratch,
                n,
                false,
                "claude",
                Texts::OwnEach,
            )?);
        }
    }
    eprintln!(
        "    {} points prepared, {iterations} interleaved rounds",
        points.len()
    );
    let mut sides: Vec<Box<dyn FnMut() -> Result<Pair> + '_>> = points
        .iter()
        .map(|p| {
            Box::new(move || process::ours_as(programs, &p.ws, p.measured(), PROMPT)) as Box<_>
        })
        .collect();
    let mut refs: Vec<&mut dyn FnMut() -> Result<Pair>> = sides
        .iter_mut()
        .map(|s| s.as_mut() as &mut dyn FnMut() -> Result<Pair>)
        .collect();
    let samples = interleaved(iterations, &mut refs)?;
    let memory = programs.for_memory(&scratch.join("peak"));
    let mut summaries = Vec::new();
    for (point, samples) in points.iter().zip(&samples) {
        summaries.push(summary(
            samples,
            &process::ours_as(&memory, &point.ws, point.measured(), PROMPT)?,
        ));
    }
    // Each point against the point with no lease measuring the same provider.
    let none = |measured: &str| {
        points
            .iter()
            .position(|p| p.leases == 0 && p.measured() == measured)
            .map(|i| summaries[i].clone())
    };
    let mut out = Vec::new();
    for (point, s) in points.iter().zip(summaries.iter().cloned()) {
        let none = none(point.measured());
        let left = point.ws.lease_count(programs)?;
        ensure!(
            left == point.leases,
            "{} live leases expected after the rounds, {left} found",
            point.leases
        );
        out.push(json!({
            "leases": point.leases,
            "provider": point.provider,
            "measured": point.measured(),
            "own_texts": point.texts == Texts::OwnEach,
            "distinct_holders": if point.distinct { point.leases } else { point.leases.min(1) },
            "ratio_to_none": none.as_ref().map_or(0.0, |none| ratio(&s, none)),
            "ours": s,
        }));
    }
    Ok(Value::Array(out))
}

/// What one side of the cycling benchmark did.
#[derive(Default)]
struct Tally {
    cycles: AtomicU64,
    lost: AtomicU64,
    errors: Mutex<Vec<String>>,
}

impl Tally {
    fn record(&self) {
        self.cycles.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs `procs` threads of `cycles` cycles each; returns the seconds it took.
fn round(
    procs: usize,
    cycles: usize,
    tally: &Arc<Tally>,
    cycle: impl Fn(usize, usize) -> Result<Pair> + Send + Sync + 'static,
) -> f64 {
    let cycle = Arc::new(cycle);
    let start = Instant::now();
    let workers: Vec<_> = (0..procs)
        .map(|w| {
            let (cycle, tally) = (cycle.clone(), tally.clone());
            std::thread::spawn(move || {
                for i in 0..cycles {
                    match cycle(w, i) {
                        Ok(_) => tally.record(),
                        Err(e) => {
                            if let Ok(mut v) = tally.errors.lock() {
                                v.push(format!("{e:#}"));
                            }
                            return;
                        }
                    }
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    start.elapsed().as_secs_f64()
}

/// 64 processes cycling one workspace against 64 cycling the minimal program under flock, in
/// alternating rounds.
pub fn cycling(
    programs: &Arc<Programs>,
    scratch: &Path,
    procs: usize,
    cycles: usize,
    rounds: usize,
) -> Result<Value> {
    let original = b"# Team rules\r\nUse tabs.\r\nno final newline".to_vec();
    let ws = Workspace::create(&scratch.join("cycling/ours"))?;
    let minimal_dir = scratch.join("cycling/minimal");
    std::fs::create_dir_all(&minimal_dir)?;
    let (ours_file, minimal_file) = (ws.dir.join("AGENTS.md"), minimal_dir.join("AGENTS.md"));
    let lock = minimal_dir.join("AGENTS.md.lock");
    std::fs::write(&ours_file, &original)?;
    std::fs::write(&minimal_file, &original)?;
    let (ours, minimal) = (Arc::new(Tally::default()), Arc::new(Tally::default()));
    let (mut ours_secs, mut minimal_secs) = (0.0, 0.0);
    for _ in 0..rounds {
        let (p, w, o) = (programs.clone(), ws.clone(), ours.clone());
        ours_secs += round(procs, cycles, &ours, move |worker, i| {
            let prompt = format!("worker {worker} cycle {i}");
            let (acquire, token) = w.acquire(&p, "codex", &prompt, &p.holder_pid)?;
            let (release, released) = w.release(&p, &token)?;
            if !released {
                o.lost.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Pair {
                wall: acquire.wall + release.wall,
                first_rss_kib: acquire.max_rss_kib,
                second_rss_kib: release.max_rss_kib,
            })
        });
        let (p, file, lock) = (programs.clone(), minimal_file.clone(), lock.clone());
        minimal_secs += round(procs, cycles, &minimal, move |worker, i| {
            let text = format!("worker {worker} cycle {i}");
            process::minimal(&p, &file, &text, Some(&lock), true)
        });
    }
    for (tally, side) in [(&ours, "projectfile"), (&minimal, "minimal")] {
        let errors = tally.errors.lock().map(|v| v.clone()).unwrap_or_default();
        if !errors.is_empty() {
            bail!("cycling ({side}) failed: {errors:?}");
        }
    }
    let ours_exact = std::fs::read(&ours_file)? == original;
    let minimal_exact = std::fs::read(&minimal_file)? == original;
    let leases_left = ws.lease_count(programs)?;
    let lost = ours.lost.load(Ordering::Relaxed) + leases_left as u64 + u64::from(!ours_exact);
    let side = |t: &Tally, secs: f64| {
        let cycles = t.cycles.load(Ordering::Relaxed);
        json!({
            "cycles": cycles,
            "seconds": secs,
            "cycles_per_second": if secs > 0.0 { cycles as f64 / secs } else { 0.0 },
        })
    };
    let (o, m) = (side(&ours, ours_secs), side(&minimal, minimal_secs));
    let throughput = |v: &Value| v["cycles_per_second"].as_f64().unwrap_or(0.0);
    let relative = if throughput(&m) > 0.0 {
        throughput(&o) / throughput(&m)
    } else {
        0.0
    };
    Ok(json!({
        "procs": procs,
        "rounds": rounds,
        "throughput_ratio": relative,
        "lost_updates": lost,
        "leases_left": leases_left,
        "file_byte_exact": ours_exact,
        "minimal_file_byte_exact": minimal_exact,
        "ours": o,
        "minimal": m,
    }))
}
