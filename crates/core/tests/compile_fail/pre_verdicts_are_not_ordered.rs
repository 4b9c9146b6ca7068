// Verdicts are ordered by their `Action` only: `PreVerdict` carries a reason
// and has no ordering of its own that could compare reasons.
use tack_core::policy::PreVerdict;

fn main() {
    let _ = PreVerdict::Allow < PreVerdict::Deny { reason: "r".into() };
}
