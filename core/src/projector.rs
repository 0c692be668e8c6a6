//! The projector: applies plans under the workspace lock (acquire), takes them out (release), and
//! reports and cleans crash leftovers (status, strip-stale).

/// Applies plans.
pub struct Projector;
