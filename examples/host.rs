//! A minimal host in Rust: acquire a Codex session on a temporary workspace, print the receipt,
//! run `cat AGENTS.md` there as the "CLI" (with the plan's launch arguments and environment),
//! and release.
//!
//! ```sh
//! cargo run --example host
//! ```
//!
//! A real host keeps its state directory somewhere durable (not a temporary one), and holds the
//! [`Lease`](projectfile::host::Lease) for as long as the CLI runs: dropping it releases.

use projectfile::host::{Host, SessionBuilder};

/// Runs the example; `tests/host_examples.rs` calls it too.
#[allow(clippy::disallowed_methods)] // it plays the user, setting up their project folder
pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let workspace = scratch.path().join("workspace");
    std::fs::create_dir(&workspace)?;
    std::fs::write(workspace.join("AGENTS.md"), "# House rules\n\nUse tabs.\n")?;

    let host = Host::new(scratch.path().join("state"));
    let mut lease =
        host.acquire(SessionBuilder::new("codex", &workspace).prompt("Answer in one sentence."))?;
    println!("{}", serde_json::to_string_pretty(lease.receipt())?);

    let output = lease.command("cat", ["AGENTS.md"]).output()?;
    if !output.status.success() {
        return Err(format!("cat AGENTS.md failed: {}", output.status).into());
    }
    print!("{}", String::from_utf8_lossy(&output.stdout));

    let released = lease.release()?;
    println!("{}", serde_json::to_string_pretty(&released)?);
    let restored = std::fs::read_to_string(workspace.join("AGENTS.md"))?;
    if restored != "# House rules\n\nUse tabs.\n" {
        return Err(format!("AGENTS.md was not restored: {restored:?}").into());
    }
    Ok(())
}
