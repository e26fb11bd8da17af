//! What a Groth16 prover consumes from synthesis: A·w, B·w and C·w per constraint, the input
//! and aux assignments, and the density bitmaps of the A and B queries. Direct synthesis
//! ([`crate::ProvingAssignment`]) and pre-compiled evaluation ([`crate::precompiled`]) both
//! produce [`ProverVectors`], equal field for field to what bellperson's prover computes.

use bitvec::vec::BitVec;
use ec_gpu_gen::multiexp_cpu::DensityTracker;

use rayon::prelude::*;

use crate::error::Error;
use crate::eval::mark_density;
use crate::shape::{BranchPoint, Shape};

/// The vectors a Groth16 prover takes from synthesis.
///
/// The densities are ec-gpu-gen's `DensityTracker` (0.7, the release bellperson 0.26 and
/// 0.27 both use), held as they are because that is what bellperson's multi-exponentiation
/// takes: a type of our own would cost a conversion per proof of bitmaps the size of the
/// aux values. It ties this type to that release; a bellperson on another ec-gpu-gen would
/// need a new release of this crate anyway, since proving is built on bellperson's API.
#[derive(Clone, Debug, PartialEq)]
pub struct ProverVectors<Scalar> {
    /// A·w for every constraint.
    pub a: Vec<Scalar>,
    /// B·w for every constraint.
    pub b: Vec<Scalar>,
    /// C·w for every constraint.
    pub c: Vec<Scalar>,
    /// Input values; input 0 is the constant one.
    pub input_assignment: Vec<Scalar>,
    /// Aux values.
    pub aux_assignment: Vec<Scalar>,
    /// Aux variables with a nonzero coefficient in some A.
    pub a_aux_density: DensityTracker,
    /// Inputs with a nonzero coefficient in some B.
    pub b_input_density: DensityTracker,
    /// Aux variables with a nonzero coefficient in some B.
    pub b_aux_density: DensityTracker,
}

impl<Scalar> Default for ProverVectors<Scalar> {
    fn default() -> Self {
        ProverVectors {
            a: Vec::new(),
            b: Vec::new(),
            c: Vec::new(),
            input_assignment: Vec::new(),
            aux_assignment: Vec::new(),
            a_aux_density: DensityTracker::new(),
            b_input_density: DensityTracker::new(),
            b_aux_density: DensityTracker::new(),
        }
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} inputs, {} aux variables, {} constraints",
            self.inputs, self.aux, self.constraints
        )
    }
}

impl<Scalar> ProverVectors<Scalar> {
    /// The shape these vectors describe.
    pub fn shape(&self) -> Shape {
        Shape {
            inputs: self.input_assignment.len(),
            aux: self.aux_assignment.len(),
            constraints: self.a.len(),
        }
    }

    /// Reserves room for `shape` beyond what is held, a, b and c up to the FFT domain the
    /// prover will grow them to (the next power of two), so proving never reallocates them;
    /// an error, not an abort, when the memory cannot be had.
    pub fn try_reserve(&mut self, shape: Shape) -> Result<(), Error> {
        let rows = [&mut self.a, &mut self.b, &mut self.c];
        for vector in rows {
            let domain = (vector.len() + shape.constraints).next_power_of_two();
            reserve(vector, domain - vector.len(), "constraint values")?;
        }
        reserve(&mut self.input_assignment, shape.inputs, "input values")?;
        reserve(&mut self.aux_assignment, shape.aux, "aux values")?;
        reserve_density(&mut self.b_input_density, shape.inputs)?;
        reserve_density(&mut self.a_aux_density, shape.aux)?;
        reserve_density(&mut self.b_aux_density, shape.aux)
    }
}

/// `vector.try_reserve(additional)`, as this crate's error.
pub(crate) fn reserve<T>(
    vector: &mut Vec<T>,
    additional: usize,
    what: &'static str,
) -> Result<(), Error> {
    vector
        .try_reserve(additional)
        .map_err(|_| Error::OutOfMemory {
            what,
            elements: additional as u64,
        })
}

/// The one place that sizes density bitmaps directly: `DensityTracker` offers only a
/// bit-by-bit `add_element`, too slow for recordings of hundreds of millions of variables,
/// and `BitVec`'s own growth aborts when memory runs out.
pub(crate) fn reserve_density(
    density: &mut DensityTracker,
    additional: usize,
) -> Result<(), Error> {
    let len = density.bv.len();
    let mut words = std::mem::take(&mut density.bv).into_vec();
    let needed = (len + additional).div_ceil(usize::BITS as usize);
    let missing = needed.saturating_sub(words.len());
    reserve(&mut words, missing, "density words")?;
    density.bv = BitVec::from_vec(words);
    density.bv.truncate(len);
    Ok(())
}

/// Elements a growing vector asks for at once: as many as it holds (doubling, as `Vec`
/// does), and no fewer than this.
pub(crate) const MIN_GROWTH: usize = 1 << 10;

/// `vector` with room for one more element, reserved fallibly when it is full: an
/// out-of-memory error where `Vec::push` would abort.
#[inline]
pub(crate) fn room_for_one<T>(vector: &mut Vec<T>, what: &'static str) -> Result<(), Error> {
    if vector.len() < vector.capacity() {
        return Ok(());
    }
    grow(vector, what)
}

#[cold]
fn grow<T>(vector: &mut Vec<T>, what: &'static str) -> Result<(), Error> {
    reserve(vector, vector.len().max(MIN_GROWTH), what)
}

/// A density bitmap of `len` variables, none marked.
pub(crate) fn empty_density(len: usize) -> Result<DensityTracker, Error> {
    let count = len.div_ceil(usize::BITS as usize);
    let mut words = Vec::new();
    reserve(&mut words, count, "density words")?;
    words.resize(count, 0usize);
    let mut density = DensityTracker::new();
    density.bv = BitVec::from_vec(words);
    density.bv.truncate(len);
    Ok(density)
}

impl<Scalar: Clone + Send + Sync> ProverVectors<Scalar> {
    /// What a branch taken at `at` starts from: the input values and the densities up to
    /// `at`, no rows and no aux values (a copy of its own or one shared by the branches
    /// taken there: [`crate::ProvingAssignment`]'s `branches`).
    pub(crate) fn branch_from(&self, at: BranchPoint) -> Result<Self, Error> {
        let mut branch = ProverVectors::default();
        let inputs = &self.input_assignment[..at.inputs];
        reserve(&mut branch.input_assignment, inputs.len(), "branch values")?;
        branch.input_assignment.extend_from_slice(inputs);
        branch.b_input_density = density_prefix(&self.b_input_density, at.inputs)?;
        branch.a_aux_density = density_prefix(&self.a_aux_density, at.aux)?;
        branch.b_aux_density = density_prefix(&self.b_aux_density, at.aux)?;
        Ok(branch)
    }

    /// Appends what `branch` added after `at`, where it was taken from these vectors (or what
    /// they grew into): its rows, its own variables' values and densities, and the marks it
    /// set on the variables it shares with these. The branch's first aux values are `held`,
    /// elsewhere (a copy shared with the other branches taken with it, up to its point), its
    /// aux vector holding those after them. Nothing changes when memory runs out.
    pub(crate) fn append_branch(
        &mut self,
        branch: &Self,
        at: BranchPoint,
        held: &[Scalar],
    ) -> Result<(), Error> {
        // A sub-circuit from `new()` that never allocated its constant one has no inputs.
        let at = BranchPoint {
            inputs: at.inputs.min(branch.input_assignment.len()),
            aux: at.aux,
        };
        // What it holds elsewhere ends at its point at most (a copy shared at its point, or
        // none); the values after its point are in its vector.
        if held.len() > at.aux {
            return Err(Error::InconsistentAssignment(
                "a branch holds values elsewhere past the point it was taken",
            ));
        }
        let own = &branch.aux_assignment[at.aux - held.len()..];
        // Every allocation first, so that running out of memory changes nothing. The
        // allocator grows each vector: the C library's moves a large one's pages without
        // copying them, and a new buffer filled by the pool's threads instead measured
        // slower under it (docs/journal.md).
        let mut copies = [
            (&mut self.a, &branch.a[..], "constraint values"),
            (&mut self.b, &branch.b[..], "constraint values"),
            (&mut self.c, &branch.c[..], "constraint values"),
            (&mut self.aux_assignment, own, "aux values"),
        ];
        for (mine, theirs, what) in copies.iter_mut() {
            reserve(mine, theirs.len(), what)?;
        }
        reserve(
            &mut self.input_assignment,
            branch.input_assignment.len() - at.inputs,
            "input values",
        )?;
        reserve_density(
            &mut self.b_input_density,
            branch.b_input_density.bv.len() - at.inputs,
        )?;
        reserve_density(
            &mut self.a_aux_density,
            branch.a_aux_density.bv.len() - at.aux,
        )?;
        reserve_density(
            &mut self.b_aux_density,
            branch.b_aux_density.bv.len() - at.aux,
        )?;
        self.input_assignment
            .extend_from_slice(&branch.input_assignment[at.inputs..]);
        // The four copies at once, each by all the pool's threads (rayon's `par_extend`
        // writes in place): a branch's share of a partition, its pages faulted in by every
        // thread.
        copies
            .into_par_iter()
            .for_each(|(mine, theirs, _)| mine.par_extend(theirs.par_iter().cloned()));
        merge_density(
            &mut self.b_input_density,
            &branch.b_input_density,
            at.inputs,
        );
        merge_density(&mut self.a_aux_density, &branch.a_aux_density, at.aux);
        merge_density(&mut self.b_aux_density, &branch.b_aux_density, at.aux);
        Ok(())
    }
}

/// `pieces` one after another in one vector, copied by all the pool's threads (the values a
/// prover's assignment gives its branches: millions before a SnapDeals partition's
/// challenges).
pub(crate) fn concatenated<Scalar: Clone + Send + Sync>(
    pieces: &[&[Scalar]],
    what: &'static str,
) -> Result<Vec<Scalar>, Error> {
    let mut all = Vec::new();
    reserve(&mut all, pieces.iter().map(|piece| piece.len()).sum(), what)?;
    for piece in pieces {
        append(&mut all, piece);
    }
    Ok(all)
}

/// `piece` after `all`'s values, copied by all the pool's threads; `all` has the room.
pub(crate) fn append<Scalar: Clone + Send + Sync>(all: &mut Vec<Scalar>, piece: &[Scalar]) {
    all.par_extend(piece.par_iter().cloned());
}

/// The first `len` bits of `density`, with their count.
fn density_prefix(density: &DensityTracker, len: usize) -> Result<DensityTracker, Error> {
    let mut prefix = empty_density(0)?;
    reserve_density(&mut prefix, len)?;
    let bits = &density.bv[..len];
    prefix.bv.extend_from_bitslice(bits);
    prefix.total_density = bits.count_ones();
    Ok(prefix)
}

/// Marks in `density` what a branch taken at `at` variables marked on them, and appends the
/// bits of the branch's own variables (room for them reserved).
fn merge_density(density: &mut DensityTracker, branch: &DensityTracker, at: usize) {
    let (shared, own) = branch.bv.split_at(at);
    for index in shared.iter_ones() {
        mark_density(density, index);
    }
    density.total_density += own.count_ones();
    density.bv.extend_from_bitslice(own);
}
