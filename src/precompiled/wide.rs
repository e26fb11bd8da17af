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

use std::io;

use ff::PrimeField;
use rayon::prelude::*;

use super::coefficients::{limbs, IntegerField};
use super::matrix::Matrix;
use super::row_sets::{RankedRows, RowSet};
use super::sections::{SectionReader, SectionWriter, Sections, Source};
use super::words::Words;
use crate::vectors::reserve;
use crate::wide_sum::{Multiplier, WideSum};
use crate::Error;

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
        general: impl Fn(u16) -> bool,
        claimed: &dyn Fn(usize) -> bool,
    ) -> Self {
        let mut rows = RowSet::with_rows(matrix.rows());
        let (mut starts, mut slots, mut ids, mut positions) =
            (vec![0], Vec::new(), Vec::new(), Vec::new());
        let mut slot_of = std::collections::HashMap::new();
        for row in 0..matrix.rows() {
            if claimed(row) || !matrix.picks_on_a_variable(row, one, &general) {
                continue;
            }
            rows.insert(row);
            let (columns, row_ids) = matrix.row(row);
            for (&column, &id) in columns.iter().zip(row_ids) {
                let next = positions.len() as u32;
                let slot = *slot_of.entry(column).or_insert(next);
                if slot == next {
                    positions.push(column);
                }
                slots.push(slot);
                ids.push(id);
            }
            starts.push(slots.len() as u32);
        }
        if positions.is_empty() {
            // A matrix without wide rows holds nothing for them.
            return WideRows::default();
        }
        WideRows {
            rows: rows.ranked(),
            starts: starts.into(),
            slots: slots.into(),
            ids: ids.into(),
            positions: positions.into(),
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
