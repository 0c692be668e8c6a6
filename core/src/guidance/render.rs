//! Projections of a resolution for prompts: one [`PromptFragment`] per source (so a context
//! manifest can show exactly which guidance reached the model, in which order), or one
//! path-labelled block for hosts that inject a single section.

use serde::{Deserialize, Serialize};

use super::model::{GuidanceResolution, OmissionReason};

/// The `source` every guidance fragment carries.
pub const FRAGMENT_SOURCE: &str = "workspace_guidance";

/// One prompt fragment: a stable id, where it comes from, and the text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PromptFragment {
    /// `guidance:<path>`.
    pub id: String,
    /// Always [`FRAGMENT_SOURCE`].
    pub source: String,
    /// `Guidance from <path> (<scope> scope):\n\n<body>`.
    pub body: String,
}

/// One fragment per kept source, in order.
pub fn prompt_fragments(resolution: &GuidanceResolution) -> Vec<PromptFragment> {
    resolution
        .sources
        .iter()
        .map(|entry| PromptFragment {
            id: format!("guidance:{}", entry.path),
            source: FRAGMENT_SOURCE.to_string(),
            body: format!(
                "Guidance from {} ({} scope):\n\n{}",
                entry.path, entry.scope, entry.body
            ),
        })
        .collect()
}

/// The sources as `## <path>\n\n<body>` sections joined by a blank line, followed by
/// `Not shown here, read them if the task touches their area: a, b` naming every source dropped
/// for budget (`budget_exhausted`). Empty when nothing was kept.
pub fn render_block(resolution: &GuidanceResolution) -> String {
    if resolution.sources.is_empty() {
        return String::new();
    }
    let mut parts: Vec<String> = resolution
        .sources
        .iter()
        .map(|entry| format!("## {}\n\n{}", entry.path, entry.body))
        .collect();
    let dropped: Vec<&str> = resolution
        .omitted
        .iter()
        .filter(|entry| entry.reason == OmissionReason::BudgetExhausted)
        .map(|entry| entry.path.as_str())
        .collect();
    if !dropped.is_empty() {
        parts.push(format!(
            "Not shown here, read them if the task touches their area: {}",
            dropped.join(", ")
        ));
    }
    parts.join("\n\n")
}
