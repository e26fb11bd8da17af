//! The arrays a recording is made of, held in memory or read in place from a mapped file:
//! either way, evaluation sees a slice.
//!
//! A recording built in the process owns its arrays; one opened from a file
//! ([`super::Recording::map`]) reads them where the file's pages lie, shared by every
//! process that maps the file. Only [`Plain`] types are read in place.

#[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
use super::mapping::Stretch;
use super::plain::Plain;
use std::ops::Deref;

/// An array of `T`: owned, or a stretch of a mapped file.
pub(crate) enum Words<T: Plain> {
    Owned(Vec<T>),
    #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
    Mapped(Stretch<T>),
}

impl<T: Plain> Default for Words<T> {
    fn default() -> Self {
        Words::Owned(Vec::new())
    }
}

impl<T: Plain> From<Vec<T>> for Words<T> {
    fn from(vector: Vec<T>) -> Self {
        Words::Owned(vector)
    }
}

impl<T: Plain> Deref for Words<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            Words::Owned(vector) => vector,
            #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
            Words::Mapped(stretch) => stretch.get(),
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
        match self {
            Words::Owned(vector) => Words::Owned(vector.clone()),
            #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
            Words::Mapped(stretch) => Words::Mapped(stretch.clone()),
        }
    }
}

impl<T: Plain + PartialEq> PartialEq for Words<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Plain + Eq> Eq for Words<T> {}

impl<T: Plain> Words<T> {
    /// The array as a vector to change: a mapped one is copied out first.
    pub(crate) fn to_mut(&mut self) -> &mut Vec<T> {
        if !matches!(self, Words::Owned(_)) {
            *self = Words::Owned(self.to_vec());
        }
        match self {
            Words::Owned(vector) => vector,
            #[cfg(all(unix, target_pointer_width = "64", target_endian = "little"))]
            Words::Mapped(_) => unreachable!("made owned just above"),
        }
    }
}
