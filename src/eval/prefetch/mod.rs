//! The prefetch hint, one module per architecture chosen once here at compile time, with a
//! portable fallback behind the same function. The architecture modules are among the few
//! allowed `unsafe` code (docs/architecture.md lists them; the crate denies it elsewhere).
//!
//! A prefetch is a hint: it never faults and never changes memory, whatever the address.
//! Callers still pass a reference, so the address is always a live value.

#[cfg(all(feature = "prefetch", target_arch = "x86_64", target_feature = "sse"))]
#[allow(unsafe_code)]
#[path = "x86_64.rs"]
mod arch;

#[cfg(all(feature = "prefetch", target_arch = "aarch64"))]
#[allow(unsafe_code)]
#[path = "aarch64.rs"]
mod arch;

#[cfg(not(all(
    feature = "prefetch",
    any(
        all(target_arch = "x86_64", target_feature = "sse"),
        target_arch = "aarch64"
    )
)))]
#[path = "portable.rs"]
mod arch;

pub(crate) use arch::prefetch_read;

/// Whether [`prefetch_read`] issues a real instruction on this build.
pub(crate) const PREFETCH_AVAILABLE: bool = arch::ISSUES_PREFETCH;
