//! The `projectfile` facade: re-exports [`projectfile_core`] and registers the providers enabled by
//! Cargo features (one feature per CLI; default: all).

pub use projectfile_core as core;
pub mod host;
pub mod receipts;
use projectfile_core::{Provider, ProviderExt};

/// Every provider compiled into this build, in a stable order.
#[allow(clippy::vec_init_then_push)]
pub fn providers() -> Vec<Box<dyn Provider>> {
    #[allow(unused_mut, clippy::vec_init_then_push)]
    let mut out: Vec<Box<dyn Provider>> = Vec::new();
    #[cfg(feature = "claude")]
    out.push(Box::new(projectfile_claude::Claude));
    #[cfg(feature = "codex")]
    out.push(Box::new(projectfile_codex::Codex));
    #[cfg(feature = "cursor")]
    out.push(Box::new(projectfile_cursor::Cursor));
    #[cfg(feature = "pi")]
    out.push(Box::new(projectfile_pi::Pi));
    #[cfg(feature = "muse")]
    out.push(Box::new(projectfile_muse::Muse));
    #[cfg(feature = "agy")]
    out.push(Box::new(projectfile_agy::Agy));
    #[cfg(feature = "gemini")]
    out.push(Box::new(projectfile_gemini::Gemini));
    #[cfg(feature = "qwen")]
    out.push(Box::new(projectfile_qwen::Qwen));
    #[cfg(feature = "opencode")]
    out.push(Box::new(projectfile_opencode::Opencode));
    #[cfg(feature = "copilot")]
    out.push(Box::new(projectfile_copilot::Copilot));
    out
}

/// The provider called `name`, if it is compiled into this build.
pub fn provider(name: &str) -> Option<Box<dyn Provider>> {
    providers().into_iter().find(|p| p.name() == name)
}
