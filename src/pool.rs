//! The owner-local buffer pool behind every `enforce` of a `ProvingAssignment` and of the
//! recorder, and [`LcPool`], the linear combinations built on it.
//!
//! Invariants of the pool and of the buffers it hands out:
//! 1. A pool belongs to one assignment and is used through `&mut` only: no atomics, no
//!    locks, never shared between threads. Parallel synthesis gives every circuit its own
//!    assignment and so its own pool; the buffers stay in the cache of the core using them.
//! 2. Every buffer in the free list is empty (`len() == 0`); only its capacity is reused.
//! 3. A returned buffer whose capacity exceeds the pool's bound is dropped, not kept, so one
//!    huge linear combination cannot pin its memory for the rest of the synthesis.
//! 4. Buffers with no capacity are not kept: they save no allocation.

use bellpepper_core::{LinearCombination, Term};
use ff::PrimeField;

/// Counters of what the pool did, for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Buffers handed out from the free list.
    pub hits: u64,
    /// Buffers handed out new (free list empty).
    pub misses: u64,
    /// Returned buffers dropped for exceeding the capacity bound.
    pub oversized: u64,
}

impl PoolStats {
    /// Fraction of handed-out buffers that were recycled; zero before the first request.
    pub fn hit_rate(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            0.0
        } else {
            self.hits as f64 / total as f64
        }
    }
}

/// A free list of empty `Vec<T>`s that keep their capacity.
#[derive(Debug)]
pub(crate) struct VecPool<T> {
    free: Vec<Vec<T>>,
    max_kept_capacity: usize,
    stats: PoolStats,
}

impl<T> VecPool<T> {
    /// A pool that keeps returned buffers of capacity up to `max_kept_capacity` elements.
    pub(crate) fn new(max_kept_capacity: usize) -> Self {
        VecPool {
            free: Vec::new(),
            max_kept_capacity,
            stats: PoolStats::default(),
        }
    }

    /// An empty buffer, recycled when one is free.
    #[inline]
    pub(crate) fn take(&mut self) -> Vec<T> {
        match self.free.pop() {
            Some(buffer) => {
                self.stats.hits += 1;
                buffer
            }
            None => {
                self.stats.misses += 1;
                Vec::new()
            }
        }
    }

    /// Returns a buffer for reuse: cleared and kept, unless invariant 3 or 4 drops it.
    #[inline]
    pub(crate) fn give(&mut self, mut buffer: Vec<T>) {
        let capacity = buffer.capacity();
        if capacity == 0 {
            return;
        }
        if capacity > self.max_kept_capacity {
            self.stats.oversized += 1;
            return;
        }
        buffer.clear();
        self.free.push(buffer);
    }

    /// What the pool has done so far.
    pub(crate) fn stats(&self) -> PoolStats {
        self.stats
    }

    /// Number of buffers waiting in the free list.
    #[cfg(test)]
    fn free_buffers(&self) -> usize {
        self.free.len()
    }
}

/// Linear combinations whose term buffers come from, and go back to, a [`VecPool`]: what
/// `enforce` hands the circuit's closures, so building A, B and C allocates nothing once the
/// pool is warm.
#[derive(Debug)]
pub(crate) struct LcPool<Scalar> {
    buffers: VecPool<Term<Scalar>>,
}

impl<Scalar: PrimeField> LcPool<Scalar> {
    /// A pool that keeps buffers of up to `max_kept_terms` terms.
    pub(crate) fn new(max_kept_terms: usize) -> Self {
        LcPool {
            buffers: VecPool::new(max_kept_terms),
        }
    }

    /// An empty pool that keeps what this one keeps: a branch's own, since pools are never
    /// shared between threads.
    pub(crate) fn like(&self) -> Self {
        LcPool::new(self.buffers.max_kept_capacity)
    }

    /// An empty combination on recycled buffers.
    #[inline]
    pub(crate) fn fresh(&mut self) -> LinearCombination<Scalar> {
        LinearCombination::from_buffers(self.buffers.take(), self.buffers.take())
    }

    /// Takes back the buffers of a combination that is no longer needed.
    #[inline]
    pub(crate) fn recycle(&mut self, lc: LinearCombination<Scalar>) {
        let (inputs, aux) = lc.into_buffers();
        self.buffers.give(inputs);
        self.buffers.give(aux);
    }

    /// The buffer pool's counters.
    pub(crate) fn stats(&self) -> PoolStats {
        self.buffers.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::VecPool;

    #[test]
    fn recycles_cleared_buffers_and_counts_hits() {
        let mut pool = VecPool::new(16);
        let mut buffer: Vec<u32> = pool.take();
        buffer.extend([1, 2, 3]);
        let address = buffer.as_ptr();
        pool.give(buffer);
        let again = pool.take();
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), address);
        assert_eq!(pool.stats().hits, 1);
        assert_eq!(pool.stats().misses, 1);
        assert_eq!(pool.stats().hit_rate(), 0.5);
    }

    #[test]
    fn drops_oversized_and_empty_buffers() {
        let mut pool = VecPool::new(4);
        pool.give(Vec::<u8>::with_capacity(64));
        pool.give(Vec::<u8>::new());
        assert_eq!(pool.free_buffers(), 0);
        assert_eq!(pool.stats().oversized, 1);
    }
}
