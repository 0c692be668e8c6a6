//! Process torture (docs/promises.md, promises 2, 3, 6 and 7 under fire): N workers drive real
//! `projectfile` processes on one workspace at once — acquire (held by a `sleep` child), release,
//! `run`, and SIGKILLs of holders, of `acquire` processes mid-flight and of whole `run` process
//! groups mid-flight — for a bounded number of rounds and seconds, with a seeded xorshift RNG.
//!
//! Between rounds every worker waits at a barrier, so no `projectfile` process runs: there the test
//! checks that no update was lost (the live leases `status` reports are exactly the ones the
//! workers hold, and the block is present while one is held) and makes a user edit (a line
//! prepended at the top of AGENTS.md, with a plain non-atomic write, as a user would; at a
//! quiescent point, because a concurrent atomic rewrite by a session would race any editor).
//!
//! At the end every worker releases or abandons what it holds, `strip-stale` cleans the abandoned
//! leases, and the workspace must be the original plus the user's edits, byte for byte, with no
//! temporary files, and `status` must show no lease.
//!
//! Settings: `PROJECTFILE_TORTURE_PROCS` (default 16), `PROJECTFILE_TORTURE_SECONDS` (default 3),
//! `PROJECTFILE_TORTURE_SEED` (default fixed; printed so a failure can be replayed). The bigger
//! setting runs with `cargo xtask torture --procs 64 --seconds 30`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

use serde_json::Value;
use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_projectfile");
const ORIGINAL: &[u8] = b"# Team rules\r\nUse tabs.\r\nno final newline";
/// Most rounds, whatever the time budget says.
const MAX_ROUNDS: u64 = 400;
/// Operations each worker makes per round.
const OPS_PER_ROUND: usize = 3;
/// A process that takes longer than this is hung: the test fails instead of waiting forever.
const HANG: Duration = Duration::from_secs(120);

/// xorshift64*: tiny, seeded, good enough to pick operations.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // Never zero; spread nearby seeds apart.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Ws {
    ws: PathBuf,
    state: PathBuf,
}

impl Ws {
    fn cmd(&self) -> Command {
        let mut c = Command::new(BIN);
        c.env("PROJECTFILE_STATE_DIR", &self.state)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = wait_output(self.cmd().args(args).arg("--json").spawn().unwrap());
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn agents(&self) -> Vec<u8> {
        std::fs::read(self.ws.join("AGENTS.md")).unwrap()
    }
}

/// Waits for a child, failing the test if it hangs.
fn wait_output(child: Child) -> Output {
    let pid = child.id();
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            while !done.load(Ordering::SeqCst) {
                if start.elapsed() > HANG {
                    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                    return true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            false
        })
    };
    let out = child.wait_with_output().unwrap();
    done.store(true, Ordering::SeqCst);
    assert!(!watchdog.join().unwrap(), "process {pid} hung for {HANG:?}");
    out
}

fn kill9(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn sleeper() -> Child {
    Command::new("sleep")
        .arg("600")
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

/// One lease a worker holds: its holder process and token.
struct Held {
    holder: Child,
    token: String,
}

#[derive(Default)]
struct Counts {
    acquired: AtomicU64,
    released: AtomicU64,
    holders_killed: AtomicU64,
    runs: AtomicU64,
    runs_killed: AtomicU64,
    acquires_killed: AtomicU64,
}

struct Shared {
    ws: Ws,
    /// Tokens of leases whose holders live and that no one released.
    live: Mutex<BTreeSet<String>>,
    counts: Counts,
}

fn acquire(shared: &Shared, holder: &Child, prompt: &str) -> String {
    let ws = shared.ws.ws.to_str().unwrap();
    let pid = holder.id().to_string();
    let v = shared.ws.json(&[
        "acquire",
        "--provider",
        "codex",
        "--workspace",
        ws,
        "--prompt",
        prompt,
        "--holder-pid",
        &pid,
    ]);
    v["token"].as_str().unwrap().to_string()
}

/// One operation, picked at random.
fn step(shared: &Shared, rng: &mut Rng, held: &mut Vec<Held>, worker: usize, n: u64) {
    let ws = shared.ws.ws.to_str().unwrap();
    let prompt = format!("worker {worker} op {n}: keep answers short.");
    match rng.below(100) {
        // Acquire, held by a fresh `sleep`.
        0..=29 => {
            let holder = sleeper();
            let token = acquire(shared, &holder, &prompt);
            shared.live.lock().unwrap().insert(token.clone());
            held.push(Held { holder, token });
            shared.counts.acquired.fetch_add(1, Ordering::Relaxed);
        }
        // Release one held lease; it must still be there (nothing may have lost it).
        30..=54 => {
            if held.is_empty() {
                return;
            }
            let mut h = held.swap_remove(rng.below(held.len() as u64) as usize);
            let v = shared.ws.json(&["release", "--token", &h.token]);
            assert_eq!(
                v["released"], true,
                "a live lease was lost before its release: {v}"
            );
            shared.live.lock().unwrap().remove(&h.token);
            kill9(&mut h.holder);
            shared.counts.released.fetch_add(1, Ordering::Relaxed);
        }
        // The host dies: SIGKILL a holder; its lease goes stale.
        55..=64 => {
            if held.is_empty() {
                return;
            }
            let mut h = held.swap_remove(rng.below(held.len() as u64) as usize);
            shared.live.lock().unwrap().remove(&h.token);
            kill9(&mut h.holder);
            shared.counts.holders_killed.fetch_add(1, Ordering::Relaxed);
        }
        // `projectfile run` to completion.
        65..=79 => {
            let ms = rng.below(30);
            let out = wait_output(
                shared
                    .ws
                    .cmd()
                    .args(["run", "--provider", "codex", "--workspace", ws, "--prompt"])
                    .arg(&prompt)
                    .args(["--", "sh", "-c"])
                    .arg(format!(
                        "grep -q 'BEGIN agentworks-session-instructions' AGENTS.md && sleep 0.0{ms:02}"
                    ))
                    .spawn()
                    .unwrap(),
            );
            assert!(
                out.status.success(),
                "run failed ({:?}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            shared.counts.runs.fetch_add(1, Ordering::Relaxed);
        }
        // `projectfile run` and its command, SIGKILLed together mid-flight.
        80..=89 => {
            let mut child = shared
                .ws
                .cmd()
                .args(["run", "--provider", "codex", "--workspace", ws, "--prompt"])
                .arg(&prompt)
                .args(["--", "sleep", "5"])
                .process_group(0)
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(rng.below(40)));
            let group = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            let _ = child.wait();
            shared.counts.runs_killed.fetch_add(1, Ordering::Relaxed);
        }
        // `projectfile acquire` SIGKILLed mid-flight; its host dies with it.
        _ => {
            let mut holder = sleeper();
            let mut child = shared
                .ws
                .cmd()
                .args([
                    "acquire",
                    "--provider",
                    "codex",
                    "--workspace",
                    ws,
                    "--prompt",
                ])
                .arg(&prompt)
                .args(["--holder-pid", &holder.id().to_string(), "--json"])
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_micros(rng.below(15_000)));
            kill9(&mut child);
            kill9(&mut holder);
            shared
                .counts
                .acquires_killed
                .fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(temp_files(&path));
            } else if entry
                .file_name()
                .to_string_lossy()
                .contains(".projectfile-tmp.")
            {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn processes_killed_mid_flight_never_lose_a_byte_or_an_update() {
    let procs: usize = env_or("PROJECTFILE_TORTURE_PROCS", 16).max(1);
    let seconds: f64 = env_or("PROJECTFILE_TORTURE_SECONDS", 3.0);
    let seed: u64 = env_or("PROJECTFILE_TORTURE_SEED", 0x7072_6f76_6500_0007);
    eprintln!("torture: {procs} workers, {seconds} s, seed {seed}");

    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("AGENTS.md"), ORIGINAL).unwrap();
    std::fs::write(ws.join("src/lib.rs"), b"pub fn f() {}\n").unwrap();
    let shared = Arc::new(Shared {
        ws: Ws {
            ws,
            state: base.join("state"),
        },
        live: Mutex::new(BTreeSet::new()),
        counts: Counts::default(),
    });

    let barrier = Arc::new(Barrier::new(procs + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..procs)
        .map(|worker| {
            let (shared, barrier, stop) = (shared.clone(), barrier.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut rng = Rng::new(seed ^ (worker as u64 + 1));
                let mut held: Vec<Held> = Vec::new();
                let mut n = 0;
                loop {
                    barrier.wait(); // round starts
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    for _ in 0..OPS_PER_ROUND {
                        step(&shared, &mut rng, &mut held, worker, n);
                        n += 1;
                    }
                    barrier.wait(); // round ends: quiescent
                }
                // The end: release about half, abandon the rest to strip-stale.
                for mut h in held {
                    if rng.below(2) == 0 {
                        let v = shared.ws.json(&["release", "--token", &h.token]);
                        assert_eq!(v["released"], true, "a live lease was lost: {v}");
                    }
                    shared.live.lock().unwrap().remove(&h.token);
                    kill9(&mut h.holder);
                }
            })
        })
        .collect();

    let start = Instant::now();
    let mut expected_prefix: Vec<u8> = Vec::new();
    let mut rounds = 0;
    let ws_path = shared.ws.ws.to_str().unwrap().to_string();
    while rounds < MAX_ROUNDS && start.elapsed().as_secs_f64() < seconds {
        barrier.wait(); // start the round
        barrier.wait(); // wait for its end
        rounds += 1;

        // Quiescent: nothing runs. No update was lost: the live leases are exactly ours.
        let live = shared.live.lock().unwrap().clone();
        let status = shared.ws.json(&["status", "--workspace", &ws_path]);
        let alive: BTreeSet<String> = status["leases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["liveness"]["state"] == "alive")
            .map(|l| l["token"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            alive, live,
            "round {rounds}: live leases differ from held ones"
        );
        let now = shared.ws.agents();
        let text = String::from_utf8_lossy(&now);
        if !live.is_empty() {
            assert!(
                text.contains("<!-- BEGIN agentworks-session-instructions created=false -->"),
                "round {rounds}: the block is missing while {} leases live",
                live.len()
            );
        }
        // The user edits the top of the file, under no lock, as an editor would.
        let line = format!("user edit {rounds}\n").into_bytes();
        let mut edited = line.clone();
        edited.extend_from_slice(&now);
        std::fs::write(shared.ws.ws.join("AGENTS.md"), &edited).unwrap();
        let mut prefix = line;
        prefix.extend_from_slice(&expected_prefix);
        expected_prefix = prefix;
    }
    stop.store(true, Ordering::SeqCst);
    barrier.wait();
    for w in workers {
        w.join().unwrap();
    }

    let report = shared.ws.json(&["strip-stale", "--workspace", &ws_path]);
    assert!(
        report["warnings"].as_array().unwrap().is_empty(),
        "strip-stale warned: {report}"
    );
    let mut expected = expected_prefix;
    expected.extend_from_slice(ORIGINAL);
    let got = shared.ws.agents();
    assert!(
        got == expected,
        "AGENTS.md is not the original plus the user's edits:\n got {:?}\nwant {:?}",
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&expected)
    );
    assert_eq!(
        std::fs::read(shared.ws.ws.join("src/lib.rs")).unwrap(),
        b"pub fn f() {}\n"
    );
    let names: BTreeSet<String> = std::fs::read_dir(&shared.ws.ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["AGENTS.md".to_string(), "src".to_string()]),
        "stray files in the workspace"
    );
    let status = shared.ws.json(&["status", "--workspace", &ws_path]);
    assert_eq!(status["leases"].as_array().unwrap().len(), 0, "{status}");
    assert_eq!(status["entries"].as_array().unwrap().len(), 0, "{status}");
    let temps = temp_files(&shared.ws.state);
    assert!(
        temps.is_empty(),
        "temporary files left in the state directory: {temps:?}"
    );

    let c = &shared.counts;
    eprintln!(
        "torture: {rounds} rounds in {:.1} s: {} acquired, {} released, {} holders killed, {} runs, {} runs killed, {} acquires killed, {} user edits; final AGENTS.md exact",
        start.elapsed().as_secs_f64(),
        c.acquired.load(Ordering::Relaxed),
        c.released.load(Ordering::Relaxed),
        c.holders_killed.load(Ordering::Relaxed),
        c.runs.load(Ordering::Relaxed),
        c.runs_killed.load(Ordering::Relaxed),
        c.acquires_killed.load(Ordering::Relaxed),
        rounds,
    );
    assert!(rounds > 0);
}
