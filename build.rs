//! Link options of the `projectfile` binary, for release builds (`release`, and `profiling`,
//! which inherits it) on Linux with glibc. Debug builds, and other targets, get none.
//!
//! - A static executable (`-static`), when the C toolchain has glibc's static archives (`cc
//!   -print-file-name=libc.a` names a file): no dynamic loader, no shared libc. A dynamically
//!   linked start maps libc, applies its relocations and binds each of the 120-odd libc symbols
//!   the binary uses by name, about 0.26 ms of CPU per process on the benchmark machine
//!   (BENCHMARKS.md), for a command a host runs twice per session. rustc links a static binary
//!   only with `-C target-feature=+crt-static`, which cargo cannot apply to a plain `cargo build`
//!   (the flag would reach the proc-macros too, which cannot be static); so this script does
//!   what that flag does at the link. rustc names the libraries of a dynamic link (`-lc`,
//!   `-lgcc_s`, ...); a folder of linker scripts under `OUT_DIR`, searched first, answers each
//!   name with its static archives (`libc.so` holding `INPUT(/.../libc.a)`, `libgcc_s.so` the
//!   unwinder's `libgcc_eh.a` and `libgcc.a`), and `-static` makes the executable static and
//!   position-dependent. What that gives up (libc at a fixed address, and
//!   the user database read without its shared modules) is weighed in docs/threat-model.md ("The
//!   binary's fixed address"). `PROJECTFILE_LINK=dynamic` keeps the dynamic link. A static link
//!   also sets `cfg(static_glibc)`, under which `src/start.rs` answers glibc's start-up question
//!   for the executable's folder itself.
//! - `-no-pie` (a dynamic link): a position-dependent executable. A position-independent one
//!   carries about 2,800 relative relocations that the dynamic loader applies at every start,
//!   each write making a private copy of a page of `.data.rel.ro`: about ten copy-on-write page
//!   faults and the loader's work per process.
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
    println!("cargo:rerun-if-env-changed=PROJECTFILE_LINK");
    println!("cargo::rustc-check-cfg=cfg(static_glibc)");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    // A static build links as static-pie, which -no-pie contradicts.
    let crt_static = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if var("PROFILE") != "release" || !linux_gnu || crt_static {
        return;
    }
    let default_linker = std::env::var_os("RUSTC_LINKER").is_none()
        && !["linker", "fuse-ld", "link-self-contained"]
            .iter()
            .any(|flag| var("CARGO_ENCODED_RUSTFLAGS").contains(flag));
    // The archives are the host compiler's: a cross build links dynamically.
    let native = var("TARGET") == var("HOST");
    let static_libraries = (default_linker && native && var("PROJECTFILE_LINK") != "dynamic")
        .then(|| static_libraries(std::path::Path::new(&var("OUT_DIR"))))
        .flatten();
    match static_libraries {
        Some(dir) => {
            println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
            println!("cargo:rustc-link-arg-bins=-static");
            println!("cargo:rustc-cfg=static_glibc");
        }
        None => println!("cargo:rustc-link-arg-bins=-no-pie"),
    }
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

/// The libraries rustc names for a dynamic link, each with the static archives that stand for it
/// (`libgcc_s`, the unwinder and its helpers: `libgcc_eh.a` and `libgcc.a`).
const STATIC_ARCHIVES: [(&str, &[&str]); 7] = [
    ("c", &["libc.a"]),
    ("gcc_s", &["libgcc_eh.a", "libgcc.a"]),
    ("util", &["libutil.a"]),
    ("rt", &["librt.a"]),
    ("pthread", &["libpthread.a"]),
    ("m", &["libm.a"]),
    ("dl", &["libdl.a"]),
];

/// `<out_dir>/static-link`, holding one linker script `lib<name>.so` per library of
/// [`STATIC_ARCHIVES`] that names its static archives, found by asking the C compiler rustc
/// links with; `None` (a dynamic link) when the compiler cannot be asked, has no `libc.a`, or a
/// script cannot be written. An archive the compiler does not have (glibc 2.34 and later keep the
/// thread, time and loader functions in `libc.a`) is left out of its script.
// Plain `std::fs`: a build script writes into cargo's `OUT_DIR`, this build's alone, and cannot
// depend on the crate it builds (whose `fsio` the lint points to).
#[allow(clippy::disallowed_methods)]
fn static_libraries(out_dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let archive = |name: &str| -> Option<std::path::PathBuf> {
        let out = std::process::Command::new("cc")
            .arg(format!("-print-file-name={name}"))
            .output()
            .ok()?;
        let path = std::path::PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
        // Not found, the compiler prints the bare name back.
        (out.status.success() && path.is_absolute() && path.is_file()).then_some(path)
    };
    archive("libc.a")?;
    let dir = out_dir.join("static-link");
    std::fs::create_dir_all(&dir).ok()?;
    for (library, archives) in STATIC_ARCHIVES {
        let mut script = format!("/* -l{library} of a static link (build.rs) */\n");
        for path in archives.iter().filter_map(|name| archive(name)) {
            let path = path.to_str()?;
            // A path a linker script cannot quote is not linked this way.
            if path.contains(['"', '\n']) {
                return None;
            }
            script.push_str(&format!("INPUT(\"{path}\")\n"));
        }
        std::fs::write(dir.join(format!("lib{library}.so")), script).ok()?;
    }
    Some(dir)
}
