//! A Markdown file's front matter: where it starts and ends, and its top-level scalar fields as a
//! YAML reader (what the CLIs parse it with) reads them. The one reader of the front matter of
//! what a session brings and writes: the neutral definitions' fields and body, and where a
//! generated file's marker goes. (The guidance resolver only asks whether a project file's front
//! matter has a `paths:` or `applyTo:` key, and what is on its line.)
//!
//! Front matter is the lines between a first line `---` (after an optional byte order mark) and
//! the next line that is `---` (trailing blanks allowed). A field is a `key: value` line at the
//! start of a line, its value read as YAML reads a scalar: plain (a ` #` starts a comment, lines
//! indented below it continue it, folded with spaces), single-quoted (`''` is a quote),
//! double-quoted (backslash escapes), or a block scalar (`|` keeps line breaks, `>` folds them;
//! `-` and `+` chomp the final ones). A key whose value is a list or a mapping reads as empty.

/// The front matter's fields and the body after it. A file that does not open with front matter
/// has none: its whole text is the body.
pub fn front_matter(text: &str) -> (Vec<(String, String)>, &str) {
    match split(text) {
        Some((head, body)) => (fields(head), body),
        None => (Vec::new(), text),
    }
}

/// The byte offset just after the front matter's closing line, or 0 when `text` has none.
pub fn end_of_front_matter(text: &str) -> usize {
    split(text).map_or(0, |(_, body)| text.len() - body.len())
}

/// The lines between the two `---` lines, and the body after the closing one.
fn split(text: &str) -> Option<(&str, &str)> {
    let start = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = start
        .strip_prefix("---\n")
        .or_else(|| start.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let end = offset + line.len();
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[end..]));
        }
        offset = end;
    }
    // No closing line: not front matter after all.
    None
}

/// The top-level `key: value` fields of a front matter's lines, in order.
fn fields(head: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = head.lines().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        at += 1;
        let Some((key, value)) = key_value(line) else {
            continue;
        };
        // The lines that belong to this key: indented ones, and blank ones between them.
        let mut more = at;
        while more < lines.len() && (indented(lines[more]) || lines[more].trim().is_empty()) {
            more += 1;
        }
        let continued = &lines[at..more];
        at = more;
        out.push((key.to_string(), scalar(value, continued)));
    }
    out
}

/// `line` as a top-level `key: value` (the value trimmed), when it is one.
pub(crate) fn key_value(line: &str) -> Option<(&str, &str)> {
    if line.is_empty() || indented(line) || line.starts_with(['-', '#']) {
        return None;
    }
    let (key, value) = line.split_once(':')?;
    let key = key.trim();
    // `key:value` (no blank after the colon) is a plain scalar in YAML, not a key.
    if key.is_empty() || !(value.is_empty() || value.starts_with([' ', '\t'])) {
        return None;
    }
    Some((key, value.trim()))
}

/// Whether a line starts with a blank: it continues the key above it.
pub(crate) fn indented(line: &str) -> bool {
    line.starts_with([' ', '\t'])
}

/// A scalar value that starts as `value` on its key's line, continued by the `continued` lines.
fn scalar(value: &str, continued: &[&str]) -> String {
    if let Some(header) = value.strip_prefix(['|', '>'])
        && is_block_header(header)
    {
        return block_scalar(value.starts_with('|'), header, continued);
    }
    let mut lines = vec![value];
    lines.extend(continued.iter().map(|line| line.trim()));
    if let Some(quoted) = value.strip_prefix('\'') {
        let text = fold(&join_quoted(quoted, continued));
        return text.strip_suffix('\'').unwrap_or(&text).replace("''", "'");
    }
    if let Some(quoted) = value.strip_prefix('"') {
        let text = join_quoted(quoted, continued);
        return unescape_double(&text);
    }
    // A list or a mapping under the key is not a scalar.
    if value.is_empty()
        && continued
            .iter()
            .map(|line| line.trim())
            .find(|line| !line.is_empty())
            .is_some_and(|first| first.starts_with('-') || key_value(first).is_some())
    {
        return String::new();
    }
    let mut kept = Vec::new();
    for line in lines {
        // A comment ends the scalar.
        let (text, comment) = match line.find(" #") {
            Some(at) => (&line[..at], true),
            None if line.starts_with('#') => ("", true),
            None => (line, false),
        };
        kept.push(text.trim_end());
        if comment {
            break;
        }
    }
    fold(&kept.join("\n")).trim().to_string()
}

/// A quoted scalar's text after its opening quote, with its continuation lines (trimmed, joined
/// by line breaks), up to its end.
fn join_quoted(first: &str, continued: &[&str]) -> String {
    let mut text = first.to_string();
    for line in continued {
        text.push('\n');
        text.push_str(line.trim());
    }
    text.trim_end().to_string()
}

/// Line folding of a flow scalar: a single line break is a space, each blank line a line break.
fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut breaks = 0;
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 && line.is_empty() {
            breaks += 1;
            continue;
        }
        if i > 0 {
            match breaks {
                0 => out.push(' '),
                n => out.extend(std::iter::repeat_n('\n', n)),
            }
        }
        breaks = 0;
        out.push_str(line);
    }
    out
}

/// A double-quoted scalar's text after its opening quote: folded, escapes read, up to the
/// closing quote.
fn unescape_double(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let folded = fold(text);
    let mut chars = folded.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => {
                let Some(escaped) = chars.next() else { break };
                let hex = |n: usize, chars: &mut std::str::Chars<'_>| {
                    let digits: String = chars.by_ref().take(n).collect();
                    u32::from_str_radix(&digits, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .unwrap_or(char::REPLACEMENT_CHARACTER)
                };
                out.push(match escaped {
                    '0' => '\0',
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    't' | '\t' => '\t',
                    'n' => '\n',
                    'v' => '\u{b}',
                    'f' => '\u{c}',
                    'r' => '\r',
                    'e' => '\u{1b}',
                    'N' => '\u{85}',
                    '_' => '\u{a0}',
                    'L' => '\u{2028}',
                    'P' => '\u{2029}',
                    'x' => hex(2, &mut chars),
                    'u' => hex(4, &mut chars),
                    'U' => hex(8, &mut chars),
                    // `\"`, `\\`, `\/`, `\ ` and anything else: the character itself.
                    other => other,
                });
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether what follows `|` or `>` is a block scalar's header: an optional chomping indicator
/// and indentation digit, then nothing or a comment.
fn is_block_header(header: &str) -> bool {
    let indicators: String = header
        .chars()
        .take_while(|c| matches!(c, '+' | '-' | '1'..='9'))
        .collect();
    let rest = header[indicators.len()..].trim_start();
    indicators.len() <= 2 && (rest.is_empty() || rest.starts_with('#'))
}

/// A block scalar: the `continued` lines less their indentation, line breaks kept (`literal`)
/// or folded, the final ones chomped as the header says.
fn block_scalar(literal: bool, header: &str, continued: &[&str]) -> String {
    let indent = header
        .chars()
        .find_map(|c| c.to_digit(10))
        .map(|n| n as usize)
        .or_else(|| {
            continued
                .iter()
                .find(|line| !line.trim().is_empty())
                .map(|line| line.len() - line.trim_start().len())
        })
        .unwrap_or(0);
    let lines: Vec<&str> = continued
        .iter()
        .map(|line| line.get(indent..).unwrap_or(""))
        .collect();
    let mut text = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            let previous = lines[i - 1];
            // Folding joins two lines of text with a space; a blank or more-indented line keeps
            // its line break.
            let folds = !literal
                && !previous.is_empty()
                && !line.is_empty()
                && !indented(previous)
                && !indented(line);
            text.push(if folds { ' ' } else { '\n' });
        }
        text.push_str(line);
    }
    if !literal {
        // In folded text, a blank line stands for one line break, not two.
        text = text.replace("\n\n", "\n");
    }
    let body = text.trim_end_matches('\n');
    if header.contains('-') || body.is_empty() {
        body.to_string()
    } else if header.contains('+') {
        let kept = continued.len() - lines.iter().rposition(|l| !l.is_empty()).unwrap_or(0);
        format!("{body}{}", "\n".repeat(kept))
    } else {
        format!("{body}\n")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn one(yaml: &str) -> String {
        let text = format!("---\n{yaml}\n---\nBody.\n");
        let (fields, body) = front_matter(&text);
        assert_eq!(body, "Body.\n", "{yaml}");
        fields
            .into_iter()
            .find(|(k, _)| k == "d")
            .map(|(_, v)| v)
            .unwrap()
    }

    #[test]
    fn fields_and_body_split() {
        let (fields, body) = front_matter(
            "---\nname: reviewer\ndescription: \"Reviews: bugs\"\ntools:\n  - read\n---\nBody.\n",
        );
        assert_eq!(
            fields,
            vec![
                ("name".to_string(), "reviewer".to_string()),
                ("description".to_string(), "Reviews: bugs".to_string()),
                ("tools".to_string(), String::new()),
            ]
        );
        assert_eq!(body, "Body.\n");
        assert_eq!(
            front_matter("No front matter.\n"),
            (vec![], "No front matter.\n")
        );
        let open = "---\nname: x\nno end\n";
        assert_eq!(front_matter(open), (vec![], open));
        let (fields, body) = front_matter("---\r\ndescription: d\r\n---\r\nB\r\n");
        assert_eq!(fields, vec![("description".to_string(), "d".to_string())]);
        assert_eq!(body, "B\r\n");
    }

    #[test]
    fn a_closing_line_with_blanks_and_a_byte_order_mark_still_delimit_it() {
        let text = "\u{feff}---\nd: x\n--- \nBody.\n";
        assert_eq!(front_matter(text).1, "Body.\n");
        assert_eq!(end_of_front_matter(text), text.len() - "Body.\n".len());
        assert_eq!(end_of_front_matter("Body.\n---\n"), 0);
        assert_eq!(end_of_front_matter("---\nd: x\n"), 0);
    }

    #[test]
    fn scalars_read_as_yaml_reads_them() {
        assert_eq!(one("d: plain text"), "plain text");
        assert_eq!(one("d: Fix #2 bugs"), "Fix");
        assert_eq!(one("d: a#b"), "a#b");
        assert_eq!(one("d: 'It''s'"), "It's");
        assert_eq!(one(r#"d: "Say \"hi\"\tnow \u00e9""#), "Say \"hi\"\tnow é");
        assert_eq!(one("d: \"one\n  two\""), "one two");
        assert_eq!(one("d: first\n  second\n\n  third"), "first second\nthird");
        assert_eq!(
            one("d: >\n  folded\n  text\n\n  para\n"),
            "folded text\npara\n"
        );
        assert_eq!(one("d: |\n  kept\n  lines\n"), "kept\nlines\n");
        assert_eq!(one("d: |-\n  kept\n  lines\n"), "kept\nlines");
        assert_eq!(one("d: >-  # a comment\n  a\n  b"), "a b");
        assert_eq!(one("d:\n  - a\n  - b"), "");
        assert_eq!(one("d:\n  k: v"), "");
        assert_eq!(one("d : spaced key"), "spaced key");
    }
}
