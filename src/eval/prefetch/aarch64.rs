//! aarch64: `prfm pldl1keep`.

pub(crate) const ISSUES_PREFETCH: bool = true;

/// Asks the CPU to bring `value` into L1 ahead of a read.
#[inline(always)]
pub(crate) fn prefetch_read<T>(value: &T) {
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
