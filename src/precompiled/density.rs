//! The density bitmaps a recording implies (which aux variables appear in A, which inputs
//! and aux variables in B), kept as the words of ec-gpu-gen's `DensityTracker` so each
//! proof's copy is one copy of words, and so a file holds them ready to map.

use std::io;

use bitvec::order::Lsb0;
use bitvec::slice::BitSlice;
use bitvec::vec::BitVec;
use ec_gpu_gen::multiexp_cpu::DensityTracker;

use super::matrix::Matrix;
use super::sections::{SectionReader, SectionWriter, Source};
use super::words::Words;
use crate::vectors::empty_density;
use crate::Error;

/// One density bitmap: `bits` bits in `usize` words, least significant first.
pub(crate) struct Density {
    words: Words<usize>,
    bits: usize,
}

/// The three densities a prover takes: `a_aux`, `b_input`, `b_aux`.
pub(crate) struct Densities(pub(crate) [Density; 3]);

impl Densities {
    /// The densities `matrices` imply, for `inputs` inputs after `aux` aux variables.
    pub(crate) fn of(matrices: &[Matrix; 3], inputs: usize, aux: usize) -> Result<Self, Error> {
        let mut a_aux = empty_density(aux)?;
        let mut b_input = empty_density(inputs)?;
        let mut b_aux = empty_density(aux)?;
        // A's and B's marks at once: beside the claims' pieces they were the longest
        // serial step of a first member's first derivations.
        rayon::join(
            || mark(&matrices[0], aux, None, &mut a_aux),
            || mark(&matrices[1], aux, Some(&mut b_input), &mut b_aux),
        );
        Ok(Densities(
            [a_aux, b_input, b_aux].map(Density::from_tracker),
        ))
    }

    /// Whether `trackers` (`a_aux`, `b_input`, `b_aux`) are these densities.
    pub(crate) fn equal(&self, trackers: [&DensityTracker; 3]) -> bool {
        self.0
            .iter()
            .zip(trackers)
            .all(|(density, tracker)| density.equals(tracker))
    }

    /// Makes `trackers` these densities, reusing their storage.
    pub(crate) fn copy_into(&self, trackers: [&mut DensityTracker; 3]) {
        for (density, tracker) in self.0.iter().zip(trackers) {
            density.copy_into(tracker);
        }
    }

    /// Writes the bit counts and words.
    pub(crate) fn write_sections(&self, out: &mut SectionWriter<'_>) -> io::Result<()> {
        let counts: Vec<u64> = self.0.iter().map(|d| d.bits as u64).collect();
        out.words(&counts)?;
        for density in &self.0 {
            out.words(&density.words)?;
        }
        Ok(())
    }

    /// Reads what [`Self::write_sections`] wrote, for `inputs` inputs and `aux` aux
    /// variables; the bits set are taken as the file has them.
    pub(crate) fn read_sections<S: Source>(
        input: &mut SectionReader<S>,
        inputs: usize,
        aux: usize,
    ) -> Result<Self, Error> {
        let counts = input.exactly::<u64>(3, "density lengths")?;
        let mut read = |index: usize, bits: usize| -> Result<Density, Error> {
            if counts[index] != bits as u64 {
                return Err(input.corrupt(format!(
                    "density {index} has {} bits, for {bits} variables",
                    counts[index]
                )));
            }
            let words = input.exactly(bits.div_ceil(usize::BITS as usize), "density words")?;
            Ok(Density { words, bits })
        };
        Ok(Densities([read(0, aux)?, read(1, inputs)?, read(2, aux)?]))
    }
}

impl Density {
    fn from_tracker(tracker: DensityTracker) -> Self {
        Density {
            bits: tracker.bv.len(),
            words: tracker.bv.into_vec().into(),
        }
    }

    fn bitslice(&self) -> &BitSlice<usize, Lsb0> {
        &BitSlice::from_slice(&self.words)[..self.bits]
    }

    fn equals(&self, tracker: &DensityTracker) -> bool {
        *self.bitslice() == tracker.bv[..] && tracker.total_density == tracker.bv.count_ones()
    }

    /// One copy of the words into the tracker's storage; the bits past the end are
    /// cleared, since provers read whole words, and the bits set are counted from the words
    /// themselves (what a GPU prover checks the parameters' sizes against).
    fn copy_into(&self, tracker: &mut DensityTracker) {
        let mut words = std::mem::take(&mut tracker.bv).into_vec();
        words.clear();
        words.extend_from_slice(&self.words);
        let spare = words.len() * usize::BITS as usize - self.bits;
        if let (Some(last), 1..) = (words.last_mut(), spare) {
            *last &= usize::MAX >> spare;
        }
        let mut bv = BitVec::from_vec(words);
        bv.truncate(self.bits);
        tracker.total_density = bv.count_ones();
        tracker.bv = bv;
    }
}

/// Marks every variable with a term in `matrix`: aux variables (positions below
/// `aux_count`) in `aux`, inputs in `inputs` when given. The bits are set in the trackers'
/// words directly (bit `i` of a tracker is bit `i % usize::BITS` of word `i / usize::BITS`,
/// as its least-significant-first order has it), and the totals counted once at the end.
fn mark(
    matrix: &Matrix,
    aux_count: usize,
    mut inputs: Option<&mut DensityTracker>,
    aux: &mut DensityTracker,
) {
    const BITS: usize = usize::BITS as usize;
    let set = |words: &mut [usize], bit: usize| words[bit / BITS] |= 1 << (bit % BITS);
    {
        let aux_words = aux.bv.as_raw_mut_slice();
        let mut input_words = inputs.as_deref_mut().map(|d| d.bv.as_raw_mut_slice());
        for &position in matrix.columns.iter() {
            let position = position as usize;
            if position < aux_count {
                set(aux_words, position);
            } else if let Some(words) = input_words.as_deref_mut() {
                set(words, position - aux_count);
            }
        }
    }
    for density in std::iter::once(aux).chain(inputs) {
        density.total_density = density.bv.count_ones();
    }
}
