//! Every reply of the real binaries against the official JSON schema of
//! its protocol revision (`tests/mcp_schemas/<revision>/schema.json`,
//! vendored from the specification repository: see the README there).
//!
//! For each revision a representative session is driven through
//! `alayasiki-mcp` over stdio and through `alayasiki-api` over Streamable
//! HTTP (sessions for the `initialize`-based revisions, stateless requests
//! for 2026-07-28) and, for 2024-11-05, the deprecated HTTP+SSE transport:
//! `initialize` (or `server/discover`), `ping`, `logging/setLevel`, every
//! tool with valid arguments and some that fail (`isError` results), the
//! resource and prompt methods, and protocol errors (unknown method, bad
//! params, unparsable JSON, ids of the wrong type, a frame too costly to
//! parse, batches, an unsupported revision, mismatched HTTP headers). The server sends no notifications of its own, so replies
//! are all there is to check; the requests and notifications the test
//! sends are checked too (so the session is one a conforming client
//! could drive), except those that are wrong on purpose.
//!
//! Each reply is validated as a whole (`JSONRPCMessage`, and the
//! revision's response definition: `JSONRPCResponse` / `JSONRPCError`
//! before 2025-11-25, `JSONRPCResultResponse` / `JSONRPCErrorResponse`
//! and, for 2026-07-28, the method's own `*ResultResponse` and the error
//! code's own definition), and its `result` against the method's `*Result`
//! definition and `ServerResult`. The validator is the Python
//! `jsonschema` package, with the draft each schema names in `$schema`
//! (draft-07 through 2025-06-18, 2020-12 after); `format` is read as an
//! annotation, as both drafts do by default. It runs when a Python with
//! `jsonschema` is at hand: `ALAYASIKI_TEST_PYTHON` (then required), else
//! the venv `scripts/test` creates (`target/py-venv`, which `scripts/test`
//! passes in that variable, so its run always validates), else `python3`.
//!
//! A failure names the revision, transport, method and request, the
//! definition, the instance path and the schema path of each error.
//! Replies made wrong on purpose (a field of the wrong type, a required
//! one dropped) must be refused, with the path of what was changed.

mod common;
mod http_common;

use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The revisions, oldest first.
const REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The stateless revision.
const MODERN: &str = "2026-07-28";

/// The tools `tools/list` must list: the session calls each of them.
const TOOLS: [&str; 10] = [
    "alayasiki_forget",
    "alayasiki_ingest",
    "alayasiki_memory_delete",
    "alayasiki_memory_promote",
    "alayasiki_memory_read",
    "alayasiki_memory_write",
    "alayasiki_query",
    "alayasiki_share",
    "alayasiki_status",
    "alayasiki_update",
];

/// The one known divergence: before 2025-11-25, an error reply to a
/// message whose id could not be read (unparsable JSON, an id of the
/// wrong type, a batch the revision removed) has no valid form. Those
/// schemas make `id` a required string or integer, while JSON-RPC 2.0
/// asks for `"id": null` (what stdio and legacy SSE send there) and
/// Streamable HTTP's text for "a JSON-RPC error response that has no id"
/// (what it sends on every revision). From 2025-11-25 the schemas allow
/// the id to be left out, and the server leaves it out on every
/// transport, so these replies are checked as any other. Such a reply
/// must still be refused where its id is (so this goes when the schemas
/// change), and the rest of it must be valid: it is checked again with
/// `"id": 0`.
const UNREAD_ID: &str = "before 2025-11-25, an error reply to a message whose id could not be \
                         read has no form the official schema allows";

fn schema_file(revision: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp_schemas")
        .join(revision)
        .join("schema.json")
}

// ---------------------------------------------------------------------
// Which definitions a message is checked against.

/// The `*Result` definition of a method's result.
fn result_def(method: &str) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "ping" | "logging/setLevel" => "EmptyResult",
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        other => panic!("no result definition for {other}"),
    }
}

/// The request definition of a method, where the revision has one.
fn request_def(revision: &str, method: &str) -> Option<&'static str> {
    let def = match method {
        "initialize" => "InitializeRequest",
        "ping" => "PingRequest",
        "logging/setLevel" => "SetLevelRequest",
        "server/discover" => "DiscoverRequest",
        "tools/list" => "ListToolsRequest",
        "tools/call" => "CallToolRequest",
        "resources/list" => "ListResourcesRequest",
        "resources/templates/list" => "ListResourceTemplatesRequest",
        "resources/read" => "ReadResourceRequest",
        "prompts/list" => "ListPromptsRequest",
        "prompts/get" => "GetPromptRequest",
        "notifications/initialized" => "InitializedNotification",
        "notifications/cancelled" => "CancelledNotification",
        _ => return None,
    };
    let modern_only = def == "DiscoverRequest";
    let legacy_only = matches!(
        def,
        "InitializeRequest" | "PingRequest" | "SetLevelRequest" | "InitializedNotification"
    );
    if (revision == MODERN && legacy_only) || (revision != MODERN && modern_only) {
        return None;
    }
    Some(def)
}

/// The (instance pointer, definition) pairs a reply to `method` is
/// checked against, under `revision`; `at` prefixes the pointers (for a
/// reply inside a batch).
fn reply_checks(revision: &str, method: &str, reply: &Value, at: &str) -> Vec<(String, String)> {
    let split_envelope = revision >= "2025-11-25";
    let mut checks = vec![(at.to_string(), "JSONRPCMessage".to_string())];
    let mut add = |pointer: &str, def: &str| checks.push((format!("{at}{pointer}"), def.into()));
    if let Some(error) = reply.get("error") {
        if split_envelope {
            add("", "JSONRPCErrorResponse");
            add("", "JSONRPCResponse");
            add("/error", "Error");
        } else {
            add("", "JSONRPCError");
        }
        if revision == MODERN {
            match error["code"].as_i64() {
                Some(-32700) => add("/error", "ParseError"),
                Some(-32600) => add("/error", "InvalidRequestError"),
                Some(-32601) => add("/error", "MethodNotFoundError"),
                Some(-32602) => add("/error", "InvalidParamsError"),
                Some(-32603) => add("/error", "InternalError"),
                Some(-32020) => add("", "HeaderMismatchError"),
                Some(-32021) => add("", "MissingRequiredClientCapabilityError"),
                Some(-32022) => add("", "UnsupportedProtocolVersionError"),
                _ => {}
            }
        }
    } else {
        if split_envelope {
            add("", "JSONRPCResultResponse");
            add("", "JSONRPCResponse");
        } else {
            add("", "JSONRPCResponse");
        }
        let def = result_def(method);
        if revision == MODERN {
            add("", &format!("{def}Response"));
        }
        add("/result", def);
        add("/result", "ServerResult");
    }
    checks
}

/// The checks of a message the test sends.
fn sent_checks(revision: &str, message: &Value) -> Vec<(String, String)> {
    let method = message["method"].as_str().unwrap_or("");
    let mut checks = vec![(String::new(), "JSONRPCMessage".to_string())];
    let (envelope, union) = if message.get("id").is_some() {
        ("JSONRPCRequest", "ClientRequest")
    } else {
        ("JSONRPCNotification", "ClientNotification")
    };
    checks.push((String::new(), envelope.into()));
    if let Some(def) = request_def(revision, method) {
        checks.push((String::new(), union.into()));
        checks.push((String::new(), def.into()));
    }
    checks
}

// ---------------------------------------------------------------------
// What is recorded, and how it is judged.

/// One message checked against some definitions of one revision.
struct Case {
    revision: &'static str,
    transport: &'static str,
    /// The method, and what the request was for.
    what: String,
    message: Value,
    checks: Vec<(String, String)>,
    /// `Some(path)`: made wrong on purpose, to be refused with an error
    /// at `path` (or under it).
    broken_at: Option<String>,
    /// A divergence from the schema the server is known for ([`UNREAD_ID`]):
    /// the message must be refused at `broken_at`.
    divergence: Option<&'static str>,
}

impl Case {
    fn json(&self) -> Value {
        json!({
            "revision": self.revision,
            "message": self.message,
            "checks": self.checks.iter().map(|(p, d)| json!([p, d])).collect::<Vec<_>>(),
        })
    }

    fn name(&self) -> String {
        format!("{} {} {}", self.revision, self.transport, self.what)
    }
}

/// One schema error, as the validator reports it.
#[derive(Debug, Clone)]
struct SchemaError {
    def: String,
    /// JSON pointer into the message.
    path: String,
    schema_path: String,
    message: String,
}

/// The validator: each check of each case against the vendored schema of
/// its revision. Every schema is first checked against its meta-schema.
const PYTHON_VALIDATE: &str = r#"
import json, sys
from jsonschema import validators
from referencing import Registry, Resource

spec = json.load(open(sys.argv[1]))
registry, docs = Registry(), {}
for revision, path in spec["schemas"].items():
    doc = json.load(open(path))
    cls = validators.validator_for(doc, default=None)
    if cls is None:
        sys.exit("%s: unknown $schema %r" % (revision, doc.get("$schema")))
    cls.check_schema(doc)
    uri = "urn:alayasiki-test:mcp-schema:" + revision
    registry = registry.with_resource(uri, Resource.from_contents(doc))
    key = "$defs" if "$defs" in doc else "definitions"
    docs[revision] = (cls, uri, key, doc[key])

def pointer(parts):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)

def resolve(value, ptr):
    for part in [p.replace("~1", "/").replace("~0", "~") for p in ptr.split("/")[1:]]:
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value

def closest(e):
    """The errors of the anyOf/oneOf branches that came closest (fewest
    errors), and of theirs in turn: where a reply went wrong."""
    branches = {}
    for c in e.context:
        branches.setdefault(c.relative_schema_path[0], []).append(c)
    if not branches:
        return []
    fewest = min(len(b) for b in branches.values())
    found = []
    for b in branches.values():
        if len(b) == fewest:
            for c in b:
                found += [c] + closest(c)
    return found

cache, out = {}, []
for case in spec["cases"]:
    errors = []
    cls, uri, key, defs = docs[case["revision"]]
    for ptr, name in case["checks"]:
        if name not in defs:
            errors.append({"def": name, "path": ptr, "schema_path": "",
                           "message": "the schema has no definition %s" % name})
            continue
        v = cache.get((case["revision"], name))
        if v is None:
            v = cls({"$ref": "%s#/%s/%s" % (uri, key, name)}, registry=registry)
            cache[(case["revision"], name)] = v
        try:
            instance = resolve(case["message"], ptr)
        except (KeyError, IndexError, TypeError):
            errors.append({"def": name, "path": ptr, "schema_path": "",
                           "message": "the message has nothing at %s" % ptr})
            continue
        for e in v.iter_errors(instance):
            found = [e] + closest(e)
            for f in found:
                errors.append({"def": name,
                               "path": ptr + pointer(f.absolute_path),
                               "schema_path": "/".join(str(p) for p in f.absolute_schema_path),
                               "message": f.message[:300]})
    out.append(errors)
json.dump(out, sys.stdout)
"#;

/// Validates every case; the errors of each, in order. `None` when no
/// Python with `jsonschema` is at hand (a note says so).
fn validate(cases: &[Case]) -> Option<Vec<Vec<SchemaError>>> {
    let Some(python) = common::python_with(
        "import jsonschema, referencing; jsonschema.Draft202012Validator; jsonschema.Draft7Validator",
    ) else {
        eprintln!(
            "note: no Python with jsonschema (scripts/test creates target/py-venv; or set \
             ALAYASIKI_TEST_PYTHON): {} messages not validated against the official schemas",
            cases.len()
        );
        return None;
    };
    let revisions: BTreeSet<&str> = cases.iter().map(|c| c.revision).collect();
    let spec = json!({
        "schemas": revisions.iter().map(|r| (r.to_string(), json!(schema_file(r)))).collect::<Map<_, _>>(),
        "cases": cases.iter().map(Case::json).collect::<Vec<_>>(),
    });
    let work = common::TempDir::new("official-schemas");
    let file = work.path().join("cases.json");
    std::fs::write(&file, serde_json::to_vec(&spec).unwrap()).unwrap();
    let out = std::process::Command::new(&python)
        .arg("-c")
        .arg(PYTHON_VALIDATE)
        .arg(&file)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{} could not validate:\n{}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Vec<Value>> = serde_json::from_slice(&out.stdout).expect("validator output");
    assert_eq!(results.len(), cases.len());
    Some(
        results
            .into_iter()
            .map(|errors| {
                errors
                    .into_iter()
                    .map(|e| SchemaError {
                        def: e["def"].as_str().unwrap().into(),
                        path: e["path"].as_str().unwrap().into(),
                        schema_path: e["schema_path"].as_str().unwrap().into(),
                        message: e["message"].as_str().unwrap().into(),
                    })
                    .collect()
            })
            .collect(),
    )
}

/// A message for a failure report, cut short.
fn clipped(message: &Value) -> String {
    let text = message.to_string();
    match text.char_indices().nth(1500) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// Validates the cases and fails, naming every violation, unless each
/// message meant to be valid is, each broken one is refused at the path
/// of its break, and each known divergence is still one.
fn judge(cases: &[Case], revisions: &[&str]) {
    let started = Instant::now();
    let Some(results) = validate(cases) else {
        return;
    };
    let mut failures = Vec::new();
    let mut divergences = BTreeSet::new();
    for (case, errors) in cases.iter().zip(&results) {
        match &case.broken_at {
            None if errors.is_empty() => {}
            None => {
                let listed: Vec<String> = errors
                    .iter()
                    .map(|e| {
                        format!(
                            "  {} at {:?}: {} (schema path {})",
                            e.def, e.path, e.message, e.schema_path
                        )
                    })
                    .collect();
                failures.push(format!(
                    "{}:\n{}\n  message: {}",
                    case.name(),
                    listed.join("\n"),
                    clipped(&case.message)
                ));
            }
            Some(at) => {
                let hit = errors
                    .iter()
                    .any(|e| e.path == *at || e.path.starts_with(&format!("{at}/")));
                if let (true, Some(why)) = (hit, case.divergence) {
                    divergences.insert(format!("{} {}: {why}", case.revision, case.what));
                } else if !hit && case.divergence.is_some() {
                    failures.push(format!(
                        "{}: the official schema no longer refuses it at {at:?}: take off the \
                         divergence ({:?})\n  message: {}",
                        case.name(),
                        case.divergence,
                        clipped(&case.message)
                    ));
                } else if !hit {
                    failures.push(format!(
                        "{}: a reply broken at {at:?} was not refused there (errors: {:?})\n  \
                         message: {}",
                        case.name(),
                        errors
                            .iter()
                            .map(|e| format!("{} at {:?}: {}", e.def, e.path, e.message))
                            .collect::<Vec<_>>(),
                        clipped(&case.message)
                    ));
                }
            }
        }
    }
    for d in &divergences {
        eprintln!("known divergence: {d}");
    }
    let broken = cases
        .iter()
        .filter(|c| c.broken_at.is_some() && c.divergence.is_none())
        .count();
    eprintln!(
        "official schemas: {} messages of {revisions:?} validated ({broken} of them broken on \
         purpose, {} known divergences) in {:.1}s",
        cases.len(),
        divergences.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} violation(s) of the official MCP schemas:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------
// Transports.

/// A way of sending messages to the server.
trait Wire {
    fn name(&self) -> &'static str;

    /// Sends one message (a request, a notification or a batch); the
    /// reply, when one is due.
    fn send(&mut self, message: &Value) -> Option<Value>;

    /// Sends bytes that are not JSON; the reply, where the transport
    /// answers them with a JSON-RPC message.
    fn send_unparsable(&mut self, bytes: &[u8]) -> Option<Value>;

    /// Sends a stateless request whose HTTP headers disagree with its
    /// body; the reply (HTTP only).
    fn send_mismatched(&mut self, _message: &Value) -> Option<Value> {
        None
    }

    /// Stateless requests over HTTP, whose headers are checked first.
    fn stateless_http(&self) -> bool {
        false
    }

    /// Sends a frame whose parsing would cost more than
    /// `MAX_PARSED_MESSAGE_BYTES`, refused before it is parsed; the reply
    /// (stdio only: HTTP refuses it with a JSON API error, not a message).
    fn send_too_costly(&mut self, _frame: &[u8]) -> Option<Value> {
        None
    }
}

/// Whether a message (or a batch) expects a reply.
fn expects_reply(message: &Value) -> bool {
    match message {
        Value::Array(items) => items.iter().any(expects_reply),
        other => other.get("id").is_some(),
    }
}

/// `alayasiki-mcp` over its pipes.
struct Stdio(common::Server);

impl Wire for Stdio {
    fn name(&self) -> &'static str {
        "stdio"
    }

    fn send(&mut self, message: &Value) -> Option<Value> {
        self.0.send(message);
        expects_reply(message).then(|| self.0.recv())
    }

    fn send_unparsable(&mut self, bytes: &[u8]) -> Option<Value> {
        let mut line = bytes.to_vec();
        line.push(b'\n');
        self.0.send_raw(&line);
        Some(self.0.recv())
    }

    fn send_too_costly(&mut self, frame: &[u8]) -> Option<Value> {
        self.send_unparsable(frame)
    }
}

/// The JSON-RPC message of a POST's response: its JSON body, or the data
/// of its one SSE event; `None` for an empty body.
fn reply_body(r: &http_common::Reply) -> Option<Value> {
    if r.body.is_empty() {
        return None;
    }
    if r.header("Content-Type")
        .is_some_and(|t| t.starts_with("text/event-stream"))
    {
        let text = String::from_utf8(r.body.clone()).expect("UTF-8 events");
        let data: String = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim_start)
            .collect();
        return Some(serde_json::from_str(&data).expect("event data is JSON"));
    }
    Some(r.json())
}

/// `alayasiki-api` at `/mcp`: a session of an `initialize`-based revision
/// (opened by the first `initialize` sent), or stateless requests.
struct Streamable<'a> {
    api: &'a http_common::Api,
    token: String,
    /// The revision: the session's, or [`MODERN`] for stateless requests.
    revision: &'static str,
    session: Option<String>,
}

impl Streamable<'_> {
    fn post(&mut self, body: &[u8], extra: &[(&str, String)]) -> http_common::Reply {
        let mut headers: Vec<(String, String)> = vec![
            ("Authorization".into(), format!("Bearer {}", self.token)),
            ("Content-Type".into(), "application/json".into()),
            (
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ),
        ];
        if let Some(s) = &self.session {
            headers.push(("Mcp-Session-Id".into(), s.clone()));
            // A conforming client names the revision on every request
            // after initialize from 2025-06-18 on.
            if self.revision >= "2025-06-18" {
                headers.push(("MCP-Protocol-Version".into(), self.revision.into()));
            }
        }
        for (k, v) in extra {
            headers.push((k.to_string(), v.clone()));
        }
        http_common::request(self.api.addr, "POST", "/mcp", &headers, Some(body))
    }

    /// The headers of a stateless request: the revision its `_meta`
    /// names, its method and, where the method has one, its name.
    fn stateless_headers(message: &Value) -> Vec<(&'static str, String)> {
        let params = &message["params"];
        let version = params["_meta"]["io.modelcontextprotocol/protocolVersion"]
            .as_str()
            .unwrap_or(MODERN);
        let method = message["method"].as_str().unwrap_or("");
        let mut headers = vec![
            ("MCP-Protocol-Version", version.to_string()),
            ("Mcp-Method", method.to_string()),
        ];
        if let Some(name) = params["name"].as_str().or(params["uri"].as_str()) {
            headers.push(("Mcp-Name", name.to_string()));
        }
        headers
    }
}

impl Wire for Streamable<'_> {
    fn name(&self) -> &'static str {
        if self.revision == MODERN {
            "streamable-http (stateless)"
        } else {
            "streamable-http"
        }
    }

    fn send(&mut self, message: &Value) -> Option<Value> {
        let extra = if self.revision == MODERN {
            Streamable::stateless_headers(message)
        } else {
            Vec::new()
        };
        let r = self.post(message.to_string().as_bytes(), &extra);
        if self.session.is_none() && message["method"] == "initialize" {
            self.session = r.header("Mcp-Session-Id").map(str::to_string);
        }
        if !expects_reply(message) {
            assert_eq!(
                r.status,
                202,
                "{}: {message}: {}",
                self.name(),
                String::from_utf8_lossy(&r.body)
            );
            return None;
        }
        Some(reply_body(&r).unwrap_or_else(|| {
            panic!("{}: no reply to {message} (HTTP {})", self.name(), r.status)
        }))
    }

    fn send_unparsable(&mut self, bytes: &[u8]) -> Option<Value> {
        let extra = if self.revision == MODERN {
            vec![("MCP-Protocol-Version", MODERN.to_string())]
        } else {
            Vec::new()
        };
        reply_body(&self.post(bytes, &extra))
    }

    fn stateless_http(&self) -> bool {
        self.revision == MODERN
    }

    fn send_mismatched(&mut self, message: &Value) -> Option<Value> {
        if self.revision != MODERN {
            return None;
        }
        let mut extra = Streamable::stateless_headers(message);
        for (k, v) in extra.iter_mut() {
            if *k == "Mcp-Method" {
                *v = "prompts/list".into();
            }
        }
        reply_body(&self.post(message.to_string().as_bytes(), &extra))
    }
}

/// `alayasiki-api`'s deprecated HTTP+SSE transport at `/mcp/sse`.
struct LegacySse(http_common::Sse);

impl Wire for LegacySse {
    fn name(&self) -> &'static str {
        "http+sse"
    }

    fn send(&mut self, message: &Value) -> Option<Value> {
        let r = self.0.post(message);
        assert_eq!(
            r.status,
            202,
            "POST {message}: {}",
            String::from_utf8_lossy(&r.body)
        );
        expects_reply(message).then(|| {
            self.0
                .next_message(http_common::TIMEOUT)
                .unwrap_or_else(|| panic!("no reply on the stream to {message}"))
        })
    }

    fn send_unparsable(&mut self, bytes: &[u8]) -> Option<Value> {
        // The POST is refused (400), and the stream told.
        let sse = &self.0;
        let headers = vec![
            ("Authorization".to_string(), format!("Bearer {}", sse.token)),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        let r = http_common::request(sse.addr, "POST", &sse.endpoint, &headers, Some(bytes));
        assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));
        sse.next_message(http_common::TIMEOUT)
    }
}

// ---------------------------------------------------------------------
// The session.

/// Drives one session of one revision over one wire, recording a
/// [`Case`] for every message sent and received.
struct Driver<'a> {
    revision: &'static str,
    wire: &'a mut dyn Wire,
    cases: &'a mut Vec<Case>,
    next_id: i64,
}

/// Whether a request the test sends is one the schema allows.
#[derive(Clone, Copy, PartialEq)]
enum Sent {
    /// Checked against the request definitions too.
    Conforming,
    /// Wrong on purpose (bad params, a method the revision lacks).
    Malformed,
}

impl Driver<'_> {
    fn modern(&self) -> bool {
        self.revision == MODERN
    }

    /// The `_meta` of a stateless request.
    fn meta() -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "official-schemas", "version": "1"}
        })
    }

    fn record(&mut self, what: String, message: Value, checks: Vec<(String, String)>) {
        self.cases.push(Case {
            revision: self.revision,
            transport: self.wire.name(),
            what,
            message,
            checks,
            broken_at: None,
            divergence: None,
        });
    }

    /// Records a reply to `method`; before 2025-11-25, an error with an
    /// unread id as [`UNREAD_ID`] says.
    fn record_reply(&mut self, what: String, method: &str, reply: Value) {
        let checks = reply_checks(self.revision, method, &reply, "");
        let unread = reply.get("error").is_some() && reply.get("id").is_none_or(Value::is_null);
        if !unread || self.revision >= "2025-11-25" {
            return self.record(what, reply, checks);
        }
        let mut conforming = reply.clone();
        conforming["id"] = json!(0);
        self.record(
            format!("{what}, with id as the schema would have it"),
            conforming,
            checks.clone(),
        );
        // A null id is refused at it; a missing one at the message.
        let at = if reply.get("id").is_some() { "/id" } else { "" };
        self.cases.push(Case {
            revision: self.revision,
            transport: self.wire.name(),
            what,
            message: reply,
            checks,
            broken_at: Some(at.into()),
            divergence: Some(UNREAD_ID),
        });
    }

    fn id(&mut self) -> Value {
        self.next_id += 1;
        // Both kinds of id the schemas allow.
        if self.next_id % 2 == 0 {
            json!(self.next_id)
        } else {
            json!(format!("req-{}", self.next_id))
        }
    }

    /// The message of a request (with the stateless `_meta` for the
    /// modern revision).
    fn message(&mut self, method: &str, mut params: Value) -> Value {
        if self.modern() && params.get("_meta").is_none() {
            params["_meta"] = Driver::meta();
        }
        json!({"jsonrpc": "2.0", "id": self.id(), "method": method, "params": params})
    }

    /// Sends a valid request; its reply.
    fn request(&mut self, what: &str, method: &str, params: Value) -> Value {
        let message = self.message(method, params);
        self.exchange(what, method, message, Sent::Conforming)
    }

    /// Sends a request the schema may refuse (bad params, a method the
    /// revision lacks); its reply.
    fn request_malformed(&mut self, what: &str, method: &str, params: Value) -> Value {
        let message = self.message(method, params);
        self.exchange(what, method, message, Sent::Malformed)
    }

    fn exchange(&mut self, what: &str, method: &str, message: Value, sent: Sent) -> Value {
        let what = format!("{method} ({what})");
        if sent == Sent::Conforming {
            let checks = sent_checks(self.revision, &message);
            self.record(format!("{what}, as sent"), message.clone(), checks);
        }
        let reply = self
            .wire
            .send(&message)
            .unwrap_or_else(|| panic!("no reply to {message}"));
        assert_eq!(
            reply["id"], message["id"],
            "{what}: a reply to another request: {reply}"
        );
        self.record_reply(what, method, reply.clone());
        reply
    }

    fn notify(&mut self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let checks = sent_checks(self.revision, &message);
        self.record(format!("{method}, as sent"), message.clone(), checks);
        assert!(self.wire.send(&message).is_none());
    }

    /// A tool call that must succeed; its structured result (or the JSON
    /// of its text block).
    fn tool(&mut self, tool: &str, args: Value) -> Value {
        let reply = self.request(
            &format!("{tool} {args}"),
            "tools/call",
            json!({"name": tool, "arguments": args}),
        );
        let result = &reply["result"];
        assert_eq!(
            result["isError"], false,
            "{} {tool} {args}: {reply}",
            self.revision
        );
        let text = result["content"][0]["text"].as_str().unwrap_or("");
        serde_json::from_str(text).unwrap_or_else(|_| panic!("{tool}: {reply}"))
    }

    /// A tool call that must fail as a tool (an `isError` result).
    fn tool_fails(&mut self, tool: &str, args: Value) {
        let reply = self.request(
            &format!("{tool} {args}, failing"),
            "tools/call",
            json!({"name": tool, "arguments": args}),
        );
        assert_eq!(reply["result"]["isError"], true, "{tool} {args}: {reply}");
    }

    /// A request that must be refused with JSON-RPC error `code`.
    fn refused(&mut self, what: &str, method: &str, params: Value, code: i64) -> Value {
        let reply = self.request_malformed(what, method, params);
        assert_eq!(
            reply["error"]["code"], code,
            "{} {method} ({what}): {reply}",
            self.revision
        );
        reply
    }
}

/// A representative session of the driver's revision.
fn drive(d: &mut Driver) {
    let rev = d.revision;
    let modern = d.modern();
    if modern {
        let r = d.request("discovery", "server/discover", json!({}));
        assert_eq!(r["result"]["supportedVersions"][0], MODERN, "{r}");
    } else {
        let init = d.request(
            "the revision itself",
            "initialize",
            json!({"protocolVersion": rev, "capabilities": {},
                   "clientInfo": {"name": "official-schemas", "version": "1"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], rev, "{init}");
        d.notify("notifications/initialized", json!({}));
        d.request("liveness", "ping", json!({}));
        if init["result"]["capabilities"]["logging"].is_object() {
            d.request(
                "a valid level",
                "logging/setLevel",
                json!({"level": "warning"}),
            );
            d.refused(
                "an unknown level",
                "logging/setLevel",
                json!({"level": "loud"}),
                -32602,
            );
        }
    }

    // Tools: the list, then each with valid arguments.
    let list = d.request("all", "tools/list", json!({}));
    let names: BTreeSet<&str> = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        TOOLS.into_iter().collect(),
        "{rev}: the tools listed are not the ones this test calls"
    );
    d.tool("alayasiki_status", json!({}));
    let tag = rev.replace('-', "");
    let doc = d.tool(
        "alayasiki_ingest",
        json!({"content": format!("The {tag} lighthouse keeper logs the tide at dawn."),
               "source": "log.txt", "media_type": "text/plain", "provenance": "user",
               "metadata": {"tags": ["sea"]}}),
    )["document_id"]
        .as_str()
        .unwrap()
        .to_string();
    d.tool(
        "alayasiki_ingest",
        json!({"Text": {"content": "# Tides\n\nHigh tide at noon.", "media_type": "text/markdown",
                        "idempotency_key": format!("tides-{tag}"), "source": "tides.md"}}),
    );
    let pdf = common::fixture_bytes("pdf/libreoffice-report.pdf");
    let pdf_doc = d.tool(
        "alayasiki_ingest",
        json!({"File": {"filename": "report.pdf", "mime_type": "application/pdf",
                        "content": common::b64(&pdf), "source": "report.pdf"}}),
    )["document_id"]
        .as_str()
        .unwrap()
        .to_string();
    d.tool(
        "alayasiki_query",
        json!({"query": format!("who logs the {tag} tide"), "mode": "evidence", "top_k": 5}),
    );
    d.tool(
        "alayasiki_query",
        json!({"query": "When is high tide?", "search_mode": "local"}),
    );
    // A new version of the first document: both are read below, the old
    // one with `_meta` naming its successor.
    let doc_v2 = d.tool(
        "alayasiki_update",
        json!({"document_id": doc, "metadata": {"tags": ["sea", "tide"]}}),
    )["document_id"]
        .as_str()
        .unwrap()
        .to_string();
    let session = format!("schemas.{tag}");
    d.tool(
        "alayasiki_memory_write",
        json!({"session_id": session, "content": "Buoy 7 is red.", "media_type": "text/plain"}),
    );
    d.tool(
        "alayasiki_memory_write",
        json!({"session_id": session,
               "nodes": [{"id": "b7", "label": "Buoy 7", "kind": "buoy"}, {"id": "port", "label": "Port"}],
               "edges": [{"from": "b7", "to": "port", "relation": "marks"}]}),
    );
    d.tool(
        "alayasiki_share",
        json!({"document_ids": [doc_v2], "scope": "team-a"}),
    );
    d.tool("alayasiki_memory_read", json!({"session_id": session}));
    d.tool(
        "alayasiki_memory_read",
        json!({"session_id": session, "query": "which buoy is red", "top_k": 2}),
    );
    d.tool("alayasiki_memory_promote", json!({"session_id": session}));
    d.tool(
        "alayasiki_forget",
        json!({"idempotency_key": format!("tides-{tag}")}),
    );
    // Tool failures: results with isError.
    d.tool_fails(
        "alayasiki_forget",
        json!({"document_id": "doc_000000000000000000000000"}),
    );
    d.tool_fails("alayasiki_query", json!({"query": " "}));
    d.tool_fails(
        "alayasiki_memory_read",
        json!({"session_id": "never-written"}),
    );
    d.tool_fails("alayasiki_ingest", json!({}));

    // Resources: lists, and a read of each kind (text, blob, JSON).
    d.request("all", "resources/list", json!({}));
    d.request("all", "resources/templates/list", json!({}));
    for (what, uri) in [
        ("a document's text", format!("alayasiki://documents/{doc}")),
        (
            "a document's current version",
            format!("alayasiki://documents/{doc_v2}"),
        ),
        (
            "a text original",
            format!("alayasiki://documents/{doc}/original"),
        ),
        (
            "a binary original",
            format!("alayasiki://documents/{pdf_doc}/original"),
        ),
        ("the communities", "alayasiki://communities".to_string()),
        (
            "a working-memory session",
            format!("alayasiki://sessions/{session}"),
        ),
    ] {
        let r = d.request(what, "resources/read", json!({"uri": uri}));
        let contents = &r["result"]["contents"][0];
        let member = if what == "a binary original" {
            "blob"
        } else {
            "text"
        };
        assert!(contents[member].is_string(), "{uri}: {r}");
    }
    // The session, read above, deleted.
    d.tool("alayasiki_memory_delete", json!({"session_id": session}));

    // Prompts.
    d.request("all", "prompts/list", json!({}));
    d.request(
        "with its argument",
        "prompts/get",
        json!({"name": "alayasiki_reasoning", "arguments": {"question": "When is high tide?"}}),
    );

    // Protocol errors.
    d.refused(
        "a method no revision has",
        "tools/frobnicate",
        json!({}),
        -32601,
    );
    d.refused(
        "an unknown tool",
        "tools/call",
        json!({"name": "alayasiki_nope", "arguments": {}}),
        -32602,
    );
    // Over stateless HTTP the Mcp-Name header is then missing, which is
    // checked first.
    let no_name = if d.wire.stateless_http() {
        -32020
    } else {
        -32602
    };
    d.refused(
        "no tool name",
        "tools/call",
        json!({"arguments": {}}),
        no_name,
    );
    d.refused(
        "a cursor never issued",
        "tools/list",
        json!({"cursor": "nope"}),
        -32602,
    );
    d.refused(
        "an unknown prompt",
        "prompts/get",
        json!({"name": "nope"}),
        -32602,
    );
    d.refused(
        "a missing argument",
        "prompts/get",
        json!({"name": "alayasiki_reasoning", "arguments": {}}),
        -32602,
    );
    let not_found = if modern { -32602 } else { -32002 };
    d.refused(
        "an unknown document",
        "resources/read",
        json!({"uri": "alayasiki://documents/doc_000000000000000000000000"}),
        not_found,
    );
    if let Some(reply) = d
        .wire
        .send_unparsable(b"{\"jsonrpc\": \"2.0\", \"id\": 1, ")
    {
        assert_eq!(reply["error"]["code"], -32700, "{reply}");
        d.record_reply("unparsable JSON".into(), "", reply);
    }
    // An id of a type no revision allows (and, statelessly, also without
    // the _meta, which is checked before the id over HTTP).
    let mut float_id = d.message("tools/list", json!({}));
    float_id["id"] = json!(1.5);
    let mut bad_ids = vec![("a request with a float id", float_id.clone(), -32600)];
    if modern {
        float_id["params"] = json!({});
        bad_ids.push(("a request with a float id and no _meta", float_id, -32602));
    }
    for (what, message, code) in bad_ids {
        let reply = d
            .wire
            .send(&message)
            .expect("a reply to a request with a float id");
        let expected = if d.wire.stateless_http() {
            code
        } else {
            -32600
        };
        assert_eq!(reply["error"]["code"], expected, "{what}: {reply}");
        d.record_reply(what.into(), "tools/list", reply);
    }
    // Frames too costly to parse are refused by the id read off them.
    for id in [json!("costly"), json!(1.5)] {
        let n = alayasiki_mcp::limits::MAX_PARSED_MESSAGE_BYTES / 80 + 1;
        let frame = format!(
            "{{\"jsonrpc\": \"2.0\", \"id\": {id}, \"method\": \"tools/call\", \"params\": \
             {{\"name\": \"alayasiki_status\", \"arguments\": {{\"a\": [{}0]}}}}}}",
            "0,".repeat(n)
        );
        if let Some(reply) = d.wire.send_too_costly(frame.as_bytes()) {
            assert_eq!(reply["error"]["code"], -32600, "{reply}");
            let expected = if id.is_string() {
                id.clone()
            } else {
                Value::Null
            };
            assert_eq!(reply["id"], expected, "{reply}");
            d.record_reply(
                format!("a frame too costly to parse, id {id}"),
                "tools/call",
                reply,
            );
        }
    }
    // A request with positional params is answered; the schema itself
    // allows no such request.
    let id = d.id();
    let positional = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": [1]});
    let reply = d.exchange(
        "positional params",
        "tools/list",
        positional,
        Sent::Malformed,
    );
    assert_eq!(reply["error"]["code"], -32602, "{reply}");

    if modern {
        for method in ["ping", "initialize", "logging/setLevel"] {
            d.refused("a method 2026-07-28 removed", method, json!({}), -32601);
        }
        let r = d.refused(
            "an unsupported revision",
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01",
                             "io.modelcontextprotocol/clientCapabilities": {}}}),
            -32022,
        );
        assert_eq!(r["error"]["data"]["requested"], "2099-01-01", "{r}");
        d.refused(
            "no client capabilities",
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}),
            -32602,
        );
        let message = d.message("tools/list", json!({}));
        if let Some(reply) = d.wire.send_mismatched(&message) {
            assert_eq!(reply["error"]["code"], -32020, "{reply}");
            d.record_reply(
                "tools/list (Mcp-Method names another method)".into(),
                "tools/list",
                reply,
            );
        }
    } else {
        d.refused(
            "a second initialize",
            "initialize",
            json!({"protocolVersion": rev, "capabilities": {},
                   "clientInfo": {"name": "official-schemas", "version": "1"}}),
            -32600,
        );
        batch(d);
    }
    // Cancelling a request that is not running: no reply.
    d.notify(
        "notifications/cancelled",
        json!({"requestId": "req-never-sent", "reason": "testing"}),
    );
    d.request("after the notifications", "tools/list", json!({}));
}

/// A JSON-RPC batch: answered as one through 2025-03-26, refused after.
fn batch(d: &mut Driver) {
    let rev = d.revision;
    let items = vec![
        d.message("ping", json!({})),
        d.message("prompts/list", json!({})),
    ];
    let message = Value::Array(items.clone());
    let mut checks = Vec::new();
    if rev == "2025-03-26" {
        checks.push((String::new(), "JSONRPCBatchRequest".to_string()));
        checks.push((String::new(), "JSONRPCMessage".to_string()));
    }
    for (i, item) in items.iter().enumerate() {
        for (p, def) in sent_checks(rev, item) {
            checks.push((format!("/{i}{p}"), def));
        }
    }
    if rev <= "2025-03-26" {
        // Later revisions have no batches: sent there on purpose.
        d.record("a batch, as sent".into(), message.clone(), checks);
    }
    let reply = d.wire.send(&message).expect("a reply to a batch");
    if rev <= "2025-03-26" {
        let replies = reply.as_array().unwrap_or_else(|| panic!("{reply}"));
        assert_eq!(replies.len(), 2, "{reply}");
        let mut checks = Vec::new();
        if rev == "2025-03-26" {
            checks.push((String::new(), "JSONRPCBatchResponse".to_string()));
            checks.push((String::new(), "JSONRPCMessage".to_string()));
        }
        for (i, r) in replies.iter().enumerate() {
            let method = items
                .iter()
                .find(|m| m["id"] == r["id"])
                .and_then(|m| m["method"].as_str())
                .unwrap_or_else(|| panic!("a batch reply to no request: {r}"));
            checks.extend(reply_checks(rev, method, r, &format!("/{i}")));
        }
        d.record("a batch of ping and prompts/list".into(), reply, checks);
    } else {
        assert_eq!(reply["error"]["code"], -32600, "{rev}: {reply}");
        d.record_reply("a batch, which the revision removed".into(), "", reply);
    }
}

/// Drives a session of `revision` over `wire` into `cases`.
fn session(revision: &'static str, wire: &mut dyn Wire, cases: &mut Vec<Case>) {
    let mut d = Driver {
        revision,
        wire,
        cases,
        next_id: 0,
    };
    drive(&mut d);
}

// ---------------------------------------------------------------------
// Replies broken on purpose.

/// Copies of real replies, each changed one way the schema refuses, with
/// the path of the change: one of each method per revision.
fn broken_copies(cases: &[Case]) -> Vec<Case> {
    let mut out = Vec::new();
    let mut done = BTreeSet::new();
    for c in cases {
        let reply = &c.message;
        if c.what.contains("as sent")
            || c.broken_at.is_some()
            || !reply.is_object()
            || reply.get("method").is_some()
            || reply.get("id") == Some(&Value::Null)
        {
            continue;
        }
        let method = c.what.split(' ').next().unwrap_or("").to_string();
        let kind = if reply.get("error").is_some() {
            "error".to_string()
        } else {
            method.clone()
        };
        if !done.insert((c.revision, c.transport, kind.clone())) {
            continue;
        }
        let mut breaks: Vec<(&str, Value)> = Vec::new();
        let mut change = |pointer: &'static str, value: Value| {
            let mut v = reply.clone();
            if let Some(slot) = v.pointer_mut(pointer) {
                *slot = value;
                breaks.push((pointer, v));
            }
        };
        change("/jsonrpc", json!("1.0"));
        change("/id", json!(1.5));
        if kind == "error" {
            change("/error/code", json!("-32601"));
            change("/error/message", json!(["not", "a", "string"]));
        } else {
            match method.as_str() {
                "initialize" => {
                    change("/result/protocolVersion", json!(20241105));
                    change("/result/capabilities/tools", json!(true));
                    change("/result/serverInfo/name", json!(null));
                }
                "ping" | "logging/setLevel" => change("/result", json!([])),
                "server/discover" => {
                    change("/result/supportedVersions", json!(MODERN));
                    change("/result/ttlMs", json!(-1));
                    change("/result/cacheScope", json!("everyone"));
                }
                "tools/list" => {
                    change("/result/tools/0/name", json!(7));
                    change("/result/tools/0/inputSchema/type", json!("array"));
                }
                "tools/call" => {
                    change("/result/isError", json!("no"));
                    change("/result/content", json!({"type": "text"}));
                    change("/result/content/0/text", json!(42));
                }
                "resources/list" => {
                    change("/result/resources/0/uri", json!(5));
                    change("/result/resources", json!("none"));
                }
                "resources/templates/list" => {
                    change("/result/resourceTemplates/0/uriTemplate", json!(5))
                }
                "resources/read" => {
                    change("/result/contents", json!({}));
                    change("/result/contents/0/uri", json!(false));
                }
                "prompts/list" => change("/result/prompts/0/name", json!(5)),
                "prompts/get" => {
                    change("/result/messages/0/role", json!("robot"));
                    change("/result/messages/0/content/type", json!("smell"));
                }
                _ => {}
            }
        }
        for (pointer, message) in breaks {
            out.push(Case {
                revision: c.revision,
                transport: c.transport,
                what: format!("{} with {pointer} broken", c.what),
                message,
                checks: c.checks.clone(),
                broken_at: Some(pointer.to_string()),
                divergence: None,
            });
        }
        // A required member dropped.
        let drop = if kind == "error" {
            Some("/error/code")
        } else if c.revision == MODERN {
            Some("/result/resultType")
        } else {
            match method.as_str() {
                "initialize" => Some("/result/serverInfo"),
                "tools/call" => Some("/result/content"),
                "tools/list" => Some("/result/tools"),
                "resources/read" => Some("/result/contents"),
                "prompts/get" => Some("/result/messages"),
                _ => None,
            }
        };
        if let Some(pointer) = drop {
            let (parent, member) = pointer.rsplit_once('/').unwrap();
            let mut message = reply.clone();
            if let Some(Value::Object(o)) = message.pointer_mut(parent) {
                if o.remove(member).is_some() {
                    out.push(Case {
                        revision: c.revision,
                        transport: c.transport,
                        what: format!("{} without {pointer}", c.what),
                        message,
                        checks: c.checks.clone(),
                        broken_at: Some(parent.to_string()),
                        divergence: None,
                    });
                }
            }
        }
    }
    out
}

/// The session's cases plus broken copies of them, judged.
fn judge_with_broken(mut cases: Vec<Case>, revisions: &[&str]) {
    let broken = broken_copies(&cases);
    assert!(!broken.is_empty());
    cases.extend(broken);
    judge(&cases, revisions);
}

// ---------------------------------------------------------------------
// The tests.

#[test]
fn stdio_replies_of_every_revision_match_its_official_schema() {
    let mut cases = Vec::new();
    for revision in REVISIONS {
        let dir = common::TempDir::new("official-stdio");
        let mut wire = Stdio(common::Server::start(dir.path()));
        session(revision, &mut wire, &mut cases);
        wire.0.close();
    }
    judge_with_broken(cases, &REVISIONS);
}

#[test]
fn streamable_http_replies_of_every_revision_match_its_official_schema() {
    let dir = http_common::TempDir::new("official-streamable");
    let api = http_common::Api::start(dir.path(), &[]);
    let mut cases = Vec::new();
    for revision in REVISIONS {
        // A tenant per revision, so each session sees its own documents.
        let token = http_common::admin("schemas", &format!("tenant-{revision}"));
        let mut wire = Streamable {
            api: &api,
            token,
            revision,
            session: None,
        };
        session(revision, &mut wire, &mut cases);
        assert!(
            revision == MODERN || wire.session.is_some(),
            "{revision}: initialize opened no session"
        );
    }
    judge_with_broken(cases, &REVISIONS);
}

#[test]
fn legacy_sse_replies_match_the_2024_11_05_schema() {
    let dir = http_common::TempDir::new("official-sse");
    let api = http_common::Api::start(dir.path(), &[]);
    let token = http_common::admin("schemas", "sse");
    let mut wire = LegacySse(http_common::Sse::open(api.addr, &token));
    let mut cases = Vec::new();
    session("2024-11-05", &mut wire, &mut cases);
    wire.0.close();
    judge_with_broken(cases, &["2024-11-05"]);
}

/// Hand-written replies, no binary: a valid one of each revision passes,
/// and the same with a field of the wrong type, or a required one
/// missing, is refused at that field (so the validator can fail).
#[test]
fn the_validator_refuses_replies_the_schemas_refuse() {
    let mut cases = Vec::new();
    let mut add =
        |revision: &'static str, method: &str, message: Value, broken_at: Option<&str>| {
            let checks = reply_checks(revision, method, &message, "");
            cases.push(Case {
                revision,
                transport: "none",
                what: format!("{method} (hand-written)"),
                message,
                checks,
                broken_at: broken_at.map(str::to_string),
                divergence: None,
            });
        };
    for revision in REVISIONS {
        let modern = revision == MODERN;
        let mut call = json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": "ok"}], "isError": false}});
        if modern {
            call["result"]["resultType"] = json!("complete");
        }
        add(revision, "tools/call", call.clone(), None);
        let mut wrong = call.clone();
        wrong["result"]["isError"] = json!("false");
        add(revision, "tools/call", wrong, Some("/result/isError"));
        let mut wrong = call.clone();
        wrong["result"]["content"][0]["text"] = json!(1);
        add(revision, "tools/call", wrong, Some("/result/content/0"));
        let mut wrong = call.clone();
        wrong["result"].as_object_mut().unwrap().remove("content");
        add(revision, "tools/call", wrong, Some("/result"));
        let error =
            json!({"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "no"}});
        add(revision, "frobnicate", error.clone(), None);
        let mut wrong = error.clone();
        wrong["error"]["code"] = json!(-32601.5);
        add(revision, "frobnicate", wrong, Some("/error/code"));
        if modern {
            let mut wrong = call.clone();
            wrong["result"]
                .as_object_mut()
                .unwrap()
                .remove("resultType");
            add(revision, "tools/call", wrong, Some("/result"));
            let list = json!({"jsonrpc": "2.0", "id": 2, "result": {
                "tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}});
            add(revision, "tools/list", list.clone(), None);
            let mut wrong = list.clone();
            wrong["result"]["cacheScope"] = json!("shared");
            add(revision, "tools/list", wrong, Some("/result/cacheScope"));
            let mut wrong = error.clone();
            wrong["error"]["code"] = json!(-32022);
            add(revision, "tools/list", wrong, Some("/error"));
        } else {
            let init = json!({"jsonrpc": "2.0", "id": 0, "result": {
                "protocolVersion": revision, "capabilities": {},
                "serverInfo": {"name": "s", "version": "1"}}});
            add(revision, "initialize", init.clone(), None);
            let mut wrong = init.clone();
            wrong["result"]["serverInfo"]["version"] = json!(1);
            add(
                revision,
                "initialize",
                wrong,
                Some("/result/serverInfo/version"),
            );
        }
    }
    judge(&cases, &REVISIONS);
}

/// The vendored schemas are the upstream files `tests/mcp_schemas/README.md`
/// records (its table: revision, draft, SHA-256), each of the draft it
/// names, one for every revision the server speaks.
#[test]
fn vendored_schemas_are_the_recorded_upstream_files() {
    use sha2::{Digest, Sha256};
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_schemas/README.md"),
    )
    .unwrap();
    let rows: Vec<Vec<String>> = readme
        .lines()
        .filter(|l| l.starts_with("| 20"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_string())
                .collect()
        })
        .collect();
    let listed: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        listed, REVISIONS,
        "the README's table lists other revisions"
    );
    for row in &rows {
        let (revision, draft, sha) = (&row[0], &row[1], row.last().unwrap());
        let bytes = std::fs::read(schema_file(revision)).unwrap();
        let digest: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            &digest, sha,
            "{revision}/schema.json is not the file the README records"
        );
        let schema: Value = serde_json::from_slice(&bytes).unwrap();
        let expected = match draft.as_str() {
            "draft-07" => "http://json-schema.org/draft-07/schema#",
            "2020-12" => "https://json-schema.org/draft/2020-12/schema",
            other => panic!("{revision}: unknown draft {other}"),
        };
        assert_eq!(schema["$schema"], expected, "{revision}");
    }
    // The dated 2026-07-28 schema is the stateless revision served here.
    let modern: Value =
        serde_json::from_slice(&std::fs::read(schema_file(MODERN)).unwrap()).unwrap();
    for def in [
        "DiscoverRequest",
        "DiscoverResult",
        "CacheableResult",
        "ResultType",
    ] {
        assert!(modern["$defs"][def].is_object(), "{MODERN} lacks {def}");
    }
}
