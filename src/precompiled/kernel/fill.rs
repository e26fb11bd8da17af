//! Filling three vectors in parallel without zero-filling them first: every element of a
//! fresh a, b, c is written exactly once, by evaluation, so writing zeros beforehand (what a
//! safe `resize` does) is a whole extra pass over hundreds of megabytes per proof, measured
//! slower (docs/journal.md, 2026-11-30).
//!
//! Invariants this module relies on, and keeps:
//! 1. Values reach the vectors' spare capacity only through [`Emit::emit`], which writes
//!    them in order from the start of its chunk, each slot once, and counts them; nothing
//!    else writes there.
//! 2. A vector's length is set to `len` only when every chunk reported writing exactly its
//!    own length, so every element below `len` was written (by 1); slots a caller owns are
//!    reported written on the same condition.
//! 3. The element type is `Copy`: nothing written needs dropping, and a vector left empty
//!    after an incomplete fill only holds spare capacity.

#![allow(unsafe_code)]

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::precompiled::kernel::streamed;

/// Where a chunk's producer writes: runs of values for the three vectors, in order.
pub(crate) struct Emit<'a, T> {
    slots: [&'a mut [MaybeUninit<T>]; 3],
    written: [usize; 3],
    /// Written with streaming stores ([`streamed::store_uninit`]).
    streamed: bool,
}

impl<T: Copy + 'static> Emit<'_, T> {
    /// Appends `values[i]` to vector `i`'s part of this chunk. Values past the chunk's end
    /// are neither written nor counted: a producer that overruns is caught by the count.
    #[inline]
    pub(crate) fn emit(&mut self, values: [&[T]; 3]) {
        for ((slots, written), values) in self.slots.iter_mut().zip(&mut self.written).zip(values) {
            if self.streamed {
                let free = &mut slots[*written..];
                let count = free.len().min(values.len());
                streamed::store_uninit(&mut free[..count], &values[..count]);
                *written += count;
                continue;
            }
            for (slot, value) in slots[*written..].iter_mut().zip(values) {
                slot.write(*value);
                *written += 1;
            }
        }
    }
}

/// Empties `vectors` and fills each with `len` elements produced a chunk of `chunk` rows
/// at a time on the rayon pool ([`fill_slots`]), then sets their length. Returns every
/// chunk's result, in order, with the vectors `len` long; or `None` with the vectors empty
/// when a chunk wrote fewer than its rows. The vectors must already hold `len` of capacity
/// (asked for where failure is an error).
pub(crate) fn fill_three<T, R, F>(
    vectors: [&mut Vec<T>; 3],
    len: usize,
    chunk: usize,
    produce: F,
) -> Option<Vec<R>>
where
    T: Copy + Send + Sync + 'static,
    R: Send,
    F: Fn(usize, usize, &mut Emit<'_, T>) -> R + Sync,
{
    let [a, b, c] = vectors;
    for vector in [&mut *a, &mut *b, &mut *c] {
        vector.clear();
        vector.reserve(len);
    }
    let slots = [
        &mut a.spare_capacity_mut()[..len],
        &mut b.spare_capacity_mut()[..len],
        &mut c.spare_capacity_mut()[..len],
    ];
    let results = fill_slots(slots, chunk, false, produce);
    if results.is_some() {
        for vector in [a, b, c] {
            // SAFETY: `fill_slots` returned results, so every slot of `0..len` was written
            // (invariants 1 and 2); `len` is within the capacity reserved above.
            unsafe { vector.set_len(len) };
        }
    }
    results
}

/// Writes three runs of slots of one length (a vector's spare capacity, or storage its
/// caller owns) a chunk of `chunk` rows at a time on the rayon pool: `produce(first, rows,
/// emit)` writes rows `first..first + rows` through `emit`, with streaming stores where
/// `streamed` says (each chunk fenced once written). Returns every chunk's result, in
/// order, when each chunk wrote all of its slots; `None` when one wrote fewer (or the
/// runs differ in length).
pub(crate) fn fill_slots<T, R, F>(
    slots: [&mut [MaybeUninit<T>]; 3],
    chunk: usize,
    streamed: bool,
    produce: F,
) -> Option<Vec<R>>
where
    T: Copy + Send + Sync + 'static,
    R: Send,
    F: Fn(usize, usize, &mut Emit<'_, T>) -> R + Sync,
{
    let [a, b, c] = slots;
    // Runs of other lengths could not all be written chunk by chunk.
    if a.len() != b.len() || b.len() != c.len() {
        return None;
    }
    let chunks = a
        .par_chunks_mut(chunk)
        .zip(b.par_chunks_mut(chunk))
        .zip(c.par_chunks_mut(chunk));
    // A task per chunk, so no thread waits out another's last share of the chunks.
    let results: Vec<Option<R>> = chunks
        .enumerate()
        .with_max_len(1)
        .map(|(index, ((a, b), c))| {
            let rows = a.len();
            let mut emit = Emit {
                slots: [a, b, c],
                written: [0; 3],
                streamed,
            };
            let result = produce(index * chunk, rows, &mut emit);
            if streamed {
                streamed::fence();
            }
            (emit.written == [rows; 3]).then_some(result)
        })
        .collect();
    results.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_chunks_fill_the_vectors_and_incomplete_ones_leave_them_empty() {
        let (mut a, mut b, mut c) = (vec![9u64; 3], Vec::new(), Vec::new());
        let results = fill_three([&mut a, &mut b, &mut c], 10, 4, |first, rows, emit| {
            // Two runs per chunk, as a producer working in blocks would.
            let values: Vec<u64> = (first..first + rows).map(|i| i as u64).collect();
            let (head, tail) = values.split_at(rows / 2);
            emit.emit([head, head, head]);
            emit.emit([tail, tail, tail]);
            first
        });
        assert_eq!(results, Some(vec![0, 4, 8]));
        assert_eq!(a, (0..10).collect::<Vec<u64>>());
        assert_eq!(b, a);
        assert_eq!(c, a);

        let short = fill_three([&mut a, &mut b, &mut c], 10, 4, |first, rows, emit| {
            let values = vec![1u64; rows];
            let fewer = &values[..rows - usize::from(first == 4)];
            emit.emit([&values, &values, fewer]);
        });
        assert!(short.is_none());
        assert!(a.is_empty() && b.is_empty() && c.is_empty());
        // An overrun writes nothing past the chunk and counts what it wrote.
        let over = fill_three([&mut a, &mut b, &mut c], 10, 4, |_, rows, emit| {
            let values = vec![2u64; rows + 3];
            emit.emit([&values, &values, &values]);
        });
        assert!(over.is_some());
        assert_eq!(a, vec![2; 10]);
    }
}
