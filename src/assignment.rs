//! `ProvingAssignment`: the constraint system that turns a circuit into the vectors a Groth16
//! prover consumes (A·w, B·w, C·w per constraint, the assignments, and the query densities).
//!
//! It computes exactly what bellperson's private prover assignment computes, field for field
//! and bit for bit; what differs is how: the linear-combination buffers of every `enforce`
//! come from an owner-local [`VecPool`], the evaluation kernel is selectable, and the vectors
//! can be pre-sized from an earlier synthesis of the same circuit shape.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Term, Variable};
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::PrimeField;

use crate::eval::{evaluate, Constants, EvalKernel, OutOfRange};
use crate::pool::{PoolStats, VecPool};

/// The size of a synthesized circuit, for pre-sizing the next synthesis of the same shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Inputs, the constant one included.
    pub inputs: usize,
    /// Aux (private) variables.
    pub aux: usize,
    /// Constraints, the per-input constraints the prover appends included.
    pub constraints: usize,
}

/// How a [`ProvingAssignment`] synthesizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynthesisOptions {
    /// Recycle linear-combination buffers through a [`VecPool`] (else every `enforce` starts
    /// from fresh, empty combinations, as bellperson does).
    pub pool: bool,
    /// The evaluation kernel.
    pub kernel: EvalKernel,
    /// Reserve room for this shape up front, so the vectors never grow while synthesizing.
    pub shape: Option<Shape>,
    /// Pool buffers that grew beyond this many terms are dropped instead of kept.
    pub max_kept_terms: usize,
}

impl Default for SynthesisOptions {
    fn default() -> Self {
        SynthesisOptions {
            pool: true,
            kernel: EvalKernel::Portable,
            shape: None,
            max_kept_terms: 1024,
        }
    }
}

/// A constraint system that evaluates each constraint against the witness as it is enforced.
///
/// The public fields are what a Groth16 prover takes: they are equal to the fields of
/// bellperson's own (private) prover assignment for the same circuit.
pub struct ProvingAssignment<Scalar: PrimeField> {
    /// Aux variables with a nonzero coefficient in some A.
    pub a_aux_density: DensityTracker,
    /// Inputs with a nonzero coefficient in some B.
    pub b_input_density: DensityTracker,
    /// Aux variables with a nonzero coefficient in some B.
    pub b_aux_density: DensityTracker,
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
    pool: Option<VecPool<Term<Scalar>>>,
    kernel: EvalKernel,
    constants: Constants<Scalar>,
    fault: Option<String>,
}

impl<Scalar: PrimeField> ProvingAssignment<Scalar> {
    /// An empty assignment (no inputs yet) that synthesizes as `options` say.
    pub fn with_options(options: &SynthesisOptions) -> Self {
        let mut assignment = ProvingAssignment {
            a_aux_density: DensityTracker::new(),
            b_input_density: DensityTracker::new(),
            b_aux_density: DensityTracker::new(),
            a: Vec::new(),
            b: Vec::new(),
            c: Vec::new(),
            input_assignment: Vec::new(),
            aux_assignment: Vec::new(),
            pool: options.pool.then(|| VecPool::new(options.max_kept_terms)),
            kernel: options.kernel,
            constants: Constants::default(),
            fault: None,
        };
        if let Some(shape) = options.shape {
            assignment.reserve(shape);
        }
        assignment
    }

    /// An assignment from values computed elsewhere (pre-compiled evaluation): its pool is
    /// off and it evaluates further constraints with the portable kernel.
    pub(crate) fn from_evaluation(
        [a, b, c]: [Vec<Scalar>; 3],
        input_assignment: Vec<Scalar>,
        aux_assignment: Vec<Scalar>,
        [a_aux_density, b_input_density, b_aux_density]: [DensityTracker; 3],
    ) -> Self {
        ProvingAssignment {
            a_aux_density,
            b_input_density,
            b_aux_density,
            a,
            b,
            c,
            input_assignment,
            aux_assignment,
            pool: None,
            kernel: EvalKernel::Portable,
            constants: Constants::default(),
            fault: None,
        }
    }

    /// Takes the a, b, c vectors out, contents and all, for pre-compiled evaluation to
    /// overwrite: it writes every row, so a recycled vector of the right length needs no
    /// zero-filling first.
    pub(crate) fn take_evaluation(&mut self) -> [Vec<Scalar>; 3] {
        [&mut self.a, &mut self.b, &mut self.c].map(std::mem::take)
    }

    /// Installs a pre-compiled evaluation and returns the previous input and aux vectors.
    pub(crate) fn replace_evaluation(
        &mut self,
        [a, b, c]: [Vec<Scalar>; 3],
        input_assignment: Vec<Scalar>,
        aux_assignment: Vec<Scalar>,
        [a_aux_density, b_input_density, b_aux_density]: [DensityTracker; 3],
    ) -> (Vec<Scalar>, Vec<Scalar>) {
        (self.a, self.b, self.c) = (a, b, c);
        self.a_aux_density = a_aux_density;
        self.b_input_density = b_input_density;
        self.b_aux_density = b_aux_density;
        self.fault = None;
        (
            std::mem::replace(&mut self.input_assignment, input_assignment),
            std::mem::replace(&mut self.aux_assignment, aux_assignment),
        )
    }

    /// Reserves room for `shape` beyond what is already held.
    pub fn reserve(&mut self, shape: Shape) {
        self.a.reserve(shape.constraints);
        self.b.reserve(shape.constraints);
        self.c.reserve(shape.constraints);
        self.input_assignment.reserve(shape.inputs);
        self.aux_assignment.reserve(shape.aux);
        self.b_input_density.bv.reserve(shape.inputs);
        self.a_aux_density.bv.reserve(shape.aux);
        self.b_aux_density.bv.reserve(shape.aux);
    }

    /// The shape synthesized so far.
    pub fn shape(&self) -> Shape {
        Shape {
            inputs: self.input_assignment.len(),
            aux: self.aux_assignment.len(),
            constraints: self.a.len(),
        }
    }

    /// The buffer pool's counters, when the pool is on.
    pub fn pool_stats(&self) -> Option<PoolStats> {
        self.pool.as_ref().map(VecPool::stats)
    }

    /// The evaluation kernel in use.
    pub fn kernel(&self) -> EvalKernel {
        self.kernel
    }

    /// An error if some constraint referenced a variable that was never allocated (its
    /// A·w, B·w, C·w were recorded as zero). The synthesize functions check this.
    pub fn check(&self) -> Result<(), SynthesisError> {
        match &self.fault {
            None => Ok(()),
            Some(fault) => Err(SynthesisError::IncompatibleLengthVector(fault.clone())),
        }
    }

    fn note_fault(&mut self, which: &str, kind: &str, fault: OutOfRange) {
        if self.fault.is_none() {
            self.fault = Some(format!(
                "constraint {} references {} variable {} in {} but only {} exist",
                self.a.len(),
                kind,
                fault.index,
                which,
                fault.len
            ));
        }
    }

    fn fresh_lc(pool: &mut Option<VecPool<Term<Scalar>>>) -> LinearCombination<Scalar> {
        match pool {
            Some(pool) => LinearCombination::from_buffers(pool.take(), pool.take()),
            None => LinearCombination::zero(),
        }
    }

    fn recycle(&mut self, lc: LinearCombination<Scalar>) {
        if let Some(pool) = self.pool.as_mut() {
            let (inputs, aux) = lc.into_buffers();
            pool.give(inputs);
            pool.give(aux);
        }
    }

    /// Evaluates one side of a constraint, marking the input density of B when
    /// `track_inputs` and the given aux density.
    fn evaluate_side(
        &mut self,
        which: &'static str,
        lc: &LinearCombination<Scalar>,
        track_inputs: bool,
        aux_density: Option<AuxDensity>,
    ) -> Scalar {
        let (kernel, constants) = (self.kernel, &self.constants);
        // One accumulator across both halves, as bellperson: no extra field addition, and an
        // empty half (most sides have terms of one kind only) costs no call at all.
        let mut acc = Scalar::ZERO;
        let input_terms = lc.input_terms();
        if !input_terms.is_empty() {
            let density = track_inputs.then_some(&mut self.b_input_density);
            match evaluate(
                kernel,
                constants,
                input_terms,
                &self.input_assignment,
                density,
                acc,
            ) {
                Ok(sum) => acc = sum,
                Err(fault) => {
                    self.note_fault(which, "input", fault);
                    return Scalar::ZERO;
                }
            }
        }
        let aux_terms = lc.aux_terms();
        if !aux_terms.is_empty() {
            let density = match aux_density {
                Some(AuxDensity::A) => Some(&mut self.a_aux_density),
                Some(AuxDensity::B) => Some(&mut self.b_aux_density),
                None => None,
            };
            match evaluate(
                kernel,
                constants,
                aux_terms,
                &self.aux_assignment,
                density,
                acc,
            ) {
                Ok(sum) => acc = sum,
                Err(fault) => {
                    self.note_fault(which, "aux", fault);
                    return Scalar::ZERO;
                }
            }
        }
        acc
    }
}

/// Which aux density a side of a constraint marks.
#[derive(Clone, Copy)]
enum AuxDensity {
    A,
    B,
}

impl<Scalar: PrimeField> ConstraintSystem<Scalar> for ProvingAssignment<Scalar> {
    type Root = Self;

    fn new() -> Self {
        Self::with_options(&SynthesisOptions::default())
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux_assignment.push(f()?);
        self.a_aux_density.add_element();
        self.b_aux_density.add_element();
        Ok(Variable::new_unchecked(Index::Aux(
            self.aux_assignment.len() - 1,
        )))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input_assignment.push(f()?);
        self.b_input_density.add_element();
        Ok(Variable::new_unchecked(Index::Input(
            self.input_assignment.len() - 1,
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
        let a = a(Self::fresh_lc(&mut self.pool));
        let b = b(Self::fresh_lc(&mut self.pool));
        let c = c(Self::fresh_lc(&mut self.pool));

        // As bellperson: inputs count as dense in A (the prover adds `input * 0 = 0` for
        // each), B tracks both densities, C none (its query is dense).
        let a_value = self.evaluate_side("A", &a, false, Some(AuxDensity::A));
        let b_value = self.evaluate_side("B", &b, true, Some(AuxDensity::B));
        let c_value = self.evaluate_side("C", &c, false, None);
        self.a.push(a_value);
        self.b.push(b_value);
        self.c.push(c_value);

        self.recycle(a);
        self.recycle(b);
        self.recycle(c);
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
        self.a_aux_density.extend(&other.a_aux_density, false);
        self.b_input_density.extend(&other.b_input_density, true);
        self.b_aux_density.extend(&other.b_aux_density, false);
        self.a.extend_from_slice(&other.a);
        self.b.extend_from_slice(&other.b);
        self.c.extend_from_slice(&other.c);
        // `other` began with its own constant-one input, which is this system's input 0.
        self.input_assignment
            .extend_from_slice(other.input_assignment.get(1..).unwrap_or_default());
        self.aux_assignment.extend_from_slice(&other.aux_assignment);
        if self.fault.is_none() {
            self.fault = other.fault.clone();
        }
    }
}
