//! The shared conformance suite for Codex: every check its capabilities and plan make apply, and
//! `facts_are_recorded` (a `harness = false` target run by the suite's own harness).

projectfile_conformance::conformance_suite!(projectfile_codex::Codex);
