//! Path rules about reading files, applied to the tools that search or list
//! them: `grep` reads every file under its `path`, `glob` lists every path
//! under it, `list_dir` lists one directory (to a depth).
//!
//! A rule on `read_file`'s `path` is about the file, not the tool: a deny
//! or ask rule also applies to a search that reads or lists a matching file.
//! When the search root itself matches, or every path under it does
//! (`secrets/**` and `path: "secrets"`), the rule applies for certain.
//! When a matching file may lie under the root (`**/.env` and the
//! workspace root), the search may reach it: the call asks, saying how to
//! narrow it. `grep`'s `glob` and `glob`'s `pattern` narrow it when their
//! last component cannot match the file name the rule names.

use globset::Glob;

use super::matcher::NormalizedPath;

/// The tools searched by path rules on `read_file`, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Search {
    /// `grep`: reads every file under `path`, narrowed by `glob`.
    Grep,
    /// `glob`: lists every path under `path` matching `pattern`.
    Glob,
    /// `list_dir`: lists the entries of `path` (names and sizes, not contents).
    ListDir,
}

impl Search {
    /// The search tool called `name`, if it is one.
    pub(crate) fn of(name: &str) -> Option<Self> {
        match name {
            "grep" => Some(Search::Grep),
            "glob" => Some(Search::Glob),
            "list_dir" => Some(Search::ListDir),
            _ => None,
        }
    }

    /// The argument that narrows the search to some file names.
    pub(crate) fn include_arg(self) -> Option<&'static str> {
        match self {
            Search::Grep => Some("glob"),
            Search::Glob => Some("pattern"),
            Search::ListDir => None,
        }
    }
}

/// How a search relates to a path glob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// No path it reads or lists can match.
    No,
    /// Every path under its root matches.
    All,
    /// A matching path may lie under its root (why).
    Could(String),
}

fn is_glob(part: &str) -> bool {
    part.contains(['*', '?', '[', ']', '{', '}', '\\', '!'])
}

/// Whether one path component may match one glob component.
fn component_matches(glob: &str, part: &str) -> bool {
    if !is_glob(glob) {
        return glob == part;
    }
    Glob::new(glob).map_or(true, |g| g.compile_matcher().is_match(part))
}

/// The root a search really starts from and the rest of its file-name
/// filter: the filter's leading literal directories move into the root
/// (`path: "."` with `pattern: "src/*.rs"` searches `src` for `*.rs`).
pub(crate) fn narrowed<'i>(root: &str, include: Option<&'i str>) -> (String, Option<&'i str>) {
    let Some(include) = include else {
        return (root.to_owned(), None);
    };
    let mut root = root.trim_end_matches('/').to_owned();
    let mut rest = include;
    while let Some((dir, tail)) = rest.split_once('/') {
        if dir.is_empty() || dir == "." {
            rest = tail;
            continue;
        }
        if is_glob(dir) || dir == ".." {
            break;
        }
        root.push('/');
        root.push_str(dir);
        rest = tail;
    }
    (root, Some(rest))
}

/// Whether a search rooted at `root` (that `glob` does not match itself)
/// reads or lists a path `glob` matches. `include` is the search's own
/// file-name filter.
pub(crate) fn reach(
    glob: &str,
    root: &NormalizedPath,
    search: Search,
    include: Option<&str>,
) -> Reach {
    let root_text = root.as_str();
    let root_parts: Vec<&str> = if root_text == "." {
        Vec::new()
    } else {
        root_text.split('/').collect()
    };
    if glob.starts_with('/') != root_text.starts_with('/') && !glob.starts_with("**") {
        return Reach::No; // an absolute glob and a relative root, or the reverse
    }
    let glob_parts: Vec<&str> = glob.split('/').collect();
    let mut at = 0;
    for part in &root_parts {
        match glob_parts.get(at) {
            None => return Reach::No, // the glob names the root or a directory above it
            Some(&"**") => break,
            Some(g) if component_matches(g, part) => at += 1,
            Some(_) => return Reach::No,
        }
    }
    let below = &glob_parts[at..];
    if below.is_empty() {
        return Reach::No;
    }
    if below.iter().all(|p| *p == "**" || *p == "*") {
        return Reach::All;
    }
    if search == Search::ListDir {
        // A listing shows names, not contents: it is covered only when
        // everything it lists is protected.
        return Reach::No;
    }
    if let (Some(last), Some(include)) = (below.last(), include) {
        let include_last = include.rsplit('/').next().unwrap_or(include);
        if !is_glob(last) && include_last != "**" {
            if let Ok(filter) = Glob::new(include_last) {
                if !filter.compile_matcher().is_match(last) {
                    return Reach::No;
                }
            }
        }
    }
    Reach::Could(format!(
        "it searches `{root_text}`, under which files matching `{glob}` may lie"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inside(p: &str) -> NormalizedPath {
        NormalizedPath::Inside(p.to_owned())
    }

    #[test]
    fn a_search_may_reach_a_file_below_its_root_unless_its_filter_excludes_it() {
        let could = |r: &Reach| matches!(r, Reach::Could(_));
        assert!(could(&reach("**/.env", &inside("."), Search::Grep, None)));
        assert!(could(&reach(
            "**/.env",
            &inside("src"),
            Search::Grep,
            Some("*")
        )));
        assert!(could(&reach(
            "config/.env",
            &inside("."),
            Search::Glob,
            Some("**/*")
        )));
        assert_eq!(
            reach("**/.env", &inside("."), Search::Grep, Some("*.rs")),
            Reach::No
        );
        assert_eq!(
            reach("**/.env", &inside("."), Search::Glob, Some("src/**/*.rs")),
            Reach::No
        );
        assert_eq!(
            reach("config/.env", &inside("src"), Search::Grep, None),
            Reach::No
        );
        assert_eq!(
            reach("secrets/**", &inside("secrets"), Search::Grep, None),
            Reach::All
        );
        assert_eq!(
            reach("secrets/**", &inside("secrets"), Search::ListDir, None),
            Reach::All
        );
        assert_eq!(
            reach("**/.env", &inside("."), Search::ListDir, None),
            Reach::No
        );
        assert_eq!(
            reach("/etc/**", &inside("."), Search::Grep, None),
            Reach::No
        );
        assert_eq!(
            reach(
                "/etc/**",
                &NormalizedPath::Absolute("/etc".into()),
                Search::Grep,
                None
            ),
            Reach::All
        );
        assert!(could(&reach(
            "s*/*.pem",
            &inside("secrets"),
            Search::Grep,
            Some("*.rs")
        )));
    }

    #[test]
    fn literal_directories_of_a_filter_narrow_the_root() {
        assert_eq!(
            narrowed(".", Some("src/*.rs")),
            ("./src".to_owned(), Some("*.rs"))
        );
        assert_eq!(
            narrowed("a/", Some("b/c/**/*.rs")),
            ("a/b/c".to_owned(), Some("**/*.rs"))
        );
        assert_eq!(narrowed(".", Some("**/x")), (".".to_owned(), Some("**/x")));
        assert_eq!(
            narrowed("a", Some("../b/x")),
            ("a".to_owned(), Some("../b/x"))
        );
        assert_eq!(narrowed("a", None), ("a".to_owned(), None));
    }
}
