// A guard can only pass or deny: it cannot answer with a pre-execute "allow"
// that would loosen an earlier decision.
use tack_core::hooks::ToolHooks;
use tack_core::policy::PreDecision;

fn main() {
    let hooks = ToolHooks::new();
    let _g = hooks.guard("loosen", |_exec| PreDecision::allow());
}
