//! The delivery verdict of one acquire: whether the session text, where the plan put it, reaches
//! the model, judged by the provider's discovery profile (for the CLI version core probed) over
//! the destination as it stands after projection, with the remedy applied when the profile
//! declares one ([`crate::guidance::delivery_with_remedy`]).
//!
//! The CLI is taken to start in the destination root (as `run` and a host's `Lease::command`
//! start it) and to see the home directory `$HOME` names (user-scope files, and the user memory
//! file Claude Code does not count as the project's), the defaults of `resolve --as`.

use std::path::Path;

use crate::guidance::{DeliveryQuery, DeliveryVerdict, StdFs, delivery_with_remedy};
use crate::plan::SessionTextCarrier;
use crate::provider::{Probes, Provider};

/// The carrier a plan without one stands for: nothing says the text went anywhere.
fn unsaid() -> SessionTextCarrier {
    SessionTextCarrier::NotProjected {
        reason: "the provider's plan does not say where the session text went".to_string(),
    }
}

/// The verdict for `carrier` in the destination `root`; `private_dir` is the session's private
/// folder, where a launch-argument carrier's file lives (shown as its absolute path).
pub(super) fn judge(
    provider: &dyn Provider,
    probes: &Probes,
    root: &Path,
    namespace: &str,
    carrier: Option<&SessionTextCarrier>,
    private_dir: &Path,
) -> DeliveryVerdict {
    let unsaid = unsaid();
    let carrier = carrier.unwrap_or(&unsaid);
    let profile = provider.discovery_for(probes);
    let root_text = root.to_string_lossy();
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    let query = DeliveryQuery {
        root: &root_text,
        working_dir: &root_text,
        home_dir: home.as_deref(),
        namespace,
        carrier,
    };
    let mut verdict = delivery_with_remedy(&StdFs, &profile, &query);
    if let SessionTextCarrier::LaunchArgument { private_file } = carrier {
        verdict.path = Some(private_dir.join(private_file).display().to_string());
    }
    verdict
}
