//! Rows that state a value: `(Σ c_i · x_i) · 1 = v`, with general coefficients on the
//! `x_i` (neptune's `ensure_allocated`, every MDS combination of a Poseidon hash). Their A
//! must equal the value of `v`, so instead of summing each one (tens of full field products)
//! evaluation checks all of them at once and takes `A·w = v`.
//!
//! The check: with `ρ` drawn at random when the recording is built or loaded, the claimed
//! rows `r_1 < r_2 < ...` hold together if `Σ_j ρ^j (A_{r_j}·w − v_{r_j}) = 0`, which is one
//! sum over the distinct variables the rows read, `Σ_k γ_k · w_k`, its coefficients `γ_k`
//! folded once per recording. Rows that hold make it zero exactly, so then every claimed
//! row's A is exactly `v` and evaluation is bit-identical to summing them. A witness for
//! which some claimed row does not hold makes it zero only when `ρ` is a root of a nonzero
//! polynomial of degree at most the number of claimed rows: probability at most
//! `rows / 2^128` over the draw (`ρ` comes from 128 bits of the process's randomness).
//! When the sum is not zero, every claimed row is summed exactly instead, so an
//! unsatisfied row is found and named as any other.
//!
//! The folded coefficients are kept as `16·γ_k`: the sum is zero exactly when the sum of
//! the `γ_k · w_k` is (16 is invertible), and that is the form the eight-lane products take
//! their constants in (`crate::lanes`), so both paths read the same coefficients.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

use ff::PrimeField;
use rayon::prelude::*;

use super::matrix::Matrix;
use super::row_sets::{RankedRows, RowSet};

/// The rows of a recording that state a value, and the folded check.
pub(crate) struct Claims<Scalar> {
    /// Which rows are claimed.
    rows: RankedRows,
    /// Per claimed row, the position of its stated value `v`.
    stated: Vec<u32>,
    /// The distinct positions the check reads, and their folded coefficients `γ_k`, times
    /// 16.
    positions: Vec<u32>,
    coefficients: Vec<Scalar>,
}

impl<Scalar> Default for Claims<Scalar> {
    fn default() -> Self {
        Claims {
            rows: RankedRows::default(),
            stated: Vec::new(),
            positions: Vec::new(),
            coefficients: Vec::new(),
        }
    }
}

/// A hasher for positions while folding: they are the recording's own, not chosen by
/// anyone, so one multiplication spreads them well enough, at a fraction of SipHash's cost.
#[derive(Default)]
struct PositionHasher(u64);

impl Hasher for PositionHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u32(&mut self, position: u32) {
        self.write_u64(u64::from(position));
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A random element for the check: 128 bits from the process's randomness (the keys of
/// std's `RandomState`, drawn from the operating system).
fn random<Scalar: PrimeField>() -> Scalar {
    let state = std::collections::hash_map::RandomState::new();
    let word = |salt: u64| {
        let mut hasher = state.build_hasher();
        hasher.write_u64(salt);
        hasher.finish()
    };
    let high = u128::from(word(1)) << 64 | u128::from(word(2));
    Scalar::from_u128(high)
}

impl<Scalar: PrimeField> Claims<Scalar> {
    /// The claimed rows of the matrices `[a, b, c]`, whose constant one is at position
    /// `one` and whose dictionary is `dictionary`: a row whose B is the one with
    /// coefficient 1, whose C is one other variable with coefficient 1, and whose A has
    /// `general` hold of some coefficient on a variable other than the one.
    pub(crate) fn new(
        [a, b, c]: &[Matrix; 3],
        one: u32,
        dictionary: &[Scalar],
        general: impl Fn(u16) -> bool,
    ) -> Self {
        let rows = a.rows();
        let unit = |matrix: &Matrix, row: usize| {
            let start = matrix.row_starts[row] as usize;
            (matrix.row_starts[row + 1] as usize == start + 1
                && dictionary[usize::from(matrix.coeff_ids[start])] == Scalar::ONE)
                .then(|| matrix.columns[start])
        };
        let mut claimed = RowSet::with_rows(rows);
        let mut claims = Claims::default();
        let rho = random::<Scalar>();
        let mut weight = Scalar::ONE;
        let mut folded: HashMap<u32, Scalar, BuildHasherDefault<PositionHasher>> =
            HashMap::default();
        for row in 0..rows {
            let (Some(b_one), Some(v)) = (unit(b, row), unit(c, row)) else {
                continue;
            };
            if b_one != one || v == one || !a.picks_on_a_variable(row, one, &general) {
                continue;
            }
            let (columns, ids) = a.row(row);
            claimed.insert(row);
            claims.stated.push(v);
            weight *= rho;
            for (&column, &id) in columns.iter().zip(ids) {
                *folded.entry(column).or_insert(Scalar::ZERO) +=
                    weight * dictionary[usize::from(id)];
            }
            *folded.entry(v).or_insert(Scalar::ZERO) -= weight;
        }
        if claims.stated.is_empty() {
            // A recording without claimed rows holds nothing for them.
            return Claims::default();
        }
        let sixteen = Scalar::from(16);
        let mut folded: Vec<(u32, Scalar)> = folded
            .into_iter()
            .map(|(position, gamma)| (position, gamma * sixteen))
            .collect();
        folded.sort_unstable_by_key(|(position, _)| *position);
        (claims.positions, claims.coefficients) = folded.into_iter().unzip();
        claims.rows = claimed.ranked();
        claims
    }

    /// Whether the claimed rows hold together for these values (aux values first, then
    /// inputs): the folded sum is zero.
    pub(crate) fn hold(&self, [inputs, aux]: [&[Scalar]; 2]) -> bool {
        let value = |position: u32| match aux.get(position as usize) {
            Some(value) => value,
            None => &inputs[position as usize - aux.len()],
        };
        #[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
        let lanes = super::lanes_x86_64::Lanes::for_field::<Scalar>();
        let sum = self
            .positions
            .par_chunks(1 << 12)
            .zip(self.coefficients.par_chunks(1 << 12))
            .map(|(positions, coefficients)| {
                #[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
                if let Some(lanes) = lanes {
                    return lanes.dot(positions, coefficients, value);
                }
                positions
                    .iter()
                    .zip(coefficients)
                    .fold(Scalar::ZERO, |acc, (&p, c)| acc + *value(p) * c)
            })
            .reduce(|| Scalar::ZERO, |x, y| x + y);
        sum == Scalar::ZERO
    }

    /// The position of the value row `row` states, if it is a claimed row.
    #[inline]
    pub(crate) fn stated(&self, row: usize) -> Option<u32> {
        self.rows.index(row).map(|index| self.stated[index])
    }

    /// Claimed rows.
    pub(crate) fn len(&self) -> usize {
        self.stated.len()
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.rows.bytes()
            + 4 * (self.stated.len() + self.positions.len())
            + std::mem::size_of::<Scalar>() * self.coefficients.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    /// A matrix of the given rows of (column, coefficient id) terms.
    fn matrix(rows: &[&[(u32, u16)]]) -> Matrix {
        let mut m = Matrix::default();
        for row in rows {
            for &(column, id) in *row {
                m.columns.push(column);
                m.coeff_ids.push(id);
            }
            m.row_starts.push(m.columns.len() as u32);
        }
        m
    }

    #[test]
    fn rows_stating_a_value_hold_together_and_a_wrong_one_is_seen() {
        let mut rng = XorShiftRng::seed_from_u64(3);
        // Dictionary: 1, -1, then two general coefficients.
        let (g, h) = (Fr::random(&mut rng), Fr::random(&mut rng));
        let dictionary = [Fr::ONE, -Fr::ONE, g, h];
        let general = |id: u16| id >= 2;
        // Aux x0..x4, then the constant one at position 5.
        let one = 5;
        let a = matrix(&[
            &[(0, 2), (1, 3), (one, 2)], // g·x0 + h·x1 + g: claimed (states x2)
            &[(0, 2)],                   // g·x0, but B is not the one: not claimed
            &[(one, 3), (1, 0)],         // a general coefficient on the one only: not claimed
            &[(3, 3), (0, 1)],           // h·x3 - x0: claimed (states x4)
        ]);
        let b = matrix(&[&[(one, 0)], &[(0, 0)], &[(one, 0)], &[(one, 0)]]);
        let c = matrix(&[&[(2, 0)], &[(2, 0)], &[(2, 0)], &[(4, 0)]]);
        let claims = Claims::new(&[a, b, c], one, &dictionary, general);
        assert_eq!(claims.len(), 2);
        assert_eq!(
            (0..4).map(|row| claims.stated(row)).collect::<Vec<_>>(),
            [Some(2), None, None, Some(4)]
        );
        let (x0, x1, x3) = (
            Fr::random(&mut rng),
            Fr::random(&mut rng),
            Fr::random(&mut rng),
        );
        let mut aux = vec![x0, x1, g * x0 + h * x1 + g, x3, h * x3 - x0];
        let inputs = [Fr::ONE];
        assert!(claims.hold([&inputs, &aux]));
        for wrong in [2, 4, 0] {
            let saved = aux[wrong];
            aux[wrong] += Fr::ONE;
            assert!(!claims.hold([&inputs, &aux]), "x{wrong} changed");
            aux[wrong] = saved;
        }
        // The constant one's value is read, not assumed.
        assert!(!claims.hold([&[Fr::from(2u64)], &aux]));
        // Without claimed rows, nothing is held.
        let none = Claims::new(
            &[
                matrix(&[&[(0, 2)]]),
                matrix(&[&[(0, 0)]]),
                matrix(&[&[(1, 0)]]),
            ],
            5,
            &dictionary,
            general,
        );
        assert_eq!((none.len(), none.bytes()), (0, 0));
    }
}
