//! One vector of values written by several threads at once, each into a range of its own:
//! the aux values of a witness whose parts are generated on the pool's threads, every part
//! writing where the sequential run would have put its values, so nothing is copied after.
//!
//! A [`WriterValues`] is a writer of one range of an allocation shared by every writer: the
//! system's own ("the root", which starts at index 0 and owns the allocation's growth) or a
//! branch's (a range the root handed out). What makes the sharing sound:
//! - Ranges are disjoint. The root hands out a range only past what it has written and past
//!   every range it handed out before, within the allocation; it writes only up to the first
//!   range still out. A branch writes only within its range.
//! - A range comes back to the root ([`WriterValues::take_back`]) only whole, in the order handed
//!   out, where the root's writing has reached: the root's `[0, next)` is then written, by
//!   itself or by branches that can write no more (a full range refuses further writes).
//! - The allocation is freed or grown only when no branch is alive ([`Arc::get_mut`]), and a
//!   range whose branch was dropped unreturned is written over only then.
//! - What a writer wrote can be closed ([`WriterValues::close`]) and read from then on through a
//!   [`Written`]: a closed branch writes no more, the root writes only past what it closed,
//!   a closed range is never taken back, and the allocation does not grow while a
//!   [`Written`] holds it.
//!
//! So every index has at most one writer, and the values the root reads or hands back as a
//! vector are all written, whatever a caller does with the branches (drop them, keep them,
//! return them out of order or to another root): what cannot be served is refused.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::Arc;

/// An allocation of `capacity` values, any of them possibly unwritten; writers keep it alive.
struct Allocation<S: Copy> {
    ptr: NonNull<S>,
    capacity: usize,
}

// SAFETY: the allocation holds plain values (`S: Copy`, nothing to drop); `WriterValues` lets
// several threads write it only in disjoint ranges and read only what is written and no
// longer written, so sharing it is sharing `S` values.
unsafe impl<S: Copy + Send + Sync> Send for Allocation<S> {}
// SAFETY: as above.
unsafe impl<S: Copy + Send + Sync> Sync for Allocation<S> {}

impl<S: Copy> Allocation<S> {
    /// Takes over `vector`'s storage; its values stay written at the same indices.
    fn from_vec(vector: Vec<S>) -> Self {
        let mut vector = ManuallyDrop::new(vector);
        Allocation {
            // A vector's pointer is never null (dangling when it has no capacity).
            ptr: NonNull::new(vector.as_mut_ptr()).expect("a vector's pointer is not null"),
            capacity: vector.capacity(),
        }
    }

    /// Hands the storage back as a vector of its first `len` values.
    ///
    /// # Safety
    /// Values `0..len` must be written, and `len <= capacity`.
    unsafe fn into_vec(self, len: usize) -> Vec<S> {
        let this = ManuallyDrop::new(self);
        // SAFETY: `ptr` and `capacity` are a vector's (`from_vec`, `grow`) and no longer
        // owned by `self`; the caller promises the first `len` values are written.
        unsafe { Vec::from_raw_parts(this.ptr.as_ptr(), len, this.capacity) }
    }

    /// Room for `total` values, keeping the first `len` (written).
    ///
    /// # Safety
    /// As for [`Self::into_vec`].
    unsafe fn grow(&mut self, len: usize, total: usize) -> Result<(), ()> {
        let placeholder = Allocation::from_vec(Vec::new());
        // SAFETY: as the caller promises; `self` is replaced below, whatever happens.
        let mut vector = unsafe { std::mem::replace(self, placeholder).into_vec(len) };
        let grown = vector.try_reserve(total.saturating_sub(len)).map_err(drop);
        *self = Allocation::from_vec(vector);
        grown
    }
}

impl<S: Copy> Drop for Allocation<S> {
    fn drop(&mut self) {
        // SAFETY: the storage is a vector's; with no values claimed written, nothing is read
        // (and `S: Copy` has nothing to drop).
        drop(unsafe { Vec::from_raw_parts(self.ptr.as_ptr(), 0, self.capacity) });
    }
}

/// Why a write or a hand-back was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A branch's range is full.
    Full,
    /// The root reached a range it handed out, still out with its branch.
    RangeOut,
    /// The allocation could not grow.
    OutOfMemory,
    /// The branch given back is not the next range out, or not full, or the root has not
    /// reached it.
    NotNext,
}

/// A writer of one range of a shared allocation: `[start, next)` written by it, `[next, end)`
/// its to write.
pub(crate) struct WriterValues<S: Copy> {
    shared: Arc<Allocation<S>>,
    start: usize,
    next: usize,
    /// For the root, where the first range still out starts (or the capacity); it moves when
    /// a range is handed out through `&self`.
    end: Cell<usize>,
    /// The root's ranges handed out and not yet taken back, in order; `None` for a branch.
    out: Option<RefCell<VecDeque<(usize, usize)>>>,
    /// Where the values [`Self::close`] handed out end: those before are read only.
    sealed: Cell<usize>,
}

impl<S: Copy> WriterValues<S> {
    /// The root writer of `vector`'s storage, continuing after its values.
    pub(crate) fn root(vector: Vec<S>) -> Self {
        let next = vector.len();
        let shared = Arc::new(Allocation::from_vec(vector));
        WriterValues {
            end: Cell::new(shared.capacity),
            shared,
            start: 0,
            next,
            out: Some(RefCell::new(VecDeque::new())),
            sealed: Cell::new(0),
        }
    }

    /// The index the next value is written at: where it lies in the whole vector.
    pub(crate) fn position(&self) -> usize {
        self.next
    }

    /// The written values, `[start, next)`.
    pub(crate) fn written(&self) -> &[S] {
        // SAFETY: `[start, next)` lies in the allocation and is written; no writer writes
        // there any more (this one writes at `next` and beyond, other ranges are disjoint,
        // and the ranges the root took back are full), and the allocation lives as long as
        // `self.shared`.
        unsafe {
            std::slice::from_raw_parts(
                self.shared.ptr.as_ptr().add(self.start),
                self.next - self.start,
            )
        }
    }

    /// Writes `value` at the next index.
    #[inline]
    pub(crate) fn push(&mut self, value: S) -> Result<(), Refused> {
        if self.next >= self.end.get() {
            self.make_room(1)?;
        }
        // SAFETY: `next < end`, and `[next, end)` is this writer's alone, in the allocation.
        unsafe { self.shared.ptr.as_ptr().add(self.next).write(value) };
        self.next += 1;
        Ok(())
    }

    /// Writes `n` copies of `value` at the next indices (see [`Self::last_mut`]).
    pub(crate) fn fill(&mut self, n: usize, value: S) -> Result<(), Refused> {
        if self.end.get() - self.next < n {
            self.make_room(n)?;
        }
        // SAFETY: `[next, next + n)` lies in `[next, end)`, this writer's alone, in the
        // allocation.
        unsafe {
            let first = self.shared.ptr.as_ptr().add(self.next);
            for i in 0..n {
                first.add(i).write(value);
            }
        }
        self.next += n;
        Ok(())
    }

    /// The last `n` values this writer wrote, to be overwritten.
    pub(crate) fn last_mut(&mut self, n: usize) -> &mut [S] {
        assert!(
            n <= self.next - self.sealed.get(),
            "{n} values were not written here since the last close"
        );
        // SAFETY: `[next - n, next)` lies in this writer's range, is written, and lies past
        // what `close` handed out to be read; no other writer writes there, and the slice
        // borrows `self` mutably.
        unsafe { std::slice::from_raw_parts_mut(self.shared.ptr.as_ptr().add(self.next - n), n) }
    }

    /// Makes `[next, next + n)` writable: a branch cannot; the root can where no range is
    /// out (ranges whose branches were dropped are released) and the allocation can grow.
    #[cold]
    fn make_room(&mut self, n: usize) -> Result<(), Refused> {
        let Some(out) = &self.out else {
            return Err(Refused::Full);
        };
        if !out.borrow().is_empty() {
            // Ranges out are written over only once their branches are gone, all of them.
            if Arc::get_mut(&mut self.shared).is_none() {
                return Err(Refused::RangeOut);
            }
            out.borrow_mut().clear();
        }
        let capacity = self.shared.capacity;
        let total = self.next.checked_add(n).ok_or(Refused::OutOfMemory)?;
        if total > capacity {
            let allocation = Arc::get_mut(&mut self.shared).ok_or(Refused::RangeOut)?;
            // SAFETY: the root's `[0, next)` is written, and `next <= capacity`.
            unsafe { allocation.grow(self.next, total.max(capacity.saturating_mul(2))) }
                .map_err(|()| Refused::OutOfMemory)?;
        }
        self.end.set(self.shared.capacity);
        Ok(())
    }

    /// Closes this writer's written values: a branch writes nothing more (its later values
    /// are refused as a full range's), the root only past them; the values stay readable
    /// through what is returned, which keeps the allocation alive and from growing.
    pub(crate) fn close(&self) -> Written<S> {
        if self.is_branch() {
            self.end.set(self.next);
        }
        self.sealed.set(self.next);
        Written {
            shared: Arc::clone(&self.shared),
            start: self.start,
            end: self.next,
        }
    }

    /// The root hands out `[at, at + len)` to a new writer, if that range lies past what it
    /// wrote and past every range out, within the allocation; from then on the root writes
    /// only up to the first range out.
    pub(crate) fn hand_out(&self, at: usize, len: usize) -> Option<WriterValues<S>> {
        let out = self.out.as_ref()?;
        let after = out.borrow().back().map_or(self.next, |&(_, end)| end);
        let end = at.checked_add(len)?;
        if at < after || end > self.shared.capacity {
            return None;
        }
        out.borrow_mut().push_back((at, end));
        self.end.set(out.borrow()[0].0);
        Some(WriterValues {
            shared: Arc::clone(&self.shared),
            start: at,
            next: at,
            end: Cell::new(end),
            out: None,
            sealed: Cell::new(at),
        })
    }

    /// Whether `other` writes a range this root handed out (or a range of the same
    /// allocation).
    fn shares_with(&self, other: &WriterValues<S>) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Whether this writer is a branch's.
    pub(crate) fn is_branch(&self) -> bool {
        self.out.is_none()
    }

    /// The root takes back `branch`'s range, full, as its next values: it must be the first
    /// range out, never closed, and the root's writing must have reached it.
    pub(crate) fn take_back(&mut self, branch: &WriterValues<S>) -> Result<(), Refused> {
        let out = self.out.as_ref().ok_or(Refused::NotNext)?;
        let first = out.borrow().front().copied();
        // A range handed out to be read (closed) stays read only: it is not taken back.
        let whole = branch.next == branch.end.get() && branch.sealed.get() == branch.start;
        if !self.shares_with(branch)
            || first != Some((branch.start, branch.end.get()))
            || self.next != branch.start
            || !whole
        {
            return Err(Refused::NotNext);
        }
        out.borrow_mut().pop_front();
        self.next = branch.next;
        let end = out
            .borrow()
            .front()
            .map_or(self.shared.capacity, |&(at, _)| at);
        self.end.set(end);
        Ok(())
    }

    /// The root's values as a vector, when no branch is alive any more; else the root back.
    pub(crate) fn into_vec(self) -> Result<Vec<S>, WriterValues<S>> {
        if self.is_branch() {
            return Err(self);
        }
        let next = self.next;
        match Arc::try_unwrap(self.shared) {
            // SAFETY: the root's `[0, next)` is written, within the allocation.
            Ok(allocation) => Ok(unsafe { allocation.into_vec(next) }),
            Err(shared) => Err(WriterValues { shared, ..self }),
        }
    }
}

/// A range of the allocation whose values are written and that no writer writes again (see
/// [`WriterValues::close`]).
pub(crate) struct Written<S: Copy> {
    shared: Arc<Allocation<S>>,
    start: usize,
    end: usize,
}

impl<S: Copy> Written<S> {
    /// The values.
    pub(crate) fn as_slice(&self) -> &[S] {
        // SAFETY: `[start, end)` was written by the writer that closed it, which from then
        // on writes only at or past its `next` (never below `end`: `last_mut` stops at the
        // seal), or not at all; every other writer's range is disjoint; the allocation
        // cannot grow or be freed while `shared` holds it.
        unsafe {
            std::slice::from_raw_parts(
                self.shared.ptr.as_ptr().add(self.start),
                self.end - self.start,
            )
        }
    }
}

impl<S: Copy> Clone for Written<S> {
    fn clone(&self) -> Self {
        Written {
            shared: Arc::clone(&self.shared),
            start: self.start,
            end: self.end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(values: &[u64], capacity: usize) -> WriterValues<u64> {
        let mut vector = Vec::with_capacity(capacity);
        vector.extend_from_slice(values);
        WriterValues::root(vector)
    }

    #[test]
    fn ranges_written_at_once_come_back_in_place() {
        let mut root = root(&[1, 2], 10);
        let mut first = root.hand_out(4, 3).unwrap();
        let mut second = root.hand_out(7, 3).unwrap();
        std::thread::scope(|scope| {
            scope.spawn(|| (0..3).for_each(|i| first.push(40 + i).unwrap()));
            scope.spawn(|| {
                second.fill(3, 70).unwrap();
                second.last_mut(1)[0] = 72;
            });
        });
        root.push(3).unwrap();
        root.push(4).unwrap();
        assert_eq!(
            root.push(5),
            Err(Refused::RangeOut),
            "the first range is out"
        );
        root.take_back(&first).unwrap();
        root.take_back(&second).unwrap();
        drop((first, second));
        root.push(80).unwrap();
        assert_eq!(
            root.into_vec().ok().unwrap(),
            [1, 2, 3, 4, 40, 41, 42, 70, 70, 72, 80]
        );
    }

    #[test]
    fn a_branch_writes_its_range_only() {
        let root = root(&[], 4);
        let mut branch = root.hand_out(1, 2).unwrap();
        branch.push(1).unwrap();
        assert_eq!(branch.fill(2, 0), Err(Refused::Full));
        branch.push(2).unwrap();
        assert_eq!(branch.push(3), Err(Refused::Full));
        assert!(
            branch.hand_out(3, 1).is_none(),
            "a branch hands out nothing"
        );
        assert_eq!(branch.written(), [1, 2]);
    }

    #[test]
    fn overlapping_or_outside_ranges_are_not_handed_out() {
        let mut root = root(&[1, 2, 3], 10);
        assert!(root.hand_out(2, 1).is_none(), "written already");
        assert!(root.hand_out(8, 3).is_none(), "past the allocation");
        assert!(root.hand_out(usize::MAX, 2).is_none(), "overflowing");
        let branch = root.hand_out(5, 3).unwrap();
        assert!(root.hand_out(6, 1).is_none(), "inside a range out");
        assert!(root.hand_out(4, 1).is_none(), "before a range out");
        root.push(4).unwrap();
        root.push(5).unwrap();
        assert_eq!(root.fill(1, 0), Err(Refused::RangeOut));
        drop(branch);
    }

    #[test]
    fn only_the_next_full_range_comes_back() {
        let mut root = root(&[], 8);
        let mut first = root.hand_out(2, 2).unwrap();
        let mut second = root.hand_out(4, 1).unwrap();
        second.push(9).unwrap();
        assert_eq!(
            root.take_back(&second),
            Err(Refused::NotNext),
            "out of order"
        );
        first.push(1).unwrap();
        root.fill(2, 0).unwrap();
        assert_eq!(root.take_back(&first), Err(Refused::NotNext), "not full");
        first.push(2).unwrap();
        let other = self::root(&[], 8);
        let foreign = other.hand_out(2, 2).unwrap();
        assert_eq!(
            root.take_back(&foreign),
            Err(Refused::NotNext),
            "another root's"
        );
        root.take_back(&first).unwrap();
        assert_eq!(root.take_back(&first), Err(Refused::NotNext), "taken back");
        root.take_back(&second).unwrap();
        assert_eq!(root.written(), [0, 0, 1, 2, 9]);
    }

    #[test]
    fn closed_values_stay_as_written() {
        let mut root = root(&[1, 2], 8);
        let mut branch = root.hand_out(4, 2).unwrap();
        branch.push(7).unwrap();
        let closed = branch.close();
        assert_eq!(branch.push(8), Err(Refused::Full), "closed");
        let mine = root.close();
        root.push(3).unwrap();
        root.push(4).unwrap();
        assert_eq!(root.last_mut(2), [3, 4], "written since the close");
        assert_eq!(
            root.take_back(&branch),
            Err(Refused::NotNext),
            "closed: not taken back"
        );
        assert_eq!(
            (closed.as_slice(), mine.as_slice()),
            (&[7][..], &[1, 2][..])
        );
        drop(branch);
        assert_eq!(
            root.push(5),
            Err(Refused::RangeOut),
            "kept from growing or writing over"
        );
        assert_eq!(mine.clone().as_slice(), [1, 2]);
    }

    #[test]
    fn ranges_of_dropped_branches_are_written_over_and_growth_waits_for_branches() {
        let mut root = root(&[7], 2);
        let branch = root.hand_out(1, 1).unwrap();
        assert_eq!(root.push(8), Err(Refused::RangeOut));
        drop(branch);
        root.push(8).unwrap();
        // Past the capacity: grows, as no branch is alive.
        root.push(9).unwrap();
        let kept = root.hand_out(3, 0).unwrap();
        // A range of nothing, kept alive: the root cannot grow past it.
        let capacity = root.shared.capacity;
        assert_eq!(root.fill(capacity, 0), Err(Refused::RangeOut));
        let root = root.into_vec().expect_err("a branch is alive");
        drop(kept);
        assert_eq!(root.into_vec().ok().unwrap(), [7, 8, 9]);
    }
}
