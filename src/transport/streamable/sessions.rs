//! The sessions of the session-based revisions at `/mcp`: each one's
//! owner (tenant and subject), protocol state, listening stream and the
//! response streams kept for resumption; and the table of open sessions
//! with its caps (in all, per tenant, per caller) and idle expiry.

use crossbeam_channel::Sender;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::super::admission::{caller_key, RETRY_AFTER_SECS};
use super::super::http::{retry_after, Response};
use super::super::mcp_http::new_session_id;
use super::reply::{Reply, MAX_DETACHED_STREAMS};
use super::rpc_response;
use crate::protocol::jsonrpc::{self, INVALID_REQUEST};
use crate::protocol::mcp;
use crate::service::Principal;

/// Session-based sessions open at once, in all.
pub const MAX_HTTP_SESSIONS: usize = 1024;

/// Sessions one tenant may hold; past it, opening one ends one of the
/// tenant's idle sessions (see [`HttpSessions::open`]) or is refused (429).
pub const MAX_HTTP_SESSIONS_PER_TENANT: usize = 256;

/// Sessions one caller (tenant and subject) may hold; opening one more
/// ends its least recently used session, which a client that reconnects
/// without `DELETE` has abandoned.
pub const MAX_HTTP_SESSIONS_PER_CALLER: usize = 32;

/// A session unused for this long is gone (its id then answers 404);
/// one with a listening stream open is in use.
pub const HTTP_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Once [`SESSIONS_SCARCE_AT`] sessions are open, a session unused for
/// this long is gone too.
pub const HTTP_SESSION_SCARCE_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Open sessions from which slots count as scarce (three quarters of
/// [`MAX_HTTP_SESSIONS`]): idle sessions then expire after
/// [`HTTP_SESSION_SCARCE_IDLE_TIMEOUT`].
pub const SESSIONS_SCARCE_AT: usize = MAX_HTTP_SESSIONS * 3 / 4;

/// One session of the session-based revisions.
pub(in crate::transport) struct HttpSession {
    pub(super) id: String,
    /// Tenant and subject that opened it ([`caller_key`]).
    pub(super) owner: String,
    pub(super) tenant: String,
    pub(super) protocol: mcp::Session,
    pub(super) last_used: Mutex<Instant>,
    /// The open listening stream's stop signal: dropping it ends the
    /// stream.
    pub(super) listening: Mutex<Option<Sender<()>>>,
    /// Response streams that may be resumed, by number.
    pub(super) streams: Mutex<BTreeMap<u64, Arc<Reply>>>,
    pub(super) next_stream: AtomicU64,
}

impl HttpSession {
    pub(super) fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    pub(super) fn idle_for(&self) -> Duration {
        lock(&self.last_used).elapsed()
    }

    pub(super) fn is_listening(&self) -> bool {
        lock(&self.listening).is_some()
    }

    /// Whether the session is gone: unused past its idle timeout, the
    /// shorter one when sessions are `scarce`.
    pub(super) fn expired(&self, scarce: bool) -> bool {
        let timeout = if scarce {
            HTTP_SESSION_SCARCE_IDLE_TIMEOUT
        } else {
            HTTP_SESSION_IDLE_TIMEOUT
        };
        !self.is_listening() && self.idle_for() >= timeout
    }

    /// Ends the listening stream, if one is open.
    pub(super) fn end_listening(&self) {
        lock(&self.listening).take();
    }

    /// The session is over: its listening stream ends, calls waiting for
    /// the client's answer stop waiting, and the response streams it kept
    /// for resumption are let go (a call still running finishes on its own
    /// connection, if it has one).
    pub(super) fn end(&self) {
        self.end_listening();
        self.protocol.abandon_requests();
        std::mem::take(&mut *lock(&self.streams));
    }

    /// A number for a new response stream (event ids).
    pub(super) fn next_stream(&self) -> u64 {
        self.next_stream.fetch_add(1, Ordering::Relaxed)
    }

    /// Keeps `reply`'s stream resumable; past [`MAX_DETACHED_STREAMS`]
    /// the oldest kept one is dropped.
    pub(super) fn keep_stream(&self, stream: u64, reply: Arc<Reply>) {
        let mut streams = lock(&self.streams);
        while streams.len() >= MAX_DETACHED_STREAMS {
            streams.pop_first();
        }
        streams.insert(stream, reply);
    }

    pub(super) fn forget_stream(&self, stream: u64) {
        lock(&self.streams).remove(&stream);
    }

    pub(super) fn find_stream(&self, stream: u64) -> Option<Arc<Reply>> {
        lock(&self.streams).get(&stream).cloned()
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The open session-based sessions, by id.
#[derive(Default)]
pub(in crate::transport) struct HttpSessions {
    by_id: Mutex<HashMap<String, Arc<HttpSession>>>,
}

impl HttpSessions {
    /// A new session for `principal`, or the answer refusing one.
    ///
    /// Expired sessions go first. Then, when the caller, its tenant or the
    /// whole table holds as many as it may, one idle session (none with a
    /// listening stream) is ended to make room: the caller's own longest
    /// idle one; failing that, within a full tenant the longest idle one of
    /// the caller holding the most, and within the full table that of the
    /// tenant holding the most, when that holder has more than one session
    /// beyond the newcomer's. So an idle hoard, whoever opened it, never
    /// keeps another caller or tenant out.
    pub(super) fn open(&self, principal: &Principal) -> Result<Arc<HttpSession>, Response> {
        let owner = caller_key(principal.tenant.name(), &principal.subject);
        let tenant = principal.tenant.name().to_string();
        let mut map = lock(&self.by_id);
        let scarce = map.len() >= SESSIONS_SCARCE_AT;
        map.retain(|_, s| {
            let expired = s.expired(scarce);
            if expired {
                s.end();
            }
            !expired
        });
        let mine = map.values().filter(|s| s.owner == owner).count();
        if mine >= MAX_HTTP_SESSIONS_PER_CALLER {
            match longest_idle(&map, |s| s.owner == owner) {
                Some(id) => end_for_newer(&mut map, &id, "of its caller"),
                None => return Err(refuse_session(429, "too_many_sessions_for_caller")),
            }
        }
        if map.values().filter(|s| s.tenant == tenant).count() >= MAX_HTTP_SESSIONS_PER_TENANT {
            let room = longest_idle(&map, |s| s.owner == owner)
                .or_else(|| room_from_largest(&map, |s| s.tenant == tenant, |s| &s.owner, &owner));
            match room {
                Some(id) => end_for_newer(&mut map, &id, "in its tenant"),
                None => return Err(refuse_session(429, "too_many_sessions_for_tenant")),
            }
        }
        if map.len() >= MAX_HTTP_SESSIONS {
            let room = longest_idle(&map, |s| s.owner == owner)
                .or_else(|| room_from_largest(&map, |_| true, |s| &s.tenant, &tenant));
            match room {
                Some(id) => end_for_newer(&mut map, &id, "of another tenant"),
                None => return Err(refuse_session(503, "too_many_sessions")),
            }
        }
        let session = Arc::new(HttpSession {
            id: new_session_id(),
            owner,
            tenant,
            protocol: mcp::Session::new(principal.clone()),
            last_used: Mutex::new(Instant::now()),
            listening: Mutex::new(None),
            streams: Mutex::new(BTreeMap::new()),
            next_stream: AtomicU64::new(1),
        });
        map.insert(session.id.clone(), session.clone());
        Ok(session)
    }

    /// The session `id` of `owner`, if it is open (and now used).
    pub(super) fn get(&self, id: &str, owner: &str) -> Option<Arc<HttpSession>> {
        let mut map = lock(&self.by_id);
        let session = map.get(id).filter(|s| s.owner == owner)?.clone();
        if session.expired(map.len() >= SESSIONS_SCARCE_AT) {
            map.remove(id);
            session.end();
            return None;
        }
        session.touch();
        Some(session)
    }

    /// Ends session `id` of `owner`; whether there was one.
    pub(super) fn remove(&self, id: &str, owner: &str) -> bool {
        let mut map = lock(&self.by_id);
        if map.get(id).is_none_or(|s| s.owner != owner) {
            return false;
        }
        if let Some(s) = map.remove(id) {
            s.end();
        }
        true
    }

    /// Ends every session (at shutdown), and with them their streams.
    pub fn close_all(&self) {
        for (_, s) in lock(&self.by_id).drain() {
            s.end();
        }
    }
}

type SessionTable = HashMap<String, Arc<HttpSession>>;

/// The id of the longest idle session (with no listening stream) that
/// `pick` selects.
fn longest_idle(map: &SessionTable, pick: impl Fn(&HttpSession) -> bool) -> Option<String> {
    map.values()
        .filter(|s| pick(s) && !s.is_listening())
        .max_by_key(|s| s.idle_for())
        .map(|s| s.id.clone())
}

/// Among the sessions `pool` selects, grouped by `holder` (a tenant or a
/// caller): the longest idle session of the group holding the most, if
/// that group holds more than one session beyond `newcomer`'s group.
fn room_from_largest<'a>(
    map: &'a SessionTable,
    pool: impl Fn(&HttpSession) -> bool,
    holder: impl Fn(&'a HttpSession) -> &'a str,
    newcomer: &str,
) -> Option<String> {
    let mut held: HashMap<&str, usize> = HashMap::new();
    for s in map.values().filter(|s| pool(s)) {
        *held.entry(holder(s)).or_default() += 1;
    }
    let theirs = held.get(newcomer).copied().unwrap_or(0);
    map.values()
        .filter(|s| pool(s) && !s.is_listening())
        .map(|s| (held[holder(s)], s.idle_for(), s))
        .filter(|(count, _, _)| *count > theirs + 1)
        .max_by_key(|(count, idle, _)| (*count, *idle))
        .map(|(_, _, s)| s.id.clone())
}

/// Ends session `id` to make room for a newer one.
fn end_for_newer(map: &mut SessionTable, id: &str, whose: &str) {
    log::debug!("HTTP session {id} ended for a newer one {whose}");
    if let Some(s) = map.remove(id) {
        s.end();
    }
}

fn refuse_session(status: u16, code: &str) -> Response {
    let limits = format!(
        "sessions are limited to {MAX_HTTP_SESSIONS} in all (MAX_HTTP_SESSIONS), \
         {MAX_HTTP_SESSIONS_PER_TENANT} per tenant (MAX_HTTP_SESSIONS_PER_TENANT) and \
         {MAX_HTTP_SESSIONS_PER_CALLER} per caller (MAX_HTTP_SESSIONS_PER_CALLER); end one with \
         DELETE /mcp, or retry later"
    );
    rpc_response(
        status,
        &jsonrpc::error(Value::Null, INVALID_REQUEST, &format!("{code}: {limits}")),
    )
    .with_header(retry_after(RETRY_AFTER_SECS))
}
