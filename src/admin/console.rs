//! Where a subcommand's output goes, and what stops it.
//!
//! A subcommand runs in the process the user started (`--in-process`, or
//! where there is no owner) or in the data directory's owner for a local
//! client ([`crate::transport::local::command`]). It prints and stops the
//! same way in both: through a [`Console`], which writes to this process's
//! stdout and stderr and watches this process's signals, or sends both to
//! the client and watches the signal the client passes on.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use crate::transport::local::command::CommandIo;
use crate::transport::signals;

/// A subcommand's stdout, stderr and stop signal. Cheap to clone.
#[derive(Clone)]
pub struct Console(Arc<Streams>);

enum Streams {
    /// This process's own.
    Process { stderr_terminal: bool },
    /// A local client's, through the owner's connection to it.
    Client {
        io: Arc<CommandIo>,
        stderr_terminal: bool,
    },
}

impl Console {
    /// This process's stdout and stderr, and its signals (when the
    /// subcommand installed handlers).
    pub fn process() -> Console {
        Console(Arc::new(Streams::Process {
            stderr_terminal: std::io::stderr().is_terminal(),
        }))
    }

    /// A local client's streams, in the owner.
    pub fn client(io: Arc<CommandIo>, stderr_terminal: bool) -> Console {
        Console(Arc::new(Streams::Client {
            io,
            stderr_terminal,
        }))
    }

    /// Writes to stdout. The first failure is remembered and later writes
    /// are dropped (see [`crate::cli::stdout`]); it is also returned, for
    /// output that is the command's product (an export).
    pub fn out(&self, bytes: &[u8]) -> std::io::Result<()> {
        match &*self.0 {
            Streams::Process { .. } => crate::cli::stdout::write_bytes(bytes),
            Streams::Client { io, .. } => io.out(bytes),
        }
    }

    /// Writes to stderr (a failure there has nowhere to be told).
    pub fn err(&self, bytes: &[u8]) {
        match &*self.0 {
            Streams::Process { .. } => {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(bytes);
                let _ = err.flush();
            }
            Streams::Client { io, .. } => io.err(bytes),
        }
    }

    /// `print!`.
    pub fn print(&self, args: std::fmt::Arguments<'_>) {
        let _ = self.out(args.to_string().as_bytes());
    }

    /// `eprint!`.
    pub fn eprint(&self, args: std::fmt::Arguments<'_>) {
        self.err(args.to_string().as_bytes());
    }

    /// Whether the command runs in the owner for a local client (the
    /// memory stays open, and its indexing goes on, after the command).
    pub fn is_client(&self) -> bool {
        matches!(&*self.0, Streams::Client { .. })
    }

    /// Whether progress may redraw one line in place.
    pub fn stderr_is_terminal(&self) -> bool {
        match &*self.0 {
            Streams::Process { stderr_terminal }
            | Streams::Client {
                stderr_terminal, ..
            } => *stderr_terminal,
        }
    }

    /// The signal that asks the command to stop, once one came: this
    /// process's, or the one the client passed on (SIGHUP when the client
    /// went away, or the owner's own when the owner is stopping).
    pub fn stop_signal(&self) -> Option<i32> {
        match &*self.0 {
            Streams::Process { .. } => signals::received(),
            Streams::Client { io, .. } => io.stop_signal().or_else(signals::received),
        }
    }

    /// Whether the command was asked to stop.
    pub fn stopping(&self) -> bool {
        self.stop_signal().is_some()
    }
}

/// `println!` on a [`Console`]'s stdout.
macro_rules! outln {
    ($console:expr) => {
        $console.print(format_args!("\n"))
    };
    ($console:expr, $($arg:tt)*) => {
        $console.print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` on a [`Console`]'s stderr.
macro_rules! errln {
    ($console:expr) => {
        $console.eprint(format_args!("\n"))
    };
    ($console:expr, $($arg:tt)*) => {
        $console.eprint(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {errln, outln};
