//! How the tools are offered to a model (or an MCP client): each tool
//! natively, only code mode's `run_code`, or both, as the settings'
//! `presentation` says.

use std::sync::Arc;

use tack_code_mode::{CodeModeConfig, CodeModePlugin};
use tack_core::tool::ToolCall;
use tack_pipeline::{ExecutionMode, Pipeline, Presentation, ToolRegistry};

use crate::settings::Settings;

/// The registry set to the settings' presentation, the pipeline over it,
/// and the code-mode plugin that registers `run_code` (install it whatever
/// the presentation: under `native` its tool is not shown).
pub struct Offered {
    /// The settings' presentation, set as the registry's default.
    pub presentation: Presentation,
    /// The pipeline over the registry.
    pub pipeline: Pipeline,
    /// Code mode: `run_code`, whose programs' calls go through `pipeline`.
    pub code_mode: CodeModePlugin,
}

/// Sets `registry`'s presentation from `settings` and makes the pipeline
/// and code mode over it. Sub-calls of `run_code` overlap when the pipeline
/// would run them in parallel. (The classifier holds the pipeline whose
/// registry holds `run_code`: a reference cycle, released when the process
/// ends.)
pub fn offer(settings: &Settings, registry: &ToolRegistry) -> Offered {
    let presentation = match settings.presentation.value.as_str() {
        "code" => Presentation::Code,
        "both" => Presentation::Both,
        _ => Presentation::Native,
    };
    registry.set_presentation(None, presentation);
    let pipeline = Pipeline::new(registry.clone());
    let modes = pipeline.clone();
    let code_mode = CodeModePlugin::new(CodeModeConfig::default().classifier(Arc::new(
        move |call: &ToolCall| modes.execution_mode(call) == ExecutionMode::Parallel,
    )));
    Offered {
        presentation,
        pipeline,
        code_mode,
    }
}
