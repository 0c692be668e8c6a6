//! Black-box tests of identity over time, through the binary: a workspace folder renamed or
//! moved between sessions or while one runs is still cleaned; a folder deleted and created again
//! (until the file system gives it the same inode) is a new workspace that the old one's sessions
//! never touch; a holder in another PID namespace is judged where it lives and never stripped
//! from where it cannot be; the user's final newline survives the deletion of our blank line;
//! extended attributes and a POSIX ACL survive a session on ext4 and on tmpfs; and what a session
//! created is gone after its state directory is lost.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use support::{BIN, Sandbox, me, tree};

const USER: &[u8] = b"# mine\n";

fn ok(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// `run --provider P --workspace WS --prompt TEXT -- sh -c SCRIPT`.
fn run(sb: &Sandbox, ws: &Path, provider: &str, prompt: &str, script: &str) -> Output {
    sb.cmd()
        .args(["run", "--provider", provider, "--workspace"])
        .arg(ws)
        .args(["--prompt", prompt, "--", "sh", "-c", script])
        .output()
        .unwrap()
}

fn acquire(sb: &Sandbox, ws: &Path, prompt: &str, holder: &str) -> String {
    let out = sb
        .cmd()
        .args(["acquire", "--provider", "codex", "--workspace"])
        .arg(ws)
        .args(["--prompt", prompt, "--holder-pid", holder, "--json"])
        .output()
        .unwrap();
    ok(&out)["token"].as_str().unwrap().to_string()
}

fn release(sb: &Sandbox, token: &str, workspace: Option<&Path>) -> Output {
    let mut command = sb.cmd();
    command.args(["release", "--json", "--token", token]);
    if let Some(ws) = workspace {
        command.arg("--workspace").arg(ws);
    }
    command.output().unwrap()
}

fn agents(ws: &Path) -> Vec<u8> {
    std::fs::read(ws.join("AGENTS.md")).unwrap()
}

/// A process that holds leases as long as the test wants (killed on drop).
struct Sleeper(Child);

impl Sleeper {
    fn spawn() -> Sleeper {
        Sleeper(Command::new("sleep").arg("600").spawn().unwrap())
    }
    fn pid(&self) -> String {
        self.0.id().to_string()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_folder_renamed_between_sessions_is_cleaned_by_the_next() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    ok(&run(&sb, &sb.ws, "codex", "A", "true"));
    let renamed = sb.base.join("renamed");
    std::fs::rename(&sb.ws, &renamed).unwrap();
    let out = run(&sb, &renamed, "codex", "B", "grep -q '^B$' AGENTS.md");
    ok(&out);
    assert_eq!(
        agents(&renamed),
        USER,
        "every later session cleans its block"
    );
}

#[test]
fn a_folder_renamed_while_run_runs_is_cleaned_where_it_went() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    let script = "grep -q '^inside$' AGENTS.md && mv \"$PWD\" \"$PWD/../moved-away\"";
    ok(&run(&sb, &sb.ws, "codex", "inside", script));
    assert_eq!(agents(&sb.base.join("moved-away")), USER);
    // Far away too: run keeps a handle on the folder.
    let far = sb.base.join("far");
    std::fs::create_dir(&far).unwrap();
    let ws = sb.base.join("moved-away");
    let script = format!("mv \"$PWD\" {}", far.join("deeper").display());
    ok(&run(&sb, &ws, "codex", "again", &script));
    assert_eq!(agents(&far.join("deeper")), USER);
}

#[test]
fn a_folder_deleted_while_run_runs_is_no_error() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    let out = run(&sb, &sb.ws, "pi", "gone soon", "cd / && rm -rf \"$OLDPWD\"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!sb.ws.exists());
}

#[test]
fn a_release_by_token_finds_a_renamed_folder_and_says_when_it_cannot() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    let holder = me();
    // Renamed beside its old name: found there.
    let token = acquire(&sb, &sb.ws, "one", &holder);
    let beside = sb.base.join("beside");
    std::fs::rename(&sb.ws, &beside).unwrap();
    let receipt = ok(&release(&sb, &token, None));
    assert_eq!(receipt["released"], true, "{receipt}");
    assert_eq!(agents(&beside), USER);
    // Released again after one more rename: nothing released, and nothing says so.
    let again = sb.base.join("again");
    std::fs::rename(&beside, &again).unwrap();
    let receipt = ok(&release(&sb, &token, None));
    assert_eq!(receipt["released"], false, "{receipt}");
    assert_eq!(receipt["warnings"], serde_json::json!([]), "{receipt}");
    std::fs::rename(&again, &beside).unwrap();

    // Moved into another folder: not found; said so, with what to do; nothing changed.
    let token = acquire(&sb, &beside, "two", &holder);
    let away = sb.base.join("elsewhere");
    std::fs::create_dir(&away).unwrap();
    let moved = away.join("project");
    std::fs::rename(&beside, &moved).unwrap();
    let during = agents(&moved);
    let out = release(&sb, &token, None);
    assert_eq!(out.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["error"]["kind"], "workspace_lost", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(beside.to_str().unwrap()) && message.contains("--workspace"),
        "{message}"
    );
    assert_eq!(agents(&moved), during, "nothing was changed");
    // The lease is still recorded: the folder's status lists it.
    let status = ok(&sb
        .cmd()
        .args(["status", "--json", "--workspace"])
        .arg(&moved)
        .output()
        .unwrap());
    assert_eq!(status["leases"][0]["token"], token.as_str(), "{status}");
    // Told where it is now, the release happens there.
    let receipt = ok(&release(&sb, &token, Some(&moved)));
    assert_eq!(receipt["released"], true);
    assert_eq!(agents(&moved), USER);
    // Another folder given as its place is refused, and touched nowhere.
    let token = acquire(&sb, &moved, "three", &holder);
    let other = sb.base.join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("AGENTS.md"), b"# other\n").unwrap();
    let out = release(&sb, &token, Some(&other));
    assert_eq!(
        out.status.code(),
        Some(0),
        "the folder is still where it was"
    );
    assert_eq!(agents(&moved), USER);
    assert_eq!(agents(&other), b"# other\n");
}

#[test]
fn a_folder_created_again_at_a_path_is_another_workspace() {
    let sb = Sandbox::new();
    let sleeper = Sleeper::spawn();
    // Deleted and made again until the file system hands out the same inode (ext4 often does
    // at once); whether or not it does, the new folder is another workspace.
    let mut tries = 0;
    let (token, same_inode) = loop {
        tries += 1;
        std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
        let token = acquire(&sb, &sb.ws, "the old checkout", &sleeper.pid());
        let old = std::fs::metadata(&sb.ws).unwrap().ino();
        std::fs::remove_dir_all(&sb.ws).unwrap();
        std::fs::create_dir(&sb.ws).unwrap();
        let same = std::fs::metadata(&sb.ws).unwrap().ino() == old;
        if same || tries == 200 {
            break (token, same);
        }
    };
    eprintln!("same inode after {tries} tries: {same_inode}");
    let fresh = b"# a fresh clone\n";
    std::fs::write(sb.ws.join("AGENTS.md"), fresh).unwrap();
    // The old checkout's session never touches the new folder.
    let out = release(&sb, &token, None);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error["error"]["kind"], "workspace_lost");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another one"),
        "{error}"
    );
    assert_eq!(agents(&sb.ws), fresh);
    // Its status says the path named another folder, whose record is not applied here.
    let status = ok(&sb
        .cmd()
        .args(["status", "--json", "--workspace"])
        .arg(&sb.ws)
        .output()
        .unwrap());
    assert!(status["leases"].as_array().unwrap().is_empty(), "{status}");
    assert!(
        status["warnings"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("named another folder before")),
        "{status}"
    );
    // A session of the new folder gets its own text only, and gives nothing of the old back.
    let started = ok(&sb
        .cmd()
        .args(["acquire", "--provider", "codex", "--workspace"])
        .arg(&sb.ws)
        .args([
            "--prompt",
            "the new checkout",
            "--holder-pid",
            &me(),
            "--json",
        ])
        .output()
        .unwrap());
    let new = started["token"].as_str().unwrap().to_string();
    assert!(
        started["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["message"]
                .as_str()
                .unwrap()
                .contains("named another folder")),
        "{started}"
    );
    let during = String::from_utf8(agents(&sb.ws)).unwrap();
    assert!(!during.contains("the old checkout"), "{during}");
    ok(&release(&sb, &new, None));
    drop(sleeper);
    // Nothing the old session held is replayed here, even once its holder is gone.
    ok(&sb
        .cmd()
        .args(["strip-stale", "--json", "--workspace"])
        .arg(&sb.ws)
        .output()
        .unwrap());
    assert_eq!(agents(&sb.ws), fresh);
}

#[test]
fn deleting_our_blank_line_keeps_the_users_final_newline() {
    for user in [
        &b"# mine\n"[..],
        b"# mine\r\nsecond\r\n",
        b"first\n\n# mine\n",
    ] {
        let sb = Sandbox::new();
        std::fs::write(sb.ws.join("AGENTS.md"), user).unwrap();
        let token = acquire(&sb, &sb.ws, "Answer briefly.", &me());
        // `sed -i '/^$/d'`, on the lines after the user's own (their blank lines are theirs).
        let file = agents(&sb.ws);
        let term: &[u8] = if user.ends_with(b"\r\n") {
            b"\r\n"
        } else {
            b"\n"
        };
        let mut edited = user.to_vec();
        edited.extend_from_slice(&file[user.len() + term.len()..]);
        std::fs::write(sb.ws.join("AGENTS.md"), &edited).unwrap();
        ok(&release(&sb, &token, None));
        assert_eq!(agents(&sb.ws), user, "{:?}", String::from_utf8_lossy(user));
    }
    // Without a final newline: the line end before our block is ours, whatever happens to it.
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), b"# mine").unwrap();
    let token = acquire(&sb, &sb.ws, "Answer briefly.", &me());
    ok(&release(&sb, &token, None));
    assert_eq!(agents(&sb.ws), b"# mine");
}

/// The `system.posix_acl_access` value for user::rw-, user:`uid`:r--, group::r--, mask::r--,
/// other::r--.
fn acl_with_user(uid: u32) -> Vec<u8> {
    let mut acl = 2u32.to_le_bytes().to_vec();
    let none = u32::MAX;
    for (tag, perm, id) in [
        (0x01u16, 6u16, none),
        (0x02, 4, uid),
        (0x04, 4, none),
        (0x10, 4, none),
        (0x20, 4, none),
    ] {
        acl.extend_from_slice(&tag.to_le_bytes());
        acl.extend_from_slice(&perm.to_le_bytes());
        acl.extend_from_slice(&id.to_le_bytes());
    }
    acl
}

fn xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 256];
    let n = rustix::fs::getxattr(path, name, &mut buf[..]).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// A session in a workspace under `base` whose AGENTS.md carries a `user.*` attribute and an
/// ACL: both are on the file during the session and after it.
fn attributes_survive(base: &Path) {
    let dir = tempfile::tempdir_in(base).unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let sb = Sandbox::at(&ws, &dir.path().join("state"));
    let file = ws.join("AGENTS.md");
    std::fs::write(&file, USER).unwrap();
    if rustix::fs::setxattr(&file, "user.team", b"blue", rustix::fs::XattrFlags::empty()).is_err() {
        eprintln!("{}: no user attributes here; not tested", base.display());
        return;
    }
    let acl = acl_with_user(4242);
    let has_acl = rustix::fs::setxattr(
        &file,
        "system.posix_acl_access",
        &acl,
        rustix::fs::XattrFlags::empty(),
    )
    .is_ok();
    let mode = std::fs::metadata(&file).unwrap().mode() & 0o7777;
    let token = acquire(&sb, &ws, "Keep my attributes.", &me());
    for when in ["during the session", "after it"] {
        assert_eq!(
            xattr(&file, "user.team").as_deref(),
            Some(&b"blue"[..]),
            "{when}"
        );
        if has_acl {
            assert_eq!(
                xattr(&file, "system.posix_acl_access").as_deref(),
                Some(&acl[..]),
                "{when}"
            );
        }
        assert_eq!(
            std::fs::metadata(&file).unwrap().mode() & 0o7777,
            mode,
            "{when}"
        );
        if when == "during the session" {
            assert!(agents(&ws).len() > USER.len());
            ok(&release(&sb, &token, None));
        }
    }
    assert_eq!(agents(&ws), USER);
}

#[test]
fn extended_attributes_and_an_acl_survive_a_session_on_the_disk() {
    attributes_survive(&std::env::temp_dir());
}

#[test]
fn extended_attributes_and_an_acl_survive_a_session_on_tmpfs() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("no /dev/shm here; tmpfs not tested");
        return;
    }
    attributes_survive(shm);
}

/// A skill folder for sessions to bring, outside the workspace.
fn skill_source(sb: &Sandbox) -> PathBuf {
    let skill = sb.base.join("skill");
    std::fs::create_dir(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        b"---\nname: s\ndescription: d\n---\nbody\n",
    )
    .unwrap();
    skill
}

/// What `projectfile run` made for `provider` in an empty workspace is gone once the state
/// directory is lost and the session dead, by `strip-stale` or by the next run.
#[test]
fn nothing_a_session_created_is_left_after_its_state_directory_is_lost() {
    for (provider, cleaner) in [
        ("cursor", "strip-stale"),
        ("pi", "strip-stale"),
        ("codex", "run"),
    ] {
        let sb = Sandbox::new();
        let skill = skill_source(&sb);
        let before = tree(&sb.ws);
        // The session is killed outright mid-run, and the state directory deleted.
        let mut child = sb
            .cmd()
            .args(["run", "--provider", provider, "--workspace"])
            .arg(&sb.ws)
            .args(["--prompt", "a dead session's text", "--skill"])
            .arg(format!("review={}", skill.display()))
            .args(["--", "sleep", "6011"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while tree(&sb.ws) == before {
            assert!(
                std::time::Instant::now() < deadline,
                "{provider}: nothing projected"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        child.kill().unwrap();
        child.wait().unwrap();
        let _ = Command::new("pkill")
            .args(["-x", "-f", "sleep 6011"])
            .status();
        std::fs::remove_dir_all(&sb.state).unwrap();
        match cleaner {
            "strip-stale" => {
                ok(&sb
                    .cmd()
                    .args(["strip-stale", "--json", "--workspace"])
                    .arg(&sb.ws)
                    .output()
                    .unwrap());
            }
            _ => {
                ok(&run(&sb, &sb.ws, provider, "a later session", "true"));
            }
        }
        let left: Vec<PathBuf> = tree(&sb.ws)
            .keys()
            .filter(|p| !before.contains_key(*p))
            .map(PathBuf::from)
            .collect();
        assert!(left.is_empty(), "{provider}: left behind {left:?}");
    }
}

/// Whether this machine lets `unshare` make a PID namespace with its own `/proc`.
fn unshare_works() -> bool {
    Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_holder_in_another_pid_namespace_is_judged_where_it_lives() {
    if !unshare_works() {
        eprintln!(
            "`unshare --pid --fork --mount-proc` is not permitted here; holders in other PID namespaces not tested"
        );
        return;
    }
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    let out = sb.base.join("receipt.json");
    // A container: its shell (pid 1 there) takes a lease with itself as holder, then sleeps.
    let script = format!(
        "\"{BIN}\" acquire --provider codex --workspace \"{}\" --prompt inside --holder-pid $$ --json > \"{}\" && exec sleep 6022",
        sb.ws.display(),
        out.display()
    );
    let mut container = Command::new("unshare")
        .args([
            "--pid",
            "--fork",
            "--mount-proc",
            "--kill-child",
            "sh",
            "-c",
            &script,
        ])
        .env("PROJECTFILE_STATE_DIR", &sb.state)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::metadata(&out).map_or(true, |m| m.len() == 0) {
        assert!(
            std::time::Instant::now() < deadline,
            "the container took no lease"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let receipt: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let token = receipt["token"].as_str().unwrap().to_string();
    assert!(receipt["holder"]["pid"].as_u64().unwrap() < 10, "{receipt}");

    // From the host: the container's holder is found in its namespace, alive, never stripped.
    let status = ok(&sb
        .cmd()
        .args(["status", "--json", "--workspace"])
        .arg(&sb.ws)
        .output()
        .unwrap());
    assert_eq!(
        status["leases"][0]["liveness"]["state"], "alive",
        "{status}"
    );
    let stripped = ok(&sb
        .cmd()
        .args(["strip-stale", "--json", "--workspace"])
        .arg(&sb.ws)
        .output()
        .unwrap());
    assert!(
        stripped["stale_cleaned"].as_array().unwrap().is_empty(),
        "{stripped}"
    );
    assert!(
        String::from_utf8(agents(&sb.ws))
            .unwrap()
            .contains("inside")
    );

    // A host session, judged from inside another container: it cannot be seen there, so it
    // is reported as such and never stripped.
    let host = acquire(&sb, &sb.ws, "on the host", &me());
    let inside = Command::new("unshare")
        .args([
            "--pid",
            "--fork",
            "--mount-proc",
            BIN,
            "strip-stale",
            "--json",
            "--workspace",
        ])
        .arg(&sb.ws)
        .env("PROJECTFILE_STATE_DIR", &sb.state)
        .output()
        .unwrap();
    let inside = ok(&inside);
    assert!(
        inside["stale_cleaned"].as_array().unwrap().is_empty(),
        "{inside}"
    );
    let seen = Command::new("unshare")
        .args([
            "--pid",
            "--fork",
            "--mount-proc",
            BIN,
            "status",
            "--json",
            "--workspace",
        ])
        .arg(&sb.ws)
        .env("PROJECTFILE_STATE_DIR", &sb.state)
        .output()
        .unwrap();
    let seen = ok(&seen);
    let states: Vec<&str> = seen["leases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["liveness"]["state"].as_str().unwrap())
        .collect();
    assert!(!states.contains(&"dead"), "{seen}");
    assert!(states.contains(&"unknown"), "{seen}");
    assert!(
        String::from_utf8(agents(&sb.ws))
            .unwrap()
            .contains("on the host")
    );

    // The container ends. Seen from the initial PID namespace, which sees every namespace's
    // processes, its namespace has none left: the holder is dead and the next cleanup strips
    // its lease. Seen from anywhere else (this test itself in a container), it cannot be judged,
    // is reported, and `release --token` ends it.
    container.kill().unwrap();
    container.wait().unwrap();
    let initial = std::fs::metadata("/proc/self/ns/pid")
        .map(|m| std::os::unix::fs::MetadataExt::ino(&m) == 0xEFFF_FFFC)
        .unwrap_or(false);
    if initial {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let stripped = ok(&sb
                .cmd()
                .args(["strip-stale", "--json", "--workspace"])
                .arg(&sb.ws)
                .output()
                .unwrap());
            if stripped["stale_cleaned"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["token"] == token.as_str())
            {
                break;
            }
            if std::time::Instant::now() >= deadline {
                let status = sb
                    .cmd()
                    .args(["status", "--json", "--workspace"])
                    .arg(&sb.ws)
                    .output()
                    .unwrap();
                panic!(
                    "the ended container's lease was never stripped: {stripped}\n{}",
                    String::from_utf8_lossy(&status.stdout)
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(
            !String::from_utf8(agents(&sb.ws))
                .unwrap()
                .contains("inside")
        );
        ok(&release(&sb, &host, None));
    } else {
        ok(&release(&sb, &host, None));
        ok(&release(&sb, &token, None));
    }
    assert_eq!(agents(&sb.ws), USER);
}

/// `strip-stale` on the sandbox's workspace cleans nothing, and the session `text` stays.
fn kept_by_strip_stale(sb: &Sandbox, text: &str) {
    let stripped = strip_stale(sb);
    assert_eq!(
        stripped["stale_cleaned"],
        serde_json::json!([]),
        "{stripped}"
    );
    assert!(String::from_utf8(agents(&sb.ws)).unwrap().contains(text));
}

/// `strip-stale --json` on the sandbox's workspace, which must succeed.
fn strip_stale(sb: &Sandbox) -> Value {
    ok(&sb
        .cmd()
        .args(["strip-stale", "--json", "--workspace"])
        .arg(&sb.ws)
        .output()
        .unwrap())
}

/// A holder whose main thread has ended (`pthread_exit`) while another thread runs: its first
/// thread reads as a zombie, and the process is alive. Its session is kept until the process
/// ends; then the next command strips it. Skipped with a message where no C compiler is found.
#[test]
fn a_holder_whose_main_thread_ended_is_alive_while_a_thread_runs() {
    let sb = Sandbox::new();
    let source = sb.base.join("leader.c");
    let binary = sb.base.join("leader");
    std::fs::write(
        &source,
        b"#include <pthread.h>\n#include <unistd.h>\nstatic void *w(void *a) { (void)a; sleep(600); return 0; }\nint main(void) { pthread_t t; pthread_create(&t, 0, w, 0); pthread_exit(0); }\n",
    )
    .unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc)
        .args(["-pthread", "-o"])
        .arg(&binary)
        .arg(&source)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        eprintln!("no C compiler ({cc}); not tested");
        return;
    }
    // Killed on drop, should an assertion fail first.
    let mut holder = Sleeper(Command::new(&binary).spawn().unwrap());
    let pid = holder.0.id();
    // Wait until the main thread has ended: its task reads as a zombie.
    let status = PathBuf::from(format!("/proc/{pid}/status"));
    for _ in 0..500 {
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        if text.contains("State:\tZ") && text.contains("Threads:\t2") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::fs::write(sb.ws.join("AGENTS.md"), b"# P\n").unwrap();
    let token = acquire(&sb, &sb.ws, "kept while a thread runs", &pid.to_string());
    kept_by_strip_stale(&sb, "kept while a thread runs");
    holder.0.kill().unwrap();
    holder.0.wait().unwrap();
    let stripped = strip_stale(&sb);
    assert_eq!(
        stripped["stale_cleaned"][0]["token"],
        token.as_str(),
        "{stripped}"
    );
    assert_eq!(agents(&sb.ws), b"# P\n");
}

/// A holder lock file deleted and made again (a temporary-file cleaner) while its holder keeps
/// its lock on the file it was given: the session is kept, as the lock is; once the holder lets
/// go, the next command strips it.
#[test]
fn a_holder_lock_replaced_at_its_path_while_held_keeps_its_session() {
    let sb = Sandbox::new();
    let lock = sb.base.join("host.lock");
    std::fs::write(&lock, b"").unwrap();
    // A holder process keeps a lock on the file (`flock` on a descriptor it holds).
    let holder = std::fs::File::open(&lock).unwrap();
    holder.lock().unwrap();
    std::fs::write(sb.ws.join("AGENTS.md"), b"# P\n").unwrap();
    let out = sb
        .cmd()
        .args(["acquire", "--provider", "codex", "--workspace"])
        .arg(&sb.ws)
        .args(["--prompt", "kept while the lock is", "--holder-lock"])
        .arg(&lock)
        .arg("--json")
        .output()
        .unwrap();
    let token = ok(&out)["token"].as_str().unwrap().to_string();
    std::fs::remove_file(&lock).unwrap();
    std::fs::write(&lock, b"").unwrap();
    kept_by_strip_stale(&sb, "kept while the lock is");
    drop(holder);
    let stripped = strip_stale(&sb);
    assert_eq!(
        stripped["stale_cleaned"][0]["token"],
        token.as_str(),
        "{stripped}"
    );
    assert_eq!(agents(&sb.ws), b"# P\n");
}

/// A second state directory used on a workspace whose sessions another one records (a host
/// started under another `HOME`, `sudo`): its commands leave what the other's live sessions made
/// where it is, and say why; once that state directory is gone, they take it out.
#[test]
fn another_state_directorys_live_session_keeps_what_it_made() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    let skill = skill_source(&sb);
    let before = tree(&sb.ws);
    let first = sb.acquired(
        "cursor",
        "first",
        &["--skill", &format!("s1={}", skill.display())],
    );
    let during = tree(&sb.ws);
    let other = sb.base.join("other-state");
    let out = sb
        .cmd()
        .env("PROJECTFILE_STATE_DIR", &other)
        .args(["strip-stale", "--json", "--workspace"])
        .arg(&sb.ws)
        .output()
        .unwrap();
    let receipt = ok(&out);
    assert_eq!(tree(&sb.ws), during, "{receipt}");
    assert!(
        receipt["warnings"]
            .to_string()
            .contains("another state directory"),
        "{receipt}"
    );
    // The first state directory ends its session as ever.
    ok(&release(&sb, first["token"].as_str().unwrap(), None));
    assert_eq!(tree(&sb.ws), before);
    // A session of the first one, then that state directory lost: the other one cleans.
    sb.acquired(
        "cursor",
        "again",
        &["--skill", &format!("s1={}", skill.display())],
    );
    std::fs::remove_dir_all(&sb.state).unwrap();
    ok(&sb
        .cmd()
        .env("PROJECTFILE_STATE_DIR", &other)
        .args(["strip-stale", "--json", "--workspace"])
        .arg(&sb.ws)
        .output()
        .unwrap());
    assert_eq!(tree(&sb.ws), before);
}

/// A copy of a workspace taken while a session ran (`cp -a`, a backup put back) holds what that
/// session made and the record of it, naming the original's folder of the same state directory.
/// That is another folder's record, not another state directory: once the session's holder is
/// gone, `strip-stale` in the copy takes out what is provably ours, and says nothing of another
/// state directory.
#[test]
fn a_copy_taken_mid_session_is_cleaned_by_its_own_strip_stale() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("README"), b"x\n").unwrap();
    let before = tree(&sb.ws);
    let mut holder = Command::new("sleep").arg("600").spawn().unwrap();
    let pid = holder.id().to_string();
    ok(&sb
        .cmd()
        .args(["acquire", "--json", "--provider", "cursor", "--workspace"])
        .arg(&sb.ws)
        .args(["--prompt", "Copied session.", "--holder-pid", &pid])
        .output()
        .unwrap());
    let copy = sb.base.join("copy");
    assert!(
        Command::new("cp")
            .arg("-a")
            .arg(&sb.ws)
            .arg(&copy)
            .status()
            .unwrap()
            .success()
    );
    assert_ne!(tree(&copy), before, "the copy holds the session's files");
    holder.kill().unwrap();
    holder.wait().unwrap();
    for folder in [&sb.ws, &copy] {
        let receipt = ok(&sb
            .cmd()
            .args(["strip-stale", "--json", "--workspace"])
            .arg(folder)
            .output()
            .unwrap());
        assert!(
            !receipt["warnings"]
                .to_string()
                .contains("another state directory"),
            "{receipt}"
        );
        assert_eq!(tree(folder), before, "{}: {receipt}", folder.display());
    }
}
