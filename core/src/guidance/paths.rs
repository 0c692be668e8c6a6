//! String path helpers of the guidance walk: normalising, joining, parents, the ancestor and
//! root-to-working-directory chains, and the one-segment wildcard match used by editor-pack globs.
//!
//! Paths are handled as strings with `/` separators, exactly as the seed does, so every path in a
//! resolution is the caller's workspace string joined with the names the walk found: nothing is
//! canonicalised, no symlink is resolved, `.` and `..` are kept as written.

/// Strips trailing `/` while more than one character is left (`"/"` stays `"/"`).
pub(crate) fn norm(path: &str) -> &str {
    let mut value = path;
    while value.len() > 1 && value.ends_with('/') {
        value = &value[..value.len() - 1];
    }
    value
}

/// The parent of `path`, or `None` when the only `/` is the leading one (or there is none).
///
/// Seed semantics: the parent of `/a` is `None`, not `/`, so the file-system root is never an
/// ancestor and never scanned.
pub(crate) fn parent(path: &str) -> Option<&str> {
    let norm = norm(path);
    match norm.rfind('/') {
        Some(cut) if cut > 0 => Some(&norm[..cut]),
        _ => None,
    }
}

/// Joins `name` under `dir` with one `/`.
///
/// An absolute `name` is used as given (a host-configured absolute editor pack or user file), and
/// an empty `dir` yields `name` unchanged (a path relative to the process's working directory).
pub(crate) fn join(dir: &str, name: &str) -> String {
    if name.starts_with('/') || dir.is_empty() {
        return name.to_string();
    }
    let mut out = String::with_capacity(dir.len() + 1 + name.len());
    out.push_str(dir);
    if !dir.ends_with('/') {
        out.push('/');
    }
    out.push_str(name);
    out
}

/// The directories above `root`, ordered from the top downward (the file-system root excluded).
pub(crate) fn ancestors(root: &str) -> Vec<String> {
    let mut chain = Vec::new();
    let mut current = parent(root);
    while let Some(dir) = current {
        chain.push(dir.to_string());
        current = parent(dir);
    }
    chain.reverse();
    chain
}

/// `root` and each directory below it down to `target`, root first.
///
/// Seed semantics: when `target` is not below `root` (as strings), only `root` is returned.
pub(crate) fn chain(root: &str, target: &str) -> Vec<String> {
    let mut out = vec![root.to_string()];
    if target == root || !format!("{target}/").starts_with(&format!("{root}/")) {
        return out;
    }
    let rest = &target[root.len() + 1..];
    let mut current = root.to_string();
    for segment in rest.split('/') {
        if segment.is_empty() {
            continue;
        }
        current = join(&current, segment);
        out.push(current.clone());
    }
    out
}

/// Whether `dir` is `root` or lies below it (as strings).
pub(crate) fn within(dir: &str, root: &str) -> bool {
    if dir == root {
        return true;
    }
    if root == "/" {
        return dir.starts_with('/');
    }
    dir.len() > root.len() && dir.starts_with(root) && dir.as_bytes()[root.len()] == b'/'
}

/// `path` with `.` and empty components dropped and `..` folded lexically: a comparison key only
/// (import cycle detection), never a path to read, since folding ignores symlinks.
pub(crate) fn fold(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            ".." if path.starts_with('/') => {}
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Whether a pattern segment holds a wildcard.
pub(crate) fn has_wildcard(segment: &str) -> bool {
    segment.contains(['*', '?'])
}

/// Matches one path segment against a pattern: `*` is any run of characters (a leading `.`
/// included), `?` is one character, everything else is literal.
pub(crate) fn wildcard_match(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norm_parent_join() {
        assert_eq!(norm("/a/b//"), "/a/b");
        assert_eq!(norm("/"), "/");
        assert_eq!(parent("/a/b"), Some("/a"));
        assert_eq!(parent("/a"), None);
        assert_eq!(parent("a"), None);
        assert_eq!(join("/", "x"), "/x");
        assert_eq!(join("/a", "x"), "/a/x");
        assert_eq!(join("/a", "/abs"), "/abs");
        assert_eq!(join("", "x"), "x");
    }

    #[test]
    fn ancestors_and_chain() {
        assert_eq!(ancestors("/w/p/q"), vec!["/w", "/w/p"]);
        assert!(ancestors("/w").is_empty());
        assert_eq!(chain("/w", "/w/a/b"), vec!["/w", "/w/a", "/w/a/b"]);
        assert_eq!(chain("/w", "/w"), vec!["/w"]);
        assert_eq!(chain("/w", "/wx/a"), vec!["/w"]);
        assert_eq!(chain("/w", "/other"), vec!["/w"]);
    }

    #[test]
    fn folding() {
        assert_eq!(fold("/a/b/../c/./d"), "/a/c/d");
        assert_eq!(fold("/../a"), "/a");
        assert_eq!(fold("../a/../../b"), "../../b");
        assert_eq!(fold("a//b/"), "a/b");
    }

    #[test]
    fn within_root() {
        assert!(within("/w", "/w"));
        assert!(within("/w/a", "/w"));
        assert!(!within("/wx", "/w"));
        assert!(!within("/", "/w"));
        assert!(within("/a", "/"));
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match("*.mdc", "a.mdc"));
        assert!(wildcard_match("*.mdc", ".hidden.mdc"));
        assert!(!wildcard_match("*.mdc", "a.md"));
        assert!(wildcard_match("a?c", "abc"));
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("a*b*c", "aXbYbZc"));
        assert!(!wildcard_match("a*b", "aXc"));
    }
}
