//! Pi's own `.pi/` checks: created only when absent, removed only when we created it and it is
//! empty, the project's own contents never replaced. The shared conformance suite runs from
//! `tests/suite.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use projectfile_conformance::{Fixture, Subject, Tree};
use projectfile_pi::{APPEND_SYSTEM, Pi};

#[test]
fn pi_dir_is_created_and_removed_when_absent() {
    let fx = Fixture::new();
    let receipt = fx.acquire(&Subject::new(Pi), "pi text").unwrap();
    assert!(
        receipt
            .files
            .iter()
            .any(|f| f.path == ".pi" && f.kind == "dir" && f.action == "created")
    );
    let text = String::from_utf8(fx.read(APPEND_SYSTEM).unwrap()).unwrap();
    assert!(text.contains("created=true -->\npi text\n"));
    let released = fx.projector.release(&receipt.token).unwrap();
    assert!(
        released
            .files
            .iter()
            .any(|f| f.path == ".pi" && f.kind == "dir" && f.action == "removed")
    );
    assert!(fx.read_kind(".pi").is_none());
    fx.assert_no_ledger();
}

#[test]
fn existing_pi_dir_is_kept_even_when_empty() {
    for own in [None, Some(("settings.json", b"{}\n".as_slice()))] {
        let fx = Fixture::new();
        std::fs::create_dir(fx.workspace.join(".pi")).unwrap();
        if let Some((name, bytes)) = own {
            fx.write(&format!(".pi/{name}"), bytes);
        }
        let before = Tree::capture(&fx.workspace);
        let receipt = fx.acquire(&Subject::new(Pi), "pi text").unwrap();
        assert!(!receipt.files.iter().any(|f| f.kind == "dir"));
        assert!(fx.release(&receipt.token));
        assert_eq!(Tree::capture(&fx.workspace), before);
    }
}

#[test]
fn own_append_system_gets_the_block_after_its_text() {
    let fx = Fixture::new();
    fx.write(APPEND_SYSTEM, b"project append\r\nno final newline");
    fx.write(".pi/SYSTEM.md", b"own system\n");
    let before = Tree::capture(&fx.workspace);
    let receipt = fx.acquire(&Subject::new(Pi), "pi text").unwrap();
    let text = String::from_utf8(fx.read(APPEND_SYSTEM).unwrap()).unwrap();
    assert!(text.starts_with("project append\r\nno final newline"));
    assert!(text.contains("created=false"));
    assert!(receipt.notes.iter().any(|n| n.contains(".pi/SYSTEM.md")));
    assert!(fx.release(&receipt.token));
    assert_eq!(Tree::capture(&fx.workspace), before);
}

#[test]
fn a_file_the_user_adds_to_our_pi_dir_keeps_it() {
    let fx = Fixture::new();
    let receipt = fx.acquire(&Subject::new(Pi), "pi text").unwrap();
    fx.write(".pi/settings.json", b"{\"mine\": true}\n");
    assert!(fx.release(&receipt.token));
    assert!(fx.read(APPEND_SYSTEM).is_none());
    assert_eq!(fx.read(".pi/settings.json").unwrap(), b"{\"mine\": true}\n");
}
