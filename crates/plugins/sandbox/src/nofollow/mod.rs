//! Opening, writing and removing paths through directory descriptors,
//! never following a symlink: what the fs capability and the putting back
//! of protected paths both do.

pub(crate) mod atomic_write;
pub(crate) mod dirfd;
pub(crate) mod remove;
