// A guard can only pass or deny: it cannot answer with a pre-execute "allow"
// that would loosen an earlier decision.
use tack_core::hook::Scope;
use tack_core::policy::{Guards, PreDecision};

fn main() {
    let guards = Guards::new();
    let _g = guards.add_sync(Scope::Global, "loosen", |_exec| PreDecision::allow());
}
