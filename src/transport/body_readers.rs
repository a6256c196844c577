//! Request bodies are awaited off the routing code, and capped.
//!
//! A body arrives at the client's pace, and [`body::read`] waits for it for
//! up to [`BODY_READ_TIMEOUT`](body::BODY_READ_TIMEOUT). Clients that send
//! request heads declaring a body and then nothing must not hold the
//! server's threads and memory without bound, nor one caller every
//! reader.
//!
//! So routing decides only what the head allows (origin and host, token
//! placement, declared size, route, method, authentication, rate limit,
//! permission), and a request whose body has yet to arrive is handed to a
//! body-reading thread of its own (`read_then`). That thread reads the
//! body and then carries on exactly as routing would have (dispatch
//! admission and the rest), and ends.
//!
//! At most [`MAX_BODY_READERS`] bodies are awaited at once. One more is
//! answered at once with 503 `body_readers_busy` and `Retry-After`, its
//! body unread and its connection ended ([`Request::respond_and_close`]),
//! so nothing of it is buffered and no thread waits for it.
//!
//! A body already in memory (it came with the head) is read on the routing
//! thread, since reading it cannot wait for the client ([`body::in_memory`]):
//! small requests (most queries) need no extra thread and are still served
//! while every body reader is busy.

use super::request::Request;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use super::admission::{Gate, Permit, RETRY_AFTER_SECS};
use super::body;
use super::http::{error, refuse_body, retry_after, Context};

/// Request bodies awaited at once, each on a short-lived thread of its own;
/// one more gets 503 with `Retry-After`.
pub const MAX_BODY_READERS: usize = 64;

/// Of those, bodies one caller (tenant and subject) may have awaited at
/// once; one more from that caller gets 429 with `Retry-After`. A single
/// token cannot take every reader and so stall everyone else's uploads:
/// it takes four callers stalling at once to fill them.
pub const MAX_BODY_READERS_PER_CALLER: usize = MAX_BODY_READERS / 4;

/// The body readers in use, in all and per caller.
pub struct BodyReaders {
    all: Arc<Gate>,
    /// Caller key → readers it holds; an entry goes with its last reader,
    /// so there are never more than [`MAX_BODY_READERS`].
    by_caller: Mutex<HashMap<String, usize>>,
}

/// Why no body reader was given.
enum NoReader {
    /// All [`MAX_BODY_READERS`] are in use.
    Busy,
    /// The caller holds [`MAX_BODY_READERS_PER_CALLER`] already.
    CallerBusy,
}

/// One body reader held by one caller; released on drop.
struct Reader {
    _all: Permit,
    readers: Arc<BodyReaders>,
    caller: String,
}

impl BodyReaders {
    pub fn new() -> Arc<BodyReaders> {
        Arc::new(BodyReaders {
            all: Gate::new("body-readers", MAX_BODY_READERS),
            by_caller: Mutex::new(HashMap::new()),
        })
    }

    pub fn in_use(&self) -> usize {
        self.all.in_use()
    }

    /// Waits until no body is awaited; `false` if `deadline` came first.
    pub fn wait_idle(&self, deadline: Instant) -> bool {
        self.all.wait_idle(deadline)
    }

    fn try_enter(self: &Arc<Self>, caller: &str) -> Result<Reader, NoReader> {
        let mut by_caller = self.lock();
        let held = by_caller.get(caller).copied().unwrap_or(0);
        if held >= MAX_BODY_READERS_PER_CALLER {
            return Err(NoReader::CallerBusy);
        }
        let all = self.all.try_enter().ok_or(NoReader::Busy)?;
        by_caller.insert(caller.to_string(), held + 1);
        Ok(Reader {
            _all: all,
            readers: self.clone(),
            caller: caller.to_string(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, usize>> {
        self.by_caller.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let mut by_caller = self.readers.lock();
        if let Some(n) = by_caller.get_mut(&self.caller) {
            *n -= 1;
            if *n == 0 {
                by_caller.remove(&self.caller);
            }
        }
    }
}

/// Reads `request`'s body and then calls `then` with the request and the
/// body: on a body-reading thread of its own, or on this thread when the
/// body is already [`in_memory`](body::in_memory). A body that cannot be
/// read (too large, too slow, broken) is refused as [`refuse_body`] says,
/// and `then` is not called; when [`MAX_BODY_READERS`] bodies are already awaited, the
/// request is answered 503 at once without reading its body, and when
/// `caller` (see `admission::caller_key`) already has
/// [`MAX_BODY_READERS_PER_CALLER`] awaited, 429.
pub(super) fn read_then<F>(ctx: &Arc<Context>, request: Request, caller: &str, then: F)
where
    F: FnOnce(&Arc<Context>, Request, Vec<u8>) + Send + 'static,
{
    on_reader(ctx, request, caller, move |ctx, request| {
        read_and(ctx, request, then)
    })
}

/// Calls `receive` with `request`, whose body it reads itself (an upload
/// streamed to disk), on a body-reading thread of its own, or on this
/// thread when the body is already [`in_memory`](body::in_memory); refused
/// like [`read_then`] when no reader is free.
pub(super) fn on_reader<F>(ctx: &Arc<Context>, request: Request, caller: &str, receive: F)
where
    F: FnOnce(&Arc<Context>, Request) + Send + 'static,
{
    if body::in_memory(&request) {
        return receive(ctx, request);
    }
    let permit = match ctx.body_readers.try_enter(caller) {
        Ok(permit) => permit,
        Err(why) => return refuse(request, why),
    };
    // The request travels over a channel, so that it is still here to be
    // answered should the thread fail to start.
    let (tx, rx) = crossbeam_channel::bounded::<Request>(1);
    let reader_ctx = ctx.clone();
    let spawned = std::thread::Builder::new()
        .name("http-body".into())
        .spawn(move || {
            let _permit = permit;
            if let Ok(request) = rx.recv() {
                let ctx = &reader_ctx;
                let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    receive(ctx, request)
                }));
                if read.is_err() {
                    log::error!("handling a request body panicked");
                }
            }
        });
    match spawned {
        Ok(_) => {
            let _ = tx.send(request);
        }
        Err(e) => {
            log::error!("cannot start a thread to read a request body: {e}");
            refuse(request, NoReader::Busy);
        }
    }
}

fn read_and<F>(ctx: &Arc<Context>, mut request: Request, then: F)
where
    F: FnOnce(&Arc<Context>, Request, Vec<u8>),
{
    match body::read(&mut request) {
        Ok(body) => then(ctx, request, body),
        Err(why) => refuse_body(request, why),
    }
}

/// 503 (all readers busy) or 429 (the caller's share busy) with
/// `Retry-After`, the body unread and the connection ended.
fn refuse(request: Request, why: NoReader) {
    let r = match why {
        NoReader::Busy => error(
            503,
            "body_readers_busy",
            &format!(
                "the server is already receiving {MAX_BODY_READERS} request bodies \
                 (MAX_BODY_READERS); retry shortly"
            ),
        ),
        NoReader::CallerBusy => error(
            429,
            "too_many_bodies",
            &format!(
                "this caller is already sending {MAX_BODY_READERS_PER_CALLER} request bodies \
                 (MAX_BODY_READERS_PER_CALLER); retry shortly"
            ),
        ),
    };
    request.respond_and_close(r.with_header(retry_after(RETRY_AFTER_SECS)));
}
