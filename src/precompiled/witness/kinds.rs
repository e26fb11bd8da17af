//! What evaluation knows of each witness value before it sums a row: whether it is 0, 1 or
//! something else (one byte each: a row of bits reads a byte per term instead of a 32-byte
//! field element), and, for the rows of general coefficients on variables, the values they
//! read as integers.
//!
//! The witness generators classify their aux values as they write them ([`AuxKinds`]), a
//! chunk at a time while the chunk is still in cache: classifying afterwards read every
//! value back from memory (32 bytes per constraint). A value is classified only once no
//! writer can reach it any more: a generator catches up at the start of each of its calls,
//! when the slices it handed out earlier (`allocate_empty`) can no longer be borrowed.

use std::sync::atomic::{AtomicBool, Ordering};

use ff::PrimeField;
use rayon::prelude::*;

use crate::error::Error;
use crate::precompiled::rows::layout::MatrixLayout;
use crate::precompiled::rows::wide::convert;
use crate::vectors::reserve;

/// A witness value is zero, one, or something else.
pub(crate) const KIND_ZERO: u8 = 0;
pub(crate) const KIND_ONE: u8 = 1;
pub(crate) const KIND_OTHER: u8 = 2;

/// The kind of every witness value, one byte each, aux values first, then inputs: a row of
/// bits reads a byte per term instead of a 32-byte field element (the byte map of a SHA-256
/// witness stays in cache).
#[derive(Default)]
pub(crate) struct ValueKinds {
    /// Aux kinds, input kinds (so a column's position indexes it), then padding to a power
    /// of two, so that a position masked by `mask` indexes it without a bounds check.
    kinds: Vec<u8>,
    pub(crate) mask: usize,
    /// Per matrix, the integers of the values its wide rows read, one per slot.
    pub(crate) wide: [Vec<[u64; 4]>; 3],
}

impl ValueKinds {
    /// Classifies every value of `aux` and `inputs`, reusing this scratch's storage.
    pub(crate) fn classify<Scalar: PrimeField>(
        &mut self,
        inputs: &[Scalar],
        aux: &[Scalar],
    ) -> Result<(), Error> {
        self.classify_rest(inputs, aux, &mut AuxKinds::default())
    }

    /// As [`Self::classify`], taking the kinds of the first aux values from `known` (what
    /// their generator classified) and classifying only the rest. `known` gets this
    /// scratch's previous storage back, emptied, for the next witness.
    pub(crate) fn classify_rest<Scalar: PrimeField>(
        &mut self,
        inputs: &[Scalar],
        aux: &[Scalar],
        known: &mut AuxKinds,
    ) -> Result<(), Error> {
        let padded = (aux.len() + inputs.len()).next_power_of_two();
        self.kinds.clear();
        let first = match known.usable_for(aux.len()) {
            Some(first) => {
                std::mem::swap(&mut self.kinds, &mut known.kinds);
                first
            }
            None => 0,
        };
        known.clear();
        reserve(&mut self.kinds, padded - first, "value kinds")?;
        self.kinds.resize(padded, KIND_OTHER);
        self.mask = padded - 1;
        let (aux_kinds, input_kinds) = self.kinds.split_at_mut(aux.len());
        for (kinds, values) in [
            (&mut aux_kinds[first..], &aux[first..]),
            (input_kinds, inputs),
        ] {
            kinds
                .par_chunks_mut(1 << 16)
                .zip(values.par_chunks(1 << 16))
                .for_each(|(kinds, values)| classify_into(values, kinds));
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
    pub(crate) fn map(&self) -> &[u8] {
        &self.kinds[..=self.mask]
    }
}

/// The kind of `value`.
#[inline(always)]
fn kind<Scalar: PrimeField>(value: &Scalar) -> u8 {
    // Without a branch: a SHA-256 witness's bits are 0 or 1 at random, which a branch on the
    // kind mispredicted half the time (3.5x slower).
    let zero = u8::from(*value == Scalar::ZERO);
    let one = u8::from(*value == Scalar::ONE);
    KIND_OTHER - (KIND_OTHER - KIND_ZERO) * zero - (KIND_OTHER - KIND_ONE) * one
}

/// Writes the kind of each of `values` into `kinds`.
fn classify_into<Scalar: PrimeField>(values: &[Scalar], kinds: &mut [u8]) {
    for (out, value) in kinds.iter_mut().zip(values) {
        *out = kind(value);
    }
}

/// Whether witness generators classify values as they write them
/// ([`crate::tuning::Knobs::classify_as_written`]).
static AS_WRITTEN: AtomicBool = AtomicBool::new(true);

pub(crate) fn set_as_written(on: bool) {
    AS_WRITTEN.store(on, Ordering::Relaxed);
}

/// Values a generator leaves unclassified before it catches up: 32 KiB of blstrs' scalars,
/// which the generator has just written and the caches still hold.
const CATCH_UP: usize = 1 << 10;

/// The kinds of the aux values one witness generator wrote, in the order it wrote them,
/// classified a chunk at a time while they are still in cache. Evaluation takes them for
/// the witness's first values and classifies the rest. Once its values stop being one
/// slice in order (a generator's detour, memory that ran out), the generator abandons
/// them, and evaluation classifies every value itself.
#[derive(Clone, Debug, Default)]
pub(crate) struct AuxKinds {
    /// The kind of each of the writer's first `kinds.len()` values.
    kinds: Vec<u8>,
    abandoned: bool,
}

impl AuxKinds {
    /// Kinds that classify nothing (for a generator whose values another copies in).
    pub(crate) fn abandoned() -> Self {
        AuxKinds {
            kinds: Vec::new(),
            abandoned: true,
        }
    }

    /// Kinds for the writer of a range of `len` values that a writer with `parent`'s kinds
    /// hands out: classifying only where the parent does, with room for all of them.
    pub(crate) fn for_range(parent: &AuxKinds, len: usize) -> Self {
        let mut kinds = AuxKinds {
            kinds: Vec::new(),
            abandoned: parent.abandoned,
        };
        if !kinds.abandoned && kinds.kinds.try_reserve_exact(len).is_err() {
            kinds.abandon();
        }
        kinds
    }

    /// Classifies the values of `values` not yet classified once there are enough of them.
    /// `values` must be every value the writer has written, in order, and no writer may
    /// still change any of them.
    #[inline]
    pub(crate) fn catch_up<Scalar: PrimeField>(&mut self, values: &[Scalar]) {
        if !self.abandoned && values.len() >= self.kinds.len() + CATCH_UP {
            self.classify_all(values);
        }
    }

    /// Classifies every value of `values` not yet classified, as [`Self::catch_up`].
    #[inline(never)]
    pub(crate) fn classify_all<Scalar: PrimeField>(&mut self, values: &[Scalar]) {
        if self.abandoned {
            return;
        }
        let Some(new) = values.get(self.kinds.len()..) else {
            return self.abandon();
        };
        if self.kinds.try_reserve(new.len()).is_err() {
            return self.abandon();
        }
        self.kinds.extend(new.iter().map(kind));
    }

    /// Appends the kinds of another writer's values, which follow this writer's `values`
    /// (all of them classified first): `theirs` classified `their_values` in part. Its
    /// caller abandons these kinds if the values do not follow after all.
    pub(crate) fn append<Scalar: PrimeField>(
        &mut self,
        values: &[Scalar],
        theirs: &AuxKinds,
        their_values: &[Scalar],
    ) {
        self.classify_all(values);
        if self.abandoned
            || theirs.abandoned
            || theirs.kinds.len() > their_values.len()
            || self.kinds.try_reserve(their_values.len()).is_err()
        {
            return self.abandon();
        }
        self.kinds.extend_from_slice(&theirs.kinds);
        self.kinds
            .extend(their_values[theirs.kinds.len()..].iter().map(kind));
    }

    /// Stops classifying: evaluation classifies every value.
    pub(crate) fn abandon(&mut self) {
        self.kinds.clear();
        self.abandoned = true;
    }

    /// Forgets every kind (keeping the storage) and classifies again from the first value,
    /// unless generators leave classifying to evaluation.
    pub(crate) fn clear(&mut self) {
        self.kinds.clear();
        self.abandoned = !AS_WRITTEN.load(Ordering::Relaxed);
    }

    /// Room for the kinds of `n` values, so that classifying them never reallocates.
    pub(crate) fn reserve(&mut self, n: usize) -> Result<(), Error> {
        reserve(&mut self.kinds, n, "value kinds")
    }

    /// The kinds classified so far, or `None` once abandoned.
    #[cfg(test)]
    pub(crate) fn classified(&self) -> Option<&[u8]> {
        (!self.abandoned).then_some(&self.kinds[..])
    }

    /// How many of `len` aux values these kinds describe, or `None` when they cannot be
    /// taken (abandoned, or more kinds than values: not this witness's).
    fn usable_for(&self, len: usize) -> Option<usize> {
        (!self.abandoned && self.kinds.len() <= len).then_some(self.kinds.len())
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

    /// Values 0, 1 and others in an irregular pattern.
    fn values(n: usize) -> Vec<Fr> {
        (0..n)
            .map(|i| match i * 7 % 5 {
                0 => Fr::ZERO,
                1 | 3 => Fr::ONE,
                k => Fr::from((i + k) as u64) + Fr::ONE,
            })
            .collect()
    }

    fn classified_whole(aux: &[Fr]) -> Vec<u8> {
        let mut kinds = ValueKinds::default();
        kinds.classify(&[], aux).unwrap();
        kinds.map()[..aux.len()].to_vec()
    }

    #[test]
    fn kinds_caught_up_and_appended_are_those_of_the_whole() {
        let aux = values(3 * CATCH_UP + 17);
        let whole = classified_whole(&aux);
        let mut kinds = AuxKinds::default();
        kinds.catch_up(&aux[..CATCH_UP - 1]);
        assert_eq!(
            kinds.classified(),
            Some(&[][..]),
            "fewer than a chunk waits"
        );
        kinds.catch_up(&aux[..CATCH_UP + 5]);
        assert_eq!(kinds.classified(), Some(&whole[..CATCH_UP + 5]));
        // Another writer's values, classified in part, follow the first 1,500.
        let (mine, theirs) = aux.split_at(1500);
        let mut their_kinds = AuxKinds::default();
        their_kinds.catch_up(&theirs[..CATCH_UP]);
        kinds.append(mine, &their_kinds, theirs);
        assert_eq!(kinds.classified(), Some(&whole[..]));
        // Evaluation takes them, classifies the rest and the inputs, and hands storage back.
        let mut map = ValueKinds::default();
        let inputs = [Fr::ONE, Fr::from(9)];
        kinds.classify_all(&aux[..aux.len() - 3]);
        let mut known = kinds.clone();
        known.kinds.truncate(aux.len() - 40);
        map.classify_rest(&inputs, &aux, &mut known).unwrap();
        let mut expected = ValueKinds::default();
        expected.classify(&inputs, &aux).unwrap();
        assert_eq!(map.map(), expected.map());
        assert_eq!(known.classified(), Some(&[][..]));
    }

    #[test]
    fn kinds_that_cannot_be_those_of_the_values_are_not_used() {
        let aux = values(2 * CATCH_UP);
        let whole = classified_whole(&aux);
        // More kinds than values: not this witness's. Evaluation classifies every value.
        let mut wrong = AuxKinds::default();
        wrong.classify_all(&values(2 * CATCH_UP + 5)[1..]);
        let mut map = ValueKinds::default();
        map.classify_rest(&[], &aux, &mut wrong).unwrap();
        assert_eq!(&map.map()[..aux.len()], &whole[..]);
        // Fewer values than classified, or an abandoned writer appended: abandoned.
        let mut shrunk = AuxKinds::default();
        shrunk.classify_all(&aux);
        shrunk.classify_all(&aux[..10]);
        assert_eq!(shrunk.classified(), None);
        let mut kinds = AuxKinds::default();
        kinds.append(&aux[..5], &AuxKinds::abandoned(), &aux[5..]);
        assert_eq!(kinds.classified(), None);
        let mut map = ValueKinds::default();
        map.classify_rest(&[], &aux, &mut kinds).unwrap();
        assert_eq!(&map.map()[..aux.len()], &whole[..]);
    }
}
