//! `ProvingAssignment`: the constraint system that turns a circuit into the [`ProverVectors`]
//! a Groth16 prover consumes, evaluating each constraint as it is enforced.
//!
//! It computes exactly what bellperson's private prover assignment computes, field for field
//! and bit for bit; what differs is how: the linear-combination buffers of every `enforce`
//! come from an owner-local pool (one assignment, one thread), the evaluation kernel is
//! selectable, the vectors can be pre-sized from an earlier synthesis of the same circuit
//! shape, and branches taken at once for a partition's parts can read one copy of the
//! values before them instead of a copy each.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, Landing, LinearCombination, Spreading, SynthesisError,
    Variable, Ways,
};
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::PrimeField;

use crate::error::{Error, Fault, Side, Unallocated, VariableKind};
use crate::eval::{evaluate, mark, Constants, EvalKernel, OutOfRange, TwoPlaces};
use crate::pool::LcPool;
use crate::protocol::{lay_out_for_proving, root_without_names, CountsInputs};
use crate::shape::{BranchPoint, Shape};
use crate::vectors::{
    append, concatenated, reserve, reserve_density, room_for_one, ProverVectors, MIN_GROWTH,
};

mod evaluation;

/// How a [`ProvingAssignment`] synthesizes: [`SynthesisOptions::default`] is the fastest
/// measured; [`SynthesisOptions::with_shape`] pre-sizes for a known circuit (the bench's
/// other knobs are in [`crate::tuning`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynthesisOptions {
    /// Recycle linear-combination buffers through an owner-local pool (else every `enforce`
    /// starts from fresh, empty combinations, as bellperson does).
    pub(crate) pool: bool,
    pub(crate) kernel: EvalKernel,
    /// Reserve room for this shape up front, so the vectors never grow while synthesizing.
    pub(crate) shape: Option<Shape>,
    /// Pool buffers that grew beyond this many terms are dropped instead of kept.
    pub(crate) max_kept_terms: usize,
}

impl Default for SynthesisOptions {
    /// The fastest measured setting for a circuit of unknown shape: the pool and the
    /// bit-value kernel without prefetching (docs/journal.md has the runs).
    fn default() -> Self {
        SynthesisOptions {
            pool: true,
            kernel: EvalKernel::BitValues,
            shape: None,
            max_kept_terms: 1024,
        }
    }
}

impl SynthesisOptions {
    /// Reserving room for this shape up front (a, b and c with the FFT domain's capacity,
    /// as the prover will need it), or not.
    pub fn with_shape(self, shape: Option<Shape>) -> Self {
        SynthesisOptions { shape, ..self }
    }
}

/// Aux values from which a prover's assignment shares them with its branches
/// ([`Spreading::branches`]) instead of copying them into each.
pub(crate) const SHARED_FROM: usize = 1 << 16;

/// Whether branches of a prover's assignment share the values before them
/// ([`crate::tuning::Knobs::shared_branch_values`]).
static SHARED_VALUES: AtomicBool = AtomicBool::new(true);

pub(crate) fn set_shared_values(on: bool) {
    SHARED_VALUES.store(on, Ordering::Relaxed);
}

/// The aux values a branch reads from the copy it shares (none where it holds its own).
fn held_elsewhere<Scalar>(before: &Option<Arc<Vec<Scalar>>>) -> &[Scalar] {
    before.as_deref().map_or(&[], |before| &before[..])
}

/// A constraint system that evaluates each constraint against the witness as it is enforced.
pub struct ProvingAssignment<Scalar: PrimeField> {
    vectors: ProverVectors<Scalar>,
    pub(crate) lcs: Option<LcPool<Scalar>>,
    pub(crate) kernel: EvalKernel,
    constants: Constants<Scalar>,
    /// The first thing that went wrong where no error could be returned: a constraint that
    /// named a variable that does not exist (only that side was recorded as zero), a vector
    /// that could not grow (synthesis stops), a branch extended where it was not taken. The
    /// vectors are refused while it is set.
    fault: Option<Fault>,
    /// Where this assignment was branched from its system, if it is a branch.
    branched_at: Option<BranchPoint>,
    /// The first aux values, where they are read in place: a branch's before the point it
    /// was taken (its system's, copied once for all the branches taken there). The vector
    /// holds the values after them.
    before: Option<Arc<Vec<Scalar>>>,
}

/// A summary: the vectors are gigabytes on a real circuit.
impl<Scalar: PrimeField> std::fmt::Debug for ProvingAssignment<Scalar> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProvingAssignment")
            .field("shape", &self.shape())
            .field("kernel", &self.kernel)
            .field("pool", &self.lcs.is_some())
            .field("fault", &self.fault.is_some())
            .finish_non_exhaustive()
    }
}

impl<Scalar: PrimeField> ProvingAssignment<Scalar> {
    /// An empty assignment (no inputs yet) that synthesizes as `options` say; an error when
    /// the shape to reserve cannot be had.
    pub fn with_options(options: &SynthesisOptions) -> Result<Self, Error> {
        let mut assignment = ProvingAssignment {
            vectors: ProverVectors::default(),
            lcs: options.pool.then(|| LcPool::new(options.max_kept_terms)),
            kernel: options.kernel,
            constants: Constants::default(),
            fault: None,
            branched_at: None,
            before: None,
        };
        if let Some(shape) = options.shape {
            assignment.vectors.try_reserve(shape)?;
        }
        Ok(assignment)
    }

    /// Lays `circuit` out as bellperson's prover does (the constant one, the circuit, then
    /// `input * 0 = 0` per input) into this empty assignment.
    pub fn synthesize<C: Circuit<Scalar>>(&mut self, circuit: C) -> Result<(), Error> {
        let laid_out = lay_out_for_proving(self, circuit);
        // Running out of memory stops synthesis, and surfaces to the circuit as an I/O error,
        // which the fault met first explains. The fault stays: the vectors stay refused.
        match (&self.fault, laid_out) {
            (Some(fault @ Fault::OutOfMemory { .. }), _) | (Some(fault), Err(_)) => {
                Err(fault.clone().into())
            }
            (_, laid_out) => Ok(laid_out?),
        }
    }

    /// The memory a vector could not grow by, where running out was the first fault.
    pub(crate) fn memory_error(&self) -> Option<Error> {
        match &self.fault {
            Some(fault @ Fault::OutOfMemory { .. }) => Some(fault.clone().into()),
            _ => None,
        }
    }

    /// Notes that the vectors could not grow (memory, or an inconsistency found while
    /// growing them), and what the circuit is told.
    #[cold]
    fn ran_out(&mut self, error: Error) -> SynthesisError {
        let fault = match error {
            Error::OutOfMemory { what, elements } => Fault::OutOfMemory { what, elements },
            Error::InconsistentAssignment(what) => Fault::Inconsistent(what),
            _ => Fault::Inconsistent("the vectors failed to grow"),
        };
        self.fault.get_or_insert(fault);
        SynthesisError::IoError(std::io::ErrorKind::OutOfMemory.into())
    }

    /// The vectors synthesized so far. A branch sharing its system's values with the other
    /// branches taken with it ([`Spreading::branches`]) holds here only the aux values
    /// after those ([`Self::into_vectors`] gives all of them).
    pub fn vectors(&self) -> &ProverVectors<Scalar> {
        &self.vectors
    }

    /// The synthesized vectors, or the error of the first fault ([`Self::fault`]).
    pub fn into_vectors(self) -> Result<ProverVectors<Scalar>, Error> {
        let mut assignment = self;
        if let Some(fault) = assignment.fault.take() {
            return Err(fault.into());
        }
        // The first values back where no one else reads them; else a copy of them.
        assignment.take_back();
        let mut vectors = assignment.vectors;
        if let Some(before) = assignment.before {
            vectors.aux_assignment =
                concatenated(&[&before[..], &vectors.aux_assignment[..]], "aux values")?;
        }
        Ok(vectors)
    }

    /// Holds all its aux values in its own vector again where no one else reads the first
    /// ones any more (a branch's shared copy its siblings dropped): those after them are
    /// appended to them (a copy of those, not of the first). Where others read them still,
    /// or memory for the copy cannot be had, the values stay where they are, read in two
    /// places.
    fn take_back(&mut self) {
        let Some(before) = self.before.take() else {
            return;
        };
        self.before = match Arc::try_unwrap(before) {
            Ok(mut all) => match reserve(&mut all, self.vectors.aux_assignment.len(), "aux values")
            {
                Ok(()) => {
                    append(&mut all, &self.vectors.aux_assignment);
                    self.vectors.aux_assignment = all;
                    None
                }
                Err(_) => Some(Arc::new(all)),
            },
            Err(before) => Some(before),
        };
    }

    /// `count` branches taken here, their aux values so far read from `shared` where it is
    /// given, else each from a copy of its own.
    fn branches_reading(
        &self,
        count: usize,
        shared: Option<Arc<Vec<Scalar>>>,
    ) -> Option<Vec<Self>> {
        let shape = self.shape();
        let at = BranchPoint {
            inputs: shape.inputs,
            aux: shape.aux,
        };
        (0..count)
            .map(|_| {
                let mut vectors = self.vectors.branch_from(at).ok()?;
                if shared.is_none() {
                    let values = [
                        held_elsewhere(&self.before),
                        &self.vectors.aux_assignment[..],
                    ];
                    vectors.aux_assignment = concatenated(&values, "branch values").ok()?;
                }
                Some(ProvingAssignment {
                    vectors,
                    lcs: self.lcs.as_ref().map(LcPool::like),
                    kernel: self.kernel,
                    constants: Constants::default(),
                    fault: None,
                    branched_at: Some(at),
                    before: shared.clone(),
                })
            })
            .collect()
    }

    /// How many aux values this assignment reads from its system's before its own vector.
    fn held_before(&self) -> usize {
        held_elsewhere(&self.before).len()
    }

    /// The first thing that went wrong where no error could be returned, if one did: a
    /// constraint that named a variable that does not exist, a vector that could not grow, a
    /// branch extended where it was not taken.
    pub fn fault(&self) -> Option<Error> {
        self.fault.clone().map(Error::from)
    }

    /// The shape synthesized so far.
    pub fn shape(&self) -> Shape {
        let mut shape = self.vectors.shape();
        shape.aux += self.held_before();
        shape
    }

    fn note_fault(&mut self, side: Side, kind: VariableKind, fault: OutOfRange) {
        self.fault.get_or_insert(Fault::Unallocated(Unallocated {
            constraint: self.vectors.a.len(),
            side,
            kind,
            index: fault.index,
            allocated: fault.len,
        }));
    }

    fn fresh_lc(&mut self) -> LinearCombination<Scalar> {
        match self.lcs.as_mut() {
            Some(pool) => pool.fresh(),
            None => LinearCombination::zero(),
        }
    }

    fn recycle(&mut self, lc: LinearCombination<Scalar>) {
        if let Some(pool) = self.lcs.as_mut() {
            pool.recycle(lc);
        }
    }
}

impl<Scalar: PrimeField> ProvingAssignment<Scalar> {
    /// Room for more rows in a, b and c, doubling.
    #[cold]
    fn grow_rows(&mut self) -> Result<(), Error> {
        let vectors = &mut self.vectors;
        for vector in [&mut vectors.a, &mut vectors.b, &mut vectors.c] {
            room_for_one(vector, "constraint values")?;
        }
        Ok(())
    }

    /// Room for one more aux value and its densities.
    #[inline]
    fn room_for_aux(&mut self) -> Result<(), Error> {
        let vectors = &mut self.vectors;
        if vectors.aux_assignment.len() < vectors.aux_assignment.capacity() {
            return Ok(());
        }
        let more = vectors.aux_assignment.len().max(MIN_GROWTH);
        room_for_one(&mut vectors.aux_assignment, "aux values")?;
        reserve_density(&mut vectors.a_aux_density, more)?;
        reserve_density(&mut vectors.b_aux_density, more)
    }

    /// Room for one more input value and its density.
    #[inline]
    fn room_for_input(&mut self) -> Result<(), Error> {
        let vectors = &mut self.vectors;
        if vectors.input_assignment.len() < vectors.input_assignment.capacity() {
            return Ok(());
        }
        let more = vectors.input_assignment.len().max(MIN_GROWTH);
        room_for_one(&mut vectors.input_assignment, "input values")?;
        reserve_density(&mut vectors.b_input_density, more)
    }
}

impl<Scalar: PrimeField> Default for ProvingAssignment<Scalar> {
    fn default() -> Self {
        <Self as ConstraintSystem<Scalar>>::new()
    }
}

/// Which aux density a side of a constraint marks.
#[derive(Clone, Copy)]
enum AuxDensity {
    A,
    B,
}

impl<Scalar: PrimeField> CountsInputs for ProvingAssignment<Scalar> {
    fn input_count(&self) -> usize {
        self.vectors.input_assignment.len()
    }
}

impl<Scalar: PrimeField> ConstraintSystem<Scalar> for ProvingAssignment<Scalar> {
    type Root = Self;

    fn new() -> Self {
        ProvingAssignment {
            vectors: ProverVectors::default(),
            lcs: Some(LcPool::new(SynthesisOptions::default().max_kept_terms)),
            kernel: SynthesisOptions::default().kernel,
            constants: Constants::default(),
            fault: None,
            branched_at: None,
            before: None,
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if let Err(error) = self.room_for_aux() {
            return Err(self.ran_out(error));
        }
        let held_before = self.held_before();
        let vectors = &mut self.vectors;
        vectors.aux_assignment.push(f()?);
        vectors.a_aux_density.add_element();
        vectors.b_aux_density.add_element();
        Ok(Variable::new_unchecked(Index::Aux(
            held_before + vectors.aux_assignment.len() - 1,
        )))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if let Err(error) = self.room_for_input() {
            return Err(self.ran_out(error));
        }
        let vectors = &mut self.vectors;
        vectors.input_assignment.push(f()?);
        vectors.b_input_density.add_element();
        Ok(Variable::new_unchecked(Index::Input(
            vectors.input_assignment.len() - 1,
        )))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.enforce_with_a_value(|| "", a, None, b, c)
    }

    fn enforce_with_a_value<A, AR, LA, LB, LC>(
        &mut self,
        _: A,
        a: LA,
        a_value: Option<Scalar>,
        b: LB,
        c: LC,
    ) where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let a = a(self.fresh_lc());
        let b = b(self.fresh_lc());
        let c = c(self.fresh_lc());
        self.evaluate_constraint(&a, a_value, &b, &c);
        self.recycle(a);
        self.recycle(b);
        self.recycle(c);
    }

    root_without_names!();

    fn is_extensible() -> bool {
        true
    }

    /// Appends a branch of this assignment, or a sub-circuit synthesized from `new()` (whose
    /// input 0 is the constant one, this system's).
    fn extend(&mut self, other: &Self) {
        let at = other.branched_at.unwrap_or(BranchPoint::FROM_NEW);
        let shape = self.shape();
        if !at.within(shape.inputs, shape.aux) {
            self.fault.get_or_insert(Fault::MisplacedBranch(at));
            return;
        }
        if let (None, Some(fault)) = (&self.fault, &other.fault) {
            self.fault = Some(fault.clone().shifted(shape, at));
        }
        if let Err(error) =
            self.vectors
                .append_branch(&other.vectors, at, held_elsewhere(&other.before))
        {
            self.ran_out(error);
        }
    }

    fn spreading(&mut self) -> Option<&mut dyn Spreading<Self>> {
        Some(self)
    }
}

impl<Scalar: PrimeField> Spreading<ProvingAssignment<Scalar>> for ProvingAssignment<Scalar> {
    fn ways(&self) -> Ways {
        Ways {
            parts_in_place: true,
            branches_in_place: false,
            small_parts: false,
        }
    }

    /// Branches of this assignment as it stands, each with the inputs and densities so far
    /// (a few values, and bits), a pool and kernel of its own, and the aux values so far,
    /// copied by all the pool's threads: for two branches or more and from 65,536 values on
    /// (`SHARED_FROM`), one copy read by all of them where it lies (5.9 million values
    /// before a 32 GiB SnapDeals partition's challenges, which a copy per branch made
    /// slower on many branches than on one thread); otherwise a copy in each, read as its
    /// own (one branch saves no copy by sharing, a few thousand values before a PoRep
    /// partition's challenges cost little to copy, and a branch reading two places runs 3%
    /// more instructions in evaluation). `None` when memory cannot be had, and the circuit
    /// synthesizes here (docs/journal.md has the measurements).
    fn branches(&self, count: usize) -> Option<Vec<Self>> {
        if count == 0 {
            return Some(Vec::new());
        }
        let share =
            SHARED_VALUES.load(Ordering::Relaxed) && count > 1 && self.shape().aux >= SHARED_FROM;
        let shared = match share {
            true => {
                let values = [
                    held_elsewhere(&self.before),
                    &self.vectors.aux_assignment[..],
                ];
                Some(Arc::new(concatenated(&values, "branch values").ok()?))
            }
            false => None,
        };
        self.branches_reading(count, shared)
    }

    /// A branch's own values are appended after this assignment's.
    fn landing(&self, branch: &Self) -> Option<Landing> {
        let at = branch.branched_at?;
        let shape = self.shape();
        Some(Landing {
            inputs_from: at.inputs,
            inputs_to: shape.inputs,
            aux_from: at.aux,
            aux_to: shape.aux,
        })
    }
}
