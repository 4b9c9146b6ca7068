//! `plugin_set`: plugins by value and by name install in the order given,
//! the builtin tools run in the sandbox's workspace, the by-name gate denies
//! the write, and an unknown name fails the set.

use crate::support;

#[test]
fn plugin_set_composes_by_value_and_by_name() {
    let run = support::run_example("plugin_set", &[], None);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{}", run.stdout);
    let linked = lines[0]
        .strip_prefix("linked plugins: ")
        .expect("the linked list");
    for name in ["builtin-tools", "read-only", "sandbox", "timeout"] {
        assert!(
            linked.split(", ").any(|n| n == name),
            "{name} not in {linked}"
        );
    }
    assert_eq!(
        lines[1],
        "installed, in order: sandbox, timeout, builtin-tools, read-only"
    );
    assert_eq!(lines[2], "read_file:      1\thello from the workspace");
    assert_eq!(lines[3], "write_file: DENIED: this session is read-only");
    assert!(
        lines[4].starts_with("no-such-plugin: no plugin named `no-such-plugin` is linked"),
        "{}",
        lines[4]
    );
}
