//! Opening a file a subcommand reads to its end (`ingest`'s files,
//! `import`'s FILE): only a regular file is read.
//!
//! A pipe (FIFO) blocks its opener until a writer comes, and a device such
//! as `/dev/zero` never ends, so a command handed one would hang forever
//! holding the data directory. The file is opened without blocking (which
//! changes nothing for a regular file) and refused unless what was opened
//! is a regular file: the check is on the open handle, so a path swapped
//! for a link to a device after a `stat` is caught too.

use std::fs::File;
use std::path::Path;

/// `path` opened for reading if it is a regular file; `Ok(None)` if it is
/// something else (a pipe, a device, a directory, a socket).
pub fn open_regular(path: &Path) -> std::io::Result<Option<File>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nonblocking());
    }
    let file = options.open(path)?;
    Ok(file.metadata()?.is_file().then_some(file))
}

/// What a refused path is, for the message naming it.
pub const NOT_REGULAR: &str =
    "is not a regular file (a pipe, a device or a directory), which could be read forever";

/// `O_NONBLOCK`, whose value the standard library does not export.
#[cfg(unix)]
fn nonblocking() -> i32 {
    if cfg!(any(target_os = "linux", target_os = "android")) {
        0o4000
    } else {
        // macOS and the BSDs.
        0x0004
    }
}
