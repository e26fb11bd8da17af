//! The MDS products of the native permutation for BLS12-381 scalars (`blstrs::Scalar`, the
//! Filecoin circuits' field): each output element is a sum of products, computed as full
//! 512-bit products added up and reduced once, where the field's own arithmetic reduces
//! after every product. The permutation is nearly all such products, so this is where the
//! native witness's time goes.
//!
//! blstrs keeps a scalar as its Montgomery form `x·R mod p` (`R = 2^256`) in four
//! little-endian limbs, fully reduced. Reducing `Σ (a_i·R)(b_i·R)` once by Montgomery's rule
//! gives `(Σ a_i·b_i)·R`, the limbs the field's own `Σ a_i * b_i` gives, once brought below
//! `p`: the result is the same field element with the same bits.
//!
//! Other fields, and CPUs without the assembly product, take the field's own arithmetic: the
//! portable product with its reduction costs what blst's multiplication does. So do the
//! partial rounds' updates `x + first · v`, one product each: reduced alone, a wide product
//! is slower than blst's multiplication (docs/journal.md).

use ff::PrimeField;

use crate::lanes::{is_blstrs, limbs, set_limbs, P};

use crate::wide_sum::{montgomery_inverse, Multiplier, WideSum};

/// `-p⁻¹ mod 2^64`, Montgomery's constant.
const INV: u64 = montgomery_inverse(P[0]);

/// At most this many products per sum: 12 products of Montgomery forms below `p` sum to
/// less than `12p²`, which four reduction steps take below `12p²/2^256 + p < 7p`, six
/// subtractions at most. Neptune's widths for Filecoin's arities (3, 5, 9, 12) fit.
const MAX_TERMS: usize = 12;

/// The MDS products on BLS12-381 scalars, summed wide: made only for blstrs' scalars on a
/// CPU with the assembly product.
pub(super) struct MontgomerySums {
    multiplier: Multiplier,
}

impl MontgomerySums {
    /// The sums for `Scalar`, if it is `blstrs::Scalar` and this CPU has the wide product.
    pub(super) fn for_field<Scalar: PrimeField>() -> Option<MontgomerySums> {
        if !is_blstrs::<Scalar>() {
            return None;
        }
        let multiplier = Multiplier::detect();
        multiplier
            .is_native()
            .then_some(MontgomerySums { multiplier })
    }

    /// `state' = state · matrix` (`state'[j] = Σ_i state[i] · matrix[i][j]`); false, with
    /// nothing done, when the width is beyond [`MAX_TERMS`].
    pub(super) fn dense_mix<Scalar: PrimeField>(
        &self,
        state: &mut [Scalar],
        matrix: &[Vec<Scalar>],
    ) -> bool {
        let width = state.len();
        if width > MAX_TERMS || matrix.len() != width {
            return false;
        }
        let mut xs = [[0u64; 4]; MAX_TERMS];
        for (x, value) in xs.iter_mut().zip(state.iter()) {
            *x = limbs(value);
        }
        for (j, value) in state.iter_mut().enumerate() {
            let mut sum = WideSum::default();
            for (x, row) in xs.iter().zip(matrix) {
                sum.add(self.multiplier.product(x, &limbs(&row[j])));
            }
            set_limbs(value, sum.reduce::<4>(&P, INV));
        }
        true
    }

    /// `Σ_i state[i] · w[i]`, the sum of a partial round's sparse product; `None` when the
    /// width is beyond [`MAX_TERMS`].
    pub(super) fn dot<Scalar: PrimeField>(&self, state: &[Scalar], w: &[Scalar]) -> Option<Scalar> {
        if state.len() > MAX_TERMS {
            return None;
        }
        let mut sum = WideSum::default();
        for (x, w) in state.iter().zip(w) {
            sum.add(self.multiplier.product(&limbs(x), &limbs(w)));
        }
        let mut out = Scalar::ZERO;
        set_limbs(&mut out, sum.reduce::<4>(&P, INV));
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    fn sums() -> Option<MontgomerySums> {
        let sums = MontgomerySums::for_field::<Fr>();
        if sums.is_none() {
            eprintln!("this CPU has no BMI2 and ADX: nothing to test");
        }
        sums
    }

    /// Random values and the extremes: zero, one, `p - 1`.
    fn values(rng: &mut XorShiftRng, n: usize) -> Vec<Fr> {
        let extremes = [Fr::ZERO, Fr::ONE, -Fr::ONE, -Fr::from(2)];
        (0..n)
            .map(|i| match i % 5 {
                k @ 0..=3 if i % 3 == 0 => extremes[k],
                _ => Fr::random(&mut *rng),
            })
            .collect()
    }

    #[test]
    fn only_blstrs_scalars_take_this_path() {
        assert!(MontgomerySums::for_field::<pasta_curves::Fp>().is_none());
    }

    #[test]
    fn dense_products_equal_the_fields_for_every_width() {
        let Some(sums) = sums() else { return };
        let mut rng = XorShiftRng::seed_from_u64(17);
        for width in 1..=MAX_TERMS {
            for _ in 0..50 {
                let state = values(&mut rng, width);
                let matrix: Vec<Vec<Fr>> = (0..width).map(|_| values(&mut rng, width)).collect();
                let expected: Vec<Fr> = (0..width)
                    .map(|j| (0..width).map(|i| state[i] * matrix[i][j]).sum())
                    .collect();
                let mut got = state.clone();
                assert!(sums.dense_mix(&mut got, &matrix));
                assert_eq!(got, expected, "width {width}");
            }
        }
    }

    /// The scalar whose Montgomery limbs are `p - 1`: the largest products.
    fn largest() -> Fr {
        let mut x = Fr::ZERO;
        set_limbs(&mut x, [P[0] - 1, P[1], P[2], P[3]]);
        x
    }

    #[test]
    fn the_largest_sums_come_back_below_p() {
        let Some(sums) = sums() else { return };
        for width in 1..=MAX_TERMS {
            let top = largest();
            let mut state = vec![top; width];
            let matrix = vec![vec![top; width]; width];
            let expected: Fr = (0..width).map(|_| top * top).sum();
            assert!(sums.dense_mix(&mut state, &matrix));
            assert_eq!(state, vec![expected; width], "width {width}");
            let dot = sums.dot(&vec![top; width], &vec![top; width]).unwrap();
            assert_eq!(limbs(&dot), limbs(&expected), "width {width}");
        }
    }

    #[test]
    fn dot_products_equal_the_fields() {
        let Some(sums) = sums() else { return };
        let mut rng = XorShiftRng::seed_from_u64(18);
        for width in 1..=MAX_TERMS {
            for _ in 0..50 {
                let (x, w) = (values(&mut rng, width), values(&mut rng, width));
                let expected: Fr = x.iter().zip(&w).map(|(x, w)| *x * w).sum();
                assert_eq!(sums.dot(&x, &w), Some(expected), "width {width}");
            }
        }
    }

    #[test]
    fn wider_states_are_left_to_the_field() {
        let Some(sums) = sums() else { return };
        let mut state = vec![Fr::ONE; MAX_TERMS + 1];
        let matrix = vec![vec![Fr::ONE; MAX_TERMS + 1]; MAX_TERMS + 1];
        assert!(!sums.dense_mix(&mut state, &matrix));
        assert_eq!(sums.dot(&state, &matrix[0]), None);
        assert_eq!(state, vec![Fr::ONE; MAX_TERMS + 1]);
    }
}
