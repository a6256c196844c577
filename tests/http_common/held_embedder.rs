//! An OpenAI-style embedding server on loopback that the test can *hold*:
//! while held, every request waits (connection open, no answer) until the
//! test releases it. `alayasiki-api` pointed at it (`ALAYASIKI_EMBED_URL`)
//! embeds every query's question and every ingested chunk through it, so
//! holding it keeps queries and ingests in flight for exactly as long as a
//! test needs, without sleeping and guessing.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Dimension of the toy vectors.
pub const DIM: usize = 16;

#[derive(Default)]
struct State {
    holding: bool,
    /// Requests waiting for a release.
    waiting: usize,
    /// Bodies of every request received.
    bodies: Vec<String>,
}

type Shared = Arc<(Mutex<State>, Condvar)>;

pub struct HeldEmbedder {
    port: u16,
    shared: Shared,
}

impl HeldEmbedder {
    pub fn start() -> HeldEmbedder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared: Shared = Arc::default();
        let state = shared.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let state = state.clone();
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        HeldEmbedder { port, shared }
    }

    /// The variables that point `alayasiki-api` at this server, with a
    /// timeout longer than any hold.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "ALAYASIKI_EMBED_URL",
                format!("http://127.0.0.1:{}/v1/embeddings", self.port),
            ),
            ("ALAYASIKI_EMBED_MODEL", "held-toy".into()),
            ("ALAYASIKI_EMBED_DIM", DIM.to_string()),
            ("ALAYASIKI_EMBED_TIMEOUT_MS", "300000".into()),
        ]
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.0.lock().unwrap()
    }

    /// From now on, requests wait for [`HeldEmbedder::release`].
    pub fn hold(&self) {
        self.lock().holding = true;
    }

    /// Answers every waiting request, and later ones at once.
    pub fn release(&self) {
        self.lock().holding = false;
        self.shared.1.notify_all();
    }

    pub fn waiting(&self) -> usize {
        self.lock().waiting
    }

    /// Waits until `pred` holds of the state, or `d` passes.
    fn wait_until(&self, d: Duration, pred: impl Fn(&State) -> bool) -> bool {
        let deadline = Instant::now() + d;
        let mut state = self.lock();
        while !pred(&state) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = self.shared.1.wait_timeout(state, left).unwrap().0;
        }
        true
    }

    /// Waits until `n` requests are held; false if `d` passes first.
    pub fn wait_for_waiting(&self, n: usize, d: Duration) -> bool {
        self.wait_until(d, |s| s.waiting >= n)
    }

    /// Waits until a held request's body contains `needle`.
    pub fn wait_for_held_text(&self, needle: &str, d: Duration) -> bool {
        self.wait_until(d, |s| {
            s.waiting > 0 && s.bodies.iter().any(|b| b.contains(needle))
        })
    }
}

impl Drop for HeldEmbedder {
    fn drop(&mut self) {
        self.release();
    }
}

fn serve(stream: TcpStream, shared: &Shared) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h == "\r\n" {
                break;
            }
            if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let text = String::from_utf8_lossy(&body).into_owned();
        let request: Value = serde_json::from_str(&text).unwrap();
        {
            let (lock, cv) = &**shared;
            let mut state = lock.lock().unwrap();
            state.bodies.push(text);
            if state.holding {
                state.waiting += 1;
                cv.notify_all();
                while state.holding {
                    state = cv.wait(state).unwrap();
                }
                state.waiting -= 1;
                cv.notify_all();
            }
        }
        let inputs = request["input"].as_array().cloned().unwrap_or_default();
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": toy(t.as_str().unwrap_or(""))}))
            .collect();
        let reply = json!({"object": "list", "data": data}).to_string();
        let sent = write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
            reply.len(),
            reply
        );
        if sent.is_err() {
            return;
        }
    }
}

/// A deterministic toy embedding: each word adds to one coordinate.
fn toy(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIM];
    v[0] = 0.01;
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let h = w
            .to_lowercase()
            .bytes()
            .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
        v[(h as usize) % DIM] += 1.0;
    }
    v
}
