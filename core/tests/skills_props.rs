//! Property tests of the take-over/restore cycle: for any prior folder (files with any bytes and
//! modes, nested folders with odd modes, symlinks, a file named like our marker) and any sequence
//! of session starts (with updated skills), ends, holder deaths, stale cleaning, user files dropped
//! into the managed folder and edits of our files — on one file system, or across two without
//! `RENAME_EXCHANGE` — the prior
//! folder comes back byte-exact after the last end, and the ledger holds nothing more.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod skills_common;

use projectfile_core::holder::Holder;
use projectfile_core::testing::fsio::{self, LockGuard, faults};
use proptest::prelude::*;
use skills_common::*;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const SKILLS_ONLY: SkillsProvider = SkillsProvider { block: false };
const FOLDER: &str = ".agents/skills/review";

#[derive(Clone, Debug)]
enum PNode {
    File(Vec<u8>, u32),
    Dir(u32, BTreeMap<String, PNode>),
    Link(String),
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "SKILL.md",
        "a",
        "b",
        "refs",
        ".agentworks-managed",
        ".hidden",
        "r\u{e9}sum\u{e9}",
    ])
    .prop_map(str::to_string)
}

fn node() -> impl Strategy<Value = PNode> {
    let file_modes = prop::sample::select(vec![0o644u32, 0o600, 0o755, 0o400, 0o000, 0o2755]);
    let dir_modes = prop::sample::select(vec![0o755u32, 0o700, 0o500, 0o701, 0o1777]);
    let leaf = prop_oneof![
        3 => (prop::collection::vec(any::<u8>(), 0..48), file_modes)
            .prop_map(|(bytes, mode)| PNode::File(bytes, mode)),
        1 => "[a-z./]{1,12}".prop_map(PNode::Link),
    ];
    leaf.prop_recursive(3, 24, 4, move |inner| {
        (
            dir_modes.clone(),
            prop::collection::btree_map(name(), inner, 0..4),
        )
            .prop_map(|(mode, children)| PNode::Dir(mode, children))
    })
}

fn prior() -> impl Strategy<Value = (u32, BTreeMap<String, PNode>)> {
    (
        prop::sample::select(vec![0o755u32, 0o700, 0o750]),
        prop::collection::btree_map(name(), node(), 0..5),
    )
}

fn build(path: &Path, node: &PNode) {
    match node {
        PNode::File(bytes, mode) => {
            std::fs::write(path, bytes).unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode)).unwrap();
        }
        PNode::Link(target) => std::os::unix::fs::symlink(target, path).unwrap(),
        PNode::Dir(mode, children) => {
            std::fs::create_dir(path).unwrap();
            for (name, child) in children {
                build(&path.join(name), child);
            }
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode)).unwrap();
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// A session starts with skill version `version`, held by holder slot `slot`.
    Start { version: usize, slot: usize },
    /// The session at this index (modulo) ends.
    End(usize),
    /// Holder slot dies (its sessions become stale).
    Die(usize),
    /// `strip-stale`.
    Strip,
    /// The user drops a file into the managed folder.
    Drop(String, Vec<u8>),
    /// The user edits our SKILL.md.
    Edit,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize, 0..3usize).prop_map(|(version, slot)| Op::Start { version, slot }),
        3 => (0..8usize).prop_map(Op::End),
        1 => (0..3usize).prop_map(Op::Die),
        1 => Just(Op::Strip),
        1 => ("[a-z]{1,6}", prop::collection::vec(any::<u8>(), 0..16))
            .prop_map(|(name, bytes)| Op::Drop(name, bytes)),
        1 => Just(Op::Edit),
    ]
}

struct Slot {
    path: PathBuf,
    guard: Option<LockGuard>,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn the_prior_folder_comes_back_byte_exact(
        (root_mode, children) in prior(),
        ops in prop::collection::vec(op(), 1..14),
        cross_device in any::<bool>(),
    ) {
        let fx = Fx::new();
        std::fs::create_dir_all(fx.ws.join(".agents/skills")).unwrap();
        build(&fx.ws.join(FOLDER), &PNode::Dir(root_mode, children));
        let before = tree(&fx.ws);
        let versions = [
            fx.source("v0", &[("SKILL.md", b"v0\n")]),
            fx.source("v1", &[("SKILL.md", b"v1\n"), ("refs/a", b"a1")]),
            fx.source("v2", &[("other.txt", b"v2"), ("refs/b/c", b"c")]),
        ];
        let locks = fx.dir.path().join("locks");
        std::fs::create_dir(&locks).unwrap();
        let mut slots: Vec<Slot> = Vec::new();
        let mut tokens: Vec<String> = Vec::new();
        faults::force_cross_device(cross_device);
        faults::force_no_exchange(cross_device);
        for (step, op) in ops.iter().enumerate() {
            match op {
                Op::Start { version, slot } => {
                    while slots.len() <= *slot {
                        slots.push(Slot { path: PathBuf::new(), guard: None });
                    }
                    let s = &mut slots[*slot];
                    if s.guard.is_none() {
                        s.path = locks.join(format!("holder-{step}"));
                        s.guard = Some(fsio::hold_lock(&s.path).unwrap());
                    }
                    let holder = Holder::lock(s.path.clone());
                    let receipt = fx
                        .try_acquire_with(&SKILLS_ONLY, &[("review", &versions[*version])], holder)
                        .unwrap();
                    tokens.push(receipt.token);
                }
                Op::End(i) => {
                    if !tokens.is_empty() {
                        let token = tokens.remove(i % tokens.len());
                        fx.release(&token);
                    }
                }
                Op::Die(slot) => {
                    if let Some(s) = slots.get_mut(*slot) {
                        s.guard = None;
                    }
                }
                Op::Strip => {
                    fx.projector.strip_stale(&fx.ws).unwrap();
                }
                Op::Drop(..) | Op::Edit => {
                    // Only into our folder: the prior itself is the user's to change.
                    let ours = fx
                        .projector
                        .status(&fx.ws)
                        .unwrap()
                        .entries
                        .iter()
                        .any(|e| e.kind == "skill");
                    if ours && fx.ws.join(FOLDER).is_dir() {
                        match op {
                            Op::Drop(name, bytes) => {
                                let path = fx.ws.join(FOLDER).join(format!("user-{name}"));
                                if !path.exists() {
                                    std::fs::write(path, bytes).unwrap();
                                }
                            }
                            _ => {
                                let path = fx.ws.join(FOLDER).join("SKILL.md");
                                if path.is_file() {
                                    std::fs::write(path, b"edited by the user\n").unwrap();
                                }
                            }
                        }
                    }
                }
            }
        }
        for token in tokens.drain(..) {
            fx.release(&token);
        }
        for s in &mut slots {
            s.guard = None;
        }
        fx.projector.strip_stale(&fx.ws).unwrap();
        faults::force_cross_device(false);
        faults::force_no_exchange(false);
        prop_assert_eq!(tree(&fx.ws), before);
        let status = fx.projector.status(&fx.ws).unwrap();
        prop_assert!(status.leases.is_empty());
        prop_assert!(status.entries.is_empty());
        prop_assert!(status.taken_over.is_empty());
        // Every kept copy is a user's file, never one of ours or of the prior.
        for kept in &status.kept {
            prop_assert!(kept.path.as_str().starts_with(FOLDER), "{:?}", kept);
        }
    }
}
