//! `docs/tools.md` is generated from the code, so it cannot drift.

use std::path::Path;

use tack_tools::{builtin_tools, reference_markdown};

#[test]
fn docs_tools_md_matches_the_code() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tools.md");
    let generated = reference_markdown(&builtin_tools().unwrap());
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "docs/tools.md is out of date: run `UPDATE_DOCS=1 cargo test -p tack-tools --test all docs`"
    );
}
