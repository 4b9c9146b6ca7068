//! Finding the Node tools `.ci/run` installs (`npm install --prefix .ci/node`).
//!
//! Set `TACK_MCP_NODE_DIR` to use another prefix. When the tools are
//! missing, a test prints a notice and passes — except under CI (`CI` set),
//! where it fails saying how to install them.

use std::path::PathBuf;

/// `DIR/node_modules/.bin/NAME`, when installed.
pub fn bin(name: &str, test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("TACK_MCP_NODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../.ci/node"));
    let path = dir.join("node_modules/.bin").join(name);
    if path.exists() {
        return Some(path);
    }
    let message = format!(
        "{test}: {} is missing; install the Node tools with `npm install --prefix .ci/node` (see .ci/run) or set TACK_MCP_NODE_DIR",
        path.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{message}");
    }
    println!("skipped, {message}");
    None
}

/// The directory of the Node binary (Node 22), to put first on PATH.
pub fn node_path(test: &str) -> Option<String> {
    let node = bin("node", test)?;
    let dir = node.parent()?.to_owned();
    let path = std::env::var("PATH").unwrap_or_default();
    Some(format!("{}:{path}", dir.display()))
}

/// `DIR/node_modules/PACKAGE/dist/index.js`, a package's command run with
/// `node` (for two versions of one package, whose `.bin` names clash).
pub fn package_script(package: &str, test: &str) -> Option<PathBuf> {
    let node = bin("node", test)?;
    let script = node.parent()?.parent()?.join(package).join("dist/index.js");
    if script.exists() {
        return Some(script);
    }
    let message = format!(
        "{test}: {} is missing; install the Node tools with `npm ci --prefix .ci/node` (see .ci/run)",
        script.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{message}");
    }
    println!("skipped, {message}");
    None
}
