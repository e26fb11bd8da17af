//! The field path: rows summed in the field (general coefficients, fields without the
//! integer path), and the stretches of field rows evaluated a constraint at a time, their
//! products checked eight at a time where the CPU allows.

use ff::PrimeField;

use super::{BlockLayout, RowSum, Rows};
use crate::precompiled::kernel::sums::{field_satisfied, NOT_INTEGER};
use crate::precompiled::rows::field_rows::UNIT;
use crate::precompiled::rows::layout::BLOCK;
use crate::precompiled::rows::matrix::Matrix;
use crate::precompiled::witness::kinds::{KIND_ONE, KIND_ZERO};

impl<Scalar: PrimeField> Rows<'_, Scalar> {
    /// A row holding a general coefficient (neither a small integer nor one or two powers of
    /// two: Poseidon's MDS and round constants), summed in the field in one pass. Its values
    /// are mostly field elements, which the integer path could only hand to the field one
    /// by one after converting its own sums.
    #[inline(never)]
    pub(super) fn general_row(&self, columns: &[u32], ids: &[u16]) -> Scalar {
        self.field_row(columns, ids)
    }

    /// A row summed in the field: for fields without the integer path, and rows of general
    /// coefficients.
    #[inline(always)]
    pub(super) fn field_row(&self, columns: &[u32], ids: &[u16]) -> Scalar {
        let mut acc = Scalar::ZERO;
        for (&column, &id) in columns.iter().zip(ids) {
            match self.kinds.map()[column as usize & self.kinds.mask] {
                KIND_ZERO => {}
                KIND_ONE => acc += self.recorded.table.values[id as usize],
                _ => acc += self.product(id, self.value(column)),
            }
        }
        acc
    }

    /// Constraints `first..first + a.len()` of a stretch of field rows, a constraint at a
    /// time in the field: each side is its value plus its constant (or, for an A that
    /// states a value whose claims held, that value; any other row is summed); returns the
    /// first (of these) that is not satisfied. A row whose B is 1 (one stating a value)
    /// holds when A is C; the others' products are checked together after the loop, eight
    /// at a time where the CPU allows. Their values are seldom 0 or 1, so looking for
    /// those first would cost more than it saves.
    #[inline(never)]
    pub(super) fn field_constraints(
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
        let (columns, ids, values) = (
            &matrix.columns,
            &matrix.coeff_ids,
            &self.recorded.table.values,
        );
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
}

/// Whether `a[r] · b[r] = c[r]` for each of `rows`: eight at a time on lanes where the
/// field and CPU have them, one by one otherwise.
#[inline]
fn products_hold<Scalar: PrimeField>([a, b, c]: [&[Scalar]; 3], rows: &[u16]) -> bool {
    #[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
    if let Some(lanes) = crate::precompiled::rows::lanes_x86_64::Lanes::for_field::<Scalar>() {
        return lanes.products_hold([a, b, c], rows);
    }
    rows.iter().all(|&r| {
        let r = usize::from(r);
        a[r] * b[r] == c[r]
    })
}

/// Field sums throughout.
pub(super) struct FieldSum<'a, 'b, Scalar> {
    pub(super) rows: &'a Rows<'b, Scalar>,
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
