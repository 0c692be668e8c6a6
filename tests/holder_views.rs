//! Black-box tests of holders judged from a view of the machine that shows less than it holds: a
//! boot id that reads empty (a sandbox masking it), a `/proc` mounted `hidepid=2` that hides
//! other users' processes, a holder recorded in another time namespace. What cannot be seen is no
//! answer (`unknown`, never stripped); what is provably gone is dead (docs/threat-model.md).
//! Each test needs `unshare` (and, for `hidepid`, root and `setpriv`) and says so when the
//! machine does not allow it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output, Stdio};
use support::{BIN, Sandbox};

const USER: &[u8] = b"# Project\nrules\n";

fn works(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn json(out: &Output) -> Value {
    support::succeeded(out)
}

/// `sh -c SCRIPT` in a mount namespace of its own, with `PROJECTFILE_STATE_DIR` set.
fn in_mount_namespace(sb: &Sandbox, script: &str) -> Output {
    Command::new("unshare")
        .args(["--mount", "sh", "-c", script])
        .env("PROJECTFILE_STATE_DIR", &sb.state)
        .output()
        .unwrap()
}

fn status(sb: &Sandbox) -> Value {
    json(
        &sb.cmd()
            .args(["status", "--json", "--workspace"])
            .arg(&sb.ws)
            .output()
            .unwrap(),
    )
}

const MASK_BOOT_ID: &str = "mount --bind /dev/null /proc/sys/kernel/random/boot_id";

#[test]
fn a_boot_id_that_reads_empty_is_no_answer() {
    if !works(&["unshare", "--mount", "sh", "-c", MASK_BOOT_ID]) {
        eprintln!("a mount namespace with a bind mount is not permitted here; not tested");
        return;
    }
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    let mut holder = Command::new("sleep").arg("600").spawn().unwrap();
    let pid = holder.id().to_string();
    let receipt = json(
        &sb.cmd()
            .args(["acquire", "--json", "--provider", "codex", "--workspace"])
            .arg(&sb.ws)
            .args(["--prompt", "Live session.", "--holder-pid", &pid])
            .output()
            .unwrap(),
    );
    let with_block = std::fs::read(sb.ws.join("AGENTS.md")).unwrap();

    // Where the boot id reads empty, the live holder's session is not taken for a rebooted one.
    let ws = sb.ws.display();
    let out = in_mount_namespace(
        &sb,
        &format!("{MASK_BOOT_ID} && \"{BIN}\" strip-stale --json --workspace \"{ws}\""),
    );
    let stripped: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        std::fs::read(sb.ws.join("AGENTS.md")).unwrap(),
        with_block,
        "{stripped}"
    );
    assert_eq!(status(&sb)["leases"][0]["liveness"]["state"], "alive");

    // And no lease is recorded there with a boot id that is not one.
    let out = in_mount_namespace(
        &sb,
        &format!(
            "{MASK_BOOT_ID} && \"{BIN}\" acquire --json --provider codex --workspace \"{ws}\" --prompt Other. --holder-pid {pid}"
        ),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("boot_id"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    holder.kill().unwrap();
    holder.wait().unwrap();
    json(
        &sb.cmd()
            .args(["release", "--json", "--token"])
            .arg(receipt["token"].as_str().unwrap())
            .output()
            .unwrap(),
    );
    assert_eq!(std::fs::read(sb.ws.join("AGENTS.md")).unwrap(), USER);
}

#[test]
fn a_holder_hidden_by_hidepid_is_never_stripped() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root
        || !works(&["setpriv", "--help"])
        || !works(&[
            "unshare",
            "--mount",
            "sh",
            "-c",
            "mount -t proc -o hidepid=2 proc /proc",
        ])
    {
        eprintln!("root, setpriv and a hidepid /proc in a mount namespace are needed; not tested");
        return;
    }
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    std::fs::create_dir(&sb.state).unwrap();
    for dir in [&sb.base, &sb.ws, &sb.state] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    std::fs::set_permissions(
        sb.ws.join("AGENTS.md"),
        std::fs::Permissions::from_mode(0o666),
    )
    .unwrap();
    let as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups";
    // A root process holds the session of user nobody.
    let mut holder = Command::new("sleep").arg("600").spawn().unwrap();
    let ws = sb.ws.display();
    let acquire = format!(
        "{as_nobody} \"{BIN}\" acquire --json --provider codex --workspace \"{ws}\" --prompt Live. --holder-pid {}",
        holder.id()
    );
    let out = Command::new("sh")
        .args(["-c", &acquire])
        .env("PROJECTFILE_STATE_DIR", &sb.state)
        .output()
        .unwrap();
    let receipt = json(&out);
    let with_block = std::fs::read(sb.ws.join("AGENTS.md")).unwrap();

    // nobody's /proc hides root's processes: the holder is no answer, not a dead one.
    let out = in_mount_namespace(
        &sb,
        &format!(
            "mount -t proc -o hidepid=2 proc /proc && {as_nobody} \"{BIN}\" strip-stale --json --workspace \"{ws}\""
        ),
    );
    let stripped = json(&out);
    assert_eq!(
        stripped["stale_cleaned"],
        serde_json::json!([]),
        "{stripped}"
    );
    assert_eq!(std::fs::read(sb.ws.join("AGENTS.md")).unwrap(), with_block);

    holder.kill().unwrap();
    holder.wait().unwrap();
    let release = format!(
        "{as_nobody} \"{BIN}\" release --json --token {}",
        receipt["token"].as_str().unwrap()
    );
    let out = Command::new("sh")
        .args(["-c", &release])
        .env("PROJECTFILE_STATE_DIR", &sb.state)
        .output()
        .unwrap();
    json(&out);
    assert_eq!(std::fs::read(sb.ws.join("AGENTS.md")).unwrap(), USER);
}

#[test]
fn a_holder_of_another_time_namespace_that_ended_is_dead() {
    if !works(&["unshare", "--time", "--fork", "true"]) {
        eprintln!("`unshare --time` is not permitted here; not tested");
        return;
    }
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    let go = sb.base.join("go");
    let receipt_at = sb.base.join("receipt.json");
    // The holder is the shell in the time namespace; it waits for `go`, then ends.
    let script = format!(
        "\"{BIN}\" acquire --json --provider codex --workspace \"{}\" --prompt Timed. --holder-pid $$ > \"{}\" && while [ ! -e \"{}\" ]; do sleep 0.05; done",
        sb.ws.display(),
        receipt_at.display(),
        go.display()
    );
    let mut namespace = Command::new("unshare")
        .args(["--time", "--fork", "sh", "-c", &script])
        .env("PROJECTFILE_STATE_DIR", &sb.state)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::metadata(&receipt_at).map_or(true, |m| m.len() == 0) {
        assert!(std::time::Instant::now() < deadline, "no lease was taken");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Alive there: its start time reads otherwise here, so it cannot be judged, and stays.
    let live = status(&sb);
    assert_eq!(live["leases"][0]["liveness"]["state"], "unknown", "{live}");
    std::fs::write(&go, b"").unwrap();
    namespace.wait().unwrap();

    // Gone: no process has its pid in this PID namespace any more, whatever the clocks say.
    let ended = status(&sb);
    assert_eq!(ended["leases"][0]["liveness"]["state"], "dead", "{ended}");
    let stripped = json(
        &sb.cmd()
            .args(["strip-stale", "--json", "--workspace"])
            .arg(&sb.ws)
            .output()
            .unwrap(),
    );
    assert_eq!(
        stripped["stale_cleaned"].as_array().unwrap().len(),
        1,
        "{stripped}"
    );
    assert_eq!(std::fs::read(sb.ws.join("AGENTS.md")).unwrap(), USER);
}
