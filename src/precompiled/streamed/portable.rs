//! Every other build: ordinary stores.

/// No type is streamed in this build.
#[inline]
pub(super) fn streams<Scalar: 'static>() -> bool {
    false
}

/// Copies `values` over `out` (of the same length).
#[inline(always)]
pub(crate) fn store<T: Copy + 'static>(out: &mut [T], values: &[T]) {
    out.copy_from_slice(values);
}

/// Nothing to order: no streaming stores in this build.
#[inline]
pub(crate) fn fence() {}
