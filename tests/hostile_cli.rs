//! Hostile inputs through the `projectfile` binary, where a host meets them: a 100 MiB AGENTS.md
//! (round trip byte for byte, with the peak memory of each process measured by `wait4`), a full
//! disk (exit 1 and one `error: <path>: <reason>` line, JSON error object, nothing left), and
//! malformed markers (exit 1 naming file and line). Each test's name states the outcome.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod support;

use support::Sandbox;

struct Measured {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// Peak resident set size of the process, in KiB (`ru_maxrss`).
    max_rss_kib: i64,
}

/// Runs `cmd` to its end and reads its own peak memory from `wait4`'s rusage.
#[allow(clippy::zombie_processes)] // reaped by wait4, which std cannot do with rusage
fn measured(cmd: &mut Command) -> Measured {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        out.read_to_end(&mut v).unwrap();
        v
    });
    let mut stderr = Vec::new();
    err.read_to_end(&mut stderr).unwrap();
    let stdout = reader.join().unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter; the pid is our own unreaped child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4 failed");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    Measured {
        code,
        stdout,
        stderr,
        max_rss_kib: usage.ru_maxrss,
    }
}

/// A sandbox whose commands are measured.
struct Env(Sandbox);

impl std::ops::Deref for Env {
    type Target = Sandbox;
    fn deref(&self) -> &Sandbox {
        &self.0
    }
}

impl Env {
    fn new() -> Env {
        Env(Sandbox::new())
    }

    fn in_ws(ws: &Path, state: &Path) -> Env {
        Env(Sandbox::at(ws, state))
    }

    fn acquire(&self, prompt: &str) -> Measured {
        measured(
            self.cmd()
                .args(["acquire", "--provider", "codex", "--json", "--workspace"])
                .arg(&self.ws)
                .args(["--prompt", prompt, "--holder-pid"])
                .arg(std::process::id().to_string()),
        )
    }

    fn release(&self, token: &str) -> Measured {
        measured(self.cmd().args(["release", "--json", "--token", token]))
    }
}

fn token(m: &Measured) -> String {
    assert_eq!(m.code, 0, "{}", String::from_utf8_lossy(&m.stderr));
    let v: Value = serde_json::from_slice(&m.stdout).unwrap();
    v["token"].as_str().unwrap().to_string()
}

#[test]
fn a_100_mib_agents_md_round_trips_byte_for_byte_in_bounded_memory() {
    const SIZE: usize = 100 << 20;
    let env = Env::new();
    let mut original = Vec::with_capacity(SIZE + 128);
    let mut i = 0u64;
    while original.len() < SIZE {
        original.extend_from_slice(
            format!("line {i}: a very large rules file, kept byte for byte\r\n").as_bytes(),
        );
        i += 1;
    }
    original.extend_from_slice(b"no final newline");
    std::fs::write(env.ws.join("AGENTS.md"), &original).unwrap();

    let acquired = env.acquire("Session text on a huge file.");
    let t = token(&acquired);
    let during = std::fs::read(env.ws.join("AGENTS.md")).unwrap();
    assert_eq!(
        &during[..original.len()],
        &original[..],
        "user bytes changed"
    );
    assert!(String::from_utf8_lossy(&during[original.len()..]).contains("Session text"));
    drop(during);
    let released = env.release(&t);
    assert_eq!(
        released.code,
        0,
        "{}",
        String::from_utf8_lossy(&released.stderr)
    );
    let after = std::fs::read(env.ws.join("AGENTS.md")).unwrap();
    assert!(after == original, "the 100 MiB file did not round-trip");

    let size_kib = (SIZE / 1024) as i64;
    eprintln!(
        "100 MiB AGENTS.md: acquire peak RSS {} MiB, release peak RSS {} MiB ({:.2}x and {:.2}x the file)",
        acquired.max_rss_kib / 1024,
        released.max_rss_kib / 1024,
        acquired.max_rss_kib as f64 / size_kib as f64,
        released.max_rss_kib as f64 / size_kib as f64,
    );
    // Reading the file and building the new bytes needs about two copies; allow some slack.
    for (what, m) in [("acquire", &acquired), ("release", &released)] {
        assert!(
            m.max_rss_kib < 4 * size_kib,
            "{what} peaked at {} KiB for a {size_kib} KiB file",
            m.max_rss_kib
        );
    }
}

/// Writes a `size`-byte AGENTS.md of CRLF lines without holding it (this process's own memory
/// is where a child's `ru_maxrss` starts).
fn write_large_agents(path: &Path, size: usize) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let (mut written, mut i) = (0, 0u64);
    while written < size {
        let line = format!("line {i}: a large rules file, kept byte for byte\r\n");
        out.write_all(line.as_bytes()).unwrap();
        written += line.len();
        i += 1;
    }
    out.flush().unwrap();
}

/// SHA-256-free fingerprint of a file read in blocks: its length and a running FNV-1a hash.
fn fingerprint(path: &Path) -> (u64, u64) {
    let mut file = std::fs::File::open(path).unwrap();
    let (mut len, mut hash) = (0u64, 0xcbf2_9ce4_8422_2325u64);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).unwrap();
        if n == 0 {
            return (len, hash);
        }
        len += n as u64;
        for b in &buf[..n] {
            hash = (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

#[test]
fn peak_memory_does_not_grow_with_the_file() {
    // Peak memory of acquire and release, per file size; a figure starts at this process's own
    // memory, which stays the same across the runs (nothing large is held here).
    let mut peaks = Vec::new();
    for size in [1 << 20, 64 << 20] {
        let env = Env::new();
        let path = env.ws.join("AGENTS.md");
        write_large_agents(&path, size);
        let before = fingerprint(&path);
        let acquired = env.acquire("Session text on a large file.");
        let t = token(&acquired);
        let released = env.release(&t);
        assert_eq!(
            released.code,
            0,
            "{}",
            String::from_utf8_lossy(&released.stderr)
        );
        assert_eq!(fingerprint(&path), before, "not byte-exact");
        peaks.push((size, acquired.max_rss_kib, released.max_rss_kib));
    }
    let floor = measured(Command::new(support::BIN).args(["providers", "--json"])).max_rss_kib;
    eprintln!(
        "peak RSS in KiB (size, acquire, release): {peaks:?}; a process doing nothing: {floor}"
    );
    let (small, large) = (peaks[0], peaks[1]);
    for (what, a, b) in [("acquire", small.1, large.1), ("release", small.2, large.2)] {
        assert!(
            b - a < 4 * 1024,
            "{what}: {a} KiB for 1 MiB, {b} KiB for 64 MiB: it grows with the file"
        );
        assert!(
            b < floor + 16 * 1024,
            "{what}: {b} KiB, more than 16 MiB over {floor} KiB"
        );
    }
}

#[test]
fn a_sparse_100_mib_agents_md_of_nul_bytes_round_trips() {
    let env = Env::new();
    let path = env.ws.join("AGENTS.md");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(100 << 20).unwrap();
    drop(f);
    let acquired = env.acquire("nul file");
    let t = token(&acquired);
    let released = env.release(&t);
    assert_eq!(released.code, 0);
    let after = std::fs::read(&path).unwrap();
    assert_eq!(after.len(), 100 << 20);
    assert!(after.iter().all(|b| *b == 0), "the NUL bytes changed");
    eprintln!(
        "sparse 100 MiB: acquire peak RSS {} MiB, release {} MiB",
        acquired.max_rss_kib / 1024,
        released.max_rss_kib / 1024
    );
}

#[test]
fn full_disk_exits_1_with_one_error_line_naming_the_file_and_leaves_nothing() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIP: not root, cannot mount a small tmpfs");
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let mount = base.path().join("small");
    std::fs::create_dir(&mount).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mount)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP: mount -t tmpfs is not permitted here");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mount.clone());
    let ws = mount.join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("AGENTS.md"), b"user\n").unwrap();
    {
        use std::io::Write;
        let mut f = std::fs::File::create(mount.join("filler")).unwrap();
        while f.write_all(&[0u8; 4096]).is_ok() {}
    }
    let env = Env::in_ws(&ws, &base.path().join("state"));
    let m = env.acquire("x");
    assert_eq!(m.code, 1);
    let stderr = String::from_utf8_lossy(&m.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains("AGENTS.md"), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    let v: Value = serde_json::from_slice(&m.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "io");
    assert_eq!(std::fs::read(ws.join("AGENTS.md")).unwrap(), b"user\n");
    let names: Vec<String> = std::fs::read_dir(&ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["AGENTS.md".to_string()],
        "leftovers in the workspace"
    );
    let status = measured(env.cmd().args(["status", "--json", "--workspace"]).arg(&ws));
    let v: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(v["leases"].as_array().unwrap().is_empty(), "{v}");
}

#[test]
fn malformed_markers_exit_1_naming_file_and_line_for_every_hostile_shape() {
    let b = "<!-- BEGIN agentworks-session-instructions created=false -->";
    let e = "<!-- END agentworks-session-instructions -->";
    let cases: Vec<(&str, String, usize)> = vec![
        (
            "unterminated, user text below",
            format!("top\n{b}\nx\nuser below\n"),
            2,
        ),
        ("two begins one end", format!("{b}\n{b}\nx\n{e}\n"), 2),
        ("end before begin", format!("a\n{e}\n{b}\nx\n{e}\n"), 2),
        ("trailing spaces", format!("a\n{b}   \nx\n{e}\n"), 2),
        ("inside a fence", format!("```\n{b}\n```\n"), 2),
    ];
    for (label, text, line) in cases {
        let env = Env::new();
        std::fs::write(env.ws.join("AGENTS.md"), &text).unwrap();
        let m = env.acquire("x");
        assert_eq!(m.code, 1, "{label}");
        let stderr = String::from_utf8_lossy(&m.stderr);
        assert!(
            stderr.contains(&format!("AGENTS.md:{line}:")),
            "{label}: {stderr}"
        );
        let v: Value = serde_json::from_slice(&m.stdout).unwrap();
        assert_eq!(v["error"]["kind"], "malformed_block", "{label}");
        assert_eq!(
            std::fs::read(env.ws.join("AGENTS.md")).unwrap(),
            text.as_bytes(),
            "{label}"
        );
    }
}

/// An input that never ends (`/dev/zero` as the prompt file, a command, hooks) is refused once it
/// passes the input limit, in bounded memory (the command runs under a 256 MiB address-space
/// limit, which reading it whole would pass), with one JSON error object naming it; nothing is
/// written in the workspace.
#[test]
fn an_endless_input_is_refused_in_bounded_memory() {
    let sb = Sandbox::new();
    let cases: [&[&str]; 3] = [
        &["--provider", "codex", "--prompt-file", "/dev/zero"],
        &[
            "--provider",
            "claude",
            "--prompt",
            "x",
            "--command",
            "ship=/dev/zero",
        ],
        &[
            "--provider",
            "gemini",
            "--prompt",
            "x",
            "--hooks",
            "/dev/zero",
        ],
    ];
    for args in cases {
        let m = measured(
            Command::new("sh")
                .args(["-c", "ulimit -v 262144 && exec \"$0\" \"$@\"", support::BIN])
                .env("PROJECTFILE_STATE_DIR", &sb.state)
                .args(["acquire", "--json", "--workspace"])
                .arg(&sb.ws)
                .args(args),
        );
        assert_eq!(
            m.code,
            1,
            "{args:?}: {}",
            String::from_utf8_lossy(&m.stderr)
        );
        let error: Value = serde_json::from_slice(&m.stdout).unwrap();
        assert_eq!(error["error"]["path"], "/dev/zero", "{error}");
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains("larger than 16 MiB"),
            "{error}"
        );
        assert_eq!(std::fs::read_dir(&sb.ws).unwrap().count(), 0, "{args:?}");
    }
}
