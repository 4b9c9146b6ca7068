//! The bypass forms run for real: each one, run by bash in a scratch
//! directory, deletes the file a `deny bash(command: "rm *")` rule is meant
//! to protect; the gate refuses or asks for every one of them.

use std::path::Path;
use std::process::Command;

use tack_permission::Action;

use crate::bypass::deny_gate;
use crate::harness::bash as call;

/// Runs `script` with `shell -c` in `dir`, as the `bash` tool does.
fn run(shell: &str, script: &str, dir: &Path) {
    let status = Command::new(shell)
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    // The exit status does not matter (`( (…) )` may fail after deleting).
    let _ = status;
}

/// Forms that delete `victim`, each with what the gate must answer.
const FORMS: &[(&str, Action)] = &[
    ("rm victim", Action::Deny),
    ("\\rm victim", Action::Deny),
    ("/bin/rm victim", Action::Deny),
    ("r\"\"m victim", Action::Deny),
    ("'rm' victim", Action::Deny),
    ("$'\\x72m' victim", Action::Deny),
    ("r\\\nm victim", Action::Deny),
    ("env rm victim", Action::Deny),
    ("command rm victim", Action::Deny),
    ("nice -n 1 rm victim", Action::Deny),
    ("timeout 5 rm victim", Action::Deny),
    ("nohup rm victim", Action::Deny),
    ("VAR=1 rm victim", Action::Deny),
    ("! rm victim", Action::Deny),
    ("exec rm victim", Action::Deny),
    ("bash -c 'rm victim'", Action::Deny),
    ("sh -c 'rm victim'", Action::Deny),
    ("eval 'rm victim'", Action::Deny),
    ("trap 'rm victim' EXIT", Action::Deny),
    ("echo victim | xargs rm", Action::Deny),
    ("find . -name victim -exec rm {} \\;", Action::Deny),
    ("{ rm victim; }", Action::Deny),
    ("if true; then rm victim; fi", Action::Deny),
    ("for i in 1; do rm victim; done", Action::Deny),
    ("f() { rm victim; }; f", Action::Deny),
    ("echo $(rm victim)", Action::Deny),
    ("bash <<'EOF'\nrm victim\nEOF", Action::Deny),
    ("$(echo rm) victim", Action::Ask),
    ("`echo rm` victim", Action::Ask),
    ("a=rm; $a victim", Action::Ask),
    ("rm${IFS}victim", Action::Ask),
    ("echo 'rm victim' | sh", Action::Ask),
    ("echo cm0gdmljdGlt | base64 -d | sh", Action::Ask),
    ("{rm,victim}", Action::Ask),
    ("r? victim", Action::Ask),
    ("find . -name victim -delete", Action::Ask),
    ("x='$(rm victim)'; : ${x@P}", Action::Ask),
    ("a=(); i='a[$(rm victim)]'; : $((i))", Action::Ask),
    ("printf -v 'a[$(rm victim)]' %s 1", Action::Ask),
    ("x='a[$(rm victim)]'; : ${!x}", Action::Ask),
    ("x='a[$(rm victim)]'; y=([ x]=1)", Action::Ask),
];

#[test]
fn every_form_really_deletes_and_the_gate_refuses_it() {
    let gate = deny_gate();
    let shell = if Path::new("/bin/bash").exists() {
        "/bin/bash"
    } else {
        "bash"
    };
    let mut wrong = Vec::new();
    for (form, expected) in FORMS {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        // A file named `rm` for the glob forms to find.
        std::fs::write(dir.path().join("rm"), "").unwrap();
        run(shell, form, dir.path());
        if victim.exists() {
            wrong.push(format!("{form:?} did not delete the file when run"));
        }
        let decided = gate.evaluate(&call(form)).action;
        if decided != *expected {
            wrong.push(format!("{form:?}: {decided:?}, expected {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The same commands, as the gate would let them through, change nothing:
/// the control shows the test's own harness does not delete by itself.
#[test]
fn a_harmless_control_leaves_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    run("bash", "echo rm victim; ls victim", dir.path());
    assert!(victim.exists());
    assert_eq!(
        deny_gate()
            .evaluate(&call("echo rm victim; ls victim"))
            .action,
        Action::Allow
    );
}

/// Small edits that keep bash syntax mostly valid. Never `/` or `>`: the
/// forms run as whoever runs the tests, so none may name a path outside
/// the scratch directory or write through a redirection.
const NOISE: &[&str] = &["''", "\"\"", "\\\n", " ", "\\"];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 128, ..proptest::prelude::ProptestConfig::default()
    })]

    // Differential: disguised forms of `rm victim`, with random edits, run
    // by bash; whenever one deletes the file, the gate did not allow it.
    #[test]
    fn whatever_deletes_the_file_is_not_allowed(
        spelling in 0u8..10,
        layers in proptest::collection::vec(crate::disguise::layer(), 0..4),
        noise in proptest::collection::vec((0usize..200, proptest::sample::select(NOISE)), 0..3),
    ) {
        // No absolute path (spelling 6 is `/usr/bin/rm`) and no `>`: every
        // form can only touch the scratch directory it runs in.
        let spelling = if spelling == 6 { 0 } else { spelling };
        let mut form = format!("{} victim", crate::disguise::spell("rm", spelling));
        for layer in &layers {
            form = crate::disguise::wrap(form, layer);
        }
        for (at, piece) in &noise {
            let mut at = at % (form.len() + 1);
            while !form.is_char_boundary(at) {
                at -= 1;
            }
            form.insert_str(at, piece);
        }
        // Forms that name a path (`sh /dev/fd/3`) or redirect are not run.
        proptest::prop_assume!(!form.contains(['/', '>']), "not run: {:?}", form);
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        run_with_timeout(&form, dir.path());
        if !victim.exists() {
            let decided = deny_gate().evaluate(&call(&form)).action;
            proptest::prop_assert_ne!(decided, Action::Allow, "{:?} deleted the file", form);
        }
    }
}

/// Runs `script` with bash under `timeout 5`, so a form that waits ends.
fn run_with_timeout(script: &str, dir: &Path) {
    let _ = Command::new("timeout")
        .args(["5", "bash", "-c", script])
        .current_dir(dir)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
}
