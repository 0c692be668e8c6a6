//! Shared fixtures of the `skills_*` tests: a temporary workspace and state directory, a provider
//! that projects only skills (and optionally a block), byte-exact tree pictures, and holders.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic,
    dead_code
)]

use projectfile_core::guidance::DiscoveryProfile;
use projectfile_core::holder::Holder;
use projectfile_core::projector::{AcquireReceipt, AcquireRequest, Projector};
use projectfile_core::{
    Error, Namespace, Plan, PlanContext, Provider, ProviderSpec, SessionRequest, SkillInput,
    patterns,
};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

/// Projects the session's skills into `.agents/skills`, plus the AGENTS.md block when `block`
/// is set.
pub struct SkillsProvider {
    pub block: bool,
}

/// The skills folder of [`SkillsProvider`].
pub const SKILLS_DIR: &str = ".agents/skills";

const WITH_BLOCK: ProviderSpec = ProviderSpec::new("skills-test", DiscoveryProfile::default)
    .session_text_in_file()
    .skills_in(SKILLS_DIR);
const SKILLS_ALONE: ProviderSpec =
    ProviderSpec::new("skills-test", DiscoveryProfile::default).skills_in(SKILLS_DIR);

impl Provider for SkillsProvider {
    fn spec(&self) -> &'static ProviderSpec {
        if self.block {
            &WITH_BLOCK
        } else {
            &SKILLS_ALONE
        }
    }
    fn session_plan(&self, ctx: &PlanContext<'_>) -> projectfile_provider::Result<Plan> {
        if self.block {
            patterns::agents_md_block(ctx, &[])
        } else {
            Ok(Plan::default())
        }
    }
}

pub const CODEX_LIKE: SkillsProvider = SkillsProvider { block: true };

/// A node of a byte-exact tree picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    File(Vec<u8>, u32),
    Dir(u32),
    Link(PathBuf),
    Other,
}

/// Every path under `root`, never following links.
pub fn tree(root: &Path) -> BTreeMap<String, Node> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Node>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let mode = meta.permissions().mode() & 0o7777;
        let node = if meta.file_type().is_symlink() {
            Node::Link(std::fs::read_link(&path).unwrap())
        } else if meta.is_dir() {
            walk(root, &path, out);
            Node::Dir(mode)
        } else if meta.is_file() {
            Node::File(std::fs::read(&path).unwrap(), mode)
        } else {
            Node::Other
        };
        out.insert(rel, node);
    }
}

pub struct Fx {
    pub dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub state: PathBuf,
    pub sources: PathBuf,
    pub projector: Projector,
}

impl Fx {
    pub fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (ws, state, sources) = (base.join("ws"), base.join("state"), base.join("sources"));
        for d in [&ws, &state, &sources] {
            std::fs::create_dir(d).unwrap();
        }
        Fx {
            dir,
            projector: Projector::new(&state, Namespace::default()),
            ws,
            state,
            sources,
        }
    }

    /// Writes a file under `base` (creating parents).
    pub fn put(base: &Path, rel: &str, bytes: &[u8]) {
        let path = base.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    pub fn write(&self, rel: &str, bytes: &[u8]) {
        Fx::put(&self.ws, rel, bytes);
    }

    pub fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.ws.join(rel)).ok()
    }

    /// A source skill folder `name` (under `sources/<label>`) with the given files.
    pub fn source(&self, label: &str, files: &[(&str, &[u8])]) -> PathBuf {
        let dir = self.sources.join(label);
        std::fs::create_dir_all(&dir).unwrap();
        for (rel, bytes) in files {
            Fx::put(&dir, rel, bytes);
        }
        dir
    }

    pub fn request(&self, skills: &[(&str, &Path)], holder: Holder) -> AcquireRequest {
        let mut session = SessionRequest::with_prompt("session text");
        session.skills = skills
            .iter()
            .map(|(name, source)| SkillInput {
                name: (*name).to_string(),
                source: source.to_path_buf(),
            })
            .collect();
        AcquireRequest::new(&self.ws, session, holder)
    }

    pub fn try_acquire_with(
        &self,
        provider: &dyn Provider,
        skills: &[(&str, &Path)],
        holder: Holder,
    ) -> std::result::Result<AcquireReceipt, Error> {
        self.projector
            .acquire(provider, &self.request(skills, holder))
    }

    pub fn acquire(&self, skills: &[(&str, &Path)]) -> AcquireReceipt {
        self.try_acquire_with(&CODEX_LIKE, skills, me()).unwrap()
    }

    pub fn acquire_as(&self, skills: &[(&str, &Path)], holder: Holder) -> AcquireReceipt {
        self.try_acquire_with(&CODEX_LIKE, skills, holder).unwrap()
    }

    pub fn release(&self, token: &str) -> projectfile_core::projector::ReleaseReceipt {
        self.projector.release(token).unwrap()
    }

    /// Files left in the state directory other than lock files, ledger journals recording
    /// nothing, kept bytes and empty folders.
    pub fn state_files(&self) -> Vec<String> {
        let journal = format!("/{}", projectfile_core::testing::journal::JOURNAL_FILE);
        tree(&self.state)
            .into_iter()
            .filter(|(p, n)| match n {
                Node::File(bytes, _) if p.ends_with(&journal) => {
                    !projectfile_core::testing::journal::records_nothing(bytes)
                }
                Node::File(..) => {
                    !p.ends_with("/lock")
                        && !p.ends_with(projectfile_core::testing::journal::SLOTS_FILE)
                        && !p.contains("/kept/")
                        && !p.starts_with("paths/")
                }
                _ => false,
            })
            .map(|(p, _)| p)
            .collect()
    }

    pub fn assert_no_state(&self) {
        assert!(
            self.state_files().is_empty(),
            "state leftovers: {:?}",
            self.state_files()
        );
    }
}

pub fn me() -> Holder {
    Holder::current_process().unwrap()
}

/// A `sleep` child holding leases until killed.
pub struct Sleeper(pub Child);

impl Sleeper {
    pub fn spawn() -> Sleeper {
        Sleeper(Command::new("sleep").arg("3600").spawn().unwrap())
    }
    pub fn holder(&self) -> Holder {
        Holder::process(self.0.id()).unwrap()
    }
    pub fn kill9(mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The project's own skill folder: nested dirs, odd modes, a symlink, bytes that are not UTF-8.
pub fn write_project_review(fx: &Fx) {
    fx.write(
        ".agents/skills/review/SKILL.md",
        b"---\nname: review\n---\nproject's own\n",
    );
    fx.write(
        ".agents/skills/review/refs/deep/notes.txt",
        b"\xff\xfe not utf8 \0\n",
    );
    fx.write(".agents/skills/review/run.sh", b"#!/bin/sh\necho hi\n");
    std::fs::set_permissions(
        fx.ws.join(".agents/skills/review/run.sh"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    std::fs::set_permissions(
        fx.ws.join(".agents/skills/review/refs/deep"),
        std::fs::Permissions::from_mode(0o701),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "refs/deep/notes.txt",
        fx.ws.join(".agents/skills/review/link"),
    )
    .unwrap();
}
