//! The prefetch instruction, chosen at compile time; the only `unsafe` in the crate.
//!
//! A prefetch is a hint: it never faults and never changes memory, whatever the address.
//! Still, callers pass a reference, so the address is always a live value.

/// Whether [`prefetch_read`] issues a real instruction on this build.
pub(super) const PREFETCH_AVAILABLE: bool = cfg!(all(
    feature = "prefetch",
    any(
        all(target_arch = "x86_64", target_feature = "sse"),
        target_arch = "aarch64"
    )
));

/// Asks the CPU to bring `value` into all cache levels ahead of a read.
#[cfg(all(feature = "prefetch", target_arch = "x86_64", target_feature = "sse"))]
#[inline(always)]
pub(super) fn prefetch_read<T>(value: &T) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: `_mm_prefetch` needs SSE, which the cfg above guarantees; the pointer comes
    // from a live reference, and a prefetch neither faults nor writes.
    unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>()) }
}

/// Asks the CPU to bring `value` into L1 ahead of a read.
#[cfg(all(feature = "prefetch", target_arch = "aarch64"))]
#[inline(always)]
pub(super) fn prefetch_read<T>(value: &T) {
    // SAFETY: `prfm` is part of the base aarch64 ISA, takes any address without faulting,
    // reads no register but the address and writes no memory or flags.
    unsafe {
        core::arch::asm!(
            "prfm pldl1keep, [{address}]",
            address = in(reg) (value as *const T),
            options(nostack, readonly, preserves_flags)
        )
    }
}

/// Portable fallback: no instruction.
#[cfg(not(all(
    feature = "prefetch",
    any(
        all(target_arch = "x86_64", target_feature = "sse"),
        target_arch = "aarch64"
    )
)))]
#[inline(always)]
pub(super) fn prefetch_read<T>(_value: &T) {}
