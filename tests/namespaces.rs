//! Black-box tests of namespaces kept in the ledger: a release works from its token and the
//! record, whatever `--namespace` the command was given, and blocks of two namespaces in one file
//! are each taken out by their own last release.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use support::Sandbox;

const USER: &[u8] = b"# Project\r\nrules\r\n";

fn acquire(sb: &Sandbox, namespace: &str, prompt: &str) -> Value {
    sb.json(&[
        "--namespace",
        namespace,
        "acquire",
        "--provider",
        "codex",
        "--workspace",
        sb.ws.to_str().unwrap(),
        "--prompt",
        prompt,
        "--holder-pid",
        &std::process::id().to_string(),
    ])
}

fn release(sb: &Sandbox, receipt: &Value) -> Value {
    // No --namespace: the token and the record say which block is whose.
    let out = sb
        .cmd()
        .args([
            "release",
            "--json",
            "--token",
            receipt["token"].as_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn agents(sb: &Sandbox) -> String {
    String::from_utf8(std::fs::read(sb.ws.join("AGENTS.md")).unwrap()).unwrap()
}

#[test]
fn a_release_without_the_namespace_takes_out_that_namespaces_block() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
    let a = acquire(&sb, "other", "Other's text.");
    assert!(agents(&sb).contains("<!-- BEGIN other-session-instructions"));
    let end = release(&sb, &a);
    assert_eq!(end["released"], true);
    assert_eq!(std::fs::read(sb.ws.join("AGENTS.md")).unwrap(), USER);
    let status = sb.json(&["status", "--workspace", sb.ws.to_str().unwrap()]);
    assert!(status["leases"].as_array().unwrap().is_empty(), "{status}");
    assert!(status["entries"].as_array().unwrap().is_empty(), "{status}");
}

#[test]
fn two_namespaces_blocks_in_one_file_go_with_their_own_releases() {
    for first_out in ["agentworks", "other"] {
        let sb = Sandbox::new();
        std::fs::write(sb.ws.join("AGENTS.md"), USER).unwrap();
        let ours = acquire(&sb, "agentworks", "Default text.");
        let theirs = acquire(&sb, "other", "Other text.");
        let both = agents(&sb);
        assert!(
            both.contains("Default text.") && both.contains("Other text."),
            "{both}"
        );
        let (first, second, gone, stays) = if first_out == "other" {
            (&theirs, &ours, "Other text.", "Default text.")
        } else {
            (&ours, &theirs, "Default text.", "Other text.")
        };
        release(&sb, first);
        let now = agents(&sb);
        assert!(!now.contains(gone), "{first_out}: {now}");
        assert!(now.contains(stays), "{first_out}: {now}");
        release(&sb, second);
        assert_eq!(
            std::fs::read(sb.ws.join("AGENTS.md")).unwrap(),
            USER,
            "{first_out}"
        );
    }
}
