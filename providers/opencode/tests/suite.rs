//! The shared conformance suite for opencode: every check its capabilities and plan make apply,
//! and `facts_are_recorded`, which fails until the facts its plan relies on are recorded with
//! their sources (a `harness = false` target run by the suite's own harness).

projectfile_conformance::conformance_suite!(projectfile_opencode::Opencode);
