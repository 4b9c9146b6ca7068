//! Path confinement: resolve a path as the kernel would, then check the
//! canonical result against the roots, the mode and the denied globs.

mod deny;
mod hide;
mod kept;
mod listing;
mod protect;
mod put_back;
mod resolve;
mod roots;

use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use tack_core::capability::{Access, CapabilityError};

use crate::error::SandboxError;
use crate::policy::{SandboxMode, SandboxPolicy};
pub(crate) use kept::Kept;
pub(crate) use protect::{ProtectedScan, Swept, describe_removed};
pub(crate) use put_back::{Undone, describe_undone};
pub(crate) use resolve::Resolved;
use resolve::{MAX_SYMLINKS, ResolveError, resolve};
use roots::{Root, RootAccess, Roots, canonical_root};

/// The longest path accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// The longest path component accepted, in bytes (Linux's `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// The compiled confinement rules of one sandbox.
#[derive(Clone, Debug)]
pub(crate) struct Confinement {
    mode: SandboxMode,
    roots: Roots,
    deny: deny::DenyList,
    protect: protect::ProtectList,
    hide: hide::HideList,
}

/// The most characters of a refused path repeated in the error.
const SHOWN_PATH_CHARS: usize = 200;

/// `given` as a refusal shows it: control characters (NUL …) escaped, and
/// cut when very long, so the message stays readable.
fn shown_given(given: &Path) -> String {
    let text = given.to_string_lossy();
    let escaped: String = if text.chars().any(char::is_control) {
        text.escape_debug().collect()
    } else {
        text.into_owned()
    };
    if escaped.chars().count() <= SHOWN_PATH_CHARS {
        return escaped;
    }
    let head: String = escaped.chars().take(SHOWN_PATH_CHARS).collect();
    format!("{head}…")
}

fn refused(given: &Path, reason: impl Into<String>) -> CapabilityError {
    CapabilityError::Refused {
        path: shown_given(given),
        reason: reason.into(),
    }
}

/// Refuses NUL bytes and paths or components over the kernel's limits.
fn validate(given: &Path) -> Result<(), CapabilityError> {
    let bytes = given.as_os_str().as_bytes();
    if bytes.contains(&0) {
        return Err(refused(given, "the path contains a NUL byte"));
    }
    if bytes.len() > MAX_PATH_BYTES {
        return Err(refused(
            given,
            format!(
                "the path is {} bytes long, over the limit of {MAX_PATH_BYTES} bytes",
                bytes.len()
            ),
        ));
    }
    if let Some(long) = given
        .components()
        .map(|c| c.as_os_str().len())
        .find(|len| *len > MAX_NAME_BYTES)
    {
        return Err(refused(
            given,
            format!(
                "a path component is {long} bytes long, over the limit of {MAX_NAME_BYTES} bytes"
            ),
        ));
    }
    Ok(())
}

/// Why the policy refuses an access (see [`Confinement::check_resolved`]).
enum Refusal<'a> {
    /// The path is under no root.
    Outside,
    /// The sandbox is read-only and the access writes.
    ReadOnlySandbox,
    /// The path's root (this one) is read-only and the access writes.
    ReadOnlyRoot(&'a Path),
    /// A denied glob matches.
    Denied(&'a str),
    /// A protected entry covers the path and the access writes.
    Protected(&'a str),
    /// A hidden entry covers the path.
    Hidden(&'a str),
}

impl Confinement {
    /// Canonicalizes the policy's roots and compiles its globs.
    pub(crate) fn new(policy: &SandboxPolicy) -> Result<Self, SandboxError> {
        let writes = policy.mode() != SandboxMode::ReadOnly;
        let access = if writes {
            RootAccess::Write
        } else {
            RootAccess::Read
        };
        let workspace = canonical_root(policy.workspace_root())?;
        let mut extra = Vec::new();
        for path in policy.readable_roots() {
            extra.push(Root {
                path: canonical_root(path)?,
                access: RootAccess::Read,
            });
        }
        for path in policy.writable_roots() {
            extra.push(Root {
                path: canonical_root(path)?,
                access,
            });
        }
        let home = policy
            .home_dir()
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
            .filter(|h| h.is_absolute());
        let roots = Roots::new(workspace, access, extra);
        let all: Vec<PathBuf> = roots.all().iter().map(|r| r.path.clone()).collect();
        Ok(Self {
            mode: policy.mode(),
            deny: deny::DenyList::new(policy.denied())?,
            protect: protect::ProtectList::new(policy.protected(), home.as_deref())?,
            hide: hide::HideList::new(policy.hidden(), home.as_deref(), &all)?,
            roots,
        })
    }

    /// The canonical workspace root.
    pub(crate) fn workspace(&self) -> &Path {
        self.roots.workspace()
    }

    /// The canonical writable roots.
    pub(crate) fn writable_roots(&self) -> Vec<PathBuf> {
        self.roots.writable().map(Path::to_path_buf).collect()
    }

    /// Every canonical root, readable or writable.
    pub(crate) fn all_roots(&self) -> Vec<PathBuf> {
        self.roots.all().iter().map(|r| r.path.clone()).collect()
    }

    /// Every hidden path (existing or not), `~/` expanded.
    pub(crate) fn hidden(&self) -> Vec<PathBuf> {
        self.hide.paths()
    }

    /// The hidden paths outside every root: those the floor can hide from
    /// commands without making a root unlistable.
    pub(crate) fn hidden_outside_roots(&self) -> Vec<PathBuf> {
        self.hide
            .paths()
            .into_iter()
            .filter(|p| self.roots.containing(p).is_none())
            .collect()
    }

    /// A hidden path below `path` (a directory about to be removed
    /// recursively), with the entry it comes from.
    pub(crate) fn hidden_inside(&self, path: &Path) -> Option<(PathBuf, String)> {
        self.hide
            .hidden_below(path)
            .filter(|(p, _)| std::fs::symlink_metadata(p).is_ok())
            .map(|(p, entry)| (p.to_path_buf(), entry.to_owned()))
    }

    /// `path` relative to the workspace when it is inside, else absolute.
    fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(self.workspace()) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            Ok(_) => ".".to_owned(),
            Err(_) => path.display().to_string(),
        }
    }

    /// Resolves `given` and checks it may be used for `access`.
    ///
    /// # Errors
    ///
    /// [`CapabilityError::Refused`] with the reason,
    /// [`CapabilityError::NotADirectory`] when the path goes through a file,
    /// [`CapabilityError::Io`] when it cannot be looked at.
    pub(crate) fn check(&self, given: &Path, access: Access) -> Result<Resolved, CapabilityError> {
        validate(given)?;
        let resolved = self.resolve_given(given, given)?;
        self.check_resolved(given, &resolved, access)?;
        Ok(resolved)
    }

    /// Like [`check`](Self::check), but a final symlink is not followed: the
    /// entry itself is the target (removing a link removes the link).
    pub(crate) fn check_entry(
        &self,
        given: &Path,
        access: Access,
    ) -> Result<Resolved, CapabilityError> {
        validate(given)?;
        let (Some(Component::Normal(name)), Some(parent)) =
            (given.components().next_back(), given.parent())
        else {
            return self.check(given, access);
        };
        let mut resolved = self.resolve_given(given, parent)?;
        if !resolved.exists {
            return Err(CapabilityError::NotFound {
                path: given.display().to_string(),
            });
        }
        resolved.path.push(name);
        resolved.exists = std::fs::symlink_metadata(&resolved.path).is_ok();
        self.check_resolved(given, &resolved, access)?;
        Ok(resolved)
    }

    /// A protected entry under `path` (a directory about to be removed
    /// recursively), found on disk, with the entry it matches.
    pub(crate) fn protected_inside(&self, path: &Path) -> Option<(PathBuf, String)> {
        let root = self.roots.containing(path)?;
        if let Some(entry) = self.protect.protecting(&root.path, path) {
            return Some((path.to_path_buf(), entry.to_owned()));
        }
        let scan = self.protect.scan_below(&root.path, path);
        scan.found
            .into_iter()
            .next()
            .map(|(found, f)| (found, f.entry))
    }

    /// Every protected entry under the writable roots now (see
    /// [`protect::ProtectList::scan`]).
    pub(crate) fn scan_protected(&self) -> ProtectedScan {
        if self.mode != SandboxMode::WorkspaceWrite {
            return ProtectedScan::default();
        }
        self.protect.scan(&self.writable_roots())
    }

    /// Removes the protected entries created since `before`.
    pub(crate) fn sweep_protected(&self, before: &ProtectedScan) -> Swept {
        if self.mode != SandboxMode::WorkspaceWrite || self.protect.is_empty() {
            return Swept::default();
        }
        self.protect.sweep(&self.writable_roots(), before)
    }

    /// What the protected entries of `scan` hold now, for
    /// [`Kept::put_back`] once a command that could write them is over.
    pub(crate) fn keep_protected(&self, scan: &ProtectedScan) -> Kept {
        if self.mode != SandboxMode::WorkspaceWrite || scan.found.is_empty() {
            return Kept::default();
        }
        Kept::take(scan, &self.writable_roots(), self.protect.kept_cache())
    }

    /// Undoes what changed inside the entries `kept` recorded, looking for
    /// each one the command `moved` (from, to) where it is now.
    pub(crate) fn put_back_protected(
        &self,
        kept: &Kept,
        moved: &[(PathBuf, PathBuf)],
    ) -> Vec<Undone> {
        let cache = self.protect.kept_cache();
        if moved.is_empty() {
            kept.put_back(cache)
        } else {
            kept.moved(moved).put_back(cache)
        }
    }

    /// `path` as messages show it: relative to the workspace when inside.
    pub(crate) fn display(&self, path: &Path) -> String {
        self.shown(path)
    }

    /// Whether `path` is one of the sandbox's roots.
    pub(crate) fn is_root(&self, path: &Path) -> bool {
        self.roots.all().iter().any(|r| r.path == path)
    }

    fn resolve_given(&self, given: &Path, input: &Path) -> Result<Resolved, CapabilityError> {
        resolve(self.workspace(), input).map_err(|e| match e {
            ResolveError::TooManySymlinks => refused(
                given,
                format!(
                    "the path goes through more than {MAX_SYMLINKS} symbolic links (a symlink loop?)"
                ),
            ),
            ResolveError::ThroughNonDirectory => CapabilityError::NotADirectory {
                path: given.display().to_string(),
            },
            ResolveError::Io { at, error } => CapabilityError::Io {
                path: given.display().to_string(),
                message: format!("{}: {error}", at.display()),
            },
        })
    }

    /// Checks an already canonical path (also used to re-check after open).
    pub(crate) fn check_resolved(
        &self,
        given: &Path,
        resolved: &Resolved,
        access: Access,
    ) -> Result<(), CapabilityError> {
        let Some(refusal) = self.refusal(&resolved.path, access) else {
            return Ok(());
        };
        let path = &resolved.path;
        Err(refused(
            given,
            match refusal {
                Refusal::Outside => self.outside_reason(resolved),
                Refusal::ReadOnlySandbox => {
                    "the sandbox is read-only: nothing may be written".to_owned()
                }
                Refusal::ReadOnlyRoot(root) => format!(
                    "{} is a read-only root: writes are allowed only under {}",
                    root.display(),
                    self.writable_list()
                ),
                Refusal::Denied(glob) => {
                    format!("{} matches the denied pattern `{glob}`", self.shown(path))
                }
                Refusal::Protected(glob) => format!(
                    "{} is protected (`{glob}`): tools may read it but not change it; \
                     the user can lift this with SandboxPolicy::without_protected(\"{glob}\")",
                    self.shown(path)
                ),
                Refusal::Hidden(entry) => format!(
                    "{} is hidden (`{entry}`): neither the tools nor commands may read it; \
                     the user can lift this with SandboxPolicy::without_hidden(\"{entry}\")",
                    self.shown(path)
                ),
            },
        ))
    }

    /// Whether the policy allows `access` to the canonical `path`: what
    /// [`check_resolved`](Self::check_resolved) decides, without building a
    /// refusal (a listing asks it for every entry).
    pub(crate) fn allows(&self, path: &Path, access: Access) -> bool {
        self.refusal(path, access).is_none()
    }

    /// Why the policy refuses `access` to the canonical `path`, if it does.
    fn refusal(&self, path: &Path, access: Access) -> Option<Refusal<'_>> {
        let wants_write = !matches!(access, Access::Read);
        let root = self.roots.containing(path);
        if self.mode != SandboxMode::FullAccess {
            let Some(root) = root else {
                return Some(Refusal::Outside);
            };
            if wants_write && self.mode == SandboxMode::ReadOnly {
                return Some(Refusal::ReadOnlySandbox);
            }
            if wants_write && root.access != RootAccess::Write {
                return Some(Refusal::ReadOnlyRoot(&root.path));
            }
        }
        if let Some(root) = root {
            let relative = path.strip_prefix(&root.path).unwrap_or(path);
            if let Some(glob) = self.deny.denying(relative) {
                return Some(Refusal::Denied(glob));
            }
            if wants_write {
                if let Some(glob) = self.protect.protecting(&root.path, path) {
                    return Some(Refusal::Protected(glob));
                }
            }
        }
        self.hide.hiding(path).map(Refusal::Hidden)
    }

    fn writable_list(&self) -> String {
        let roots: Vec<String> = self
            .roots
            .writable()
            .map(|p| p.display().to_string())
            .collect();
        roots.join(", ")
    }

    fn outside_reason(&self, resolved: &Resolved) -> String {
        let leaving = resolved
            .hops
            .iter()
            .rev()
            .find(|hop| self.roots.containing(&hop.link).is_some());
        if let Some(hop) = leaving {
            return format!(
                "path resolves outside the workspace via symlink {} -> {}",
                self.shown(&hop.link),
                hop.target.display()
            );
        }
        let extra = if self.roots.all().len() > 1 {
            " and the other sandbox roots"
        } else {
            ""
        };
        format!(
            "path is outside the workspace {}{extra} (it resolves to {}); {} mode allows only paths under its roots",
            self.workspace().display(),
            resolved.path.display(),
            self.mode
        )
    }

    /// Below which directory missing parents of `path` may be created: its
    /// root, or anywhere under full access.
    pub(crate) fn create_below(&self, path: &Path) -> Option<&Path> {
        match self.roots.containing(path) {
            Some(root) => Some(root.path.as_path()),
            None if self.mode == SandboxMode::FullAccess => Some(Path::new("/")),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confinement(policy: SandboxPolicy) -> Confinement {
        Confinement::new(&policy).unwrap()
    }

    #[test]
    fn the_workspace_root_itself_is_contained() {
        let dir = tempfile::tempdir().unwrap();
        let c = confinement(SandboxPolicy::workspace_write(dir.path()));
        let r = c.check(Path::new("."), Access::Write).unwrap();
        assert_eq!(r.path, dir.path().canonicalize().unwrap());
        let r = c.check(Path::new(""), Access::Read).unwrap();
        assert_eq!(r.path, dir.path().canonicalize().unwrap());
    }

    #[test]
    fn refusals_escape_control_characters_and_cut_long_paths() {
        let dir = tempfile::tempdir().unwrap();
        let c = confinement(SandboxPolicy::workspace_write(dir.path()));
        let nul = std::ffi::OsStr::from_bytes(b"a\0b");
        let err = c.check(Path::new(nul), Access::Read).unwrap_err();
        assert_eq!(
            err.to_string(),
            "access to a\\0b refused: the path contains a NUL byte"
        );
        let long = "x/".repeat(3000);
        let err = c.check(Path::new(&long), Access::Read).unwrap_err();
        let CapabilityError::Refused { path, reason } = err else {
            panic!("expected a refusal");
        };
        assert_eq!(path.chars().count(), SHOWN_PATH_CHARS + 1);
        assert_eq!(
            reason,
            "the path is 6000 bytes long, over the limit of 4096 bytes"
        );
    }

    #[test]
    fn a_sibling_with_a_common_prefix_is_outside() {
        let parent = tempfile::tempdir().unwrap();
        std::fs::create_dir(parent.path().join("ws")).unwrap();
        std::fs::create_dir(parent.path().join("ws2")).unwrap();
        let c = confinement(SandboxPolicy::workspace_write(parent.path().join("ws")));
        let err = c.check(Path::new("../ws2/file"), Access::Read).unwrap_err();
        assert!(matches!(err, CapabilityError::Refused { .. }), "{err}");
    }

    #[test]
    fn under_full_access_denied_globs_still_apply_inside_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        let c = confinement(SandboxPolicy::full_access(dir.path()).with_denied("**/.env"));
        assert!(c.check(Path::new("/etc/hostname"), Access::Read).is_ok());
        let err = c.check(Path::new("app/.env"), Access::Read).unwrap_err();
        assert!(
            err.to_string().contains("denied pattern `**/.env`"),
            "{err}"
        );
    }

    #[test]
    fn readable_roots_refuse_writes_with_the_writable_list() {
        let ws = tempfile::tempdir().unwrap();
        let docs = tempfile::tempdir().unwrap();
        let c =
            confinement(SandboxPolicy::workspace_write(ws.path()).with_readable_root(docs.path()));
        let target = docs.path().join("x.txt");
        assert!(c.check(&target, Access::Read).is_ok());
        let err = c.check(&target, Access::Write).unwrap_err();
        assert!(err.to_string().contains("read-only root"), "{err}");
    }
}
