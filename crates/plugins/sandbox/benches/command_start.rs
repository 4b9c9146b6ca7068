//! Starting `true` through the confined shell, against a bare `sh -c true`.
fn main() {}
