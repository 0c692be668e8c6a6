//! xtask: project automation (`cargo xtask ci | conformance --provider X | bench | tidy`).

fn main() -> anyhow::Result<()> {
    Ok(())
}
