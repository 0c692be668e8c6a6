//! Merged JSON files: a JSON file the project may already have (Cursor's `.cursor/mcp.json`),
//! into whose object under one key the session's entries are merged for the session.
//!
//! This kind decides only the *content*; the file itself is then projected as an owned file
//! (`owned_file`), so it shares the undo rule and everything an owned file promises: the
//! project's exact prior bytes are taken over into the priors folder and come back at the last
//! release, an edit made during the session is set aside and reported, and a crash or a lost
//! state directory is recovered the same way.
//!
//! What the merge starts from is the project's own file: the one standing at the path when no
//! session holds it, or, while sessions run, the prior they took over (never a session's merged
//! file, so the entries of an ended session never stick). Like every owned file, the newest start
//! writes the file: it holds the project's entries and the newest session's.
//!
//! Refused before anything is written: a project file that is not a JSON object, or whose `key`
//! is not an object; a name the project and the session both define, differently (the error
//! names it). The same definition on both sides is kept once: the project may list that very
//! server, and a lost state directory leaves our merged file, which no marker can prove ours
//! (JSON has no comments), looking like the project's own.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::fsio::Root;
use crate::ledger::{EntryRecord, Ledger};
use crate::plan::{MergedJsonProjection, OwnedFileProjection, OwnedRole, RelPath};

use super::priors;

/// The bytes of the project's own file at `path`, as the merge must see them: the prior the
/// sessions took over when one is kept, the file standing there when no session holds it, and
/// nothing when the sessions' file stands on no prior of the project's.
fn project_bytes(root: &Root, ledger: &Ledger, path: &RelPath) -> Result<Option<Vec<u8>>> {
    let kept = match ledger.entries.get(path) {
        None => None,
        Some(EntryRecord::Owned {
            prior: Some(prior), ..
        }) if priors::is_kept(root, prior, path) => Some(priors::kept_path(prior, path)?),
        // A prior not moved yet (a crash came first) still stands at the path.
        Some(EntryRecord::Owned { prior: Some(_), .. }) => None,
        // The sessions' own file on no prior.
        Some(_) => return Ok(None),
    };
    let at = kept.as_ref().unwrap_or(path);
    Ok(root.read(at)?.map(|snapshot| snapshot.bytes))
}

/// The project's object in `bytes` without `key`, and its entries under `key`, or why they cannot
/// be merged with.
fn project_object(
    bytes: &[u8],
    key: &str,
    shown: &str,
) -> Result<(Map<String, Value>, Map<String, Value>)> {
    let refuse = |reason: String| Error::invalid(shown, format!("{reason}; nothing was written"));
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        refuse(format!(
            "the project's file is not valid JSON ({e}), so the session's entries cannot be merged into it"
        ))
    })?;
    let Value::Object(mut object) = value else {
        return Err(refuse(
            "the project's file is not a JSON object, so the session's entries cannot be merged into it"
                .to_string(),
        ));
    };
    match object.remove(key) {
        None => Ok((object, Map::new())),
        Some(Value::Object(entries)) => Ok((object, entries)),
        Some(_) => Err(refuse(format!(
            "the project's \"{key}\" is not a JSON object, so the session's entries cannot be merged into it"
        ))),
    }
}

/// The owned file a merged JSON projection becomes: the project's file with the session's entries
/// added under `key` (or, with `replace`, the session's entries alone), pretty-printed with a
/// final newline. Reads only.
pub(crate) fn resolve(
    root: &Root,
    ledger: &Ledger,
    merged: &MergedJsonProjection,
) -> Result<OwnedFileProjection> {
    let path = &merged.path;
    let shown = root.display_path(path).display().to_string();
    let project = if merged.replace {
        None
    } else {
        project_bytes(root, ledger, path)?
    };
    Ok(OwnedFileProjection {
        path: path.clone(),
        content: merged_content(project.as_deref(), merged, &shown)?,
        mode: None,
        role: merged.role,
    })
}

/// The merged file's content: the project's file (`project`, when it has one and the merge does
/// not replace it) with the session's entries added under the key, pretty-printed with a final
/// newline. `shown` names the file in a refusal. Pure.
pub fn merged_content(
    project: Option<&[u8]>,
    merged: &MergedJsonProjection,
    shown: &str,
) -> Result<String> {
    let (mut object, mut entries) = match project {
        Some(bytes) if !merged.replace => project_object(bytes, &merged.key, shown)?,
        _ => (merged.created_with.clone(), Map::new()),
    };
    for (name, value) in &merged.entries {
        // The same definition already there (the project lists this very server, or a lost
        // state directory left our file, which cannot be told from the project's) is kept once.
        if entries.get(name).is_some_and(|theirs| theirs != value) {
            let fix = match merged.role {
                OwnedRole::HooksConfig => format!(
                    "the session's hooks for the event would replace the project's: leave \"{name}\" out of the session's hooks, or take it out of the project's file"
                ),
                OwnedRole::McpConfig => "rename the session's server".to_string(),
                _ => "rename the session's entry".to_string(),
            };
            return Err(Error::invalid(
                shown,
                format!(
                    "\"{name}\" is defined by the project's file and, differently, by the session: {fix}; nothing was written"
                ),
            ));
        }
        entries.insert(name.clone(), value.clone());
    }
    object.insert(merged.key.clone(), Value::Object(entries));
    let mut content = serde_json::to_string_pretty(&Value::Object(object))
        .map_err(|e| Error::invalid(shown, format!("cannot be serialized: {e}")))?;
    content.push('\n');
    Ok(content)
}

/// The plan's merged JSON files turned into owned files, appended to its owned files. Several
/// projections of one file (Gemini CLI's `.gemini/settings.json` takes both `mcpServers` and
/// `hooks`) become one owned file: each merges into what the one before it made, in plan order.
pub(crate) fn into_owned(root: &Root, ledger: &Ledger, plan: &mut crate::plan::Plan) -> Result<()> {
    let mut files: Vec<OwnedFileProjection> = Vec::new();
    for merged in std::mem::take(&mut plan.merged_json) {
        match files.iter_mut().find(|owned| owned.path == merged.path) {
            Some(owned) => {
                let shown = root.display_path(&merged.path).display().to_string();
                owned.content = merge_again(&owned.content, merged, &shown)?;
            }
            None => files.push(resolve(root, ledger, &merged)?),
        }
    }
    plan.owned_files.extend(files);
    Ok(())
}

/// `content` (what the projections before `merged` made of the file) with `merged`'s entries
/// added under its key; its `replace` empties that key only, the other projections' keys stay.
fn merge_again(content: &str, merged: MergedJsonProjection, shown: &str) -> Result<String> {
    let mut previous: Value = serde_json::from_str(content)
        .map_err(|e| Error::invalid(shown, format!("cannot be merged again: {e}")))?;
    if merged.replace
        && let Some(object) = previous.as_object_mut()
    {
        object.remove(&merged.key);
    }
    let bytes = serde_json::to_vec(&previous)
        .map_err(|e| Error::invalid(shown, format!("cannot be serialized: {e}")))?;
    let merged = MergedJsonProjection {
        replace: false,
        ..merged
    };
    merged_content(Some(&bytes), &merged, shown)
}

/// The plan's merged JSON files as the owned files a first start would write into `root` (no
/// session holding anything there): for tools that check what a start may leave behind.
pub fn resolve_for_first_start(
    workspace: &std::path::Path,
    plan: &mut crate::plan::Plan,
) -> Result<()> {
    let workspace = crate::workspace::Workspace::open(workspace)?;
    let ledger = Ledger::new(crate::ledger::FolderRef::of(&workspace));
    into_owned(&workspace.root, &ledger, plan)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::disallowed_methods)] // the test plays the project, writing its file
mod tests {
    use super::*;

    #[test]
    fn project_entries_refuse_what_cannot_be_merged() {
        for (bytes, needle) in [
            (&b"{not json"[..], "not valid JSON"),
            (b"[1]", "not a JSON object"),
            (
                b"{\"mcpServers\": []}",
                "\"mcpServers\" is not a JSON object",
            ),
        ] {
            let e = project_object(bytes, "mcpServers", "f").unwrap_err();
            assert!(e.to_string().contains(needle), "{e}");
            assert!(e.to_string().contains("nothing was written"), "{e}");
        }
        let (rest, entries) = project_object(b"{\"other\": 1}", "mcpServers", "f").unwrap();
        assert!(entries.is_empty());
        assert_eq!(rest.get("other"), Some(&Value::from(1)));
    }

    fn projection(key: &str, name: &str, replace: bool) -> MergedJsonProjection {
        let mut entries = Map::new();
        entries.insert(name.to_string(), serde_json::json!({"session": true}));
        MergedJsonProjection {
            created_with: Map::new(),
            path: RelPath::new(".x/settings.json").unwrap(),
            key: key.to_string(),
            entries,
            replace,
            role: crate::plan::OwnedRole::McpConfig,
        }
    }

    #[test]
    fn a_file_the_sessions_make_starts_with_what_the_cli_would_add_and_the_projects_never_gets_it()
    {
        let mut merged = projection("hooks", "SessionStart", false);
        merged
            .created_with
            .insert("$version".into(), Value::from(4));
        let made: Value =
            serde_json::from_str(&merged_content(None, &merged, "f").unwrap()).unwrap();
        assert_eq!(made["$version"], Value::from(4));
        assert!(made["hooks"]["SessionStart"].is_object());
        let project: Value = serde_json::from_str(
            &merged_content(Some(br#"{"general": {}}"#), &merged, "f").unwrap(),
        )
        .unwrap();
        assert!(project.get("$version").is_none(), "{project}");
        assert!(project["general"].is_object());
    }

    #[test]
    fn projections_of_one_file_become_one_owned_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".x")).unwrap();
        std::fs::write(
            dir.path().join(".x/settings.json"),
            br#"{"other": 1, "mcpServers": {"own": {}}, "hooks": {"Own": []}}"#,
        )
        .unwrap();
        let mut plan = crate::plan::Plan {
            merged_json: vec![
                projection("mcpServers", "docs", false),
                projection("hooks", "SessionStart", false),
            ],
            ..crate::plan::Plan::default()
        };
        resolve_for_first_start(dir.path(), &mut plan).unwrap();
        assert!(plan.merged_json.is_empty());
        assert_eq!(plan.owned_files.len(), 1, "{plan:?}");
        let value: Value = serde_json::from_str(&plan.owned_files[0].content).unwrap();
        assert_eq!(value["other"], Value::from(1));
        assert!(value["mcpServers"]["own"].is_object() && value["mcpServers"]["docs"].is_object());
        assert!(value["hooks"]["Own"].is_array() && value["hooks"]["SessionStart"].is_object());

        // A later projection's replace empties its own key only.
        let mut plan = crate::plan::Plan {
            merged_json: vec![
                projection("mcpServers", "docs", false),
                projection("hooks", "SessionStart", true),
            ],
            ..crate::plan::Plan::default()
        };
        resolve_for_first_start(dir.path(), &mut plan).unwrap();
        let value: Value = serde_json::from_str(&plan.owned_files[0].content).unwrap();
        assert!(value["mcpServers"]["own"].is_object(), "{value}");
        assert!(value["hooks"].get("Own").is_none(), "{value}");
        assert!(value["hooks"]["SessionStart"].is_object());
    }
}
