//! A tool as the registry holds it: the definition and its compiled validators.

use std::fmt;
use std::sync::Arc;

use jsonschema::Validator;
use tack_core::hook::Scope;
use tack_core::host::ThreadCopy;
use tack_core::host::{RenderedTool, schema_depth};
use tack_core::plugin::PluginError;
use tack_core::tool::ToolDefinition;

/// A registered tool: its definition, the layer it lives in, and its input and
/// output validators, compiled once at registration.
pub struct RegisteredTool {
    pub(crate) id: u64,
    pub(crate) scope: Scope,
    pub(crate) definition: ToolDefinition,
    pub(crate) input: Arc<Validator>,
    pub(crate) output: Arc<Validator>,
    /// The JSON texts of the name, description and argument schema, written
    /// once here so that exports copy them rather than serialize again.
    pub(crate) rendered: Arc<RenderedTool>,
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", self.definition.name())
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl RegisteredTool {
    pub(crate) fn compile(
        id: u64,
        scope: Scope,
        definition: ToolDefinition,
    ) -> Result<Self, PluginError> {
        let name = definition.name().to_string();
        let compile = |schema: &serde_json::Value, which: &str| {
            // Definitions are built within the limit; checked again (without
            // recursion) because compiling recurses once per level.
            if schema_depth(schema) > ToolDefinition::MAX_SCHEMA_DEPTH {
                return Err(PluginError::InvalidSchema {
                    plugin: None,
                    name: name.clone(),
                    reason: format!(
                        "its {which} schema nests deeper than {} levels",
                        ToolDefinition::MAX_SCHEMA_DEPTH
                    ),
                });
            }
            jsonschema::validator_for(schema).map_err(|e| PluginError::InvalidSchema {
                plugin: None,
                name: name.clone(),
                reason: format!("its {which} schema does not compile: {e}"),
            })
        };
        let input = Arc::new(compile(definition.input_schema(), "input")?);
        let output = Arc::new(compile(definition.output().schema(), "output")?);
        let rendered = Arc::new(RenderedTool::of(
            definition.name().as_str(),
            definition.description(),
            definition.input_schema(),
        ));
        Ok(Self {
            rendered,
            id,
            scope,
            definition,
            input,
            output,
        })
    }

    /// A copy for one thread's calls: the same tool (the same registration,
    /// definition and compiled validators), whose own reference count and
    /// [`ThreadCopy::thread_copy`] only that thread's calls write.
    pub(crate) fn thread_copy(&self) -> RegisteredTool {
        RegisteredTool {
            id: self.id,
            scope: self.scope.clone(),
            definition: self.definition.thread_copy(),
            input: self.input.clone(),
            output: self.output.clone(),
            rendered: self.rendered.clone(),
        }
    }

    /// The definition.
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// The layer the tool was registered in.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }
}
