// The host plumbing is not part of the plugin author's modules: the run
// effects, the plugin host and the capability slots live in
// `tack_core::host` (compiled only with the `host` feature), not where a
// plugin's imports come from.
use tack_core::capability::CapabilitySlots;
use tack_core::context::RunEffects;
use tack_core::plugin::PluginHost;

fn main() {}
