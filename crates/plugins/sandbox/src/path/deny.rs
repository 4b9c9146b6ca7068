//! Denied paths inside the roots, as globs.

use std::path::Path;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::SandboxError;

/// Compiled denied globs.
#[derive(Clone, Debug)]
pub(crate) struct DenyList {
    set: GlobSet,
    // The pattern each glob of `set` came from, by index.
    sources: Vec<String>,
}

fn compile(glob: &str, pattern: &str) -> Result<Glob, SandboxError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| SandboxError::InvalidGlob {
            glob: glob.to_owned(),
            message: e.kind().to_string(),
        })
}

impl DenyList {
    /// Compiles `globs`. `dir/**` also denies `dir` itself.
    pub(crate) fn new(globs: &[String]) -> Result<Self, SandboxError> {
        let mut builder = GlobSetBuilder::new();
        let mut sources = Vec::new();
        for glob in globs {
            let trimmed = glob.trim_start_matches("./");
            builder.add(compile(glob, trimmed)?);
            sources.push(glob.clone());
            if let Some(dir) = trimmed.strip_suffix("/**").filter(|d| !d.is_empty()) {
                builder.add(compile(glob, dir)?);
                sources.push(glob.clone());
            }
        }
        let set = builder.build().map_err(|e| SandboxError::InvalidGlob {
            glob: globs.join(", "),
            message: e.to_string(),
        })?;
        Ok(Self { set, sources })
    }

    /// Whether there are no globs.
    pub(crate) fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The glob that matches `relative` itself (not through a parent).
    pub(crate) fn matching(&self, relative: &Path) -> Option<&str> {
        if self.sources.is_empty() {
            return None;
        }
        self.set
            .matches(relative)
            .first()
            .map(|&i| self.sources[i].as_str())
    }

    /// The glob that denies `relative` (a path relative to its root), or one
    /// of its parent directories.
    pub(crate) fn denying(&self, relative: &Path) -> Option<&str> {
        if self.sources.is_empty() {
            return None;
        }
        relative
            .ancestors()
            .filter(|p| !p.as_os_str().is_empty())
            .find_map(|p| self.set.matches(p).first().copied())
            .map(|i| self.sources[i].as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deny(globs: &[&str]) -> DenyList {
        DenyList::new(&globs.iter().map(|g| g.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn a_directory_glob_denies_the_directory_and_its_contents() {
        let d = deny(&[".git/**"]);
        assert_eq!(d.denying(Path::new(".git")), Some(".git/**"));
        assert_eq!(d.denying(Path::new(".git/config")), Some(".git/**"));
        assert_eq!(d.denying(Path::new(".git/objects/ab/cd")), Some(".git/**"));
        assert_eq!(d.denying(Path::new("src/.git.rs")), None);
        assert_eq!(d.denying(Path::new(".gitignore")), None);
    }

    #[test]
    fn a_file_glob_matches_at_any_depth_and_its_children() {
        let d = deny(&["**/.env"]);
        assert_eq!(d.denying(Path::new(".env")), Some("**/.env"));
        assert_eq!(d.denying(Path::new("app/config/.env")), Some("**/.env"));
        assert_eq!(d.denying(Path::new(".env/inside")), Some("**/.env"));
        assert_eq!(d.denying(Path::new(".envrc")), None);
    }

    #[test]
    fn an_invalid_glob_is_reported() {
        let err = DenyList::new(&["a[".to_owned()]).unwrap_err();
        assert!(err.to_string().contains("`a[`"), "{err}");
    }
}
