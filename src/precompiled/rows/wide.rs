//! Rows of general coefficients on variables (Poseidon's MDS combinations: tens of terms,
//! every coefficient and nearly every value a full field element), summed as wide integers
//! and reduced once per row ([`crate::wide_sum`]).
//!
//! A field multiplication reduces its product at once (a Montgomery multiplication costs
//! about 170 instructions here, an addition 36 more). Summed lazily instead, a term is one
//! 256 × 256-bit integer product added into the row's sum, and the row is reduced once:
//! with `v_i` the values' integers (below p) and `c_i = C_i · 2^320 mod p` each
//! coefficient scaled once per recording, `T = Σ v_i · c_i` is below `2^32 · p²` for any
//! row, five word-by-word Montgomery steps give `U = (T + m·p) / 2^320 ≡ Σ v_i · C_i`
//! with `U < 2p`, and one subtraction reduces it. Values enter as integers once per
//! evaluation (the rows read few distinct ones, each many times).
//!
//! Which rows take this path, and the distinct values they read, are derived from the
//! matrix once, when a recording is built or loaded; the file format does not change.

use std::collections::HashMap;
use std::io;
use std::ops::Range;

use ff::PrimeField;
use rayon::prelude::*;

use crate::error::Error;
use crate::precompiled::rows::coefficients::{limbs, IntegerField};
use crate::precompiled::rows::matrix::Matrix;
use crate::precompiled::rows::row_sets::{joined_starts, pieces, RankedRows, RowSet};
use crate::precompiled::storage::sections::{SectionReader, SectionWriter, Sections, Source};
use crate::precompiled::storage::words::Words;
use crate::vectors::reserve;
use crate::wide_sum::{Multiplier, WideSum};

/// A matrix's wide rows: which rows, their terms (a slot of the distinct values read and a
/// coefficient id each), and the value positions behind the slots.
#[derive(Default)]
pub(crate) struct WideRows {
    /// Which rows are wide.
    rows: RankedRows,
    /// Row `i`'s terms are `starts[i]..starts[i + 1]` of `slots` and `ids`.
    starts: Words<u32>,
    slots: Words<u32>,
    ids: Words<u16>,
    /// The value position of each slot.
    positions: Words<u32>,
}

impl WideRows {
    /// The rows of `matrix` with a coefficient `general` holds of on a variable other than
    /// the constant one (at `one`), less those `claimed` holds of (evaluated as the value
    /// they state; summed in the field in the rare evaluation that must sum them); rows
    /// whose general coefficients are constants keep the field path, being a value or two
    /// plus a constant.
    pub(crate) fn new(
        matrix: &Matrix,
        one: u32,
        general: impl Fn(u16) -> bool + Sync,
        claimed: &(dyn Fn(usize) -> bool + Sync),
    ) -> Self {
        Self::by_pieces(matrix, pieces(matrix.rows()), one, general, claimed)
    }

    /// [`WideRows::new`], its rows looked at in `pieces` (from [`pieces`] or
    /// [`crate::precompiled::rows::row_sets::pieces_of`]) on the pool's threads.
    fn by_pieces(
        matrix: &Matrix,
        pieces: Vec<Range<usize>>,
        one: u32,
        general: impl Fn(u16) -> bool + Sync,
        claimed: &(dyn Fn(usize) -> bool + Sync),
    ) -> Self {
        // Each piece of rows on its own, its slots numbered from 0 in the order it first
        // reads each position; then the pieces' slots renumbered in row order, so that a
        // slot is where the position is first read in the whole matrix, however the rows
        // were cut.
        let found: Vec<WidePiece> = pieces
            .into_par_iter()
            .map(|rows| WidePiece::new(matrix, rows, one, &general, claimed))
            .collect();
        let mut slots = WideSlots::default();
        let renumbered: Vec<Vec<u32>> = found
            .iter()
            .map(|piece| piece.slots.positions.iter().map(|&p| slots.of(p)).collect())
            .collect();
        if slots.positions.is_empty() {
            // A matrix without wide rows holds nothing for them.
            return WideRows::default();
        }
        let terms: Vec<Vec<u32>> = found
            .par_iter()
            .zip(&renumbered)
            .map(|(piece, slot)| piece.terms.iter().map(|&s| slot[s as usize]).collect())
            .collect();
        let starts = joined_starts(found.iter().map(|piece| &piece.ends[..]));
        let (sets, ids): (Vec<RowSet>, Vec<Vec<u16>>) = found
            .into_iter()
            .map(|piece| (piece.rows, piece.ids))
            .unzip();
        WideRows {
            rows: RowSet::joined(sets).ranked(),
            starts: starts.into(),
            slots: terms.concat().into(),
            ids: ids.concat().into(),
            positions: slots.positions.into(),
        }
    }

    /// The index of `row` among the wide rows, if it is one.
    #[inline]
    pub(crate) fn index(&self, row: usize) -> Option<usize> {
        self.rows.index(row)
    }

    /// The positions whose values the rows read, one per slot.
    pub(crate) fn positions(&self) -> &[u32] {
        &self.positions
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.rows.bytes()
            + 4 * (self.starts.len() + self.slots.len() + self.positions.len())
            + 2 * self.ids.len()
    }

    /// Wide row `i`'s value: `Σ value(slot) · coefficient(id)`, with `values` the slots'
    /// integers from [`convert`] and `coefficients` the dictionary's entries scaled by
    /// `2^320` (the coefficient table's `wide`).
    #[inline(never)]
    pub(crate) fn sum<Scalar: PrimeField>(
        &self,
        i: usize,
        values: &[[u64; 4]],
        coefficients: &[[u64; 4]],
        field: &IntegerField<Scalar>,
    ) -> Scalar {
        let terms = self.starts[i] as usize..self.starts[i + 1] as usize;
        let (slots, ids) = (&self.slots[terms.clone()], &self.ids[terms]);
        let mut sum = WideSum::default();
        for (&slot, &id) in slots.iter().zip(ids) {
            let (value, coefficient) = (&values[slot as usize], &coefficients[usize::from(id)]);
            // The portable product: the assembly one measured no faster here, these rows
            // being a small part of evaluation.
            sum.add(Multiplier::Portable.product(value, coefficient));
        }
        field.reduced(&sum.reduce::<5>(&field.modulus, field.inverse))
    }
}

/// The integers of the values at `positions` (aux values first, then inputs), into
/// `out`, on the rayon pool; an error, not an abort, when the memory cannot be had.
pub(crate) fn convert<Scalar: PrimeField>(
    positions: &[u32],
    [inputs, aux]: [&[Scalar]; 2],
    out: &mut Vec<[u64; 4]>,
) -> Result<(), Error> {
    out.clear();
    reserve(out, positions.len(), "wide values")?;
    out.resize(positions.len(), [0; 4]);
    out.par_chunks_mut(1 << 12)
        .zip(positions.par_chunks(1 << 12))
        .for_each(|(out, positions)| {
            for (out, &position) in out.iter_mut().zip(positions) {
                let value = match aux.get(position as usize) {
                    Some(value) => value,
                    None => &inputs[position as usize - aux.len()],
                };
                *out = limbs(value.to_repr().as_ref());
            }
        });
    Ok(())
}

/// WideSlots numbered in the order their positions are first read.
#[derive(Default)]
struct WideSlots {
    slot_of: HashMap<u32, u32>,
    /// The position of each slot.
    positions: Vec<u32>,
}

impl WideSlots {
    /// The slot of `position`, a new one if it was not read before.
    fn of(&mut self, position: u32) -> u32 {
        let next = self.positions.len() as u32;
        let slot = *self.slot_of.entry(position).or_insert(next);
        if slot == next {
            self.positions.push(position);
        }
        slot
    }
}

/// The wide rows of one piece of a matrix's rows, their slots numbered within the piece.
struct WidePiece {
    /// Which of the piece's rows are wide, from its first.
    rows: RowSet,
    /// Where each wide row's terms end, counted from the piece's first term.
    ends: Vec<u32>,
    /// Each term's slot and coefficient id.
    terms: Vec<u32>,
    ids: Vec<u16>,
    slots: WideSlots,
}

impl WidePiece {
    /// The wide rows among `rows` of `matrix` (see [`WideRows::new`]).
    fn new(
        matrix: &Matrix,
        rows: Range<usize>,
        one: u32,
        general: &(impl Fn(u16) -> bool + Sync),
        claimed: &(dyn Fn(usize) -> bool + Sync),
    ) -> Self {
        let mut piece = WidePiece {
            rows: RowSet::with_rows(rows.len()),
            ends: Vec::new(),
            terms: Vec::new(),
            ids: Vec::new(),
            slots: WideSlots::default(),
        };
        for row in rows.clone() {
            // Few rows pick: the claims are asked about those only.
            if !matrix.picks_on_a_variable(row, one, general) || claimed(row) {
                continue;
            }
            piece.rows.insert(row - rows.start);
            let (columns, ids) = matrix.row(row);
            for (&column, &id) in columns.iter().zip(ids) {
                piece.terms.push(piece.slots.of(column));
                piece.ids.push(id);
            }
            piece.ends.push(piece.terms.len() as u32);
        }
        piece
    }
}

impl Sections for WideRows {
    fn write_sections(&self, out: &mut SectionWriter<'_>) -> io::Result<()> {
        self.rows.write_sections(out)?;
        out.words(&self.starts)?;
        out.words(&self.slots)?;
        out.words(&self.ids)?;
        out.words(&self.positions)
    }

    fn read_sections<S: Source>(input: &mut SectionReader<S>) -> Result<Self, Error> {
        Ok(WideRows {
            rows: RankedRows::read_sections(input)?,
            starts: input.words()?,
            slots: input.words()?,
            ids: input.words()?,
            positions: input.words()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::precompiled::rows::row_sets::pieces_of;
    use rand_core::{RngCore, SeedableRng};
    use rand_xorshift::XorShiftRng;

    /// However the rows are cut, each wide row's terms name its own columns and ids, and a
    /// slot is numbered where the whole matrix first reads its position.
    #[test]
    fn slots_are_numbered_in_row_order_however_the_rows_are_cut() {
        let mut rng = XorShiftRng::seed_from_u64(5);
        let (rows, one) = (1000, 60);
        // Ids 2 and 3 are general; columns recur across pieces, the one among them.
        let matrix = Matrix::from_rows((0..rows).map(|_| {
            let terms = 1 + rng.next_u32() % 6;
            (0..terms)
                .map(|_| (rng.next_u32() % (one + 1), (rng.next_u32() % 4) as u16))
                .collect::<Vec<_>>()
        }));
        let general = |id: u16| id >= 2;
        let claimed = |row: usize| row.is_multiple_of(11);
        let whole = WideRows::by_pieces(
            &matrix,
            pieces_of(rows, rows.next_multiple_of(64)),
            one,
            general,
            &claimed,
        );
        let mut first_read = Vec::new();
        let mut wide = 0;
        for row in 0..rows {
            let expected = !claimed(row) && matrix.picks_on_a_variable(row, one, general);
            assert_eq!(whole.index(row), expected.then_some(wide), "row {row}");
            if !expected {
                continue;
            }
            let terms = whole.starts[wide] as usize..whole.starts[wide + 1] as usize;
            let (columns, ids) = matrix.row(row);
            let read: Vec<u32> = whole.slots[terms.clone()]
                .iter()
                .map(|&slot| whole.positions[slot as usize])
                .collect();
            assert_eq!((&read[..], &whole.ids[terms]), (columns, ids));
            for &column in columns {
                if !first_read.contains(&column) {
                    first_read.push(column);
                }
            }
            wide += 1;
        }
        assert!(wide > 100, "a test of few wide rows");
        assert_eq!(&whole.positions[..], &first_read[..]);
        for len in [64, 128, 640] {
            let cut = WideRows::by_pieces(&matrix, pieces_of(rows, len), one, general, &claimed);
            assert!((0..rows).all(|row| cut.index(row) == whole.index(row)));
            assert_eq!(
                (&cut.starts, &cut.slots, &cut.ids, &cut.positions),
                (&whole.starts, &whole.slots, &whole.ids, &whole.positions),
                "pieces of {len} rows"
            );
        }
    }
}
