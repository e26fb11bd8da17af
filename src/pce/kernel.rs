//! Row evaluation for dictionary-coded matrices: each coefficient is classified once, and a
//! 0/1 witness value (most values in SHA-256 circuits) costs at most one addition.

use ff::PrimeField;

use super::matrix::{Matrix, INPUT_FLAG};

/// How to multiply by one dictionary coefficient.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Coeff<Scalar> {
    One,
    MinusOne,
    /// `2^k` for small `k`: `k` doublings are cheaper than a multiplication.
    PowerOfTwo(u8),
    General(Scalar),
}

/// Doublings beyond this cost more than one multiplication.
const MAX_DOUBLINGS: u8 = 6;

/// The class of every dictionary entry, in dictionary order.
pub(crate) fn classify<Scalar: PrimeField>(dictionary: &[Scalar]) -> Vec<Coeff<Scalar>> {
    let powers: Vec<Scalar> = (0..=MAX_DOUBLINGS)
        .scan(Scalar::ONE, |power, _| {
            let current = *power;
            *power = power.double();
            Some(current)
        })
        .collect();
    dictionary
        .iter()
        .map(|value| {
            if *value == Scalar::ONE {
                Coeff::One
            } else if *value == -Scalar::ONE {
                Coeff::MinusOne
            } else if let Some(k) = powers.iter().position(|p| p == value) {
                Coeff::PowerOfTwo(k as u8)
            } else {
                Coeff::General(*value)
            }
        })
        .collect()
}

/// Everything one row evaluation reads.
pub(crate) struct RowContext<'a, Scalar> {
    pub(crate) inputs: &'a [Scalar],
    pub(crate) aux: &'a [Scalar],
    pub(crate) dictionary: &'a [Scalar],
    pub(crate) classes: &'a [Coeff<Scalar>],
}

impl<Scalar: PrimeField> RowContext<'_, Scalar> {
    /// The value of row `row` of `matrix`. The matrix invariants (checked when recording and
    /// loading) and the witness shape check keep every index in bounds.
    #[inline]
    pub(crate) fn row(&self, matrix: &Matrix, row: usize) -> Scalar {
        let (columns, ids) = matrix.row(row);
        let mut acc = Scalar::ZERO;
        for (&column, &id) in columns.iter().zip(ids) {
            let value = if column & INPUT_FLAG == 0 {
                self.aux[column as usize]
            } else {
                self.inputs[(column & !INPUT_FLAG) as usize]
            };
            if value == Scalar::ZERO {
                continue;
            }
            if value == Scalar::ONE {
                acc += self.dictionary[id as usize];
                continue;
            }
            match self.classes[id as usize] {
                Coeff::One => acc += value,
                Coeff::MinusOne => acc -= value,
                Coeff::PowerOfTwo(k) => {
                    let mut scaled = value;
                    for _ in 0..k {
                        scaled = scaled.double();
                    }
                    acc += scaled;
                }
                Coeff::General(coeff) => acc += value * coeff,
            }
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar as Fr;
    use ff::Field;

    #[test]
    fn classes_cover_one_minus_one_small_powers_and_the_rest() {
        let dictionary = [
            Fr::ONE,
            -Fr::ONE,
            Fr::from(8u64),
            Fr::from(1u64 << 40),
            Fr::from(3u64),
        ];
        let classes = classify(&dictionary);
        assert_eq!(classes[0], Coeff::One);
        assert_eq!(classes[1], Coeff::MinusOne);
        assert_eq!(classes[2], Coeff::PowerOfTwo(3));
        assert_eq!(classes[3], Coeff::General(Fr::from(1u64 << 40)));
        assert_eq!(classes[4], Coeff::General(Fr::from(3u64)));
    }
}
