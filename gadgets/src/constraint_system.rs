//! The constraint-system trait circuits are written against, and its namespace wrapper.

use std::io;
use std::marker::PhantomData;

use ff::PrimeField;

use crate::{Index, LinearCombination, Spreading, Variable};

/// A circuit: something that can lay out its constraints (and, when proving, its witness)
/// in any constraint system.
pub trait Circuit<Scalar: PrimeField> {
    /// Allocates the circuit's variables and enforces its constraints in `cs`.
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError>;
}

/// Errors of synthesis, parameter generation, proving and verification.
#[allow(clippy::upper_case_acronyms)]
#[derive(thiserror::Error, Debug)]
pub enum SynthesisError {
    /// A witness value was needed but not known.
    #[error("an assignment for a variable could not be computed")]
    AssignmentMissing,
    /// A witness computation divided by zero.
    #[error("division by zero")]
    DivisionByZero,
    /// The constraints cannot be satisfied.
    #[error("unsatisfiable constraint system")]
    Unsatisfiable,
    /// The constraint count exceeds what the evaluation domain supports.
    #[error("polynomial degree is too large")]
    PolynomialDegreeTooLarge,
    /// The parameters contained the identity where a non-identity point was required.
    #[error("encountered an identity element in the CRS")]
    UnexpectedIdentity,
    /// Reading the parameters failed.
    #[error("encountered an I/O error: {0}")]
    IoError(#[from] io::Error),
    /// The verifying key is malformed.
    #[error("malformed verifying key")]
    MalformedVerifyingKey,
    /// Parameter generation found an aux variable that no constraint uses.
    #[error("auxiliary variable was unconstrained")]
    UnconstrainedVariable,
    /// Proof aggregation was given malformed proofs.
    #[error("attempted to aggregate malformed proofs: {0}")]
    MalformedProofs(String),
    /// The structured reference string is malformed.
    #[error("malformed SRS")]
    MalformedSrs,
    /// Proof aggregation needs a power-of-two number of proofs.
    #[error("non power of two proofs given for aggregation")]
    NonPowerOfTwo,
    /// Two vectors that must have the same length do not.
    #[error("incompatible vector length: {0}")]
    IncompatibleLengthVector(String),
    /// A pairing check failed.
    #[error("invalid pairing")]
    InvalidPairing,
}

/// A rank-1 constraint system: variables are allocated in it and `A * B = C` constraints
/// are enforced between linear combinations of them.
pub trait ConstraintSystem<Scalar: PrimeField>: Sized + Send {
    /// The system namespaces resolve to, so nested namespaces add no indirection.
    type Root: ConstraintSystem<Scalar>;

    /// A fresh, empty system. Only extensible systems provide it; the default panics.
    fn new() -> Self {
        unimplemented!("ConstraintSystem::new is only provided by extensible constraint systems")
    }

    /// The variable that always holds one (input 0).
    fn one() -> Variable {
        Variable::new_unchecked(Index::Input(0))
    }

    /// Allocates a private variable whose value `f` computes. `annotation` names it where
    /// names are kept (test systems).
    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>;

    /// Allocates a public input whose value `f` computes.
    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>;

    /// Enforces `a * b = c`. Each closure receives an empty combination to build on.
    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>;

    /// Enforces `a * b = c` exactly as [`Self::enforce`] does, from a caller that also knows
    /// the value `a` takes on this system's values (`None` when it does not). A system that
    /// evaluates its constraints, as a prover's assignment does, may take `a_value` instead
    /// of summing `a`'s terms; this default ignores it. The constraint laid out is the same
    /// either way; only the evaluated row depends on `a_value`, so a caller passes it only
    /// when it computed it from the very values `a`'s variables hold.
    fn enforce_with_a_value<A, AR, LA, LB, LC>(
        &mut self,
        annotation: A,
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
        let _ = a_value;
        self.enforce(annotation, a, b, c)
    }

    /// Enters a sub-namespace. Called on the root only; circuits use [`Self::namespace`].
    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR;

    /// Leaves the current sub-namespace. Called on the root only.
    fn pop_namespace(&mut self);

    /// The root system, bypassing namespaces.
    fn get_root(&mut self) -> &mut Self::Root;

    /// Enters a namespace that is left again when the returned guard is dropped.
    fn namespace<NR, N>(&mut self, name_fn: N) -> Namespace<'_, Scalar, Self::Root>
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        self.get_root().push_namespace(name_fn);
        Namespace(self.get_root(), PhantomData)
    }

    /// Whether [`Self::new`] and [`Self::extend`] are implemented, so independent
    /// sub-circuits may be synthesized in parallel and appended in order.
    fn is_extensible() -> bool {
        false
    }

    /// Appends `other`'s inputs (except its constant one), aux variables and constraints after
    /// this system's own, as if `other`'s circuit had been synthesized here. The default panics.
    fn extend(&mut self, _other: &Self) {
        unimplemented!("ConstraintSystem::extend is only provided by extensible constraint systems")
    }

    /// The branching protocol ([`Spreading`]), where this system can take branches for a
    /// circuit's independent parts synthesized on other threads; `None` (the default)
    /// where it cannot, and a caller synthesizes the parts here, one after another.
    fn spreading(&mut self) -> Option<&mut dyn Spreading<Self::Root>> {
        None
    }

    /// Whether this system only computes a witness and keeps no constraints.
    fn is_witness_generator(&self) -> bool {
        false
    }

    /// Appends input values. Witness generators only; the default panics.
    fn extend_inputs(&mut self, _new_inputs: &[Scalar]) {
        assert!(self.is_witness_generator());
        unimplemented!("extend_inputs is only provided by witness generators")
    }

    /// Appends aux values. Witness generators only; the default panics.
    fn extend_aux(&mut self, _new_aux: &[Scalar]) {
        assert!(self.is_witness_generator());
        unimplemented!("extend_aux is only provided by witness generators")
    }

    /// Appends `aux_n` aux and `inputs_n` input slots and returns them for filling in.
    /// Witness generators only; the default panics.
    fn allocate_empty(
        &mut self,
        _aux_n: usize,
        _inputs_n: usize,
    ) -> (&mut [Scalar], &mut [Scalar]) {
        assert!(self.is_witness_generator());
        unimplemented!("allocate_empty is only provided by witness generators")
    }

    /// Appends `n` input slots and returns them. Witness generators only; the default panics.
    fn allocate_empty_inputs(&mut self, _n: usize) -> &mut [Scalar] {
        assert!(self.is_witness_generator());
        unimplemented!("allocate_empty_inputs is only provided by witness generators")
    }

    /// Appends `n` aux slots and returns them. Witness generators only; the default panics.
    fn allocate_empty_aux(&mut self, _n: usize) -> &mut [Scalar] {
        assert!(self.is_witness_generator());
        unimplemented!("allocate_empty_aux is only provided by witness generators")
    }

    /// The input values so far. Witness generators only; the default panics.
    fn inputs_slice(&self) -> &[Scalar] {
        assert!(self.is_witness_generator());
        unimplemented!("inputs_slice is only provided by witness generators")
    }

    /// The aux values so far. Witness generators only; the default panics.
    fn aux_slice(&self) -> &[Scalar] {
        assert!(self.is_witness_generator());
        unimplemented!("aux_slice is only provided by witness generators")
    }
}

/// A borrowed constraint system inside a namespace; dropping it leaves the namespace.
pub struct Namespace<'a, Scalar: PrimeField, CS: ConstraintSystem<Scalar>>(
    &'a mut CS,
    PhantomData<Scalar>,
);

impl<'cs, Scalar: PrimeField, CS: ConstraintSystem<Scalar>> ConstraintSystem<Scalar>
    for Namespace<'cs, Scalar, CS>
{
    type Root = CS::Root;

    fn one() -> Variable {
        CS::one()
    }

    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.alloc(annotation, f)
    }

    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.alloc_input(annotation, f)
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.0.enforce(annotation, a, b, c)
    }

    fn enforce_with_a_value<A, AR, LA, LB, LC>(
        &mut self,
        annotation: A,
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
        self.0.enforce_with_a_value(annotation, a, a_value, b, c)
    }

    // A namespace is never a root: `namespace()` always pushes on the root, so these two
    // are unreachable through the public API, exactly as upstream.
    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        panic!("push_namespace must be called on the root constraint system")
    }

    fn pop_namespace(&mut self) {
        panic!("pop_namespace must be called on the root constraint system")
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self.0.get_root()
    }

    fn spreading(&mut self) -> Option<&mut dyn Spreading<Self::Root>> {
        self.0.spreading()
    }

    fn is_witness_generator(&self) -> bool {
        self.0.is_witness_generator()
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.0.extend_inputs(new_inputs)
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.0.extend_aux(new_aux)
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        self.0.allocate_empty(aux_n, inputs_n)
    }

    // Upstream leaves these two at the panicking defaults inside a namespace; forwarding them
    // lets a witness generator be used through a namespace like through its other methods.
    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        self.0.allocate_empty_inputs(n)
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        self.0.allocate_empty_aux(n)
    }

    fn inputs_slice(&self) -> &[Scalar] {
        self.0.inputs_slice()
    }

    fn aux_slice(&self) -> &[Scalar] {
        self.0.aux_slice()
    }
}

impl<'a, Scalar: PrimeField, CS: ConstraintSystem<Scalar>> Drop for Namespace<'a, Scalar, CS> {
    fn drop(&mut self) {
        self.get_root().pop_namespace()
    }
}

/// Lets gadgets take `&mut cs` wherever they take a constraint system by value.
impl<Scalar: PrimeField, CS: ConstraintSystem<Scalar>> ConstraintSystem<Scalar> for &mut CS {
    type Root = CS::Root;

    fn one() -> Variable {
        CS::one()
    }

    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        (**self).alloc(annotation, f)
    }

    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        (**self).alloc_input(annotation, f)
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        (**self).enforce(annotation, a, b, c)
    }

    fn enforce_with_a_value<A, AR, LA, LB, LC>(
        &mut self,
        annotation: A,
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
        (**self).enforce_with_a_value(annotation, a, a_value, b, c)
    }

    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        (**self).push_namespace(name_fn)
    }

    fn pop_namespace(&mut self) {
        (**self).pop_namespace()
    }

    fn get_root(&mut self) -> &mut Self::Root {
        (**self).get_root()
    }

    fn namespace<NR, N>(&mut self, name_fn: N) -> Namespace<'_, Scalar, Self::Root>
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        (**self).namespace(name_fn)
    }

    fn is_extensible() -> bool {
        CS::is_extensible()
    }

    fn extend(&mut self, other: &Self) {
        (**self).extend(other)
    }

    fn spreading(&mut self) -> Option<&mut dyn Spreading<Self::Root>> {
        (**self).spreading()
    }

    fn is_witness_generator(&self) -> bool {
        (**self).is_witness_generator()
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        (**self).extend_inputs(new_inputs)
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        (**self).extend_aux(new_aux)
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        (**self).allocate_empty(aux_n, inputs_n)
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        (**self).allocate_empty_inputs(n)
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        (**self).allocate_empty_aux(n)
    }

    fn inputs_slice(&self) -> &[Scalar] {
        (**self).inputs_slice()
    }

    fn aux_slice(&self) -> &[Scalar] {
        (**self).aux_slice()
    }
}
