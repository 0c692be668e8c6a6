//! Projection into a runtime: providers plan into the runtime directory itself, while `project/`
//! resolves to the real folder with its own instruction files, which are never destinations.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::fs;

use projectfile_core::reader::Mode;
use projectfile_core::runtime::{PROJECT_LINK, Runtime, RuntimeKey, SessionId};

#[test]
fn providers_plan_into_the_runtime_and_project_resolves_to_the_real_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let real = base.join("crew");
    fs::create_dir_all(real.join(".claude/skills/own")).unwrap();
    fs::write(real.join("AGENTS.md"), "# The crew's own instructions\n").unwrap();
    fs::write(real.join(".claude/skills/own/SKILL.md"), "own skill").unwrap();

    let key = RuntimeKey::new(
        "reader-9",
        "crew-7",
        SessionId::parse("work:project:7:review").unwrap(),
        "claude",
        Mode::Run,
    )
    .unwrap();
    let runtime = Runtime::open(&base.join("runtimes"), key).unwrap();
    runtime.link_project(&real).unwrap();

    // The destination root is the runtime itself, outside the real project.
    assert_eq!(runtime.project_root(), runtime.dir());
    assert!(!runtime.project_root().starts_with(&real));
    assert!(!real.starts_with(runtime.project_root()));
    // Nothing was projected into the runtime yet; the real files are not in it.
    assert!(!runtime.project_root().join("AGENTS.md").exists());
    assert!(!runtime.project_root().join(".claude").exists());

    // project/ resolves to the real folder and shows its files.
    let link = runtime.project_root().join(PROJECT_LINK);
    assert_eq!(link, runtime.project_link());
    assert_eq!(link.canonicalize().unwrap(), real);
    assert_eq!(
        fs::read_to_string(link.join("AGENTS.md")).unwrap(),
        "# The crew's own instructions\n"
    );
    assert_eq!(
        fs::read_to_string(link.join(".claude/skills/own/SKILL.md")).unwrap(),
        "own skill"
    );
}
