//! Prints the code-mode SDK text for tack's builtin tools (the example in
//! `docs/code-mode.md`): `cargo run -p tack-code-mode --example sdk`.
#![allow(clippy::unwrap_used)]

fn main() {
    let tools = tack_tools::builtin_tools().unwrap();
    print!("{}", tack_code_mode::sdk_text(&tools));
}
