//! The sandbox's path settings: `sandbox_hide` (more paths commands cannot
//! read), and, from the user's own settings only, `sandbox_unhide` (lift
//! one of the hidden defaults, as listed) and `sandbox_unix_sockets` (Unix
//! sockets commands may connect to, such as an ssh agent's).
//!
//! A workspace's settings may hide more, never less: lifting a hidden path
//! or opening a socket would loosen the confinement for anyone running tack
//! there, and the agent itself may have written those files.

use std::path::PathBuf;

use tack_sandbox::SandboxPolicy;

/// The path settings of every layer, each value with the file and key it
/// came from.
#[derive(Clone, Debug, Default)]
pub struct SandboxPaths {
    /// Hidden besides the defaults.
    pub hide: Vec<(String, String)>,
    /// Default hidden entries lifted, as listed (`~/.npmrc`).
    pub unhide: Vec<(String, String)>,
    /// Unix sockets commands may reach.
    pub unix_sockets: Vec<(PathBuf, String)>,
}

impl SandboxPaths {
    /// Takes one file's values; `workspace` refuses the loosening ones,
    /// naming the key and where to set it instead.
    pub fn add(
        &mut self,
        file: &str,
        workspace: bool,
        hide: Vec<String>,
        unhide: Vec<String>,
        unix_sockets: Vec<String>,
    ) -> Result<(), String> {
        if workspace {
            for (key, values) in [
                ("sandbox_unhide", &unhide),
                ("sandbox_unix_sockets", &unix_sockets),
            ] {
                if let Some(first) = values.first() {
                    return Err(format!(
                        "{file}: key `{key}`: a workspace's own settings cannot set {key} (`{first}` would loosen the confinement for anyone running tack here); set it in your user settings"
                    ));
                }
            }
        }
        for (i, entry) in hide.into_iter().enumerate() {
            check_entry(file, "sandbox_hide", i, &entry)?;
            self.hide
                .push((entry, format!("{file} key sandbox_hide[{i}]")));
        }
        for (i, entry) in unhide.into_iter().enumerate() {
            check_entry(file, "sandbox_unhide", i, &entry)?;
            self.unhide
                .push((entry, format!("{file} key sandbox_unhide[{i}]")));
        }
        for (i, socket) in unix_sockets.into_iter().enumerate() {
            let path = PathBuf::from(&socket);
            if !path.is_absolute() {
                return Err(format!(
                    "{file}: key `sandbox_unix_sockets[{i}]`: `{socket}` is not an absolute path; write the socket's full path, such as \"/run/user/1000/ssh-agent.sock\""
                ));
            }
            self.unix_sockets
                .push((path, format!("{file} key sandbox_unix_sockets[{i}]")));
        }
        Ok(())
    }

    /// `policy` with these settings applied.
    pub fn apply(&self, mut policy: SandboxPolicy) -> SandboxPolicy {
        for (entry, _) in &self.unhide {
            policy = policy.without_hidden(entry);
        }
        for (entry, _) in &self.hide {
            policy = policy.with_hidden(entry);
        }
        for (socket, _) in &self.unix_sockets {
            policy = policy.with_unix_socket(socket.clone());
        }
        policy
    }

    /// `tack config`'s lines, one per value.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (entry, origin) in &self.hide {
            lines.push(format!("sandbox_hide += {entry} ({origin})"));
        }
        for (entry, origin) in &self.unhide {
            lines.push(format!("sandbox_unhide += {entry} ({origin})"));
        }
        for (socket, origin) in &self.unix_sockets {
            lines.push(format!(
                "sandbox_unix_sockets += {} ({origin})",
                socket.display()
            ));
        }
        lines
    }
}

/// A hidden entry is `~/path` or `/path`.
fn check_entry(file: &str, key: &str, i: usize, entry: &str) -> Result<(), String> {
    if entry.starts_with("~/") || entry.starts_with('/') {
        Ok(())
    } else {
        Err(format!(
            "{file}: key `{key}[{i}]`: `{entry}` is neither `~/path` nor an absolute path; write it as \"~/.config/something\" or \"/etc/something\""
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_cannot_loosen_and_names_the_key() {
        let mut paths = SandboxPaths::default();
        let err = paths
            .add(
                "ws/.tack/settings.json",
                true,
                vec![],
                vec!["~/.ssh".into()],
                vec![],
            )
            .unwrap_err();
        assert!(
            err.contains("`sandbox_unhide`") && err.contains("user settings"),
            "{err}"
        );
        let err = paths
            .add(
                "ws/.tack/settings.json",
                true,
                vec![],
                vec![],
                vec!["/run/docker.sock".into()],
            )
            .unwrap_err();
        assert!(err.contains("`sandbox_unix_sockets`"), "{err}");
        paths
            .add(
                "ws/.tack/settings.json",
                true,
                vec!["~/.secret".into()],
                vec![],
                vec![],
            )
            .unwrap();
        assert_eq!(paths.hide.len(), 1);
    }

    #[test]
    fn relative_values_are_refused_with_the_fix() {
        let mut paths = SandboxPaths::default();
        let err = paths
            .add("u.json", false, vec![], vec![], vec!["agent.sock".into()])
            .unwrap_err();
        assert!(err.contains("absolute path"), "{err}");
        let err = paths
            .add("u.json", false, vec!["secrets".into()], vec![], vec![])
            .unwrap_err();
        assert!(err.contains("`sandbox_hide[0]`"), "{err}");
    }

    #[test]
    fn the_policy_gets_each_value() {
        let mut paths = SandboxPaths::default();
        paths
            .add(
                "u.json",
                false,
                vec!["~/.vault".into()],
                vec!["~/.npmrc".into()],
                vec!["/run/agent.sock".into()],
            )
            .unwrap();
        let policy = paths.apply(SandboxPolicy::workspace_write("/tmp"));
        assert!(policy.hidden().iter().any(|h| h == "~/.vault"));
        assert!(!policy.hidden().iter().any(|h| h == "~/.npmrc"));
        assert_eq!(policy.unix_sockets(), [PathBuf::from("/run/agent.sock")]);
        assert_eq!(paths.describe().len(), 3);
    }
}
