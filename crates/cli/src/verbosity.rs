//! `-v`/`-vv`/`-vvv` and `RUST_LOG`: tracing's diagnostics on stderr.

use tracing_subscriber::EnvFilter;

/// Installs the stderr subscriber: `RUST_LOG` when set (its directives,
/// e.g. `tack_mcp=debug`), else the level the `-v` count asks for
/// (info, debug, trace) for every crate; nothing without either.
pub fn init(verbose: u8) {
    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) if !directives.trim().is_empty() => EnvFilter::new(directives),
        _ => match verbose {
            0 => return,
            1 => EnvFilter::new("info"),
            2 => EnvFilter::new("debug"),
            _ => EnvFilter::new("trace"),
        },
    };
    let colour = !matches!(
        anstream::AutoStream::choice(&std::io::stderr()),
        anstream::ColorChoice::Never
    );
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .try_init();
}
