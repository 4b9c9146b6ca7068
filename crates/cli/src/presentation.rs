//! How the tools are offered to a model (or an MCP client): each tool
//! natively, only code mode's `run_code`, or both, as the settings'
//! `presentation` says.

use tack_code_mode::{CodeMode, CodeModeConfig};
use tack_pipeline::{Pipeline, Presentation, ToolRegistry};

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
    pub code_mode: CodeMode,
}

/// Sets `registry`'s presentation from `settings` and makes the pipeline
/// and code mode over it. Sub-calls of `run_code` run as a batch of the
/// pipeline's dispatcher, under the turn scheduler's rules (those the
/// pipeline would run in parallel overlap).
pub fn offer(settings: &Settings, registry: &ToolRegistry) -> Offered {
    let presentation = match settings.presentation.value.as_str() {
        "code" => Presentation::Code,
        "both" => Presentation::Both,
        _ => Presentation::Native,
    };
    registry.set_presentation(None, presentation);
    let pipeline = Pipeline::new(registry.clone());
    let code_mode = CodeMode::new(CodeModeConfig::default());
    Offered {
        presentation,
        pipeline,
        code_mode,
    }
}
