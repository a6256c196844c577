//! What a command prints on standard output.
//!
//! `println!` panics when stdout is closed (`| head -1`) or full
//! (`> /dev/full`), so a command died halfway through the work it was
//! reporting on, with a backtrace for a message. Written through here, the
//! first failed write is remembered and later ones are dropped: the command
//! finishes its work, and [`finish`] turns the failure into one line on
//! stderr and exit status 1. A reader that closed the pipe chose to stop
//! reading, so that case says nothing on stderr.

use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::Mutex;

/// The first write that failed, if one did.
static FAILED: Mutex<Option<io::Error>> = Mutex::new(None);

/// Writes formatted text to stdout, unless an earlier write failed.
pub fn write(args: std::fmt::Arguments<'_>) {
    let mut failed = FAILED.lock().unwrap_or_else(|p| p.into_inner());
    if failed.is_none() {
        if let Err(e) = io::stdout().lock().write_fmt(args) {
            *failed = Some(e);
        }
    }
}

/// Writes bytes to stdout, unless an earlier write failed; the failure,
/// remembered for [`finish`], is also returned to a caller whose output is
/// its product.
pub fn write_bytes(bytes: &[u8]) -> io::Result<()> {
    let mut failed = FAILED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = failed.as_ref() {
        return Err(io::Error::new(e.kind(), e.to_string()));
    }
    if let Err(e) = io::stdout().lock().write_all(bytes) {
        let back = io::Error::new(e.kind(), e.to_string());
        *failed = Some(e);
        return Err(back);
    }
    Ok(())
}

/// Flushes stdout and gives the command's exit status: `code`, or 1 when
/// stdout would not take what the command printed.
pub fn finish(program: &str, code: ExitCode) -> ExitCode {
    let mut failed = FAILED.lock().unwrap_or_else(|p| p.into_inner());
    if failed.is_none() {
        if let Err(e) = io::stdout().lock().flush() {
            *failed = Some(e);
        }
    }
    match failed.take() {
        None => code,
        Some(e) => {
            if e.kind() != io::ErrorKind::BrokenPipe {
                eprintln!("{program}: cannot write to standard output: {e}");
            }
            ExitCode::from(crate::serve::EXIT_FAILURE)
        }
    }
}

/// `print!` through [`write`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::stdout::write(format_args!($($arg)*))
    };
}

/// `println!` through [`write`].
macro_rules! outln {
    () => {
        $crate::cli::stdout::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};
