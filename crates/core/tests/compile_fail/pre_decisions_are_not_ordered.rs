// Decisions are ordered by their `Action` only: a `PreDecision` carries a
// reason and has no ordering of its own that could compare reasons.
use tack_core::policy::PreDecision;

fn main() {
    let _ = PreDecision::allow() < PreDecision::deny("r");
}
