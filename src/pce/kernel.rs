//! Row evaluation for dictionary-coded matrices: each coefficient is classified once, each
//! witness value too (zero, one, other), and a 0/1 value (most values in SHA-256 circuits)
//! costs at most one addition and no read of the value itself.

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

/// A witness value is zero, one, or something else.
pub(crate) const KIND_ZERO: u8 = 0;
pub(crate) const KIND_ONE: u8 = 1;
pub(crate) const KIND_OTHER: u8 = 2;

/// The kind of every value, one byte each, so rows over bits read a byte instead of a
/// 32-byte field element (the byte map of a SHA-256 witness stays in cache).
pub(crate) fn value_kinds<Scalar: PrimeField>(values: &[Scalar], kinds: &mut Vec<u8>) {
    use rayon::prelude::*;
    kinds.clear();
    kinds.resize(values.len(), KIND_OTHER);
    kinds
        .par_chunks_mut(1 << 16)
        .zip(values.par_chunks(1 << 16))
        .for_each(|(kinds, values)| {
            for (kind, value) in kinds.iter_mut().zip(values) {
                *kind = if *value == Scalar::ZERO {
                    KIND_ZERO
                } else if *value == Scalar::ONE {
                    KIND_ONE
                } else {
                    KIND_OTHER
                };
            }
        });
}

/// Everything one row evaluation reads.
pub(crate) struct RowContext<'a, Scalar> {
    pub(crate) inputs: &'a [Scalar],
    pub(crate) aux: &'a [Scalar],
    pub(crate) input_kinds: &'a [u8],
    pub(crate) aux_kinds: &'a [u8],
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
            let (values, kinds, index) = if column & INPUT_FLAG == 0 {
                (self.aux, self.aux_kinds, column as usize)
            } else {
                (
                    self.inputs,
                    self.input_kinds,
                    (column & !INPUT_FLAG) as usize,
                )
            };
            match kinds[index] {
                KIND_ZERO => continue,
                KIND_ONE => {
                    acc += self.dictionary[id as usize];
                    continue;
                }
                _ => {}
            }
            let value = values[index];
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
