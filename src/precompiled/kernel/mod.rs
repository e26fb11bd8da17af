//! Row evaluation for dictionary-coded matrices, and the check that every row satisfies
//! `A·w * B·w = C·w`: the choice of the path that sums each row (this module), the
//! integer path (`integer.rs`) and the field path (`field.rs`). Every path gives the same
//! field element for a row; which one it takes changes only the time.
//!
//! Most witness values of these circuits are 0 or 1 (bits), so a term mostly adds its
//! coefficient or nothing, and coefficients are integers in disguise (±1, ±2^k, small
//! packing weights): rows are summed as integers and turned into a field element once.
//! Poseidon's rows are the exception: their values and coefficients are field elements.
//! Work goes a block of [`BLOCK`] rows at a time, one matrix after another, except inside
//! the stretches of field rows, which go a constraint at a time. Which path a row takes:
//!
//! | row | path | why |
//! |---|---|---|
//! | in a stretch of field rows (Poseidon's s-boxes and MDS rows) | `field_constraints`: each side one load (a value, a constant, or a stated value), products checked eight at a time | its values are field elements; the integer passes would give up on every term |
//! | any row, when the field's representation is not 32 bytes | `FieldSum`: a field sum per row | no integer arithmetic for such a field |
//! | a block of rows of one term of coefficient 1 (nearly all of B) | `unit_rows`: the value's kind (0 or 1) is the sum | no arithmetic at all |
//! | small coefficients over values 0 and 1 (SHA-256's bit products, sums, packing) | `integer_rows`: an `i64` sum, a table lookup for its field element | the common row: one multiply-add per term, no field arithmetic |
//! | a row of A that states a value, its claims holding together | the stated value | checked for all such rows at once (`claims.rs`) |
//! | general coefficients on variables (Poseidon's MDS combinations outside stretches) | `WideRows::sum`: 512-bit products reduced once per row | a field multiplication per term costs several times more |
//! | a general constant (a round key) and no large power of two | `general_row`: the field, in one pass | a value or two beside a constant |
//! | one term whose value is not 0 or 1, or of a large coefficient | its product | nothing to sum |
//! | large powers of two in runs over bits (MultiEq's packed words) | `run_row`: a run's bits read as one integer | eight bits per multiplication |
//! | anything else (large coefficients, values other than 0 and 1) | `spilled_row`: 32-bit lanes and 320-bit sums, other values' products in the field | exact, and rare |
//!
//! The order of the table below the first two rows is the order `IntegerSum::pass` asks
//! in: the first that applies takes the row.

mod field;
pub(crate) mod fill;
mod integer;
pub(crate) mod output;
pub(crate) mod streamed;
pub(crate) mod sums;
#[cfg(test)]
mod tests;

use std::mem::MaybeUninit;

use ff::PrimeField;
use rayon::prelude::*;

use self::field::FieldSum;
use self::integer::IntegerSum;
use crate::precompiled::kernel::fill::{fill_slots, fill_three};
use crate::precompiled::kernel::output::{BlockOutput, Fresh, InPlace, Streamed};
use crate::precompiled::kernel::sums::NOT_INTEGER;
use crate::precompiled::rows::claims::Claims;
use crate::precompiled::rows::coefficients::{CoefficientTable, FieldClass};
use crate::precompiled::rows::field_rows::FieldRows;
use crate::precompiled::rows::layout::{BlockClass, MatrixLayout, BLOCK};
use crate::precompiled::rows::matrix::Matrix;
use crate::precompiled::rows::row_sets::RowSet;
use crate::precompiled::rows::runs::PowerRuns;
use crate::precompiled::rows::wide::WideRows;
use crate::precompiled::witness::kinds::ValueKinds;

/// What evaluation reads of a recording: its matrices, what was derived from each, the
/// stretches of field rows and the coefficient table.
#[derive(Clone, Copy)]
pub(crate) struct RecordedRows<'a, Scalar> {
    pub(crate) matrices: &'a [Matrix; 3],
    pub(crate) layouts: &'a [MatrixLayout; 3],
    pub(crate) field_rows: &'a FieldRows,
    pub(crate) table: &'a CoefficientTable<Scalar>,
}

/// Rows evaluated per rayon task. Every chunk of rows is a task of its own (`with_max_len(1)`
/// on the loops over them): rayon's adaptive splitting otherwise cuts a loop into a couple
/// of pieces per thread and splits one further only when it is stolen, so a thread that
/// finished its share waited out the other's last piece (3-6 ms of the real 8 MiB
/// partition's 38 ms of rows on two threads; docs/journal.md).
const ROWS_PER_TASK: usize = 4096;

/// Everything one row evaluation reads: the recording, and the witness's values with
/// their kinds.
struct Rows<'a, Scalar> {
    recorded: RecordedRows<'a, Scalar>,
    inputs: &'a [Scalar],
    aux: &'a [Scalar],
    kinds: &'a ValueKinds,
    /// The rows of A that state a value, when they were checked to hold together: each
    /// one's A is its stated value.
    claims: Option<&'a Claims<Scalar>>,
}

impl<'a, Scalar: PrimeField> Rows<'a, Scalar> {
    /// The rows of `recorded` at the values `[inputs, aux]`, classified as `seen` says.
    fn at(
        recorded: RecordedRows<'a, Scalar>,
        [inputs, aux]: [&'a [Scalar]; 2],
        (kinds, claims): (&'a ValueKinds, Option<&'a Claims<Scalar>>),
    ) -> Self {
        Rows {
            recorded,
            inputs,
            aux,
            kinds,
            claims,
        }
    }

    /// The value at a column's position: aux values first, then inputs.
    #[inline]
    fn value(&self, column: u32) -> Scalar {
        match self.aux.get(column as usize) {
            Some(value) => *value,
            None => self.inputs[column as usize - self.aux.len()],
        }
    }

    /// `coeff * value` on the field path.
    #[inline]
    fn product(&self, id: u16, value: Scalar) -> Scalar {
        match self.recorded.table.classes[id as usize] {
            FieldClass::One => value,
            FieldClass::MinusOne => -value,
            FieldClass::PowerOfTwo(k) => (0..k).fold(value, |v, _| v.double()),
            FieldClass::General(coeff) => value * coeff,
        }
    }

    /// Evaluates rows `first..first + rows` (A·w, B·w, C·w for each), with `sum` summing one
    /// row's terms, into `out`; returns the first row not satisfied. Works in blocks of
    /// rows, one matrix at a time, so each pass keeps its few values in registers; the
    /// pieces of a block inside a stretch of field rows go a constraint at a time instead.
    #[inline(always)]
    fn constraints<S: RowSum<Scalar>, O: BlockOutput<Scalar>>(
        &self,
        matrices: &[Matrix; 3],
        first: usize,
        rows: usize,
        mut out: O,
        sum: S,
    ) -> Option<usize> {
        let mut integers = [[NOT_INTEGER; BLOCK]; 3];
        let mut failed = None;
        for offset in (0..rows).step_by(BLOCK) {
            let (block, count) = (first + offset, BLOCK.min(rows - offset));
            // Blocks start at multiples of BLOCK (chunks at multiples of ROWS_PER_TASK), so
            // a piece lies within one block and takes its classes.
            let class = |m: usize| {
                let layout = &self.recorded.layouts[m];
                BlockLayout {
                    class: layout.class(block / BLOCK),
                    runs: &layout.runs,
                    general: &layout.general,
                    wide: &layout.wide,
                    wide_values: &self.kinds.wide[m],
                    claims: self.claims.filter(|_| m == 0),
                }
            };
            self.recorded
                .field_rows
                .pieces(block, count, |start, count, field| {
                    let [a, b, c] = out.block(start - first, count);
                    let unsatisfied = if field {
                        self.field_constraints(matrices, start, [a, b, c])
                    } else {
                        let [ia, ib, ic] = &mut integers;
                        let (ia, ib, ic) = (&mut ia[..count], &mut ib[..count], &mut ic[..count]);
                        sum.pass(&matrices[0], start, a, ia, class(0));
                        sum.pass(&matrices[1], start, b, ib, class(1));
                        sum.pass(&matrices[2], start, c, ic, class(2));
                        sum.finish([a, b, c], &integers)
                    };
                    failed = failed.or(unsatisfied.map(|row| start + row));
                    out.commit(count);
                });
        }
        failed
    }

    /// [`Self::constraints`] with the fastest row sum this field allows.
    fn evaluate<O: BlockOutput<Scalar>>(
        &self,
        matrices: &[Matrix; 3],
        first: usize,
        rows: usize,
        out: O,
    ) -> Option<usize> {
        match &self.recorded.table.integers {
            Some(field) => {
                let sum = IntegerSum { rows: self, field };
                self.constraints(matrices, first, rows, out, sum)
            }
            None => self.constraints(matrices, first, rows, out, FieldSum { rows: self }),
        }
    }
}

/// What a block's rows of one matrix are made of, for [`RowSum::pass`].
struct BlockLayout<'a, Scalar> {
    /// Which loop sums the common rows.
    class: BlockClass,
    /// The matrix's runs of powers of two.
    runs: &'a PowerRuns,
    /// Its rows of general coefficients.
    general: &'a RowSet,
    /// Those of them on variables, summed as wide integers, and the integers of the values
    /// they read.
    wide: &'a WideRows,
    wide_values: &'a [[u64; 4]],
    /// For A, the claimed rows when they hold together.
    claims: Option<&'a Claims<Scalar>>,
}

/// How the rows of one matrix are summed, a block at a time.
trait RowSum<Scalar> {
    /// Rows `first..first + out.len()` of `matrix`: their sums as integers into `integers`
    /// where they are small integers (their field elements follow in [`Self::finish`]),
    /// else [`NOT_INTEGER`] there and the field element into `out`. `layout`: what these
    /// rows are made of.
    fn pass(
        &self,
        matrix: &Matrix,
        first: usize,
        out: &mut [Scalar],
        integers: &mut [i64],
        layout: BlockLayout<'_, Scalar>,
    );

    /// Completes a block's rows: the field elements of the integer sums into `out`, then
    /// the first row (of the block) that is not satisfied, if any.
    fn finish(&self, out: [&mut [Scalar]; 3], integers: &[[i64; BLOCK]; 3]) -> Option<usize>;
}

/// Sets `a`, `b`, `c` to the matrices' rows on the rayon pool; returns the first row that
/// is not satisfied, if any. Vectors of the right length (the previous proof's) are
/// overwritten in place, with streaming stores where this build has them; others are
/// refilled from empty, each value written once (no zero-filling first), and must already
/// hold the rows' capacity.
#[inline(never)] // called once per evaluation; kept apart so profiles can single it out
pub(crate) fn evaluate_rows<Scalar: PrimeField>(
    recorded: RecordedRows<'_, Scalar>,
    values: [&[Scalar]; 2],
    seen: (&ValueKinds, Option<&Claims<Scalar>>),
    [a, b, c]: [&mut Vec<Scalar>; 3],
) -> Option<usize> {
    let matrices = recorded.matrices;
    let rows = Rows::at(recorded, values, seen);
    let count = matrices[0].rows();
    if [a.len(), b.len(), c.len()] == [count; 3] {
        let streams = streamed::streams::<Scalar>();
        return a
            .par_chunks_mut(ROWS_PER_TASK)
            .zip(b.par_chunks_mut(ROWS_PER_TASK))
            .zip(c.par_chunks_mut(ROWS_PER_TASK))
            .enumerate()
            .with_max_len(1)
            .filter_map(|(task, ((a, b), c))| {
                let (first, rows_here) = (task * ROWS_PER_TASK, a.len());
                if !streams {
                    return rows.evaluate(matrices, first, rows_here, InPlace([a, b, c]));
                }
                let out = Streamed::new([a, b, c], Scalar::ZERO);
                let unsatisfied = rows.evaluate(matrices, first, rows_here, out);
                streamed::fence();
                unsatisfied
            })
            .min();
    }
    let results = fill_three(
        [a, b, c],
        count,
        ROWS_PER_TASK,
        |first, chunk_rows, emit| {
            let out = Fresh::new(emit, Scalar::ZERO);
            rows.evaluate(matrices, first, chunk_rows, out)
        },
    )
    .expect("evaluation writes every row of its chunk");
    results.into_iter().flatten().min()
}

/// Writes the matrices' rows into `slots` (a, b, c, storage a caller owns) on the rayon
/// pool, each slot once; returns the first row that is not satisfied, if any, or `None`
/// where the slots are not the rows' length (nothing written then).
#[inline(never)] // as `evaluate_rows`
pub(crate) fn evaluate_rows_into<Scalar: PrimeField>(
    recorded: RecordedRows<'_, Scalar>,
    values: [&[Scalar]; 2],
    seen: (&ValueKinds, Option<&Claims<Scalar>>),
    slots: [&mut [MaybeUninit<Scalar>]; 3],
) -> Option<Option<usize>> {
    let matrices = recorded.matrices;
    if slots.iter().any(|slots| slots.len() != matrices[0].rows()) {
        return None;
    }
    let rows = Rows::at(recorded, values, seen);
    // Storage a caller keeps from proof to proof is written as the previous proof's
    // vectors are: streamed, past the caches.
    let streams = streamed::streams::<Scalar>();
    let results = fill_slots(slots, ROWS_PER_TASK, streams, |first, chunk_rows, emit| {
        let out = Fresh::new(emit, Scalar::ZERO);
        rows.evaluate(matrices, first, chunk_rows, out)
    })?;
    Some(results.into_iter().flatten().min())
}

/// The first row whose evaluation against `values` (inputs, aux) differs from `expected` (a,
/// b, c), evaluated on the rayon pool a chunk at a time: every row summed, but the rows of
/// A that state a value, which are that value when `claims` (checked to hold) is given.
pub(crate) fn first_difference<Scalar: PrimeField>(
    recorded: RecordedRows<'_, Scalar>,
    values: [&[Scalar]; 2],
    seen: (&ValueKinds, Option<&Claims<Scalar>>),
    expected: [&[Scalar]; 3],
) -> Option<usize> {
    let matrices = recorded.matrices;
    let rows = Rows::at(recorded, values, seen);
    let chunks = expected[0].len().div_ceil(ROWS_PER_TASK);
    (0..chunks)
        .into_par_iter()
        .with_max_len(1)
        .find_map_first(|chunk| {
            let first = chunk * ROWS_PER_TASK;
            let count = ROWS_PER_TASK.min(expected[0].len() - first);
            let mut ours: [Vec<Scalar>; 3] = Default::default();
            let [a, b, c] = &mut ours;
            fill_three([a, b, c], count, count, |_, _, emit| {
                let out = Fresh::new(emit, Scalar::ZERO);
                rows.evaluate(matrices, first, count, out)
            })?;
            (0..count)
                .find(|&row| (0..3).any(|side| ours[side][row] != expected[side][first + row]))
                .map(|row| first + row)
        })
}
