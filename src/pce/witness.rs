//! The witness generator: runs only the value closures of a circuit, into vectors sized for
//! the recorded shape. `enforce` does nothing, so no linear combination is ever built.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use ff::PrimeField;

/// The values of a circuit's variables: inputs (input 0 is the constant one) and aux.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witness<Scalar> {
    /// Input values.
    pub inputs: Vec<Scalar>,
    /// Aux values.
    pub aux: Vec<Scalar>,
}

fn append_zeros<Scalar: PrimeField>(values: &mut Vec<Scalar>, n: usize) -> &mut [Scalar] {
    let start = values.len();
    values.resize(start + n, Scalar::ZERO);
    &mut values[start..]
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
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    fn is_extensible() -> bool {
        true
    }

    fn extend(&mut self, other: &Self) {
        // `other`'s input 0 is the constant one, which is ours.
        self.inputs
            .extend_from_slice(other.inputs.get(1..).unwrap_or_default());
        self.aux.extend_from_slice(&other.aux);
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.inputs.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.aux.extend_from_slice(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        let aux_start = self.aux.len();
        self.aux.resize(aux_start + aux_n, Scalar::ZERO);
        let inputs = append_zeros(&mut self.inputs, inputs_n);
        (&mut self.aux[aux_start..], inputs)
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        append_zeros(&mut self.inputs, n)
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        append_zeros(&mut self.aux, n)
    }

    fn inputs_slice(&self) -> &[Scalar] {
        &self.inputs
    }

    fn aux_slice(&self) -> &[Scalar] {
        &self.aux
    }
}
