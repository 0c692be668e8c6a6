//! The structure rules of `core/src`: no function longer than [`MAX_FN_LINES`] lines, and no
//! circle among the crate's top-level modules (`a` uses `b` and `b`, through any chain, uses
//! `a`).
//!
//! Both read the source as text with a small lexer that skips comments, strings and character
//! literals; test modules (from the first `#[cfg(test)]` line on, by the house convention) are
//! left out.

use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{Problem, problem, read};

/// The longest function allowed in `core/src`, in lines from its `fn` line to its closing brace.
pub const MAX_FN_LINES: usize = 110;

/// A source file's code with comments, strings and character literals blanked out (newlines
/// kept, so line numbers stay), and its test module cut off.
pub(super) fn code_of(text: &str) -> String {
    let text = match text.find("\n#[cfg(test)]") {
        Some(cut) => &text[..cut],
        None => text,
    };
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('#') || next == Some('"')) && raw_start(&chars, i) {
            i = skip_raw(&chars, i, &mut out);
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && is_char_literal(&chars, i) {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether `r` at `i` starts a raw string (`r"`, `r#"`), not an identifier ending in `r`.
fn raw_start(chars: &[char], i: usize) -> bool {
    let prev_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    let mut j = i + 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    !prev_ident && chars.get(j) == Some(&'"')
}

/// Skips the raw string starting at `i`, blanking it into `out`; returns the index after it.
fn skip_raw(chars: &[char], mut i: usize, out: &mut String) -> usize {
    out.push(' ');
    i += 1;
    let mut hashes = 0;
    while chars.get(i) == Some(&'#') {
        hashes += 1;
        out.push(' ');
        i += 1;
    }
    out.push(' ');
    i += 1;
    while i < chars.len() {
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            for _ in 0..=hashes {
                out.push(' ');
            }
            return i + hashes + 1;
        }
        out.push(if chars[i] == '\n' { '\n' } else { ' ' });
        i += 1;
    }
    i
}

/// Whether the `'` at `i` opens a character literal (`'x'`, `'\n'`) rather than a lifetime.
fn is_char_literal(chars: &[char], i: usize) -> bool {
    match chars.get(i + 1) {
        Some('\\') => true,
        Some(_) => chars.get(i + 2) == Some(&'\''),
        None => false,
    }
}

/// Every function with a body in `code`: its name, first line and line count.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<usize> = code
        .char_indices()
        .filter(|(_, c)| *c == '\n')
        .map(|(i, _)| i)
        .collect();
    let line_of = |at: usize| lines.partition_point(|&nl| nl < at) + 1;
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(found) = code[search..].find("fn ") {
        let at = search + found;
        search = at + 3;
        let word_start =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        if !word_start {
            continue;
        }
        let name: String = code[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` before any `;` (a declaration has no body).
        let Some(open) = code[at..].find(['{', ';']).map(|o| at + o) else {
            continue;
        };
        if bytes[open] != b'{' {
            continue;
        }
        let mut depth = 0usize;
        let mut close = None;
        for (i, b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        if let Some(close) = close {
            let first = line_of(at);
            out.push((name, first, line_of(close) - first + 1));
        }
    }
    out
}

/// No function in `core/src` is longer than [`MAX_FN_LINES`] lines.
pub fn function_lengths(root: &Path, files: &[String], problems: &mut Vec<Problem>) -> Result<()> {
    for rel in files.iter().filter(|r| r.starts_with("core/src/")) {
        let code = code_of(&read(root, rel)?);
        for (name, line, len) in functions(&code) {
            if len > MAX_FN_LINES {
                problems.push(problem(
                    rel.clone(),
                    Some(line),
                    format!("fn {name} is {len} lines (at most {MAX_FN_LINES} in core/src): split it into steps with names"),
                ));
            }
        }
    }
    Ok(())
}

/// The top-level module of `core/src` a file belongs to (`core/src/projector/kind.rs` →
/// `projector`), `None` for `lib.rs`.
fn module_of(rel: &str) -> Option<String> {
    let rest = rel.strip_prefix("core/src/")?;
    let first = rest.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
}

/// The top-level modules `code` names through `crate::` paths (`crate::a::…`, `crate::{a, b}`).
fn uses(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut search = 0;
    while let Some(found) = code[search..].find("crate::") {
        let at = search + found + "crate::".len();
        search = at;
        let rest = &code[at..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end]
                .split(',')
                .map(|part| part.trim().split("::").next().unwrap_or(""))
                .collect()
        } else {
            vec![
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or(""),
            ]
        };
        out.extend(
            names
                .into_iter()
                .filter(|n| !n.is_empty())
                .map(str::to_string),
        );
    }
    out
}

/// No circle among the top-level modules of `core/src`.
pub fn no_import_circles(root: &Path, files: &[String], problems: &mut Vec<Problem>) -> Result<()> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for rel in files {
        let Some(module) = module_of(rel) else {
            continue;
        };
        graph.entry(module).or_default();
    }
    for rel in files {
        let Some(module) = module_of(rel) else {
            continue;
        };
        let code = code_of(&read(root, rel)?);
        let used: Vec<String> = uses(&code)
            .into_iter()
            .filter(|u| *u != module && graph.contains_key(u))
            .collect();
        graph.entry(module).or_default().extend(used);
    }
    for circle in circles(&graph) {
        problems.push(problem(
            format!("core/src/{}", circle[0]),
            None,
            format!(
                "module import circle: {} → {}; move what both need into a module of its own",
                circle.join(" → "),
                circle[0]
            ),
        ));
    }
    Ok(())
}

/// Each circle of `graph` once, starting from its smallest module.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for start in graph.keys() {
        let mut stack = vec![vec![start.clone()]];
        while let Some(path) = stack.pop() {
            let Some(last) = path.last() else { continue };
            for next in graph.get(last).into_iter().flatten() {
                if next == start {
                    found.push(path.clone());
                } else if next > start && !path.contains(next) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push(longer);
                }
            }
        }
    }
    found
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn code_blanks_comments_strings_and_chars_and_keeps_lines() {
        let text = "fn a() { let s = \"}{\"; let c = '}'; // }\n let r = r#\"}\"#; }\n/* { */ fn b<'x>(v: &'x str) {}\n";
        let code = code_of(text);
        assert_eq!(code.lines().count(), text.lines().count());
        let fns = functions(&code);
        assert_eq!(fns, vec![("a".to_string(), 1, 2), ("b".to_string(), 3, 1)]);
    }

    #[test]
    fn long_functions_and_circles_are_named() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        std::fs::create_dir_all(root.join("core/src/b")).unwrap();
        let long: String = (0..MAX_FN_LINES).map(|_| "    let x = 1;\n").collect();
        std::fs::write(
            root.join("core/src/a.rs"),
            format!("//! a\nuse crate::b::X;\nfn short() {{}}\nfn long() {{\n{long}}}\n"),
        )
        .unwrap();
        std::fs::write(
            root.join("core/src/b/mod.rs"),
            "//! b\nuse crate::{c, e};\n",
        )
        .unwrap();
        std::fs::write(
            root.join("core/src/c.rs"),
            "//! c\n// crate::b in a comment\nuse crate::a;\n",
        )
        .unwrap();
        std::fs::write(root.join("core/src/e.rs"), "//! e\n").unwrap();
        let files: Vec<String> = [
            "core/src/a.rs",
            "core/src/b/mod.rs",
            "core/src/c.rs",
            "core/src/e.rs",
        ]
        .map(String::from)
        .to_vec();
        let mut problems = Vec::new();
        function_lengths(root, &files, &mut problems).unwrap();
        no_import_circles(root, &files, &mut problems).unwrap();
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(list.len(), 2, "{list:#?}");
        assert!(
            list[0].starts_with("core/src/a.rs:4: fn long is 112 lines"),
            "{list:#?}"
        );
        assert!(
            list[1].contains("module import circle: a → b → c → a"),
            "{list:#?}"
        );
    }
}
