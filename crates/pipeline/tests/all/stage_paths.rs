//! The stage sequences a call goes through, named by how it ends.

/// Every stage but approval: the body completed (output checks or post-execute may still fail it).
pub const COMPLETED: [&str; 10] = [
    "resolve", "parse", "validate", "pre", "guard", "execute", "output", "post", "finalize",
    "result",
];

/// [`COMPLETED`] after the approval service granted the call.
pub const APPROVED: [&str; 11] = [
    "resolve", "parse", "validate", "pre", "approval", "guard", "execute", "output", "post",
    "finalize", "result",
];

/// The body (or a wrapper) failed: no output stage.
pub const BODY_FAILED: [&str; 9] = [
    "resolve", "parse", "validate", "pre", "guard", "execute", "post", "finalize", "result",
];

/// A guard denied the call (or panicked, or the caller cancelled while the guards ran).
pub const GUARD_DENIED: [&str; 8] = [
    "resolve", "parse", "validate", "pre", "guard", "post", "finalize", "result",
];

/// The approval service did not grant the call (or the caller cancelled while it was asked).
pub const APPROVAL_DENIED: [&str; 8] = [
    "resolve", "parse", "validate", "pre", "approval", "post", "finalize", "result",
];

/// A pre-execute listener denied the call (or panicked).
pub const PRE_DENIED: [&str; 7] = [
    "resolve", "parse", "validate", "pre", "post", "finalize", "result",
];

/// Stopped before any policy: invalid arguments, or a caller that had already cancelled.
pub const BEFORE_POLICY: [&str; 6] = ["resolve", "parse", "validate", "post", "finalize", "result"];

/// The arguments did not parse.
pub const UNPARSED: [&str; 5] = ["resolve", "parse", "post", "finalize", "result"];

/// The tool was not found: unknown, hidden, restricted away, or a code-mode direct call.
pub const UNRESOLVED: [&str; 2] = ["resolve", "result"];
