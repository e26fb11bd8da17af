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

/// Writes `values` into slots not written yet (storage a caller owns).
#[inline(always)]
pub(crate) fn store_uninit<T: Copy + 'static>(out: &mut [std::mem::MaybeUninit<T>], values: &[T]) {
    assert_eq!(out.len(), values.len());
    for (slot, value) in out.iter_mut().zip(values) {
        slot.write(*value);
    }
}

/// Nothing to order: no streaming stores in this build.
#[inline]
pub(crate) fn fence() {}
