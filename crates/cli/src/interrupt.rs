//! Ctrl-C: the first press cancels the running turn, a second one (or one
//! while no turn runs) quits at once.

use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

/// The exit code of a run ended by Ctrl-C (128 + SIGINT, as shells report).
pub const INTERRUPTED: u8 = 130;

/// Watches Ctrl-C for the whole process. Once installed, Ctrl-C no longer
/// kills the process by itself: a turn that is armed is cancelled (its
/// running calls end `CANCELLED` and are logged); with no armed turn the
/// process exits with [`INTERRUPTED`].
#[derive(Clone)]
pub struct Interrupts {
    armed: Arc<Mutex<Option<CancellationToken>>>,
}

impl Interrupts {
    /// Starts watching (needs a Tokio runtime). On Unix the handler is in
    /// place when this returns; if it cannot be installed, Ctrl-C keeps its
    /// default effect (the process ends; the session log stays valid).
    pub fn install() -> Self {
        let armed: Arc<Mutex<Option<CancellationToken>>> = Arc::default();
        let watched = Arc::clone(&armed);
        let mut presses = Presses::new();
        tokio::spawn(async move {
            while presses.next().await {
                let turn = watched
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                match turn {
                    Some(turn) => {
                        eprintln!("\ntack: cancelling the turn (Ctrl-C again quits at once)");
                        turn.cancel();
                    }
                    None => std::process::exit(i32::from(INTERRUPTED)),
                }
            }
        });
        Self { armed }
    }

    /// The next Ctrl-C cancels `turn`.
    pub fn arm(&self, turn: CancellationToken) {
        *self.armed.lock().unwrap_or_else(PoisonError::into_inner) = Some(turn);
    }

    /// The next Ctrl-C quits.
    pub fn disarm(&self) {
        self.armed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// The stream of Ctrl-C presses.
struct Presses {
    #[cfg(unix)]
    signal: Option<tokio::signal::unix::Signal>,
}

impl Presses {
    #[cfg(unix)]
    fn new() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        // Registered now, not at the first poll: no press is missed.
        Self {
            signal: signal(SignalKind::interrupt()).ok(),
        }
    }

    #[cfg(not(unix))]
    fn new() -> Self {
        Self {}
    }

    /// Waits for the next press; `false` when presses cannot be watched.
    #[cfg(unix)]
    async fn next(&mut self) -> bool {
        match &mut self.signal {
            Some(signal) => signal.recv().await.is_some(),
            None => false,
        }
    }

    #[cfg(not(unix))]
    async fn next(&mut self) -> bool {
        tokio::signal::ctrl_c().await.is_ok()
    }
}
