//! The conformance fixture server: the official MCP conformance suite's
//! fixture tools, resources and prompts ([`catalog::Fixtures`]) served by
//! this crate's own protocol layer and Streamable HTTP transport
//! (`transport::http::serve_with`), so the suite's fixture scenarios judge
//! that code without the shipped binaries carrying test tools.
//!
//! A test target without the libtest harness:
//!
//! - `cargo test` runs it with no arguments (or libtest's): a quick
//!   self-check through the protocol layer and then over HTTP on a
//!   loopback port ([`wire`]), exiting 0 when it holds;
//! - `--serve --bind ADDR --data-dir DIR` serves HTTP until SIGTERM, as
//!   `alayasiki-api` does (the same environment: `ALAYASIKI_JWT_SECRET`,
//!   `ALAYASIKI_API_ALLOWED_HOSTS`, ...). `scripts/conformance.py` starts
//!   it this way, built by `cargo test --no-run --test conformance_fixtures`.

mod catalog;
mod wire;

use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use alayasiki_mcp::config::Durability;
use alayasiki_mcp::embed::BuiltinEmbedder;
use alayasiki_mcp::protocol::mcp::{Server, Session};
use alayasiki_mcp::protocol::revision::META_PROTOCOL_VERSION;
use alayasiki_mcp::service::{MemoryService, Principal, Role};
use alayasiki_mcp::store::Tenant;
use alayasiki_mcp::transport::{admission, auth, http, listener, signals};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("--serve") {
        // Run by `cargo test` (which may pass libtest's flags).
        return self_check();
    }
    let mut bind: Option<SocketAddr> = None;
    let mut data_dir: Option<PathBuf> = None;
    let mut it = args.iter().skip(1);
    while let Some(flag) = it.next() {
        match (flag.as_str(), it.next()) {
            ("--bind", Some(v)) => bind = v.parse().ok(),
            ("--data-dir", Some(v)) => data_dir = Some(PathBuf::from(v)),
            _ => {
                eprintln!("usage: conformance_fixtures --serve --bind ADDR --data-dir DIR");
                return ExitCode::from(2);
            }
        }
    }
    let (Some(bind), Some(data_dir)) = (bind, data_dir) else {
        eprintln!("usage: conformance_fixtures --serve --bind ADDR --data-dir DIR");
        return ExitCode::from(2);
    };
    let code = serve(bind, data_dir);
    alayasiki_mcp::logging::flush();
    code
}

fn serve(bind: SocketAddr, data_dir: PathBuf) -> ExitCode {
    alayasiki_mcp::logging::init();
    let settings = match (
        auth::Authenticator::from_env(),
        admission::RateLimiter::from_env(),
    ) {
        (Ok(auth), Ok(rate)) => http::Settings {
            auth,
            rate,
            oauth: None,
        },
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("conformance_fixtures: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = signals::install() {
        eprintln!("conformance_fixtures: cannot install signal handlers: {e}");
        return ExitCode::FAILURE;
    }
    let listener = match listener::listen(bind) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("conformance_fixtures: cannot listen on {bind}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let service = match open(&data_dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("conformance_fixtures: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bound = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    eprintln!("conformance_fixtures: listening on http://{bound}");
    let server = Server::with_catalog(service.clone(), Arc::new(catalog::Fixtures::default()));
    let outcome = http::serve_with(server, listener, settings);
    service.shutdown();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance_fixtures: {e}");
            ExitCode::FAILURE
        }
    }
}

fn open(dir: &std::path::Path) -> Result<Arc<MemoryService>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    MemoryService::open(dir, Durability::Normal, Arc::new(BuiltinEmbedder))
        .map(Arc::new)
        .map_err(|e| format!("cannot open the memory store: {e}"))
}

/// The fixture catalog through the protocol layer, in both eras, then
/// over the wire: what `cargo test` runs.
fn self_check() -> ExitCode {
    let dir = std::env::temp_dir().join(format!(
        "alayasiki-conformance-fixtures-{}",
        std::process::id()
    ));
    let outcome = open(&dir).and_then(|service| {
        let checked = check(&service).and_then(|n| Ok(n + check_http(&service)?));
        service.shutdown();
        checked
    });
    let _ = std::fs::remove_dir_all(&dir);
    match outcome {
        Ok(n) => {
            println!("conformance_fixtures: self-check passed ({n} requests)");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("conformance_fixtures: self-check failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The fixture server on a loopback port, driven by [`wire::check`], then
/// shut down as on SIGTERM.
fn check_http(service: &Arc<MemoryService>) -> Result<usize, String> {
    let key = auth::VerifyingKey::from_secret(wire::secret())?;
    let settings = http::Settings {
        auth: auth::Authenticator::new(key, vec![], vec![], 0),
        rate: admission::RateLimiter::new(1000.0, 1000),
        oauth: None,
    };
    let listener = listener::listen("127.0.0.1:0".parse().map_err(|e| format!("{e}"))?)
        .map_err(|e| format!("cannot listen: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let server = Server::with_catalog(service.clone(), Arc::new(catalog::Fixtures::default()));
    let serving = std::thread::spawn(move || http::serve_with(server, listener, settings));
    let checked = wire::check(addr);
    signals::request();
    let stopped = serving
        .join()
        .map_err(|_| "the server thread panicked".to_string())?;
    stopped.map_err(|e| format!("the server failed: {e}"))?;
    checked
}

fn check(service: &Arc<MemoryService>) -> Result<usize, String> {
    let server = Server::with_catalog(service.clone(), Arc::new(catalog::Fixtures::default()));
    let principal = Principal {
        tenant: Tenant::new("conformance").map_err(|e| e.to_string())?,
        subject: "self-check".into(),
        roles: vec![Role::Admin],
        scopes: vec![],
        memory: alayasiki_mcp::service::MemoryAccess::Unrestricted,
        anonymous: false,
    };
    let mut sent = 0;
    let mut expect = |what: &str, reply: Option<Value>, ok: &dyn Fn(&Value) -> bool| {
        sent += 1;
        match reply {
            Some(r) if ok(&r) => Ok(r),
            other => Err(format!("{what}: unexpected reply {other:?}")),
        }
    };
    let rpc = |id: u64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});

    // Session-based: initialize, the capabilities the fixtures need, a call.
    let session = Session::new(principal.clone());
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "self-check", "version": "1"}}),
    );
    expect("initialize", server.handle(&session, init), &|r| {
        r["result"]["capabilities"]["completions"].is_object()
            && r["result"]["capabilities"]["resources"]["subscribe"] == true
    })?;
    let list = server.handle(&session, rpc(2, "tools/list", json!({})));
    expect("tools/list", list, &|r| {
        r["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "json_schema_2020_12_tool"))
    })?;
    let call = rpc(3, "tools/call", json!({"name": "test_simple_text"}));
    expect("test_simple_text", server.handle(&session, call), &|r| {
        r["result"]["content"][0]["text"] == "This is a simple text response for testing."
    })?;
    // No stream to ask on: sampling is refused, not hung.
    let call = rpc(
        4,
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "x"}}),
    );
    expect(
        "test_sampling without a peer",
        server.handle(&session, call),
        &|r| r["error"]["code"].is_i64(),
    )?;

    // Stateless: an input-required round trip, and a tampered state.
    let meta = |caps: Value| {
        json!({META_PROTOCOL_VERSION: "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": caps})
    };
    let caps = json!({"elicitation": {}, "sampling": {}, "roots": {}});
    let first = rpc(
        5,
        "tools/call",
        json!({"name": "test_input_required_result_tampered_state", "arguments": {},
               "_meta": meta(caps.clone())}),
    );
    let round = expect(
        "input required",
        server.handle_stateless(&principal, first),
        &|r| {
            r["result"]["resultType"] == "input_required" && r["result"]["requestState"].is_string()
        },
    )?;
    let state = round["result"]["requestState"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let answers = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    let retry = |id: u64, state: &str| {
        rpc(
            id,
            "tools/call",
            json!({"name": "test_input_required_result_tampered_state", "arguments": {},
                   "inputResponses": answers, "requestState": state,
                   "_meta": meta(caps.clone())}),
        )
    };
    expect(
        "retry",
        server.handle_stateless(&principal, retry(6, &state)),
        &|r| r["result"]["resultType"] == "complete",
    )?;
    expect(
        "tampered retry",
        server.handle_stateless(&principal, retry(7, &format!("{state}-TAMPERED"))),
        &|r| r["error"]["code"] == -32602,
    )?;
    let someone_else = Principal {
        subject: "someone-else".into(),
        ..principal.clone()
    };
    expect(
        "another caller's retry",
        server.handle_stateless(&someone_else, retry(9, &state)),
        &|r| r["error"]["code"] == -32602,
    )?;
    let missing = rpc(
        8,
        "tools/call",
        json!({"name": "test_missing_capability", "arguments": {}, "_meta": meta(json!({}))}),
    );
    expect(
        "missing capability",
        server.handle_stateless(&principal, missing),
        &|r| r["error"]["code"] == -32021,
    )?;
    Ok(sent)
}
