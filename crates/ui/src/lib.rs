//! tack-ui: a local web page for a tack session.
//!
//! The host serves the page (HTTP/1 on the loopback address by default)
//! for a running session or for a verified session log: messages, one card
//! per tool call rendered from the tool's presentation (a diff for
//! `edit_file` and `write_file`, a command with its output and exit code
//! for `bash`, a file for `read_file`, a generic card otherwise), outcome
//! codes and provenance, approvals asked on the call's own card, and a
//! timeline of turns, model steps and calls. Everything on the page is
//! rendered from the session's records alone ([`Page`]), so a replay shows
//! what the live page showed.
//!
//! Safe by default: a random per-session token in the URL's path (never in
//! argv), `Host` and `Origin` checks, a strict Content-Security-Policy, the
//! assets embedded in the binary, and every text escaped
//! ([`escape_html`]). An approval the page does not answer — closed,
//! timed out — is denied.

mod card;
mod html;
mod page;
mod server;
mod timeline;
mod token;

pub use html::escape_html;
pub use page::{Item, Page};
pub use server::{DEFAULT_APPROVAL_TIMEOUT, Mode, UiError, UiServer};
