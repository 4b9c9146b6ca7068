//! Environment and shell variables whose value makes a later program (or
//! bash itself) run code, or changes what later words and names mean.

/// Exact names: bash's hooks and prompts, startup files, options, word
/// splitting, the program search path, the dynamic loader, pagers and
/// editors, and option variables read by programs this reader understands.
const NAMES: &[&str] = &[
    "BASHOPTS",
    "BROWSER",
    "EDITOR",
    "ENV",
    "FCEDIT",
    "GCONV_PATH",
    "GREP_OPTIONS",
    "HOSTALIASES",
    "IFS",
    "LESSCLOSE",
    "LESSOPEN",
    "MANPAGER",
    "PAGER",
    "PATH",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "SHELL",
    "SHELLOPTS",
    "TAR_OPTIONS",
    "TERMINFO",
    "VISUAL",
    "XARGS_OPTIONS",
    "ZDOTDIR",
];

/// git variables known to name no program and no configuration.
const SAFE_GIT: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TERMINAL_PROMPT",
    "GIT_OPTIONAL_LOCKS",
    "GIT_FLUSH",
    "GIT_PAGER_IN_USE",
    "GIT_MERGE_AUTOEDIT",
];

/// Whether assigning or exporting `name` can make later code run (or change
/// which program a later name runs): `BASH_ENV`, `PS4`, `BASH_FUNC_x%%`,
/// `LD_PRELOAD`, `GIT_SSH_COMMAND`, `PAGER`, `*_COMMAND`, …
pub(super) fn runs_code(name: &str) -> bool {
    NAMES.contains(&name)
        || name.starts_with("BASH_")
        || name.starts_with("LD_")
        || (name.starts_with("GIT_") && !SAFE_GIT.contains(&name))
        || ["_COMMAND", "_PAGER", "_EDITOR", "_ASKPASS", "_OPTIONS"]
            .iter()
            .any(|suffix| name.ends_with(suffix))
}

/// The variable name an assignment-like word sets: `A=1`, `A+=1`, `a[i]=1`
/// → `A`, `A`, `a`; a bare name stands for itself.
pub(super) fn assigned_name(word: &str) -> &str {
    let end = word.find(['=', '[', '+']).unwrap_or(word.len());
    &word[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_loader_git_and_pagers_run_code_and_ordinary_names_do_not() {
        for name in [
            "BASH_ENV",
            "ENV",
            "PS4",
            "PROMPT_COMMAND",
            "BASH_FUNC_x%%",
            "SHELLOPTS",
            "IFS",
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "GIT_CONFIG_COUNT",
            "GIT_CONFIG_PARAMETERS",
            "GIT_EXTERNAL_DIFF",
            "GIT_SSH_COMMAND",
            "PAGER",
            "EDITOR",
            "VISUAL",
            "FOO_COMMAND",
            "PATH",
        ] {
            assert!(runs_code(name), "{name}");
        }
        for name in [
            "FOO",
            "HOME",
            "RUST_LOG",
            "GIT_AUTHOR_NAME",
            "CARGO_TARGET_DIR",
        ] {
            assert!(!runs_code(name), "{name}");
        }
    }

    #[test]
    fn the_assigned_name_is_read_from_each_form() {
        assert_eq!(assigned_name("A=1"), "A");
        assert_eq!(assigned_name("A+=1"), "A");
        assert_eq!(assigned_name("a[1]=x"), "a");
        assert_eq!(assigned_name("BASH_FUNC_x%%=() { :; }"), "BASH_FUNC_x%%");
        assert_eq!(assigned_name("PS4"), "PS4");
    }
}
