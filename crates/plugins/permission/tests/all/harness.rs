//! Calls, tools, and a registry with the gate installed.

use std::io::Write;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tack_core::hook::{AgentId, Disposables};
use tack_core::plugin::PluginHost;
use tack_core::tool::{
    CallId, ExecutionToken, OutputSpec, Tier, ToolDefinition, ToolExecution, ToolName,
};
use tack_permission::Permission;
use tack_pipeline::{Pipeline, ToolRegistry};

pub fn exec(tool: &str, tier: Tier, args: Value) -> ToolExecution {
    ToolExecution::new(
        CallId::from("c"),
        ToolName::new(tool).unwrap(),
        Arc::new(args),
        tier,
        ExecutionToken::issue(CallId::from("c")),
    )
}

pub fn exec_for(agent: &str, tool: &str, tier: Tier, args: Value) -> ToolExecution {
    exec(tool, tier, args).with_agent(Some(AgentId::new(agent)))
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
pub fn tool(name: &str, tier: Tier) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(format!("The `{name}` test tool."))
        .input_schema(json!({"type": "object"}))
        .output(OutputSpec::new(json!({"type": "string"})))
        .tier(tier)
        .handler(|_args, _cx| async { Ok(json!("ran")) })
        .build()
        .unwrap()
}

/// A pipeline over a registry with read_file, write_file, bash and fetch, and `gate` installed.
pub fn registry(gate: &Permission) -> (Pipeline, Disposables) {
    let registry = ToolRegistry::new();
    for (name, tier) in [
        ("read_file", Tier::ReadOnly),
        ("write_file", Tier::Writes),
        ("bash", Tier::Executes),
        ("fetch", Tier::Network),
    ] {
        registry.register(tool(name, tier)).unwrap().forget();
    }
    let r = Pipeline::new(registry);
    let mut host = PluginHost::new(r.hooks(), r.capabilities(), r.registry());
    host.install(gate).unwrap();
    let plugins = host.into_disposables();
    (r, plugins)
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
