//! What the black-box tests of the `projectfile` binary share: a temporary workspace and state
//! directory, and the binary pointed at them. Each test crate uses part of it.
#![allow(dead_code, clippy::unwrap_used, clippy::disallowed_methods)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_projectfile");

/// A temporary directory holding an empty workspace `ws` and a state directory `state` (not yet
/// created: the binary makes it).
pub struct Sandbox {
    _dir: tempfile::TempDir,
    /// The canonical temporary directory.
    pub base: PathBuf,
    /// The workspace.
    pub ws: PathBuf,
    /// The state directory.
    pub state: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        std::fs::create_dir(&ws).unwrap();
        Sandbox {
            state: base.join("state"),
            ws,
            base,
            _dir: dir,
        }
    }

    /// A sandbox for an existing workspace and state directory (its own temporary directory
    /// stays empty).
    pub fn at(ws: &Path, state: &Path) -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        Sandbox {
            base: dir.path().to_path_buf(),
            ws: ws.to_path_buf(),
            state: state.to_path_buf(),
            _dir: dir,
        }
    }

    /// The binary with `PROJECTFILE_STATE_DIR` set to the state directory.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(BIN);
        c.env("PROJECTFILE_STATE_DIR", &self.state);
        c
    }

    /// `VERB --provider P --workspace <ws> --prompt TEXT` (`acquire` or `run`), to extend.
    pub fn session(&self, verb: &str, provider: &str, prompt: &str) -> Command {
        let mut c = self.cmd();
        c.args([verb, "--provider", provider, "--workspace"])
            .arg(&self.ws)
            .args(["--prompt", prompt]);
        c
    }

    /// Runs `args --json`, asserts success, and parses stdout.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd().args(args).arg("--json").output().unwrap();
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

impl Sandbox {
    /// `acquire --provider P --workspace WS --prompt PROMPT --holder-pid <this test>` then `extra`.
    pub fn acquire_command(&self, provider: &str, prompt: &str, extra: &[&str]) -> Command {
        let mut command = self.cmd();
        command
            .args(["acquire", "--provider", provider, "--workspace"])
            .arg(&self.ws)
            .args(["--prompt", prompt, "--holder-pid", &me()])
            .args(extra);
        command
    }

    /// [`Sandbox::acquire_command`] with `--json`: asserts success and parses the receipt.
    pub fn acquired(&self, provider: &str, prompt: &str, extra: &[&str]) -> Value {
        let out = self
            .acquire_command(provider, prompt, extra)
            .arg("--json")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{provider}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// The JSON a finished command printed on stdout; asserts it succeeded.
pub fn succeeded(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `command` to its end with `input` on its standard input.
pub fn output_with_stdin(mut command: Command, input: &str) -> std::process::Output {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// `--user`, `--project-id` and `--session-id` of the private runtime the tests link.
pub const RUNTIME_ID: [&str; 6] = [
    "--user",
    "u1",
    "--project-id",
    "p1",
    "--session-id",
    "work:project:42",
];
/// Every path under `root` with its bytes (or link target) and mode, never following links.
pub fn tree(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let bytes = if meta.file_type().is_symlink() {
                std::fs::read_link(&path)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if meta.is_dir() {
                walk(root, &path, out);
                b"<dir>".to_vec()
            } else {
                std::fs::read(&path).unwrap()
            };
            out.insert(rel, (bytes, mode));
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// This test process's pid, as a `--holder-pid` value (it lives as long as the test).
pub fn me() -> String {
    std::process::id().to_string()
}
