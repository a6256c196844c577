//! The owner's socket in the data directory, the peer check, and the hello
//! each connection opens with.
//!
//! A connection starts with one line each way, before any MCP message:
//! the client says who it is acting for (tenant and subject, as an
//! in-process server would read them from its environment) and which
//! version it is; the owner answers with its own pid and version, or a
//! refusal. The client's hello also says what the connection is for
//! ([`Purpose`]): an MCP session (everything after the hellos is MCP,
//! newline-delimited, exactly as on stdio), a subcommand run by the owner
//! (framed as [`super::command`] describes), or a request that the owner
//! make way for a command that needs the directory alone.

use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The owner's socket, inside the data directory.
pub const SOCKET_FILE: &str = "alayasiki.sock";

/// Where a started owner writes its log, inside the data directory.
pub const OWNER_LOG_FILE: &str = "owner.log";

/// Longest hello line either side reads; a longer one ends the connection.
pub const MAX_HELLO_BYTES: usize = 4096;

/// How long either side waits for the other's hello.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

/// The protocol of the hellos (and of what follows them); an owner refuses
/// a client speaking another (and makes way for it once its own clients
/// have left). 2 added [`Purpose`].
pub const LOCAL_PROTOCOL: u32 = 2;

/// The longest socket path the platform takes (`sun_path`, less its NUL).
const MAX_SOCKET_PATH: usize = if cfg!(target_os = "linux") { 107 } else { 103 };

/// A client's hello.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClientHello {
    pub alayasiki_local: u32,
    pub version: String,
    pub tenant: String,
    pub subject: String,
    #[serde(default)]
    pub purpose: Purpose,
}

/// What a client connects for.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// An MCP session (the stdio relay).
    #[default]
    Session,
    /// One subcommand (`ingest`, `query`, `ui`, ...), run by the owner on
    /// its store with the client's identity.
    Command,
    /// Stop now if no other client is connected, so that a command which
    /// needs the directory alone (`reindex`) can open it: the owner's
    /// hello accepts (it stops) or refuses (naming its clients).
    Yield,
}

/// Who a client acts for (as an in-process server would read it from its
/// environment), and on which data directory.
#[derive(Debug, Clone)]
pub struct Target {
    pub data_dir: PathBuf,
    pub tenant: String,
    pub subject: String,
}

impl Target {
    /// This client's hello, for `purpose`.
    pub fn hello(&self, purpose: Purpose) -> ClientHello {
        ClientHello {
            alayasiki_local: LOCAL_PROTOCOL,
            version: env!("CARGO_PKG_VERSION").into(),
            tenant: self.tenant.clone(),
            subject: self.subject.clone(),
            purpose,
        }
    }
}

/// The owner's answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct OwnerHello {
    pub alayasiki_local: u32,
    pub version: String,
    pub pid: u32,
    /// Why the connection is refused (it is then closed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// The socket path of `dir`: [`SOCKET_FILE`] inside it, or, when that
/// path is longer than the platform takes, a file named after a hash of
/// the directory's canonical path in this user's private runtime
/// directory ([`runtime_dir`]).
pub fn socket_path(dir: &Path) -> Result<PathBuf, String> {
    let path = dir.join(SOCKET_FILE);
    if path.as_os_str().len() <= MAX_SOCKET_PATH {
        return Ok(path);
    }
    let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let digest = crate::ids::sha256_hex(canonical.as_os_str().as_encoded_bytes());
    let name = format!("{}.sock", &digest[..SOCKET_DIGEST_CHARS]);
    // The first base whose socket path fits: $XDG_RUNTIME_DIR, the
    // temporary directory, /tmp.
    let uid = own_uid();
    let mut bases = Vec::new();
    if let Some(base) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        if base.is_absolute() {
            bases.push(base.join("alayasiki-mcp"));
        }
    }
    bases.push(std::env::temp_dir().join(format!("alayasiki-mcp-{uid}")));
    bases.push(PathBuf::from(format!("/tmp/alayasiki-mcp-{uid}")));
    let Some(base) = bases
        .into_iter()
        .find(|b| b.join(&name).as_os_str().len() <= MAX_SOCKET_PATH)
    else {
        return Err(format!(
            "the data directory's path is too long for its local socket ({} bytes, at most \
             {MAX_SOCKET_PATH}); use a shorter --data-dir, or serve in this process with \
             --in-process",
            path.as_os_str().len()
        ));
    };
    Ok(runtime_dir(base)?.join(name))
}

/// Hex digits of the directory's hash in a runtime socket's name (96
/// bits: no two directories of one user meet).
const SOCKET_DIGEST_CHARS: usize = 24;

/// `dir`, this user's directory for sockets of data directories whose own
/// path is too long: created mode 0700, and refused unless this user owns
/// it and nobody else may enter it.
fn runtime_dir(dir: PathBuf) -> Result<PathBuf, String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    if !meta.is_dir() || meta.uid() != own_uid() || meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{} is not a directory private to this user, so the local socket is not put \
             there; remove it, or use a shorter --data-dir",
            dir.display()
        ));
    }
    Ok(dir)
}

/// Binds the owner's socket in `dir` (which the caller owns: a socket file
/// left by an owner that died is removed first), readable and writable by
/// this user only.
pub fn bind(dir: &Path) -> Result<UnixListener, String> {
    let path = socket_path(dir)?;
    match std::fs::remove_file(&path) {
        Ok(()) => log::info!("removed the socket left by an earlier owner"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(format!(
                "cannot remove the old socket {}: {e}",
                path.display()
            ))
        }
    }
    let listener =
        UnixListener::bind(&path).map_err(|e| format!("cannot bind {}: {e}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot restrict {}: {e}", path.display()))?;
    Ok(listener)
}

/// Connects to the owner of `dir`, if one is listening.
pub fn connect(dir: &Path) -> std::io::Result<UnixStream> {
    let path = socket_path(dir).map_err(std::io::Error::other)?;
    UnixStream::connect(path)
}

/// Waits until `listener` has a connection to accept, or `timeout`
/// passes (poll(2); an error counts as ready, for `accept` to report).
pub fn wait_for_connection(listener: &UnixListener, timeout: Duration) -> bool {
    use std::os::fd::AsRawFd;
    use std::os::raw::{c_int, c_short};
    #[repr(C)]
    struct PollFd {
        fd: c_int,
        events: c_short,
        revents: c_short,
    }
    #[cfg(target_os = "linux")]
    type Count = std::os::raw::c_ulong;
    #[cfg(not(target_os = "linux"))]
    type Count = std::os::raw::c_uint;
    extern "C" {
        fn poll(fds: *mut PollFd, count: Count, timeout_ms: c_int) -> c_int;
    }
    const POLLIN: c_short = 1;
    let mut fd = PollFd {
        fd: listener.as_raw_fd(),
        events: POLLIN,
        revents: 0,
    };
    let ms = c_int::try_from(timeout.as_millis()).unwrap_or(c_int::MAX);
    // SAFETY: one valid pollfd, for the duration of the call.
    unsafe { poll(&mut fd, 1, ms) != 0 }
}

/// This process's user id.
pub fn own_uid() -> u32 {
    extern "C" {
        fn getuid() -> u32;
    }
    // SAFETY: getuid(2) cannot fail and touches no memory of ours.
    unsafe { getuid() }
}

/// The user id of the process at the other end of `stream`, where the
/// platform says (Linux `SO_PEERCRED`, the BSDs' and macOS's `getpeereid`).
pub fn peer_uid(stream: &UnixStream) -> Option<u32> {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    #[cfg(target_os = "linux")]
    {
        use std::os::raw::{c_int, c_void};
        #[repr(C)]
        struct Ucred {
            pid: i32,
            uid: u32,
            gid: u32,
        }
        const SOL_SOCKET: c_int = 1;
        const SO_PEERCRED: c_int = 17;
        extern "C" {
            fn getsockopt(
                fd: c_int,
                level: c_int,
                name: c_int,
                value: *mut c_void,
                len: *mut u32,
            ) -> c_int;
        }
        let mut cred = Ucred {
            pid: 0,
            uid: u32::MAX,
            gid: 0,
        };
        let mut len = std::mem::size_of::<Ucred>() as u32;
        // SAFETY: SO_PEERCRED writes one `struct ucred` (laid out as above)
        // into a buffer of the length given.
        let ok = unsafe {
            getsockopt(
                fd,
                SOL_SOCKET,
                SO_PEERCRED,
                (&mut cred as *mut Ucred).cast(),
                &mut len,
            )
        } == 0;
        (ok && len as usize == std::mem::size_of::<Ucred>()).then_some(cred.uid)
    }
    #[cfg(any(
        target_os = "macos",
        target_os = "freebsd",
        target_os = "openbsd",
        target_os = "netbsd"
    ))]
    {
        extern "C" {
            fn getpeereid(
                fd: std::os::raw::c_int,
                uid: *mut u32,
                gid: *mut u32,
            ) -> std::os::raw::c_int;
        }
        let (mut uid, mut gid) = (u32::MAX, 0);
        // SAFETY: getpeereid(3) writes the two ids.
        let ok = unsafe { getpeereid(fd, &mut uid, &mut gid) } == 0;
        ok.then_some(uid)
    }
    #[cfg(not(any(
        target_os = "linux",
        target_os = "macos",
        target_os = "freebsd",
        target_os = "openbsd",
        target_os = "netbsd"
    )))]
    {
        let _ = fd;
        None
    }
}

/// Sends the client's `hello` on `stream` and reads the owner's answer
/// (waiting at most [`HELLO_TIMEOUT`]); the reading half to go on with.
pub fn greet(
    stream: &UnixStream,
    hello: &ClientHello,
) -> std::io::Result<(OwnerHello, std::io::BufReader<UnixStream>)> {
    stream.set_read_timeout(Some(HELLO_TIMEOUT))?;
    send_hello(stream, hello)?;
    let mut reader = std::io::BufReader::new(stream.try_clone()?);
    let answer: OwnerHello = read_hello(&mut reader)?;
    stream.set_read_timeout(None)?;
    Ok((answer, reader))
}

/// Writes `hello` as one line.
pub fn send_hello<T: Serialize>(mut out: impl Write, hello: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(hello).map_err(std::io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// Reads one hello line of at most [`MAX_HELLO_BYTES`] (the stream's read
/// timeout bounds the wait).
pub fn read_hello<T: for<'de> Deserialize<'de>>(input: &mut impl BufRead) -> std::io::Result<T> {
    let mut line = Vec::new();
    input
        .take(MAX_HELLO_BYTES as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if line.last() != Some(&b'\n') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            if line.len() > MAX_HELLO_BYTES {
                "hello line too long"
            } else {
                "connection closed before its hello"
            },
        ));
    }
    serde_json::from_slice(&line)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connected_peer_is_this_user() {
        let (a, _b) = UnixStream::pair().unwrap();
        if cfg!(target_os = "linux") {
            assert_eq!(peer_uid(&a), Some(own_uid()));
        }
    }

    #[test]
    fn hellos_read_back_and_long_ones_are_refused() {
        let hello = ClientHello {
            alayasiki_local: LOCAL_PROTOCOL,
            version: "1.2.3".into(),
            tenant: "local".into(),
            subject: "agent".into(),
            purpose: Purpose::Command,
        };
        let mut wire = Vec::new();
        send_hello(&mut wire, &hello).unwrap();
        let back: ClientHello = read_hello(&mut wire.as_slice()).unwrap();
        assert_eq!(back, hello);
        let long = vec![b'x'; MAX_HELLO_BYTES + 10];
        assert!(read_hello::<ClientHello>(&mut long.as_slice()).is_err());
        assert!(read_hello::<ClientHello>(&mut &b"{}"[..]).is_err());
        // A hello without a purpose is a session's.
        let bare: ClientHello = read_hello(
            &mut &br#"{"alayasiki_local":2,"version":"1","tenant":"t","subject":"s"}
"#[..],
        )
        .unwrap();
        assert_eq!(bare.purpose, Purpose::Session);
    }

    #[test]
    fn socket_paths_past_the_platform_limit_move_to_a_private_runtime_directory() {
        assert_eq!(
            socket_path(Path::new("/tmp/x")).unwrap(),
            Path::new("/tmp/x").join(SOCKET_FILE)
        );
        let long = PathBuf::from("/").join("d".repeat(200));
        let other = PathBuf::from("/").join("e".repeat(200));
        let path = socket_path(&long).unwrap();
        assert!(path.as_os_str().len() <= MAX_SOCKET_PATH, "{path:?}");
        assert_eq!(
            path,
            socket_path(&long).unwrap(),
            "the same directory, the same socket"
        );
        assert_ne!(path, socket_path(&other).unwrap());
        use std::os::unix::fs::PermissionsExt;
        let parent = std::fs::metadata(path.parent().unwrap()).unwrap();
        assert_eq!(
            parent.permissions().mode() & 0o077,
            0,
            "private to the user"
        );
    }
}
