//! Signals: Ctrl-C (SIGINT), SIGTERM and SIGHUP. The first one cancels the
//! running turn; a second one (or one while no turn runs) quits at once.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// A signal `tack` handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT (Ctrl-C): ends the turn; `chat` goes on to the next prompt.
    Interrupt,
    /// SIGTERM: ends the turn, then the process.
    Terminate,
    /// SIGHUP (the terminal went away): ends the turn, then the process.
    Hangup,
}

impl Stop {
    /// The signal's number (the same on every Unix).
    fn number(self) -> u8 {
        match self {
            Stop::Hangup => 1,
            Stop::Interrupt => 2,
            Stop::Terminate => 15,
        }
    }

    /// The exit code of a process it ended: 128 + the signal's number, as
    /// shells report (130, 143, 129).
    pub fn exit_code(self) -> u8 {
        128 + self.number()
    }

    fn name(self) -> &'static str {
        match self {
            Stop::Hangup => "SIGHUP",
            Stop::Interrupt => "Ctrl-C",
            Stop::Terminate => "SIGTERM",
        }
    }

    /// Whether it ends the whole session, not just the turn.
    pub fn ends_session(self) -> bool {
        self != Stop::Interrupt
    }
}

#[derive(Default)]
struct State {
    /// The turn the next signal cancels.
    armed: Option<CancellationToken>,
    /// The signal that cancelled a turn (a session-ending one is kept over a
    /// later Ctrl-C).
    received: Option<Stop>,
    /// Run before a signal ends the process (e.g. to give the terminal back
    /// its mode when a line editor holds it raw).
    before_exit: Option<Box<dyn Fn() + Send>>,
}

/// Watches SIGINT, SIGTERM and SIGHUP for the whole process. Once installed,
/// they no longer kill the process by themselves: a turn that is armed is
/// cancelled (its running calls end `CANCELLED` and are logged); with no
/// armed turn the process exits with 128 + the signal's number.
#[derive(Clone)]
pub struct Interrupts {
    state: Arc<Mutex<State>>,
}

impl Interrupts {
    /// Starts watching, on a thread of its own (with its own small
    /// runtime), so a signal is seen even while every thread of the main
    /// runtime is blocked (e.g. writing to a stdout nobody reads). On Unix
    /// the handlers are in place when this returns; a signal whose handler
    /// cannot be installed keeps its default effect (the process ends; the
    /// session log stays valid).
    ///
    /// A session-ending signal (SIGTERM, SIGHUP) during a turn cancels it;
    /// if the process has not ended [`GRACE`] later, it exits then.
    pub fn install() -> Self {
        let state: Arc<Mutex<State>> = Arc::default();
        let watched = Arc::clone(&state);
        let (ready, installed) = std::sync::mpsc::channel::<()>();
        let watcher = std::thread::Builder::new()
            .name("tack-signals".to_owned())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_io()
                    .build();
                let Ok(runtime) = runtime else {
                    let _ = ready.send(());
                    return;
                };
                runtime.block_on(async move {
                    let mut signals = Signals::new();
                    let _ = ready.send(());
                    while let Some(stop) = signals.next().await {
                        on_signal(&watched, stop);
                    }
                });
            });
        if watcher.is_ok() {
            let _ = installed.recv();
        }
        Self { state }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next signal cancels `turn`.
    pub fn arm(&self, turn: CancellationToken) {
        self.lock().armed = Some(turn);
    }

    /// Runs `restore` before a signal ends the process.
    pub fn before_exit(&self, restore: impl Fn() + Send + 'static) {
        self.lock().before_exit = Some(Box::new(restore));
    }

    /// The next signal quits.
    pub fn disarm(&self) {
        self.lock().armed.take();
    }

    /// The signal that cancelled a turn, if any.
    pub fn received(&self) -> Option<Stop> {
        self.lock().received
    }

    /// Forgets a Ctrl-C that cancelled a turn (`chat` goes on); a signal
    /// that ends the session is kept and returned.
    pub fn take_interrupt(&self) -> Option<Stop> {
        let mut state = self.lock();
        match state.received {
            Some(stop) if stop.ends_session() => Some(stop),
            _ => {
                state.received = None;
                None
            }
        }
    }
}

/// How long a session-ending signal gives the cancelled turn (its calls'
/// ends, the `SessionEnd` hooks) before the process exits anyway.
pub const GRACE: Duration = Duration::from_secs(5);

/// What a signal does: cancel the armed turn (and, for one that ends the
/// session, exit after [`GRACE`] whatever still runs), or quit at once.
fn on_signal(watched: &Arc<Mutex<State>>, stop: Stop) {
    let (turn, before_exit) = {
        let mut state = watched.lock().unwrap_or_else(PoisonError::into_inner);
        if state.received.is_none_or(|r| !r.ends_session()) {
            state.received = Some(stop);
        }
        (state.armed.take(), state.before_exit.take())
    };
    match turn {
        Some(turn) => {
            watched
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .before_exit = before_exit;
            turn.cancel();
            if stop.ends_session() {
                // The turn may never see the cancellation: a thread blocked
                // writing to a full stdout holds it up. Exit regardless.
                let watched = Arc::clone(watched);
                let _ = std::thread::Builder::new()
                    .name("tack-grace".to_owned())
                    .spawn(move || {
                        std::thread::sleep(GRACE);
                        quit(&watched, stop);
                    });
            }
            // Last: stderr too may be a pipe nobody reads.
            let then = if stop.ends_session() {
                ", then quitting"
            } else {
                ""
            };
            eprintln!(
                "\ntack: {}: cancelling the turn{then} (a second signal quits at once)",
                stop.name()
            );
        }
        None => {
            if let Some(restore) = before_exit {
                restore();
            }
            std::process::exit(i32::from(stop.exit_code()))
        }
    }
}

/// Ends the process with `stop`'s code, after the `before_exit` action.
/// (Exiting flushes stdout only when no other thread holds it, so a writer
/// blocked on a full pipe does not hold the exit up.)
fn quit(watched: &Arc<Mutex<State>>, stop: Stop) -> ! {
    let restore = watched
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .before_exit
        .take();
    if let Some(restore) = restore {
        restore();
    }
    std::process::exit(i32::from(stop.exit_code()))
}

/// The stream of handled signals.
struct Signals {
    #[cfg(unix)]
    streams: Vec<(Stop, tokio::signal::unix::Signal)>,
}

impl Signals {
    #[cfg(unix)]
    fn new() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        // Registered now, not at the first poll: no signal is missed.
        let streams = [
            (Stop::Interrupt, SignalKind::interrupt()),
            (Stop::Terminate, SignalKind::terminate()),
            (Stop::Hangup, SignalKind::hangup()),
        ]
        .into_iter()
        .filter_map(|(stop, kind)| signal(kind).ok().map(|s| (stop, s)))
        .collect();
        Self { streams }
    }

    #[cfg(not(unix))]
    fn new() -> Self {
        Self {}
    }

    /// Waits for the next signal; `None` when none can be watched.
    #[cfg(unix)]
    async fn next(&mut self) -> Option<Stop> {
        if self.streams.is_empty() {
            return None;
        }
        std::future::poll_fn(|cx| {
            for (stop, stream) in &mut self.streams {
                if let std::task::Poll::Ready(Some(())) = stream.poll_recv(cx) {
                    return std::task::Poll::Ready(Some(*stop));
                }
            }
            std::task::Poll::Pending
        })
        .await
    }

    #[cfg(not(unix))]
    async fn next(&mut self) -> Option<Stop> {
        tokio::signal::ctrl_c().await.ok().map(|()| Stop::Interrupt)
    }
}
