//! The delivery verdict of one acquire: whether the session text, where the plan put it, reaches
//! the model, judged by the provider's discovery profile (for the CLI version core probed) over
//! the destination as it stands after projection, with the remedy applied when the profile
//! declares one ([`crate::guidance::delivery_with_remedy`]).
//!
//! The CLI is taken to start in the destination root (as `run` and a host's `Lease::command`
//! start it) and to see the home directory `$HOME` names (user-scope files, and the user memory
//! file Claude Code does not count as the project's), the defaults of `resolve --as`.

use std::path::Path;

use crate::guidance::{DeliveryQuery, DeliveryVerdict, GuidanceFs, delivery_with_remedy};
use crate::plan::SessionTextCarrier;
use crate::provider::{Probes, Provider};

/// The carrier a plan without one stands for: nothing says the text went anywhere.
fn unsaid() -> SessionTextCarrier {
    SessionTextCarrier::NotProjected {
        reason: "the provider's plan does not say where the session text went".to_string(),
    }
}

/// Where a session's text went: the destination `root`, our namespace, the plan's carrier, and
/// the session's private folder.
pub(super) struct Session<'a> {
    pub root: &'a Path,
    pub namespace: &'a str,
    pub carrier: Option<&'a SessionTextCarrier>,
    pub private_dir: &'a Path,
}

/// The verdict for `carrier` in the destination `root` as `fs` shows it (the real file system
/// after an acquire; the planned files over it for a dry run); `private_dir` is the session's
/// private folder, where a launch-argument carrier's file lives (shown as its absolute path).
pub(super) fn judge(
    fs: &dyn GuidanceFs,
    provider: &dyn Provider,
    probes: &Probes,
    session: Session<'_>,
) -> DeliveryVerdict {
    let Session {
        root,
        namespace,
        carrier,
        private_dir,
    } = session;
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
    let mut verdict = delivery_with_remedy(fs, &profile, &query);
    if let SessionTextCarrier::LaunchArgument { private_file } = carrier {
        verdict.path = Some(private_dir.join(private_file).display().to_string());
    }
    verdict
}
