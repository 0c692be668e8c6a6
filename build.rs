//! Link options of the `projectfile` binary, for release builds (`release`, and `profiling`,
//! which inherits it) on Linux with glibc. Debug builds, and other targets, get none.
//!
//! - `-no-pie`: a position-dependent executable. A position-independent one carries about 2,800
//!   relative relocations that the dynamic loader applies at every start, each write making a
//!   private copy of a page of `.data.rel.ro`: about ten copy-on-write page faults and the
//!   loader's work per process, for a command a host runs twice per session (BENCHMARKS.md).
//!   What it gives up, the binary's own code at a random address, is weighed in
//!   docs/threat-model.md ("The binary's fixed address"); the stack, heap, libc and every other
//!   mapping are still placed at random.
//! - `--symbol-ordering-file=link/hot-functions.txt` (x86-64 with Rust's own linker, lld, the
//!   default there): the functions `acquire` and `release` run are placed side by side, so a
//!   process maps about a dozen windows of code instead of twenty-five (written by
//!   `cargo xtask layout`, which explains it). A name the build no longer has is skipped
//!   silently. Not passed when a linker is configured: another linker may not know the option.
//! - `PROJECTFILE_LINK_MAP=FILE` (set by `cargo xtask layout`): also write the link map there.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=link/hot-functions.txt");
    println!("cargo:rerun-if-env-changed=PROJECTFILE_LINK_MAP");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    // A static build links as static-pie, which -no-pie contradicts.
    let crt_static = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if var("PROFILE") != "release" || !linux_gnu || crt_static {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-no-pie");
    let default_linker = std::env::var_os("RUSTC_LINKER").is_none()
        && !["linker", "fuse-ld", "link-self-contained"]
            .iter()
            .any(|flag| var("CARGO_ENCODED_RUSTFLAGS").contains(flag));
    let order = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("link/hot-functions.txt");
    let x86_64 = var("CARGO_CFG_TARGET_ARCH") == "x86_64";
    if x86_64 && default_linker && order.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
    let map = var("PROJECTFILE_LINK_MAP");
    if !map.is_empty() {
        println!("cargo:rustc-link-arg-bins=-Wl,-Map={map}");
    }
}
