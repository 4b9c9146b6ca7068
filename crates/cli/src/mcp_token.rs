//! The token of `tack mcp serve --http`: from a 0600 file, the
//! `TACK_MCP_TOKEN` environment variable, or made anew and written to a
//! 0600 file — never on the command line, where every local user (and the
//! commands the server runs) can read it in `/proc/PID/cmdline`.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// The environment variable a token may come from.
pub const TOKEN_VAR: &str = "TACK_MCP_TOKEN";

/// How clients are let in.
#[derive(Debug)]
pub struct Auth {
    /// The token clients send (`None`: `--no-auth` on loopback).
    pub token: Option<String>,
    /// What to tell the user about getting in.
    pub how: String,
}

/// The authentication of a server at `addr`.
///
/// # Errors
///
/// `--no-auth` on an address that is not loopback; a token file that is
/// missing, empty or readable by others; no place to write a new token.
pub fn auth(addr: SocketAddr, token_file: Option<&Path>, no_auth: bool) -> Result<Auth, String> {
    if no_auth {
        if !addr.ip().is_loopback() {
            return Err(format!(
                "--no-auth is allowed on a loopback address only (127.0.0.1, [::1]), not {addr}: other machines could run your tools. Drop --no-auth; a token is then required"
            ));
        }
        if token_file.is_some() {
            return Err("--no-auth and --token-file contradict each other: give one".to_owned());
        }
        return Ok(Auth {
            token: None,
            how: "WARNING: no token (--no-auth): every local process and user that connects can call the tools".to_owned(),
        });
    }
    if let Some(path) = token_file {
        let token = read_private(path)?;
        return Ok(Auth {
            token: Some(token),
            how: format!(
                "clients must send `Authorization: Bearer TOKEN`, TOKEN the contents of {}",
                path.display()
            ),
        });
    }
    if let Some(token) = std::env::var(TOKEN_VAR)
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
    {
        return Ok(Auth {
            token: Some(token),
            how: format!(
                "clients must send `Authorization: Bearer TOKEN`, TOKEN the value of {TOKEN_VAR}"
            ),
        });
    }
    let state = tack_agent::state_home_from_env().ok_or_else(|| {
        format!(
            "cannot place the new token: neither XDG_STATE_HOME nor HOME is set; pass --token-file FILE (mode 0600) or set {TOKEN_VAR}"
        )
    })?;
    let path = state.join("tack").join("mcp-serve.token");
    let token = new_token()?;
    write_private(&path, &token)?;
    Ok(Auth {
        token: Some(token),
        how: format!(
            "clients must send `Authorization: Bearer TOKEN`; a new token is in {path} (readable by you alone), e.g. curl -H \"Authorization: Bearer $(cat {path})\"",
            path = path.display()
        ),
    })
}

/// 32 random bytes as hex.
fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("cannot make a token: /dev/urandom: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A token file's contents, refused when others can read it.
fn read_private(path: &Path) -> Result<String, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("--token-file {}: {e}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.mode() & 0o077 != 0 {
            return Err(format!(
                "--token-file {}: other users can read it (mode {:o}); run `chmod 600 {}`",
                path.display(),
                meta.mode() & 0o777,
                path.display()
            ));
        }
    }
    let _ = meta;
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--token-file {}: {e}", path.display()))?;
    let token = text.trim().to_owned();
    if token.is_empty() {
        return Err(format!("--token-file {}: it is empty", path.display()));
    }
    Ok(token)
}

/// Writes `token` to `path`, readable and writable by the user alone
/// (through a new file renamed into place).
fn write_private(path: &Path, token: &str) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write the token to {}: {e}", path.display());
    let dir = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    std::fs::create_dir_all(&dir).map_err(fail)?;
    let temp = dir.join(format!(".mcp-serve.token.{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let _ = std::fs::remove_file(&temp);
    let mut file = options.open(&temp).map_err(fail)?;
    file.write_all(format!("{token}\n").as_bytes())
        .map_err(fail)?;
    drop(file);
    std::fs::rename(&temp, path).map_err(fail)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn no_auth_is_for_loopback_only() {
        let public: SocketAddr = "0.0.0.0:8765".parse().unwrap();
        let err = auth(public, None, true).unwrap_err();
        assert!(err.contains("loopback"), "{err}");
        let local: SocketAddr = "127.0.0.1:8765".parse().unwrap();
        assert!(auth(local, None, true).unwrap().token.is_none());
    }

    #[test]
    fn a_token_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "secret\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let err = auth(addr, Some(&path), false).unwrap_err();
        assert!(err.contains("chmod 600"), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            auth(addr, Some(&path), false).unwrap().token.as_deref(),
            Some("secret")
        );
    }

    #[test]
    fn a_new_token_is_written_for_the_user_alone() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t/mcp-serve.token");
        let token = new_token().unwrap();
        assert_eq!(token.len(), 64);
        assert_ne!(token, new_token().unwrap());
        write_private(&path, &token).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), token);
    }
}
