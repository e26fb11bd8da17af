//! Where evaluated rows go, a block at a time: over the previous proof's vectors in place
//! (directly, or from a block of their own with streaming stores), or into fresh vectors,
//! each block written out once (`fill`).

use crate::precompiled::kernel::fill::Emit;
use crate::precompiled::kernel::streamed;
use crate::precompiled::rows::layout::BLOCK;

/// Where a chunk's rows are written, a block at a time.
pub(crate) trait BlockOutput<Scalar> {
    /// Where rows `offset..offset + count` of the chunk go, for A, B and C.
    fn block(&mut self, offset: usize, count: usize) -> [&mut [Scalar]; 3];
    /// The block just written is final.
    fn commit(&mut self, count: usize);
}

/// Rows written in place, over the previous proof's values.
pub(crate) struct InPlace<'a, Scalar>(pub(super) [&'a mut [Scalar]; 3]);

impl<Scalar> BlockOutput<Scalar> for InPlace<'_, Scalar> {
    #[inline(always)]
    fn block(&mut self, offset: usize, count: usize) -> [&mut [Scalar]; 3] {
        let [a, b, c] = &mut self.0;
        let range = offset..offset + count;
        [&mut a[range.clone()], &mut b[range.clone()], &mut c[range]]
    }

    #[inline(always)]
    fn commit(&mut self, _: usize) {}
}

/// A block's rows for A, B and C, evaluated here before they are written out.
struct Block<Scalar>([[Scalar; BLOCK]; 3]);

impl<Scalar: Copy> Block<Scalar> {
    fn new(zero: Scalar) -> Self {
        Block([[zero; BLOCK]; 3])
    }

    /// The first `count` rows of each side, to evaluate.
    #[inline(always)]
    fn rows(&mut self, count: usize) -> [&mut [Scalar]; 3] {
        let [a, b, c] = &mut self.0;
        [&mut a[..count], &mut b[..count], &mut c[..count]]
    }

    /// The first `count` rows of each side, evaluated.
    #[inline(always)]
    fn written(&self, count: usize) -> [&[Scalar]; 3] {
        let [a, b, c] = &self.0;
        [&a[..count], &b[..count], &c[..count]]
    }
}

/// Rows written over the previous proof's values from a block of their own, with
/// [`streamed::store`]: the lines written are not read first. Call [`streamed::fence`]
/// once the chunk is written.
pub(crate) struct Streamed<'a, Scalar> {
    out: [&'a mut [Scalar]; 3],
    block: Block<Scalar>,
    /// Where the block being evaluated goes in `out`.
    offset: usize,
}

impl<'a, Scalar: Copy> Streamed<'a, Scalar> {
    pub(crate) fn new(out: [&'a mut [Scalar]; 3], zero: Scalar) -> Self {
        Streamed {
            out,
            block: Block::new(zero),
            offset: 0,
        }
    }
}

impl<Scalar: Copy + 'static> BlockOutput<Scalar> for Streamed<'_, Scalar> {
    #[inline(always)]
    fn block(&mut self, offset: usize, count: usize) -> [&mut [Scalar]; 3] {
        self.offset = offset;
        self.block.rows(count)
    }

    #[inline(always)]
    fn commit(&mut self, count: usize) {
        let rows = self.offset..self.offset + count;
        for (out, values) in self.out.iter_mut().zip(self.block.written(count)) {
            streamed::store(&mut out[rows.clone()], values);
        }
    }
}

/// Rows of fresh vectors: a block is evaluated here, then written out once.
pub(crate) struct Fresh<'a, 'b, Scalar> {
    emit: &'a mut Emit<'b, Scalar>,
    block: Block<Scalar>,
}

impl<'a, 'b, Scalar: Copy> Fresh<'a, 'b, Scalar> {
    pub(crate) fn new(emit: &'a mut Emit<'b, Scalar>, zero: Scalar) -> Self {
        Fresh {
            emit,
            block: Block::new(zero),
        }
    }
}

impl<Scalar: Copy + 'static> BlockOutput<Scalar> for Fresh<'_, '_, Scalar> {
    #[inline(always)]
    fn block(&mut self, _: usize, count: usize) -> [&mut [Scalar]; 3] {
        self.block.rows(count)
    }

    #[inline(always)]
    fn commit(&mut self, count: usize) {
        self.emit.emit(self.block.written(count));
    }
}
