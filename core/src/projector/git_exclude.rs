//! Git sees nothing a session creates: in a git work tree (the workspace's top holds a `.git`
//! folder with a `HEAD`), every path sessions create where nothing stood (files and the folders
//! on the way, the priors folder) is named in the repository's `.git/info/exclude`, in a marked
//! block of its own (`# BEGIN {ns}-session-excludes`, [`crate::block::Markers::for_git_exclude`])
//! that follows the same lease rules as every block: present while a session that created
//! something lives, holding the newest such session's patterns (which name everything created
//! up to its start), and taken out by the last one, so the file is byte for byte as it was (or
//! gone, if it was not there). `git status --porcelain` during a session then lists only tracked
//! files a block was written into, and files the project had that a session took over.
//!
//! A skill folder a session puts where the project had its own (taken over: the project's folder
//! waits in the priors folder) is named whole while a session holds it, so its marker and the
//! files the project's folder did not have are hidden too; the project's tracked files in it
//! still show as changed, since an exclude file hides untracked paths only.
//!
//! Not excluded, with a note saying so: a workspace inside a larger repository (its `.git` is
//! above the workspace, and nothing is written outside the workspace), and a linked worktree (its
//! `.git` is a file; the exclude file is the main repository's, outside the workspace). A `.git`,
//! `.git/info` or exclude file that is a link, or anything but what it should be, is left alone:
//! the session goes on without the exclusion, with a note. A project `.gitignore` that
//! re-includes paths (a `!` pattern), in the top or a folder on the way to what a session
//! creates, outranks the exclude file: the block is written, with a note naming that file.

use std::collections::BTreeSet;

use crate::error::Result;
use crate::fsio::Root;
use crate::ledger::{EntryRecord, Ledger};
use crate::plan::{BlockProjection, Plan, RelPath};
use crate::provider::{EntryKind, Namespace};

use super::{made, priors, skill_folder};

/// The exclude file, relative to the workspace.
pub(crate) const EXCLUDE: &str = ".git/info/exclude";

/// Whether `path` is the exclude file (its block is marked with `#` comments).
pub(crate) fn is_exclude(path: &RelPath) -> bool {
    path.as_str() == EXCLUDE
}

/// Whether the workspace's top is a git work tree whose exclude file we may edit: `.git` a
/// folder holding `HEAD`, `.git/info` a folder or absent, the exclude file a file or absent.
/// `Err` with the reason a work tree is not excluded; `Ok(false)` when there is none.
fn work_tree(root: &Root) -> Result<std::result::Result<bool, &'static str>> {
    let git = RelPath::new(".git")?;
    match root.kind(&git) {
        EntryKind::Dir => {}
        EntryKind::Missing
            if root
                .path()
                .parent()
                .and_then(std::path::Path::to_str)
                .is_some_and(|above| {
                    crate::guidance::find_git_root(&crate::guidance::StdFs, above).is_some()
                }) =>
        {
            return Ok(Err(
                "the workspace is inside a git work tree whose `.git` is above it, outside the workspace",
            ));
        }
        EntryKind::Missing => return Ok(Ok(false)),
        EntryKind::File => {
            return Ok(Err(
                "a linked worktree keeps its exclude file in the main repository, outside the workspace",
            ));
        }
        _ => return Ok(Err("`.git` is not a folder")),
    }
    if root.kind(&git.join("HEAD")?) != EntryKind::File {
        // An empty `.git` folder (a CLI's marker) is no repository.
        return Ok(Ok(false));
    }
    let info = git.join("info")?;
    if !matches!(root.kind(&info), EntryKind::Dir | EntryKind::Missing) {
        return Ok(Err("`.git/info` is not a folder"));
    }
    let exclude = info.join("exclude")?;
    match root.kind(&exclude) {
        EntryKind::Missing => {}
        EntryKind::File => {
            // A rewrite would split a hard-linked file from its other names (and is refused).
            use std::os::unix::fs::MetadataExt as _;
            let links = std::fs::symlink_metadata(root.path().join(exclude.as_str()))
                .map_or(1, |meta| meta.nlink());
            if links > 1 {
                return Ok(Err("`.git/info/exclude` has more than one hard link"));
            }
        }
        _ => return Ok(Err("`.git/info/exclude` is not a file")),
    }
    Ok(Ok(true))
}

/// `path` as a git pattern naming it alone, from the top of the work tree (`/`-anchored, `\`
/// before the characters a pattern gives a meaning, a trailing `/` for a folder).
fn pattern(path: &str, dir: bool) -> String {
    let mut out = String::with_capacity(path.len() + 2);
    out.push('/');
    for c in path.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '!' | '#') {
            out.push('\\');
        }
        out.push(c);
    }
    // A trailing space is dropped by git unless escaped.
    if out.ends_with(' ') {
        out.pop();
        out.push_str("\\ ");
    }
    if dir {
        out.push('/');
    }
    out
}

/// The first of `path`'s folders, or `path` itself, that does not exist yet: what a start that
/// puts something at `path` creates (`dir`: whether `path` itself is a folder).
fn created_at(root: &Root, path: &RelPath, dir: bool) -> Option<(RelPath, bool)> {
    for ancestor in path.ancestors() {
        if root.kind(&ancestor) == EntryKind::Missing {
            return Some((ancestor, true));
        }
    }
    (root.kind(path) == EntryKind::Missing).then(|| (path.clone(), dir))
}

/// Adds to `plan` the exclude block naming what it and the sessions before it create, when the
/// workspace is a git work tree and anything is created at all; a note says when a work tree's
/// exclude file cannot be used.
pub(crate) fn add_to_plan(
    root: &Root,
    plan: &mut Plan,
    ledger: &Ledger,
    ns: &Namespace,
) -> Result<()> {
    match work_tree(root)? {
        Ok(true) => {}
        Ok(false) => return Ok(()),
        Err(why) => {
            plan.notes.push(format!(
                "what this session creates is not hidden from git: {why}"
            ));
            return Ok(());
        }
    }
    let mut patterns = BTreeSet::new();
    let files = plan
        .blocks
        .iter()
        .map(|b| (&b.path, false))
        .chain(plan.owned_files.iter().map(|o| (&o.path, false)))
        .chain(
            plan.markers
                .iter()
                .map(|m| (&m.path, m.kind == crate::plan::MarkerKind::Dir)),
        );
    let skills: Vec<RelPath> = plan
        .skills
        .iter()
        .map(skill_folder::skill_path)
        .collect::<Result<_>>()?;
    let mut created = Vec::new();
    for (path, dir) in files.chain(skills.iter().map(|p| (p, true))) {
        if let Some((made, dir)) = created_at(root, path, dir) {
            patterns.insert(pattern(made.as_str(), dir));
            created.push(made);
        }
    }
    if let Some(gitignore) = re_including_gitignore(root, &created) {
        plan.notes.push(format!(
            "`{gitignore}` re-includes paths (a `!` pattern), which outranks `.git/info/exclude`: git may see what this session creates"
        ));
    }
    // A skill folder standing where the project's was (taken over, by this session or one still
    // live) holds our marker and the files the project's did not have: named whole.
    let held = ledger
        .entries
        .iter()
        .filter(|(_, entry)| matches!(entry, EntryRecord::Skill { .. }))
        .map(|(path, _)| path);
    for path in skills.iter().chain(held) {
        if root.kind(path) == EntryKind::Dir {
            patterns.insert(pattern(path.as_str(), true));
        }
    }
    for (path, dir) in made::recorded(root, ns)? {
        patterns.insert(pattern(path.as_str(), dir));
    }
    if patterns.is_empty() {
        return Ok(());
    }
    patterns.insert(pattern(&priors::dir_name(ns), true));
    let body: Vec<String> = patterns.into_iter().collect();
    plan.blocks.push(BlockProjection {
        path: RelPath::new(EXCLUDE)?,
        body: body.join("\n"),
    });
    Ok(())
}

/// The first `.gitignore` that could re-include a path in `created` (one in the work tree's top
/// or in a folder on the way to it, holding a `!` pattern): git reads those before the exclude
/// file, so they outrank our block.
fn re_including_gitignore(root: &Root, created: &[RelPath]) -> Option<String> {
    let mut folders = BTreeSet::new();
    folders.insert(None);
    for path in created {
        folders.extend(path.ancestors().into_iter().map(Some));
    }
    folders.into_iter().find_map(|folder| {
        let file = match &folder {
            Some(folder) => folder.join(".gitignore").ok()?,
            None => RelPath::new(".gitignore").ok()?,
        };
        let text = root.read(&file).ok()??.bytes;
        text.split(|b| *b == b'\n')
            .any(|line| line.trim_ascii_start().starts_with(b"!"))
            .then(|| file.as_str().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::pattern;

    #[test]
    fn patterns_name_their_path_alone() {
        assert_eq!(pattern(".cursor", true), "/.cursor/");
        assert_eq!(
            pattern(".cursor/rules/x.mdc", false),
            "/.cursor/rules/x.mdc"
        );
        assert_eq!(pattern("a*b?[c]", false), "/a\\*b\\?\\[c\\]");
        assert_eq!(pattern("#x!y\\z", false), "/\\#x\\!y\\\\z");
        assert_eq!(pattern("trailing ", false), "/trailing\\ ");
    }
}
