//! The shared conformance suite for Claude Code, run twice: as a binary that reads AGENTS.md
//! (2.1.284, the AGENTS.md block) and as one that does not (2.1.233, the private file passed with
//! `--append-system-prompt-file`); each check its capabilities and plan make apply, and
//! `facts_are_recorded` (a `harness = false` target run by the suite's own harness).

use projectfile_claude::Claude;
use projectfile_conformance::Subject;
use projectfile_provider::{Probes, VersionProbe};

fn known(version: &str) -> Probes {
    Probes {
        cli_version: VersionProbe::Known {
            version: version.to_string(),
            binary: None,
        },
    }
}

projectfile_conformance::conformance_suite! {
    reads_agents_md => Subject::new(Claude).with_probes(known("2.1.284")),
    old_binary => Subject::new(Claude).with_probes(known("2.1.233")),
}
