//! Verifying keys from a JSON Web Key Set (RFC 7517): a local file
//! (`ALAYASIKI_JWKS_FILE`) or an authorization server's `jwks_uri`
//! (`ALAYASIKI_JWKS_URL`).
//!
//! The set is loaded at start-up (a server that cannot load it does not
//! start), kept in memory, and loaded again:
//! - when a token names a key (`kid`) the set lacks, or no key of the
//!   token's algorithm is in it: so a key the issuer has just rotated in is
//!   accepted, and one it has removed is refused, after the reload;
//! - when the set is older than [`JWKS_MAX_AGE`], so removed keys go away
//!   even if no token names a new one.
//!
//! Reloads are bounded: at most one per [`JWKS_MIN_REFRESH_INTERVAL`]
//! (besides the load at start-up), however many tokens name unknown keys,
//! so forged `kid`s cannot make the server hammer the issuer. One request
//! reloads; others needing the new set wait for it, the rest keep using
//! the current one. A failed reload keeps the current set (and is
//! logged). A fetch reads at most [`JWKS_MAX_BYTES`] within
//! [`JWKS_FETCH_TIMEOUT`], follows no redirect, and needs `https` (plain
//! `http` only to a loopback host).
//!
//! Keys: `RSA` (RS256, 2048 to 4096 bits), `EC` P-256 (ES256) and `OKP`
//! Ed25519 (EdDSA) signing keys, validated strictly by jwt-simple (a key's
//! `alg`, `use` and `key_ops` must fit; a key with private members is
//! refused). Keys of other types or algorithms are skipped, at most
//! [`JWKS_MAX_KEYS`] are kept. Errors name the source for the operator's
//! log only; clients only ever learn that a token's key is not known.

use jwt_simple::prelude::*;
use serde_json::Value;
use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::auth::VerifyingKey;

/// Largest JWKS document read (bytes); a longer one is refused.
pub const JWKS_MAX_BYTES: u64 = 128 * 1024;

/// Keys kept from one JWKS; a token without `kid` may be tried against
/// each key of its algorithm, so this bounds the work one token causes.
pub const JWKS_MAX_KEYS: usize = 32;

/// The whole fetch of a JWKS URL: connecting, sending, reading the body.
pub const JWKS_FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Least time between two reloads of the JWKS (the load at start-up
/// aside): tokens naming unknown keys cause at most one reload per
/// interval.
pub const JWKS_MIN_REFRESH_INTERVAL: Duration = Duration::from_secs(30);

/// Age after which the JWKS is reloaded at its next use (within the
/// bound above), so keys removed by the issuer are dropped.
pub const JWKS_MAX_AGE: Duration = Duration::from_secs(600);

/// The algorithms a JWKS key may verify.
pub const JWKS_ALGORITHMS: [&str; 3] = ["RS256", "ES256", "EdDSA"];

/// Members dropped before a key is parsed: certificates and their
/// thumbprints are not used (the key itself is), and a certificate chain
/// could exceed jwt-simple's bound on one JWK.
const IGNORED_MEMBERS: [&str; 4] = ["x5c", "x5u", "x5t", "x5t#S256"];

/// Members only private keys have: a JWKS publishing one is a leak, and
/// the key is refused.
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// One usable key of a set.
pub struct Jwk {
    pub kid: Option<String>,
    pub key: VerifyingKey,
}

/// The usable keys of one JWKS document.
#[derive(Default)]
pub struct KeySet {
    keys: Vec<Jwk>,
}

impl KeySet {
    /// Parses a JWKS document (`{"keys": [...]}`). Keys this server cannot
    /// use are skipped and counted; a document that is not a JWKS is an
    /// error.
    pub fn parse(text: &str) -> Result<(KeySet, usize), String> {
        let doc: Value =
            serde_json::from_str(text).map_err(|_| "the JWKS is not JSON".to_string())?;
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| "the JWKS has no \"keys\" array".to_string())?;
        let mut set = KeySet::default();
        let mut skipped = 0;
        for key in keys {
            match parse_key(key) {
                Some(jwk) if set.keys.len() < JWKS_MAX_KEYS => set.keys.push(jwk),
                _ => skipped += 1,
            }
        }
        Ok((set, skipped))
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys that may have signed a token with `alg` and `kid`: those
    /// of that algorithm with that `kid`, or, for a token without `kid`,
    /// all of that algorithm.
    pub fn candidates<'a>(
        &'a self,
        alg: &'a str,
        kid: Option<&'a str>,
    ) -> impl Iterator<Item = &'a VerifyingKey> + 'a {
        self.keys
            .iter()
            .filter(move |k| k.key.algorithm() == alg)
            .filter(move |k| kid.is_none() || k.kid.as_deref() == kid)
            .map(|k| &k.key)
    }
}

/// One key of a JWKS, or `None` if this server cannot use it.
fn parse_key(key: &Value) -> Option<Jwk> {
    let mut members = key.as_object()?.clone();
    if PRIVATE_MEMBERS.iter().any(|m| members.contains_key(*m)) {
        log::warn!("the JWKS holds a private or symmetric key; it is not used");
        return None;
    }
    for m in IGNORED_MEMBERS {
        members.remove(m);
    }
    let kid = match members.get("kid") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return None,
    };
    let text = Value::Object(members.clone()).to_string();
    let str_of = |name: &str| members.get(name).and_then(Value::as_str);
    let key = match (str_of("kty")?, str_of("crv")) {
        ("RSA", _) => VerifyingKey::Rs256(RS256PublicKey::from_jwk(&text).ok()?),
        ("EC", Some("P-256")) => VerifyingKey::Es256(ES256PublicKey::from_jwk(&text).ok()?),
        ("OKP", Some("Ed25519")) => VerifyingKey::EdDsa(Ed25519PublicKey::from_jwk(&text).ok()?),
        _ => return None,
    };
    Some(Jwk { kid, key })
}

/// Where the set comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    File(PathBuf),
    Url(String),
}

impl Source {
    /// A JWKS URL: `https`, or `http` to a loopback host; no user
    /// information (credentials do not belong in a URL that is logged).
    pub fn url(var: &str, url: &str) -> Result<Source, String> {
        check_issuer_url(var, url)?;
        Ok(Source::Url(url.to_string()))
    }

    /// For the operator's log.
    pub fn describe(&self) -> String {
        match self {
            Source::File(p) => format!("file {}", p.display()),
            Source::Url(u) => format!("URL {u}"),
        }
    }
}

/// Checks that `url` (the value of `var`) is an `https` URL, or `http` to
/// `localhost`, `127.0.0.1` or `[::1]`, without fragment, user information,
/// or characters that would need quoting.
pub fn check_issuer_url(var: &str, url: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("{var}: {url:?} {why}"));
    if url
        .chars()
        .any(|c| !c.is_ascii_graphic() || c == '"' || c == '\\')
    {
        return bad("holds spaces, quotes or non-ASCII characters");
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return bad("is not an absolute URL");
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') {
        return bad("needs a host (and no user information)");
    }
    if url.contains('#') {
        return bad("has a fragment");
    }
    let host = match authority.rfind(']') {
        Some(close) => &authority[..=close],
        None => authority.split(':').next().unwrap_or(""),
    }
    .to_ascii_lowercase();
    match scheme.to_ascii_lowercase().as_str() {
        "https" => Ok(()),
        "http" if ["localhost", "127.0.0.1", "[::1]"].contains(&host.as_str()) => Ok(()),
        "http" => bad("must use https (plain http only to localhost)"),
        _ => bad("is not an http(s) URL"),
    }
}

struct State {
    keys: Arc<KeySet>,
    loaded_at: Instant,
    /// When the last reload was started (not the load at start-up).
    last_reload: Option<Instant>,
    reloading: bool,
}

/// A JWKS kept up to date (see the module documentation).
pub struct Jwks {
    source: Source,
    agent: ureq::Agent,
    state: Mutex<State>,
    reloaded: Condvar,
}

impl Jwks {
    /// Loads the set from `source`; an error (for the operator) if it
    /// cannot be read or holds no usable key.
    pub fn load(source: Source) -> Result<Jwks, String> {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(JWKS_FETCH_TIMEOUT))
            .http_status_as_error(false)
            .max_redirects(0)
            .build()
            .into();
        let mut jwks = Jwks {
            source,
            agent,
            state: Mutex::new(State {
                keys: Arc::default(),
                loaded_at: Instant::now(),
                last_reload: None,
                reloading: false,
            }),
            reloaded: Condvar::new(),
        };
        let keys = jwks
            .read()
            .map_err(|e| format!("cannot load the JWKS from {}: {e}", jwks.source.describe()))?;
        if keys.is_empty() {
            return Err(format!(
                "the JWKS from {} holds no usable key (RS256, ES256 or EdDSA signing keys)",
                jwks.source.describe()
            ));
        }
        jwks.state.get_mut().unwrap_or_else(|e| e.into_inner()).keys = Arc::new(keys);
        Ok(jwks)
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current keys; a set older than [`JWKS_MAX_AGE`] is reloaded
    /// first when the rate bound allows (and no other request is already
    /// reloading it).
    pub fn keys(&self) -> Arc<KeySet> {
        let state = self.lock();
        let current = state.keys.clone();
        if state.reloading || state.loaded_at.elapsed() < JWKS_MAX_AGE {
            return current;
        }
        drop(state);
        self.reloaded_since(&current).unwrap_or(current)
    }

    /// A newer set than `seen` (which lacked a token's key): one another
    /// request loaded meanwhile, or one loaded now if the rate bound
    /// allows. `None` if there is none.
    pub fn reloaded_since(&self, seen: &Arc<KeySet>) -> Option<Arc<KeySet>> {
        let mut state = self.lock();
        let deadline = Instant::now() + JWKS_FETCH_TIMEOUT + Duration::from_secs(1);
        while state.reloading {
            let left = deadline.checked_duration_since(Instant::now())?;
            state = self
                .reloaded
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        if !Arc::ptr_eq(&state.keys, seen) {
            return Some(state.keys.clone());
        }
        let now = Instant::now();
        if state
            .last_reload
            .is_some_and(|t| now.duration_since(t) < JWKS_MIN_REFRESH_INTERVAL)
        {
            return None;
        }
        state.reloading = true;
        state.last_reload = Some(now);
        drop(state);
        // Clears `reloading` and wakes the waiters even if reading panics.
        struct Done<'a>(&'a Jwks);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.lock().reloading = false;
                self.0.reloaded.notify_all();
            }
        }
        let done = Done(self);
        let read = self.read();
        let mut state = self.lock();
        let fresh = match read {
            Ok(keys) => {
                log::info!(
                    "reloaded the JWKS from {}: {} usable key(s)",
                    self.source.describe(),
                    keys.len()
                );
                state.keys = Arc::new(keys);
                state.loaded_at = Instant::now();
                Some(state.keys.clone())
            }
            Err(e) => {
                log::warn!(
                    "cannot reload the JWKS from {} (keeping the {} key(s) held): {e}",
                    self.source.describe(),
                    state.keys.len()
                );
                None
            }
        };
        drop(state);
        drop(done);
        fresh
    }

    /// Reads and parses the set (errors for the log).
    fn read(&self) -> Result<KeySet, String> {
        let text = match &self.source {
            Source::File(path) => read_file(path)?,
            Source::Url(url) => self.fetch(url)?,
        };
        let (keys, skipped) = KeySet::parse(&text)?;
        if skipped > 0 {
            log::warn!(
                "the JWKS from {} has {skipped} key(s) this server does not use \
                 (not RS256, ES256 or EdDSA signing keys, malformed, or beyond {JWKS_MAX_KEYS})",
                self.source.describe()
            );
        }
        Ok(keys)
    }

    fn fetch(&self, url: &str) -> Result<String, String> {
        let mut response = self
            .agent
            .get(url)
            .header("Accept", "application/jwk-set+json, application/json")
            .call()
            .map_err(|e| fetch_error(&e))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(format!("HTTP status {status}"));
        }
        response
            .body_mut()
            .with_config()
            .limit(JWKS_MAX_BYTES)
            .read_to_string()
            .map_err(|e| fetch_error(&e))
    }
}

fn fetch_error(e: &ureq::Error) -> String {
    match e {
        ureq::Error::BodyExceedsLimit(_) => {
            format!("the response is longer than {JWKS_MAX_BYTES} bytes (JWKS_MAX_BYTES)")
        }
        e => crate::model_endpoint::excerpt(&e.to_string()),
    }
}

fn read_file(path: &PathBuf) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(JWKS_MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > JWKS_MAX_BYTES {
        return Err(format!(
            "the file is longer than {JWKS_MAX_BYTES} bytes (JWKS_MAX_BYTES)"
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(keys: &[String]) -> String {
        format!("{{\"keys\": [{}]}}", keys.join(","))
    }

    #[test]
    fn usable_keys_are_kept_and_others_skipped() {
        let rsa = RS256KeyPair::generate(2048).unwrap().with_key_id("r1");
        let ec = ES256KeyPair::generate().with_key_id("e1");
        let ed = Ed25519KeyPair::generate().with_key_id("d1");
        let keys = [
            rsa.public_key().to_jwk(),
            ec.public_key().to_jwk(),
            ed.public_key().to_jwk(),
            // A private key, a secret, an unknown type, a key for encryption.
            ec.to_jwk(),
            r#"{"kty":"oct","k":"c2VjcmV0"}"#.to_string(),
            r#"{"kty":"XYZ","kid":"x"}"#.to_string(),
            ec.public_key().to_jwk().replace("\"sig\"", "\"enc\""),
            "42".to_string(),
        ];
        let (set, skipped) = KeySet::parse(&doc(&keys)).unwrap();
        assert_eq!((set.len(), skipped), (3, 5));
        assert_eq!(set.candidates("RS256", Some("r1")).count(), 1);
        assert_eq!(set.candidates("RS256", Some("e1")).count(), 0);
        assert_eq!(set.candidates("ES256", None).count(), 1);
        assert_eq!(set.candidates("EdDSA", Some("d1")).count(), 1);
        assert!(KeySet::parse("[]").is_err());
        assert!(KeySet::parse("not json").is_err());
    }

    #[test]
    fn certificates_are_ignored_and_keys_are_bounded() {
        let ec = ES256KeyPair::generate();
        let mut key: Value = serde_json::from_str(&ec.public_key().to_jwk()).unwrap();
        key["x5c"] = Value::from(vec!["A".repeat(20_000)]);
        let keys: Vec<String> = (0..JWKS_MAX_KEYS + 3).map(|_| key.to_string()).collect();
        let (set, skipped) = KeySet::parse(&doc(&keys)).unwrap();
        assert_eq!((set.len(), skipped), (JWKS_MAX_KEYS, 3));
    }

    #[test]
    fn issuer_urls_need_https_unless_loopback() {
        let ok = |u: &str| check_issuer_url("V", u).is_ok();
        assert!(ok("https://auth.example/.well-known/jwks.json"));
        assert!(ok("http://127.0.0.1:9000/jwks"));
        assert!(ok("http://localhost/jwks"));
        assert!(ok("http://[::1]:80/jwks"));
        assert!(!ok("http://auth.example/jwks"));
        assert!(!ok("http://localhost.evil.example/jwks"));
        assert!(!ok("https://user:pw@auth.example/jwks"));
        assert!(!ok("https://auth.example/jwks#x"));
        assert!(!ok("ftp://auth.example/jwks"));
        assert!(!ok("auth.example/jwks"));
        assert!(!ok("https://auth.example/a b"));
        assert!(!ok("https:///jwks"));
    }

    #[test]
    fn a_file_source_reloads_at_most_once_per_interval() {
        let dir = std::env::temp_dir().join(format!("alayasiki-jwks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("jwks.json");
        let a = ES256KeyPair::generate().with_key_id("a");
        let b = ES256KeyPair::generate().with_key_id("b");
        std::fs::write(&path, doc(&[a.public_key().to_jwk()])).unwrap();
        let jwks = Jwks::load(Source::File(path.clone())).unwrap();
        let first = jwks.keys();
        assert_eq!(first.candidates("ES256", Some("a")).count(), 1);
        std::fs::write(&path, doc(&[b.public_key().to_jwk()])).unwrap();
        // The first reload is allowed at once, the next not within the interval.
        let second = jwks.reloaded_since(&first).expect("a reload");
        assert_eq!(second.candidates("ES256", Some("b")).count(), 1);
        assert_eq!(second.candidates("ES256", Some("a")).count(), 0);
        std::fs::write(&path, doc(&[a.public_key().to_jwk()])).unwrap();
        assert!(jwks.reloaded_since(&second).is_none());
        // A caller holding an older set gets the newer one without a reload.
        assert!(Arc::ptr_eq(&jwks.reloaded_since(&first).unwrap(), &second));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_empty_or_unreadable_set_stops_the_start() {
        let missing = Jwks::load(Source::File("/nonexistent/jwks.json".into()));
        assert!(missing.is_err());
        let dir = std::env::temp_dir().join(format!("alayasiki-jwks-e-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("jwks.json");
        std::fs::write(&path, r#"{"keys": []}"#).unwrap();
        let err = Jwks::load(Source::File(path)).err().unwrap();
        assert!(err.contains("no usable key"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
