//! Giving freed heap memory back to the system once the server is idle.
//!
//! A burst of large requests (several 4 MiB ingests at once, each parsed
//! and chunked on its own thread) leaves the allocator holding the memory
//! they freed: glibc keeps it in per-thread arenas, so the resident size
//! stays at the burst's peak long after the work is done. [`IdleRelease`]
//! hands it back once nothing has run for [`RELEASE_AFTER_IDLE`]: one
//! `malloc_trim` per quiet period, never while work runs (trimming walks
//! the heap under the allocator's locks).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long nothing must have run before freed memory is given back.
pub const RELEASE_AFTER_IDLE: Duration = Duration::from_secs(2);

/// Returns the allocator's free memory to the system where the allocator
/// allows it (glibc); elsewhere a no-op (other allocators return it as
/// they free).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: malloc_trim(3) only returns unused pages of the heap and
        // its arenas to the system; it takes the allocator's own locks.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Tracks whether work ran since memory was last given back, and when it
/// last ended.
#[derive(Default)]
pub struct IdleRelease {
    pending: AtomicBool,
    last_work: Mutex<Option<Instant>>,
}

impl IdleRelease {
    /// A unit of work just ended.
    pub fn work_ended(&self) {
        *self.last_work.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        self.pending.store(true, Ordering::Release);
    }

    /// Called now and then by an idle thread: gives memory back if work ran
    /// since the last time, `idle` says none is running now, and none has
    /// ended for [`RELEASE_AFTER_IDLE`]. Whether it did.
    pub fn tick(&self, idle: bool) -> bool {
        if !idle || !self.pending.load(Ordering::Acquire) {
            return false;
        }
        let quiet = self
            .last_work
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none_or(|t| t.elapsed() >= RELEASE_AFTER_IDLE);
        if !quiet || !self.pending.swap(false, Ordering::AcqRel) {
            return false;
        }
        release_free_memory();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_given_back_once_per_quiet_period_and_never_while_busy() {
        let r = IdleRelease::default();
        assert!(!r.tick(true), "nothing ran yet");
        r.work_ended();
        assert!(!r.tick(true), "not quiet long enough");
        *r.last_work.lock().unwrap() = Some(Instant::now() - RELEASE_AFTER_IDLE);
        assert!(!r.tick(false), "work is running");
        assert!(r.tick(true));
        assert!(!r.tick(true), "once per quiet period");
    }
}
