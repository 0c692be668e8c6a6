//! The provider's docs page must record the facts its plan relies on, each with a source.
//!
//! Every provider's `src/lib.rs` opens with a `//!` page holding a `# Facts relied on` table
//! (`| fact | source |`), one row per fact about the CLI (which files it reads, in what order, its
//! root markers and budget, where it takes skills, MCP servers, hooks). `cargo xtask
//! new-provider` generates the table with [`TODO_MARKER`] in every cell; [`facts_are_recorded`]
//! (and `cargo xtask tidy`) fail until the maintainer has filled it in. Every provider's suite
//! runs it: `conformance_suite!` reads the crate's `src/lib.rs` and the harness registers the
//! `facts_are_recorded` test with it.

/// What a generated provider leaves for its maintainer to fill in.
pub const TODO_MARKER: &str = "TODO(maintainer)";

/// The heading of the facts table in a provider's docs page.
pub const FACTS_HEADING: &str = "# Facts relied on";

/// Everything still missing from `source` (a provider's `src/lib.rs`), one sentence each; empty
/// when the facts are recorded.
pub fn missing_facts(provider: &str, source: &str) -> Vec<String> {
    let file = format!("providers/{provider}/src/lib.rs");
    let mut missing = Vec::new();
    let docs: Vec<(usize, &str)> = source
        .lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim_start()))
        .take_while(|(_, line)| line.starts_with("//!") || line.is_empty())
        .filter_map(|(n, line)| line.strip_prefix("//!").map(|l| (n, l.trim())))
        .collect();
    if docs.is_empty() {
        missing.push(format!(
            "{file}: fill in the docs page: the file must open with `//!` lines saying where the session text goes and why"
        ));
        return missing;
    }
    let Some(heading) = docs.iter().position(|(_, l)| *l == FACTS_HEADING) else {
        missing.push(format!(
            "{file}: fill in the facts: the docs page has no `{FACTS_HEADING}` section with a `| fact | source |` table"
        ));
        return missing;
    };
    let rows: Vec<&(usize, &str)> = docs[heading + 1..]
        .iter()
        // Prose may introduce the table; the section ends at the next heading.
        .skip_while(|(_, l)| !l.starts_with('|') && !l.starts_with('#'))
        .take_while(|(_, l)| l.starts_with('|'))
        .collect();
    let facts: Vec<&&(usize, &str)> = rows
        .iter()
        .skip(2) // the header row and the `|---|---|` rule
        .collect();
    if rows.len() < 2 || !rows[0].1.to_ascii_lowercase().contains("source") {
        missing.push(format!(
            "{file}: fill in the facts: `{FACTS_HEADING}` must be followed by a `| fact | source |` table"
        ));
    } else if facts.is_empty() {
        missing.push(format!(
            "{file}: fill in the facts: the `{FACTS_HEADING}` table has no rows; record each fact the plan relies on with its source"
        ));
    }
    for (n, row) in facts {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 2 || cells.iter().any(|c| c.is_empty()) {
            missing.push(format!(
                "{file}:{n}: fill in this fact and its source (a docs page, a source file, or \"not confirmed\" with why)"
            ));
        }
    }
    for (n, line) in source.lines().enumerate() {
        if line.contains(TODO_MARKER) {
            missing.push(format!(
                "{file}:{}: fill in what this {TODO_MARKER} asks: {}",
                n + 1,
                line.trim()
                    .trim_start_matches("//!")
                    .trim_start_matches("//")
                    .trim()
            ));
        }
    }
    missing
}

/// Fails, naming each gap, unless `source` (a provider's `src/lib.rs`) records the facts its plan
/// relies on and holds no [`TODO_MARKER`].
pub fn facts_are_recorded(provider: &str, source: &str) {
    let missing = missing_facts(provider, source);
    assert!(
        missing.is_empty(),
        "{provider}: the provider is not finished; fill in:\n  {}\n(see docs/adding-a-provider.md, \"Recording facts\")",
        missing.join("\n  ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const DONE: &str = "//! The x provider.\n//!\n//! # Facts relied on\n//!\n//! | fact | source |\n//! |---|---|\n//! | reads AGENTS.md | its docs |\n\nuse x;\n";

    #[test]
    fn a_filled_table_passes() {
        assert_eq!(missing_facts("x", DONE), Vec::<String>::new());
        facts_are_recorded("x", DONE);
    }

    #[test]
    fn every_gap_is_named() {
        let todo = DONE.replace("its docs", "TODO(maintainer): a source");
        let missing = missing_facts("x", &todo);
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert!(
            missing[0].starts_with("providers/x/src/lib.rs:7: fill in"),
            "{missing:?}"
        );

        let no_rows = DONE.replace("//! | reads AGENTS.md | its docs |\n", "");
        assert!(missing_facts("x", &no_rows)[0].contains("has no rows"));

        let no_table = DONE.replace("# Facts relied on", "# Notes");
        assert!(missing_facts("x", &no_table)[0].contains("no `# Facts relied on` section"));

        let empty_cell = DONE.replace("its docs", " ");
        assert!(missing_facts("x", &empty_cell)[0].contains(":7: fill in this fact"));

        assert!(missing_facts("x", "use x;\n")[0].contains("fill in the docs page"));
    }

    #[test]
    #[should_panic(expected = "fill in")]
    fn the_check_fails_with_what_to_fill_in() {
        facts_are_recorded("x", &DONE.replace("its docs", "TODO(maintainer)"));
    }
}
