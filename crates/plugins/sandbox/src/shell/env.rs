//! The environment commands see: an allowlist, never a secret.

use std::ffi::{OsStr, OsString};

/// Variables passed through from the host when set.
pub const ALLOWED_ENV: &[&str] = &[
    "PATH", "HOME", "LANG", "LANGUAGE", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ",
];

/// The `PATH` commands get when the host has none.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Name endings that mark a secret; such variables are never passed, even
/// when allowlisted.
pub const SECRET_SUFFIXES: &[&str] = &["_KEY", "_TOKEN", "_SECRET", "_PASSWORD"];

/// Whether `name` looks like it holds a secret (`OPENAI_API_KEY`, `GH_TOKEN` …).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_SUFFIXES.iter().any(|suffix| upper.ends_with(suffix))
}

fn is_allowed(name: &str, extra: &[String]) -> bool {
    if is_secret_name(name) {
        return false;
    }
    ALLOWED_ENV.contains(&name) || name.starts_with("LC_") || extra.iter().any(|e| e == name)
}

/// The environment for a command, from the host's `vars`: allowlisted names
/// (plus `extra`), no secrets, `PATH` always set, `TMPDIR` replaced by
/// `tmpdir` when given.
pub(crate) fn scrubbed_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    extra: &[String],
    tmpdir: Option<&OsStr>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = vars
        .into_iter()
        .filter(|(name, _)| name.to_str().is_some_and(|n| is_allowed(n, extra)))
        .filter(|(name, _)| !(tmpdir.is_some() && name == "TMPDIR"))
        .collect();
    if !env.iter().any(|(name, _)| name == "PATH") {
        env.push(("PATH".into(), FALLBACK_PATH.into()));
    }
    if let Some(tmpdir) = tmpdir {
        env.push(("TMPDIR".into(), tmpdir.to_owned()));
    }
    env.sort();
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn only_allowlisted_names_pass() {
        let env = scrubbed_env(
            vars(&[
                ("PATH", "/bin"),
                ("LC_ALL", "C"),
                ("AWS_REGION", "x"),
                ("HOME", "/root"),
            ]),
            &[],
            None,
        );
        assert_eq!(names(&env), ["HOME", "LC_ALL", "PATH"]);
    }

    #[test]
    fn secrets_never_pass_even_when_allowlisted() {
        let extra = vec!["MY_API_KEY".to_owned(), "CARGO_HOME".to_owned()];
        let env = scrubbed_env(
            vars(&[
                ("MY_API_KEY", "s"),
                ("CARGO_HOME", "/c"),
                ("LC_TOKEN", "t"),
                ("db_password", "p"),
            ]),
            &extra,
            None,
        );
        assert_eq!(names(&env), ["CARGO_HOME", "PATH"]);
        assert!(is_secret_name("github_token"));
        assert!(!is_secret_name("KEYBOARD"));
    }

    #[test]
    fn tmpdir_is_replaced_by_the_private_one() {
        let env = scrubbed_env(vars(&[("TMPDIR", "/tmp")]), &[], Some(OsStr::new("/tmp/p")));
        assert!(env.contains(&("TMPDIR".into(), "/tmp/p".into())));
        assert_eq!(env.len(), 2);
    }
}
