//! SIGTERM and SIGINT (Ctrl-C, or the console's close events on Windows)
//! as a flag the HTTP server polls.
//!
//! No signal crate is on the design card and the need is tiny: install a
//! handler that sets an atomic. Storing to an atomic is async-signal-safe,
//! so the handler does nothing else; the server's main thread notices the
//! flag within one poll interval and runs the graceful shutdown on an
//! ordinary thread. The declarations are the platforms' C ABI, written out
//! here instead of pulling in `libc` or `windows-sys` for two functions.
//! The signal's number is kept too, so a command can exit 128 + signal
//! as a shell expects of a program stopped by one.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);
/// The number of the first signal that arrived (0: none yet).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// SIGINT's number (Ctrl-C; also what a Windows Ctrl-C or Ctrl-Break
/// is reported as).
pub const SIGINT: i32 = 2;
/// SIGTERM's number (also what a Windows console close, logoff or
/// shutdown is reported as).
pub const SIGTERM: i32 = 15;

/// True once a termination signal arrived (or [`request`] was called).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The first termination signal that arrived: [`SIGINT`] or [`SIGTERM`]
/// (`None` before any, or when shutdown came from [`request`]).
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        n => Some(n),
    }
}

/// Records a signal and asks for shutdown (async-signal-safe: two atomic
/// stores).
fn on(signum: i32) {
    let _ = RECEIVED.compare_exchange(0, signum, Ordering::SeqCst, Ordering::SeqCst);
    request();
}

/// Asks for shutdown as a signal would.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Installs the handlers; call once, early in `main`.
pub fn install() -> std::io::Result<()> {
    platform::install()
}

#[cfg(unix)]
mod platform {
    use std::os::raw::c_int;

    // The same numbers on Linux, the BSDs and macOS (POSIX historic values).
    use super::{SIGINT, SIGTERM};
    /// `SIG_ERR`: `(void (*)(int)) -1`.
    const SIG_ERR: usize = usize::MAX;

    extern "C" {
        // `signal(2)`: glibc, musl and the BSD libcs give it BSD semantics
        // (the handler stays installed; interrupted system calls restart),
        // which is what a set-a-flag handler wants.
        fn signal(signum: c_int, handler: usize) -> usize;
    }

    extern "C" fn on_signal(signum: c_int) {
        super::on(signum);
    }

    pub fn install() -> std::io::Result<()> {
        let handler = on_signal as extern "C" fn(c_int) as usize;
        for sig in [SIGINT, SIGTERM] {
            // SAFETY: `on_signal` only stores to a static atomic, which is
            // async-signal-safe, and has the C signature signal(2) expects.
            if unsafe { signal(sig, handler) } == SIG_ERR {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

#[cfg(windows)]
mod platform {
    type Bool = i32;
    type HandlerRoutine = unsafe extern "system" fn(ctrl_type: u32) -> Bool;

    #[link(name = "kernel32")]
    extern "system" {
        fn SetConsoleCtrlHandler(handler: Option<HandlerRoutine>, add: Bool) -> Bool;
    }

    /// `CTRL_BREAK_EVENT`: this and `CTRL_C_EVENT` (0) are keyboard
    /// interrupts; higher values are close, logoff and shutdown.
    const CTRL_BREAK_EVENT: u32 = 1;

    /// Ctrl-C, Ctrl-Break, console close, logoff, shutdown: all mean stop.
    unsafe extern "system" fn on_ctrl(ctrl_type: u32) -> Bool {
        super::on(if ctrl_type <= CTRL_BREAK_EVENT {
            super::SIGINT
        } else {
            super::SIGTERM
        });
        1 // handled: do not run the default handler (which exits at once)
    }

    pub fn install() -> std::io::Result<()> {
        // SAFETY: `on_ctrl` has the HandlerRoutine signature and only stores
        // to a static atomic.
        if unsafe { SetConsoleCtrlHandler(Some(on_ctrl), 1) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(not(any(unix, windows)))]
mod platform {
    pub fn install() -> std::io::Result<()> {
        Ok(())
    }
}
