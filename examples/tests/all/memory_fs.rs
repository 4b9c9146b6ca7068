//! `memory_fs`: the builtin tools read and list the in-memory files, a write
//! is refused by the capability, and a missing file is `ENOENT`-shaped.

use crate::support;

#[test]
fn builtin_tools_run_on_the_memory_file_system() {
    let run = support::run_example("memory_fs", &[], None);
    let out = &run.stdout;
    assert!(
        out.contains("read_file {\"path\": \"README.md\"}:\n     1\t# demo\n     2\tfrom memory\n"),
        "{out}"
    );
    assert!(
        out.contains("list_dir {\"path\": \".\"}:\nREADME.md  (19 bytes)\nnotes.txt  (8 bytes)\n"),
        "{out}"
    );
    assert!(
        out.contains("EXECUTION_FAILED: access to a.txt refused: this file system is read-only"),
        "{out}"
    );
    assert!(
        out.contains("EXECUTION_FAILED: no such file or directory: b.txt"),
        "{out}"
    );
    assert_eq!(out.matches("EXECUTION_FAILED").count(), 2, "{out}");
    // Nothing was written to the real disk either.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    assert!(!root.join("a.txt").exists());
}
