//! x86_64, where the scalars are blstrs': 16-byte streaming stores (`movntdq`, SSE2, in
//! every x86_64 CPU).

use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
use std::mem::MaybeUninit;

use crate::lanes::is_blstrs;

// A blstrs scalar is its four Montgomery limbs and nothing else (`#[repr(transparent)]`
// over blst's `#[repr(C)]` `blst_fr { l: [u64; 4] }`): two 16-byte words, no padding.
const _: () = assert!(std::mem::size_of::<blstrs::Scalar>() == 32);

/// Only blstrs' scalars, whose bytes are all data, are streamed.
#[inline]
pub(super) fn streams<Scalar: 'static>() -> bool {
    is_blstrs::<Scalar>()
}

/// Writes `values` over `out` (of the same length) with streaming stores where `out` is
/// blstrs' scalars on a 16-byte boundary, else copies them. Call [`fence`] before another
/// thread may read what was written.
#[inline(always)]
pub(crate) fn store<T: Copy + 'static>(out: &mut [T], values: &[T]) {
    assert_eq!(out.len(), values.len());
    if !streamed_to(out.as_mut_ptr().cast(), values) {
        out.copy_from_slice(values);
    }
}

/// [`store`] into slots not written yet (storage a caller owns).
#[inline(always)]
pub(crate) fn store_uninit<T: Copy + 'static>(out: &mut [MaybeUninit<T>], values: &[T]) {
    assert_eq!(out.len(), values.len());
    if !streamed_to(out.as_mut_ptr().cast(), values) {
        for (slot, value) in out.iter_mut().zip(values) {
            slot.write(*value);
        }
    }
}

/// Writes `values` to `to`, which the caller has as a slice of as many `T` (checked by
/// `store` and `store_uninit`), with streaming stores, where `T` is blstrs' scalar and `to`
/// on a 16-byte boundary; otherwise writes nothing and says so.
#[inline(always)]
fn streamed_to<T: Copy + 'static>(to: *mut __m128i, values: &[T]) -> bool {
    let from = values.as_ptr().cast::<__m128i>();
    if !is_blstrs::<T>() || !to.is_aligned() {
        return false;
    }
    let words = std::mem::size_of_val(values) / 16;
    for word in 0..words {
        // SAFETY: `T` is blstrs' scalar (checked above), 32 bytes of plain limbs, so
        // `values` is `words` whole 16-byte words of initialized integers and `to` (a slice
        // of as many `T`, its callers' argument) has room for them; the unaligned load
        // reads within `values`, and the store writes within `to` (checked to be 16-byte
        // aligned, which `movntdq` needs) without reading it; SSE2 is part of x86_64.
        unsafe { _mm_stream_si128(to.add(word), _mm_loadu_si128(from.add(word))) };
    }
    true
}

/// Orders this thread's streaming stores before its later stores, so a thread that sees
/// the task finished sees the values.
#[inline]
pub(crate) fn fence() {
    // SAFETY: `sfence` (SSE, part of x86_64) only orders stores.
    unsafe { _mm_sfence() }
}
