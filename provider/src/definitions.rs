//! The neutral session definitions: a command, a subagent or a set of hooks that a host writes
//! once, read here and converted to the form each CLI reads (docs/session-definitions.md has the
//! format and the table per CLI).
//!
//! - A **command** is Markdown with optional front matter (`description`, `argument-hint`) whose
//!   body is the prompt, [`NEUTRAL_ARGS`] standing for what follows the command.
//!   [`command_toml`] makes the TOML form (`description`, `prompt`, `{{args}}`) of Gemini CLI and
//!   Qwen Code; the CLIs that take Markdown with `$ARGUMENTS` get the file as it is.
//! - A **subagent** is Markdown with front matter (`name`, `description`, optional `tools`,
//!   `model`) whose body is its system prompt. [`agent_markdown`] checks it and names it as the
//!   session does.
//! - **Hooks** are one JSON document `{"hooks": {EVENT: [{"command", "matcher"?, "timeout"?}]}}`
//!   with the neutral events of [`HookEvent`]. [`hooks_config`] converts them for one CLI
//!   ([`HookDialect`]); an event the CLI lacks is refused, naming the event and the CLI.
//!
//! Pure functions over the session's inputs: nothing here reads or writes a file.

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::front_matter::{end_of_front_matter, front_matter, indented, key_value};
use crate::provider::{HooksFormat, HooksInput, NamedFile};

/// What a neutral command's body writes for the arguments typed after the command.
pub const NEUTRAL_ARGS: &str = "$ARGUMENTS";

/// What Gemini CLI and Qwen Code replace with the arguments in a command's prompt.
pub const TOML_ARGS: &str = "{{args}}";

/// In a neutral hook's command, replaced by the path of the session's hook script as projected.
pub const HOOK_SCRIPT_PLACEHOLDER: &str = "{{hook_script}}";

/// The refusal of one named definition, saying nothing was written.
fn refuse(what: &str, name: &str, reason: impl std::fmt::Display) -> Error {
    Error::invalid(
        format!("{what} {name:?}"),
        format!("{reason}; nothing was written"),
    )
}

/// The value of `key` in a front matter, when given and not blank, less its surrounding blanks
/// (a block scalar's final line break included: a description is one label).
fn field<'f>(fields: &'f [(String, String)], key: &str) -> Option<&'f str> {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

/// A neutral command as a TOML command file: `description` (from the front matter, when given)
/// and `prompt` (the body, [`NEUTRAL_ARGS`] replaced by [`TOML_ARGS`]), with a final newline.
/// `argument-hint` has no place in that form and is left out.
pub fn command_toml(file: &NamedFile) -> String {
    let (fields, body) = front_matter(&file.content);
    let mut document = toml_edit::DocumentMut::new();
    if let Some(description) = field(&fields, "description") {
        document["description"] = toml_edit::value(description);
    }
    document["prompt"] = toml_edit::value(body.replace(NEUTRAL_ARGS, TOML_ARGS));
    document.to_string()
}

/// `text` as a TOML string value, quoted and escaped as TOML requires (for a `-c key=value`
/// override, say).
pub fn toml_string(text: &str) -> String {
    toml_edit::Value::from(text).to_string().trim().to_string()
}

/// A TOML document of string keys and values, one per line, with a final newline.
pub fn toml_document(pairs: &[(&str, &str)]) -> String {
    let mut document = toml_edit::DocumentMut::new();
    for (key, value) in pairs {
        document[*key] = toml_edit::value(*value);
    }
    document.to_string()
}

/// A neutral command as Markdown for a CLI that replaces [`TOML_ARGS`] only: the file with
/// [`NEUTRAL_ARGS`] replaced in its body (the front matter kept as written).
pub fn command_markdown_toml_args(file: &NamedFile) -> String {
    let (_, body) = front_matter(&file.content);
    let head = &file.content[..file.content.len() - body.len()];
    format!("{head}{}", body.replace(NEUTRAL_ARGS, TOML_ARGS))
}

/// Whether `text` is a TOML command file (a string `prompt`), the form Gemini CLI and Qwen Code
/// read, rather than a neutral Markdown command.
pub fn is_toml_command(text: &str) -> bool {
    text.parse::<toml_edit::DocumentMut>()
        .ok()
        .is_some_and(|document| document.get("prompt").and_then(|p| p.as_str()).is_some())
}

/// A checked neutral subagent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent<'a> {
    /// The name the session gives it (`--agent NAME=FILE`).
    pub name: &'a str,
    /// What the CLI shows the model to choose it.
    pub description: String,
    /// The front matter's `tools`, as written, when given on one line.
    pub tools: Option<String>,
    /// The front matter's `model`, as written.
    pub model: Option<String>,
    /// The system prompt.
    pub body: &'a str,
}

/// Reads a neutral subagent: front matter with a `description` (the CLIs show it to the model to
/// choose the agent) and a body. Refused, naming the agent, otherwise.
pub fn agent(file: &NamedFile) -> Result<Agent<'_>> {
    let (fields, body) = front_matter(&file.content);
    if end_of_front_matter(&file.content) == 0 {
        return Err(refuse(
            "subagent",
            &file.name,
            "a subagent is Markdown opening with front matter (`---`, `name:`, `description:`, `---`), then its system prompt",
        ));
    }
    let Some(description) = field(&fields, "description") else {
        return Err(refuse(
            "subagent",
            &file.name,
            "its front matter has no `description:`, which the CLI shows the model to choose it",
        ));
    };
    Ok(Agent {
        name: &file.name,
        description: description.to_string(),
        tools: field(&fields, "tools").map(str::to_string),
        model: field(&fields, "model").map(str::to_string),
        body,
    })
}

/// A neutral subagent as the Markdown file Claude Code, Qwen Code, Copilot CLI and Gemini CLI
/// read: the file as written, its front matter's `name` set to the name the session gives it
/// (added when missing), after checking it has a `description`.
pub fn agent_markdown(file: &NamedFile) -> Result<String> {
    agent(file)?;
    let (_, body) = front_matter(&file.content);
    let head = &file.content[..file.content.len() - body.len()];
    let mut lines = head.split_inclusive('\n');
    let mut out = String::with_capacity(file.content.len() + file.name.len() + 8);
    if let Some(open) = lines.next() {
        out.push_str(open);
    }
    out.push_str(&format!("name: {}\n", yaml_string(&file.name)));
    // The file's own `name`, with the lines that continue it, gives way to the session's.
    let mut in_name = false;
    for line in lines {
        let bare = line.trim_end_matches(['\n', '\r']);
        if in_name && (indented(bare) || bare.trim().is_empty()) {
            continue;
        }
        in_name = key_value(bare).is_some_and(|(key, _)| key == "name");
        if !in_name {
            out.push_str(line);
        }
    }
    out.push_str(body);
    Ok(out)
}

/// `text` as a YAML scalar that reads back as exactly `text`: plain when it is a word YAML
/// takes as a string (letters, digits, `_`, `-` and `.`, opening with a letter or `_`, and not a
/// boolean or null), double-quoted (JSON's escapes, which YAML reads) otherwise.
pub fn yaml_string(text: &str) -> String {
    let word = text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        && text
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    let special = matches!(
        text.to_ascii_lowercase().as_str(),
        "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n" | "inf" | "nan"
    );
    if word && !special {
        return text.to_string();
    }
    // Serialising a string cannot fail.
    serde_json::to_string(text).unwrap_or_default()
}

/// A neutral subagent reduced to what every CLI's schema takes: front matter with its `name`
/// (as the session names it) and `description` (quoted), then the body. For a CLI that drops an
/// agent whose front matter holds a key or a `tools` form it does not know (Gemini CLI checks
/// the front matter against a strict schema and drops the whole agent, silently, on a `tools`
/// string or an unknown key), the neutral `tools` and `model`, written for another CLI, are left
/// out: the agent runs with the CLI's defaults.
pub fn agent_markdown_minimal(file: &NamedFile) -> Result<String> {
    let agent = agent(file)?;
    let description =
        serde_json::to_string(&agent.description).map_err(|e| refuse("subagent", &file.name, e))?;
    Ok(format!(
        "---\nname: {}\ndescription: {description}\n---\n{}",
        yaml_string(agent.name),
        agent.body
    ))
}

/// Refuses a subagent name that is not a lower-case slug (`a-z`, `0-9`, `-`, `_`), which
/// `cli` requires, naming the agent.
pub fn require_slug(file: &NamedFile, cli: &str) -> Result<()> {
    let slug = !file.name.is_empty()
        && file
            .name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    match slug {
        true => Ok(()),
        false => Err(refuse(
            "subagent",
            &file.name,
            format!("{cli} takes only lower-case names of a-z, 0-9, `-` and `_`"),
        )),
    }
}

/// `text` as one word of a POSIX shell command line: as it is when every byte is one the shell
/// reads as itself, in single quotes otherwise (a `'` in it written `'\''`). A hook's command is
/// run by a shell, and a workspace's path may hold a blank, a `$` or a `;`.
pub fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(&b));
    if plain {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A neutral hook event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookEvent {
    /// The session starts.
    SessionStart,
    /// The user's prompt is submitted, before the model sees it.
    UserPromptSubmit,
    /// Before a tool runs (a `matcher` names the tools).
    BeforeTool,
    /// After a tool ran (a `matcher` names the tools).
    AfterTool,
    /// The agent finished its turn.
    Stop,
    /// The session ends.
    SessionEnd,
}

impl HookEvent {
    /// Every event, in the order a document lists them.
    pub const ALL: [HookEvent; 6] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::BeforeTool,
        HookEvent::AfterTool,
        HookEvent::Stop,
        HookEvent::SessionEnd,
    ];

    /// The event's name in a neutral hooks document.
    pub const fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session_start",
            HookEvent::UserPromptSubmit => "user_prompt_submit",
            HookEvent::BeforeTool => "before_tool",
            HookEvent::AfterTool => "after_tool",
            HookEvent::Stop => "stop",
            HookEvent::SessionEnd => "session_end",
        }
    }

    /// The event a neutral name stands for.
    pub fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether a handler of this event may name tools with a `matcher`.
    pub const fn takes_matcher(self) -> bool {
        matches!(self, HookEvent::BeforeTool | HookEvent::AfterTool)
    }
}

/// Claude Code's event for each neutral one, which Qwen Code's hooks take too.
pub const CLAUDE_CODE_EVENTS: &[(HookEvent, &str)] = &[
    (HookEvent::SessionStart, "SessionStart"),
    (HookEvent::UserPromptSubmit, "UserPromptSubmit"),
    (HookEvent::BeforeTool, "PreToolUse"),
    (HookEvent::AfterTool, "PostToolUse"),
    (HookEvent::Stop, "Stop"),
    (HookEvent::SessionEnd, "SessionEnd"),
];

/// One neutral hook: a shell command, for tool events optionally limited by a matcher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hook {
    /// The shell command.
    pub command: String,
    /// The tools it runs for (the CLI's own tool names or pattern), tool events only.
    pub matcher: Option<String>,
    /// The most seconds it may take.
    pub timeout: Option<u64>,
}

/// The events of a neutral hooks document: `{"hooks": {EVENT: [HOOK…]}}` or the event map alone.
fn events(config: &Value) -> Option<&Map<String, Value>> {
    let object = config.as_object()?;
    match object.get("hooks") {
        Some(Value::Object(events)) if object.len() == 1 => Some(events),
        _ => Some(object),
    }
}

/// Whether `config` is a neutral hooks document: a non-empty event map whose every event is a
/// neutral name. No CLI's own format uses those names (theirs are `PreToolUse`, `BeforeTool`,
/// `preToolUse`, …), so a neutral file handed in as the CLI's own is told apart, not written
/// where the CLI would ignore it.
pub fn is_neutral_hooks(config: &Value) -> bool {
    events(config).is_some_and(|events| {
        !events.is_empty() && events.keys().all(|k| HookEvent::from_name(k).is_some())
    })
}

/// Reads a neutral hooks document, refusing (naming the place) anything else: an unknown event,
/// a hook without a `command`, a `matcher` on an event that has no tools, a field we do not know.
pub fn neutral_hooks(config: &Value) -> Result<Vec<(HookEvent, Vec<Hook>)>> {
    let bad = |at: String, reason: &str| {
        Error::invalid(
            format!("the hooks {at}"),
            format!("{reason}; nothing was written"),
        )
    };
    let Some(events) = events(config) else {
        return Err(bad(
            "document".into(),
            "hooks are a JSON object {\"hooks\": {\"session_start\": [{\"command\": \"…\"}]}}",
        ));
    };
    let mut out = Vec::new();
    for (name, hooks) in events {
        let Some(event) = HookEvent::from_name(name) else {
            let known: Vec<&str> = HookEvent::ALL.iter().map(|e| e.name()).collect();
            return Err(bad(
                format!("event {name:?}"),
                &format!("no such neutral event (they are {})", known.join(", ")),
            ));
        };
        let Some(list) = hooks.as_array() else {
            return Err(bad(
                format!("event {name:?}"),
                "an event holds a list of hooks",
            ));
        };
        let mut parsed = Vec::with_capacity(list.len());
        for (index, hook) in list.iter().enumerate() {
            let at = format!("{name}[{index}]");
            let Some(fields) = hook.as_object() else {
                return Err(bad(at, "a hook is an object with a \"command\""));
            };
            if let Some(key) = fields
                .keys()
                .find(|k| !matches!(k.as_str(), "command" | "matcher" | "timeout"))
            {
                return Err(bad(
                    at,
                    &format!("{key:?} is not a field of a hook (command, matcher, timeout)"),
                ));
            }
            let command = match fields.get("command") {
                Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
                _ => return Err(bad(at, "a hook needs a \"command\" (a non-empty string)")),
            };
            let matcher = match fields.get("matcher") {
                None => None,
                Some(Value::String(m)) if event.takes_matcher() => Some(m.clone()),
                Some(Value::String(_)) => {
                    return Err(bad(
                        at,
                        "only before_tool and after_tool hooks take a \"matcher\" (the tools they run for)",
                    ));
                }
                Some(_) => return Err(bad(at, "a \"matcher\" is a string")),
            };
            let timeout = match fields.get("timeout") {
                None => None,
                Some(value) => match value.as_u64() {
                    Some(seconds) if seconds > 0 => Some(seconds),
                    _ => {
                        return Err(bad(
                            at,
                            "a \"timeout\" is a whole number of seconds above 0",
                        ));
                    }
                },
            };
            parsed.push(Hook {
                command,
                matcher,
                timeout,
            });
        }
        out.push((event, parsed));
    }
    Ok(out)
}

/// How a CLI's hooks file is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookLayout {
    /// `{EVENT: [{"matcher"?, "hooks": [{"type": "command", "command", "timeout"?}]}]}` (Claude
    /// Code, Gemini CLI, Qwen Code).
    Nested,
    /// `{"version": 1, "hooks": {EVENT: [{"command", "matcher"?, "timeout"?}]}}` (Cursor).
    Versioned,
}

/// One CLI's hooks: its name (for refusals), its event for each neutral one it has, its layout,
/// and how many of its timeout units a second is.
#[derive(Clone, Copy, Debug)]
pub struct HookDialect {
    /// The CLI, as a refusal names it.
    pub cli: &'static str,
    /// The CLI's event for each neutral event it has.
    pub events: &'static [(HookEvent, &'static str)],
    /// The layout of its file.
    pub layout: HookLayout,
    /// The CLI's timeout units per second (1 for seconds, 1000 for milliseconds).
    pub timeout_scale: u64,
}

/// The session's hooks configuration in `dialect`'s form: a configuration in the CLI's own
/// format as given, a neutral one converted (each event to the CLI's, each hook's command with
/// [`HOOK_SCRIPT_PLACEHOLDER`] replaced by `script`, the path the CLI runs the session's script
/// by, quoted for the shell when it must be). An event the CLI lacks is refused, naming the event and the CLI.
pub fn hooks_config(
    hooks: &HooksInput,
    dialect: &HookDialect,
    script: Option<&str>,
) -> Result<Value> {
    if hooks.format == HooksFormat::Cli {
        return Ok(hooks.config.clone());
    }
    let mut out = Map::new();
    for (event, list) in neutral_hooks(&hooks.config)? {
        let Some((_, name)) = dialect.events.iter().find(|(e, _)| *e == event) else {
            let has: Vec<&str> = dialect.events.iter().map(|(e, _)| e.name()).collect();
            return Err(Error::invalid(
                format!("the hooks event {:?}", event.name()),
                format!(
                    "{} has no such event (it runs {}); nothing was written",
                    dialect.cli,
                    has.join(", ")
                ),
            ));
        };
        let mut converted = Vec::with_capacity(list.len());
        for hook in list {
            let command = match (script, hook.command.contains(HOOK_SCRIPT_PLACEHOLDER)) {
                (Some(path), true) => hook
                    .command
                    .replace(HOOK_SCRIPT_PLACEHOLDER, &shell_word(path)),
                (None, true) => {
                    return Err(Error::invalid(
                        format!("the hooks event {:?}", event.name()),
                        format!(
                            "a command names {HOOK_SCRIPT_PLACEHOLDER} but the session brings no hook script (--hook-script); nothing was written"
                        ),
                    ));
                }
                (_, false) => hook.command.clone(),
            };
            let mut handler = Map::new();
            if dialect.layout == HookLayout::Nested {
                handler.insert("type".into(), json!("command"));
            }
            handler.insert("command".into(), json!(command));
            if let Some(timeout) = hook.timeout {
                handler.insert(
                    "timeout".into(),
                    json!(timeout.saturating_mul(dialect.timeout_scale)),
                );
            }
            converted.push(match dialect.layout {
                HookLayout::Nested => {
                    let mut group = Map::new();
                    if let Some(matcher) = &hook.matcher {
                        group.insert("matcher".into(), json!(matcher));
                    }
                    group.insert("hooks".into(), json!([handler]));
                    Value::Object(group)
                }
                HookLayout::Versioned => {
                    if let Some(matcher) = &hook.matcher {
                        handler.insert("matcher".into(), json!(matcher));
                    }
                    Value::Object(handler)
                }
            });
        }
        out.insert((*name).to_string(), Value::Array(converted));
    }
    Ok(match dialect.layout {
        HookLayout::Nested => json!({ "hooks": out }),
        HookLayout::Versioned => json!({ "version": 1, "hooks": out }),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn named(name: &str, content: &str) -> NamedFile {
        NamedFile {
            name: name.into(),
            content: content.into(),
        }
    }

    #[test]
    fn a_command_becomes_toml_with_the_args_placeholder() {
        let file = named(
            "ship",
            "---\ndescription: Ship \"it\"\nargument-hint: <what>\n---\nShip $ARGUMENTS now.\nAgain: $ARGUMENTS\n",
        );
        let toml = command_toml(&file);
        let parsed: toml_edit::DocumentMut = toml.parse().unwrap();
        assert_eq!(parsed["description"].as_str(), Some("Ship \"it\""));
        assert_eq!(
            parsed["prompt"].as_str(),
            Some("Ship {{args}} now.\nAgain: {{args}}\n")
        );
        assert!(parsed.get("argument-hint").is_none());
        assert!(is_toml_command(&toml));
        assert!(!is_toml_command(&file.content));
        // Without front matter the whole file is the prompt.
        let bare = command_toml(&named("x", "Do $ARGUMENTS"));
        let parsed: toml_edit::DocumentMut = bare.parse().unwrap();
        assert!(parsed.get("description").is_none());
        assert_eq!(parsed["prompt"].as_str(), Some("Do {{args}}"));
    }

    #[test]
    fn a_markdown_command_keeps_its_front_matter_and_changes_only_the_body() {
        let file = named(
            "x",
            "---\ndescription: $ARGUMENTS here\n---\nRun $ARGUMENTS\n",
        );
        assert_eq!(
            command_markdown_toml_args(&file),
            "---\ndescription: $ARGUMENTS here\n---\nRun {{args}}\n"
        );
    }

    #[test]
    fn an_agent_is_named_as_the_session_names_it() {
        let file = named(
            "reviewer",
            "---\nname: other\ndescription: Reviews code\ntools: Read, Grep\n---\nYou review.\n",
        );
        assert_eq!(
            agent_markdown(&file).unwrap(),
            "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\n---\nYou review.\n"
        );
        let parsed = agent(&file).unwrap();
        assert_eq!(parsed.tools.as_deref(), Some("Read, Grep"));
        assert_eq!(parsed.body, "You review.\n");
        let unnamed = named("r", "---\ndescription: D\n---\nBody");
        assert_eq!(
            agent_markdown(&unnamed).unwrap(),
            "---\nname: r\ndescription: D\n---\nBody"
        );
    }

    #[test]
    fn a_name_yaml_would_read_otherwise_is_quoted_and_replaces_the_files_own() {
        for (name, written) in [
            ("rev", "rev"),
            ("code.rev-2_x", "code.rev-2_x"),
            ("*rev", "\"*rev\""),
            ("rev: x", "\"rev: x\""),
            ("'rev", "\"'rev\""),
            ("rev #2", "\"rev #2\""),
            ("[rev]", "\"[rev]\""),
            ("true", "\"true\""),
            ("12", "\"12\""),
            ("-rev", "\"-rev\""),
            ("r\"v", "\"r\\\"v\""),
        ] {
            let file = named(
                name,
                "---\nname : old\n  continued\ndescription: D\n---\nBody\n",
            );
            let out = agent_markdown(&file).unwrap();
            assert_eq!(
                out,
                format!("---\nname: {written}\ndescription: D\n---\nBody\n")
            );
            let (fields, _) = front_matter(&out);
            assert_eq!(fields[0], ("name".to_string(), name.to_string()), "{out}");
            let minimal = agent_markdown_minimal(&file).unwrap();
            assert_eq!(front_matter(&minimal).0[0].1, name, "{minimal}");
        }
    }

    #[test]
    fn the_hook_script_is_one_shell_word_whatever_its_path() {
        assert_eq!(shell_word("/p/.claude/hooks/g.sh"), "/p/.claude/hooks/g.sh");
        assert_eq!(shell_word("/my project/g.sh"), "'/my project/g.sh'");
        assert_eq!(shell_word("/a'$(x);b/g.sh"), r"'/a'\''$(x);b/g.sh'");
        assert_eq!(shell_word(""), "''");
        let hooks = neutral(json!({"session_start": [{"command": "{{hook_script}} check"}]}));
        let converted =
            hooks_config(&hooks, &CLAUDE_LIKE, Some("/my project/.claude/hooks/g.sh")).unwrap();
        assert_eq!(
            converted["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            "'/my project/.claude/hooks/g.sh' check"
        );
    }

    #[test]
    fn a_minimal_agent_keeps_only_name_description_and_body() {
        let file = named(
            "rev",
            "---\nname: x\ndescription: Says \"hi\": MARK\ntools: Read, Grep\nmodel: sonnet\n---\nBody\n",
        );
        assert_eq!(
            agent_markdown_minimal(&file).unwrap(),
            "---\nname: rev\ndescription: \"Says \\\"hi\\\": MARK\"\n---\nBody\n"
        );
        assert!(require_slug(&file, "Gemini CLI").is_ok());
        for bad in ["Rev", "r.v", "r v", ""] {
            let error = require_slug(&named(bad, ""), "Gemini CLI").unwrap_err();
            assert!(error.to_string().contains("lower-case"), "{error}");
        }
    }

    #[test]
    fn an_agent_without_a_description_or_front_matter_is_refused() {
        for content in [
            "You review.\n",
            "---\nname: r\n---\nBody\n",
            "---\nname: r\n",
        ] {
            let error = agent_markdown(&named("r", content))
                .unwrap_err()
                .to_string();
            assert!(error.contains("subagent \"r\""), "{error}");
            assert!(error.contains("nothing was written"), "{error}");
        }
    }

    const CLAUDE_LIKE: HookDialect = HookDialect {
        cli: "Claude Code",
        events: &[
            (HookEvent::SessionStart, "SessionStart"),
            (HookEvent::BeforeTool, "PreToolUse"),
        ],
        layout: HookLayout::Nested,
        timeout_scale: 1,
    };

    fn neutral(config: Value) -> HooksInput {
        HooksInput {
            config,
            script: None,
            format: HooksFormat::Neutral,
        }
    }

    #[test]
    fn neutral_hooks_convert_to_the_clis_events_and_layout() {
        let hooks = neutral(json!({"hooks": {
            "session_start": [{"command": "echo hi"}],
            "before_tool": [{"command": "{{hook_script}} check", "matcher": "Bash", "timeout": 5}],
        }}));
        let claude = hooks_config(&hooks, &CLAUDE_LIKE, Some("/p/.claude/hooks/g.sh")).unwrap();
        assert_eq!(
            claude,
            json!({"hooks": {
                "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/p/.claude/hooks/g.sh check", "timeout": 5}]}],
            }})
        );
        let cursor = HookDialect {
            cli: "Cursor",
            events: &[
                (HookEvent::SessionStart, "sessionStart"),
                (HookEvent::BeforeTool, "preToolUse"),
            ],
            layout: HookLayout::Versioned,
            timeout_scale: 1000,
        };
        assert_eq!(
            hooks_config(&hooks, &cursor, Some("s")).unwrap(),
            json!({"version": 1, "hooks": {
                "sessionStart": [{"command": "echo hi"}],
                "preToolUse": [{"command": "s check", "matcher": "Bash", "timeout": 5000}],
            }})
        );
    }

    #[test]
    fn an_event_the_cli_lacks_is_refused_naming_both() {
        let hooks = neutral(json!({"stop": [{"command": "true"}]}));
        let error = hooks_config(&hooks, &CLAUDE_LIKE, None)
            .unwrap_err()
            .to_string();
        assert!(error.contains("\"stop\""), "{error}");
        assert!(error.contains("Claude Code has no such event"), "{error}");
    }

    #[test]
    fn malformed_neutral_hooks_are_refused_with_the_place() {
        for (config, says) in [
            (json!({"session_begin": []}), "no such neutral event"),
            (json!({"stop": {}}), "a list of hooks"),
            (json!({"stop": [{"cmd": "x"}]}), "not a field"),
            (json!({"stop": [{"command": " "}]}), "needs a \"command\""),
            (
                json!({"stop": [{"command": "x", "matcher": "Bash"}]}),
                "only before_tool",
            ),
            (
                json!({"before_tool": [{"command": "x", "timeout": 0}]}),
                "timeout",
            ),
            (
                json!({"session_start": [{"command": "{{hook_script}}"}]}),
                "no hook script",
            ),
            (json!([1]), "JSON object"),
        ] {
            let error = hooks_config(&neutral(config), &CLAUDE_LIKE, None)
                .unwrap_err()
                .to_string();
            assert!(error.contains(says), "{error} lacks {says}");
        }
    }

    #[test]
    fn a_clis_own_hooks_pass_unchanged_and_are_told_from_neutral_ones() {
        let own = json!({"hooks": {"PreToolUse": [{"hooks": []}]}});
        let hooks = HooksInput {
            config: own.clone(),
            script: None,
            format: HooksFormat::Cli,
        };
        assert_eq!(hooks_config(&hooks, &CLAUDE_LIKE, None).unwrap(), own);
        assert!(!is_neutral_hooks(&own));
        assert!(!is_neutral_hooks(
            &json!({"version": 1, "hooks": {"stop": []}})
        ));
        assert!(!is_neutral_hooks(&json!({})));
        assert!(is_neutral_hooks(&json!({"hooks": {"stop": []}})));
        assert!(is_neutral_hooks(&json!({"session_start": [], "stop": []})));
    }
}
