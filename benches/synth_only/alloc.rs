//! The bench's global allocator: jemalloc, or the system allocator when built with
//! `--features system-alloc`, wrapped to count allocation calls and bytes.
//!
//! The choice is made at compile time because a block must be freed by the allocator that
//! made it, and the runtime allocates before `main` could read a setting.
//! The counters are process-wide atomics: they count the bench, not a pool (pools stay lock-
//! and atomic-free), and the bench synthesizes on one thread.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[cfg(feature = "system-alloc")]
type Inner = std::alloc::System;
#[cfg(not(feature = "system-alloc"))]
type Inner = tikv_jemallocator::Jemalloc;

#[cfg(feature = "system-alloc")]
const INNER: Inner = std::alloc::System;
#[cfg(not(feature = "system-alloc"))]
const INNER: Inner = tikv_jemallocator::Jemalloc;

/// The allocator in use, for the report.
pub const NAME: &str = if cfg!(feature = "system-alloc") {
    "system"
} else {
    "jemalloc"
};

static CALLS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

/// `(calls, bytes)` allocated so far (reallocations count as calls, with their new size).
pub fn totals() -> (u64, u64) {
    (CALLS.load(Relaxed), BYTES.load(Relaxed))
}

/// The counting allocator.
pub struct Counting;

// SAFETY: every call is forwarded unchanged to one allocator fixed at compile time; the
// counters are plain atomics and never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        CALLS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        INNER.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        INNER.dealloc(ptr, layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        CALLS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        INNER.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        CALLS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new_size as u64, Relaxed);
        INNER.realloc(ptr, layout, new_size)
    }
}
