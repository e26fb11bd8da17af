//! The counting global allocator of the bench, the runner and the budgets test: the system
//! allocator, which the provers users run link (filcrypto sets no allocator of its own), or
//! jemalloc with `--features jemalloc`, wrapped to count allocation calls and bytes, and the
//! live heap with its peak.
//!
//! The choice is made at compile time because a block must be freed by the allocator that
//! made it, and the runtime allocates before `main` could read a setting. The counters are
//! process-wide atomics, so they count every thread of the measured work (rayon's workers
//! included), not one pool's (pools stay lock- and atomic-free).

#![allow(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

// Both are unit structs: the name is the allocator's type and its one value.
#[cfg(not(feature = "jemalloc"))]
use std::alloc::System as Inner;
#[cfg(feature = "jemalloc")]
use tikv_jemallocator::Jemalloc as Inner;

/// The allocator in use, for the report.
pub const NAME: &str = if cfg!(feature = "jemalloc") {
    "jemalloc"
} else {
    "system"
};

static CALLS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);

/// `(calls, bytes)` allocated so far by every thread (reallocations count as calls, with
/// their new size).
pub fn totals() -> (u64, u64) {
    (CALLS.load(Relaxed), BYTES.load(Relaxed))
}

/// Bytes allocated and not yet freed, by every thread.
pub fn live() -> u64 {
    LIVE.load(Relaxed)
}

/// Runs `work` and returns its result with the heap's peak during it, in bytes above what
/// was live when it started.
pub fn peak_during<T>(work: impl FnOnce() -> T) -> (T, u64) {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let result = work();
    (result, PEAK.load(Relaxed).saturating_sub(base))
}

fn count(bytes: usize) {
    CALLS.fetch_add(1, Relaxed);
    BYTES.fetch_add(bytes as u64, Relaxed);
    grow(bytes as u64);
}

fn grow(bytes: u64) {
    let live = LIVE.fetch_add(bytes, Relaxed) + bytes;
    PEAK.fetch_max(live, Relaxed);
}

/// The counting allocator; install it with `#[global_allocator]`.
pub struct Counting;

// SAFETY: every call is forwarded unchanged to one allocator fixed at compile time, so the
// `GlobalAlloc` contract holds exactly when the inner allocator's does; the counters are
// plain atomics and never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's guarantees for `alloc` are passed on unchanged.
        unsafe { Inner.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as u64, Relaxed);
        // SAFETY: `ptr` was allocated by `Inner` with `layout` (every allocation goes
        // through this wrapper), as the caller guarantees for this allocator.
        unsafe { Inner.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's guarantees for `alloc_zeroed` are passed on unchanged.
        unsafe { Inner.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        CALLS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new_size as u64, Relaxed);
        // Both blocks may be live during the move: count the new one before the old goes.
        grow(new_size as u64);
        LIVE.fetch_sub(layout.size() as u64, Relaxed);
        // SAFETY: `ptr` came from `Inner` with `layout`, and the caller's guarantees for
        // `realloc` are passed on unchanged.
        unsafe { Inner.realloc(ptr, layout, new_size) }
    }
}
