//! Admission control for the HTTP transport: fixed caps on what the server
//! holds at once, and a per-caller rate limit.
//!
//! Every cap is a [`Gate`] with a fixed capacity. Work is admitted by taking
//! a [`Permit`] *before* anything happens: a request that would exceed a cap
//! is answered at once (429 or 503 with `Retry-After`) and has had no
//! effect. In particular a message posted to an SSE session reserves its
//! place in that session's reply queue and a dispatch slot before it is
//! dispatched, so a saturated server refuses a mutation instead of running
//! it and then having nowhere to put the reply.
//!
//! The rate limit is a token bucket per caller (tenant and subject), at most
//! [`MAX_RATE_BUCKETS`] of them, the least recently used evicted first.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::{self, BURST_ENV, RATE_ENV};
use crate::service::Principal;

/// Open SSE streams; the next `GET /mcp/sse` gets 503 with `Retry-After`.
pub const MAX_SSE_CONNECTIONS: usize = 128;

/// Of those, streams one tenant may hold open; its next gets 429
/// `too_many_streams_for_tenant` with `Retry-After`. Four tenants (at
/// least) share the streams.
pub const MAX_SSE_CONNECTIONS_PER_TENANT: usize = MAX_SSE_CONNECTIONS / 4;

/// Of a tenant's streams, those one caller (tenant and subject) may hold
/// open; its next gets 429 `too_many_streams_for_caller` with
/// `Retry-After`.
pub const MAX_SSE_CONNECTIONS_PER_CALLER: usize = MAX_SSE_CONNECTIONS_PER_TENANT / 4;

/// Replies queued or reserved on one SSE stream; a POST beyond it gets 429.
pub const MAX_QUEUED_REPLIES: usize = 32;

/// Messages and API calls being executed at once, across all callers; one
/// more gets 429 `overloaded`.
pub const MAX_CONCURRENT_DISPATCHES: usize = 32;

/// Of those, dispatches one tenant may hold at once; its next gets 429
/// `too_many_requests_for_tenant`. The other tenants always have a quarter
/// of the dispatches between them.
pub const MAX_DISPATCHES_PER_TENANT: usize = MAX_CONCURRENT_DISPATCHES * 3 / 4;

/// Of a tenant's dispatches, those one caller (tenant and subject) may
/// hold at once; its next gets 429 `too_many_requests_for_caller`.
pub const MAX_DISPATCHES_PER_CALLER: usize = MAX_CONCURRENT_DISPATCHES / 2;

/// Of those, requests that may wait at once for a cluster position
/// (`X-Alayasiki-After`) this node has not applied yet; one more that
/// would have to wait is answered 503 `behind` at once. A wait holds a
/// dispatch worker for up to `CLUSTER_POSITION_WAIT`: without this cap a
/// few callers naming unreached positions could hold every worker.
pub const MAX_POSITION_WAITS: usize = MAX_CONCURRENT_DISPATCHES / 4;

/// Callers tracked by the rate limiter; beyond it the least recently seen
/// caller's bucket is dropped (it starts again with a full burst).
pub const MAX_RATE_BUCKETS: usize = 4096;

/// Requests per second a caller may sustain unless `ALAYASIKI_API_RATE`
/// says otherwise.
pub const DEFAULT_RATE_PER_SEC: f64 = 50.0;

/// Requests a caller may make in a burst unless `ALAYASIKI_API_BURST` says
/// otherwise.
pub const DEFAULT_BURST: u32 = 100;

/// `Retry-After` (seconds) when a cap, not the rate limit, refused a
/// request: caps free up as soon as work finishes.
pub const RETRY_AFTER_SECS: u64 = 1;

/// A counter with a fixed capacity.
pub struct Gate {
    name: &'static str,
    capacity: usize,
    used: AtomicUsize,
}

/// One admitted unit of a [`Gate`]; released on drop.
pub struct Permit {
    gate: Arc<Gate>,
}

impl Gate {
    pub fn new(name: &'static str, capacity: usize) -> Arc<Gate> {
        Arc::new(Gate {
            name,
            capacity,
            used: AtomicUsize::new(0),
        })
    }

    /// Takes a unit if one is free.
    pub fn try_enter(self: &Arc<Gate>) -> Option<Permit> {
        let taken = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.capacity).then_some(n + 1)
            });
        taken.ok().map(|_| Permit { gate: self.clone() })
    }

    pub fn in_use(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Waits until nothing is admitted or `deadline` passes; true if idle.
    pub fn wait_idle(&self, deadline: Instant) -> bool {
        while self.in_use() > 0 {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.gate.used.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A capacity shared between tenants and between callers: in all, per
/// tenant and per caller, so that no token, and no tenant, can take all
/// of it from the others. The SSE streams and the dispatches are each one.
pub struct Shares {
    all: Arc<Gate>,
    per_tenant: usize,
    per_caller: usize,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    /// Tenant → units; caller key → units. An entry goes with its last
    /// unit.
    by_tenant: HashMap<String, usize>,
    by_caller: HashMap<String, usize>,
}

/// Why no unit of a [`Shares`] was admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoShare {
    /// Every unit is taken.
    Full,
    /// The tenant holds its share.
    TenantFull,
    /// The caller holds its share.
    CallerFull,
}

/// Whose a unit of a [`Shares`] is: the tenant and the caller whose
/// shares it counts against.
pub struct Holder {
    pub tenant: String,
    /// See [`caller_key`].
    pub caller: String,
}

impl Holder {
    pub fn of(principal: &Principal) -> Holder {
        let tenant = principal.tenant.name();
        Holder {
            tenant: tenant.to_string(),
            caller: caller_key(tenant, &principal.subject),
        }
    }
}

/// One admitted unit of a [`Shares`]; released on drop.
pub struct SharePermit {
    _all: Permit,
    shares: Arc<Shares>,
    tenant: String,
    caller: String,
}

impl Shares {
    /// `all` units, of which one tenant may hold `per_tenant` and one
    /// caller `per_caller`.
    pub fn new(
        name: &'static str,
        all: usize,
        per_tenant: usize,
        per_caller: usize,
    ) -> Arc<Shares> {
        Arc::new(Shares {
            all: Gate::new(name, all),
            per_tenant,
            per_caller,
            held: Mutex::new(Held::default()),
        })
    }

    /// The SSE streams ([`MAX_SSE_CONNECTIONS`] and its shares).
    pub fn streams() -> Arc<Shares> {
        Shares::new(
            "sse",
            MAX_SSE_CONNECTIONS,
            MAX_SSE_CONNECTIONS_PER_TENANT,
            MAX_SSE_CONNECTIONS_PER_CALLER,
        )
    }

    /// The dispatches ([`MAX_CONCURRENT_DISPATCHES`] and its shares).
    pub fn dispatches() -> Arc<Shares> {
        Shares::new(
            "dispatch",
            MAX_CONCURRENT_DISPATCHES,
            MAX_DISPATCHES_PER_TENANT,
            MAX_DISPATCHES_PER_CALLER,
        )
    }

    /// A unit for `caller` (see [`caller_key`]) of `tenant`, or why not.
    pub fn try_enter(self: &Arc<Self>, tenant: &str, caller: &str) -> Result<SharePermit, NoShare> {
        let mut held = self.lock();
        if held.by_caller.get(caller).copied().unwrap_or(0) >= self.per_caller {
            return Err(NoShare::CallerFull);
        }
        if held.by_tenant.get(tenant).copied().unwrap_or(0) >= self.per_tenant {
            return Err(NoShare::TenantFull);
        }
        let all = self.all.try_enter().ok_or(NoShare::Full)?;
        *held.by_tenant.entry(tenant.to_string()).or_default() += 1;
        *held.by_caller.entry(caller.to_string()).or_default() += 1;
        Ok(SharePermit {
            _all: all,
            shares: self.clone(),
            tenant: tenant.to_string(),
            caller: caller.to_string(),
        })
    }

    pub fn in_use(&self) -> usize {
        self.all.in_use()
    }

    /// Waits until no unit is held; `false` if `deadline` came first.
    pub fn wait_idle(&self, deadline: Instant) -> bool {
        self.all.wait_idle(deadline)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for SharePermit {
    fn drop(&mut self) {
        let mut held = self.shares.lock();
        let held = &mut *held;
        for (map, key) in [
            (&mut held.by_tenant, &self.tenant),
            (&mut held.by_caller, &self.caller),
        ] {
            if let Some(n) = map.get_mut(key) {
                *n -= 1;
                if *n == 0 {
                    map.remove(key);
                }
            }
        }
    }
}

/// Token buckets per caller.
pub struct RateLimiter {
    rate_per_sec: f64,
    burst: f64,
    buckets: Mutex<Buckets>,
}

#[derive(Default)]
struct Buckets {
    /// Caller key → (bucket, last use stamp).
    by_key: HashMap<String, (Bucket, u64)>,
    /// Last use stamp → caller key: the eviction order.
    by_use: BTreeMap<u64, String>,
    stamp: u64,
}

struct Bucket {
    tokens: f64,
    refilled: Instant,
}

impl RateLimiter {
    /// A limiter allowing `rate_per_sec` sustained and `burst` at once.
    pub fn new(rate_per_sec: f64, burst: u32) -> RateLimiter {
        RateLimiter {
            rate_per_sec,
            burst: f64::from(burst.max(1)),
            buckets: Mutex::new(Buckets::default()),
        }
    }

    /// The limiter configured by `ALAYASIKI_API_RATE` and
    /// `ALAYASIKI_API_BURST`.
    pub fn from_env() -> Result<RateLimiter, String> {
        let rate = match config::env(RATE_ENV) {
            None => DEFAULT_RATE_PER_SEC,
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r > 0.0)
                .ok_or_else(|| format!("{RATE_ENV}={v:?} is not a positive number"))?,
        };
        let burst =
            match config::env(BURST_ENV) {
                None => DEFAULT_BURST,
                Some(v) => v.parse::<u32>().ok().filter(|b| *b >= 1).ok_or_else(|| {
                    format!("{BURST_ENV}={v:?} is not a whole number of at least 1")
                })?,
            };
        Ok(RateLimiter::new(rate, burst))
    }

    pub fn rate_per_sec(&self) -> f64 {
        self.rate_per_sec
    }

    pub fn burst(&self) -> u32 {
        self.burst as u32
    }

    /// Takes one token from `caller`'s bucket; `Err` holds how long until
    /// one is available.
    pub fn admit(&self, caller: &str, now: Instant) -> Result<(), Duration> {
        let mut b = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        b.stamp += 1;
        let stamp = b.stamp;
        if let Some((_, old)) = b.by_key.get(caller) {
            let old = *old;
            b.by_use.remove(&old);
        } else {
            if b.by_key.len() >= MAX_RATE_BUCKETS {
                if let Some((_, evicted)) = b.by_use.pop_first() {
                    b.by_key.remove(&evicted);
                }
            }
            let full = Bucket {
                tokens: self.burst,
                refilled: now,
            };
            b.by_key.insert(caller.to_string(), (full, stamp));
        }
        b.by_use.insert(stamp, caller.to_string());
        let (bucket, used) = b.by_key.get_mut(caller).expect("inserted above");
        *used = stamp;
        let elapsed = now.saturating_duration_since(bucket.refilled).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.rate_per_sec).min(self.burst);
        bucket.refilled = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - bucket.tokens) / self.rate_per_sec;
            Err(Duration::from_secs_f64(wait.min(86_400.0)))
        }
    }

    /// Callers currently tracked.
    pub fn tracked(&self) -> usize {
        self.buckets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .by_key
            .len()
    }
}

/// The rate-limit key of a caller: tenant and subject (neither may hold a
/// control character, so NUL separates them unambiguously).
pub fn caller_key(tenant: &str, subject: &str) -> String {
    format!("{tenant}\0{subject}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_admits_exactly_its_capacity() {
        let g = Gate::new("test", 2);
        let a = g.try_enter().unwrap();
        let _b = g.try_enter().unwrap();
        assert!(g.try_enter().is_none());
        drop(a);
        assert!(g.try_enter().is_some());
        assert_eq!(g.in_use(), 1);
    }

    #[test]
    fn streams_are_shared_per_caller_and_per_tenant() {
        let caps = Shares::streams();
        let key = |t: &str, s: &str| caller_key(t, s);
        let mine: Vec<SharePermit> = (0..MAX_SSE_CONNECTIONS_PER_CALLER)
            .map(|_| caps.try_enter("a", &key("a", "me")).unwrap())
            .collect();
        assert_eq!(
            caps.try_enter("a", &key("a", "me")).err(),
            Some(NoShare::CallerFull)
        );
        let tenant: Vec<SharePermit> = (1..MAX_SSE_CONNECTIONS_PER_TENANT
            / MAX_SSE_CONNECTIONS_PER_CALLER)
            .flat_map(|i| {
                let caller = key("a", &format!("other-{i}"));
                let caps = &caps;
                (0..MAX_SSE_CONNECTIONS_PER_CALLER)
                    .map(move |_| caps.try_enter("a", &caller).unwrap())
            })
            .collect();
        assert_eq!(
            caps.try_enter("a", &key("a", "new")).err(),
            Some(NoShare::TenantFull)
        );
        // Another tenant is unaffected; a freed stream is the caller's again.
        assert!(caps.try_enter("b", &key("b", "me")).is_ok());
        drop(mine);
        assert!(caps.try_enter("a", &key("a", "me")).is_ok());
        drop(tenant);
        assert_eq!(caps.in_use(), 0);
        assert!(caps.lock().by_tenant.is_empty() && caps.lock().by_caller.is_empty());
    }

    #[test]
    fn one_tenant_leaves_a_quarter_of_the_dispatches_to_the_others() {
        let d = Shares::dispatches();
        let key = |t: &str, s: &str| caller_key(t, s);
        let first: Vec<SharePermit> = (0..MAX_DISPATCHES_PER_CALLER)
            .map(|_| d.try_enter("a", &key("a", "x")).unwrap())
            .collect();
        assert_eq!(
            d.try_enter("a", &key("a", "x")).err(),
            Some(NoShare::CallerFull)
        );
        let second: Vec<SharePermit> = (MAX_DISPATCHES_PER_CALLER..MAX_DISPATCHES_PER_TENANT)
            .map(|_| d.try_enter("a", &key("a", "y")).unwrap())
            .collect();
        assert_eq!(
            d.try_enter("a", &key("a", "z")).err(),
            Some(NoShare::TenantFull)
        );
        let others: Vec<SharePermit> = (MAX_DISPATCHES_PER_TENANT..MAX_CONCURRENT_DISPATCHES)
            .map(|i| d.try_enter("b", &key("b", &i.to_string())).unwrap())
            .collect();
        assert_eq!(d.try_enter("c", &key("c", "w")).err(), Some(NoShare::Full));
        drop((first, second, others));
        assert_eq!(d.in_use(), 0);
    }

    #[test]
    fn bucket_allows_the_burst_then_refuses_until_refilled() {
        let r = RateLimiter::new(2.0, 3);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(r.admit("a", t0).is_ok());
        }
        let wait = r.admit("a", t0).unwrap_err();
        assert!(wait <= Duration::from_millis(500), "{wait:?}");
        // Other callers are not affected.
        assert!(r.admit("b", t0).is_ok());
        // Half a second refills one token at 2/s.
        assert!(r.admit("a", t0 + Duration::from_millis(500)).is_ok());
        assert!(r.admit("a", t0 + Duration::from_millis(500)).is_err());
    }

    #[test]
    fn buckets_are_capped_and_the_least_recently_used_is_evicted() {
        let r = RateLimiter::new(0.001, 1);
        let t0 = Instant::now();
        assert!(r.admit("first", t0).is_ok());
        assert!(r.admit("first", t0).is_err());
        for i in 0..MAX_RATE_BUCKETS {
            let _ = r.admit(&format!("caller-{i}"), t0);
        }
        assert_eq!(r.tracked(), MAX_RATE_BUCKETS);
        // "first" was the least recently used, so it was evicted and starts
        // again with a full bucket.
        assert!(r.admit("first", t0).is_ok());
        assert_eq!(r.tracked(), MAX_RATE_BUCKETS);
        // A recently used caller was kept (its bucket is still empty).
        let last = format!("caller-{}", MAX_RATE_BUCKETS - 1);
        assert!(r.admit(&last, t0).is_err());
    }
}
