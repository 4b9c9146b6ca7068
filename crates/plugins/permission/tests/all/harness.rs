//! Executions, and the gate over the pipeline with test tools (through
//! tack-test).

use std::io::Write;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tack_core::tool::{Tier, ToolExecution};
use tack_permission::Permission;
use tack_test::{FakeTool, Harness};

pub fn exec(tool: &str, tier: Tier, args: Value) -> ToolExecution {
    tack_test::execution(tool, tier, args)
}

pub fn exec_for(agent: &str, tool: &str, tier: Tier, args: Value) -> ToolExecution {
    tack_test::execution_for(agent, tool, tier, args)
}

pub fn bash(cmd: &str) -> ToolExecution {
    exec("bash", Tier::Executes, json!({ "command": cmd }))
}

pub fn read(path: &str) -> ToolExecution {
    exec("read_file", Tier::ReadOnly, json!({ "path": path }))
}

pub fn write(path: &str) -> ToolExecution {
    exec("write_file", Tier::Writes, json!({ "path": path }))
}

/// A tool of `tier` taking any object, answering "ran".
pub fn tool(name: &str, tier: Tier) -> FakeTool {
    FakeTool::new(name)
        .output_schema(json!({"type": "string"}))
        .tier(tier)
        .returns(json!("ran"))
}

/// The gate installed over a pipeline with read_file, write_file, bash and
/// fetch.
pub fn registry(gate: &Permission) -> Harness<Permission> {
    let mut builder = Harness::builder();
    for (name, tier) in [
        ("read_file", Tier::ReadOnly),
        ("write_file", Tier::Writes),
        ("bash", Tier::Executes),
        ("fetch", Tier::Network),
    ] {
        builder = builder.tool(tool(name, tier));
    }
    builder.install(gate.clone()).unwrap()
}

/// A writer tests can read back.
#[derive(Clone, Default)]
pub struct SharedBuf(pub Arc<Mutex<Vec<u8>>>);

impl SharedBuf {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock()).into_owned()
    }
}

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
