//! The delivery verdict: given where a plan put the session text ([`SessionTextCarrier`]) and the
//! destination as it stands after projection, does the CLI show that text to the model? Answered
//! by the provider's own [`DiscoveryProfile`] through the engine of [`resolve_as`](super::resolve_as), the same code as
//! `projectfile resolve --as`, so a verdict never disagrees with what `resolve` reports.
//!
//! - A file carrier (a block, an owned file) is **delivered** when the resolution keeps the whole
//!   session text. Otherwise the verdict says why: cut by the CLI's byte budget (with the budget
//!   that would be needed, and the launch arguments that raise it when the profile declares
//!   them), shadowed by another file (named), loaded only on demand, dropped for another reason
//!   (too large, unreadable, not UTF-8), the block not found in its file, or the file not read at
//!   all by this CLI (this version, from this working directory).
//! - A launch argument is delivered: the CLI reads the private file named on its command line.
//!   So is a private file named through the environment, unless the profile's budget is one the
//!   whole prompt must fit ([`DiscoveryProfile::budget_all_or_nothing`]: Copilot sends nothing
//!   over its limit): then the project's instruction files and the private file together must
//!   fit it.
//! - Not projected is not delivered, with the provider's reason.
//!
//! [`delivery_with_remedy`] goes one step further, as `acquire` does: a budget cut that the
//! profile's own launch arguments or environment fix is answered by them (in the verdict's
//! `launch_args` and `env`, for the host to pass) and judged again under the raised budget, so the
//! verdict says delivered only when the profile, with that budget, keeps the whole text.
//!
//! Pure over a [`GuidanceFs`]: nothing is written, nothing outside the trait is read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::fs::GuidanceFs;
use super::model::{GuidanceRequest, GuidanceResolution, GuidanceScope, OmissionReason};
use super::paths::join;
use super::resolve::{Collected, collect_as};
use crate::plan::SessionTextCarrier;
use projectfile_provider::discovery::{DiscoveryProfile, budget_env, budget_launch_args};

/// Where the CLI runs and where the session text went.
#[derive(Clone, Copy, Debug)]
pub struct DeliveryQuery<'a> {
    /// The destination root after projection (the workspace, or a private runtime), the root
    /// the carrier's relative path is joined to.
    pub root: &'a str,
    /// The directory the CLI is started in (usually `root`).
    pub working_dir: &'a str,
    /// The home directory the CLI sees, for user-scope files; `None`: no user scope.
    pub home_dir: Option<&'a str>,
    /// The namespace of our session blocks.
    pub namespace: &'a str,
    /// Where the plan put the session text.
    pub carrier: &'a SessionTextCarrier,
    /// The size of the carrier's private file, when the carrier is one: what it adds to a budget
    /// the whole prompt must fit.
    pub private_bytes: u64,
}

/// Why a route does not deliver the session text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Undelivered {
    /// The CLI's byte budget cuts the text (whole or in part). `needed_bytes` is the budget under
    /// which all of it would be read.
    BudgetTruncated {
        /// The budget in force.
        budget_bytes: u64,
        /// The smallest budget that delivers the whole text.
        needed_bytes: u64,
    },
    /// The file is not read because another takes its place.
    Shadowed {
        /// The file read instead, or whose presence makes the CLI skip this one.
        by: String,
    },
    /// The file is read only when the task touches its folder or paths: not at start.
    OnDemand,
    /// The file was found but dropped (`file_too_large`, `unreadable`, `not_utf8`,
    /// `malformed_session_block`).
    Dropped {
        /// The resolver's reason.
        omission: OmissionReason,
    },
    /// The file is read, but holds no well-formed session block.
    BlockMissing,
    /// This CLI (this version, from this working directory) does not read the file at all.
    NotRead,
    /// The file the text goes into whole was edited by the user and left as they left it: it
    /// does not hold the session's content.
    EditedByUser,
    /// The provider did not project the text; the host must deliver it another way.
    NotProjected {
        /// The provider's reason.
        why: String,
    },
}

/// The answer for one route.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeliveryVerdict {
    /// The route: `block`, `owned_file`, `launch_argument`, `environment` or `not_projected`
    /// (the carrier's `via`).
    pub via: String,
    /// The file carrying the text (joined to the root), or the private file; absent when not
    /// projected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The whole session text reaches the model at start.
    pub delivered: bool,
    /// Why not, when not delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undelivered: Option<Undelivered>,
    /// Launch arguments that would make the route deliver (the profile's
    /// `budget_launch_args` for the bytes needed); empty when none can, or when they are
    /// already applied (then they are in `launch_args`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remedy_args: Vec<String>,
    /// Launch arguments the route delivers with, added to the session's launch arguments
    /// ([`delivery_with_remedy`]: Codex's raised `project_doc_max_bytes`); empty when none are
    /// needed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launch_args: Vec<String>,
    /// Environment variables that would make the route deliver (the profile's `budget_env` for
    /// the bytes needed); empty when none can, or when they are already applied (then they are
    /// in `env`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub remedy_env: BTreeMap<String, String>,
    /// Environment variables the route delivers with, added to the session's environment
    /// ([`delivery_with_remedy`]: Copilot's raised `COPILOT_PROVIDER_MAX_PROMPT_TOKENS`); empty
    /// when none are needed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// One sentence: why the route does not deliver, or how it delivers when it takes launch
    /// arguments to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl DeliveryVerdict {
    fn delivered(via: &str, path: Option<String>) -> Self {
        DeliveryVerdict {
            via: via.to_string(),
            path,
            delivered: true,
            undelivered: None,
            remedy_args: Vec::new(),
            launch_args: Vec::new(),
            remedy_env: BTreeMap::new(),
            env: BTreeMap::new(),
            note: None,
        }
    }

    /// The verdict for a route that does not deliver, for `why`.
    pub fn undelivered(via: &str, path: Option<String>, why: Undelivered) -> Self {
        DeliveryVerdict {
            via: via.to_string(),
            path,
            delivered: false,
            note: Some(why.describe()),
            undelivered: Some(why),
            remedy_args: Vec::new(),
            launch_args: Vec::new(),
            remedy_env: BTreeMap::new(),
            env: BTreeMap::new(),
        }
    }

    /// The profile's launch arguments and environment that raise its budget to `needed` bytes,
    /// as the remedy; the note says so when the profile has none.
    fn add_remedy(&mut self, profile: &DiscoveryProfile, needed: u64) {
        self.remedy_args = budget_launch_args(profile, needed).unwrap_or_default();
        self.remedy_env = budget_env(profile, needed)
            .unwrap_or_default()
            .into_iter()
            .collect();
        if self.remedy_args.is_empty() && self.remedy_env.is_empty() {
            let cut = self.note.take().unwrap_or_default();
            self.note = Some(format!("{cut}; nothing raises this CLI's budget"));
        }
    }

    /// The remedy, as one text: the launch arguments, then the environment.
    fn remedy_text(&self) -> String {
        let mut parts = self.remedy_args.clone();
        parts.extend(self.remedy_env.iter().map(|(k, v)| format!("{k}={v}")));
        parts.join(" ")
    }
}

impl Undelivered {
    /// Why the session text does not reach the model, in one sentence (no path: the verdict
    /// names the file).
    pub fn describe(&self) -> String {
        match self {
            Undelivered::BudgetTruncated {
                budget_bytes,
                needed_bytes,
            } => format!(
                "the CLI reads {budget_bytes} bytes of instruction files and the session text ends at byte {needed_bytes}, so it is cut"
            ),
            Undelivered::Shadowed { by } => {
                format!("the CLI does not read this file because of {by}")
            }
            Undelivered::OnDemand => {
                "the CLI reads this file only when the task touches its folder, not at start"
                    .to_string()
            }
            Undelivered::Dropped { omission } => {
                format!("the CLI drops this file ({omission})")
            }
            Undelivered::BlockMissing => "the file holds no well-formed session block".to_string(),
            Undelivered::NotRead => {
                "this CLI (this version, started in the workspace) does not read this file"
                    .to_string()
            }
            Undelivered::EditedByUser => {
                "the file was edited and left as the user left it: it does not hold this session's content"
                    .to_string()
            }
            Undelivered::NotProjected { why } => {
                format!("the provider did not project the session text: {why}")
            }
        }
    }
}

/// Answers whether the session text reaches the model through `query.carrier`, by `profile`.
///
/// Never fails: what could not be read shows up as a reason.
pub fn delivery_verdict(
    fs: &dyn GuidanceFs,
    profile: &DiscoveryProfile,
    query: &DeliveryQuery<'_>,
) -> DeliveryVerdict {
    route_verdict(fs, profile, query, false)
}

/// [`delivery_verdict`], with the remedy applied: when the budget cuts the text and the profile
/// declares the launch arguments that raise it, the route is judged again under the raised
/// budget; if that delivers, the verdict is delivered, its `launch_args` hold the arguments (the
/// host must pass them) and its `note` says why. Otherwise the first verdict stands, its
/// `remedy_args` (if any) saying what was tried.
///
/// The files are read once, whatever the budgets judged: the profile's sources are collected
/// before any budget, and each budget (the profile's, none for the bytes needed, the raised one)
/// is applied to that one reading, by the rule [`resolve_as`](super::resolve_as) applies.
pub fn delivery_with_remedy(
    fs: &dyn GuidanceFs,
    profile: &DiscoveryProfile,
    query: &DeliveryQuery<'_>,
) -> DeliveryVerdict {
    route_verdict(fs, profile, query, true)
}

fn route_verdict(
    fs: &dyn GuidanceFs,
    profile: &DiscoveryProfile,
    query: &DeliveryQuery<'_>,
    remedy: bool,
) -> DeliveryVerdict {
    let (via, path, block) = match query.carrier {
        SessionTextCarrier::Block { path } => ("block", path, true),
        SessionTextCarrier::OwnedFile { path } => ("owned_file", path, false),
        SessionTextCarrier::LaunchArgument { private_file } => {
            return DeliveryVerdict::delivered("launch_argument", Some(private_file.clone()));
        }
        SessionTextCarrier::Environment { private_file, .. } => {
            return environment_verdict(fs, profile, query, private_file, remedy);
        }
        SessionTextCarrier::NotProjected { reason } => {
            return DeliveryVerdict::undelivered(
                "not_projected",
                None,
                Undelivered::NotProjected {
                    why: reason.clone(),
                },
            );
        }
    };
    let file = join(query.root, path.as_str());
    let profile = without_subtree_unless_below(profile, query.working_dir, &file);
    let collected = collect_as(fs, &profile, &request_for(query));
    let route = Route {
        collected: &collected,
        profile: &profile,
        via,
        file: &file,
        block,
    };
    let verdict = route.judge(collected.budget());
    if !remedy {
        return verdict;
    }
    let Some(Undelivered::BudgetTruncated {
        budget_bytes,
        needed_bytes,
    }) = verdict.undelivered
    else {
        return verdict;
    };
    if verdict.remedy_args.is_empty() && verdict.remedy_env.is_empty() {
        return verdict;
    }
    let mut again = route.judge(needed_bytes);
    if !again.delivered {
        return verdict;
    }
    raised(&mut again, verdict, budget_bytes, needed_bytes);
    again
}

/// Moves `before`'s remedy into `after`, a verdict judged under the raised budget, saying so.
fn raised(after: &mut DeliveryVerdict, before: DeliveryVerdict, budget: u64, needed: u64) {
    let with = match (before.remedy_args.is_empty(), before.remedy_env.is_empty()) {
        (false, true) => format!(
            "the launch arguments `{}`, which raise",
            before.remedy_args.join(" ")
        ),
        (true, false) => format!("the environment `{}`, which raises", before.remedy_text()),
        _ => format!(
            "the launch arguments and environment `{}`, which raise",
            before.remedy_text()
        ),
    };
    after.note = Some(format!(
        "the CLI reads {budget} bytes of instruction files by default and the session text ends at byte {needed}: delivered with {with} that budget"
    ));
    after.launch_args = before.remedy_args;
    after.env = before.remedy_env;
}

/// The verdict for a private file the CLI finds through the environment: delivered, unless the
/// profile's budget is one the whole prompt must fit and the project's instruction files with
/// the private file do not (then nothing at all reaches the model), when the remedy, if the
/// profile has one, raises it.
fn environment_verdict(
    fs: &dyn GuidanceFs,
    profile: &DiscoveryProfile,
    query: &DeliveryQuery<'_>,
    private_file: &str,
    remedy: bool,
) -> DeliveryVerdict {
    let path = Some(private_file.to_string());
    let budget = match profile.budget_bytes {
        Some(budget) if profile.budget_all_or_nothing => budget,
        _ => return DeliveryVerdict::delivered("environment", path),
    };
    let mut profile = profile.clone();
    profile.include_subtree = false;
    profile.on_demand_subtree = false;
    let collected = collect_as(fs, &profile, &request_for(query));
    let project: u64 = collected
        .outline(u64::MAX)
        .sources
        .iter()
        .filter(|s| !(profile.budget_excludes_user && s.scope == GuidanceScope::User))
        .map(|s| s.bytes)
        .sum();
    let needed = project.saturating_add(query.private_bytes);
    if needed <= budget {
        return DeliveryVerdict::delivered("environment", path);
    }
    let mut verdict = DeliveryVerdict::undelivered(
        "environment",
        path.clone(),
        Undelivered::BudgetTruncated {
            budget_bytes: budget,
            needed_bytes: needed,
        },
    );
    verdict.add_remedy(&profile, needed);
    if verdict.remedy_args.is_empty() && verdict.remedy_env.is_empty() {
        return verdict;
    }
    if !remedy {
        return verdict;
    }
    let mut again = DeliveryVerdict::delivered("environment", path);
    raised(&mut again, verdict, budget, needed);
    again
}

fn request_for(query: &DeliveryQuery<'_>) -> GuidanceRequest {
    // A profile without a budget of its own belongs to a CLI that loads everything it finds.
    let request = GuidanceRequest::new(query.root)
        .with_max_bytes(u64::MAX)
        .with_working_dir(query.working_dir)
        .with_session_namespace(query.namespace);
    match query.home_dir {
        Some(home) => request.with_home_dir(home),
        None => request.with_user_scope(false),
    }
}

/// Whether `source_path` is the text carried by `file` (its session block, or the file itself).
fn is_target(source_path: &str, file: &str, block: bool) -> bool {
    if !block {
        return source_path == file;
    }
    source_path
        .strip_prefix(file)
        .is_some_and(|rest| rest == "#session" || rest.starts_with("#session-"))
}

/// `profile` without its scan of the subtree below the working directory when `file` is not in
/// that subtree: files found there are read after the working directory's (or only on demand),
/// so they change nothing about `file`, and a start is spared a walk of the whole project.
fn without_subtree_unless_below(
    profile: &DiscoveryProfile,
    working_dir: &str,
    file: &str,
) -> DiscoveryProfile {
    let mut profile = profile.clone();
    let base = working_dir.trim_end_matches('/');
    let below = file.rsplit_once('/').is_some_and(|(dir, _)| {
        dir.strip_prefix(base)
            .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'))
    });
    if !below {
        profile.include_subtree = false;
        profile.on_demand_subtree = false;
    }
    profile
}

/// One file route, its profile's sources collected once.
struct Route<'r> {
    collected: &'r Collected,
    profile: &'r DiscoveryProfile,
    via: &'r str,
    file: &'r str,
    block: bool,
}

impl Route<'_> {
    /// The verdict with `budget` in force.
    fn judge(&self, budget: u64) -> DeliveryVerdict {
        let (file, block, via) = (self.file, self.block, self.via);
        let resolution = self.collected.outline(budget);
        let path = Some(file.to_string());
        let cut = resolution.omitted.iter().find(|o| {
            is_target(&o.path, file, block)
                && matches!(
                    o.reason,
                    OmissionReason::BudgetTruncated | OmissionReason::BudgetExhausted
                )
        });
        if cut.is_some() {
            let needed = self.needed_bytes();
            let mut verdict = DeliveryVerdict::undelivered(
                via,
                path,
                Undelivered::BudgetTruncated {
                    budget_bytes: resolution.budget_bytes,
                    needed_bytes: needed,
                },
            );
            verdict.add_remedy(self.profile, needed);
            return verdict;
        }
        let kept = resolution
            .sources
            .iter()
            .any(|s| is_target(&s.path, file, block));
        let duplicate = resolution
            .omitted
            .iter()
            .any(|o| is_target(&o.path, file, block) && o.reason == OmissionReason::DuplicateBody);
        if kept || duplicate {
            return DeliveryVerdict::delivered(via, path);
        }
        DeliveryVerdict::undelivered(via, path, why_absent(&resolution, file))
    }

    /// The smallest budget under which the whole target is read: the profile's budgeted bytes,
    /// in reading order, up to and including the target (all of them, for a budget the whole
    /// prompt must fit), with no budget in force.
    fn needed_bytes(&self) -> u64 {
        let resolution = self.collected.outline(u64::MAX);
        let mut running = 0u64;
        let mut needed = 0u64;
        for source in &resolution.sources {
            if !(self.profile.budget_excludes_user && source.scope == GuidanceScope::User) {
                running = running.saturating_add(source.bytes);
            }
            if is_target(&source.path, self.file, self.block) {
                needed = running;
            }
        }
        if self.profile.budget_all_or_nothing {
            return running;
        }
        needed
    }
}

/// Why a file's text is not among the sources, from what the resolution says about the file.
fn why_absent(resolution: &GuidanceResolution, file: &str) -> Undelivered {
    for omission in resolution.omitted.iter().filter(|o| o.path == file) {
        match omission.reason {
            OmissionReason::Shadowed => {
                return Undelivered::Shadowed {
                    by: omission.shadowed_by.clone().unwrap_or_default(),
                };
            }
            OmissionReason::OnDemand => return Undelivered::OnDemand,
            OmissionReason::BudgetTruncated
            | OmissionReason::BudgetExhausted
            | OmissionReason::DuplicateBody => {}
            other => return Undelivered::Dropped { omission: other },
        }
    }
    let file_read = resolution.sources.iter().any(|s| s.path == file)
        || resolution.omitted.iter().any(|o| o.path == file);
    if file_read {
        Undelivered::BlockMissing
    } else {
        Undelivered::NotRead
    }
}
