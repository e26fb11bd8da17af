//! Row evaluation for dictionary-coded matrices, and the check that every row satisfies
//! `A·w * B·w = C·w`.
//!
//! Most witness values of these circuits are 0 or 1 (bits), so a term mostly adds its
//! coefficient or nothing. Coefficients are integers in disguise (±1, ±2^k, small packing
//! weights; the table in the `coefficients` module), so the rows are summed as integers: a
//! small coefficient into an `i64`, a large one (MultiEq's 2^k up to the field's capacity)
//! into 320-bit accumulators, and the sum is turned into a field element once per row (a
//! table lookup for the small sums nearly all rows have). A value other than 0 and 1 takes
//! the field path for its term. Rows whose three sums are small integers are checked in
//! integers too. Field arithmetic is exact, and the integer sums equal the field sums
//! modulo the field's order, so every path gives the same field element.
//!
//! Work goes a block of rows at a time, one matrix after another: a tight loop sums the
//! common rows (its variant chosen by what the block is made of, [`BlockClass`]), the rows
//! it leaves take the spilled path (MultiEq's long rows a word at a time, by their runs of
//! powers of two: the `runs` module), then one loop per block turns the sums into field
//! elements and checks each constraint.
//!
//! The integer path needs the field's representation to be 32 little-endian bytes (as
//! BLS12-381's scalar field has); any other field is evaluated in the field throughout.

use ff::PrimeField;
use rayon::prelude::*;

use super::claims::Claims;
use super::coefficients::{
    CoefficientTable, FieldClass, IntegerField, LARGE_GENERAL, LARGE_NEGATIVE, LARGE_TWO,
    SECOND_POWER, SMALL_MIN, SMALL_SUMS,
};
use super::field_rows::{FieldRows, UNIT};
use super::fill::fill_three;
use super::kinds::{ValueKinds, KIND_ONE, KIND_ZERO};
use super::layout::{BlockClass, MatrixLayout, BLOCK};
use super::matrix::Matrix;
use super::output::{BlockOutput, Fresh, InPlace};
use super::row_sets::RowSet;
use super::runs::{PowerRuns, RunRow};
use super::sums::{add_at, add_power, field_satisfied, satisfied, NOT_INTEGER};
use super::wide::WideRows;

/// Rows evaluated per rayon task.
const ROWS_PER_TASK: usize = 4096;

/// Everything one row evaluation reads.
struct Rows<'a, Scalar> {
    inputs: &'a [Scalar],
    aux: &'a [Scalar],
    kinds: &'a ValueKinds,
    table: &'a CoefficientTable<Scalar>,
    /// Per matrix, what evaluation derived from it.
    layouts: &'a [MatrixLayout; 3],
    /// The stretches of constraints evaluated in the field a constraint at a time.
    field_rows: &'a FieldRows,
    /// The rows of A that state a value, when they were checked to hold together: each
    /// one's A is its stated value.
    claims: Option<&'a Claims<Scalar>>,
}

impl<Scalar: PrimeField> Rows<'_, Scalar> {
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
        match self.table.classes[id as usize] {
            FieldClass::One => value,
            FieldClass::MinusOne => -value,
            FieldClass::PowerOfTwo(k) => (0..k).fold(value, |v, _| v.double()),
            FieldClass::General(coeff) => value * coeff,
        }
    }

    /// A row off the small-integer path: small coefficients over bits summed as integers,
    /// large powers of two (and sums of two) counted in 32-bit lanes put together once at
    /// the end, other large ones in 320 bits, and the terms of values other than 0 and 1
    /// (rare) in the field, in a second pass, so the bit loop keeps its tables in registers.
    #[inline(never)]
    fn spilled_row(&self, field: &IntegerField<Scalar>, columns: &[u32], ids: &[u16]) -> Scalar {
        let terms = columns.iter().copied().zip(ids.iter().copied());
        self.spilled_terms(field, terms, None)
    }

    /// [`Self::spilled_row`] of some terms, with `large` holding what other terms of the row
    /// already summed in 320 bits (positive, negative), so the row becomes one field
    /// element once.
    #[inline(always)]
    fn spilled_terms(
        &self,
        field: &IntegerField<Scalar>,
        terms: impl Iterator<Item = (u32, u16)> + Clone,
        summed: Option<[[u64; 5]; 2]>,
    ) -> Scalar {
        let (kinds, mask) = (self.kinds.map(), self.kinds.mask);
        let (small, large_terms) = (&*self.table.small, &self.table.large[..]);
        let mut integer = 0i64;
        let mut powers = [0u64; 16];
        let (mut others, mut any_power, mut any_large) = (false, false, summed.is_some());
        let mut large = summed.unwrap_or([[0; 5]; 2]);
        for (column, id) in terms.clone() {
            let kind = kinds[column as usize & mask];
            if kind > KIND_ONE {
                others = true;
                continue;
            }
            let coeff = small[usize::from(id)];
            if coeff > SMALL_MIN {
                integer += coeff * i64::from(kind);
            } else if coeff & LARGE_GENERAL == 0 {
                any_power = true;
                add_power(&mut powers, coeff, kind);
                if coeff & LARGE_TWO != 0 {
                    add_power(&mut powers, coeff >> SECOND_POWER, kind);
                }
            } else if kind == KIND_ONE {
                any_large = true;
                let acc = &mut large[usize::from(coeff & LARGE_NEGATIVE != 0)];
                let magnitude = &large_terms[usize::from(id)].magnitude;
                for (limb, &value) in magnitude.iter().enumerate() {
                    add_at(acc, limb, u128::from(value));
                }
            }
        }
        if any_power {
            any_large = true;
            for (lane, &sum) in powers.iter().enumerate() {
                let (sign, shift) = (lane / 8, 32 * (lane % 8));
                add_at(
                    &mut large[sign],
                    shift / 64,
                    u128::from(sum) << (shift % 64),
                );
            }
        }
        // Sums no term reached stay out of the conversions.
        let mut sum = field.small_element(integer);
        if any_large {
            let [positive, negative] = &large;
            sum += field.element(positive) - field.element(negative);
        }
        if others {
            sum + self.other_terms(terms)
        } else {
            sum
        }
    }

    /// A row holding runs of powers of two (its terms `columns` and `ids`): each run's
    /// values read as the bits of one integer, the other terms on the spilled path. `None`
    /// when a run covers a value other than 0 and 1 (the whole row then takes the spilled
    /// path).
    #[inline(never)]
    fn run_row(
        &self,
        field: &IntegerField<Scalar>,
        row: RunRow<'_>,
        (columns, ids): (&[u32], &[u16]),
    ) -> Option<Scalar> {
        let kinds = self.kinds.map();
        let mut large = [[0u64; 5]; 2];
        for run in row.runs {
            let bits = run.bits(kinds)?;
            let acc = &mut large[usize::from(run.negative())];
            for low in std::iter::once(run.low).chain(run.second()) {
                let low = usize::from(low);
                add_at(acc, low / 64, u128::from(bits) << (low % 64));
            }
        }
        // The offsets were taken from this row's terms when the runs were found.
        let rest = row.rest.iter().map(|&at| {
            let at = usize::from(at);
            (columns[at], ids[at])
        });
        Some(self.spilled_terms(field, rest, Some(large)))
    }

    /// The terms of a row whose values are other than 0 and 1, multiplied in the field.
    #[cold]
    #[inline(never)]
    fn other_terms(&self, terms: impl Iterator<Item = (u32, u16)>) -> Scalar {
        let kinds = self.kinds.map();
        let mut sum = Scalar::ZERO;
        for (column, id) in terms {
            if kinds[column as usize & self.kinds.mask] > KIND_ONE {
                sum += self.product(id, self.value(column));
            }
        }
        sum
    }

    /// A row holding a general coefficient (neither a small integer nor one or two powers of
    /// two: Poseidon's MDS and round constants), summed in the field in one pass. Its values
    /// are mostly field elements, which the integer path could only hand to the field one
    /// by one after converting its own sums.
    #[inline(never)]
    fn general_row(&self, columns: &[u32], ids: &[u16]) -> Scalar {
        self.field_row(columns, ids)
    }

    /// A row summed in the field: for fields without the integer path, and rows of general
    /// coefficients.
    #[inline(always)]
    fn field_row(&self, columns: &[u32], ids: &[u16]) -> Scalar {
        let mut acc = Scalar::ZERO;
        for (&column, &id) in columns.iter().zip(ids) {
            match self.kinds.map()[column as usize & self.kinds.mask] {
                KIND_ZERO => {}
                KIND_ONE => acc += self.table.values[id as usize],
                _ => acc += self.product(id, self.value(column)),
            }
        }
        acc
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
                let layout = &self.layouts[m];
                BlockLayout {
                    class: layout.class(block / BLOCK),
                    runs: &layout.runs,
                    general: &layout.general,
                    wide: &layout.wide,
                    wide_values: &self.kinds.wide[m],
                    claims: self.claims.filter(|_| m == 0),
                }
            };
            self.field_rows.pieces(block, count, |start, count, field| {
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

    /// Constraints `first..first + a.len()` of a stretch of field rows, a constraint at a
    /// time in the field: each side is its value plus its constant (or, for an A that
    /// states a value whose claims held, that value; any other row is summed); returns the
    /// first (of these) that is not satisfied. A row whose B is 1 (one stating a value)
    /// holds when A is C; the others' products are checked together after the loop, eight
    /// at a time where the CPU allows. Their values are seldom 0 or 1, so looking for
    /// those first would cost more than it saves.
    #[inline(never)]
    fn field_constraints(
        &self,
        matrices: &[Matrix; 3],
        first: usize,
        [a, b, c]: [&mut [Scalar]; 3],
    ) -> Option<usize> {
        let n = a.len();
        let [ma, mb, mc] = matrices;
        let starts = [ma, mb, mc].map(|m| &m.row_starts[first..=first + n]);
        // Pieces are at most a block long.
        let mut products = [0u16; BLOCK];
        let mut count = 0;
        let mut all_hold = true;
        for (row, ((a, b), c)) in a.iter_mut().zip(b.iter_mut()).zip(c.iter_mut()).enumerate() {
            let terms = |m: usize| (starts[m][row], starts[m][row + 1]);
            if !self.field_side(ma, terms(0), a) {
                *a = self.other_side(ma, terms(0), Some(first + row));
            }
            if !self.field_side(mb, terms(1), b) {
                *b = self.other_side(mb, terms(1), None);
            }
            if !self.field_side(mc, terms(2), c) {
                *c = self.other_side(mc, terms(2), None);
            }
            if *b == Scalar::ONE {
                all_hold &= a == c;
            } else {
                products[count] = row as u16;
                count += 1;
            }
        }
        all_hold &= products_hold([a, b, c], &products[..count]);
        if all_hold {
            return None;
        }
        let mut rows = a.iter().zip(b.iter()).zip(c.iter());
        rows.position(|((a, b), c)| *a * b != *c)
    }

    /// Writes a side of a field row, the terms `start..end` of `matrix`, into `out` when it
    /// is a value with coefficient 1 and a constant on the one, either absent; false (and
    /// nothing written) for any other row.
    #[inline(always)]
    fn field_side(&self, matrix: &Matrix, (start, end): (u32, u32), out: &mut Scalar) -> bool {
        let (start, end) = (start as usize, end as usize);
        let one = self.aux.len() as u32;
        let (columns, ids, values) = (&matrix.columns, &matrix.coeff_ids, &self.table.values);
        match end.wrapping_sub(start) {
            1 => {
                let (x, id) = (columns[start], ids[start]);
                if x == one {
                    *out = values[usize::from(id)];
                } else if id == UNIT {
                    *out = self.value(x);
                } else {
                    return false;
                }
            }
            2 => {
                let (x, y) = (columns[start], columns[start + 1]);
                let (i, j) = (ids[start], ids[start + 1]);
                // The recorder keeps the one (input 0) ahead of the variables.
                if x == one && y != one && j == UNIT {
                    *out = values[usize::from(i)] + self.value(y);
                } else if y == one && x != one && i == UNIT {
                    *out = self.value(x) + values[usize::from(j)];
                } else {
                    return false;
                }
            }
            0 => *out = Scalar::ZERO,
            _ => return false,
        }
        true
    }

    /// A side of a field row of another form, the terms `start..end` of `matrix`: for a
    /// row of A (`stating` its row), the value it states when the claims held; else its
    /// sum.
    #[inline(never)]
    fn other_side(
        &self,
        matrix: &Matrix,
        (start, end): (u32, u32),
        stating: Option<usize>,
    ) -> Scalar {
        let stated = stating.and_then(|row| self.claims.and_then(|claims| claims.stated(row)));
        match stated {
            Some(stated) => self.value(stated),
            None => {
                let terms = start as usize..end as usize;
                self.field_row(&matrix.columns[terms.clone()], &matrix.coeff_ids[terms])
            }
        }
    }

    /// [`Self::constraints`] with the fastest row sum this field allows.
    fn evaluate<O: BlockOutput<Scalar>>(
        &self,
        matrices: &[Matrix; 3],
        first: usize,
        rows: usize,
        out: O,
    ) -> Option<usize> {
        match &self.table.integers {
            Some(field) => {
                let sum = IntegerSum { rows: self, field };
                self.constraints(matrices, first, rows, out, sum)
            }
            None => self.constraints(matrices, first, rows, out, FieldSum { rows: self }),
        }
    }
}

/// Whether `a[r] · b[r] = c[r]` for each of `rows`: eight at a time on lanes where the
/// field and CPU have them, one by one otherwise.
#[inline]
fn products_hold<Scalar: PrimeField>([a, b, c]: [&[Scalar]; 3], rows: &[u16]) -> bool {
    #[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
    if let Some(lanes) = super::lanes_x86_64::Lanes::for_field::<Scalar>() {
        return lanes.products_hold([a, b, c], rows);
    }
    rows.iter().all(|&r| {
        let r = usize::from(r);
        a[r] * b[r] == c[r]
    })
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

/// Integer sums, for fields that allow them.
struct IntegerSum<'a, 'b, Scalar> {
    rows: &'a Rows<'b, Scalar>,
    field: &'a IntegerField<Scalar>,
}

impl<Scalar: PrimeField> RowSum<Scalar> for IntegerSum<'_, '_, Scalar> {
    /// The common rows' sums in one tight loop, then the rows it left (a large coefficient,
    /// or a value other than 0 and 1): by their runs where they hold some, else on the
    /// spilled path.
    #[inline(always)]
    fn pass(
        &self,
        matrix: &Matrix,
        first: usize,
        out: &mut [Scalar],
        integers: &mut [i64],
        layout: BlockLayout<'_, Scalar>,
    ) {
        let (kinds, small) = (self.rows.kinds, &*self.rows.table.small);
        let BlockLayout {
            class,
            runs,
            general,
            wide,
            wide_values,
            claims,
        } = layout;
        let all_small = match class {
            BlockClass::Unit => unit_rows(matrix, first, integers, kinds),
            BlockClass::Small => integer_rows::<false>(matrix, first, integers, kinds, small),
            BlockClass::Mixed => integer_rows::<true>(matrix, first, integers, kinds, small),
        };
        if all_small {
            return;
        }
        for (row, (out, &integer)) in out.iter_mut().zip(&*integers).enumerate() {
            if integer == NOT_INTEGER {
                let at = first + row;
                let range = matrix.row_starts[at] as usize..matrix.row_starts[at + 1] as usize;
                let (columns, ids) = (&matrix.columns[range.clone()], &matrix.coeff_ids[range]);
                if let Some(stated) = claims.and_then(|claims| claims.stated(at)) {
                    *out = self.rows.value(stated);
                    continue;
                }
                if let Some(i) = wide.index(at) {
                    *out = wide.sum(i, wide_values, &self.rows.table.wide, self.field);
                    continue;
                }
                if general.holds(at) {
                    *out = self.rows.general_row(columns, ids);
                    continue;
                }
                // One term (a value other than 0 and 1, or a large coefficient): its product.
                if let ([column], [id]) = (columns, ids) {
                    *out = self.rows.product(*id, self.rows.value(*column));
                    continue;
                }
                let by_runs = runs.row(at);
                let summed =
                    by_runs.and_then(|row| self.rows.run_row(self.field, row, (columns, ids)));
                *out = match summed {
                    Some(sum) => sum,
                    None => self.rows.spilled_row(self.field, columns, ids),
                };
            }
        }
    }

    /// One loop over the block's constraints: each integer sum becomes its field element (a
    /// table lookup for the small sums nearly all rows have), and a constraint of three
    /// integer sums is checked in integers. The loop only notes whether every constraint
    /// held; the first that did not is looked for again only then, which keeps the loop
    /// free of branches and its pointers in registers.
    #[inline(never)]
    fn finish(&self, [a, b, c]: [&mut [Scalar]; 3], integers: &[[i64; BLOCK]; 3]) -> Option<usize> {
        let mut all_hold = true;
        let n = a.len();
        // One array holds the three matrices' sums: one pointer reaches all three.
        let [x, y, z] = integers;
        let (x, y, z) = (&x[..n], &y[..n], &z[..n]);
        let (b, c) = (&mut b[..n], &mut c[..n]);
        let table = &self.field.small_sums;
        // The table's length is a power of two: a masked index needs no bounds check.
        let last = table.len() - 1;
        for row in 0..n {
            let (x, y, z) = (x[row], y[row], z[row]);
            // One comparison finds whether all three sums are in the table (NOT_INTEGER
            // wraps far past it).
            let [i, j, k] = [x, y, z].map(|sum| sum.wrapping_add(SMALL_SUMS) as u64);
            all_hold &= if (i | j | k) <= last as u64 {
                a[row] = table[i as usize & last];
                b[row] = table[j as usize & last];
                c[row] = table[k as usize & last];
                // Sums within the table are below 2^6 in magnitude: their product fits.
                x * y == z
            } else {
                self.finish_wide([&mut a[row], &mut b[row], &mut c[row]], (x, y, z))
            };
        }
        if all_hold {
            return None;
        }
        let mut rows = a
            .iter()
            .zip(b.iter())
            .zip(c.iter())
            .zip(x.iter().zip(y.iter()).zip(z.iter()));
        rows.position(|(((a, b), c), ((&x, &y), &z))| !satisfied((x, y, z), [a, b, c]))
    }
}

impl<Scalar: PrimeField> IntegerSum<'_, '_, Scalar> {
    /// [`RowSum::finish`] for a constraint with a sum past the table: its integer sums
    /// become field elements, and whether it holds.
    #[inline(never)]
    fn finish_wide(&self, out: [&mut Scalar; 3], (x, y, z): (i64, i64, i64)) -> bool {
        let [a, b, c] = out;
        for (out, sum) in [(&mut *a, x), (&mut *b, y), (&mut *c, z)] {
            if sum != NOT_INTEGER {
                *out = self.field.small_element(sum);
            }
        }
        satisfied((x, y, z), [a, b, c])
    }
}

/// The integer sums of the rows of `matrix` from `first` on, one per element of `integers`,
/// for rows whose terms are small coefficients over 0/1 values; [`NOT_INTEGER`] for every
/// other row. Returns whether there was no such other row. `LARGE`: whether a coefficient
/// may be large (else none is checked for). Not inlined, and calling nothing: the loop keeps
/// its pointers and sum in registers. One check per row keeps the term indices in bounds,
/// and the kind map, sliced to exactly `mask + 1`, needs none for a masked position.
#[inline(never)]
fn integer_rows<const LARGE: bool>(
    matrix: &Matrix,
    first: usize,
    integers: &mut [i64],
    kinds: &ValueKinds,
    small: &[i64; 1 << 16],
) -> bool {
    let (kinds, mask) = (kinds.map(), kinds.mask);
    let starts = &matrix.row_starts[first..=first + integers.len()];
    let columns = &matrix.columns[..];
    let ids = &matrix.coeff_ids[..columns.len()];
    let mut term = starts[0] as usize;
    let mut all_small = true;
    for (integer, &end) in integers.iter_mut().zip(&starts[1..]) {
        let end = end as usize;
        assert!(end <= columns.len(), "row ends within the matrix");
        let mut sum: i64 = 0;
        while term < end {
            let kind = kinds[columns[term] as usize & mask];
            let coeff = small[ids[term] as usize];
            if kind > KIND_ONE || (LARGE && coeff <= SMALL_MIN) {
                sum = NOT_INTEGER;
                all_small = false;
                break;
            }
            // `kind` is 0 or 1: add the coefficient or nothing, without a branch.
            sum += coeff * i64::from(kind);
            term += 1;
        }
        term = end;
        *integer = sum;
    }
    all_small
}

/// [`integer_rows`] for a block whose rows are each one term of coefficient 1: the sum is
/// the value's kind where that is 0 or 1.
#[inline(never)]
fn unit_rows(matrix: &Matrix, first: usize, integers: &mut [i64], kinds: &ValueKinds) -> bool {
    let (kinds, mask) = (kinds.map(), kinds.mask);
    let (lo, hi) = (
        matrix.row_starts[first] as usize,
        matrix.row_starts[first + integers.len()] as usize,
    );
    let columns = &matrix.columns[lo..hi];
    assert_eq!(
        columns.len(),
        integers.len(),
        "a unit block has one term per row"
    );
    let mut all_small = true;
    for (integer, &column) in integers.iter_mut().zip(columns) {
        let kind = kinds[column as usize & mask];
        *integer = if kind > KIND_ONE {
            all_small = false;
            NOT_INTEGER
        } else {
            i64::from(kind)
        };
    }
    all_small
}

/// Field sums throughout.
struct FieldSum<'a, 'b, Scalar> {
    rows: &'a Rows<'b, Scalar>,
}

impl<Scalar: PrimeField> RowSum<Scalar> for FieldSum<'_, '_, Scalar> {
    fn pass(
        &self,
        matrix: &Matrix,
        first: usize,
        out: &mut [Scalar],
        integers: &mut [i64],
        _: BlockLayout<'_, Scalar>,
    ) {
        let starts = &matrix.row_starts[first..=first + out.len()];
        for ((out, integer), ends) in out.iter_mut().zip(integers).zip(starts.windows(2)) {
            let range = ends[0] as usize..ends[1] as usize;
            *out = self
                .rows
                .field_row(&matrix.columns[range.clone()], &matrix.coeff_ids[range]);
            *integer = NOT_INTEGER;
        }
    }

    fn finish(&self, [a, b, c]: [&mut [Scalar]; 3], _: &[[i64; BLOCK]; 3]) -> Option<usize> {
        let mut rows = a.iter().zip(b.iter()).zip(c.iter());
        rows.position(|((a, b), c)| !field_satisfied(a, b, c))
    }
}

/// Sets `a`, `b`, `c` to the matrices' rows on the rayon pool; returns the first row that
/// is not satisfied, if any. Vectors of the right length (the previous proof's) are
/// overwritten in place; others are refilled from empty, each value written once (no
/// zero-filling first), and must already hold the rows' capacity.
#[inline(never)] // called once per evaluation; kept apart so profiles can single it out
pub(crate) fn evaluate_rows<Scalar: PrimeField>(
    (matrices, layouts, field_rows): (&[Matrix; 3], &[MatrixLayout; 3], &FieldRows),
    table: &CoefficientTable<Scalar>,
    [inputs, aux]: [&[Scalar]; 2],
    (kinds, claims): (&ValueKinds, Option<&Claims<Scalar>>),
    [a, b, c]: [&mut Vec<Scalar>; 3],
) -> Option<usize> {
    let rows = Rows {
        inputs,
        aux,
        kinds,
        table,
        layouts,
        field_rows,
        claims,
    };
    let count = matrices[0].rows();
    if [a.len(), b.len(), c.len()] == [count; 3] {
        return a
            .par_chunks_mut(ROWS_PER_TASK)
            .zip(b.par_chunks_mut(ROWS_PER_TASK))
            .zip(c.par_chunks_mut(ROWS_PER_TASK))
            .enumerate()
            .filter_map(|(task, ((a, b), c))| {
                let first = task * ROWS_PER_TASK;
                rows.evaluate(matrices, first, a.len(), InPlace([a, b, c]))
            })
            .min();
    }
    let results = fill_three(
        [a, b, c],
        count,
        ROWS_PER_TASK,
        |first, chunk_rows, emit| {
            let out = Fresh {
                emit,
                values: [[Scalar::ZERO; BLOCK]; 3],
            };
            rows.evaluate(matrices, first, chunk_rows, out)
        },
    )
    .expect("evaluation writes every row of its chunk");
    results.into_iter().flatten().min()
}

/// The first row whose evaluation against `inputs` and `aux` differs from `expected` (a,
/// b, c), evaluated on the rayon pool a chunk at a time: every row summed, but the rows of
/// A that state a value, which are that value when `claims` (checked to hold) is given.
pub(crate) fn first_difference<Scalar: PrimeField>(
    (matrices, layouts, field_rows): (&[Matrix; 3], &[MatrixLayout; 3], &FieldRows),
    table: &CoefficientTable<Scalar>,
    [inputs, aux]: [&[Scalar]; 2],
    (kinds, claims): (&ValueKinds, Option<&Claims<Scalar>>),
    expected: [&[Scalar]; 3],
) -> Option<usize> {
    let rows = Rows {
        inputs,
        aux,
        kinds,
        table,
        layouts,
        field_rows,
        claims,
    };
    let chunks = expected[0].len().div_ceil(ROWS_PER_TASK);
    (0..chunks).into_par_iter().find_map_first(|chunk| {
        let first = chunk * ROWS_PER_TASK;
        let count = ROWS_PER_TASK.min(expected[0].len() - first);
        let mut ours: [Vec<Scalar>; 3] = Default::default();
        let [a, b, c] = &mut ours;
        fill_three([a, b, c], count, count, |_, _, emit| {
            let out = Fresh {
                emit,
                values: [[Scalar::ZERO; BLOCK]; 3],
            };
            rows.evaluate(matrices, first, count, out)
        })?;
        (0..count)
            .find(|&row| (0..3).any(|side| ours[side][row] != expected[side][first + row]))
            .map(|row| first + row)
    })
}

#[cfg(test)]
mod tests {
    use super::super::coefficients::from_i128;
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;
    use rand_core::{RngCore, SeedableRng};
    use rand_xorshift::XorShiftRng;

    /// Rows of random coefficients (small, large, negative) over random 0/1 and other
    /// values, summed by the kernel and term by term in the field; long rows hold runs of
    /// powers of two too (rising, falling, negative, of sums of two powers, of every length
    /// around the shortest packed one, over bits only and over other values).
    #[test]
    fn integer_sums_equal_field_sums() {
        let mut rng = XorShiftRng::seed_from_u64(31);
        let mut dictionary = vec![Fr::ONE, -Fr::ONE];
        // Every power up to 2^130 and some far above, so runs cross every 32-bit lane and
        // 64-bit limb boundary; sums of two of them (MultiEq's words added twice), and
        // coefficients that are neither.
        let power = |k: u64| Fr::from(2u64).pow_vartime([k]);
        let mut power_ids = std::collections::HashMap::new();
        for k in (1..=130).chain([200, 223, 224, 253, 254]) {
            power_ids.insert((false, k, None), dictionary.len() as u16);
            dictionary.push(power(k));
            power_ids.insert((true, k, None), dictionary.len() as u16);
            dictionary.push(-power(k));
        }
        for (k, j) in (0..=80)
            .map(|k| (k, k + 35))
            .chain([(31, 32), (0, 224), (63, 254)])
        {
            power_ids.insert((false, k, Some(j)), dictionary.len() as u16);
            dictionary.push(power(k) + power(j));
            power_ids.insert((true, k, Some(j)), dictionary.len() as u16);
            dictionary.push(-(power(k) + power(j)));
        }
        dictionary.push(Fr::random(&mut rng));
        dictionary.push(Fr::from(u64::MAX));
        let table = CoefficientTable::new(dictionary.to_vec());
        assert!(table.integers.is_some());
        // Values 0 to 199 are 0, 1 and others; 200 to 399 bits only.
        let aux: Vec<Fr> = (0..400)
            .map(|i| match (i % 7, i < 200) {
                (0, true) => Fr::random(&mut rng),
                (1..=3, _) => Fr::ONE,
                _ => Fr::ZERO,
            })
            .collect();
        let inputs = vec![Fr::ONE, Fr::from(5u64)];
        let value = |column: u32| match aux.get(column as usize) {
            Some(value) => *value,
            None => inputs[column as usize - aux.len()],
        };
        let mut matrix = super::super::matrix::MatrixBuilder::default();
        let mut expected = Vec::new();
        for row in 0..4 * BLOCK {
            let mut sum = Fr::ZERO;
            let mut push = |column: u32, id: u16| {
                sum += value(column) * dictionary[id as usize];
                matrix.columns.push(column);
                matrix.coeff_ids.push(id);
            };
            // Long rows of every coefficient, short rows of small ones over bits (the
            // common rows, summed in integers), some with a term off that path; a block of
            // short rows only, and a last block of single terms of coefficient 1.
            let (terms, ids) = match row % 3 {
                _ if row >= 3 * BLOCK => (1, 1),
                _ if row / BLOCK == 1 => (rng.next_u32() % 5, 2 * 3),
                0 => (rng.next_u32() % 1200, dictionary.len()),
                _ => (rng.next_u32() % 5, 2 * 3),
            };
            for _ in 0..terms {
                let id = (rng.next_u32() as usize % ids) as u16;
                let column = match rng.next_u32() % 10 {
                    0 => 400 + rng.next_u32() % 2,
                    _ => rng.next_u32() % 400,
                };
                push(column, id);
                if terms > 100 && rng.next_u32() % 100 == 0 {
                    let len = 6 + rng.next_u32() % 70;
                    // Runs of every other long row over bits only, so they are packed.
                    let start = match row % 2 {
                        0 => 200 + rng.next_u32() % (200 - len),
                        _ => rng.next_u32() % (400 - len),
                    };
                    let (negative, falling) = (rng.next_u32() % 2 == 0, rng.next_u32() % 2 == 0);
                    let two = rng.next_u32() % 3 == 0;
                    let low = 1 + rng.next_u32() % (if two { 81 } else { 131 } - len);
                    for i in 0..len {
                        let k = if falling { low + len - 1 - i } else { low + i };
                        let key = (negative, u64::from(k), two.then_some(u64::from(k) + 35));
                        push(start + i, power_ids[&key]);
                    }
                }
            }
            matrix.row_starts.push(matrix.columns.len() as u32);
            expected.push(sum);
        }
        let matrix = Matrix::from(matrix);
        let layout = MatrixLayout::new(&matrix, &table, 400, &|_| false);
        use BlockClass::{Mixed, Small, Unit};
        let classes: Vec<BlockClass> = (0..4).map(|block| layout.class(block)).collect();
        assert_eq!(classes, [Mixed, Small, Mixed, Unit]);
        let layouts = [
            MatrixLayout::new(&Matrix::default(), &table, 400, &|_| false),
            layout,
            MatrixLayout::new(&Matrix::default(), &table, 400, &|_| false),
        ];
        assert!(layouts[1].wide.positions().len() > 100, "rows summed wide");
        let mut kinds = ValueKinds::default();
        kinds.classify(&inputs, &aux).unwrap();
        kinds
            .convert_wide(&layouts, [&inputs[..], &aux[..]])
            .unwrap();
        let rows = Rows {
            inputs: &inputs,
            aux: &aux,
            kinds: &kinds,
            table: &table,
            layouts: &layouts,
            field_rows: &FieldRows::default(),
            claims: None,
        };
        let sum = IntegerSum {
            rows: &rows,
            field: table.integers.as_ref().unwrap(),
        };
        let run_rows: Vec<_> = (0..expected.len())
            .filter_map(|row| Some((layouts[1].runs.row(row)?, matrix.row(row))))
            .collect();
        let packed = run_rows
            .into_iter()
            .filter_map(|(runs, terms)| rows.run_row(sum.field, runs, terms));
        assert!(packed.count() > 20, "rows summed by their runs");
        let mut out = vec![Fr::ZERO; BLOCK];
        let mut ones = vec![Fr::ONE; BLOCK];
        let mut integer_rows = 0;
        for first in (0..expected.len()).step_by(BLOCK) {
            let rows = BLOCK.min(expected.len() - first);
            let out = &mut out[..rows];
            let mut sums = [[0; BLOCK], [1; BLOCK], [0; BLOCK]];
            let layout = &layouts[1];
            let class = BlockLayout {
                class: layout.class(first / BLOCK),
                runs: &layout.runs,
                general: &layout.general,
                wide: &layout.wide,
                wide_values: &kinds.wide[1],
                claims: None,
            };
            sum.pass(&matrix, first, out, &mut sums[0][..rows], class);
            // `finish` writes the integer rows' elements; here `row * 1 = row` holds.
            sums[2] = sums[0];
            let mut c = out.to_vec();
            assert_eq!(sum.finish([out, &mut ones[..rows], &mut c], &sums), None);
            let integers = &sums[0][..rows];
            integer_rows += integers.iter().filter(|&&x| x != NOT_INTEGER).count();
            for row in 0..rows {
                let expected = expected[first + row];
                assert_eq!(out[row], expected, "row {}", first + row);
                if integers[row] != NOT_INTEGER {
                    let integer = from_i128::<Fr>(i128::from(integers[row]));
                    assert_eq!(integer, expected, "row {}", first + row);
                }
            }
        }
        assert!(
            integer_rows > 200,
            "{integer_rows} rows took the integer path"
        );
    }

    /// `finish` turns each integer sum into its element (in the table or not), leaves the
    /// rows already in the field as they are, and reports the first unsatisfied row.
    #[test]
    fn finishing_a_block_writes_every_sum_and_finds_the_first_unsatisfied_row() {
        let table = CoefficientTable::<Fr>::new(vec![Fr::ONE]);
        let kinds = ValueKinds::default();
        let layouts = [(); 3].map(|_| MatrixLayout::new(&Matrix::default(), &table, 0, &|_| false));
        let rows = Rows {
            inputs: &[],
            aux: &[],
            kinds: &kinds,
            table: &table,
            layouts: &layouts,
            field_rows: &FieldRows::default(),
            claims: None,
        };
        let sum = IntegerSum {
            rows: &rows,
            field: table.integers.as_ref().unwrap(),
        };
        let element = |x: i64| from_i128::<Fr>(i128::from(x));
        let seven = Fr::from(7u64);
        // (x, y, z) per row; NOT_INTEGER rows carry their field element already.
        let cases: [(i64, i64, i64, bool); 7] = [
            (1, 1, 1, true),
            (3, -5, -15, true),
            (1000, 3, 3000, true),
            (NOT_INTEGER, 1, NOT_INTEGER, true),
            (2, 2, 5, false),
            (1 << 40, 1 << 20, 1 << 60, true),
            (0, 9, 1, false),
        ];
        let mut integers = [[0; BLOCK]; 3];
        let mut out: [Vec<Fr>; 3] = Default::default();
        for (row, &(x, y, z, _)) in cases.iter().enumerate() {
            for (side, value) in [x, y, z].into_iter().enumerate() {
                integers[side][row] = value;
                out[side].push(if value == NOT_INTEGER {
                    seven
                } else {
                    Fr::ZERO
                });
            }
        }
        let [a, b, c] = &mut out;
        assert_eq!(sum.finish([a, b, c], &integers), Some(4));
        for (row, &(x, y, z, holds)) in cases.iter().enumerate() {
            let expected = [x, y, z].map(|v| if v == NOT_INTEGER { seven } else { element(v) });
            for side in 0..3 {
                assert_eq!(out[side][row], expected[side], "row {row} side {side}");
            }
            assert_eq!(expected[0] * expected[1] == expected[2], holds, "row {row}");
        }
    }

    /// A stretch of Poseidon-shaped constraints (a row stating a value, then an s-box with
    /// round keys) takes the field path: the same a, b, c as summing every term, and a wrong
    /// x² or x⁴, which no stated row reads, is named by its row while the claims still hold.
    #[test]
    fn field_stretches_give_the_summed_rows_and_find_a_wrong_power() {
        use super::super::claims::Claims;
        use super::super::field_rows::FieldRows;
        let mut rng = XorShiftRng::seed_from_u64(41);
        let (g, h, pre, post) = [(); 4].map(|_| Fr::random(&mut rng)).into();
        // Dictionary: 1, -1, then general coefficients (id 5 is -post).
        let dictionary = vec![Fr::ONE, -Fr::ONE, g, h, pre, -post];
        let table = CoefficientTable::new(dictionary.clone());
        let general = |id: u16| table.is_general(id);
        // Aux: x0, x1 (inputs to the MDS row), v, v², v⁴, (v⁴·(v + pre)) + post; the one
        // after them.
        let (x0, x1) = (Fr::random(&mut rng), Fr::random(&mut rng));
        let v = g * x0 + h * x1 + pre;
        let (v2, v4) = (v.square(), v.square().square());
        let v5 = v4 * (v + pre) + post;
        let aux = vec![x0, x1, v, v2, v4, v5];
        let one = aux.len() as u32;
        let inputs = vec![Fr::ONE];
        // Row 0: x0·1 = x0, outside any stretch (no general coefficient); 1: g·x0 + h·x1 + pre states v; 2: v·v =
        // v²; 3: v²·v² = v⁴; 4: (v + pre)·v⁴ = v5 - post; 5: one more plain product.
        let a = Matrix::from_rows([
            &[(0, 0)][..],
            &[(0, 2), (1, 3), (one, 4)],
            &[(2, 0)],
            &[(3, 0)],
            &[(2, 0), (one, 4)],
            &[(5, 0)],
        ]);
        let b = Matrix::from_rows([
            &[(one, 0)][..],
            &[(one, 0)],
            &[(2, 0)],
            &[(3, 0)],
            &[(4, 0)],
            &[(one, 0)],
        ]);
        let c = Matrix::from_rows([
            &[(0, 0)][..],
            &[(2, 0)],
            &[(3, 0)],
            &[(4, 0)],
            &[(5, 0), (one, 5)],
            &[(5, 0)],
        ]);
        let matrices = [a, b, c];
        let claims = Claims::new(&matrices, one, &dictionary, general);
        assert_eq!(claims.len(), 1);
        let field_rows =
            FieldRows::new(&matrices, one, general, |row| claims.stated(row).is_some());
        let mut seen = Vec::new();
        field_rows.pieces(0, 6, |start, count, field| seen.push((start, count, field)));
        assert_eq!(seen, [(0, 1, false), (1, 4, true), (5, 1, false)]);
        let layouts = [0, 1, 2].map(|m| {
            let claimed = |row: usize| m == 0 && claims.stated(row).is_some();
            MatrixLayout::new(&matrices[m], &table, one, &claimed)
        });
        let evaluate = |aux: &[Fr], stretches: &FieldRows| {
            let mut kinds = ValueKinds::default();
            kinds.classify(&inputs, aux).unwrap();
            kinds.convert_wide(&layouts, [&inputs[..], aux]).unwrap();
            let values = [&inputs[..], aux];
            let held = claims.hold(values).then_some(&claims);
            let mut out: [Vec<Fr>; 3] = Default::default();
            for vector in &mut out {
                vector.reserve(6);
            }
            let [va, vb, vc] = &mut out;
            let failed = evaluate_rows(
                (&matrices, &layouts, stretches),
                &table,
                values,
                (&kinds, held),
                [va, vb, vc],
            );
            (failed, held.is_some(), out)
        };
        let (failed, held, by_stretch) = evaluate(&aux, &field_rows);
        assert_eq!((failed, held), (None, true));
        let (_, _, summed) = evaluate(&aux, &FieldRows::default());
        assert_eq!(by_stretch, summed, "the same rows on either path");
        assert_eq!(by_stretch[0][1..5], [v, v, v2, v + pre]);
        assert_eq!(by_stretch[2][4], v5 - post);
        for (wrong, row) in [(3, 2), (4, 3), (5, 4)] {
            let mut tampered = aux.clone();
            tampered[wrong] += Fr::ONE;
            let (failed, held, _) = evaluate(&tampered, &field_rows);
            assert_eq!((failed, held), (Some(row), true), "aux {wrong} changed");
        }
        // A wrong value a stated row reads fails the claims; the rows are summed and the
        // stated row named.
        let mut tampered = aux.clone();
        tampered[1] += Fr::ONE;
        assert_eq!(evaluate(&tampered, &field_rows).0, Some(1));
    }

    #[test]
    fn satisfaction_in_integers_and_in_the_field_agree_with_the_product() {
        let values = [0i64, 1, 2, -1, 7, 1 << 40, i64::MAX, i64::MIN];
        for a in values {
            for b in values {
                for c in values {
                    let field = |x: i64| from_i128::<Fr>(i128::from(x));
                    let expected = field(a) * field(b) == field(c);
                    let elements = [&field(a), &field(b), &field(c)];
                    if [a, b, c].contains(&NOT_INTEGER) {
                        continue;
                    }
                    assert_eq!(satisfied((a, b, c), elements), expected, "{a} {b} {c}");
                    let mixed = (NOT_INTEGER, b, c);
                    assert_eq!(satisfied(mixed, elements), expected, "{a} {b} {c}");
                }
            }
        }
    }
}
