//! Resource keys (docs/design.md, difference 9): parallel calls that touch the same resource
//! with a write never overlap.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// Names what a call reads or writes, e.g. `fs:/work/src/main.rs`.
///
/// Keys are compared as strings: normalising them (absolute, canonical paths)
/// is the classifier's job.
///
/// ```
/// use tack_pipeline::ResourceKey;
/// assert_eq!(ResourceKey::new("fs:/a").as_str(), "fs:/a");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceKey(Arc<str>);

impl ResourceKey {
    /// A key from any text.
    pub fn new(key: impl Into<Arc<str>>) -> Self {
        Self(key.into())
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ResourceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ResourceKey({:?})", &*self.0)
    }
}

impl fmt::Display for ResourceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How a call touches a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Access {
    /// Reads it: shares it with other readers.
    Read,
    /// Writes it: overlaps with no other call that touches it.
    Write,
}

/// One resource a call touches, and how.
///
/// ```
/// use tack_pipeline::{Access, ResourceClaim};
/// let claim = ResourceClaim::write("fs:/a");
/// assert_eq!(claim.access(), Access::Write);
/// assert_eq!(claim.key().as_str(), "fs:/a");
/// assert!(claim.conflicts_with(&ResourceClaim::read("fs:/a")));
/// assert!(!ResourceClaim::read("fs:/a").conflicts_with(&ResourceClaim::read("fs:/a")));
/// assert!(!claim.conflicts_with(&ResourceClaim::write("fs:/b")));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResourceClaim {
    key: ResourceKey,
    access: Access,
}

impl ResourceClaim {
    /// A claim on `key` with `access`.
    pub fn new(key: impl Into<Arc<str>>, access: Access) -> Self {
        Self {
            key: ResourceKey::new(key),
            access,
        }
    }

    /// A read of `key`.
    pub fn read(key: impl Into<Arc<str>>) -> Self {
        Self::new(key, Access::Read)
    }

    /// A write of `key`.
    pub fn write(key: impl Into<Arc<str>>) -> Self {
        Self::new(key, Access::Write)
    }

    /// The resource.
    pub fn key(&self) -> &ResourceKey {
        &self.key
    }

    /// The access.
    pub fn access(&self) -> Access {
        self.access
    }

    /// Whether the two claims may not be held at once: the same key, and at
    /// least one of them writes.
    pub fn conflicts_with(&self, other: &ResourceClaim) -> bool {
        self.key == other.key && (self.access == Access::Write || other.access == Access::Write)
    }
}

/// Names the resources a call of one tool touches, from its parsed, valid
/// arguments. Registered per tool name with
/// [`SchedulerConfig::with_resource_keys`](crate::SchedulerConfig::with_resource_keys).
pub type ResourceFn = dyn Fn(&Value) -> Vec<ResourceClaim> + Send + Sync;

/// The claims of the calls in flight: readers and a writer per key.
#[derive(Default)]
pub(crate) struct ResourceTable {
    held: HashMap<ResourceKey, Held>,
}

#[derive(Default)]
struct Held {
    readers: usize,
    writer: bool,
}

impl ResourceTable {
    /// Whether every claim is compatible with what is held.
    pub(crate) fn admits(&self, claims: &[ResourceClaim]) -> bool {
        claims.iter().all(|claim| match self.held.get(&claim.key) {
            None => true,
            Some(held) => match claim.access {
                Access::Read => !held.writer,
                Access::Write => !held.writer && held.readers == 0,
            },
        })
    }

    pub(crate) fn acquire(&mut self, claims: &[ResourceClaim]) {
        for claim in claims {
            let held = self.held.entry(claim.key.clone()).or_default();
            match claim.access {
                Access::Read => held.readers += 1,
                Access::Write => held.writer = true,
            }
        }
    }

    pub(crate) fn release(&mut self, claims: &[ResourceClaim]) {
        for claim in claims {
            if let Some(held) = self.held.get_mut(&claim.key) {
                match claim.access {
                    Access::Read => held.readers = held.readers.saturating_sub(1),
                    Access::Write => held.writer = false,
                }
                if held.readers == 0 && !held.writer {
                    self.held.remove(&claim.key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_share_and_writers_exclude() {
        let mut table = ResourceTable::default();
        let read = [ResourceClaim::read("a")];
        let write = [ResourceClaim::write("a")];
        table.acquire(&read);
        assert!(table.admits(&read));
        assert!(!table.admits(&write));
        table.acquire(&read);
        table.release(&read);
        assert!(!table.admits(&write));
        table.release(&read);
        assert!(table.admits(&write));
        table.acquire(&write);
        assert!(!table.admits(&read));
        assert!(table.admits(&[ResourceClaim::write("b")]));
        table.release(&write);
        assert!(table.held.is_empty());
    }

    #[test]
    fn a_call_claiming_a_key_twice_conflicts_with_nothing_of_its_own() {
        // Claims are checked against what others hold, before acquiring.
        let table = ResourceTable::default();
        assert!(table.admits(&[ResourceClaim::write("a"), ResourceClaim::read("a")]));
    }
}
