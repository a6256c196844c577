//! The owner's side of the local socket: each connection, once its hello
//! is read, is one MCP session on the store this process owns, served by
//! the same code as stdio ([`crate::transport::stdio::serve`]) with the
//! identity its client acts for; or one subcommand, run by the
//! application's [`Runner`] ([`super::command`]); or a request to make way
//! for a command that needs the directory alone, granted when no other
//! client is connected.
//!
//! The owner stops on SIGTERM or SIGINT (its sessions' connections are
//! closed, their in-flight requests finish first), and on its own once no
//! client has been connected for its idle period ([`idle_exit_from_env`]),
//! at once when the last client leaves after a client of another version
//! asked it to make way (the next client then starts one of its own
//! version), or when its socket file is gone (no client could reach it).

use std::collections::HashMap;
use std::io::BufReader;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::command::{self, Runner};
use super::endpoint::{
    self, read_hello, send_hello, ClientHello, OwnerHello, Purpose, HELLO_TIMEOUT, LOCAL_PROTOCOL,
};
use crate::protocol::mcp::{Server, Session};
use crate::service::{OwnerProcess, Principal};
use crate::store::Tenant;

/// How long an owner stays up with no client connected, unless
/// [`OWNER_IDLE_ENV`] says otherwise.
pub const DEFAULT_OWNER_IDLE_SECS: u64 = 300;

/// Seconds an owner stays up with no client connected (0: until stopped).
pub const OWNER_IDLE_ENV: &str = "ALAYASIKI_OWNER_IDLE_SECS";

/// Longest idle period [`OWNER_IDLE_ENV`] may set (a week).
pub const MAX_OWNER_IDLE_SECS: u64 = 7 * 24 * 60 * 60;

/// Clients connected at once, at most; one more is refused in its hello.
pub const MAX_LOCAL_CLIENTS: usize = 256;

/// How often the accepting loop looks at its stop conditions while no
/// client connects (a connecting client is accepted at once).
const ACCEPT_POLL: Duration = Duration::from_millis(20);

/// The idle period configured by [`OWNER_IDLE_ENV`]: `None` to stay up.
pub fn idle_exit_from_env() -> Result<Option<Duration>, String> {
    let secs = match crate::config::env(OWNER_IDLE_ENV) {
        None => DEFAULT_OWNER_IDLE_SECS,
        Some(v) => v
            .parse::<u64>()
            .ok()
            .filter(|s| *s <= MAX_OWNER_IDLE_SECS)
            .ok_or_else(|| {
                format!(
                    "{OWNER_IDLE_ENV}={v:?} is not a whole number of seconds from 0 to \
                     {MAX_OWNER_IDLE_SECS}"
                )
            })?,
    };
    Ok((secs > 0).then(|| Duration::from_secs(secs)))
}

/// The clients connected, and since when none has been.
struct Clients {
    open: Mutex<HashMap<u64, UnixStream>>,
    /// How many are connected, for `alayasiki_status`.
    connected: Arc<AtomicUsize>,
    next: AtomicU64,
    idle_since: Mutex<Instant>,
    /// A client of another version asked this owner to make way.
    make_way: AtomicBool,
    /// A command that needs the directory alone asked this owner to stop
    /// now (granted with no other client connected).
    yielded: AtomicBool,
}

/// One connected client; leaves on drop.
struct ClientEntry {
    clients: Arc<Clients>,
    id: u64,
}

impl Clients {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, UnixStream>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn enter(self: &Arc<Self>, stream: &UnixStream) -> Option<ClientEntry> {
        let mut open = self.lock();
        if open.len() >= MAX_LOCAL_CLIENTS {
            return None;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        open.insert(id, stream.try_clone().ok()?);
        self.connected.store(open.len(), Ordering::Relaxed);
        Some(ClientEntry {
            clients: self.clone(),
            id,
        })
    }

    fn count(&self) -> usize {
        self.lock().len()
    }

    fn idle_for(&self) -> Duration {
        self.idle_since
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed()
    }

    /// Ends every client's connection (its session finishes what it holds).
    fn close_all(&self) {
        for stream in self.lock().values() {
            let _ = stream.shutdown(std::net::Shutdown::Read);
        }
    }
}

impl Drop for ClientEntry {
    fn drop(&mut self) {
        let mut open = self.clients.lock();
        open.remove(&self.id);
        self.clients.connected.store(open.len(), Ordering::Relaxed);
        if open.is_empty() {
            *self
                .clients
                .idle_since
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Instant::now();
        }
    }
}

/// Serves MCP sessions on `listener` (bound at `socket`) until `stop`
/// says so, the idle period passes with no client, or the socket is gone;
/// returns once every session has ended.
pub fn serve(
    server: Arc<Server>,
    runner: Runner,
    listener: UnixListener,
    socket: PathBuf,
    idle_exit: Option<Duration>,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let clients = Arc::new(Clients {
        open: Mutex::new(HashMap::new()),
        connected: Arc::new(AtomicUsize::new(0)),
        next: AtomicU64::new(1),
        idle_since: Mutex::new(Instant::now()),
        make_way: AtomicBool::new(false),
        yielded: AtomicBool::new(false),
    });
    server.service().announce_owner(OwnerProcess {
        pid: std::process::id(),
        since: crate::clock::rfc3339(crate::clock::now_ms()),
        clients: clients.connected.clone(),
    });
    let mut sessions = Vec::new();
    let mut checked_socket = Instant::now();
    loop {
        if stop() {
            log::info!("stopping: closing the clients' connections");
            clients.close_all();
            break;
        }
        if clients.yielded.load(Ordering::Acquire) {
            log::info!("stopping now: a command needs the directory alone");
            // A client that connected in the meantime reconnects (to an
            // owner started once the command is done).
            clients.close_all();
            break;
        }
        match listener.accept() {
            Ok((stream, _)) => {
                let (server, runner, clients) = (server.clone(), runner.clone(), clients.clone());
                let spawned = std::thread::Builder::new()
                    .name("local-client".into())
                    .spawn(move || serve_client(&server, &runner, &clients, stream));
                match spawned {
                    Ok(handle) => sessions.push(handle),
                    Err(e) => log::warn!("cannot start a client's thread ({e}); it was closed"),
                }
                sessions.retain(|h| !h.is_finished());
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => log::warn!("accepting a local client failed: {e}"),
        }
        let none = clients.count() == 0;
        if none && clients.make_way.load(Ordering::Acquire) {
            log::info!("the last client left and a client of another version is waiting: stopping");
            break;
        }
        if none && idle_exit.is_some_and(|d| clients.idle_for() >= d) {
            log::info!(
                "no client for {:?}: stopping",
                idle_exit.unwrap_or_default()
            );
            break;
        }
        if checked_socket.elapsed() >= Duration::from_secs(1) {
            checked_socket = Instant::now();
            if !socket.exists() {
                log::warn!(
                    "the socket {} is gone, so no new client can reach this owner: \
                     stopping once the connected ones leave",
                    socket.display()
                );
                clients.make_way.store(true, Ordering::Release);
            }
        }
        endpoint::wait_for_connection(&listener, ACCEPT_POLL);
    }
    drop(listener);
    for handle in sessions {
        let _ = handle.join();
    }
    Ok(())
}

/// Reads `stream`'s hello, then serves what it connected for until that
/// ends.
fn serve_client(server: &Arc<Server>, runner: &Runner, clients: &Arc<Clients>, stream: UnixStream) {
    let refuse = |stream: &UnixStream, why: String| {
        log::warn!("refused a local client: {why}");
        let _ = send_hello(stream, &owner_hello(Some(why)));
    };
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    if let Some(uid) = endpoint::peer_uid(&stream) {
        if uid != endpoint::own_uid() {
            return refuse(&stream, "this memory belongs to another user".into());
        }
    }
    let Some(_entry) = clients.enter(&stream) else {
        return refuse(
            &stream,
            format!("{MAX_LOCAL_CLIENTS} clients are connected (MAX_LOCAL_CLIENTS); retry later"),
        );
    };
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let _ = stream.set_read_timeout(Some(HELLO_TIMEOUT));
    let mut input = BufReader::new(read_half);
    let hello: ClientHello = match read_hello(&mut input) {
        Ok(h) => h,
        Err(e) => return refuse(&stream, format!("no valid hello: {e}")),
    };
    if hello.alayasiki_local != LOCAL_PROTOCOL {
        // A client of another build: once this owner's clients have left,
        // the next one starts an owner that speaks its protocol.
        clients.make_way.store(true, Ordering::Release);
        return refuse(
            &stream,
            format!(
                "this owner speaks local protocol {LOCAL_PROTOCOL}, the client {}",
                hello.alayasiki_local
            ),
        );
    }
    let principal = match principal(&hello) {
        Ok(p) => p,
        Err(why) => return refuse(&stream, why),
    };
    if hello.version != env!("CARGO_PKG_VERSION") {
        log::warn!(
            "a client of version {} connected to this owner of version {}: it is served, and \
             this owner stops once its last client leaves so that the next starts one of the \
             client's version",
            hello.version,
            env!("CARGO_PKG_VERSION")
        );
        clients.make_way.store(true, Ordering::Release);
    }
    if hello.purpose == Purpose::Yield {
        return make_way_now(clients, &stream);
    }
    if send_hello(&stream, &owner_hello(None)).is_err() {
        return;
    }
    let _ = stream.set_read_timeout(None);
    log::info!(
        "a client connected as tenant {:?}, subject {:?}{}",
        hello.tenant,
        hello.subject,
        if hello.purpose == Purpose::Command {
            " to run a command"
        } else {
            ""
        }
    );
    if hello.purpose == Purpose::Command {
        return command::serve(runner, &principal, stream, input);
    }
    let session = Arc::new(Session::new(principal));
    if let Err(e) = crate::transport::stdio::serve(server.clone(), session, input, stream, false) {
        log::debug!("a client's connection ended: {e}");
    }
}

/// Answers a [`Purpose::Yield`]: stop now when the asking client is the
/// only one connected, else refuse, naming how many others are.
fn make_way_now(clients: &Clients, stream: &UnixStream) {
    let others = clients.count().saturating_sub(1);
    if others > 0 {
        let _ = send_hello(
            stream,
            &owner_hello(Some(format!(
                "{others} other client(s) are connected to this memory"
            ))),
        );
        return;
    }
    log::info!("a command needs the directory alone: stopping");
    clients.yielded.store(true, Ordering::Release);
    let _ = send_hello(stream, &owner_hello(None));
}

fn principal(hello: &ClientHello) -> Result<Principal, String> {
    let tenant = Tenant::new(&hello.tenant).map_err(|e| format!("tenant: {e}"))?;
    crate::config::validate_identity(&hello.subject).map_err(|e| format!("subject: {e}"))?;
    Ok(Principal::local_admin(tenant, hello.subject.clone()))
}

fn owner_hello(refused: Option<String>) -> OwnerHello {
    OwnerHello {
        alayasiki_local: LOCAL_PROTOCOL,
        version: env!("CARGO_PKG_VERSION").to_string(),
        pid: std::process::id(),
        refused,
    }
}
