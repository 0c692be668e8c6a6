//! The shared conformance suite for gemini: every check its capabilities and plan make apply,
//! and `facts_are_recorded` (a `harness = false` target run by the suite's own harness). Gemini
//! CLI reads commands only as TOML, so the sessions bring a TOML command.

use projectfile_conformance::Subject;
use projectfile_conformance::core::NamedFile;

projectfile_conformance::conformance_suite! {
    "" => Subject::new(projectfile_gemini::Gemini).with_command(NamedFile {
        name: "ship".into(),
        content: "description = \"Ship the change\"\nprompt = \"Run the release checklist for {{args}}.\"\n".into(),
    }),
}
