//! One request being handled, and what its handler may say to the client
//! before it answers.
//!
//! A [`Call`] is handed to the handlers of `tools/call`, `resources/read`,
//! `prompts/get` and `completion/complete` ([`super::catalog::Catalog`]).
//! Through it a handler
//! - reports progress (`notifications/progress`, when the request's
//!   `_meta.progressToken` asked for it) and logs (`notifications/message`,
//!   at or above the session's `logging/setLevel` level, or, in the
//!   stateless revision, the request's `_meta` `logLevel`; never when a
//!   stateless request set none);
//! - asks the client for input ([`Call::ask`], [`Call::ask_all`]): in the
//!   session-based revisions a server-to-client request (`sampling/
//!   createMessage`, `elicitation/create`, `roots/list`) sent on the
//!   request's stream, whose response arrives as a later message of the
//!   session; in the stateless revision (2026-07-28) an *input-required
//!   result* (SEP-2322): the call answers `resultType: "input_required"`
//!   with the `inputRequests` it still needs, and the client retries with
//!   `inputResponses` and the `requestState` it was given;
//! - keeps state across those rounds ([`Call::state`], [`Call::carry`]):
//!   the `requestState` is the state, signed with a key of this process
//!   (HMAC-SHA256) and bound to the caller, the method, the tool, prompt
//!   or resource, and an expiry, so a client cannot forge it or replay it
//!   elsewhere or as someone else.
//!
//! What reaches the client goes through a [`Peer`], the transport's side:
//! stdio and the deprecated SSE transport have none ([`NoPeer`]: progress
//! and logs are dropped, asks fail); Streamable HTTP answers a POST whose
//! handler sends something with a live `text/event-stream`.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::jsonrpc::{INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST};
use super::mcp::Fault;
use super::revision::{Revision, MISSING_REQUIRED_CLIENT_CAPABILITY};
use crate::service::Memory;

/// How long a server-to-client request waits for the client's response.
pub const CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a `requestState` stays valid after it was issued.
pub const REQUEST_STATE_TTL: Duration = Duration::from_secs(600);

/// The `_meta` key of a stateless request's log level (2026-07-28).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The transport's side of a call: what it can carry to the client while
/// the call runs.
pub trait Peer {
    /// Sends a notification (a whole JSON-RPC message) on the request's
    /// stream; false when it cannot be sent (no stream, client gone).
    fn notify(&self, message: &Value) -> bool;

    /// Sends a request to the client and waits up to `timeout` for its
    /// response: the response's `result`, or why there is none.
    fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, PeerError>;

    /// Ends the request's stream now, before the call answers; what the
    /// call still sends is kept for the client to fetch by resuming the
    /// stream (`GET` with `Last-Event-ID`). False when the transport
    /// cannot.
    fn end_stream(&self) -> bool {
        false
    }
}

/// Why a server-to-client request has no result.
#[derive(Debug, Clone, PartialEq)]
pub enum PeerError {
    /// The transport cannot carry requests to this client.
    Unavailable(String),
    /// No response came in time.
    TimedOut,
    /// The client answered with a JSON-RPC error.
    Client {
        code: i64,
        message: String,
        data: Option<Value>,
    },
}

/// A transport that carries nothing to the client while a call runs.
pub struct NoPeer;

impl Peer for NoPeer {
    fn notify(&self, _message: &Value) -> bool {
        false
    }

    fn request(&self, method: &str, _: Value, _: Duration) -> Result<Value, PeerError> {
        Err(PeerError::Unavailable(format!(
            "this transport cannot send {method} to the client"
        )))
    }
}

/// The MCP log levels, least severe first.
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// A log level's rank (`None`: not a level).
pub fn log_rank(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| *l == level)
}

/// Which methods may answer with an input-required result (SEP-2322).
const ROUNDS_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// The client capability a server-to-client request needs.
fn capability_for(method: &str) -> Option<&'static str> {
    match method {
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// The stateless revision's rounds: what the retry brought.
struct Rounds {
    responses: Map<String, Value>,
    /// The verified `requestState` (what an earlier round carried).
    state: Option<Value>,
}

/// One request being handled; see the module documentation.
pub struct Call<'a> {
    memory: &'a Memory<'a>,
    revision: Revision,
    peer: &'a dyn Peer,
    method: &'a str,
    params: &'a Map<String, Value>,
    client: Map<String, Value>,
    /// Logs at or above this rank are sent; `None`: none are.
    log_threshold: Option<usize>,
    /// `Some` in the stateless revision.
    rounds: Option<Rounds>,
    /// Input the stateless call still needs, by key.
    pending: RefCell<Map<String, Value>>,
    /// State to carry to the next round.
    carried: RefCell<Option<Value>>,
}

impl<'a> Call<'a> {
    /// A call of a session-based revision: the client's capabilities are
    /// what its `initialize` declared, logs follow the session's level.
    #[allow(clippy::too_many_arguments)]
    pub fn legacy(
        memory: &'a Memory<'a>,
        revision: Revision,
        peer: &'a dyn Peer,
        method: &'a str,
        params: &'a Map<String, Value>,
        client: Map<String, Value>,
        log_level: &str,
    ) -> Call<'a> {
        let log_threshold = log_rank(log_level);
        Call::new(
            memory,
            revision,
            peer,
            method,
            params,
            client,
            log_threshold,
            None,
        )
    }

    /// A call of the stateless revision: capabilities and log level come
    /// from the request's `_meta`; `inputResponses` and `requestState`
    /// (checked here: a state that fails its check is refused) from its
    /// params.
    pub fn modern(
        memory: &'a Memory<'a>,
        revision: Revision,
        peer: &'a dyn Peer,
        method: &'a str,
        params: &'a Map<String, Value>,
        client: Map<String, Value>,
    ) -> Result<Call<'a>, Fault> {
        let meta = params.get("_meta").and_then(Value::as_object);
        let log_threshold = match meta.and_then(|m| m.get(META_LOG_LEVEL)) {
            None => None,
            Some(Value::String(level)) => Some(log_rank(level).ok_or_else(|| {
                Fault::new(
                    INVALID_PARAMS,
                    format!("_meta \"{META_LOG_LEVEL}\" is not a log level"),
                )
            })?),
            Some(_) => {
                return Err(Fault::new(
                    INVALID_PARAMS,
                    format!("_meta \"{META_LOG_LEVEL}\" must be a string"),
                ))
            }
        };
        // Only the methods that may answer input-required read the
        // rounds' params; elsewhere they mean nothing.
        let rounds = ROUNDS_METHODS.contains(&method);
        let responses = match params.get("inputResponses").filter(|_| rounds) {
            None => Map::new(),
            Some(Value::Object(r)) => r.clone(),
            Some(_) => {
                return Err(Fault::new(
                    INVALID_PARAMS,
                    "inputResponses must be an object of responses by request key",
                ))
            }
        };
        let state = match params.get("requestState").filter(|_| rounds) {
            None => None,
            Some(Value::String(token)) => {
                Some(open_state(token, method, &binding(memory, params))?)
            }
            Some(_) => return Err(Fault::new(INVALID_PARAMS, "requestState must be a string")),
        };
        let rounds = Some(Rounds { responses, state });
        Ok(Call::new(
            memory,
            revision,
            peer,
            method,
            params,
            client,
            log_threshold,
            rounds,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn new(
        memory: &'a Memory<'a>,
        revision: Revision,
        peer: &'a dyn Peer,
        method: &'a str,
        params: &'a Map<String, Value>,
        client: Map<String, Value>,
        log_threshold: Option<usize>,
        rounds: Option<Rounds>,
    ) -> Call<'a> {
        Call {
            memory,
            revision,
            peer,
            method,
            params,
            client,
            log_threshold,
            rounds,
            pending: RefCell::default(),
            carried: RefCell::default(),
        }
    }

    /// The caller's memory.
    pub fn memory(&self) -> &Memory<'a> {
        self.memory
    }

    /// The revision the request is served under.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// Whether the client declared `capability` (e.g. `"sampling"`).
    pub fn client_supports(&self, capability: &str) -> bool {
        self.client.get(capability).is_some_and(Value::is_object)
    }

    /// The request's `_meta.progressToken`, if it asked for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
    }

    /// Reports progress, when the request asked for it; whether it was
    /// sent.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(token) = self.progress_token() else {
            return false;
        };
        let mut params = json!({"progressToken": token, "progress": number(progress)});
        if let Some(total) = total {
            params["total"] = number(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.peer.notify(&json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": params
        }))
    }

    /// Sends a log message at `level` (an MCP level), when the client
    /// asked for that level or a less severe one; whether it was sent.
    pub fn log(&self, level: &str, logger: Option<&str>, data: Value) -> bool {
        let (Some(threshold), Some(rank)) = (self.log_threshold, log_rank(level)) else {
            return false;
        };
        if rank < threshold {
            return false;
        }
        let mut params = json!({"level": level, "data": data});
        if let Some(logger) = logger {
            params["logger"] = json!(logger);
        }
        self.peer.notify(&json!({
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": params
        }))
    }

    /// Asks the client for one input: a server-to-client request of
    /// `method` with `params`, known as `key` in the stateless rounds.
    /// `Err` when the client cannot or did not answer; in the stateless
    /// revision also when the answer is still to come (the call then
    /// answers with an input-required result, whatever the handler
    /// returns).
    pub fn ask(&self, key: &str, method: &str, params: Value) -> Result<Value, Fault> {
        let mut answers = self.ask_all(vec![(key, method, params)])?;
        Ok(answers.pop().unwrap_or(Value::Null))
    }

    /// Asks for several inputs at once (in the stateless revision, all
    /// that are missing are requested in one round); their answers in the
    /// order asked.
    pub fn ask_all(&self, asks: Vec<(&str, &str, Value)>) -> Result<Vec<Value>, Fault> {
        for (_, method, _) in &asks {
            self.check_capability(method)?;
        }
        let Some(rounds) = &self.rounds else {
            return asks
                .into_iter()
                .map(|(_, method, params)| {
                    self.peer
                        .request(method, params, CLIENT_REQUEST_TIMEOUT)
                        .map_err(peer_fault)
                })
                .collect();
        };
        if !ROUNDS_METHODS.contains(&self.method) {
            return Err(Fault::new(
                INTERNAL_ERROR,
                format!("{} cannot ask the client for input", self.method),
            ));
        }
        let mut answers = Vec::with_capacity(asks.len());
        let mut missing = false;
        for (key, method, params) in asks {
            match rounds.responses.get(key) {
                Some(answer) => {
                    if !answers_method(method, answer) {
                        return Err(Fault::new(
                            INVALID_PARAMS,
                            format!("inputResponses[{key:?}] is not a result of {method}"),
                        )
                        .with_data(json!({"key": key})));
                    }
                    answers.push(answer.clone());
                }
                None => {
                    missing = true;
                    self.pending
                        .borrow_mut()
                        .insert(key.to_string(), json!({"method": method, "params": params}));
                }
            }
        }
        if missing {
            return Err(Fault::new(INTERNAL_ERROR, "input required"));
        }
        Ok(answers)
    }

    fn check_capability(&self, method: &str) -> Result<(), Fault> {
        match capability_for(method) {
            Some(cap) if !self.client_supports(cap) => Err(Fault::new(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                format!(
                    "this request needs the client capability {cap:?}, which it did not declare"
                ),
            )
            .with_data(json!({"requiredCapabilities": {cap: {}}}))),
            _ => Ok(()),
        }
    }

    /// What an earlier round of this stateless call carried
    /// ([`Call::carry`]), verified.
    pub fn state(&self) -> Option<&Value> {
        self.rounds.as_ref().and_then(|r| r.state.as_ref())
    }

    /// State for the next round, should this one need input.
    pub fn carry(&self, state: Value) {
        *self.carried.borrow_mut() = Some(state);
    }

    /// Ends the request's stream before the call answers (see
    /// [`Peer::end_stream`]).
    pub fn end_stream(&self) -> bool {
        self.peer.end_stream()
    }

    /// The call's answer given what the handler returned: the
    /// input-required result when a stateless round lacked input.
    pub fn finish(self, outcome: Result<Value, Fault>) -> Result<Value, Fault> {
        let pending = self.pending.into_inner();
        if pending.is_empty() {
            return outcome;
        }
        let mut result = json!({"resultType": "input_required", "inputRequests": pending});
        let state = self
            .carried
            .into_inner()
            .or_else(|| self.rounds.and_then(|r| r.state));
        if let Some(state) = state {
            let bound = binding(self.memory, self.params);
            result["requestState"] = json!(seal_state(&state, self.method, &bound));
        }
        Ok(result)
    }
}

/// Whether `answer` has the shape of a result of `method`.
fn answers_method(method: &str, answer: &Value) -> bool {
    let Some(o) = answer.as_object() else {
        return false;
    };
    match method {
        "elicitation/create" => matches!(
            o.get("action").and_then(Value::as_str),
            Some("accept" | "decline" | "cancel")
        ),
        "sampling/createMessage" => o.get("role").is_some() && o.get("content").is_some(),
        "roots/list" => o.get("roots").is_some_and(Value::is_array),
        _ => true,
    }
}

/// A whole number as an integer, anything else as it is.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

fn peer_fault(e: PeerError) -> Fault {
    match e {
        PeerError::Unavailable(why) => Fault::new(INVALID_REQUEST, why),
        PeerError::TimedOut => Fault::new(
            INTERNAL_ERROR,
            format!(
                "the client did not answer within {} s (CLIENT_REQUEST_TIMEOUT)",
                CLIENT_REQUEST_TIMEOUT.as_secs()
            ),
        ),
        PeerError::Client {
            code,
            message,
            data,
        } => {
            let fault = Fault::new(
                code,
                format!("the client answered with an error: {message}"),
            );
            match data {
                Some(d) => fault.with_data(d),
                None => fault,
            }
        }
    }
}

/// What a request's state is bound to besides its method: the caller
/// (tenant and subject), and the tool or prompt name or the resource URI.
fn binding(memory: &Memory<'_>, params: &Map<String, Value>) -> String {
    let named = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let caller = memory.principal();
    json!([caller.tenant.name(), caller.subject, named]).to_string()
}

/// This process's key for `requestState`.
fn state_key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(crate::ids::random_bytes::<32>)
}

fn hmac_sha256(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    let mut inner_pad = [0x36u8; 64];
    let mut outer_pad = [0x5cu8; 64];
    for (i, k) in key.iter().enumerate() {
        inner_pad[i] ^= k;
        outer_pad[i] ^= k;
    }
    let inner = Sha256::new()
        .chain_update(inner_pad)
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(outer_pad)
        .chain_update(inner)
        .finalize()
        .into()
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `requestState` for `state`: its sealed payload and the payload's MAC.
fn seal_state(state: &Value, method: &str, subject: &str) -> String {
    let payload = json!({
        "method": method,
        "subject": subject,
        "expires": unix_now() + REQUEST_STATE_TTL.as_secs(),
        "state": state
    });
    let body = crate::base64::encode(payload.to_string().as_bytes());
    let mac = hmac_sha256(state_key(), body.as_bytes());
    format!("{body}.{}", crate::ids::hex(&mac))
}

/// The state a `requestState` sealed, if it is one this process issued
/// for this method and subject and it has not expired.
fn open_state(token: &str, method: &str, subject: &str) -> Result<Value, Fault> {
    let refused = || {
        Fault::new(
            INVALID_PARAMS,
            "requestState failed its integrity check (altered, expired, issued by another \
             server process or for another request); retry without it",
        )
    };
    let (body, mac) = token.rsplit_once('.').ok_or_else(refused)?;
    let expected = crate::ids::hex(&hmac_sha256(state_key(), body.as_bytes()));
    let same = expected.len() == mac.len()
        && expected
            .bytes()
            .zip(mac.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if !same {
        return Err(refused());
    }
    let bytes = crate::base64::decode(body).map_err(|_| refused())?;
    let payload: Value = serde_json::from_slice(&bytes).map_err(|_| refused())?;
    let fresh = payload["expires"].as_u64().is_some_and(|e| e >= unix_now());
    if payload["method"] != method || payload["subject"] != subject || !fresh {
        return Err(refused());
    }
    Ok(payload["state"].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_state_opens_only_unaltered_and_for_its_request() {
        let token = seal_state(&json!({"round": 2}), "tools/call", "t");
        assert_eq!(
            open_state(&token, "tools/call", "t").unwrap(),
            json!({"round": 2})
        );
        for bad in [
            format!("{token}-TAMPERED"),
            token.replacen('e', "f", 1),
            String::new(),
            "x.y".into(),
        ] {
            assert_eq!(
                open_state(&bad, "tools/call", "t").unwrap_err().code,
                INVALID_PARAMS
            );
        }
        assert!(open_state(&token, "tools/call", "other").is_err());
        assert!(open_state(&token, "prompts/get", "t").is_err());
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2_shape() {
        // RFC 4231 test case 2 uses a 4-byte key; with the key zero-padded
        // to 32 bytes HMAC is the same (keys are padded to the block).
        let mut key = [0u8; 32];
        key[..4].copy_from_slice(b"Jefe");
        let mac = hmac_sha256(&key, b"what do ya want for nothing?");
        assert_eq!(
            crate::ids::hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn log_levels_rank_least_severe_first() {
        assert!(log_rank("debug") < log_rank("info"));
        assert!(log_rank("warning") < log_rank("emergency"));
        assert_eq!(log_rank("verbose"), None);
    }
}
