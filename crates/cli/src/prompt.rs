//! The system prompt: tack's default or `--system-prompt TEXT|@FILE`, then
//! the workspace's `AGENTS.md`.

use std::path::Path;

use tack_agent::DEFAULT_SYSTEM_PROMPT;

/// The largest `AGENTS.md` or `@FILE` read into the prompt.
pub const MAX_PROMPT_FILE: u64 = 256 * 1024;

/// The system prompt and what it was made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemPrompt {
    /// The text.
    pub text: String,
    /// Its parts, in order, for the session log.
    pub sources: Vec<String>,
}

fn read_capped(path: &Path, what: &str) -> Result<String, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{what} {} is not a regular file", path.display()));
    }
    if meta.len() > MAX_PROMPT_FILE {
        return Err(format!(
            "{what} {} has {} bytes, more than the {MAX_PROMPT_FILE} a system prompt may take; shorten it",
            path.display(),
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read {what} {}: {e} (it must be UTF-8 text)",
            path.display()
        )
    })
}

impl SystemPrompt {
    /// The prompt for `flag` (`--system-prompt`) in the workspace `root`.
    ///
    /// # Errors
    ///
    /// An unreadable `@FILE`, or an `AGENTS.md` that is unreadable, too
    /// large, or a link leading out of the workspace (its text would be sent
    /// to the model).
    pub fn build(flag: Option<&str>, root: &Path) -> Result<Self, String> {
        let (mut text, mut sources) = match flag {
            None => (DEFAULT_SYSTEM_PROMPT.to_owned(), vec!["default".to_owned()]),
            Some(arg) => match arg.strip_prefix('@') {
                Some(file) => (
                    read_capped(Path::new(file), "--system-prompt")?,
                    vec![format!("--system-prompt @{file}")],
                ),
                None => (arg.to_owned(), vec!["--system-prompt".to_owned()]),
            },
        };
        let agents = root.join("AGENTS.md");
        if std::fs::symlink_metadata(&agents).is_ok() {
            let real = agents
                .canonicalize()
                .map_err(|e| format!("cannot read AGENTS.md {}: {e}", agents.display()))?;
            if !real.starts_with(root) {
                return Err(format!(
                    "AGENTS.md {} leads out of the workspace (to {}); refusing to send that file to the model: replace the link with the file",
                    agents.display(),
                    real.display()
                ));
            }
            let body = read_capped(&real, "AGENTS.md")?;
            text = format!(
                "{text}\n\n# AGENTS.md\n\nThe workspace's instructions for agents:\n\n{}",
                body.trim_end()
            );
            sources.push(format!("AGENTS.md {}", agents.display()));
        }
        Ok(Self { text, sources })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn default_flag_file_and_agents_md() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let p = SystemPrompt::build(None, &root).unwrap();
        assert_eq!(p.text, DEFAULT_SYSTEM_PROMPT);
        assert_eq!(p.sources, ["default"]);

        std::fs::write(root.join("AGENTS.md"), "Run `cargo test` first.\n").unwrap();
        let p = SystemPrompt::build(Some("Be brief."), &root).unwrap();
        assert!(p.text.starts_with("Be brief.\n\n# AGENTS.md"));
        assert!(p.text.ends_with("Run `cargo test` first."));
        assert_eq!(p.sources.len(), 2);
        assert!(p.sources[1].starts_with("AGENTS.md "));

        let file = root.join("prompt.txt");
        std::fs::write(&file, "From a file.").unwrap();
        let p = SystemPrompt::build(Some(&format!("@{}", file.display())), &root).unwrap();
        assert!(p.text.starts_with("From a file."));
        let e = SystemPrompt::build(Some("@/nonexistent/prompt"), &root).unwrap_err();
        assert!(e.contains("--system-prompt /nonexistent/prompt"), "{e}");
    }

    #[test]
    fn an_agents_md_link_out_of_the_workspace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        let root = root.canonicalize().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "TOKEN=hunter2").unwrap();
        std::os::unix::fs::symlink(&secret, root.join("AGENTS.md")).unwrap();
        let e = SystemPrompt::build(None, &root).unwrap_err();
        assert!(e.contains("leads out of the workspace"), "{e}");
        assert!(!e.contains("hunter2"));
    }

    #[test]
    fn an_oversized_agents_md_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let big = "x".repeat(usize::try_from(MAX_PROMPT_FILE).unwrap() + 1);
        std::fs::write(root.join("AGENTS.md"), big).unwrap();
        let e = SystemPrompt::build(None, &root).unwrap_err();
        assert!(e.contains("more than the"), "{e}");
    }
}
