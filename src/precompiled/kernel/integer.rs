//! The integer path: rows of small coefficients over bits summed as `i64`, large powers of
//! two counted in 32-bit lanes or read a run of bits at a time, other large coefficients in
//! 320 bits, each sum turned into a field element once; the values other than 0 and 1 (rare
//! here) multiplied in the field.

use ff::PrimeField;

use super::{BlockLayout, RowSum, Rows};
use crate::precompiled::kernel::sums::{add_at, add_power, satisfied, NOT_INTEGER};
use crate::precompiled::rows::coefficients::{
    IntegerField, LARGE_GENERAL, LARGE_NEGATIVE, LARGE_TWO, SECOND_POWER, SMALL_MIN, SMALL_SUMS,
};
use crate::precompiled::rows::layout::{BlockClass, BLOCK};
use crate::precompiled::rows::matrix::Matrix;
use crate::precompiled::rows::runs::RunRow;
use crate::precompiled::witness::kinds::{ValueKinds, KIND_ONE};

impl<Scalar: PrimeField> Rows<'_, Scalar> {
    /// A row off the small-integer path: small coefficients over bits summed as integers,
    /// large powers of two (and sums of two) counted in 32-bit lanes put together once at
    /// the end, other large ones in 320 bits, and the terms of values other than 0 and 1
    /// (rare) in the field, in a second pass, so the bit loop keeps its tables in registers.
    #[inline(never)]
    pub(super) fn spilled_row(
        &self,
        field: &IntegerField<Scalar>,
        columns: &[u32],
        ids: &[u16],
    ) -> Scalar {
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
        let (small, large_terms) = (&*self.recorded.table.small, &self.recorded.table.large[..]);
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
    pub(super) fn run_row(
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
}

/// Integer sums, for fields that allow them.
pub(super) struct IntegerSum<'a, 'b, Scalar> {
    pub(super) rows: &'a Rows<'b, Scalar>,
    pub(super) field: &'a IntegerField<Scalar>,
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
        let (kinds, small) = (self.rows.kinds, &*self.rows.recorded.table.small);
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
                    *out = wide.sum(i, wide_values, &self.rows.recorded.table.wide, self.field);
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
