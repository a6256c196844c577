//! The memory browser for the local user: the `/ui` page and the JSON API
//! it uses, served on loopback by the process that owns the data directory
//! (`alayasiki-mcp --ui` beside stdio, or `alayasiki-mcp ui` alone).
//!
//! This is the `alayasiki-api` HTTP stack ([`super::http::serve_until`]:
//! the same routes, origin and host checks, limits and worker pool) with
//! one difference: the only credential accepted is a random per-start
//! secret ([`LocalSecret`]), naming the same local principal the stdio
//! session has. The secret reaches the user in one URL,
//! `http://ADDR/ui#secret=HEX`, in a fragment (a browser never sends a
//! fragment in a request, so it is not in request lines, proxy logs or
//! `Referer`). That URL is written to [`URL_FILE`] in the data directory,
//! created owner-only and replaced atomically, and removed when the
//! browser stops; the caller prints it once. Nothing else here ever shows
//! the secret.
//!
//! The HTTP side runs on threads of its own and stops when told
//! ([`LoopbackUi::stop`]), so it neither slows stdio nor holds up the
//! process's exit.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::admission::RateLimiter;
use super::auth::Authenticator;
use super::http::{self, Settings};
use super::listener;
use super::local_secret::LocalSecret;
use crate::protocol::mcp::Server;
use crate::service::{BrowserStatus, MemoryService, Principal};

/// The file in the data directory that holds the browser's URL.
pub const URL_FILE: &str = "ui.url";

/// Where the browser listens unless told: loopback, a free port.
pub const DEFAULT_UI_BIND: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// Whether the memory browser may listen on `bind`: loopback always;
/// an address other machines can reach (any other, the unspecified
/// `0.0.0.0` and `[::]` included) only when `allow_remote`
/// (`--allow-remote`), as `alayasiki-api` requires for its own. The error
/// says why and names the flag.
pub fn check_bind(bind: SocketAddr, allow_remote: bool) -> Result<(), String> {
    if bind.ip().is_loopback() || allow_remote {
        return Ok(());
    }
    Err(format!(
        "refusing to serve the memory browser on {bind}: other machines can reach it, and it \
         speaks plain HTTP, so the secret in its URL would cross the network readable. Use a \
         loopback address (127.0.0.1 or [::1]), or pass --allow-remote to confirm (behind a \
         TLS-terminating reverse proxy)"
    ))
}

/// The memory browser being served; stops (and removes [`URL_FILE`]) on
/// [`LoopbackUi::stop`] or when dropped.
pub struct LoopbackUi {
    /// `http://ADDR/ui#secret=HEX`.
    url: String,
    status: BrowserStatus,
    url_file: PathBuf,
    stop: Arc<AtomicBool>,
    serving: Option<JoinHandle<std::io::Result<()>>>,
    service: Arc<MemoryService>,
}

impl LoopbackUi {
    /// Binds `bind`, starts serving `server`'s memory to `principal`
    /// bearing a fresh secret, and writes the URL to [`URL_FILE`] in
    /// `data_dir` (which the caller owns). A `bind` other machines can
    /// reach must have passed [`check_bind`] with `--allow-remote`; it is
    /// served with a warning.
    pub fn start(
        server: Server,
        principal: Principal,
        bind: SocketAddr,
        data_dir: &Path,
    ) -> Result<LoopbackUi, String> {
        let rate = RateLimiter::from_env()?;
        let secret = LocalSecret::generate()
            .map_err(|e| format!("cannot make the memory browser's secret: {e}"))?;
        let socket = listener::listen(bind)
            .map_err(|e| format!("cannot serve the memory browser on {bind}: {e}"))?;
        let bound = socket
            .local_addr()
            .map_err(|e| format!("cannot serve the memory browser on {bind}: {e}"))?;
        if !bound.ip().is_loopback() {
            log::warn!(
                "the memory browser listens on {bound}, which other machines can reach: it \
                 speaks plain HTTP, so the secret in its URL crosses the network readable"
            );
        }
        let address = format!("http://{}/ui", url_authority(bound));
        let url = format!("{address}#secret={}", secret.expose_hex());
        let url_file = data_dir.join(URL_FILE);
        write_owner_only(&url_file, &url)
            .map_err(|e| format!("cannot write {}: {e}", url_file.display()))?;
        let settings = Settings {
            auth: Authenticator::local(secret, principal),
            rate,
            oauth: None,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let service = server.shared_service();
        let serving = std::thread::Builder::new()
            .name("ui-http".into())
            .spawn(move || {
                http::serve_until(server, socket, settings, &|| flag.load(Ordering::SeqCst))
            });
        let serving = match serving {
            Ok(t) => t,
            Err(e) => {
                let _ = std::fs::remove_file(&url_file);
                return Err(format!("cannot start the memory browser: {e}"));
            }
        };
        let status = BrowserStatus {
            address,
            url_file: url_file.display().to_string(),
        };
        service.announce_browser(Some(status.clone()));
        Ok(LoopbackUi {
            url,
            status,
            url_file,
            stop,
            serving: Some(serving),
            service,
        })
    }

    /// The URL with the secret: print it once, where the user looks.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Where the browser is, without the secret.
    pub fn status(&self) -> &BrowserStatus {
        &self.status
    }

    /// True once the HTTP side has stopped by itself (its socket failed).
    pub fn has_stopped(&self) -> bool {
        self.serving.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Stops serving: requests in flight finish, the threads end, the URL
    /// file is removed. Returns how the HTTP side ended.
    pub fn stop(mut self) -> std::io::Result<()> {
        self.shut_down()
    }

    fn shut_down(&mut self) -> std::io::Result<()> {
        let Some(serving) = self.serving.take() else {
            return Ok(());
        };
        self.service.announce_browser(None);
        self.stop.store(true, Ordering::SeqCst);
        let outcome = serving
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the memory browser panicked")));
        remove_quietly(&self.url_file);
        outcome
    }
}

/// Removes [`URL_FILE`] from `data_dir` (which the caller owns), if there.
pub fn remove_url_file(data_dir: &Path) {
    remove_quietly(&data_dir.join(URL_FILE));
}

/// Removes `path`; one already gone is fine, another failure is logged.
fn remove_quietly(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => log::warn!("cannot remove {}: {e}", path.display()),
    }
}

impl Drop for LoopbackUi {
    fn drop(&mut self) {
        if let Err(e) = self.shut_down() {
            log::warn!("the memory browser stopped with an error: {e}");
        }
    }
}

/// `host:port` for a URL: an unspecified bind (all interfaces) is reached
/// locally at loopback, which the host check accepts.
fn url_authority(bound: SocketAddr) -> String {
    let ip = match bound.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, bound.port()).to_string()
}

/// Writes `text` to `path` so that no other user can ever read it and no
/// reader ever sees half of it: a new file created owner-only (the mode is
/// given at creation, so there is no moment it is readable), then renamed
/// over `path`.
fn write_owner_only(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}", std::process::id()));
    // Left by a run that died between create and rename; this process owns
    // the directory, so no one else is writing it.
    match std::fs::remove_file(&temporary) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options.open(&temporary).and_then(|mut f| {
        f.write_all(text.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()
    });
    let renamed = written.and_then(|()| std::fs::rename(&temporary, path));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    renamed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_names_a_reachable_local_address() {
        let at = |s: &str| url_authority(s.parse().unwrap());
        assert_eq!(at("127.0.0.1:8080"), "127.0.0.1:8080");
        assert_eq!(at("0.0.0.0:8080"), "127.0.0.1:8080");
        assert_eq!(at("[::]:8080"), "[::1]:8080");
        assert_eq!(at("[::1]:8080"), "[::1]:8080");
        assert_eq!(at("192.0.2.7:80"), "192.0.2.7:80");
    }

    #[test]
    fn only_loopback_binds_are_allowed_without_allow_remote() {
        let bind = |s: &str| s.parse::<SocketAddr>().unwrap();
        for local in ["127.0.0.1:0", "127.8.9.10:80", "[::1]:8080"] {
            assert!(check_bind(bind(local), false).is_ok(), "{local}");
        }
        for remote in [
            "0.0.0.0:0",
            "[::]:0",
            "192.0.2.7:80",
            "[::ffff:127.0.0.1]:80",
        ] {
            let err = check_bind(bind(remote), false).unwrap_err();
            assert!(err.contains("--allow-remote"), "{remote}: {err}");
            assert!(check_bind(bind(remote), true).is_ok(), "{remote}");
        }
    }

    #[test]
    fn the_url_file_is_owner_only_and_replaced_whole() {
        let dir = std::env::temp_dir().join(format!(
            "alayasiki-ui-url-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(URL_FILE);
        write_owner_only(&path, "first").unwrap();
        write_owner_only(&path, "second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
