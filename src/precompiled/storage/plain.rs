//! The types a recording file's arrays are made of: plain integers and records of them,
//! every bit pattern a valid value, so whatever a file holds is read as some value, never
//! as undefined behaviour; and their bytes, as the file holds them.

/// A type whose every bit pattern is a valid value, with no padding: what may be read in
/// place from a file.
///
/// # Safety
/// Implement only for types of integers (and arrays or `#[repr(C)]` records of them
/// without padding) whose alignment is at most 8.
pub(crate) unsafe trait Plain: Copy + Default + Send + Sync + 'static {}

// SAFETY: integers have no invalid bit patterns and no padding.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u16 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: as above (usize is 8 bytes wherever files are mapped: see `mapping.rs`).
unsafe impl Plain for usize {}
// SAFETY: an array of integers has no padding and no invalid bit patterns.
unsafe impl Plain for [u32; 2] {}

/// The bytes of `items`, as a little-endian machine holds them (the file format's order).
pub(crate) fn as_bytes<T: Plain>(items: &[T]) -> &[u8] {
    // SAFETY: `T: Plain` has no padding, so every byte of the slice is initialized; the
    // bytes live as long as `items`, read-only.
    unsafe { std::slice::from_raw_parts(items.as_ptr().cast::<u8>(), std::mem::size_of_val(items)) }
}

/// The bytes of `items`, to be overwritten.
pub(crate) fn as_bytes_mut<T: Plain>(items: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; and since every bit pattern is a valid `T`, any bytes
    // written through the view leave valid values.
    unsafe {
        std::slice::from_raw_parts_mut(
            items.as_mut_ptr().cast::<u8>(),
            std::mem::size_of_val(items),
        )
    }
}
