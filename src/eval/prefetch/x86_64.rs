//! x86_64 with SSE: `_mm_prefetch` into all cache levels.

pub(crate) const ISSUES_PREFETCH: bool = true;

/// Asks the CPU to bring `value` into all cache levels ahead of a read.
#[inline(always)]
pub(crate) fn prefetch_read<T>(value: &T) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: `_mm_prefetch` needs SSE, which the cfg choosing this module guarantees; the
    // pointer comes from a live reference, and a prefetch neither faults nor writes.
    unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>()) }
}
