//! Running a cookbook example the way a reader does:
//! `cargo run -q -p tack-examples --features full --example NAME -- ARGS`.

use std::path::Path;
use std::process::{Command, Output};

/// What one run of an example printed, and how it ended.
#[allow(dead_code)]
pub struct Run {
    /// Standard output, as text.
    pub stdout: String,
    /// Standard error, as text.
    pub stderr: String,
    /// The process's exit status.
    pub output: Output,
}

/// Runs `cargo run -q -p tack-examples --features full --example NAME -- ARGS` in `dir`
/// (the workspace root when `None`) and returns what it printed. Panics,
/// with everything it printed, when the example fails.
#[allow(dead_code)]
pub fn run_example(name: &str, args: &[&str], dir: Option<&Path>) -> Run {
    let run = try_example(name, args, dir);
    assert!(
        run.output.status.success(),
        "example {name} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        run.output.status,
        run.stdout,
        run.stderr
    );
    run
}

/// Like [`run_example`], but returns a failed run instead of panicking.
#[allow(dead_code)]
pub fn try_example(name: &str, args: &[&str], dir: Option<&Path>) -> Run {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("examples/ sits in the workspace root")
        .to_path_buf();
    let output = Command::new(cargo)
        .args(["run", "-q", "--manifest-path"])
        .arg(&manifest)
        .args(["--features", "full", "--example", name, "--"])
        .args(args)
        .current_dir(dir.unwrap_or(&root))
        .output()
        .expect("cargo runs");
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        output,
    }
}
