//! A per-thread allocation counter that the harness switches on around a single gadget
//! call. The counting global allocator lives in the allocation test binary and reports
//! every allocation here; in other binaries nothing reports and the counts stay zero.
//!
//! Per-thread, because the test harness runs tests on several threads at once.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

/// Starts counting this thread's allocations.
pub fn start() {
    ENABLED.with(|e| e.set(true));
}

/// Stops counting.
pub fn stop() {
    ENABLED.with(|e| e.set(false));
}

/// Clears the count.
pub fn reset() {
    COUNT.with(|c| c.set(0));
}

/// Allocations counted since the last reset.
pub fn count() -> u64 {
    COUNT.with(|c| c.get())
}

fn note_allocation() {
    // `try_with`: allocations during thread teardown must not touch a destroyed slot.
    let _ = ENABLED.try_with(|enabled| {
        if enabled.get() {
            let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        }
    });
}

/// The system allocator, counting allocations and reallocations for the probe.
/// Install it with `#[global_allocator]` in a test binary.
pub struct CountingAllocator;

// SAFETY: every call is forwarded unchanged to `System`, which upholds the GlobalAlloc
// contract; the counter only touches const-initialized thread-locals, which never allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        System.realloc(ptr, layout, new_size)
    }
}
