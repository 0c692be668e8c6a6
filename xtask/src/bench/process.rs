//! Measuring one process as a user sees it: spawn to exit, with its peak memory from `wait4`, and
//! the pairs the process-level benchmarks time (projectfile's `acquire` + `release`, the minimal
//! program's `add` + `remove`), run interleaved iteration by iteration.

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one measured process did.
pub struct Measured {
    /// Its exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Spawn to reaped.
    pub wall: Duration,
    /// Peak resident set size in KiB.
    pub max_rss_kib: u64,
}

impl Measured {
    /// Whether it exited 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
}

/// Runs `cmd` to completion, timing it from spawn to exit and reading its peak memory from
/// `wait4` (the rusage of that one child).
#[allow(clippy::zombie_processes)] // reaped by wait4, which std cannot do with rusage
pub fn measured(cmd: &mut Command) -> Result<Measured> {
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
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        stdout,
        stderr,
        wall,
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
    })
}

/// The JSON a successful process printed.
pub fn json_of(m: &Measured, what: &str) -> Result<Value> {
    if !m.ok() {
        bail!(
            "{what} failed ({:?}): {}",
            m.code,
            String::from_utf8_lossy(&m.stderr).trim()
        );
    }
    serde_json::from_slice(&m.stdout).with_context(|| format!("{what}: parse JSON"))
}

/// The median of `v` in milliseconds (0 when empty).
pub fn median_ms(v: &mut [Duration]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

/// The programs the process-level benchmarks run.
#[derive(Clone)]
pub struct Programs {
    /// The release `projectfile` binary.
    pub projectfile: PathBuf,
    /// The minimal C program (`xtask/bench/minimal.c`, built into the target directory).
    pub minimal: PathBuf,
    /// The launcher that measures a process's own peak memory (`xtask/bench/peak.c`).
    pub launcher: PathBuf,
    /// The holder of every lease the benchmark takes: this process.
    pub holder_pid: String,
    /// With `Some(figure)`, every process runs under the launcher, which writes its peak memory
    /// to `figure`: [`Programs::for_memory`].
    pub peak: Option<PathBuf>,
}

impl Programs {
    /// The same programs, each process run under the `peak` launcher so that its peak memory is
    /// its own: `wait4` on a child of this benchmark would report at least the benchmark's own
    /// memory (the kernel starts a child's figure at the size of the image its exec replaced).
    /// For memory only: the launcher's fork is in its wall time.
    pub fn for_memory(&self, figure: &Path) -> Programs {
        Programs {
            peak: Some(figure.to_path_buf()),
            ..self.clone()
        }
    }

    /// A command running `program`, under the launcher when measuring memory.
    pub fn command(&self, program: &Path) -> Command {
        match &self.peak {
            None => Command::new(program),
            Some(figure) => {
                let mut cmd = Command::new(&self.launcher);
                cmd.arg(figure).arg(program);
                cmd
            }
        }
    }

    /// Runs `cmd` (from [`Programs::command`]) to completion; its peak memory is the launcher's
    /// figure when measuring memory.
    pub fn run(&self, cmd: &mut Command) -> Result<Measured> {
        let mut m = measured(cmd)?;
        if let Some(figure) = &self.peak {
            let text = std::fs::read_to_string(figure)
                .with_context(|| format!("read {}", figure.display()))?;
            m.max_rss_kib = text.trim().parse().context("the launcher's figure")?;
        }
        Ok(m)
    }
}

/// One workspace as projectfile sees it: the folder and the state directory.
#[derive(Clone)]
pub struct Workspace {
    pub dir: PathBuf,
    pub state: PathBuf,
}

impl Workspace {
    /// `<base>/ws` and `<base>/state`, created.
    pub fn create(base: &Path) -> Result<Workspace> {
        let ws = Workspace {
            dir: base.join("ws"),
            state: base.join("state"),
        };
        std::fs::create_dir_all(&ws.dir).with_context(|| format!("create {}", ws.dir.display()))?;
        Ok(ws)
    }

    /// `projectfile --state-dir <state>`: the state directory by argument, as the minimal
    /// program is given its files. Setting it in the environment instead would make `Command`
    /// copy this process's whole environment at every spawn, a cost of the benchmark's own
    /// that would be timed as projectfile's.
    pub fn command(&self, programs: &Programs) -> Command {
        let mut cmd = programs.command(&programs.projectfile);
        cmd.arg("--state-dir").arg(&self.state);
        cmd
    }

    /// `projectfile acquire --json` with `holder_pid` as holder; the measured process and its token.
    pub fn acquire(
        &self,
        programs: &Programs,
        provider: &str,
        prompt: &str,
        holder_pid: &str,
    ) -> Result<(Measured, String)> {
        let m = programs.run(
            self.command(programs)
                .args(["acquire", "--json", "--provider", provider, "--workspace"])
                .arg(&self.dir)
                .args(["--prompt", prompt, "--holder-pid", holder_pid]),
        )?;
        let token = json_of(&m, "projectfile acquire")?["token"]
            .as_str()
            .context("acquire: no token")?
            .to_string();
        Ok((m, token))
    }

    /// `projectfile release --json`: the measured process and whether the lease was found.
    pub fn release(&self, programs: &Programs, token: &str) -> Result<(Measured, bool)> {
        let m = programs.run(
            self.command(programs)
                .args(["release", "--json", "--token", token]),
        )?;
        let released = json_of(&m, "projectfile release")?["released"] == true;
        Ok((m, released))
    }

    /// How many leases `projectfile status` reports.
    pub fn lease_count(&self, programs: &Programs) -> Result<usize> {
        let m = programs.run(
            self.command(programs)
                .args(["status", "--json", "--workspace"])
                .arg(&self.dir),
        )?;
        Ok(json_of(&m, "projectfile status")?["leases"]
            .as_array()
            .map_or(0, Vec::len))
    }
}

/// Two processes timed together: the first (acquire, add) and the second (release, remove).
#[derive(Clone, Copy, Debug)]
pub struct Pair {
    pub wall: Duration,
    pub first_rss_kib: u64,
    pub second_rss_kib: u64,
}

impl Pair {
    fn of(first: &Measured, second: &Measured) -> Pair {
        Pair {
            wall: first.wall + second.wall,
            first_rss_kib: first.max_rss_kib,
            second_rss_kib: second.max_rss_kib,
        }
    }
}

/// projectfile's pair: `acquire` (Codex, this process as holder) then `release`. A release that
/// does not find its lease is an error: the benchmark measures correct runs only.
pub fn ours(programs: &Programs, ws: &Workspace, prompt: &str) -> Result<Pair> {
    ours_as(programs, ws, "codex", prompt)
}

/// [`ours`] for a session of `provider`.
pub fn ours_as(programs: &Programs, ws: &Workspace, provider: &str, prompt: &str) -> Result<Pair> {
    let (acquire, token) = ws.acquire(programs, provider, prompt, &programs.holder_pid)?;
    let (release, released) = ws.release(programs, &token)?;
    if !released {
        bail!("release of {token} did not find its lease (a lost update)");
    }
    Ok(Pair::of(&acquire, &release))
}

/// The minimal program's pair: `add` then `remove` on `file`, under an exclusive flock of `lock`
/// when given. With `concurrent`, a `remove` that finds no block (another process took it out)
/// counts as done.
pub fn minimal(
    programs: &Programs,
    file: &Path,
    text: &str,
    lock: Option<&Path>,
    concurrent: bool,
) -> Result<Pair> {
    let run = |args: &[&std::ffi::OsStr]| -> Result<Measured> {
        let mut cmd = programs.command(&programs.minimal);
        if let Some(lock) = lock {
            cmd.arg("-l").arg(lock);
        }
        programs.run(cmd.args(args))
    };
    let add = run(&["add".as_ref(), file.as_os_str(), text.as_ref()])?;
    let remove = run(&["remove".as_ref(), file.as_os_str()])?;
    for (m, what) in [(&add, "add"), (&remove, "remove")] {
        let nothing_to_remove = concurrent && what == "remove" && m.code == Some(3);
        if !m.ok() && !nothing_to_remove {
            bail!(
                "minimal {what} failed ({:?}): {}",
                m.code,
                String::from_utf8_lossy(&m.stderr).trim()
            );
        }
    }
    Ok(Pair::of(&add, &remove))
}

/// Runs every side once per iteration, the order rotating each iteration so that drift (page
/// cache, other load on the machine) hits every side alike. `samples[side][iteration]`.
pub fn interleaved(
    iterations: usize,
    sides: &mut [&mut dyn FnMut() -> Result<Pair>],
) -> Result<Vec<Vec<Pair>>> {
    let n = sides.len();
    let mut samples: Vec<Vec<Pair>> = vec![Vec::with_capacity(iterations); n];
    for i in 0..iterations {
        for k in 0..n {
            let side = (i + k) % n;
            samples[side].push(sides[side]()?);
        }
    }
    Ok(samples)
}

/// Median wall time of one side's samples, and the peak memory of its two processes measured
/// apart (`memory`, run under the launcher).
pub fn summary(samples: &[Pair], memory: &Pair) -> Value {
    let mut walls: Vec<Duration> = samples.iter().map(|p| p.wall).collect();
    json!({
        "iterations": samples.len(),
        "median_ms": median_ms(&mut walls),
        "fastest_ms": walls.first().map_or(0.0, |d| d.as_secs_f64() * 1e3),
        "first_peak_rss_kib": memory.first_rss_kib,
        "second_peak_rss_kib": memory.second_rss_kib,
    })
}

/// `ours / baseline` of two summaries' medians.
pub fn ratio(ours: &Value, baseline: &Value) -> f64 {
    let (o, b) = (
        ours["median_ms"].as_f64().unwrap_or(0.0),
        baseline["median_ms"].as_f64().unwrap_or(0.0),
    );
    if b > 0.0 { o / b } else { 0.0 }
}
