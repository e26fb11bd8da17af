//! Rows of general coefficients on variables (Poseidon's MDS combinations: tens of terms,
//! every coefficient and nearly every value a full field element), summed as wide integers
//! and reduced once per row.
//!
//! A field multiplication reduces its product at once (a Montgomery multiplication costs
//! about 170 instructions here, an addition 36 more). Summed lazily instead, a term is one
//! 256 × 256-bit integer product added into a row's column sums, and the row is reduced
//! once: with `v_i` the values' integers (below p) and `c_i = C_i · 2^320 mod p` each
//! coefficient scaled once per recording, `T = Σ v_i · c_i` is below `2^32 · p²` for any
//! row, five word-by-word Montgomery steps give `U = (T + m·p) / 2^320 ≡ Σ v_i · C_i`
//! with `U < 2p`, and one subtraction reduces it. Values enter as integers once per
//! evaluation (the rows read few distinct ones, each many times).
//!
//! Which rows take this path, and the distinct values they read, are derived from the
//! matrix once, when a recording is built or loaded; the file format does not change.

use ff::PrimeField;
use rayon::prelude::*;

use super::coefficients::{limbs, IntegerField};
use super::matrix::Matrix;
use super::row_sets::{RankedRows, RowSet};
use crate::error::Error;
use crate::vectors::reserve;

/// A matrix's wide rows: which rows, their terms (a slot of the distinct values read and a
/// coefficient id each), and the value positions behind the slots.
#[derive(Default)]
pub(crate) struct WideRows {
    /// Which rows are wide.
    rows: RankedRows,
    /// Row `i`'s terms are `starts[i]..starts[i + 1]` of `slots` and `ids`.
    starts: Vec<u32>,
    slots: Vec<u32>,
    ids: Vec<u16>,
    /// The value position of each slot.
    positions: Vec<u32>,
}

impl WideRows {
    /// The rows of `matrix` with a coefficient `general` holds of on a variable other than
    /// the constant one (at `one`); rows whose general coefficients are constants keep the
    /// field path, being a value or two plus a constant.
    pub(crate) fn new(matrix: &Matrix, one: u32, general: impl Fn(u16) -> bool) -> Self {
        let mut rows = RowSet::with_rows(matrix.rows());
        let mut found = WideRows {
            starts: vec![0],
            ..WideRows::default()
        };
        let mut slot_of = std::collections::HashMap::new();
        for row in 0..matrix.rows() {
            if !matrix.picks_on_a_variable(row, one, &general) {
                continue;
            }
            rows.insert(row);
            let (columns, ids) = matrix.row(row);
            for (&column, &id) in columns.iter().zip(ids) {
                let next = found.positions.len() as u32;
                let slot = *slot_of.entry(column).or_insert(next);
                if slot == next {
                    found.positions.push(column);
                }
                found.slots.push(slot);
                found.ids.push(id);
            }
            found.starts.push(found.slots.len() as u32);
        }
        if found.positions.is_empty() {
            // A matrix without wide rows holds nothing for them.
            return WideRows::default();
        }
        found.rows = rows.ranked();
        found
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
        let mut columns = Columns::default();
        for (&slot, &id) in slots.iter().zip(ids) {
            columns.add_product(&values[slot as usize], &coefficients[usize::from(id)]);
        }
        field.reduced(&columns.reduce(&field.modulus, field.inverse))
    }
}

/// `-p^{-1} mod 2^64` for the odd lowest limb `p0` of the order (Newton's iteration doubles
/// the correct low bits each step: 1, 2, 4, ... 64).
pub(crate) fn montgomery_inverse(p0: u64) -> u64 {
    let mut inverse = 1u64;
    for _ in 0..6 {
        inverse = inverse.wrapping_mul(2u64.wrapping_sub(p0.wrapping_mul(inverse)));
    }
    inverse.wrapping_neg()
}

/// A row's sum of products, as a ten-word integer (a row of fewer than 2^32 terms, each
/// below 2^510, stays below 2^542; the reduction's additions below 2^577).
#[derive(Default)]
struct Columns {
    words: [u64; 10],
}

/// `a + b · c + carry` as (low word, high word): never overflows 128 bits.
#[inline(always)]
fn mac(a: u64, b: u64, c: u64, carry: u64) -> (u64, u64) {
    let t = u128::from(a) + u128::from(b) * u128::from(c) + u128::from(carry);
    (t as u64, (t >> 64) as u64)
}

/// `a + b + carry` as (sum, carry).
#[inline(always)]
fn adc(a: u64, b: u64, carry: u64) -> (u64, u64) {
    let t = u128::from(a) + u128::from(b) + u128::from(carry);
    (t as u64, (t >> 64) as u64)
}

impl Columns {
    /// Adds the product of two 256-bit integers: the 512-bit product by rows of
    /// multiply-accumulates, then one chain of additions into the sum. Not inlined: the
    /// row's ten words stay in memory, and the product's eight in registers.
    #[inline(never)]
    fn add_product(&mut self, a: &[u64; 4], b: &[u64; 4]) {
        let (p0, c) = mac(0, a[0], b[0], 0);
        let (p1, c) = mac(0, a[0], b[1], c);
        let (p2, c) = mac(0, a[0], b[2], c);
        let (p3, p4) = mac(0, a[0], b[3], c);
        let (p1, c) = mac(p1, a[1], b[0], 0);
        let (p2, c) = mac(p2, a[1], b[1], c);
        let (p3, c) = mac(p3, a[1], b[2], c);
        let (p4, p5) = mac(p4, a[1], b[3], c);
        let (p2, c) = mac(p2, a[2], b[0], 0);
        let (p3, c) = mac(p3, a[2], b[1], c);
        let (p4, c) = mac(p4, a[2], b[2], c);
        let (p5, p6) = mac(p5, a[2], b[3], c);
        let (p3, c) = mac(p3, a[3], b[0], 0);
        let (p4, c) = mac(p4, a[3], b[1], c);
        let (p5, c) = mac(p5, a[3], b[2], c);
        let (p6, p7) = mac(p6, a[3], b[3], c);
        let w = &mut self.words;
        let mut carry = 0;
        for (word, p) in w.iter_mut().zip([p0, p1, p2, p3, p4, p5, p6, p7]) {
            (*word, carry) = adc(*word, p, carry);
        }
        (w[8], carry) = adc(w[8], 0, carry);
        w[9] += carry;
    }

    /// The sum's residue `T · 2^-320 mod p`, below p.
    fn reduce(&self, modulus: &[u64; 4], inverse: u64) -> [u64; 4] {
        let mut t = [0u64; 11];
        t[..10].copy_from_slice(&self.words);
        // Five Montgomery steps: each clears the lowest remaining word.
        for k in 0..5 {
            let m = t[k].wrapping_mul(inverse);
            let mut carry = 0u128;
            for (w, &p) in modulus.iter().enumerate() {
                let total = u128::from(t[k + w]) + u128::from(m) * u128::from(p) + carry;
                t[k + w] = total as u64;
                carry = total >> 64;
            }
            let mut at = k + 4;
            while carry != 0 {
                let total = u128::from(t[at]) + carry;
                t[at] = total as u64;
                carry = total >> 64;
                at += 1;
            }
        }
        let mut u = [t[5], t[6], t[7], t[8]];
        // Below 2p: one subtraction at most.
        if t[9] != 0 || !less(&u, modulus) {
            let mut borrow = false;
            for (word, &p) in u.iter_mut().zip(modulus) {
                let (d, b1) = word.overflowing_sub(p);
                let (d, b2) = d.overflowing_sub(u64::from(borrow));
                *word = d;
                borrow = b1 | b2;
            }
        }
        u
    }
}

fn less(a: &[u64; 4], b: &[u64; 4]) -> bool {
    a.iter().rev().cmp(b.iter().rev()).is_lt()
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

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    #[test]
    fn the_montgomery_inverse_inverts_the_lowest_limb() {
        for p0 in [1u64, 3, 0xffff_ffff_0000_0001, u64::MAX] {
            assert_eq!(p0.wrapping_mul(montgomery_inverse(p0)), u64::MAX, "{p0:#x}");
        }
    }

    /// Sums of products of random field elements, of the largest ones, and of many terms,
    /// reduced as the wide path does, against the field's own arithmetic.
    #[test]
    fn column_sums_reduce_to_the_field_sum() {
        let mut rng = XorShiftRng::seed_from_u64(9);
        let minus_one = limbs((-Fr::ONE).to_repr().as_ref());
        let mut modulus = minus_one;
        modulus[0] += 1;
        let inverse = montgomery_inverse(modulus[0]);
        let two_320 = Fr::from(2u64).pow_vartime([320]);
        let integer = |x: Fr| limbs(x.to_repr().as_ref());
        let to_field = |l: [u64; 4]| {
            let mut bytes = [0u8; 32];
            for (chunk, limb) in bytes.chunks_mut(8).zip(l) {
                chunk.copy_from_slice(&limb.to_le_bytes());
            }
            Fr::from_repr(bytes).unwrap()
        };
        for terms in [0usize, 1, 2, 9, 66, 1000] {
            for extreme in [false, true] {
                let mut columns = Columns::default();
                let mut expected = Fr::ZERO;
                for _ in 0..terms {
                    let (v, c) = if extreme {
                        (-Fr::ONE, -Fr::ONE)
                    } else {
                        (Fr::random(&mut rng), Fr::random(&mut rng))
                    };
                    columns.add_product(&integer(v), &integer(c * two_320));
                    expected += v * c;
                }
                let got = columns.reduce(&modulus, inverse);
                assert!(less(&got, &modulus), "{terms} terms: not reduced");
                assert_eq!(to_field(got), expected, "{terms} terms, extreme {extreme}");
            }
        }
    }
}
