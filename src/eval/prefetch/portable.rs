//! Every other build: no instruction.

pub(crate) const ISSUES_PREFETCH: bool = false;

/// Does nothing: this build has no prefetch instruction (or the `prefetch` feature is off).
#[inline(always)]
pub(crate) fn prefetch_read<T>(_value: &T) {}
