//! What runs beside a recorder: nothing, witness generation, or direct synthesis, so one
//! pass over a circuit both records it and produces what that pass would have produced
//! alone.

use bellpepper_core::{ConstraintSystem, LinearCombination, Spreading, SynthesisError};
use ff::PrimeField;

use crate::assignment::ProvingAssignment;
use crate::error::Error;
use crate::precompiled::witness::generator::Witness;

/// What else happens to every allocation and constraint a recorder sees: nothing
/// ([`StructureOnly`]), witness generation ([`Witness`]), or direct synthesis
/// ([`ProvingAssignment`]), so one pass over a circuit both records it and produces what
/// that pass would have produced alone.
pub(crate) trait Companion<Scalar: PrimeField>: Default + Send {
    /// A new aux variable whose value `f` computes.
    fn alloc<F>(&mut self, f: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>;
    /// A new input whose value `f` computes.
    fn alloc_input<F>(&mut self, f: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>;
    /// A constraint, as the circuit built it (zero terms included), with the value of its
    /// A side where the circuit gave it.
    fn enforce(
        &mut self,
        a: &LinearCombination<Scalar>,
        known_a: Option<Scalar>,
        b: &LinearCombination<Scalar>,
        c: &LinearCombination<Scalar>,
    );
    /// A sub-circuit's pass, appended.
    fn extend(&mut self, other: &Self);
    /// Companions for `count` branches of the recorder taken at once, continuing from this
    /// one as it stands (`None` when it cannot branch, and the recorder does not either).
    fn branches(&self, count: usize) -> Option<Vec<Self>>;
    /// The memory this companion could not have, if it ran out (the circuit was told with
    /// an I/O error).
    fn memory_error(&self) -> Option<Error> {
        None
    }
}

/// Records the structure only: value closures are never run, as for parameter generation.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StructureOnly;

impl<Scalar: PrimeField> Companion<Scalar> for StructureOnly {
    fn alloc<F>(&mut self, _: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        Ok(())
    }

    fn alloc_input<F>(&mut self, _: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        Ok(())
    }

    fn enforce(
        &mut self,
        _: &LinearCombination<Scalar>,
        _: Option<Scalar>,
        _: &LinearCombination<Scalar>,
        _: &LinearCombination<Scalar>,
    ) {
    }

    fn extend(&mut self, _: &Self) {}

    fn branches(&self, count: usize) -> Option<Vec<Self>> {
        Some(vec![StructureOnly; count])
    }
}

/// A constraint system that keeps values (a witness generator, a prover's assignment), and
/// what it does with a constraint the recorder records.
pub(crate) trait KeepsValues<Scalar: PrimeField>:
    ConstraintSystem<Scalar> + Default + Send
{
    /// The constraint, as [`Companion::enforce`] has it.
    fn follow(
        &mut self,
        a: &LinearCombination<Scalar>,
        known_a: Option<Scalar>,
        b: &LinearCombination<Scalar>,
        c: &LinearCombination<Scalar>,
    );
    /// `count` branches of this system taken at once (`None` where it does not branch, and
    /// the recorder it accompanies does not either).
    fn branches_values(&self, count: usize) -> Option<Vec<Self>>;
    /// The memory it could not have, if it ran out.
    fn memory_error(&self) -> Option<Error> {
        None
    }
}

/// A system that keeps values, as a companion: allocations and sub-circuits go to the
/// system as a circuit's would, constraints to [`KeepsValues::follow`]. One impl serves
/// both systems.
#[derive(Default)]
pub(crate) struct Keeping<T>(pub(crate) T);

impl<Scalar: PrimeField, T: KeepsValues<Scalar>> Companion<Scalar> for Keeping<T> {
    fn alloc<F>(&mut self, f: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        ConstraintSystem::alloc(&mut self.0, || "", f).map(drop)
    }

    fn alloc_input<F>(&mut self, f: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        ConstraintSystem::alloc_input(&mut self.0, || "", f).map(drop)
    }

    fn enforce(
        &mut self,
        a: &LinearCombination<Scalar>,
        known_a: Option<Scalar>,
        b: &LinearCombination<Scalar>,
        c: &LinearCombination<Scalar>,
    ) {
        self.0.follow(a, known_a, b, c);
    }

    fn extend(&mut self, other: &Self) {
        ConstraintSystem::extend(&mut self.0, &other.0)
    }

    fn branches(&self, count: usize) -> Option<Vec<Self>> {
        let branches = self.0.branches_values(count)?;
        Some(branches.into_iter().map(Keeping).collect())
    }

    fn memory_error(&self) -> Option<Error> {
        KeepsValues::memory_error(&self.0)
    }
}

/// The witness counts constraints; it builds none.
impl<Scalar: PrimeField> KeepsValues<Scalar> for Witness<Scalar> {
    fn follow(
        &mut self,
        _: &LinearCombination<Scalar>,
        _: Option<Scalar>,
        _: &LinearCombination<Scalar>,
        _: &LinearCombination<Scalar>,
    ) {
        self.constraints += 1;
    }

    /// A witness kept while recording does not branch: where the parts' values land is not
    /// known yet, and its native paths generate it at a few nanoseconds per constraint, less
    /// than a branch of its own costs in fresh memory and copying (docs/journal.md). A
    /// witness generated from the finished recording spreads (`witness/spread.rs`).
    fn branches_values(&self, _: usize) -> Option<Vec<Self>> {
        None
    }
}

/// The assignment evaluates each constraint as direct synthesis does.
impl<Scalar: PrimeField> KeepsValues<Scalar> for ProvingAssignment<Scalar> {
    fn follow(
        &mut self,
        a: &LinearCombination<Scalar>,
        known_a: Option<Scalar>,
        b: &LinearCombination<Scalar>,
        c: &LinearCombination<Scalar>,
    ) {
        self.evaluate_constraint(a, known_a, b, c);
    }

    fn branches_values(&self, count: usize) -> Option<Vec<Self>> {
        Spreading::branches(self, count)
    }

    fn memory_error(&self) -> Option<Error> {
        ProvingAssignment::memory_error(self)
    }
}
