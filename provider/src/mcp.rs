//! MCP servers a session brings (`--mcp-config`: the map `{"name": {...}}`), checked once, and
//! one helper per route a CLI takes them by, so a provider only names its route:
//!
//! | route | helper | CLI |
//! |---|---|---|
//! | a private file `{"mcpServers": …}` passed as `--flag=<path>` (one argument), plus a flag that hides the CLI's other servers for `--mcp-mode replace` | [`private_file_route`] | Claude Code (`--mcp-config`, `--strict-mcp-config`) |
//! | the same private file, `--mcp-mode replace` naming each session server with an allow-list flag | [`private_file_route_naming`] | Qwen Code (`--mcp-config`, `--allowed-mcp-server-names`) |
//! | a private file `{"mcpServers": …}` passed as `--flag <prefix><path>` | [`prefixed_file_route`] | Copilot CLI (`--additional-mcp-config @<file>`) |
//! | `-c mcp_servers.<name>=<TOML inline table>` overrides, written with `toml_edit` | [`toml_overrides`] | Codex |
//! | merged into the project's own JSON file for the session | [`merged_file`] | Cursor (`.cursor/mcp.json`), Gemini CLI (`.gemini/settings.json`, each server with `"trust": true`: see that provider) |
//!
//! Refused before anything is written ([`servers`]): a map that is not a JSON object, a map that
//! wraps the servers in `"mcpServers"` (pass the map itself), a server that is not a JSON object,
//! and a server name that is not a plain name (`[A-Za-z0-9_-]+`, at most 64 bytes): a name
//! becomes a TOML key, a JSON key another tool reads, and a word in the CLI's tool names.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::plan::{LaunchArg, MergedJsonProjection, OwnedRole, Plan, RelPath};
use crate::provider::{McpMode, PlanContext};

/// The key every JSON MCP configuration file holds its servers under.
pub const SERVERS_KEY: &str = "mcpServers";

/// The longest server name accepted, in bytes.
pub const MAX_NAME_BYTES: usize = 64;

/// The refusal of the session's MCP servers for `reason`.
fn refuse(reason: impl std::fmt::Display) -> Error {
    Error::invalid(
        "the MCP servers (--mcp-config)",
        format!("{reason}; nothing was written"),
    )
}

/// Whether `name` is a plain server name: `[A-Za-z0-9_-]+`, at most [`MAX_NAME_BYTES`].
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Checks a server map: a JSON object of plain names to JSON objects (see the module docs).
pub fn validate(value: &Value) -> Result<&Map<String, Value>> {
    let Value::Object(map) = value else {
        return Err(refuse(
            "must be a JSON object mapping each server name to its settings ({\"name\": {\"command\": …}})",
        ));
    };
    if map.len() == 1 && map.contains_key(SERVERS_KEY) {
        return Err(refuse(format!(
            "pass the server map itself ({{\"name\": {{...}}}}), not a file wrapping it in \"{SERVERS_KEY}\""
        )));
    }
    for (name, server) in map {
        if !is_plain_name(name) {
            return Err(refuse(format!(
                "server name {name:?} is not a plain name: use 1 to {MAX_NAME_BYTES} ASCII letters, digits, '_' or '-'"
            )));
        }
        if !server.is_object() {
            return Err(refuse(format!(
                "server {name:?} must be a JSON object (its command, args, env or url), not {server}"
            )));
        }
    }
    Ok(map)
}

/// The session's servers, checked; `None` when it brings none.
pub fn servers<'c>(ctx: &PlanContext<'c>) -> Result<Option<&'c Map<String, Value>>> {
    ctx.request.mcp_servers.as_ref().map(validate).transpose()
}

/// The session's servers as `{"mcpServers": …}` in the private file `file_name`; `false` (and
/// nothing added) when the session brings none.
fn servers_file(ctx: &PlanContext<'_>, plan: &mut Plan, file_name: &str) -> Result<bool> {
    let Some(servers) = servers(ctx)? else {
        return Ok(false);
    };
    let config = serde_json::json!({ SERVERS_KEY: servers });
    crate::patterns::private_json(plan, file_name, &config, "the MCP servers")?;
    Ok(true)
}

/// The private-file route: the session's servers as `{"mcpServers": …}` in the private file
/// `file_name`, passed as `<flag>=<path>` (one argument, for a flag that takes several values);
/// with `--mcp-mode replace`, `replace_flag` too. Adds nothing when the session brings no
/// servers.
pub fn private_file_route(
    ctx: &PlanContext<'_>,
    plan: &mut Plan,
    flag: &str,
    file_name: &str,
    replace_flag: &str,
) -> Result<()> {
    if private_file(ctx, plan, flag, file_name)?.is_some()
        && ctx.request.mcp_mode == McpMode::Replace
    {
        plan.launch_args
            .push(LaunchArg::Literal(replace_flag.to_string()));
    }
    Ok(())
}

/// The session's servers as `{"mcpServers": …}` in the private file `file_name`, passed as
/// `<flag>=<path>` (one argument); the servers, or `None` (nothing added) when the session brings
/// none.
fn private_file<'c>(
    ctx: &PlanContext<'c>,
    plan: &mut Plan,
    flag: &str,
    file_name: &str,
) -> Result<Option<&'c Map<String, Value>>> {
    let Some(servers) = servers(ctx)? else {
        return Ok(None);
    };
    let config = serde_json::json!({ SERVERS_KEY: servers });
    crate::patterns::private_json_flag(plan, flag, file_name, &config, "the MCP servers")?;
    Ok(Some(servers))
}

/// [`private_file_route`] for a CLI that limits itself to named servers: with `--mcp-mode
/// replace`, `<allow_flag>=<name>` for each of the session's servers (one argument each), so the
/// CLI starts those alone (Qwen Code's `--allowed-mcp-server-names`).
pub fn private_file_route_naming(
    ctx: &PlanContext<'_>,
    plan: &mut Plan,
    flag: &str,
    file_name: &str,
    allow_flag: &str,
) -> Result<()> {
    let Some(servers) = private_file(ctx, plan, flag, file_name)? else {
        return Ok(());
    };
    if ctx.request.mcp_mode == McpMode::Replace {
        plan.launch_args.extend(
            servers
                .keys()
                .map(|name| LaunchArg::Literal(format!("{allow_flag}={name}"))),
        );
    }
    Ok(())
}

/// The private-file route of a CLI whose flag takes a file as `<prefix><path>` (Copilot's
/// `--additional-mcp-config @<file>`): the session's servers as `{"mcpServers": …}` in the
/// private file `file_name`, passed as `flag`, then `<prefix><path>` as one argument. Adds
/// nothing when the session brings no servers. `--mcp-mode replace` is the caller's to refuse
/// (its spec does not claim it).
pub fn prefixed_file_route(
    ctx: &PlanContext<'_>,
    plan: &mut Plan,
    flag: &str,
    prefix: &str,
    file_name: &str,
) -> Result<()> {
    if !servers_file(ctx, plan, file_name)? {
        return Ok(());
    }
    plan.launch_args.push(LaunchArg::Literal(flag.to_string()));
    plan.launch_args.push(LaunchArg::PrefixedPrivateFile {
        prefix: prefix.to_string(),
        name: file_name.to_string(),
    });
    Ok(())
}

/// A JSON value as TOML, or why it has none (`at` names it for the message).
fn to_toml(value: &Value, at: &str) -> Result<toml_edit::Value> {
    Ok(match value {
        Value::Null => {
            return Err(refuse(format_args!(
                "{at} is null, which TOML cannot hold: leave the key out"
            )));
        }
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.into(),
            (None, Some(f)) if n.is_f64() => f.into(),
            _ => {
                return Err(refuse(format_args!(
                    "{at} = {n} does not fit a TOML integer"
                )));
            }
        },
        // One line whatever the string holds: a JSON string literal is a TOML basic string
        // (the same escapes), which toml_edit parses and then writes back as it was parsed.
        Value::String(s) => serde_json::to_string(s)
            .ok()
            .and_then(|literal| literal.parse::<toml_edit::Value>().ok())
            .ok_or_else(|| refuse(format_args!("{at} cannot be written as a TOML string")))?,
        Value::Array(items) => {
            let mut array = toml_edit::Array::new();
            for (i, item) in items.iter().enumerate() {
                array.push(to_toml(item, &format!("{at}[{i}]"))?);
            }
            array.fmt();
            toml_edit::Value::Array(array)
        }
        Value::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (key, item) in map {
                table.insert(key, to_toml(item, &format!("{at}.{key}"))?);
            }
            table.fmt();
            toml_edit::Value::InlineTable(table)
        }
    })
}

/// Codex's route: one `-c mcp_servers.<name>=<inline table>` pair of arguments per server, the
/// value written by `toml_edit` (never pasted together), so every string is quoted and escaped
/// as TOML requires. Codex reads each `-c` value as TOML and layers it over its configuration.
pub fn toml_overrides(servers: &Map<String, Value>) -> Result<Vec<String>> {
    let mut args = Vec::with_capacity(servers.len() * 2);
    for (name, server) in servers {
        if !is_plain_name(name) {
            return Err(refuse(format_args!(
                "server name {name:?} is not a plain name"
            )));
        }
        let value = to_toml(server, name)?;
        args.push("-c".to_string());
        args.push(format!("mcp_servers.{name}={}", value.to_string().trim()));
    }
    Ok(args)
}

/// The merge route: the session's servers merged into the project's JSON file at `path` under
/// `"mcpServers"` (core reads the project's file; see `projector::merged_json`); with
/// `--mcp-mode replace`, the file holds the session's servers alone. `None` when the session
/// brings no servers.
pub fn merged_file(ctx: &PlanContext<'_>, path: &str) -> Result<Option<MergedJsonProjection>> {
    let Some(servers) = servers(ctx)? else {
        return Ok(None);
    };
    Ok(Some(MergedJsonProjection {
        created_with: serde_json::Map::new(),
        path: RelPath::new(path)?,
        key: SERVERS_KEY.to_string(),
        entries: servers.clone(),
        replace: ctx.request.mcp_mode == McpMode::Replace,
        role: OwnedRole::McpConfig,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bad_maps_are_refused_with_the_reason() {
        for (value, needle) in [
            (json!([1]), "must be a JSON object"),
            (json!({"mcpServers": {"a": {}}}), "not a file wrapping it"),
            (json!({"a": 1}), "server \"a\" must be a JSON object"),
            (json!({"a b": {}}), "not a plain name"),
            (json!({"a.b": {}}), "not a plain name"),
            (json!({"": {}}), "not a plain name"),
        ] {
            let e = validate(&value).unwrap_err().to_string();
            assert!(e.contains(needle), "{value}: {e}");
            assert!(e.contains("nothing was written"), "{e}");
        }
        assert!(validate(&json!({"docs_1-x": {"command": "c"}})).is_ok());
    }

    #[test]
    fn toml_overrides_quote_every_value() {
        let servers = json!({
            "docs": {"command": "say \"hi\"\n", "args": ["--a", "b=c"], "env": {"K": "v"}, "n": 3, "on": true}
        });
        let args = toml_overrides(servers.as_object().unwrap()).unwrap();
        assert_eq!(args[0], "-c");
        let (key, value) = args[1].split_once('=').unwrap();
        assert_eq!(key, "mcp_servers.docs");
        // What Codex does with the value: parse it as TOML.
        let parsed: toml_edit::DocumentMut = format!("x = {value}").parse().unwrap();
        let table = parsed["x"].as_inline_table().unwrap();
        assert_eq!(table["command"].as_str(), Some("say \"hi\"\n"));
        assert_eq!(table["args"].as_array().unwrap().len(), 2);
        let env = table["env"].as_inline_table().unwrap();
        assert_eq!(env["K"].as_str(), Some("v"));
        assert_eq!(table["n"].as_integer(), Some(3));
        assert_eq!(table["on"].as_bool(), Some(true));
        assert!(!value.contains('\n'), "one argument, one line: {value}");
    }

    #[test]
    fn toml_overrides_refuse_null() {
        let servers = json!({"docs": {"command": null}});
        let e = toml_overrides(servers.as_object().unwrap()).unwrap_err();
        assert!(e.to_string().contains("docs.command is null"), "{e}");
    }
}
