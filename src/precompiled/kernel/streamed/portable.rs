//! Every other build: ordinary stores.

/// No type is streamed in this build.
#[inline]
#[allow(clippy::extra_unused_type_parameters)] // the x86_64 module's signature, which uses it
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
