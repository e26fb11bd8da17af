//! The witness generator: runs only the value closures of a circuit and counts its
//! constraints. `enforce` never calls its closures, so no linear combination is built; the
//! count is what lets evaluation refuse a witness of another structure.

use bellpepper_core::{
    ConstraintSystem, Index, Landing, LinearCombination, Spreading, SynthesisError, Variable, Ways,
};
use ff::PrimeField;

use crate::precompiled::witness::kinds::AuxKinds;
use crate::protocol::{root_without_names, CountsInputs};

/// The values of a circuit's variables (input 0 is the constant one) and how many
/// constraints the circuit enforced.
#[derive(Clone, Default)]
pub struct Witness<Scalar> {
    pub(crate) inputs: Vec<Scalar>,
    pub(crate) aux: Vec<Scalar>,
    pub(crate) constraints: usize,
    /// The kinds of the first aux values, classified as they were written.
    pub(crate) kinds: AuxKinds,
}

/// Witnesses are equal when their values and counts are: the kinds follow from the values.
impl<Scalar: PartialEq> PartialEq for Witness<Scalar> {
    fn eq(&self, other: &Self) -> bool {
        (&self.inputs, &self.aux, self.constraints)
            == (&other.inputs, &other.aux, other.constraints)
    }
}

impl<Scalar: Eq> Eq for Witness<Scalar> {}

/// The values and counts.
impl<Scalar: std::fmt::Debug> std::fmt::Debug for Witness<Scalar> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Witness")
            .field("inputs", &self.inputs)
            .field("aux", &self.aux)
            .field("constraints", &self.constraints)
            .finish_non_exhaustive()
    }
}

impl<Scalar> Witness<Scalar> {
    /// A witness of values from elsewhere (a prover's vectors), none of them classified.
    pub(crate) fn unclassified(inputs: Vec<Scalar>, aux: Vec<Scalar>, constraints: usize) -> Self {
        Witness {
            inputs,
            aux,
            constraints,
            kinds: AuxKinds::default(),
        }
    }

    /// The input values, the constant one first.
    pub fn inputs(&self) -> &[Scalar] {
        &self.inputs
    }

    /// The aux values.
    pub fn aux(&self) -> &[Scalar] {
        &self.aux
    }

    /// Constraints enforced (the prover's per-input constraints included, when generated
    /// through a [`crate::precompiled::Recording`]).
    pub fn constraints(&self) -> usize {
        self.constraints
    }

    /// The aux values, for a call to append to them: the values written so far are
    /// classified first when enough wait (no slice handed out before can still be written).
    fn aux_to_extend(&mut self) -> &mut Vec<Scalar>
    where
        Scalar: PrimeField,
    {
        self.kinds.catch_up(&self.aux);
        &mut self.aux
    }

    /// Empties the vectors, keeping their capacity for the next circuit.
    pub fn clear(&mut self) {
        self.inputs.clear();
        self.aux.clear();
        self.constraints = 0;
        self.kinds.clear();
    }
}

/// `values` with room for one more, or the error a circuit is told when memory ran out
/// (evaluation reserves the recorded counts up front, so it meets this only when a circuit
/// allocates more than its recording).
#[inline]
pub(crate) fn room_for_one<Scalar>(
    values: &mut Vec<Scalar>,
    what: &'static str,
) -> Result<(), SynthesisError> {
    crate::vectors::room_for_one(values, what).map_err(|_| out_of_memory())
}

/// The error a circuit is told when memory for its values ran out.
pub(crate) fn out_of_memory() -> SynthesisError {
    SynthesisError::IoError(std::io::ErrorKind::OutOfMemory.into())
}

/// Allocates the input of value `f` in `inputs`, as a witness generator does.
pub(crate) fn alloc_input_value<Scalar>(
    inputs: &mut Vec<Scalar>,
    f: impl FnOnce() -> Result<Scalar, SynthesisError>,
) -> Result<Variable, SynthesisError> {
    room_for_one(inputs, "input values")?;
    inputs.push(f()?);
    Ok(Variable::new_unchecked(Index::Input(inputs.len() - 1)))
}

/// Appends `n` zeros to `values` and returns them to be overwritten.
pub(crate) fn append_zeros<Scalar: PrimeField>(
    values: &mut Vec<Scalar>,
    n: usize,
) -> &mut [Scalar] {
    let start = values.len();
    values.resize(start + n, Scalar::ZERO);
    &mut values[start..]
}

impl<Scalar: PrimeField> CountsInputs for Witness<Scalar> {
    fn input_count(&self) -> usize {
        self.inputs.len()
    }
}

impl<Scalar: PrimeField> ConstraintSystem<Scalar> for Witness<Scalar> {
    type Root = Self;

    fn new() -> Self {
        Witness::default()
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let aux = self.aux_to_extend();
        room_for_one(aux, "aux values")?;
        aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        alloc_input_value(&mut self.inputs, f)
    }

    #[inline]
    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.constraints += 1;
    }

    root_without_names!();

    fn is_extensible() -> bool {
        true
    }

    fn extend(&mut self, other: &Self) {
        // `other`'s input 0 is the constant one, which is ours.
        self.inputs
            .extend_from_slice(other.inputs.get(1..).unwrap_or_default());
        self.kinds.append(&self.aux, &other.kinds, &other.aux);
        self.aux.extend_from_slice(&other.aux);
        self.constraints += other.constraints;
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.inputs.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.aux_to_extend().extend_from_slice(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        self.aux_to_extend();
        let aux = append_zeros(&mut self.aux, aux_n);
        let inputs = append_zeros(&mut self.inputs, inputs_n);
        (aux, inputs)
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        append_zeros(&mut self.inputs, n)
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        append_zeros(self.aux_to_extend(), n)
    }

    fn inputs_slice(&self) -> &[Scalar] {
        &self.inputs
    }

    fn aux_slice(&self) -> &[Scalar] {
        &self.aux
    }

    fn spreading(&mut self) -> Option<&mut dyn Spreading<Self>> {
        Some(self)
    }
}

impl<Scalar: PrimeField> Spreading<Witness<Scalar>> for Witness<Scalar> {
    fn ways(&self) -> Ways {
        Ways {
            parts_in_place: true,
            branches_in_place: false,
            small_parts: false,
        }
    }

    /// It takes no branches.
    fn branches(&self, _count: usize) -> Option<Vec<Self>> {
        None
    }

    fn landing(&self, _branch: &Self) -> Option<Landing> {
        None
    }
}
