//! The arrays a recording is made of, held in memory or read in place from a mapped file:
//! either way, evaluation sees a slice.
//!
//! A recording built in the process owns its arrays; one opened from a file
//! ([`crate::precompiled::Recording::map_unverified`]) reads them where the file's pages
//! lie, shared by every process that maps the file. Only [`Plain`] types are read in place.
//!
//! An array keeps its slice's address and length beside what owns the elements, so reading
//! it is the same load whoever owns them: the kernel takes these slices per row, and a
//! branch on the owner there cost evaluation about a tenth more instructions (callgrind,
//! the bench's `post`).

use std::ops::Deref;
use std::ptr::NonNull;

#[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
use crate::precompiled::storage::mapping::Stretch;
use crate::precompiled::storage::plain::Plain;

/// Who owns an array's elements.
enum Owner<T: Plain> {
    Vector(Vec<T>),
    #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
    Mapping(Stretch<T>),
}

/// An array of `T`: owned, or a stretch of a mapped file.
pub(crate) struct Words<T: Plain> {
    /// The first element and the count: always those of `owner`'s elements.
    start: NonNull<T>,
    len: usize,
    owner: Owner<T>,
}

// SAFETY: a `Words` is a read-only view of elements its owner keeps alive (a vector, or a
// mapping through its `Arc`), like a `Vec<T>` or an `Arc<[T]>`; `T: Plain` is `Send` and
// `Sync`, and nothing writes the elements while they are shared.
#[allow(unsafe_code)]
unsafe impl<T: Plain> Send for Words<T> {}
// SAFETY: as above.
#[allow(unsafe_code)]
unsafe impl<T: Plain> Sync for Words<T> {}

impl<T: Plain> Words<T> {
    fn owning(owner: Owner<T>) -> Self {
        let (start, len) = match &owner {
            Owner::Vector(vector) => (vector.as_ptr(), vector.len()),
            #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
            Owner::Mapping(stretch) => {
                let elements = stretch.get();
                (elements.as_ptr(), elements.len())
            }
        };
        Words {
            start: NonNull::new(start.cast_mut()).expect("a slice's address is never null"),
            len,
            owner,
        }
    }

    /// Elements read in place from a mapped file.
    #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
    pub(crate) fn mapped(stretch: Stretch<T>) -> Self {
        Self::owning(Owner::Mapping(stretch))
    }

    /// Changes the elements through `change` (a mapped array is copied out first).
    pub(crate) fn update(&mut self, change: impl FnOnce(&mut Vec<T>)) {
        let mut vector = match std::mem::replace(&mut self.owner, Owner::Vector(Vec::new())) {
            Owner::Vector(vector) => vector,
            #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
            Owner::Mapping(stretch) => stretch.get().to_vec(),
        };
        change(&mut vector);
        *self = Self::owning(Owner::Vector(vector));
    }
}

impl<T: Plain> Default for Words<T> {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl<T: Plain> From<Vec<T>> for Words<T> {
    fn from(vector: Vec<T>) -> Self {
        Self::owning(Owner::Vector(vector))
    }
}

impl<T: Plain> Deref for Words<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `start` and `len` are those of the elements `owner` holds (set together
        // by `owning`, the only place either is written), which stay where they are for as
        // long as `owner` does: a vector's buffer does not move when the vector does, and
        // a stretch keeps its mapping alive. Nothing writes them while `self` is borrowed.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.start.as_ptr(), self.len)
        }
    }
}

impl<T: Plain + std::fmt::Debug> std::fmt::Debug for Words<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Plain> Clone for Words<T> {
    /// A mapped array stays mapped (the mapping is shared); an owned one is copied.
    fn clone(&self) -> Self {
        match &self.owner {
            Owner::Vector(vector) => vector.clone().into(),
            #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
            Owner::Mapping(stretch) => Self::mapped(stretch.clone()),
        }
    }
}

impl<T: Plain + PartialEq> PartialEq for Words<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Plain + Eq> Eq for Words<T> {}
