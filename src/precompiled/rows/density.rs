//! The density bitmaps a recording implies (which aux variables appear in A, which inputs
//! and aux variables in B), kept as the words of ec-gpu-gen's `DensityTracker` so each
//! proof's copy is one copy of words, and so a file holds them ready to map.

use std::io;

use bitvec::order::Lsb0;
use bitvec::slice::BitSlice;
use bitvec::vec::BitVec;
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use rayon::prelude::*;

use crate::error::Error;
use crate::precompiled::rows::matrix::Matrix;
use crate::precompiled::storage::sections::{SectionReader, SectionWriter, Source};
use crate::precompiled::storage::words::Words;
use crate::vectors::empty_density;

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
        // A's and B's marks at once, by pieces: beside the claims' pieces they were the
        // longest serial step of a first member's first derivations.
        let a = Marks {
            matrix: &matrices[0],
            aux: &mut a_aux,
            inputs: None,
        };
        let b = Marks {
            matrix: &matrices[1],
            aux: &mut b_aux,
            inputs: Some(&mut b_input),
        };
        mark([a, b], aux)?;
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

/// One matrix to mark and the trackers it marks.
struct Marks<'a> {
    matrix: &'a Matrix,
    /// Its aux variables' bits (positions below the aux count).
    aux: &'a mut DensityTracker,
    /// Its inputs' bits, when kept.
    inputs: Option<&'a mut DensityTracker>,
}

/// The fewest terms [`mark`] gives a piece, but for a matrix's last, which may be shorter.
const MARK_PIECE_MIN: usize = 1 << 20;

/// The most pieces of equal length [`mark`] cuts the matrices' columns into; as a
/// matrix's last piece may be shorter, there may be one more. Each piece past a matrix's
/// first marks words of its own, as many as a tracker's: at most 15 of them, 240 MB at 32
/// GiB for a moment, while the marks' half second of work on one thread takes about 35 ms.
const MARK_PIECES_MAX: usize = 16;

/// Marks every variable with a term in each matrix of `marks` (aux variables are the
/// positions below `aux_count`), the matrices' columns cut into pieces of about as many
/// terms for the pool's threads, and counts the totals.
fn mark(marks: [Marks<'_>; 2], aux_count: usize) -> Result<(), Error> {
    let threads = rayon::current_num_threads();
    let lengths = marks.each_ref().map(|marks| marks.matrix.columns.len());
    let terms: usize = lengths.iter().sum();
    // Four pieces per thread, as the threads take them when free; one thread marks each
    // matrix in one pass, into its trackers.
    let len = match threads {
        1 => lengths.into_iter().max().unwrap_or_default(),
        _ => terms.div_ceil(
            terms
                .div_ceil(MARK_PIECE_MIN)
                .clamp(1, (4 * threads).min(MARK_PIECES_MAX)),
        ),
    };
    mark_by(marks, aux_count, len.max(1))
}

/// Where a piece of [`mark_by`] sets its bits.
enum Target<'a> {
    /// The trackers' words: a matrix's first piece.
    Trackers(&'a mut [usize], Option<&'a mut [usize]>),
    /// Words of its own, for the trackers of matrix `matrix`, with inputs' words when
    /// the matrix keeps `Some(inputs)` inputs.
    Own {
        matrix: usize,
        inputs: Option<usize>,
    },
}

/// [`mark`] with each matrix's columns cut into pieces of `len` terms: a matrix's first
/// piece marks the trackers' own words, each other piece words of its own, or-ed in once
/// every piece is done.
fn mark_by(mut marks: [Marks<'_>; 2], aux_count: usize, len: usize) -> Result<(), Error> {
    let mut pieces = Vec::new();
    for (index, marks) in marks.iter_mut().enumerate() {
        let input_bits = marks.inputs.as_ref().map(|tracker| tracker.bv.len());
        let mut chunks = marks.matrix.columns.chunks(len);
        let trackers = Target::Trackers(
            marks.aux.bv.as_raw_mut_slice(),
            marks
                .inputs
                .as_mut()
                .map(|tracker| tracker.bv.as_raw_mut_slice()),
        );
        pieces.push((chunks.next().unwrap_or_default(), trackers));
        pieces.extend(chunks.map(|columns| {
            let own = Target::Own {
                matrix: index,
                inputs: input_bits,
            };
            (columns, own)
        }));
    }
    let own = pieces
        .into_par_iter()
        .map(|(columns, target)| match target {
            Target::Trackers(aux, inputs) => {
                set_bits(columns, aux_count, aux, inputs);
                Ok(None)
            }
            Target::Own { matrix, inputs } => {
                let mut aux = empty_density(aux_count)?;
                let mut inputs = inputs.map(empty_density).transpose()?;
                set_bits(
                    columns,
                    aux_count,
                    aux.bv.as_raw_mut_slice(),
                    inputs.as_mut().map(|tracker| tracker.bv.as_raw_mut_slice()),
                );
                Ok(Some((matrix, aux, inputs)))
            }
        })
        .collect::<Result<Vec<_>, Error>>()?;
    for (index, mut marks) in marks.into_iter().enumerate() {
        let own: Vec<_> = own
            .iter()
            .flatten()
            .filter(|(matrix, ..)| *matrix == index)
            .collect();
        // Ranges of the trackers' aux words on the pool's threads, each or-ed with every
        // piece's.
        const OR_WORDS: usize = 1 << 14;
        marks
            .aux
            .bv
            .as_raw_mut_slice()
            .par_chunks_mut(OR_WORDS)
            .enumerate()
            .for_each(|(range, words)| {
                for (_, aux, _) in &own {
                    or_into(words, &aux.bv.as_raw_slice()[range * OR_WORDS..]);
                }
            });
        if let Some(tracker) = marks.inputs.as_deref_mut() {
            for inputs in own.iter().filter_map(|(_, _, inputs)| inputs.as_ref()) {
                or_into(tracker.bv.as_raw_mut_slice(), inputs.bv.as_raw_slice());
            }
        }
        for tracker in std::iter::once(marks.aux).chain(marks.inputs) {
            tracker.total_density = tracker.bv.count_ones();
        }
    }
    Ok(())
}

/// Each word of `words` or-ed with the same word of `other`, which may be longer.
fn or_into(words: &mut [usize], other: &[usize]) {
    for (word, other) in words.iter_mut().zip(other) {
        *word |= other;
    }
}

/// Sets the bits of `columns`: aux variables (positions below `aux_count`) in `aux_words`,
/// inputs in `input_words` when given (bit `i` of a tracker is bit `i % usize::BITS` of
/// word `i / usize::BITS`, as its least-significant-first order has it).
fn set_bits(
    columns: &[u32],
    aux_count: usize,
    aux_words: &mut [usize],
    mut input_words: Option<&mut [usize]>,
) {
    const BITS: usize = usize::BITS as usize;
    let set = |words: &mut [usize], bit: usize| words[bit / BITS] |= 1 << (bit % BITS);
    for &position in columns {
        let position = position as usize;
        if position < aux_count {
            set(aux_words, position);
        } else if let Some(words) = input_words.as_deref_mut() {
            set(words, position - aux_count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variable's bit in `tracker` and the count of bits set.
    fn bits(tracker: &DensityTracker) -> (Vec<bool>, usize) {
        (
            tracker.bv.iter().map(|bit| *bit).collect(),
            tracker.total_density,
        )
    }

    /// Each variable's bits as `rows` set them: aux variables below `aux_count`, then
    /// `input_count` inputs; and the count of each.
    fn defined(
        rows: &[Vec<(u32, u16)>],
        aux_count: usize,
        input_count: usize,
    ) -> [(Vec<bool>, usize); 2] {
        let mut aux = vec![false; aux_count];
        let mut inputs = vec![false; input_count];
        for &(column, _) in rows.iter().flatten() {
            match (column as usize).checked_sub(aux_count) {
                Some(input) => inputs[input] = true,
                None => aux[column as usize] = true,
            }
        }
        [aux, inputs].map(|bits| {
            let count = bits.iter().filter(|&&bit| bit).count();
            (bits, count)
        })
    }

    #[test]
    fn marks_by_pieces_set_the_bits_of_every_piece_as_one_pass_does() {
        // Aux words for three of the ranges the pieces' words are or-ed in by, and 3
        // inputs; terms spread so that each piece sets bits the others do not, in both
        // ranges, in every range of words and next to word boundaries; B shorter than A.
        let (aux_count, input_count) = (3 << 20, 3usize);
        let matrix = |rows: u32, stride: u32| -> Vec<Vec<(u32, u16)>> {
            (0..rows)
                .map(|row| {
                    let aux = aux_count as u32;
                    let mut terms = vec![(row * 3 % 200, 0), ((row * stride + 63) % aux, 1)];
                    if row % 20 == 0 {
                        terms.push((aux + row / 20 % 3, 0));
                    }
                    terms
                })
                .collect()
        };
        let (a_rows, b_rows) = (matrix(61, 52_361), matrix(23, 70_001));
        let (a, b) = (Matrix::from_rows(&a_rows), Matrix::from_rows(&b_rows));
        let [a_aux, _] = defined(&a_rows, aux_count, input_count);
        let [b_aux, b_inputs] = defined(&b_rows, aux_count, input_count);
        for len in [1, 2, 7, 50, 1_000] {
            let mut trackers =
                [aux_count, aux_count, input_count].map(|bits| empty_density(bits).unwrap());
            let [a_tracker, b_tracker, inputs_tracker] = &mut trackers;
            let marks = [
                Marks {
                    matrix: &a,
                    aux: a_tracker,
                    inputs: None,
                },
                Marks {
                    matrix: &b,
                    aux: b_tracker,
                    inputs: Some(inputs_tracker),
                },
            ];
            mark_by(marks, aux_count, len).unwrap();
            assert_eq!(bits(&trackers[0]), a_aux, "A, pieces of {len}");
            assert_eq!(bits(&trackers[1]), b_aux, "B, pieces of {len}");
            assert_eq!(bits(&trackers[2]), b_inputs, "B's inputs, pieces of {len}");
        }
    }
}
