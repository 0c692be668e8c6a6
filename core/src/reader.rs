//! The reader role: the Builder and Run modes, the pure rule that picks a turn's mode, the reader
//! notice put in front of each read-only message (and taken off again exactly), the refusal hint
//! a read-only session repeats, and who may open a terminal.
//!
//! # Mode selection
//!
//! Trusted access (owner or editor) selects [`Mode::Builder`]; anyone else gets [`Mode::Run`]. A
//! pinned Run request or a read-only route (a Slack or WhatsApp channel with a read grant) can
//! downgrade a trusted caller's turn to Run, never promote a reader. Guest function calls always use
//! Run. The notice follows whether the *turn* is read-only, not who the caller is: a read-only
//! channel route gets the shared-channel wording.
//!
//! # The notice format
//!
//! [`wrap_message`] puts the rendered notice, byte for byte, in front of the message.
//! [`strip_notice`] removes one leading notice only when the text starts with exactly one of the
//! strings we render ([`Notice::render`] for the four variants, or the owner escape below); any
//! other text, including marker text a user typed anywhere, an altered notice or a notice after
//! leading whitespace, is returned unchanged. So `strip_notice(wrap_message(n, m)) == m` for every
//! message `m`, whatever it holds.
//!
//! An owner's message is normally unchanged ([`TurnMode::wrap`] returns it as is). Only when an
//! owner's message itself starts with a strippable notice does `wrap` put [`OWNER_ESCAPE`] in
//! front, so stripping gives the owner's text back instead of eating its first lines.
//!
//! Full idempotence (`strip(strip(x)) == strip(x)` for every `x`) cannot hold together with
//! `strip(wrap(m)) == m` for every `m`: take `m = wrap(m0)`, which a user can type; then
//! `strip(wrap(m)) = m = wrap(m0)` but `strip(m) = m0 != m`. We keep the exact round trip, and
//! idempotence holds for every text whose remainder after one strip does not itself start with a
//! verbatim notice (so stripping is idempotent on anything a host stores, unless the user typed
//! one of our notices verbatim at the very start). Hosts must strip each stored message exactly
//! once. A user who types the notice verbatim gains nothing: the only block they can forge is an
//! identical copy of the read-only notice, and any altered block is shown and sent as their text.

use serde::{Deserialize, Serialize};

/// The two session modes: the owner's full-tools Builder and the reader's read-only Run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Mode {
    /// The owner (or an editor): full tools, reads and writes the real project.
    Builder,
    /// A reader, a guest call, a pinned Run request or a read-only route: reads only.
    Run,
}

impl Mode {
    /// The stable lower-case name (`builder`, `run`), as used in directory names and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Builder => "builder",
            Mode::Run => "run",
        }
    }

    /// Parses the name [`Mode::as_str`] produces.
    pub fn from_name(name: &str) -> Option<Mode> {
        match name {
            "builder" => Some(Mode::Builder),
            "run" => Some(Mode::Run),
            _ => None,
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The caller's access level to the Crew or workflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// The owner.
    Owner,
    /// A trusted editor.
    Editor,
    /// Anyone else who may chat: a reader.
    Reader,
}

impl Access {
    /// Whether this access level is trusted (selects Builder).
    pub fn is_trusted(self) -> bool {
        matches!(self, Access::Owner | Access::Editor)
    }
}

/// How the turn reached us.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// The caller's own chat in the application.
    Chat,
    /// A shared channel (Slack, WhatsApp) whose grant is read-only.
    ReadOnlyChannel,
    /// A guest function call into the owner's Crew.
    GuestCall,
}

/// What the session belongs to; decides which suggestion tool the wording names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Product {
    /// A Crew chat: suggestions go through `submit_crew_suggestion`.
    Crew,
    /// A workflow run: suggestions go through `submit_workflow_suggestion`.
    Workflow,
}

impl Product {
    /// The bridge tool a read-only session offers changes through.
    pub fn suggestion_tool(self) -> &'static str {
        match self {
            Product::Crew => "submit_crew_suggestion",
            Product::Workflow => "submit_workflow_suggestion",
        }
    }
}

/// Which wording the notice and the refusal hint use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum NoticeKind {
    /// A reader, a guest call or a pinned Run request.
    Reader,
    /// A shared channel route with a read grant.
    SharedChannel,
}

/// The reader notice for one turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Notice {
    /// Which wording.
    pub kind: NoticeKind,
    /// Which product the session belongs to.
    pub product: Product,
}

/// Everything the mode rule looks at for one turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TurnRequest {
    /// The caller's access level.
    pub access: Access,
    /// The caller asked for Run explicitly (an owner trying the reader experience).
    pub pinned_run: bool,
    /// How the turn arrived.
    pub route: Route,
    /// What the session belongs to.
    pub product: Product,
}

/// The outcome of [`select_mode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TurnMode {
    /// The session mode (prompts, skills, runtime identity and sandbox follow it).
    pub mode: Mode,
    /// Whether the turn is read-only (write grants are dropped, the notice is added).
    pub read_only: bool,
    /// The notice to put in front of the message, `None` for an owner's read-write turn.
    pub notice: Option<Notice>,
}

impl TurnMode {
    /// The message as it is sent and stored for this turn: behind the notice when the turn is
    /// read-only; unchanged otherwise (except the [`OWNER_ESCAPE`] case described in the module
    /// docs). [`strip_notice`] always gives `message` back.
    pub fn wrap(&self, message: &str) -> String {
        match self.notice {
            Some(notice) => wrap_message(notice, message),
            None => wrap_unmarked(message),
        }
    }
}

/// The pure mode rule: trusted access selects; a pinned Run request or a read-only route can
/// downgrade a trusted caller's turn, never promote a reader; guest calls always use Run.
pub fn select_mode(request: TurnRequest) -> TurnMode {
    let kind = match request.route {
        Route::ReadOnlyChannel => NoticeKind::SharedChannel,
        Route::Chat | Route::GuestCall => NoticeKind::Reader,
    };
    let builder =
        request.access.is_trusted() && !request.pinned_run && matches!(request.route, Route::Chat);
    if builder {
        TurnMode {
            mode: Mode::Builder,
            read_only: false,
            notice: None,
        }
    } else {
        TurnMode {
            mode: Mode::Run,
            read_only: true,
            notice: Some(Notice {
                kind,
                product: request.product,
            }),
        }
    }
}

/// Whether a caller with `access` may open the native terminal of a session. Typing in the
/// terminal skips the reader notice, so read-only access gets no terminal (the host answers 403 on
/// every terminal route); owners and editors keep it.
pub fn terminal_allowed(access: Access) -> bool {
    access.is_trusted()
}

/// Put in front of an owner's message only when that message itself starts with a strippable
/// notice, so [`strip_notice`] gives the owner's text back.
pub const OWNER_ESCAPE: &str = "<session-mode role=\"owner\"></session-mode>\n\n";

const READER_CREW: &str = concat!(
    "<session-mode role=\"reader\">\n",
    "This session is read-only: you are answering a reader of this Crew. Do not create, change, ",
    "rename or delete files, and do not run commands that change the project. When the user asks ",
    "for a change, describe it and offer to send it to the Crew's owner with ",
    "submit_crew_suggestion.",
    "\n</session-mode>\n\n",
);
const READER_WORKFLOW: &str = concat!(
    "<session-mode role=\"reader\">\n",
    "This session is read-only: you are answering a reader of this workflow. Do not create, ",
    "change, rename or delete files, and do not run commands that change the workflow. When the ",
    "user asks for a change, describe it and offer to send it to the workflow's owner with ",
    "submit_workflow_suggestion.",
    "\n</session-mode>\n\n",
);
const CHANNEL_CREW: &str = concat!(
    "<session-mode role=\"reader\" route=\"shared-channel\">\n",
    "This session is read-only: this message comes from a shared channel with read access to ",
    "this Crew. Do not create, change, rename or delete files, and do not run commands that ",
    "change the project. When someone in the channel asks for a change, describe it and offer to ",
    "send it to the Crew's owner with submit_crew_suggestion.",
    "\n</session-mode>\n\n",
);
const CHANNEL_WORKFLOW: &str = concat!(
    "<session-mode role=\"reader\" route=\"shared-channel\">\n",
    "This session is read-only: this message comes from a shared channel with read access to ",
    "this workflow. Do not create, change, rename or delete files, and do not run commands that ",
    "change the workflow. When someone in the channel asks for a change, describe it and offer ",
    "to send it to the workflow's owner with submit_workflow_suggestion.",
    "\n</session-mode>\n\n",
);

/// Every exact prefix [`strip_notice`] removes.
const STRIPPABLE: [&str; 5] = [
    READER_CREW,
    READER_WORKFLOW,
    CHANNEL_CREW,
    CHANNEL_WORKFLOW,
    OWNER_ESCAPE,
];

impl Notice {
    /// The notice block exactly as it is put in front of a message (ending in a blank line).
    pub fn render(self) -> &'static str {
        match (self.kind, self.product) {
            (NoticeKind::Reader, Product::Crew) => READER_CREW,
            (NoticeKind::Reader, Product::Workflow) => READER_WORKFLOW,
            (NoticeKind::SharedChannel, Product::Crew) => CHANNEL_CREW,
            (NoticeKind::SharedChannel, Product::Workflow) => CHANNEL_WORKFLOW,
        }
    }

    /// Every notice variant, for hosts and tests.
    pub fn all() -> [Notice; 4] {
        [
            (NoticeKind::Reader, Product::Crew),
            (NoticeKind::Reader, Product::Workflow),
            (NoticeKind::SharedChannel, Product::Crew),
            (NoticeKind::SharedChannel, Product::Workflow),
        ]
        .map(|(kind, product)| Notice { kind, product })
    }
}

/// The notice in front of the message, byte for byte: `notice.render() + message`.
pub fn wrap_message(notice: Notice, message: &str) -> String {
    let mut out = String::with_capacity(notice.render().len() + message.len());
    out.push_str(notice.render());
    out.push_str(message);
    out
}

/// An unmarked (owner) message: unchanged, unless it starts with something [`strip_notice`]
/// would remove, in which case [`OWNER_ESCAPE`] goes in front so stripping gives it back.
pub fn wrap_unmarked(message: &str) -> String {
    if leading_notice(message).is_some() {
        let mut out = String::with_capacity(OWNER_ESCAPE.len() + message.len());
        out.push_str(OWNER_ESCAPE);
        out.push_str(message);
        out
    } else {
        message.to_string()
    }
}

/// The length of the exact notice (or owner escape) `text` starts with, if any.
fn leading_notice(text: &str) -> Option<usize> {
    STRIPPABLE
        .iter()
        .find(|notice| text.starts_with(*notice))
        .map(|notice| notice.len())
}

/// Whether `text` starts with a notice (or owner escape) exactly as we render it.
pub fn has_notice(text: &str) -> bool {
    leading_notice(text).is_some()
}

/// Removes one notice from the start of `text`, only when it is exactly one we render; any other
/// text is returned unchanged. Apply it once to each stored message (see the module docs).
pub fn strip_notice(text: &str) -> String {
    match leading_notice(text) {
        Some(len) => text[len..].to_string(),
        None => text.to_string(),
    }
}

/// The sentence a read-only session repeats when it refuses a write, a mutating tool it was never
/// given, or a shell command the sandbox blocked.
pub fn refusal_hint(notice: Notice) -> &'static str {
    match (notice.kind, notice.product) {
        (NoticeKind::Reader, Product::Crew) => {
            "This session is read-only, so the change was not made; offer it to the Crew's owner \
             with submit_crew_suggestion instead."
        }
        (NoticeKind::Reader, Product::Workflow) => {
            "This session is read-only, so the change was not made; offer it to the workflow's \
             owner with submit_workflow_suggestion instead."
        }
        (NoticeKind::SharedChannel, Product::Crew) => {
            "This shared channel has read-only access, so the change was not made; offer it to \
             the Crew's owner with submit_crew_suggestion instead."
        }
        (NoticeKind::SharedChannel, Product::Workflow) => {
            "This shared channel has read-only access, so the change was not made; offer it to \
             the workflow's owner with submit_workflow_suggestion instead."
        }
    }
}
