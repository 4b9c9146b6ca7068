//! Notes the sandbox adds to a command's output when one of its refusals
//! shows there, so that whoever reads the output learns why.

/// What `socket(AF_UNIX, …)` failing looks like in most programs' output
/// (the C library's text for `EAFNOSUPPORT`, lower-cased).
const UNIX_SOCKET_SIGN: &str = "address family not supported";

/// The note for a command refused a Unix socket.
pub(crate) const UNIX_SOCKET_NOTE: &str = "tack sandbox: commands may not create Unix sockets \
(socket(AF_UNIX) fails with EAFNOSUPPORT, \"address family not supported by protocol\"), \
which keeps host services such as a Docker socket out of reach; \
the user can allow one socket with SandboxPolicy::with_unix_socket(path)";

/// The note to add when the output shows the Unix socket refusal.
pub(crate) fn unix_socket_note(stdout: &str, stderr: &str) -> Option<&'static str> {
    let shows = |text: &str| text.to_ascii_lowercase().contains(UNIX_SOCKET_SIGN);
    (shows(stdout) || shows(stderr)).then_some(UNIX_SOCKET_NOTE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_recognized_in_either_stream() {
        let python = "OSError: [Errno 97] Address family not supported by protocol";
        assert_eq!(unix_socket_note("", python), Some(UNIX_SOCKET_NOTE));
        assert_eq!(unix_socket_note(python, ""), Some(UNIX_SOCKET_NOTE));
        assert_eq!(unix_socket_note("ok", "Permission denied"), None);
    }
}
