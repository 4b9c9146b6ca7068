//! A tour of the sandbox: a refused escape, an allowed write, a command, and
//! what the kernel isolates.
//!
//! ```text
//! cargo run -p tack-sandbox --example sandbox
//! ```

use std::path::Path;
use std::time::Duration;

use tack_core::capability::CommandRequest;
use tack_sandbox::{Sandbox, SandboxPolicy};
use tokio_util::sync::CancellationToken;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let workspace = tempfile::tempdir()?;
    let sandbox = Sandbox::new(
        SandboxPolicy::workspace_write(workspace.path())
            .with_denied(".git/**")
            .with_denied("**/.env"),
    )?;
    let fs = sandbox.fs();
    println!("workspace: {}", sandbox.workspace_root().display());

    // An allowed write: atomic, parents created, created-vs-replaced reported.
    let contents = b"ship the sandbox\n";
    let created = fs.write(Path::new("notes/todo.txt"), contents).await?;
    println!(
        "wrote notes/todo.txt: {} bytes, created: {created}",
        contents.len()
    );

    // Refused escapes, each with its reason.
    std::os::unix::fs::symlink("/etc", workspace.path().join("etc-link"))?;
    for escape in ["../../etc/passwd", "/etc/passwd", "etc-link/passwd", ".env"] {
        match fs.read(Path::new(escape), None).await {
            Ok(_) => println!("read {escape}: allowed (unexpected!)"),
            Err(e) => println!("read {escape}: {e}"),
        }
    }

    // The isolation this kernel offers and this sandbox applies.
    println!("\nisolation status:\n{}", sandbox.status());

    // A command, and an attempt to write outside the workspace.
    let shell = sandbox.shell();
    let outside = std::env::temp_dir().join(format!("tack-example-outside-{}", std::process::id()));
    let command = format!(
        "cat notes/todo.txt; echo x > {} && echo 'wrote outside' || echo 'write outside refused'",
        outside.display()
    );
    let request = CommandRequest::new(command).with_timeout(Duration::from_secs(10));
    match shell.run(request, CancellationToken::new()).await {
        Ok(out) => {
            print!("command stdout:\n{}", out.stdout);
            print!("command stderr:\n{}", out.stderr);
            println!("exit code: {:?}", out.exit_code);
        }
        Err(e) => println!("command: {e}"),
    }
    let _ = std::fs::remove_file(&outside);
    Ok(())
}
