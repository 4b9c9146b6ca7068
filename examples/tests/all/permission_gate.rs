//! `permission_gate`: the gate lets `ls` run, denies `rm -rf` itself, and its
//! ask ends in a denial when no approver is installed — each with who decided.

use crate::support;

#[test]
fn gate_allows_denies_and_asks() {
    let run = support::run_example("permission_gate", &[], None);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            r#"ls -la: ran "ls -la" []"#,
            "rm -rf /: DENIED: `rm -rf` is not allowed in this workspace [tools/pre-execute › listener `gate`]",
            "curl https://example.com: DENIED: tool `sh` needs approval, but no approver is available to ask \
             (no approval service is installed) [approval › listener `no approver`]",
        ],
        "{}",
        run.stdout
    );
}
