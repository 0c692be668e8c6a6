//! A workspace is its folder over time (docs/promises.md, promises 1, 3 and 4): for any sequence
//! of session starts, ends by token and by handle, folder renames (beside the old name and far
//! away), deletions and re-creations at the same path, and user edits, every folder holds
//! exactly its user's bytes once its sessions are gone, a folder created again at a path never
//! receives what a session of the old one held, and a release by token either finds its folder
//! (renamed beside its old name) or says it cannot (`workspace_lost`, nothing changed).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use projectfile_codex::Codex;
use projectfile_core::block::Markers;
use projectfile_core::holder::Holder;
use projectfile_core::projector::{AcquireRequest, Projector};
use projectfile_core::workspace::Workspace;
use projectfile_core::{Namespace, SessionRequest};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// A session starts in the folder now at the workspace path.
    Start,
    /// Session `i` (of those started and not ended) ends by its token alone.
    EndByToken(usize),
    /// Session `i` ends through the handle kept since its start (`run`'s and a host's way).
    EndByHandle(usize),
    /// The folder at the workspace path is renamed beside itself; the path is left empty.
    RenameBeside,
    /// The folder at the workspace path moves into another parent folder.
    MoveFar,
    /// The folder at the workspace path is deleted and another made there (a fresh clone).
    Recreate,
    /// The user adds a line at the top of the folder's AGENTS.md.
    EditTop,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Start),
        2 => (0usize..6).prop_map(Op::EndByToken),
        2 => (0usize..6).prop_map(Op::EndByHandle),
        1 => Just(Op::RenameBeside),
        1 => Just(Op::MoveFar),
        1 => Just(Op::Recreate),
        1 => Just(Op::EditTop),
    ]
}

/// One folder as the model knows it: where it is now, where its ledger last saw it, and its
/// user's bytes.
#[derive(Debug)]
struct Folder {
    at: PathBuf,
    seen: PathBuf,
    user: Vec<u8>,
    /// Deleted (with everything in it).
    gone: bool,
}

struct Session {
    token: String,
    handle: Workspace,
    folder: usize,
    /// The path it was acquired through.
    acquired: PathBuf,
}

struct World {
    _dir: tempfile::TempDir,
    base: PathBuf,
    path: PathBuf,
    projector: Projector,
    folders: Vec<Folder>,
    sessions: Vec<Session>,
    moves: usize,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("far")).unwrap();
        let path = base.join("ws");
        let projector = Projector::new(base.join("state"), Namespace::default());
        let mut world = World {
            _dir: dir,
            base,
            path,
            projector,
            folders: Vec::new(),
            sessions: Vec::new(),
            moves: 0,
        };
        world.make_folder();
        world
    }

    /// A new folder at the workspace path with a user file of its own.
    fn make_folder(&mut self) {
        let n = self.folders.len();
        let user = format!("# folder {n}\n").into_bytes();
        std::fs::create_dir(&self.path).unwrap();
        std::fs::write(self.path.join("AGENTS.md"), &user).unwrap();
        self.folders.push(Folder {
            at: self.path.clone(),
            seen: self.path.clone(),
            user,
            gone: false,
        });
    }

    /// The folder now at the workspace path, if any.
    fn current(&self) -> Option<usize> {
        self.folders
            .iter()
            .rposition(|f| !f.gone && f.at == self.path)
    }

    fn live_in(&self, folder: usize) -> usize {
        self.sessions.iter().filter(|s| s.folder == folder).count()
    }

    /// Whether a release by token finds `folder`: it is where its ledger last saw it or where
    /// one of its recorded sessions was acquired, or renamed beside one of those.
    fn findable(&self, folder: usize) -> bool {
        let f = &self.folders[folder];
        let known = std::iter::once(&f.seen).chain(
            self.sessions
                .iter()
                .filter(|s| s.folder == folder)
                .map(|s| &s.acquired),
        );
        !f.gone && known.into_iter().any(|p| p.parent() == f.at.parent())
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match op {
            Op::Start => {
                let Some(folder) = self.current() else {
                    return Ok(());
                };
                let holder = Holder::current_process().unwrap();
                let text = format!("session {}", self.sessions.len());
                let request =
                    AcquireRequest::new(&self.path, SessionRequest::with_prompt(text), holder);
                let (receipt, handle) = self.projector.acquire_holding(&Codex, &request).unwrap();
                self.sessions.push(Session {
                    token: receipt.token,
                    handle,
                    folder,
                    acquired: self.path.clone(),
                });
                self.folders[folder].seen = self.path.clone();
            }
            Op::EndByToken(i) | Op::EndByHandle(i) => {
                if self.sessions.is_empty() {
                    return Ok(());
                }
                let i = i % self.sessions.len();
                let folder = self.sessions[i].folder;
                let findable = self.findable(folder);
                let ended = match op {
                    Op::EndByHandle(_) => self
                        .projector
                        .release_in(&self.sessions[i].token, &self.sessions[i].handle),
                    _ => self.projector.release(&self.sessions[i].token),
                };
                match (ended, findable || matches!(op, Op::EndByHandle(_))) {
                    (Ok(receipt), true) => {
                        prop_assert!(receipt.released);
                        // Found there: the ledger sees it there now.
                        if !self.folders[folder].gone {
                            self.folders[folder].seen = self.folders[folder].at.clone();
                        }
                    }
                    (Err(e), false) => {
                        // Not found: said so, nothing changed; the lease stays for later.
                        prop_assert_eq!(e.kind(), "workspace_lost", "{}", e);
                        return Ok(());
                    }
                    (other, findable) => {
                        prop_assert!(
                            false,
                            "findable {findable}: {:?}",
                            other.map(|r| r.released)
                        )
                    }
                }
                self.sessions.remove(i);
            }
            Op::RenameBeside | Op::MoveFar => {
                let Some(folder) = self.current() else {
                    return Ok(());
                };
                self.moves += 1;
                let to = match op {
                    Op::MoveFar => self.base.join("far").join(format!("m{}", self.moves)),
                    _ => self.base.join(format!("renamed{}", self.moves)),
                };
                std::fs::rename(&self.path, &to).unwrap();
                self.folders[folder].at = to;
            }
            Op::Recreate => {
                if let Some(folder) = self.current() {
                    std::fs::remove_dir_all(&self.path).unwrap();
                    self.folders[folder].gone = true;
                }
                if !self.path.exists() {
                    self.make_folder();
                }
            }
            Op::EditTop => {
                let Some(folder) = self.current() else {
                    return Ok(());
                };
                let file = self.path.join("AGENTS.md");
                let line = b"- an edit\n";
                let mut bytes = line.to_vec();
                bytes.extend(std::fs::read(&file).unwrap());
                std::fs::write(&file, bytes).unwrap();
                let user = &mut self.folders[folder].user;
                user.splice(0..0, line.iter().copied());
            }
        }
        Ok(())
    }

    /// Every folder that exists holds its user's bytes, with our block exactly while a session
    /// of its own is live.
    fn check(&self) -> Result<(), TestCaseError> {
        let markers = Markers::new(&Namespace::default());
        for (n, folder) in self.folders.iter().enumerate() {
            if folder.gone {
                continue;
            }
            let bytes = std::fs::read(folder.at.join("AGENTS.md")).unwrap();
            let removed = projectfile_core::block::remove(&markers, &bytes).unwrap();
            let live = self.live_in(n);
            prop_assert_eq!(removed.is_some(), live > 0, "folder {} ({} live)", n, live);
            let user = removed.map_or(bytes, |r| r.bytes);
            prop_assert_eq!(&user, &folder.user, "folder {}'s user bytes", n);
        }
        Ok(())
    }
}

fn no_block(path: &Path) -> bool {
    let bytes = std::fs::read(path.join("AGENTS.md")).unwrap();
    !String::from_utf8_lossy(&bytes).contains("session-instructions")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_workspace_is_its_folder_over_time(ops in prop::collection::vec(op(), 1..24)) {
        let mut world = World::new();
        for op in &ops {
            world.apply(op)?;
            world.check()?;
        }
        // The hosts that kept their handles end every session, wherever its folder went.
        while let Some(session) = world.sessions.pop() {
            let receipt = world.projector.release_in(&session.token, &session.handle).unwrap();
            prop_assert!(receipt.released);
        }
        world.check()?;
        for folder in world.folders.iter().filter(|f| !f.gone) {
            prop_assert!(no_block(&folder.at));
        }
    }
}

#[test]
fn a_token_release_finds_a_renamed_folder_and_refuses_a_far_one() {
    let mut world = World::new();
    world.apply(&Op::Start).unwrap();
    world.apply(&Op::RenameBeside).unwrap();
    world.apply(&Op::EndByToken(0)).unwrap();
    assert!(world.sessions.is_empty(), "found beside its old name");
    world.apply(&Op::Recreate).unwrap();
    world.apply(&Op::Start).unwrap();
    world.apply(&Op::MoveFar).unwrap();
    let error = world
        .projector
        .release(&world.sessions[0].token)
        .unwrap_err();
    assert_eq!(error.kind(), "workspace_lost");
    let message = error.to_string();
    assert!(message.contains("--workspace"), "{message}");
    // The host points at the folder's new place: released there.
    let moved = Workspace::open(&world.folders[1].at).unwrap();
    assert!(
        world
            .projector
            .release_in(&world.sessions[0].token, &moved)
            .unwrap()
            .released
    );
    world.sessions.clear();
    world.check().unwrap();
}
