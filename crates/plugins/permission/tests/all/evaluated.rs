//! Places where bash (or a program) evaluates text the reader could take
//! for plain words, run for real: each form, run by bash in a scratch
//! directory, deletes the file a `deny bash(command: "rm *")` rule is meant
//! to protect, and the gate (in `allow-all` mode) denies it, or asks with a
//! reason naming the part it could not read. One test per family.

use std::path::Path;
use std::process::{Command, Stdio};

use tack_permission::{Action, Basis};

use crate::bypass::deny_gate;
use crate::harness::bash as call;

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Runs `script` with `bash -c` in `dir` under `timeout 10`, with `HOME`
/// set to `dir` and git's system configuration off, so nothing outside the
/// scratch directory is read or written.
fn run(script: &str, dir: &Path) {
    let _ = Command::new("timeout")
        .args(["10", "bash", "-c", script])
        .current_dir(dir)
        .env_clear()
        .env("PATH", PATH)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
}

/// Whether `program` is installed (on the tests' `PATH`, or as a path).
fn installed(program: &str) -> bool {
    if program.starts_with('/') {
        return Path::new(program).exists();
    }
    Command::new("bash")
        .args(["-c", &format!("command -v {program}")])
        .env("PATH", PATH)
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// One form: the program it needs, the command, and a text the reason
/// must contain (the unreadable part); `None` for a form that is denied.
type Form = (&'static str, &'static str, Option<&'static str>);

/// Runs every form in its own scratch directory (with `victim`, and
/// `hook.sh` holding `rm victim` for the forms that run a file), checks it
/// deleted `victim`, and that the gate refused it as expected.
fn check(forms: &[Form]) {
    let gate = deny_gate();
    let mut wrong = Vec::new();
    let mut ran = 0;
    for (program, form, needle) in forms {
        if !installed(program) {
            eprintln!("skipped (no `{program}` here): {form:?}");
            continue;
        }
        ran += 1;
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        std::fs::write(dir.path().join("hook.sh"), "rm victim\n").unwrap();
        run(form, dir.path());
        if victim.exists() {
            wrong.push(format!("{form:?} did not delete the file when run"));
        }
        let exec = call(form);
        let ev = gate.evaluate(&exec);
        let reason = ev.reason(&exec);
        let ok = match needle {
            None => ev.action == Action::Deny,
            Some(needle) => {
                ev.action == Action::Ask
                    && matches!(ev.basis, Basis::Unreadable { .. })
                    && reason.contains("rm *")
                    && reason.contains(needle)
            }
        };
        if !ok {
            wrong.push(format!("{form:?}: {:?}: {reason}", ev.action));
        }
    }
    assert!(ran > 0, "no form could run here");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn arithmetic_contexts_that_expand_array_subscripts() {
    check(&[
        ("bash", "declare -i x='a[$(rm victim)]'", Some("declare")),
        (
            "bash",
            "f() { local -i x; x='a[$(rm victim)]'; }; f",
            Some("local -i"),
        ),
        ("bash", "typeset -i x='a[$(rm victim)]'", Some("typeset")),
        ("bash", "x='a[$(rm victim)]'; echo $[x]", Some("$[")),
        ("bash", "test -v 'a[$(rm victim)]'", Some("test -v")),
        ("bash", "[ -v 'a[$(rm victim)]' ]", Some("[ -v")),
        ("bash", "[[ -v 'a[$(rm victim)]' ]]", Some("[[ -v")),
        ("bash", "x='a[$(rm victim)]'; (( x ))", Some("arithmetic")),
        ("bash", "let 'x=a[$(rm victim)]'", Some("let")),
        (
            "bash",
            "x='a[$(rm victim)]'; y=([x]=1)",
            Some("arithmetic `x`"),
        ),
        (
            "bash",
            "x='a[$(rm victim)]'; declare -a y=([x]=1)",
            Some("arithmetic"),
        ),
    ]);
}

#[test]
fn builtin_options_that_take_code() {
    check(&[
        ("bash", "compgen -C 'rm victim' x", Some("compgen -C")),
        (
            "bash",
            "mapfile -C 'rm victim' -c 1 a <<< 'line'",
            Some("mapfile -C"),
        ),
        (
            "bash",
            "readarray -c 1 -C 'rm victim' a <<< 'line'",
            Some("readarray -C"),
        ),
        ("bash", "builtin trap 'rm victim' EXIT", None),
        ("bash", "command trap -- 'rm victim' EXIT", None),
        ("bash", "trap \"$(echo rm victim)\" EXIT", Some("trap")),
    ]);
}

/// `PS4` with `set -x`, `PROMPT_COMMAND`, `BASH_ENV` set by `export`, `declare -x`, `env`, `read` or `printf -v`.
#[test]
fn hook_variables_set_by_any_means() {
    check(&[
        ("bash", "declare PS4='$(rm victim)'; set -x; :", Some("PS4")),
        (
            "bash",
            "printf -v PS4 %s '$(rm victim)'; set -x; :",
            Some("PS4"),
        ),
        (
            "bash",
            "export PROMPT_COMMAND='rm victim'; bash -i < /dev/null",
            Some("PROMPT_COMMAND"),
        ),
        (
            "bash",
            "export BASH_ENV=./hook.sh; bash -c :",
            Some("BASH_ENV"),
        ),
        (
            "bash",
            "declare -x BASH_ENV=./hook.sh; bash -c :",
            Some("BASH_ENV"),
        ),
        ("env", "env BASH_ENV=./hook.sh bash -c :", Some("BASH_ENV")),
        (
            "bash",
            "read BASH_ENV <<< ./hook.sh; export BASH_ENV; bash -c :",
            Some("BASH_ENV"),
        ),
        (
            "bash",
            "printf -v BASH_ENV %s ./hook.sh; export BASH_ENV; bash -c :",
            Some("BASH_ENV"),
        ),
    ]);
}

#[test]
fn functions_from_the_environment() {
    check(&[
        (
            "env",
            "env 'BASH_FUNC_x%%=() { rm victim; }' bash -c x",
            Some("BASH_FUNC_x%%"),
        ),
        (
            "env",
            "env -i 'BASH_FUNC_ls%%=() { rm victim; }' bash -c ls",
            Some("BASH_FUNC_ls%%"),
        ),
    ]);
}

#[test]
fn scripts_from_stdin_or_file_descriptors() {
    check(&[
        ("sh", "sh /dev/stdin <<< 'rm victim'", None),
        (
            "sh",
            "echo 'rm victim' | sh /dev/stdin",
            Some("standard input"),
        ),
        (
            "sh",
            "echo 'rm victim' | sh /dev/./stdin",
            Some("standard input"),
        ),
        (
            "sh",
            "echo 'rm victim' | sh //dev/stdin",
            Some("standard input"),
        ),
        (
            "bash",
            "echo 'rm victim' | bash /proc/self/fd/0",
            Some("standard input"),
        ),
        (
            "bash",
            "echo 'rm victim' | bash /proc/thread-self/fd/0",
            Some("standard input"),
        ),
        (
            "sh",
            "sh /dev/fd/3 3<<'EOF'\nrm victim\nEOF",
            Some("/dev/fd/3"),
        ),
    ]);
}

/// `--rcfile`, `--init-file` and a script file: out of sight.
#[test]
fn startup_and_script_files_given_to_a_shell() {
    check(&[
        (
            "bash",
            "bash --rcfile hook.sh -i < /dev/null",
            Some("--rcfile"),
        ),
        (
            "bash",
            "bash --init-file hook.sh -i < /dev/null",
            Some("--init-file"),
        ),
        ("bash", "bash hook.sh", Some("hook.sh")),
    ]);
}

#[test]
fn git_configuration_from_the_environment() {
    check(&[
        (
            "git",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm victim' git x",
            Some("GIT_CONFIG_COUNT"),
        ),
        (
            "git",
            "GIT_CONFIG_PARAMETERS=\"'alias.x=!rm victim'\" git x",
            Some("GIT_CONFIG_PARAMETERS"),
        ),
        (
            "git",
            "export GIT_CONFIG_PARAMETERS=\"'alias.x=!rm victim'\"; git x",
            Some("GIT_CONFIG_PARAMETERS"),
        ),
        ("git", "git -c alias.x='!rm victim' x", None),
    ]);
}

/// `script -qc`: the option cluster holds `-c`.
#[test]
fn script_runs_its_c_string() {
    check(&[("script", "script -qc 'rm victim' /dev/null", None)]);
}

/// The dynamic loader, `setpriv`, `prlimit`, `setarch`: opaque programs.
#[test]
fn the_loader_and_wrappers_outside_the_closed_list() {
    check(&[
        (
            "/lib64/ld-linux-x86-64.so.2",
            "/lib64/ld-linux-x86-64.so.2 /bin/rm victim",
            Some("ld-linux-x86-64.so.2"),
        ),
        ("setpriv", "setpriv rm victim", Some("`setpriv`")),
        (
            "prlimit",
            "prlimit --nofile=256 rm victim",
            Some("`prlimit`"),
        ),
        ("setarch", "setarch x86_64 rm victim", Some("`setarch`")),
    ]);
}

/// sed's `e` command and the `e` flag of `s`.
#[test]
fn sed_e_command_and_flag() {
    check(&[
        ("sed", "echo | sed 'e rm victim'", Some("sed script")),
        ("sed", "echo x | sed 's/x/rm victim/e'", Some("sed script")),
    ]);
}

/// tar's options that run a program.
#[test]
fn tar_checkpoint_action() {
    check(&[(
        "tar",
        "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='rm victim' hook.sh",
        Some("--checkpoint-action"),
    )]);
}

/// `find -execdir … +` and a shell under `-exec`: the command is read.
#[test]
fn find_exec_variants() {
    check(&[
        ("find", "find . -name victim -execdir rm {} +", None),
        (
            "find",
            "find . -name victim -exec sh -c 'rm \"$0\"' {} \\;",
            None,
        ),
    ]);
}

/// `xargs … sh -c`: the script is xargs's input.
#[test]
fn xargs_gives_a_shell_its_script() {
    check(&[(
        "xargs",
        "printf 'rm victim' | xargs -0 sh -c",
        Some("xargs"),
    )]);
}

/// awk, perl and python with code in their arguments: opaque programs.
#[test]
fn interpreters_run_code_of_their_own() {
    check(&[
        (
            "awk",
            "awk 'BEGIN { system(\"rm victim\") }'",
            Some("`awk`"),
        ),
        ("perl", "perl -e 'unlink \"victim\"'", Some("`perl`")),
        (
            "python3",
            "python3 -c 'import os; os.remove(\"victim\")'",
            Some("`python3`"),
        ),
    ]);
}
