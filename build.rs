//! Link options of the `projectfile` binary.
//!
//! Release builds (`release`, and `profiling`, which inherits it) link the binaries as
//! position-dependent executables on Linux (`-no-pie`). A position-independent executable carries
//! about 2,800 relative relocations that the dynamic loader applies at every start, each write
//! making a private copy of a page of `.data.rel.ro`: about ten copy-on-write page faults and
//! the loader's work per process, measured as 0.08 ms of CPU per `acquire` + `release` pair (see
//! BENCHMARKS.md), for a command a host runs twice per session. What it gives up, the main
//! binary's own code at a random address, is weighed in docs/threat-model.md ("The binary's fixed
//! address"); the stack, heap, libc and every mapping are still placed at random. Debug builds
//! stay position-independent.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let release = std::env::var("PROFILE").is_ok_and(|profile| profile == "release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if release && linux {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
