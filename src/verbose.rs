//! `-v`/`--verbose`: one line per step on stderr, `projectfile: [elapsed] step: detail`, so a
//! person can see what a command did and how long it took. Built from the receipts after each
//! operation (the steps happen under the workspace lock, inside core), never on stdout, so
//! `--json` output stays one object.

use std::fmt::Display;
use std::path::Path;
use std::time::Instant;

use projectfile::core::holder::Holder;
use projectfile::core::projector::{
    AcquireReceipt, FileReceipt, ReleaseReceipt, StaleCleaned, StatusReport, StripReport, Warning,
};
use projectfile::core::{SessionTextCarrier, VersionProbe};

/// The verbose log: silent unless switched on.
pub struct Verbose {
    on: bool,
    start: Instant,
}

impl Verbose {
    /// A log that prints when `on`.
    pub fn new(on: bool) -> Verbose {
        Verbose {
            on,
            start: Instant::now(),
        }
    }

    /// One line: `projectfile: [1.2ms] step: detail`.
    pub fn say(&self, step: &str, detail: impl Display) {
        if self.on {
            let ms = self.start.elapsed().as_secs_f64() * 1000.0;
            crate::output::stderr(format_args!("projectfile: [{ms:.1}ms] {step}: {detail}"));
        }
    }

    /// Where records live and how markers are named.
    pub fn context(&self, state_dir: &Path, namespace: &str) {
        self.say(
            "state",
            format_args!("{} (namespace {namespace})", state_dir.display()),
        );
    }

    fn lock(&self, state_dir: &Path, workspace: &Path) {
        if !self.on {
            // The lock's path is the folder's key, a `stat`: not for a message nobody sees.
            return;
        }
        let lock = projectfile::core::Projector::lock_path(state_dir, workspace);
        self.say("lock", format_args!("took and released {}", lock.display()));
    }

    fn stale(&self, cleaned: &[StaleCleaned]) {
        if cleaned.is_empty() {
            self.say("stale", "nothing stale to clean");
        }
        for s in cleaned {
            self.say(
                "stale",
                format_args!("cleaned {} ({}): {}", s.token, s.provider, s.reason),
            );
        }
    }

    fn files(&self, files: &[FileReceipt]) {
        if files.is_empty() {
            self.say("write", "nothing written");
        }
        for f in files {
            self.say("write", format_args!("{} {} {}", f.action, f.kind, f.path));
        }
    }

    fn warnings(&self, warnings: &[Warning]) {
        for w in warnings {
            self.say("warning", format_args!("{}: {}", w.path, w.message));
        }
    }

    /// Before acquiring: what is asked.
    pub fn acquiring(&self, provider: &str, workspace: &Path, holder: &Holder) {
        self.say(
            "acquire",
            format_args!(
                "provider {provider}, workspace {}, held by {}",
                workspace.display(),
                holder.describe()
            ),
        );
    }

    /// After acquiring: each step, from the receipt.
    pub fn acquired(&self, state_dir: &Path, receipt: &AcquireReceipt) {
        match &receipt.probes.cli_version {
            VersionProbe::NotProbed => {}
            VersionProbe::Known { version, binary } => self.say(
                "probe",
                format_args!(
                    "CLI version {version}{}",
                    binary
                        .as_ref()
                        .map(|b| format!(" ({})", b.display()))
                        .unwrap_or_default()
                ),
            ),
            VersionProbe::Unreadable { binary, reason } => self.say(
                "probe",
                format_args!("{}: version unreadable: {reason}", binary.display()),
            ),
            VersionProbe::Missing { reason } => self.say("probe", reason),
        }
        self.lock(state_dir, &receipt.workspace);
        self.stale(&receipt.stale_cleaned);
        let carrier = match &receipt.session_text {
            Some(SessionTextCarrier::Block { path }) => {
                format!("session text in the block of {path}")
            }
            Some(SessionTextCarrier::OwnedFile { path }) => format!("session text in {path}"),
            Some(SessionTextCarrier::LaunchArgument { private_file }) => {
                format!("session text in private file {private_file}, passed as a launch argument")
            }
            Some(SessionTextCarrier::Environment { private_file, var }) => {
                format!("session text in private file {private_file}, found through {var}")
            }
            Some(SessionTextCarrier::NotProjected { reason }) => {
                format!("session text not projected: {reason}")
            }
            None => "the plan does not say where the session text goes".to_string(),
        };
        self.say("plan", carrier);
        for note in &receipt.notes {
            self.say("plan", note);
        }
        self.files(&receipt.files);
        let delivery = &receipt.delivery;
        let state = if delivery.delivered {
            "delivered"
        } else {
            "NOT delivered"
        };
        match &delivery.note {
            Some(note) => self.say("delivery", format_args!("{state}: {note}")),
            None => self.say("delivery", state),
        }
        for k in &receipt.kept {
            self.say(
                "kept",
                format_args!("{} at {} ({})", k.path, k.kept_at.display(), k.reason),
            );
        }
        self.warnings(&receipt.warnings);
        if !receipt.launch_args.is_empty() {
            self.say(
                "launch",
                format_args!("args {}", receipt.launch_args.join(" ")),
            );
        }
        for (key, value) in &receipt.env {
            self.say("launch", format_args!("env {key}={value}"));
        }
        self.say("lease", format_args!("{} acquired", receipt.token));
    }

    /// After releasing.
    pub fn released(&self, state_dir: &Path, receipt: &ReleaseReceipt) {
        match &receipt.workspace {
            Some(workspace) => self.lock(state_dir, workspace),
            None => self.say("release", "the token names no recorded workspace"),
        }
        self.stale(&receipt.stale_cleaned);
        self.files(&receipt.files);
        self.warnings(&receipt.warnings);
        self.say(
            "lease",
            format_args!(
                "{} {}",
                receipt.token,
                if receipt.released {
                    "released"
                } else {
                    "was not held (unknown or already released)"
                }
            ),
        );
    }

    /// After `status`.
    pub fn status(&self, state_dir: &Path, report: &StatusReport) {
        self.lock(state_dir, &report.workspace);
        self.say(
            "status",
            format_args!(
                "{} lease(s), {} entr(ies), {} stale",
                report.leases.len(),
                report.entries.len(),
                report.stale.len()
            ),
        );
    }

    /// After `strip-stale`.
    pub fn stripped(&self, state_dir: &Path, report: &StripReport) {
        self.lock(state_dir, &report.workspace);
        self.stale(&report.stale_cleaned);
        self.files(&report.files);
        self.warnings(&report.warnings);
    }
}
