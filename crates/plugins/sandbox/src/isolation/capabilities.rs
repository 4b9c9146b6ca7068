//! Dropping every capability of the calling thread, inherited by what it
//! spawns.
//!
//! Root regains its capabilities when it executes a program, unless the
//! bounding set no longer holds them or `no_new_privs` is set; the floor does
//! both (the bounding set only where the thread may change it, which needs
//! `CAP_SETPCAP`: without it the thread had no capabilities to regain).

use caps::{CapSet, Capability, CapsHashSet};

/// What was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// The bounding set was emptied too.
    pub(crate) bounding: bool,
}

/// Clears the ambient, inheritable, effective and permitted sets (and the
/// bounding set where allowed) of the calling thread.
pub(crate) fn drop_all() -> Result<Dropped, String> {
    let bounding = caps::has_cap(None, CapSet::Effective, Capability::CAP_SETPCAP)
        .map_err(|e| format!("could not read the capabilities: {e}"))?;
    if bounding {
        caps::clear(None, CapSet::Bounding)
            .map_err(|e| format!("could not empty the capability bounding set: {e}"))?;
    }
    caps::clear(None, CapSet::Ambient)
        .map_err(|e| format!("could not clear the ambient capabilities: {e}"))?;
    let none = CapsHashSet::new();
    for set in [CapSet::Inheritable, CapSet::Effective, CapSet::Permitted] {
        caps::set(None, set, &none)
            .map_err(|e| format!("could not clear the {set:?} capabilities: {e}"))?;
    }
    Ok(Dropped { bounding })
}
