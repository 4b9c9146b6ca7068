//! Workspaces that more than one test starts from.

use crate::harness::Workspace;

/// A small Rust project with what a search must leave out or report: a root
/// `.gitignore` (`target/`, `*.log`), a nested one (`src/util/.gitignore`
/// ignores `generated.rs`), a binary `assets/logo.png`, an ignored
/// `build.log` and `target/`, and a `.git` directory. Most files say "hello".
pub fn project() -> Workspace {
    let ws = Workspace::new();
    ws.file(".gitignore", "target/\n*.log\n")
        .file("Cargo.toml", "[package]\nname = \"demo\"\n")
        .file("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n")
        .file(
            "src/lib.rs",
            "// TODO: write the library\npub fn hello() -> &'static str { \"hello\" }\n",
        )
        .file("src/util/mod.rs", "pub mod strings;\n")
        .file("src/util/.gitignore", "generated.rs\n")
        .file("src/util/generated.rs", "// hello from the generator\n")
        .file("assets/logo.png", b"\x89PNG\r\n\x1a\n\0\0hello")
        .file("build.log", "hello from the build\n")
        .file("target/debug/out.rs", "hello\n")
        .file(".git/HEAD", "ref: refs/heads/main\n");
    ws
}

/// A read-write workspace holding the one file `rel`, with `contents`.
pub fn workspace_with(rel: &str, contents: impl AsRef<[u8]>) -> Workspace {
    let ws = Workspace::new();
    ws.file(rel, contents);
    ws
}
