//! The memory browser for the local user, through the real binary:
//! `alayasiki-mcp --ui` (and `ALAYASIKI_UI=1`) serves `/ui` and the JSON
//! API on loopback beside stdio, in the same process and memory, signed in
//! with a per-start secret written once to stderr and to an owner-only
//! `ui.url`; `alayasiki_status` names the address, never the secret; the
//! HTTP side stops with stdin and the file goes. `alayasiki-mcp ui` serves
//! it alone until SIGTERM, and refuses a directory a server holds.

mod common;
mod http_common;

use common::{cli, wait_timeout, Server, TempDir, BIN, TIMEOUT};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long the process may take to exit once told to (stdin closed, or
/// SIGTERM): well under what a client would call hung.
const PROMPT_EXIT: Duration = Duration::from_secs(5);

/// What `ui.url` says: `http://ADDR/ui#secret=HEX`.
struct Url {
    addr: SocketAddr,
    secret: String,
    text: String,
}

impl Url {
    fn parse(text: &str) -> Url {
        let text = text.trim().to_string();
        let rest = text.strip_prefix("http://").expect("an http URL");
        let (authority, fragment) = rest.split_once("/ui#secret=").expect("/ui#secret=");
        assert_eq!(fragment.len(), 64, "32 bytes of hex: {text}");
        assert!(fragment.bytes().all(|b| b.is_ascii_hexdigit()), "{text}");
        Url {
            addr: authority.parse().expect("IP:PORT"),
            secret: fragment.to_string(),
            text,
        }
    }

    /// The URL file of `dir`, once the server has written it.
    fn read(dir: &Path) -> Url {
        let path = dir.join("ui.url");
        let deadline = std::time::Instant::now() + TIMEOUT;
        while !path.exists() {
            assert!(std::time::Instant::now() < deadline, "no ui.url written");
            std::thread::sleep(Duration::from_millis(10));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "ui.url must be owner-only");
        }
        Url::parse(&std::fs::read_to_string(&path).unwrap())
    }

    fn get(&self, path: &str, token: Option<&str>) -> http_common::Reply {
        let headers: Vec<(String, String)> = token
            .map(|t| vec![("Authorization".to_string(), format!("Bearer {t}"))])
            .unwrap_or_default();
        http_common::request(self.addr, "GET", path, &headers, None)
    }
}

/// The ids of the documents the browser lists.
fn listed(url: &Url) -> Vec<String> {
    let r = url.get("/v1/documents", Some(&url.secret));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["documents"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|d| d["document_id"].as_str().expect("an id").to_string())
        .collect()
}

/// Everything the browser beside a stdio server must do, on `s` serving
/// `dir`; closes `s`.
fn browser_beside_stdio_works(mut s: Server, dir: &Path) {
    s.initialize();
    let url = Url::read(dir);
    assert!(url.addr.ip().is_loopback(), "{}", url.text);
    assert_eq!(url.addr.ip().to_string(), "127.0.0.1");

    let page = url.get("/ui", None);
    assert_eq!(page.status, 200);
    assert!(
        page.header("Content-Security-Policy")
            .is_some_and(|csp| csp.contains("default-src 'self'")),
        "{:?}",
        page.headers
    );

    for path in ["/v1/status", "/v1/documents"] {
        assert_eq!(url.get(path, Some(&url.secret)).status, 200, "{path}");
        let none = url.get(path, None);
        assert_eq!(none.status, 401, "{path} without a token");
        assert!(none.header("WWW-Authenticate").is_some());
        let mut wrong = url.secret.clone().into_bytes();
        wrong[0] = if wrong[0] == b'0' { b'1' } else { b'0' };
        let wrong = String::from_utf8(wrong).unwrap();
        let refused = url.get(path, Some(&wrong));
        assert_eq!(refused.status, 401, "{path} with a wrong secret");
        let body = String::from_utf8_lossy(&refused.body);
        assert!(
            !body.contains(&url.secret) && !body.contains(&wrong),
            "{body}"
        );
        // A JWT is no key here.
        let jwt = http_common::admin("local-agent", "local");
        assert_eq!(url.get(path, Some(&jwt)).status, 401, "{path} with a JWT");
    }

    // One process, one memory: written over stdio, seen over HTTP.
    assert!(listed(&url).is_empty());
    let id = s.ingest("The night ferry to Vigo leaves from pier 4 at 23:10.");
    assert_eq!(listed(&url), vec![id.clone()]);
    let one = url.get(&format!("/v1/documents/{id}"), Some(&url.secret));
    assert_eq!(one.status, 200);

    // The browser is reported by address, and the secret nowhere.
    let status = s.ok("alayasiki_status", json!({}));
    let address = format!("http://{}/ui", url.addr);
    assert_eq!(status["ui"]["address"], json!(address), "{status}");
    let url_file = dir.join("ui.url");
    assert_eq!(
        status["ui"]["url_file"],
        json!(url_file.display().to_string())
    );
    assert!(!status.to_string().contains(&url.secret), "{status}");
    let over_http = url.get("/v1/status", Some(&url.secret)).json();
    assert_eq!(over_http["ui"]["address"], json!(address));
    assert!(!over_http.to_string().contains(&url.secret));

    // The secret is in stderr once: the URL line.
    let stderr = s.stderr();
    assert_eq!(stderr.matches(&url.secret).count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("memory browser at {}", url.text)),
        "{stderr}"
    );

    let (exit, took) = s.close();
    assert!(exit.success(), "{exit}");
    assert!(took < PROMPT_EXIT, "took {took:?} to exit after EOF");
    assert!(!url_file.exists(), "ui.url must go on a clean exit");
    assert!(
        std::net::TcpStream::connect(url.addr).is_err(),
        "nothing may listen after exit"
    );
}

#[test]
fn the_ui_flag_serves_the_browser_on_loopback_beside_stdio() {
    let dir = TempDir::new("ui-flag");
    let s = Server::capturing(dir.path(), &["--ui"], &[]);
    browser_beside_stdio_works(s, dir.path());
}

#[test]
fn the_ui_environment_variable_does_the_same() {
    let dir = TempDir::new("ui-env");
    let s = Server::capturing(dir.path(), &[], &[("ALAYASIKI_UI", "1")]);
    browser_beside_stdio_works(s, dir.path());
}

#[test]
fn without_the_flag_no_browser_is_served_or_reported() {
    let dir = TempDir::new("ui-off");
    // Left by a run that was killed: its secret is dead, so it goes.
    let stale = "http://127.0.0.1:9/ui#secret=00";
    std::fs::write(dir.path().join("ui.url"), stale).unwrap();
    let mut s = Server::capturing(dir.path(), &[], &[]);
    s.initialize();
    let status = s.ok("alayasiki_status", json!({}));
    assert!(status.get("ui").is_none(), "{status}");
    assert!(!dir.path().join("ui.url").exists());
    assert!(!s.stderr().contains("secret="));
    s.close();
}

#[test]
fn a_bind_other_machines_can_reach_is_served_with_allow_remote_and_a_warning() {
    let dir = TempDir::new("ui-remote");
    let mut s = Server::capturing(
        dir.path(),
        &["--ui-bind", "0.0.0.0:0", "--allow-remote"],
        &[],
    );
    s.initialize();
    let url = Url::read(dir.path());
    // Reached locally at loopback, whatever interface it listens on.
    assert_eq!(url.addr.ip().to_string(), "127.0.0.1");
    assert_eq!(url.get("/v1/status", Some(&url.secret)).status, 200);
    let stderr = s.stderr();
    assert!(stderr.contains("other machines can reach"), "{stderr}");
    let (exit, _) = s.close();
    assert!(exit.success());
}

/// Runs the binary with `args` and `env` on `dir`, stdin empty; kills it
/// if it has not exited within [`PROMPT_EXIT`] (`None`: it was serving).
fn run_briefly(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut cmd = Command::new(BIN);
    cmd.env("ALAYASIKI_IN_PROCESS", "1");
    cmd.args(args)
        .arg("--data-dir")
        .arg(dir)
        .env("ALAYASIKI_LOG", "warn")
        .env_remove("ALAYASIKI_DATA_DIR")
        .env_remove("ALAYASIKI_UI")
        .env_remove("ALAYASIKI_UI_BIND")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = Reaped(cmd.spawn().expect("spawn alayasiki-mcp"));
    let exit = wait_timeout(&mut child.0, PROMPT_EXIT);
    if exit.is_none() {
        let _ = child.0.kill();
        let _ = child.0.wait();
    }
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.0.stderr.take().unwrap(), &mut stderr).unwrap();
    (exit.map(|e| e.code().unwrap_or(-1)), stderr)
}

#[test]
fn a_bind_other_machines_can_reach_is_refused_without_allow_remote() {
    let dir = TempDir::new("ui-remote-refused");
    // On the command line: a bad command line, exit 2, before anything
    // is opened or bound.
    for args in [
        &["ui", "--bind", "0.0.0.0:0"][..],
        &["ui", "--bind", "[::]:0"],
        &["--ui-bind", "0.0.0.0:0"],
    ] {
        let (exit, stderr) = run_briefly(dir.path(), args, &[]);
        assert_eq!(exit, Some(2), "{args:?} was served: {stderr}");
        assert!(stderr.contains("--allow-remote"), "{args:?}: {stderr}");
        assert!(!dir.path().join("ui.url").exists(), "{args:?}");
    }
    // From ALAYASIKI_UI_BIND: a configuration error, exit 1.
    for (args, env) in [
        (&["ui"][..], &[("ALAYASIKI_UI_BIND", "0.0.0.0:0")][..]),
        (
            &[],
            &[("ALAYASIKI_UI_BIND", "0.0.0.0:0"), ("ALAYASIKI_UI", "1")],
        ),
    ] {
        let (exit, stderr) = run_briefly(dir.path(), args, env);
        assert_eq!(exit, Some(1), "{args:?} {env:?} was served: {stderr}");
        assert!(stderr.contains("--allow-remote"), "{args:?}: {stderr}");
        assert!(!dir.path().join("ui.url").exists(), "{args:?}");
    }
}

/// A child process killed when the test ends, passed or not.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `alayasiki-mcp ui --data-dir DIR`, its stdout piped.
fn spawn_ui(dir: &Path) -> Reaped {
    let child = Command::new(BIN)
        .env("ALAYASIKI_IN_PROCESS", "1")
        .args(["ui", "--data-dir"])
        .arg(dir)
        .env("ALAYASIKI_LOG", "warn")
        .env_remove("ALAYASIKI_DATA_DIR")
        .env_remove("ALAYASIKI_MCP_TENANT")
        .env_remove("ALAYASIKI_MCP_SUBJECT")
        .env_remove("ALAYASIKI_UI")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn alayasiki-mcp ui");
    Reaped(child)
}

#[test]
fn the_ui_subcommand_serves_the_memory_until_sigterm() {
    let dir = TempDir::new("ui-alone");
    // A memory with something in it, from an earlier session.
    let mut s = Server::start(dir.path());
    s.initialize();
    let id = s.ingest("The lighthouse keeper on Ons island is Ines Duarte.");
    s.close();

    let mut child = spawn_ui(dir.path());
    let mut first = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let printed = Url::parse(&first);
    let url = Url::read(dir.path());
    assert_eq!(printed.text, url.text, "prints the URL it wrote");
    assert!(url.addr.ip().is_loopback());
    assert_eq!(url.get("/ui", None).status, 200);
    assert_eq!(url.get("/v1/status", None).status, 401);
    let status: Value = url.get("/v1/status", Some(&url.secret)).json();
    assert_eq!(status["documents"], json!(1), "{status}");
    assert_eq!(listed(&url), vec![id]);

    let sent = Command::new("kill")
        .args(["-TERM", &child.0.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let exit = wait_timeout(&mut child.0, PROMPT_EXIT).expect("ui did not stop on SIGTERM");
    assert!(exit.success(), "{exit}");
    assert!(!dir.path().join("ui.url").exists());
}

#[test]
fn the_ui_subcommand_refuses_a_directory_a_server_holds() {
    let dir = TempDir::new("ui-held");
    // A server without the browser: start it with --ui instead.
    let mut s = Server::start(dir.path());
    s.initialize();
    let out = cli(dir.path(), &["ui"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("a running server owns it"), "{stderr}");
    assert!(stderr.contains("--ui"), "{stderr}");
    assert!(!stderr.contains("ui.url"), "{stderr}");
    assert!(out.stdout.is_empty());
    s.close();

    // A server with the browser on: the refusal says where its URL is,
    // and shows no secret.
    let mut s = Server::capturing(dir.path(), &["--ui"], &[]);
    s.initialize();
    let url = Url::read(dir.path());
    let out = cli(dir.path(), &["ui"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let url_file = dir.path().join("ui.url");
    assert!(stderr.contains(&url_file.display().to_string()), "{stderr}");
    assert!(!stderr.contains(&url.secret), "{stderr}");
    // The running server's browser is untouched.
    assert_eq!(url.get("/v1/status", Some(&url.secret)).status, 200);
    assert_eq!(Url::read(dir.path()).text, url.text);
    s.close();
}
