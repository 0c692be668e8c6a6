//! A provider reads nothing but its context: the sources of every provider crate
//! (`providers/*/src`, test modules aside) name none of the standard library's modules that reach
//! the outside world ([`WORLD_MODULES`]): not as a path (`std::env::var`), not in a group
//! (`use std::{env, fmt}`), and `std` is never renamed (`use std as s`), which would hide it.
//! What a provider needs to know about the machine (the home directory, the CLI's version, what
//! the workspace holds) core finds out and hands in through the `PlanContext`.
//!
//! A text scan over the code with comments and strings blanked, rather than a `clippy.toml` per
//! provider crate: clippy's `disallowed-*` lists name single items (`std::env::var`), so a new
//! function in one of these modules would slip through, while a module is named by every use.

use anyhow::Result;
use std::path::Path;

use super::structure::code_of;
use super::{Problem, problem, read};

/// The modules of `std` through which code reads or changes the world outside its arguments.
pub const WORLD_MODULES: &[&str] = &["env", "fs", "process", "net", "io", "os"];

/// The identifiers and `::`/`{`/`}`/`,` punctuation of `code`, each with its 1-based line.
fn tokens(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (index, line) in code.lines().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_alphanumeric() || c == '_' {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push((chars[start..i].iter().collect(), index + 1));
                continue;
            }
            if c == ':' && chars.get(i + 1) == Some(&':') {
                out.push(("::".to_string(), index + 1));
                i += 2;
                continue;
            }
            if matches!(c, '{' | '}' | ',' | ';') {
                out.push((c.to_string(), index + 1));
            }
            i += 1;
        }
    }
    out
}

/// The first name of each item of the `use` group whose `{` is at `open`: `env` and `fmt` in
/// `{env, fmt::Write, self}` (nested groups are the items' own business).
fn group_heads(tokens: &[(String, usize)], open: usize) -> Vec<(String, usize)> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut expect_head = true;
    for (token, line) in &tokens[open..] {
        match token.as_str() {
            "{" => {
                depth += 1;
                expect_head = depth == 1;
            }
            "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            "," if depth == 1 => expect_head = true,
            ";" => break,
            "::" => {}
            name if expect_head && depth == 1 => {
                heads.push((name.to_string(), *line));
                expect_head = false;
            }
            _ => {}
        }
    }
    heads
}

/// Every place `code` reaches a module of [`WORLD_MODULES`] or renames `std`: its line and what
/// it names.
pub fn world_access(code: &str) -> Vec<(usize, String)> {
    let tokens = tokens(code);
    let mut found = Vec::new();
    for (i, (token, line)) in tokens.iter().enumerate() {
        if token != "std" {
            continue;
        }
        let next = tokens.get(i + 1).map(|(t, _)| t.as_str());
        let after = tokens.get(i + 2).map(|(t, _)| t.as_str());
        match (next, after) {
            (Some("as"), _) => found.push((*line, "std renamed".to_string())),
            (Some("::"), Some("{")) => found.extend(
                group_heads(&tokens, i + 2)
                    .into_iter()
                    .filter(|(head, _)| WORLD_MODULES.contains(&head.as_str()) || head == "self")
                    .map(|(head, line)| match head.as_str() {
                        "self" => (line, "std renamed".to_string()),
                        _ => (line, format!("std::{head}")),
                    }),
            ),
            (Some("::"), Some(module)) if WORLD_MODULES.contains(&module) => {
                found.push((*line, format!("std::{module}")));
            }
            _ => {}
        }
    }
    found
}

/// No provider source reaches the world outside its context.
pub fn providers_read_only_their_context(
    root: &Path,
    files: &[String],
    problems: &mut Vec<Problem>,
) -> Result<()> {
    let provider_sources = files.iter().filter(|rel| {
        rel.strip_prefix("providers/")
            .and_then(|rest| rest.split_once('/'))
            .is_some_and(|(_, inner)| inner.starts_with("src/"))
    });
    for rel in provider_sources {
        let code = code_of(&read(root, rel)?);
        for (line, what) in world_access(&code) {
            problems.push(problem(
                rel.clone(),
                Some(line),
                format!(
                    "a provider reads nothing but its PlanContext: {what} reaches the environment, the file system, processes or the network; ask core to find it out and hand it in through the context (as `PlanContext::home`)"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn named(text: &str) -> Vec<String> {
        world_access(&code_of(text))
            .into_iter()
            .map(|(line, what)| format!("{line}: {what}"))
            .collect()
    }

    #[test]
    fn paths_groups_and_renames_are_named() {
        let text = "//! x\nuse std::env;\nfn f() { let h = std :: env::var_os(\"HOME\"); }\nuse std::{fmt, fs::read, io};\nuse std::{\n    collections::{BTreeMap, HashMap},\n    process,\n};\nuse std as s;\nuse std::{self as t};\nfn g() { ::std::net::TcpStream::connect(\"x\"); std::os::unix::fs::symlink(\"a\", \"b\"); }\n";
        assert_eq!(
            named(text),
            [
                "2: std::env",
                "3: std::env",
                "4: std::fs",
                "4: std::io",
                "7: std::process",
                "9: std renamed",
                "10: std renamed",
                "11: std::net",
                "11: std::os",
            ]
        );
    }

    #[test]
    fn pure_code_comments_and_strings_pass() {
        let text = "//! std::fs in a doc\nuse std::path::{Path, PathBuf};\nuse std::fmt::Write;\n// std::env::var in a comment\nconst S: &str = \"std::process::Command\";\nfn f(p: &Path) -> PathBuf { p.join(\"x\") }\nstruct Stdio; mod my_std { pub mod fs {} }\nuse my_std::fs;\n#[cfg(test)]\nmod tests { fn t() { std::fs::write(\"a\", \"b\").ok(); } }\n";
        assert_eq!(named(text), Vec::<String>::new());
    }

    #[test]
    fn the_providers_of_the_workspace_read_only_their_context() {
        let root = crate::workspace_root();
        let files = super::super::rust_files(&root).unwrap();
        let mut problems = Vec::new();
        providers_read_only_their_context(&root, &files, &mut problems).unwrap();
        assert!(problems.is_empty(), "{problems:#?}");
        // And the scan sees them: every provider has a source to look at.
        assert!(files.iter().any(|f| f == "providers/claude/src/lib.rs"));
    }
}
