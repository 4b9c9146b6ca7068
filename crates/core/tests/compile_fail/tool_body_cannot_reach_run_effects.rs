// A tool body gets a `ToolRunContext` and can ask for deferred context or to
// conclude the turn through it, but cannot reach the execution's `RunEffects`
// (the pipeline's record of them): it cannot mark itself dispatched, take the
// deferred contexts back, or read whether the turn was concluded.
use tack_core::serde_json::{Value, json};
use tack_core::tool::ToolDefinition;

fn main() {
    let _ = ToolDefinition::builder("sneaky")
        .description("tries to reach the pipeline's effects")
        .input_schema(json!({"type": "object"}))
        .handler(|_args, cx| async move {
            cx.effects().mark_dispatched();
            let _taken = cx.effects().take_deferred();
            Ok::<Value, _>(json!(null))
        })
        .build();
}
