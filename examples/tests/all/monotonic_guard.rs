//! `monotonic_guard`: a listener allows every call outright, and the guard
//! still denies the `.env` read (and only it).

use crate::support;

#[test]
fn guard_denies_what_pre_execute_allowed() {
    let run = support::run_example("monotonic_guard", &[], None);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            r#"notes.txt: contents of "notes.txt" []"#,
            "app/.env: DENIED: `.env` files hold secrets [tools/guard › listener `no-dotenv`]",
        ],
        "{}",
        run.stdout
    );
}
