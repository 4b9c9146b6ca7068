//! Path arguments: lexical normalization.

use std::path::{Component, Path, PathBuf};

/// Where a path argument points, after lexical normalization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NormalizedPath {
    /// Inside the workspace (or a relative path that stays relative):
    /// relative, `/`-separated, without `.` or `..` (`.` for the root itself).
    Inside(String),
    /// An absolute path outside the workspace root (or any absolute path when
    /// no root is configured), normalized.
    Absolute(String),
    /// A relative path that climbs out with `..`: it never matches an allow
    /// rule. Holds the absolute path when a root is configured, else the
    /// normalized relative path (`../x`).
    Escaping(String),
}

impl NormalizedPath {
    /// The text globs are matched against.
    pub fn as_str(&self) -> &str {
        match self {
            NormalizedPath::Inside(s)
            | NormalizedPath::Absolute(s)
            | NormalizedPath::Escaping(s) => s,
        }
    }
}

/// Normalizes `raw` lexically (no file system access): `a/./b/../c` → `a/c`;
/// an absolute path inside `root` becomes relative to it; a relative path
/// that climbs above its start is [`Escaping`](NormalizedPath::Escaping).
///
/// ```
/// use std::path::Path;
/// use tack_permission::{NormalizedPath, normalize_path};
/// let root = Some(Path::new("/work/repo"));
/// assert_eq!(normalize_path("src/../lib/./a.rs", root), NormalizedPath::Inside("lib/a.rs".into()));
/// assert_eq!(normalize_path("/work/repo/src/a.rs", root), NormalizedPath::Inside("src/a.rs".into()));
/// assert_eq!(normalize_path("/etc/passwd", root), NormalizedPath::Absolute("/etc/passwd".into()));
/// assert_eq!(normalize_path("src/../../x", root), NormalizedPath::Escaping("/work/x".into()));
/// assert_eq!(normalize_path("/work/repo/../x", root), NormalizedPath::Absolute("/work/x".into()));
/// ```
pub fn normalize_path(raw: &str, root: Option<&Path>) -> NormalizedPath {
    let path = Path::new(raw);
    if path.is_absolute() {
        let abs = lexical_absolute(path);
        if let Some(root) = root {
            let root = lexical_absolute(root);
            if let Ok(rest) = abs.strip_prefix(&root) {
                return NormalizedPath::Inside(join_relative(rest));
            }
        }
        return NormalizedPath::Absolute(to_slash(&abs));
    }
    let mut parts: Vec<String> = Vec::new();
    let mut climbs = 0usize;
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            // `..` removes the last part, or climbs above the start.
            Component::ParentDir => climbs += usize::from(parts.pop().is_none()),
            _ => {}
        }
    }
    if climbs == 0 {
        return NormalizedPath::Inside(if parts.is_empty() {
            ".".to_owned()
        } else {
            parts.join("/")
        });
    }
    match root {
        Some(root) => {
            let mut abs = lexical_absolute(root);
            for _ in 0..climbs {
                abs.pop();
            }
            abs.extend(&parts);
            NormalizedPath::Escaping(to_slash(&abs))
        }
        None => {
            let mut all = vec!["..".to_owned(); climbs];
            all.extend(parts);
            NormalizedPath::Escaping(all.join("/"))
        }
    }
}

fn lexical_absolute(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn join_relative(rest: &Path) -> String {
    let parts: Vec<_> = rest
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

fn to_slash(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}
