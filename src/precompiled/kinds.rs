//! What evaluation knows of each witness value before it sums a row: whether it is 0, 1 or
//! something else (one byte each: a row of bits reads a byte per term instead of a 32-byte
//! field element), and, for the rows of general coefficients on variables, the values they
//! read as integers.

use ff::PrimeField;
use rayon::prelude::*;

use super::layout::MatrixLayout;
use super::wide::convert;
use crate::vectors::reserve;
use crate::Error;

/// A witness value is zero, one, or something else.
pub(super) const KIND_ZERO: u8 = 0;
pub(super) const KIND_ONE: u8 = 1;
pub(super) const KIND_OTHER: u8 = 2;

/// The kind of every witness value, one byte each, aux values first, then inputs: a row of
/// bits reads a byte per term instead of a 32-byte field element (the byte map of a SHA-256
/// witness stays in cache).
#[derive(Default)]
pub(crate) struct ValueKinds {
    /// Aux kinds, input kinds (so a column's position indexes it), then padding to a power
    /// of two, so that a position masked by `mask` indexes it without a bounds check.
    kinds: Vec<u8>,
    pub(super) mask: usize,
    /// Per matrix, the integers of the values its wide rows read, one per slot.
    pub(super) wide: [Vec<[u64; 4]>; 3],
}

impl ValueKinds {
    /// Classifies every value of `aux` and `inputs`, reusing this scratch's storage.
    pub(crate) fn classify<Scalar: PrimeField>(
        &mut self,
        inputs: &[Scalar],
        aux: &[Scalar],
    ) -> Result<(), Error> {
        let padded = (aux.len() + inputs.len()).next_power_of_two();
        self.kinds.clear();
        reserve(&mut self.kinds, padded, "value kinds")?;
        self.kinds.resize(padded, KIND_OTHER);
        self.mask = padded - 1;
        let (aux_kinds, input_kinds) = self.kinds.split_at_mut(aux.len());
        for (kinds, values) in [(aux_kinds, aux), (input_kinds, inputs)] {
            kinds
                .par_chunks_mut(1 << 16)
                .zip(values.par_chunks(1 << 16))
                .for_each(|(kinds, values)| {
                    for (kind, value) in kinds.iter_mut().zip(values) {
                        // Without a branch: a SHA-256 witness's bits are 0 or 1 at random,
                        // which a branch on the kind mispredicted half the time (3.5x slower).
                        let zero = u8::from(*value == Scalar::ZERO);
                        let one = u8::from(*value == Scalar::ONE);
                        *kind = KIND_OTHER
                            - (KIND_OTHER - KIND_ZERO) * zero
                            - (KIND_OTHER - KIND_ONE) * one;
                    }
                });
        }
        Ok(())
    }

    /// Converts the values the wide rows of each matrix read to integers (fields with the
    /// integer path only).
    pub(crate) fn convert_wide<Scalar: PrimeField>(
        &mut self,
        layouts: &[MatrixLayout; 3],
        values: [&[Scalar]; 2],
    ) -> Result<(), Error> {
        for (layout, out) in layouts.iter().zip(&mut self.wide) {
            convert(layout.wide.positions(), values, out)?;
        }
        Ok(())
    }

    /// The kind map, exactly `mask + 1` long.
    #[inline(always)]
    pub(super) fn map(&self) -> &[u8] {
        &self.kinds[..=self.mask]
    }
}

#[cfg(test)]
mod tests {
    use blstrs::Scalar as Fr;
    use ff::Field;

    use super::*;

    #[test]
    fn classifies_zero_one_and_everything_else_with_inputs_after_aux() {
        let aux = [Fr::ZERO, Fr::ONE, Fr::from(2), -Fr::ONE, Fr::ONE, Fr::ZERO];
        let inputs = [Fr::ONE, Fr::from(7)];
        let mut kinds = ValueKinds::default();
        kinds.classify(&inputs, &aux).unwrap();
        let [zero, one, other] = [KIND_ZERO, KIND_ONE, KIND_OTHER];
        assert_eq!(kinds.mask, 7);
        assert_eq!(
            kinds.map(),
            [zero, one, other, other, one, zero, one, other]
        );
        // Reused for fewer values: the map shrinks to their power of two, padding included.
        kinds
            .classify(&[Fr::ONE], &[Fr::from(3), Fr::ZERO])
            .unwrap();
        assert_eq!(kinds.map(), [other, zero, one, other]);
    }
}
