//! `-v`/`-vv`/`-vvv` and `RUST_LOG`: tracing's diagnostics on stderr.

use tracing_subscriber::EnvFilter;

/// rmcp's OAuth code logs at debug level what a sign-in exchanges (the
/// authorization code, and a token response's fields beyond the tokens
/// themselves, such as an OpenID `id_token`): capped at info unless
/// `RUST_LOG` names that target itself.
const OAUTH_TARGET: &str = "rmcp::transport::auth";

/// The tracing directives: `RUST_LOG` when set, else the level the `-v`
/// count asks for (info, debug, trace) for every crate; `None` without
/// either. rmcp's OAuth code stays at info unless named.
fn directives(rust_log: Option<&str>, verbose: u8) -> Option<String> {
    let chosen = match rust_log {
        Some(directives) if !directives.trim().is_empty() => directives.to_owned(),
        _ => match verbose {
            0 => return None,
            1 => "info".to_owned(),
            2 => "debug".to_owned(),
            _ => "trace".to_owned(),
        },
    };
    if chosen.contains(OAUTH_TARGET) {
        return Some(chosen);
    }
    Some(format!("{chosen},{OAUTH_TARGET}=info"))
}

/// Installs the stderr subscriber: `RUST_LOG` when set (its directives,
/// e.g. `tack_mcp=debug`), else the level the `-v` count asks for
/// (info, debug, trace) for every crate; nothing without either.
pub fn init(verbose: u8) {
    let rust_log = std::env::var("RUST_LOG").ok();
    let Some(directives) = directives(rust_log.as_deref(), verbose) else {
        return;
    };
    let filter = EnvFilter::new(directives);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oauth_exchange_stays_out_of_debug_output_unless_named() {
        assert_eq!(directives(None, 0), None);
        assert_eq!(directives(Some("  "), 0), None);
        assert_eq!(
            directives(None, 2).as_deref(),
            Some("debug,rmcp::transport::auth=info")
        );
        assert_eq!(
            directives(Some("rmcp=trace"), 0).as_deref(),
            Some("rmcp=trace,rmcp::transport::auth=info")
        );
        assert_eq!(
            directives(Some("rmcp::transport::auth=debug"), 3).as_deref(),
            Some("rmcp::transport::auth=debug")
        );
    }
}
