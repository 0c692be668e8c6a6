//! Property tests of the MCP routes' pure parts: Codex's `-c` overrides parse back, as TOML, to
//! exactly the servers given, whatever their strings hold (quotes, newlines, `=`, dots, any
//! Unicode), one argument per value; and a merged JSON file keeps every entry and key of the
//! project's, adds every one of the session's, and refuses a name both define differently,
//! naming it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use projectfile_core::projector::merged_json::merged_content;
use projectfile_core::{MergedJsonProjection, OwnedRole, RelPath, mcp};

/// A JSON value TOML can hold (no null; finite numbers), nested a little.
fn toml_able() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1.0e6f64..1.0e6).prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(any::<String>(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A server map: plain names to objects of any TOML-able settings.
fn servers() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(
        "[A-Za-z0-9_-]{1,12}",
        prop::collection::btree_map(any::<String>(), toml_able(), 0..4),
        1..4,
    )
    .prop_map(|m| {
        m.into_iter()
            .map(|(k, v)| (k, Value::Object(v.into_iter().collect())))
            .collect()
    })
}

/// A TOML value back as JSON (what Codex reads).
fn to_json(value: &toml_edit::Value) -> Value {
    match value {
        toml_edit::Value::String(s) => Value::from(s.value().as_str()),
        toml_edit::Value::Integer(i) => Value::from(*i.value()),
        toml_edit::Value::Float(f) => json!(*f.value()),
        toml_edit::Value::Boolean(b) => Value::from(*b.value()),
        toml_edit::Value::Array(a) => Value::from(a.iter().map(to_json).collect::<Vec<_>>()),
        toml_edit::Value::InlineTable(t) => {
            Value::Object(t.iter().map(|(k, v)| (k.to_string(), to_json(v))).collect())
        }
        toml_edit::Value::Datetime(d) => Value::from(d.to_string()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn codex_overrides_parse_back_to_the_servers(servers in servers()) {
        let args = mcp::toml_overrides(&servers).unwrap();
        prop_assert_eq!(args.len(), servers.len() * 2);
        let mut back = Map::new();
        for pair in args.chunks(2) {
            prop_assert_eq!(&pair[0], "-c");
            prop_assert!(!pair[1].contains('\n'), "one line: {}", pair[1]);
            let (key, value) = pair[1].split_once('=').unwrap();
            let name = key.strip_prefix("mcp_servers.").unwrap();
            let doc: toml_edit::DocumentMut = format!("v = {value}").parse().unwrap();
            let parsed = doc["v"].as_value().unwrap();
            back.insert(name.to_string(), to_json(parsed));
        }
        prop_assert_eq!(back, servers);
    }

    #[test]
    fn a_merge_keeps_the_projects_and_adds_the_sessions(
        project in prop::collection::btree_map("[a-d]", 0u8..3, 0..4),
        session in prop::collection::btree_map("[a-f]", 0u8..3, 1..4),
        other in any::<u8>(),
    ) {
        let project_entries: Map<String, Value> =
            project.iter().map(|(k, v)| (k.clone(), json!({"command": v}))).collect();
        let file = json!({"mcpServers": project_entries, "other": other});
        let merged = MergedJsonProjection {
            created_with: serde_json::Map::new(),
            path: RelPath::new(".cursor/mcp.json").unwrap(),
            key: "mcpServers".into(),
            entries: session.iter().map(|(k, v)| (k.clone(), json!({"command": v}))).collect(),
            replace: false,
            role: OwnedRole::McpConfig,
        };
        let clash = session.iter().find(|(k, v)| project.get(*k).is_some_and(|p| p != *v));
        let result = merged_content(Some(file.to_string().as_bytes()), &merged, "f");
        match clash {
            Some((name, _)) => {
                let error = result.unwrap_err().to_string();
                prop_assert!(error.contains(&format!("\"{name}\"")), "{}", error);
                prop_assert!(error.contains("nothing was written"), "{}", error);
            }
            None => {
                let value: Value = serde_json::from_str(&result.unwrap()).unwrap();
                prop_assert_eq!(&value["other"], &json!(other));
                let entries = value["mcpServers"].as_object().unwrap();
                for (name, v) in project.iter().chain(session.iter()) {
                    prop_assert_eq!(&entries[name], &json!({"command": v}));
                }
                prop_assert_eq!(
                    entries.len(),
                    project.keys().chain(session.keys()).collect::<std::collections::BTreeSet<_>>().len()
                );
            }
        }
        let mut replace = merged.clone();
        replace.replace = true;
        let alone: Value =
            serde_json::from_str(&merged_content(Some(b"not json"), &replace, "f").unwrap()).unwrap();
        prop_assert_eq!(alone, json!({"mcpServers": merged.entries}));
    }
}
