//! Row evaluation for dictionary-coded matrices: each coefficient is classified once, each
//! witness value too (zero, one, other), and a 0/1 value (most values in SHA-256 circuits)
//! costs at most one addition and no read of the value itself. Every row is checked to
//! satisfy `A·w * B·w = C·w` as it is evaluated.

use ff::PrimeField;
use rayon::prelude::*;

use super::matrix::{Matrix, INPUT_FLAG};
use super::witness::Witness;
use crate::error::Error;
use crate::vectors::reserve;

/// Rows evaluated per rayon task.
const ROWS_PER_TASK: usize = 4096;

/// How to multiply by one dictionary coefficient.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CoeffClass<Scalar> {
    One,
    MinusOne,
    /// `2^k` for small `k`: `k` doublings are cheaper than a multiplication.
    PowerOfTwo(u8),
    General(Scalar),
}

/// Doublings beyond this cost more than one multiplication.
const MAX_DOUBLINGS: u8 = 6;

/// The dictionary with the class of every entry.
pub(crate) struct CoefficientTable<Scalar> {
    values: Vec<Scalar>,
    classes: Vec<CoeffClass<Scalar>>,
}

impl<Scalar: PrimeField> CoefficientTable<Scalar> {
    pub(crate) fn new(dictionary: &[Scalar]) -> Self {
        let powers: Vec<Scalar> = (0..=MAX_DOUBLINGS)
            .scan(Scalar::ONE, |power, _| {
                let current = *power;
                *power = power.double();
                Some(current)
            })
            .collect();
        let classes = dictionary
            .iter()
            .map(|value| {
                if *value == Scalar::ONE {
                    CoeffClass::One
                } else if *value == -Scalar::ONE {
                    CoeffClass::MinusOne
                } else if let Some(k) = powers.iter().position(|p| p == value) {
                    CoeffClass::PowerOfTwo(k as u8)
                } else {
                    CoeffClass::General(*value)
                }
            })
            .collect();
        CoefficientTable {
            values: dictionary.to_vec(),
            classes,
        }
    }
}

/// A witness value is zero, one, or something else.
const KIND_ZERO: u8 = 0;
const KIND_ONE: u8 = 1;
const KIND_OTHER: u8 = 2;

/// The kind of every witness value, one byte each, so rows over bits read a byte instead of
/// a 32-byte field element (the byte map of a SHA-256 witness stays in cache).
#[derive(Default)]
pub(crate) struct ValueKinds {
    inputs: Vec<u8>,
    aux: Vec<u8>,
}

impl ValueKinds {
    /// Classifies every value of `inputs` and `aux`, reusing this scratch's storage.
    pub(crate) fn classify<Scalar: PrimeField>(
        &mut self,
        inputs: &[Scalar],
        aux: &[Scalar],
    ) -> Result<(), Error> {
        for (kinds, values) in [(&mut self.inputs, inputs), (&mut self.aux, aux)] {
            kinds.clear();
            reserve(kinds, values.len(), "value kinds")?;
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
        Ok(())
    }
}

/// Everything one row evaluation reads.
struct RowContext<'a, Scalar> {
    inputs: &'a [Scalar],
    aux: &'a [Scalar],
    kinds: &'a ValueKinds,
    table: &'a CoefficientTable<Scalar>,
}

impl<Scalar: PrimeField> RowContext<'_, Scalar> {
    /// The value of row `row` of `matrix`. The matrix invariants (checked before a recording
    /// exists) and the witness structure check keep every index in bounds.
    #[inline]
    fn row(&self, matrix: &Matrix, row: usize) -> Scalar {
        let (columns, ids) = matrix.row(row);
        let mut acc = Scalar::ZERO;
        for (&column, &id) in columns.iter().zip(ids) {
            let (values, kinds, index) = if column & INPUT_FLAG == 0 {
                (self.aux, &self.kinds.aux, column as usize)
            } else {
                (
                    self.inputs,
                    &self.kinds.inputs,
                    (column & !INPUT_FLAG) as usize,
                )
            };
            match kinds[index] {
                KIND_ZERO => continue,
                KIND_ONE => {
                    acc += self.table.values[id as usize];
                    continue;
                }
                _ => {}
            }
            let value = values[index];
            match self.table.classes[id as usize] {
                CoeffClass::One => acc += value,
                CoeffClass::MinusOne => acc -= value,
                CoeffClass::PowerOfTwo(k) => {
                    let mut scaled = value;
                    for _ in 0..k {
                        scaled = scaled.double();
                    }
                    acc += scaled;
                }
                CoeffClass::General(coeff) => acc += value * coeff,
            }
        }
        acc
    }
}

/// Whether `a * b = c`, with the multiplication skipped where a factor is zero or one (most
/// rows of these circuits).
#[inline]
fn satisfied<Scalar: PrimeField>(a: &Scalar, b: &Scalar, c: &Scalar) -> bool {
    if *a == Scalar::ZERO || *b == Scalar::ZERO {
        *c == Scalar::ZERO
    } else if *a == Scalar::ONE {
        c == b
    } else if *b == Scalar::ONE {
        c == a
    } else {
        *a * b == *c
    }
}

/// Fills `a`, `b`, `c` (each of the matrices' row count) on the rayon pool; returns the
/// first row that is not satisfied, if any.
pub(crate) fn evaluate_rows<Scalar: PrimeField>(
    matrices: &[Matrix; 3],
    table: &CoefficientTable<Scalar>,
    witness: &Witness<Scalar>,
    kinds: &ValueKinds,
    [a, b, c]: [&mut Vec<Scalar>; 3],
) -> Option<usize> {
    let context = RowContext {
        inputs: witness.inputs(),
        aux: witness.aux(),
        kinds,
        table,
    };
    let [ma, mb, mc] = matrices;
    a.par_chunks_mut(ROWS_PER_TASK)
        .zip(b.par_chunks_mut(ROWS_PER_TASK))
        .zip(c.par_chunks_mut(ROWS_PER_TASK))
        .enumerate()
        .filter_map(|(task, ((a, b), c))| {
            let first = task * ROWS_PER_TASK;
            let mut failed = None;
            for (offset, ((a, b), c)) in a.iter_mut().zip(b).zip(c).enumerate() {
                let row = first + offset;
                *a = context.row(ma, row);
                *b = context.row(mb, row);
                *c = context.row(mc, row);
                if failed.is_none() && !satisfied(a, b, c) {
                    failed = Some(row);
                }
            }
            failed
        })
        .min()
}

/// The first row whose evaluation against `inputs` and `aux` differs from `expected` (a,
/// b, c), evaluated on the rayon pool without storing anything.
pub(crate) fn first_difference<Scalar: PrimeField>(
    matrices: &[Matrix; 3],
    table: &CoefficientTable<Scalar>,
    [inputs, aux]: [&[Scalar]; 2],
    kinds: &ValueKinds,
    expected: [&[Scalar]; 3],
) -> Option<usize> {
    let context = RowContext {
        inputs,
        aux,
        kinds,
        table,
    };
    (0..matrices[0].rows()).into_par_iter().find_first(|&row| {
        (0..3).any(|side| context.row(&matrices[side], row) != expected[side][row])
    })
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
        let table = CoefficientTable::new(&dictionary);
        assert_eq!(table.classes[0], CoeffClass::One);
        assert_eq!(table.classes[1], CoeffClass::MinusOne);
        assert_eq!(table.classes[2], CoeffClass::PowerOfTwo(3));
        assert_eq!(table.classes[3], CoeffClass::General(Fr::from(1u64 << 40)));
        assert_eq!(table.classes[4], CoeffClass::General(Fr::from(3u64)));
    }

    #[test]
    fn satisfaction_shortcuts_agree_with_the_product() {
        let values = [Fr::ZERO, Fr::ONE, Fr::from(2u64), -Fr::ONE, Fr::from(7u64)];
        for a in values {
            for b in values {
                for c in values {
                    assert_eq!(satisfied(&a, &b, &c), a * b == c, "{a:?} {b:?} {c:?}");
                }
            }
        }
    }
}
